// machine/dump_tree.h: a directory or an archive as one tree; links resolved inside it; a
// truncated archive refused, never read in part.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "base/error.h"
#include "base/files.h"
#include "machine/dump_tree.h"

namespace isolab {
namespace {

using ::testing::HasSubstr;
namespace fs = std::filesystem;

fs::path data(const std::string& rel) { return fs::path(ISOLAB_TEST_DATA_DIR) / "machine" / rel; }

const char* kSysinfo =
    "cm1-ocp-mg-e2e-gcp4/nodes/ci-ln-t0prq3t-72292-h4x2n-worker-a-wqnqt/sysinfo.tgz";

TEST(MachineDumpTree, DirectoryLinksResolveInsideTheTree) {
  const DumpTree t = DumpTree::open(data("cm3-hotsos-ubuntu-openstack-2cpu"));
  // sos's top-level `uname` is a link to sos_commands/kernel/uname_-a.
  EXPECT_EQ(t.link_target("uname"), "sos_commands/kernel/uname_-a");
  ASSERT_TRUE(t.read("uname"));
  EXPECT_THAT(*t.read("uname"), HasSubstr("5.4.0-97-generic"));
  // `hostname` names sos_commands/host/hostname, which this part of the report lacks.
  EXPECT_EQ(t.read("hostname"), std::nullopt);
  EXPECT_EQ(t.kind("hostname"), std::nullopt);
  EXPECT_TRUE(t.is_dir("sys/devices/system/cpu"));
  EXPECT_EQ(t.read("sys/devices/system/cpu/present"), "0-1\n");
  EXPECT_EQ(t.children("sos_commands"), (std::vector<std::string>{"kernel", "numa", "processor"}));
}

TEST(MachineDumpTree, ArchiveInMemoryWithImpliedFolders) {
  const std::string bytes = read_file(data(kSysinfo));
  EXPECT_TRUE(looks_like_archive(bytes.substr(0, 512)));
  const DumpTree t = DumpTree::from_archive_bytes("sysinfo.tgz", bytes);
  EXPECT_THAT(*t.read("proc/cmdline"), HasSubstr("isolcpus=managed_irq,1"));
  EXPECT_EQ(t.read("sys/devices/system/cpu/offline"), "2-3\n");
  EXPECT_EQ(t.read("proc/irq/31/smp_affinity_list"), "1\n");
  // sys/bus/pci/devices/* are links to ../../../devices/...: followed inside the archive.
  EXPECT_TRUE(t.is_dir("sys/bus/pci/devices/0000:00:03.0"));
  EXPECT_EQ(display_path(t, "proc/cmdline"), "sysinfo.tgz:proc/cmdline");
}

TEST(MachineDumpTree, TruncatedArchiveIsRefusedNamingWhereItStopped) {
  const std::string bytes = read_file(data(kSysinfo));
  try {
    DumpTree::from_archive_bytes("cut.tgz", bytes.substr(0, bytes.size() / 2));
    FAIL() << "a truncated archive must be refused";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("cut.tgz: a truncated or corrupt archive: reading stopped "
                                    "after "));
    EXPECT_THAT(e.what(), HasSubstr("libarchive: truncated gzip input"));
  }
}

TEST(MachineDumpTree, TextIsNotAnArchive) {
  EXPECT_FALSE(looks_like_archive("apiVersion: performance.openshift.io/v2\n"));
  EXPECT_FALSE(looks_like_archive("isolated_cores=2-5\n"));
  EXPECT_THROW(DumpTree::from_archive_bytes("x", "isolated_cores=2-5\n"), Error);
}

TEST(MachineDumpTree, LinksCannotLeaveTheTree) {
  DumpTree t = DumpTree::in_memory("t", {{"a/b", "x"}});
  EXPECT_EQ(t.read("a/../../etc/passwd"), std::nullopt);
  EXPECT_EQ(t.read("a/./b"), "x");
  EXPECT_FALSE(kept_in_archive("sosreport-h/var/log/messages"));
  EXPECT_TRUE(kept_in_archive("sosreport-h/sos_commands/kernel/sysctl_-a"));
}

}  // namespace
}  // namespace isolab

// The libvirt backend on isolab's private libvirt (the QEMU driver embedded in this process,
// state under a temporary directory): error wrapping, a domain that cannot start (no guest
// kernel needed), and the system's /etc/libvirt/qemu.conf left as its package made it.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include "base/error.h"
#include "base/files.h"
#include "sys/process.h"
#include "vm/libvirt.h"

namespace isolab {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

TEST(LibvirtReal, BadUriIsWrappedWithOperation) {
  LibvirtReach r = libvirt_reachability("qemu:///no-such-instance");
  EXPECT_FALSE(r.ok);
  EXPECT_THAT(r.detail, HasSubstr("libvirt virConnectOpen(qemu:///no-such-instance): "));
  LibvirtBackend lb("qemu:///no-such-instance");
  VmConfig c;
  c.name = "isolab-badur-" + std::to_string(::getpid());
  c.kernel = "/nonexistent";
  c.console_log = fs::temp_directory_path() / (c.name + ".console");
  c.result_channel = fs::temp_directory_path() / (c.name + ".result");
  EXPECT_THAT([&] { lb.run(c); },
              ::testing::ThrowsMessage<Error>(HasSubstr("libvirt virConnectOpen(")));
  std::error_code ec;
  fs::remove(c.console_log, ec);
  fs::remove(c.result_channel, ec);
  fs::remove(fs::path(c.console_log.string() + ".qemu.log"), ec);
}

// One private libvirt root for this process (libvirt embeds one driver root per process).
const fs::path& private_root() {
  static const fs::path root =
      fs::temp_directory_path() / ("isolab-libvirt-test-" + std::to_string(::getpid()));
  return root;
}

// Removes the private libvirt root when the tests are done.
class RemovePrivateRoot : public ::testing::Environment {
 public:
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(private_root(), ec);
  }
};
const auto* const kRemoveRoot = ::testing::AddGlobalTestEnvironment(new RemovePrivateRoot);

TEST(LibvirtReal, MissingKernelIsQemuFailedWithLibvirtMessage) {
  const std::string uri = prepare_private_libvirt(private_root());
  EXPECT_EQ(uri, "qemu:///embed?root=" + private_root().string());
  LibvirtReach reach = libvirt_reachability(uri);
  ASSERT_TRUE(reach.ok) << reach.detail;
  fs::path d = fs::temp_directory_path() / ("isolab-lvfail-" + std::to_string(::getpid()));
  fs::create_directories(d);
  VmConfig c;
  c.name = "isolab-lvfail-" + std::to_string(::getpid());
  c.kernel = d / "no-such-bzImage";
  c.memory_mib = 128;
  c.console_log = d / "console.log";
  c.result_channel = d / "result.bin";
  LibvirtBackend lb(uri);
  VmOutcome o = lb.run(c);
  EXPECT_EQ(o.end, VmOutcome::qemu_failed) << o.detail;
  EXPECT_THAT(o.detail, HasSubstr("libvirt virDomainCreateXML: "));
  EXPECT_THAT(o.detail, HasSubstr("no-such-bzImage"));
  // The driver's state is isolab's: its configuration and QEMU log live under the root.
  EXPECT_EQ(read_file(private_root() / "etc" / "qemu.conf"),
            private_qemu_conf(host_allows_mount_namespace()));
  EXPECT_TRUE(fs::exists(libvirt_domain_log_dir(uri) / (c.name + ".log")))
      << libvirt_domain_log_dir(uri);
  fs::remove_all(d);
}

// The private configuration turns off the per-domain mount namespace exactly where this host
// cannot make "/" a slave mount (chroot, some containers); elsewhere libvirt keeps its default.
TEST(LibvirtReal, PrivateConfigFollowsTheHostsMountNamespaceSupport) {
  const bool ns = host_allows_mount_namespace();
  std::string conf = private_qemu_conf(ns);
  EXPECT_EQ(conf.find("namespaces = []") != std::string::npos, !ns) << conf;
  EXPECT_THAT(conf, HasSubstr("security_driver = \"none\""));
  EXPECT_THAT(conf, HasSubstr("stdio_handler = \"file\""));
  EXPECT_THAT(conf, HasSubstr("dynamic_ownership = 0"));
  if (::geteuid() == 0) {
    EXPECT_THAT(conf, HasSubstr("user = \"root\""));
  }
  EXPECT_EQ(libvirt_domain_log_dir("qemu:///embed?root=/x/y"), fs::path("/x/y/log/qemu"));
  EXPECT_EQ(libvirt_domain_log_dir("qemu:///system"), fs::path("/var/log/libvirt/qemu"));
}

// isolab's setup and tests leave /etc/libvirt/qemu.conf as the package that
// owns it made it (dpkg --verify reports nothing for it), or absent when no package owns it
// (libvirt-daemon-system is not needed).
TEST(LibvirtReal, SystemQemuConfIsThePackagesOwn) {
  const fs::path conf = "/etc/libvirt/qemu.conf";
  auto runner = make_real_runner();
  ProcessSpec owner;
  owner.argv = {"dpkg-query", "-S", conf.string()};
  ProcessResult o = runner->run(owner);
  ASSERT_TRUE(o.start_error.empty()) << o.start_error;
  if (o.exit_code != 0) {
    EXPECT_FALSE(fs::exists(conf)) << conf << " exists but no package owns it: something wrote it";
    return;
  }
  const std::string pkg = o.out.substr(0, o.out.find(':'));
  ProcessSpec verify;
  verify.argv = {"dpkg", "--verify", pkg};
  ProcessResult v = runner->run(verify);
  EXPECT_THAT(v.out, Not(HasSubstr(conf.string())))
      << "dpkg --verify " << pkg << " says " << conf << " changed:\n"
      << v.out;
}

}  // namespace
}  // namespace isolab

// The pure parts of the libvirt hosts: host CPU from real capabilities (captured from a session
// libvirtd 9.0.0 on this machine), pool and volume XML, and which fingerprint fields decide
// comparability.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "base/error.h"
#include "base/files.h"
#include "vm/libvirt_host.h"

namespace isolab {
namespace {

using ::testing::HasSubstr;

TEST(LibvirtHostPure, HostCpuFromCapturedCapabilities) {
  const std::string caps =
      read_file(std::filesystem::path(ISOLAB_TEST_DATA_DIR) / "vm" / "capabilities-session.xml");
  const CapabilitiesCpu c = parse_capabilities_host_cpu(caps);
  EXPECT_EQ(c.arch, "x86_64");
  EXPECT_EQ(c.model, "Broadwell-noTSX-IBRS");
  EXPECT_EQ(c.vendor, "Intel");
  EXPECT_FALSE(c.kvm);  // nobody's session daemon: TCG guests only
}

TEST(LibvirtHostPure, CapabilitiesWithoutHostCpuThrow) {
  EXPECT_THROW(parse_capabilities_host_cpu("<capabilities><guest/></capabilities>"), Error);
  const CapabilitiesCpu c = parse_capabilities_host_cpu(
      "<capabilities><host><cpu><arch>aarch64</arch><modelx>no</modelx></cpu></host>"
      "<guest><arch name='aarch64'><domain type='kvm'/></arch></guest></capabilities>");
  EXPECT_EQ(c.arch, "aarch64");
  EXPECT_EQ(c.model, "");
  EXPECT_TRUE(c.kvm);
}

TEST(LibvirtHostPure, PoolAndVolumeXmlAreEscaped) {
  EXPECT_EQ(isolab_pool_xml("/srv/a&b"),
            "<pool type='dir'><name>isolab</name><target><path>/srv/a&amp;b</path></target>"
            "</pool>");
  EXPECT_THAT([] { isolab_pool_xml("relative/dir"); },
              ::testing::ThrowsMessage<Error>(HasSubstr("absolute")));
  EXPECT_THAT(raw_volume_xml("k<1>", 42), HasSubstr("<name>k&lt;1&gt;</name>"));
  EXPECT_THAT(raw_volume_xml("k", 42), HasSubstr("<capacity unit='bytes'>42</capacity>"));
}

TEST(LibvirtHostPure, FingerprintIgnoresNameAndUriOnly) {
  HostFingerprint a;
  a.uri = "qemu+ssh://a/system";
  a.hostname = "a";
  a.arch = "x86_64";
  a.cpu_model = "Skylake";
  a.cpus = 8;
  a.libvirt_version = "9.0.0";
  a.hypervisor = "QEMU";
  a.hypervisor_version = "7.2.0";
  HostFingerprint b = a;
  b.uri = "qemu+ssh://b/system";
  b.hostname = "b";
  EXPECT_EQ(fingerprint_sha256(a), fingerprint_sha256(b));
  b.hypervisor_version = "8.0.0";
  EXPECT_NE(fingerprint_sha256(a), fingerprint_sha256(b));
  const nlohmann::json j = to_json(a);
  EXPECT_EQ(j["hostname"], "a");
  EXPECT_EQ(j["uri"], "qemu+ssh://a/system");
  EXPECT_EQ(j["fingerprint_sha256"].get<std::string>().size(), 64u);
}

}  // namespace
}  // namespace isolab

// The libvirt backend against the local libvirtd: error wrapping and a domain that cannot
// start (no guest kernel needed).
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include "base/error.h"
#include "vm/libvirt.h"

namespace isolab {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

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

TEST(LibvirtReal, MissingKernelIsQemuFailedWithLibvirtMessage) {
  LibvirtReach reach = libvirt_reachability();
  if (!reach.ok) GTEST_SKIP() << "libvirt not reachable: " << reach.detail;
  fs::path d = fs::temp_directory_path() / ("isolab-lvfail-" + std::to_string(::getpid()));
  fs::create_directories(d);
  VmConfig c;
  c.name = "isolab-lvfail-" + std::to_string(::getpid());
  c.kernel = d / "no-such-bzImage";
  c.memory_mib = 128;
  c.console_log = d / "console.log";
  c.result_channel = d / "result.bin";
  LibvirtBackend lb;
  VmOutcome o = lb.run(c);
  EXPECT_EQ(o.end, VmOutcome::qemu_failed) << o.detail;
  EXPECT_THAT(o.detail, HasSubstr("libvirt virDomainCreateXML: "));
  EXPECT_THAT(o.detail, HasSubstr("no-such-bzImage"));
  fs::remove_all(d);
}

}  // namespace
}  // namespace isolab

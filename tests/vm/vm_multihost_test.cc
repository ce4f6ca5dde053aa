// Several hosts through libvirt, for real: two libvirt daemons on this machine (session mode,
// user nobody, their own sockets and state; tests/vm/libvirt_daemons.h) stand in for two hosts.
// `isolab run` places the spec's two A/B blocks on them (both hosts at once), uploads the default
// spec's cached 6.1 kernels and the initramfs as storage volumes, boots TCG guests there and brings
// the results back by volume download; `isolab compare` then shows per-host and combined results.
// The daemons are stopped at the end (nothing left running).
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <fstream>
#include <future>
#include <iostream>
#include <map>
#include <set>
#include <thread>

#include "isolab_run.h"
#include "libvirt_daemons.h"
#include "vm/libvirt_host.h"

namespace isolab {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using ::testing::HasSubstr;

TEST(MultiHost, WholeBlocksPerHostVolumesUploadedResultsComparedPerHost) {
  const fs::path dir = vmtest::temp_dir("mh");
  pid_t pids[2] = {-1, -1};
  {
    vmtest::LibvirtDaemon h1(dir / "h1"), h2(dir / "h2");
    pids[0] = h1.pid();
    pids[1] = h2.pid();
    json spec = vmtest::load_spec("multihost-short.json");
    spec["boot_order_seed"] = 3;  // blocks r0 and r1 in the order vanilla, patched
    spec["hosts"] = {{{"uri", h1.uri()}, {"pool_dir", h1.pool_dir()}},
                     {{"uri", h2.uri()}, {"pool_dir", h2.pool_dir()}}};
    const vmtest::IsolabRun r = vmtest::run_isolab(spec, dir, {}, {"--accel", "tcg"});
    ASSERT_EQ(r.proc.exit_code, 0) << read_file(dir / "isolab.stderr");
    ASSERT_TRUE(r.result.is_object());
    EXPECT_EQ(r.result["status"], "complete") << read_file(dir / "isolab.stderr");

    // Hosts: both reachable, with fingerprints and the pools isolab defined.
    ASSERT_EQ(r.result["hosts"].size(), 2u);
    for (std::size_t i = 0; i < 2; ++i) {
      const json& h = r.result["hosts"][i];
      EXPECT_EQ(h["uri"], i == 0 ? h1.uri() : h2.uri());
      EXPECT_FALSE(h["hostname"].get<std::string>().empty());
      EXPECT_FALSE(h["cpu_model"].get<std::string>().empty());
      EXPECT_EQ(h["hypervisor"], "QEMU");
      EXPECT_EQ(h["fingerprint_sha256"].get<std::string>().size(), 64u);
      EXPECT_EQ(h["pool_dir"], i == 0 ? h1.pool_dir() : h2.pool_dir());
    }

    // Placement: each repetition (A and B) whole on one host, the two blocks on different hosts.
    std::map<int, std::set<std::string>> hosts_of_rep;
    ASSERT_EQ(r.result["cells"].size(), 4u);
    for (const auto& c : r.result["cells"]) {
      EXPECT_EQ(c["status"], "ok") << c.dump(1);
      ASSERT_TRUE(c.contains("host")) << c.dump(1);
      EXPECT_FALSE(c["host"]["hostname"].get<std::string>().empty());
      EXPECT_FALSE(c["host"]["libvirt_version"].get<std::string>().empty());
      EXPECT_FALSE(c["host"]["hypervisor_version"].get<std::string>().empty());
      hosts_of_rep[c["repetition"].get<int>()].insert(c["host"]["uri"].get<std::string>());
      EXPECT_EQ(c["block"], "r" + std::to_string(c["repetition"].get<int>()));
      EXPECT_FALSE(c["metrics"].empty()) << c.dump(1);
      // The guest ran on the host's CPUs, which isolab does not plan: no pinning claimed.
      EXPECT_EQ(c["slot"], c["host"]["uri"] == h1.uri() ? 0 : 1) << c.dump(1);
      EXPECT_TRUE(c["overcommitted"].is_null()) << c.dump(1);
      EXPECT_EQ(c["host_cpus"]["pinning"], "not applied") << c.dump(1);
      EXPECT_EQ(c["host_cpus"]["host"], c["host"]["uri"]) << c.dump(1);
    }
    EXPECT_FALSE(r.result.contains("host_plan")) << "no local host plan for remote guests";
    // The two hosts ran their blocks at the same time: block r1's first cell booted on host 2
    // before block r0's first cell ended on host 1.
    const std::string err = read_file(dir / "isolab.stderr");
    const auto r1_boots = err.find("cell vanilla-r1: booting (tcg, host " + h2.uri() + ")");
    const auto r0_ends = err.find("cell vanilla-r0: ok");
    ASSERT_NE(r1_boots, std::string::npos) << err;
    ASSERT_NE(r0_ends, std::string::npos) << err;
    EXPECT_LT(r1_boots, r0_ends) << err;
    ASSERT_EQ(hosts_of_rep.size(), 2u);
    EXPECT_EQ(hosts_of_rep[0].size(), 1u);
    EXPECT_EQ(hosts_of_rep[1].size(), 1u);
    EXPECT_NE(*hosts_of_rep[0].begin(), *hosts_of_rep[1].begin());

    // Uploads: each daemon's pool keeps the two kernels (one per variant) and no cell volume.
    for (const vmtest::LibvirtDaemon* d : {&h1, &h2}) {
      LibvirtHost host(LibvirtHostSpec{d->uri(), ""});
      EXPECT_EQ(host.pool_dir(), d->pool_dir());
      int kernels = 0;
      for (const auto& v : host.volumes()) {
        if (v.rfind("kernel-", 0) == 0) ++kernels;
        EXPECT_THAT(v, ::testing::StartsWith("kernel-")) << "left behind on " << d->uri();
      }
      EXPECT_EQ(kernels, 2) << d->uri();
    }

    // compare: per host and combined.
    ProcessResult text = vmtest::run_isolab_command({"compare", r.run_dir.string()});
    EXPECT_TRUE(text.exit_code == 0 || text.exit_code == 1) << text.out << text.err;
    EXPECT_THAT(text.out, HasSubstr("per host and combined:"));
    EXPECT_THAT(text.out, HasSubstr("host [1]"));
    EXPECT_THAT(text.out, HasSubstr("host [2]"));
    EXPECT_THAT(text.out, HasSubstr("combined n=2+2 over 2 host(s)"));
    ProcessResult js =
        vmtest::run_isolab_command({"compare", r.run_dir.string(), "--format", "json"});
    const json cj = json::parse(js.out);
    EXPECT_TRUE(cj["stratified"].get<bool>());
    ASSERT_EQ(cj["hosts"].size(), 2u);
    ASSERT_FALSE(cj["metrics"].empty());
    for (const auto& m : cj["metrics"]) EXPECT_EQ(m["per_host"].size(), 2u) << m["name"];
  }
  // Both daemons are gone.
  for (pid_t p : pids) {
    ASSERT_GT(p, 0);
    EXPECT_NE(::kill(p, 0), 0) << "libvirtd " << p << " still running";
  }
  fs::remove_all(dir);
}

// QEMU processes whose command line mentions dir (the guests of a daemon we killed: they run on
// until their guest powers off). Found in /proc by the test directory in their arguments.
std::vector<pid_t> qemu_processes_under(const fs::path& dir) {
  std::vector<pid_t> out;
  for (const auto& e : fs::directory_iterator("/proc")) {
    const std::string name = e.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream f(e.path() / "cmdline", std::ios::binary);
    std::string cmd((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    if (cmd.find("qemu-system") != std::string::npos && cmd.find(dir.string()) != std::string::npos)
      out.push_back(std::stoi(name));
  }
  return out;
}

// The first host's daemon is stopped while the block's second cell boots there: the block's
// finished cell is superseded and the whole block runs again on the second host.
TEST(MultiHost, LostHostsBlockMovesWholeToTheOtherHost) {
  const fs::path dir = vmtest::temp_dir("mhl");
  {
    vmtest::LibvirtDaemon h1(dir / "h1"), h2(dir / "h2");
    json spec = vmtest::load_spec("multihost-short.json");
    spec["repetitions"] = 1;
    spec["boot_order_seed"] = 3;  // blocks r0 and r1 in the order vanilla, patched
    spec["hosts"] = {{{"uri", h1.uri()}, {"pool_dir", h1.pool_dir()}},
                     {{"uri", h2.uri()}, {"pool_dir", h2.pool_dir()}}};
    auto run = std::async(std::launch::async, [&] {
      return vmtest::run_isolab(spec, dir, {}, {"--accel", "tcg"});
    });
    // Wait until the second cell of block r0 boots on host 1, then stop host 1's daemon.
    bool stopped = false;
    for (int i = 0; i < 3000 && !stopped; ++i) {
      if (run.wait_for(std::chrono::milliseconds(200)) == std::future_status::ready) break;
      std::string err;
      try {
        err = read_file(dir / "isolab.stderr", 1 << 20);
      } catch (const Error&) {
      }
      if (err.find("cell patched-r0: booting") != std::string::npos) {
        h1.stop();
        stopped = true;
      }
    }
    const vmtest::IsolabRun r = run.get();
    ASSERT_TRUE(stopped) << read_file(dir / "isolab.stderr");
    ASSERT_EQ(r.proc.exit_code, 0) << read_file(dir / "isolab.stderr");
    EXPECT_EQ(r.result["status"], "complete");
    const json& hosts = r.result["hosts"];
    ASSERT_EQ(hosts.size(), 2u);
    EXPECT_THAT(hosts[0].value("lost", ""), HasSubstr("host " + h1.uri() + " lost"));
    EXPECT_FALSE(hosts[1].contains("lost"));
    std::cout << "host 1: " << hosts[0].value("lost", "") << "\n";
    ASSERT_EQ(r.result["superseded_cells"].size(), 1u);
    EXPECT_EQ(r.result["superseded_cells"][0]["id"], "vanilla-r0");
    EXPECT_EQ(r.result["superseded_cells"][0]["host"]["uri"], h1.uri());
    ASSERT_EQ(r.result["cells"].size(), 2u);
    for (const auto& c : r.result["cells"]) {
      EXPECT_EQ(c["status"], "ok") << c.dump(1);
      EXPECT_EQ(c["host"]["uri"], h2.uri());
    }
    EXPECT_EQ(r.result["placement"][0]["host"], h2.uri());
  }
  // The stopped daemon's guest runs on until it powers off; end it if it does not.
  for (int i = 0; i < 900 && !qemu_processes_under(dir).empty(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  for (pid_t p : qemu_processes_under(dir)) ::kill(p, SIGKILL);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace isolab

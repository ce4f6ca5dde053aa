// The dry run's plan as JSON (`isolab run --dry-run --json`, pipeline/plan_json.h): what isolab
// adds to the guest's line is listed there as the text plan lists it, and is what a boot's line
// really gets (vm/vm.h full_kernel_cmdline).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "pipeline/plan_json.h"
#include "spec/spec.h"
#include "vm/vm.h"

namespace isolab {
namespace {

using ::testing::HasSubstr;

Spec small_spec() {
  return parse_spec(nlohmann::json::parse(R"({
    "name": "added",
    "variants": [{"name": "vanilla"}],
    "guest": {"cmdline": "isolcpus=nohz,domain,1 nohz_full=1", "vcpus": 2, "memory_mib": 256},
    "workloads": [{"name": "i", "tool": "vmstat-overhead", "mode": "idle", "cpus": "1",
                   "duration_s": 5}]
  })"),
                    ".");
}

TEST(PlanJson, WhatIsolabAddsToTheLineIsListedAsABootGetsIt) {
  const Spec spec = small_spec();
  const nlohmann::json added = describe_plan(spec, derive_guest(spec))["guest"]["added_params"];
  ASSERT_TRUE(added.is_object()) << added.dump();
  VmConfig cfg;
  cfg.cmdline = "nohz_full=1";
  cfg.accel = Accel::tcg;
  cfg.insn_plugin = InsnPluginConfig{};
  const std::string line = full_kernel_cmdline(cfg);
  EXPECT_EQ(line, "nohz_full=1 " + added["every_boot"].get<std::string>() + " " +
                      added["tcg"].get<std::string>() + " nokaslr clocksource=tsc tsc=reliable");
  ASSERT_EQ(added["insn_count"].size(), 3u);
  for (const auto& p : added["insn_count"]) {
    EXPECT_THAT(line, HasSubstr(" " + p["param"].get<std::string>()));
    EXPECT_FALSE(p["reason"].get<std::string>().empty());
  }
  EXPECT_EQ(added["insn_count"][0]["param"], "nokaslr");
  EXPECT_GT(added["tracing"]["bytes"].get<std::size_t>(), 0u);
}

}  // namespace
}  // namespace isolab

// A copy of the real run of tests/data/runs/planted-regression-kqin12 with hostile strings
// (what a patched kernel or a spec can carry), for the report tests of the unit and process
// tiers.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "base/files.h"
#include "compare/request.h"
#include "results/result_file.h"

namespace isolab {

namespace fs = std::filesystem;

inline const fs::path kReportRun =
    fs::path(ISOLAB_TEST_DATA_DIR) / "runs" / "planted-regression-kqin12";

// The primary metric of the report tests (compare --primary): the run's spec declares none (it
// predates compare.primary), so without it the exit status rests on kernel failures only and
// no row moves; vmstat_update during the idle step is what the planted patch adds.
inline const std::vector<std::string> kReportPrimary = {
    "vmstat-idle.noise.vmstat_update_per_s:higher"};

// Hostile strings (what a patched kernel or a spec can carry) in every kind of place the page
// shows: spec name, kernel release, patch path, guest uname and cmdline, gate rows, a failure
// reason, host fingerprint, and a workqueue function name in the trace.
inline constexpr const char* kScriptPayload = "<script>document.title='PWNED'</script>";
inline constexpr const char* kAttrPayload = "\"><img src=x onerror=\"document.title='PWNED'\">";

inline void make_hostile(const fs::path& dir) {
  fs::copy(kReportRun, dir, fs::copy_options::recursive);
  nlohmann::json run = load_result(dir);
  const std::string s = kScriptPayload, a = kAttrPayload;
  run["spec_name"] = "x" + s;
  run["host"]["cpu_model"] = a + s;
  for (auto& [name, v] : run["variants"].items()) {
    v["kernel_release"] = v["kernel_release"].get<std::string>() + s;
    v["patches"].push_back({{"path", a + s}, {"sha256", s}});
  }
  for (auto& c : run["cells"]) {
    c["guest"]["uname_r"] = s;
    c["guest"]["cmdline"] = a;
    c["gate"]["rows"][0]["detail"] = a + s;
    c["gate"]["rows"][0]["check"] = s;
    // A kernel function name comes from the guest kernel's System.map.
    c["insn_counts"]["profile"]["vmstat-idle"]["6"] = {{{"function", a + s}, {"insns", 1}}};
    if (c["status"] != "ok") c["reason"] = a + s;
  }
  run["fidelity"] = {{{"fact", s}, {"customer", a}, {"guest", s}, {"fidelity", a}, {"why", s}}};
  write_file_atomic(dir / "result.json", run.dump());
  const fs::path trace = dir / "cells/planted-r0/records/vmstat-idle.trace";
  std::string text = read_file(trace);
  const auto at = text.find("workqueue_execute_start");
  ASSERT_NE(at, std::string::npos);
  const auto eol = text.find('\n', at);
  // The planted boot's first vmstat_update line, its function renamed.
  std::string line = text.substr(text.rfind('\n', at) + 1, eol - text.rfind('\n', at) - 1);
  line.replace(line.find("vmstat_update"), 13, "<script>x</script>");
  text.insert(eol + 1, line + "\n");
  write_file_atomic(trace, text);
}

}  // namespace isolab

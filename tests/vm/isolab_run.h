// vm tier helpers (header-only: each test file is its own executable): run the built `isolab`
// on a spec from tests/data/specs and read its result.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "base/files.h"
#include "sys/process.h"

namespace isolab::vmtest {

// tests/data/specs
inline std::filesystem::path specs_dir() {
  return std::filesystem::path(ISOLAB_TEST_DATA_DIR) / "specs";
}

// Loads tests/data/specs/<name> with its relative paths (config fragments, patches, the
// customer's machine) made absolute, so that a modified copy can be written anywhere.
inline nlohmann::json load_spec(const std::string& name) {
  nlohmann::json j = nlohmann::json::parse(read_file(specs_dir() / name));
  auto abs = [](nlohmann::json& arr) {
    for (auto& p : arr)
      if (!std::filesystem::path(p.get<std::string>()).is_absolute())
        p = std::filesystem::weakly_canonical(specs_dir() / p.get<std::string>()).string();
  };
  if (j.contains("kernel") && j["kernel"].contains("config_fragments"))
    abs(j["kernel"]["config_fragments"]);
  for (auto& v : j["variants"])
    if (v.contains("patches")) abs(v["patches"]);
  if (j.contains("customer") && j["customer"].contains("machine")) {
    nlohmann::json one = nlohmann::json::array({j["customer"]["machine"]});
    abs(one);
    j["customer"]["machine"] = one[0];
  }
  return j;
}

// Removes the directories temp_dir() made for a test when the test passes; a failed test's stay
// behind, with its runs' records, for reading.
class TempDirCleaner : public ::testing::EmptyTestEventListener {
 public:
  static std::vector<std::filesystem::path>& made() {
    static std::vector<std::filesystem::path> dirs;
    return dirs;
  }
  void OnTestEnd(const ::testing::TestInfo& test) override {
    if (test.result() != nullptr && test.result()->Passed())
      for (const auto& d : made()) {
        std::error_code ec;
        std::filesystem::remove_all(d, ec);
      }
    made().clear();
  }
};

// A fresh directory under the system temp dir, named after tag and the pid; removed when the
// test that made it passes (TempDirCleaner).
inline std::filesystem::path temp_dir(const std::string& tag) {
  static const bool cleaner_appended = [] {
    ::testing::UnitTest::GetInstance()->listeners().Append(new TempDirCleaner);  // gtest owns it
    return true;
  }();
  (void)cleaner_appended;
  std::filesystem::path d = std::filesystem::temp_directory_path() /
                            ("isolab-vmtest-" + tag + "-" + std::to_string(::getpid()));
  std::filesystem::remove_all(d);
  std::filesystem::create_directories(d);
  TempDirCleaner::made().push_back(d);
  return d;
}

// The last line of a command's stdout (isolab run and bisect print their directory last).
inline std::filesystem::path last_line(std::string out) {
  while (!out.empty() && out.back() == '\n') out.pop_back();
  return out.substr(out.rfind('\n') == std::string::npos ? 0 : out.rfind('\n') + 1);
}

struct IsolabRun {
  ProcessResult proc;
  std::filesystem::path run_dir;  // the last line of stdout
  nlohmann::json result;          // run_dir/result.json, null when absent
};

// Writes spec to dir/spec.json and runs `isolab run` on it with --results-dir dir/results and
// the extra arguments; stderr goes to dir/isolab.stderr. Times out after 40 minutes.
inline IsolabRun run_isolab(const nlohmann::json& spec, const std::filesystem::path& dir,
                            std::vector<std::pair<std::string, std::string>> env = {},
                            std::vector<std::string> extra = {}) {
  std::filesystem::path spec_path = dir / "spec.json";
  write_file_atomic(spec_path, spec.dump(2));
  auto runner = make_real_runner();
  ProcessSpec ps;
  ps.argv = {ISOLAB_BINARY, "run", spec_path.string(), "--results-dir", (dir / "results").string()};
  ps.argv.insert(ps.argv.end(), extra.begin(), extra.end());
  ps.env = std::move(env);
  ps.stderr_path = dir / "isolab.stderr";
  ps.timeout = std::chrono::minutes(40);
  IsolabRun r;
  r.proc = runner->run(ps);
  r.run_dir = last_line(r.proc.out);
  if (std::filesystem::exists(r.run_dir / "result.json"))
    r.result = nlohmann::json::parse(read_file(r.run_dir / "result.json"));
  return r;
}

// `isolab <args...>` with a 5-minute timeout.
inline ProcessResult run_isolab_command(std::vector<std::string> args) {
  ProcessSpec ps;
  ps.argv = {ISOLAB_BINARY};
  ps.argv.insert(ps.argv.end(), args.begin(), args.end());
  ps.timeout = std::chrono::minutes(5);
  return make_real_runner()->run(ps);
}

// cell["metrics"][name], or a null json when the cell has no such metric.
inline const nlohmann::json& metric(const nlohmann::json& cell, const std::string& name) {
  static const nlohmann::json none;
  auto it = cell["metrics"].find(name);
  return it == cell["metrics"].end() ? none : *it;
}

}  // namespace isolab::vmtest

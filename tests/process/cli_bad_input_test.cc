// process tier: the built isolab on input that is not what a command takes (a directory for a
// file, ...): each refused with exit status 2 and a message naming the path and what is wrong.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "base/files.h"
#include "sys/process.h"

using namespace isolab;
using ::testing::HasSubstr;
namespace fs = std::filesystem;

namespace {

ProcessResult isolab_run(const std::vector<std::string>& args) {
  ProcessSpec ps;
  ps.argv = {ISOLAB_BINARY};
  ps.argv.insert(ps.argv.end(), args.begin(), args.end());
  ps.timeout = std::chrono::seconds(120);
  return make_real_runner()->run(ps);
}

void expect_refused(const std::vector<std::string>& args, const std::string& message) {
  const ProcessResult r = isolab_run(args);
  EXPECT_EQ(r.exit_code, 2) << r.describe() << ": " << r.err;
  EXPECT_THAT(r.err, HasSubstr(message)) << args[0];
}

}  // namespace

TEST(BadInputCli, ADirectoryGivenForAFileIsNamedAsOne) {
  const std::string dir = (fs::path(ISOLAB_SOURCE_DIR) / "examples").string();
  expect_refused({"run", "--dry-run", dir}, dir + " is a directory");
  expect_refused({"doctor", dir}, dir + " is a directory");
  expect_refused({"cmdline", "-f", dir}, dir + " is a directory");
  expect_refused({"import", "--tool", "cyclictest", "--label", "x", "-o",
                  (fs::path(::testing::TempDir()) / "import-dir").string(), dir},
                 dir + " is a directory");
}

namespace {

// examples/vmstat-nohz.json with changes, written to a scratch file (its paths made absolute);
// the file's path.
std::string example_with(const std::string& name, const std::function<void(nlohmann::json&)>& f) {
  const fs::path examples = fs::path(ISOLAB_SOURCE_DIR) / "examples";
  nlohmann::json spec = nlohmann::json::parse(read_file(examples / "vmstat-nohz.json"));
  for (auto& frag : spec["kernel"]["config_fragments"])
    frag = (examples / frag.get<std::string>()).string();
  for (auto& v : spec["variants"])
    for (auto& p : v["patches"]) p = (examples / p.get<std::string>()).string();
  f(spec);
  const fs::path file = fs::path(::testing::TempDir()) / (name + ".json");
  write_file_atomic(file, spec.dump(2));
  return file.string();
}

}  // namespace

TEST(BadInputCli, TheDryRunRefusesAGuestTheHostCannotHoldWithoutOvercommit) {
  // More vCPUs than this host has online CPUs (at least the 8 the example's line isolates 5-7 of).
  const long online = ::sysconf(_SC_NPROCESSORS_ONLN);
  const int vcpus = static_cast<int>(std::max<long>(8, online + 1));
  const std::string spec = example_with("no-overcommit", [&](nlohmann::json& s) {
    s["guest"]["vcpus"] = vcpus;
    s["overcommit"] = false;
  });
  const ProcessResult doctor = isolab_run({"doctor", spec});
  expect_refused({"run", "--dry-run", spec}, "host CPU plan: ");
  expect_refused({"run", "--dry-run", "--json", spec}, "host CPU plan: ");
  fs::remove(spec);
  EXPECT_THAT(doctor.out, HasSubstr("REFUSED"));
}

TEST(BadInputCli, TheDryRunRefusesWhatTheRunCannotJudge) {
  const std::string cpu12 = example_with("primary-cpu12", [](nlohmann::json& s) {
    s["compare"]["primary"] = {
        {{"metric", "latency.latency_max_us"}, {"cpus", "12"}, {"bad", "higher"}}};
  });
  expect_refused({"run", "--dry-run", cpu12},
                 "/compare/primary/0/cpus: CPU 12 is not a CPU of the guest, whose 8 vCPUs");
  const std::string backwards = example_with(
      "extra-7-5", [](nlohmann::json& s) { s["variants"][1]["extra_cmdline"] = "nohz_full=7-5"; });
  expect_refused({"run", "--dry-run", backwards},
                 "/variants/1/extra_cmdline: nohz_full=7-5: cpulist '7-5': EINVAL");
  const fs::path not_patch = fs::path(::testing::TempDir()) / "not-a.patch";
  write_file_atomic(not_patch, "Subject: a mail\n\nno diff here\n--- \nend\n");
  const std::string with_text = example_with("not-a-patch", [&](nlohmann::json& s) {
    s["variants"][1]["patches"] = {not_patch.string()};
  });
  expect_refused({"run", "--dry-run", with_text},
                 "/variants/1/patches/0: " + not_patch.string() + " is not a patch");
  const std::string ok = example_with("ok", [](nlohmann::json&) {});
  expect_refused({"run", "--dry-run", "--results-dir", not_patch.string(), ok},
                 "--results-dir " + not_patch.string() + " exists and is not a directory");
  for (const auto& f : {cpu12, backwards, with_text, ok}) fs::remove(f);
}

// --resume names a run the real run would refuse to finish (no result.json, or another spec's):
// the dry run refuses it as well; a make -j of 0 or less is no number of jobs.
TEST(BadInputCli, TheDryRunRefusesAResumeTheRunWouldRefuseAndNoJobs) {
  const std::string ok = example_with("resume-ok", [](nlohmann::json&) {});
  const fs::path missing = fs::path(::testing::TempDir()) / "no-such-run";
  expect_refused({"run", "--dry-run", "--resume", missing.string(), ok},
                 "--resume " + missing.string() + ": cannot read result.json");
  const fs::path other = fs::path(::testing::TempDir()) / "other-spec-run";
  fs::create_directories(other);
  write_file_atomic(other / "result.json",
                    R"({"run_id": "x", "spec_sha256": "0", "status": "interrupted", "cells": []})");
  expect_refused(
      {"run", "--dry-run", "--resume", other.string(), ok},
      "--resume " + other.string() + ": the spec differs from the one this run was started with");
  for (const char* jobs : {"0", "-3"})
    expect_refused({"run", "--dry-run", "-j", jobs, ok}, "--jobs");
  fs::remove(ok);
  fs::remove_all(other);
}

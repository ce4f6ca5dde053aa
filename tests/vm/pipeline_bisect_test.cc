// vm tier: `isolab bisect` on a real series. patches/planted-series has four patches of which
// the second spins in mlock() and munlock(); bisecting tests/data/specs/bisect-short.json on
// instructions per system call must name patch 2, with every step a run directory that
// `isolab compare` takes and agrees with.
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "vm/isolab_run.h"

namespace isolab {
namespace {

using namespace vmtest;

struct BisectRun {
  ProcessResult proc;
  std::filesystem::path dir;  // the bisect directory: the last line of stdout
  nlohmann::json record;      // its bisect.json
};

BisectRun run_bisect(const std::filesystem::path& dir) {
  const std::filesystem::path spec_path = dir / "spec.json";
  write_file_atomic(spec_path, load_spec("bisect-short.json").dump(2));
  ProcessSpec ps;
  ps.argv = {ISOLAB_BINARY, "bisect", spec_path.string(), "--results-dir",
             (dir / "results").string()};
  ps.stderr_path = dir / "isolab.stderr";
  ps.timeout = std::chrono::minutes(60);
  BisectRun r;
  r.proc = make_real_runner()->run(ps);
  r.dir = last_line(r.proc.out);
  if (std::filesystem::exists(r.dir / "bisect.json"))
    r.record = nlohmann::json::parse(read_file(r.dir / "bisect.json"));
  return r;
}

TEST(PipelineBisect, NamesThePlantedSecondPatchOfFour) {
  const auto dir = temp_dir("bisect");
  const BisectRun r = run_bisect(dir);
  ASSERT_EQ(r.proc.exit_code, 0) << r.proc.out << read_file(dir / "isolab.stderr", 20000);
  ASSERT_TRUE(r.record.is_object()) << r.proc.out;
  ASSERT_TRUE(r.record["culprit"].is_object()) << r.record.dump(1);
  EXPECT_EQ(r.record["culprit"]["number"], 2);
  EXPECT_NE(r.record["culprit"]["subject"].get<std::string>().find("PLANTED COST"),
            std::string::npos);
  EXPECT_NE(r.proc.out.find("first patch that moves it: 2/4 [PATCH 2/4] mm/mlock: PLANTED COST"),
            std::string::npos)
      << r.proc.out;

  // Whatever attempts it took, patches 1-2 ended moved (regressed) and patch 1 alone not moved.
  std::map<std::size_t, std::string> last_state;
  for (const auto& s : r.record["steps"])
    last_state[s["prefix"].get<std::size_t>()] = s["state"].get<std::string>();
  EXPECT_EQ(last_state[4], "moved");
  EXPECT_EQ(last_state[2], "moved");
  EXPECT_EQ(last_state[1], "not moved");
  EXPECT_EQ(last_state.count(3), 0u) << "a binary search over 4 needs no prefix of 3";

  // Each step is a run directory compare takes, and compare's exit status agrees with the step.
  std::set<std::string> dirs;
  for (const auto& s : r.record["steps"]) {
    const std::string run = s["run_dir"];
    EXPECT_TRUE(dirs.insert(run).second) << "two steps in one run directory: " << run;
    ProcessResult cmp = run_isolab_command({"compare", run});
    // A step that did not move exits 0, or 3 when its boots tie so that no primary could reach
    // alpha (docs/verdicts.md: the same path length in every boot of both kernels).
    if (s["verdict"] == "regressed") {
      EXPECT_EQ(cmp.exit_code, 1) << run << "\n" << cmp.out << cmp.err;
    } else {
      EXPECT_TRUE(
          cmp.exit_code == 0 ||
          (cmp.exit_code == 3 &&
           (cmp.out + cmp.err).find("no primary metric could reach alpha") != std::string::npos))
          << run << "\n"
          << cmp.out << cmp.err;
    }
  }
  // A step spends its boots on both variants; the record's total is their sum.
  int cells = 0;
  for (const auto& s : r.record["steps"]) {
    EXPECT_EQ(s["cells"], 2 * s["boots"].get<int>()) << s.dump();
    cells += s["cells"].get<int>();
  }
  EXPECT_EQ(r.record["cells"], cells);
}

}  // namespace
}  // namespace isolab

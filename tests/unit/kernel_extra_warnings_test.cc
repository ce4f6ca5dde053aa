// The W=1 and sparse pass over the touched files: its make command, the classes of its
// warnings read from real logs (make W=1 C=2 CHECK=sparse on mm/vmstat.o, mm/mlock.o and
// kernel/time/tick-sched.o of Debian's 6.1 in an O= build directory, gcc 12, sparse 0.6.4),
// and what a series adds over its base.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "base/files.h"
#include "kernel/extra_warnings.h"

namespace isolab {
namespace {

namespace fs = std::filesystem;

const std::string kSource = "/root/.cache/isolab/worktrees/8952db7babe264d2";

std::string data(const std::string& name) {
  return read_file(fs::path(ISOLAB_TEST_DATA_DIR) / "kernel/extra-warnings" / name);
}

TEST(ExtraWarnings, ArgvAddsW1AndSparseToTheBuildsOwnMake) {
  EXPECT_EQ(extra_warnings_argv("/b", 2, std::string(64, 'a'), true, true, true,
                                {"mm/vmstat.o", "mm/mlock.o"}),
            (std::vector<std::string>{"make", "O=/b", "-j2", "LOCALVERSION=-isolab-aaaaaaaaaaaa",
                                      "CC=ccache gcc", "W=1", "C=2", "CHECK=sparse", "mm/vmstat.o",
                                      "mm/mlock.o"}));
  const auto only_w1 = extra_warnings_argv("/b", 1, std::string(64, 'a'), false, true, false, {});
  EXPECT_EQ(std::count(only_w1.begin(), only_w1.end(), "C=2"), 0);
  EXPECT_EQ(only_w1.back(), "W=1");
}

TEST(ExtraWarnings, CompiledObjectsOfTouchedCFilesOnly) {
  const fs::path dir = fs::temp_directory_path() / ("isolab-extra-" + std::to_string(::getpid()));
  fs::create_directories(dir / "mm");
  write_file_atomic(dir / "mm/vmstat.o", "");
  EXPECT_EQ(compiled_objects({"include/linux/vmstat.h", "mm/vmstat.c", "mm/slob.c",
                              "Documentation/x.rst", "mm/vmstat.c"},
                             dir),
            (std::vector<std::string>{"mm/vmstat.o"}));
  fs::remove_all(dir);
}

TEST(ExtraWarnings, RealLogClassesKernelDocSparseAndGcc) {
  const auto base = parse_extra_warnings(data("base-6.1.log"), kSource);
  ASSERT_EQ(base.size(), 5u);
  EXPECT_EQ(base[0].file, "mm/vmstat.c");
  EXPECT_EQ(base[0].klass, "sparse");
  EXPECT_EQ(base[0].message, "context imbalance in 'walk_zones_in_node' - unexpected unlock");
  EXPECT_EQ(base[1].file, "kernel/time/tick-sched.c");
  EXPECT_EQ(base[1].line, 649);
  EXPECT_EQ(base[1].klass, "kernel-doc");
  EXPECT_EQ(base[1].message,
            "Function parameter or member 'now' not described in 'tick_nohz_update_jiffies'");
  EXPECT_EQ(base[3].file, "include/linux/memcontrol.h");  // sparse, through mlock.c

  const auto probe = parse_extra_warnings(data("probe-6.1.log"), kSource);
  const auto gcc = std::find_if(probe.begin(), probe.end(),
                                [](const BuildWarning& w) { return w.klass[0] == '-'; });
  ASSERT_NE(gcc, probe.end());
  EXPECT_EQ(gcc->describe(),
            "mm/vmstat.c:2258:5: warning: no previous prototype for 'isolab_w1_probe' "
            "[-Wmissing-prototypes]");
}

TEST(ExtraWarnings, SeriesAddsOnlyWhatTheBaseDidNotHave) {
  // probe-6.1.log: the same pass after a function without a prototype was appended to
  // mm/vmstat.c (tick-sched.o was not recompiled, so its kernel-doc warnings are absent).
  const auto base = parse_extra_warnings(data("base-6.1.log"), kSource);
  const auto probe = parse_extra_warnings(data("probe-6.1.log"), kSource);
  const auto added = added_warnings(base, probe, {});
  ASSERT_EQ(added.size(), 2u);
  EXPECT_EQ(added[0].klass, "-Wmissing-prototypes");
  EXPECT_EQ(added[1].klass, "sparse");
  EXPECT_EQ(added[1].message, "symbol 'isolab_w1_probe' was not declared. Should it be static?");
  // A warning the regular build reports already is not the pass's to add.
  EXPECT_EQ(added_warnings(base, probe, {added[0]}).size(), 1u);
  // Lines move; a warning that stays, at another line, is not new.
  BuildWarning moved = base[0];
  moved.line += 10;
  EXPECT_TRUE(added_warnings(base, {moved}, {}).empty());
  // Twice where the base had it once: the second is new.
  EXPECT_EQ(added_warnings({base[0]}, {base[0], moved}, {}).size(), 1u);
}

}  // namespace
}  // namespace isolab

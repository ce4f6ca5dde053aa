// `isolab import` (pipeline/import.h) on captured outputs and the public inputs of
// docs/sources.md [t1]-[t5], [s1], [s2], [s4], [n1], [n2] (fixtures in tests/data/import/ and the
// tools' own dirs):
// the values in the imported result.json, and errors naming the file and line.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include "base/error.h"
#include "base/files.h"
#include "compare/compare.h"
#include "parse/latency_trace.h"
#include "pipeline/import.h"
#include "report/render.h"

using namespace isolab;
using nlohmann::json;
using ::testing::HasSubstr;
namespace fs = std::filesystem;

namespace {

fs::path data(const std::string& rel) { return fs::path(ISOLAB_TEST_DATA_DIR) / rel; }

json import_of(const std::string& tool, std::vector<std::string> files,
               const std::string& label = "customer", std::optional<double> window = {}) {
  ImportOptions o;
  o.tool = tool;
  o.label = label;
  for (const auto& f : files) o.files.push_back(data(f));
  o.window_s = window;
  return import_result(o, ISOLAB_SOURCE_DIR);
}

const json& metric(const json& run, const std::string& name, std::size_t cell = 0) {
  return run.at("cells").at(cell).at("metrics").at(name);
}

std::vector<double> values(const json& run, const std::string& name, std::size_t cell = 0) {
  return metric(run, name, cell).at("values").get<std::vector<double>>();
}

std::string import_error(const std::string& tool, const std::vector<std::string>& files,
                         std::optional<double> window = {}) {
  try {
    import_of(tool, files, "bad", window);
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

// The run looks like `isolab run`'s: one variant, one ok cell per file, bare-metal.
TEST(Import, RunShapeOneCellPerFile) {
  json r = import_of("cyclictest", {"cyclictest/host-2t-hist.json", "cyclictest/host-2t-q.txt"});
  EXPECT_EQ(r["schema_version"], 1);
  EXPECT_EQ(r["variant_order"], json::array({"customer"}));
  EXPECT_EQ(r["host"]["accelerator"], "bare-metal");
  EXPECT_EQ(r["comparison_key"]["accelerator"], "bare-metal");
  ASSERT_EQ(r["cells"].size(), 2u);
  EXPECT_EQ(r["cells"][1]["id"], "customer-r1");
  EXPECT_EQ(r["cells"][1]["status"], "ok");
  EXPECT_EQ(r["cells"][1]["accelerator"], "bare-metal");
  EXPECT_EQ(r["spec"]["workloads"][0]["tool"], "cyclictest");
  // compare reads it: two boots of one variant.
  VariantData v = extract_variant(r, "customer");
  EXPECT_EQ(v.cells_ok, 2u);
  EXPECT_EQ(v.metrics.at("cyclictest.latency_max_us").values.size(), 2u);
  // The JSON file's rt-tests version is recorded as printed; the text file carries none.
  EXPECT_EQ(r["cells"][0]["tool_versions"]["cyclictest"]["cyclictest"], "2.40");
  EXPECT_FALSE(r["cells"][1].contains("tool_versions"));
}

// [t1]: the -q lines of a 540 s run; per thread values as printed.
TEST(Import, T1QuietLines) {
  json r = import_of("cyclictest", {"import/t1-quiet.txt"});
  EXPECT_EQ(values(r, "cyclictest.latency_min_us"), (std::vector<double>{4, 4}));
  EXPECT_EQ(values(r, "cyclictest.latency_avg_us"), (std::vector<double>{18, 17}));
  EXPECT_EQ(values(r, "cyclictest.latency_max_us"), (std::vector<double>{217, 340}));
}

// [t2]: no space after C: past a million cycles; policy and # lines are skipped, not errors.
TEST(Import, T2MillionCycles) {
  json r = import_of("cyclictest", {"import/t2-million-cycles.txt"});
  EXPECT_EQ(values(r, "cyclictest.latency_max_us"), (std::vector<double>{306}));
  EXPECT_EQ(values(r, "cyclictest.latency_avg_us"), (std::vector<double>{16}));
}

// [t3]: real --json of a run stopped by SIGINT before any cycle: both threads 0 cycles, avg
// "-nan". The file imports ("no samples", an invalid cell), it does not fail the import.
TEST(Import, T3ZeroCycleThreadsAreNoSamples) {
  json r = import_of("cyclictest",
                     {"cyclictest/host-zero-cycles-sigint.json", "cyclictest/host-2t-hist.json"});
  EXPECT_EQ(r["cells"][0]["status"], "invalid");
  EXPECT_EQ(r["cells"][0]["reason"], "cyclictest: no thread has samples");
  EXPECT_THAT(r["cells"][0]["notes"]["cyclictest"].dump(), HasSubstr("no samples (0 cycles)"));
  EXPECT_EQ(r["cells"][1]["status"], "ok");
  VariantData v = extract_variant(r, "customer");
  EXPECT_EQ(v.cells_ok, 1u);
  ASSERT_EQ(v.issues.size(), 1u);
  EXPECT_EQ(v.issues[0].reason, "cyclictest: no thread has samples");
}

// [t3]: return_code tells success: a run that reports a failure is kept, as an invalid cell.
TEST(Import, T3NonZeroReturnCodeIsNoMeasurement) {
  json r = import_of("cyclictest", {"import/t3-return-code-1.json"});
  EXPECT_EQ(r["cells"][0]["status"], "invalid");
  EXPECT_EQ(r["cells"][0]["reason"],
            "cyclictest return_code 1: the run reported a failure, its numbers are no measurement");
}

// [t6]: --json of a run without -a: thread 0 has the numbers, thread 1 no samples (-nan avg),
// and "cpu": -1 is the CPU asked for (none), so no thread becomes a CPU's latency.
TEST(Import, T6NoAffinityThreadsAreNotCpus) {
  json r = import_of("cyclictest", {"import/t6-no-affinity.json"});
  EXPECT_EQ(r["cells"][0]["status"], "ok");
  EXPECT_EQ(values(r, "cyclictest.latency_min_us"), std::vector<double>{3});
  EXPECT_EQ(values(r, "cyclictest.latency_max_us"), std::vector<double>{41});
  EXPECT_EQ(values(r, "cyclictest.latency_avg_us"), std::vector<double>{5.21});
  EXPECT_FALSE(metric(r, "cyclictest.latency_max_us").contains("cpus"))
      << metric(r, "cyclictest.latency_max_us").dump();
}

// [t6]: `cyclictest -a 12` on a machine without CPU 12 (a real capture of stdout and stderr on
// a 2-CPU host): libnuma's warning and the usage text, exit 1; a configuration error, no
// measurement.
TEST(Import, T6UsageTextIsAConfigurationError) {
  EXPECT_THAT(import_error("cyclictest", {"import/t6-usage-a12.txt"}),
              HasSubstr("cyclictest printed its usage text, not results: it refused its options (a "
                        "configuration error, no measurement); it said \"libnuma: Warning: "
                        "cpu argument 12 is out of range\""));
}

// [t7]: rt-tests copies the command line into "cmdline:" unescaped: a real capture whose --json
// file name holds '"' and '\\' still imports, with the command line as it was.
TEST(Import, T7RawCmdlineInJson) {
  json r = import_of("cyclictest", {"cyclictest/host-raw-cmdline.json"});
  EXPECT_EQ(r["cells"][0]["status"], "ok");
  EXPECT_EQ(values(r, "cyclictest.latency_max_us").size(), 1u);
  EXPECT_EQ(r["cells"][0]["tool_versions"]["cyclictest"]["cyclictest"], "2.40");
}

// [t4]: real non-quiet output through a pty: only the block after the last ESC counts.
TEST(Import, T4RedrawnOutput) {
  json r = import_of("cyclictest", {"cyclictest/host-2t-nonquiet-pty.txt"});
  EXPECT_EQ(values(r, "cyclictest.latency_max_us").size(), 2u);
}

// [t5]: rt-tests 2.7 histogram (no "# Total:", empty buckets left out) and the old footer with
// overflows: buckets fill with 0; the old one's p99 is in the overflow range, so omitted.
TEST(Import, T5HistogramFormats) {
  json r = import_of("cyclictest", {"import/t5-hist-2.7.txt", "import/t5-hist-old.txt"});
  // 2.7: thread 0 {3:10, 4:500, 7:100, 120:1}, thread 1 {3:2, 4:300, 7:90}: merged N = 1003,
  // nearest rank 993 and 1002 both fall in bucket 7.
  EXPECT_EQ(values(r, "cyclictest.latency_max_us", 0), (std::vector<double>{120, 7}));
  EXPECT_EQ(values(r, "cyclictest.latency_p99_us", 0), (std::vector<double>{7}));
  EXPECT_EQ(values(r, "cyclictest.latency_p999_us", 0), (std::vector<double>{7}));
  const json& h = r["cells"][0]["histograms"]["cyclictest"];
  EXPECT_EQ(h["counts"]["120"], 1);
  EXPECT_EQ(h["counts"]["4"], 800);
  // Old footer: 12 overflows of thread 0 -> N = 1014, rank 1004 is an overflow.
  EXPECT_EQ(values(r, "cyclictest.latency_max_us", 1), (std::vector<double>{2500, 7}));
  EXPECT_FALSE(r["cells"][1]["metrics"].contains("cyclictest.latency_p99_us"));
  EXPECT_EQ(r["cells"][1]["histograms"]["cyclictest"]["overflows"], 12);
}

// [s1]: zero CPU time accounted: the usr+sys rate is missing, never 0.
TEST(Import, S1UsrSysNotAccounted) {
  json r = import_of("stress-ng", {"import/s1-flow.yaml"});
  EXPECT_NEAR(values(r, "stress-ng.clone.bogo_ops_per_s_real")[0], 1341.045392, 1e-6);
  EXPECT_NEAR(38891 / 29.000510, 1341.05, 0.005);
  EXPECT_FALSE(r["cells"][0]["metrics"].contains("stress-ng.clone.bogo_ops_per_s_usr_sys"));
}

// [s2]: before/after rows imported as two runs; compare gives -3.75% and -4.98%.
TEST(Import, S2BeforeAfterCompare) {
  json a = import_of("stress-ng", {"import/s2-before.txt"}, "before");
  json b = import_of("stress-ng", {"import/s2-after.txt"}, "after");
  Comparison c = compare_runs(a, "before", b, "after", CompareSettings{}, true);
  auto change = [&](const std::string& name) {
    for (const auto& m : c.metrics)
      if (m.name == name) return m.change_pct;
    return std::nan("");
  };
  EXPECT_NEAR(change("stress-ng.ramfs.bogo_ops_per_s_real"), -3.75, 0.005);
  EXPECT_NEAR(change("stress-ng.ramfs.bogo_ops_per_s_usr_sys"), -4.98, 0.005);
}

// [s4]: V0.21.04 YAML: nested per-instance lists are skipped, --sn numbers read.
TEST(Import, S4InstancesAndScientificNumbers) {
  json r = import_of("stress-ng", {"import/s4-instances-sn.yaml"});
  EXPECT_DOUBLE_EQ(values(r, "stress-ng.cpu.bogo_ops")[0], 12345);
  EXPECT_DOUBLE_EQ(values(r, "stress-ng.cpu.bogo_ops_per_s_real")[0], 1341.045);
  EXPECT_DOUBLE_EQ(values(r, "stress-ng.cpu.bogo_ops_per_s_usr_sys")[0], 2057.5);
  // system-info's stress-ng-version is recorded with the result.
  EXPECT_EQ(r["cells"][0]["tool_versions"]["stress-ng"]["stress-ng"], "0.21.04");
}

// S5 of the public cases (stress-ng 0.09.25 on a 16-CPU VM): the unquoted '#' in system-info's
// kernel version and the colon-separated date do not disturb the metrics or the version; the
// rates are stress-ng's own: 30539 / 10.014023 s real, 30539 / 141.21 s usr+sys.
TEST(Import, S5OldYamlWithHashAndColonDates) {
  json r = import_of("stress-ng", {"import/s5-stressng-0.09.25.yaml"});
  EXPECT_DOUBLE_EQ(values(r, "stress-ng.cpu.bogo_ops")[0], 30539);
  EXPECT_NEAR(values(r, "stress-ng.cpu.bogo_ops_per_s_real")[0], 3049.62, 0.005);
  EXPECT_NEAR(values(r, "stress-ng.cpu.bogo_ops_per_s_usr_sys")[0], 216.27, 0.005);
  EXPECT_EQ(r["cells"][0]["tool_versions"]["stress-ng"]["stress-ng"], "0.09.25");
}

// [s3]: stress-ng's own verdict, from real 0.15.06 logs (tests/data/stress-ng/s3-*, named by the
// exit status they gave). A stressor that did not run, or a failed run, is an error naming the
// file and the log line, even though the run exited 0.
TEST(Import, S3SkippedOrFailedStressorIsAnError) {
  EXPECT_THAT(import_error("stress-ng", {"stress-ng/s3-cpu-sctp-rc0.log"}),
              HasSubstr("s3-cpu-sctp-rc0.log: line 3: stress-ng: stressor sctp did not run: "
                        "sctp: SCTP protocol not supported, skipping stressor"));
  EXPECT_THAT(import_error("stress-ng", {"stress-ng/s3-case-summary-skipped16.log"}),
              HasSubstr("s3-case-summary-skipped16.log: line 3: stress-ng: stressor apparmor "
                        "did not run"));
  EXPECT_THAT(import_error("stress-ng", {"stress-ng/s3-physpage-rc2.log"}),
              HasSubstr("s3-physpage-rc2.log: line 14: stress-ng: stressor physpage failed: "
                        "process [16583] (physpage) terminated with an error, exit status=2 "
                        "(stressor failed)"));
  EXPECT_THAT(import_error("stress-ng", {"stress-ng/s3-uprobe-rc3.log"}),
              HasSubstr("s3-uprobe-rc3.log: line 4: stress-ng: stressor uprobe had not enough "
                        "resources: process [16581] (uprobe) aborted early, out of system "
                        "resources"));
  // A YAML holds no log: its 0-ops-in-0-s row, and --exit-status, still count.
  EXPECT_THAT(import_error("stress-ng", {"stress-ng/s3-skipped-sctp-rc0.yaml"}),
              HasSubstr("s3-skipped-sctp-rc0.yaml: stress-ng: stressor sctp did not run"));
  ImportOptions o;
  o.tool = "stress-ng";
  o.label = "x";
  o.files = {data("stress-ng/s3-cpu-rc0.yaml")};
  o.exit_status = 3;
  try {
    import_result(o, ISOLAB_SOURCE_DIR);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("s3-cpu-rc0.yaml: stress-ng: stress-ng exited 3 (not enough "
                                    "resources) (exit status from --exit-status)"));
  }
}

// [s3]: bogo ops under exit status 7 are kept, marked, and compare leaves them out and says so.
TEST(Import, S3UntrustworthyMetricsStayOutOfCompare) {
  json a = import_of("stress-ng", {"stress-ng/s3-cpu-rc0.log", "stress-ng/s3-cpu-rc0.log"}, "a");
  ImportOptions o;
  o.tool = "stress-ng";
  o.label = "b";
  o.files = {data("stress-ng/s3-cpu-rc0.log"), data("stress-ng/s3-cpu-rc0.log")};
  o.exit_status = 7;
  json b = import_result(o, ISOLAB_SOURCE_DIR);
  const json& m = metric(b, "stress-ng.cpu.bogo_ops_per_s_real");
  EXPECT_EQ(m["untrustworthy"],
            "stress-ng: metrics untrustworthy: stress-ng exited 7 (metrics "
            "untrustworthy)");
  EXPECT_FALSE(metric(a, "stress-ng.cpu.bogo_ops_per_s_real").contains("untrustworthy"));
  Comparison c = compare_runs(a, "a", b, "b", CompareSettings{}, true);
  for (const auto& row : c.metrics) EXPECT_TRUE(row.b_values.empty()) << row.name;
  ASSERT_EQ(c.untrusted.size(), 6u);  // 3 metrics x 2 cells of B
  EXPECT_EQ(c.untrusted[0].side, "B");
  EXPECT_EQ(c.untrusted[0].cell_id, "b-r0");
  EXPECT_EQ(c.untrusted[0].metric, "stress-ng.cpu.bogo_ops");
  EXPECT_THAT(render_text(c), HasSubstr("values left out of the comparison (untrustworthy):\n"
                                        "  B b-r0: stress-ng.cpu.bogo_ops: stress-ng: metrics "
                                        "untrustworthy"));
}

// [n1]: trace prefixes of several kernels and tools in one file; per-CPU counts by cause.
TEST(Import, N1TracePrefixes) {
  json r = import_of("trace", {"import/n1-trace-prefixes.txt"}, "customer", 10.0);
  auto counts = [&](const std::string& cause) {
    return metric(r, "trace.noise." + cause + "_per_s").at("counts").get<std::vector<long>>();
  };
  EXPECT_EQ(metric(r, "trace.noise.local_timer_per_s")["cpus"], json::array({5, 7}));
  EXPECT_EQ(counts("vmstat_update"), (std::vector<long>{2, 0}));  // queue_work is not a run
  EXPECT_EQ(counts("local_timer"), (std::vector<long>{2, 0}));
  EXPECT_EQ(counts("ipi_reschedule"), (std::vector<long>{1, 0}));
  EXPECT_EQ(counts("workqueue_other"), (std::vector<long>{0, 1}));  // kworker/u16:1 on [007]
  EXPECT_EQ(counts("softirq"), (std::vector<long>{0, 1}));
  EXPECT_EQ(counts("irq"), (std::vector<long>{0, 1}));  // "....17.196720", no space
  EXPECT_EQ(counts("interruptions"), (std::vector<long>{5, 2}));
  EXPECT_EQ(values(r, "trace.noise.vmstat_update_per_s"), (std::vector<double>{0.2, 0}));
  EXPECT_EQ(metric(r, "trace.noise.local_timer_per_s")["window_s"], 10.0);
  EXPECT_NEAR(values(r, "trace.noise.longest_us")[1], 100000, 1e-6);  // 15.1 -> 15.2
}

// The osnoise tracer's noise events (the kernel documentation's example): two local timer
// interrupts and a thread preemption on CPU 8 are counted as such, not as zero; the longest is
// the thread's 3068 ns.
TEST(Import, OsnoiseTracerEvents) {
  json r = import_of("trace", {"trace/doc-osnoise-tracer-events.txt"}, "customer", 1.0);
  auto counts = [&](const std::string& cause) {
    return metric(r, "trace.noise." + cause + "_per_s").at("counts").get<std::vector<long>>();
  };
  EXPECT_EQ(metric(r, "trace.noise.local_timer_per_s")["cpus"], json::array({8}));
  EXPECT_EQ(counts("local_timer"), (std::vector<long>{2}));
  EXPECT_EQ(counts("irq"), (std::vector<long>{0}));
  EXPECT_EQ(counts("interruptions"), (std::vector<long>{3}));
  EXPECT_NEAR(values(r, "trace.noise.longest_us")[0], 3.068, 1e-9);
}

// The osnoise tracer's per-period lines (the kernel documentation's example, 8 CPUs, one 1 s
// period each): read as rtla osnoise top reads them, over the sampled runtime.
TEST(Import, OsnoiseTracerSummaryLines) {
  json r = import_of("trace", {"trace/doc-osnoise-tracer-summary.txt"}, "customer", 1.0);
  const json& irq = metric(r, "trace.osnoise.irq_per_s");
  EXPECT_EQ(irq["cpus"], json::array({0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(irq["counts"], json::array({1007, 1006, 1013, 1011, 1002, 1006, 1006, 1016}));
  EXPECT_EQ(irq["windows_s"][0], 1.0);
  EXPECT_EQ(values(r, "trace.osnoise.irq_per_s")[2], 1013);
  EXPECT_EQ(values(r, "trace.osnoise.noise_us")[7], 7816);
  EXPECT_NEAR(values(r, "trace.osnoise.cpu_available_pct")[0], 99.981, 1e-9);
  EXPECT_EQ(values(r, "trace.osnoise.max_single_us")[2], 202);
  EXPECT_EQ(metric(r, "trace.osnoise.thread_per_s")["counts"][7], 19);
}

// A trace of events isolab does not read is refused with what it holds, not read as zeros.
TEST(Import, TraceWithoutRecognisedEventsIsRefused) {
  const std::string text =
      "          <idle>-0       [002] d..2.   100.000100: sched_switch: prev_comm=swapper/2\n"
      "          <idle>-0       [002] d..2.   100.000200: sched_switch: prev_comm=swapper/2\n"
      "            bash-812     [002] d..3.   100.000300: sched_wakeup: comm=kworker/2:1\n";
  const fs::path f = fs::path(::testing::TempDir()) / "sched-only.txt";
  write_file_atomic(f, text);
  ImportOptions o;
  o.tool = "trace";
  o.label = "customer";
  o.files = {f};
  o.window_s = 1.0;
  try {
    import_result(o, ISOLAB_SOURCE_DIR);
    FAIL() << "imported";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("no recognised events among 3 event lines (sched_switch 2, "
                                    "sched_wakeup 1)"));
  }
}

// The real 6.1 guest trace: the counts the parser test states, over the trace span.
TEST(Import, RealGuestTrace) {
  json r = import_of("trace", {"trace/guest-6.1-tcg-cpus5-7.txt"}, "customer", 4.0);
  EXPECT_EQ(metric(r, "trace.noise.local_timer_per_s")["counts"], json::array({97, 39, 34}));
  EXPECT_EQ(values(r, "trace.noise.local_timer_per_s"), (std::vector<double>{24.25, 9.75, 8.5}));
}

// [n2]: /proc/interrupts pairs. x86 with CPUs 10-19 offline: columns by name, 64-bit counts.
TEST(Import, N2X86OfflineCpus) {
  json r = import_of("interrupts", {"import/n2-x86-offline-pair.txt"}, "customer", 10.0);
  const json& loc = metric(r, "interrupts.noise.local_timer_per_s");
  EXPECT_EQ(loc["cpus"][10], 20);
  EXPECT_EQ(loc["cpus"][11], 21);
  EXPECT_EQ(loc["counts"][10], 1000);
  EXPECT_EQ(loc["counts"][11], 250);
  EXPECT_DOUBLE_EQ(loc["values"][10].get<double>(), 100);
  EXPECT_EQ(loc["counts"][0], 0);
  EXPECT_EQ(loc["kind"], "count");
}

// [n2] arm64: no LOC row, the local timer is the arch_timer IRQ; IPI rows with no space after
// the label; the arch_timer row is not counted as a device IRQ.
TEST(Import, N2Arm64ArchTimer) {
  json r = import_of("interrupts", {"import/n2-arm64-pair.txt"}, "customer", 10.0);
  EXPECT_EQ(metric(r, "interrupts.noise.local_timer_per_s")["counts"],
            json::array({1000, 10, 0, 10}));
  EXPECT_EQ(metric(r, "interrupts.noise.ipi_reschedule_per_s")["counts"],
            json::array({100, 100, 0, 1}));
  EXPECT_EQ(metric(r, "interrupts.noise.irq_per_s")["counts"], json::array({100, 0, 0, 0}));
}

TEST(Import, RealGuestInterruptsPair) {
  const fs::path tmp = fs::temp_directory_path() / "isolab-import-unit-pair.txt";
  write_file_atomic(tmp, read_file(data("guest/interrupts-isolation-6.1-before.txt")) +
                             read_file(data("guest/interrupts-isolation-6.1-after.txt")));
  ImportOptions o;
  o.tool = "interrupts";
  o.label = "guest";
  o.files = {tmp};
  o.window_s = 3;
  o.cpus = "5-7";
  json r = import_result(o, ISOLAB_SOURCE_DIR);
  const json& loc = metric(r, "interrupts.noise.local_timer_per_s");
  EXPECT_EQ(loc["cpus"], json::array({5, 6, 7}));
  fs::remove(tmp);
}

// Bad input: the file and the line.
TEST(Import, GarbageLineNamesFileAndLine) {
  std::string e = import_error("cyclictest", {"import/bad-garbage-line.txt"});
  EXPECT_THAT(e, HasSubstr("bad-garbage-line.txt: line 2: not cyclictest output"));
  EXPECT_THAT(e, HasSubstr("this line is not cyclictest output"));
}

TEST(Import, BadTRowNamesFileAndLine) {
  std::string e = import_error("trace", {"import/t1-quiet.txt"});
  EXPECT_THAT(e, HasSubstr("t1-quiet.txt: line 1: not a trace event line"));
}

TEST(Import, MissingFile) {
  EXPECT_THAT(import_error("stress-ng", {"import/no-such-file.yaml"}),
              HasSubstr("no-such-file.yaml: no such file"));
}

TEST(Import, InterruptsNeedTwoSnapshotsAndAWindow) {
  EXPECT_THAT(import_error("interrupts", {"interrupts/x86-offline-cpus.txt"}, 10.0),
              HasSubstr("x86-offline-cpus.txt: holds 1 /proc/interrupts snapshot(s); need two"));
  EXPECT_THAT(import_error("interrupts", {"import/n2-x86-offline-pair.txt"}),
              HasSubstr("--window-s"));
  EXPECT_THAT(import_error("interrupts", {"import/t1-quiet.txt"}, 10.0),
              HasSubstr("t1-quiet.txt: line 1: not a /proc/interrupts header"));
}

TEST(Import, StressngYamlErrorNamesFile) {
  EXPECT_THAT(import_error("stress-ng", {"import/n1-trace-prefixes.txt"}),
              HasSubstr("n1-trace-prefixes.txt: "));
}

// [r6]: timerlat top with its auto-analysis: the table's latencies, the analysis in the notes.
TEST(Import, R6TimerlatTopWithAutoAnalysis) {
  json r = import_of("rtla-timerlat", {"rtla/doc-timerlat-top-auto-analysis.txt"});
  const json& max = metric(r, "rtla-timerlat.timerlat.thread_max_us");
  EXPECT_EQ(max["cpus"].size(), 23u);
  EXPECT_EQ(max["values"][22], 41.0);
  EXPECT_EQ(values(r, "rtla-timerlat.timerlat.irq_max_us")[3], 17.0);
  const std::string notes = r["cells"][0]["notes"].dump();
  EXPECT_THAT(notes, HasSubstr("stopped tracing after 12 s"));
  EXPECT_THAT(notes, HasSubstr("Blocking thread 3.79 us (9.03 %)"));
  EXPECT_THAT(notes, HasSubstr("blocking task objtool, pid 49256"));
}

// [w1]: the hwlat tracer's trace through --tool trace, told apart by its "# tracer:" line.
TEST(Import, W1HwlatTrace) {
  json r = import_of("trace", {"trace/doc-hwlat.txt"});
  const json& max = metric(r, "trace.hwlat.max_us");
  EXPECT_EQ(max["cpus"], json::array({1, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(max["values"][2], 18.0);
  EXPECT_EQ(max["values"][0], 17.0);
  EXPECT_EQ(metric(r, "trace.hwlat.threshold_crossings")["counts"][0], 9);
}

// [w2]: a wakeup_rt latency trace through --tool trace: the recorded maximum, where and whom.
TEST(Import, W2WakeupRtLatencyTrace) {
  json r = import_of("trace", {"trace/doc-wakeup-rt-events.txt"});
  EXPECT_EQ(values(r, "trace.wakeup_rt.max_latency_us"), std::vector<double>{6});
  EXPECT_EQ(r["cells"][0]["notes"]["trace"][0],
            "wakeup_rt: 6 us on CPU 2, task sleep (pid 5882), SCHED_FIFO rt_prio 5, 12 entries");
  // The tracer is the one the "latency trace" line names, not the first "# tracer:" line.
  const WakeupTraceSummary w = parse_wakeup_trace(
      "# tracer: wakeup\n#\n" + read_file(data("trace/doc-wakeup-rt-events.txt")));
  EXPECT_EQ(w.tracer, "wakeup_rt");
  EXPECT_EQ(w.latency_us, 6.0);
  EXPECT_EQ(w.entries, 12);
  EXPECT_EQ(w.cpu, 2);  // "CPU#2"; the entries carry no [NNN] column
  EXPECT_EQ(w.task, "sleep-5882");
  EXPECT_EQ(w.policy, 1);
  EXPECT_EQ(w.rt_prio, 5);
}

// [w3]: the function profiler's rows: hits and time (the number before " us", whatever its
// precision), summed over CPU files; names cut at 30 characters are said to be.
TEST(Import, W3FunctionProfile) {
  json r = import_of("function-profile", {"import/w3-function-profile.txt"});
  EXPECT_EQ(values(r, "function-profile.calls.vfs_write"), std::vector<double>{462});
  EXPECT_EQ(values(r, "function-profile.calls.vfs_write.time_us"), std::vector<double>{68476.43});
  EXPECT_EQ(values(r, "function-profile.calls.vfs_fstat.time_us"), std::vector<double>{878.094});
  EXPECT_THAT(r["cells"][0]["notes"].dump(), HasSubstr("'rcu_preempt_deferred_qs_handle' is cut"));
  const auto rows = parse_function_profile_rows(read_file(data("import/w3-function-profile.txt")));
  EXPECT_NEAR(*rows.at("vfs_write").avg_us(), 148.217, 0.001);  // 68476.43 / 462
  // Two CPU files concatenated: hits and time add up.
  const std::string one = read_file(data("import/w3-function-profile.txt"));
  const auto two = parse_function_profile_rows(one + one);
  EXPECT_EQ(two.at("vfs_read").hits, 1282);
  EXPECT_NEAR(*two.at("vfs_read").time_us, 19222.712, 1e-6);
  // Without the graph tracer only Function and Hit are printed: no time.
  const auto bare = parse_function_profile_rows(
      "  Function                               Hit\n  --------                               ---\n"
      "  vfs_write                              462\n");
  EXPECT_EQ(bare.at("vfs_write").hits, 462);
  EXPECT_FALSE(bare.at("vfs_write").time_us.has_value());
  EXPECT_THAT(import_error("function-profile", {"import/t1-quiet.txt"}),
              HasSubstr("not trace_stat/function output"));
}

// [r5]: an osnoise histogram through the same --tool as osnoise top, told apart by its header.
TEST(Import, R5OsnoiseHist) {
  json r = import_of("rtla-osnoise", {"rtla/doc-osnoise-hist-b10.txt"});
  EXPECT_EQ(metric(r, "rtla-osnoise.osnoise.hist_samples")["counts"][0], 55215);
  EXPECT_EQ(values(r, "rtla-osnoise.osnoise.hist_max_bucket_us")[11], 50.0);
  EXPECT_THAT(r["cells"][0]["notes"].dump(), HasSubstr("bucket width 10 us"));
  EXPECT_FALSE(r["cells"][0]["metrics"].contains("rtla-osnoise.osnoise.irq_per_s"));
}

TEST(Import, UnknownToolAndBadLabel) {
  // Refused with every format isolab reads, one line per --tool.
  const std::string err = import_error("perf", {"import/t1-quiet.txt"});
  EXPECT_THAT(err, HasSubstr("--tool perf: not a format isolab reads; --tool takes:"));
  for (const auto& [name, tool] : import_tools()) EXPECT_THAT(err, HasSubstr(name + " "));
  EXPECT_THAT(err, HasSubstr("rtla osnoise hist text"));
  EXPECT_EQ(import_formats_text().find("  cyclictest    cyclictest --json"), 0u);
  ImportOptions o;
  o.tool = "cyclictest";
  o.label = "a b";
  o.files = {data("import/t1-quiet.txt")};
  EXPECT_THROW(import_result(o, ""), Error);
}

// compare --force lists readable differences against a guest-like run.
TEST(Import, ForcedCompareShowsDifferencesInKind) {
  json a = import_of("cyclictest", {"import/t1-quiet.txt", "import/t2-million-cycles.txt"});
  json guest = a;
  guest["comparison_key"]["accelerator"] = "tcg";
  guest["comparison_key"]["workloads_sha256"] = "x";
  guest["comparison_key"]["host_fingerprint_sha256"] = "y";
  guest["host"]["cpu_model"] = "QEMU TCG";
  guest["spec"]["workloads"] = json::array({{{"name", "latency"}, {"tool", "cyclictest"}}});
  guest["run_id"] = "guest";
  for (auto& c : guest["cells"]) c["accelerator"] = "tcg";
  auto diffs = comparison_key_differences(guest, a);
  EXPECT_THAT(diffs, ::testing::Contains("accelerator: A=tcg, B=bare-metal"));
  EXPECT_THAT(diffs, ::testing::Contains(
                         "workloads: A=latency (cyclictest); B=cyclictest (cyclictest, imported)"));
  EXPECT_THAT(diffs, ::testing::Contains("host: cpu_model A=QEMU TCG, B=unknown"));
  guest["comparison_key"]["cmdline"] = "nohz_full=2-3";
  EXPECT_THAT(comparison_key_differences(guest, a),
              ::testing::Contains("cmdline: A=nohz_full=2-3, B=(not recorded)"));
  EXPECT_THROW(compare_runs(guest, "customer", a, "customer", CompareSettings{}, false),
               ComparisonRefused);
}

// rtla: the real guest captures (osnoise top of CPUs 2-3 over 4 s, timerlat hist), and [r2]: the
// output of rtla on a kernel without the tracer is an error, never zero noise.
TEST(Import, RtlaCaptures) {
  json o = import_of("rtla-osnoise", {"rtla/guest-6.1-tcg-osnoise-top-cpus2-3.txt"});
  EXPECT_EQ(metric(o, "rtla-osnoise.osnoise.noise_us")["cpus"], json::array({2, 3}));
  EXPECT_EQ(values(o, "rtla-osnoise.osnoise.noise_us"), (std::vector<double>{3292961, 3269820}));
  EXPECT_EQ(metric(o, "rtla-osnoise.osnoise.irq_per_s")["counts"], json::array({8, 11}));
  json t = import_of("rtla-timerlat", {"rtla/guest-6.1-tcg-timerlat-hist-cpus2-3.txt"});
  EXPECT_EQ(t["cells"][0]["status"], "ok");
  EXPECT_TRUE(t["cells"][0]["metrics"].contains("rtla-timerlat.timerlat.irq_max_us"));
  EXPECT_THAT(import_error("rtla-timerlat", {"rtla/host-notracefs-timerlat-hist.stderr.txt"}),
              HasSubstr("host-notracefs-timerlat-hist.stderr.txt: rtla timerlat: tracer "
                        "unavailable"));
}

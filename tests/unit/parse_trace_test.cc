#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include "base/files.h"
#include "parse/lock_contention.h"
#include "parse/trace.h"
#include "parse/vmstat_queueing.h"

namespace isolab {
namespace {

std::string data(const std::string& rel) {
  return read_file(std::string(ISOLAB_TEST_DATA_DIR) + "/" + rel);
}

std::vector<long long> counts_of(const Metrics& m, const std::string& name) {
  return m.at(name).per_cpu->counts;
}

bool has_note(const std::vector<std::string>& notes, const std::string& part) {
  for (const auto& n : notes)
    if (n.find(part) != std::string::npos) return true;
  return false;
}

// --- docs/sources.md [n1]: line formats ------------------------------------------------------

struct LineCase {
  const char* what;
  const char* line;
  const char* task;
  long pid;
  int cpu;
  const char* flags;
  std::optional<int64_t> ts_ns;
  const char* event;
  const char* body;
};

class TraceLineFormat : public ::testing::TestWithParam<LineCase> {};

TEST_P(TraceLineFormat, Parses) {
  const LineCase& c = GetParam();
  auto l = parse_trace_line(c.line);
  ASSERT_TRUE(l.has_value()) << c.what;
  EXPECT_EQ(l->task, c.task) << c.what;
  EXPECT_EQ(l->pid, c.pid) << c.what;
  EXPECT_EQ(l->cpu, c.cpu) << c.what;
  EXPECT_EQ(l->flags, c.flags) << c.what;
  EXPECT_EQ(l->ts_ns, c.ts_ns) << c.what;
  EXPECT_EQ(l->event, c.event) << c.what;
  EXPECT_EQ(l->body, c.body) << c.what;
}

INSTANTIATE_TEST_SUITE_P(
    N1, TraceLineFormat,
    ::testing::Values(
        // The 6.1 guest capture (tests/data/trace/guest-6.1-tcg-cpus5-7.txt), 5 flag columns.
        LineCase{"5 flag columns",
                 "          <idle>-0       [005] d.h1.    15.720422: "
                 "local_timer_entry: vector=236",
                 "<idle>", 0, 5, "d.h1.", 15720422000, "local_timer_entry", "vector=236"},
        LineCase{"4 flag columns (before about 5.15)",
                 "     kworker/5:1-64      [005] d..2    22.521660: workqueue_execute_start: "
                 "work struct (____ptrval____): function vmstat_update",
                 "kworker/5:1", 64, 5, "d..2", 22521660000, "workqueue_execute_start",
                 "work struct (____ptrval____): function vmstat_update"},
        LineCase{"longer RT flags",
                 "      cyclictest-167     [005] dNh2.1.   15.776173: "
                 "reschedule_entry: vector=253",
                 "cyclictest", 167, 5, "dNh2.1.", 15776173000, "reschedule_entry", "vector=253"},
        LineCase{"no space before the timestamp (trace-cmd report -N)",
                 "  <idle>-0     [000] ....316.196720: irq_handler_entry: irq=24 name=virtio0",
                 "<idle>", 0, 0, "....", 316196720000, "irq_handler_entry", "irq=24 name=virtio0"},
        LineCase{"hex preempt depth",
                 "  stress-ng-9 [003] dNsa.  7.000001: softirq_entry: "
                 "vec=9 [action=RCU]",
                 "stress-ng", 9, 3, "dNsa.", 7000001000, "softirq_entry", "vec=9 [action=RCU]"},
        LineCase{"no flags column (irq-info off)",
                 "          <idle>-0       [006]    15.720422: local_timer_exit: vector=236",
                 "<idle>", 0, 6, "", 15720422000, "local_timer_exit", "vector=236"},
        LineCase{"nanosecond fraction",
                 "  x-1 [002] d.h1. 15.720422123: local_timer_entry: "
                 "vector=236",
                 "x", 1, 2, "d.h1.", 15720422123, "local_timer_entry", "vector=236"},
        LineCase{"counter clock: no seconds",
                 "  x-1 [002] d.h1. 123456789012: "
                 "local_timer_entry: vector=236",
                 "x", 1, 2, "d.h1.", std::nullopt, "local_timer_entry", "vector=236"},
        LineCase{"task name with '-' (pid after the last '-')",
                 "  irq/24-virtio0-123 [003] ..... 9.5: irq_handler_entry: irq=24 name=virtio0",
                 "irq/24-virtio0", 123, 3, ".....", 9500000000, "irq_handler_entry",
                 "irq=24 name=virtio0"},
        LineCase{"task name with ':' and '/', CPU from [NNN] not the name",
                 "   kworker/u16:1-7       [007] .....    24.1: workqueue_execute_start: "
                 "work struct 00000000deadbeef: function sched_tick_remote",
                 "kworker/u16:1", 7, 7, ".....", 24100000000, "workqueue_execute_start",
                 "work struct 00000000deadbeef: function sched_tick_remote"},
        LineCase{"task name with spaces and brackets",
                 "  my task [5]-42 [001] d.h1. 3.000002: local_timer_entry: vector=236",
                 "my task [5]", 42, 1, "d.h1.", 3000002000, "local_timer_entry", "vector=236"},
        LineCase{"comm cache miss",
                 "           <...>-1234    [004] d.h1. 2.5: "
                 "call_function_single_entry: vector=251",
                 "<...>", 1234, 4, "d.h1.", 2500000000, "call_function_single_entry", "vector=251"},
        LineCase{"record-tgid column",
                 "      cyclictest-167   (    160) [005] d.h1. 1.000001: "
                 "local_timer_entry: vector=236",
                 "cyclictest", 167, 5, "d.h1.", 1000001000, "local_timer_entry", "vector=236"},
        LineCase{"record-tgid, tgid unknown",
                 "  <idle>-0 (-------) [005] d.h1. 1.000001: "
                 "local_timer_entry: vector=236",
                 "<idle>", 0, 5, "d.h1.", 1000001000, "local_timer_entry", "vector=236"},
        LineCase{"event without fields", "  x-1 [003] ..... 1.5: foo:", "x", 1, 3, ".....",
                 1500000000, "foo", ""}));

TEST(TraceLineFormat, MalformedLinesAreNotEvents) {
  for (const char* bad : {
           "  x-1 [00a] d.h1. 1.0: local_timer_entry: vector=236",    // CPU not a number
           "  x-1 [9000] d.h1. 1.0: local_timer_entry: vector=236",   // CPU beyond 8191
           "  x-abc [001] d.h1. 1.0: local_timer_entry: vector=236",  // pid not a number
           "  -1 [001] d.h1. 1.0: local_timer_entry: vector=236",     // no task
           "  x-1 [001] d.h1. 1.0 local_timer_entry vector=236",      // no ": "
           "  x-1 [001] d.h 1. 1.0: local_timer_entry: vector=236",   // flags with a space
           "  x-1 [001] d.h1. 1.0: local timer: vector=236",          // event not a name
           "  x-1 [001] d.h1. 1.1234567890: local_timer_entry: x",    // 10 fraction digits
           "garbage line without brackets",
       })
    EXPECT_FALSE(parse_trace_line(bad).has_value()) << bad;
  std::string longline = "  x-1 [001] d.h1. 1.0: local_timer_entry: " + std::string(5000, 'a');
  EXPECT_FALSE(parse_trace_line(longline).has_value());
}

// docs/sources.md [n1]: workqueue event bodies across kernels.
TEST(TraceWorkqueueFields, BodiesAcrossKernels) {
  // 6.1 workqueue_execute_start / _end: "function <name>", no '='.
  auto a = parse_workqueue_fields("work struct (____ptrval____): function vmstat_update");
  EXPECT_EQ(a.function, "vmstat_update");
  EXPECT_FALSE(a.cpu.has_value());
  EXPECT_FALSE(a.req_cpu.has_value());
  // workqueue_queue_work, bound to CPU 5.
  auto b = parse_workqueue_fields(
      "work struct=00000000a1b2c3d4 function=vmstat_update workqueue=mm_percpu_wq req_cpu=5 "
      "cpu=5");
  EXPECT_EQ(b.function, "vmstat_update");
  EXPECT_EQ(b.req_cpu, 5);
  EXPECT_EQ(b.cpu, 5);
  // Unbound, before the 2022 signedness fix: cpu printed as %u.
  auto c = parse_workqueue_fields(
      "work struct=00000000a1b2c3d4 function=fill_ptr_key_workfn workqueue=events_unbound "
      "req_cpu=8192 cpu=4294967295");
  EXPECT_EQ(c.function, "fill_ptr_key_workfn");
  EXPECT_EQ(c.req_cpu, -1);  // WORK_CPU_UNBOUND, not CPU 8192
  EXPECT_EQ(c.cpu, -1);
  // Unbound, after it.
  auto d = parse_workqueue_fields(
      "work struct=00000000a1b2c3d4 function=fill_ptr_key_workfn workqueue=events_unbound "
      "req_cpu=8192 cpu=-1");
  EXPECT_EQ(d.req_cpu, -1);
  EXPECT_EQ(d.cpu, -1);
  // workqueue_activate_work from 2024: "function=X " with a trailing space.
  auto e = parse_workqueue_fields("work struct 0000000012345678 function=vmstat_update ");
  EXPECT_EQ(e.function, "vmstat_update");
  // "workqueue=" and "req_cpu=" are not "function=" / "cpu=".
  auto f = parse_workqueue_fields("workqueue=function req_cpu=3");
  EXPECT_EQ(f.function, "");
  EXPECT_EQ(f.req_cpu, 3);
  EXPECT_FALSE(f.cpu.has_value());
}

// --- real guest traces -----------------------------------------------------------------------

// Real per-CPU trace of CPUs 5-7 during a 4 s cyclictest with stress-ng on 0-4, captured from
// a vanilla 6.1 guest under TCG (8 vCPUs, isolcpus=managed_irq,domain,5-7 nohz_full=5-7), entry
// events only. Expected counts were taken with grep/awk over the same file (per CPU, per event).
TEST(Trace, RealGuestTraceCountsAndRates) {
  TraceCounts t = parse_trace(data("trace/guest-6.1-tcg-cpus5-7.txt"));
  EXPECT_EQ(t.traced_cpus, (std::vector<int>{5, 6, 7}));
  EXPECT_EQ(t.per_cpu[5].events["local_timer_entry"], 97);
  EXPECT_EQ(t.per_cpu[6].events["local_timer_entry"], 39);
  EXPECT_EQ(t.per_cpu[7].events["local_timer_entry"], 34);
  EXPECT_EQ(t.per_cpu[6].workqueue_functions["vmstat_update"], 1);  // docs/sources.md [v1]
  EXPECT_EQ(t.per_cpu[6].softirq_actions["RCU"], 6);
  EXPECT_EQ(t.per_cpu[6].softirq_actions["TIMER"], 1);
  EXPECT_FALSE(t.lost_events);
  EXPECT_FALSE(t.exit_events);
  EXPECT_EQ(t.malformed, 0);
  EXPECT_EQ(*t.first_ns, 15369331000);
  EXPECT_EQ(*t.last_ns, 20020152000);

  TraceNoise n = trace_noise(t, {5, 6, 7}, 4.0);
  const Metrics& m = n.metrics;
  EXPECT_EQ(counts_of(m, "noise.local_timer_per_s"), (std::vector<long long>{97, 39, 34}));
  EXPECT_EQ(m.at("noise.local_timer_per_s").values, (std::vector<double>{24.25, 9.75, 8.5}));
  // call_function 1/1/1 + call_function_single 78/66/65
  EXPECT_EQ(counts_of(m, "noise.ipi_call_function_per_s"), (std::vector<long long>{79, 67, 66}));
  EXPECT_EQ(counts_of(m, "noise.ipi_reschedule_per_s"), (std::vector<long long>{4, 7, 3}));
  EXPECT_EQ(counts_of(m, "noise.vmstat_update_per_s"), (std::vector<long long>{0, 1, 0}));
  EXPECT_EQ(counts_of(m, "noise.workqueue_other_per_s"), (std::vector<long long>{0, 0, 0}));
  EXPECT_EQ(counts_of(m, "noise.irq_per_s"), (std::vector<long long>{0, 0, 0}));
  EXPECT_EQ(counts_of(m, "noise.softirq_per_s"), (std::vector<long long>{0, 7, 0}));
  // hrtimer_expire_entry 97/39/34 + timer_expire_entry 0/1/0
  EXPECT_EQ(counts_of(m, "noise.timer_callbacks_per_s"), (std::vector<long long>{97, 40, 34}));
  // local_timer + reschedule + call_function(+single) + irq + workqueue items
  EXPECT_EQ(counts_of(m, "noise.interruptions_per_s"), (std::vector<long long>{180, 114, 103}));
  EXPECT_EQ(m.count("noise.longest_us"), 0u);            // no exit events in this capture
  EXPECT_EQ(m.count("noise.vmstat_update_gap_ms"), 0u);  // one run only
  EXPECT_TRUE(has_note(n.notes, "no exit events"));
  EXPECT_EQ(n.details["window_source"], "step");
  EXPECT_EQ(n.details["cpus"][1]["workqueue_functions"]["vmstat_update"], 1);
  EXPECT_EQ(n.details["cpus"][1]["causes"]["softirq"]["count"], 7);
  EXPECT_EQ(n.details["cpus"][0]["events"]["local_timer_entry"], 97);
}

// interruption_start() classifies each line as trace_noise counts it: summed over the real
// capture, its starts per CPU are the "interruptions" counts above.
TEST(Trace, InterruptionStartsAddUpToTheInterruptionCounts) {
  const std::string text = data("trace/guest-6.1-tcg-cpus5-7.txt");
  std::map<int, long> per_cpu;
  std::map<std::string, long> vmstat_names;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t nl = std::min(text.find('\n', pos), text.size());
    auto l = parse_trace_line(std::string_view(text).substr(pos, nl - pos));
    pos = nl + 1;
    if (!l) continue;
    InterruptionStart s = interruption_start(*l);
    if (s.cause.empty()) continue;
    ++per_cpu[l->cpu];
    if (s.cause == "vmstat_update") ++vmstat_names[s.name];
  }
  EXPECT_EQ(per_cpu, (std::map<int, long>{{5, 180}, {6, 114}, {7, 103}}));
  EXPECT_EQ(vmstat_names, (std::map<std::string, long>{{"vmstat_update", 1}}));
}

TEST(Trace, WindowFallsBackToTheTraceSpan) {
  TraceCounts t = parse_trace(data("trace/guest-6.1-tcg-cpus5-7.txt"));
  TraceNoise n = trace_noise(t, {5, 6, 7}, std::nullopt);
  // 20.020152 - 15.369331
  EXPECT_NEAR(*n.metrics.at("noise.local_timer_per_s").per_cpu->window_s, 4.650821, 1e-9);
  EXPECT_EQ(n.details["window_source"], "trace span");
  EXPECT_TRUE(has_note(n.notes, "span of the trace timestamps, 4.651 s"));
  TraceNoise z = trace_noise(parse_trace("# cpu 5\n"), {5}, 0.0);
  EXPECT_TRUE(z.metrics.find("noise.local_timer_per_s") == z.metrics.end());
  EXPECT_TRUE(has_note(z.notes, "noise rates omitted"));
}

// Gaps between vmstat_update runs on the real vanilla mlock trace (stress-ng --mlock pinned on
// each of CPUs 5-7). Expected values computed by hand from the file: per CPU, the timestamps of
// "function vmstat_update" lines, consecutive differences in ms, sorted, with awk:
//   grep "\[005\]" F | grep "function vmstat_update" | awk '{...$4 differences...}' | sort -n
// CPU 5: 22 runs, 21 gaps, min 1103.707 median 2201.477 max 16359.648
// CPU 6: 18 runs, 17 gaps, min  736.290 median 1754.394 max 28317.280
// CPU 7: 24 runs, 23 gaps, min  738.990 median 1883.681 max 21291.942
TEST(Trace, VmstatUpdateGapsOnRealVanillaTrace) {
  TraceCounts t = parse_trace(data("guest/trace-vmstat-mlock-vanilla-6.1.txt"));
  EXPECT_EQ(t.per_cpu[5].workqueue_functions["vmstat_update"], 22);
  EXPECT_EQ(t.per_cpu[6].workqueue_functions["vmstat_update"], 18);
  EXPECT_EQ(t.per_cpu[7].workqueue_functions["vmstat_update"], 24);
  TraceNoise n = trace_noise(t, {5, 6, 7}, 66.0);
  const Metric& g = n.metrics.at("noise.vmstat_update_gap_ms");
  EXPECT_EQ(g.unit, "ms");
  EXPECT_FALSE(g.lower_is_better);
  EXPECT_EQ(g.aggregate, "min");
  EXPECT_EQ(g.values.size(), 21u + 17u + 23u);
  EXPECT_NEAR(reduce_metric(g), 736.290, 1e-6);
  EXPECT_EQ(g.per_cpu->cpus.front(), 5);
  EXPECT_EQ(g.per_cpu->cpus.back(), 7);
  EXPECT_NEAR(g.values.front(), 1864.192, 1e-6);  // 25.868785 - 24.004593 on CPU 5
  struct Want {
    std::size_t i;
    int n;
    double min, median, max;
  };
  for (const Want& w :
       {Want{0, 21, 1103.707, 2201.477, 16359.648}, Want{1, 17, 736.290, 1754.394, 28317.280},
        Want{2, 23, 738.990, 1883.681, 21291.942}}) {
    const auto& s = n.details["cpus"][w.i]["vmstat_update_gap_ms"];
    EXPECT_EQ(s["n"], w.n);
    EXPECT_NEAR(s["min"].get<double>(), w.min, 1e-6);
    EXPECT_NEAR(s["median"].get<double>(), w.median, 1e-6);
    EXPECT_NEAR(s["max"].get<double>(), w.max, 1e-6);
  }
}

// The patched kernel's capture: vmstat_update 10/20/15 times (tests/data/guest/README.md).
TEST(Trace, RealPatchedTraceCounts) {
  TraceCounts t = parse_trace(data("guest/trace-vmstat-mlock-patched-6.1.txt"));
  TraceNoise n = trace_noise(t, {5, 6, 7}, 66.0);
  EXPECT_EQ(counts_of(n.metrics, "noise.vmstat_update_per_s"),
            (std::vector<long long>{10, 20, 15}));
  EXPECT_EQ(t.malformed, 0);
}

// --- synthetic traces: pairing, shapes, hostile input ----------------------------------------

// 9 ticks on CPU 5 over a 5.01 s window: the fixed result.json shape of a rate metric.
TEST(Trace, RateMetricHasTheResultJsonShape) {
  std::string text = "# cpu 5\n# cpu 6\n# cpu 7\n";
  for (int i = 0; i < 9; ++i)
    text += "  <idle>-0 [005] d.h1. 1" + std::to_string(i) +
            ".000000: local_timer_entry: "
            "vector=236\n";
  TraceNoise n = trace_noise(parse_trace(text), {5, 6, 7}, 5.01);
  nlohmann::json j = n.metrics.at("noise.local_timer_per_s");
  EXPECT_EQ(j["unit"], "1/s");
  EXPECT_EQ(j["better"], "lower");
  EXPECT_EQ(j["aggregate"], "mean");
  EXPECT_EQ(j["kind"], "count");
  EXPECT_EQ(j["cpus"], nlohmann::json({5, 6, 7}));
  EXPECT_EQ(j["counts"], nlohmann::json({9, 0, 0}));
  EXPECT_EQ(j["window_s"], 5.01);
  EXPECT_NEAR(j["values"][0].get<double>(), 1.796, 5e-4);
  EXPECT_EQ(j["values"][1], 0.0);
  EXPECT_EQ(j.size(), 8u);
  EXPECT_EQ(j.get<Metric>(), n.metrics.at("noise.local_timer_per_s"));
}

TEST(Trace, LongestInterruptionPairsEntryAndExit) {
  std::string text =
      "# cpu 5\n# cpu 6\n# cpu 7\n"
      // an exit whose entry was before the trace: ignored
      "  <idle>-0 [005] d.h1. 10.000000: local_timer_exit: vector=236\n"
      "  <idle>-0 [005] d.h1. 10.100000: local_timer_entry: vector=236\n"
      "  <idle>-0 [005] d.h1. 10.100010: local_timer_exit: vector=236\n"
      "  <idle>-0 [005] d.h1. 10.200000: irq_handler_entry: irq=24 name=virtio0-requests\n"
      // a different IRQ nested inside does not close IRQ 24
      "  <idle>-0 [005] d.h2. 10.200005: irq_handler_entry: irq=25 name=virtio1\n"
      "  <idle>-0 [005] d.h2. 10.200006: irq_handler_exit: irq=25 ret=handled\n"
      "  <idle>-0 [005] d.h1. 10.200025: irq_handler_exit: irq=24 ret=handled\n"
      "  <idle>-0 [005] ..s1. 10.200030: softirq_entry: vec=1 [action=TIMER]\n"
      "  <idle>-0 [005] ..s1. 10.200033: softirq_exit: vec=1 [action=TIMER]\n"
      "  kworker/5:1-64 [005] ..... 10.300000: workqueue_execute_start: work struct "
      "(____ptrval____): function vmstat_update\n"
      "  kworker/5:1-64 [005] ..... 10.300007: workqueue_execute_end: work struct "
      "(____ptrval____): function vmstat_update\n"
      // CPU 6: an entry without its exit (the trace stopped)
      "  <idle>-0 [006] d.h1. 10.400000: reschedule_entry: vector=253\n";
  TraceCounts t = parse_trace(text);
  EXPECT_TRUE(t.exit_events);
  EXPECT_EQ(t.per_cpu[5].complete_pairs, 5);
  ASSERT_TRUE(t.per_cpu[5].longest.has_value());
  EXPECT_EQ(t.per_cpu[5].longest->cause, "irq");
  EXPECT_EQ(t.per_cpu[5].longest->name, "virtio0-requests");
  EXPECT_EQ(t.per_cpu[5].longest->duration_ns, 25000);
  EXPECT_EQ(t.per_cpu[5].longest->start_ns, 10200000000);
  EXPECT_FALSE(t.per_cpu[6].longest.has_value());

  TraceNoise n = trace_noise(t, {5, 6, 7}, 1.0);
  nlohmann::json j = n.metrics.at("noise.longest_us");
  EXPECT_EQ(j["unit"], "us");
  EXPECT_EQ(j["aggregate"], "max");
  EXPECT_EQ(j["better"], "lower");
  EXPECT_NEAR(j["values"][0].get<double>(), 25.0, 1e-9);
  EXPECT_TRUE(j["values"][1].is_null());
  EXPECT_TRUE(j["values"][2].is_null());
  EXPECT_EQ(j.get<Metric>(), n.metrics.at("noise.longest_us"));
  EXPECT_EQ(n.details["cpus"][0]["longest"]["cause"], "irq");
  EXPECT_NEAR(n.details["cpus"][0]["longest"]["at_s"].get<double>(), 10.2, 1e-9);
  EXPECT_EQ(n.details["cpus"][0]["irq_handlers"]["virtio1"], 1);
  // entry counts are what the rates count: 2 irq_handler_entry, 1 tick, 1 vmstat_update
  EXPECT_EQ(counts_of(n.metrics, "noise.interruptions_per_s"), (std::vector<long long>{4, 1, 0}));
}

// vmstat_update scheduled twice shows as a gap near 0.
TEST(Trace, DoubleScheduledVmstatUpdateGivesGapNearZero) {
  std::string text =
      "# cpu 5\n"
      "  kworker/5:1-64 [005] ..... 10.000000: workqueue_execute_start: work struct "
      "(____ptrval____): function vmstat_update\n"
      "  kworker/5:1-64 [005] ..... 10.000020: workqueue_execute_start: work struct "
      "(____ptrval____): function vmstat_update\n"
      "  kworker/5:1-64 [005] ..... 11.000020: workqueue_execute_start: work struct "
      "(____ptrval____): function vmstat_update\n";
  TraceNoise n = trace_noise(parse_trace(text), {5}, 2.0);
  const Metric& g = n.metrics.at("noise.vmstat_update_gap_ms");
  EXPECT_EQ(g.values.size(), 2u);
  EXPECT_NEAR(reduce_metric(g), 0.020, 1e-9);
}

TEST(Trace, LostEventsAndJunk) {
  std::string text =
      "# entries-in-buffer/entries-written: 10/250   #P:8\n"
      "garbage line without brackets\n"
      "  x-1 [00a] d.h1. 1.0: local_timer_entry: vector=236\n"
      "  x-1 [003] d.h1. 1.0: local_timer_entry: vector=236\n"
      "\x01\x02\xff [3\n";
  TraceCounts t = parse_trace(text);
  EXPECT_TRUE(t.lost_events);
  EXPECT_EQ(t.per_cpu[3].events["local_timer_entry"], 1);
  EXPECT_EQ(t.malformed, 3);
  TraceNoise n = trace_noise(t, {3}, 1.0);
  EXPECT_TRUE(has_note(n.notes, "ring buffer overflowed"));
  EXPECT_TRUE(has_note(n.notes, "3 malformed trace lines"));

  TraceCounts lost =
      parse_trace("# entries-in-buffer/entries-written: 5/5   #P:8\nCPU:5 [LOST 123 EVENTS]\n");
  EXPECT_TRUE(lost.lost_events);
  EXPECT_EQ(lost.malformed, 0);
}

TEST(Trace, HostileNamesAreCutAndPrintable) {
  std::string text =
      "# cpu 1\n  x-1 [001] d.h1. 1.0: irq_handler_entry: irq=3 name=" + std::string(300, 'n') +
      "\xff\n";
  TraceCounts t = parse_trace(text);
  ASSERT_EQ(t.per_cpu[1].irq_handlers.size(), 1u);
  EXPECT_EQ(t.per_cpu[1].irq_handlers.begin()->first, std::string(64, 'n'));
  TraceCounts u =
      parse_trace("# cpu 1\n  x-1 [001] d.h1. 1.0: irq_handler_entry: irq=3 name=a\xff\n");
  EXPECT_EQ(u.per_cpu[1].irq_handlers.begin()->first, "a?");
  nlohmann::json j = trace_noise(u, {1}, 1.0).details;
  EXPECT_NO_THROW((void)j.dump());
  // "# cpu" headers out of range or repeated are ignored
  EXPECT_EQ(parse_trace("# cpu 9000\n# cpu 2\n# cpu 2\n# cpu x\n").traced_cpus,
            (std::vector<int>{2}));
}

}  // namespace
}  // namespace isolab

namespace isolab {
namespace {

// Gap statistics exist for every traced CPU, one slot each, on the real vanilla
// trace (values as in VmstatUpdateGapsOnRealVanillaTrace).
TEST(Trace, VmstatGapStatisticsPerCpu) {
  TraceCounts t = parse_trace(data("guest/trace-vmstat-mlock-vanilla-6.1.txt"));
  TraceNoise n = trace_noise(t, {5, 6, 7}, 66.0);
  struct Want {
    const char* name;
    const char* aggregate;
    double v5, v6, v7;
  };
  for (const Want& w :
       {Want{"noise.vmstat_update_gap_min_ms", "min", 1103.707, 736.290, 738.990},
        Want{"noise.vmstat_update_gap_median_ms", "mean", 2201.477, 1754.394, 1883.681},
        Want{"noise.vmstat_update_gap_max_ms", "max", 16359.648, 28317.280, 21291.942}}) {
    const Metric& m = n.metrics.at(w.name);
    EXPECT_EQ(m.unit, "ms");
    EXPECT_FALSE(m.lower_is_better);
    EXPECT_EQ(m.aggregate, w.aggregate);
    ASSERT_EQ(m.per_cpu->cpus, (std::vector<int>{5, 6, 7}));
    EXPECT_NEAR(*m.per_cpu->slots[0], w.v5, 1e-6) << w.name;
    EXPECT_NEAR(*m.per_cpu->slots[1], w.v6, 1e-6) << w.name;
    EXPECT_NEAR(*m.per_cpu->slots[2], w.v7, 1e-6) << w.name;
  }
  EXPECT_EQ(n.details["cpus"][0]["vmstat_update_gap_ms"]["runs"], 22);
  EXPECT_EQ(n.details["cpus"][0]["vmstat_update_gap_ms"]["status"], "ok");
}

// Fewer than 2 runs is recorded as such, never as a gap of 0: the TCG capture has one
// vmstat_update run on CPU 6 and none on 5 and 7.
TEST(Trace, FewerThanTwoVmstatRunsIsExplicit) {
  TraceCounts t = parse_trace(data("trace/guest-6.1-tcg-cpus5-7.txt"));
  TraceNoise n = trace_noise(t, {5, 6, 7}, 5.0);
  for (const char* name : {"noise.vmstat_update_gap_min_ms", "noise.vmstat_update_gap_median_ms",
                           "noise.vmstat_update_gap_max_ms"})
    EXPECT_EQ(n.metrics.count(name), 0u) << name;
  const int runs[] = {0, 1, 0};
  for (std::size_t i = 0; i < 3; ++i) {
    const auto& g = n.details["cpus"][i]["vmstat_update_gap_ms"];
    EXPECT_EQ(g["runs"], runs[i]);
    EXPECT_EQ(g["n"], 0);
    EXPECT_EQ(g["status"], "fewer than 2 runs");
    EXPECT_TRUE(g["min"].is_null());
    EXPECT_TRUE(g["median"].is_null());
  }
  // With one CPU having gaps and another not, the other's slot is null, not 0.
  std::string two =
      "# cpu 5\n# cpu 6\n"
      "  kworker/5:1-60      [005] d..1.    10.000000: workqueue_execute_start: "
      "work struct 00000000a1b2c3d4: function vmstat_update\n"
      "  kworker/5:1-60      [005] d..1.    11.500000: workqueue_execute_start: "
      "work struct 00000000a1b2c3d4: function vmstat_update\n";
  TraceNoise m = trace_noise(parse_trace(two), {5, 6}, 5.0);
  const Metric& g = m.metrics.at("noise.vmstat_update_gap_min_ms");
  EXPECT_NEAR(*g.per_cpu->slots[0], 1500.0, 1e-9);
  EXPECT_FALSE(g.per_cpu->slots[1].has_value());
}

// Double queueing (docs/examples/vmstat-shepherd-locks.md) on a real capture: the rtla osnoise step
// of a 6.1 guest (CPUs 2-3 traced, the queue events of every CPU from trace_clock=global buffers).
// vmstat_update was queued twice for CPU 2 and once for CPU 3, each time followed by its run: no
// double scheduling. CPUs 0 and 1 (the housekeeping CPUs, not traced for runs) have queue events
// only.
TEST(Trace, VmstatQueueingOnRealCapture) {
  const std::string queue = data("trace/guest-6.1-tcg-rtla-osnoise-vmstat-queue.txt");
  const std::string runs = data("trace/guest-6.1-tcg-rtla-osnoise-cpus2-3.txt");
  auto q = vmstat_queueing(queue, runs);
  EXPECT_EQ(q[2].queued, 2);
  EXPECT_EQ(q[3].queued, 1);
  for (int cpu : {2, 3}) {
    EXPECT_EQ(q[cpu].while_pending, 0) << cpu;
    EXPECT_EQ(q[cpu].while_running, 0) << cpu;
  }
  EXPECT_GT(q[0].queued, 0);
  // Queue events of the run text are not counted twice.
  auto only_runs = vmstat_queueing("", runs);
  EXPECT_EQ(only_runs[2].queued, 0);
}

// The double scheduling (vmstat_shepherd queues vmstat_update while it runs) and a
// second queue before the first started, built from the real capture's lines with new times.
TEST(Trace, VmstatQueuedWhileRunningOrPending) {
  const std::string q1 =
      "     kworker/0:0-5       [000] d..1.    13.234300: workqueue_queue_work: work "
      "struct=(____ptrval____) function=vmstat_update workqueue=mm_percpu_wq req_cpu=2 cpu=2\n"
      "     kworker/0:0-5       [000] d..1.    13.234200: workqueue_queue_work: work "
      "struct=(____ptrval____) function=vmstat_update workqueue=mm_percpu_wq req_cpu=2 cpu=2\n"
      "     kworker/0:0-5       [000] d..1.    13.234180: workqueue_queue_work: work "
      "struct=(____ptrval____) function=vmstat_update workqueue=mm_percpu_wq req_cpu=2 cpu=2\n";
  const std::string runs =
      "     kworker/2:1-43      [002] .....    13.234190: workqueue_execute_start: work struct "
      "(____ptrval____): function vmstat_update\n"
      "     kworker/2:1-43      [002] .....    13.234250: workqueue_execute_end: work struct "
      "(____ptrval____): function vmstat_update\n";
  // Sorted: queue .180, start .190, queue .200 (while running), end .250, queue .300 (pending
  // since .200: no start in between).
  auto q = vmstat_queueing(q1, runs);
  EXPECT_EQ(q[2].queued, 3);
  EXPECT_EQ(q[2].while_running, 1);
  EXPECT_EQ(q[2].while_pending, 1);
}

// --- zone and pcp lock contention (docs/examples/vmstat-shepherd-locks.md) ---------------------

// guest-6.1-tcg-lock-contention-alloc.txt: the "<wl>.lock_contention" record of a real 6.1 guest
// (TCG, 4 vCPUs, page-fault-bench --pages 1024 on CPUs 0-3), trimmed to every zone-lock
// contention and the first 8 others of each CPU. Counted by hand with awk on the first frame
// after the lock machinery: __rmqueue_pcplist 103, free_pcppages_bulk 48 (zone); release_pages
// 14, folio_batch_move_lru 14 (the LRU lock), rq_lock, raw_spin_rq_lock_nested, hrtimer_interrupt,
// lock_hrtimer_base (other).
TEST(LockContention, RealAllocCaptureByCpuAndLock) {
  LockContention lc = lock_contention(data("trace/guest-6.1-tcg-lock-contention-alloc.txt"));
  EXPECT_EQ(lc.malformed, 0);
  EXPECT_FALSE(lc.lost_events);  // "entries-in-buffer/entries-written: 16859/16859"
  EXPECT_EQ(lc.cpus, (std::vector<int>{0, 1, 2, 3}));  // no "# cpu N" headers: the CPUs seen
  const std::map<int, long> zone = {{0, 51}, {1, 38}, {2, 46}, {3, 16}};
  ASSERT_EQ(lc.per_cpu.size(), 4u);
  for (const auto& [cpu, n] : zone) {
    const CpuLockContention& c = lc.per_cpu.at(cpu);
    EXPECT_EQ(c.zone.count, n) << cpu;
    EXPECT_EQ(c.other.count, 8) << cpu;
    EXPECT_EQ(c.pcp.count, 0) << cpu;
    EXPECT_EQ(c.no_stack, 0) << cpu;
    EXPECT_GT(c.zone.ended, 0) << cpu;
    EXPECT_LE(c.zone.ended, c.zone.count) << cpu;
    EXPECT_GT(c.zone.max_wait_ns, 0) << cpu;
    EXPECT_LE(c.zone.max_wait_ns, c.zone.wait_ns) << cpu;
  }
}

// The quiet step of the same guest (a CPU-only stress-ng on CPUs 0-1): 4 contentions on the
// runqueue lock, none on the zone or pcp locks; each begin is followed by its end.
TEST(LockContention, RealQuietCaptureHasNoZoneOrPcp) {
  LockContention lc = lock_contention(data("trace/guest-6.1-tcg-lock-contention-quiet.txt"));
  EXPECT_EQ(lc.malformed, 0);
  long other = 0;
  for (const auto& [cpu, c] : lc.per_cpu) {
    EXPECT_EQ(c.zone.count + c.pcp.count, 0) << cpu;
    EXPECT_EQ(c.other.ended, c.other.count) << cpu;
    other += c.other.count;
  }
  EXPECT_EQ(lc.per_cpu.at(0).other.count, 3);
  EXPECT_EQ(lc.per_cpu.at(1).other.count, 1);
  EXPECT_EQ(other, 4);
}

struct StackCase {
  const char* what;
  std::vector<std::string_view> frames;
  LockClass expect;
};

class LockStack : public ::testing::TestWithParam<StackCase> {};

TEST_P(LockStack, Classifies) {
  EXPECT_EQ(classify_lock_stack(GetParam().frames), GetParam().expect) << GetParam().what;
}

INSTANTIATE_TEST_SUITE_P(
    Seed004, LockStack,
    ::testing::Values(
        // From the captures (UNWINDER_GUESS: stale addresses such as lru_add_fn sit between
        // the real frames, so only the innermost frame decides).
        StackCase{"refill of the pcp list",
                  {"__rmqueue_pcplist", "get_page_from_freelist", "lru_add_fn", "__alloc_pages"},
                  LockClass::zone},
        StackCase{"pcp list flushed back",
                  {"free_pcppages_bulk", "free_unref_page_list", "release_pages"},
                  LockClass::zone},
        StackCase{"LRU lock",
                  {"_raw_spin_lock_irqsave", "folio_batch_move_lru", "folio_add_lru"},
                  LockClass::other},
        StackCase{"runqueue lock", {"raw_spin_rq_lock_nested", "rq_lock"}, LockClass::other},
        // 6.1 sources: the blocking pcp lock takers and the machinery in front of them.
        StackCase{"remote drain",
                  {"queued_spin_lock_slowpath", "_raw_spin_lock", "drain_pages_zone", "drain_pages",
                   "__drain_all_pages"},
                  LockClass::pcp},
        StackCase{"vmstat drain (NUMA)",
                  {"_raw_spin_lock", "drain_zone_pages", "refresh_cpu_vm_stats", "vmstat_update"},
                  LockClass::pcp},
        StackCase{"the zone lock taken inside a pcp drain is the zone lock",
                  {"_raw_spin_lock_irqsave", "free_pcppages_bulk", "drain_pages_zone"},
                  LockClass::zone},
        StackCase{"PREEMPT_RT sleeping spinlock",
                  {"rtlock_slowlock_locked", "rt_spin_lock", "rmqueue_bulk"},
                  LockClass::zone},
        StackCase{"with offsets",
                  {"_raw_spin_lock+0x1a/0x30", "drain_pages_zone+0x3b/0x80"},
                  LockClass::pcp},
        StackCase{
            "only machinery", {"queued_spin_lock_slowpath", "_raw_spin_lock"}, LockClass::other},
        StackCase{"no frames", {}, LockClass::other}));

// Hostile and drifting input (docs/sources.md [n1] prefixes, missing stacks, stray
// frames, lost events).
TEST(LockContention, HostileAndDriftingLines) {
  const std::string text =
      "# cpu 1\n# cpu 2\n# cpu 3\n# cpu 5\n# cpu 2\n"
      "# entries-in-buffer/entries-written: 10/12   #P:4\n"
      // 4 flag columns, a task name with spaces and a dash; begin, stack, end.
      "   my task-x-17 [002] d..2 100.000100: contention_begin: 00000000abcd (flags=SPIN)\n"
      "   my task-x-17 [002] d..2 100.000101: <stack trace>\n"
      " => _raw_spin_lock_irqsave+0x40/0x50\n"
      " => free_pcppages_bulk+0x5d/0x2a0\n"
      // a nested contention on another lock before the first ends (an interrupt)
      "   <idle>-0 [002] d.h3. 100.000150: contention_begin: 00000000ef01 (flags=SPIN)\n"
      "   <idle>-0 [002] d.h3. 100.000151: <stack trace>\n"
      " => rq_lock\n"
      "   <idle>-0 [002] d.h3. 100.000170: contention_end: 00000000ef01 (ret=0)\n"
      "   my task-x-17 [002] d..2 100.000400: contention_end: 00000000abcd (ret=0)\n"
      // a begin whose stack never came (trigger removed), on CPU 3
      "   kworker/3:1-40 [003] d..2. 100.5: contention_begin: 00000000abcd (flags=SPIN)\n"
      // frames with no stack header before them, and a header on a CPU with nothing open
      " => drain_pages_zone\n"
      "   sh-9 [001] d..2. 100.6: <stack trace>\n"
      " => drain_pages_zone\n"
      // an end with no begin (the begin was before the trace), and a counter clock line
      "   sh-9 [001] d..2. 100.7: contention_end: 00000000abcd (ret=0)\n"
      "   sh-9 [001] d..2. 12345: contention_begin: 00000000abcd (flags=SPIN)\n"
      "CPU:1 [LOST 3 EVENTS]\n"
      "garbage\n" +
      std::string(5000, 'x') + "\n";
  LockContention lc = lock_contention(text);
  EXPECT_TRUE(lc.lost_events);
  EXPECT_EQ(lc.malformed, 2);
  const CpuLockContention& c2 = lc.per_cpu.at(2);
  EXPECT_EQ(c2.zone.count, 1);
  EXPECT_EQ(c2.zone.ended, 1);
  EXPECT_EQ(c2.zone.wait_ns, 300000);  // 100.000100 -> 100.000400
  EXPECT_EQ(c2.other.count, 1);
  EXPECT_EQ(c2.other.wait_ns, 20000);
  EXPECT_EQ(lc.per_cpu.at(3).no_stack, 1);
  EXPECT_EQ(lc.per_cpu.at(3).zone.count + lc.per_cpu.at(3).pcp.count, 0);
  EXPECT_EQ(lc.per_cpu.count(1), 0u);                  // no begin with a timestamp on CPU 1
  EXPECT_EQ(lc.cpus, (std::vector<int>{1, 2, 3, 5}));  // from the headers, CPU 5 without events
}

// An isolated CPU's step trace with the stack entries the lock trigger writes: the stacks are
// neither events nor malformed lines.
TEST(Trace, StackEntriesAreSkipped) {
  TraceCounts t = parse_trace(data("trace/guest-6.1-tcg-cpus2-3-lock-stacks.txt"));
  EXPECT_EQ(t.malformed, 0);
  EXPECT_EQ(t.traced_cpus, (std::vector<int>{2, 3}));
  for (const auto& [cpu, c] : t.per_cpu) {
    EXPECT_EQ(c.events.count("<stack trace>"), 0u) << cpu;
    EXPECT_GT(c.events.at("contention_begin"), 0) << cpu;
  }
}

}  // namespace
}  // namespace isolab

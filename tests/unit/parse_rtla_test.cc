// rtla parsers and run classification on real captures (tests/data/rtla/README.md says where
// each came from).
#include <gtest/gtest.h>

#include "base/error.h"
#include "base/files.h"
#include "parse/metrics.h"
#include "parse/rtla.h"

namespace isolab {
namespace {

std::string data(const std::string& name) {
  return read_file(std::string(ISOLAB_TEST_DATA_DIR) + "/rtla/" + name);
}

// docs/sources.md [r2], captured on the build host (no tracefs mounted): rtla 6.1 exits 1 after
// "Tracer timerlat not found!" with an empty stdout.
TEST(RtlaRunCheck, RealTracerNotFoundIsAKernelConfigurationFailure) {
  for (const char* tracer : {"osnoise", "timerlat"})
    for (const char* mode : {"top", "hist"}) {
      const std::string stem = std::string("host-notracefs-") + tracer + "-" + mode;
      const std::string out = data(stem + ".stdout.txt");
      const std::string err = data(stem + ".stderr.txt");
      EXPECT_TRUE(out.empty()) << stem;
      RtlaRunCheck c = check_rtla_run(tracer, out, err, 1, std::nullopt);
      EXPECT_FALSE(c.ok) << stem;
      EXPECT_EQ(c.kind, "tracer unavailable") << stem;
      EXPECT_NE(c.reason.find(std::string("Tracer ") + tracer + " not found!"), std::string::npos)
          << c.reason;
      EXPECT_NE(
          c.reason.find(std::string("CONFIG_") +
                        (std::string(tracer) == "timerlat" ? "TIMERLAT" : "OSNOISE") + "_TRACER"),
          std::string::npos)
          << c.reason;
    }
}

// The guest-side check: available_tracers without the tracer classifies the step before rtla
// runs (the step exits 3 with our own message).
TEST(RtlaRunCheck, AvailableTracersWithoutTheTracer) {
  const std::string tracers = data("guest-6.1-available_tracers.txt");
  EXPECT_TRUE(check_rtla_run("timerlat", "x", "", 0, tracers).ok);
  RtlaRunCheck c =
      check_rtla_run("timerlat", "", "isolab: tracer timerlat is not in available_tracers\n", 3,
                     std::string("osnoise function nop\n"));
  EXPECT_EQ(c.kind, "tracer unavailable");
  EXPECT_NE(c.reason.find("available_tracers lacks timerlat"), std::string::npos) << c.reason;
  EXPECT_NE(c.reason.find("CONFIG_TIMERLAT_TRACER"), std::string::npos) << c.reason;
  // "osnoise" must be a whole word: "timerlat osnoise_x" does not list it.
  EXPECT_EQ(check_rtla_run("osnoise", "", "", 3, std::string("osnoise_x nop")).kind,
            "tracer unavailable");
}

// The other failure texts of docs/sources.md [r2], a crash (FPE) and an empty summary.
TEST(RtlaRunCheck, ToolFailuresAndCrashes) {
  EXPECT_EQ(
      check_rtla_run("osnoise", "", "Failed to set runtime and/or period\n", 1, std::nullopt).kind,
      "tool configuration failed");
  EXPECT_EQ(check_rtla_run("osnoise", "", "Could not apply config\n", 1, std::nullopt).kind,
            "tool configuration failed");
  RtlaRunCheck fpe =
      check_rtla_run("timerlat", "Index\n", "Floating point exception\n", 136, std::nullopt);
  EXPECT_EQ(fpe.kind, "crashed");
  EXPECT_NE(fpe.reason.find("signal 8"), std::string::npos) << fpe.reason;
  EXPECT_EQ(check_rtla_run("timerlat", "", "", 2, std::nullopt).kind, "exited non-zero");
  EXPECT_EQ(check_rtla_run("timerlat", "  \n", "", 0, std::nullopt).kind, "no output");
}

// rtla osnoise top -q -c 2-3 -d 4s in a 6.1 guest under TCG (4 vCPUs, 2-3 isolated): the
// header carries colour sequences; values copied from the capture.
TEST(RtlaOsnoise, RealGuestSummary) {
  RtlaOsnoiseTop t = parse_rtla_osnoise_top(data("guest-6.1-tcg-osnoise-top-cpus2-3.txt"));
  ASSERT_TRUE(t.duration_s.has_value());
  EXPECT_EQ(*t.duration_s, 4.0);
  ASSERT_EQ(t.cpus.size(), 2u);
  const RtlaOsnoiseCpu& c2 = t.cpus[0];
  EXPECT_EQ(c2.cpu, 2);
  EXPECT_EQ(c2.periods, 4);
  EXPECT_EQ(c2.runtime_us, 4046175);
  EXPECT_EQ(c2.noise_us, 3292961);
  EXPECT_DOUBLE_EQ(c2.cpu_available_pct, 18.61545);
  EXPECT_EQ(c2.max_noise_us, 928927);
  EXPECT_EQ(c2.max_single_us, 108968);
  EXPECT_EQ(c2.hw, 4786);
  EXPECT_EQ(c2.nmi, 0);
  EXPECT_EQ(c2.irq, 8);
  EXPECT_EQ(c2.softirq, 5);
  EXPECT_EQ(c2.thread, 1);
  EXPECT_EQ(t.cpus[1].cpu, 3);
  EXPECT_EQ(t.cpus[1].hw, 5714);
  EXPECT_EQ(t.cpus[1].max_single_us, 122927);

  Metrics m = rtla_osnoise_metrics(t);
  const Metric& hw = m.at("osnoise.hw_per_s");
  EXPECT_EQ(hw.unit, "1/s");
  EXPECT_EQ(hw.per_cpu->kind, "count");
  EXPECT_EQ(hw.per_cpu->counts, (std::vector<long long>{4786, 5714}));
  // Over each CPU's Runtime (4.046175 s, 4.026380 s), not the 4 s of "duration:".
  EXPECT_FALSE(hw.per_cpu->window_s);
  EXPECT_EQ(hw.per_cpu->windows_s, (std::vector<double>{4.046175, 4.026380}));
  EXPECT_DOUBLE_EQ(hw.values[0], 4786 / 4.046175);
  EXPECT_DOUBLE_EQ(hw.values[1], 5714 / 4.026380);
  EXPECT_EQ(m.at("osnoise.max_noise_us").aggregate, "max");
  EXPECT_EQ(m.at("osnoise.max_single_us").values, (std::vector<double>{108968, 122927}));
  EXPECT_FALSE(m.at("osnoise.cpu_available_pct").lower_is_better);
  EXPECT_EQ(m.at("osnoise.irq_per_s").per_cpu->cpus, (std::vector<int>{2, 3}));
  for (const char* k : {"nmi", "softirq", "thread"})
    EXPECT_EQ(m.count(std::string("osnoise.") + k + "_per_s"), 1u) << k;
}

// The kernel documentation's example, run with a 900 ms runtime per 1 s period for one minute:
// each CPU was sampled for its Runtime (53100000 us), so the 53111 IRQs of CPU 0 are a 1000 Hz
// tick (53111 / 53.1 = 1000.2 per second), not 885.2 per second (53111 / 60).
TEST(RtlaOsnoiseTop, RatesAreOverTheSampledRuntimeNotTheDuration) {
  const RtlaOsnoiseTop t = parse_rtla_osnoise_top(data("doc-osnoise-top-runtime-900ms.txt"));
  ASSERT_EQ(t.cpus.size(), 4u);
  EXPECT_EQ(*t.duration_s, 60.0);
  EXPECT_EQ(t.cpus[0].runtime_us, 53100000);
  const Metrics m = rtla_osnoise_metrics(t);
  const Metric& irq = m.at("osnoise.irq_per_s");
  EXPECT_EQ(irq.per_cpu->cpus, (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(irq.per_cpu->counts, (std::vector<long long>{53111, 53130, 53110, 53156}));
  EXPECT_EQ(irq.per_cpu->windows_s, (std::vector<double>{53.1, 53.1, 53.1, 53.1}));
  EXPECT_NEAR(irq.values[0], 1000.207, 0.001);
  EXPECT_NEAR(irq.values[3], 1001.055, 0.001);
  EXPECT_NEAR(m.at("osnoise.softirq_per_s").values[0], 1590 / 53.1, 1e-9);
  EXPECT_NEAR(m.at("osnoise.thread_per_s").values[1], 31 / 53.1, 1e-9);
  // Written to result.json with the windows it used, and read back the same.
  const nlohmann::json j = irq;
  EXPECT_EQ(j["windows_s"], nlohmann::json::array({53.1, 53.1, 53.1, 53.1}));
  EXPECT_FALSE(j.contains("window_s"));
  EXPECT_EQ(j.get<Metric>().per_cpu->windows_s, irq.per_cpu->windows_s);
}

// The 6.12 documentation's `rtla hwnoise` table: HW and NMI rates over each CPU's sampled runtime
// (599 s), and no IRQ, Softirq or Thread rate at all, since the table has no such columns (read
// as zeros they would claim a CPU free of interrupts).
TEST(RtlaOsnoiseTop, HwnoiseTableHasNoTaskNoiseRates) {
  const RtlaOsnoiseTop t = parse_rtla_osnoise_top(data("doc-hwnoise-6.12.txt"));
  ASSERT_EQ(t.cpus.size(), 7u);
  EXPECT_FALSE(t.task_noise_columns);
  EXPECT_EQ(t.cpus[2].cpu, 3);
  EXPECT_EQ(t.cpus[2].hw, 6);
  const Metrics m = rtla_osnoise_metrics(t);
  EXPECT_NEAR(m.at("osnoise.hw_per_s").values[2], 6 / 599.0, 1e-12);
  EXPECT_NEAR(m.at("osnoise.nmi_per_s").values[0], 74 / 599.0, 1e-12);
  for (const char* absent : {"osnoise.irq_per_s", "osnoise.softirq_per_s", "osnoise.thread_per_s"})
    EXPECT_EQ(m.count(absent), 0u) << absent;
  EXPECT_TRUE(parse_rtla_osnoise_top(data("doc-osnoise-top-runtime-900ms.txt")).task_noise_columns);
}

// A CPU the osnoise thread never ran on (Runtime 0) has no rate, not an infinite one.
// docs/sources.md [r5]: the documentation's osnoise hist, 12 CPUs, buckets of 10 us.
TEST(RtlaOsnoiseHist, DocumentationExampleBucketsAreLowerBounds) {
  const std::string text = data("doc-osnoise-hist-b10.txt");
  ASSERT_TRUE(is_rtla_hist(text));
  const RtlaHist h = parse_rtla_osnoise_hist(text);
  ASSERT_EQ(h.cpus.size(), 12u);
  EXPECT_EQ(h.duration_s, 60.0);
  EXPECT_EQ(h.cpus[0].cpu, 0);
  EXPECT_EQ(h.cpus[11].cpu, 11);
  ASSERT_TRUE(h.cpus[0].noise.has_value());
  EXPECT_FALSE(h.cpus[0].irq.has_value());
  EXPECT_EQ(h.cpus[0].noise->count, 55215);
  EXPECT_EQ(h.cpus[11].noise->count, 54880);
  // The rows are lower bounds 0, 10, ... 50, not row numbers; with over: 0 each column's
  // buckets sum to its count.
  EXPECT_EQ(h.buckets.at("CPU-000"),
            (std::map<long long, long long>{{0, 42982}, {10, 12224}, {20, 8}, {30, 1}}));
  for (const char* col : {"CPU-000", "CPU-011"}) {
    long long sum = 0;
    for (const auto& [index, n] : h.buckets.at(col)) sum += n;
    EXPECT_EQ(sum, col == std::string("CPU-000") ? 55215 : 54880) << col;
  }
  EXPECT_EQ(h.buckets.at("CPU-011").rbegin()->first, 50);
  std::vector<std::string> notes;
  const Metrics m = rtla_osnoise_hist_metrics(h, &notes);
  const Metric& max = m.at("osnoise.hist_max_bucket_us");
  EXPECT_EQ(max.per_cpu->slots[0], 30.0);  // the worst noise of CPU 0 lay in [30, 40) us
  EXPECT_EQ(max.per_cpu->slots[2], 20.0);
  EXPECT_EQ(max.per_cpu->slots[11], 50.0);
  EXPECT_EQ(max.aggregate, "max");
  const Metric& samples = m.at("osnoise.hist_samples");
  EXPECT_EQ(samples.per_cpu->kind, "count");
  EXPECT_EQ(samples.per_cpu->counts[0], 55215);
  EXPECT_EQ(m.at("osnoise.hist_over").per_cpu->counts[11], 0);
  // avg: 0 is a bucketed average, not zero noise: no metric is made of it.
  EXPECT_EQ(m.count("osnoise.hist_avg_us"), 0u);
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_NE(notes[0].find("bucket width 10 us"), std::string::npos) << notes[0];
}

TEST(RtlaOsnoiseHist, NanosecondsAndWrongColumns) {
  std::string text = data("doc-osnoise-hist-b10.txt");
  text.replace(text.find("microseconds (us)"), 17, "nanoseconds (ns)");
  const RtlaHist h = parse_rtla_osnoise_hist(text);
  EXPECT_DOUBLE_EQ(*h.cpus[0].noise->max_us, 0.03);  // 30 ns
  std::vector<std::string> notes;
  rtla_osnoise_hist_metrics(h, &notes);
  EXPECT_NE(notes[0].find("bucket width 10 ns"), std::string::npos) << notes[0];
  // A timerlat histogram is not an osnoise histogram, and the reverse: the column names it.
  EXPECT_THROW(parse_rtla_osnoise_hist(data("guest-6.1-tcg-timerlat-hist-cpus2-3.txt")), Error);
  EXPECT_THROW(parse_rtla_timerlat_hist(data("doc-osnoise-hist-b10.txt")), Error);
  EXPECT_FALSE(is_rtla_hist(data("doc-osnoise-top-runtime-900ms.txt")));
}

TEST(RtlaOsnoiseTop, ACpuNeverSampledHasNoRate) {
  RtlaOsnoiseTop t;
  t.cpus.push_back({.cpu = 1, .runtime_us = 0, .irq = 5});
  t.cpus.push_back({.cpu = 2, .runtime_us = 2000000, .irq = 5});
  const Metrics m = rtla_osnoise_metrics(t);
  EXPECT_EQ(m.at("osnoise.irq_per_s").per_cpu->cpus, (std::vector<int>{2}));
  EXPECT_EQ(m.at("osnoise.irq_per_s").values, (std::vector<double>{2.5}));
}

std::string replace(std::string s, const std::string& from, const std::string& to) {
  auto at = s.find(from);
  if (at != std::string::npos) s.replace(at, from.size(), to);
  return s;
}

// Columns are found by their names: the real text with IRQ and Softirq swapped in the header
// and in the rows reads the same values; an unknown column or a short row is an error naming
// the line.
TEST(RtlaOsnoise, ColumnsByNameAndErrors) {
  const std::string real = data("guest-6.1-tcg-osnoise-top-cpus2-3.txt");
  std::string swapped = replace(real, "         IRQ      Softirq", "     Softirq          IRQ");
  swapped = replace(swapped, "           8            5", "           5            8");
  swapped = replace(swapped, "          11            6", "           6           11");
  RtlaOsnoiseTop t = parse_rtla_osnoise_top(swapped);
  EXPECT_EQ(t.cpus[0].irq, 8);
  EXPECT_EQ(t.cpus[0].softirq, 5);
  EXPECT_EQ(t.cpus[1].irq, 11);
  try {
    parse_rtla_osnoise_top(replace(real, "Thread", "Bogus"));
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("line 3"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("Bogus"), std::string::npos) << e.what();
  }
  EXPECT_THROW(parse_rtla_osnoise_top(replace(real, "            1\n", "\n")), Error);
  EXPECT_THROW(parse_rtla_osnoise_top("duration:   0 00:00:04 | time is in us\n"), Error);
  EXPECT_THROW(parse_rtla_osnoise_top(""), Error);
}

// rtla timerlat hist -c 2-3 -d 4s -p 1000 in the same guest (docs/sources.md [r1]). Each column's
// buckets plus its over: row sum to its count: (642 + 426, 545 + 523, 653 + 394, 518 + 529).
// R1 of the public cases: the documentation's 10-minute example at a 1000 us period. Columns
// are mapped by header name; each column's buckets sum to its count: of 600002 (two more than
// duration / period, not an error); maxima as the max: row prints them.
TEST(RtlaTimerlat, DocumentationTenMinuteHistogram) {
  RtlaHist h = parse_rtla_timerlat_hist(data("doc-timerlat-hist-10m.txt"));
  EXPECT_EQ(*h.duration_s, 600.0);
  ASSERT_EQ(h.cpus.size(), 5u);
  const double irq_max[] = {16, 15, 24, 21, 13}, thr_max[] = {36, 58, 44, 46, 50};
  for (std::size_t i = 0; i < 5; ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(h.cpus[i].cpu, static_cast<int>(i));
    EXPECT_EQ(*h.cpus[i].irq->max_us, irq_max[i]);
    EXPECT_EQ(*h.cpus[i].thread->max_us, thr_max[i]);
    for (const char* kind : {"IRQ-00", "Thr-00"}) {
      const std::string column = kind + std::to_string(i);
      long long sum = 0;
      for (const auto& [bucket, n] : h.buckets.at(column)) sum += n;
      EXPECT_EQ(sum, 600002) << column;
    }
    EXPECT_EQ(h.cpus[i].irq->count, 600002);
  }
  EXPECT_EQ(*h.cpus[3].thread->avg_us, 4);
  EXPECT_EQ(h.buckets.at("Thr-001").rbegin()->first, 58);  // rows 38-39 are left out
}

TEST(RtlaTimerlat, RealGuestHistogram) {
  RtlaHist h = parse_rtla_timerlat_hist(data("guest-6.1-tcg-timerlat-hist-cpus2-3.txt"));
  EXPECT_EQ(*h.duration_s, 6.0);  // rtla's own clock: start-up under TCG took 2 s
  EXPECT_EQ(h.unit_us, 1.0);
  ASSERT_EQ(h.cpus.size(), 2u);
  struct Want {
    std::size_t cpu_i;
    bool irq;
    const char* column;
    long long count, over;
    double min, avg, max;
  };
  for (const Want& w : {Want{0, true, "IRQ-002", 1068, 426, 26, 2928, 62723},
                        Want{0, false, "Thr-002", 1068, 523, 62, 3056, 62995},
                        Want{1, true, "IRQ-003", 1047, 394, 36, 3003, 82981},
                        Want{1, false, "Thr-003", 1047, 529, 76, 3104, 83246}}) {
    const auto& c = h.cpus[w.cpu_i];
    const RtlaLatencyStats& s = w.irq ? *c.irq : *c.thread;
    EXPECT_EQ(s.count, w.count) << w.column;
    EXPECT_EQ(s.over, w.over) << w.column;
    EXPECT_EQ(*s.min_us, w.min) << w.column;
    EXPECT_EQ(*s.avg_us, w.avg) << w.column;
    EXPECT_EQ(*s.max_us, w.max) << w.column;
    long long sum = 0;
    for (const auto& [bucket, n] : h.buckets.at(w.column)) sum += n;
    EXPECT_EQ(sum + s.over, s.count) << w.column;
  }
  EXPECT_FALSE(h.cpus[0].user.has_value());
  EXPECT_EQ(h.buckets.at("IRQ-002").begin()->first, 26);  // zero rows are left out

  std::vector<std::string> notes;
  Metrics m = rtla_timerlat_metrics(h, &notes);
  EXPECT_TRUE(notes.empty());
  EXPECT_EQ(m.at("timerlat.irq_max_us").values, (std::vector<double>{62723, 82981}));
  EXPECT_EQ(m.at("timerlat.irq_max_us").aggregate, "max");
  EXPECT_EQ(m.at("timerlat.thread_min_us").aggregate, "min");
  EXPECT_EQ(m.at("timerlat.thread_avg_us").aggregate, "mean");
  EXPECT_EQ(m.at("timerlat.thread_avg_us").per_cpu->cpus, (std::vector<int>{2, 3}));
  EXPECT_EQ(m.count("timerlat.user_max_us"), 0u);
}

// [r1] quirks on the real text: "-" is no data, a column whose count is 0 has no statistics
// (6.1 prints min 2^64-1 there), the newer "ALL:" block is skipped, columns by name.
TEST(RtlaTimerlat, NoDataDashesAndAllBlock) {
  const std::string real = data("guest-6.1-tcg-timerlat-hist-cpus2-3.txt");
  std::string t = replace(real, "count:     1068      1068      1047      1047",
                          "count:     1068      1068      1047         0");
  t = replace(t, "min:         26        62        36        76",
              "min:         26        62        36 18446744073709551615");
  t = replace(t, "avg:       2928      3056      3003      3104",
              "avg:       2928      3056      3003         -");
  t += "ALL:  IRQ       Thr\ncount: 2115 1068\nmin: 26 62\n";
  RtlaHist h = parse_rtla_timerlat_hist(t);
  const RtlaLatencyStats& thr3 = *h.cpus[1].thread;
  EXPECT_EQ(thr3.count, 0);
  EXPECT_FALSE(thr3.min_us.has_value());
  EXPECT_FALSE(thr3.avg_us.has_value());
  EXPECT_FALSE(thr3.max_us.has_value());
  Metrics m = rtla_timerlat_metrics(h, nullptr);
  const Metric& tmax = m.at("timerlat.thread_max_us");
  EXPECT_EQ(tmax.values, (std::vector<double>{62995}));
  EXPECT_FALSE(tmax.per_cpu->slots[1].has_value());

  // A dash in a bucket row is no data too; a word is an error naming the line.
  EXPECT_NO_THROW(parse_rtla_timerlat_hist(replace(real, "26            1", "26            -")));
  try {
    parse_rtla_timerlat_hist(replace(real, "26            1", "26          one"));
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("line 5"), std::string::npos) << e.what();
  }
  EXPECT_THROW(parse_rtla_timerlat_hist(replace(real, "Thr-003", "Foo-003")), Error);
  EXPECT_THROW(parse_rtla_timerlat_hist(replace(real, "count:", "cnt:")), Error);
  EXPECT_THROW(parse_rtla_timerlat_hist(""), Error);
}

}  // namespace
}  // namespace isolab

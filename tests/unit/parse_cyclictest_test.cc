// cyclictest parsers against real captures (tests/data/cyclictest/host-*, rt-tests 2.4 on the
// build host) and public inputs restated in docs/sources.md [t1]-[t4].
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "base/error.h"
#include "base/files.h"
#include "parse/cyclictest.h"

namespace isolab {
namespace {

std::string data(const std::string& name) {
  return read_file(std::string(ISOLAB_TEST_DATA_DIR) + "/cyclictest/" + name);
}

TEST(CyclictestJson, RealHistogramRun) {
  auto r = parse_cyclictest_json(data("host-2t-hist.json"));
  EXPECT_EQ(r.format, "json");
  EXPECT_EQ(r.version, "2.40");
  EXPECT_EQ(r.cmdline,
            "cyclictest -q -D 3 -t 2 -a 0 -p 80 -i 1000 -h 200 --json=host-2t-hist.json");
  ASSERT_TRUE(r.return_code.has_value());
  EXPECT_EQ(*r.return_code, 0);
  ASSERT_EQ(r.threads.size(), 2u);
  const auto& t0 = r.threads[0];
  EXPECT_EQ(t0.index, 0);
  EXPECT_EQ(t0.cycles, 3000);
  EXPECT_DOUBLE_EQ(*t0.min_us, 18);
  EXPECT_DOUBLE_EQ(*t0.avg_us, 27.79);
  EXPECT_DOUBLE_EQ(*t0.max_us, 150);
  EXPECT_EQ(t0.histogram.at(19), 43);
  EXPECT_EQ(t0.histogram.at(150), 1);
  EXPECT_EQ(t0.histogram.count(17), 0u);
  EXPECT_EQ(t0.overflows, 0);  // 3000 cycles, 3000 in buckets
  EXPECT_FALSE(t0.tid.has_value());
  EXPECT_EQ(r.threads[1].cycles, 3000);
  EXPECT_DOUBLE_EQ(*r.threads[1].min_us, 8);
  EXPECT_DOUBLE_EQ(*r.threads[1].avg_us, 22.12);
  EXPECT_DOUBLE_EQ(*r.threads[1].max_us, 153);
  EXPECT_EQ(r.threads[1].histogram.at(19), 270);
  EXPECT_TRUE(r.notes.empty());
}

// [t7]: the version as printed with %1.2f; a trailing 0 stands for two releases.
TEST(CyclictestVersion, RecordedAsPrintedAndAmbiguityFlagged) {
  std::vector<std::string> notes;
  EXPECT_EQ(cyclictest_versions(parse_cyclictest_json(data("host-2t-hist.json")), &notes),
            (std::map<std::string, std::string>{{"cyclictest", "2.40"}}));
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_THAT(notes[0], ::testing::HasSubstr("2.4 and 2.40 print the same"));
  CyclictestResult r;
  r.version = "2.10";
  notes.clear();
  EXPECT_EQ(cyclictest_versions(r, &notes).at("cyclictest"), "2.10");
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_THAT(notes[0], ::testing::HasSubstr("2.1 and 2.10 print the same"));
  r.version = "2.55";  // a last digit other than 0 names one release
  notes.clear();
  EXPECT_EQ(cyclictest_versions(r, &notes).at("cyclictest"), "2.55");
  EXPECT_TRUE(notes.empty());
  // Text output has no version: nothing recorded, nothing noted.
  EXPECT_TRUE(cyclictest_versions(parse_cyclictest_text(data("host-2t-q.txt")), &notes).empty());
  EXPECT_TRUE(notes.empty());
}

TEST(CyclictestJson, RealRunWithoutHistogram) {
  auto r = parse_cyclictest_json(data("host-2t-nohist.json"));
  ASSERT_EQ(r.threads.size(), 2u);
  EXPECT_DOUBLE_EQ(*r.threads[0].avg_us, 20.35);
  EXPECT_DOUBLE_EQ(*r.threads[1].avg_us, 18.74);
  EXPECT_EQ(r.threads[1].cycles, 2000);
  EXPECT_TRUE(r.threads[0].histogram.empty());
  EXPECT_FALSE(r.threads[0].overflows.has_value());
}

// [t3]: a thread with 0 cycles prints "-nan" for avg (real capture: SIGINT before the first
// 5 s interval ended). The run parses; the threads report no samples.
TEST(CyclictestJson, RealZeroCyclesWithMinusNan) {
  std::string raw = data("host-zero-cycles-sigint.json");
  ASSERT_NE(raw.find("\"avg\": -nan"), std::string::npos);
  auto r = parse_cyclictest_json(raw);
  ASSERT_EQ(r.threads.size(), 2u);
  for (const auto& t : r.threads) {
    EXPECT_FALSE(t.has_samples());
    EXPECT_FALSE(t.min_us.has_value());  // not the 1000000 sentinel
    EXPECT_FALSE(t.avg_us.has_value());
  }
  EXPECT_THAT(r.notes, testing::Contains("thread 1: no samples (0 cycles)"));
  std::vector<std::string> notes;
  auto m = cyclictest_metrics(r, &notes);
  EXPECT_TRUE(m.empty());
  EXPECT_THAT(notes, testing::Contains(testing::HasSubstr("latency_max_us omitted")));
}

TEST(CyclictestJson, T3QuirksNanBesideGoodThread) {
  const char* j =
      R"({"file_version": 1, "cmdline:": "cyclictest --json=x nan", "rt_test_version:": "2.40",
    "return_code": 0, "num_threads": 2, "resolution_in_ns": 0,
    "thread": {"1": {"histogram": {"3": 2, "40": 1}, "cycles": 3, "min": 3, "max": 40, "avg": 15.33, "cpu": 1, "node": 0},
               "0": {"histogram": {}, "cycles": 0, "min": 1000000, "max": 0, "avg": nan, "cpu": 0, "node": 0}}})";
  auto r = parse_cyclictest_json(j);
  EXPECT_EQ(r.cmdline, "cyclictest --json=x nan");  // "nan" inside a string is untouched
  ASSERT_EQ(r.threads.size(), 2u);
  EXPECT_EQ(r.threads[0].index, 0);
  EXPECT_FALSE(r.threads[0].has_samples());
  EXPECT_EQ(r.threads[1].cpu, 1);
  EXPECT_DOUBLE_EQ(*r.threads[1].avg_us, 15.33);
  auto m = cyclictest_metrics(r);
  EXPECT_EQ(m.at("latency_max_us").values, std::vector<double>{40});
  EXPECT_EQ(m.at("latency_p99_us").values, std::vector<double>{40});
}

// [t7]: a real capture whose --json file name held '"' and '\\' (rt-tests does not escape it).
TEST(CyclictestJson, T7RawQuotesAndBackslashInCmdline) {
  auto r = parse_cyclictest_json(data("host-raw-cmdline.json"));
  EXPECT_EQ(r.cmdline, R"(cyclictest -q -D 1 -t 1 -a 0 -i 1000 --json=raw "q" \x.json)");
  ASSERT_EQ(r.threads.size(), 1u);
  EXPECT_EQ(r.threads[0].cycles, 930);
}

TEST(CyclictestJson, NsResolutionConvertsToUs) {
  auto r = parse_cyclictest_json(
      R"({"resolution_in_ns": 1, "thread": {"0": {"cycles": 10, "min": 14943, "max": 505987, "avg": 31007.65}}})");
  EXPECT_TRUE(r.values_in_ns);
  EXPECT_EQ(r.histogram_bucket_ns, 1);
  EXPECT_DOUBLE_EQ(*r.threads[0].min_us, 14.943);
  EXPECT_NEAR(*r.threads[0].avg_us, 31.00765, 1e-9);
}

TEST(CyclictestJson, ErrorsNameTheField) {
  EXPECT_THROW(parse_cyclictest_json("T: 0 ( 1) P:80"), Error);
  try {
    parse_cyclictest_json(R"({"thread": {"0": {"cycles": "many", "min": 1, "max": 2, "avg": 1}}})");
    FAIL();
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), testing::HasSubstr("thread/0/cycles"));
    EXPECT_THAT(e.what(), testing::HasSubstr("many"));
  }
  try {
    parse_cyclictest_json(R"({"thread": {"0": {"cycles": 5, "min": 1, "avg": 1}}})");
    FAIL();
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), testing::HasSubstr("thread/0/max"));
  }
  try {
    parse_cyclictest_json(std::string("{\"thread\": \x01\x02\xff junk"));
    FAIL();
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), testing::HasSubstr("not valid JSON"));
    EXPECT_THAT(e.what(), testing::HasSubstr("???"));  // junk bytes sanitized
  }
  EXPECT_THROW(parse_cyclictest_json(R"({"thread": {"x": {"cycles": 1}}})"), Error);
  EXPECT_THROW(parse_cyclictest_json(R"({"thread": {"0": {"cycles": 1, "min": 1, "max": 1, "avg": 1,
      "histogram": {"1": 5}}}})"),
               Error);  // more samples in the histogram than cycles
}

// [t1]: two -q lines from a 540 s run.
TEST(CyclictestText, T1QuietLines) {
  auto r = parse_cyclictest_text(
      "T: 0 (  437) P:48 I:1000 C: 540000 Min:      4 Act:    5 Avg:   18 Max:     217\n"
      "T: 1 (  438) P:48 I:1500 C: 360000 Min:      4 Act:    9 Avg:   17 Max:     340\n");
  ASSERT_EQ(r.threads.size(), 2u);
  const auto& a = r.threads[0];
  EXPECT_EQ(a.tid, 437);
  EXPECT_EQ(a.prio, 48);
  EXPECT_EQ(a.interval_us, 1000);
  EXPECT_EQ(a.cycles, 540000);
  EXPECT_EQ(a.min_us, 4);
  EXPECT_EQ(a.act_us, 5);
  EXPECT_EQ(a.avg_us, 18);
  EXPECT_EQ(a.max_us, 217);
  const auto& b = r.threads[1];
  EXPECT_EQ(b.tid, 438);
  EXPECT_EQ(b.interval_us, 1500);
  EXPECT_EQ(b.cycles, 360000);
  EXPECT_EQ(b.act_us, 9);
  EXPECT_EQ(b.avg_us, 17);
  EXPECT_EQ(b.max_us, 340);
}

// [t1], second half: the JSON of the same run has the exact avg; merging prefers it.
TEST(CyclictestText, T1JsonAvgWins) {
  auto text = parse_cyclictest_text(
      "T: 0 (  437) P:48 I:1000 C: 540000 Min:      4 Act:    5 Avg:   18 Max:     217\n"
      "T: 1 (  438) P:48 I:1500 C: 360000 Min:      4 Act:    9 Avg:   17 Max:     340\n");
  auto json = parse_cyclictest_json(
      R"({"thread": {"0": {"cycles": 540000, "min": 4, "max": 217, "avg": 18.29},
                     "1": {"cycles": 360000, "min": 4, "max": 340, "avg": 17.69}}})");
  auto m = merge_cyclictest(json, text);
  EXPECT_DOUBLE_EQ(*m.threads[0].avg_us, 18.29);
  EXPECT_DOUBLE_EQ(*m.threads[1].avg_us, 17.69);
  EXPECT_EQ(m.threads[1].tid, 438);
  EXPECT_EQ(m.threads[1].interval_us, 1500);
  EXPECT_EQ(m.threads[0].act_us, 5);
  EXPECT_TRUE(m.notes.empty());
}

// [t2]: no space after C: past a million cycles; policy and # lines skipped.
TEST(CyclictestText, T2MillionCyclesAndExtraLines) {
  auto r = parse_cyclictest_text(
      "# /dev/cpu_dma_latency set to 0us\n"
      "policy: fifo: loadavg: 0.07 0.09 0.08 1/129 2034\n"
      "\n"
      "T: 0 ( 2013) P:80 I:200 C:1546988 Min:      6 Act:   18 Avg:   16 Max:     306\n"
      "T: 1 ( 2014) P:80 I:700 C: 442003 Min:      7 Act:   12 Avg:   15 Max:     290\n");
  ASSERT_EQ(r.threads.size(), 2u);
  EXPECT_EQ(r.threads[0].cycles, 1546988);
  EXPECT_EQ(r.threads[0].tid, 2013);
  EXPECT_EQ(r.threads[0].interval_us, 200);
  EXPECT_EQ(r.threads[0].max_us, 306);
  EXPECT_EQ(r.threads[1].cycles, 442003);  // stopped threads differ: not an error
  EXPECT_TRUE(r.notes.empty());
}

TEST(CyclictestText, RealQuietRunMergedWithItsJson) {
  auto text = parse_cyclictest_text(data("host-2t-q.txt"));
  ASSERT_EQ(text.threads.size(), 2u);
  EXPECT_EQ(text.threads[0].tid, 4774);
  EXPECT_EQ(text.threads[1].interval_us, 1500);
  EXPECT_EQ(text.threads[0].avg_us, 20);
  auto m = merge_cyclictest(parse_cyclictest_json(data("host-2t-nohist.json")), text);
  EXPECT_DOUBLE_EQ(*m.threads[0].avg_us, 20.35);
  EXPECT_EQ(m.threads[0].tid, 4774);
  EXPECT_EQ(m.threads[0].act_us, 23);
  EXPECT_EQ(m.threads[1].tid, 4775);
  EXPECT_TRUE(m.notes.empty());
}

// [t4]: real non-quiet output captured through a pty (CRLF, ESC[4A redraws): the final block.
TEST(CyclictestText, T4RealRedrawnOutputUsesLastBlock) {
  auto r = parse_cyclictest_text(data("host-2t-nonquiet-pty.txt"));
  ASSERT_EQ(r.threads.size(), 2u);
  EXPECT_EQ(r.threads[0].tid, 4872);
  EXPECT_EQ(r.threads[0].cycles, 2998);
  EXPECT_EQ(r.threads[0].min_us, 11);
  EXPECT_EQ(r.threads[0].act_us, 17);
  EXPECT_EQ(r.threads[0].avg_us, 23);
  EXPECT_EQ(r.threads[0].max_us, 47);
  EXPECT_EQ(r.threads[1].cycles, 1999);
  EXPECT_EQ(r.threads[1].max_us, 58);
  // Redirected to a file, cyclictest still writes the escapes (LF only).
  auto f = parse_cyclictest_text(data("host-2t-nonquiet-redirect.txt"));
  EXPECT_EQ(f.threads[0].cycles, 1992);
  EXPECT_EQ(f.threads[1].cycles, 1328);
  EXPECT_EQ(f.threads[1].max_us, 215);
}

TEST(CyclictestText, ZeroCyclesSentinelIsNoSample) {
  auto r = parse_cyclictest_text(data("host-zero-cycles-sigint.q.txt"));
  ASSERT_EQ(r.threads.size(), 2u);
  EXPECT_FALSE(r.threads[0].has_samples());
  EXPECT_FALSE(r.threads[0].min_us.has_value());  // "Min:1000000" is not a latency
  EXPECT_EQ(r.threads[1].interval_us, 5000500);
}

// Real -q -h stdout: no "T:" lines, threads come from the histogram summary.
TEST(CyclictestText, RealHistogramText) {
  auto r = parse_cyclictest_text(data("host-2t-hist.stdout.txt"));
  ASSERT_EQ(r.threads.size(), 2u);
  EXPECT_EQ(r.threads[0].cycles, 3000);
  EXPECT_EQ(r.threads[0].min_us, 18);
  EXPECT_EQ(r.threads[0].avg_us, 27);  // truncated in text
  EXPECT_EQ(r.threads[0].max_us, 150);
  EXPECT_EQ(r.threads[1].max_us, 153);
  EXPECT_EQ(r.threads[0].overflows, 0);
  auto json = parse_cyclictest_json(data("host-2t-hist.json"));
  EXPECT_EQ(r.threads[0].histogram, json.threads[0].histogram);
  EXPECT_EQ(r.threads[1].histogram, json.threads[1].histogram);
}

TEST(CyclictestText, ErrorsQuoteTheLine) {
  try {
    parse_cyclictest_text("# hello\nT: 0 ( 12) P:80 I:1000 C:   3000 Min: x Avg: 1 Max: 2\n");
    FAIL();
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), testing::HasSubstr("line 2"));
    EXPECT_THAT(e.what(), testing::HasSubstr("Min: x"));
  }
  EXPECT_THROW(parse_cyclictest_text("T: 0 ( 12) P:80 I:1000 Min: 1 Avg: 1 Max: 2\n"), Error);
  EXPECT_THROW(parse_cyclictest_text("T: 0 ( 12) P:80 I:1000 C: 5 Min: 1 Act: 1\n"), Error);
  EXPECT_THROW(parse_cyclictest_text(std::string(1000, '\xff')), Error);
  EXPECT_THROW(parse_cyclictest_text(""), Error);
  EXPECT_THROW(parse_cyclictest_text("T: 0 ( 12) P:80 I:1000 C: nan Min: 1 Avg: 1 Max: 2"), Error);
}

// Nearest rank: N = 6000 samples, p99 -> the 5940th smallest, p99.9 -> the 5994th (computed
// independently from host-2t-hist.json).
TEST(CyclictestHistogram, PercentilesOfRealMergedHistogram) {
  auto r = parse_cyclictest_json(data("host-2t-hist.json"));
  auto h = merged_histogram(r);
  EXPECT_EQ(h.overflows, 0);
  EXPECT_TRUE(h.overflows_known);
  EXPECT_EQ(histogram_percentile(h.counts, 50, h.overflows), 26);
  EXPECT_EQ(histogram_percentile(h.counts, 99, h.overflows), 35);
  EXPECT_EQ(histogram_percentile(h.counts, 99.9, h.overflows),
            53);  // cum(53) = 5994, not 61 (5996)
  EXPECT_EQ(histogram_percentile(h.counts, 100, h.overflows), 153);
  auto m = cyclictest_metrics(r);
  EXPECT_EQ(m.at("latency_p99_us").values, std::vector<double>{35});
  EXPECT_EQ(m.at("latency_p999_us").values, std::vector<double>{53});
  EXPECT_EQ(m.at("latency_min_us").values, (std::vector<double>{18, 8}));
  EXPECT_EQ(m.at("latency_min_us").aggregate, "min");
  EXPECT_EQ(m.at("latency_avg_us").values, (std::vector<double>{27.79, 22.12}));
  EXPECT_EQ(m.at("latency_avg_us").aggregate, "mean");
  EXPECT_EQ(m.at("latency_max_us").values, (std::vector<double>{150, 153}));
  EXPECT_EQ(m.at("latency_max_us").aggregate, "max");
  EXPECT_EQ(m.at("latency_max_us").unit, "us");
  EXPECT_TRUE(m.at("latency_max_us").lower_is_better);
}

TEST(CyclictestHistogram, EdgeCases) {
  std::map<int, long> h{{1, 1}, {2, 1}, {3, 1}, {4, 1}};
  EXPECT_EQ(histogram_percentile(h, 25), 1);
  EXPECT_EQ(histogram_percentile(h, 25.1), 2);
  EXPECT_EQ(histogram_percentile(h, 0.0001), 1);
  EXPECT_TRUE(std::isinf(histogram_percentile(h, 99, 96)));  // the tail is in the overflows
  EXPECT_EQ(histogram_percentile(h, 4, 96), 4);
  EXPECT_THROW(histogram_percentile(h, 0), Error);
  EXPECT_THROW(histogram_percentile(h, 100.5), Error);
  EXPECT_THROW(histogram_percentile({}, 50), Error);
  EXPECT_THROW(histogram_percentile({{1, -1}}, 50), Error);
  // Overflowed tail: p99 not reported, with a note.
  CyclictestResult r;
  CyclictestThread t;
  t.cycles = 100;
  t.min_us = 1;
  t.avg_us = 50;
  t.max_us = 900;
  t.histogram = {{1, 90}};
  t.overflows = 10;
  r.threads.push_back(t);
  std::vector<std::string> notes;
  auto m = cyclictest_metrics(r, &notes);
  EXPECT_EQ(m.count("latency_p99_us"), 0u);
  EXPECT_THAT(notes, testing::Contains(testing::HasSubstr("beyond the histogram range")));
}

// Captured in a 6.1 TCG guest (tests/data/cyclictest/guest-*, saved by the guest helper): TCG
// latencies in the milliseconds, and "Act:21368" with no space once the value has 5 digits.
TEST(CyclictestGuest, RealTcgGuestJsonAndText) {
  auto json = parse_cyclictest_json(data("guest-6.1-tcg.json"));
  ASSERT_EQ(json.threads.size(), 1u);
  EXPECT_EQ(json.threads[0].cycles, 966);
  EXPECT_EQ(json.threads[0].cpu, 5);
  EXPECT_DOUBLE_EQ(*json.threads[0].avg_us, 2333.04);
  EXPECT_DOUBLE_EQ(*json.threads[0].max_us, 147496);
  auto text = parse_cyclictest_text(data("guest-6.1-tcg.q.txt"));
  ASSERT_EQ(text.threads.size(), 1u);
  EXPECT_EQ(text.threads[0].act_us, 21368);
  EXPECT_EQ(text.threads[0].prio, 90);
  auto m = merge_cyclictest(json, text);
  EXPECT_EQ(m.threads[0].tid, 122);
  EXPECT_TRUE(m.notes.empty());
  EXPECT_EQ(cyclictest_metrics(m).at("latency_max_us").values, std::vector<double>{147496});
}

}  // namespace
}  // namespace isolab

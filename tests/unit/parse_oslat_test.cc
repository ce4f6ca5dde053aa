// oslat parsers against real captures (tests/data/oslat/: rt-tests 2.4 on the build host,
// rt-tests 2.10 built from its source for --bucket-width, and the public outputs of
// docs/sources.md [os1], [os2]) and the quirks of [os3], [os4], [t3], [t7].
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "base/error.h"
#include "base/files.h"
#include "parse/oslat.h"
#include "parse/oslat_json.h"
#include "parse/oslat_text.h"

namespace isolab {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string data(const std::string& name) {
  return read_file(std::string(ISOLAB_TEST_DATA_DIR) + "/oslat/" + name);
}

std::string error_of(void (*f)(const std::string&), const std::string& text) {
  try {
    f(text);
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}
void text_of(const std::string& s) { (void)parse_oslat_text(s); }
void json_of(const std::string& s) { (void)parse_oslat_json(s); }

bool has_note(const std::vector<std::string>& notes, const std::string& part) {
  for (const auto& n : notes)
    if (n.find(part) != std::string::npos) return true;
  return false;
}

std::vector<int> cpus(const OslatResult& r) {
  std::vector<int> out;
  for (const auto& t : r.threads) out.push_back(t.cpu);
  return out;
}

std::vector<double> maxima(const OslatResult& r) {
  std::vector<double> out;
  for (const auto& t : r.threads) out.push_back(t.max_us.value_or(-1));
  return out;
}

// ---- real rt-tests 2.4 captures (Debian 12's oslat)

TEST(OslatJson, Real240OneCpu) {
  const OslatResult r = parse_oslat_json(data("host-2.40-cpu1-d3.json"));
  EXPECT_EQ(r.format, "json");
  EXPECT_EQ(r.version, "2.40");
  EXPECT_EQ(r.cmdline, "oslat --cpu-list 1 -D 3 --json=o1.json");
  EXPECT_EQ(r.return_code, 0);
  EXPECT_EQ(r.bucket_width_ns, 1000);
  EXPECT_EQ(r.last_bucket_ns, 32000);
  ASSERT_EQ(r.threads.size(), 1u);
  const OslatThread& t = r.threads[0];
  EXPECT_EQ(t.cpu, 1);
  EXPECT_EQ(t.counter_mhz, 2597);
  EXPECT_DOUBLE_EQ(*t.min_us, 1);
  EXPECT_DOUBLE_EQ(*t.avg_us, 1.001252);
  EXPECT_DOUBLE_EQ(*t.max_us, 4060);
  EXPECT_DOUBLE_EQ(*t.duration_s, 2.998);
  EXPECT_EQ(t.samples, 121999687);
  EXPECT_EQ(t.buckets.at(1000), 121996230);
  EXPECT_EQ(t.buckets.at(32000), 494);
  EXPECT_TRUE(r.notes.empty());
}

TEST(OslatText, Real240OneCpuAgreesWithItsJson) {
  const OslatResult r = parse_oslat_text(data("host-2.40-cpu1-d3.txt"));
  EXPECT_EQ(r.format, "text");
  EXPECT_EQ(r.version, "2.40");
  EXPECT_EQ(r.bucket_width_ns, 1000);
  EXPECT_EQ(r.last_bucket_ns, 32000);
  ASSERT_EQ(r.threads.size(), 1u);
  const OslatThread& t = r.threads[0];
  EXPECT_EQ(t.cpu, 1);
  EXPECT_EQ(t.counter_mhz, 2597);
  EXPECT_DOUBLE_EQ(*t.min_us, 1);
  EXPECT_DOUBLE_EQ(*t.avg_us, 1.001);  // "%.3lf": the JSON has 1.001252
  EXPECT_DOUBLE_EQ(*t.max_us, 4060);
  EXPECT_DOUBLE_EQ(*t.duration_s, 2.998);
  EXPECT_EQ(t.samples, 121999687);
  EXPECT_EQ(t.buckets, parse_oslat_json(data("host-2.40-cpu1-d3.json")).threads[0].buckets);
}

TEST(OslatJson, Real240Memmove) {
  const OslatResult r = parse_oslat_json(data("host-2.40-cpu1-memmove.json"));
  ASSERT_EQ(r.threads.size(), 1u);
  EXPECT_DOUBLE_EQ(*r.threads[0].min_us, 1);
  EXPECT_DOUBLE_EQ(*r.threads[0].avg_us, 1.676865);
  EXPECT_DOUBLE_EQ(*r.threads[0].max_us, 28077);
  EXPECT_EQ(r.threads[0].samples, 3417784);
  EXPECT_EQ(r.threads[0].buckets.count(14000), 0u);  // "014 (us): 0": not listed
  const OslatResult text = parse_oslat_text(data("host-2.40-cpu1-memmove.txt"));
  EXPECT_DOUBLE_EQ(*text.threads[0].avg_us, 1.677);
  EXPECT_EQ(text.threads[0].buckets, r.threads[0].buckets);
}

// -z leaves out all-zero rows as "    ...": the width is still 1 us (the labels' differences
// have 1 us as greatest common divisor), and the last row still holds the overflows.
TEST(OslatText, Real240TwoCpusZeroOmitted) {
  const OslatResult r = parse_oslat_text(data("host-2.40-cpus0-1-zero-omit.txt"));
  EXPECT_THAT(cpus(r), ElementsAre(0, 1));
  EXPECT_THAT(maxima(r), ElementsAre(54559, 28154));
  EXPECT_DOUBLE_EQ(*r.threads[0].avg_us, 1.134);
  EXPECT_DOUBLE_EQ(*r.threads[1].avg_us, 1.102);
  EXPECT_EQ(r.bucket_width_ns, 1000);
  EXPECT_EQ(r.last_bucket_ns, 32000);
  EXPECT_EQ(r.threads[0].samples, 12667897);
  EXPECT_EQ(r.threads[1].samples, 16593595);
  EXPECT_EQ(r.threads[1].buckets.count(29000), 0u);
  EXPECT_EQ(r.threads[1].buckets.at(30000), 1);
  EXPECT_TRUE(has_note(r.notes, "first thread's sum of the gaps beyond the last bucket"));
  const OslatResult j = parse_oslat_json(data("host-2.40-cpus0-1-zero-omit.json"));
  EXPECT_EQ(j.threads[1].buckets, r.threads[1].buckets);
  EXPECT_EQ(j.last_bucket_ns, 32000);  // from the command line: -b not given, 32 buckets
}

// [os3]: the cmdline is argv joined by spaces, unescaped; `tag="a b"` breaks the JSON.
TEST(OslatJson, Real240UnescapedQuoteInCmdlineIsRepaired) {
  const std::string text = data("host-2.40-quiet-quote-arg.json");
  ASSERT_THAT(text, HasSubstr("tag=\"a b\"\","));
  const OslatResult r = parse_oslat_json(text);
  EXPECT_EQ(r.cmdline, "oslat --cpu-list 1 -D 1 -q --json=raw.json tag=\"a b\"");
  EXPECT_TRUE(has_note(r.notes, "re-escaped"));
  EXPECT_EQ(r.version, "2.40");
  ASSERT_EQ(r.threads.size(), 1u);
  EXPECT_DOUBLE_EQ(*r.threads[0].avg_us, 1.083591);
  EXPECT_DOUBLE_EQ(*r.threads[0].max_us, 22032);
  EXPECT_EQ(r.threads[0].buckets.at(1000), 9374577);
  EXPECT_EQ(r.bucket_width_ns, 1000);
  // -q: the banner, then the table.
  const OslatResult q = parse_oslat_text(data("host-2.40-quiet-quote-arg.txt"));
  EXPECT_DOUBLE_EQ(*q.threads[0].max_us, 22032);
  EXPECT_EQ(q.threads[0].buckets, r.threads[0].buckets);
}

// Whatever bytes an argument holds (a quote, a backslash, a newline, a control byte), the
// text between "cmdline:" and the "rt_test_version:" member that follows it is the value.
TEST(OslatJson, CmdlineWithAnyBytesIsRepaired) {
  std::string text = data("host-2.40-cpu1-d3.json");
  const std::string from = "--json=o1.json";
  const std::string raw = "--json=o1.json \"a\\\"\nb\x01 ]}";
  text.replace(text.find(from), from.size(), raw);
  const OslatResult r = parse_oslat_json(text);
  EXPECT_EQ(r.cmdline, "oslat --cpu-list 1 -D 3 " + raw);
  EXPECT_TRUE(has_note(r.notes, "re-escaped"));
  EXPECT_DOUBLE_EQ(*r.threads[0].max_us, 4060);
  EXPECT_EQ(r.last_bucket_ns, 32000);
  // Without the member rt_write_json() writes after it, there is nothing to repair by.
  const std::string version = "\"rt_test_version:\": \"2.40\",";
  text.replace(text.find(version), version.size(), "");
  EXPECT_THAT(error_of(json_of, text), HasSubstr("not valid JSON at line 3 column"));
}

// The guest step's own command line (workload/tools/oslat.cc): -b 1000 -z; the last of the
// 1000 buckets holds the overflows, the text leaves out all-zero rows.
TEST(OslatJson, RealGuestRunOfTheWorkloadStep) {
  const OslatResult r = parse_oslat_json(data("guest-6.1-tcg-cpus2-3.json"));
  EXPECT_EQ(r.cmdline,
            "oslat --cpu-list 2-3 --cpu-main-thread 0 -D 3 -b 1000 -z --json=oslat.json");
  EXPECT_THAT(cpus(r), ElementsAre(2, 3));
  EXPECT_THAT(maxima(r), ElementsAre(40141, 40302));
  EXPECT_DOUBLE_EQ(*r.threads[0].avg_us, 1.127077);
  EXPECT_EQ(r.bucket_width_ns, 1000);
  EXPECT_EQ(r.last_bucket_ns, 1000000);
  EXPECT_EQ(r.threads[0].buckets.at(1000000), 310);
  EXPECT_EQ(r.threads[1].buckets.at(1000000), 320);
  const OslatResult text = parse_oslat_text(data("guest-6.1-tcg-cpus2-3.txt"));
  EXPECT_EQ(text.bucket_width_ns, 1000);  // sparse rows, 1 us apart at least once
  EXPECT_EQ(text.last_bucket_ns, 1000000);
  EXPECT_EQ(text.threads[1].buckets, r.threads[1].buckets);
  std::vector<std::string> notes;
  const auto h = oslat_histogram(r, r.threads[1], &notes);
  ASSERT_TRUE(h.has_value());
  EXPECT_EQ(h->overflows, 320);
  EXPECT_EQ(h->counts.count(999), 0u);
  EXPECT_EQ(h->counts.at(0), 15678337);
}

// ---- --bucket-width (rt-tests 2.5+; Debian's 2.4 has no such option, so these come from
// rt-tests v2.10 built from its source)

TEST(OslatJson, SubMicrosecondWidthGivesNsMinMaxAndNoAverage) {
  const OslatResult r = parse_oslat_json(data("host-2.10src-cpu1-w250.json"));
  EXPECT_EQ(r.version, "2.10");
  EXPECT_EQ(r.bucket_width_ns, 250);
  EXPECT_EQ(r.last_bucket_ns, 32000);  // 32 * 1000 / 250 = 128 buckets of 250 ns
  ASSERT_EQ(r.threads.size(), 1u);
  const OslatThread& t = r.threads[0];
  EXPECT_DOUBLE_EQ(*t.min_us, 0.020);      // "min": 20, in ns
  EXPECT_DOUBLE_EQ(*t.max_us, 28112.857);  // "max": 28112857, in ns
  EXPECT_FALSE(t.avg_us.has_value());      // oslat printed 94.825: the overflow added in ns
  EXPECT_TRUE(has_note(r.notes, "avg left out"));
  EXPECT_EQ(t.buckets.at(250), 24468459);  // "0.250"
  EXPECT_EQ(t.buckets.at(32000), 229);     // "32.000", including overflows
  EXPECT_EQ(t.samples, 24469952);
  const OslatResult text = parse_oslat_text(data("host-2.10src-cpu1-w250.txt"));
  EXPECT_DOUBLE_EQ(*text.threads[0].min_us, 0.020);
  EXPECT_DOUBLE_EQ(*text.threads[0].max_us, 28112.857);
  EXPECT_FALSE(text.threads[0].avg_us.has_value());
  EXPECT_EQ(text.bucket_width_ns, 250);
  EXPECT_EQ(text.threads[0].buckets, t.buckets);
}

TEST(OslatHistogram, SubMicrosecondWidthIsStoredInNs) {
  const OslatResult r = parse_oslat_json(data("host-2.10src-cpu1-w250.json"));
  std::vector<std::string> notes;
  const auto h = oslat_histogram(r, r.threads[0], &notes);
  ASSERT_TRUE(h.has_value());
  EXPECT_EQ(h->unit, "ns");
  EXPECT_EQ(h->bucket_ns, 250);
  EXPECT_EQ(h->counts.at(0), 24468459);  // [0, 250) ns
  EXPECT_EQ(h->counts.count(31750), 0u);
  EXPECT_EQ(h->overflows, 229);
}

// rt-tests 2.7+ counts floor(gap): min can be 0 (2.4 counted floor + 1, min 1).
TEST(OslatText, Real210FloorsTheGap) {
  const OslatResult r = parse_oslat_text(data("host-2.10src-cpu1-d2.txt"));
  EXPECT_EQ(r.version, "2.10");
  EXPECT_DOUBLE_EQ(*r.threads[0].min_us, 0);
  EXPECT_DOUBLE_EQ(*r.threads[0].max_us, 24051);
  EXPECT_EQ(r.threads[0].counter_mhz, 2597);  // "(MHz)" since 2.7
  std::vector<std::string> notes;
  EXPECT_EQ(oslat_versions(r, &notes).at("oslat"), "2.10");
  EXPECT_TRUE(has_note(notes, "2.1 and 2.10 print the same"));
}

// ---- public outputs of other versions

// [os1]: oslat V 1.10 in a container's log, after the wrapper's own lines.
TEST(OslatText, Os1Version110InAContainerLog) {
  const OslatResult r = parse_oslat_text(data("os1-v1.10-container-log.txt"));
  EXPECT_EQ(r.format, "text");
  EXPECT_EQ(r.version, "1.10");
  EXPECT_THAT(cpus(r), ElementsAre(5, 6, 7, 8, 9, 10, 11));
  EXPECT_THAT(maxima(r), ElementsAre(14, 17, 9, 17, 12, 17, 8));
  for (const auto& t : r.threads) {
    EXPECT_DOUBLE_EQ(*t.min_us, 1);
    EXPECT_DOUBLE_EQ(*t.avg_us, 1.000);
    EXPECT_DOUBLE_EQ(*t.duration_s, 10.003);
    EXPECT_EQ(t.counter_mhz, 2493);  // "CPU Freq:" (later "Counter Freq:")
    EXPECT_EQ(t.buckets.count(32000), 0u);
  }
  EXPECT_EQ(r.threads[1].buckets.at(17000), 140);
  EXPECT_EQ(r.threads[0].buckets.at(1000), 426829052);
  EXPECT_EQ(r.bucket_width_ns, 1000);
  EXPECT_EQ(r.last_bucket_ns, 32000);  // "032 (us): ... (including overflows)"
  std::vector<std::string> notes;
  const auto h = oslat_histogram(r, r.threads[1], &notes);
  ASSERT_TRUE(h.has_value());
  EXPECT_EQ(h->unit, "us");
  EXPECT_EQ(h->counts.at(16), 140);  // bucket "017" holds [16, 17) us
  EXPECT_EQ(h->overflows, 0);
}

// [os2]: xzpeter/oslat v0.1.0 (before rt-tests): core_i, cpu_mhz, maxlat, runtime; no
// Minimum or Average; read, not misread.
TEST(OslatText, Os2PreRtTestsFormatIsRead) {
  const OslatResult r = parse_oslat_text(data("os2-v0.1.0-readme.txt"));
  EXPECT_EQ(r.format, "text-v0.1");
  EXPECT_EQ(r.version, "v0.1.0");
  EXPECT_THAT(cpus(r), ElementsAre(2, 3, 4, 5, 6, 7, 8, 9));
  EXPECT_THAT(maxima(r), ElementsAre(6, 6, 6, 5, 5, 5, 6, 6));
  for (const auto& t : r.threads) {
    EXPECT_FALSE(t.min_us.has_value());
    EXPECT_FALSE(t.avg_us.has_value());
    EXPECT_DOUBLE_EQ(*t.duration_s, 3600.740);
    EXPECT_EQ(t.counter_mhz, 2197);
  }
  EXPECT_EQ(r.threads[0].buckets.at(1000), 93068541026);
  EXPECT_EQ(r.threads[4].buckets.at(4000), 26);
  EXPECT_EQ(r.last_bucket_ns, 32000);
  EXPECT_TRUE(has_note(r.notes, "no Minimum or Average row"));
  std::vector<std::string> notes;
  const Metrics m = oslat_metrics(r, &notes);
  EXPECT_EQ(m.count("oslat_min_us"), 0u);
  EXPECT_EQ(m.count("oslat_avg_us"), 0u);
  EXPECT_THAT(m.at("oslat_max_us").values, ElementsAre(6, 6, 6, 5, 5, 5, 6, 6));
  EXPECT_TRUE(has_note(notes, "oslat_avg_us omitted"));
}

// ---- refused

TEST(OslatText, RunCutShortAfterTestCompletedIsRefused) {
  const std::string e = error_of(text_of, data("host-2.40-cut-after-completed.txt"));
  EXPECT_THAT(e, HasSubstr("line 12"));
  EXPECT_THAT(e, HasSubstr("\"Test completed.\" but no summary table"));
  EXPECT_THAT(e, HasSubstr("cut short"));
}

TEST(OslatText, TableCutBeforeItsDurationRowIsRefused) {
  std::string text = data("host-2.40-cpu1-d3.txt");
  text = text.substr(0, text.find("     Maximum:"));
  const std::string e = error_of(text_of, text);
  EXPECT_THAT(e, HasSubstr("summary table at line 14 is cut short after line 49"));
}

TEST(OslatText, RunThatNeverCompletedIsRefused) {
  std::string text = data("host-2.40-cut-after-completed.txt");
  text = text.substr(0, text.find("Test completed."));
  EXPECT_THAT(error_of(text_of, text), HasSubstr("line 11: the test started but never completed"));
}

// A kernel without CONFIG_NUMA answers get_mempolicy() with ENOSYS: oslat stops before its
// banner (a real 2.4 run with that answer injected).
TEST(OslatText, LibnumaFailureNamesTheKernelConfig) {
  const std::string e = error_of(text_of, data("host-2.40-get-mempolicy-enosys.txt"));
  EXPECT_THAT(e, HasSubstr("line 1: oslat could not initialize libnuma"));
  EXPECT_THAT(e, HasSubstr("CONFIG_NUMA"));
}

TEST(OslatText, UsageTextIsRefusedAsAConfigurationError) {
  EXPECT_THAT(error_of(text_of, "oslat V 2.40\nUsage:\noslat <options>\n"),
              HasSubstr("line 2: oslat printed its usage text"));
}

TEST(OslatText, NotOslatOutputIsRefused) {
  EXPECT_THAT(error_of(text_of, "T: 0 ( 437) P:48 I:1000 C: 540000 Min: 4 Act: 5 Avg: 18\n"),
              HasSubstr("no oslat summary table"));
}

TEST(OslatText, BadRowsAreRefusedWithTheirLine) {
  const std::string good = data("host-2.40-cpus0-1-zero-omit.txt");
  auto with = [&](const std::string& from, const std::string& to) {
    std::string t = good;
    t.replace(t.find(from), from.size(), to);
    return error_of(text_of, t);
  };
  EXPECT_THAT(with("    002 (us):\t 33 301", "    002 (us):\t 33"),
              HasSubstr("line 17 \"002 (us):\t 33\": 1 values for 2 CPUs"));
  EXPECT_THAT(with("     Maximum:\t 54559 28154 (us)", "     Maximum:\t 54559 28154 (ns)"),
              HasSubstr("unit (ns), expected (us)"));
  EXPECT_THAT(with("     Average:", "     Avg:"), HasSubstr("unknown row"));
  EXPECT_THAT(with("     Maximum:\t 54559", "     Maximum:\t 5x559"), HasSubstr("not a number"));
  EXPECT_THAT(with("        Core:\t 0 1", "        Core:\t 1 1"),
              HasSubstr("CPU 1 is measured by threads 0 and 1"));
  EXPECT_THAT(with("    010 (us):", "    011 (us):"), HasSubstr("the same bucket twice"));
  EXPECT_THAT(error_of(text_of, good + good), HasSubstr("a second summary table"));
}

TEST(OslatText, ContiguousLabelsMustRiseByOneWidth) {
  std::string t = data("host-2.40-cpu1-d3.txt");
  t.erase(t.find("    005 (us):"), std::string("    005 (us):\t 10\n").size());
  EXPECT_THAT(error_of(text_of, t),
              HasSubstr("bucket labels 4000 ns and 6000 ns do not rise by one width (1000 ns)"));
}

TEST(OslatJson, NanThreadHasNoSamplesAndTheFileIsRead) {
  const OslatResult r = parse_oslat_json(data("constructed-2.40-thread1-nan.json"));
  ASSERT_EQ(r.threads.size(), 2u);
  EXPECT_DOUBLE_EQ(*r.threads[0].max_us, 54559);
  const OslatThread& empty = r.threads[1];
  EXPECT_FALSE(empty.has_samples());
  EXPECT_FALSE(empty.min_us.has_value());  // 18446744073709551615: oslat's initial value
  EXPECT_FALSE(empty.avg_us.has_value());  // -nan
  EXPECT_FALSE(empty.max_us.has_value());
  std::vector<std::string> notes;
  const Metrics m = oslat_metrics(r, &notes);
  const Metric& max = m.at("oslat_max_us");
  ASSERT_TRUE(max.per_cpu.has_value());
  EXPECT_THAT(max.per_cpu->cpus, ElementsAre(0, 1));
  EXPECT_EQ(max.per_cpu->slots[0], 54559);
  EXPECT_FALSE(max.per_cpu->slots[1].has_value());
  EXPECT_THAT(max.values, ElementsAre(54559));
  EXPECT_TRUE(has_note(notes, "thread 1 (CPU 1): no samples"));
}

TEST(OslatJson, BadFilesAreRefusedNamingWhere) {
  const std::string good = data("host-2.40-cpu1-d3.json");
  auto with = [&](const std::string& from, const std::string& to) {
    std::string t = good;
    t.replace(t.find(from), from.size(), to);
    return error_of(json_of, t);
  };
  EXPECT_THAT(with("\"max\": 4060", "\"max\": \"4060\""),
              HasSubstr("field \"thread/0/max\" must be an integer"));
  EXPECT_THAT(with("\"32\": 494", "\"32e0\": 494"), HasSubstr("bucket \"32e0\""));
  EXPECT_THAT(with("\"max\": 4060", "\"max\": 18446744073709551615"),
              HasSubstr("thread 0 has samples but its min or max is out of range"));
  EXPECT_THAT(with("\"max\": 4060", "\"max\": -4060"),
              HasSubstr("field \"thread/0/max\" must not be negative"));
  EXPECT_THAT(with("\"num_threads\": 1", "\"num_threads\": 2"),
              HasSubstr("num_threads is \"2\" but \"thread\" has 1 entries"));
  EXPECT_THAT(with("\"cpu\": 1,", ""), HasSubstr("field \"thread/0/cpu\" is missing"));
  EXPECT_THAT(with("\"16\": 140,", "\"16\": 140"), HasSubstr("not valid JSON at line 42 column"));
  // min and max in ns (labels with decimals) while the command line has no --bucket-width
  EXPECT_THAT(with("\"1\": 121996230", "\"1.000\": 121996230"),
              HasSubstr("the histogram labels are in ns but the command line gives a bucket "
                        "width of 1000 ns"));
}

// ---- the layout when the command line does not say

TEST(OslatJson, CommandLineOptionsGiveTheLayout) {
  auto layout = [](const std::string& cmdline) {
    std::string t = read_file(std::string(ISOLAB_TEST_DATA_DIR) + "/oslat/host-2.40-cpu1-d3.json");
    const std::string from = "oslat --cpu-list 1 -D 3 --json=o1.json";
    t.replace(t.find(from), from.size(), cmdline);
    const OslatResult r = parse_oslat_json(t);
    return std::pair{r.bucket_width_ns.value_or(-1), r.last_bucket_ns.value_or(-1)};
  };
  EXPECT_EQ(layout("oslat -c 1"), (std::pair<long long, long long>{1000, 32000}));
  EXPECT_EQ(layout("oslat -b 64 -c 1"), (std::pair<long long, long long>{1000, 64000}));
  EXPECT_EQ(layout("oslat -zb64 -c 1"), (std::pair<long long, long long>{1000, 64000}));
  EXPECT_EQ(layout("oslat --bucket-s=40 -W2000"), (std::pair<long long, long long>{2000, 80000}));
  EXPECT_EQ(layout("oslat --bucket-width 3000 -c 1"),
            (std::pair<long long, long long>{3000, 96000}));
  // -B: the labels are shifted by a bias the file does not hold
  EXPECT_EQ(layout("oslat -B -c 1"), (std::pair<long long, long long>{1000, -1}));
  // "--bucket" is ambiguous (bucket-size, bucket-width): getopt_long refuses it
  EXPECT_EQ(layout("oslat --bucket 64 -c 1"), (std::pair<long long, long long>{1000, 32000}));
}

TEST(OslatJson, SparseLabelsWithoutCommandLineLeaveTheWidthOpen) {
  const std::string text =
      "{\"rt_test_version:\": \"2.40\", \"num_threads\": 1, \"thread\": {\"0\": {\"cpu\": 3, "
      "\"freq\": 2000, \"min\": 2, \"avg\": 2.5, \"max\": 40, \"duration\": 1.0, \"histogram\": "
      "{\"2\": 10, \"4\": 9, \"32\": 1}}}}";
  const OslatResult r = parse_oslat_json(text);
  EXPECT_FALSE(r.bucket_width_ns.has_value());  // 2 us apart: a width of 1 or 2 us
  EXPECT_FALSE(r.last_bucket_ns.has_value());
  std::vector<std::string> notes;
  EXPECT_FALSE(oslat_histogram(r, r.threads[0], &notes).has_value());
  EXPECT_TRUE(has_note(notes, "does not say the bucket width"));
  const Metrics m = oslat_metrics(r, &notes);
  EXPECT_THAT(m.at("oslat_max_us").values, ElementsAre(40));
}

TEST(OslatHistogram, TopBucketIsOverflowOnlyWhenTheMaxReachesIt) {
  OslatResult r;
  r.bucket_width_ns = 1000;
  OslatThread t;
  t.cpu = 2;
  t.buckets = {{1000, 100}, {2000, 5}, {7000, 1}};
  t.samples = 106;
  t.max_us = 6.5;  // below the top label 7: every gap fitted
  std::vector<std::string> notes;
  auto h = oslat_histogram(r, t, &notes);
  ASSERT_TRUE(h.has_value());
  EXPECT_EQ(h->counts, (std::map<long long, long long>{{0, 100}, {1, 5}, {6, 1}}));
  EXPECT_EQ(h->overflows, 0);
  t.max_us = 7;  // reaches it: the top bucket may be the last one
  h = oslat_histogram(r, t, &notes);
  EXPECT_EQ(h->counts, (std::map<long long, long long>{{0, 100}, {1, 5}}));
  EXPECT_EQ(h->overflows, 1);
  EXPECT_TRUE(has_note(notes, "kept as overflows"));
}

TEST(OslatHistogram, Real240KeepsTheLastBucketAsOverflows) {
  const OslatResult r = parse_oslat_json(data("host-2.40-cpu1-d3.json"));
  std::vector<std::string> notes;
  const auto h = oslat_histogram(r, r.threads[0], &notes);
  ASSERT_TRUE(h.has_value());
  EXPECT_EQ(h->unit, "us");
  EXPECT_EQ(h->bucket_ns, 1000);
  EXPECT_EQ(h->counts.at(0), 121996230);  // "001": [0, 1) us
  EXPECT_EQ(h->counts.at(30), 32);        // "031"
  EXPECT_EQ(h->counts.count(31), 0u);     // "032" holds the overflows
  EXPECT_EQ(h->overflows, 494);
  EXPECT_TRUE(notes.empty());
}

TEST(OslatMetrics, PerCpuFromOs1) {
  const OslatResult r = parse_oslat_text(data("os1-v1.10-container-log.txt"));
  std::vector<std::string> notes;
  const Metrics m = oslat_metrics(r, &notes);
  const Metric& max = m.at("oslat_max_us");
  EXPECT_EQ(max.unit, "us");
  EXPECT_TRUE(max.lower_is_better);
  EXPECT_EQ(max.aggregate, "max");
  ASSERT_TRUE(max.per_cpu.has_value());
  EXPECT_THAT(max.per_cpu->cpus, ElementsAre(5, 6, 7, 8, 9, 10, 11));
  EXPECT_THAT(max.values, ElementsAre(14, 17, 9, 17, 12, 17, 8));
  EXPECT_EQ(m.at("oslat_min_us").aggregate, "min");
  EXPECT_THAT(m.at("oslat_min_us").values, ElementsAre(1, 1, 1, 1, 1, 1, 1));
  EXPECT_EQ(m.at("oslat_avg_us").aggregate, "mean");
  EXPECT_TRUE(notes.empty());
}

TEST(OslatVersion, RoundingReleasesAreNoted) {
  OslatResult r;
  r.version = "2.50";
  std::vector<std::string> notes;
  EXPECT_EQ(oslat_versions(r, &notes).at("oslat"), "2.50");
  EXPECT_TRUE(has_note(notes, "oslat 2.5 rounds every gap up"));
  r.version = "v0.1.0";
  notes.clear();
  EXPECT_EQ(oslat_versions(r, &notes).at("oslat"), "v0.1.0");
  EXPECT_TRUE(notes.empty());
  r.version = "";
  EXPECT_TRUE(oslat_versions(r, &notes).empty());
}

}  // namespace
}  // namespace isolab

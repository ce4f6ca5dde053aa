#include "parse/cyclictest.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>

#include "base/error.h"
#include "base/files.h"
#include "base/text.h"
#include "parse/rt_tests.h"
#include "parse/text_util.h"

namespace isolab {

using parse_detail::quote;
using parse_detail::split_ws;
using parse_detail::to_double;
using parse_detail::to_long;
using parse_detail::trim;

namespace {

constexpr std::size_t kMaxCyclictestJsonBytes = 64u << 20;

// rt-tests copies the command line into "cmdline:" without escaping it (docs/sources.md [t7]):
// a '"' or '\\' of an argument would end the string early. The value runs from the quote after
// the key to the last quote of that line; the quotes and backslashes between are escaped.
std::string escape_raw_cmdline(std::string text) {
  static constexpr std::string_view kKey = "\"cmdline:\"";
  const std::size_t key = text.find(kKey);
  if (key == std::string::npos) return text;
  const std::size_t open = text.find('"', key + kKey.size());
  const std::size_t eol = std::min(text.find('\n', key), text.size());
  if (open == std::string::npos || open >= eol) return text;
  const std::size_t close = text.rfind('"', eol - 1);
  if (close == std::string::npos || close <= open) return text;
  std::string value;
  for (std::size_t i = open + 1; i < close; ++i) {
    if (text[i] == '"' || text[i] == '\\') value.push_back('\\');
    value.push_back(text[i]);
  }
  return text.replace(open + 1, close - open - 1, value);
}

const nlohmann::json* find_key(const nlohmann::json& obj, std::initializer_list<const char*> keys) {
  for (const char* k : keys) {
    auto it = obj.find(k);
    if (it != obj.end()) return &*it;
  }
  return nullptr;
}

std::string dump(const nlohmann::json& j) {
  return quote(j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace), 120);
}

long json_long(const nlohmann::json& j, const std::string& field) {
  if (j.is_number_integer() || j.is_number_unsigned()) return j.get<long>();
  if (j.is_number_float()) {
    double d = j.get<double>();
    if (std::floor(d) == d && std::fabs(d) < 9e18) return static_cast<long>(d);
  }
  throw Error("cyclictest json: field \"" + field + "\" must be an integer, got " + dump(j));
}

std::optional<double> json_number(const nlohmann::json& j, const std::string& field) {
  if (j.is_null()) return std::nullopt;  // a sanitized nan
  if (j.is_number()) return j.get<double>();
  throw Error("cyclictest json: field \"" + field + "\" must be a number, got " + dump(j));
}

}  // namespace

namespace {

// The document, checked for size and syntax; throws naming the byte where parsing stopped.
nlohmann::json parse_json_document(std::string_view text) {
  if (text.size() > kMaxCyclictestJsonBytes)
    throw Error("cyclictest json: " + std::to_string(text.size()) +
                " bytes is more than the 64 MiB limit; starts with " + quote(text.substr(0, 80)));
  std::string clean = rt_tests_null_nonfinite(text);
  nlohmann::json doc;
  try {
    // Only a document that does not parse as written gets its cmdline value escaped.
    doc = nlohmann::json::parse(clean, nullptr, false);
    if (doc.is_discarded()) {
      std::string escaped = rt_tests_null_nonfinite(escape_raw_cmdline(std::string(text)));
      doc = nlohmann::json::parse(escaped, nullptr, false);
      if (doc.is_discarded()) doc = nlohmann::json::parse(clean);  // throws, naming the byte
    }
  } catch (const nlohmann::json::out_of_range& e) {
    // e.g. a number like 1e400 that no double holds
    throw Error(std::string("cyclictest json: a value is out of range: ") + e.what());
  } catch (const nlohmann::json::parse_error& e) {
    std::size_t at = std::min<std::size_t>(e.byte > 0 ? e.byte - 1 : 0, clean.size());
    std::size_t from = at > 60 ? at - 60 : 0;
    throw Error("cyclictest json: not valid JSON at byte " + std::to_string(e.byte) + " near " +
                quote(std::string_view(clean).substr(from, 120)));
  }
  if (!doc.is_object()) throw Error("cyclictest json: top level is not an object: " + dump(doc));
  return doc;
}

// "<base>/histogram" (bucket -> count) into th.histogram and th.overflows.
void read_json_histogram(const nlohmann::json& h, const std::string& base, CyclictestThread& th) {
  if (!h.is_object())
    throw Error("cyclictest json: field \"" + base + "/histogram\" must be an object");
  long total = 0;
  for (const auto& [bucket, count] : h.items()) {
    auto b = to_long(bucket);
    if (!b || *b < 0 || *b > std::numeric_limits<int>::max())
      throw Error("cyclictest json: histogram bucket " + quote(bucket) + " in \"" + base +
                  "/histogram\" is not a non-negative integer");
    long n = json_long(count, base + "/histogram/" + bucket);
    if (n < 0)
      throw Error("cyclictest json: negative count in \"" + base + "/histogram/" + bucket + "\"");
    if (n > 0) th.histogram[static_cast<int>(*b)] += n;
    total += n;
  }
  // The JSON has no overflow count, but every cycle lands in a bucket or overflows.
  if (!th.histogram.empty()) {
    if (total > th.cycles)
      throw Error("cyclictest json: \"" + base + "/histogram\" counts " + std::to_string(total) +
                  " samples, more than its " + std::to_string(th.cycles) + " cycles");
    th.overflows = th.cycles - total;
  }
}

// The thread object "thread/<key>"; scale turns its values into microseconds.
CyclictestThread read_json_thread(const std::string& key, const nlohmann::json& t, double scale,
                                  std::vector<std::string>& notes) {
  const std::string base = "thread/" + key;
  auto idx = to_long(key);
  if (!idx || *idx < 0 || *idx > 1'000'000)
    throw Error("cyclictest json: thread key " + quote(key) + " is not a thread number");
  if (!t.is_object()) throw Error("cyclictest json: field \"" + base + "\" is not an object");
  CyclictestThread th;
  th.index = static_cast<int>(*idx);
  auto cyc = t.find("cycles");
  if (cyc == t.end()) throw Error("cyclictest json: field \"" + base + "/cycles\" is missing");
  th.cycles = json_long(*cyc, base + "/cycles");
  if (th.cycles < 0)
    throw Error("cyclictest json: field \"" + base + "/cycles\" is negative: " + dump(*cyc));
  if (auto c = t.find("cpu"); c != t.end()) th.cpu = static_cast<int>(json_long(*c, base + "/cpu"));
  if (th.cycles > 0) {
    for (auto [name, slot] : {std::pair{"min", &th.min_us}, std::pair{"avg", &th.avg_us},
                              std::pair{"max", &th.max_us}}) {
      auto f = t.find(name);
      if (f == t.end())
        throw Error("cyclictest json: field \"" + base + "/" + name + "\" is missing");
      auto v = json_number(*f, base + "/" + name);
      if (v) {
        *slot = *v * scale;
      } else {
        notes.push_back("thread " + key + ": " + name + " is not a number");
      }
    }
  } else {
    notes.push_back("thread " + key + ": no samples (0 cycles)");
  }
  if (auto h = t.find("histogram"); h != t.end()) read_json_histogram(*h, base, th);
  return th;
}

}  // namespace

CyclictestResult parse_cyclictest_json(std::string_view text) {
  const nlohmann::json doc = parse_json_document(text);
  CyclictestResult r;
  r.format = "json";
  if (auto* v = find_key(doc, {"rt_test_version:", "rt_test_version"}); v && v->is_string())
    r.version = v->get<std::string>();
  if (auto* v = find_key(doc, {"cmdline:", "cmdline"}); v && v->is_string())
    r.cmdline = v->get<std::string>();
  if (auto* v = find_key(doc, {"return_code"}))
    r.return_code = static_cast<int>(json_long(*v, "return_code"));
  if (auto* v = find_key(doc, {"resolution_in_ns"}))
    r.values_in_ns = json_long(*v, "resolution_in_ns") != 0;
  r.histogram_bucket_ns = r.values_in_ns ? 1 : 1000;
  const double scale = r.values_in_ns ? 1e-3 : 1.0;

  const nlohmann::json* threads = find_key(doc, {"thread"});
  if (!threads) throw Error("cyclictest json: no \"thread\" object");
  if (!threads->is_object())
    throw Error("cyclictest json: field \"thread\" must be an object, got " + dump(*threads));
  for (const auto& [key, t] : threads->items())
    r.threads.push_back(read_json_thread(key, t, scale, r.notes));
  std::sort(r.threads.begin(), r.threads.end(),
            [](const auto& a, const auto& b) { return a.index < b.index; });
  for (std::size_t i = 1; i < r.threads.size(); ++i)
    if (r.threads[i].index == r.threads[i - 1].index)
      throw Error("cyclictest json: thread " + std::to_string(r.threads[i].index) +
                  " appears twice");
  if (auto* n = find_key(doc, {"num_threads"});
      n && n->is_number_integer() && n->get<long>() != static_cast<long>(r.threads.size()))
    r.notes.push_back("num_threads is " + std::to_string(n->get<long>()) + " but " +
                      std::to_string(r.threads.size()) + " thread objects are present");
  if (r.return_code && *r.return_code != 0)
    r.notes.push_back("cyclictest return_code " + std::to_string(*r.return_code));
  return r;
}

namespace {

// Reads a T: line left to right: blanks, then numbers ("12", "-3", "1.5").
struct TLineCursor {
  std::string_view s;
  void skip_ws() {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  }
  std::string_view take_number() {
    skip_ws();
    std::size_t n = 0;
    while (n < s.size() &&
           (std::isdigit(static_cast<unsigned char>(s[n])) || s[n] == '.' || s[n] == '-'))
      ++n;
    std::string_view num = s.substr(0, n);
    s.remove_prefix(n);
    return num;
  }
};

// The latency fields of a T: line, in the line's unit (times scale gives microseconds).
constexpr std::pair<std::string_view, std::optional<double> CyclictestThread::*> kTLatencies[] = {
    {"Min", &CyclictestThread::min_us},
    {"Act", &CyclictestThread::act_us},
    {"Avg", &CyclictestThread::avg_us},
    {"Max", &CyclictestThread::max_us}};

// One "T:" summary line. Returns the thread; throws naming line_no on any malformed field.
CyclictestThread parse_t_line(std::string_view line, std::size_t line_no, double scale) {
  auto fail = [&](const std::string& why) -> Error {
    return Error("cyclictest text: line " + std::to_string(line_no) + ": " + why + ": " +
                 quote(line));
  };
  TLineCursor c{trim(line)};
  c.s.remove_prefix(2);  // "T:"
  CyclictestThread th;
  auto idx = to_long(c.take_number());
  if (!idx || *idx < 0 || *idx > 1'000'000) throw fail("bad thread number");
  th.index = static_cast<int>(*idx);
  c.skip_ws();
  if (!c.s.empty() && c.s.front() == '(') {
    c.s.remove_prefix(1);
    auto tid = to_long(c.take_number());
    c.skip_ws();
    if (!tid || c.s.empty() || c.s.front() != ')') throw fail("bad thread id");
    c.s.remove_prefix(1);
    th.tid = *tid;
  }
  bool have_c = false;
  while (true) {
    c.skip_ws();
    if (c.s.empty()) break;
    std::size_t colon = c.s.find(':');
    if (colon == std::string_view::npos || colon == 0 || colon > 8)
      throw fail("expected Key:value");
    std::string_view key = c.s.substr(0, colon);
    c.s.remove_prefix(colon + 1);
    std::string_view num = c.take_number();
    if (num.empty()) throw fail("no number after \"" + std::string(key) + ":\"");
    auto v = to_double(num);
    if (!v || *v < 0) throw fail("bad value for \"" + std::string(key) + ":\"");
    // Casting a double outside the target type's range is undefined behaviour (UBSan found it
    // with a fuzzed "P:1e30"): no real priority or interval comes near these bounds.
    if ((key == "P" && *v > 1e6) || (key == "I" && *v > 1e15))
      throw fail("value out of range for \"" + std::string(key) + ":\"");
    if (key == "P") {
      th.prio = static_cast<int>(*v);
    } else if (key == "I") {
      th.interval_us = static_cast<long>(*v);
    } else if (key == "C") {
      auto cycles = to_long(num);
      if (!cycles) throw fail("bad cycle count");
      th.cycles = *cycles;
      have_c = true;
    }
    for (const auto& [name, field] : kTLatencies)
      if (key == name) th.*field = *v * scale;
    // Other keys (SMI:, ...) are accepted and ignored.
  }
  if (!have_c) throw fail("no \"C:\" field");
  if (th.cycles == 0) {
    // 0 cycles: cyclictest prints its initial Min 1000000 and zeros, which are not samples.
    for (const auto& latency : kTLatencies) (th.*latency.second).reset();
  } else if (!th.min_us || !th.avg_us || !th.max_us) {
    throw fail("missing Min:, Avg: or Max:");
  }
  return th;
}

// "# Min Latencies: 00018 00008" -> one number per thread.
std::vector<long> hist_columns(std::string_view rest, std::string_view line, std::size_t line_no) {
  std::vector<long> out;
  for (auto tok : split_ws(rest)) {
    auto v = to_long(tok);
    if (!v || *v < 0)
      throw Error("cyclictest text: line " + std::to_string(line_no) + ": bad number " +
                  quote(tok) + " in " + quote(line));
    out.push_back(*v);
  }
  return out;
}

// What the lines of a text output hold, before threads are assembled.
struct TextScan {
  std::map<int, CyclictestThread> threads;           // from "T:" lines
  std::map<std::string, std::vector<long>> summary;  // "Min", "Avg", "Max", "Overflows", "Total"
  std::map<int, std::vector<long>> hist_rows;        // bucket -> count per thread
  bool in_histogram = false;
};

// One "#" comment line: "# Histogram" or a summary row; other comments ("/dev/cpu_dma_latency
// set to 0us", "Thread 0: ...") are ignored.
void scan_comment(std::string_view line, std::size_t line_no, TextScan& scan) {
  std::string_view body = trim(line.substr(1));
  if (body == "Histogram") {
    scan.in_histogram = true;
    return;
  }
  static const std::pair<std::string_view, const char*> keys[] = {
      {"Total:", "Total"},
      {"Min Latencies:", "Min"},
      {"Avg Latencies:", "Avg"},
      {"Max Latencies:", "Max"},
      {"Histogram Overflows:", "Overflows"}};
  for (auto [prefix, name] : keys)
    if (body.substr(0, prefix.size()) == prefix)
      scan.summary[name] = hist_columns(body.substr(prefix.size()), line, line_no);
}

// Reads one trimmed, non-empty line into scan; false when the line is not recognised.
bool scan_line(std::string_view line, std::size_t line_no, double scale, TextScan& scan,
               CyclictestResult& r) {
  if (line.substr(0, 2) == "T:") {
    auto th = parse_t_line(line, line_no, scale);
    if (scan.threads.count(th.index))
      r.notes.push_back("thread " + std::to_string(th.index) + " repeated at line " +
                        std::to_string(line_no) + "; using the later line");
    scan.threads[th.index] = std::move(th);
    return true;
  }
  if (line.front() == '#') {
    scan_comment(line, line_no, scan);
    return true;
  }
  if (line.substr(0, 7) == "policy:") return true;
  if (scan.in_histogram && std::isdigit(static_cast<unsigned char>(line.front()))) {
    auto cols = hist_columns(line, line, line_no);
    if (cols.size() < 2 || cols[0] > std::numeric_limits<int>::max())
      throw Error("cyclictest text: line " + std::to_string(line_no) +
                  ": histogram row needs a bucket and at least one count: " + quote(line));
    int bucket = static_cast<int>(cols[0]);
    cols.erase(cols.begin());
    scan.hist_rows[bucket] = std::move(cols);
    return true;
  }
  return false;
}

// Histogram-only output (-q -h) has no "T:" lines: thread t from the summary rows.
CyclictestThread thread_from_histogram(const TextScan& scan, std::size_t t, double scale) {
  auto col = [&](const char* name) -> std::optional<long> {
    auto it = scan.summary.find(name);
    if (it == scan.summary.end() || t >= it->second.size()) return std::nullopt;
    return it->second[t];
  };
  CyclictestThread th;
  th.index = static_cast<int>(t);
  // rt-tests 2.7 dropped "# Total:" (it restated the bucket sum; docs/sources.md [t5]): add the
  // rows.
  std::optional<long> total = col("Total");
  if (!total && !scan.hist_rows.empty()) {
    total = 0;
    for (const auto& [_, cols] : scan.hist_rows)
      if (t < cols.size()) *total += cols[t];
  }
  if (!total || !col("Overflows"))
    throw Error(
        "cyclictest text: histogram output without \"# Total:\" or histogram rows, or "
        "without \"# Histogram Overflows:\", for thread " +
        std::to_string(t));
  th.cycles = *total + *col("Overflows");
  if (th.cycles > 0) {
    if (auto v = col("Min")) th.min_us = *v * scale;
    if (auto v = col("Avg")) th.avg_us = *v * scale;
    if (auto v = col("Max")) th.max_us = *v * scale;
  }
  return th;
}

}  // namespace

namespace {

// Output without results: cyclictest's usage text (it refused its options, e.g. "-a 12" on a
// machine without CPU 12; docs/sources.md [t6]) is a configuration error, said so with the
// refusing line when the capture has one; anything else is named as not cyclictest output.
Error no_results_error(std::string_view text) {
  std::string refusal;
  bool usage = false;
  for (std::string_view line : text_lines(text)) {
    line = trim(line);
    usage = usage || line == "Usage:";
    if (refusal.empty() && (line.find("out of range") != std::string_view::npos ||
                            line.find("invalid") != std::string_view::npos))
      refusal = quote(line, 100);
  }
  if (usage)
    return Error(
        "cyclictest text: cyclictest printed its usage text, not results: it refused its "
        "options (a configuration error, no measurement)" +
        (refusal.empty() ? "" : "; it said " + refusal));
  return Error("cyclictest text: no \"T:\" summary lines and no histogram summary in " +
               quote(text, 200));
}

}  // namespace

CyclictestResult parse_cyclictest_text(std::string_view text, bool values_in_ns) {
  CyclictestResult r;
  r.format = "text";
  r.values_in_ns = values_in_ns;
  r.histogram_bucket_ns = values_in_ns ? 1 : 1000;
  const double scale = values_in_ns ? 1e-3 : 1.0;

  // Redrawn output: the final block starts after the last ESC; keep line numbers right.
  std::size_t first_line = 1;
  std::size_t esc = text.rfind('\x1b');
  if (esc != std::string_view::npos) {
    first_line += static_cast<std::size_t>(std::count(text.begin(), text.begin() + esc, '\n'));
    text = text.substr(esc + 1);
    r.notes.push_back("redrawn output: using the block after the last escape sequence (line " +
                      std::to_string(first_line) + ")");
  }

  TextScan scan;
  std::size_t skipped = 0;
  std::string first_skipped;
  auto lines = text_lines(text);
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const std::size_t line_no = first_line + i;
    std::string_view line = trim(lines[i]);
    // After an ESC the first line is the rest of the cursor-movement sequence ("[4A") followed
    // by the policy line.
    if ((i == 0 && esc != std::string_view::npos) || line.empty()) continue;
    if (scan_line(line, line_no, scale, scan, r)) continue;
    if (skipped++ == 0) {
      first_skipped = std::to_string(line_no) + ": " + quote(line, 100);
      r.first_skipped_line = line_no;
    }
  }
  if (skipped)
    r.notes.push_back("skipped " + std::to_string(skipped) +
                      " unrecognised line(s), first at line " + first_skipped);

  std::size_t hist_threads = 0;
  for (const auto& [_, cols] : scan.hist_rows) hist_threads = std::max(hist_threads, cols.size());
  for (const auto& [_, cols] : scan.summary) hist_threads = std::max(hist_threads, cols.size());
  if (scan.threads.empty())
    for (std::size_t t = 0; t < hist_threads; ++t)
      scan.threads[static_cast<int>(t)] = thread_from_histogram(scan, t, scale);
  if (scan.threads.empty()) throw no_results_error(text);
  for (auto& [idx, th] : scan.threads) {
    std::size_t col = static_cast<std::size_t>(idx);
    for (const auto& [bucket, cols] : scan.hist_rows)
      if (col < cols.size() && cols[col] > 0) th.histogram[bucket] = cols[col];
    if (auto it = scan.summary.find("Overflows");
        it != scan.summary.end() && col < it->second.size())
      th.overflows = it->second[col];
    if (!th.has_samples())
      r.notes.push_back("thread " + std::to_string(idx) + ": no samples (0 cycles)");
    r.threads.push_back(th);
  }
  return r;
}

CyclictestResult merge_cyclictest(const CyclictestResult& json, const CyclictestResult& text) {
  CyclictestResult r = json;
  std::map<int, const CyclictestThread*> by_index;
  for (const auto& t : text.threads) by_index[t.index] = &t;
  for (auto& th : r.threads) {
    auto it = by_index.find(th.index);
    if (it == by_index.end()) {
      r.notes.push_back("thread " + std::to_string(th.index) +
                        " is in the JSON but not in the text");
      continue;
    }
    const CyclictestThread& t = *it->second;
    if (t.cycles != th.cycles)
      r.notes.push_back("thread " + std::to_string(th.index) + ": JSON says " +
                        std::to_string(th.cycles) + " cycles, text says " +
                        std::to_string(t.cycles));
    if (!th.tid) th.tid = t.tid;
    if (!th.prio) th.prio = t.prio;
    if (!th.interval_us) th.interval_us = t.interval_us;
    if (!th.act_us && th.has_samples()) th.act_us = t.act_us;
    if (t.overflows) th.overflows = t.overflows;  // the text count is printed by cyclictest itself
    if (th.histogram.empty() && !t.histogram.empty()) th.histogram = t.histogram;
    by_index.erase(it);
  }
  for (const auto& [idx, _] : by_index)
    r.notes.push_back("thread " + std::to_string(idx) + " is in the text but not in the JSON");
  return r;
}

CyclictestHistogram merged_histogram(const CyclictestResult& result) {
  CyclictestHistogram h;
  h.bucket_ns = result.histogram_bucket_ns;
  for (const auto& t : result.threads) {
    if (t.histogram.empty() && !t.overflows.value_or(0)) continue;
    for (const auto& [b, n] : t.histogram) h.counts[b] += n;
    if (t.overflows) {
      h.overflows += *t.overflows;
    } else {
      h.overflows_known = false;
    }
  }
  return h;
}

double histogram_percentile(const std::map<int, long>& counts, double p, long overflows) {
  if (!(p > 0 && p <= 100))
    throw Error("histogram percentile: p must be in (0, 100], got " + std::to_string(p));
  if (overflows < 0) throw Error("histogram percentile: negative overflow count");
  long double total = overflows;
  for (const auto& [b, n] : counts) {
    if (n < 0) throw Error("histogram percentile: negative count in bucket " + std::to_string(b));
    total += n;
  }
  if (total <= 0) throw Error("histogram percentile: the histogram is empty");
  // p/100 is inexact in binary (99.9/100 * 6000 is 5994.0000000001): allow for rounding so that
  // an exact rank is not pushed to the next sample.
  long double x = static_cast<long double>(p) / 100 * total;
  long double k = std::ceil(x - 1e-9L * std::max<long double>(1, x));
  if (k < 1) k = 1;
  long double cum = 0;
  for (const auto& [b, n] : counts) {
    cum += n;
    if (cum >= k) return b;
  }
  return std::numeric_limits<double>::infinity();
}

Metrics cyclictest_metrics(const CyclictestResult& result, std::vector<std::string>* notes) {
  auto note = [&](std::string s) {
    if (notes) notes->push_back(std::move(s));
  };
  Metrics m;
  for (const auto& t : result.threads) {
    if (!t.has_samples()) {
      note("cyclictest thread " + std::to_string(t.index) + ": no samples");
      continue;
    }
    if (t.min_us) add_metric_value(m, "latency_min_us", "us", true, "min", *t.min_us);
    if (t.avg_us) add_metric_value(m, "latency_avg_us", "us", true, "mean", *t.avg_us);
    if (t.max_us) add_metric_value(m, "latency_max_us", "us", true, "max", *t.max_us);
  }
  for (const char* name : {"latency_min_us", "latency_avg_us", "latency_max_us"})
    if (!m.count(name))
      note(std::string("cyclictest: ") + name + " omitted: no thread has a value");
  CyclictestHistogram h = merged_histogram(result);
  if (!h.counts.empty()) {
    for (auto [p, name] : {std::pair{99.0, "latency_p99_us"}, std::pair{99.9, "latency_p999_us"}}) {
      if (!h.overflows_known) {
        note(std::string("cyclictest: ") + name + " omitted: histogram overflow count unknown");
        continue;
      }
      double b = histogram_percentile(h.counts, p, h.overflows);
      if (!std::isfinite(b)) {
        note(std::string("cyclictest: ") + name + " omitted: beyond the histogram range (" +
             std::to_string(h.overflows) + " overflows)");
        continue;
      }
      add_metric_value(m, name, "us", true, "max", b * h.bucket_ns / 1000.0);
    }
  }
  return m;
}

std::map<std::string, std::string> cyclictest_versions(const CyclictestResult& result,
                                                       std::vector<std::string>* notes) {
  return rt_tests_versions("cyclictest", result.version, notes);
}

}  // namespace isolab

// oslat's --json file (parse/oslat.h has the format, parse/oslat_json.h the contract).
#include "parse/oslat_json.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>

#include "base/error.h"
#include "base/json_text.h"
#include "parse/oslat_detail.h"
#include "parse/rt_tests.h"
#include "parse/text_util.h"

namespace isolab {

using nlohmann::json;
using parse_detail::quote;
using parse_detail::split_ws;
using parse_detail::to_long;

namespace {

constexpr std::size_t kMaxOslatJsonBytes = 64u << 20;
constexpr std::string_view kCmdlineKey = "\"cmdline:\"";
constexpr std::string_view kVersionKey = "\"rt_test_version:\"";

[[noreturn]] void fail(const std::string& why) { throw Error("oslat json: " + why); }

// ---- the document and its raw cmdline (rt_write_json(): argv joined by spaces, unescaped,
// always followed by the "rt_test_version:" member)

// Where the raw cmdline value lies: [open, close) between its quotes; nullopt when the text
// does not have rt_write_json()'s layout.
std::optional<std::pair<std::size_t, std::size_t>> cmdline_span(std::string_view text) {
  const std::size_t key = text.find(kCmdlineKey);
  const std::size_t next = text.rfind(kVersionKey);
  if (key == std::string_view::npos || next == std::string_view::npos || next < key)
    return std::nullopt;
  std::size_t open = text.find('"', key + kCmdlineKey.size());
  std::size_t close = text.find_last_not_of(" \t\r\n", next - 1);
  if (open == std::string_view::npos || open >= next || close == std::string_view::npos ||
      text[close] != ',')
    return std::nullopt;
  close = text.find_last_not_of(" \t\r\n", close - 1);
  if (close == std::string_view::npos || close <= open || text[close] != '"') return std::nullopt;
  return std::pair{open + 1, close};
}

// The text with the cmdline value re-escaped; nullopt without rt_write_json()'s layout.
std::optional<std::string> with_cmdline_escaped(std::string_view text) {
  const auto span = cmdline_span(text);
  if (!span) return std::nullopt;
  const std::string value(text.substr(span->first, span->second - span->first));
  return std::string(text.substr(0, span->first - 1)) + json_text(json(value)) +
         std::string(text.substr(span->second + 1));
}

json parse_or_discarded(const std::string& text) {
  try {
    return json::parse(text, nullptr, false);
  } catch (const json::out_of_range& e) {  // a number no double holds, e.g. 1e400
    fail(std::string("a value is out of range: ") + e.what());
  }
}

// "line L column C near ..." of the byte where nlohmann stopped.
std::string where_invalid(const std::string& text) {
  try {
    const json unused = json::parse(text);
  } catch (const json::parse_error& e) {
    const std::size_t at = std::min<std::size_t>(e.byte > 0 ? e.byte - 1 : 0, text.size());
    const std::size_t line = 1 + static_cast<std::size_t>(std::count(
                                     text.begin(), text.begin() + static_cast<long>(at), '\n'));
    const std::size_t bol = text.rfind('\n', at == 0 ? 0 : at - 1);
    const std::size_t col = at - (bol == std::string::npos ? 0 : bol + 1) + 1;
    return "line " + std::to_string(line) + " column " + std::to_string(col) + " near " +
           quote(std::string_view(text).substr(at > 40 ? at - 40 : 0, 80));
  } catch (const json::exception& e) {
    return e.what();
  }
  return "an unknown place";
}

// The document: as written, else with its cmdline re-escaped (with a note).
json document(std::string_view text, std::vector<std::string>& notes) {
  if (text.size() > kMaxOslatJsonBytes)
    fail(std::to_string(text.size()) + " bytes is more than the 64 MiB limit");
  const std::string clean = rt_tests_null_nonfinite(text);
  json doc = parse_or_discarded(clean);
  if (doc.is_discarded()) {
    if (auto fixed = with_cmdline_escaped(clean)) {
      doc = parse_or_discarded(*fixed);
      if (!doc.is_discarded())
        notes.emplace_back(
            "cmdline: oslat wrote it unescaped and it broke the JSON; read with it re-escaped");
    }
  }
  if (doc.is_discarded()) fail("not valid JSON at " + where_invalid(clean));
  if (!doc.is_object()) fail("the top level is not an object");
  return doc;
}

// ---- typed fields

std::string shown(const json& j) { return quote(json_text(j), 80); }

// An integer >= 0 (a whole float too); -1 when it is above max.
long long as_count(const json& j, const std::string& field, long long max) {
  const bool integral = j.is_number_integer() ||
                        (j.is_number_float() && std::floor(j.get<double>()) == j.get<double>());
  if (!integral) fail("field \"" + field + "\" must be an integer, got " + shown(j));
  if (!j.is_number_unsigned() && j.get<double>() < 0)
    fail("field \"" + field + "\" must not be negative, got " + shown(j));
  if (j.get<double>() > static_cast<double>(max)) return -1;
  return j.is_number_float() ? static_cast<long long>(j.get<double>()) : j.get<long long>();
}

long long bounded(const json& j, const std::string& field, long long max) {
  const long long v = as_count(j, field, max);
  if (v < 0) fail("field \"" + field + "\" is out of range: " + shown(j));
  return v;
}

std::optional<double> number(const json& j, const std::string& field) {
  if (j.is_null()) return std::nullopt;  // nan
  if (!j.is_number() || j.get<double>() < 0)
    fail("field \"" + field + "\" must be a number of at least 0, got " + shown(j));
  return j.get<double>();
}

const json& member(const json& obj, const std::string& key, const std::string& base) {
  const auto it = obj.find(key);
  if (it == obj.end()) fail("field \"" + base + key + "\" is missing");
  return *it;
}

// ---- what the command line says (getopt_long over oslat's options, "b:Bc:C:g:D:f:hm:qsw:W:T:vz")

struct CmdlineOptions {
  std::optional<long long> width_ns;  // -W/--bucket-width; nullopt when absent (1000 ns)
  std::optional<long long> buckets;   // -b/--bucket-size
  bool bias = false;                  // -B/--bias
  bool readable = true;               // an option value was not a number
};

struct LongOption {
  std::string_view name;
  char id;  // the short option it stands for, or '-' for one without
  bool arg;
};

constexpr LongOption kLongOptions[] = {{"bucket-size", 'b', true},
                                       {"bucket-width", 'W', true},
                                       {"cpu-list", 'c', true},
                                       {"cpu-main-thread", 'C', true},
                                       {"resctrl-group", 'g', true},
                                       {"duration", 'D', true},
                                       {"json", '-', true},
                                       {"rtprio", 'f', true},
                                       {"help", 'h', false},
                                       {"trace-threshold", 'T', true},
                                       {"workload", 'w', true},
                                       {"workload-mem", 'm', true},
                                       {"bias", 'B', false},
                                       {"quiet", 'q', false},
                                       {"single-preheat", 's', false},
                                       {"zero-omit", 'z', false},
                                       {"version", 'v', false}};

constexpr std::string_view kShortWithArg = "bcCgDfmwWT";

// The long option a "--name" names: exactly, or as the only option it is a prefix of.
const LongOption* long_option(std::string_view name) {
  const LongOption* found = nullptr;
  int prefixes = 0;
  for (const LongOption& o : kLongOptions) {
    if (o.name == name) return &o;
    if (!name.empty() && o.name.starts_with(name)) found = &o, ++prefixes;
  }
  return prefixes == 1 ? found : nullptr;
}

void take(char id, std::string_view value, CmdlineOptions& o) {
  if (id != 'b' && id != 'W' && id != 'B') return;
  if (id == 'B') {
    o.bias = true;
    return;
  }
  const std::size_t digits = value.find_first_not_of("0123456789");
  const auto v = to_long(value.substr(0, digits));  // strtol: the leading digits
  if (!v || *v <= 0) {
    o.readable = false;
    return;
  }
  if (id == 'b') o.buckets = *v;
  if (id == 'W') o.width_ns = *v;
}

CmdlineOptions cmdline_options(std::string_view cmdline) {
  CmdlineOptions o;
  const auto words = split_ws(cmdline);
  for (std::size_t i = 1; i < words.size(); ++i) {
    const std::string_view w = words[i];
    if (w == "--") break;
    const auto next = [&]() { return i + 1 < words.size() ? words[++i] : std::string_view(); };
    if (w.starts_with("--")) {
      const std::size_t eq = w.find('=');
      const LongOption* opt = long_option(w.substr(2, eq == std::string_view::npos ? eq : eq - 2));
      if (!opt) continue;
      std::string_view value;
      if (opt->arg) value = eq == std::string_view::npos ? next() : w.substr(eq + 1);
      take(opt->id, value, o);
    } else if (w.size() > 1 && w[0] == '-') {
      for (std::size_t k = 1; k < w.size(); ++k) {
        if (kShortWithArg.find(w[k]) == std::string_view::npos) {
          take(w[k], "", o);
          continue;
        }
        take(w[k], k + 1 < w.size() ? w.substr(k + 1) : next(), o);
        break;
      }
    }
  }
  return o;
}

// ---- the threads

OslatThread read_thread(const std::string& key, const json& t, bool ns) {
  const std::string base = "thread/" + key + "/";
  const auto idx = to_long(key);
  if (!idx || *idx < 0 || *idx > 1'000'000) fail("thread key " + quote(key) + " is not a number");
  if (!t.is_object()) fail("field \"thread/" + key + "\" is not an object");
  OslatThread th;
  th.index = static_cast<int>(*idx);
  th.cpu = static_cast<int>(bounded(member(t, "cpu", base), base + "cpu", 1'000'000));
  if (auto f = t.find("freq"); f != t.end())
    th.counter_mhz = static_cast<long>(bounded(*f, base + "freq", 1'000'000'000));
  const double scale = ns ? 1e-3 : 1.0;
  for (auto [name, slot] : {std::pair{"min", &th.min_us}, std::pair{"max", &th.max_us}}) {
    const json& v = member(t, name, base);
    if (v.is_null()) continue;
    const long long x = as_count(v, base + name, std::numeric_limits<long long>::max() / 2);
    if (x >= 0) *slot = static_cast<double>(x) * scale;  // 2^64-1: oslat's "no minimum yet"
  }
  th.avg_us = number(member(t, "avg", base), base + "avg");
  if (auto d = t.find("duration"); d != t.end()) th.duration_s = number(*d, base + "duration");
  const json& h = member(t, "histogram", base);
  if (!h.is_object()) fail("field \"" + base + "histogram\" must be an object");
  for (const auto& [label, count] : h.items()) {
    const auto ns_label = oslat_detail::label_ns(label);
    if (!ns_label) fail("bucket " + quote(label) + " in \"" + base + "histogram\" is not a label");
    const long long n = bounded(count, base + "histogram/" + label, 1LL << 62);
    if (n > 0) th.buckets[*ns_label] += n;
  }
  return th;
}

// The labels' unit, checked against the command line's bucket width when it has one.
bool unit_is_ns(const json& threads, const CmdlineOptions& o, bool cmdline_known) {
  bool decimals = false, any = false;
  for (const auto& [key, t] : threads.items())
    if (auto h = t.find("histogram"); t.is_object() && h != t.end() && h->is_object())
      for (const auto& [label, _] : h->items()) {
        any = true;
        decimals = decimals || oslat_detail::label_has_decimals(label);
      }
  const bool cmdline_ns = o.width_ns && *o.width_ns % 1000 != 0;
  if (any && cmdline_known && decimals != cmdline_ns)
    fail("the histogram labels are " + std::string(decimals ? "" : "not ") +
         "in ns but the command line gives a bucket width of " +
         std::to_string(o.width_ns.value_or(1000)) + " ns");
  return any ? decimals : cmdline_ns;
}

// The width and the last bucket: from the command line, else from the labels.
void read_layout(OslatResult& r, const CmdlineOptions& o, bool cmdline_known, bool ns) {
  if (cmdline_known) {
    const long long width = o.width_ns.value_or(1000);
    const long long buckets =
        o.buckets.value_or(ns && width < 1000 ? 32LL * 1000 / width : 32LL);  // parse_options()
    r.bucket_width_ns = width;
    if (!o.bias) r.last_bucket_ns = buckets * width;
    return;
  }
  std::set<long long> labels;
  for (const auto& t : r.threads)
    for (const auto& [label, _] : t.buckets) labels.insert(label);
  r.bucket_width_ns = oslat_detail::width_from_labels(labels, false, ns, "oslat json");
}

void read_header(const json& doc, OslatResult& r) {
  if (auto c = doc.find("cmdline:"); c != doc.end() && c->is_string())
    r.cmdline = c->get<std::string>();
  if (auto v = doc.find("rt_test_version:"); v != doc.end()) {
    if (!v->is_string()) fail("field \"rt_test_version:\" must be a string, got " + shown(*v));
    r.version = v->get<std::string>();
  }
  if (auto rc = doc.find("return_code"); rc != doc.end())
    r.return_code = static_cast<int>(bounded(*rc, "return_code", 255));
}

}  // namespace

OslatResult parse_oslat_json(std::string_view text) {
  OslatResult r;
  r.format = "json";
  const json doc = document(text, r.notes);
  read_header(doc, r);
  const json& threads = member(doc, "thread", "");
  if (!threads.is_object()) fail("field \"thread\" must be an object keyed by thread number");
  const CmdlineOptions opts = cmdline_options(r.cmdline);
  const bool cmdline_known = !r.cmdline.empty() && opts.readable;
  if (!r.cmdline.empty() && !opts.readable)
    r.notes.emplace_back("cmdline: a bucket option is not a number; the labels decide the layout");
  const bool ns = unit_is_ns(threads, opts, cmdline_known);
  for (const auto& [key, t] : threads.items()) r.threads.push_back(read_thread(key, t, ns));
  if (auto n = doc.find("num_threads");
      n != doc.end() &&
      bounded(*n, "num_threads", 1'000'000) != static_cast<long long>(r.threads.size()))
    fail("num_threads is " + shown(*n) + " but \"thread\" has " + std::to_string(r.threads.size()) +
         " entries");
  if (r.threads.empty()) fail("\"thread\" is empty: no CPU was measured");
  oslat_detail::finish_threads(r, "oslat json");
  for (const auto& t : r.threads)  // oslat's initial 2^64-1 and 0 stand only where no gap was
    if (t.has_samples() && (!t.min_us || !t.max_us))
      fail("thread " + std::to_string(t.index) + " has samples but its min or max is out of range");
  read_layout(r, opts, cmdline_known, ns);
  oslat_detail::check_values(r, ns);
  return r;
}

}  // namespace isolab

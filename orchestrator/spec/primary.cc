#include "spec/primary.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "base/error.h"
#include "base/json_text.h"
#include "cmdline/cpulist.h"

namespace isolab {

std::string cpu_row_name(const std::string& metric, const std::vector<unsigned>& cpus) {
  if (cpus.empty()) return metric;
  CpuSet set(*std::max_element(cpus.begin(), cpus.end()) + 1);
  for (unsigned c : cpus) set.set(c);
  return metric + "[cpu" + set.to_list() + "]";
}

std::string PrimaryMetric::row_name() const { return cpu_row_name(metric, cpus); }

namespace {

// A CPU list of explicit numbers ("5", "5-7", "5,7"): sorted CPUs. Throws isolab::Error.
std::vector<unsigned> explicit_cpus(const std::string& text) {
  const CpuListParse parsed = try_parse_cpulist(text, kMaxCpus);
  if (!parsed.ok()) throw Error(parsed.message);
  if (parsed.uses_last) throw Error("give the CPUs by number, not 'N' or 'all'");
  if (parsed.set.empty()) throw Error("the CPU list is empty");
  return parsed.set.cpus();
}

bool bad_is_higher(const std::string& bad) {
  if (bad == "higher") return true;
  if (bad == "lower") return false;
  throw Error("must be \"higher\" or \"lower\" (the direction of a regression), got \"" + bad +
              "\"");
}

// "detect": {"change": C > 0, "baseline": B >= 0}.
DetectTarget detect_entry(const nlohmann::json& d, const std::string& p) {
  if (!d.is_object())
    throw SpecError(p, "must be an object {\"change\": C, \"baseline\": B} in the metric's unit");
  for (const auto& [key, v] : d.items())
    if (key != "change" && key != "baseline")
      throw SpecError(p + "/" + json_pointer_token(key),
                      "unknown detect field (known: baseline, change)");
  auto number = [&](const char* key, bool positive) {
    const auto it = d.find(key);
    const std::string kp = p + "/" + key;
    if (it == d.end() || !it->is_number() || !std::isfinite(it->get<double>()) ||
        (positive ? it->get<double>() <= 0 : it->get<double>() < 0))
      throw SpecError(kp, std::string(positive ? "must be a number > 0" : "must be a number >= 0") +
                              " in the metric's unit, got " +
                              (it == d.end() ? std::string("(absent)") : json_text(*it)));
    return it->get<double>();
  };
  return {number("change", true), number("baseline", false)};
}

PrimaryMetric primary_entry(const nlohmann::json& e, const std::string& p) {
  if (!e.is_object()) throw SpecError(p, "a primary metric must be an object");
  static const std::set<std::string> known = {"metric",        "cpus",   "bad",
                                              "threshold_pct", "detect", "test"};
  for (const auto& [key, v] : e.items())
    if (!known.count(key))
      throw SpecError(p + "/" + json_pointer_token(key),
                      "unknown primary field (known: bad, cpus, detect, metric, test, "
                      "threshold_pct)");
  PrimaryMetric m;
  m.source = p;
  const auto metric = e.find("metric");
  if (metric == e.end() || !metric->is_string() || metric->get<std::string>().empty())
    throw SpecError(p + "/metric", "must be a metric name (a non-empty string)");
  m.metric = metric->get<std::string>();
  const auto bad = e.find("bad");
  if (bad == e.end() || !bad->is_string())
    throw SpecError(p + "/bad", "must be \"higher\" or \"lower\" (the direction of a regression)");
  try {
    m.higher_is_bad = bad_is_higher(bad->get<std::string>());
  } catch (const Error& err) {
    throw SpecError(p + "/bad", err.what());
  }
  if (const auto c = e.find("cpus"); c != e.end() && !c->is_null()) {
    if (!c->is_string())
      throw SpecError(p + "/cpus", "must be a CPU list such as \"5\" or \"5-7\"");
    try {
      m.cpus = explicit_cpus(c->get<std::string>());
    } catch (const Error& err) {
      throw SpecError(p + "/cpus", err.what());
    }
  }
  if (const auto t = e.find("threshold_pct"); t != e.end() && !t->is_null()) {
    if (!t->is_number() || !std::isfinite(t->get<double>()) || t->get<double>() < 0)
      throw SpecError(p + "/threshold_pct", "must be a percentage >= 0, got " + json_text(*t));
    m.threshold_pct = t->get<double>();
  }
  if (const auto d = e.find("detect"); d != e.end() && !d->is_null())
    m.detect = detect_entry(*d, p + "/detect");
  if (const auto t = e.find("test"); t != e.end() && !t->is_null()) {
    if (*t != "values" && *t != "ranks")
      throw SpecError(p + "/test",
                      "must be \"values\" (the metric kind's own test) or \"ranks\" (midranks), "
                      "got " +
                          json_text(*t));
    m.ranks = *t == "ranks";
  }
  return m;
}

}  // namespace

std::vector<PrimaryMetric> primary_from_json(const nlohmann::json& v, const std::string& pointer) {
  if (!v.is_array() || v.empty() || v.size() > kMaxPrimary)
    throw SpecError(pointer, "must be an array of 1 to " + std::to_string(kMaxPrimary) +
                                 " primary metrics (the exit status rests on them)");
  std::vector<PrimaryMetric> out;
  std::set<std::string> rows;
  for (std::size_t i = 0; i < v.size(); ++i) {
    const std::string p = pointer + "/" + std::to_string(i);
    out.push_back(primary_entry(v[i], p));
    if (!rows.insert(out.back().row_name()).second)
      throw SpecError(p, "declares " + out.back().row_name() + " a second time");
  }
  return out;
}

PrimaryMetric primary_from_argument(const std::string& arg) {
  const std::string where = "--primary '" + arg + "': ";
  const auto colon = arg.rfind(':');
  if (colon == std::string::npos)
    throw Error(where + "expected METRIC[@CPUS]:higher|lower (the direction of a regression)");
  PrimaryMetric m;
  m.source = "--primary " + arg;
  try {
    m.higher_is_bad = bad_is_higher(arg.substr(colon + 1));
    std::string metric = arg.substr(0, colon);
    if (const auto at = metric.rfind('@'); at != std::string::npos) {
      m.cpus = explicit_cpus(metric.substr(at + 1));
      metric.resize(at);
    }
    if (metric.empty()) throw Error("the metric name is empty");
    m.metric = metric;
  } catch (const Error& e) {
    throw Error(where + e.what());
  }
  return m;
}

}  // namespace isolab

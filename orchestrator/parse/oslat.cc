// The oslat result's shared parts: bucket labels, the histogram as result.json stores it, the
// metrics and the version (the readers are oslat_text.cc and oslat_json.cc).
#include "parse/oslat.h"

#include <algorithm>
#include <numeric>

#include "base/error.h"
#include "parse/oslat_detail.h"
#include "parse/rt_tests.h"
#include "parse/text_util.h"

namespace isolab {

namespace oslat_detail {

std::optional<long long> label_ns(std::string_view label) {
  const std::size_t dot = label.find('.');
  const std::string_view whole = label.substr(0, dot);
  const std::string_view frac = dot == std::string_view::npos ? "" : label.substr(dot + 1);
  const auto digits = [](std::string_view s) {
    return std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
  };
  if (whole.empty() || whole.size() > 12 || !digits(whole)) return std::nullopt;
  if (dot != std::string_view::npos && (frac.size() != 3 || !digits(frac))) return std::nullopt;
  const long long us = std::stoll(std::string(whole));
  return us * 1000 + (frac.empty() ? 0 : std::stoll(std::string(frac)));
}

bool label_has_decimals(std::string_view label) {
  return label.find('.') != std::string_view::npos;
}

std::optional<long long> width_from_labels(const std::set<long long>& labels, bool contiguous,
                                           bool decimals, const std::string& what) {
  if (labels.size() < 2) return std::nullopt;
  long long first = 0, gcd = 0;
  for (auto it = std::next(labels.begin()); it != labels.end(); ++it) {
    const long long step = *it - *std::prev(it);
    if (first == 0) first = step;
    if (contiguous && step != first)
      throw Error(what + ": bucket labels " + std::to_string(*std::prev(it)) + " ns and " +
                  std::to_string(*it) + " ns do not rise by one width (" + std::to_string(first) +
                  " ns)");
    gcd = std::gcd(gcd, step);
  }
  if (contiguous) return first;
  if (!decimals && gcd == 1000) return 1000;
  return std::nullopt;
}

void finish_threads(OslatResult& r, const std::string& what) {
  std::sort(r.threads.begin(), r.threads.end(),
            [](const OslatThread& a, const OslatThread& b) { return a.index < b.index; });
  std::map<int, int> by_cpu;
  for (auto& t : r.threads) {
    t.samples = 0;
    for (const auto& [label, n] : t.buckets) t.samples += n;
    const auto [it, fresh] = by_cpu.emplace(t.cpu, t.index);
    if (!fresh)
      throw Error(what + ": CPU " + std::to_string(t.cpu) + " is measured by threads " +
                  std::to_string(it->second) + " and " + std::to_string(t.index));
  }
}

bool top_bucket_overflows(const OslatResult& r, const OslatThread& t) {
  if (t.buckets.empty()) return false;
  const long long top = t.buckets.rbegin()->first;
  if (r.last_bucket_ns) return top == *r.last_bucket_ns;
  return !t.max_us || *t.max_us * 1000 >= static_cast<double>(top);
}

void check_values(OslatResult& r, bool ns_width) {
  bool any_overflow = false;
  for (auto& t : r.threads) {
    const std::string name =
        "oslat thread " + std::to_string(t.index) + " (CPU " + std::to_string(t.cpu) + ")";
    if (!t.has_samples()) {
      t.min_us.reset(), t.avg_us.reset(), t.max_us.reset();
      continue;
    }
    const bool overflow = oslat_detail::top_bucket_overflows(r, t);
    any_overflow = any_overflow || overflow;
    if (ns_width && overflow && t.avg_us) {
      t.avg_us.reset();
      r.notes.push_back(name +
                        ": avg left out: with a sub-us bucket width oslat adds the gaps beyond "
                        "its last bucket to the average in ns, not us (calculate())");
    }
  }
  if (any_overflow && r.threads.size() > 1)
    r.notes.emplace_back(
        "oslat's average of every thread after the first includes the first thread's sum of the "
        "gaps beyond the last bucket, not its own (calculate() reads thread 0's overflow_sum)");
}

}  // namespace oslat_detail

namespace {

void note(std::vector<std::string>* notes, std::string s) {
  if (notes) notes->push_back(std::move(s));
}

std::string thread_name(const OslatThread& t) {
  return "oslat thread " + std::to_string(t.index) + " (CPU " + std::to_string(t.cpu) + ")";
}

}  // namespace

std::optional<OslatHistogram> oslat_histogram(const OslatResult& r, const OslatThread& t,
                                              std::vector<std::string>* notes) {
  if (t.buckets.empty()) return std::nullopt;
  if (!r.bucket_width_ns) {
    note(notes, thread_name(t) +
                    ": histogram not kept: the output does not say the bucket width (the labels "
                    "of a sparse histogram leave it open)");
    return std::nullopt;
  }
  OslatHistogram h;
  h.bucket_ns = *r.bucket_width_ns;
  const bool whole_us =
      h.bucket_ns % 1000 == 0 && std::all_of(t.buckets.begin(), t.buckets.end(),
                                             [](const auto& b) { return b.first % 1000 == 0; });
  h.unit = whole_us ? "us" : "ns";
  const long long per_unit = whole_us ? 1000 : 1;
  const bool overflow = oslat_detail::top_bucket_overflows(r, t);
  if (overflow && !r.last_bucket_ns)
    note(notes, thread_name(t) +
                    ": the highest non-empty bucket is kept as overflows: the output does not say "
                    "whether it is the last one (which also holds every longer gap)");
  for (const auto& [label, n] : t.buckets) {
    if (overflow && label == t.buckets.rbegin()->first) {
      h.overflows = n;
      continue;
    }
    const long long lower = label - h.bucket_ns;
    if (lower < 0)
      throw Error(thread_name(t) + ": bucket " + std::to_string(label) +
                  " ns is narrower than the bucket width of " + std::to_string(h.bucket_ns) +
                  " ns");
    h.counts[lower / per_unit] += n;
  }
  return h;
}

nlohmann::json oslat_histograms_json(const OslatResult& r, const std::string& name,
                                     std::vector<std::string>* notes) {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& t : r.threads) {
    const auto h = oslat_histogram(r, t, notes);
    if (!h) continue;
    nlohmann::json counts = nlohmann::json::object();
    for (const auto& [bucket, n] : h->counts) counts[std::to_string(bucket)] = n;
    out[name + "[cpu" + std::to_string(t.cpu) + "]"] = {{"unit", h->unit},
                                                        {"bucket_ns", h->bucket_ns},
                                                        {"counts", counts},
                                                        {"overflows", h->overflows}};
  }
  return out;
}

namespace {

using Field = std::optional<double> OslatThread::*;

struct MetricRow {
  const char* name;
  const char* aggregate;
  Field field;
};

constexpr MetricRow kMetrics[] = {{"oslat_min_us", "min", &OslatThread::min_us},
                                  {"oslat_avg_us", "mean", &OslatThread::avg_us},
                                  {"oslat_max_us", "max", &OslatThread::max_us}};

}  // namespace

Metrics oslat_metrics(const OslatResult& r, std::vector<std::string>* notes) {
  Metrics m;
  for (const auto& t : r.threads)
    if (!t.has_samples()) note(notes, thread_name(t) + ": no samples");
  for (const MetricRow& row : kMetrics) {
    MetricPerCpu pc;
    for (const auto& t : r.threads) {
      pc.cpus.push_back(t.cpu);
      pc.slots.push_back(t.has_samples() ? t.*row.field : std::nullopt);
    }
    if (auto metric = make_per_cpu_metric("us", true, row.aggregate, std::move(pc)))
      m[row.name] = std::move(*metric);
    else
      note(notes, std::string("oslat: ") + row.name + " omitted: no thread has a value");
  }
  return m;
}

std::map<std::string, std::string> oslat_versions(const OslatResult& r,
                                                  std::vector<std::string>* notes) {
  if (notes && (r.version == "2.50" || r.version == "2.60"))
    notes->push_back("oslat " + r.version.substr(0, 3) +
                     " rounds every gap up to the next unit before counting it (insert_bucket(); "
                     "fixed in 2.7): its buckets, min and max are one unit (1 us, or 1 ns with a "
                     "sub-us bucket width) high");
  return rt_tests_versions("oslat", r.version, notes);
}

}  // namespace isolab

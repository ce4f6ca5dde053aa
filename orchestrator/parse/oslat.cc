// The oslat result's shared parts: bucket labels, the histogram as result.json stores it, the
// metrics and the version (the readers are oslat_text.cc and oslat_json.cc).
#include "parse/oslat.h"

#include <algorithm>
#include <numeric>

#include "base/error.h"
#include "parse/rt_tests.h"
#include "parse/text_util.h"

namespace isolab {

bool top_bucket_overflows(const OslatResult& r, const OslatThread& t) {
  if (t.buckets.empty()) return false;
  const long long top = t.buckets.rbegin()->first;
  if (r.last_bucket_ns) return top == *r.last_bucket_ns;
  return !t.max_us || *t.max_us * 1000 >= static_cast<double>(top);
}

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
  const bool overflow = top_bucket_overflows(r, t);
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

using ThreadField = std::optional<double> OslatThread::*;

struct MetricRow {
  const char* name;
  const char* aggregate;
  ThreadField field;
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

// The helpers shared by the oslat parsers (parse/oslat_detail.h).
#include "parse/oslat_detail.h"

#include <algorithm>
#include <numeric>

#include "base/error.h"
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

void check_values(OslatResult& r, bool ns_width) {
  bool any_overflow = false;
  for (auto& t : r.threads) {
    const std::string name =
        "oslat thread " + std::to_string(t.index) + " (CPU " + std::to_string(t.cpu) + ")";
    if (!t.has_samples()) {
      t.min_us.reset(), t.avg_us.reset(), t.max_us.reset();
      continue;
    }
    const bool overflow = top_bucket_overflows(r, t);
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

}  // namespace isolab

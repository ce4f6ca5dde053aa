#include "results/histogram.h"

#include <algorithm>
#include <cmath>

#include "base/error.h"
#include "base/json_text.h"
#include "results/lenient.h"

namespace isolab::results {

namespace {

std::uint64_t json_count(const nlohmann::json& v, const std::string& pointer) {
  if (v.is_number_unsigned()) return v.get<std::uint64_t>();
  if (v.is_number_integer() && v.get<std::int64_t>() >= 0) return v.get<std::uint64_t>();
  if (v.is_number_float()) {
    const double d = v.get<double>();
    if (d >= 0 && d == std::floor(d) && d < 1.8e19) return static_cast<std::uint64_t>(d);
  }
  throw SpecError(pointer, "expected a non-negative integer count, got " + json_text(v));
}

}  // namespace

Histogram histogram_from_json(const nlohmann::json& j, const std::string& pointer) {
  if (!j.is_object()) throw SpecError(pointer, "histogram must be an object");
  Histogram h;
  auto it = j.find("counts");
  if (it == j.end() || !it->is_object()) {
    throw SpecError(pointer + "/counts", "histogram counts must be an object");
  }
  for (const auto& [key, value] : it->items()) {
    const std::string p = pointer + "/counts/" + json_pointer_token(key);
    if (key.empty() || key.size() > 18 ||
        !std::all_of(key.begin(), key.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      throw SpecError(p, "histogram bucket must be a decimal integer (us)");
    }
    h.counts[std::stoll(key)] += json_count(value, p);
  }
  if (auto ov = j.find("overflows"); ov != j.end() && !ov->is_null()) {
    h.overflows = json_count(*ov, pointer + "/overflows");
  }
  return h;
}

std::vector<HistogramRecord> cell_histograms(const CellRecord& c, const std::string& cell_pointer) {
  std::vector<HistogramRecord> out;
  if (!c.histograms || c.histograms->is_null()) return out;
  for (const auto& [name, h] : c.histograms->items()) {
    const std::string p = cell_pointer + "/histograms/" + json_pointer_token(name);
    Histogram histogram = histogram_from_json(h, p);
    out.push_back({name, std::move(histogram), str_or(h, "unit", "us")});
  }
  return out;
}

std::optional<Histogram> cell_histogram(const CellRecord& c, const std::string& name) {
  if (!c.histograms || !c.histograms->is_object()) return std::nullopt;
  const auto it = c.histograms->find(name);
  if (it == c.histograms->end()) return std::nullopt;
  try {
    return histogram_from_json(*it, "");
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

}  // namespace isolab::results

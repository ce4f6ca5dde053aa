#include "compare/noise_floors.h"

#include <cmath>
#include <set>

#include "base/error.h"
#include "base/json_text.h"
#include "results/run_facts.h"

namespace isolab {

std::map<std::string, double> noise_floors_from_json(const nlohmann::json& j) {
  if (!j.is_object() || j.value("schema", std::string()) != "isolab-calibration") {
    throw SpecError("/schema",
                    "not an isolab calibration document (expected schema "
                    "\"isolab-calibration\")");
  }
  auto ms = j.find("metrics");
  if (ms == j.end() || !ms->is_object()) {
    throw SpecError("/metrics", "calibration metrics must be an object");
  }
  std::map<std::string, double> floors;
  for (const auto& [name, m] : ms->items()) {
    const std::string tok = json_pointer_token(name);
    const std::string p = "/metrics/" + tok + "/noise_floor_pct";
    if (!m.is_object()) throw SpecError("/metrics/" + tok, "must be an object");
    auto f = m.find("noise_floor_pct");
    if (f == m.end() || f->is_null()) continue;
    if (!f->is_number() || !std::isfinite(f->get<double>()) || f->get<double>() < 0) {
      throw SpecError(p, "must be a number >= 0, got " + json_text(*f));
    }
    floors[name] = f->get<double>();
  }
  return floors;
}

std::vector<std::string> calibration_key_differences(const nlohmann::json& calibration,
                                                     const nlohmann::json& run) {
  const auto ck = calibration.is_object() ? calibration.value("comparison_key", nlohmann::json())
                                          : nlohmann::json();
  const auto rk = run.is_object() ? results::comparison_key_json(run) : nlohmann::json();
  if (!ck.is_object())
    return {
        "comparison_key: the calibration has none (made by an older isolab calibrate, or "
        "from runs without one); make it again with isolab calibrate"};
  if (!rk.is_object()) return {"comparison_key: the run has none"};
  std::set<std::string> keys;
  for (const auto& [k, v] : ck.items()) keys.insert(k);
  for (const auto& [k, v] : rk.items()) keys.insert(k);
  std::vector<std::string> out;
  for (const auto& k : keys) {
    const auto a = ck.value(k, nlohmann::json()), b = rk.value(k, nlohmann::json());
    if (a != b)
      out.push_back(k + ": calibration=" + (a.is_null() ? "(absent)" : json_text(a)) +
                    ", run=" + (b.is_null() ? "(absent)" : json_text(b)));
  }
  return out;
}

}  // namespace isolab

#include "results/budget_facts.h"

#include <cmath>

#include "base/json_text.h"
#include "results/lenient.h"

namespace isolab::results {

namespace {

using json = nlohmann::json;

std::optional<double> finite_number(const json& j) {
  if (!j.is_number() || !std::isfinite(j.get<double>())) return std::nullopt;
  return j.get<double>();
}

const json& spec_field(const json& doc, const char* key) { return field(field(doc, "spec"), key); }

BudgetValue value_at(const json& m, const json& values, const json& cpus, std::size_t i) {
  BudgetValue v;
  if (cpus.is_array() && i < cpus.size() && cpus[i].is_number_integer()) v.cpu = cpus[i].get<int>();
  v.value = finite_number(values[i]);
  v.window_s = finite_number(field(m, "window_s"));
  v.window_recorded = v.window_s.has_value();
  const json& ws = field(m, "windows_s");
  if (!v.window_recorded && ws.is_array() && i < ws.size())
    v.window_s = finite_number(ws[i]), v.window_recorded = true;
  return v;
}

}  // namespace

bool BudgetCell::measured() const {
  return cell_->is_object() && field(*cell_, "status") == "ok" && field(*cell_, "warmup") != true;
}

std::string BudgetCell::id() const { return str_or(*cell_, "id"); }

std::string BudgetCell::variant() const { return str_or(*cell_, "variant"); }

std::string BudgetCell::accelerator() const { return str_or(*cell_, "accelerator"); }

std::string BudgetCell::accelerator_text() const { return json_text(field(*cell_, "accelerator")); }

std::optional<std::string> BudgetCell::isolated() const {
  const std::string iso = str_or(field(*cell_, "guest"), "isolated");
  return iso.empty() ? std::nullopt : std::optional<std::string>(iso);
}

std::set<std::string> BudgetCell::workloads() const {
  std::set<std::string> out;
  for (const auto& [name, m] : field(*cell_, "metrics").items())
    out.insert(name.substr(0, name.find('.')));
  for (const auto& [name, h] : field(*cell_, "histograms").items())
    out.insert(name.substr(0, name.find('[')));
  return out;
}

std::optional<BudgetMetric> BudgetCell::metric(const std::string& name) const {
  const json& m = field(field(*cell_, "metrics"), name.c_str());
  if (m.is_null()) return std::nullopt;
  BudgetMetric out;
  out.unit = str_or(m, "unit");
  out.unit_text = json_text(field(m, "unit"));
  const json& values = field(m, "values");
  out.values_array = values.is_array();
  if (!out.values_array) return out;
  for (std::size_t i = 0; i < values.size(); ++i)
    out.values.push_back(value_at(m, values, field(m, "cpus"), i));
  return out;
}

std::vector<BudgetHistogram> BudgetCell::histograms() const {
  std::vector<BudgetHistogram> out;
  const json& hs = field(*cell_, "histograms");
  if (!hs.is_object()) return out;
  for (const auto& [name, h] : hs.items()) {
    BudgetHistogram b;
    b.name = name;
    b.unit = str_or(h, "unit");
    b.bucket_ns = finite_number(field(h, "bucket_ns"));
    const json& counts = field(h, "counts");
    b.counts_object = counts.is_object();
    if (b.counts_object)
      for (const auto& [key, c] : counts.items()) b.counts.emplace_back(key, finite_number(c));
    b.overflows = finite_number(field(h, "overflows")).value_or(0);
    out.push_back(std::move(b));
  }
  return out;
}

std::optional<double> BudgetCell::noise_window_s(const std::string& workload) const {
  return finite_number(field(field(field(*cell_, "noise"), workload.c_str()), "window_s"));
}

std::optional<std::map<std::string, double>> BudgetCell::noise_cause_counts(
    const std::string& workload, int cpu) const {
  const json& cpus = field(field(field(*cell_, "noise"), workload.c_str()), "cpus");
  if (!cpus.is_array()) return std::nullopt;
  for (const auto& c : cpus) {
    if (field(c, "cpu") != cpu) continue;
    std::map<std::string, double> counts;
    const json& causes = field(c, "causes");
    if (causes.is_object())
      for (const auto& [cause, v] : causes.items())
        if (auto n = finite_number(field(v, "count"))) counts[cause] = *n;
    return counts;
  }
  return std::nullopt;
}

std::optional<std::vector<BudgetCell>> budget_cells(const nlohmann::json& doc) {
  const json& cells = field(doc, "cells");
  if (!cells.is_array()) return std::nullopt;
  std::vector<BudgetCell> out;
  for (const auto& c : cells) out.emplace_back(c);
  return out;
}

std::optional<double> imported_window_s(const nlohmann::json& doc) {
  return finite_number(field(spec_field(doc, "imported"), "window_s"));
}

std::optional<double> workload_duration_s(const nlohmann::json& doc, const std::string& workload) {
  const json& ws = spec_field(doc, "workloads");
  if (!ws.is_array()) return std::nullopt;
  for (const auto& w : ws)
    if (field(w, "name") == workload) return finite_number(field(w, "duration_s"));
  return std::nullopt;
}

const nlohmann::json* spec_budgets(const nlohmann::json& doc) {
  const json& b = spec_field(doc, "budgets");
  return b.is_null() ? nullptr : &b;
}

}  // namespace isolab::results

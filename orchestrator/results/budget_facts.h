// What the budgets' judge (budgets/judge.h, whose contract lists each field) reads of a run,
// straight from a result.json document and as leniently as that judge needs: a field of the
// wrong shape reads as absent, so that a hostile cell's check is "not judged", never an abort.
// Nothing here throws.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace isolab::results {

// One value of a cell's metric.
struct BudgetValue {
  std::optional<int> cpu;       // "cpus"[i] when an integer
  std::optional<double> value;  // "values"[i] when a finite number
  // The step's window (s): "window_s" when a finite number, else "windows_s"[i] when the metric
  // has that element (nullopt when it is no finite number); `recorded` says whether either was.
  std::optional<double> window_s;
  bool window_recorded = false;
};

// cells[].metrics.<name>.
struct BudgetMetric {
  std::string unit;           // "unit" when a string; "" otherwise
  std::string unit_text;      // "unit" as compact JSON ("null" when absent), for a note
  bool values_array = false;  // "values" is an array (else `values` is empty)
  std::vector<BudgetValue> values;
};

// One entry of cells[].histograms.
struct BudgetHistogram {
  std::string name;                 // its key
  std::string unit;                 // "unit" when a string; "" otherwise
  std::optional<double> bucket_ns;  // "bucket_ns" when a finite number
  bool counts_object = false;       // "counts" is an object (else `counts` is empty)
  // Each key of "counts" as written, with its count when a finite number.
  std::vector<std::pair<std::string, std::optional<double>>> counts;
  double overflows = 0;  // "overflows" when a finite number; 0 otherwise
};

// One element of cells[], read on demand (it points into the document, which must outlive it).
class BudgetCell {
 public:
  explicit BudgetCell(const nlohmann::json& cell) : cell_(&cell) {}

  // An object whose status is "ok" and whose warmup is not true.
  bool measured() const;
  std::string id() const;           // "" when absent or no string
  std::string variant() const;      // "" when absent or no string
  std::string accelerator() const;  // "" when absent or no string
  // "accelerator" as compact JSON ("null" when absent), for a note.
  std::string accelerator_text() const;
  // guest.isolated (a cpulist) when a non-empty string.
  std::optional<std::string> isolated() const;
  // The workloads the cell has values of: each metric name up to its first '.', each
  // histogram name up to its '['.
  std::set<std::string> workloads() const;
  // cells[].metrics.<name>; nullopt when absent or null.
  std::optional<BudgetMetric> metric(const std::string& name) const;
  // Every histogram, in key order; none when "histograms" is no object.
  std::vector<BudgetHistogram> histograms() const;
  // cells[].noise.<workload>.window_s when a finite number.
  std::optional<double> noise_window_s(const std::string& workload) const;
  // The "count" of each cause (when a finite number) of the first element of
  // cells[].noise.<workload>.cpus whose "cpu" equals `cpu`; nullopt when none has that CPU.
  std::optional<std::map<std::string, double>> noise_cause_counts(const std::string& workload,
                                                                  int cpu) const;

 private:
  const nlohmann::json* cell_;
};

// The run's cells (every element, measured or not); nullopt when "cells" is no array.
std::optional<std::vector<BudgetCell>> budget_cells(const nlohmann::json& doc);

// spec.imported.window_s (an imported run's window) when a finite number.
std::optional<double> imported_window_s(const nlohmann::json& doc);

// duration_s of the first element of spec.workloads named `workload`, when a finite number;
// nullopt when that is not one, or no element has the name.
std::optional<double> workload_duration_s(const nlohmann::json& doc, const std::string& workload);

// spec.budgets as written (spec/budgets.h parses it); nullptr when absent or null.
const nlohmann::json* spec_budgets(const nlohmann::json& doc);

}  // namespace isolab::results

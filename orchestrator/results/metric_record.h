// A cell's metric objects (result.json cells[].metrics.<name>, parse/metrics.h to_json(Metric))
// read with the checks compare relies on; every error names the bad field's JSON pointer.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "results/result.h"

namespace isolab::results {

// One metric of a cell, not read yet: read it with metric_record() and metric_cpus().
struct MetricEntry {
  std::string name;                      // the key in cells[].metrics
  std::string pointer;                   // "/cells/3/metrics/<name as a JSON pointer token>"
  const nlohmann::json* json = nullptr;  // the metric as written (points into the CellRecord)
};

// The cell's metrics in key order; none when cells[].metrics is absent or null (result_from_json
// refuses any other type). `cell_pointer` is the cell's JSON pointer ("/cells/3").
std::vector<MetricEntry> metric_entries(const CellRecord& c, const std::string& cell_pointer);

// One metric of one cell, read.
struct MetricRecord {
  std::string aggregate;       // "mean" (also when absent or null), "max", "min" or "sum"
  std::vector<double> values;  // the finite values of "values" in order, nulls (missing) skipped
  std::vector<double> slots;   // "values" with NaN for each null: parallel to "cpus"
  std::string unit;            // "" when absent or no string
  std::string better;          // as written ("lower", "higher"); "" when absent or no string
  std::string kind;            // "count", "timing", "instructions"; "" when absent or null
  std::string untrustworthy;   // why the tool does not vouch for the values; "" when it does
  std::string source;          // of an instruction count: "tcg-plugin", "pmu"; "" when absent
  // The first negative value: its index in "values" and its JSON text (check_non_negative).
  std::optional<std::pair<std::size_t, std::string>> first_negative;

  // The aggregate of `values` (mean, max, min or sum); values must not be empty.
  double aggregated() const;
};

// Reads the metric. Throws isolab::SpecError, checked in this order: at the entry's pointer when
// it is no object, at pointer + "/aggregate" for an aggregate other than mean/max/min/sum, at
// pointer + "/values" when "values" is no array, at pointer + "/values/<k>" for a value that is
// neither a finite number nor null, at pointer + "/kind" for a kind that is neither null nor
// "count", "timing" or "instructions". unit, better, untrustworthy and source are lenient.
MetricRecord metric_record(const MetricEntry& m);

// The metric's "cpus": the CPU each of its values belongs to, parallel to "values"; empty when
// absent or null. Throws isolab::SpecError at pointer + "/cpus" when it is no array, and at
// pointer + "/cpus/<k>" for an entry that is not an integer in 0..kMaxCpus-1 (cmdline/cpulist.h).
std::vector<unsigned> metric_cpus(const MetricEntry& m);

// Counts, event rates and instruction counts cannot be negative: throws isolab::SpecError at
// pointer + "/values/<k>" for the record's first negative value (`pointer` is the metric's).
void check_non_negative(const MetricRecord& r, const std::string& pointer);

}  // namespace isolab::results

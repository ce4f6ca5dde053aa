// A cell's latency histograms (result.json cells[].histograms: cyclictest -h, parse/cyclictest.h)
// read into stats/sample.h Histogram, the form compare merges over boots and takes the tail of.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "results/result.h"
#include "stats/sample.h"

namespace isolab::results {

// One histogram object, {"unit": "us", "bucket_ns", "counts": {"<bucket>": n}, "overflows"}.
// The keys of "counts" are buckets in the histogram's unit and must be decimal integers >= 0 (at
// most 18 digits); counts must be integers >= 0 (a float with an integral value is taken). A
// missing or null "overflows" is 0; "unit" and "bucket_ns" are not read. Throws
// isolab::SpecError at `pointer` when j is no object, at pointer + "/counts" when "counts" is no
// object, at pointer + "/counts/<key>" (the key's JSON pointer token) for a bad bucket or count,
// and at pointer + "/overflows" for a bad overflow count.
Histogram histogram_from_json(const nlohmann::json& j, const std::string& pointer);

// One of a cell's histograms, with its unit.
struct HistogramRecord {
  std::string name;  // the key in cells[].histograms
  Histogram histogram;
  std::string unit;  // its "unit"; "us" when absent or no string
};

// Every histogram of the cell, in key order; none when cells[].histograms is absent or null.
// `cell_pointer` is the cell's JSON pointer ("/cells/3"). Throws as histogram_from_json, at
// cell_pointer + "/histograms/<name>".
std::vector<HistogramRecord> cell_histograms(const CellRecord& c, const std::string& cell_pointer);

// The cell's histogram `name`; nullopt when the cell has none of that name or it is malformed
// (where histogram_from_json throws). Never throws.
std::optional<Histogram> cell_histogram(const CellRecord& c, const std::string& name);

}  // namespace isolab::results

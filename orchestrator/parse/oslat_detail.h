// Helpers shared by the oslat parsers (parse/oslat*.cc; not a public API of the area).
#pragma once

#include <optional>
#include <set>
#include <string>
#include <string_view>

#include "parse/oslat.h"

namespace isolab::oslat_detail {

// A bucket label as oslat prints it ("%.*f" of µs with 0 or 3 decimals: "001", "32", "0.250",
// "1234.500") in ns; nullopt for anything else (a sign, an exponent, other decimals, more than
// 12 integer digits).
std::optional<long long> label_ns(std::string_view label);

// True when the label has decimals (oslat's unit is then ns).
bool label_has_decimals(std::string_view label);

// The bucket width the labels show (ns), or nullopt when they leave it open: `labels` every
// label printed, `contiguous` when no row was left out (text without -z). Contiguous labels
// must rise by one width: otherwise throws isolab::Error "<what>: bucket labels ... do not
// rise by one width". Sparse labels tell only a whole-µs width of 1 µs (their differences have
// 1 µs as greatest common divisor and no label has decimals).
std::optional<long long> width_from_labels(const std::set<long long>& labels, bool contiguous,
                                           bool decimals, const std::string& what);

// Sums each thread's buckets into samples, orders the threads by index and checks that no CPU
// appears twice (isolab::Error "<what>: CPU N is measured by threads i and j").
void finish_threads(OslatResult& r, const std::string& what);

// Threads without samples lose min, avg and max (oslat printed its initial values: min 2^64-1,
// max 0, avg nan). avg goes, with a note, where oslat's calculate() is known wrong: with a
// sub-µs bucket width (`ns_width`) in a thread whose gaps reached the last bucket (it adds the
// overflowed part in ns to a sum in µs). When any thread reached the last bucket and there are
// several, a note says that the averages of the threads after the first include the first
// thread's overflow sum (calculate() reads t->overflow_sum, thread 0's, for every thread).
void check_values(OslatResult& r, bool ns_width);

}  // namespace isolab::oslat_detail

#include "stats/multiplicity.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>

#include "base/error.h"
#include "stats/combinatorics.h"
#include "stats/rng.h"

namespace isolab {

std::vector<double> holm_adjust(std::span<const double> p) {
  std::vector<std::size_t> order(p.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](auto x, auto y) { return p[x] < p[y]; });
  std::vector<double> out(p.size());
  double running = 0;
  const double m = static_cast<double>(p.size());
  for (std::size_t j = 0; j < order.size(); ++j) {
    running = std::max(running, std::min(1.0, (m - static_cast<double>(j)) * p[order[j]]));
    out[order[j]] = running;
  }
  return out;
}

double fisher_exact_greater(std::size_t a_events, std::size_t a_total, std::size_t b_events,
                            std::size_t b_total) {
  if (a_events > a_total || b_events > b_total)
    throw Error("fisher_exact_greater: more events than cells");
  if (b_events == 0 || a_total == 0 || b_total == 0) return 1;
  const std::size_t n = a_total + b_total, k = a_events + b_events;
  const double total = log_choose(n, b_total);
  double p = 0;
  for (std::size_t x = b_events; x <= std::min(k, b_total); ++x) {
    if (b_total - x > n - k) continue;
    p += std::exp(log_choose(k, x) + log_choose(n - k, b_total - x) - total);
  }
  return std::min(1.0, p);
}

namespace {

// The cells of each block, in cell order.
std::vector<std::vector<std::size_t>> block_cells(const RelabelDesign& d) {
  std::vector<std::vector<std::size_t>> out;
  for (std::size_t i = 0; i < d.block.size(); ++i) {
    if (d.block[i] >= out.size()) out.resize(d.block[i] + 1);
    out[d.block[i]].push_back(i);
  }
  return out;
}

std::size_t a_count(const RelabelDesign& d, const std::vector<std::size_t>& cells) {
  return static_cast<std::size_t>(
      std::count_if(cells.begin(), cells.end(), [&](std::size_t i) { return d.in_a[i]; }));
}

// Every 0/1 pattern of length n with k ones.
std::vector<std::vector<std::uint8_t>> patterns(std::size_t n, std::size_t k) {
  std::vector<std::uint8_t> p(n, 0);
  std::fill(p.end() - static_cast<std::ptrdiff_t>(k), p.end(), 1);
  std::vector<std::vector<std::uint8_t>> out;
  do out.push_back(p);
  while (std::next_permutation(p.begin(), p.end()));
  return out;
}

void append_observed(const RelabelDesign& d, Relabellings& r) {
  for (bool a : d.in_a) r.flat.push_back(a ? 1 : 0);
}

void enumerate(const RelabelDesign& d, const std::vector<std::vector<std::size_t>>& blocks,
               Relabellings& r) {
  std::vector<std::vector<std::vector<std::uint8_t>>> per_block;
  for (const auto& b : blocks) per_block.push_back(patterns(b.size(), a_count(d, b)));
  std::vector<std::size_t> digit(blocks.size(), 0);
  const std::vector<std::uint8_t> observed(r.flat.begin(), r.flat.end());
  std::vector<std::uint8_t> labels(d.in_a.size());
  while (true) {
    for (std::size_t h = 0; h < blocks.size(); ++h)
      for (std::size_t j = 0; j < blocks[h].size(); ++j)
        labels[blocks[h][j]] = per_block[h][digit[h]][j];
    if (labels != observed) r.flat.insert(r.flat.end(), labels.begin(), labels.end());
    std::size_t h = 0;
    while (h < blocks.size() && ++digit[h] == per_block[h].size()) digit[h++] = 0;
    if (h == blocks.size()) break;
  }
}

void sample(const std::vector<std::vector<std::size_t>>& blocks, std::size_t resamples,
            std::uint64_t seed, Relabellings& r) {
  std::mt19937_64 rng(seed);
  std::vector<std::uint8_t> labels(r.flat.begin(), r.flat.end());
  for (std::size_t k = 0; k < resamples; ++k) {
    for (const auto& b : blocks) {
      std::vector<std::uint8_t> work;
      for (std::size_t i : b) work.push_back(labels[i]);
      for (std::size_t i = 0; i + 1 < work.size(); ++i)
        std::swap(work[i], work[i + uniform_index(rng, work.size() - i)]);
      for (std::size_t j = 0; j < b.size(); ++j) labels[b[j]] = work[j];
    }
    r.flat.insert(r.flat.end(), labels.begin(), labels.end());
  }
}

}  // namespace

Relabellings relabellings(const RelabelDesign& design, std::uint64_t exact_limit,
                          std::size_t resamples, std::uint64_t seed) {
  if (design.in_a.size() != design.block.size())
    throw Error("relabellings: labels and blocks differ in length");
  Relabellings r;
  r.cells = design.in_a.size();
  if (r.cells == 0) return r;
  const auto blocks = block_cells(design);
  double count = 1;
  for (const auto& b : blocks) count *= std::exp(log_choose(b.size(), a_count(design, b)));
  append_observed(design, r);
  r.exact = count <= static_cast<double>(exact_limit) * (1 + 1e-9);
  if (r.exact) {
    enumerate(design, blocks, r);
  } else {
    sample(blocks, resamples, seed, r);
  }
  return r;
}

namespace {

// One metric prepared for the statistic: the cells that have it, their scores, each block's
// weight factor c_h.
struct PreparedMetric {
  std::vector<std::size_t> cells;
  std::vector<double> scores;
  std::vector<std::size_t> block;  // parallel to cells
  std::vector<double> c;           // per block
};

PreparedMetric prepare(const RelabelDesign& d, const FamilyMetric& m, std::size_t blocks) {
  PreparedMetric p;
  p.c.assign(blocks, 1.0);
  for (std::size_t h = 0; h < blocks; ++h) {
    std::vector<std::size_t> cells;
    std::vector<double> v;
    for (std::size_t i = 0; i < m.values.size(); ++i)
      if (d.block[i] == h && !std::isnan(m.values[i])) cells.push_back(i), v.push_back(m.values[i]);
    if (m.score == StratumScore::midranks) {
      v = midranks(v);
      p.c[h] = 1.0 / (static_cast<double>(v.size()) + 1.0);
    }
    for (std::size_t j = 0; j < cells.size(); ++j) {
      p.cells.push_back(cells[j]);
      p.scores.push_back(v[j]);
      p.block.push_back(h);
    }
  }
  return p;
}

// T of one labelling (see multiplicity.h).
double statistic(const PreparedMetric& p, std::span<const std::uint8_t> labels,
                 std::vector<double>& acc) {
  std::fill(acc.begin(), acc.end(), 0.0);  // per block: sum A, n A, sum B, n B
  for (std::size_t j = 0; j < p.cells.size(); ++j) {
    const std::size_t base = 4 * p.block[j] + (labels[p.cells[j]] ? 0 : 2);
    acc[base] += p.scores[j];
    acc[base + 1] += 1;
  }
  double t = 0;
  for (std::size_t h = 0; h < p.c.size(); ++h) {
    const double sa = acc[4 * h], na = acc[4 * h + 1], sb = acc[4 * h + 2], nb = acc[4 * h + 3];
    if (na == 0 || nb == 0) continue;
    t += p.c[h] * (na * nb / (na + nb)) * (sb / nb - sa / na);
  }
  return std::fabs(t);
}

// p_m(r) for every labelling r: the fraction of labellings whose statistic is >= T_m(r).
std::vector<double> rank_p(const std::vector<double>& t) {
  std::vector<double> sorted = t;
  std::sort(sorted.begin(), sorted.end());
  const double tol = 1e-9 * std::max(1e-300, sorted.empty() ? 0.0 : sorted.back());
  std::vector<double> p(t.size());
  const auto n = static_cast<double>(t.size());
  for (std::size_t r = 0; r < t.size(); ++r) {
    const auto at = std::lower_bound(sorted.begin(), sorted.end(), t[r] - tol);
    p[r] = static_cast<double>(sorted.end() - at) / n;
  }
  return p;
}

}  // namespace

FamilyResult westfall_young_min_p(const RelabelDesign& design,
                                  const std::vector<FamilyMetric>& metrics,
                                  const Relabellings& labellings) {
  FamilyResult out;
  out.relabellings = labellings.size();
  out.exact = labellings.exact;
  const std::size_t R = labellings.size();
  std::size_t blocks = 0;
  for (std::size_t b : design.block) blocks = std::max(blocks, b + 1);
  std::vector<double> min_p(R, 1.0), acc(4 * blocks), t(R);
  for (const auto& m : metrics) {
    if (m.values.size() != design.in_a.size())
      throw Error("westfall_young_min_p: a metric needs one value per cell");
    const PreparedMetric p = prepare(design, m, blocks);
    for (std::size_t r = 0; r < R; ++r) t[r] = statistic(p, labellings[r], acc);
    const std::vector<double> pr = rank_p(t);
    for (std::size_t r = 0; r < R; ++r) min_p[r] = std::min(min_p[r], pr[r]);
    out.raw_p.push_back(R ? pr[0] : 1.0);
  }
  for (double raw : out.raw_p) {
    const auto hits =
        std::count_if(min_p.begin(), min_p.end(), [&](double q) { return q <= raw * (1 + 1e-12); });
    out.adjusted_p.push_back(R ? static_cast<double>(hits) / static_cast<double>(R) : 1.0);
  }
  return out;
}

}  // namespace isolab

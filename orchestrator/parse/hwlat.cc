// The hwlat tracer's samples and their metrics (declared in parse/hwlat.h).
#include "parse/hwlat.h"

#include "base/error.h"
#include "base/text.h"
#include "parse/text_util.h"

namespace isolab {

using parse_detail::line_error;
using parse_detail::split_ws;
using parse_detail::to_double;
using parse_detail::trim;

namespace {

constexpr std::string_view kHwlatTrace = "hwlat trace";

// "[001]" of the prefix, searched before the "#N" of the body.
std::optional<int> cpu_of(std::string_view prefix) {
  const std::size_t open = prefix.rfind('[');
  const std::size_t close = prefix.find(']', open == std::string_view::npos ? 0 : open);
  if (open == std::string_view::npos || close == std::string_view::npos) return std::nullopt;
  const auto cpu = to_double(prefix.substr(open + 1, close - open - 1));
  if (!cpu || *cpu < 0 || *cpu > 8191) return std::nullopt;
  return static_cast<int>(*cpu);
}

// The "key:value" words after "inner/outer(us): I/O".
void read_keys(const std::vector<std::string_view>& w, std::size_t from, HwlatSample& s,
               bool& bad) {
  for (std::size_t i = from; i < w.size(); ++i) {
    const std::size_t colon = w[i].find(':');
    if (colon == std::string_view::npos) continue;
    const std::string_view key = w[i].substr(0, colon);
    const auto v = to_double(w[i].substr(colon + 1));
    if (key == "count") {
      if (!v || *v < 0) bad = true;
      s.count = v ? static_cast<long long>(*v) : 0;
    } else if (key == "nmi-total") {
      s.nmi_total_us = v;
      bad = bad || !v;
    } else if (key == "nmi-count") {
      if (v) s.nmi_count = static_cast<long long>(*v);
      bad = bad || !v;
    }
  }
}

std::optional<HwlatSample> sample_of(std::string_view line, bool& bad) {
  const std::size_t io = line.find("inner/outer(us):");
  const std::size_t hash = line.rfind(" #", io);
  if (io == std::string_view::npos || hash == std::string_view::npos) return std::nullopt;
  HwlatSample s;
  const auto cpu = cpu_of(line.substr(0, hash));
  const auto seq = to_double(split_ws(line.substr(hash + 2))[0]);
  const auto w = split_ws(line.substr(io + 16));
  const std::size_t slash = w.empty() ? std::string_view::npos : w[0].find('/');
  if (!cpu || !seq || slash == std::string_view::npos) {
    bad = true;
    return std::nullopt;
  }
  const auto inner = to_double(w[0].substr(0, slash));
  const auto outer = to_double(w[0].substr(slash + 1));
  if (!inner || !outer) {
    bad = true;
    return std::nullopt;
  }
  s.cpu = *cpu;
  s.seq = static_cast<long long>(*seq);
  s.inner_us = *inner;
  s.outer_us = *outer;
  read_keys(w, 1, s, bad);
  return s;
}

}  // namespace

bool is_hwlat_trace(std::string_view text) {
  for (std::string_view line : text_lines(text)) {
    line = trim(line);
    if (line.rfind("# tracer:", 0) == 0) return trim(line.substr(9)) == "hwlat";
    if (!line.empty() && line.front() != '#') return false;
  }
  return false;
}

std::vector<HwlatSample> parse_hwlat_trace(std::string_view text) {
  std::vector<HwlatSample> out;
  const auto lines = text_lines(text);
  for (std::size_t n = 0; n < lines.size(); ++n) {
    const std::string_view line = trim(lines[n]);
    if (line.empty() || line.front() == '#') continue;
    bool bad = false;
    auto s = sample_of(line, bad);
    if (bad)
      throw line_error(kHwlatTrace, n + 1, lines[n], "a field of the sample is not a number");
    if (!s)
      throw line_error(kHwlatTrace, n + 1, lines[n],
                       "not an hwlat sample (no \"inner/outer(us):\")");
    out.push_back(*s);
  }
  if (out.empty()) throw Error("hwlat trace: no sample line");
  return out;
}

Metrics hwlat_metrics(const std::vector<HwlatSample>& samples) {
  struct PerCpu {
    double max_us = 0;
    long long crossings = 0, nmis = 0;
  };
  std::map<int, PerCpu> by_cpu;
  for (const HwlatSample& s : samples) {
    PerCpu& c = by_cpu[s.cpu];
    c.max_us = std::max(c.max_us, s.latency_us());
    c.crossings += s.count;
    c.nmis += s.nmi_count.value_or(0);
  }
  Metrics m;
  MetricPerCpu max, crossings, nmis;
  crossings.kind = nmis.kind = "count";
  for (const auto& [cpu, c] : by_cpu) {
    max.cpus.push_back(cpu), max.slots.emplace_back(c.max_us);
    crossings.cpus.push_back(cpu), crossings.slots.emplace_back(c.crossings);
    crossings.counts.push_back(c.crossings);
    nmis.cpus.push_back(cpu), nmis.slots.emplace_back(c.nmis), nmis.counts.push_back(c.nmis);
  }
  if (auto x = make_per_cpu_metric("us", true, "max", std::move(max))) m["hwlat.max_us"] = *x;
  if (auto x = make_per_cpu_metric("count", true, "sum", std::move(crossings)))
    m["hwlat.threshold_crossings"] = *x;
  if (auto x = make_per_cpu_metric("count", true, "sum", std::move(nmis)))
    m["hwlat.nmi_count"] = *x;
  return m;
}

}  // namespace isolab

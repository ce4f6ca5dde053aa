#include "parse/vmstat_overhead.h"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <optional>
#include <utility>

#include "base/files.h"
#include "parse/guest_tool_json.h"

namespace isolab {

using nlohmann::json;

namespace {

[[noreturn]] void fail(const std::string& why, std::string_view text) {
  parse_detail::tool_fail("vmstat-overhead", why, text);
}

double num(const json& j, const char* key, std::string_view line, bool required = true) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) {
    if (required) fail(std::string("field \"") + key + "\" is missing", line);
    return NAN;
  }
  if (!it->is_number()) fail(std::string("field \"") + key + "\" is not a number", line);
  double v = it->get<double>();
  if (!std::isfinite(v) || v < 0)
    fail(std::string("field \"") + key + "\" is negative or not finite", line);
  return v;
}

// A count field of the pmu object: a finite number in [0, 1e15]; nullopt otherwise.
std::optional<double> pmu_count(const json& p, const char* key) {
  const auto it = p.find(key);
  if (it == p.end() || !it->is_number()) return std::nullopt;
  const double v = it->get<double>();
  if (!std::isfinite(v) || v < 0 || v > 1e15) return std::nullopt;
  return v;
}

VmstatPmu malformed_pmu(const std::string& why) {
  VmstatPmu u;
  u.reason = "malformed pmu object: " + why;
  return u;
}

// The "pmu" object (VmstatPmu); never throws.
VmstatPmu parse_pmu(const json& p) {
  if (!p.is_object()) return malformed_pmu("not an object");
  const auto avail = p.find("available");
  if (avail == p.end() || !avail->is_boolean())
    return malformed_pmu("field \"available\" is not a boolean");
  VmstatPmu u;
  if (!avail->get<bool>()) {
    const auto r = p.find("reason");
    u.reason = r != p.end() && r->is_string() ? sanitize_excerpt(r->get<std::string>(), 200)
                                              : "the tool gave no reason";
    return u;
  }
  const std::pair<const char*, double*> fields[] = {
      {"insns_median", &u.insns_median},
      {"kernel_insns_median", &u.kernel_insns_median},
      {"insns_mean", &u.insns_mean},
      {"kernel_insns_mean", &u.kernel_insns_mean},
      {"empty_insns_median", &u.empty_insns_median},
      {"empty_kernel_insns_median", &u.empty_kernel_insns_median}};
  for (const auto& [key, out] : fields) {
    const auto v = pmu_count(p, key);
    if (!v) return malformed_pmu(std::string("field \"") + key + "\" is not a count");
    *out = *v;
  }
  const std::pair<const char*, long*> counts[] = {{"regions", &u.regions},
                                                  {"unscheduled_regions", &u.unscheduled_regions},
                                                  {"empty_regions", &u.empty_regions}};
  for (const auto& [key, out] : counts) {
    const auto v = pmu_count(p, key);
    if (!v) return malformed_pmu(std::string("field \"") + key + "\" is not a count");
    *out = static_cast<long>(*v);
  }
  if (u.regions < 1 || u.empty_regions < 1) return malformed_pmu("no region counted");
  if (u.kernel_insns_median > u.insns_median || u.empty_kernel_insns_median > u.empty_insns_median)
    return malformed_pmu("a kernel median exceeds its total");
  u.available = true;
  return u;
}

}  // namespace

VmstatOverheadResult parse_vmstat_overhead(std::string_view text) {
  const parse_detail::ToolJson doc = parse_detail::parse_tool_json(text, "vmstat-overhead");
  const json& j = doc.j;
  const std::string_view line = doc.line;
  VmstatOverheadResult r;
  auto str = [&](const char* key) {
    auto it = j.find(key);
    if (it == j.end() || !it->is_string())
      fail(std::string("field \"") + key + "\" is not a string", line);
    return it->get<std::string>();
  };
  r.mode = str("mode");
  if (r.mode != "syscall" && r.mode != "idle") fail("field \"mode\" is not syscall or idle", line);
  r.counter = str("counter");
  if (r.counter != "tsc" && r.counter != "ns") fail("field \"counter\" is not tsc or ns", line);
  if (auto it = j.find("cpu"); it != j.end() && !it->is_null()) {
    if (!it->is_number_integer() || it->get<long>() < 0 || it->get<long>() > 1'000'000)
      fail("field \"cpu\" is not a CPU number", line);
    r.cpu = it->get<int>();
  }
  if (auto it = j.find("pinned"); it != j.end()) {
    if (!it->is_boolean()) fail("field \"pinned\" is not a boolean", line);
    r.pinned = it->get<bool>();
  }
  // Range checks come before the casts: a double beyond long's range is undefined behaviour
  // to convert (UBSan found it with fuzzed input).
  double iterations = num(j, "iterations", line);
  if (!(iterations >= 1 && iterations <= 1e15)) fail("field \"iterations\" is out of range", line);
  r.iterations = static_cast<long>(iterations);
  double warmup = num(j, "warmup", line, false);
  r.warmup = std::isfinite(warmup) && warmup >= 0 && warmup <= 1e15 ? static_cast<long>(warmup) : 0;
  r.total = num(j, "total", line);
  r.per_iteration = num(j, "per_iteration", line);
  r.min = num(j, "min", line);
  r.max = num(j, "max", line);
  if (r.min > r.max || r.per_iteration < r.min * 0.999 || r.per_iteration > r.max * 1.001)
    fail("min <= per_iteration <= max does not hold", line);
  if (std::fabs(r.total / r.iterations - r.per_iteration) > 0.01 * r.per_iteration + 0.01)
    fail("per_iteration is not total / iterations", line);
  if (r.mode == "syscall") {
    r.per_syscall = num(j, "per_syscall", line);
  } else if (double s = num(j, "sleep_us", line, false); std::isfinite(s)) {
    r.sleep_us = static_cast<long>(s);
  }
  if (double m = num(j, "marked_regions", line, false); std::isfinite(m)) {
    if (m > 1e15) fail("field \"marked_regions\" is out of range", line);
    r.marked_regions = static_cast<long>(m);
  }
  if (auto it = j.find("pmu"); it != j.end()) r.pmu = parse_pmu(*it);
  return r;
}

VmstatSpinResult parse_vmstat_spin(std::string_view text) {
  const parse_detail::ToolJson doc = parse_detail::parse_tool_json(text, "vmstat-overhead");
  const json& j = doc.j;
  const std::string_view line = doc.line;
  auto str = [&](const char* key) {
    auto it = j.find(key);
    if (it == j.end() || !it->is_string())
      fail(std::string("field \"") + key + "\" is not a string", line);
    return it->get<std::string>();
  };
  auto count = [&](const char* key) {
    const double v = num(j, key, line);
    if (v > 1e12 || v != std::floor(v))
      fail(std::string("field \"") + key + "\" is not a count", line);
    return static_cast<long>(v);
  };
  auto flag = [&](const char* key) {
    auto it = j.find(key);
    if (it == j.end() || !it->is_boolean())
      fail(std::string("field \"") + key + "\" is not a boolean", line);
    return it->get<bool>();
  };
  if (str("mode") != "spin") fail("field \"mode\" is not spin", line);
  VmstatSpinResult r;
  r.event = str("event");
  if (r.event != "fault" && r.event != "fault+cputimer" && r.event != "cputimer+fault" &&
      r.event != "fault+mlock")
    fail("field \"event\" is not fault, fault+cputimer, cputimer+fault or fault+mlock", line);
  if (auto it = j.find("cpu"); it != j.end() && !it->is_null()) {
    if (!it->is_number_integer() || it->get<long>() < 0 || it->get<long>() > 1'000'000)
      fail("field \"cpu\" is not a CPU number", line);
    r.cpu = it->get<int>();
  }
  r.pinned = flag("pinned");
  r.trace_marker = flag("trace_marker");
  r.rate_hz = count("rate_hz");
  r.duration_s = count("duration_s");
  r.events = count("events");
  r.late_events = count("late_events");
  r.touched_pages = count("touched_pages");
  r.marked_events = count("marked_events");
  r.cpu_timer_fired = count("cpu_timer_fired");
  const long elapsed_ns = count("elapsed_ns");
  if (elapsed_ns == 0) fail("field \"elapsed_ns\" is 0", line);
  r.elapsed_s = static_cast<double>(elapsed_ns) / 1e9;
  if (r.marked_events > r.events) fail("marked_events > events", line);
  if (r.late_events > r.events) fail("late_events > events", line);
  return r;
}

std::vector<VmstatSpinResult> parse_vmstat_spin_lines(std::string_view text) {
  std::vector<VmstatSpinResult> out;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t nl = std::min(text.find('\n', pos), text.size());
    std::string_view line = text.substr(pos, nl - pos);
    pos = nl + 1;
    while (!line.empty() && (line.front() == ' ' || line.front() == '\t')) line.remove_prefix(1);
    if (line.empty() || line.front() != '{') continue;
    VmstatSpinResult r = parse_vmstat_spin(line);
    for (const auto& earlier : out)
      if (r.cpu && earlier.cpu == r.cpu)
        fail("two spinning tasks report CPU " + std::to_string(*r.cpu), line);
    out.push_back(std::move(r));
  }
  if (out.empty()) fail("no JSON line in the output", text);
  return out;
}

Metrics vmstat_overhead_metrics(const VmstatOverheadResult& r) {
  Metrics m;
  if (r.mode == "syscall")
    add_metric_value(m, "cycles_per_syscall", r.unit(), true, "mean",
                     r.per_syscall.value_or(r.per_iteration / 2));
  else
    add_metric_value(m, "cycles_per_idle_loop", r.unit(), true, "mean", r.per_iteration);
  return m;
}

}  // namespace isolab

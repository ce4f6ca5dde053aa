#include "parse/page_fault_bench.h"

#include <cmath>
#include <nlohmann/json.hpp>

#include "parse/guest_tool_json.h"

namespace isolab {

using nlohmann::json;

const std::vector<std::string>& numa_vmstat_counters() {
  static const std::vector<std::string> names = {"numa_hit",        "numa_miss",  "numa_foreign",
                                                 "numa_interleave", "numa_local", "numa_other"};
  return names;
}

namespace {

[[noreturn]] void fail_page_fault_bench(const std::string& why, std::string_view text) {
  parse_detail::tool_fail("page-fault-bench", why, text);
}

// A reader of one JSON object that names the path of a bad field.
struct Fields {
  const json& j;
  std::string path;
  std::string_view line;

  std::string at(const std::string& key) const { return path.empty() ? key : path + "/" + key; }
  const json& get(const std::string& key) const {
    auto it = j.find(key);
    if (it == j.end()) fail_page_fault_bench("field \"" + at(key) + "\" is missing", line);
    return *it;
  }
  // A finite number >= 0 (counters and counts; the output never has a negative one).
  double count(const std::string& key) const {
    const json& v = get(key);
    if (!v.is_number()) fail_page_fault_bench("field \"" + at(key) + "\" is not a number", line);
    double x = v.get<double>();
    if (!std::isfinite(x) || x < 0 || x > 1.8e19)
      fail_page_fault_bench("field \"" + at(key) + "\" is negative, not finite or too large", line);
    return x;
  }
  int small_int(const std::string& key, int lo) const {
    const json& v = get(key);
    if (!v.is_number_integer() || v.get<long long>() < lo || v.get<long long>() > 1'000'000)
      fail_page_fault_bench(
          "field \"" + at(key) + "\" is not an integer in [" + std::to_string(lo) + ", 1000000]",
          line);
    return static_cast<int>(v.get<long long>());
  }
  std::string str(const std::string& key) const {
    const json& v = get(key);
    if (!v.is_string()) fail_page_fault_bench("field \"" + at(key) + "\" is not a string", line);
    return v.get<std::string>();
  }
  Fields sub(const json& child, const std::string& key) const {
    if (!child.is_object())
      fail_page_fault_bench("field \"" + at(key) + "\" is not an object", line);
    return Fields{child, at(key), line};
  }
};

std::map<std::string, double> numa_counters(const Fields& phase, const std::string& key) {
  Fields v = phase.sub(phase.get(key), key);
  std::map<std::string, double> out;
  if (v.j.empty()) return out;  // a kernel without CONFIG_NUMA has no numa_* lines
  for (const auto& name : numa_vmstat_counters()) {
    if (!v.j.contains(name))
      fail_page_fault_bench("field \"" + v.at(name) + "\" is missing", v.line);
    out[name] = v.count(name);
  }
  return out;
}

PageFaultWorker parse_worker(const Fields& w) {
  PageFaultWorker r;
  r.cpu = w.small_int("cpu", 0);
  r.node = w.small_int("node", -1);
  r.batches = w.count("batches");
  r.pages = w.count("pages");
  if (r.batches < 1 || r.pages < 1)
    fail_page_fault_bench("field \"" + w.at("pages") + "\": no timed batch", w.line);
  r.fault_total = w.count("fault_total");
  r.free_total = w.count("free_total");
  r.min_batch_fault = w.count("min_batch_fault");
  r.max_batch_fault = w.count("max_batch_fault");
  if (r.min_batch_fault > r.max_batch_fault)
    fail_page_fault_bench("field \"" + w.at("min_batch_fault") + "\" is above max_batch_fault",
                          w.line);
  if (w.j.contains("marked_batches")) {
    const json& m = w.get("marked_batches");
    if (!m.is_number_unsigned() || m.get<std::uint64_t>() > 1'000'000'000'000'000)
      fail_page_fault_bench(
          "field \"" + w.at("marked_batches") + "\" is not an integer in [0, 1e15]", w.line);
    r.marked_batches = m.get<std::uint64_t>();
  }
  return r;
}

PageFaultPhase parse_phase(const Fields& p) {
  PageFaultPhase ph;
  ph.name = p.str("name");
  if (ph.name != "single" && ph.name != "per_cpu")
    fail_page_fault_bench("field \"" + p.at("name") + "\" is not single or per_cpu", p.line);
  ph.elapsed_ns = p.count("elapsed_ns");
  ph.vmstat_before = numa_counters(p, "vmstat_before");
  ph.vmstat_after = numa_counters(p, "vmstat_after");
  if (ph.vmstat_before.empty() != ph.vmstat_after.empty())
    fail_page_fault_bench("phase " + ph.name + " has numa_* counters only on one side", p.line);
  for (const auto& name : numa_vmstat_counters())
    if (!ph.vmstat_before.empty() && ph.vmstat_after[name] < ph.vmstat_before[name])
      fail_page_fault_bench("counter " + name + " went down during phase " + ph.name, p.line);
  const json& ws = p.get("workers");
  if (!ws.is_array() || ws.empty())
    fail_page_fault_bench("field \"" + p.at("workers") + "\" is not a non-empty array", p.line);
  for (std::size_t i = 0; i < ws.size(); ++i)
    ph.workers.push_back(parse_worker(p.sub(ws[i], "workers/" + std::to_string(i))));
  return ph;
}

}  // namespace

PageFaultBenchResult parse_page_fault_bench(std::string_view text) {
  const parse_detail::ToolJson doc = parse_detail::parse_tool_json(text, "page-fault-bench");
  const std::string_view line = doc.line;
  const Fields top{doc.j, "", line};
  PageFaultBenchResult r;
  r.counter = top.str("counter");
  if (r.counter != "tsc" && r.counter != "ns")
    fail_page_fault_bench("field \"counter\" is not tsc or ns", line);
  r.page_size = top.small_int("page_size", 1);
  r.pages_per_batch = top.small_int("pages_per_batch", 1);
  const json& ps = top.get("phases");
  if (!ps.is_array() || ps.empty())
    fail_page_fault_bench("field \"phases\" is not a non-empty array", line);
  for (std::size_t i = 0; i < ps.size(); ++i)
    r.phases.push_back(parse_phase(top.sub(ps[i], "phases/" + std::to_string(i))));
  return r;
}

Metrics page_fault_bench_metrics(const PageFaultBenchResult& r) {
  Metrics m;
  const std::string unit = r.unit();
  std::map<std::string, double> delta;
  bool numa = true;
  for (const auto& ph : r.phases) {
    numa = numa && !ph.vmstat_before.empty();
    for (const auto& name : numa_vmstat_counters())
      if (numa) delta[name] += ph.vmstat_after.at(name) - ph.vmstat_before.at(name);
    for (const auto& w : ph.workers) {
      if (ph.name == "single") {
        add_metric_value(m, "cycles_per_page_fault", unit, true, "mean", w.per_page_fault());
        add_metric_value(m, "cycles_per_page_free", unit, true, "mean", w.per_page_free());
      } else {
        add_metric_value(m, "cycles_per_page_fault_per_cpu", unit, true, "mean",
                         w.per_page_fault());
      }
    }
  }
  if (numa)
    for (const auto& name : numa_vmstat_counters())
      add_metric_value(m, name, "count", true, "sum", delta[name]);
  return m;
}

}  // namespace isolab

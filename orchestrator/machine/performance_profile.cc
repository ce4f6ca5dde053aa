#include "machine/performance_profile.h"

#include <cstdio>

#include "base/error.h"
#include "base/files.h"

namespace isolab {

namespace {

CpuSet cpu_field(const KubeObject& o, const std::string& ptr, bool required) {
  const auto text = o.text_at(ptr);
  if (!text) {
    if (required) throw Error(o.where(ptr) + ": missing; a PerformanceProfile must set it");
    return CpuSet(kMaxCpus);
  }
  try {
    return parse_cpulist(*text, kMaxCpus);
  } catch (const CpuListError& e) {
    throw Error(o.where(ptr) + ": not a CPU list: " + e.what());
  }
}

std::optional<bool> bool_field(const KubeObject& o, const std::string& ptr) {
  const auto text = o.text_at(ptr);
  if (!text) return std::nullopt;
  if (*text == "true") return true;
  if (*text == "false") return false;
  throw Error(o.where(ptr) + ": '" + sanitize_excerpt(*text, 40) + "' is not true or false");
}

unsigned count_field(const KubeObject& o, const std::string& ptr) {
  const auto text = o.text_at(ptr);
  if (!text) throw Error(o.where(ptr) + ": missing");
  unsigned n = 0;
  if (text->empty() || text->size() > 9 ||
      text->find_first_not_of("0123456789") != std::string::npos)
    throw Error(o.where(ptr) + ": '" + sanitize_excerpt(*text, 40) + "' is not a count");
  for (char c : *text) n = n * 10 + static_cast<unsigned>(c - '0');
  return n;
}

std::vector<std::string> string_list(const KubeObject& o, const std::string& ptr) {
  std::vector<std::string> out;
  const nlohmann::json* v = o.at(ptr);
  if (!v || v->is_null()) return out;
  if (!v->is_array()) throw Error(o.where(ptr) + ": expected a list");
  for (size_t i = 0; i < v->size(); ++i)
    out.push_back(o.text_at(ptr + "/" + std::to_string(i)).value_or(""));
  return out;
}

void read_cpus(const KubeObject& o, PerformanceProfile& p) {
  p.reserved = cpu_field(o, "/spec/cpu/reserved", true);
  p.isolated = cpu_field(o, "/spec/cpu/isolated", true);
  p.isolated_text = *o.text_at("/spec/cpu/isolated");
  p.isolated_line = o.line_of("/spec/cpu/isolated");
  p.shared = cpu_field(o, "/spec/cpu/shared", false);
  p.offlined = cpu_field(o, "/spec/cpu/offlined", false);
  if (p.reserved.intersects(p.isolated))
    throw Error(o.where("/spec/cpu/isolated") + ": CPUs " + (p.reserved & p.isolated).to_list() +
                " are also reserved; the operator refuses overlapping reserved and isolated CPUs");
  p.balance_isolated = bool_field(o, "/spec/cpu/balanceIsolated").value_or(true);
}

void read_hints(const KubeObject& o, PerformanceProfile& p) {
  p.realtime_hint = bool_field(o, "/spec/workloadHints/realTime").value_or(true);
  p.high_power = bool_field(o, "/spec/workloadHints/highPowerConsumption").value_or(false);
  p.per_pod_power = bool_field(o, "/spec/workloadHints/perPodPowerManagement").value_or(false);
  p.rt_kernel = bool_field(o, "/spec/realTimeKernel/enabled").value_or(false);
}

void read_hugepages(const KubeObject& o, PerformanceProfile& p) {
  p.default_hugepages_size = o.text_at("/spec/hugepages/defaultHugepagesSize");
  const nlohmann::json* pages = o.at("/spec/hugepages/pages");
  if (!pages || pages->is_null()) return;
  if (!pages->is_array()) throw Error(o.where("/spec/hugepages/pages") + ": expected a list");
  for (size_t i = 0; i < pages->size(); ++i) {
    const std::string at = "/spec/hugepages/pages/" + std::to_string(i);
    HugePage h;
    h.size = o.text_at(at + "/size").value_or("");
    if (h.size.empty()) throw Error(o.where(at + "/size") + ": missing");
    h.count = count_field(o, at + "/count");
    if (o.text_at(at + "/node")) h.node = count_field(o, at + "/node");
    p.pages.push_back(h);
  }
}

// tuned.go: pages without a node go on the line; a 2M page on a node with a 1G default size
// adds an empty 2M pool so the kernel creates its files.
std::vector<std::string> hugepage_args(const PerformanceProfile& p) {
  std::vector<std::string> args;
  std::optional<bool> two_m_on_node;
  for (const HugePage& h : p.pages) {
    if (h.node) {
      if (h.size == "2M" && !two_m_on_node) two_m_on_node = true;
      continue;
    }
    if (h.size == "2M") two_m_on_node = false;
    args.push_back("hugepagesz=" + h.size);
    args.push_back("hugepages=" + std::to_string(h.count));
  }
  if (two_m_on_node.value_or(false) && p.default_hugepages_size == "1G") {
    args.emplace_back("hugepagesz=2M");
    args.emplace_back("hugepages=0");
  }
  return args;
}

std::string expanded(const CpuSet& s) {
  std::string out;
  for (unsigned c : s.cpus()) out += (out.empty() ? "" : ",") + std::to_string(c);
  return out;
}

void add_words(std::vector<std::string>& out, std::initializer_list<std::string> words) {
  out.insert(out.end(), words.begin(), words.end());
}

void render_cmdline(const PerformanceProfile& p, RenderedProfile& r) {
  const std::string& iso = p.isolated_text;
  add_words(
      r.kernel_args,
      {"nohz=on", "rcu_nocbs=" + iso, "tuned.non_isolcpus=" + tuned_cpumask_hex(r.not_isolated),
       "systemd.cpu_affinity=" + expanded(r.not_isolated), "intel_iommu=on", "iommu=pt"});
  r.kernel_args.push_back(p.balance_isolated ? "isolcpus=managed_irq," + iso
                                             : "isolcpus=domain,managed_irq," + iso);
  if (p.realtime_hint)
    add_words(r.kernel_args, {"nohz_full=" + iso, "tsc=reliable", "nosoftlockup", "nmi_watchdog=0",
                              "mce=off", "skew_tick=1", "rcutree.kthread_prio=11"});
  if (p.high_power) add_words(r.kernel_args, {"processor.max_cstate=1", "intel_idle.max_cstate=0"});
  if (p.high_power && p.realtime_hint) r.kernel_args.emplace_back("idle=poll");
  if (p.default_hugepages_size) {
    r.kernel_args.push_back("default_hugepagesz=" + *p.default_hugepages_size);
    for (std::string& a : hugepage_args(p)) r.kernel_args.push_back(std::move(a));
  } else if (!p.pages.empty()) {
    r.not_rendered.emplace_back(
        "spec.hugepages.pages without defaultHugepagesSize: the template writes no "
        "cmdline_hugepages then");
  }
  for (const std::string& a : p.additional_args) r.kernel_args.push_back(a);
  if (p.per_pod_power)
    r.kernel_args.emplace_back("intel_pstate=passive");
  else
    r.not_rendered.emplace_back(
        "intel_pstate=: TuneD's intel_recommended_pstate picks it from the node's CPU model");
}

void render_runtime(const PerformanceProfile& p, RenderedProfile& r) {
  r.tuned_profile = "openshift-node-performance-" + p.name;
  r.include = {"openshift-node", "cpu-partitioning"};
  if (p.rt_kernel) r.include.push_back("openshift-node-performance-rt-" + p.name);
  r.variables = {{"isolated_cores", p.isolated_text},
                 {"not_isolated_cores_expanded", expanded(r.not_isolated)}};
  if (p.realtime_hint)
    r.sysctls = {{"kernel.hung_task_timeout_secs", "600"},
                 {"kernel.nmi_watchdog", "0"},
                 {"kernel.sched_rt_runtime_us", "-1"},
                 {"vm.stat_interval", "10"}};
  r.sysctls.emplace_back("kernel.timer_migration", "1");
  r.not_rendered.emplace_back(
      "the parent TuneD profiles' own cmdline_ options (cpu-partitioning, network-latency, "
      "latency-performance: skew_tick=1 and others, by the node's TuneD version)");
}

}  // namespace

PerformanceProfile read_performance_profile(const KubeObject& o) {
  if (o.kind() != "PerformanceProfile")
    throw Error(o.where("/kind") + ": a " + o.kind() + ", not a PerformanceProfile");
  PerformanceProfile p;
  p.file = o.file;
  p.name = o.name();
  if (p.name.empty()) throw Error(o.where("/metadata/name") + ": missing");
  read_cpus(o, p);
  read_hints(o, p);
  read_hugepages(o, p);
  p.additional_args = string_list(o, "/spec/additionalKernelArgs");
  if (const nlohmann::json* sel = o.at("/spec/nodeSelector"); sel && sel->is_object())
    for (const auto& [k, v] : sel->items())
      p.node_selector.emplace_back(k, v.is_string() ? v.get<std::string>() : "");
  return p;
}

RenderedProfile render(const PerformanceProfile& p) {
  RenderedProfile r;
  r.cpus = p.reserved | p.isolated | p.shared | p.offlined;
  r.online = r.cpus - p.offlined;
  r.not_isolated = r.online - p.isolated;
  render_cmdline(p, r);
  render_runtime(p, r);
  if (p.rt_kernel)
    r.not_rendered.push_back("the real-time kernel's TuneD profile openshift-node-performance-rt-" +
                             p.name);
  return r;
}

std::string RenderedProfile::cmdline() const {
  std::string out;
  for (const std::string& a : kernel_args) out += (out.empty() ? "" : " ") + a;
  return out;
}

std::string tuned_cpumask_hex(const CpuSet& s) {
  const unsigned words = s.empty() ? 1 : *s.last() / 32 + 1;
  std::string out;
  for (unsigned w = words; w-- > 0;) {
    uint32_t v = 0;
    for (unsigned b = 0; b < 32; ++b)
      if (s.test(w * 32 + b)) v |= uint32_t{1} << b;
    char buf[12];
    std::snprintf(buf, sizeof buf, "%08x", v);
    out += (out.empty() ? "" : ",") + std::string(buf);
  }
  return out;
}

}  // namespace isolab

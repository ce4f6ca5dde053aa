#include "pipeline/run_plan.h"

#include <algorithm>
#include <cstdlib>
#include <random>

#include "base/error.h"
#include "base/files.h"
#include "cmdline/analysis_output.h"
#include "guest/init_script.h"
#include "kernel/config_check.h"
#include "spec/compare_settings.h"
#include "spec/json_object.h"
#include "stats/rng.h"
#include "vm/vm.h"

using nlohmann::json;

namespace isolab {

std::vector<CellPlan> plan_cells(const Spec& spec, std::optional<std::uint64_t> seed) {
  std::vector<CellPlan> cells;
  std::mt19937_64 rng(seed.value_or(0));
  auto block = [&](int rep, bool warmup) {
    std::vector<const VariantSpec*> order;
    for (const auto& v : spec.variants) order.push_back(&v);
    if (seed)
      for (std::size_t i = order.size(); i > 1; --i)
        std::swap(order[i - 1], order[uniform_index(rng, i)]);
    for (const VariantSpec* v : order)
      cells.push_back(
          {v->name + (warmup ? "-w" : "-r") + std::to_string(rep), v->name, rep, warmup});
  };
  for (int w = 0; w < spec.warmup_repetitions; ++w) block(w, true);
  for (int r = 0; r < spec.repetitions; ++r) block(r, false);
  return cells;
}

std::uint64_t draw_boot_order_seed() {
  std::random_device rd;
  const std::uint64_t x = (std::uint64_t(rd()) << 32) ^ std::uint64_t(rd());
  return x & std::uint64_t(kMaxBootOrderSeed);
}

namespace {

// The spec field that holds the guest's command line, its text, and whether it is a customer's.
struct GuestSource {
  std::string text;
  std::string ptr;
  bool customer = false;
};

GuestSource guest_source(const Spec& spec) {
  if (spec.customer) return {spec.customer_cmdline, "/customer/machine", true};
  if (!spec.customer_cmdline.empty())
    return {spec.customer_cmdline, "/guest/customer_cmdline", true};
  if (!spec.customer_dmesg.empty())
    return {read_file(spec.customer_dmesg, 16u << 20), "/guest/customer_dmesg", true};
  return {spec.cmdline, "/guest/cmdline", false};
}

// The vCPU count must be one QEMU boots and must be known (see derive_guest()).
void check_vcpus(const Spec& spec, const GuestSource& src, const Analysis& a) {
  const std::string most = std::to_string(kMaxGuestVcpus);
  if (spec.vcpus > 0) return;  // spec parsing bounds it by kMaxGuestVcpus
  if (a.vcpus_needed > kMaxGuestVcpus)
    throw SpecError(src.ptr, a.vcpus_reason + ": no QEMU guest can have " +
                                 std::to_string(a.vcpus_needed) +
                                 " CPUs; set guest.vcpus (at most " + most +
                                 ") to run a smaller guest, whose kernel then rejects that list");
  if (src.customer && a.cpu_count_unknown)
    throw SpecError(src.ptr,
                    "the CPU lists use only N/all, which depend on the customer's CPU count, and "
                    "the line does not give it: set guest.vcpus");
}

// The pointer of the field that holds the guest's command line (no file read).
std::string guest_source_pointer(const Spec& spec) {
  if (spec.customer) return "/customer/machine";
  if (!spec.customer_cmdline.empty()) return "/guest/customer_cmdline";
  if (!spec.customer_dmesg.empty()) return "/guest/customer_dmesg";
  return "/guest/cmdline";
}

}  // namespace

GuestTopology guest_topology(const GuestTopologySpec& t, int vcpus, bool numa) {
  GuestTopology g{t.sockets, t.cores > 0 ? t.cores : vcpus / std::max(1, t.sockets * t.threads),
                  t.threads};
  // Default: one socket of N cores; a NUMA guest one socket per vCPU, so that no socket spans
  // two nodes (the guest kernel warns in topology_sane()).
  if (!t.given) return numa ? GuestTopology{vcpus, 1, 1} : GuestTopology{1, vcpus, 1};
  const long product = static_cast<long>(g.sockets) * g.cores * g.threads;
  // QEMU's words (hw/core/machine-smp.c), so that the error reads as QEMU's would.
  if (product != vcpus)
    throw SpecError("/guest/topology",
                    "Invalid CPU topology: product of the hierarchy must match maxcpus: sockets (" +
                        std::to_string(g.sockets) + ") * cores (" + std::to_string(g.cores) +
                        ") * threads (" + std::to_string(g.threads) + ") != maxcpus (" +
                        std::to_string(vcpus) + "), the guest's vCPUs");
  return g;
}

namespace {

// analyze()'s warning about a CPU list the kernel rejects ("nohz_full=7-5: cpulist '7-5':
// EINVAL ..."), if it gave one.
std::optional<std::string> cpulist_rejection(const Analysis& a) {
  for (const auto& w : a.warnings)
    if (w.find("cpulist '") != std::string::npos &&
        (w.find("EINVAL") != std::string::npos || w.find("ERANGE") != std::string::npos ||
         w.find("EOVERFLOW") != std::string::npos))
      return w;
  return std::nullopt;
}

}  // namespace

GuestDerivation derive_guest(const Spec& spec, std::optional<unsigned> kernel_nr_cpus) {
  GuestDerivation g;
  const GuestSource src = guest_source(spec);
  AnalyzeOptions ao;
  if (spec.vcpus > 0) ao.vcpus = static_cast<unsigned>(spec.vcpus);
  if (!spec.customer_kernel_version.empty()) {
    ao.customer_kernel_version = spec.customer_kernel_version;
    ao.customer_kernel_version_source = "/guest/customer_kernel_version";
  }
  ao.kernel.nr_cpus_config = kernel_nr_cpus;
  Analysis a;
  try {
    a = analyze(src.text, ao);
  } catch (const Error& e) {
    throw SpecError(src.ptr, e.what());
  }
  check_vcpus(spec, src, a);
  // In a hand-written line a CPU list the kernel would reject is a mistake in the spec; in a
  // customer's line it is a fact about the customer's machine, kept as a warning.
  if (!src.customer)
    if (const auto w = cpulist_rejection(a)) throw SpecError(src.ptr, *w);
  g.vcpus = static_cast<int>(a.vcpus);
  try {
    g.topology = guest_topology(spec.topology, g.vcpus, !spec.numa_nodes.empty());
  } catch (const SpecError& e) {
    // The machine's topology: the error is the machine's, before any boot.
    if (!spec.customer) throw;
    const std::string message = std::string(e.what()).substr(e.pointer().size() + 2);
    throw SpecError("/customer/machine",
                    message + " (the customer's machine, rule " + spec.customer->shape.rule + ")");
  }
  g.nr_cpus_required = a.nr_cpus_required;
  // A customer's line is reduced to what matters in a guest; a hand-written line is the
  // developer's own choice and is passed as written.
  if (src.customer) {
    for (const auto& k : a.kept) g.cmdline += (g.cmdline.empty() ? "" : " ") + k;
  } else {
    g.cmdline = spec.cmdline;
  }
  g.analysis = to_json(a);
  g.expected = expected_isolation(a);
  unsigned n = a.vcpus;
  g.partition.all = CpuSet::all(n);
  g.partition.isolated = (a.isolated | a.nohz_full).resized(n);
  g.partition.housekeeping = g.partition.all - g.partition.isolated;
  g.expect_isolated = g.expected.isolated.to_list();
  g.expect_nohz_full = g.expected.nohz_full_requested ? g.expected.nohz_full.to_list() : "";
  return g;
}

std::optional<unsigned> fragments_nr_cpus(const std::vector<std::filesystem::path>& fragments) {
  std::optional<unsigned> nr;
  for (const auto& f : fragments)
    for (const ConfigAssignment& c : parse_kconfig_text(read_file(f), f.string())) {
      if (c.name != "CONFIG_NR_CPUS") continue;
      const int v = std::atoi(c.value.c_str());
      if (v <= 0 || std::to_string(v) != c.value)
        throw Error(f.string() + ":" + std::to_string(c.line) + ": CONFIG_NR_CPUS=" + c.value +
                    " is not a positive number");
      nr = static_cast<unsigned>(v);
    }
  return nr;
}

std::optional<unsigned> guest_kernel_nr_cpus(const std::vector<std::filesystem::path>& fragments,
                                             unsigned required) {
  const std::optional<unsigned> set = fragments_nr_cpus(fragments);
  if (set && *set >= required) return std::nullopt;
  return required;
}

unsigned kernel_config_nr_cpus(std::string_view config_text, const std::string& origin) {
  const auto config = parse_final_config(config_text, origin);
  const auto nr = config.find("CONFIG_NR_CPUS");
  if (nr == config.end()) {
    const auto smp = config.find("CONFIG_SMP");
    if (smp == config.end() || smp->second != "y") return 1;
    throw Error(origin + ": an SMP kernel .config without CONFIG_NR_CPUS");
  }
  const int v = std::atoi(nr->second.c_str());
  if (v <= 0 || std::to_string(v) != nr->second)
    throw Error(origin + ": CONFIG_NR_CPUS=" + nr->second + " is not a positive number");
  return static_cast<unsigned>(v);
}

std::string variant_guest_cmdline(const GuestDerivation& guest, const VariantSpec& variant,
                                  bool trace) {
  std::string line = guest.cmdline;
  if (!variant.extra_cmdline.empty()) line += " " + variant.extra_cmdline;
  // Trace events are enabled at boot, before the secondary CPUs run (see guest/init_script.h).
  if (trace) line += " " + trace_event_boot_param();
  return line;
}

void check_guest_cmdline_length(const Spec& spec, const GuestDerivation& guest, bool trace) {
  for (const auto& v : spec.variants) {
    // TCG with instruction counting: the longest line (no_timer_check is added under TCG
    // only, nokaslr, clocksource=tsc and tsc=reliable when the plugin counts).
    VmConfig vm;
    vm.accel = Accel::tcg;
    vm.insn_plugin = InsnPluginConfig{"plugin", "output", {}, ""};
    vm.cmdline = variant_guest_cmdline(guest, v, trace);
    const std::string what = "variant " + v.name +
                             ": the final guest command line (with isolab's " +
                             (trace ? "trace_event=, trace_clock=, " : "") +
                             "console=ttyS0 panic=-1 no_timer_check" + insn_count_cmdline(vm) + ")";
    if (auto m = cmdline_cut_message(full_kernel_cmdline(vm), what))
      throw SpecError(guest_source_pointer(spec), *m);
  }
}

void check_guest_steps(const Spec& spec, const GuestDerivation& guest) {
  for (const auto& w : spec.workloads) guest_step(w, guest.partition, spec.timeouts, true);
}

void check_variant_cmdlines(const Spec& spec, const GuestDerivation& guest) {
  AnalyzeOptions ao;
  ao.vcpus = static_cast<unsigned>(guest.vcpus);
  for (std::size_t i = 0; i < spec.variants.size(); ++i) {
    if (spec.variants[i].extra_cmdline.empty()) continue;
    const std::string ptr = json_child(json_child("/variants", i), "extra_cmdline");
    Analysis a;
    try {
      a = analyze(spec.variants[i].extra_cmdline, ao);
    } catch (const Error& e) {
      throw SpecError(ptr, e.what());
    }
    if (const auto w = cpulist_rejection(a)) throw SpecError(ptr, *w);
  }
}

void check_primary_cpus(const Spec& spec, const GuestDerivation& guest) {
  if (spec.compare.is_null()) return;
  const std::vector<PrimaryMetric> primary = settings_from_json(spec.compare).primary;
  const auto vcpus = static_cast<unsigned>(guest.vcpus);
  for (std::size_t i = 0; i < primary.size(); ++i)
    for (const unsigned cpu : primary[i].cpus)
      if (cpu >= vcpus)
        throw SpecError(json_child(json_child("/compare/primary", i), "cpus"),
                        "CPU " + std::to_string(cpu) + " is not a CPU of the guest, whose " +
                            std::to_string(vcpus) + " vCPUs are 0-" + std::to_string(vcpus - 1) +
                            ": no boot gives that metric a value there");
}

std::vector<VmNumaNode> guest_numa_nodes(const Spec& spec) {
  std::vector<VmNumaNode> out;
  for (const auto& n : spec.numa_nodes) {
    CpuListParse r = try_parse_cpulist(n.cpus, static_cast<unsigned>(spec.vcpus));
    if (!r.ok()) throw Error("guest NUMA node cpus: " + r.message);
    out.push_back({r.set.cpus(), n.memory_mib});
  }
  return out;
}

nlohmann::json to_json(const GuestTopology& t) {
  return {{"sockets", t.sockets}, {"cores", t.cores}, {"threads", t.threads}};
}

}  // namespace isolab

#include "machine/guest_shape.h"

#include <algorithm>
#include <array>
#include <map>
#include <tuple>

#include "base/text.h"

namespace isolab {

bool GuestShape::identity() const {
  for (unsigned i = 0; i < customer_cpu.size(); ++i)
    if (customer_cpu[i] != i) return false;
  return true;
}

CpuSet GuestShape::to_guest(const CpuSet& customer) const {
  CpuSet g(vcpus());
  for (unsigned i = 0; i < customer_cpu.size(); ++i)
    if (customer.test(customer_cpu[i])) g.set(i);
  return g;
}

namespace {

// The CPUs a rule chooses from: the online ones (all CPUs when the dump has no online fact).
CpuSet online_cpus(const MachineFacts& m) { return m.online ? m.online->value : m.cpus->value; }

// The NUMA node of each customer CPU (none: every CPU on node 0).
std::map<unsigned, unsigned> node_of(const MachineFacts& m) {
  std::map<unsigned, unsigned> out;
  if (m.numa_nodes)
    for (const NumaNode& n : m.numa_nodes->value)
      for (unsigned c : n.cpus.cpus()) out[c] = n.node;
  return out;
}

// A CPU's class: its NUMA node and its membership of each isolation list.
using CpuClass = std::tuple<unsigned, std::array<bool, 4>>;

CpuClass class_of(const MachineFacts& m, const std::map<unsigned, unsigned>& nodes, unsigned c) {
  auto in = [&](const std::optional<Fact<CpuSet>>& f) { return f && f->value.test(c); };
  const auto n = nodes.find(c);
  return {n == nodes.end() ? 0u : n->second,
          {in(m.isolated), in(m.nohz_full), in(m.rcu_nocbs), in(m.housekeeping)}};
}

// Each class's lowest online CPU, in the customer's order.
std::vector<unsigned> one_per_class(const MachineFacts& m, const CpuSet& online) {
  const auto nodes = node_of(m);
  std::map<CpuClass, unsigned> first;
  for (unsigned c : online.cpus()) first.emplace(class_of(m, nodes, c), c);
  std::vector<unsigned> keep;
  for (unsigned c : online.cpus())
    if (first.at(class_of(m, nodes, c)) == c) keep.push_back(c);
  return keep;
}

// The machine's NUMA nodes in guest numbering, nodes without a guest CPU left out; one node
// alone is no layout.
std::vector<CpuSet> guest_nodes(const MachineFacts& m, const GuestShape& s) {
  std::vector<CpuSet> out;
  if (!m.numa_nodes) return out;
  for (const NumaNode& n : m.numa_nodes->value)
    if (CpuSet g = s.to_guest(n.cpus); !g.empty()) out.push_back(g);
  if (out.size() < 2) out.clear();
  return out;
}

// Whether every socket QEMU makes of `per_socket` vCPUs in a row (QEMU numbers x86 vCPUs socket
// by socket: vm/vm.h vcpu_topology_ids) lies on one of the guest's NUMA nodes.
bool sockets_within_nodes(const GuestShape& s, unsigned per_socket) {
  for (unsigned i = 0; i < s.vcpus(); ++i)
    for (const CpuSet& node : s.numa_nodes)
      if (node.test(i) != node.test(i - i % per_socket)) return false;
  return true;
}

// lscpu's sockets, cores and threads when their product is the guest's vCPUs and no socket
// then spans two NUMA nodes; else the default of pipeline/run_plan.h (one socket, or one socket
// per vCPU with NUMA nodes).
void set_topology(const MachineFacts& m, bool keep, GuestShape& s) {
  const unsigned n = s.vcpus();
  const bool counted =
      m.sockets && m.cores_per_socket && m.threads_per_core &&
      m.sockets->value * m.cores_per_socket->value * m.threads_per_core->value == n;
  if (keep && counted &&
      !sockets_within_nodes(s, m.cores_per_socket->value * m.threads_per_core->value)) {
    s.why += std::string(s.why.empty() ? "" : "; ") +
             "the machine's NUMA nodes cut across sockets as QEMU numbers them: one socket per "
             "vCPU";
    keep = false;
  }
  if (keep && counted) {
    s.sockets = m.sockets->value;
    s.cores = m.cores_per_socket->value;
    s.threads = m.threads_per_core->value;
    s.topology_kept = true;
    return;
  }
  if (keep && m.sockets && !counted)
    s.why += std::string(s.why.empty() ? "" : "; ") + "lscpu's sockets x cores x threads is not " +
             std::to_string(n) + ": one socket";
  s.sockets = s.numa_nodes.empty() ? 1 : n;
  s.cores = s.numa_nodes.empty() ? n : 1;
  s.threads = 1;
}

// The CPUs the isolation facts name together (a line's isolated and housekeeping lists may name
// every CPU); empty when they name none.
CpuSet named_cpus(const MachineFacts& m) {
  CpuSet out;
  for (const auto* f : {&m.isolated, &m.nohz_full, &m.rcu_nocbs, &m.housekeeping})
    if (*f) {
      const unsigned n = std::max(out.nbits(), (*f)->value.nbits());
      out = out.resized(n) | (*f)->value.resized(n);
    }
  return out;
}

}  // namespace

GuestShape guest_shape(const MachineFacts& m, unsigned max_vcpus) {
  GuestShape s;
  const bool counted = m.cpus || m.online;
  const CpuSet named = counted ? CpuSet() : named_cpus(m);
  if (!counted && named.empty()) {
    s.rule = "from the line";
    s.why = "the machine gives no CPU count: the line's lists decide";
    return s;
  }
  const CpuSet online = counted ? online_cpus(m) : named;
  const CpuSet all = m.cpus ? m.cpus->value : online;
  s.customer_nbits = all.last().value_or(0) + 1;
  const CpuSet offline = all - online;
  if (online.count() > max_vcpus) {
    s.customer_cpu = one_per_class(m, online);
    s.rule = "one CPU per class";
    CpuSet kept(s.customer_nbits);
    for (unsigned c : s.customer_cpu) kept.set(c);
    s.why = std::to_string(online.count()) + " online CPUs, more than " +
            std::to_string(max_vcpus) + ": each class's lowest CPU, " + kept.to_list();
  } else {
    s.customer_cpu = online.cpus();
    s.rule = offline.empty() ? "same" : "online CPUs only";
    if (!offline.empty()) s.why = "CPUs " + offline.to_list() + " offline: not booted";
  }
  if (!counted)
    s.why += std::string(s.why.empty() ? "" : "; ") +
             "no CPU count in the dump: the CPUs its isolation facts name, " + named.to_list();
  s.numa_nodes = guest_nodes(m, s);
  set_topology(m, s.rule != "one CPU per class", s);
  return s;
}

namespace {

// How a token's value carries CPUs: a list (after isolcpus=' flag words) or a hex mask.
enum class CpuValue { none, list, flagged_list, mask };

CpuValue cpu_value_of(std::string_view name) {
  static const std::map<std::string_view, CpuValue> table = {
      {"isolcpus", CpuValue::flagged_list},  {"nohz_full", CpuValue::list},
      {"rcu_nocbs", CpuValue::list},         {"irqaffinity", CpuValue::list},
      {"kthread_cpus", CpuValue::list},      {"systemd.cpu_affinity", CpuValue::list},
      {"tuned.non_isolcpus", CpuValue::mask}};
  const auto it = table.find(name);
  return it == table.end() ? CpuValue::none : it->second;
}

// isolcpus=managed_irq,domain,1-3: "managed_irq,domain," and "1-3" (kernel/sched/isolation.c
// housekeeping_isolcpus_setup(): flags are leading words of letters and '_' ended by ',').
std::pair<std::string_view, std::string_view> split_flags(std::string_view v) {
  size_t at = 0;
  for (;;) {
    size_t comma = v.find(',', at);
    if (comma == std::string_view::npos) break;
    const std::string_view word = v.substr(at, comma - at);
    if (word.empty() || word.find_first_not_of("abcdefghijklmnopqrstuvwxyz_") != word.npos) break;
    at = comma + 1;
  }
  return {v.substr(0, at), v.substr(at)};
}

std::string token_in_guest(std::string_view token, const GuestShape& s) {
  const size_t eq = token.find('=');
  if (eq == std::string_view::npos) return std::string(token);
  const std::string_view name = token.substr(0, eq), value = token.substr(eq + 1);
  const CpuValue kind = cpu_value_of(name);
  if (kind == CpuValue::none) return std::string(token);
  try {
    if (kind == CpuValue::mask)
      return std::string(name) + "=" +
             s.to_guest(parse_cpumask_hex(value, s.customer_nbits)).to_mask();
    const auto [flags, list] =
        kind == CpuValue::flagged_list ? split_flags(value) : std::pair{std::string_view{}, value};
    return std::string(name) + "=" + std::string(flags) +
           s.to_guest(parse_cpulist(list, s.customer_nbits)).to_list();
  } catch (const CpuListError&) {
    return std::string(token);  // the customer's kernel refused it too
  }
}

}  // namespace

std::string line_in_guest_numbering(std::string_view line, const GuestShape& s) {
  if (s.identity()) return std::string(line);
  std::string out;
  for (std::string_view t : split_space(line))
    out += (out.empty() ? "" : " ") + token_in_guest(t, s);
  return out;
}

}  // namespace isolab

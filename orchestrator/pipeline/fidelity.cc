#include "pipeline/fidelity.h"

#include <sstream>

namespace isolab {

std::string FidelityRow::label() const {
  return why.empty() ? fidelity : fidelity + " (" + why + ")";
}

namespace {

using Rows = std::vector<FidelityRow>;

std::string listed(const CpuSet& s) { return s.empty() ? "(none)" : s.to_list(); }

std::string counted(const CpuSet& s) { return listed(s) + " (" + std::to_string(s.count()) + ")"; }

// "same" when the guest is the machine vCPU for CPU, else "scaled" by the shape's rule.
FidelityRow by_rule(const CustomerSpec& c, std::string fact, std::string customer,
                    std::string guest) {
  const bool same = c.shape.rule == "same";
  return {std::move(fact), std::move(customer), std::move(guest), same ? "same" : "scaled",
          same ? "" : c.shape.rule + ": " + c.shape.why};
}

void kernel_row(const Spec& spec, const CustomerSpec& c, Rows& rows) {
  if (!c.facts.kernel_release) return;
  std::string variants;
  for (const auto& v : spec.variants) variants += (variants.empty() ? "" : ", ") + v.name;
  rows.push_back({"kernel", c.facts.kernel_release->value, "the spec's kernels (" + variants + ")",
                  "not reproduced",
                  "the guest boots the kernels under test; its line is read by the customer "
                  "kernel's rules"});
}

void cpu_rows(const CustomerSpec& c, const GuestDerivation& g, Rows& rows) {
  const MachineFacts& m = c.facts;
  if (m.cpus || m.online) {
    std::string customer = m.cpus ? counted(m.cpus->value) : "";
    if (m.online && (!m.cpus || !(m.online->value == m.cpus->value)))
      customer += (customer.empty() ? "" : ", ") + std::string("online ") + listed(m.online->value);
    rows.push_back(by_rule(c, "CPUs", customer, counted(CpuSet::all(g.vcpus))));
  }
  const std::string guest_topo = std::to_string(g.topology.sockets) + " x " +
                                 std::to_string(g.topology.cores) + " x " +
                                 std::to_string(g.topology.threads);
  if (m.sockets && m.cores_per_socket && m.threads_per_core) {
    FidelityRow r = by_rule(c, "topology (sockets x cores x threads)",
                            std::to_string(m.sockets->value) + " x " +
                                std::to_string(m.cores_per_socket->value) + " x " +
                                std::to_string(m.threads_per_core->value),
                            guest_topo);
    if (c.shape.rule != "same" && c.shape.topology_kept)
      r = {r.fact, r.customer, r.guest, "same", ""};
    if (c.shape.rule == "same" && !c.shape.topology_kept)
      r = {r.fact, r.customer, r.guest, "scaled", c.shape.why};
    rows.push_back(r);
  }
}

void numa_row(const Spec& spec, const CustomerSpec& c, Rows& rows) {
  if (!c.facts.numa_nodes) return;
  std::string customer;
  for (const NumaNode& n : c.facts.numa_nodes->value)
    customer += (customer.empty() ? "" : "; ") + std::string("node") + std::to_string(n.node) +
                " " + listed(n.cpus);
  std::string guest = "one node";
  if (!spec.numa_nodes.empty()) {
    guest.clear();
    for (std::size_t i = 0; i < spec.numa_nodes.size(); ++i)
      guest += (guest.empty() ? "" : "; ") + std::string("node") + std::to_string(i) + " " +
               spec.numa_nodes[i].cpus;
  }
  if (c.shape.identity() && c.facts.numa_nodes->value.size() < 2 && spec.numa_nodes.empty())
    rows.push_back({"NUMA nodes", customer, guest, "same", ""});
  else
    rows.push_back(by_rule(c, "NUMA nodes", customer, guest));
}

// The dropped parameters whose reason names the customer's kernel: what that kernel ignored.
std::string ignored_by_customer_kernel(const nlohmann::json& analysis) {
  std::string out;
  for (const auto& d : analysis.value("dropped", nlohmann::json::array()))
    if (d.value("reason", "").find("customer's kernel") != std::string::npos)
      out += (out.empty() ? "" : ", ") + d.value("param", "");
  return out;
}

void line_row(const CustomerSpec& c, const GuestDerivation& g, Rows& rows) {
  const std::size_t dropped = g.analysis.value("dropped", nlohmann::json::array()).size();
  std::string why = "reduced to the parameters that matter in a guest (cmdline/analyze.h): " +
                    std::to_string(dropped) + " dropped";
  if (const std::string ignored = ignored_by_customer_kernel(g.analysis); !ignored.empty())
    why += ", among them what the customer's kernel ignored: " + ignored;
  if (!c.shape.identity()) why += "; CPU lists in guest numbering (" + c.shape.rule + ")";
  const bool same = g.cmdline == c.line;
  rows.push_back(
      {"kernel command line", c.line, g.cmdline, same ? "same" : "scaled", same ? "" : why});
}

// A CPU list fact against the guest's: by the rule when the guest's is the customer's in guest
// numbering, else not reproduced.
void list_row(const CustomerSpec& c, const char* fact, const std::optional<Fact<CpuSet>>& f,
              const CpuSet& guest, Rows& rows) {
  if (!f) return;
  if (c.shape.vcpus() > 0 && !(c.shape.to_guest(f->value) == guest.resized(c.shape.vcpus()))) {
    rows.push_back({fact, listed(f->value), listed(guest), "not reproduced",
                    "the guest's kernel reads the line as " + listed(guest) + ", the customer's " +
                        "CPUs " + listed(f->value) + " are vCPUs " +
                        listed(c.shape.to_guest(f->value))});
    return;
  }
  if (c.shape.identity() && f->value == guest.resized(f->value.nbits())) {
    rows.push_back({fact, listed(f->value), listed(guest), "same", ""});
    return;
  }
  rows.push_back(by_rule(c, fact, listed(f->value), listed(guest)));
}

void isolation_rows(const CustomerSpec& c, const GuestDerivation& g, Rows& rows) {
  const ExpectedIsolation& e = g.expected;
  list_row(c, "isolated (any means)", c.facts.isolated, e.isolated | e.nohz_full, rows);
  list_row(c, "nohz_full", c.facts.nohz_full, e.nohz_full, rows);
  list_row(c, "rcu_nocbs", c.facts.rcu_nocbs, e.rcu_offload.value_or(CpuSet(g.vcpus)), rows);
  list_row(c, "housekeeping", c.facts.housekeeping, g.partition.housekeeping, rows);
}

void tuned_row(const CustomerSpec& c, Rows& rows) {
  if (!c.facts.tuned) return;
  std::string customer = c.facts.tuned->value.profile;
  if (!c.facts.tuned->value.include.empty()) {
    customer += " (includes";
    for (const auto& i : c.facts.tuned->value.include) customer += " " + i;
    customer += ")";
  }
  rows.push_back({"TuneD profile", customer, "no TuneD; /init sets its settings (rows below)",
                  "not reproduced",
                  "TuneD does not run in the guest: what it sets that bears on isolation is "
                  "set by /init and read back by the gate"});
}

void sysctl_rows(const Spec& spec, const CustomerSpec& c, Rows& rows) {
  for (const auto& [name, value] : c.runtime.sysctls) {
    std::string overrides;
    for (const auto& v : spec.variants)
      if (auto it = v.sysctls.find(name); it != v.sysctls.end())
        overrides += (overrides.empty() ? "" : ", ") + v.name + " sets " + it->second;
    rows.push_back({"sysctl " + name, value, overrides.empty() ? value : overrides,
                    overrides.empty() ? "same" : "not reproduced",
                    overrides.empty() ? "" : "the spec's variants set their own"});
  }
  for (const auto& [name, why] : c.runtime.left_out)
    rows.push_back({"sysctl " + name, "", "(not set)", "not reproduced", why});
}

void move_rows(const CustomerSpec& c, Rows& rows) {
  const RuntimeSettings& r = c.runtime;
  if (!r.housekeeping) {
    rows.push_back({"TuneD's housekeeping moves", "", "the kernel's defaults", "not reproduced",
                    r.not_moved_why});
    return;
  }
  const std::string guest = c.shape.vcpus() ? listed(c.shape.to_guest(*r.housekeeping)) : "";
  const bool same = c.shape.identity() && guest == listed(*r.housekeeping);
  for (const char* fact :
       {"workqueue cpumask", "IRQ default affinity", "IRQ affinity", "kernel threads"}) {
    FidelityRow row = by_rule(c, fact, listed(*r.housekeeping) + " (" + r.moved_by + ")", guest);
    if (same) row.fidelity = "same", row.why = "";
    rows.push_back(row);
  }
}

void irq_row(const CustomerSpec& c, Rows& rows) {
  if (!c.facts.irqs_on_isolated || c.facts.irqs_on_isolated->value.empty()) return;
  std::string customer;
  for (const IrqPlacement& i : c.facts.irqs_on_isolated->value)
    customer += (customer.empty() ? "" : ", ") + std::to_string(i.irq) +
                (i.name.empty() ? "" : " " + i.name) + " -> " + listed(i.affinity);
  rows.push_back({"IRQs on isolated CPUs", customer, "none of these devices", "not reproduced",
                  "the guest has none of the customer's devices; where its own IRQs went is the "
                  "gate's runtime irq affinity row"});
}

}  // namespace

std::vector<FidelityRow> fidelity_rows(const Spec& spec, const GuestDerivation& g) {
  Rows rows;
  if (!spec.customer) return rows;
  const CustomerSpec& c = *spec.customer;
  kernel_row(spec, c, rows);
  cpu_rows(c, g, rows);
  numa_row(spec, c, rows);
  line_row(c, g, rows);
  isolation_rows(c, g, rows);
  tuned_row(c, rows);
  sysctl_rows(spec, c, rows);
  move_rows(c, rows);
  irq_row(c, rows);
  return rows;
}

nlohmann::json to_json(const std::vector<FidelityRow>& rows) {
  nlohmann::json out = nlohmann::json::array();
  for (const FidelityRow& r : rows)
    out.push_back({{"fact", r.fact},
                   {"customer", r.customer},
                   {"guest", r.guest},
                   {"fidelity", r.fidelity},
                   {"why", r.why}});
  return out;
}

std::string fidelity_text(const std::vector<FidelityRow>& rows) {
  if (rows.empty()) return "";
  auto clip = [](const std::string& s, std::size_t w) {
    return s.size() <= w ? s + std::string(w - s.size(), ' ') : s.substr(0, w - 3) + "...";
  };
  std::ostringstream o;
  o << clip("fact", 32) << " " << clip("customer", 40) << " " << clip("guest", 40) << " fidelity\n";
  for (const FidelityRow& r : rows)
    o << clip(r.fact, 32) << " " << clip(r.customer, 40) << " " << clip(r.guest, 40) << " "
      << r.label() << "\n";
  return o.str();
}

}  // namespace isolab

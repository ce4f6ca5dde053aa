#include "spec/customer.h"

#include "base/error.h"
#include "cmdline/analyze.h"
#include "cmdline/customer_kernel.h"
#include "machine/machine.h"
#include "spec/json_object.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace isolab {

namespace {

// /guest fields the machine sets.
void refuse_guest_fields(const json* guest) {
  if (!guest || !guest->is_object()) return;
  for (const char* k : {"cmdline", "customer_cmdline", "customer_dmesg", "customer_kernel_version",
                        "vcpus", "topology", "numa_nodes"})
    if (guest->contains(k))
      throw SpecError(std::string("/guest/") + k,
                      "set by the customer's machine (/customer/machine); leave it out");
}

MachineFacts read_customer_machine(const fs::path& path, const std::string& node) {
  MachineOptions o;
  if (!node.empty()) o.node = node;
  try {
    return read_machine(path, o);
  } catch (const Error& e) {
    throw SpecError("/customer/machine", e.what());
  }
}

// The machine's line: what the node booted, else what its profile renders.
void take_line(CustomerSpec& c) {
  const auto& f = c.facts.cmdline ? c.facts.cmdline : c.facts.rendered_cmdline;
  if (!f) {
    std::string why;
    for (const NotRead& n : c.facts.not_read)
      if (n.fact == "cmdline") why = ": " + n.why;
    throw SpecError("/customer/machine",
                    c.machine.string() + " gives no kernel command line" + why);
  }
  c.line = f->value;
  c.line_from = f->from.empty() ? "" : f->from.front().text();
}

// The guest's NUMA nodes with /guest/memory_mib split evenly, the remainder to node 0.
std::vector<NumaNodeSpec> numa_nodes(const CustomerSpec& c, int memory_mib) {
  const int n = static_cast<int>(c.shape.numa_nodes.size());
  std::vector<NumaNodeSpec> out;
  if (n == 0) return out;
  if (memory_mib < 16 * n)
    throw SpecError("/guest/memory_mib", std::to_string(memory_mib) + " MiB cannot give the " +
                                             std::to_string(n) +
                                             " NUMA nodes of the customer's machine 16 MiB each");
  for (int i = 0; i < n; ++i)
    out.push_back(
        {c.shape.numa_nodes[i].to_list(), memory_mib / n + (i == 0 ? memory_mib % n : 0)});
  return out;
}

void set_guest(const CustomerSpec& c, int memory_mib, CustomerGuest& g) {
  g.customer_cmdline = line_in_guest_numbering(c.line, c.shape);
  if (c.facts.kernel_release && c.facts.kernel_release->value.size() <= 64 &&
      parse_kernel_version(c.facts.kernel_release->value))
    g.customer_kernel_version = c.facts.kernel_release->value;
  if (c.shape.vcpus() == 0) return;  // "from the line"
  g.shape =
      CustomerGuest::Shape{static_cast<int>(c.shape.vcpus()),
                           {static_cast<int>(c.shape.sockets), static_cast<int>(c.shape.cores),
                            static_cast<int>(c.shape.threads), true},
                           numa_nodes(c, memory_mib)};
}

}  // namespace

CustomerGuest parse_customer(const json& j, const json* guest, const fs::path& base_dir,
                             int memory_mib) {
  SpecObject o(j, "/customer");
  CustomerSpec c;
  const std::string path = o.str("machine");
  if (path.empty()) throw SpecError("/customer/machine", "missing: the dump's path");
  c.machine = fs::path(path).is_absolute() ? fs::path(path) : base_dir / path;
  std::error_code ec;
  if (!fs::exists(c.machine, ec))
    throw SpecError("/customer/machine", "file not found: " + c.machine.string());
  c.machine = fs::weakly_canonical(c.machine, ec);
  c.node = o.str("node");
  c.max_vcpus = static_cast<unsigned>(
      o.integer("max_vcpus", kCustomerGuestMaxVcpus, 1, static_cast<long>(kMaxGuestVcpus)));
  o.finish();
  refuse_guest_fields(guest);
  c.facts = read_customer_machine(c.machine, c.node);
  take_line(c);
  c.shape = guest_shape(c.facts, c.max_vcpus);
  c.runtime = runtime_settings(c.facts);
  CustomerGuest g;
  set_guest(c, memory_mib, g);
  g.customer = std::move(c);
  return g;
}

}  // namespace isolab

// /customer: the customer's machine as the customer handed it over, and the guest it implies.
//
// {"machine": PATH, "node": NAME, "max_vcpus": N}. PATH (relative to the spec's directory) is
// what `isolab machine` reads (machine/machine.h: a sos report or a must-gather as a directory
// or an archive, a PerformanceProfile, TuneD files); node is its --node; max_vcpus (1..255,
// default kCustomerGuestMaxVcpus) bounds the guest (machine/guest_shape.h). The machine is read
// when the spec is loaded, and it sets the guest in place of /guest's own fields:
//  - /guest/customer_cmdline: the machine's kernel command line (its /proc/cmdline, else the
//    line its PerformanceProfile renders), its CPU lists in guest numbering
//    (line_in_guest_numbering), so the cmdline analyzer reads it as today;
//  - /guest/customer_kernel_version: the machine's kernel release, when it is one;
//  - /guest/vcpus, /guest/topology (sockets, cores, threads) and /guest/numa_nodes (each node's
//    CPUs; /guest/memory_mib split evenly, the remainder to node 0): the machine's, by the rule
//    of guest_shape();
//  - the runtime settings (machine/runtime_settings.h), in guest numbering, for /init and the
//    gate (pipeline/customer_guest.h).
// Errors (SpecError): a /guest field the machine sets ("/guest/vcpus: set by the customer's
// machine (/customer/machine); leave it out"), a machine that cannot be read or gives no
// command line ("/customer/machine: ..."), memory too small for the nodes.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "machine/facts.h"
#include "machine/guest_shape.h"
#include "machine/runtime_settings.h"
#include "spec/guest_spec.h"

namespace isolab {

struct CustomerSpec {
  std::filesystem::path machine;  // resolved
  std::string node;               // "" = the reader's choice
  unsigned max_vcpus = kCustomerGuestMaxVcpus;
  MachineFacts facts;
  GuestShape shape;
  RuntimeSettings runtime;  // the customer's numbering
  std::string line;         // the customer's line as read
  std::string line_from;    // where it was read (Origin::text())
};

// What /customer sets of the guest: the spec/spec.h Spec fields of the same names.
struct CustomerGuest {
  CustomerSpec customer;
  std::string customer_cmdline;
  std::string customer_kernel_version;  // "" when the machine gives no usable release
  // The guest's shape; nullopt when the machine's CPU count is unknown (the line decides it).
  struct Shape {
    int vcpus = 0;
    GuestTopologySpec topology;
    std::vector<NumaNodeSpec> numa_nodes;  // empty: one node
  };
  std::optional<Shape> shape;
};

// Parses /customer (j) and reads the machine, after /guest was parsed: `guest` is /guest as
// given (or nullptr), memory_mib its memory (split over the machine's NUMA nodes).
CustomerGuest parse_customer(const nlohmann::json& j, const nlohmann::json* guest,
                             const std::filesystem::path& base_dir, int memory_mib);

}  // namespace isolab

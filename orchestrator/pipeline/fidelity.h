// The fidelity table: how faithfully the guest stands for the customer's machine
// (/customer, spec/customer.h). One row per fact of the machine: the customer's value, the
// guest's, and "same", "scaled" (the guest keeps what the fact means by the named rule of
// machine/guest_shape.h) or "not reproduced" (with why). `isolab run --dry-run` prints it and
// result.json carries it ("fidelity", docs/RESULT_SCHEMA.md). Pure.
//
// Rows, in this order (a fact the dump does not give has no row, except where said):
//  kernel; CPUs (all, and which are online); topology (sockets x cores x threads); NUMA nodes;
//  kernel command line; "isolated (any means)" (the machine's `isolated`: isolcpus= with any
//  flags, nohz_full=, the profile's isolated_cores; against the guest's isolcpus= and nohz_full=
//  CPUs), nohz_full, rcu_nocbs, housekeeping (the customer's facts against what the guest's line
//  gives, cmdline/analyze.h, turned into guest numbering);
//  TuneD; one row per customer sysctl (and per one left out); workqueue cpumask, IRQ default
//  affinity, kernel threads (TuneD's moves, or one row saying why nothing is moved); IRQs on
//  isolated CPUs.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "pipeline/run_plan.h"
#include "spec/spec.h"

namespace isolab {

struct FidelityRow {
  std::string fact;
  std::string customer;
  std::string guest;
  std::string fidelity;       // "same", "scaled" or "not reproduced"
  std::string why;            // scaled: the rule and what it did; not reproduced: why; same: ""
  std::string label() const;  // "same", "scaled (why)", "not reproduced (why)"
};

// Empty without /customer.
std::vector<FidelityRow> fidelity_rows(const Spec& spec, const GuestDerivation& guest);

// [{"fact", "customer", "guest", "fidelity", "why"}, ...]
nlohmann::json to_json(const std::vector<FidelityRow>& rows);

// A fixed-width table, one row per line, values cut at 40 characters with "..." (the full
// values are in the JSON); "" for no rows.
std::string fidelity_text(const std::vector<FidelityRow>& rows);

}  // namespace isolab

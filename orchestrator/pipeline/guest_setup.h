// The checks of a cell's guest beyond the isolation gate: the variant's sysctls and the spec's
// NUMA layout (guest/setup_check.h), recorded in the cell's JSON.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "guest/channel.h"
#include "spec/spec.h"

namespace isolab {

// Records in cell["guest"] what the guest reported ("node_online", "numa_nodes" when its kernel
// has NUMA; sanitized) and in cell["sysctls"] the variant's sysctls as read back
// ({"vm.numa_stat": {"wanted": "0", "read": "0", "write_status": 0}}), then returns "" when
// the guest has the sysctls and the NUMA layout asked for and every customer sysctl file
// (pipeline/customer_guest.h runtime_setup_failure), else the reason (the cell is then
// invalid). Never throws for what the guest sent.
std::string check_guest_setup(const Spec& spec, const VariantSpec& variant,
                              const ChannelContents& records, nlohmann::json& cell);

}  // namespace isolab

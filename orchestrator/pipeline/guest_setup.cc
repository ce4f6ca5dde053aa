#include "pipeline/guest_setup.h"

#include "base/error.h"
#include "base/files.h"
#include "guest/setup_check.h"
#include "pipeline/customer_guest.h"

namespace isolab {

namespace {

const std::string* record_data(const ChannelContents& ch, const std::string& name) {
  const ChannelRecord* r = ch.find(name);
  return r ? &r->data : nullptr;
}

}  // namespace

std::string check_guest_setup(const Spec& spec, const VariantSpec& variant,
                              const ChannelContents& ch, nlohmann::json& cell) {
  const std::string* online = record_data(ch, "node_online");
  const std::string* nodes = record_data(ch, "numa_nodes");
  if (online) cell["guest"]["node_online"] = sanitize_excerpt(*online, 200);
  if (nodes) cell["guest"]["numa_nodes"] = sanitize_excerpt(*nodes, 2000);

  const std::string* sysctls = record_data(ch, "sysctls");
  if (!variant.sysctls.empty()) {
    nlohmann::json got = nlohmann::json::object();
    std::vector<SysctlReadback> read;
    try {
      if (sysctls) read = parse_sysctl_record(*sysctls);
    } catch (const Error&) {
      // sysctl_mismatch() below names the problem.
    }
    for (const auto& [name, value] : variant.sysctls) {
      got[name] = {{"wanted", value}, {"read", nullptr}, {"write_status", nullptr}};
      for (const auto& r : read)
        if (r.name == name)
          got[name] = {{"wanted", value},
                       {"read", sanitize_excerpt(r.value, 200)},
                       {"write_status", r.write_status}};
    }
    cell["sysctls"] = got;
  }

  std::vector<std::string> wanted_cpus;
  for (const auto& n : spec.numa_nodes) wanted_cpus.push_back(n.cpus);
  if (std::string why = numa_layout_mismatch(wanted_cpus, online, nodes); !why.empty()) return why;
  if (std::string why = runtime_setup_failure(record_data(ch, "runtime")); !why.empty()) return why;
  return sysctl_mismatch(variant.sysctls, sysctls);
}

}  // namespace isolab

#include "pipeline/customer_guest.h"

#include "base/error.h"

namespace isolab {

ExpectedRuntime expected_runtime(const Spec& spec, const VariantSpec& variant) {
  ExpectedRuntime e;
  if (!spec.customer) return e;
  const CustomerSpec& c = *spec.customer;
  for (const auto& [name, value] : c.runtime.sysctls)
    if (!variant.sysctls.count(name)) e.sysctls.emplace_back(name, value);
  if (c.runtime.housekeeping && c.shape.vcpus() > 0)
    e.housekeeping = c.shape.to_guest(*c.runtime.housekeeping);
  return e;
}

GuestRuntime guest_runtime(const ExpectedRuntime& e) {
  GuestRuntime g;
  g.sysctls = e.sysctls;
  if (e.housekeeping && !e.housekeeping->empty()) {
    g.housekeeping = e.housekeeping->to_list();
    g.housekeeping_mask = e.housekeeping->to_mask();
  }
  return g;
}

std::string runtime_setup_failure(const std::string* record) {
  if (!record) return "";
  std::vector<std::string> missing;
  try {
    missing = missing_sysctls(parse_runtime_record(*record));
  } catch (const Error&) {
    return "";  // the gate's "runtime settings" row says what is wrong with the record
  }
  if (missing.empty()) return "";
  std::string path = "/proc/sys/" + missing.front();
  for (std::size_t i = 10; i < path.size(); ++i)
    if (path[i] == '.') path[i] = '/';
  return "customer sysctl " + missing.front() + ": " + path +
         " does not exist in the guest kernel (an option of its .config provides it; "
         "kernel-configs/tuned-sysctls.config has the lockup and hung-task detectors'), so it "
         "did not run as the customer's machine";
}

}  // namespace isolab

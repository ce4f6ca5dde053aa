// The customer's runtime settings (spec/customer.h, machine/runtime_settings.h) as one cell's
// guest gets them: in guest numbering, for the guest's /init (guest/runtime_script.h) and for
// the isolation gate (gate/runtime_check.h). Pure.
#pragma once

#include <string>

#include "gate/runtime_check.h"
#include "guest/runtime_script.h"
#include "spec/spec.h"

namespace isolab {

// What a cell of `variant` must have: the customer's sysctls less those the variant sets
// itself (its own are written after them and checked by pipeline/guest_setup.h), and the
// housekeeping CPUs the customer's TuneD moves things to, in guest numbering. Empty without
// /customer.
ExpectedRuntime expected_runtime(const Spec& spec, const VariantSpec& variant);

// The same for the guest's /init: the housekeeping CPUs as a list and as the kernel's hex mask.
GuestRuntime guest_runtime(const ExpectedRuntime& e);

// "" when the guest kernel had every customer sysctl; else a reason naming the first it lacks
// ("customer sysctl kernel.hung_task_timeout_secs: /proc/sys/kernel/hung_task_timeout_secs does
// not exist in the guest kernel (an option of its .config provides it; kernel-configs/
// tuned-sysctls.config has the lockup and hung-task detectors'), so it did not run as the
// customer's machine"). record: record "runtime", nullptr when absent (the gate says so).
std::string runtime_setup_failure(const std::string* record);

}  // namespace isolab

// Checks of what a guest set up besides its isolation, from the records its init sent (guest
// output is untrusted: every record is parsed strictly and quoted when wrong):
//  - the sysctls a variant asked for (record "sysctls", guest/init_script.h GuestPlan::sysctls);
//  - the NUMA layout the spec asked for (records "node_online" and "numa_nodes").
// A non-empty reason makes the cell invalid: it was not measured under the settings asked for.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace isolab {

struct SysctlReadback {
  std::string name;      // "vm.numa_stat"
  int write_status = 0;  // exit status of the guest's echo into /proc/sys (0 = written)
  std::string value;     // read back, runs of blanks as one space, trimmed
};

// Parses record "sysctls": lines "<name>\t<status>\t<value>". Throws isolab::Error naming the
// line number and quoting it when a line has not three fields or the status is no integer.
std::vector<SysctlReadback> parse_sysctl_record(std::string_view text);

// "" when every wanted sysctl was written (status 0) and reads back as its wanted value
// (blank runs compared as one space); else a reason naming the first sysctl that did not
// ("sysctl vm.numa_stat: wanted '0', read back '1'", "... not in the guest's report",
// "... could not be written (exit status 1; does the kernel have it?)"). wanted empty: "".
// A record that does not parse is a reason too ("sysctl report: <error>").
std::string sysctl_mismatch(const std::map<std::string, std::string>& wanted,
                            const std::string* record);

// "" when the guest shows the NUMA nodes asked for: node_online is "0-<n-1>" (or "0" for one
// node) and numa_nodes has "node<i> <cpulist>" for each node i with the cpulist asked (canonical
// "%*pbl" form, as sysfs prints). wanted_cpus[i]: node i's cpulist. Records absent (nullptr)
// mean a kernel without CONFIG_NUMA. wanted_cpus empty: "".
std::string numa_layout_mismatch(const std::vector<std::string>& wanted_cpus,
                                 const std::string* node_online, const std::string* numa_nodes);

}  // namespace isolab

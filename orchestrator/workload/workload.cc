#include "workload/workload.h"

#include "base/error.h"
#include "base/files.h"

namespace isolab {

CpuSet resolve_cpus(const std::string& sel, const CpuPartition& p, const std::string& pointer) {
  CpuSet s;
  if (sel == "isolated")
    s = p.isolated;
  else if (sel == "housekeeping")
    s = p.housekeeping;
  else if (sel == "all")
    s = p.all;
  else {
    CpuListParse r = try_parse_cpulist(sel, p.all.nbits());
    if (!r.ok())
      throw SpecError(pointer, r.message + " (the guest has CPUs " + p.all.to_list() + ")");
    s = r.set;
  }
  if (s.empty())
    throw SpecError(pointer, "selects no CPU ('" + sel + "' in a guest with CPUs " +
                                 p.all.to_list() + ", isolated '" + p.isolated.to_list() + "')");
  return s;
}

}  // namespace isolab

#include "workload/registry.h"

#include <algorithm>

#include "base/error.h"

namespace isolab {

#define ISOLAB_TOOL(f) const WorkloadTool& f();
#include "workload/tools/tools.def"
#undef ISOLAB_TOOL

const std::vector<const WorkloadTool*>& workload_tools() {
  static const std::vector<const WorkloadTool*> tools = {
#define ISOLAB_TOOL(f) &f(),
#include "workload/tools/tools.def"
#undef ISOLAB_TOOL
  };
  return tools;
}

const WorkloadTool* find_workload_tool(const std::string& name) {
  for (const WorkloadTool* t : workload_tools())
    if (name == t->name) return t;
  return nullptr;
}

const WorkloadTool& tool_of(const WorkloadSpec& w) {
  const WorkloadTool* t = find_workload_tool(w.tool);
  if (!t) throw Error("workload " + w.name + ": unknown tool " + w.tool);
  return *t;
}

namespace {

bool uses(const std::vector<WorkloadSpec>& ws, const WorkloadTool& t) {
  for (const auto& w : ws)
    if (w.tool == t.name || (w.load && w.load->front().tool == t.name)) return true;
  return false;
}

}  // namespace

std::vector<std::string> guest_binaries(const std::vector<WorkloadSpec>& workloads, bool always) {
  std::vector<std::string> out;
  for (const WorkloadTool* t : workload_tools())
    if (t->binary_always == always && (always || uses(workloads, *t)) &&
        std::find(out.begin(), out.end(), t->guest_binary) == out.end())
      out.emplace_back(t->guest_binary);
  return out;
}

std::vector<std::string> workload_metric_patterns(const WorkloadSpec& w) {
  std::vector<std::string> out = {w.name + ".noise.*"};
  for (const auto& n : tool_of(w).metric_names(w)) out.push_back(w.name + "." + n);
  if (w.load)
    for (const auto& n : tool_of(w.load->front()).metric_names(w.load->front()))
      out.push_back(w.name + ".load." + n);
  return out;
}

namespace {

bool matches_from(const std::string& p, std::size_t i, const std::string& n, std::size_t j,
                  bool prefix) {
  if (j == n.size()) return prefix || p.find_first_not_of('*', i) == std::string::npos;
  if (i == p.size()) return false;
  if (p[i] == '*')
    return matches_from(p, i + 1, n, j, prefix) || matches_from(p, i, n, j + 1, prefix);
  return p[i] == n[j] && matches_from(p, i + 1, n, j + 1, prefix);
}

}  // namespace

bool metric_pattern_matches(const std::string& pattern, const std::string& name, bool prefix) {
  return matches_from(pattern, 0, name, 0, prefix);
}

}  // namespace isolab

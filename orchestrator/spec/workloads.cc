#include "spec/workloads.h"

#include <regex>
#include <set>

#include "base/files.h"
#include "spec/json_object.h"
#include "workload/registry.h"

namespace isolab {

namespace {

// The names of the tools with `flag`, joined by `sep`.
std::string tool_names(bool WorkloadTool::*flag, const char* sep) {
  std::string out;
  for (const WorkloadTool* t : workload_tools())
    if (!flag || t->*flag) out += (out.empty() ? "" : sep) + std::string(t->name);
  return out;
}

// "tool": a registered tool that may stand here (a workload of its own, or a load).
const WorkloadTool& read_tool(SpecObject& o, WorkloadSpec& w, bool is_load) {
  w.tool = o.str("tool");
  const WorkloadTool* t = find_workload_tool(w.tool);
  if (!t)
    throw SpecError(o.ptr("tool"), "unknown tool '" + sanitize_excerpt(w.tool, 40) +
                                       "' (known: " + tool_names(nullptr, ", ") + ")");
  if (!is_load && !t->as_workload)
    throw SpecError(o.ptr("tool"), w.tool + " runs only as the load of a " +
                                       tool_names(&WorkloadTool::takes_load, " or "));
  if (is_load && !t->as_load)
    throw SpecError(o.ptr("tool"), "a load must be " + tool_names(&WorkloadTool::as_load, " or "));
  return *t;
}

// "stressors": {stressor: instances}, read for every tool.
void read_stressors(SpecObject& o, WorkloadSpec& w) {
  const nlohmann::json* s = o.get("stressors");
  if (!s) return;
  if (!s->is_object() || s->empty())
    throw SpecError(o.ptr("stressors"), "expected an object {stressor: instances}");
  static const std::regex st_re("[a-z0-9-]{1,30}");
  for (auto it = s->begin(); it != s->end(); ++it) {
    std::string p = json_child(o.ptr("stressors"), it.key());
    if (!std::regex_match(it.key(), st_re)) throw SpecError(p, "bad stressor name");
    if (!it->is_number_integer() || it->get<int>() < 0 || it->get<int>() > 1024)
      throw SpecError(p, "expected an instance count 0-1024 (0 = one per selected CPU)");
    w.stressors[it.key()] = it->get<int>();
  }
}

// The fields every tool takes, with the tool's defaults.
void read_common_fields(SpecObject& o, WorkloadSpec& w, const WorkloadTool& t, bool is_load) {
  w.cpus = o.str("cpus", is_load ? "housekeeping" : t.default_cpus);
  static const std::regex cpus_re("isolated|housekeeping|all|[0-9N, :/-]+");
  if (!std::regex_match(w.cpus, cpus_re))
    throw SpecError(o.ptr("cpus"), "expected isolated, housekeeping, all or a cpulist, got '" +
                                       sanitize_excerpt(w.cpus, 40) + "'");
  w.duration_s =
      static_cast<int>(o.integer("duration_s", t.default_duration_s, t.min_duration_s, 86400));
  w.interval_us = static_cast<int>(o.integer("interval_us", 1000, 50, 1000000));
  w.priority = static_cast<int>(o.integer("priority", 95, 1, 99));
  w.histogram_us = static_cast<int>(o.integer("histogram_us", 1000, 0, 100000));
  read_stressors(o, w);
  w.extra_args = o.strings("extra_args");
  for (std::size_t i = 0; i < w.extra_args.size(); ++i)
    if (w.extra_args[i].find_first_of("\n\r'") != std::string::npos || w.extra_args[i].size() > 200)
      throw SpecError(json_child(o.ptr("extra_args"), i),
                      "argument has a newline or quote or is too long");
}

// Another tool's own field, or a load where this tool takes none.
void refuse_other_tools_fields(const SpecObject& o, const WorkloadTool& t, bool is_load) {
  for (const WorkloadTool* other : workload_tools())
    for (const auto& f : other->own_fields)
      if (other != &t && o.has(f))
        throw SpecError(o.ptr(f),
                        "only a " + std::string(other->name) + " workload takes this field");
  if (is_load && o.has("load")) throw SpecError(o.ptr("load"), "a load cannot have a load");
  if (!t.takes_load && o.has("load"))
    throw SpecError(o.ptr("load"), "only a " + tool_names(&WorkloadTool::takes_load, " or ") +
                                       " workload takes a load");
}

WorkloadSpec parse_workload(const nlohmann::json& j, const std::string& ptr, bool is_load) {
  SpecObject o(j, ptr);
  WorkloadSpec w;
  w.pointer = ptr;
  w.name = o.str("name", is_load ? "load" : "");
  check_spec_name(w.name, o.ptr("name"), "workload");
  const WorkloadTool& t = read_tool(o, w, is_load);
  read_common_fields(o, w, t, is_load);
  t.read_fields(o, w);
  w.timeout_s = static_cast<int>(o.integer("timeout_s", 0, 0, 86400));
  refuse_other_tools_fields(o, t, is_load);
  if (const nlohmann::json* l = o.get("load")) {
    w.load = std::vector<WorkloadSpec>{parse_workload(*l, o.ptr("load"), true)};
    w.load->front().duration_s = w.duration_s;
  }
  o.finish();
  return w;
}

}  // namespace

void check_spec_name(const std::string& name, const std::string& ptr, const char* what) {
  static const std::regex re("[A-Za-z0-9_.-]{1,40}");
  if (!std::regex_match(name, re) || name == "." || name == "..")
    throw SpecError(ptr, std::string(what) + " name '" + sanitize_excerpt(name, 60) +
                             "' must be 1-40 characters of A-Z a-z 0-9 _ . -");
}

std::vector<WorkloadSpec> parse_workloads(const nlohmann::json* wls) {
  if (!wls || !wls->is_array() || wls->empty())
    throw SpecError("/workloads", "expected a non-empty array of workloads");
  std::vector<WorkloadSpec> out;
  std::set<std::string> names;
  for (std::size_t i = 0; i < wls->size(); ++i) {
    std::string p = json_child("/workloads", i);
    WorkloadSpec w = parse_workload((*wls)[i], p, false);
    if (!names.insert(w.name).second)
      throw SpecError(p + "/name", "duplicate workload name " + w.name);
    out.push_back(std::move(w));
  }
  return out;
}

}  // namespace isolab

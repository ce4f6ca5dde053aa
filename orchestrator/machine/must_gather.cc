#include "machine/must_gather.h"

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>

#include "base/error.h"
#include "machine/cpu_files.h"
#include "machine/irqs.h"
#include "machine/kube_facts.h"
#include "machine/machine_dump.h"
#include "machine/machine_root.h"

namespace isolab {

namespace {

constexpr std::string_view kProfiles =
    "cluster-scoped-resources/performance.openshift.io/performanceprofiles";

bool is_yaml(const std::string& name) { return name.ends_with(".yaml") || name.ends_with(".yml"); }

std::vector<KubeObject> objects_in(const DumpTree& t, const std::string& root,
                                   const std::string& dir) {
  std::vector<KubeObject> out;
  for (const std::string& name : t.children(root + dir)) {
    const std::string rel = dir + "/" + name;
    if (!is_yaml(name) || !t.is_file(root + rel)) continue;
    for (KubeObject& o : load_kube_objects(*t.read(root + rel), rel)) out.push_back(std::move(o));
  }
  return out;
}

std::string pick_node(const DumpTree& t, const std::string& root,
                      const std::optional<std::string>& node) {
  const std::vector<std::string> nodes = must_gather_nodes(t, root);
  std::string list;
  for (const std::string& n : nodes) list += (list.empty() ? "" : ", ") + n;
  if (nodes.empty())
    throw Error(display_path(t, root + "nodes") +
                ": a must-gather without node data (no nodes/<node>/ folder): gather it with the "
                "Node Tuning Operator's must-gather image");
  if (node) {
    if (std::find(nodes.begin(), nodes.end(), *node) == nodes.end())
      throw Error(t.name() + ": no node '" + *node + "' in this must-gather; it holds " + list);
    return *node;
  }
  if (nodes.size() > 1)
    throw Error(t.name() + ": the must-gather holds " + std::to_string(nodes.size()) +
                " nodes: " + list + "; choose one with --node");
  return nodes.front();
}

// PID 1 is systemd: its affinity is the CPUs the node's services run on.
void read_cpu_affinities(std::string_view text, const std::string& file, MachineFacts& m) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    throw Error(file + ": not JSON: " + e.what());
  }
  if (!j.is_array()) throw Error(file + ": expected a JSON array of tasks");
  for (const nlohmann::json& task : j)
    if (task.is_object() && task.value("pid", 0) == 1 && task.value("tid", 0) == 1 &&
        task.contains("affinity") && task["affinity"].is_array()) {
      CpuSet s(kMaxCpus);
      for (const auto& c : task["affinity"])
        if (c.is_number_unsigned() && c.get<unsigned long>() < kMaxCpus) s.set(c.get<unsigned>());
      m.evidence.pid1_affinity = Fact<CpuSet>{s, {{file, 0, "PID 1 (systemd)"}}};
    }
}

void read_node_files(const DumpTree& t, const std::string& dir, const std::string& label,
                     MachineFacts& m, CpuFiles& cpu) {
  if (const auto text = t.read(dir + "proc_cmdline"))
    m.cmdline = Fact<std::string>{proc_cmdline_line(*text, label + "proc_cmdline"),
                                  {{label + "proc_cmdline", 1, ""}}};
  if (const auto text = t.read(dir + "lscpu")) add_lscpu(cpu, *text, label + "lscpu");
  if (const auto text = t.read(dir + "irq_affinities.json"))
    m.evidence.irqs = Fact<std::vector<IsolationEvidence::Irq>>{
        parse_irq_affinities_json(*text, label + "irq_affinities.json"),
        {{label + "irq_affinities.json", 0, ""}}};
  if (const auto text = t.read(dir + "cpu_affinities.json"))
    read_cpu_affinities(*text, label + "cpu_affinities.json", m);
}

// The node's /proc and /sys, and the effective affinities irq_affinities.json lacks.
void read_sysinfo(const DumpTree& t, const std::string& dir, const std::string& label,
                  MachineFacts& m, CpuFiles& cpu) {
  const auto bytes = t.read(dir + "sysinfo.tgz");
  if (!bytes) return;
  const DumpTree sys = DumpTree::from_archive_bytes(display_path(t, dir + "sysinfo.tgz"), *bytes);
  const MachineRoot root{&sys, "", label + "sysinfo.tgz:"};
  read_machine_root(root, m);
  read_cpu_files(root, cpu);
  if (!m.evidence.irqs) return;
  bool effective = false;
  for (IsolationEvidence::Irq& irq : m.evidence.irqs->value) {
    const std::string rel = "proc/irq/" + std::to_string(irq.irq) + "/effective_affinity_list";
    if (const auto eff = sys.read(rel)) {
      irq.effective = parse_sysfs_cpulist(*eff, root.file(rel));
      effective = true;
    }
  }
  if (effective)
    m.evidence.irqs->from.push_back({root.file("proc/irq/"), 0, "N/effective_affinity_list"});
}

// The Node and Tuned objects' facts; the PerformanceProfile that applies, for the caller to
// add after the node's own files (its CPUs are less sure than theirs).
std::optional<PerformanceProfile> read_objects(const DumpTree& t, const std::string& root,
                                               const std::string& node, MachineFacts& m) {
  std::map<std::string, std::string> labels;
  bool have_node = false;
  for (const KubeObject& o : objects_in(t, root, "cluster-scoped-resources/core/nodes"))
    if (o.kind() == "Node" && o.name() == node) {
      add_node_object(o, m);
      labels = node_labels(o);
      have_node = true;
    }
  std::vector<std::pair<PerformanceProfile, const KubeObject*>> chosen;
  const std::vector<KubeObject> profiles = objects_in(t, root, std::string(kProfiles));
  for (const KubeObject& o : profiles) {
    if (o.kind() != "PerformanceProfile") continue;
    PerformanceProfile p = read_performance_profile(o);
    if (!have_node || selects(p, labels)) chosen.emplace_back(std::move(p), &o);
  }
  if (chosen.size() > 1) {
    m.notes.push_back(std::to_string(chosen.size()) + " PerformanceProfiles could apply to " +
                      node +
                      " (its Node object is missing or its labels match several); none read");
    return std::nullopt;
  }
  if (chosen.empty()) return std::nullopt;
  const std::string tuned = tuned_name_of(*chosen.front().second);
  for (const std::string& ns : t.children(root + "namespaces")) {
    const std::string base = "namespaces/" + ns + "/tuned.openshift.io";
    std::vector<KubeObject> objs = objects_in(t, root, base + "/tuneds");
    for (KubeObject& o : objects_in(t, root, base)) objs.push_back(std::move(o));
    for (const KubeObject& o : objs)
      if (o.kind() == "Tuned" && o.name() == tuned) add_tuned_object(o, m);
  }
  return std::move(chosen.front().first);
}

}  // namespace

std::optional<std::string> find_must_gather(const DumpTree& t) {
  std::vector<std::string> level = {""};
  for (int depth = 0; depth <= 3 && !level.empty(); ++depth) {
    std::vector<std::string> next;
    for (const std::string& dir : level) {
      if (t.is_dir(dir + "nodes") || t.is_dir(dir + "cluster-scoped-resources")) return dir;
      for (const std::string& c : t.children(dir))
        if (t.is_dir(dir + c)) next.push_back(dir + c + "/");
    }
    level = std::move(next);
  }
  return std::nullopt;
}

std::vector<std::string> must_gather_nodes(const DumpTree& t, const std::string& root) {
  std::vector<std::string> out;
  for (const std::string& n : t.children(root + "nodes"))
    if (t.is_dir(root + "nodes/" + n)) out.push_back(n);
  return out;
}

void read_must_gather(const DumpTree& t, const std::string& root,
                      const std::optional<std::string>& node, MachineFacts& m) {
  m.kind = "must-gather";
  m.node = pick_node(t, root, node);
  const std::string dir = root + "nodes/" + m.node + "/";
  const std::string label = "nodes/" + m.node + "/";
  CpuFiles cpu;
  read_node_files(t, dir, label, m, cpu);
  const std::optional<PerformanceProfile> profile = read_objects(t, root, m.node, m);
  read_sysinfo(t, dir, label, m, cpu);
  cpu_facts(cpu, m);
  if (profile) add_performance_profile(*profile, m);
  compare_rendered(m);
}

}  // namespace isolab

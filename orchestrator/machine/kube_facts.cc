#include "machine/kube_facts.h"

#include <algorithm>

#include "base/error.h"
#include "cmdline/tokenize.h"
#include "machine/sysctls.h"
#include "machine/tuned.h"

namespace isolab {

namespace {

// The parameters compare_rendered() looks at.
constexpr std::string_view kIsolationParams[] = {
    "isolcpus", "nohz_full",          "rcu_nocbs",           "irqaffinity",
    "nohz",     "tuned.non_isolcpus", "systemd.cpu_affinity"};

std::vector<std::string> values_of(const std::string& line, std::string_view name) {
  std::vector<std::string> out;
  for (const CmdlineToken& t : tokenize_cmdline(line))
    if (!t.after_dashes && t.normalized == name) out.push_back(t.canonical());
  return out;
}

std::string joined(const std::vector<std::string>& v) {
  std::string out;
  for (const std::string& s : v) out += (out.empty() ? "'" : "', '") + s;
  return out.empty() ? "none" : out + "'";
}

unsigned priority_of(const KubeObject& o, const std::string& ptr) {
  const auto text = o.text_at(ptr);
  if (!text) return ~0u;
  if (text->empty() || text->size() > 9 ||
      text->find_first_not_of("0123456789") != std::string::npos)
    throw Error(o.where(ptr) + ": '" + *text + "' is not a priority");
  return static_cast<unsigned>(std::stoul(*text));
}

// The index of the spec.profile[] entry the Tuned object recommends.
size_t recommended_profile(const KubeObject& t) {
  const nlohmann::json* profiles = t.at("/spec/profile");
  if (!profiles || !profiles->is_array() || profiles->empty())
    throw Error(t.where("/spec/profile") + ": a Tuned object without a profile");
  std::string name;
  unsigned best = ~0u;
  if (const nlohmann::json* rec = t.at("/spec/recommend"); rec && rec->is_array())
    for (size_t i = 0; i < rec->size(); ++i) {
      const std::string at = "/spec/recommend/" + std::to_string(i);
      const unsigned prio = priority_of(t, at + "/priority");
      if (prio >= best && !name.empty()) continue;
      best = prio;
      name = t.text_at(at + "/profile").value_or("");
    }
  for (size_t i = 0; i < profiles->size(); ++i)
    if (t.text_at("/spec/profile/" + std::to_string(i) + "/name").value_or("") == name) return i;
  if (profiles->size() == 1) return 0;
  throw Error(t.where("/spec/recommend") + ": recommends '" + name +
              "', which is none of its spec.profile[] entries");
}

void tuned_sysctls(const std::vector<TunedSetting>& conf, const Origin& data, MachineFacts& m) {
  if (m.sysctls) return;
  Fact<std::map<std::string, SysctlValue>> f{{}, {data}};
  for (const TunedSetting& s : conf)
    if (s.section == "sysctl" && isolation_sysctl(s.name))
      f.value[s.name] = {
          s.value,
          {data.file, data.line, data.what + " line " + std::to_string(s.line) + ", [sysctl]"}};
  if (!f.value.empty()) m.sysctls = std::move(f);
}

void tuned_isolated_cores(const std::vector<TunedSetting>& conf, const Origin& data,
                          MachineFacts& m) {
  const TunedSetting* s = find_setting(conf, "variables", "isolated_cores");
  if (!s) return;
  const Origin o{data.file, data.line,
                 data.what + " line " + std::to_string(s->line) + ", isolated_cores"};
  if (s->value.find("${") != std::string::npos) {
    m.notes.push_back(o.text() + ": '" + s->value + "' refers to other TuneD variables");
    return;
  }
  m.evidence.tuned_isolated.push_back({parse_tuned_cpulist(s->value, o.text()), {o}});
}

}  // namespace

void add_node_object(const KubeObject& node, MachineFacts& m) {
  const std::string ptr = "/status/nodeInfo/kernelVersion";
  if (const auto v = node.text_at(ptr))
    offer(m, "kernel_release", m.kernel_release,
          {*v, {{node.file, node.line_of(ptr), "status.nodeInfo.kernelVersion"}}},
          [](const std::string& s) { return s; });
}

std::map<std::string, std::string> node_labels(const KubeObject& node) {
  std::map<std::string, std::string> out;
  if (const nlohmann::json* l = node.at("/metadata/labels"); l && l->is_object())
    for (const auto& [k, v] : l->items()) out[k] = v.is_string() ? v.get<std::string>() : "";
  return out;
}

bool selects(const PerformanceProfile& p, const std::map<std::string, std::string>& labels) {
  return std::all_of(p.node_selector.begin(), p.node_selector.end(), [&](const auto& kv) {
    const auto it = labels.find(kv.first);
    return it != labels.end() && it->second == kv.second;
  });
}

void add_performance_profile(const PerformanceProfile& p, MachineFacts& m) {
  const RenderedProfile r = render(p);
  const Origin o{p.file, 0, "PerformanceProfile " + p.name + " rendered by the operator's rules"};
  m.rendered_cmdline = Fact<std::string>{r.cmdline(), {o}};
  if (!m.cmdline) m.cmdline = m.rendered_cmdline;
  auto show = [](const CpuSet& s) { return s.to_list(); };
  offer(m, "cpus", m.cpus,
        {r.cpus, {{p.file, 0, "spec.cpu: reserved, isolated, shared and offlined"}}}, show);
  offer(m, "online", m.online, {r.online, {{p.file, 0, "spec.cpu without offlined"}}}, show);
  m.evidence.tuned_isolated.push_back(
      {p.isolated, {{p.file, p.isolated_line, "spec.cpu.isolated"}}});
  if (!m.tuned) m.tuned = Fact<TunedState>{{r.tuned_profile, r.include, r.variables}, {o}};
  if (!m.sysctls) {
    m.sysctls = Fact<std::map<std::string, SysctlValue>>{{}, {o}};
    for (const auto& [name, value] : r.sysctls) m.sysctls->value[name] = {value, o};
  }
  for (const std::string& n : r.not_rendered) m.notes.push_back("not rendered: " + n);
}

void add_tuned_object(const KubeObject& t, MachineFacts& m) {
  const size_t i = recommended_profile(t);
  const std::string at = "/spec/profile/" + std::to_string(i);
  const std::string what = "spec.profile[" + std::to_string(i) + "].data";
  const auto data = t.text_at(at + "/data");
  if (!data) throw Error(t.where(at + "/data") + ": missing");
  const Origin o{t.file, t.line_of(at + "/data"), what};
  const std::vector<TunedSetting> conf = parse_tuned_conf(*data, o.text());
  TunedState state{t.text_at(at + "/name").value_or(""), {}, {}};
  if (const TunedSetting* inc = find_setting(conf, "main", "include"))
    for (size_t pos = 0; pos <= inc->value.size();) {
      const size_t comma = std::min(inc->value.find(',', pos), inc->value.size());
      if (comma > pos) state.include.push_back(inc->value.substr(pos, comma - pos));
      pos = comma + 1;
    }
  for (const TunedSetting& s : conf)
    if (s.section == "variables") state.variables.emplace_back(s.name, s.value);
  if (!m.tuned) m.tuned = Fact<TunedState>{state, {o}};
  tuned_sysctls(conf, o, m);
  tuned_isolated_cores(conf, o, m);
}

std::string tuned_name_of(const KubeObject& profile) {
  const std::string status = profile.text_at("/status/tuned").value_or("");
  if (!status.empty()) return status.substr(status.find('/') + 1);
  return "openshift-node-performance-" + profile.name();
}

void compare_rendered(MachineFacts& m) {
  if (!m.cmdline || !m.rendered_cmdline || m.cmdline->value == m.rendered_cmdline->value) return;
  for (std::string_view name : kIsolationParams) {
    const auto rendered = values_of(m.rendered_cmdline->value, name);
    const auto line = values_of(m.cmdline->value, name);
    if (rendered != line)
      m.notes.push_back("the profile renders " + joined(rendered) + ", the node's line has " +
                        joined(line) + " (" + m.cmdline->from.front().text() +
                        "; the operator's rules change between versions)");
  }
}

}  // namespace isolab

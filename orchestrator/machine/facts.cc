#include "machine/facts.h"

#include <sstream>

namespace isolab {

namespace {

using json = nlohmann::json;

json sources(const std::vector<Origin>& from) {
  json arr = json::array();
  for (const Origin& o : from) arr.push_back(o.text());
  return arr;
}

template <class T, class F>
json fact_json(const std::optional<Fact<T>>& f, F&& value) {
  if (!f) return nullptr;
  json j = {{"value", value(f->value)}, {"source", sources(f->from)}};
  return j;
}

json cpus_json(const std::optional<Fact<CpuSet>>& f) {
  json j = fact_json(f, [](const CpuSet& s) { return s.to_list(); });
  if (f) j["count"] = f->value.count();
  return j;
}

json numa_json(const std::vector<NumaNode>& nodes) {
  json arr = json::array();
  for (const NumaNode& n : nodes) arr.push_back({{"node", n.node}, {"cpus", n.cpus.to_list()}});
  return arr;
}

json tuned_json(const TunedState& t) {
  json vars = json::object();
  for (const auto& [k, v] : t.variables) vars[k] = v;
  return {{"profile", t.profile}, {"include", t.include}, {"variables", vars}};
}

json sysctls_json(const std::map<std::string, SysctlValue>& s) {
  json obj = json::object();
  for (const auto& [name, v] : s) obj[name] = {{"value", v.value}, {"source", v.from.text()}};
  return obj;
}

json irqs_json(const std::vector<IrqPlacement>& irqs) {
  json arr = json::array();
  for (const IrqPlacement& i : irqs)
    arr.push_back({{"irq", i.irq},
                   {"name", i.name},
                   {"affinity", i.affinity.to_list()},
                   {"effective", i.effective ? json(i.effective->to_list()) : json(nullptr)},
                   {"only_isolated", i.only_isolated}});
  return arr;
}

std::string joined(const std::vector<Origin>& from) {
  std::string out;
  for (const Origin& o : from) out += (out.empty() ? "" : "; ") + o.text();
  return out;
}

template <class T, class F>
void fact_line(std::ostream& o, const char* name, const std::optional<Fact<T>>& f, F&& value) {
  if (f) o << name << ": " << value(f->value) << "  [" << joined(f->from) << "]\n";
}

std::string cpus_text(const CpuSet& s) {
  return (s.empty() ? std::string("(none)") : s.to_list()) + " (" + std::to_string(s.count()) + ")";
}

std::string numa_text(const std::vector<NumaNode>& nodes) {
  std::string out;
  for (const NumaNode& n : nodes)
    out += (out.empty() ? "" : ", ") + std::string("node") + std::to_string(n.node) + " " +
           n.cpus.to_list();
  return out;
}

std::string tuned_text(const TunedState& t) {
  std::string out = t.profile.empty() ? std::string("(profile unknown)") : t.profile;
  for (size_t i = 0; i < t.include.size(); ++i)
    out += (i ? "," : " (include ") + t.include[i] + (i + 1 == t.include.size() ? ")" : "");
  for (const auto& [k, v] : t.variables) out += " " + k + "=" + v;
  return out;
}

std::string irqs_text(const std::vector<IrqPlacement>& irqs) {
  if (irqs.empty()) return "(none)";
  std::string out;
  for (const IrqPlacement& i : irqs)
    out += (out.empty() ? "" : ", ") + std::to_string(i.irq) +
           (i.name.empty() ? "" : " " + i.name) + " -> " + i.affinity.to_list() +
           (i.only_isolated ? " (isolated only)" : "");
  return out;
}

}  // namespace

std::string Origin::text() const {
  if (file.empty()) return what;
  std::string out = file;
  if (line) out += ":" + std::to_string(line);
  if (!what.empty()) out += " (" + what + ")";
  return out;
}

void MachineFacts::not_found(const std::string& fact, const std::string& why) {
  if (!has_not_read(fact)) not_read.push_back({fact, why});
}

bool MachineFacts::has_not_read(const std::string& fact) const {
  for (const NotRead& n : not_read)
    if (n.fact == fact) return true;
  return false;
}

nlohmann::json to_json(const MachineFacts& m) {
  auto str = [](const std::string& s) { return s; };
  auto num = [](unsigned n) { return n; };
  json not_read = json::array();
  for (const NotRead& n : m.not_read) not_read.push_back({{"fact", n.fact}, {"why", n.why}});
  return {
      {"input", {{"path", m.input}, {"kind", m.kind}, {"node", m.node}}},
      {"kernel_release", fact_json(m.kernel_release, str)},
      {"cmdline", fact_json(m.cmdline, str)},
      {"rendered_cmdline", fact_json(m.rendered_cmdline, str)},
      {"cpus", cpus_json(m.cpus)},
      {"online", cpus_json(m.online)},
      {"sockets", fact_json(m.sockets, num)},
      {"cores_per_socket", fact_json(m.cores_per_socket, num)},
      {"threads_per_core", fact_json(m.threads_per_core, num)},
      {"numa_nodes", fact_json(m.numa_nodes, numa_json)},
      {"isolated", cpus_json(m.isolated)},
      {"nohz_full", cpus_json(m.nohz_full)},
      {"rcu_nocbs", cpus_json(m.rcu_nocbs)},
      {"housekeeping", cpus_json(m.housekeeping)},
      {"tuned", fact_json(m.tuned, tuned_json)},
      {"sysctls", fact_json(m.sysctls, sysctls_json)},
      {"irqs_on_isolated", fact_json(m.irqs_on_isolated, irqs_json)},
      {"not_read", not_read},
      {"notes", m.notes},
  };
}

std::string to_text(const MachineFacts& m) {
  std::ostringstream o;
  auto str = [](const std::string& s) { return s; };
  auto num = [](unsigned n) { return std::to_string(n); };
  o << "input: " << m.input << " (" << m.kind << (m.node.empty() ? "" : ", node " + m.node)
    << ")\n";
  fact_line(o, "kernel_release", m.kernel_release, str);
  fact_line(o, "cmdline", m.cmdline, str);
  fact_line(o, "rendered_cmdline", m.rendered_cmdline, str);
  fact_line(o, "cpus", m.cpus, cpus_text);
  fact_line(o, "online", m.online, cpus_text);
  fact_line(o, "sockets", m.sockets, num);
  fact_line(o, "cores_per_socket", m.cores_per_socket, num);
  fact_line(o, "threads_per_core", m.threads_per_core, num);
  fact_line(o, "numa_nodes", m.numa_nodes, numa_text);
  fact_line(o, "isolated", m.isolated, cpus_text);
  fact_line(o, "nohz_full", m.nohz_full, cpus_text);
  fact_line(o, "rcu_nocbs", m.rcu_nocbs, cpus_text);
  fact_line(o, "housekeeping", m.housekeeping, cpus_text);
  fact_line(o, "tuned", m.tuned, tuned_text);
  if (m.sysctls)
    for (const auto& [name, v] : m.sysctls->value)
      o << "sysctl " << name << " = " << v.value << "  [" << v.from.text() << "]\n";
  fact_line(o, "irqs_on_isolated", m.irqs_on_isolated, irqs_text);
  for (const NotRead& n : m.not_read) o << "not read: " << n.fact << ": " << n.why << "\n";
  for (const std::string& n : m.notes) o << "note: " << n << "\n";
  return o.str();
}

}  // namespace isolab

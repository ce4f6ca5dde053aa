#include "machine/isolation.h"

#include <algorithm>

#include "base/error.h"
#include "cmdline/analyze.h"
#include "cmdline/customer_kernel.h"
#include "cmdline/line_hints.h"
#include "cmdline/vcpus.h"

namespace isolab {

namespace {

// The analysis' warnings that are about the customer's isolation, by their first word.
constexpr std::string_view kWarningStarts[] = {
    "isolcpus", "nohz_full", "rcu_nocbs",       "irqaffinity",         "tuned.",
    "systemd.", "boot CPU",  "no housekeeping", "isolation parameters"};

const Origin& line_origin(const MachineFacts& m) { return m.cmdline->from.front(); }

void kernel_release_from_boot_image(MachineFacts& m) {
  if (m.kernel_release || !m.cmdline) return;
  for (const CmdlineToken& t : tokenize_cmdline(m.cmdline->value))
    if (t.normalized == "BOOT_IMAGE" && t.value)
      if (const auto r = boot_image_release(*t.value)) {
        m.kernel_release = Fact<std::string>{
            *r, {{line_origin(m).file, line_origin(m).line, "BOOT_IMAGE's image name"}}};
        return;
      }
}

Analysis analyze_line(const MachineFacts& m) {
  AnalyzeOptions o;
  if (m.cpus && m.cpus->value.last()) o.vcpus = *m.cpus->value.last() + 1;
  if (m.kernel_release && parse_kernel_version(m.kernel_release->value)) {
    o.customer_kernel_version = m.kernel_release->value;
    o.customer_kernel_version_source = "the machine's kernel release";
  }
  try {
    return analyze(m.cmdline->value, o);
  } catch (const Error& e) {
    throw Error(line_origin(m).text() + ": " + e.what());
  }
}

// The isolation parameters of the line as written, for the origin of what they give.
std::string isolation_tokens(const Analysis& a) {
  std::string out;
  for (const CmdlineToken& t : a.tokens)
    if (!t.after_dashes && (t.normalized == "isolcpus" || t.normalized == "nohz_full"))
      out += (out.empty() ? "" : " ") + t.raw;
  return out.empty() ? "no isolcpus= or nohz_full=" : out;
}

void add_source(std::optional<Fact<CpuSet>>& into, const Fact<CpuSet>& f) {
  if (!into) into = Fact<CpuSet>{CpuSet(kMaxCpus), {}};
  into->value = into->value | f.value;
  into->from.insert(into->from.end(), f.from.begin(), f.from.end());
}

// The CPUs the line asks to keep for isolated work, whatever the flags: the lists of isolcpus=
// and nohz_full= (a list the kernel refuses counts for nothing; the notes say why).
CpuSet requested(const Analysis& a) {
  CpuSet s = a.isolated | a.nohz_full | a.managed_irq_isolated;
  for (const CmdlineToken& t : a.tokens) {
    if (t.after_dashes || (t.normalized != "isolcpus" && t.normalized != "nohz_full")) continue;
    const auto list = isolation_cpu_list(t);
    const CpuListParse p = try_parse_cpulist(list.value_or(""), a.possible);
    if (list && p.ok()) s = s | p.set;
  }
  return s;
}

void derive_isolated(const std::optional<Analysis>& a, MachineFacts& m) {
  std::optional<Fact<CpuSet>> iso;
  if (a)
    add_source(iso,
               {requested(*a), {{line_origin(m).file, line_origin(m).line, isolation_tokens(*a)}}});
  if (m.evidence.sysfs_isolated) add_source(iso, *m.evidence.sysfs_isolated);
  if (m.evidence.sysfs_nohz_full) add_source(iso, *m.evidence.sysfs_nohz_full);
  for (const Fact<CpuSet>& t : m.evidence.tuned_isolated) add_source(iso, t);
  m.isolated = iso;
  if (!iso)
    m.not_found("isolated",
                "no command line, sys/devices/system/cpu/isolated or nohz_full, TuneD "
                "isolated_cores or PerformanceProfile");
}

void derive_nohz_rcu(const std::optional<Analysis>& a, MachineFacts& m) {
  if (m.evidence.sysfs_nohz_full)
    m.nohz_full = m.evidence.sysfs_nohz_full;
  else if (a)
    m.nohz_full = Fact<CpuSet>{
        a->nohz_full, {{line_origin(m).file, line_origin(m).line, "nohz_full=, isolcpus=nohz"}}};
  else
    m.not_found("nohz_full", "no command line or sys/devices/system/cpu/nohz_full");
  if (a)
    m.rcu_nocbs = Fact<CpuSet>{
        a->rcu_nocbs,
        {{line_origin(m).file, line_origin(m).line, "rcu_nocbs= and the nohz_full CPUs"}}};
  else
    m.not_found("rcu_nocbs", "no command line (only the kernel's log names the offloaded CPUs)");
}

void derive_housekeeping(const std::optional<Analysis>& a, MachineFacts& m) {
  if (!m.isolated) return m.not_found("housekeeping", "the isolated CPUs are not known");
  Fact<CpuSet> base;
  if (m.online) {
    base = *m.online;
  } else if (m.cpus) {
    base = *m.cpus;
    base.from.push_back({"", 0, "all CPUs, as no file says which were online"});
  } else if (a) {
    base = {CpuSet::all(a->possible),
            {{line_origin(m).file, line_origin(m).line,
              "the CPUs the line implies, as the online CPUs are not known: " + a->vcpus_reason}}};
  } else {
    return m.not_found("housekeeping", "the online CPUs are not known");
  }
  m.housekeeping = Fact<CpuSet>{base.value - m.isolated->value, base.from};
  m.housekeeping->from.push_back({"", 0, "without the isolated CPUs"});
}

void derive_irqs(MachineFacts& m) {
  if (!m.isolated) return m.not_found("irqs_on_isolated", "the isolated CPUs are not known");
  const CpuSet& iso = m.isolated->value;
  if (iso.empty()) {
    m.irqs_on_isolated = Fact<std::vector<IrqPlacement>>{{}, m.isolated->from};
    return;
  }
  if (!m.evidence.irqs)
    return m.not_found("irqs_on_isolated",
                       "no proc/irq/N/smp_affinity_list or "
                       "irq_affinities.json in the dump");
  Fact<std::vector<IrqPlacement>> f{{}, m.evidence.irqs->from};
  for (const IsolationEvidence::Irq& irq : m.evidence.irqs->value) {
    if (!irq.affinity.intersects(iso)) continue;
    const CpuSet reach = m.online ? irq.affinity & m.online->value : irq.affinity;
    f.value.push_back(
        {irq.irq, irq.name, irq.affinity, irq.effective, !reach.empty() && reach.subset_of(iso)});
  }
  m.irqs_on_isolated = std::move(f);
}

void line_notes(const Analysis& a, MachineFacts& m) {
  for (const LineHint& h : a.hints)
    if (h.error.empty()) m.notes.push_back("cmdline hint " + h.param + ": " + h.meaning);
  for (const std::string& w : a.warnings)
    if (std::any_of(std::begin(kWarningStarts), std::end(kWarningStarts),
                    [&](std::string_view s) { return w.rfind(s, 0) == 0; }))
      m.notes.push_back("cmdline: " + w);
}

// systemd's CPUs: where the node's services run unless a unit says otherwise.
void pid1_note(MachineFacts& m) {
  if (!m.evidence.pid1_affinity) return;
  const CpuSet& pid1 = m.evidence.pid1_affinity->value;
  std::string note =
      "PID 1 (systemd) runs on CPUs " + (pid1.empty() ? std::string("(none)") : pid1.to_list());
  if (m.isolated && pid1.intersects(m.isolated->value))
    note += ", isolated CPUs " + (pid1 & m.isolated->value).to_list() + " among them";
  m.notes.push_back(note + " (" + m.evidence.pid1_affinity->from.front().file + ")");
}

void missing_facts(const std::optional<Analysis>& a, MachineFacts& m) {
  if (!m.cmdline) m.not_found("cmdline", "no proc/cmdline, proc_cmdline or PerformanceProfile");
  const std::string no_files = "the input holds no lscpu, /proc/cpuinfo or sysfs CPU file";
  if (!m.cpus)
    m.not_found("cpus", no_files + (a && a->vcpus_needed ? "; the command line says at least " +
                                                               std::to_string(a->vcpus_needed) +
                                                               " (" + a->vcpus_reason + ")"
                                                         : ""));
  const std::pair<const char*, bool> cpu_facts[] = {
      {"online", m.online.has_value()},
      {"sockets", m.sockets.has_value()},
      {"cores_per_socket", m.cores_per_socket.has_value()},
      {"threads_per_core", m.threads_per_core.has_value()},
      {"numa_nodes", m.numa_nodes.has_value()}};
  for (const auto& [fact, read] : cpu_facts)
    if (!read) m.not_found(fact, no_files);
  if (!m.kernel_release)
    m.not_found("kernel_release",
                "no uname output, proc/version, Node object or BOOT_IMAGE "
                "with a kernel release");
  if (!m.tuned) m.not_found("tuned", "no TuneD active profile, variables file or Tuned object");
  if (!m.sysctls)
    m.not_found("sysctls", "no sysctl -a output, proc/sys file or TuneD [sysctl] section");
  const std::pair<const char*, bool> present[] = {
      {"cmdline", m.cmdline.has_value()},
      {"kernel_release", m.kernel_release.has_value()},
      {"cpus", m.cpus.has_value()},
      {"online", m.online.has_value()},
      {"sockets", m.sockets.has_value()},
      {"cores_per_socket", m.cores_per_socket.has_value()},
      {"threads_per_core", m.threads_per_core.has_value()},
      {"numa_nodes", m.numa_nodes.has_value()},
      {"tuned", m.tuned.has_value()},
      {"sysctls", m.sysctls.has_value()}};
  for (const auto& [name, read] : present) {
    if (!read) continue;
    const std::string fact = name;
    m.not_read.erase(std::remove_if(m.not_read.begin(), m.not_read.end(),
                                    [&](const NotRead& n) { return n.fact == fact; }),
                     m.not_read.end());
  }
}

}  // namespace

void derive_isolation(MachineFacts& m) {
  kernel_release_from_boot_image(m);
  std::optional<Analysis> a;
  if (m.cmdline) a = analyze_line(m);
  derive_isolated(a, m);
  derive_nohz_rcu(a, m);
  derive_housekeeping(a, m);
  derive_irqs(m);
  if (a) line_notes(*a, m);
  pid1_note(m);
  missing_facts(a, m);
}

}  // namespace isolab

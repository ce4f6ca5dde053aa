#include "gate/gate.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "base/text.h"

namespace isolab {

namespace {

// Collapses whitespace runs so that "rcu: \tOffload" and "rcu: Offload" compare equal.
std::string squash(std::string_view s) {
  std::string out;
  bool space = false;
  for (char c : trim_space(s)) {
    if (std::isspace(static_cast<unsigned char>(c))) {
      space = true;
      continue;
    }
    if (space && !out.empty()) out += ' ';
    space = false;
    out += c;
  }
  return out;
}

std::string list_or_none(const CpuSet& s) { return s.empty() ? "(none)" : s.to_list(); }

std::string fmt_rate(double r) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f/s", r);
  return buf;
}

}  // namespace

namespace {

using GateRows = std::vector<GateRow>;

void add_row(GateRows& rows, std::string check, std::string expected, std::string effective,
             bool pass, std::string detail, bool warning = false) {
  rows.push_back({std::move(check), std::move(expected), std::move(effective), pass, warning,
                  std::move(detail)});
}

// Appends `item` to `out`, after `sep` unless `out` is empty.
void append(std::string& out, std::string_view sep, const std::string& item) {
  if (!out.empty()) out += sep;
  out += item;
}

std::string join(const std::vector<std::string>& items, std::string_view sep) {
  std::string out;
  for (const auto& x : items) append(out, sep, x);
  return out;
}

std::string list_and_count(const CpuSet& s) {
  return list_or_none(s) + " (" + std::to_string(s.count()) + ")";
}

// Every record problem found by parse_guest_facts(); no row when there are none.
void check_records(const GuestFacts& f, GateRows& rows) {
  if (f.problems.empty()) return;
  add_row(rows, "guest records", "complete and parsable",
          std::to_string(f.problems.size()) + " problems", false, join(f.problems, "; "));
}

// The isolation parameters (Analysis::isolation_params) as kernel parameters of /proc/cmdline.
void check_cmdline(const ExpectedIsolation& e, const GuestFacts& f, GateRows& rows) {
  std::vector<std::string> missing;
  for (const auto& req : e.required_params) {
    const bool found =
        std::any_of(f.cmdline_tokens.begin(), f.cmdline_tokens.end(),
                    [&](const CmdlineToken& t) { return !t.after_dashes && t.canonical() == req; });
    if (!found) missing.push_back(req);
  }
  const std::string req = join(e.required_params, " ");
  add_row(rows, "cmdline", req.empty() ? "(no isolation parameters)" : req, f.cmdline,
          missing.empty(),
          missing.empty() ? "" : "missing from /proc/cmdline: " + join(missing, " "));
}

// All requested vCPUs online (a guest kernel without ACPI sees only the boot CPU;
// docs/sources.md [o5]).
void check_online(const ExpectedIsolation& e, const GuestFacts& f, GateRows& rows) {
  if (!f.cpu_online) {
    add_row(rows, "online CPUs", list_or_none(e.online), "(unknown)", false,
            "no /sys/devices/system/cpu/online record");
    return;
  }
  const bool ok = *f.cpu_online == e.online;
  add_row(rows, "online CPUs", list_and_count(e.online), list_and_count(*f.cpu_online), ok,
          ok ? ""
             : "the guest saw " + std::to_string(f.cpu_online->count()) + " CPUs online of " +
                   std::to_string(e.vcpus) +
                   " requested (secondary CPUs not enumerated: ACPI/MP table missing, or "
                   "maxcpus=/nr_cpus=)");
}

void check_isolated(const ExpectedIsolation& e, const GuestFacts& f, GateRows& rows) {
  if (!f.isolated) {
    add_row(rows, "isolated (isolcpus domain)", list_or_none(e.isolated), "(unknown)", false,
            "no /sys/devices/system/cpu/isolated record");
    return;
  }
  const bool ok = *f.isolated == e.isolated;
  add_row(rows, "isolated (isolcpus domain)", list_or_none(e.isolated), list_or_none(*f.isolated),
          ok, ok ? "" : "/sys/devices/system/cpu/isolated differs");
}

// The nohz_full sysfs file (absent without CONFIG_NO_HZ_FULL; docs/sources.md [o4]), when nohz_full
// was requested; none otherwise.
void check_nohz_full(const ExpectedIsolation& e, const GuestFacts& f, GateRows& rows) {
  if (!e.nohz_full_requested) {
    const bool ok = !f.nohz_full || f.nohz_full->empty();
    add_row(rows, "nohz_full", "(none)",
            f.nohz_full ? list_or_none(*f.nohz_full) : "(no sysfs file)", ok,
            ok ? "" : "nohz_full CPUs present although none were requested");
  } else if (!f.nohz_full) {
    add_row(rows, "nohz_full", list_or_none(e.nohz_full), "(no sysfs file)", false,
            "/sys/devices/system/cpu/nohz_full does not exist: kernel built without "
            "CONFIG_NO_HZ_FULL");
  } else {
    const bool ok = *f.nohz_full == e.nohz_full;
    add_row(rows, "nohz_full", list_or_none(e.nohz_full), list_or_none(*f.nohz_full), ok,
            ok ? "" : "/sys/devices/system/cpu/nohz_full differs");
  }
}

// kernel/sched/isolation.c prints this when nohz_full= is given without CONFIG_NO_HZ_FULL; a row
// only when it was printed.
void check_no_hz_full_config(const GuestFacts& f, GateRows& rows) {
  const bool unsupported = std::any_of(
      f.dmesg_lines.begin(), f.dmesg_lines.end(),
      [](const std::string& l) { return contains(l, "Housekeeping: nohz unsupported"); });
  if (!unsupported) return;
  add_row(rows, "CONFIG_NO_HZ_FULL", "built in", "missing", false,
          "dmesg: 'Housekeeping: nohz unsupported. Build with CONFIG_NO_HZ_FULL': the kernel "
          "ignored nohz_full; rebuild with CONFIG_NO_HZ_FULL=y (check the final .config)");
}

// The dmesg "Offload RCU callbacks from CPUs:" list; unrequested offload is a warning.
void check_rcu_offload(const ExpectedIsolation& e, const GuestFacts& f, GateRows& rows) {
  if (!e.rcu_offload) {
    if (f.rcu_offload && !f.rcu_offload->empty())
      add_row(rows, "RCU offload", "(none)", list_or_none(*f.rcu_offload), true,
              "RCU offloads CPUs although none were requested (CONFIG_RCU_NOCB_CPU_DEFAULT_ALL?)",
              true);
  } else if (!f.rcu_offload) {
    add_row(rows, "RCU offload", list_or_none(*e.rcu_offload), "(no dmesg line)", false,
            "no 'Offload RCU callbacks from CPUs:' line in dmesg: kernel without "
            "CONFIG_RCU_NOCB_CPU, or dmesg incomplete");
  } else {
    const bool ok = *f.rcu_offload == *e.rcu_offload;
    add_row(rows, "RCU offload", list_or_none(*e.rcu_offload), list_or_none(*f.rcu_offload), ok,
            ok ? "" : "dmesg 'Offload RCU callbacks from CPUs:' differs");
  }
}

void check_irq_default_affinity(const ExpectedIsolation& e, const GuestFacts& f, GateRows& rows) {
  if (f.default_smp_affinity) {
    const bool ok = *f.default_smp_affinity == e.irq_default_affinity;
    add_row(rows, "irq default affinity", list_or_none(e.irq_default_affinity),
            list_or_none(*f.default_smp_affinity), ok,
            ok ? "" : "/proc/irq/default_smp_affinity differs from irqaffinity=");
  } else if (e.irqaffinity_requested) {
    add_row(rows, "irq default affinity", list_or_none(e.irq_default_affinity), "(unknown)", false,
            "no /proc/irq/default_smp_affinity record");
  }
}

// IRQs whose effective affinity lands on a CPU to avoid: a warning, never a failure.
void check_irq_effective_affinity(const ExpectedIsolation& e, const GuestFacts& f, GateRows& rows) {
  const CpuSet avoid = e.irq_avoid | e.isolated | e.nohz_full;
  if (avoid.empty() || !f.has_irq_affinity) return;
  std::string on_isolated;
  for (const auto& irq : f.irq_affinity)
    if (irq.cpus.intersects(avoid)) append(on_isolated, ", ", irq.irq + "->" + irq.cpus.to_list());
  const std::string none = "none on " + avoid.to_list();
  add_row(rows, "irq effective affinity", none, on_isolated.empty() ? none : on_isolated, true,
          on_isolated.empty()
              ? ""
              : "IRQs with effective affinity on isolated CPUs (managed or per-CPU queue IRQs "
                "are placed there by the kernel; others are noise)",
          !on_isolated.empty());
}

void check_workqueue(const ExpectedIsolation& e, const GuestFacts& f, GateRows& rows) {
  if (!f.workqueue_cpumask) return;
  const bool ok = *f.workqueue_cpumask == e.workqueue_cpumask;
  add_row(rows, "workqueue cpumask", list_or_none(e.workqueue_cpumask),
          list_or_none(*f.workqueue_cpumask), ok,
          ok ? "" : "/sys/devices/virtual/workqueue/cpumask differs");
}

// dmesg lines that change the meaning of the command line.
bool is_isolation_message(const std::string& squashed) {
  for (std::string_view prefix : {"Housekeeping:", "isolcpus:", "NO_HZ:", "rcu_nocbs="})
    if (squashed.rfind(prefix, 0) == 0) return true;
  return false;
}

// Isolation messages in dmesg: each must be one of ExpectedIsolation::expected_kernel_messages.
void check_dmesg_messages(const ExpectedIsolation& e, const GuestFacts& f, GateRows& rows) {
  if (!f.has_dmesg) return;
  std::vector<std::string> expected;
  for (const auto& m : e.expected_kernel_messages) expected.push_back(squash(m));
  std::string unexpected, seen;
  for (const auto& l : f.dmesg_lines) {
    const std::string s = squash(l);
    if (!is_isolation_message(s)) continue;
    append(seen, " | ", s);
    if (std::find(expected.begin(), expected.end(), s) == expected.end())
      append(unexpected, " | ", s);
  }
  add_row(rows, "dmesg isolation messages", "only the expected ones",
          seen.empty() ? "(none)" : seen, unexpected.empty(),
          unexpected.empty() ? "" : "unexpected: " + unexpected);
}

// The LOC ("Local timer interrupts") rows around the busy window.
struct LocWindow {
  const InterruptRow& before;
  const InterruptRow& after;
  double seconds;

  // LOC interrupts per second on `cpu`; nullopt when a count is missing or went backwards.
  std::optional<double> rate(unsigned cpu) const {
    auto ib = before.counts.find(cpu), ia = after.counts.find(cpu);
    if (ib == before.counts.end() || ia == after.counts.end() || ia->second < ib->second)
      return std::nullopt;
    return static_cast<double>(ia->second - ib->second) / seconds;
  }
};

// The measured tick row: each of `tick_cpus` passes at <= kTickStoppedMaxPerSecond; the
// fastest housekeeping CPU is the reference for a running tick. Returns whether all passed.
bool add_tick_row(const ExpectedIsolation& e, const GuestFacts& f, const LocWindow& w,
                  const CpuSet& tick_cpus, std::string expected, GateRows& rows) {
  bool ok = true;
  std::string eff, bad;
  for (unsigned cpu : tick_cpus.cpus()) {
    const std::string name = "CPU" + std::to_string(cpu);
    auto rt = w.rate(cpu);
    append(eff, ", ", name + " " + (rt ? fmt_rate(*rt) : "?"));
    if (!rt || *rt > kTickStoppedMaxPerSecond) {
      ok = false;
      append(bad, ", ", name);
    }
  }
  std::optional<double> ref;
  for (unsigned cpu : (e.online - e.nohz_full).cpus())
    if (auto rt = w.rate(cpu); rt && (!ref || *rt > *ref)) ref = rt;
  std::string detail =
      "housekeeping reference " + (ref ? fmt_rate(*ref) : "n/a") + "; " + f.clock.summary();
  if (!ok)
    detail =
        "tick did not stop on " + bad + (e.nohz_off ? " (nohz=off given)" : "") + "; " + detail;
  add_row(rows, "tick stopped", std::move(expected), eff, ok, detail);
  return ok;
}

// The tick on the online nohz_full CPUs over the busy window. Returns whether it stopped;
// nullopt when nohz_full was not requested or the tick could not be measured.
std::optional<bool> check_tick(const ExpectedIsolation& e, const GuestFacts& f, GateRows& rows) {
  const CpuSet tick_cpus = e.nohz_full & e.online;
  if (!e.nohz_full_requested || tick_cpus.empty()) return std::nullopt;
  std::string expected =
      "<= " + fmt_rate(kTickStoppedMaxPerSecond) + " LOC on " + tick_cpus.to_list();
  const InterruptRow* b = f.interrupts_before ? f.interrupts_before->find("LOC") : nullptr;
  const InterruptRow* a = f.interrupts_after ? f.interrupts_after->find("LOC") : nullptr;
  if (!b || !a || !f.busy_window_s) {
    add_row(rows, "tick stopped", expected, "(not measured)", false,
            "needs interrupts_before/after with a LOC row and busy_window_s");
    return std::nullopt;
  }
  if (*f.busy_window_s < kMinBusyWindowS) {
    add_row(rows, "tick stopped", expected, "(window too short)", false,
            "busy window " + std::to_string(*f.busy_window_s) + " s is shorter than 1 s");
    return std::nullopt;
  }
  return add_tick_row(e, f, {*b, *a, *f.busy_window_s}, tick_cpus, std::move(expected), rows);
}

// An unstable clock (docs/sources.md [o6]) is recorded (a warning); it fails only when the
// tick did not stop.
void check_clock(const GuestFacts& f, std::optional<bool> tick_stopped, GateRows& rows) {
  const bool unstable = f.clock.tsc_unstable || f.clock.sched_clock_unstable;
  const bool fail = unstable && tick_stopped.has_value() && !*tick_stopped;
  std::string detail = join(f.clock.lines, " | ");
  if (fail) detail = "unstable clock and the tick did not stop: " + detail;
  add_row(rows, "clock", "tick can stop", f.clock.summary(), !fail, detail, unstable && !fail);
}

// "PASS", or "FAIL: " and the first three failed rows as "<check>: <detail>" (or their
// expected and effective values when there is no detail).
std::string gate_reason(const GateRows& rows) {
  std::vector<std::string> failed;
  for (const auto& row : rows)
    if (!row.pass)
      failed.push_back(row.check + (row.detail.empty()
                                        ? ": expected " + row.expected + ", got " + row.effective
                                        : ": " + row.detail));
  if (failed.empty()) return "PASS";
  failed.resize(std::min<size_t>(failed.size(), 3));
  return "FAIL: " + join(failed, "; ");
}

}  // namespace

GateReport evaluate_gate(const ExpectedIsolation& e, const GuestFacts& f,
                         const ExpectedRuntime& runtime) {
  GateReport r;
  check_records(f, r.rows);
  check_cmdline(e, f, r.rows);
  check_online(e, f, r.rows);
  check_isolated(e, f, r.rows);
  check_nohz_full(e, f, r.rows);
  check_no_hz_full_config(f, r.rows);
  check_rcu_offload(e, f, r.rows);
  check_irq_default_affinity(e, f, r.rows);
  check_irq_effective_affinity(e, f, r.rows);
  check_workqueue(e, f, r.rows);
  check_dmesg_messages(e, f, r.rows);
  const std::optional<bool> tick_stopped = check_tick(e, f, r.rows);
  check_clock(f, tick_stopped, r.rows);
  check_runtime(runtime, f.runtime_record ? &*f.runtime_record : nullptr, e.vcpus, r.rows);
  r.pass = std::all_of(r.rows.begin(), r.rows.end(), [](const GateRow& x) { return x.pass; });
  r.reason = gate_reason(r.rows);
  return r;
}

nlohmann::json to_json(const GateReport& r) {
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& x : r.rows)
    rows.push_back({{"check", x.check},
                    {"expected", x.expected},
                    {"effective", x.effective},
                    {"pass", x.pass},
                    {"warning", x.warning},
                    {"detail", x.detail}});
  return {{"pass", r.pass}, {"reason", r.reason}, {"rows", rows}};
}

std::string to_text(const GateReport& r) {
  auto clip = [](const std::string& s, size_t w) {
    return s.size() <= w ? s + std::string(w - s.size(), ' ') : s.substr(0, w - 3) + "...";
  };
  std::ostringstream o;
  o << clip("check", 26) << " " << clip("expected", 28) << " " << clip("effective", 28)
    << " result\n";
  for (const auto& x : r.rows) {
    o << clip(x.check, 26) << " " << clip(x.expected, 28) << " " << clip(x.effective, 28) << " "
      << (x.pass ? (x.warning ? "WARN" : "PASS") : "FAIL");
    if (!x.detail.empty()) o << "  " << x.detail;
    o << "\n";
  }
  o << (r.pass ? "gate: PASS" : "gate: " + r.reason) << "\n";
  return o.str();
}

}  // namespace isolab

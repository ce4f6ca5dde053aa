#include "pipeline/cell_classify.h"

#include <iterator>

#include "base/files.h"
#include "vm/qemu.h"

using nlohmann::json;

namespace isolab {

namespace {

CellVerdict failed(std::string cls, std::string reason) {
  return {"", "failed", std::move(cls), std::move(reason)};
}

CellVerdict invalid(std::string reason) { return {"", "invalid", "", std::move(reason)}; }

std::string at_line(const ConsoleFinding& f) {
  return f.kind + " at console line " + std::to_string(f.line) + ": " + f.summary;
}

bool is_stale_int3(const BootFacts& f) {
  return f.accelerator == "tcg" && f.int3_byte && *f.int3_byte != "cc";
}

bool is_host_starved(const BootFacts& f) {
  if (!f.fatal || f.fatal->klass != "rcu_stall" || f.fatal->gp_kthread_starved.empty())
    return false;
  return f.accelerator == "tcg" || f.overcommitted == true;
}

bool qemu_ended(const BootFacts& f) { return f.outcome.end == VmOutcome::End::qemu_failed; }

struct BootRow {
  const char* name;
  bool (*applies)(const BootFacts&);
  CellVerdict (*verdict)(const BootFacts&);
};

// The boot rows, in order (pipeline/cell_classify.h).
const BootRow kBootRows[] = {
    {"stale_int3", is_stale_int3,
     [](const BootFacts& f) {
       return failed("infrastructure",
                     "int3 trap where memory holds 0x" + *f.int3_byte +
                         ", not an int3 (0xcc): TCG ran a stale translation of kernel text the "
                         "kernel had patched");
     }},
    {"host_starved_guest", is_host_starved,
     [](const BootFacts& f) {
       return failed("infrastructure",
                     "RCU stall at console line " + std::to_string(f.fatal->line) +
                         " with the grace-period kthread runnable but starved (" +
                         f.fatal->gp_kthread_starved +
                         "): the host did not run the guest's vCPUs (" + f.accelerator +
                         (f.overcommitted == true ? ", overcommitted" : "") + ")");
     }},
    {"qemu_topology",
     [](const BootFacts& f) {
       return f.outcome.end == VmOutcome::End::qemu_failed &&
              is_qemu_topology_error(f.outcome.qemu_stderr_excerpt);
     },
     [](const BootFacts& f) {
       return failed("configuration", "QEMU refused the CPU topology: " + f.outcome.detail);
     }},
    {"host_cpu_placement",
     [](const BootFacts& f) {
       return qemu_ended(f) && host_cpu_placement_error(f.outcome.qemu_stderr_excerpt);
     },
     [](const BootFacts& f) {
       return failed("configuration",
                     "the host could not place the guest on the CPUs asked for (a host CPU "
                     "offline or outside the parent cgroup's cpuset; host configuration, not the "
                     "guest): " +
                         *host_cpu_placement_error(f.outcome.qemu_stderr_excerpt));
     }},
    {"accelerator",
     [](const BootFacts& f) { return f.outcome.end == VmOutcome::End::accelerator_failed; },
     [](const BootFacts& f) {
       return failed("infrastructure", "the host's accelerator (" + f.accelerator +
                                           "), not the kernel: " + f.outcome.detail);
     }},
    {"qemu_failed", qemu_ended,
     [](const BootFacts& f) { return failed("infrastructure", "QEMU: " + f.outcome.detail); }},
    // No init reached: a boot failure, whatever killed it (a panic, a hang, an early reboot).
    {"no_init", [](const BootFacts& f) { return !f.reached_init; },
     [](const BootFacts& f) {
       const std::string why =
           f.fatal ? at_line(*f.fatal) : vm_end_name(f.outcome.end) + ": " + f.outcome.detail;
       return failed("boot", "the guest never reached our init (" + why + ")");
     }},
    {"console_fatal", [](const BootFacts& f) { return f.fatal.has_value(); },
     [](const BootFacts& f) { return failed(f.fatal->klass, at_line(*f.fatal)); }},
    {"kernel_release", [](const BootFacts& f) { return !f.kernel_release_match; },
     [](const BootFacts& f) {
       return failed("infrastructure", "guest runs kernel '" + f.guest_uname_r + "', expected '" +
                                           f.expected_release + "'");
     }},
};

// The run facts with RunFacts::guest_setup_mismatch called at most once (the guest_setup row
// reads it twice).
struct RunInput {
  const RunFacts& f;
  mutable std::optional<std::string> setup;
  const std::string& setup_mismatch() const {
    if (!setup) setup = f.guest_setup_mismatch ? f.guest_setup_mismatch() : "";
    return *setup;
  }
};

struct RunRow {
  const char* name;
  bool (*applies)(const RunInput&);
  CellVerdict (*verdict)(const RunInput&);
};

// The run rows, in order (pipeline/cell_classify.h).
const RunRow kRunRows[] = {
    {"powered_off_early",
     [](const RunInput& in) {
       return !in.f.done && in.f.outcome.end == VmOutcome::End::powered_off;
     },
     [](const RunInput& in) {
       return failed("workload",
                     "the guest powered off before finishing the plan" +
                         (in.f.workload_failure.empty() ? "" : "; " + in.f.workload_failure));
     }},
    {"timeout", [](const RunInput& in) { return !in.f.done; },
     [](const RunInput& in) {
       return failed("timeout", vm_end_name(in.f.outcome.end) + ": " + in.f.outcome.detail);
     }},
    {"gate", [](const RunInput& in) { return !in.f.gate_pass; },
     [](const RunInput& in) { return invalid("isolation gate: " + in.f.gate_reason); }},
    // The guest's own quick check skipped the workloads although the host-side gate passed.
    {"precheck", [](const RunInput& in) { return in.f.precheck_skipped; },
     [](const RunInput&) {
       return invalid(
           "the guest's precheck found a CPU count or sysfs isolation mismatch and "
           "skipped the workloads (see console.log, lines starting 'isolab: precheck')");
     }},
    {"guest_setup", [](const RunInput& in) { return !in.setup_mismatch().empty(); },
     [](const RunInput& in) { return invalid(in.setup_mismatch()); }},
    {"workload_failed", [](const RunInput& in) { return !in.f.workload_failure.empty(); },
     [](const RunInput& in) { return failed("workload", in.f.workload_failure); }},
    // The tool ran but did not measure what was asked (docs/sources.md [s3]).
    {"workload_invalid", [](const RunInput& in) { return !in.f.workload_invalid.empty(); },
     [](const RunInput& in) { return invalid(in.f.workload_invalid); }},
    {"ok", [](const RunInput&) { return true; },
     [](const RunInput&) {
       return CellVerdict{"", "ok", "", ""};
     }},
};

}  // namespace

std::optional<CellVerdict> classify_boot(const BootFacts& f) {
  for (const BootRow& row : kBootRows)
    if (row.applies(f)) {
      CellVerdict v = row.verdict(f);
      v.rule = row.name;
      return v;
    }
  return std::nullopt;
}

CellVerdict classify_run(const RunFacts& f) {
  const RunInput in{f, std::nullopt};
  for (const RunRow& row : kRunRows)
    if (row.applies(in)) {
      CellVerdict v = row.verdict(in);
      v.rule = row.name;
      return v;
    }
  return {};  // not reached: the ok row always applies
}

BootFacts boot_facts(const json& c, const VmOutcome& out, const ConsoleReport& cons,
                     const std::string& console, bool reached_init,
                     const std::string& expected_release) {
  BootFacts f;
  f.accelerator = c.value("accelerator", std::string("?"));
  if (const json o = c.value("overcommitted", json()); o.is_boolean())
    f.overcommitted = o.get<bool>();
  f.outcome = out;
  f.fatal = cons.fatal;
  f.int3_byte = f.accelerator == "tcg" ? int3_trap_byte(console) : std::nullopt;
  f.reached_init = reached_init;
  f.kernel_release_match = c.value("kernel_release_match", true);
  if (const auto g = c.find("guest"); g != c.end() && g->is_object())
    f.guest_uname_r = sanitize_excerpt(g->value("uname_r", ""), 100);
  f.expected_release = expected_release;
  return f;
}

json apply_verdict(json c, const CellVerdict& v) {
  c["status"] = v.status;
  if (v.status == "failed") c["failure_class"] = v.failure_class;
  if (v.status != "ok") c["reason"] = v.reason;
  return c;
}

bool host_starved_guest(const json& c, const ConsoleReport& cons) {
  return is_host_starved(boot_facts(c, VmOutcome{}, cons, "", false, ""));
}

std::optional<std::string> emulator_stale_int3(const json& c, const std::string& console) {
  const BootFacts f = boot_facts(c, VmOutcome{}, ConsoleReport{}, console, false, "");
  return is_stale_int3(f) ? f.int3_byte : std::nullopt;
}

}  // namespace isolab

// `isolab run --dry-run`: the plan of a run in words, for a person deciding whether to run it.
// The JSON form (`--dry-run --json`) is describe_plan() in pipeline/run_plan.h.
#pragma once

#include <string>
#include <vector>

#include "kernel/lookup.h"
#include "pipeline/run_plan.h"
#include "spec/spec.h"

namespace isolab {

// What the plan text reads from the host, gathered by the caller (pipeline/plan_facts.h) so
// that the text itself depends on nothing else.
struct PlanTextFacts {
  std::vector<KernelLookup> kernels;  // one per spec variant, in the spec's order
  std::string cache_dir;              // the kernel cache asked
  // "kvm" or "tcg" as the accelerator chooser (vm/accel.h) answered, with its reason; ""
  // when libvirt hosts decide at run start (--host or the spec's "hosts").
  std::string accelerator;
  std::string accelerator_reason;
  bool trace = true;  // isolab traces the isolated CPUs (run without --no-trace)
  int parallel = 1;   // guests booted at once as the run would ask (0: as many as fit)
};

// Assumed wall time of one boot apart from its steps (firmware, kernel boot, guest setup,
// shutdown), seconds, by accelerator: 20 under TCG, 5 under KVM (docs/measurements.md says what
// the TCG figure rests on; the KVM one rests on no measurement); the estimate names it as an
// assumption.
double assumed_boot_overhead_seconds(const std::string& accelerator);

// The plan as plain text, one section a paragraph, in this order: kernels (from the cache with
// release and build key, or to build with the recorded time of the last build of the same
// source and base config, or "no previous build time recorded"), guest (vCPUs, topology,
// memory, accelerator and why, isolated and housekeeping CPUs, the kernel command line and what
// each variant and isolab add), with /customer the customer's machine and its fidelity table
// (pipeline/fidelity.h), boots (count, warm-ups, repetitions, the order block by block),
// steps of every boot (tool, CPUs, duration or iterations, load, timeout), what decides the
// verdict (the primary metrics with their bad direction and threshold, Holm's step-down over
// the family at alpha, the failure rules; compare/compare.h), and a wall-time estimate
// (kernel builds + boots x (assumed boot overhead + known step time)) that states its basis.
// facts.kernels must have one entry per variant (else isolab::Error). Throws SpecError for a
// workload whose CPUs do not resolve against the guest (as check_guest_steps would). Ends with
// a newline.
std::string plan_text(const Spec& spec, const GuestDerivation& guest, const PlanTextFacts& facts);

}  // namespace isolab

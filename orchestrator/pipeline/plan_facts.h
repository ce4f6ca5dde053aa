// The host's answers a dry run's plan text needs (pipeline/plan_text.h): each variant's kernel
// as the kernel cache answers for it, and the accelerator the probe chooses.
#pragma once

#include <filesystem>
#include <string>

#include "kernel/kernel.h"
#include "pipeline/plan_text.h"
#include "pipeline/run_plan.h"
#include "spec/spec.h"
#include "sys/process.h"

namespace isolab {

// The kernel request a run makes for a variant of the spec (before a nightly baseline's
// prebuilt image replaces it): the spec's source, the variant's patches, the spec's then the
// variant's config fragments, and for a built kernel the guest's NR_CPUS when the fragments do
// not already set enough (guest_kernel_nr_cpus). Throws isolab::Error naming a fragment that
// cannot be read.
KernelRequest kernel_request(const Spec& spec, const VariantSpec& v, const GuestDerivation& guest);

struct PlanFactsOptions {
  std::filesystem::path cache_dir;  // "" = default_cache_dir() (kernel/kernel.h)
  std::string accel = "auto";       // "auto", "kvm" or "tcg" (isolab run --accel)
  bool remote_hosts = false;        // guests run on libvirt hosts: no local probe
  bool trace = true;                // isolab run without --no-trace
  int parallel = -1;                // isolab run --parallel: -1 = the spec's, 0 = auto, N
};

// Looks every variant's kernel up in the cache (lookup_kernel, kernel/lookup.h) and, unless the
// guests run on remote hosts, runs the accelerator probe (choose_accelerator, vm/accel.h) in a
// temporary directory it removes. Writes nothing else. Throws isolab::Error when gcc does not
// run, or when --accel kvm is asked and the probe fails (the run would refuse it too).
PlanTextFacts gather_plan_facts(const Spec& spec, const GuestDerivation& guest,
                                const PlanFactsOptions& opt, ProcessRunner& runner);

}  // namespace isolab

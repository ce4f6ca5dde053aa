#include "pipeline/plan_facts.h"

#include <cstdlib>

#include "base/error.h"
#include "kernel/lookup.h"
#include "vm/accel.h"

namespace fs = std::filesystem;

namespace isolab {

KernelRequest kernel_request(const Spec& spec, const VariantSpec& v, const GuestDerivation& guest) {
  KernelRequest r;
  r.source = spec.source;
  r.patches = v.patches;
  r.base_target = spec.base_config;
  r.fragments = spec.config_fragments;
  r.fragments.insert(r.fragments.end(), v.config_fragments.begin(), v.config_fragments.end());
  if (r.source.kind != KernelSourceSpec::Kind::prebuilt)
    r.nr_cpus = guest_kernel_nr_cpus(r.fragments, guest.nr_cpus_required);
  r.variant_name = v.name;
  r.robot_checks = spec.robot_checks;
  return r;
}

namespace {

// The accelerator the run would choose here, probed in a scratch directory.
void probe_accelerator(const PlanFactsOptions& opt, ProcessRunner& runner, PlanTextFacts& f) {
  std::string tmpl = (fs::temp_directory_path() / "isolab-dry-run-XXXXXX").string();
  if (::mkdtemp(tmpl.data()) == nullptr)
    throw Error("cannot create a scratch directory in " + fs::temp_directory_path().string());
  const fs::path dir = tmpl;
  try {
    const AccelChoice a = choose_accelerator(parse_accel_mode(opt.accel), runner, dir);
    f.accelerator = accel_name(a.accel);
    f.accelerator_reason = a.reason;
  } catch (...) {
    std::error_code ec;
    fs::remove_all(dir, ec);
    throw;
  }
  std::error_code ec;
  fs::remove_all(dir, ec);
}

}  // namespace

PlanTextFacts gather_plan_facts(const Spec& spec, const GuestDerivation& guest,
                                const PlanFactsOptions& opt, ProcessRunner& runner) {
  PlanTextFacts f;
  const fs::path cache = opt.cache_dir.empty() ? default_cache_dir() : opt.cache_dir;
  f.cache_dir = cache.string();
  for (const auto& v : spec.variants)
    f.kernels.push_back(lookup_kernel(kernel_request(spec, v, guest), {cache, runner, {}}));
  if (!opt.remote_hosts) probe_accelerator(opt, runner, f);
  f.trace = opt.trace;
  f.parallel = opt.parallel >= 0 ? opt.parallel : spec.parallel;
  return f;
}

}  // namespace isolab

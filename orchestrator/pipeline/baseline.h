// Nightly mode: the stored baseline run only says WHICH kernel is the baseline; that kernel is
// booted in tonight's run, beside tonight's, so that both are measured at the same time under
// the same host load (boots of two runs made at different times are not exchangeable: a host or
// load change between the runs reads as a kernel change).
#pragma once

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "spec/spec.h"

namespace isolab {

// The baseline variant's kernel as the baseline run recorded it (result.json variants.<v>).
struct BaselineKernel {
  std::string variant;  // the variant of the baseline run (and of tonight's spec)
  std::string run_id;
  std::filesystem::path run_dir;
  std::filesystem::path bzimage;
  std::string kernel_release;
  std::string build_key;
  nlohmann::json patches;  // [{"path", "sha256"}] as recorded
};

// The kernel of `variant` in the baseline run (its result.json `run`, read from `run_dir`).
// nullopt with *why_not set when the run did not record that variant's kernel or its bzImage
// no longer exists (e.g. pruned from the kernel cache).
std::optional<BaselineKernel> baseline_kernel(const nlohmann::json& run,
                                              const std::filesystem::path& run_dir,
                                              const std::string& variant, std::string* why_not);

// The name of the variant that boots the baseline kernel: "<variant>-baseline" cut to the
// 40 characters a variant name may have.
std::string baseline_variant_name(const std::string& variant);

// Adds the baseline variant to the spec: a copy of spec.baseline_variant (its extra command
// line and sysctls) named baseline_variant_name(), last in spec.variants (so that a plain
// `isolab compare RUN` still compares tonight's first two variants), also in spec.raw (without
// patches and config fragments, which the baseline kernel does not take from tonight's spec)
// with the kernel's origin as spec.raw "baseline_kernel" (to_json below). Throws isolab::Error when
// the spec already has a variant of that name.
void add_baseline_variant(Spec& spec, const BaselineKernel& b);

// The result.json record of where the baseline variant's kernel came from:
// {"variant", "run_id", "run_dir", "bzimage", "kernel_release", "build_key", "patches"}.
nlohmann::json to_json(const BaselineKernel& b);

}  // namespace isolab

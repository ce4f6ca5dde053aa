#include "pipeline/baseline.h"

#include <algorithm>

#include "base/error.h"
#include "results/run_facts.h"
#include "results/variant_facts.h"

namespace isolab {

std::optional<BaselineKernel> baseline_kernel(const nlohmann::json& run,
                                              const std::filesystem::path& run_dir,
                                              const std::string& variant, std::string* why_not) {
  auto fail = [&](const std::string& why) -> std::optional<BaselineKernel> {
    if (why_not) *why_not = why;
    return std::nullopt;
  };
  const std::string id = run.is_object() ? results::run_id_or(run, run_dir.string()) : "";
  const std::optional<results::RecordedKernel> k = results::recorded_kernel(run, variant);
  if (!k) return fail("run " + id + " recorded no variant " + variant);
  BaselineKernel b;
  b.variant = variant;
  b.run_id = id;
  b.run_dir = run_dir;
  b.bzimage = k->bzimage;
  b.kernel_release = k->kernel_release;
  b.build_key = k->build_key;
  b.patches = k->patches;
  if (b.bzimage.empty()) return fail("run " + id + " recorded no kernel image of " + variant);
  std::error_code ec;
  if (!std::filesystem::is_regular_file(b.bzimage, ec))
    return fail("the kernel of " + variant + " in run " + id + " (build key " + b.build_key + ", " +
                b.bzimage.string() + ") is no longer there (pruned from the cache?)");
  return b;
}

std::string baseline_variant_name(const std::string& variant) {
  const std::string suffix = "-baseline";
  return variant.substr(0, 40 - suffix.size()) + suffix;
}

void add_baseline_variant(Spec& spec, const BaselineKernel& b) {
  const std::string name = baseline_variant_name(spec.baseline_variant);
  auto same = [&](const VariantSpec& v) { return v.name == name; };
  if (std::any_of(spec.variants.begin(), spec.variants.end(), same))
    throw Error("baseline: the spec already has a variant named " + name);
  const auto it =
      std::find_if(spec.variants.begin(), spec.variants.end(),
                   [&](const VariantSpec& v) { return v.name == spec.baseline_variant; });
  if (it == spec.variants.end()) throw Error("baseline: no variant " + spec.baseline_variant);
  VariantSpec v = *it;
  v.name = name;
  v.patches.clear();
  v.config_fragments.clear();
  nlohmann::json raw = nlohmann::json::object();
  for (const auto& r : spec.raw.value("variants", nlohmann::json::array()))
    if (r.is_object() && r.value("name", "") == spec.baseline_variant) raw = r;
  raw.erase("patches");
  raw.erase("config_fragments");
  raw["name"] = name;
  spec.variants.push_back(v);
  spec.raw["variants"].push_back(raw);
  spec.raw["baseline_kernel"] = to_json(b);
}

nlohmann::json to_json(const BaselineKernel& b) {
  return {{"variant", b.variant},
          {"run_id", b.run_id},
          {"run_dir", b.run_dir.string()},
          {"bzimage", b.bzimage.string()},
          {"kernel_release", b.kernel_release},
          {"build_key", b.build_key},
          {"patches", b.patches}};
}

}  // namespace isolab

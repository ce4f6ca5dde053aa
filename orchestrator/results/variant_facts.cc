#include "results/variant_facts.h"

#include "base/error.h"
#include "results/lenient.h"

namespace isolab::results {

BuildFacts build_facts(const VariantRecord& v, const std::string& pointer) {
  BuildFacts f;
  if (const auto& w = v.build_warnings; w && w->is_array()) {
    f.warnings.emplace();
    for (std::size_t i = 0; i < w->size(); ++i) {
      try {
        f.warnings->push_back(build_warning_from_json((*w)[i]));
      } catch (const Error& e) {
        throw SpecError(pointer + "/build_warnings/" + std::to_string(i), e.what());
      }
    }
  }
  if (const auto& t = v.touched_files; t && t->is_array())
    for (const auto& file : *t)
      if (file.is_string()) f.touched_files.insert(file.get<std::string>());
  return f;
}

std::string booted_build_key(const VariantRecord& v) {
  const nlohmann::json& of = field(v.rest, "baseline_of");
  if (of.is_object() && of.contains("build_key")) return of.value("build_key", "");
  return v.build_key.value_or("");
}

std::vector<PatchShown> patches_shown(const VariantRecord& v) {
  std::vector<PatchShown> out;
  if (!v.patches || !v.patches->is_array()) return out;
  for (const auto& p : *v.patches)
    out.push_back({scalar_text(field(p, "subject")), scalar_text(field(p, "path")),
                   scalar_text(field(p, "sha256"))});
  return out;
}

std::optional<RecordedKernel> recorded_kernel(const nlohmann::json& doc,
                                              const std::string& variant) {
  const nlohmann::json& v = field(field(doc, "variants"), variant.c_str());
  if (!v.is_object()) return std::nullopt;
  return RecordedKernel{v.value("bzimage", ""), v.value("system_map", ""),
                        v.value("kernel_release", ""), v.value("build_key", ""),
                        v.value("patches", nlohmann::json::array())};
}

}  // namespace isolab::results

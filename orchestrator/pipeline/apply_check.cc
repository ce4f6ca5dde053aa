#include "pipeline/apply_check.h"

#include <unistd.h>

#include <chrono>

#include "base/error.h"
#include "kernel/series_check.h"
#include "kernel/source.h"

namespace fs = std::filesystem;

namespace isolab {

void check_patched_variants(const Spec& spec, ProcessRunner& runner, const ApplyCheckOptions& o) {
  if (spec.source.kind == KernelSourceSpec::Kind::prebuilt) return;
  for (const VariantSpec& v : spec.variants) {
    if (v.patches.empty() || o.skip.count(v.name)) continue;
    const auto t0 = std::chrono::steady_clock::now();
    SourceTree src;
    try {
      src = prepare_source(spec.source, SourceContext{fs::absolute(o.cache_dir), runner, o.progress,
                                                      o.meter, v.name});
      check_series_applies(src, v.patches, runner,
                           fs::temp_directory_path() /
                               ("isolab-apply-check-" + std::to_string(::getpid()) + "-" + v.name));
    } catch (const Error& e) {
      throw Error("variant " + v.name + ": " + e.what() + "; nothing was built");
    }
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (o.progress)
      o.progress("variant " + v.name + ": its " + std::to_string(v.patches.size()) +
                 " patch(es) apply to " + src.description + " (git apply --cached, " +
                 std::to_string(static_cast<int>(s * 1000)) + " ms)");
  }
}

}  // namespace isolab

#include "pipeline/mailed_series.h"

#include "base/error.h"
#include "base/files.h"
#include "kernel/mbox_series.h"
#include "spec/json_object.h"

namespace fs = std::filesystem;

namespace isolab {

namespace {

bool holds_series(const fs::path& patch) {
  std::error_code ec;
  return fs::is_regular_file(patch, ec) && is_mbox_series(read_file(patch));
}

}  // namespace

void expand_mailed_series(Spec& spec, const fs::path& cache_dir, ProcessRunner& runner) {
  for (std::size_t i = 0; i < spec.variants.size(); ++i) {
    std::vector<fs::path> patches;
    for (const fs::path& p : spec.variants[i].patches) {
      if (!holds_series(p)) {
        patches.push_back(p);
        continue;
      }
      try {
        for (auto& f : expand_mbox_series(p, cache_dir / "series", runner))
          patches.push_back(std::move(f));
      } catch (const Error& e) {
        throw SpecError(json_child(json_child("/variants", i), "patches"), e.what());
      }
    }
    spec.variants[i].patches = std::move(patches);
  }
}

}  // namespace isolab

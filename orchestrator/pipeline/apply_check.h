// Every patched variant's series checked against its base before the first kernel build
// (kernel/series_check.h): a series that does not apply is refused within seconds of
// `isolab run`, naming the variant, the patch and its first failing hunk, instead of after the
// builds of the variants before it. The base is the source tree the build uses (unpacked once
// into the cache by prepare_source), so the check adds no unpack of its own.
#pragma once

#include <filesystem>
#include <functional>
#include <set>
#include <string>

#include "base/progress.h"
#include "spec/spec.h"
#include "sys/process.h"

namespace isolab {

struct ApplyCheckOptions {
  std::filesystem::path cache_dir;                   // the kernel cache
  std::function<void(const std::string&)> progress;  // one line per variant; may be empty
  Progress* meter = nullptr;                         // the source's unpack meter; may be null
  std::set<std::string> skip;                        // variants that build no kernel here
};

// Throws isolab::Error "variant <name>: patch 2 of 3 (<path>, '<subject>'): hunk #1 of F does
// not apply (at line L); nothing was built". Variants without patches, with a prebuilt kernel
// or named in skip are not checked.
void check_patched_variants(const Spec& spec, ProcessRunner& runner, const ApplyCheckOptions& o);

}  // namespace isolab

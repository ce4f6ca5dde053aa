#include "cli/cache.h"

#include <CLI/CLI.hpp>
#include <filesystem>
#include <iostream>

#include "base/error.h"
#include "kernel/cache.h"
#include "kernel/kernel.h"

namespace isolab {

namespace fs = std::filesystem;

namespace {

// isolab cache list | prune: the kernel cache.
struct CacheCommand {
  std::string cache_dir, max_size;
  int keep_last = -1;
  CLI::App* list = nullptr;

  void declare(CLI::App& cache) {
    cache.require_subcommand(1);
    list = cache.add_subcommand(
        "list", "Kernels, build slots and sources: size and last use, newest first.");
    list->add_option("--cache-dir", cache_dir,
                     "Cache directory (default $ISOLAB_CACHE_DIR or ~/.cache/isolab)");
    auto* prune = cache.add_subcommand(
        "prune",
        "Remove the least recently used entries; entries a run or build holds are skipped.");
    prune->add_option("--cache-dir", cache_dir,
                      "Cache directory (default $ISOLAB_CACHE_DIR or ~/.cache/isolab)");
    prune
        ->add_option("--keep-last", keep_last,
                     "Keep the N most recently used kernels, build slots and sources")
        ->check(CLI::Range(0, 1000000));
    prune->add_option("--max-size", max_size,
                      "Then remove the oldest entries until the cache is at most SIZE (e.g. "
                      "20G, 500M)");
  }

  int run() const {
    fs::path dir = cache_dir.empty() ? isolab::default_cache_dir() : fs::path(cache_dir);
    if (*list) {
      std::cout << isolab::cache_list_text(isolab::scan_cache(dir));
      return 0;
    }
    return prune(dir);
  }

  // isolab cache prune: what it removed and what it kept because a run or build holds it.
  int prune(const fs::path& dir) const {
    isolab::PrunePolicy policy;
    if (keep_last >= 0) policy.keep_last = keep_last;
    if (!max_size.empty()) policy.max_bytes = isolab::parse_size(max_size);
    isolab::PruneReport r = isolab::prune_cache(dir, policy);
    for (const auto& e : r.removed)
      std::cout << "removed " << e.kind << " " << e.id << " (" << isolab::format_size(e.bytes)
                << ")\n";
    for (const auto& e : r.busy)
      std::cout << "kept " << e.kind << " " << e.id << ": in use (" << e.lock.string()
                << " is held)\n";
    std::cout << "cache " << dir.string() << ": " << isolab::format_size(r.bytes_before) << " -> "
              << isolab::format_size(r.bytes_after) << "\n";
    return 0;
  }
};
}  // namespace

Action declare_cache(CLI::App& sub) { return declare_command<CacheCommand>(sub); }

}  // namespace isolab

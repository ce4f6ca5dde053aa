#include "kernel/extra_warnings.h"

#include <map>
#include <set>
#include <tuple>

#include "kernel/build_argv.h"

namespace fs = std::filesystem;

namespace isolab {

namespace {

using WarningKey = std::tuple<std::string, std::string, std::string>;

WarningKey key_of(const BuildWarning& w) { return {w.file, w.klass, w.message}; }

}  // namespace

std::vector<std::string> compiled_objects(const std::vector<std::string>& touched,
                                          const fs::path& build_dir) {
  std::vector<std::string> out;
  std::set<std::string> seen;
  for (const std::string& f : touched) {
    if (f.size() < 3 || f.compare(f.size() - 2, 2, ".c") != 0) continue;
    const std::string obj = f.substr(0, f.size() - 2) + ".o";
    std::error_code ec;
    if (fs::is_regular_file(build_dir / obj, ec) && seen.insert(obj).second) out.push_back(obj);
  }
  return out;
}

std::vector<std::string> extra_warnings_argv(const fs::path& build_dir, int jobs,
                                             const std::string& build_key, bool use_ccache, bool w1,
                                             bool sparse, const std::vector<std::string>& objects) {
  std::vector<std::string> argv{"make", "O=" + build_dir.string(),
                                "-j" + std::to_string(jobs < 1 ? 1 : jobs),
                                "LOCALVERSION=" + localversion_for_key(build_key)};
  for (auto& v : make_common_vars(use_ccache)) argv.push_back(v);
  if (w1) argv.emplace_back("W=1");
  if (sparse) {
    argv.emplace_back("C=2");
    argv.emplace_back("CHECK=sparse");
  }
  argv.insert(argv.end(), objects.begin(), objects.end());
  return argv;
}

std::vector<BuildWarning> parse_extra_warnings(std::string_view log,
                                               const std::string& source_dir) {
  std::vector<BuildWarning> out = parse_build_warnings(log, source_dir);
  for (BuildWarning& w : out)
    if (w.klass.empty()) w.klass = w.column == 0 ? "kernel-doc" : "sparse";
  return out;
}

std::vector<BuildWarning> added_warnings(const std::vector<BuildWarning>& before,
                                         const std::vector<BuildWarning>& after,
                                         const std::vector<BuildWarning>& regular) {
  std::map<WarningKey, int> base;
  for (const BuildWarning& w : before) ++base[key_of(w)];
  std::set<WarningKey> known;
  for (const BuildWarning& w : regular) known.insert(key_of(w));
  std::vector<BuildWarning> out;
  for (const BuildWarning& w : after) {
    const WarningKey k = key_of(w);
    if (int& n = base[k]; n > 0) {
      --n;
      continue;
    }
    if (!known.count(k)) out.push_back(w);
  }
  return out;
}

}  // namespace isolab

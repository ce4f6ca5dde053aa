#include "compare/request.h"

#include "base/error.h"
#include "compare/noise_floors.h"
#include "results/result_file.h"
#include "results/run_facts.h"

namespace isolab {

CompareSettings run_compare_settings(const nlohmann::json& run,
                                     const std::filesystem::path& run_dir_or_file) {
  try {
    const nlohmann::json* section = results::compare_section(run);
    if (!section) return {};
    return settings_from_json(*section, "/spec/compare");
  } catch (const Error& e) {
    throw Error(result_file(run_dir_or_file).string() + ": " + e.what());
  }
}

namespace {

// The calibration's noise floors, when its comparison key is the runs' (or force).
std::map<std::string, double> calibrated_floors(const CompareRequest& o,
                                                const nlohmann::json& run_a,
                                                const nlohmann::json& run_b, std::ostream& err) {
  const std::string file = o.noise_floor_file->string();
  const nlohmann::json cal = read_json_file(*o.noise_floor_file);
  std::map<std::string, double> floors;
  try {
    floors = noise_floors_from_json(cal);
  } catch (const Error& e) {
    throw Error(file + ": " + e.what());
  }
  std::vector<std::string> diffs = calibration_key_differences(cal, run_b);
  if (o.run_dirs.size() == 2)
    for (const auto& d : calibration_key_differences(cal, run_a)) diffs.push_back("A: " + d);
  if (!diffs.empty()) {
    std::string m = file + ": calibration made under another comparison key than the runs'";
    for (const auto& d : diffs) m += "\n  " + d;
    if (!o.force) throw Error(m + "\n(use --force to apply its noise floors anyway)");
    err << "isolab compare: warning: " << m << "\n(applied because of --force)\n";
  }
  return floors;
}

}  // namespace

CompareSettings comparison_settings(const CompareRequest& o, const nlohmann::json& run_a,
                                    const nlohmann::json& run_b, std::ostream& err) {
  CompareSettings settings = run_compare_settings(run_b, o.run_dirs.back());
  if (o.noise_floor_file) settings.noise_floors_pct = calibrated_floors(o, run_a, run_b, err);
  if (!o.primary.empty()) {
    settings.primary.clear();
    for (const auto& arg : o.primary) settings.primary.push_back(primary_from_argument(arg));
    settings.primary_origin = "--primary";
  }
  settings.pool_hosts = o.pool_hosts;
  return settings;
}

namespace {

// The variant defaults of CompareRequest.
void resolve_variants(const CompareRequest& o, LoadedComparison& l) {
  std::string& va = l.variant_a;
  std::string& vb = l.variant_b;
  const auto order_a = results::variant_order_of(l.run_a);
  const auto order_b = results::variant_order_of(l.run_b);
  const std::string a_file = result_file(o.run_dirs[0]).string();
  const std::string b_file = result_file(o.run_dirs.back()).string();
  if (o.run_dirs.size() == 1) {
    if (!va.empty() && !vb.empty()) return;
    if (order_a.size() < 2) {
      throw Error(a_file +
                  ": variant_order has fewer than two variants; give --variant-a and "
                  "--variant-b, or two run directories");
    }
    if (va.empty()) va = order_a[0];
    if (vb.empty()) vb = order_a[1];
    return;
  }
  if (va.empty()) {
    if (order_a.empty()) throw Error(a_file + ": no variant_order");
    va = order_a[0];
  }
  if (vb.empty()) {
    if (results::names_variant(l.run_b, va)) {
      vb = va;
    } else if (!order_b.empty()) {
      vb = order_b[0];
    } else {
      throw Error(b_file + ": no variant_order");
    }
  }
}

// result.json's record of a run, an error in it (a JSON pointer) prefixed with the file, so that
// of two runs the wrong one is named.
results::RunResult result_in_file(const nlohmann::json& run, const std::filesystem::path& dir) {
  try {
    return results::result_from_json(run);
  } catch (const SpecError& e) {
    throw Error(result_file(dir).string() + ": " + e.what());
  }
}

}  // namespace

LoadedComparison load_comparison(const CompareRequest& o, std::ostream& err) {
  if (o.run_dirs.empty() || o.run_dirs.size() > 2) {
    throw Error("compare: give one run directory (its two variants) or two (A then B)");
  }
  LoadedComparison l;
  l.run_a = load_result(o.run_dirs[0]);
  l.run_b = o.run_dirs.size() == 2 ? load_result(o.run_dirs[1]) : l.run_a;
  l.dir_a = result_file(o.run_dirs[0]).parent_path();
  l.dir_b = result_file(o.run_dirs.back()).parent_path();
  const CompareSettings settings = comparison_settings(o, l.run_a, l.run_b, err);
  l.variant_a = o.variant_a;
  l.variant_b = o.variant_b;
  resolve_variants(o, l);
  l.result_a = result_in_file(l.run_a, o.run_dirs[0]);
  l.result_b = result_in_file(l.run_b, o.run_dirs.back());
  l.comparison = compare_runs(l.result_a, l.variant_a, l.result_b, l.variant_b, settings, o.force);
  return l;
}

}  // namespace isolab

#include "compare/commands.h"

#include <algorithm>
#include <iostream>

#include "base/error.h"
#include "base/files.h"
#include "base/json_text.h"
#include "compare/calibrate.h"
#include "compare/compare.h"
#include "compare/history.h"
#include "compare/host_load.h"
#include "compare/relabel_aa.h"
#include "compare/report.h"

namespace isolab {

namespace {

constexpr std::size_t kMaxResultBytes = 512u << 20;

std::filesystem::path result_path(const std::filesystem::path& p) {
  std::error_code ec;
  if (std::filesystem::is_directory(p, ec)) return p / "result.json";
  return p;
}

nlohmann::json parse_json_file(const std::filesystem::path& file) {
  std::error_code ec;
  const auto size = std::filesystem::file_size(file, ec);
  if (ec) throw Error(file.string() + ": cannot read: " + ec.message());
  if (size > kMaxResultBytes) {
    throw Error(file.string() + ": " + std::to_string(size) + " bytes, larger than the " +
                std::to_string(kMaxResultBytes) + " byte limit");
  }
  const std::string text = read_file(file, kMaxResultBytes);
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    throw Error(file.string() + ": not valid JSON at byte " + std::to_string(e.byte) + ": " +
                e.what());
  }
}

std::vector<std::string> variant_order(const nlohmann::json& run) {
  std::vector<std::string> v;
  if (!run.is_object()) return v;
  if (auto it = run.find("variant_order"); it != run.end() && it->is_array()) {
    for (const auto& x : *it) {
      if (x.is_string()) v.push_back(x.get<std::string>());
    }
  }
  return v;
}

bool has_variant(const nlohmann::json& run, const std::string& name) {
  const auto order = variant_order(run);
  if (std::find(order.begin(), order.end(), name) != order.end()) return true;
  if (auto it = run.find("variants"); it != run.end() && it->is_object()) {
    return it->contains(name);
  }
  return false;
}

CompareSettings settings_of(const nlohmann::json& run) {
  if (!run.is_object()) return {};
  auto spec = run.find("spec");
  if (spec == run.end() || !spec->is_object()) return {};
  auto section = spec->find("compare");
  if (section == spec->end()) return {};
  return settings_from_json(*section, "/spec/compare");
}

}  // namespace

nlohmann::json load_result(const std::filesystem::path& run_dir_or_file) {
  return parse_json_file(result_path(run_dir_or_file));
}

namespace {

// The calibration's noise floors, when its comparison key is the runs' (or force).
std::map<std::string, double> calibrated_floors(const CompareCommandOptions& o,
                                                const nlohmann::json& run_a,
                                                const nlohmann::json& run_b, std::ostream& err) {
  const std::string file = o.noise_floor_file->string();
  const nlohmann::json cal = parse_json_file(*o.noise_floor_file);
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

CompareSettings settings_for(const CompareCommandOptions& o, const nlohmann::json& run_a,
                             const nlohmann::json& run_b, std::ostream& err) {
  CompareSettings settings;
  try {
    settings = settings_of(run_b);
  } catch (const Error& e) {
    throw Error(result_path(o.run_dirs.back()).string() + ": " + e.what());
  }
  if (o.noise_floor_file) settings.noise_floors_pct = calibrated_floors(o, run_a, run_b, err);
  if (!o.primary.empty()) {
    settings.primary.clear();
    for (const auto& arg : o.primary) settings.primary.push_back(primary_from_argument(arg));
    settings.primary_origin = "--primary";
  }
  settings.pool_hosts = o.pool_hosts;
  return settings;
}

int relabel_aa_command(const CompareCommandOptions& o, std::ostream& out) {
  if (o.run_dirs.size() != 1)
    throw Error("compare --relabel-aa: give one run directory (an A/A run)");
  if (o.format != "text" && o.format != "json")
    throw Error("--format: --relabel-aa writes text or json, not '" + o.format + "'");
  const nlohmann::json run = load_result(o.run_dirs[0]);
  AaRelabelOptions ro;
  ro.variant_a = o.variant_a;
  ro.variant_b = o.variant_b;
  const AaRelabelResult r = relabel_aa(run, settings_for(o, run, run, std::cerr), ro);
  out << (o.format == "json" ? aa_relabel_to_json(r).dump(2) + "\n" : render_aa_relabel_text(r));
  return 0;
}

// The variant defaults of CompareCommandOptions.
void resolve_variants(const CompareCommandOptions& o, LoadedComparison& l) {
  std::string& va = l.variant_a;
  std::string& vb = l.variant_b;
  const auto order_a = variant_order(l.run_a), order_b = variant_order(l.run_b);
  const std::string a_file = result_path(o.run_dirs[0]).string();
  const std::string b_file = result_path(o.run_dirs.back()).string();
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
    if (has_variant(l.run_b, va)) {
      vb = va;
    } else if (!order_b.empty()) {
      vb = order_b[0];
    } else {
      throw Error(b_file + ": no variant_order");
    }
  }
}

// compare's host-load flag (compare/host_load.h) as a line of its own; "" when neither side
// recorded cells[].host_load.
std::string host_load_line(const LoadedComparison& l) {
  const auto a = variant_host_loads(l.run_a, l.variant_a);
  const auto b = variant_host_loads(l.run_b, l.variant_b);
  if (a.empty() && b.empty()) return "";
  return host_load_flag_line(compare_host_loads(a, b, l.comparison.settings.alpha)) + "\n";
}

}  // namespace

LoadedComparison load_comparison(const CompareCommandOptions& o, std::ostream& err) {
  if (o.run_dirs.empty() || o.run_dirs.size() > 2) {
    throw Error("compare: give one run directory (its two variants) or two (A then B)");
  }
  LoadedComparison l;
  l.run_a = load_result(o.run_dirs[0]);
  l.run_b = o.run_dirs.size() == 2 ? load_result(o.run_dirs[1]) : l.run_a;
  l.dir_a = result_path(o.run_dirs[0]).parent_path();
  l.dir_b = result_path(o.run_dirs.back()).parent_path();
  const CompareSettings settings = settings_for(o, l.run_a, l.run_b, err);
  l.variant_a = o.variant_a;
  l.variant_b = o.variant_b;
  resolve_variants(o, l);
  l.comparison = compare_runs(l.run_a, l.variant_a, l.run_b, l.variant_b, settings, o.force);
  return l;
}

int compare_command(const CompareCommandOptions& o, std::ostream& out, std::ostream& err) {
  try {
    if (o.relabel_aa) return relabel_aa_command(o, out);
    const ReportFormat format = parse_report_format(o.format);
    LoadedComparison l;
    try {
      l = load_comparison(o, err);
    } catch (const ComparisonRefused& e) {
      err << "isolab compare: " << e.what() << "\n";
      return 2;
    }
    out << render(l.comparison, format);
    if (o.format == "text" || o.format == "markdown") out << host_load_line(l);
    if (o.history_db) {
      HistoryDb db = HistoryDb::open(*o.history_db);
      index_run(db, l.run_a, l.dir_a);
      if (o.run_dirs.size() == 2) index_run(db, l.run_b, l.dir_b);
      record_comparison(db, l.comparison);
    }
    return compare_exit_status(l.comparison);
  } catch (const std::exception& e) {
    err << "isolab compare: error: " << e.what() << "\n";
    return 2;
  }
}

int calibrate_report_command(const CalibrateCommandOptions& o, std::ostream& out,
                             std::ostream& err) {
  try {
    if (o.format != "text" && o.format != "json") {
      throw Error("--format: calibrate writes text or json, not '" + o.format + "'");
    }
    if (o.run_dirs.empty()) throw Error("calibrate: give one or more A/A run directories");
    std::vector<nlohmann::json> runs;
    for (const auto& d : o.run_dirs) runs.push_back(load_result(d));
    CalibrationOptions co;
    co.splits = o.splits;
    co.seed = o.seed;
    co.variants = o.variants;
    CompareSettings settings;
    try {
      settings = settings_of(runs.front());
    } catch (const Error& e) {
      throw Error(result_path(o.run_dirs.front()).string() + ": " + e.what());
    }
    const Calibration cal = calibrate_runs(runs, settings, co);
    const std::string text = json_text(calibration_to_json(cal), 2) + "\n";
    if (o.output) write_file_atomic(*o.output, text);
    out << (o.format == "json" ? text : render_calibration_text(cal));
    return 0;
  } catch (const std::exception& e) {
    err << "isolab calibrate: error: " << e.what() << "\n";
    return 2;
  }
}

int history_command(const HistoryCommandOptions& o, std::ostream& out, std::ostream& err) {
  try {
    if (o.format != "text" && o.format != "json") {
      throw Error("--format: history writes text or json, not '" + o.format + "'");
    }
    std::error_code ec;
    if (!std::filesystem::is_directory(o.results_dir, ec)) {
      throw Error(o.results_dir.string() + ": results directory does not exist");
    }
    HistoryDb db = HistoryDb::open_in(o.results_dir);
    if (o.scan) {
      std::vector<std::filesystem::path> dirs;
      for (const auto& e : std::filesystem::directory_iterator(o.results_dir, ec)) {
        if (e.is_directory() && std::filesystem::exists(e.path() / "result.json")) {
          dirs.push_back(e.path());
        }
      }
      std::sort(dirs.begin(), dirs.end());
      for (const auto& d : dirs) {
        try {
          index_run(db, load_result(d), d);
        } catch (const Error& e) {
          err << "isolab history: skipping " << d.string() << ": " << e.what() << "\n";
        }
      }
    }
    if (o.last_good) {
      if (!o.spec_name || !o.variant) {
        throw Error("history --last-good needs --spec and --variant");
      }
      const auto r = last_good_run(db, *o.spec_name, *o.variant);
      if (o.format == "json") {
        out << json_text(r ? nlohmann::json{{"run_id", r->run_id},
                                            {"started_at", r->started_at},
                                            {"path", r->path}}
                           : nlohmann::json(),
                         2)
            << "\n";
      } else if (r) {
        out << r->run_id << "\t" << r->started_at << "\t" << r->path << "\n";
      } else {
        out << "(no good run of " << *o.spec_name << " with variant " << *o.variant << ")\n";
      }
      return 0;
    }
    if (o.metric.empty()) throw Error("history: give a metric name, e.g. latency.latency_max_us");
    const auto rows = history(db, o.metric, o.variant, o.spec_name);
    if (o.format == "json") {
      out << history_to_json(o.metric, rows)
                 .dump(2, ' ', false, nlohmann::json::error_handler_t::replace)
          << "\n";
    } else {
      out << render_history_text(o.metric, rows);
    }
    return 0;
  } catch (const std::exception& e) {
    err << "isolab history: error: " << e.what() << "\n";
    return 2;
  }
}

}  // namespace isolab

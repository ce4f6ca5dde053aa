#include "cli/history.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <iostream>
#include <nlohmann/json.hpp>

#include "base/error.h"
#include "base/json_text.h"
#include "compare/request.h"
#include "history/cusum.h"
#include "history/history.h"
#include "report/cusum.h"
#include "report/history.h"
#include "results/result_file.h"

namespace isolab {

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
    std::optional<Cusum> c;
    if (o.variant && !rows.empty()) {
      CusumSettings s = default_cusum_settings(o.metric, rows.back().unit, rows.back().better,
                                               rows.back().accelerator);
      s.anchor_run = o.anchor;
      if (o.margin_pct) s.margin_pct = *o.margin_pct;
      c = cusum(o.metric, series_of(rows), s);
    }
    if (o.format == "json") {
      nlohmann::json j = history_to_json(o.metric, rows);
      if (c) j["cusum"] = cusum_to_json(*c);
      out << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
    } else {
      out << render_history_text(o.metric, rows);
      if (c) out << render_cusum_text(*c);
    }
    return c && c->alarm ? 1 : 0;
  } catch (const std::exception& e) {
    err << "isolab history: error: " << e.what() << "\n";
    return 2;
  }
}

namespace {

// isolab history METRIC: a metric's trend across the indexed runs.
struct HistoryCommand {
  isolab::HistoryCommandOptions opt;
  std::string variant, spec;
  double margin = 0;

  void declare(CLI::App& hist) {
    hist.add_option("metric", opt.metric, "Metric name, e.g. latency.latency_max_us")->required();
    hist.add_option("--variant", variant, "Only this variant");
    hist.add_option("--spec", spec, "Only runs of this spec name");
    opt.results_dir = "results";
    hist.add_option("--results-dir", opt.results_dir, "Results directory holding isolab.db")
        ->capture_default_str();
    hist.add_option("--anchor", opt.anchor,
                    "With --variant: the run the CUSUM measures the series against (default: "
                    "the first)");
    hist.add_option("--margin-pct", margin,
                    "With --variant: the CUSUM's margin, percent of the anchor (default: "
                    "compare's margin for the metric's kind)")
        ->check(CLI::PositiveNumber);
    hist.add_option("--format", opt.format, "text or json")
        ->check(CLI::IsMember({"text", "json"}))
        ->capture_default_str();
  }

  int run() {
    if (!variant.empty()) opt.variant = variant;
    if (!spec.empty()) opt.spec_name = spec;
    if (margin > 0) opt.margin_pct = margin;
    return isolab::history_command(opt, std::cout, std::cerr);
  }
};

}  // namespace

Action declare_history(CLI::App& sub) { return declare_command<HistoryCommand>(sub); }

}  // namespace isolab

#include "report/cusum.h"

#include <cmath>
#include <cstdio>

#include "base/number_text.h"

namespace isolab {

std::string render_cusum_text(const Cusum& c) {
  std::string o = "cusum of " + c.metric;
  if (c.anchor_run.empty()) return o + ": " + c.note + "\n";
  o += " against run " + c.anchor_run + " (anchor " + format_number("%.6g", c.anchor) +
       ", margin " + format_number("%.4g", c.margin) + ", " +
       (c.settings.higher_is_bad ? "higher" : "lower") + " is bad; S = max(0, S + z - " +
       format_number("%g", c.settings.k) + "), alarm at S >= " + format_number("%g", c.settings.h) +
       ")\n";
  for (const auto& p : c.points)
    o += "  " + p.run_id + "  " + format_number("%12.6g", p.value) + "  z " +
         format_number("%+.2f", p.z) + "  S " + format_number("%.2f", p.s) +
         (p.alarm ? "  ALARM" : "") + "\n";
  if (!c.note.empty()) o += "  (" + c.note + ")\n";
  o +=
      c.alarm ? "  ALARM: the series crept beyond the margin against the anchor\n" : "  no alarm\n";
  return o;
}

nlohmann::json cusum_to_json(const Cusum& c) {
  nlohmann::json points = nlohmann::json::array();
  for (const auto& p : c.points)
    points.push_back({{"run_id", p.run_id},
                      {"started_at", p.started_at},
                      {"value", p.value},
                      {"z", p.z},
                      {"s", p.s},
                      {"alarm", p.alarm}});
  return {{"metric", c.metric},
          {"anchor_run", c.anchor_run},
          {"anchor", c.anchor},
          {"margin", c.margin},
          {"higher_is_bad", c.settings.higher_is_bad},
          {"k", c.settings.k},
          {"h", c.settings.h},
          {"points", points},
          {"alarm", c.alarm},
          {"note", c.note}};
}

}  // namespace isolab

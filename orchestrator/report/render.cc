#include "report/render.h"

#include "base/error.h"

namespace isolab {

ReportFormat parse_report_format(const std::string& s) {
  if (s == "text") return ReportFormat::text;
  if (s == "json") return ReportFormat::json;
  if (s == "markdown" || s == "md") return ReportFormat::markdown;
  if (s == "junit") return ReportFormat::junit;
  throw Error("--format: unknown report format '" + s + "' (text, json, markdown, junit)");
}

std::string render(const Comparison& c, ReportFormat f) {
  switch (f) {
    case ReportFormat::text:
      return render_text(c);
    case ReportFormat::json:
      return render_json(c).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
    case ReportFormat::markdown:
      return render_markdown(c);
    case ReportFormat::junit:
      break;
  }
  return render_junit(c);
}

}  // namespace isolab

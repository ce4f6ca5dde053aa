#include "report/command.h"

#include "base/files.h"
#include "report/data.h"
#include "report/html.h"

namespace isolab {

int report_command(const ReportCommandOptions& o, std::ostream& out, std::ostream& err) {
  const char* who = o.compare_status ? "isolab compare" : "isolab report";
  try {
    ReportData d;
    try {
      d = gather_report(o.compare);
    } catch (const ComparisonRefused& e) {
      err << who << ": " << e.what() << "\n";
      return 2;
    }
    const std::string page = render_html_report(d);
    if (!o.output || o.output->string() == "-") {
      out << page;
    } else {
      write_file_atomic(*o.output, page);
      err << who << ": wrote " << o.output->string() << "\n";
    }
    return o.compare_status ? compare_exit_status(d.loaded.comparison) : 0;
  } catch (const std::exception& e) {
    err << who << ": error: " << e.what() << "\n";
    return 2;
  }
}

}  // namespace isolab

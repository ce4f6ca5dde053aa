#include "report/junit.h"

#include <sstream>

#include "base/xml_text.h"
#include "report/format.h"
#include "report/summary.h"
#include "report/text.h"

namespace isolab {

using namespace report_detail;

namespace {

// One testcase for the warnings B adds, failed when one is in a file B's series touches; none
// when either build recorded no warnings.
void junit_build_warnings(const Comparison& c, const std::string& classname,
                          std::ostringstream& o) {
  if (!c.new_warnings) return;
  o << "    <testcase classname=\"" << xml_escape(classname) << "\" name=\"build-warnings."
    << xml_escape(c.variant_b) << "\" time=\"0\"";
  if (c.new_warnings_in_touched_files() == 0) {
    o << "/>\n";
    return;
  }
  std::string detail;
  for (const auto& l : warning_lines(c)) detail += l + "\n";
  o << ">\n      <failure type=\"new-build-warning\" message=\""
    << xml_escape(std::to_string(c.new_warnings_in_touched_files()) +
                  " new build warning(s) in files the series touches")
    << "\">" << xml_escape(detail) << "</failure>\n    </testcase>\n";
}

}  // namespace

namespace {

// One testcase per metric row: classname ".primary" or ".secondary"; a primary "regressed" is a
// <failure>, an "inconclusive" row <skipped>; a secondary "regressed" passes, saying so.
void junit_metric(const MetricRow& r, const std::string& classname, std::ostringstream& o) {
  o << "    <testcase classname=\"" << xml_escape(classname + "." + role_name(r)) << "\" name=\""
    << xml_escape(r.name) << "\" time=\"0\"";
  const std::string msg = std::string(role_name(r)) + ": " + verdict_name(r.verdict.verdict) +
                          ": " + format_change(r) + ", " + r.verdict.reason;
  const bool means = r.kind != MetricKind::timing;
  const char* stat = means ? "mean" : "median";
  const double va = means ? r.test.a.mean : r.test.a.median;
  const double vb = means ? r.test.b.mean : r.test.b.median;
  const std::string detail = std::string("A ") + stat + " " + num(va) + " " + r.unit +
                             " (n=" + std::to_string(r.test.a.n) + "), B " + stat + " " + num(vb) +
                             " " + r.unit + " (n=" + std::to_string(r.test.b.n) +
                             "), p=" + p_text(r) + ", adjusted p=" + adjusted_p_text(r) +
                             ", better " + r.better;
  if (r.primary && r.verdict.verdict == Verdict::regressed) {
    o << ">\n      <failure type=\"regression\" message=\"" << xml_escape(msg) << "\">"
      << xml_escape(detail) << "</failure>\n    </testcase>\n";
  } else if (r.verdict.verdict == Verdict::inconclusive) {
    o << ">\n      <skipped message=\"" << xml_escape(msg) << "\"/>\n    </testcase>\n";
  } else {
    const std::string note =
        !r.primary && moved(r) ? " (secondary: does not set the exit status)" : "";
    o << ">\n      <system-out>" << xml_escape(msg + note + "; " + detail) << "</system-out>\n"
      << "    </testcase>\n";
  }
}

// A testcase that fails with `failure` lines when there are any.
void junit_check(const std::string& classname, const std::string& name, const std::string& type,
                 const std::string& message, const std::string& failure, std::ostringstream& o) {
  o << "    <testcase classname=\"" << xml_escape(classname) << "\" name=\"" << xml_escape(name)
    << "\" time=\"0\"";
  if (failure.empty()) {
    o << "/>\n";
    return;
  }
  o << ">\n      <failure type=\"" << type << "\" message=\"" << xml_escape(message) << "\">"
    << xml_escape(failure) << "</failure>\n    </testcase>\n";
}

void junit_outcomes(const Comparison& c, const std::string& classname, std::ostringstream& o) {
  std::string kernel;
  for (const auto& f : c.failures)
    if (f.against_b) kernel += f.failure_class + ": " + f.reason + "\n";
  for (const auto& i : c.issues)
    if (i.side == "B" && i.against_b) kernel += issue_line(i) + "\n";
  junit_check(classname, "kernel-health." + c.variant_b, "kernel-failure",
              std::to_string(c.kernel_failure_regressions()) +
                  " kernel failure class(es) counted against B",
              kernel, o);
  if (!c.gate.empty()) {
    std::string gate;
    for (const auto& g : c.gate)
      if (g.against_b) gate += g.check + ": " + g.reason + "\n";
    junit_check(classname, "isolation-gate." + c.variant_b, "gate-failure",
                std::to_string(c.gate_regressions()) + " gate check(s) counted against B", gate, o);
  }
  if (!c.retries.reason.empty())
    junit_check(classname, "retried-boots." + c.variant_b, "retry-rate",
                "infrastructure failures booted again, as B's rate against A's",
                c.retries.against_b ? c.retries.reason : "", o);
  if (!c.settings.primary.empty()) {
    o << "    <testcase classname=\"" << xml_escape(classname) << "\" name=\"primary-power."
      << xml_escape(c.variant_b) << "\" time=\"0\"";
    if (!c.budget.no_primary_reachable) {
      o << "/>\n";
      return;
    }
    std::string names;
    for (const auto& n : c.budget.unreachable_primaries) names += n + "\n";
    o << ">\n      <error type=\"unreachable\" message=\"no primary metric could reach alpha "
         "with these boots (exit status 3)\">"
      << xml_escape(names) << "</error>\n    </testcase>\n";
  }
}

void junit_properties(const Comparison& c, std::ostringstream& o) {
  o << "    <properties>\n";
  auto prop = [&](const std::string& n, const std::string& v) {
    o << "      <property name=\"" << xml_escape(n) << "\" value=\"" << xml_escape(v) << "\"/>\n";
  };
  prop("run_a", c.run_a);
  prop("run_b", c.run_b);
  prop("variant_a", c.variant_a);
  prop("variant_b", c.variant_b);
  prop("kernel_a", c.kernel_a);
  prop("kernel_b", c.kernel_b);
  prop("cells_a", std::to_string(c.cells_a));
  prop("cells_b", std::to_string(c.cells_b));
  prop("alpha", num(c.settings.alpha, "%.3g"));
  prop("min_samples", std::to_string(c.settings.min_samples));
  prop("exit_status_basis", summarize(c).front().text);
  prop("exit_status", std::to_string(compare_exit_status(c)));
  prop("forced", c.forced ? "true" : "false");
  for (std::size_t k = 0; k < c.differences.size(); ++k) {
    prop("difference." + std::to_string(k), c.differences[k]);
  }
  o << "    </properties>\n";
}

}  // namespace

std::string render_junit(const Comparison& c) {
  const std::string classname =
      "isolab.compare." + (c.spec_name.empty() ? std::string("run") : c.spec_name);
  // + kernel-health, + isolation-gate when a cell was gated, + build-warnings when both builds
  // recorded their warnings
  // + retried-boots when a boot was retried, + primary-power when primaries are declared
  const std::size_t tests = c.metrics.size() + 1 + (c.gate.empty() ? 0 : 1) +
                            (c.new_warnings ? 1 : 0) + (c.retries.reason.empty() ? 0 : 1) +
                            (c.settings.primary.empty() ? 0 : 1);
  const std::size_t failures = c.primary_regressions() + (c.kernel_failure_regressions() > 0) +
                               (c.gate_regressions() > 0) + c.retry_regressions() +
                               (c.new_warnings_in_touched_files() > 0 ? 1 : 0);
  const std::size_t errors = c.budget.no_primary_reachable ? 1 : 0;
  const std::size_t skipped = c.count(Verdict::inconclusive);
  const std::string suite = (c.spec_name.empty() ? std::string("isolab") : c.spec_name) + ": " +
                            c.variant_a + " vs " + c.variant_b;
  std::ostringstream o;
  o << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  o << "<testsuites name=\"isolab compare\" tests=\"" << tests << "\" failures=\"" << failures
    << "\" errors=\"" << errors << "\" time=\"0\">\n";
  o << "  <testsuite name=\"" << xml_escape(suite) << "\" tests=\"" << tests << "\" failures=\""
    << failures << "\" errors=\"" << errors << "\" skipped=\"" << skipped << "\" time=\"0\">\n";
  junit_properties(c, o);
  for (const auto& r : c.metrics) junit_metric(r, classname, o);
  junit_outcomes(c, classname, o);
  junit_build_warnings(c, classname, o);
  o << "    <system-out>" << xml_escape(render_text(c, {.all_rows = true})) << "</system-out>\n";
  o << "  </testsuite>\n</testsuites>\n";
  return o.str();
}

}  // namespace isolab

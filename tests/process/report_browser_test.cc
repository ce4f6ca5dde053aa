// The HTML report of a real run (tests/data/runs/planted-regression-kqin12) opened in headless
// Chromium: every plot rendered its marks (counted by the page's check script after load and
// read back with --dump-dom), no script error, no network request, and hostile strings from the
// guest do not run. Network requests are read from Chromium's net log (--log-net-log): a
// request of the page is one whose network isolation key is the file:// origin (Chromium's own
// background requests have other keys); a page with an <img> on the network is the control
// that this detection works.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>
#include <vector>

#include "base/files.h"
#include "report_hostile.h"
#include "results/result_file.h"
#include "sys/process.h"

namespace isolab {
namespace {

ProcessResult run(const std::vector<std::string>& argv, int timeout_s = 120) {
  ProcessSpec spec;
  spec.argv = argv;
  spec.timeout = std::chrono::seconds(timeout_s);
  return make_real_runner()->run(spec);
}

struct Browser {
  std::string dom;
  std::vector<std::string> page_requests;  // URLs the page asked the network for
};

// The page's own requests in a Chromium net log (see the top of this file). The log of a
// browser that exited may lack its closing "]}".
std::vector<std::string> page_requests(const fs::path& netlog) {
  std::string text = read_file(netlog);
  nlohmann::json log = nlohmann::json::parse(text, nullptr, false);
  if (log.is_discarded()) {
    while (!text.empty() &&
           (std::isspace(static_cast<unsigned char>(text.back())) || text.back() == ','))
      text.pop_back();
    log = nlohmann::json::parse(text + "]}");
  }
  const int start_job = log["constants"]["logEventTypes"]["URL_REQUEST_START_JOB"].get<int>();
  std::vector<std::string> out;
  for (const auto& e : log["events"]) {
    if (e.value("type", -1) != start_job || !e.contains("params")) continue;
    const auto& p = e["params"];
    if (p.value("network_isolation_key", "").rfind("file://", 0) == 0 ||
        p.value("initiator", "") == "null")
      out.push_back(p.value("url", ""));
  }
  return out;
}

// Opens `page` in headless Chromium with the network pointed at a closed port, after load
// scripts ran; `mode` is "--dump-dom" or "--screenshot=FILE"; `window` is WIDTH,HEIGHT.
Browser open_in_chromium(const fs::path& page, const fs::path& work, const std::string& mode,
                         const std::string& window = "1280,2400") {
  const fs::path netlog = work / "netlog.json";
  fs::remove_all(work / "profile");
  ProcessResult p = run({"chromium", "--headless", "--no-sandbox", "--disable-gpu",
                         "--user-data-dir=" + (work / "profile").string(), "--no-first-run",
                         "--disable-background-networking", "--disable-component-update",
                         "--proxy-server=127.0.0.1:9", "--log-net-log=" + netlog.string(),
                         "--window-size=" + window, "--virtual-time-budget=10000", mode,
                         "file://" + fs::absolute(page).string()});
  EXPECT_TRUE(p.ok()) << p.describe() << "\n" << p.err.substr(0, 2000);
  return {p.out, page_requests(netlog)};
}

// Attributes of every <svg data-plot=...> opening tag, and of <body>.
using Attrs = std::map<std::string, std::string>;
Attrs attrs_of(const std::string& tag) {
  Attrs a;
  static const std::regex re("([a-z-]+)=\"([^\"]*)\"");
  for (std::sregex_iterator it(tag.begin(), tag.end(), re), end; it != end; ++it)
    a[(*it)[1]] = (*it)[2];
  return a;
}
std::map<std::string, Attrs> plots_of(const std::string& dom) {
  std::map<std::string, Attrs> out;
  for (auto at = dom.find("<svg "); at != std::string::npos; at = dom.find("<svg ", at + 1)) {
    Attrs a = attrs_of(dom.substr(at, dom.find('>', at) - at));
    out[a["data-plot"]] = a;
  }
  return out;
}
Attrs body_of(const std::string& dom) {
  const auto at = dom.find("<body");
  return attrs_of(dom.substr(at, dom.find('>', at) - at));
}

// What each plot must draw, from `isolab compare --format json` and result.json (plots.h).
std::map<std::string, long> expected_marks(const nlohmann::json& cmp, const nlohmann::json& run) {
  std::map<std::string, long> want;
  auto present = [](const nlohmann::json& j) { return j.is_null() ? 0L : 1L; };
  for (const auto& m : cmp["metrics"]) {
    const long na = m["a"]["n"], nb = m["b"]["n"];
    const long ci =
        m["kind"] == "count" ? present(m["count"]["diff_ci_low"]) : present(m["ci_low_pct"]);
    // A per-CPU row ("x[cpu5]") has no samples of its own to draw: its centres and interval.
    const long points = m["derived"].get<bool>() ? 0 : na + nb;
    want["metric:" + m["name"].get<std::string>()] = points + (na > 0) + (nb > 0) + ci;
  }
  for (const auto& t : cmp["tails"]) {
    long n = 0;
    for (const char* side : {"a", "b"}) {
      const auto& s = t[side];
      n += (s["samples"] > 0) + (s["overflows"] > 0) + present(s["p99"]) + present(s["p99_9"]) +
           present(s["max"]);
    }
    want["histogram:" + t["histogram"].get<std::string>()] = n;
  }
  for (const auto& c : run["cells"]) {
    if (c["status"] != "ok" || c["warmup"] == true) continue;
    for (const auto& [wl, noise] : c["noise"].items()) {
      want["noise:" + wl] += 8 * static_cast<long>(noise["cpus"].size());  // 8 causes per CPU
    }
  }
  for (const auto& [side, id] : {std::pair{"A", "vanilla-r0"}, std::pair{"B", "planted-r0"}}) {
    for (const auto& c : run["cells"]) {
      if (c["id"] != id) continue;
      long n = 0;
      for (const auto& cpu : c["noise"]["vmstat-idle"]["cpus"])
        n += cpu["causes"]["interruptions"]["count"].get<long>();
      want[std::string("timeline:") + side + ":" + id + ":vmstat-idle"] = n;
    }
  }
  return want;
}

class ReportBrowser : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    work_ = fs::temp_directory_path() / ("isolab-report-browser-" + std::to_string(::getpid()));
    fs::remove_all(work_);
    fs::create_directories(work_);
  }
  static void TearDownTestSuite() { fs::remove_all(work_); }
  static fs::path work_;
};
fs::path ReportBrowser::work_;

TEST_F(ReportBrowser, EveryPlotRendersItsMarksWithoutErrorOrNetwork) {
  const fs::path page = work_ / "report.html";
  const std::string primary = "--primary=" + kReportPrimary.at(0);
  ProcessResult r =
      run({ISOLAB_BINARY, "report", kReportRun.string(), "-o", page.string(), primary});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // compare --format html writes the same page, with compare's exit status (1: the primary
  // metric regressed).
  ProcessResult c =
      run({ISOLAB_BINARY, "compare", kReportRun.string(), "--format", "html", primary});
  EXPECT_EQ(c.exit_code, 1) << c.err;
  EXPECT_EQ(c.out, read_file(page));
  ProcessResult j =
      run({ISOLAB_BINARY, "compare", kReportRun.string(), "--format", "json", primary});
  ASSERT_EQ(j.exit_code, 1) << j.err;

  const Browser b = open_in_chromium(page, work_, "--dump-dom");
  const Attrs body = body_of(b.dom);
  EXPECT_EQ(body.at("data-checked"), "yes");  // the check script ran to its end
  EXPECT_EQ(body.at("data-errors"), "0") << body.at("data-error-text");
  const auto want = expected_marks(nlohmann::json::parse(j.out), load_result(kReportRun));
  const auto plots = plots_of(b.dom);
  EXPECT_EQ(body.at("data-plots"), std::to_string(plots.size()));
  EXPECT_EQ(plots.size(), want.size());
  for (const auto& [plot, n] : want) {
    SCOPED_TRACE(plot);
    ASSERT_TRUE(plots.count(plot));
    EXPECT_EQ(plots.at(plot).at("data-marks"), std::to_string(n));
    EXPECT_EQ(plots.at(plot).at("data-rendered"), std::to_string(n));
  }
  EXPECT_GT(want.at("timeline:B:planted-r0:vmstat-idle"), 500);
  EXPECT_TRUE(b.page_requests.empty()) << b.page_requests.front();
}

// The answer first: in a laptop's window (1280x800) the page opens on the verdict and the
// primary metric with its per-boot points, before any other row.
TEST_F(ReportBrowser, FirstScreenShowsTheVerdictAndThePrimariesEveryBoot) {
  const fs::path page = work_ / "first-screen.html";
  const std::string primary = "--primary=" + kReportPrimary.at(0);
  ASSERT_EQ(
      run({ISOLAB_BINARY, "report", kReportRun.string(), "-o", page.string(), primary}).exit_code,
      0);
  const std::string metric = kReportPrimary.at(0).substr(0, kReportPrimary.at(0).find(':'));
  const Browser b = open_in_chromium(page, work_, "--dump-dom", "1280,800");
  const Attrs body = body_of(b.dom);
  EXPECT_EQ(body.at("data-errors"), "0") << body.at("data-error-text");
  EXPECT_EQ(body.at("data-first-screen"), "verdict,primary:" + metric);
  const std::string html = read_file(page);
  const auto answer = html.find("data-answer=\"verdict\"");
  const auto first_plot = html.find("data-plot=\"metric:");
  ASSERT_NE(first_plot, std::string::npos);
  EXPECT_LT(answer, first_plot);
  EXPECT_EQ(html.find("data-plot=\"metric:" + metric + "\""), first_plot);
}

TEST_F(ReportBrowser, ScreenshotIsAPng) {
  const fs::path page = work_ / "shot.html", png = work_ / "shot.png";
  ASSERT_EQ(run({ISOLAB_BINARY, "report", kReportRun.string(), "-o", page.string()}).exit_code, 0);
  const Browser b = open_in_chromium(page, work_, "--screenshot=" + png.string());
  const std::string bytes = read_file(png);
  ASSERT_GT(bytes.size(), 20000u);
  EXPECT_EQ(bytes.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8));
  EXPECT_TRUE(b.page_requests.empty());
}

// The control: the same detection sees the request of a page that does fetch something.
TEST_F(ReportBrowser, NetLogSeesARequestOfAPageThatMakesOne) {
  const fs::path page = work_ / "fetches.html";
  write_file_atomic(page, "<!DOCTYPE html><body><img src=\"http://192.0.2.1/x.png\"></body>");
  const Browser b = open_in_chromium(page, work_, "--dump-dom");
  ASSERT_EQ(b.page_requests.size(), 1u);
  EXPECT_EQ(b.page_requests[0], "http://192.0.2.1/x.png");
}

TEST_F(ReportBrowser, HostileGuestStringsDoNotRun) {
  const fs::path dir = work_ / "hostile-run", page = work_ / "hostile.html";
  ASSERT_NO_FATAL_FAILURE(make_hostile(dir));
  ProcessResult r = run({ISOLAB_BINARY, "report", dir.string(), "-o", page.string(),
                         "--primary=" + kReportPrimary.at(0)});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Browser b = open_in_chromium(page, work_, "--dump-dom");
  const Attrs body = body_of(b.dom);
  EXPECT_EQ(body.at("data-checked"), "yes");
  EXPECT_EQ(body.at("data-errors"), "0") << body.at("data-error-text");
  const auto title_at = b.dom.find("<title>");
  const std::string title = b.dom.substr(title_at, b.dom.find("</title>") - title_at);
  // Had a payload run, document.title would be "PWNED"; it is the spec name, shown as text.
  EXPECT_EQ(title.rfind("<title>isolab report: x&lt;script&gt;document.title=", 0), 0u) << title;
  EXPECT_EQ(b.dom.find("<img"), std::string::npos);
  EXPECT_TRUE(b.page_requests.empty());
}

}  // namespace
}  // namespace isolab

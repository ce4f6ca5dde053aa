// A small SVG writer for the HTML report: plots are inline <svg> elements written by isolab
// (no script library, nothing fetched when the page is opened).
//
// Every data mark (a point, bar, tick or heatmap square) carries the attribute data-mark and a
// <title> child (the browser's tooltip) that names the cell(s) the number came from; the page's
// check script (html.cc) counts the rendered data-mark elements per plot. All text passes
// through xml_escape (base/xml_text.h): strings from guests and specs are untrusted.
#pragma once

#include <sstream>
#include <string>
#include <vector>

namespace isolab::svg {

// Maps [d0, d1] (data) to [r0, r1] (pixels), linearly or on log10 (then d0, d1 > 0 and values
// <= 0 map to r0). A degenerate domain (d0 == d1) maps everything to the middle of the range.
struct Scale {
  double d0 = 0, d1 = 1, r0 = 0, r1 = 1;
  bool log = false;
  double operator()(double v) const;
};

// About n round tick values covering [lo, hi] (1, 2, 5 x 10^k steps); for a log scale the powers
// of ten in [lo, hi] (at least lo and hi when none falls inside).
std::vector<double> ticks(double lo, double hi, int n, bool log);

// A number for an axis or a tooltip: 4 significant digits below 1000, whole numbers from 1000,
// an exponent below 1e-3 and from 1e7 ("0.0123", "1.04", "15000", "2.5e+08").
std::string axis_num(double v);

class Svg {
 public:
  // plot: the plot's id (data-plot attribute, used by tests); label: aria-label.
  Svg(double width, double height, const std::string& plot, const std::string& label);

  // Data marks (data-mark, with a <title>); fill/stroke are CSS colours or class names
  // (cls is added as class="...").
  // fill: a CSS colour for the fill attribute ("" to leave it to the class).
  void rect_mark(double x, double y, double w, double h, const std::string& cls,
                 const std::string& title, const std::string& fill = "");
  void circle_mark(double cx, double cy, double r, const std::string& cls,
                   const std::string& title);
  void line_mark(double x1, double y1, double x2, double y2, const std::string& cls,
                 const std::string& title);
  void path_mark(const std::string& d, const std::string& cls, const std::string& title);

  // Decoration (no data-mark).
  void line(double x1, double y1, double x2, double y2, const std::string& cls);
  void rect(double x, double y, double w, double h, const std::string& cls);
  // anchor: "start" | "middle" | "end".
  void text(double x, double y, const std::string& s, const std::string& cls,
            const std::string& anchor = "start");
  // A horizontal axis at y with ticks of scale `s` and a label below; vertical likewise at x.
  void x_axis(const Scale& s, double y, const std::vector<double>& ticks, const std::string& label);
  void y_axis(const Scale& s, double x, const std::vector<double>& ticks, const std::string& label);

  std::string str() const;  // the complete <svg> element

 private:
  double width_, height_;
  std::string plot_, label_;
  std::ostringstream body_;
};

}  // namespace isolab::svg

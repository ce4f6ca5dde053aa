#include "report/svg.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "base/xml_text.h"

namespace isolab::svg {

namespace {

std::string f(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", std::isfinite(v) ? v : 0.0);
  return buf;
}

std::string title_el(const std::string& t) { return "<title>" + xml_escape(t) + "</title>"; }

std::string cls_attr(const std::string& cls) {
  return cls.empty() ? std::string() : " class=\"" + xml_escape(cls) + "\"";
}

}  // namespace

double Scale::operator()(double v) const {
  double a = d0, b = d1, x = v;
  if (log) {
    if (a <= 0 || b <= 0) return r0;
    if (x <= 0) return r0;
    a = std::log10(a), b = std::log10(b), x = std::log10(x);
  }
  if (a == b) return (r0 + r1) / 2;
  return r0 + (x - a) / (b - a) * (r1 - r0);
}

std::vector<double> ticks(double lo, double hi, int n, bool log) {
  std::vector<double> t;
  if (!(hi >= lo) || !std::isfinite(lo) || !std::isfinite(hi)) return t;
  if (log) {
    if (lo <= 0) lo = 1;
    double p = std::pow(10, std::ceil(std::log10(lo) - 1e-9));
    while (p <= hi * (1 + 1e-9)) {  // a while, not a for: no floating-point loop counter
      t.push_back(p);
      p *= 10;
    }
    if (t.empty()) t = {lo, hi};
    return t;
  }
  if (lo == hi) return {lo};
  const double raw = (hi - lo) / std::max(1, n);
  const double mag = std::pow(10, std::floor(std::log10(raw)));
  double step = mag;
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    step = m * mag;
    if (step >= raw) break;
  }
  double v = std::ceil(lo / step - 1e-9) * step;
  while (v <= hi + step * 1e-9) {
    t.push_back(std::abs(v) < step * 1e-9 ? 0 : v);
    v += step;
  }
  return t;
}

std::string axis_num(double v) {
  if (!std::isfinite(v)) return std::isnan(v) ? "n/a" : (v > 0 ? "inf" : "-inf");
  char buf[32];
  const double a = std::abs(v);
  if (a != 0 && (a < 1e-3 || a >= 1e7)) {
    std::snprintf(buf, sizeof buf, "%.3g", v);
  } else if (a >= 1000) {
    std::snprintf(buf, sizeof buf, "%.0f", v);
  } else {
    std::snprintf(buf, sizeof buf, "%.4g", v);
  }
  return buf;
}

Svg::Svg(double width, double height, const std::string& plot, const std::string& label)
    : width_(width), height_(height), plot_(plot), label_(label) {}

void Svg::rect_mark(double x, double y, double w, double h, const std::string& cls,
                    const std::string& title, const std::string& fill) {
  body_ << "<rect data-mark=\"\"" << cls_attr(cls)
        << (fill.empty() ? std::string() : " fill=\"" + xml_escape(fill) + "\"") << " x=\"" << f(x)
        << "\" y=\"" << f(y) << "\" width=\"" << f(std::max(w, 0.0)) << "\" height=\""
        << f(std::max(h, 0.0)) << "\">" << title_el(title) << "</rect>\n";
}

void Svg::circle_mark(double cx, double cy, double r, const std::string& cls,
                      const std::string& title) {
  body_ << "<circle data-mark=\"\"" << cls_attr(cls) << " cx=\"" << f(cx) << "\" cy=\"" << f(cy)
        << "\" r=\"" << f(r) << "\">" << title_el(title) << "</circle>\n";
}

void Svg::line_mark(double x1, double y1, double x2, double y2, const std::string& cls,
                    const std::string& title) {
  body_ << "<line data-mark=\"\"" << cls_attr(cls) << " x1=\"" << f(x1) << "\" y1=\"" << f(y1)
        << "\" x2=\"" << f(x2) << "\" y2=\"" << f(y2) << "\">" << title_el(title) << "</line>\n";
}

void Svg::path_mark(const std::string& d, const std::string& cls, const std::string& title) {
  body_ << "<path data-mark=\"\"" << cls_attr(cls) << " d=\"" << xml_escape(d) << "\">"
        << title_el(title) << "</path>\n";
}

void Svg::line(double x1, double y1, double x2, double y2, const std::string& cls) {
  body_ << "<line" << cls_attr(cls) << " x1=\"" << f(x1) << "\" y1=\"" << f(y1) << "\" x2=\""
        << f(x2) << "\" y2=\"" << f(y2) << "\"/>\n";
}

void Svg::rect(double x, double y, double w, double h, const std::string& cls) {
  body_ << "<rect" << cls_attr(cls) << " x=\"" << f(x) << "\" y=\"" << f(y) << "\" width=\""
        << f(std::max(w, 0.0)) << "\" height=\"" << f(std::max(h, 0.0)) << "\"/>\n";
}

void Svg::text(double x, double y, const std::string& s, const std::string& cls,
               const std::string& anchor) {
  body_ << "<text" << cls_attr(cls) << " x=\"" << f(x) << "\" y=\"" << f(y) << "\" text-anchor=\""
        << xml_escape(anchor) << "\">" << xml_escape(s) << "</text>\n";
}

void Svg::x_axis(const Scale& s, double y, const std::vector<double>& tv,
                 const std::string& label) {
  line(std::min(s.r0, s.r1), y, std::max(s.r0, s.r1), y, "axis");
  for (double t : tv) {
    line(s(t), y, s(t), y + 4, "axis");
    text(s(t), y + 15, axis_num(t), "tick", "middle");
  }
  text((s.r0 + s.r1) / 2, y + 30, label, "axis-label", "middle");
}

void Svg::y_axis(const Scale& s, double x, const std::vector<double>& tv,
                 const std::string& label) {
  line(x, std::min(s.r0, s.r1), x, std::max(s.r0, s.r1), "axis");
  for (double t : tv) {
    line(x - 4, s(t), x, s(t), "axis");
    text(x - 6, s(t) + 4, axis_num(t), "tick", "end");
  }
  body_ << "<text class=\"axis-label\" text-anchor=\"middle\" transform=\"translate(" << f(x - 45)
        << "," << f((s.r0 + s.r1) / 2) << ") rotate(-90)\">" << xml_escape(label) << "</text>\n";
}

std::string Svg::str() const {
  std::ostringstream o;
  o << "<svg role=\"img\" data-plot=\"" << xml_escape(plot_) << "\" aria-label=\""
    << xml_escape(label_) << "\" width=\"" << f(width_) << "\" height=\"" << f(height_)
    << "\" viewBox=\"0 0 " << f(width_) << " " << f(height_) << "\">\n"
    << body_.str() << "</svg>\n";
  return o.str();
}

}  // namespace isolab::svg

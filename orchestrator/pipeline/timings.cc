#include "pipeline/timings.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <optional>
#include <sstream>

using nlohmann::json;

namespace isolab {

namespace {

// A guest uptime: a finite, non-negative decimal number of at most 20 characters.
std::optional<double> uptime_value(const std::string& text) {
  if (text.empty() || text.size() > 20) return std::nullopt;
  for (char c : text)
    if (!(std::isdigit(static_cast<unsigned char>(c)) || c == '.')) return std::nullopt;
  try {
    const double v = std::stod(text);
    return std::isfinite(v) ? std::optional<double>(v) : std::nullopt;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

// The two uptimes of a record "<a> <b>" or "<label-a> <a>\n<label-b> <b>" (labels given).
std::optional<std::pair<double, double>> two_uptimes(const std::string& data,
                                                     const char* label_a = nullptr,
                                                     const char* label_b = nullptr) {
  std::istringstream in(data);
  std::string la, a, lb, b;
  if (label_a ? !(in >> la >> a >> lb >> b) || la != label_a || lb != label_b : !(in >> a >> b))
    return std::nullopt;
  std::string extra;
  if (in >> extra) return std::nullopt;
  const auto va = uptime_value(a), vb = uptime_value(b);
  if (!va || !vb || *vb < *va) return std::nullopt;
  return std::make_pair(*va, *vb);
}

// The guest's phases, or the reason they cannot be had.
std::string add_guest_phases(json& out, const BootPhaseInput& in) {
  const ChannelRecord* tl = in.channel ? in.channel->find("timeline") : nullptr;
  if (!tl) return "the guest sent no timeline record";
  const auto life = two_uptimes(tl->data, "init", "finish");
  if (!life) return "the guest's timeline record is not two increasing uptimes";
  if (life->second > in.qemu_s + 1)
    return "the guest's timeline ends after QEMU did (" + std::to_string(life->second) + " s)";
  double steps = 0, first_start = life->second;
  for (const auto& name : in.steps) {
    const ChannelRecord* w = in.channel->find(name + ".window");
    if (!w) continue;
    const auto win = two_uptimes(w->data);
    if (!win || win->first < life->first || win->second > life->second)
      return "step " + name + "'s window is not inside the guest's timeline";
    steps += win->second - win->first;
    first_start = std::min(first_start, win->first);
  }
  const double guest = life->second - life->first;
  const double setup = first_start - life->first;
  if (steps + setup > guest + 1e-6) return "the steps' windows overlap";
  out["kernel_boot"] = life->first;
  out["setup"] = setup;
  out["steps"] = steps;
  out["collection"] = guest - setup - steps;
  out["firmware_poweroff"] = std::max(0.0, in.qemu_s - life->second);
  return "";
}

// The phases of the boots table, in the order they are printed.
const std::vector<std::pair<const char*, const char*>>& phase_labels() {
  static const std::vector<std::pair<const char*, const char*>> labels = {
      {"image", "image"},
      {"firmware_poweroff", "firmware+poweroff"},
      {"kernel_boot", "kernel boot"},
      {"setup", "setup+gate"},
      {"steps", "steps"},
      {"collection", "collection"},
      {"host_collect", "host"}};
  return labels;
}

double median_of(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

std::string fixed1(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

}  // namespace

json boot_phases(const BootPhaseInput& in) {
  json out = {{"image", in.image_s}, {"qemu", in.qemu_s}, {"host_collect", in.host_s}};
  if (std::string why = add_guest_phases(out, in); !why.empty()) {
    for (const char* k : {"kernel_boot", "setup", "steps", "collection", "firmware_poweroff"})
      out.erase(k);
    out["note"] = why;
  }
  return out;
}

json timing_stage(const std::string& name, double seconds,
                  const std::vector<std::pair<std::string, double>>& parts) {
  json s = {{"stage", name}, {"seconds", seconds}};
  if (!parts.empty()) {
    s["parts"] = json::array();
    for (const auto& [part, sec] : parts) s["parts"].push_back({{"stage", part}, {"seconds", sec}});
  }
  return s;
}

json run_timings(const json& stages, const std::vector<results::CellTime>& cells, double total_s) {
  std::map<std::string, std::vector<double>> by_phase;
  double wall = 0;
  for (const results::CellTime& c : cells) {
    const auto phase = [&c](const char* name) {
      const auto it = c.phases.find(name);
      return it == c.phases.end() ? 0.0 : it->second;
    };
    wall += c.phases.count("qemu") ? phase("image") + phase("qemu") + phase("host_collect")
                                   : c.wall_seconds;
    for (const auto& [name, label] : phase_labels())
      if (c.phases.count(name)) by_phase[name].push_back(phase(name));
  }
  const std::size_t count = cells.size();
  json median = json::object(), sum = json::object();
  for (const auto& [phase, values] : by_phase) {
    median[phase] = median_of(values);
    double s = 0;
    for (double v : values) s += v;
    sum[phase] = s;
  }
  return {{"stages", stages},
          {"boots", {{"count", count}, {"seconds", wall}, {"median", median}, {"sum", sum}}},
          {"total_s", total_s}};
}

std::string timings_table(const results::RecordedTimings& timings) {
  if (timings.stages.empty()) return "";
  std::ostringstream out;
  out << "Timings (wall seconds):\n";
  auto row = [&out](const std::string& label, double s, const std::string& detail) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "  %-28s %8.1f", label.c_str(), s);
    out << buf << (detail.empty() ? "" : "  " + detail) << "\n";
  };
  for (const results::TimingStage& s : timings.stages) {
    std::string detail;
    for (const auto& [part, seconds] : s.parts)
      detail += (detail.empty() ? "" : ", ") + part + " " + fixed1(seconds);
    row(s.stage, s.seconds, detail);
  }
  const std::size_t n = timings.boot_count;
  if (n > 0) {
    std::string detail;
    for (const auto& [phase, label] : phase_labels())
      if (const auto it = timings.boot_median.find(phase); it != timings.boot_median.end())
        detail += (detail.empty() ? "median per boot: " : ", ") + std::string(label) + " " +
                  fixed1(it->second);
    row(std::to_string(n) + (n == 1 ? " boot" : " boots"), timings.boot_seconds, detail);
  }
  row("total", timings.total_s, "");
  return out.str();
}

}  // namespace isolab

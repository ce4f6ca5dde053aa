#include "pipeline/host_sample.h"

#include <charconv>
#include <sstream>
#include <vector>

#include "base/files.h"
#include "base/utc_time.h"

namespace isolab {

namespace {

std::string read_or_empty(const std::filesystem::path& p) {
  try {
    return read_file(p, 1u << 20);
  } catch (const std::exception&) {
    return "";
  }
}

template <class T>
nlohmann::json opt_json(const std::optional<T>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json();
}

}  // namespace

std::optional<std::array<double, 3>> parse_loadavg(std::string_view text) {
  std::istringstream in{std::string(text)};
  std::array<double, 3> a{};
  if (!(in >> a[0] >> a[1] >> a[2])) return std::nullopt;
  return a;
}

std::optional<double> parse_cpu_pressure_some_avg10(std::string_view text) {
  std::istringstream in{std::string(text)};
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("some ", 0) != 0) continue;
    const auto at = line.find("avg10=");
    if (at == std::string::npos) return std::nullopt;
    try {
      return std::stod(line.substr(at + 6));
    } catch (const std::exception&) {
      return std::nullopt;
    }
  }
  return std::nullopt;
}

std::optional<std::uint64_t> parse_proc_stat_steal(std::string_view text) {
  std::istringstream in{std::string(text)};
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("cpu ", 0) != 0) continue;
    std::istringstream fields(line.substr(4));
    std::vector<std::uint64_t> v;
    std::uint64_t x = 0;
    while (fields >> x) v.push_back(x);
    if (v.size() < 8) return std::nullopt;
    return v[7];
  }
  return std::nullopt;
}

HostLoadSample sample_host_load(const std::filesystem::path& proc_root) {
  HostLoadSample s;
  s.at = utc_now();
  s.loadavg = parse_loadavg(read_or_empty(proc_root / "loadavg"));
  s.cpu_pressure_some_avg10 =
      parse_cpu_pressure_some_avg10(read_or_empty(proc_root / "pressure" / "cpu"));
  s.steal_ticks = parse_proc_stat_steal(read_or_empty(proc_root / "stat"));
  return s;
}

nlohmann::json host_load_json(const HostLoadSample& start, const HostLoadSample& end,
                              long user_hz) {
  nlohmann::json steal;
  if (start.steal_ticks && end.steal_ticks && *end.steal_ticks >= *start.steal_ticks && user_hz > 0)
    steal = double(*end.steal_ticks - *start.steal_ticks) / double(user_hz);
  return {{"loadavg_start", opt_json(start.loadavg)},
          {"loadavg_end", opt_json(end.loadavg)},
          {"cpu_pressure_some_avg10_start", opt_json(start.cpu_pressure_some_avg10)},
          {"cpu_pressure_some_avg10_end", opt_json(end.cpu_pressure_some_avg10)},
          {"steal_s", steal},
          {"started_at", start.at},
          {"ended_at", end.at}};
}

}  // namespace isolab

// The load of the machine that boots the guests, as /proc shows it, sampled at a cell's start
// and end and recorded in result.json cells[].host_load, so that compare can tell whether A's
// and B's boots ran under like load (compare/host_load.h).
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

namespace isolab {

struct HostLoadSample {
  std::optional<std::array<double, 3>> loadavg;  // /proc/loadavg: 1, 5 and 15 minute averages
  // /proc/pressure/cpu "some avg10=": percent of the last 10 s in which some runnable task
  // waited for a CPU (PSI; absent on kernels without CONFIG_PSI or with psi=0).
  std::optional<double> cpu_pressure_some_avg10;
  // /proc/stat aggregate "cpu" line, 8th value: time stolen by a hypervisor from this machine,
  // in USER_HZ ticks (absent on kernels older than 2.6.11).
  std::optional<std::uint64_t> steal_ticks;
  std::string at;  // UTC, ISO 8601
};

// The three load averages of /proc/loadavg ("0.52 0.58 0.59 1/467 1234"); nullopt when the
// text does not start with three numbers.
std::optional<std::array<double, 3>> parse_loadavg(std::string_view text);

// "some avg10=" of /proc/pressure/cpu ("some avg10=1.53 avg60=... total=..."); nullopt when
// there is no such field.
std::optional<double> parse_cpu_pressure_some_avg10(std::string_view text);

// The steal value (8th number) of the aggregate "cpu " line of /proc/stat; nullopt when the
// line is missing or has fewer than 8 numbers.
std::optional<std::uint64_t> parse_proc_stat_steal(std::string_view text);

// Reads proc_root/loadavg, proc_root/pressure/cpu and proc_root/stat now; a file that cannot
// be read leaves its field empty. Never throws.
HostLoadSample sample_host_load(const std::filesystem::path& proc_root = "/proc");

// cells[].host_load: {"loadavg_start": [1, 5, 15 min] | null, "loadavg_end",
//  "cpu_pressure_some_avg10_start": percent | null, "cpu_pressure_some_avg10_end",
//  "steal_s": seconds stolen over the cell (end - start ticks / user_hz) | null,
//  "started_at", "ended_at"}.
nlohmann::json host_load_json(const HostLoadSample& start, const HostLoadSample& end, long user_hz);

}  // namespace isolab

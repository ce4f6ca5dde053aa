// The open-ended records of a cell (the fields results/result.h keeps in CellRecord::rest), read
// for compare and report: the isolation gate's rows, latency traces, the libvirt host, tool
// versions, instruction counts and their profile, earlier attempts, host load, the noise
// details, and what the report shows of the guest. Every reader here is lenient and never throws
// unless it says so: a record or entry of another shape than its writer's reads as absent
// (docs/RESULT_SCHEMA.md names each writer).
#pragma once

#include <cstddef>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "results/result.h"

namespace isolab::results {

// One row of cells[].gate.rows, one check of the isolation gate (gate/gate.h).
struct GateRow {
  // As written, null when absent. The gate writes check and detail as strings and expected and
  // effective as strings, numbers or null; a reader shows or skips other types its own way.
  nlohmann::json check, expected, effective, detail;
  std::optional<bool> pass;     // when a boolean
  std::optional<bool> warning;  // when a boolean
};
// One per element of cells[].gate.rows (an element that is no object has every field absent);
// empty when the cell has no gate object or its rows are no array.
std::vector<GateRow> gate_rows(const CellRecord& c);

// cells[].latency_traces.<workload>: the longest latency a step's tracer caught.
struct LatencyTrace {
  std::string workload;
  std::string tracer;         // "" when absent or no string, as task and file
  double max_latency_us = 0;  // microseconds
  std::string task;
  std::optional<int> cpu;                  // when an integer
  std::vector<std::string> switch_frames;  // the string entries ("madvise_pageout+0x1a/0x40")
  std::string file;                        // run-dir relative
};
// The traces with a numeric max_latency_us, by workload name; empty when latency_traces is no
// object.
std::vector<LatencyTrace> latency_traces(const CellRecord& c);

// cells[].host: the libvirt host that ran the cell (vm/libvirt_host.h to_json(HostFingerprint)).
// Each string is "" when absent or no string.
struct CellHost {
  std::string uri, hostname, cpu_model, cpu_vendor, fingerprint_sha256, libvirt_version, hypervisor,
      hypervisor_version;
  std::optional<nlohmann::json> cpus;  // "cpus" as written; nullopt when absent

  // The host's CPUs: 0 when "cpus" is absent, else its value as an int. Throws
  // nlohmann::json::type_error when it is no number or boolean (as json::value does).
  int cpu_count() const;
};
// The cell's host; nullopt when cells[].host is no object.
std::optional<CellHost> cell_host(const CellRecord& c);

// One entry of cells[].tool_versions: {"<workload>": {"<tool>": "<version>"}}.
struct ToolVersion {
  std::string workload, tool, version;
};
// Every entry whose version is a string, in workload then tool order; entries of other shapes
// are skipped.
std::vector<ToolVersion> tool_versions(const CellRecord& c);

// Why the cell measured no instruction counts, when cells[].insn_counts is an object whose
// "source" is null or absent (a KVM boot without a guest PMU): its "reason", or "no instruction
// counts recorded" when it has none. nullopt when counts were measured or there is no object.
std::optional<std::string> insn_counts_missing(const CellRecord& c);

// One kernel function of an instruction-count profile list.
struct ProfileEntry {
  std::string function;
  double insns = 0;  // kernel instructions
};
// The profile of one workload step on one isolated CPU: its top functions, largest first as
// written (workload/insn_metrics.h).
struct ProfileList {
  std::string step;
  unsigned cpu = 0;
  std::vector<ProfileEntry> entries;  // the entries with a string function and numeric insns
};
// cells[].insn_counts.profile ({"<step>": {"<cpu>": [{"function", "insns"}]}}) in step then CPU
// key order; nullopt when there is no profile object. Steps that are no objects, CPU keys that
// do not start with a decimal number (read as sscanf's %u does) and lists that are no arrays are
// skipped.
std::optional<std::vector<ProfileList>> insn_profile(const CellRecord& c);

// The number of cells[].earlier_attempts (failed boots before the recorded one; 0 when it is no
// array).
std::size_t earlier_attempts(const CellRecord& c);

// One boot's host load (cells[].host_load, pipeline/host_sample.h), each measure the mean of its
// values at the boot's start and end, or the one of them that is a number.
struct CellHostLoad {
  std::string cell_id;
  std::optional<double> loadavg_1min;             // runnable + uninterruptible tasks
  std::optional<double> cpu_pressure_some_avg10;  // percent
  std::optional<double> steal_s;                  // seconds stolen over the boot
};
// The cell's host load; nullopt when cells[].host_load is no object. A measure whose values are
// null or no numbers is nullopt; cell_id is the cell's id ("" without one).
std::optional<CellHostLoad> cell_host_load(const CellRecord& c);

// One isolated CPU of cells[].noise.<workload>.cpus (workload/noise.h).
struct NoiseCpu {
  int cpu = 0;
  std::map<std::string, double> per_s;  // cause -> interruptions per second, numeric ones only
};
// The workloads of cells[].noise, in key order; empty when it is no object.
std::vector<std::string> noise_workloads(const CellRecord& c);
// The CPUs of cells[].noise.<workload>.cpus with an integer "cpu", in order; empty when any
// level is missing or of another type.
std::vector<NoiseCpu> noise_cpus(const CellRecord& c, const std::string& workload);

// What the report shows of a cell beyond its typed fields, each a scalar's text
// (results/lenient.h scalar_text).
struct CellNotes {
  std::string guest_cmdline;  // cells[].guest.cmdline: /proc/cmdline as the guest read it
  std::string guest_uname_r;  // cells[].guest.uname_r
  std::string gate_reason;    // cells[].gate_reason
  double wall_seconds = 0;    // cells[].wall_seconds, seconds; 0 when absent or no number
};
CellNotes cell_notes(const CellRecord& c);

}  // namespace isolab::results

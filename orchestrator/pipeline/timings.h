// Where a run's wall time went: the phases of each boot (result.json cells[].phases), the run's
// stages and their summary (result.json "timings"), and the table `isolab run` prints at its
// end. Shapes: docs/RESULT_SCHEMA.md. Every figure is wall seconds on the host's clock, except
// the guest's own phases, which come from its uptime (the guest clock follows the host's wall
// clock without -icount, so they are wall seconds too).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "guest/channel.h"
#include "results/run_facts.h"

namespace isolab {

// What a boot's phases are measured from.
struct BootPhaseInput {
  double image_s = 0;  // assembling the cell's initramfs on the host
  double qemu_s = 0;   // QEMU started to QEMU ended (VmOutcome::seconds)
  double host_s = 0;   // reading and classifying the cell's outputs after QEMU ended
  const ChannelContents* channel = nullptr;  // the guest's records (may be null)
  std::vector<std::string> steps;            // the plan's step names, in order
};

// The phases of one boot, in seconds:
//   {"image", "qemu", "host_collect"} always, and when the guest sent a well-formed "timeline"
//   record (guest/init_script.h: "init <uptime>\nfinish <uptime>\n") also
//   "kernel_boot"        the guest's uptime when /init started,
//   "setup"              /init to the first step's window (facts, the gate's busy window, sysctls),
//   "steps"              the sum of the steps' windows (their "<step>.window" records),
//   "collection"         the rest of the guest's time: reading traces and sending the records,
//   "firmware_poweroff"  QEMU's time outside the guest's uptime: start, firmware, loading kernel
//                        and initramfs, and the end after the last record (qemu - finish).
// Guest text is untrusted: a timeline or window that is not numbers, runs backwards, or does not
// fit inside qemu_s (with 1 s of slack) leaves the guest phases out and adds "note" saying why.
nlohmann::json boot_phases(const BootPhaseInput& in);

// A stage of the run as recorded in result.json "timings"."stages": {"stage": name, "seconds":
// s} and, for a kernel, "parts": [{"stage", "seconds"}] (KernelArtifact::stage_seconds) and
// "from_cache".
nlohmann::json timing_stage(const std::string& name, double seconds,
                            const std::vector<std::pair<std::string, double>>& parts = {});

// The run's "timings" object from its recorded stages and its cells' times
// (results/run_facts.h cell_times): {"stages": [...],
// "boots": {"count", "seconds" (per cell image + qemu + host_collect, or its wall_seconds
// without phases, summed), "median": {phase: s}, "sum": {phase: s}}, "total_s"}. Cells without
// "phases" (older results) count in "count" and "seconds" only. Retried boots (earlier_attempts)
// are not in cells[] and so not counted.
nlohmann::json run_timings(const nlohmann::json& stages,
                           const std::vector<results::CellTime>& cells, double total_s);

// The table `isolab run` prints at its end (one line per stage, then the boots' median
// phases), from the "timings" of a result.json (results/run_facts.h recorded_timings); "" when
// there are no stages.
std::string timings_table(const results::RecordedTimings& timings);

}  // namespace isolab

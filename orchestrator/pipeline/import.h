// `isolab import`: outputs captured on a real machine (a customer's cyclictest, stress-ng,
// trace or /proc/interrupts) made into a run directory with the result.json schema of
// `isolab run` (schema_version 1, docs/RESULT_SCHEMA.md), so that compare, report and history
// take it.
//
// Shape of the run: one variant named after --label; one cell per FILE ("<label>-r<k>", status
// "ok", or "invalid" when the file holds no sample; accelerator "bare-metal"), each FILE being one
// boot or one measurement; the raw FILEs are copied to cells/<cell>/. Metrics come from the parsers
// the guest path uses (parse/cyclictest.h, parse/stressng.h, parse/trace.h, gate/gate.h
// parse_proc_interrupts) and are named as the guest path names them, prefixed "<workload>."
// (--workload, default the tool's name), so that an import compares with a guest run of a workload
// of that name:
//   cyclictest   <wl>.latency_{min,avg,max}_us, latency_p99_us / p999_us (-h histogram)
//   stress-ng    <wl>.<stressor>.bogo_ops, bogo_ops_per_s_real, bogo_ops_per_s_usr_sys. Exit
//                status and summary lines (docs/sources.md [s3]; parse/stressng.h
//                check_stressng_run): a text FILE is stress-ng's log, and its
//                status lines count ("skipping stressor", "passed: 0", "process ... terminated
//                with an error", "No stress workers invoked", ...); the exit status, which no
//                FILE holds, is taken from --exit-status when given. A failed run, or a stressor
//                of "dispatching hogs:" that did not run, is an error "<file>: line N: ...";
//                stressors whose metrics are untrustworthy (exit status 7, or the log says so)
//                have their metrics marked "untrustworthy" (compare leaves them out).
//   trace        <wl>.noise.<cause>_per_s ... (parse/trace.h trace_noise())
//   interrupts   <wl>.noise.local_timer_per_s, ipi_reschedule_per_s, ipi_call_function_per_s,
//                irq_per_s: per CPU, the /proc/interrupts deltas between the two snapshots a
//                FILE holds, over --window-s (see interrupts_noise()).
//   oslat        <wl>.oslat_{min,avg,max}_us per CPU (parse/oslat.h), and per CPU the histogram
//                "<wl>[cpu<N>]" (its last bucket, which holds every longer gap, as overflows).
//                A run cut short is an error naming the line; a file without samples is
//                invalid.
//   rtla-osnoise <wl>.osnoise.* of `rtla osnoise top` text; rtla-timerlat <wl>.timerlat.* of
//                `rtla timerlat hist` text (parse/rtla.h). Output saying the tracer is missing
//                ("Tracer timerlat not found!") is an error, never "no noise"
//                (docs/sources.md [r2]).
// The accelerator (host, every cell, comparison_key) is "bare-metal" unless --host
// accelerator=kvm|tcg|bare-metal says where the outputs were captured (an oslat run in a TCG
// guest: its timings are then reported, not enforced, by budgets/judge.h); any other value is
// refused naming it.
// comparison_key: {"accelerator": "bare-metal", "cmdline" (--cmdline or ""), "vcpus" (host
// nproc or null), "memory_mib": null, "workloads_sha256", "host_fingerprint_sha256"}: unlike
// any guest run, so compare needs --force and lists the differences.
#pragma once

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "gate/gate.h"
#include "parse/metrics.h"
#include "results/result.h"

namespace isolab {

struct ImportOptions {
  std::string tool;                          // a key of import_tools()
  std::vector<std::filesystem::path> files;  // one cell each, in this order
  std::string label;                         // the variant and spec name, [A-Za-z0-9_.-]{1,40}
  std::string workload;                      // metric prefix; empty: the tool's name
  std::optional<double> window_s;  // interrupts: seconds between the snapshots (required);
                                   // trace: the measurement window (default: the trace's span)
  std::string cpus;     // trace/interrupts: CPU list to report (default: all seen); other tools:
                        // recorded only; a bad list is refused for every tool ("--cpus: ...")
  std::string cmdline;  // the machine's /proc/cmdline, for the comparison key
  std::string kernel_release;               // the machine's uname -r ("" : "unknown")
  std::map<std::string, std::string> host;  // host facts (cpu_model, host_kernel, nproc, ...)
  bool values_in_ns = false;                // cyclictest text printed with -N
  std::optional<int> exit_status;           // stress-ng: its exit status for every FILE, when
                                            // known (--exit-status); see check_stressng_run
};

// One FILE's measurement.
struct ImportedCell {
  Metrics metrics;                                       // prefixed "<workload>."
  nlohmann::json histograms = nlohmann::json::object();  // as cells[].histograms
  nlohmann::json noise;                                  // as cells[].noise.<wl>, or null
  std::vector<std::string> notes;
  // As WorkloadOutcome::tool_versions ({"stress-ng": "0.21.04"}), for cells[].tool_versions.<wl>.
  std::map<std::string, std::string> tool_versions;
  // Non-empty: the file parsed but measured nothing (every cyclictest thread had 0 cycles, or
  // its JSON return_code is not 0); the cell is recorded with status "invalid" and this reason,
  // not as an error.
  std::string invalid_reason;
};

// Parses the text of one FILE (named `file` in errors). Throws isolab::Error "<file>: line N:
// ..." (or "<file>: ...") when the text is not that tool's output or holds a line the parser
// does not recognise.
using ImportParser = ImportedCell (*)(const std::string& text, const std::string& file,
                                      const ImportOptions& options);

// One --tool: its parser and, for --help and the refusal of an unknown tool, the formats it
// reads in one line.
struct ImportTool {
  ImportParser parse = nullptr;
  const char* formats = "";
};

// --tool name -> parser: cyclictest (--json or text: -q lines, redrawn output, -h histogram),
// oslat (--json or the text summary),
// stress-ng (--yaml, or --metrics(-brief) text), trace (tracefs text, "# cpu N" headers
// optional), interrupts (two /proc/interrupts snapshots, one after the other), rtla-osnoise
// (`rtla osnoise top` text), rtla-timerlat (`rtla timerlat hist` text).
const std::map<std::string, ImportTool>& import_tools();

// "  cyclictest     cyclictest --json ...\n" one line per tool: what `import --help` lists.
std::string import_formats_text();

// The per-CPU noise metrics of two /proc/interrupts snapshots taken window_s apart, on `cpus`
// (empty: every CPU column of `after`). Rows by meaning (x86 arch_show_interrupts(), arm64
// show_ipi_list()): local_timer = "LOC", or on arm64 the IRQ row whose description ends in
// "arch_timer"; ipi_reschedule = "Rescheduling interrupts"; ipi_call_function = "Function call
// interrupts" + "Single function call interrupts"; irq = every numbered IRQ row except the
// arch_timer one. Deltas allow one 32-bit wrap (counter_delta, workload/noise.h). Metrics
// "noise.<cause>_per_s": unit "1/s", lower better, aggregate "mean", kind "count", per-CPU
// counts and window_s, as trace_noise() makes them. Throws isolab::Error when a CPU of `cpus`
// is in neither snapshot, a counter went down by more than a wrap, or window_s <= 0.
Metrics interrupts_noise(const InterruptsSnapshot& before, const InterruptsSnapshot& after,
                         const std::vector<int>& cpus, double window_s);

// The run of the import as a typed record (results/result.h; no files written; cells[].raw_dir
// named as import_run writes them). Throws isolab::Error for an unknown tool, a bad label, a
// missing or unreadable FILE, or a parser's error (naming the file and line).
results::RunResult import_record(const ImportOptions& options, const std::string& source_dir);

// results::to_json(import_record(...)): the result.json document. Throws as import_record.
nlohmann::json import_result(const ImportOptions& options, const std::string& source_dir);

// Writes the run: `run_dir` (empty: results_dir/<UTC time>-<label>-import) with result.json and
// every FILE copied to cells/<cell id>/. Returns the run directory. Throws isolab::Error as
// import_record, or when run_dir exists and is not empty. result.json is written by
// results::write_result with one space of indentation per level.
std::filesystem::path import_run(const ImportOptions& options, std::filesystem::path run_dir,
                                 const std::filesystem::path& results_dir,
                                 const std::string& source_dir);

}  // namespace isolab

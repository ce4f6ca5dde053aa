// The customer's machine as `isolab machine` reports it: each fact with where it came from, and
// each fact it could not establish with why.
//
// Contract:
//  - Every fact carries its origins: the file it was read from, relative to the dump's root
//    folder (the sos report's or must-gather's own top, below any folder an archive wraps it
//    in; a file inside an archive of the dump as "nodes/n/sysinfo.tgz:proc/cpuinfo"; a file
//    given alone by its base name), the line when
//    one line says it, and what was read there ("nodes/n/lscpu:3 (lscpu -e: CPU 2 offline)").
//    A fact several files agree on, or combine into (isolated), lists each.
//  - A fact no file gives is absent (null in JSON) and has a not_read entry saying why; nothing
//    is guessed. CPU sets print in the kernel's canonical cpulist form ("0-4,11-79", "" empty).
//  - JSON (docs/commands.md, "isolab machine --json"): {"input": {"path", "kind", "node"},
//    "kernel_release", "cmdline", "rendered_cmdline", "cpus", "online", "sockets",
//    "cores_per_socket", "threads_per_core", "numa_nodes", "isolated", "nohz_full", "rcu_nocbs",
//    "housekeeping", "tuned", "sysctls", "irqs_on_isolated", "not_read", "notes"}; each fact is
//    {"value": ..., "source": ["origin", ...]} or null; a CPU set fact also has "count".
//  - Text: one line per fact, "name: value  [origin; origin]", then "not read: name: why" lines
//    and "note: ..." lines.
#pragma once

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "cmdline/cpulist.h"

namespace isolab {

// Where a fact came from.
struct Origin {
  std::string file;  // relative to the dump's top; "" for a value given on isolab's command line
  size_t line = 0;   // 1-based; 0 when the whole file says it
  std::string what;  // what was read there ("status.nodeInfo.kernelVersion", "lscpu -e")
  std::string text() const;  // "file:line (what)", or "what" without a file
  bool operator==(const Origin&) const = default;
};

template <class T>
struct Fact {
  T value{};
  std::vector<Origin> from;
};

struct NumaNode {
  unsigned node = 0;
  CpuSet cpus;
  bool operator==(const NumaNode& o) const { return node == o.node && cpus == o.cpus; }
};

// The TuneD profile in effect and its variables as written.
struct TunedState {
  std::string profile;
  std::vector<std::string> include;  // the profiles it includes ([main] include=)
  std::vector<std::pair<std::string, std::string>> variables;
};

struct SysctlValue {
  std::string value;
  Origin from;
};

// An IRQ whose affinity lets it land on an isolated CPU.
struct IrqPlacement {
  unsigned irq = 0;
  std::string name;                 // the device or action ("virtio1-input.0"); "" when unknown
  CpuSet affinity;                  // smp_affinity_list
  std::optional<CpuSet> effective;  // effective_affinity_list, when the dump has it
  bool only_isolated = false;       // every online CPU of its affinity is isolated
};

struct NotRead {
  std::string fact;
  std::string why;
};

// What readers found that the isolated, nohz_full, rcu_nocbs and housekeeping facts combine
// (machine/isolation.h): the kernel's own files and TuneD's or the profile's CPUs.
struct IsolationEvidence {
  std::optional<Fact<CpuSet>> sysfs_isolated;   // /sys/devices/system/cpu/isolated
  std::optional<Fact<CpuSet>> sysfs_nohz_full;  // /sys/devices/system/cpu/nohz_full
  std::vector<Fact<CpuSet>> tuned_isolated;  // isolated_cores, no_balance_cores, spec.cpu.isolated
  struct Irq {
    unsigned irq = 0;
    std::string name;
    CpuSet affinity;
    std::optional<CpuSet> effective;
  };
  std::optional<Fact<std::vector<Irq>>> irqs;  // every IRQ's affinity
  std::optional<Fact<CpuSet>> pid1_affinity;   // systemd's CPUs (cpu_affinities.json)
};

struct MachineFacts {
  std::string input;  // the path given
  std::string kind;   // "sos report", "must-gather", "machine dump", "performance profile", ...
  std::string node;   // the must-gather node read; "" otherwise

  std::optional<Fact<std::string>> kernel_release;
  std::optional<Fact<std::string>> cmdline;
  std::optional<Fact<std::string>> rendered_cmdline;  // a PerformanceProfile's line
  std::optional<Fact<CpuSet>> cpus, online;
  std::optional<Fact<unsigned>> sockets, cores_per_socket, threads_per_core;
  std::optional<Fact<std::vector<NumaNode>>> numa_nodes;
  std::optional<Fact<CpuSet>> isolated, nohz_full, rcu_nocbs, housekeeping;
  std::optional<Fact<TunedState>> tuned;
  std::optional<Fact<std::map<std::string, SysctlValue>>> sysctls;
  std::optional<Fact<std::vector<IrqPlacement>>> irqs_on_isolated;

  IsolationEvidence evidence;  // not printed: what isolation.h combines
  std::vector<NotRead> not_read;
  std::vector<std::string> notes;

  // Records why `fact` could not be read (the first reason given for a fact is kept).
  void not_found(const std::string& fact, const std::string& why);
  bool has_not_read(const std::string& fact) const;
};

// Offers a fact read from one more source: it fills `slot` when empty; the same value adds its
// origins; another value leaves the first (the sources are offered in order of trust) and
// becomes a note naming both, e.g. "cpus: nodes/n/lscpu says 0-3, sysinfo.tgz:... says 0-1;
// the first is kept".
template <class T, class Show>
void offer(MachineFacts& m, const std::string& name, std::optional<Fact<T>>& slot, Fact<T> f,
           Show show) {
  if (!slot) {
    slot = std::move(f);
    return;
  }
  if (slot->value == f.value) {
    for (Origin& o : f.from)
      if (std::find(slot->from.begin(), slot->from.end(), o) == slot->from.end())
        slot->from.push_back(std::move(o));
    return;
  }
  m.notes.push_back(name + ": " + slot->from.front().text() + " says " + show(slot->value) + ", " +
                    f.from.front().text() + " says " + show(f.value) + "; the first is kept");
}

nlohmann::json to_json(const MachineFacts& m);
std::string to_text(const MachineFacts& m);

}  // namespace isolab

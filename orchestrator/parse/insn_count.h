// Reader of the file isolab's QEMU TCG plugin writes (tcg-plugin/insn-count.c, which documents
// the format; this reads versions 1, 2 and 3), and the per-step helpers built on it. Pure:
// bytes in, values out.
//
// Format, one record per line, single spaces between fields, key=value fields after a record's
// kind and positional fields (keys this reader does not know are ignored):
//   isolab-insn-count <1|2|3> plugin_api=1 qemu_api=<min>-<cur> vcpus=<n> profile_cpus=<list>
//       (1, 2: profile_top=<N>; 3: symbols=<functions> mode=<exact|inline> [count=<all|steps>])
//   step <seq> begin vcpu=<v> counts=<u0>:<k0>,<u1>:<k1>,...     (n entries, index = vCPU)
//       (3: rep=<ur0>:<kr0>,... faults=<fixed0>:<unmatched0>:<kernel0>,... [late=1])
//   step <seq> end vcpu=<v> counts=... (3: rep=... faults=...)
//   region <seq> vcpu=<c> [class=<1|2|3>] n=<regions> user=<sum> kernel=<sum> unbalanced=<m>
//       [median=<insns> kernel_median=<insns>]
//       (3: rep=<sum> and, with median=, norep_median=<insns>. class= only in versions 2
//       and 3, only for region classes 1-3: a line without it is class 0)
//   prof <seq> vcpu=<c> pc=0x<hex> insns=<n>            (1, 2: one translation block)
//   prof <seq> vcpu=<c> fn=<0x<hex>|none> insns=<n> rep=<n>   (3: one function)
//   wake <seq> vcpu=<c> n=<k> nowake=<k> timer=<k> irq=<k> noentry=<k> [insns=<l1>,...]  (3)
//   wakefn <seq> vcpu=<c> fn=<0x<hex>|none|user> insns=<n>                              (3)
//   exit stray_step_ends=<k> counts=... (3: early_markers=<k> rep=... faults=... boot=<b0>,...)
//   end
// Counts are guest instructions, cumulative per vCPU since it started. Version 3 splits off a
// vCPU's boot code (before its first kernel instruction) and counts kernel by bit 63 of the
// translation block's address; versions 1 and 2 counted kernel from 0xffff800000000000 and
// everything else (boot code included) as user. Step snapshots and region sums are exact for
// the vCPU that executed the marker; the other vCPUs' snapshot entries are read at that
// instant. What is counted is QEMU's execution: a rep-prefixed string instruction counts once
// per iteration plus one (version 3 counts those executions apart as rep), and a block left by
// an exception counts whole (version 3 takes back what a user block left by a fault did not
// execute; see the plugin's comment).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace isolab {

// Guest instructions of one vCPU (cumulative in a snapshot, a difference in a delta).
struct InsnCounts {
  std::uint64_t user = 0;
  std::uint64_t kernel = 0;
  std::uint64_t total() const { return user + kernel; }
  bool operator==(const InsnCounts&) const = default;
};

// Region classes the markers have (guest-tools/insn-marker.h): 0 .. kInsnRegionClasses - 1.
constexpr unsigned kInsnRegionClasses = 4;

// One "region" record: what the regions of one class in a step on one vCPU added up to.
struct InsnRegionTotals {
  unsigned vcpu = 0;
  unsigned region_class = 0;     // class= (0 when absent)
  std::uint64_t regions = 0;     // REGION_END markers that closed a region (n=)
  std::uint64_t user = 0;        // sum over those regions, instructions
  std::uint64_t kernel = 0;      // likewise
  std::uint64_t unbalanced = 0;  // a REGION_BEGIN while open, or a REGION_END with none open
  // The lower median over the step's regions of one region's instructions (user + kernel) and
  // of its kernel instructions ("median=", "kernel_median="); nullopt when the plugin did not
  // write them (no region closed). A region entered by an interrupt or another task costs
  // more, and how many are depends on the emulation speed (ticks follow guest time): the
  // median is the operation's own path length.
  std::optional<std::uint64_t> median;
  std::optional<std::uint64_t> kernel_median;
  // Version 3: the regions' rep-string executions (rep=), and the lower median of one region's
  // instructions less its rep executions (norep_median=, with median=).
  std::uint64_t rep = 0;
  std::optional<std::uint64_t> norep_median;
};

// One "prof" record: kernel instructions executed on a vCPU during a step. Versions 1 and 2:
// in translation blocks starting at pc (a guest virtual address; map it with the kernel's
// System.map). Version 3: in the function of the plugin's symbols that starts at pc, or, when
// in_function is false (fn=none, pc 0), outside every function; rep = its rep executions.
struct InsnProfileEntry {
  unsigned vcpu = 0;
  std::uint64_t pc = 0;
  std::uint64_t insns = 0;
  bool in_function = true;
  std::uint64_t rep = 0;
};

// One "wakefn" record: the instructions of a vCPU's longest wakeup path of the step in one
// function (pc, as InsnProfileEntry), outside every function, or in user code.
struct InsnWakeFunction {
  enum Where { function, none, user } where = function;
  std::uint64_t pc = 0;  // where == function
  std::uint64_t insns = 0;
};

// One "wake" record and its "wakefn" records: a vCPU's wakeup paths of the step (the
// instructions from the entry of the interrupt that woke the marked task to its first user
// instruction; tcg-plugin/wakeup.c).
struct InsnWakeups {
  unsigned vcpu = 0;
  std::vector<std::uint64_t> lengths;     // in order (insns=; n= of them)
  std::uint64_t nowake = 0;               // WAKE markers with no wakeup seen since the arm
  std::uint64_t timer = 0;                // paths that started at the timer interrupt's entry
  std::uint64_t irq = 0;                  // at another interrupt's entry (an IPI)
  std::uint64_t noentry = 0;              // at the wake function itself (no entry seen)
  std::vector<InsnWakeFunction> longest;  // the longest path by function, largest first
};

// Version 3's per-vCPU fault counters (cumulative): user blocks left by a fault whose
// unexecuted instructions were taken back, those whose next user block was elsewhere (nothing
// taken back), and kernel blocks left by a fault (counted whole).
struct InsnFaults {
  std::uint64_t fixed = 0, unmatched = 0, kernel = 0;
  bool operator==(const InsnFaults&) const = default;
};

// One workload step (STEP_BEGIN .. STEP_END).
struct InsnStep {
  std::uint64_t seq = 0;  // 1, 2, ... in the order the guest began them
  // late=1 (count=steps): the plugin's counting window opened at this step's begin marker, not
  // before it, so the step's counts miss what ran until the translation cache was flushed.
  bool late = false;
  unsigned begin_vcpu = 0;        // the vCPU that executed STEP_BEGIN
  std::vector<InsnCounts> begin;  // one per vCPU (InsnCountFile::vcpus)
  bool ended = false;             // false: no "step <seq> end" record
  unsigned end_vcpu = 0;          // the vCPU that executed STEP_END (when ended)
  std::vector<InsnCounts> end;    // one per vCPU when ended, else empty
  // (vCPU, class) pairs with regions or unbalanced markers, as written (ascending vCPU, then
  // ascending class).
  std::vector<InsnRegionTotals> regions;
  std::vector<InsnProfileEntry> profile;  // as written: per vCPU, largest insns first
  // Version 3 (empty before): rep executions (user = user-mode, kernel = kernel-mode) and fault
  // counters per vCPU at begin and end, and the wakeup records (ascending vCPU).
  std::vector<InsnCounts> begin_rep, end_rep;
  std::vector<InsnFaults> begin_faults, end_faults;
  std::vector<InsnWakeups> wakeups;
};

// A whole file.
struct InsnCountFile {
  int version = 0;       // of the format: 1 or 2
  int plugin_api = 0;    // QEMU plugin API the plugin was built for
  int qemu_api_min = 0;  // the range QEMU reported when loading it
  int qemu_api_max = 0;
  unsigned vcpus = 0;             // entries in every counts= list (1..4096)
  std::string profile_cpus;       // as given to the plugin ("" = no profile)
  std::uint64_t profile_top = 0;  // versions 1 and 2: the profile's cut
  std::uint64_t symbols = 0;      // version 3: functions the plugin read from System.map
  // Version 3: "exact", or "inline" for the floor-cost build whose counts are not per vCPU
  // (the plugin's comment); versions 1 and 2 are "exact".
  std::string mode = "exact";
  // Version 3's count=steps: the plugin counted only inside steps (tcg-plugin/insn-count.c,
  // "Counting window"); cumulative counts then cover the open windows, boot= is 0.
  bool steps_only = false;
  std::vector<InsnStep> steps;           // in file order, seq strictly increasing
  bool exited = false;                   // an "exit" record was read
  std::uint64_t stray_step_ends = 0;     // STEP_END markers with no step open (exit record)
  std::vector<InsnCounts> exit_counts;   // one per vCPU when exited
  std::vector<std::uint64_t> exit_boot;  // version 3: each vCPU's boot-code instructions
  std::uint64_t early_markers = 0;       // version 3: markers ignored during boot code
  // true when the file ends with the "end" record; otherwise `truncation` says what is
  // missing (QEMU killed, host crash): the steps read so far are kept.
  bool complete = false;
  std::string truncation;
};

// Parses the plugin's output. A file cut short is not an error: a last line without its
// newline is dropped, and complete=false with `truncation` naming what is missing (the cut
// line, the "end" record). Throws isolab::Error "insn-count line <n>: <what>" (quoting the
// line) for anything the plugin never writes: an empty file or a first line that is not a
// version-1, 2 or 3 header, an unknown record kind (wake and wakefn before version 3), a missing
// or malformed field, a count= other than all or steps, a late= other than 1, a number that is
// not plain decimal (pc, fn: 0x + hex) or overflows 64
// bits, a counts=, rep=, faults= or boot= list whose length is not vcpus, a vCPU index >=
// vcpus, a class= in a version-1 file or outside 1..3, a step seq that does not increase, an
// end/region/prof/wake/wakefn record that does not belong to the last step (end: once, for an
// unended last step; the others: after that step's end, at most one region record per vCPU
// and class, one wake record per vCPU, a wakefn after its vCPU's wake record), a wake record
// whose insns= list does not hold n= lengths, or any record after "end".
InsnCountFile parse_insn_count(std::string_view text);

// The step with this seq, or nullptr.
const InsnStep* find_insn_step(const InsnCountFile& file, std::uint64_t seq);

// Per vCPU (index = vCPU): end - begin of an ended step, in instructions. Throws isolab::Error
// when the step has no end or a counter went down (begin > end).
std::vector<InsnCounts> insn_step_deltas(const InsnStep& step);

// The same for the rep executions (version 3; empty for older files).
std::vector<InsnCounts> insn_step_rep_deltas(const InsnStep& step);

// "" when the step's profile of `vcpu` (version 3: every function) sums to the vCPU's kernel
// delta of the step, else a sentence with both numbers. Versions 1 and 2 cut their profile and
// are not checked (""). Throws as insn_step_deltas.
std::string insn_profile_sum_problem(const InsnStep& step, unsigned vcpu);

// The step's wakeup record of a vCPU, or nullptr.
const InsnWakeups* insn_step_wakeups(const InsnStep& step, unsigned vcpu);

// The cost of one operation measured with regions of one class (region_class, default 0;
// records of other classes are not looked at): the region totals of expected_vcpu divided by
// their number. Shape of a valid result: regions = n, user/kernel/total = instructions per
// region (total = user + kernel), reason empty. Invalid (valid = false, the numbers 0) when:
// the step has no end; a vCPU other than expected_vcpu has regions or unbalanced markers of
// the class; the expected vCPU has unbalanced markers; it has no region; or expected_regions
// is given and differs from its region count. reason then lists every such finding,
// "; "-separated, e.g. "2 unbalanced markers on vCPU 5; 999 regions on vCPU 5, expected 1000"
// (for a class c > 0 "class-c regions", "unbalanced class-c markers").
struct InsnPerOperation {
  bool valid = false;
  std::string reason;
  std::uint64_t regions = 0;
  double user = 0;
  double kernel = 0;
  double total = 0;
  // The medians of the expected vCPU's regions (InsnRegionTotals::median), when written.
  std::optional<double> median_total;
  std::optional<double> median_kernel;
  // Version 3: the median region less its rep executions, and the rep executions per region.
  std::optional<double> median_norep;
  std::optional<double> rep;
};
InsnPerOperation insn_per_operation(const InsnStep& step, unsigned expected_vcpu,
                                    std::optional<std::uint64_t> expected_regions = {},
                                    unsigned region_class = 0);

// The same for an operation run on several vCPUs at once, one pinned worker each (page-fault-
// bench's per_cpu phase): expected_regions maps each worker's vCPU to the number of regions
// of region_class the worker reported. Valid when the step ended, no vCPU outside the map has
// regions or unbalanced markers of the class, and each vCPU of the map has exactly its
// expected number of regions and no unbalanced marker; per_vcpu then holds each vCPU's
// InsnPerOperation (valid, with its medians when written). Otherwise valid = false, per_vcpu
// empty, and reason lists every finding as insn_per_operation does ("..., expected vCPUs
// 2-3 only" for a vCPU outside the map). An empty map is invalid ("no vCPU was expected").
struct InsnPerOperationByVcpu {
  bool valid = false;
  std::string reason;
  std::map<unsigned, InsnPerOperation> per_vcpu;
};
InsnPerOperationByVcpu insn_per_operation_by_vcpu(
    const InsnStep& step, const std::map<unsigned, std::uint64_t>& expected_regions,
    unsigned region_class);

// The step's profile entries of one vCPU, largest insns first (ties: ascending pc); empty when
// the vCPU was not profiled or ran no kernel code during the step.
std::vector<InsnProfileEntry> insn_step_profile(const InsnStep& step, unsigned vcpu);

}  // namespace isolab

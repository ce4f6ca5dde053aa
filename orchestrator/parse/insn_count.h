// Reader of the file isolab's QEMU TCG plugin writes (tcg-plugin/insn-count.c, which documents
// the format; this reads versions 1 and 2), and the per-step helpers built on it. Pure: bytes
// in, values out.
//
// Format, one record per line, single spaces between fields, key=value fields after a record's
// kind and positional fields (keys this reader does not know are ignored):
//   isolab-insn-count <1|2> plugin_api=1 qemu_api=<min>-<cur> vcpus=<n> profile_cpus=<list>
//       profile_top=<N>
//   step <seq> begin vcpu=<v> counts=<u0>:<k0>,<u1>:<k1>,...     (n entries, index = vCPU)
//   step <seq> end vcpu=<v> counts=...
//   region <seq> vcpu=<c> [class=<1|2|3>] n=<regions> user=<sum> kernel=<sum> unbalanced=<m>
//       [median=<insns> kernel_median=<insns>]
//       (class= only in version 2, only for region classes 1-3: a line without it is class 0;
//       version 1 knew class 0 only)
//   prof <seq> vcpu=<c> pc=0x<hex> insns=<n>
//   exit stray_step_ends=<k> counts=...
//   end
// Counts are guest instructions, cumulative per vCPU since it started, split by where the
// translation block started: kernel = at or above 0xffff800000000000 (x86-64 upper half),
// user = below (all of a 32-bit guest). Step snapshots and region sums are exact for the vCPU
// that executed the marker; the other vCPUs' snapshot entries are read at that instant. What
// is counted is QEMU's execution: a block left by an exception counts whole, and a rep-prefixed
// string instruction counts once per iteration plus one (see the plugin's comment).
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
};

// One "prof" record: kernel instructions executed on a vCPU during a step in translation
// blocks starting at pc (a guest virtual address; map it with the kernel's System.map).
struct InsnProfileEntry {
  unsigned vcpu = 0;
  std::uint64_t pc = 0;
  std::uint64_t insns = 0;
};

// One workload step (STEP_BEGIN .. STEP_END).
struct InsnStep {
  std::uint64_t seq = 0;          // 1, 2, ... in the order the guest began them
  unsigned begin_vcpu = 0;        // the vCPU that executed STEP_BEGIN
  std::vector<InsnCounts> begin;  // one per vCPU (InsnCountFile::vcpus)
  bool ended = false;             // false: no "step <seq> end" record
  unsigned end_vcpu = 0;          // the vCPU that executed STEP_END (when ended)
  std::vector<InsnCounts> end;    // one per vCPU when ended, else empty
  // (vCPU, class) pairs with regions or unbalanced markers, as written (ascending vCPU, then
  // ascending class).
  std::vector<InsnRegionTotals> regions;
  std::vector<InsnProfileEntry> profile;  // as written: per vCPU, largest insns first
};

// A whole file.
struct InsnCountFile {
  int version = 0;       // of the format: 1 or 2
  int plugin_api = 0;    // QEMU plugin API the plugin was built for
  int qemu_api_min = 0;  // the range QEMU reported when loading it
  int qemu_api_max = 0;
  unsigned vcpus = 0;        // entries in every counts= list (1..4096)
  std::string profile_cpus;  // as given to the plugin ("" = no profile)
  std::uint64_t profile_top = 0;
  std::vector<InsnStep> steps;          // in file order, seq strictly increasing
  bool exited = false;                  // an "exit" record was read
  std::uint64_t stray_step_ends = 0;    // STEP_END markers with no step open (exit record)
  std::vector<InsnCounts> exit_counts;  // one per vCPU when exited
  // true when the file ends with the "end" record; otherwise `truncation` says what is
  // missing (QEMU killed, host crash): the steps read so far are kept.
  bool complete = false;
  std::string truncation;
};

// Parses the plugin's output. A file cut short is not an error: a last line without its
// newline is dropped, and complete=false with `truncation` naming what is missing (the cut
// line, the "end" record). Throws isolab::Error "insn-count line <n>: <what>" (quoting the
// line) for anything the plugin never writes: an empty file or a first line that is not a
// version-1 or version-2 header, an unknown record kind, a missing or malformed field, a number
// that is not plain decimal (pc: 0x + hex) or overflows 64 bits, a counts= list whose length is
// not vcpus, a vCPU index >= vcpus, a class= in a version-1 file or outside 1..3, a step seq
// that does not increase, an end/region/prof record that does not belong to the last step (end:
// once, for an unended last step; region/prof: after that step's end, at most one region record
// per vCPU and class), or any record after "end".
InsnCountFile parse_insn_count(std::string_view text);

// The step with this seq, or nullptr.
const InsnStep* find_insn_step(const InsnCountFile& file, std::uint64_t seq);

// Per vCPU (index = vCPU): end - begin of an ended step, in instructions. Throws isolab::Error
// when the step has no end or a counter went down (begin > end).
std::vector<InsnCounts> insn_step_deltas(const InsnStep& step);

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

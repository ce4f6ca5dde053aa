// Lock contention on each CPU, read from lock:contention_begin/end trace lines and the kernel
// stacks after them (parse/trace.h reads the lines): waits by lock class (zone, pcp, other).
#pragma once

#include <cstdint>
#include <map>
#include <string_view>
#include <vector>

namespace isolab {

// Which lock a lock:contention_begin waited for, from the kernel stack the stacktrace trigger
// wrote right after it (guest/init_script.h lock_contention_arm_script()): the event prints only a
// hashed address.
enum class LockClass { zone, pcp, other };

// frames: innermost first, as printed after " => " (an offset "+0x1a/0x40" is ignored). The
// lock and tracing machinery (queued_spin_lock_slowpath, _raw_spin_lock*, do_raw_spin_lock,
// rt_spin_lock, rtlock_slowlock*, trace/event/ftrace frames) is skipped; the first frame left
// decides. Zone lock (struct zone.lock, spin_lock_irqsave(&zone->lock) in 6.1 mm/page_alloc.c,
// page_isolation.c, page_reporting.c, compaction.c, vmstat.c): rmqueue_bulk, rmqueue_buddy,
// free_pcppages_bulk, free_one_page, __free_pages_ok, split_free_page,
// reserve_highatomic_pageblock, unreserve_highatomic_pageblock, mark_free_pages,
// __setup_per_zone_wmarks, take_page_off_buddy, put_page_back_buddy, alloc_contig_pages,
// __offline_isolated_pages, __show_free_areas, set_migratetype_isolate,
// unset_migratetype_isolate, page_reporting_cycle, isolate_freepages_block, compact_lock_irqsave,
// and the functions GCC inlines the static ones into in our 6.1 builds (System.map has no
// rmqueue_bulk, rmqueue_buddy, free_one_page): __rmqueue_pcplist, get_page_from_freelist,
// free_unref_page, free_unref_page_list (none of these takes another spin lock itself; the pcp
// lock they take is a trylock, which never contends). Per-cpu-pages lock (struct
// per_cpu_pages.lock, the only blocking spin_lock(&pcp->lock) in 6.1 is
// pcp_spin_lock_maybe_irqsave()): drain_zone_pages, drain_pages_zone, and where those are
// inlined: drain_pages, drain_local_pages, __drain_all_pages, refresh_cpu_vm_stats,
// vmstat_update. Anything else, or no frame left: other.
LockClass classify_lock_stack(const std::vector<std::string_view>& frames);

// Contentions of one lock class on one CPU. A contention's wait is from its contention_begin to
// the next contention_end on the same CPU with the same (hashed) lock address.
struct LockWaits {
  long count = 0;       // contention_begin events
  long ended = 0;       // of those, matched with a contention_end
  int64_t wait_ns = 0;  // sum of the matched waits
  int64_t max_wait_ns = 0;
};

struct CpuLockContention {
  LockWaits zone, pcp, other;
  long no_stack = 0;  // contention_begin events without a stack after them: not classified
};

struct LockContention {
  std::map<int, CpuLockContention> per_cpu;  // by the CPU of "[NNN]" (the waiting CPU)
  std::vector<int> cpus;     // from "# cpu N" headers (first-seen order, no repeats), else the
                             // CPUs of per_cpu in order
  long malformed = 0;        // lines that are none of the kinds below
  bool lost_events = false;  // as in TraceCounts
};

// text: contention_begin ("<hashed addr> (flags=SPIN)") and contention_end ("<hashed addr>
// (ret=0)") lines of any CPUs (include/trace/events/lock.h, 6.1), each begin optionally
// followed by its "<stack trace>" line and " => " frames on the same CPU, per-CPU buffers one
// after the other (each in time order), each optionally after a "# cpu N" header; "#" comments
// and "CPU:N [LOST M EVENTS]" lines as in parse_trace(). At most 16 open contentions per CPU (the
// oldest dropped). Never throws.
LockContention lock_contention(std::string_view text);

}  // namespace isolab

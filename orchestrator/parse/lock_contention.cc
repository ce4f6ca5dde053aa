#include "parse/lock_contention.h"

#include <algorithm>
#include <iterator>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/text.h"
#include "parse/text_util.h"
#include "parse/trace.h"
#include "parse/trace_text.h"

namespace isolab {

namespace {

using namespace trace_text;

// Frames of the lock and tracing machinery, skipped before classifying (prefixes).
bool is_machinery_frame(std::string_view f) {
  static constexpr std::string_view kPrefixes[] = {"queued_spin_lock_slowpath",
                                                   "native_queued_spin_lock_slowpath",
                                                   "__pv_queued_spin_lock_slowpath",
                                                   "_raw_spin_lock",
                                                   "do_raw_spin_lock",
                                                   "rt_spin_lock",
                                                   "rtlock_",
                                                   "rt_mutex",
                                                   "__rt_mutex",
                                                   "trace_",
                                                   "__trace",
                                                   "ftrace",
                                                   "event_trigger",
                                                   "stack_trace_",
                                                   "__bpf_trace",
                                                   "perf_trace",
                                                   "__traceiter"};
  return std::any_of(std::begin(kPrefixes), std::end(kPrefixes),
                     [&](std::string_view p) { return f.starts_with(p); });
}

// See classify_lock_stack() in lock_contention.h for where each name comes from.
const std::map<std::string_view, LockClass>& lock_takers() {
  static const std::map<std::string_view, LockClass> m = [] {
    std::map<std::string_view, LockClass> t;
    for (std::string_view f : {"rmqueue_bulk",
                               "rmqueue_buddy",
                               "free_pcppages_bulk",
                               "free_one_page",
                               "__free_pages_ok",
                               "split_free_page",
                               "reserve_highatomic_pageblock",
                               "unreserve_highatomic_pageblock",
                               "mark_free_pages",
                               "__setup_per_zone_wmarks",
                               "take_page_off_buddy",
                               "put_page_back_buddy",
                               "alloc_contig_pages",
                               "__offline_isolated_pages",
                               "__show_free_areas",
                               "set_migratetype_isolate",
                               "unset_migratetype_isolate",
                               "page_reporting_cycle",
                               "isolate_freepages_block",
                               "compact_lock_irqsave",
                               "__rmqueue_pcplist",
                               "get_page_from_freelist",
                               "free_unref_page",
                               "free_unref_page_list"})
      t[f] = LockClass::zone;
    for (std::string_view f :
         {"drain_zone_pages", "drain_pages_zone", "drain_pages", "drain_local_pages",
          "__drain_all_pages", "refresh_cpu_vm_stats", "vmstat_update"})
      t[f] = LockClass::pcp;
    return t;
  }();
  return m;
}

// A contention_begin seen, waiting for its stack and its end.
struct Contention {
  std::string addr;
  int64_t begin_ns = 0;
  std::optional<LockClass> cls;
  std::optional<int64_t> wait_ns;
};

struct LockState {
  std::vector<std::pair<int, Contention>> all;   // (cpu, contention) in input order
  std::map<int, std::vector<std::size_t>> open;  // per CPU: indexes into all, not yet ended
  std::optional<std::size_t> stack_of;           // the begin the frames being read belong to
  std::vector<std::string> frames;
};

// The hashed address: the first word of the body ("(____ptrval____)" early in boot).
std::string lock_addr(std::string_view body) {
  body = trim_blanks(body);
  return clean_name(body.substr(0, std::min(body.find(' '), body.size())));
}

void close_stack(LockState& s) {
  if (s.stack_of && !s.frames.empty()) {
    std::vector<std::string_view> v(s.frames.begin(), s.frames.end());
    s.all[*s.stack_of].second.cls = classify_lock_stack(v);
  }
  s.stack_of.reset();
  s.frames.clear();
}

void on_lock_line(LockState& s, const TraceLine& l) {
  if (!l.ts_ns) return;
  if (l.event == "contention_begin") {
    auto& open = s.open[l.cpu];
    if (open.size() >= kMaxOpenPerKey) open.erase(open.begin());
    open.push_back(s.all.size());
    s.all.push_back({l.cpu, {lock_addr(l.body), *l.ts_ns, std::nullopt, std::nullopt}});
  } else if (l.event == kStackHeader) {
    auto it = s.open.find(l.cpu);
    if (it != s.open.end() && !it->second.empty() && !s.all[it->second.back()].second.cls)
      s.stack_of = it->second.back();
  } else if (l.event == "contention_end") {
    auto it = s.open.find(l.cpu);
    if (it == s.open.end()) return;
    const std::string addr = lock_addr(l.body);
    auto& open = it->second;
    for (auto k = open.rbegin(); k != open.rend(); ++k) {
      Contention& c = s.all[*k].second;
      if (c.addr != addr) continue;
      if (*l.ts_ns >= c.begin_ns) c.wait_ns = *l.ts_ns - c.begin_ns;
      open.erase(std::next(k).base());
      break;
    }
  }
}

void add_wait(LockWaits& w, const Contention& c) {
  ++w.count;
  if (!c.wait_ns) return;
  ++w.ended;
  w.wait_ns += *c.wait_ns;
  w.max_wait_ns = std::max(w.max_wait_ns, *c.wait_ns);
}

}  // namespace

LockClass classify_lock_stack(const std::vector<std::string_view>& frames) {
  for (std::string_view f : frames) {
    f = f.substr(0, std::min(f.find('+'), f.size()));
    if (f.empty() || is_machinery_frame(f)) continue;
    auto it = lock_takers().find(f);
    return it == lock_takers().end() ? LockClass::other : it->second;
  }
  return LockClass::other;
}

LockContention lock_contention(std::string_view text) {
  LockContention out;
  LockState s;
  TraceHeaders headers;
  for (std::string_view line : text_lines(text)) {
    if (line.empty()) continue;
    std::string_view frame = stack_frame(line);
    if (!frame.empty()) {
      if (s.stack_of && s.frames.size() < 32) s.frames.push_back(clean_name(frame));
      continue;
    }
    close_stack(s);
    if (line.size() > kMaxTraceLineBytes) {
      ++out.malformed;
    } else if (line[0] == '#') {
      read_comment(headers, line);  // "# cpu N" and the overflow check of parse_trace()
    } else if (is_lost_line(line)) {
      out.lost_events = true;
    } else if (auto l = parse_trace_line(line)) {
      on_lock_line(s, *l);
    } else {
      ++out.malformed;
    }
  }
  close_stack(s);
  out.lost_events = out.lost_events || headers.lost_events;
  out.cpus = headers.cpus;
  for (const auto& [cpu, c] : s.all) {
    CpuLockContention& pc = out.per_cpu[cpu];
    if (!c.cls) {
      ++pc.no_stack;
      continue;
    }
    add_wait(*c.cls == LockClass::zone ? pc.zone : *c.cls == LockClass::pcp ? pc.pcp : pc.other, c);
  }
  if (out.cpus.empty())
    for (const auto& [cpu, c] : out.per_cpu) out.cpus.push_back(cpu);
  return out;
}

}  // namespace isolab

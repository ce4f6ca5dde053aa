#include "parse/vmstat_queueing.h"

#include <algorithm>
#include <functional>
#include <tuple>
#include <vector>

#include "base/text.h"
#include "parse/text_util.h"
#include "parse/trace.h"

namespace isolab {

namespace {

enum class VmstatEv { run_end, run_start, queue };  // same-instant order: end, start, queue

struct TimedEv {
  int64_t ns;
  VmstatEv ev;
  int cpu;
};

void for_each_line(std::string_view text, const std::function<void(const TraceLine&)>& f) {
  for (std::string_view line : text_lines(text)) {
    if (line.empty() || line[0] == '#') continue;
    if (auto l = parse_trace_line(line); l && l->ts_ns) f(*l);
  }
}

}  // namespace

std::map<int, VmstatQueueing> vmstat_queueing(std::string_view queue_text,
                                              std::string_view run_text) {
  std::vector<TimedEv> evs;
  for_each_line(queue_text, [&](const TraceLine& l) {
    if (l.event != "workqueue_queue_work") return;
    WorkqueueFields w = parse_workqueue_fields(l.body);
    if (w.function != "vmstat_update") return;
    int target = w.cpu ? *w.cpu : w.req_cpu ? *w.req_cpu : l.cpu;
    if (target >= 0) evs.push_back({*l.ts_ns, VmstatEv::queue, target});
  });
  for_each_line(run_text, [&](const TraceLine& l) {
    const bool start = l.event == "workqueue_execute_start";
    if (!start && l.event != "workqueue_execute_end") return;
    if (parse_workqueue_fields(l.body).function != "vmstat_update") return;
    evs.push_back({*l.ts_ns, start ? VmstatEv::run_start : VmstatEv::run_end, l.cpu});
  });
  std::stable_sort(evs.begin(), evs.end(), [](const TimedEv& a, const TimedEv& b) {
    return std::tie(a.ns, a.ev) < std::tie(b.ns, b.ev);
  });
  struct State {
    bool pending = false, running = false;
  };
  std::map<int, State> st;
  std::map<int, VmstatQueueing> out;
  for (const TimedEv& e : evs) {
    State& s = st[e.cpu];
    VmstatQueueing& q = out[e.cpu];
    switch (e.ev) {
      case VmstatEv::queue:
        ++q.queued;
        if (s.pending) ++q.while_pending;
        if (s.running) ++q.while_running;
        s.pending = true;
        break;
      case VmstatEv::run_start:
        s.pending = false;
        s.running = true;
        break;
      case VmstatEv::run_end:
        s.running = false;
        break;
    }
  }
  return out;
}

}  // namespace isolab

#include "parse/spin_ticks.h"

#include <algorithm>
#include <optional>

#include "parse/trace.h"
#include "parse/trace_text.h"

namespace isolab {

namespace {

using namespace trace_text;

constexpr std::string_view kMarker = "isolab-spin event ";

// What one interval (marker to marker) saw so far.
struct Interval {
  bool came_back = false;
  bool stopped = false;
  long ticks = 0;
  long quiet_ticks = 0;  // since the last success=1 (or the marker)
  std::map<std::string, long> quiet_kept;
};

void close_interval(SpinTicks& s, const Interval& in) {
  s.intervals++;
  s.tick_came_back += in.came_back;
  s.stopped_again += in.stopped;
  s.ticks += in.ticks;
  s.quiet_ticks += in.quiet_ticks;
  if (in.quiet_ticks > 0 || !in.quiet_kept.empty()) s.ticking_at_next++;
  for (const auto& [dep, n] : in.quiet_kept) s.kept_by[dep] += n;
}

// "dependency=RCU" -> "RCU"; "?" when absent.
std::string dependency(std::string_view body) {
  const std::size_t at = body.find("dependency=");
  if (at == std::string_view::npos) return "?";
  std::string_view v = body.substr(at + 11);
  v = v.substr(0, std::min(v.find(' '), v.size()));
  return v.empty() ? "?" : clean_name(v);
}

// The "# cpu N" header's N; nullopt for any other line.
std::optional<int> section_cpu(std::string_view line) {
  if (line.substr(0, 6) != "# cpu ") return std::nullopt;
  const auto n = to_ll(trim_blanks(line.substr(6)));
  if (!n || *n < 0 || *n > kMaxCpu) return -1;  // a malformed header ends the section
  return static_cast<int>(*n);
}

// One event line of the CPU's section into s (and the open interval, once a marker opened it).
void read_event(SpinTicks& s, std::optional<Interval>& open, const TraceLine& t) {
  if (t.event == "tracing_mark_write" && t.body.substr(0, kMarker.size()) == kMarker) {
    const auto n = to_ll(trim_blanks(t.body.substr(kMarker.size())));
    if (!n || *n != s.markers) s.markers_in_order = false;
    s.markers++;
    if (open) close_interval(s, *open);
    open = Interval{};
    return;
  }
  if (!open) return;
  if (t.event == "tick_stop") {
    if (t.body.find("success=1") != std::string_view::npos) {
      open->stopped = true;
      open->quiet_ticks = 0;
      open->quiet_kept.clear();
    } else {
      open->came_back = true;
      open->quiet_kept[dependency(t.body)]++;
    }
  } else if (t.event == "hrtimer_expire_entry" &&
             t.body.find("function=tick_sched_timer") != std::string_view::npos) {
    open->came_back = true;
    open->ticks++;
    open->quiet_ticks++;
  }
}

}  // namespace

SpinTicks spin_ticks(std::string_view text, int cpu) {
  SpinTicks s;
  std::optional<Interval> open;  // the interval since the last marker
  bool in_section = false;
  TraceHeaders headers;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) nl = text.size();
    const std::string_view line = text.substr(pos, nl - pos);
    pos = nl + 1;
    if (line.size() > kMaxTraceLineBytes) continue;
    if (const auto c = section_cpu(line)) {
      in_section = *c == cpu;
      continue;
    }
    if (is_lost_line(line)) s.lost_events = true;
    if (!line.empty() && line.front() == '#') {
      read_comment(headers, line);
      continue;
    }
    if (!in_section) continue;
    const auto t = parse_trace_line(line);
    if (t && t->cpu == cpu) read_event(s, open, *t);
  }
  s.lost_events = s.lost_events || headers.lost_events;
  return s;
}

}  // namespace isolab

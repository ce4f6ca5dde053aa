#include "parse/trace.h"

#include <charconv>

namespace isolab {

namespace {

bool to_int(std::string_view s, long& out) {
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && p == s.data() + s.size();
}

std::string field(std::string_view fields, std::string_view key) {
  std::size_t at = fields.find(key);
  if (at == std::string_view::npos) return {};
  at += key.size();
  std::size_t end = fields.find(' ', at);
  return std::string(
      fields.substr(at, end == std::string_view::npos ? std::string_view::npos : end - at));
}

}  // namespace

TraceCounts parse_trace(std::string_view text) {
  TraceCounts t;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t eol = text.find('\n', pos);
    if (eol == std::string_view::npos) eol = text.size();
    std::string_view line = text.substr(pos, eol - pos);
    pos = eol + 1;
    if (line.size() > 4096 || line.empty()) continue;
    if (line[0] == '#') {
      // "# entries-in-buffer/entries-written: 7542/7542   #P:8"
      std::size_t k = line.find("entries-written: ");
      if (k != std::string_view::npos) {
        std::string_view rest = line.substr(k + 17);
        std::size_t slash = rest.find('/');
        std::size_t sp = rest.find(' ');
        long a = 0, b = 0;
        if (slash != std::string_view::npos && to_int(rest.substr(0, slash), a) &&
            to_int(rest.substr(slash + 1, sp == std::string_view::npos ? std::string_view::npos
                                                                       : sp - slash - 1),
                   b) &&
            a < b)
          t.lost_events = true;
      }
      continue;
    }
    // "<task>-<pid> [005] d.h1.    15.720422: local_timer_entry: vector=236"
    std::size_t lb = line.find(" [");
    std::size_t rb = lb == std::string_view::npos ? lb : line.find(']', lb);
    long cpu = -1;
    if (rb == std::string_view::npos || !to_int(line.substr(lb + 2, rb - lb - 2), cpu) || cpu < 0 ||
        cpu > 8191) {
      ++t.malformed;
      continue;
    }
    std::size_t c1 = line.find(": ", rb);
    if (c1 == std::string_view::npos) {
      ++t.malformed;
      continue;
    }
    std::size_t c2 = line.find(':', c1 + 2);
    std::string_view event =
        line.substr(c1 + 2, c2 == std::string_view::npos ? std::string_view::npos : c2 - c1 - 2);
    std::string_view fields =
        c2 == std::string_view::npos ? std::string_view() : line.substr(c2 + 1);
    if (event.empty() || event.size() > 64 || event.find(' ') != std::string_view::npos) {
      ++t.malformed;
      continue;
    }
    ++t.lines;
    int c = static_cast<int>(cpu);
    ++t.per_cpu[c][std::string(event)];
    if (event == "workqueue_execute_start") {
      std::string fn = field(fields, "function ");
      if (fn.empty()) fn = field(fields, "function=");
      if (!fn.empty() && fn.size() < 128) ++t.workqueue_functions[c][fn];
    } else if (event == "irq_handler_entry") {
      std::string name = field(fields, "name=");
      if (!name.empty() && name.size() < 128) ++t.irq_handlers[c][name];
    }
  }
  return t;
}

Metrics trace_metrics(const TraceCounts& t, const std::vector<int>& cpus) {
  Metrics m;
  auto count = [&](int cpu, std::initializer_list<const char*> events) {
    long n = 0;
    auto it = t.per_cpu.find(cpu);
    if (it == t.per_cpu.end()) return n;
    for (const char* e : events) {
      auto j = it->second.find(e);
      if (j != it->second.end()) n += j->second;
    }
    return n;
  };
  for (int cpu : cpus) {
    auto add = [&](const char* name, long v) {
      add_metric_value(m, name, "count", true, "sum", static_cast<double>(v));
    };
    add("noise.local_timer", count(cpu, {"local_timer_entry"}));
    add("noise.irq", count(cpu, {"irq_handler_entry"}));
    add("noise.softirq", count(cpu, {"softirq_entry"}));
    add("noise.ipi",
        count(cpu, {"reschedule_entry", "call_function_entry", "call_function_single_entry"}));
    add("noise.workqueue", count(cpu, {"workqueue_execute_start"}));
    add("noise.timer", count(cpu, {"timer_expire_entry", "hrtimer_expire_entry"}));
    long vm = 0;
    auto it = t.workqueue_functions.find(cpu);
    if (it != t.workqueue_functions.end()) {
      auto j = it->second.find("vmstat_update");
      if (j != it->second.end()) vm = j->second;
    }
    add("noise.vmstat_update", vm);
  }
  return m;
}

}  // namespace isolab

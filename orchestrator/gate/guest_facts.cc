#include "gate/guest_facts.h"

#include <cctype>
#include <cstdio>

#include "base/error.h"
#include "base/text.h"

namespace isolab {

namespace {

std::string strip_timestamp(std::string_view l) {
  if (l.size() >= 3 && l[0] == '<') {
    const size_t gt = l.find('>');
    if (gt != std::string_view::npos && gt <= 4) l.remove_prefix(gt + 1);
  }
  if (!l.empty() && l[0] == '[') {
    const size_t rb = l.find(']');
    if (rb != std::string_view::npos && rb < 32 &&
        l.substr(1, rb - 1).find_first_not_of(" 0123456789.") == std::string_view::npos) {
      l.remove_prefix(rb + 1);
      if (!l.empty() && l[0] == ' ') l.remove_prefix(1);
    }
  }
  return std::string(l);
}

}  // namespace

std::string ClockState::summary() const {
  std::string out = clocksource.empty() ? "clocksource unknown" : "clocksource " + clocksource;
  if (tsc_unstable) out += "; TSC unstable";
  if (sched_clock_unstable) out += "; sched_clock unstable";
  if (sched_clock_stable) out += "; sched_clock stable";
  return out;
}

namespace {

// The raw records of one guest and the problems found reading them.
struct Records {
  const std::map<std::string, std::string>& values;
  std::vector<std::string>& problems;

  // The record's value; nullptr when it is absent (a "missing" problem if required) or larger
  // than kMaxRecordBytes (a problem naming its size).
  const std::string* get(const std::string& key, bool required) const {
    auto it = values.find(key);
    if (it == values.end()) {
      if (required) problems.push_back(key + ": missing");
      return nullptr;
    }
    if (it->second.size() > kMaxRecordBytes) {
      problems.push_back(key + ": " + std::to_string(it->second.size()) +
                         " bytes, over the limit of " + std::to_string(kMaxRecordBytes));
      return nullptr;
    }
    return &it->second;
  }
};

// A CPU set record's value parsed, or nullopt with the parser's message in `problem`.
using CpuSetParser = std::optional<CpuSet> (*)(const std::string& value, std::string& problem);

// A cpulist file (/sys/devices/system/cpu/online, ...), as lib/bitmap.c bitmap_parselist().
std::optional<CpuSet> parse_list_record(const std::string& value, std::string& problem) {
  CpuListParse p = try_parse_cpulist(value, kMaxCpus);
  if (p.ok()) return p.set;
  problem = p.message;
  return std::nullopt;
}

// A hex mask file (/proc/irq/default_smp_affinity, ...), as lib/bitmap.c bitmap_parse().
std::optional<CpuSet> parse_mask_record(const std::string& value, std::string& problem) {
  try {
    return parse_cpumask_hex(trim_space(value), kMaxCpus);
  } catch (const Error& e) {
    problem = e.what();
    return std::nullopt;
  }
}

struct CpuSetRecord {
  const char* key;
  bool required;
  CpuSetParser parse;
  std::optional<CpuSet> GuestFacts::*field;
};

// The CPU set records, in the order their problems are listed.
constexpr CpuSetRecord kCpuSetRecords[] = {
    {"cpu_online", true, parse_list_record, &GuestFacts::cpu_online},
    {"cpu_possible", false, parse_list_record, &GuestFacts::cpu_possible},
    {"isolated", true, parse_list_record, &GuestFacts::isolated},
    {"nohz_full", false, parse_list_record, &GuestFacts::nohz_full},
    {"default_smp_affinity", false, parse_mask_record, &GuestFacts::default_smp_affinity},
    {"workqueue_cpumask", false, parse_mask_record, &GuestFacts::workqueue_cpumask},
};

void read_cmdline(const Records& r, GuestFacts& f) {
  const std::string* v = r.get("cmdline", true);
  if (!v) return;
  f.cmdline = std::string(trim_space(*v));
  try {
    f.cmdline_tokens = tokenize_cmdline(f.cmdline);
  } catch (const Error& e) {
    f.problems.push_back(std::string("cmdline: ") + e.what());
  }
}

void read_uname(const Records& r, GuestFacts& f) {
  if (const std::string* v = r.get("uname_r", false))
    f.uname_r = std::string(trim_space(*v)).substr(0, 200);
}

void read_cpu_sets(const Records& r, GuestFacts& f) {
  for (const CpuSetRecord& rec : kCpuSetRecords) {
    const std::string* v = r.get(rec.key, rec.required);
    if (!v) continue;
    std::string problem;
    f.*rec.field = rec.parse(*v, problem);
    if (!(f.*rec.field)) f.problems.push_back(rec.key + (": " + problem));
  }
}

// "rcu: Offload RCU callbacks from CPUs: 1-3." (kernel/rcu/tree_nocb.h): `after` is the list.
void read_rcu_offload(GuestFacts& f, std::string_view after) {
  std::string_view list = trim_space(after);
  if (!list.empty() && list.back() == '.') list.remove_suffix(1);
  if (list == "(none)") {
    f.rcu_offload = CpuSet(kMaxCpus);
    return;
  }
  CpuListParse p = try_parse_cpulist(list, kMaxCpus);
  if (p.ok())
    f.rcu_offload = p.set;
  else
    f.problems.push_back("dmesg: RCU offload line: " + p.message);
}

// "clocksource: Switched to clocksource hpet": `after` is the clocksource's name.
void read_clocksource(GuestFacts& f, std::string_view after) {
  f.clock.clocksource = std::string(trim_space(after));
}

// What a dmesg line holding one of `patterns` sets: a clock flag and/or a value read from the
// text after the pattern. Clock rules also keep the line in ClockState::lines.
struct DmesgRule {
  std::vector<std::string_view> patterns;               // any one matches; the first found counts
  bool ClockState::*flag;                               // set to true; or nullptr
  void (*read)(GuestFacts& f, std::string_view after);  // or nullptr
  bool clock_line;
};

// Applied to every dmesg line in this order (a line may match several rules).
const std::vector<DmesgRule>& dmesg_rules() {
  static const std::vector<DmesgRule> rules = {
      {{"Offload RCU callbacks from CPUs:"}, nullptr, read_rcu_offload, false},
      // "tsc: Marking TSC unstable due to ..." and the clocksource watchdog's
      // "Marking clocksource 'tsc' as unstable because ...".
      {{"Marking TSC unstable", "clocksource 'tsc' as unstable"},
       &ClockState::tsc_unstable,
       nullptr,
       true},
      {{"sched_clock: Marking unstable"}, &ClockState::sched_clock_unstable, nullptr, true},
      {{"sched_clock: Marking stable"}, &ClockState::sched_clock_stable, nullptr, true},
      {{"clocksource: Switched to clocksource "}, nullptr, read_clocksource, true},
  };
  return rules;
}

void apply_dmesg_rules(GuestFacts& f, const std::string& line) {
  for (const DmesgRule& rule : dmesg_rules()) {
    for (std::string_view pattern : rule.patterns) {
      const size_t at = line.find(pattern);
      if (at == std::string::npos) continue;
      if (rule.flag) f.clock.*rule.flag = true;
      if (rule.read) rule.read(f, std::string_view(line).substr(at + pattern.size()));
      if (rule.clock_line) f.clock.lines.push_back(line);
      break;
    }
  }
}

void read_dmesg(const Records& r, GuestFacts& f) {
  const std::string* v = r.get("dmesg", true);
  if (!v) return;
  f.has_dmesg = true;
  for (auto l : text_lines(*v)) {
    std::string s = strip_timestamp(l.substr(0, 4096));
    apply_dmesg_rules(f, s);
    f.dmesg_lines.push_back(std::move(s));
  }
}

// One line "<irq> <effective_affinity_list>" (line number `n`, 1-based).
void read_irq_affinity_line(std::string_view l, size_t n, GuestFacts& f) {
  const auto toks = split_space(l);
  if (toks.empty()) return;
  // An IRQ that is not started (x86's cascade IRQ 2, say) has an empty
  // effective_affinity_list: it lands on no CPU.
  if (toks.size() == 1 &&
      std::all_of(toks[0].begin(), toks[0].end(), [](char c) { return c >= '0' && c <= '9'; })) {
    f.irq_affinity.push_back({std::string(toks[0]), CpuSet(kMaxCpus)});
    return;
  }
  const std::string where = "irq_affinity line " + std::to_string(n) + ": ";
  if (toks.size() != 2) {
    f.problems.push_back(where + "expected '<irq> <cpulist>', got '" +
                         std::string(l.substr(0, 80)) + "'");
    return;
  }
  CpuListParse p = try_parse_cpulist(toks[1], kMaxCpus);
  if (!p.ok()) {
    f.problems.push_back(where + p.message);
    return;
  }
  f.irq_affinity.push_back({std::string(toks[0]), p.set});
}

void read_irq_affinity(const Records& r, GuestFacts& f) {
  const std::string* v = r.get("irq_affinity", false);
  if (!v) return;
  f.has_irq_affinity = true;
  size_t n = 0;
  for (auto l : text_lines(*v)) read_irq_affinity_line(l, ++n, f);
}

void read_interrupts(const Records& r, GuestFacts& f) {
  using Snapshot = std::optional<InterruptsSnapshot> GuestFacts::*;
  const std::pair<const char*, Snapshot> snapshots[] = {
      {"interrupts_before", &GuestFacts::interrupts_before},
      {"interrupts_after", &GuestFacts::interrupts_after},
  };
  for (const auto& [key, field] : snapshots) {
    const std::string* v = r.get(key, false);
    if (!v) continue;
    try {
      f.*field = parse_proc_interrupts(*v);
    } catch (const Error& e) {
      f.problems.push_back(std::string(key) + ": " + e.what());
    }
  }
}

void read_busy_window(const Records& r, GuestFacts& f) {
  const std::string* v = r.get("busy_window_s", false);
  if (!v) return;
  const std::string s(trim_space(*v));
  char* end = nullptr;
  const double d = s.empty() ? NAN : std::strtod(s.c_str(), &end);
  if (s.empty() || end != s.c_str() + s.size() || !std::isfinite(d) || d <= 0)
    f.problems.push_back("busy_window_s: '" + s.substr(0, 40) +
                         "' is not a positive number of seconds");
  else
    f.busy_window_s = d;
}

}  // namespace

GuestFacts parse_guest_facts(const std::map<std::string, std::string>& records) {
  GuestFacts f;
  const Records r{records, f.problems};
  read_cmdline(r, f);
  read_uname(r, f);
  read_cpu_sets(r, f);
  read_dmesg(r, f);
  read_irq_affinity(r, f);
  read_interrupts(r, f);
  read_busy_window(r, f);
  if (const std::string* v = r.get("runtime", false)) f.runtime_record = *v;
  return f;
}

}  // namespace isolab

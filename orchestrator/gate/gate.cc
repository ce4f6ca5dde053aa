#include "cmdline/gate.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "base/error.h"
#include "base/files.h"

namespace isolab {

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

std::vector<std::string_view> split_lines(std::string_view text) {
  std::vector<std::string_view> out;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) nl = text.size();
    std::string_view l = text.substr(pos, nl - pos);
    if (!l.empty() && l.back() == '\r') l.remove_suffix(1);
    out.push_back(l);
    pos = nl + 1;
  }
  return out;
}

std::vector<std::string_view> split_ws(std::string_view s) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
    const size_t b = i;
    while (i < s.size() && !std::isspace(static_cast<unsigned char>(s[i]))) ++i;
    if (i > b) out.push_back(s.substr(b, i - b));
  }
  return out;
}

std::optional<uint64_t> parse_u64(std::string_view s) {
  if (s.empty() || s.size() > 19) return std::nullopt;
  uint64_t n = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    n = n * 10 + static_cast<uint64_t>(c - '0');
  }
  return n;
}

// Collapses whitespace runs so that "rcu: \tOffload" and "rcu: Offload" compare equal.
std::string squash(std::string_view s) {
  std::string out;
  bool space = false;
  for (char c : trim(s)) {
    if (std::isspace(static_cast<unsigned char>(c))) {
      space = true;
      continue;
    }
    if (space && !out.empty()) out += ' ';
    space = false;
    out += c;
  }
  return out;
}

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

std::string list_or_none(const CpuSet& s) { return s.empty() ? "(none)" : s.to_list(); }

std::string fmt_rate(double r) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f/s", r);
  return buf;
}

bool contains(std::string_view hay, std::string_view needle) {
  return hay.find(needle) != std::string_view::npos;
}

}  // namespace

const InterruptRow* InterruptsSnapshot::find(std::string_view name) const {
  for (const auto& r : rows)
    if (r.name == name) return &r;
  return nullptr;
}

namespace {

// The header "           CPU0       CPU2 ..." (online CPUs only, so columns map by name).
std::vector<unsigned> parse_interrupts_header(std::string_view line, size_t lineno) {
  std::vector<unsigned> cpus;
  const auto where = "/proc/interrupts line " + std::to_string(lineno) + ": ";
  for (auto t : split_ws(line)) {
    if (t.size() < 4 || t.substr(0, 3) != "CPU")
      throw Error(where + "expected a header of CPU columns, got '" + sanitize_excerpt(line, 80) +
                  "'");
    auto n = parse_u64(t.substr(3));
    if (!n || *n >= kMaxCpus)
      throw Error(where + "bad CPU column '" + sanitize_excerpt(t, 40) + "'");
    if (std::find(cpus.begin(), cpus.end(), *n) != cpus.end())
      throw Error(where + "CPU column '" + sanitize_excerpt(t, 40) + "' repeated");
    cpus.push_back(static_cast<unsigned>(*n));
  }
  return cpus;
}

// Rows printed with one system-wide count whatever the number of CPUs: x86 ERR and MIS
// (arch_show_interrupts), arm64 Err (arch/arm64/kernel/irq.c).
bool is_system_wide_row(std::string_view name) {
  return name == "ERR" || name == "MIS" || name == "Err";
}

// "<name>:<counts...> <description>": nullopt when malformed.
std::optional<InterruptRow> parse_interrupts_row(std::string_view line,
                                                 const std::vector<unsigned>& cpus) {
  const size_t colon = line.find(':');
  if (colon == std::string_view::npos) return std::nullopt;
  InterruptRow row;
  row.name = std::string(trim(line.substr(0, colon)));
  if (row.name.empty() || row.name.size() > 64 ||
      std::any_of(row.name.begin(), row.name.end(),
                  [](char c) { return std::isspace(static_cast<unsigned char>(c)); }))
    return std::nullopt;
  std::string_view rest = line.substr(colon + 1);
  std::vector<uint64_t> values;
  size_t p = 0;
  while (values.size() < cpus.size()) {
    size_t b = p;
    while (b < rest.size() && std::isspace(static_cast<unsigned char>(rest[b]))) ++b;
    size_t e = b;
    while (e < rest.size() && !std::isspace(static_cast<unsigned char>(rest[e]))) ++e;
    auto n = parse_u64(rest.substr(b, e - b));
    if (!n) break;
    values.push_back(*n);
    p = e;
  }
  row.description = std::string(trim(rest.substr(p)));
  if (values.size() == 1 && (cpus.size() > 1 || is_system_wide_row(row.name))) {
    row.total = values[0];
  } else if (values.size() == cpus.size()) {
    for (size_t i = 0; i < values.size(); ++i) row.counts[cpus[i]] = values[i];
  } else {
    return std::nullopt;
  }
  return row;
}

}  // namespace

InterruptsSnapshot parse_proc_interrupts(std::string_view text) {
  InterruptsSnapshot s;
  const auto lines = split_lines(text);
  size_t i = 0;
  while (i < lines.size() && trim(lines[i]).empty()) ++i;
  if (i < lines.size()) s.cpus = parse_interrupts_header(lines[i], i + 1);
  if (s.cpus.empty()) throw Error("/proc/interrupts: no header of CPU columns");
  for (++i; i < lines.size(); ++i) {
    std::string_view l = trim(lines[i]);
    if (l.empty()) continue;
    if (auto row = parse_interrupts_row(l, s.cpus))
      s.rows.push_back(std::move(*row));
    else if (++s.malformed_rows == 1)
      s.first_malformed_line = i + 1;
  }
  return s;
}

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
    return parse_cpumask_hex(trim(value), kMaxCpus);
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
  f.cmdline = std::string(trim(*v));
  try {
    f.cmdline_tokens = tokenize_cmdline(f.cmdline);
  } catch (const Error& e) {
    f.problems.push_back(std::string("cmdline: ") + e.what());
  }
}

void read_uname(const Records& r, GuestFacts& f) {
  if (const std::string* v = r.get("uname_r", false))
    f.uname_r = std::string(trim(*v)).substr(0, 200);
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
  std::string_view list = trim(after);
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
  f.clock.clocksource = std::string(trim(after));
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
  for (auto l : split_lines(*v)) {
    std::string s = strip_timestamp(l.substr(0, 4096));
    apply_dmesg_rules(f, s);
    f.dmesg_lines.push_back(std::move(s));
  }
}

// One line "<irq> <effective_affinity_list>" (line number `n`, 1-based).
void read_irq_affinity_line(std::string_view l, size_t n, GuestFacts& f) {
  const auto toks = split_ws(l);
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
  for (auto l : split_lines(*v)) read_irq_affinity_line(l, ++n, f);
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
  const std::string s(trim(*v));
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
  return f;
}

namespace {

using GateRows = std::vector<GateRow>;

void add_row(GateRows& rows, std::string check, std::string expected, std::string effective,
             bool pass, std::string detail, bool warning = false) {
  rows.push_back({std::move(check), std::move(expected), std::move(effective), pass, warning,
                  std::move(detail)});
}

// Appends `item` to `out`, after `sep` unless `out` is empty.
void append(std::string& out, std::string_view sep, const std::string& item) {
  if (!out.empty()) out += sep;
  out += item;
}

std::string join(const std::vector<std::string>& items, std::string_view sep) {
  std::string out;
  for (const auto& x : items) append(out, sep, x);
  return out;
}

std::string list_and_count(const CpuSet& s) {
  return list_or_none(s) + " (" + std::to_string(s.count()) + ")";
}

// Every record problem found by parse_guest_facts(); no row when there are none.
void check_records(const GuestFacts& f, GateRows& rows) {
  if (f.problems.empty()) return;
  add_row(rows, "guest records", "complete and parsable",
          std::to_string(f.problems.size()) + " problems", false, join(f.problems, "; "));
}

// The isolation parameters (Analysis::isolation_params) as kernel parameters of /proc/cmdline.
void check_cmdline(const ExpectedIsolation& e, const GuestFacts& f, GateRows& rows) {
  std::vector<std::string> missing;
  for (const auto& req : e.required_params) {
    const bool found =
        std::any_of(f.cmdline_tokens.begin(), f.cmdline_tokens.end(),
                    [&](const CmdlineToken& t) { return !t.after_dashes && t.canonical() == req; });
    if (!found) missing.push_back(req);
  }
  const std::string req = join(e.required_params, " ");
  add_row(rows, "cmdline", req.empty() ? "(no isolation parameters)" : req, f.cmdline,
          missing.empty(),
          missing.empty() ? "" : "missing from /proc/cmdline: " + join(missing, " "));
}

// Case O5: all requested vCPUs online.
void check_online(const ExpectedIsolation& e, const GuestFacts& f, GateRows& rows) {
  if (!f.cpu_online) {
    add_row(rows, "online CPUs", list_or_none(e.online), "(unknown)", false,
            "no /sys/devices/system/cpu/online record");
    return;
  }
  const bool ok = *f.cpu_online == e.online;
  add_row(rows, "online CPUs", list_and_count(e.online), list_and_count(*f.cpu_online), ok,
          ok ? ""
             : "the guest saw " + std::to_string(f.cpu_online->count()) + " CPUs online of " +
                   std::to_string(e.vcpus) +
                   " requested (secondary CPUs not enumerated: ACPI/MP table missing, or "
                   "maxcpus=/nr_cpus=)");
}

void check_isolated(const ExpectedIsolation& e, const GuestFacts& f, GateRows& rows) {
  if (!f.isolated) {
    add_row(rows, "isolated", list_or_none(e.isolated), "(unknown)", false,
            "no /sys/devices/system/cpu/isolated record");
    return;
  }
  const bool ok = *f.isolated == e.isolated;
  add_row(rows, "isolated", list_or_none(e.isolated), list_or_none(*f.isolated), ok,
          ok ? "" : "/sys/devices/system/cpu/isolated differs (isolcpus domain CPUs)");
}

// Case O4: the nohz_full sysfs file, when nohz_full was requested; none otherwise.
void check_nohz_full(const ExpectedIsolation& e, const GuestFacts& f, GateRows& rows) {
  if (!e.nohz_full_requested) {
    const bool ok = !f.nohz_full || f.nohz_full->empty();
    add_row(rows, "nohz_full", "(none)",
            f.nohz_full ? list_or_none(*f.nohz_full) : "(no sysfs file)", ok,
            ok ? "" : "nohz_full CPUs present although none were requested");
  } else if (!f.nohz_full) {
    add_row(rows, "nohz_full", list_or_none(e.nohz_full), "(no sysfs file)", false,
            "/sys/devices/system/cpu/nohz_full does not exist: kernel built without "
            "CONFIG_NO_HZ_FULL");
  } else {
    const bool ok = *f.nohz_full == e.nohz_full;
    add_row(rows, "nohz_full", list_or_none(e.nohz_full), list_or_none(*f.nohz_full), ok,
            ok ? "" : "/sys/devices/system/cpu/nohz_full differs");
  }
}

// Case O4: kernel/sched/isolation.c prints this when nohz_full= is given without
// CONFIG_NO_HZ_FULL; a row only when it was printed.
void check_no_hz_full_config(const GuestFacts& f, GateRows& rows) {
  const bool unsupported = std::any_of(
      f.dmesg_lines.begin(), f.dmesg_lines.end(),
      [](const std::string& l) { return contains(l, "Housekeeping: nohz unsupported"); });
  if (!unsupported) return;
  add_row(rows, "CONFIG_NO_HZ_FULL", "built in", "missing", false,
          "dmesg: 'Housekeeping: nohz unsupported. Build with CONFIG_NO_HZ_FULL': the kernel "
          "ignored nohz_full; rebuild with CONFIG_NO_HZ_FULL=y (check the final .config)");
}

// The dmesg "Offload RCU callbacks from CPUs:" list; unrequested offload is a warning.
void check_rcu_offload(const ExpectedIsolation& e, const GuestFacts& f, GateRows& rows) {
  if (!e.rcu_offload) {
    if (f.rcu_offload && !f.rcu_offload->empty())
      add_row(rows, "RCU offload", "(none)", list_or_none(*f.rcu_offload), true,
              "RCU offloads CPUs although none were requested (CONFIG_RCU_NOCB_CPU_DEFAULT_ALL?)",
              true);
  } else if (!f.rcu_offload) {
    add_row(rows, "RCU offload", list_or_none(*e.rcu_offload), "(no dmesg line)", false,
            "no 'Offload RCU callbacks from CPUs:' line in dmesg: kernel without "
            "CONFIG_RCU_NOCB_CPU, or dmesg incomplete");
  } else {
    const bool ok = *f.rcu_offload == *e.rcu_offload;
    add_row(rows, "RCU offload", list_or_none(*e.rcu_offload), list_or_none(*f.rcu_offload), ok,
            ok ? "" : "dmesg 'Offload RCU callbacks from CPUs:' differs");
  }
}

void check_irq_default_affinity(const ExpectedIsolation& e, const GuestFacts& f, GateRows& rows) {
  if (f.default_smp_affinity) {
    const bool ok = *f.default_smp_affinity == e.irq_default_affinity;
    add_row(rows, "irq default affinity", list_or_none(e.irq_default_affinity),
            list_or_none(*f.default_smp_affinity), ok,
            ok ? "" : "/proc/irq/default_smp_affinity differs from irqaffinity=");
  } else if (e.irqaffinity_requested) {
    add_row(rows, "irq default affinity", list_or_none(e.irq_default_affinity), "(unknown)", false,
            "no /proc/irq/default_smp_affinity record");
  }
}

// IRQs whose effective affinity lands on a CPU to avoid: a warning, never a failure.
void check_irq_effective_affinity(const ExpectedIsolation& e, const GuestFacts& f, GateRows& rows) {
  const CpuSet avoid = e.irq_avoid | e.isolated | e.nohz_full;
  if (avoid.empty() || !f.has_irq_affinity) return;
  std::string on_isolated;
  for (const auto& irq : f.irq_affinity)
    if (irq.cpus.intersects(avoid)) append(on_isolated, ", ", irq.irq + "->" + irq.cpus.to_list());
  const std::string none = "none on " + avoid.to_list();
  add_row(rows, "irq effective affinity", none, on_isolated.empty() ? none : on_isolated, true,
          on_isolated.empty()
              ? ""
              : "IRQs with effective affinity on isolated CPUs (managed or per-CPU queue IRQs "
                "are placed there by the kernel; others are noise)",
          !on_isolated.empty());
}

void check_workqueue(const ExpectedIsolation& e, const GuestFacts& f, GateRows& rows) {
  if (!f.workqueue_cpumask) return;
  const bool ok = *f.workqueue_cpumask == e.workqueue_cpumask;
  add_row(rows, "workqueue cpumask", list_or_none(e.workqueue_cpumask),
          list_or_none(*f.workqueue_cpumask), ok,
          ok ? "" : "/sys/devices/virtual/workqueue/cpumask differs");
}

// dmesg lines that change the meaning of the command line.
bool is_isolation_message(const std::string& squashed) {
  for (std::string_view prefix : {"Housekeeping:", "isolcpus:", "NO_HZ:", "rcu_nocbs="})
    if (squashed.rfind(prefix, 0) == 0) return true;
  return false;
}

// Isolation messages in dmesg: each must be one of ExpectedIsolation::expected_kernel_messages.
void check_dmesg_messages(const ExpectedIsolation& e, const GuestFacts& f, GateRows& rows) {
  if (!f.has_dmesg) return;
  std::vector<std::string> expected;
  for (const auto& m : e.expected_kernel_messages) expected.push_back(squash(m));
  std::string unexpected, seen;
  for (const auto& l : f.dmesg_lines) {
    const std::string s = squash(l);
    if (!is_isolation_message(s)) continue;
    append(seen, " | ", s);
    if (std::find(expected.begin(), expected.end(), s) == expected.end())
      append(unexpected, " | ", s);
  }
  add_row(rows, "dmesg isolation messages", "only the expected ones",
          seen.empty() ? "(none)" : seen, unexpected.empty(),
          unexpected.empty() ? "" : "unexpected: " + unexpected);
}

// The LOC ("Local timer interrupts") rows around the busy window.
struct LocWindow {
  const InterruptRow& before;
  const InterruptRow& after;
  double seconds;

  // LOC interrupts per second on `cpu`; nullopt when a count is missing or went backwards.
  std::optional<double> rate(unsigned cpu) const {
    auto ib = before.counts.find(cpu), ia = after.counts.find(cpu);
    if (ib == before.counts.end() || ia == after.counts.end() || ia->second < ib->second)
      return std::nullopt;
    return static_cast<double>(ia->second - ib->second) / seconds;
  }
};

// The measured tick row: each of `tick_cpus` passes at <= kTickStoppedMaxPerSecond; the
// fastest housekeeping CPU is the reference for a running tick. Returns whether all passed.
bool add_tick_row(const ExpectedIsolation& e, const GuestFacts& f, const LocWindow& w,
                  const CpuSet& tick_cpus, std::string expected, GateRows& rows) {
  bool ok = true;
  std::string eff, bad;
  for (unsigned cpu : tick_cpus.cpus()) {
    const std::string name = "CPU" + std::to_string(cpu);
    auto rt = w.rate(cpu);
    append(eff, ", ", name + " " + (rt ? fmt_rate(*rt) : "?"));
    if (!rt || *rt > kTickStoppedMaxPerSecond) {
      ok = false;
      append(bad, ", ", name);
    }
  }
  std::optional<double> ref;
  for (unsigned cpu : (e.online - e.nohz_full).cpus())
    if (auto rt = w.rate(cpu); rt && (!ref || *rt > *ref)) ref = rt;
  std::string detail =
      "housekeeping reference " + (ref ? fmt_rate(*ref) : "n/a") + "; " + f.clock.summary();
  if (!ok)
    detail =
        "tick did not stop on " + bad + (e.nohz_off ? " (nohz=off given)" : "") + "; " + detail;
  add_row(rows, "tick stopped", std::move(expected), eff, ok, detail);
  return ok;
}

// The tick on the online nohz_full CPUs over the busy window. Returns whether it stopped;
// nullopt when nohz_full was not requested or the tick could not be measured.
std::optional<bool> check_tick(const ExpectedIsolation& e, const GuestFacts& f, GateRows& rows) {
  const CpuSet tick_cpus = e.nohz_full & e.online;
  if (!e.nohz_full_requested || tick_cpus.empty()) return std::nullopt;
  std::string expected =
      "<= " + fmt_rate(kTickStoppedMaxPerSecond) + " LOC on " + tick_cpus.to_list();
  const InterruptRow* b = f.interrupts_before ? f.interrupts_before->find("LOC") : nullptr;
  const InterruptRow* a = f.interrupts_after ? f.interrupts_after->find("LOC") : nullptr;
  if (!b || !a || !f.busy_window_s) {
    add_row(rows, "tick stopped", expected, "(not measured)", false,
            "needs interrupts_before/after with a LOC row and busy_window_s");
    return std::nullopt;
  }
  if (*f.busy_window_s < kMinBusyWindowS) {
    add_row(rows, "tick stopped", expected, "(window too short)", false,
            "busy window " + std::to_string(*f.busy_window_s) + " s is shorter than 1 s");
    return std::nullopt;
  }
  return add_tick_row(e, f, {*b, *a, *f.busy_window_s}, tick_cpus, std::move(expected), rows);
}

// Case O6: an unstable clock is recorded (a warning); it fails only when the tick did not stop.
void check_clock(const GuestFacts& f, std::optional<bool> tick_stopped, GateRows& rows) {
  const bool unstable = f.clock.tsc_unstable || f.clock.sched_clock_unstable;
  const bool fail = unstable && tick_stopped.has_value() && !*tick_stopped;
  std::string detail = join(f.clock.lines, " | ");
  if (fail) detail = "unstable clock and the tick did not stop: " + detail;
  add_row(rows, "clock", "tick can stop", f.clock.summary(), !fail, detail, unstable && !fail);
}

// "PASS", or "FAIL: " and the first three failed rows as "<check>: <detail>" (or their
// expected and effective values when there is no detail).
std::string gate_reason(const GateRows& rows) {
  std::vector<std::string> failed;
  for (const auto& row : rows)
    if (!row.pass)
      failed.push_back(row.check + (row.detail.empty()
                                        ? ": expected " + row.expected + ", got " + row.effective
                                        : ": " + row.detail));
  if (failed.empty()) return "PASS";
  failed.resize(std::min<size_t>(failed.size(), 3));
  return "FAIL: " + join(failed, "; ");
}

}  // namespace

GateReport evaluate_gate(const ExpectedIsolation& e, const GuestFacts& f) {
  GateReport r;
  check_records(f, r.rows);
  check_cmdline(e, f, r.rows);
  check_online(e, f, r.rows);
  check_isolated(e, f, r.rows);
  check_nohz_full(e, f, r.rows);
  check_no_hz_full_config(f, r.rows);
  check_rcu_offload(e, f, r.rows);
  check_irq_default_affinity(e, f, r.rows);
  check_irq_effective_affinity(e, f, r.rows);
  check_workqueue(e, f, r.rows);
  check_dmesg_messages(e, f, r.rows);
  const std::optional<bool> tick_stopped = check_tick(e, f, r.rows);
  check_clock(f, tick_stopped, r.rows);
  r.pass = std::all_of(r.rows.begin(), r.rows.end(), [](const GateRow& x) { return x.pass; });
  r.reason = gate_reason(r.rows);
  return r;
}

nlohmann::json to_json(const GateReport& r) {
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& x : r.rows)
    rows.push_back({{"check", x.check},
                    {"expected", x.expected},
                    {"effective", x.effective},
                    {"pass", x.pass},
                    {"warning", x.warning},
                    {"detail", x.detail}});
  return {{"pass", r.pass}, {"reason", r.reason}, {"rows", rows}};
}

std::string to_text(const GateReport& r) {
  auto clip = [](const std::string& s, size_t w) {
    return s.size() <= w ? s + std::string(w - s.size(), ' ') : s.substr(0, w - 3) + "...";
  };
  std::ostringstream o;
  o << clip("check", 26) << " " << clip("expected", 28) << " " << clip("effective", 28)
    << " result\n";
  for (const auto& x : r.rows) {
    o << clip(x.check, 26) << " " << clip(x.expected, 28) << " " << clip(x.effective, 28) << " "
      << (x.pass ? (x.warning ? "WARN" : "PASS") : "FAIL");
    if (!x.detail.empty()) o << "  " << x.detail;
    o << "\n";
  }
  o << (r.pass ? "gate: PASS" : "gate: " + r.reason) << "\n";
  return o.str();
}

}  // namespace isolab

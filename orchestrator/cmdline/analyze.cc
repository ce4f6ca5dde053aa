#include "cmdline/analyze.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <sstream>

#include "base/error.h"
#include "cmdline/customer_kernel.h"
#include "cmdline/nearest_name.h"
#include "cmdline/vcpus.h"

namespace isolab {

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// Strips "<N>" and "[    0.000000] " prefixes of a dmesg line; sets has_timestamp.
std::string_view strip_dmesg_prefix(std::string_view l, bool& has_timestamp) {
  has_timestamp = false;
  if (l.size() >= 3 && l[0] == '<') {
    const size_t gt = l.find('>');
    if (gt != std::string_view::npos && gt <= 4) l.remove_prefix(gt + 1);
  }
  if (!l.empty() && l[0] == '[') {
    const size_t rb = l.find(']');
    if (rb != std::string_view::npos && rb < 32) {
      const std::string_view inner = l.substr(1, rb - 1);
      if (inner.find_first_not_of(" 0123456789.") == std::string_view::npos &&
          inner.find('.') != std::string_view::npos) {
        has_timestamp = true;
        l.remove_prefix(rb + 1);
        if (!l.empty() && l[0] == ' ') l.remove_prefix(1);
      }
    }
  }
  return l;
}

// Lenient integer as get_option()/simple_strtol() read it: optional '-', decimal digits.
std::optional<long> get_option_int(const std::optional<std::string>& v) {
  if (!v || v->empty()) return std::nullopt;
  size_t i = 0;
  bool neg = false;
  if ((*v)[0] == '-') {
    neg = true;
    i = 1;
  }
  long n = 0;
  size_t digits = 0;
  for (; i < v->size() && std::isdigit(static_cast<unsigned char>((*v)[i])) && digits < 9;
       ++i, ++digits)
    n = n * 10 + ((*v)[i] - '0');
  if (digits == 0) return std::nullopt;
  return neg ? -n : n;
}

enum HkType { kTimer, kRcu, kMisc, kSched, kTick, kDomain, kWq, kManagedIrq, kKthread, kHkMax };
constexpr unsigned bit(HkType t) { return 1u << t; }

struct Model {
  Model(const AnalyzeOptions& o, Analysis& an) : opt(o), a(an) {}
  const AnalyzeOptions& opt;
  Analysis& a;
  unsigned width = 1;  // CPU list parse width
  unsigned setup_max_cpus = 0;
  CpuSet possible, present;
  unsigned hk_flags = 0;
  std::array<CpuSet, kHkMax> hk;
  unsigned isolcpus_applied_flags = 0;
  bool nocb_setup = false;
  CpuSet nocb_mask;
  bool ver_at_least(int maj, int min) const {
    return opt.kernel.major > maj || (opt.kernel.major == maj && opt.kernel.minor >= min);
  }
  void msg(std::string m) { a.expected_kernel_messages.push_back(std::move(m)); }
  void warn(std::string w) { a.warnings.push_back(std::move(w)); }

  // kernel/sched/isolation.c housekeeping_setup().
  void housekeeping_setup(const std::string& param, std::string_view list, unsigned flags) {
    if ((flags & bit(kTick)) && !(hk_flags & bit(kTick)) && !opt.kernel.no_hz_full) {
      msg("Housekeeping: nohz unsupported. Build with CONFIG_NO_HZ_FULL");
      warn(param +
           ": the kernel is assumed to be built without CONFIG_NO_HZ_FULL; nohz_full is "
           "ignored");
      return;
    }
    CpuListParse p = try_parse_cpulist(list, width);
    if (!p.ok()) {
      msg("Housekeeping: nohz_full= or isolcpus= incorrect CPU range");
      warn(param + ": " + p.message + "; the kernel ignores the whole parameter");
      return;
    }
    CpuSet non_hk = p.set;
    if (!non_hk.subset_of(possible)) {
      const std::string beyond = (non_hk - possible).to_list();
      if (ver_at_least(5, 13)) {
        warn(param + ": CPUs " + beyond + " do not exist (" + std::to_string(possible.nbits()) +
             " possible CPUs); the kernel trims the list to the possible CPUs");
      } else {
        msg("Housekeeping: nohz_full= or isolcpus= incorrect CPU range");
        warn(param + ": CPUs " + beyond +
             " are not possible; kernels before 5.13 ignore the whole parameter");
        return;
      }
    }
    non_hk = (non_hk & possible).resized(possible.nbits());
    CpuSet staging = possible - non_hk;
    const auto first = (present & staging).first();
    if (!first || *first >= std::max(setup_max_cpus, 1u)) {
      staging.set(0);
      non_hk.reset(0);
      if (!hk_flags) msg("Housekeeping: must include one present CPU, using boot CPU:0");
      warn(param +
           ": no present housekeeping CPU would be left; the kernel keeps the boot CPU 0 "
           "as housekeeping");
    }
    if (non_hk.empty()) {
      warn(param + ": no CPU left to isolate; the parameter has no effect");
      return;
    }
    if (!hk_flags) {
      for (unsigned t = 0; t < kHkMax; ++t)
        if (flags & (1u << t)) hk[t] = staging;
    } else {
      const unsigned common = flags & hk_flags;
      for (unsigned t = 0; t < kHkMax; ++t)
        if ((common & (1u << t)) && !(staging == hk[t])) {
          msg("Housekeeping: nohz_full= must match isolcpus=");
          warn(param +
               ": its CPUs differ from an earlier isolcpus=/nohz_full=; the kernel "
               "ignores it");
          return;
        }
      for (unsigned t = 0; t < kHkMax; ++t)
        if ((flags & ~hk_flags) & (1u << t)) hk[t] = staging;
    }
    if ((flags & bit(kTick)) && !(hk_flags & bit(kTick))) {
      a.nohz_full = non_hk;
      a.nohz_full_active = true;
    }
    hk_flags |= flags;
  }

  // housekeeping_isolcpus_setup().
  void isolcpus(const CmdlineToken& t) {
    const std::string& s = *t.value;
    size_t p = 0;
    unsigned flags = 0;
    auto isalpha_at = [&](size_t i) {
      return i < s.size() && std::isalpha(static_cast<unsigned char>(s[i]));
    };
    while (isalpha_at(p)) {
      if (s.compare(p, 5, "nohz,") == 0) {
        p += 5;
        flags |= bit(kTick);
        continue;
      }
      if (s.compare(p, 7, "domain,") == 0) {
        p += 7;
        flags |= bit(kDomain);
        continue;
      }
      if (s.compare(p, 12, "managed_irq,") == 0) {
        p += 12;
        flags |= bit(kManagedIrq);
        continue;
      }
      const size_t begin = p;
      bool illegal = false;
      for (; p < s.size() && s[p] != ','; ++p)
        if (!std::isalpha(static_cast<unsigned char>(s[p])) && s[p] != '_') illegal = true;
      const std::string flag = s.substr(begin, p - begin);
      if (illegal) {
        msg("isolcpus: Invalid flag " + flag);
        warn(t.raw + ": flag '" + flag +
             "' has characters other than letters and '_'; the kernel rejects the parameter");
        return;
      }
      msg("isolcpus: Skipped unknown flag " + flag);
      const auto near = nearest_name(flag, {"nohz", "domain", "managed_irq"});
      warn(t.raw + ": unknown flag '" + flag +
           "' is skipped by the kernel: the CPUs get only the known flags given, domain alone "
           "when there is none" +
           (near ? "; did you mean " + *near + "?" : ""));
      if (p >= s.size()) {
        warn(t.raw +
             ": no CPU list after the flags (the 6.1 kernel then reads past the end of "
             "the parameter); treated as an empty list");
        return;
      }
      ++p;
    }
    if (!flags) flags = bit(kDomain);
    const unsigned before = hk_flags;
    housekeeping_setup(t.raw, std::string_view(s).substr(std::min(p, s.size())), flags);
    if (hk_flags != before || (hk_flags & flags) == flags) isolcpus_applied_flags |= flags;
  }

  // rcu_nocb_setup() in kernel/rcu/tree_nocb.h.
  void rcu_nocbs(const CmdlineToken& t) {
    nocb_mask = CpuSet(width);
    if (t.value) {
      CpuListParse p = try_parse_cpulist(*t.value, width);
      if (!p.ok()) {
        msg("rcu_nocbs= bad CPU range, all CPUs set");
        warn(t.raw + ": " + p.message + "; the kernel offloads all CPUs instead");
        nocb_mask = CpuSet::all(width);
      } else {
        nocb_mask = p.set;
      }
    }
    nocb_setup = true;
  }

  // irq_affinity_setup() in kernel/irq/irqdesc.c.
  void irqaffinity(const CmdlineToken& t) {
    CpuListParse p = try_parse_cpulist(*t.value, width);
    if (!p.ok())
      warn(t.raw + ": " + p.message + "; the kernel silently keeps the CPUs parsed before it (" +
           (p.set.to_list().empty() ? std::string("none") : p.set.to_list()) + ") plus CPU 0");
    CpuSet m = p.set.resized(std::max(width, 1u));
    m.set(0);
    if (!t.value->empty() && !p.set.test(0) && p.ok())
      warn(t.raw + ": the kernel always adds the boot CPU 0 to the default IRQ affinity");
    a.irqaffinity = m;
    a.irqaffinity_given = true;
  }
};

}  // namespace

std::optional<std::string> find_cmdline_in_dmesg(std::string_view text) {
  std::optional<std::string> kernel_line;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) nl = text.size();
    std::string_view l = text.substr(pos, nl - pos);
    if (!l.empty() && l.back() == '\r') l.remove_suffix(1);
    bool ts = false;
    l = strip_dmesg_prefix(l, ts);
    constexpr std::string_view kArch = "Command line: ";
    constexpr std::string_view kInit = "Kernel command line: ";
    if (l.substr(0, kArch.size()) == kArch) return std::string(l.substr(kArch.size()));
    if (!kernel_line && l.substr(0, kInit.size()) == kInit)
      kernel_line = std::string(l.substr(kInit.size()));
    pos = nl + 1;
  }
  return kernel_line;
}

namespace {

// Tokenizes source_line as the kernel keeps it (the first 2047 bytes); returns a `dropped`
// entry for every parameter the cut reaches.
std::vector<ParamVerdict> tokenize_as_kept(Analysis& a) {
  a.cmdline_bytes = a.source_line.size();
  const size_t keep = kX86CmdlineKeptBytes;
  if (a.source_line.size() <= keep) {
    a.tokens = tokenize_cmdline(a.source_line);
    return {};
  }
  a.truncated = true;
  a.tokens = tokenize_cmdline(std::string_view(a.source_line).substr(0, keep));
  const std::string limit = "x86-64 keeps bytes 0-2046 (COMMAND_LINE_SIZE 2048 with the NUL)";
  std::vector<ParamVerdict> cut;
  for (const CmdlineToken& t : tokenize_cmdline(a.source_line)) {
    if (t.offset + t.raw.size() <= keep) continue;
    if (t.offset >= keep) {
      cut.push_back({t.raw, "starts at byte " + std::to_string(t.offset) +
                                ", past the cut: " + limit + "; the kernel never sees it"});
      continue;
    }
    const std::string seen = a.source_line.substr(t.offset, keep - t.offset);
    cut.push_back({t.raw, "cut at byte 2047: " + limit + "; the kernel sees only '" + seen + "'"});
    a.warnings.push_back("'" + t.raw + "' is cut at byte 2047; the kernel sees only '" + seen +
                         "' and the analysis uses that");
  }
  a.warnings.push_back("command line is " + std::to_string(a.source_line.size()) +
                       " bytes; the kernel keeps the first 2047 (x86-64 COMMAND_LINE_SIZE 2048 "
                       "with the NUL): " +
                       std::to_string(cut.size()) +
                       " parameter(s) past the cut are dropped and the isolation is computed "
                       "without them");
  return cut;
}

}  // namespace

std::optional<std::string> cmdline_cut_message(std::string_view line, std::string_view what) {
  if (line.size() <= kX86CmdlineKeptBytes) return std::nullopt;
  std::string first;
  for (const CmdlineToken& t : tokenize_cmdline(line))
    if (t.offset + t.raw.size() > kX86CmdlineKeptBytes) {
      first = t.raw.size() > 60 ? t.raw.substr(0, 57) + "..." : t.raw;
      break;
    }
  return std::string(what) + " is " + std::to_string(line.size()) +
         " bytes; x86-64 keeps 2047 (COMMAND_LINE_SIZE 2048 with the NUL): '" + first +
         "' and what follows would be lost";
}

namespace {

bool is(const CmdlineToken* t, std::string_view n) { return t->normalized == n; }

// Step 1: the line to analyze, from one command line or from dmesg text.
void read_source_line(std::string_view text, Analysis& a) {
  if (text.size() > kMaxCmdlineBytes * 16)
    throw Error("input of " + std::to_string(text.size()) + " bytes is too large to analyze");
  if (auto l = find_cmdline_in_dmesg(text)) {
    a.source_line = *l;
    a.from_dmesg = true;
    return;
  }
  size_t nonempty = 0;
  bool any_ts = false;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) nl = text.size();
    std::string_view l = text.substr(pos, nl - pos);
    bool ts = false;
    strip_dmesg_prefix(l, ts);
    any_ts = any_ts || ts;
    if (!trim(l).empty()) ++nonempty;
    pos = nl + 1;
  }
  if (any_ts)
    throw Error(
        "input looks like dmesg (timestamped lines) but has no 'Command line:' or "
        "'Kernel command line:' line");
  if (nonempty > 1)
    throw Error("input has " + std::to_string(nonempty) +
                " non-empty lines; expected one kernel command line or dmesg text");
  a.source_line = std::string(trim(text));
}

// Step 2: each token kept, dropped or replaced by the classification table; returns the kept.
std::vector<const CmdlineToken*> classify_tokens(Analysis& a) {
  std::vector<const CmdlineToken*> kept_tokens;
  for (const CmdlineToken& t : a.tokens) {
    if (t.after_dashes) {
      a.dropped.push_back({t.raw, "argument for the host's init (after --)"});
      continue;
    }
    if (t.name.empty()) {
      a.dropped.push_back({t.raw, "empty parameter name"});
      continue;
    }
    const ParamRule* r = find_rule(t.normalized);
    if (!r) {
      a.kept.push_back(t.raw);
      kept_tokens.push_back(&t);
      a.warnings.push_back("unknown parameter '" + t.raw +
                           "' kept as written; check that it means the same in the guest");
      continue;
    }
    switch (r->action) {
      case ParamAction::kKept:
        a.kept.push_back(t.raw);
        kept_tokens.push_back(&t);
        if (r->isolation) a.isolation_params.push_back(t.canonical());
        break;
      case ParamAction::kDropped:
        a.dropped.push_back({t.raw, std::string(r->reason)});
        break;
      case ParamAction::kReplaced:
        a.replaced.push_back({t.raw, std::string(r->reason)});
        break;
    }
  }
  return kept_tokens;
}

// CPU counts the kernel works with.
struct CpuCounts {
  unsigned possible = 1;        // nr_cpu_ids after every limit
  unsigned present = 1;         // vCPUs that exist, up to possible
  unsigned setup_max_cpus = 1;  // maxcpus= (0 for nosmp)
};

// possible_cpus= (arch/x86/kernel/smpboot.c prefill_possible_map()); nullopt when absent.
std::optional<unsigned> possible_cpus_param(const std::vector<const CmdlineToken*>& kept,
                                            Analysis& a) {
  std::optional<unsigned> possible_cpus;
  for (const CmdlineToken* t : kept) {
    if (!is(t, "possible_cpus")) continue;
    auto n = get_option_int(t->value);
    if (n && *n > 0)
      possible_cpus = static_cast<unsigned>(std::min<long>(*n, kMaxCpus));
    else
      a.warnings.push_back(t->raw + ": not a positive number; ignored");
  }
  return possible_cpus;
}

// Step 3: CONFIG_NR_CPUS, nr_cpus=, maxcpus=, nosmp, possible_cpus= against the vCPUs
// (arch/x86/kernel/smpboot.c prefill_possible_map(), kernel/smp.c); sets the counts in `a`.
CpuCounts count_cpus(const AnalyzeOptions& opt, const std::vector<const CmdlineToken*>& kept,
                     Analysis& a) {
  const KernelAssumptions& k = opt.kernel;
  if (k.major < 4 || (k.major == 4 && k.minor < 15))
    a.warnings.push_back("kernel " + std::to_string(k.major) + "." + std::to_string(k.minor) +
                         " is older than 4.15; CPU list handling is modelled as 4.15");
  const std::optional<unsigned> possible_cpus = possible_cpus_param(kept, a);
  a.nr_cpus_required = std::min(std::max(a.vcpus, possible_cpus.value_or(0u)), kMaxGuestNrCpus);
  a.nr_cpus_config = std::clamp(k.nr_cpus_config.value_or(a.nr_cpus_required), 1u, kMaxCpus);
  const unsigned nr_cpus_config = a.nr_cpus_config;
  unsigned nr_cpu_ids = nr_cpus_config;
  unsigned setup_max_cpus = nr_cpus_config;
  for (const CmdlineToken* t : kept) {
    if (is(t, "nr_cpus")) {
      auto n = get_option_int(t->value);
      if (n && *n > 0 && static_cast<unsigned long>(*n) < nr_cpu_ids)
        nr_cpu_ids = static_cast<unsigned>(*n);
      else if (!n)
        a.warnings.push_back(t->raw + ": not a number; ignored by the kernel");
    } else if (is(t, "maxcpus")) {
      auto n = get_option_int(t->value);
      if (n && *n >= 0)
        setup_max_cpus = static_cast<unsigned>(std::min<long>(*n, kMaxCpus));
      else
        a.warnings.push_back(t->raw + ": not a number; ignored by the kernel");
    } else if (is(t, "nosmp")) {
      setup_max_cpus = 0;
    }
  }
  unsigned possible = possible_cpus.value_or(a.vcpus);
  if (possible > nr_cpu_ids) {
    a.warnings.push_back(
        std::to_string(possible) + " CPUs exceed the limit of " + std::to_string(nr_cpu_ids) +
        (nr_cpu_ids < nr_cpus_config ? " set by nr_cpus=" : " of the kernel's CONFIG_NR_CPUS") +
        ": CPUs >= " + std::to_string(nr_cpu_ids) + " are not used");
    possible = nr_cpu_ids;
  }
  if (setup_max_cpus == 0) possible = 1;
  a.possible = possible;
  const unsigned present_n = std::min(a.vcpus, possible);
  a.online = std::min(present_n, std::max(setup_max_cpus, 1u));
  if (a.online < a.vcpus)
    a.warnings.push_back("only " + std::to_string(a.online) + " of " + std::to_string(a.vcpus) +
                         " vCPUs come online at boot (nr_cpus=/maxcpus=/possible_cpus=/nosmp)");
  return {possible, present_n, setup_max_cpus};
}

// Step 4: the kernel's model of the CPUs, before any isolation parameter is applied.
void init_model(Model& m, const CpuCounts& c) {
  m.setup_max_cpus = c.setup_max_cpus;
  m.possible = CpuSet::all(c.possible);
  m.present = CpuSet(c.possible);
  for (unsigned cpu = 0; cpu < c.present; ++cpu) m.present.set(cpu);
  m.width = m.ver_at_least(6, 1) ? c.possible : m.a.nr_cpus_config;
  m.a.nohz_full = CpuSet(c.possible);
  m.a.irqaffinity = CpuSet::all(c.possible);
}

// What the line asked for, whether or not the kernel honoured it.
struct Requested {
  bool nohz_full = false;
  bool isolcpus = false;
  bool rcu_nocbs = false;
};

// Step 5: the isolation parameters in command-line order, as their __setup() handlers do.
Requested apply_isolation_params(Model& m, const std::vector<const CmdlineToken*>& kept) {
  Requested req;
  for (const CmdlineToken* t : kept) {
    // __setup("isolcpus=") etc. match only with the '=' (init/main.c obsolete_checksetup()).
    const bool list_param = is(t, "isolcpus") || is(t, "nohz_full") || is(t, "irqaffinity");
    if (list_param && !t->value) {
      m.warn("'" + t->raw +
             "' has no '=': the kernel does not recognise it and "
             "passes it to init");
      continue;
    }
    if (is(t, "isolcpus")) {
      req.isolcpus = true;
      if (t->value->rfind("nohz,", 0) == 0 || t->value->find(",nohz,") != std::string::npos)
        req.nohz_full = true;
      m.isolcpus(*t);
    } else if (is(t, "nohz_full")) {
      req.nohz_full = true;
      m.housekeeping_setup(
          t->raw, *t->value,
          bit(kTick) | bit(kWq) | bit(kTimer) | bit(kRcu) | bit(kMisc) | bit(kKthread));
    } else if (is(t, "rcu_nocbs")) {
      req.rcu_nocbs = true;
      m.rcu_nocbs(*t);
    } else if (is(t, "irqaffinity")) {
      m.irqaffinity(*t);
    } else if (is(t, "nohz")) {
      m.a.nohz_off = t->value && *t->value == "off";
    }
  }
  m.a.irqaffinity = m.a.irqaffinity.resized(m.a.possible);
  m.a.nohz_full = m.a.nohz_full.resized(m.a.possible);
  return req;
}

// Step 6: tick_nohz_init() in kernel/time/tick-sched.c.
void tick_nohz_init(Model& m) {
  Analysis& a = m.a;
  if (!a.nohz_full_active) return;
  if (m.opt.kernel.pm_sleep_smp && a.nohz_full.test(0)) {
    m.msg("NO_HZ: Clearing 0 from nohz_full range for timekeeping");
    a.nohz_full.reset(0);
  }
  m.msg("NO_HZ: Full dynticks CPUs: " + a.nohz_full.to_list() + ".");
}

// Step 7: rcu_init_nohz() in kernel/rcu/tree_nocb.h.
void rcu_init_nohz(Model& m) {
  Analysis& a = m.a;
  a.rcu_nocbs = CpuSet(a.possible);
  if (a.nohz_full_active && !a.nohz_full.empty()) m.nocb_setup = true;
  if (!m.nocb_setup) return;
  CpuSet mask = m.nocb_mask;
  if (a.nohz_full_active) mask = mask | a.nohz_full;
  if (!mask.subset_of(m.possible)) {
    m.msg(
        "rcu: \tNote: kernel parameter 'rcu_nocbs=', 'nohz_full', or 'isolcpus=' contains "
        "nonexistent CPUs.");
    m.warn("rcu_nocbs/nohz_full name CPUs " + (mask - m.possible).to_list() +
           " that do not exist; RCU trims them");
  }
  a.rcu_nocbs = (mask & m.possible).resized(a.possible);
  a.rcu_offload_active = true;
  m.msg(a.rcu_nocbs.empty()
            ? std::string("rcu: \tOffload RCU callbacks from CPUs: (none).")
            : "rcu: \tOffload RCU callbacks from CPUs: " + a.rcu_nocbs.to_list() + ".");
}

// Step 8: the sets sysfs and the workqueue code end up with (kernel/sched/isolation.c).
void final_sets(Model& m) {
  Analysis& a = m.a;
  const unsigned possible = a.possible;
  const unsigned f = m.hk_flags;
  a.isolated =
      (f & bit(kDomain)) ? (m.possible - m.hk[kDomain]).resized(possible) : CpuSet(possible);
  a.housekeeping = (m.possible - (a.isolated | a.nohz_full)).resized(possible);
  a.managed_irq_isolated = (f & bit(kManagedIrq))
                               ? (m.possible - m.hk[kManagedIrq]).resized(possible)
                               : CpuSet(possible);
  CpuSet wq = (f & bit(kWq)) ? m.hk[kWq] : m.possible;
  if (f & bit(kDomain)) wq = wq & m.hk[kDomain];
  a.workqueue_cpumask = wq.resized(possible);
  const unsigned fl = m.isolcpus_applied_flags;
  if (fl & bit(kTick)) a.isolcpus_flags.emplace_back("nohz");
  if (fl & bit(kDomain)) a.isolcpus_flags.emplace_back("domain");
  if (fl & bit(kManagedIrq)) a.isolcpus_flags.emplace_back("managed_irq");
}

// Step 9: warnings a kernel developer wants about the resulting isolation.
void isolation_warnings(Model& m, const Requested& req) {
  Analysis& a = m.a;
  const CpuSet isolating = a.isolated | a.nohz_full;
  if (a.nohz_full.test(0))
    m.warn(
        "boot CPU 0 is in nohz_full: it keeps timekeeping and housekeeping "
        "duties, so its tick does not stop reliably");
  if (a.isolated.test(0))
    m.warn("boot CPU 0 is in isolcpus: unbound work and boot-time IRQs land there");
  if (a.irqaffinity_given && a.irqaffinity.intersects(isolating))
    m.warn("irqaffinity CPUs " + (a.irqaffinity & isolating).to_list() +
           " overlap isolated/nohz_full CPUs");
  if (a.housekeeping.empty() || (a.housekeeping & m.present).empty())
    m.warn("no housekeeping CPU left");
  if (a.nohz_full_active && !a.nohz_full.empty()) {
    if (!req.rcu_nocbs)
      m.warn(
          "nohz_full without rcu_nocbs: in 6.1 NO_HZ_FULL selects RCU_NOCB_CPU "
          "and rcu_init_nohz() offloads the nohz_full CPUs anyway (" +
          a.rcu_nocbs.to_list() + ")");
    else if (!a.nohz_full.subset_of(m.nocb_mask))
      m.warn("rcu_nocbs does not cover nohz_full CPUs " + (a.nohz_full - m.nocb_mask).to_list() +
             "; the kernel offloads them anyway");
    if (a.nohz_off)
      m.warn(
          "nohz=off with nohz_full: dynticks are disabled, so the tick never "
          "stops on the nohz_full CPUs");
  }
  if ((req.nohz_full || req.isolcpus) && isolating.empty())
    m.warn("isolation parameters were given but no CPU ends up isolated");
  for (const LineHint& h : a.hints) {
    const CpuSet both = h.housekeeping.resized(a.possible) & isolating;
    if (!h.error.empty())
      m.warn(h.param + ": " + h.error);
    else if (!both.empty())
      m.warn(h.param + " names CPUs " + both.to_list() +
             " as housekeeping, but the line isolates them");
  }
}

}  // namespace

Analysis analyze(std::string_view text, const AnalyzeOptions& opt) {
  // A file saved by an editor that marks UTF-8 starts with a BOM, which the first parameter's
  // name would otherwise carry ("\xEF\xBB\xBFisolcpus" is no isolcpus).
  if (constexpr std::string_view kBom = "\xEF\xBB\xBF"; text.substr(0, kBom.size()) == kBom)
    text.remove_prefix(kBom.size());
  Analysis a;
  read_source_line(text, a);
  const std::vector<ParamVerdict> cut = tokenize_as_kept(a);
  std::vector<const CmdlineToken*> kept = classify_tokens(a);
  a.dropped.insert(a.dropped.end(), cut.begin(), cut.end());
  const CustomerKernel customer = customer_kernel_of(text, opt, a);
  drop_customer_rejections(customer, opt, kept, a);
  a.hints = cpu_hints(a.tokens);
  derive_vcpus(opt, kept, a);
  const CpuCounts counts = count_cpus(opt, kept, a);
  Model m(opt, a);
  init_model(m, counts);
  const Requested requested = apply_isolation_params(m, kept);
  tick_nohz_init(m);
  rcu_init_nohz(m);
  final_sets(m);
  isolation_warnings(m, requested);
  compare_customer_reports(customer, a);
  return a;
}

ExpectedIsolation expected_isolation(const Analysis& a) {
  ExpectedIsolation e;
  e.vcpus = a.vcpus;
  e.possible = CpuSet::all(a.possible);
  e.online = CpuSet(a.possible);
  for (unsigned c = 0; c < a.online; ++c) e.online.set(c);
  e.housekeeping = a.housekeeping;
  e.isolated = a.isolated;
  e.nohz_full_requested = false;
  for (const auto& t : a.tokens) {
    if (t.after_dashes) continue;
    if (t.normalized == "nohz_full" && t.value) e.nohz_full_requested = true;
    if (t.normalized == "isolcpus" && t.value &&
        (t.value->rfind("nohz,", 0) == 0 || t.value->find(",nohz,") != std::string::npos))
      e.nohz_full_requested = true;
  }
  e.nohz_full = a.nohz_full;
  if (a.rcu_offload_active) e.rcu_offload = a.rcu_nocbs;
  e.irq_default_affinity = a.irqaffinity;
  e.irqaffinity_requested = a.irqaffinity_given;
  e.irq_avoid = e.online - a.irqaffinity;
  e.managed_irq = !a.managed_irq_isolated.empty();
  e.managed_irq_avoid = a.managed_irq_isolated;
  e.workqueue_cpumask = a.workqueue_cpumask;
  e.nohz_off = a.nohz_off;
  e.required_params = a.isolation_params;
  e.expected_kernel_messages = a.expected_kernel_messages;
  return e;
}

}  // namespace isolab

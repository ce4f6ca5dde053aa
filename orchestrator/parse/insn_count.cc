#include "parse/insn_count.h"

#include <algorithm>
#include <charconv>
#include <map>

#include "base/error.h"
#include "parse/text_util.h"

namespace isolab {

namespace {

using parse_detail::quote;
constexpr unsigned kMaxVcpus = 4096;  // the plugin's own limit

// A bad line: the error names its number and quotes it.
struct LineError {
  std::string what;
};

std::uint64_t to_u64(std::string_view s, std::string_view field, int base = 10) {
  std::uint64_t v = 0;
  if (s.empty() || s.front() == '+' || s.front() == '-')
    throw LineError{std::string(field) + ": not a number"};
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v, base);
  if (ec == std::errc::result_out_of_range)
    throw LineError{std::string(field) + ": overflows 64 bits"};
  if (ec != std::errc() || end != s.data() + s.size())
    throw LineError{std::string(field) + ": not a number"};
  return v;
}

// Single-space separated fields; an empty field (two spaces, a leading space) is malformed.
std::vector<std::string_view> fields(std::string_view line) {
  std::vector<std::string_view> out;
  std::size_t start = 0;
  for (;;) {
    std::size_t sp = line.find(' ', start);
    std::string_view f = line.substr(start, sp == std::string_view::npos ? sp : sp - start);
    if (f.empty()) throw LineError{"empty field"};
    out.push_back(f);
    if (sp == std::string_view::npos) return out;
    start = sp + 1;
  }
}

// The key=value fields from index `from` on; a duplicate key or a field without '=' throws.
using Keys = std::map<std::string_view, std::string_view>;
Keys keys_of(const std::vector<std::string_view>& f, std::size_t from) {
  Keys k;
  for (std::size_t i = from; i < f.size(); ++i) {
    auto eq = f[i].find('=');
    if (eq == std::string_view::npos || eq == 0)
      throw LineError{"field " + quote(f[i]) + " is not key=value"};
    if (!k.emplace(f[i].substr(0, eq), f[i].substr(eq + 1)).second)
      throw LineError{"duplicate key " + std::string(f[i].substr(0, eq))};
  }
  return k;
}

std::string_view need(const Keys& k, std::string_view key) {
  auto it = k.find(key);
  if (it == k.end()) throw LineError{"missing " + std::string(key) + "="};
  return it->second;
}

std::uint64_t need_u64(const Keys& k, std::string_view key) { return to_u64(need(k, key), key); }

std::optional<std::uint64_t> maybe_u64(const Keys& k, std::string_view key) {
  auto it = k.find(key);
  if (it == k.end()) return std::nullopt;
  return to_u64(it->second, key);
}

unsigned need_vcpu(const Keys& k, unsigned vcpus) {
  std::uint64_t v = need_u64(k, "vcpu");
  if (v >= vcpus)
    throw LineError{"vcpu=" + std::to_string(v) + " but the file has " + std::to_string(vcpus) +
                    " vCPUs"};
  return static_cast<unsigned>(v);
}

// "u0:k0,u1:k1,..." with exactly vcpus entries.
std::vector<InsnCounts> parse_counts(std::string_view s, unsigned vcpus) {
  std::vector<InsnCounts> out;
  std::size_t start = 0;
  while (start <= s.size() && out.size() <= vcpus) {
    std::size_t comma = s.find(',', start);
    std::string_view e = s.substr(start, comma == std::string_view::npos ? comma : comma - start);
    auto colon = e.find(':');
    if (colon == std::string_view::npos) throw LineError{"counts: entry " + quote(e) + " not u:k"};
    out.push_back({to_u64(e.substr(0, colon), "counts"), to_u64(e.substr(colon + 1), "counts")});
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  if (out.size() > vcpus)
    throw LineError{"counts: more than " + std::to_string(vcpus) + " entries for " +
                    std::to_string(vcpus) + " vCPUs"};
  if (out.size() < vcpus)
    throw LineError{"counts: " + std::to_string(out.size()) + " entries for " +
                    std::to_string(vcpus) + " vCPUs"};
  return out;
}

// "f0:u0:k0,..." with exactly vcpus entries.
std::vector<InsnFaults> parse_faults(std::string_view s, unsigned vcpus) {
  std::vector<InsnFaults> out;
  std::size_t start = 0;
  while (start <= s.size() && out.size() <= vcpus) {
    std::size_t comma = s.find(',', start);
    std::string_view e = s.substr(start, comma == std::string_view::npos ? comma : comma - start);
    auto c1 = e.find(':');
    auto c2 = c1 == std::string_view::npos ? c1 : e.find(':', c1 + 1);
    if (c2 == std::string_view::npos)
      throw LineError{"faults: entry " + quote(e) + " not fixed:unmatched:kernel"};
    out.push_back({to_u64(e.substr(0, c1), "faults"),
                   to_u64(e.substr(c1 + 1, c2 - c1 - 1), "faults"),
                   to_u64(e.substr(c2 + 1), "faults")});
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  if (out.size() != vcpus)
    throw LineError{"faults: " + std::string(out.size() > vcpus ? "more than " : "") +
                    std::to_string(std::min<std::size_t>(out.size(), vcpus)) + " entries for " +
                    std::to_string(vcpus) + " vCPUs"};
  return out;
}

// "n0,n1,...": the numbers (an empty string: none).
std::vector<std::uint64_t> parse_numbers(std::string_view s, std::string_view field) {
  std::vector<std::uint64_t> out;
  if (s.empty()) return out;
  std::size_t start = 0;
  for (;;) {
    std::size_t comma = s.find(',', start);
    out.push_back(
        to_u64(s.substr(start, comma == std::string_view::npos ? comma : comma - start), field));
    if (comma == std::string_view::npos) return out;
    start = comma + 1;
  }
}

int small_int(std::string_view s, std::string_view field) {
  std::uint64_t v = to_u64(s, field);
  if (v > 1000000) throw LineError{std::string(field) + ": out of range"};
  return static_cast<int>(v);
}

void parse_header(const std::vector<std::string_view>& f, InsnCountFile& out) {
  if (f[0] != "isolab-insn-count" || f.size() < 2)
    throw LineError{"not an isolab-insn-count file (no header)"};
  if (f[1] != "1" && f[1] != "2" && f[1] != "3")
    throw LineError{"format version " + quote(f[1]) + " (this reader knows 1, 2 and 3)"};
  out.version = f[1][0] - '0';
  Keys k = keys_of(f, 2);
  out.plugin_api = small_int(need(k, "plugin_api"), "plugin_api");
  std::string_view api = need(k, "qemu_api");
  auto dash = api.find('-');
  if (dash == std::string_view::npos) throw LineError{"qemu_api: not <min>-<cur>"};
  out.qemu_api_min = small_int(api.substr(0, dash), "qemu_api");
  out.qemu_api_max = small_int(api.substr(dash + 1), "qemu_api");
  std::uint64_t n = need_u64(k, "vcpus");
  if (n < 1 || n > kMaxVcpus) throw LineError{"vcpus: " + std::to_string(n) + " not in 1..4096"};
  out.vcpus = static_cast<unsigned>(n);
  out.profile_cpus = std::string(need(k, "profile_cpus"));
  if (out.version < 3) {
    out.profile_top = need_u64(k, "profile_top");
    return;
  }
  out.symbols = need_u64(k, "symbols");
  out.mode = std::string(need(k, "mode"));
  if (out.mode != "exact" && out.mode != "inline")
    throw LineError{"mode: " + quote(out.mode) + " (exact or inline)"};
  if (auto it = k.find("count"); it != k.end()) {
    if (it->second != "all" && it->second != "steps")
      throw LineError{"count: " + quote(it->second) + " (all or steps)"};
    out.steps_only = it->second == "steps";
  }
}

// The last step, which an end/region/prof record of seq must belong to.
InsnStep& last_step(InsnCountFile& out, std::string_view seq) {
  std::uint64_t s = to_u64(seq, "seq");
  if (out.steps.empty() || out.steps.back().seq != s)
    throw LineError{"record for step " + std::to_string(s) + ", which is not the last begun"};
  return out.steps.back();
}

void parse_step(const std::vector<std::string_view>& f, InsnCountFile& out) {
  if (f.size() < 3 || (f[2] != "begin" && f[2] != "end"))
    throw LineError{"step record without begin/end"};
  Keys k = keys_of(f, 3);
  if (f[2] == "begin") {
    InsnStep s;
    s.seq = to_u64(f[1], "seq");
    if (!out.steps.empty() && s.seq <= out.steps.back().seq)
      throw LineError{"step " + std::to_string(s.seq) + " does not follow step " +
                      std::to_string(out.steps.back().seq)};
    s.begin_vcpu = need_vcpu(k, out.vcpus);
    s.begin = parse_counts(need(k, "counts"), out.vcpus);
    if (out.version >= 3) {
      s.begin_rep = parse_counts(need(k, "rep"), out.vcpus);
      s.begin_faults = parse_faults(need(k, "faults"), out.vcpus);
      if (const auto late = maybe_u64(k, "late")) {
        if (*late != 1) throw LineError{"late: " + std::to_string(*late) + " (only late=1)"};
        s.late = true;
      }
    }
    out.steps.push_back(std::move(s));
    return;
  }
  InsnStep& s = last_step(out, f[1]);
  if (s.ended) throw LineError{"second end of step " + std::to_string(s.seq)};
  s.end_vcpu = need_vcpu(k, out.vcpus);
  s.end = parse_counts(need(k, "counts"), out.vcpus);
  if (out.version >= 3) {
    s.end_rep = parse_counts(need(k, "rep"), out.vcpus);
    s.end_faults = parse_faults(need(k, "faults"), out.vcpus);
  }
  s.ended = true;
}

// "0x<hex>" as an address.
std::uint64_t hex_address(std::string_view v, std::string_view field) {
  if (v.size() < 3 || v.substr(0, 2) != "0x") throw LineError{std::string(field) + ": not 0x<hex>"};
  return to_u64(v.substr(2), field, 16);
}

// A region or prof record "<kind> <seq> vcpu=<v> ...": its step (ended), keys and vCPU.
struct StepRecord {
  InsnStep& step;
  Keys keys;
  unsigned vcpu;
};

StepRecord step_record(const std::vector<std::string_view>& f, InsnCountFile& out,
                       std::string_view kind) {
  if (f.size() < 2) throw LineError{std::string(kind) + " record without seq"};
  InsnStep& s = last_step(out, f[1]);
  if (!s.ended) throw LineError{std::string(kind) + " record before the end of its step"};
  Keys k = keys_of(f, 2);
  const unsigned vcpu = need_vcpu(k, out.vcpus);
  return {s, std::move(k), vcpu};
}

// class=: absent for class 0; 1..3 and only in version 2.
unsigned region_class_of(const Keys& k, int version) {
  const std::optional<std::uint64_t> c = maybe_u64(k, "class");
  if (!c) return 0;
  if (version < 2) throw LineError{"class= in a format-1 file (format 1 has class 0 only)"};
  if (*c < 1 || *c >= kInsnRegionClasses)
    throw LineError{"class=" + std::to_string(*c) + " not in 1.." +
                    std::to_string(kInsnRegionClasses - 1)};
  return static_cast<unsigned>(*c);
}

void parse_region(const std::vector<std::string_view>& f, InsnCountFile& out) {
  auto [s, k, vcpu] = step_record(f, out, "region");
  InsnRegionTotals r;
  r.vcpu = vcpu;
  r.region_class = region_class_of(k, out.version);
  r.regions = need_u64(k, "n");
  r.user = need_u64(k, "user");
  r.kernel = need_u64(k, "kernel");
  r.unbalanced = need_u64(k, "unbalanced");
  r.median = maybe_u64(k, "median");
  r.kernel_median = maybe_u64(k, "kernel_median");
  if (r.median.has_value() != r.kernel_median.has_value())
    throw LineError{"median= and kernel_median= come together"};
  if (r.median && r.kernel_median > r.median) throw LineError{"kernel_median= above median="};
  if (out.version >= 3) {
    r.rep = need_u64(k, "rep");
    r.norep_median = maybe_u64(k, "norep_median");
    if (r.norep_median.has_value() != r.median.has_value())
      throw LineError{"median= and norep_median= come together"};
  }
  for (const InsnRegionTotals& o : s.regions)
    if (o.vcpu == r.vcpu && o.region_class == r.region_class)
      throw LineError{"second region record of vCPU " + std::to_string(r.vcpu) +
                      (r.region_class ? ", class " + std::to_string(r.region_class) : "")};
  s.regions.push_back(r);
}

void parse_prof(const std::vector<std::string_view>& f, InsnCountFile& out) {
  auto [s, k, vcpu] = step_record(f, out, "prof");
  InsnProfileEntry e;
  e.vcpu = vcpu;
  e.insns = need_u64(k, "insns");
  if (out.version < 3) {
    e.pc = hex_address(need(k, "pc"), "pc");
  } else {
    const std::string_view fn = need(k, "fn");
    e.in_function = fn != "none";
    if (e.in_function) e.pc = hex_address(fn, "fn");
    e.rep = need_u64(k, "rep");
  }
  s.profile.push_back(e);
}

void parse_wake(const std::vector<std::string_view>& f, InsnCountFile& out) {
  if (out.version < 3) throw LineError{"wake record before format 3"};
  auto [s, k, vcpu] = step_record(f, out, "wake");
  if (!s.wakeups.empty() && s.wakeups.back().vcpu >= vcpu)
    throw LineError{"wake record of vCPU " + std::to_string(vcpu) + " out of order"};
  InsnWakeups w;
  w.vcpu = vcpu;
  const std::uint64_t n = need_u64(k, "n");
  w.nowake = need_u64(k, "nowake");
  w.timer = need_u64(k, "timer");
  w.irq = need_u64(k, "irq");
  w.noentry = need_u64(k, "noentry");
  auto it = k.find("insns");
  if (it != k.end()) w.lengths = parse_numbers(it->second, "insns");
  if (w.lengths.size() != n)
    throw LineError{"insns= holds " + std::to_string(w.lengths.size()) +
                    " lengths, n=" + std::to_string(n)};
  s.wakeups.push_back(std::move(w));
}

void parse_wakefn(const std::vector<std::string_view>& f, InsnCountFile& out) {
  if (out.version < 3) throw LineError{"wakefn record before format 3"};
  auto [s, k, vcpu] = step_record(f, out, "wakefn");
  if (s.wakeups.empty() || s.wakeups.back().vcpu != vcpu)
    throw LineError{"wakefn record without its vCPU's wake record"};
  InsnWakeFunction fn;
  const std::string_view where = need(k, "fn");
  if (where == "none")
    fn.where = InsnWakeFunction::none;
  else if (where == "user")
    fn.where = InsnWakeFunction::user;
  else
    fn.pc = hex_address(where, "fn");
  fn.insns = need_u64(k, "insns");
  s.wakeups.back().longest.push_back(fn);
}

void parse_exit(const std::vector<std::string_view>& f, InsnCountFile& out) {
  if (out.exited) throw LineError{"second exit record"};
  Keys k = keys_of(f, 1);
  out.stray_step_ends = need_u64(k, "stray_step_ends");
  out.exit_counts = parse_counts(need(k, "counts"), out.vcpus);
  if (out.version >= 3) {
    out.early_markers = need_u64(k, "early_markers");
    parse_counts(need(k, "rep"), out.vcpus);
    parse_faults(need(k, "faults"), out.vcpus);
    out.exit_boot = parse_numbers(need(k, "boot"), "boot");
    if (out.exit_boot.size() != out.vcpus)
      throw LineError{"boot: " + std::to_string(out.exit_boot.size()) + " entries for " +
                      std::to_string(out.vcpus) + " vCPUs"};
  }
  out.exited = true;
}

void parse_record(std::string_view line, InsnCountFile& out) {
  if (out.complete) throw LineError{"record after the end record"};
  std::vector<std::string_view> f = fields(line);
  if (out.version == 0) return parse_header(f, out);
  if (f[0] == "step") return parse_step(f, out);
  if (f[0] == "region") return parse_region(f, out);
  if (f[0] == "prof") return parse_prof(f, out);
  if (f[0] == "wake") return parse_wake(f, out);
  if (f[0] == "wakefn") return parse_wakefn(f, out);
  if (f[0] == "exit") return parse_exit(f, out);
  if (f[0] == "end" && f.size() == 1) {
    out.complete = true;
    return;
  }
  throw LineError{"unknown record " + quote(f[0])};
}

std::string truncation_of(const InsnCountFile& f, bool cut_line) {
  std::string t = cut_line ? "the last line is cut; " : "";
  if (!f.steps.empty() && !f.steps.back().ended)
    t += "step " + std::to_string(f.steps.back().seq) + " has no end; ";
  return t + (f.exited ? "no end record" : "no exit record (QEMU did not exit normally)");
}

}  // namespace

InsnCountFile parse_insn_count(std::string_view text) {
  if (text.empty()) throw Error("insn-count: empty file (the plugin never wrote its header)");
  InsnCountFile out;
  std::size_t lineno = 0, start = 0;
  const bool cut = text.back() != '\n';
  while (start < text.size()) {
    std::size_t nl = text.find('\n', start);
    if (nl == std::string_view::npos) break;  // a cut last line: dropped
    std::string_view line = text.substr(start, nl - start);
    start = nl + 1;
    ++lineno;
    try {
      parse_record(line, out);
    } catch (const LineError& e) {
      throw Error("insn-count line " + std::to_string(lineno) + ": " + e.what + ": " + quote(line));
    }
  }
  if (out.version == 0)
    throw Error("insn-count: no complete header line: " + quote(text.substr(0, 200)));
  if (!out.complete) out.truncation = truncation_of(out, cut);
  return out;
}

const InsnStep* find_insn_step(const InsnCountFile& file, std::uint64_t seq) {
  for (const InsnStep& s : file.steps)
    if (s.seq == seq) return &s;
  return nullptr;
}

std::vector<InsnCounts> insn_step_deltas(const InsnStep& step) {
  if (!step.ended) throw Error("insn-count: step " + std::to_string(step.seq) + " has no end");
  std::vector<InsnCounts> d;
  for (std::size_t i = 0; i < step.begin.size() && i < step.end.size(); ++i) {
    const InsnCounts &b = step.begin[i], &e = step.end[i];
    if (e.user < b.user || e.kernel < b.kernel)
      throw Error("insn-count: step " + std::to_string(step.seq) + ": vCPU " + std::to_string(i) +
                  "'s count went down between begin and end");
    d.push_back({e.user - b.user, e.kernel - b.kernel});
  }
  return d;
}

std::vector<InsnCounts> insn_step_rep_deltas(const InsnStep& step) {
  InsnStep reps = step;
  reps.begin = step.begin_rep;
  reps.end = step.end_rep;
  return step.begin_rep.empty() ? std::vector<InsnCounts>{} : insn_step_deltas(reps);
}

std::string insn_profile_sum_problem(const InsnStep& step, unsigned vcpu) {
  if (step.begin_rep.empty()) return "";  // versions 1 and 2: a cut profile
  const std::vector<InsnCounts> d = insn_step_deltas(step);
  if (vcpu >= d.size()) return "";
  std::uint64_t sum = 0;
  for (const InsnProfileEntry& e : step.profile)
    if (e.vcpu == vcpu) sum += e.insns;
  if (sum == d[vcpu].kernel) return "";
  return "the profile of vCPU " + std::to_string(vcpu) + " in step " + std::to_string(step.seq) +
         " sums to " + std::to_string(sum) + " instructions, its kernel count is " +
         std::to_string(d[vcpu].kernel);
}

const InsnWakeups* insn_step_wakeups(const InsnStep& step, unsigned vcpu) {
  for (const InsnWakeups& w : step.wakeups)
    if (w.vcpu == vcpu) return &w;
  return nullptr;
}

namespace {

// "regions" / "unbalanced markers" of class 0; "class-c ..." of the others.
struct ClassWords {
  std::string regions, unbalanced;
};
ClassWords class_words(unsigned region_class) {
  if (region_class == 0) return {"regions", "unbalanced markers"};
  const std::string c = "class-" + std::to_string(region_class);
  return {c + " regions", "unbalanced " + c + " markers"};
}

// "5", "2-3,6": the vCPUs, ascending, as a cpulist.
std::string vcpu_list(const std::map<unsigned, std::uint64_t>& vcpus) {
  std::string out;
  for (auto it = vcpus.begin(); it != vcpus.end();) {
    unsigned first = it->first, last = first;
    for (++it; it != vcpus.end() && it->first == last + 1; ++it) last = it->first;
    out += (out.empty() ? "" : ",") + std::to_string(first) +
           (last > first ? "-" + std::to_string(last) : "");
  }
  return out;
}

// What is wrong with one expected vCPU's regions (r: its record of the class, or nullptr).
void vcpu_findings(const InsnStep& step, unsigned vcpu, const InsnRegionTotals* r,
                   std::optional<std::uint64_t> expected, const ClassWords& w,
                   std::vector<std::string>& why) {
  const std::string on = " on vCPU " + std::to_string(vcpu);
  if (r && r->unbalanced) why.push_back(std::to_string(r->unbalanced) + " " + w.unbalanced + on);
  const std::uint64_t n = r ? r->regions : 0;
  if (n == 0) {
    if (step.ended) why.push_back("no " + w.regions + on);
  } else if (expected && n != *expected) {
    why.push_back(std::to_string(n) + " " + w.regions + on + ", expected " +
                  std::to_string(*expected));
  }
}

// Every reason a step's regions of one class cannot give a per-operation cost on each vCPU of
// `expected` (vCPU -> region count; nullopt = any).
std::vector<std::string> region_findings(
    const InsnStep& step, const std::map<unsigned, std::optional<std::uint64_t>>& expected,
    unsigned region_class) {
  std::vector<std::string> why;
  if (!step.ended)
    why.push_back("step " + std::to_string(step.seq) +
                  " has a begin but no end (the output stops during the step)");
  const ClassWords w = class_words(region_class);
  std::map<unsigned, std::uint64_t> listed;
  for (const auto& [vcpu, n] : expected) listed[vcpu] = 0;
  const std::string only = listed.size() == 1 ? ", expected vCPU " : ", expected vCPUs ";
  std::map<unsigned, const InsnRegionTotals*> mine;
  for (const InsnRegionTotals& r : step.regions) {
    if (r.region_class != region_class) continue;
    if (expected.count(r.vcpu)) {
      mine[r.vcpu] = &r;
    } else {
      why.push_back(std::to_string(r.regions) + " " + w.regions + " and " +
                    std::to_string(r.unbalanced) + " " + w.unbalanced + " on vCPU " +
                    std::to_string(r.vcpu) + only + vcpu_list(listed) + " only");
    }
  }
  for (const auto& [vcpu, n] : expected)
    vcpu_findings(step, vcpu, mine.count(vcpu) ? mine[vcpu] : nullptr, n, w, why);
  return why;
}

std::string join_findings(const std::vector<std::string>& why) {
  std::string out;
  for (std::size_t i = 0; i < why.size(); ++i) out += (i ? "; " : "") + why[i];
  return out;
}

// The per-region averages and medians of a record that checked out.
InsnPerOperation per_operation_of(const InsnRegionTotals& t) {
  InsnPerOperation r;
  r.valid = true;
  r.regions = t.regions;
  r.user = static_cast<double>(t.user) / static_cast<double>(t.regions);
  r.kernel = static_cast<double>(t.kernel) / static_cast<double>(t.regions);
  r.total = r.user + r.kernel;
  if (t.median) {
    r.median_total = static_cast<double>(*t.median);
    r.median_kernel = static_cast<double>(*t.kernel_median);
  }
  if (t.norep_median) {
    r.median_norep = static_cast<double>(*t.norep_median);
    r.rep = static_cast<double>(t.rep) / static_cast<double>(t.regions);
  }
  return r;
}

const InsnRegionTotals* find_regions(const InsnStep& step, unsigned vcpu, unsigned region_class) {
  for (const InsnRegionTotals& t : step.regions)
    if (t.vcpu == vcpu && t.region_class == region_class) return &t;
  return nullptr;
}

}  // namespace

InsnPerOperation insn_per_operation(const InsnStep& step, unsigned expected_vcpu,
                                    std::optional<std::uint64_t> expected_regions,
                                    unsigned region_class) {
  const std::vector<std::string> why =
      region_findings(step, {{expected_vcpu, expected_regions}}, region_class);
  if (!why.empty()) {
    InsnPerOperation r;
    r.reason = join_findings(why);
    return r;
  }
  return per_operation_of(*find_regions(step, expected_vcpu, region_class));
}

InsnPerOperationByVcpu insn_per_operation_by_vcpu(
    const InsnStep& step, const std::map<unsigned, std::uint64_t>& expected_regions,
    unsigned region_class) {
  InsnPerOperationByVcpu out;
  if (expected_regions.empty()) {
    out.reason = "no vCPU was expected";
    return out;
  }
  std::map<unsigned, std::optional<std::uint64_t>> expected;
  for (const auto& [vcpu, n] : expected_regions) expected[vcpu] = n;
  const std::vector<std::string> why = region_findings(step, expected, region_class);
  if (!why.empty()) {
    out.reason = join_findings(why);
    return out;
  }
  out.valid = true;
  for (const auto& [vcpu, n] : expected_regions)
    out.per_vcpu[vcpu] = per_operation_of(*find_regions(step, vcpu, region_class));
  return out;
}

std::vector<InsnProfileEntry> insn_step_profile(const InsnStep& step, unsigned vcpu) {
  std::vector<InsnProfileEntry> out;
  for (const InsnProfileEntry& e : step.profile)
    if (e.vcpu == vcpu) out.push_back(e);
  std::stable_sort(out.begin(), out.end(),
                   [](const InsnProfileEntry& a, const InsnProfileEntry& b) {
                     return a.insns != b.insns ? a.insns > b.insns : a.pc < b.pc;
                   });
  return out;
}

}  // namespace isolab

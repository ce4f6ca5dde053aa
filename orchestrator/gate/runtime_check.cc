#include "gate/runtime_check.h"

#include <algorithm>
#include <map>

#include "base/error.h"
#include "base/files.h"
#include "base/text.h"

namespace isolab {

namespace {

// Blank runs as one space, trimmed.
std::string squash_blanks(std::string_view s) {
  std::string out;
  for (std::string_view w : split_space(s)) out += (out.empty() ? "" : " ") + std::string(w);
  return out;
}

std::vector<std::string_view> split_tabs(std::string_view line) {
  std::vector<std::string_view> f;
  for (size_t at = 0;;) {
    const size_t tab = line.find('\t', at);
    f.push_back(line.substr(at, tab == std::string_view::npos ? tab : tab - at));
    if (tab == std::string_view::npos) return f;
    at = tab + 1;
  }
}

// Fields after the kind: how many name the entry before the status.
const std::map<std::string_view, size_t>& name_fields() {
  static const std::map<std::string_view, size_t> t = {{"sysctl", 1},
                                                       {"workqueue_cpumask", 0},
                                                       {"default_smp_affinity", 0},
                                                       {"irq", 1},
                                                       {"kthread", 1}};
  return t;
}

RuntimeLine parse_line(std::string_view line, size_t n) {
  const std::vector<std::string_view> f = split_tabs(line);
  const auto kind = name_fields().find(f.front());
  auto bad = [&](const std::string& why) {
    return Error("runtime line " + std::to_string(n) + ": " + why + ": '" +
                 sanitize_excerpt(line, 120) + "'");
  };
  if (kind == name_fields().end()) throw bad("unknown kind");
  const size_t names = kind->second;
  if (f.size() < names + 3) throw bad("too few fields");
  RuntimeLine r{std::string(f[0]), names ? std::string(f[1]) : "", std::string(f[names + 1]), ""};
  std::string value;
  for (size_t i = names + 2; i < f.size(); ++i)
    value += (i > names + 2 ? " " : "") + std::string(f[i]);
  // A kthread line: "<pid> <status> <comm> <list>": the comm goes with the name.
  if (r.kind == "kthread" && f.size() >= 5) {
    r.name += " " + std::string(f[3]);
    value = std::string(f[4]);
  }
  r.value = squash_blanks(value);
  return r;
}

std::string list_of(const std::optional<CpuSet>& s) {
  return s ? (s->empty() ? "(none)" : s->to_list()) : "(unreadable)";
}

std::optional<CpuSet> read_set(const std::string& text, unsigned nbits, bool mask) {
  try {
    return mask ? parse_cpumask_hex(text, nbits) : parse_cpulist(text, nbits);
  } catch (const CpuListError&) {
    return std::nullopt;
  }
}

void add(std::vector<GateRow>& rows, std::string check, std::string expected, std::string got,
         bool pass, std::string detail, bool warning = false) {
  rows.push_back(
      {std::move(check), std::move(expected), std::move(got), pass, warning, std::move(detail)});
}

const RuntimeLine* find(const std::vector<RuntimeLine>& lines, std::string_view kind,
                        std::string_view name = "") {
  for (const RuntimeLine& l : lines)
    if (l.kind == kind && l.name == name) return &l;
  return nullptr;
}

void sysctl_rows(const ExpectedRuntime& e, const std::vector<RuntimeLine>& lines,
                 std::vector<GateRow>& rows) {
  for (const auto& [name, want] : e.sysctls) {
    const RuntimeLine* l = find(lines, "sysctl", name);
    const std::string wanted = squash_blanks(want);
    if (!l || l->status == "missing") {
      std::string path = "/proc/sys/" + name;
      std::replace(path.begin() + 10, path.end(), '.', '/');
      add(rows, "sysctl " + name, wanted, l ? "(no such file)" : "(not reported)", false,
          l ? path +
                  " does not exist in the guest kernel (a setup failure: an option of its "
                  ".config provides it)"
            : "no line in the runtime record");
      continue;
    }
    const bool ok = l->value == wanted;
    std::string detail = l->status == "0" ? "" : "write exit status " + l->status;
    if (!ok) detail = "read back '" + l->value + "'" + (detail.empty() ? "" : "; " + detail);
    add(rows, "sysctl " + name, wanted, l->value, ok, detail);
  }
}

void mask_row(const std::vector<RuntimeLine>& lines, const char* kind, std::string check,
              const CpuSet& hk, unsigned nbits, std::vector<GateRow>& rows) {
  const RuntimeLine* l = find(lines, kind);
  const std::optional<CpuSet> got = l ? read_set(l->value, nbits, true) : std::nullopt;
  const bool ok = got && *got == hk;
  add(rows, std::move(check), hk.to_list(), l ? list_of(got) : "(not reported)", ok,
      ok  ? ""
      : l ? "write exit status " + l->status
          : "no line in the runtime record");
}

// IRQs or kthreads: those moved must read back inside hk; those that refused are named.
void moved_row(const std::vector<RuntimeLine>& lines, const char* kind, std::string check,
               const CpuSet& hk, unsigned nbits, std::vector<GateRow>& rows) {
  std::string outside, refused;
  size_t moved = 0, stayed = 0;
  for (const RuntimeLine& l : lines) {
    if (l.kind != kind) continue;
    if (l.status != "0") {
      ++stayed;
      refused += (refused.empty() ? "" : ", ") + l.name;
      continue;
    }
    ++moved;
    const std::optional<CpuSet> got = read_set(l.value, nbits, false);
    if (!got || !got->subset_of(hk))
      outside += (outside.empty() ? "" : ", ") + l.name + "->" + l.value;
  }
  const std::string effective =
      std::to_string(moved) + " moved, " + std::to_string(stayed) + " refused";
  std::string detail =
      outside.empty() ? "" : "moved but read back outside " + hk.to_list() + ": " + outside;
  if (!refused.empty())
    detail += (detail.empty() ? "" : "; ") + std::string("refused (per-CPU or managed): ") +
              sanitize_excerpt(refused, 300);
  add(rows, std::move(check), "on " + hk.to_list(), effective, outside.empty(), detail,
      outside.empty() && stayed > 0);
}

}  // namespace

std::vector<RuntimeLine> parse_runtime_record(std::string_view text) {
  std::vector<RuntimeLine> out;
  size_t n = 0;
  for (std::string_view line : text_lines(text)) {
    ++n;
    if (!trim_space(line).empty()) out.push_back(parse_line(line, n));
  }
  return out;
}

std::vector<std::string> missing_sysctls(const std::vector<RuntimeLine>& lines) {
  std::vector<std::string> out;
  for (const RuntimeLine& l : lines)
    if (l.kind == "sysctl" && l.status == "missing") out.push_back(l.name);
  return out;
}

void check_runtime(const ExpectedRuntime& e, const std::string* record, unsigned nbits,
                   std::vector<GateRow>& rows) {
  if (e.empty()) return;
  std::vector<RuntimeLine> lines;
  try {
    if (!record) throw Error("the guest sent no runtime record");
    lines = parse_runtime_record(*record);
  } catch (const Error& err) {
    add(rows, "runtime settings", "written and read back", "(no report)", false, err.what());
    return;
  }
  sysctl_rows(e, lines, rows);
  if (!e.housekeeping) return;
  const CpuSet hk = e.housekeeping->resized(nbits);
  mask_row(lines, "workqueue_cpumask", "runtime workqueue cpumask", hk, nbits, rows);
  mask_row(lines, "default_smp_affinity", "runtime irq default affinity", hk, nbits, rows);
  moved_row(lines, "irq", "runtime irq affinity", hk, nbits, rows);
  moved_row(lines, "kthread", "runtime kthreads", hk, nbits, rows);
}

}  // namespace isolab

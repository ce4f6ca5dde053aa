#include "cmdline/line_hints.h"

#include <cctype>

namespace isolab {

namespace {

// systemd's cpu_set_add() refuses CPUs from here on (src/shared/cpu-set-util.c).
constexpr unsigned kSystemdMaxCpus = 8192;

std::optional<unsigned> decimal(std::string_view s) {
  if (s.empty() || s.size() > 9) return std::nullopt;
  unsigned n = 0;
  for (char c : s) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return std::nullopt;
    n = n * 10 + static_cast<unsigned>(c - '0');
  }
  return n;
}

// One word of a systemd CPU list into `out` (parse_range()).
void add_systemd_word(std::string_view word, CpuSet& out) {
  const size_t dash = word.find('-');
  const auto lo = decimal(word.substr(0, dash));
  const auto hi = dash == std::string_view::npos ? lo : decimal(word.substr(dash + 1));
  if (!lo || !hi)
    throw CpuListError(
        CpuListErrc::kInvalid, std::string(word),
        "systemd CPU list: '" + std::string(word) + "' is neither a CPU nor a range A-B (EINVAL)");
  if (*lo > *hi) return;  // systemd warns and adds nothing
  if (*hi >= kSystemdMaxCpus)
    throw CpuListError(CpuListErrc::kRange, std::string(word),
                       "systemd CPU list: '" + std::string(word) + "' names CPU " +
                           std::to_string(*hi) + ", systemd takes CPUs below 8192 (ERANGE)");
  for (unsigned c = *lo; c <= *hi; ++c) out.set(c);
}

std::string list_or_none(const CpuSet& s) { return s.empty() ? "none" : s.to_list(); }

std::string at_least(const CpuSet& s) {
  const auto last = s.last();
  if (!last) return "";
  return ": the machine had at least " + std::to_string(*last + 1) + (*last ? " CPUs" : " CPU");
}

LineHint tuned_hint(const CmdlineToken& t) {
  LineHint h{t.raw, CpuSet(kMaxCpus), 0, "", ""};
  try {
    h.housekeeping = parse_tuned_cpumask(t.value.value_or(""));
  } catch (const CpuListError& e) {
    h.error = std::string(e.what()) + "; not used";
    return h;
  }
  h.min_cpus = h.housekeeping.empty() ? 0 : *h.housekeeping.last() + 1;
  h.meaning = "housekeeping CPUs " + list_or_none(h.housekeeping) +
              " (TuneD writes the CPUs it does not isolate there, as a hex mask)" +
              at_least(h.housekeeping);
  return h;
}

LineHint systemd_hint(const CmdlineToken& t) {
  LineHint h{t.raw, CpuSet(kMaxCpus), 0, "", ""};
  try {
    h.housekeeping = parse_systemd_cpu_set(t.value.value_or(""));
  } catch (const CpuListError& e) {
    h.error = std::string(e.what()) + "; systemd ignores the whole value, and so does isolab";
    return h;
  }
  h.min_cpus = h.housekeeping.empty() ? 0 : *h.housekeeping.last() + 1;
  h.meaning = "housekeeping CPUs " + list_or_none(h.housekeeping) +
              " (systemd runs every service there; OpenShift writes its reserved CPUs)" +
              at_least(h.housekeeping);
  return h;
}

}  // namespace

CpuSet parse_tuned_cpumask(std::string_view value) {
  std::string_view v = value;
  if (v.size() > 2 && v[0] == '0' && (v[1] == 'x' || v[1] == 'X')) v.remove_prefix(2);
  return parse_cpumask_hex(v, kMaxCpus);
}

CpuSet parse_systemd_cpu_set(std::string_view value) {
  CpuSet out(kMaxCpus);
  std::string word;
  auto flush = [&] {
    if (!word.empty()) add_systemd_word(word, out);
    word.clear();
  };
  for (char c : value) {
    if (c == '"' || c == '\'') continue;  // EXTRACT_UNQUOTE
    if (c == ',' || std::isspace(static_cast<unsigned char>(c)))
      flush();
    else
      word += c;
  }
  flush();
  return out;
}

std::vector<LineHint> cpu_hints(const std::vector<CmdlineToken>& tokens) {
  std::vector<LineHint> out;
  for (const CmdlineToken& t : tokens) {
    if (t.after_dashes || !t.value) continue;
    if (t.normalized == "tuned.non_isolcpus") out.push_back(tuned_hint(t));
    if (t.normalized == "systemd.cpu_affinity") out.push_back(systemd_hint(t));
  }
  return out;
}

}  // namespace isolab

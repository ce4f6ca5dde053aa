#include "machine/runtime_settings.h"

#include <regex>

namespace isolab {

namespace {

// What the guest's /init writes as one shell word (guest/init_script.cc render_sysctls).
std::optional<std::string> unwritable(const std::string& value) {
  static const std::regex ok("[A-Za-z0-9 _.,:+=-]{1,100}");
  if (std::regex_match(value, ok)) return std::nullopt;
  return "the value '" + value.substr(0, 40) +
         "' has characters the guest's /init does not write (or is empty or over 100)";
}

void add_sysctls(const MachineFacts& m, RuntimeSettings& r) {
  if (!m.sysctls) return;
  for (const auto& [name, v] : m.sysctls->value) {
    if (auto why = unwritable(v.value))
      r.left_out.emplace_back(name, *why);
    else
      r.sysctls.emplace_back(name, v.value);
  }
}

void add_moves(const MachineFacts& m, RuntimeSettings& r) {
  if (m.evidence.tuned_isolated.empty()) {
    r.not_moved_why = "no TuneD isolated_cores or PerformanceProfile isolated CPUs in the dump";
    return;
  }
  if (!m.housekeeping) {
    r.not_moved_why = "TuneD isolates CPUs but the housekeeping CPUs are not known";
    return;
  }
  r.housekeeping = m.housekeeping->value;
  const Fact<CpuSet>& t = m.evidence.tuned_isolated.front();
  r.moved_by = "TuneD isolating " + t.value.to_list() + " (" +
               (t.from.empty() ? std::string("the profile") : t.from.front().text()) + ")";
}

}  // namespace

RuntimeSettings runtime_settings(const MachineFacts& m) {
  RuntimeSettings r;
  add_sysctls(m, r);
  add_moves(m, r);
  return r;
}

}  // namespace isolab

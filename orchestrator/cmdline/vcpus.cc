#include "cmdline/vcpus.h"

#include <cctype>

#include "base/error.h"

namespace isolab {

namespace {

// The widest need of the CPU lists or hints, and what has it.
struct Need {
  unsigned nbits = 0;
  std::string by;           // the token as written
  std::string what;         // "'<by>' has a range ending at CPU 15"
  bool from_hint = false;   // a hint, not a list the kernel parsed
  bool relative = false;    // some list uses N or all
  unsigned list_nbits = 0;  // the lists' own need
};

Need cpu_list_need(const std::vector<const CmdlineToken*>& kept) {
  Need need;
  for (const CmdlineToken* t : kept) {
    if (t->after_dashes) continue;
    const auto list = isolation_cpu_list(*t);
    if (!list) continue;
    // A list rejected at every width still counts the regions parsed before its error, so the
    // guest's kernel stops at the same item as the customer's.
    const CpuListParse p = try_parse_cpulist(*list, kMaxCpus);
    need.relative = need.relative || p.uses_last;
    if (p.min_nbits > need.nbits) {
      need.nbits = p.min_nbits;
      need.by = t->raw;
    }
  }
  need.list_nbits = need.nbits;
  need.what = "'" + need.by + "' has a range ending at CPU " + std::to_string(need.nbits - 1);
  return need;
}

// A hint that names a CPU beyond every list decides the count; the reason says which CPUs
// only it names, since those are housekeeping CPUs the lists alone would lose.
void widen_by_hints(const std::vector<LineHint>& hints, Need& need) {
  for (const LineHint& h : hints) {
    if (!h.error.empty() || h.min_cpus <= need.nbits) continue;
    need.nbits = h.min_cpus;
    need.by = h.param;
    need.from_hint = true;
    CpuSet beyond = h.housekeeping;
    for (unsigned c = 0; c < need.list_nbits; ++c) beyond.reset(c);
    need.what = "'" + h.param + "' names housekeeping CPU " + std::to_string(h.min_cpus - 1) +
                (need.list_nbits ? " beyond the isolation lists (housekeeping CPUs " +
                                       beyond.to_list() + " kept)"
                                 : "");
  }
}

void derive_overridden(const AnalyzeOptions& opt, const Need& need, Analysis& a) {
  if (*opt.vcpus == 0 || *opt.vcpus > kMaxCpus)
    throw Error("vCPU override " + std::to_string(*opt.vcpus) + " is outside 1.." +
                std::to_string(kMaxCpus));
  a.vcpus = *opt.vcpus;
  a.vcpus_overridden = true;
  a.vcpus_reason = "given (" + std::to_string(a.vcpus) + ")";
  if (a.vcpus < need.nbits)
    a.warnings.push_back("vCPU override " + std::to_string(a.vcpus) + " is smaller than the " +
                         std::to_string(need.nbits) + " CPUs '" + need.by + "' needs: CPUs >= " +
                         std::to_string(a.vcpus) + " do not exist in the guest");
}

void derive_capped(const Need& need, Analysis& a) {
  a.vcpus = kMaxGuestVcpus;
  a.vcpus_reason = need.what + ", so the customer's machine had at least " +
                   std::to_string(need.nbits) + " CPUs; capped at " +
                   std::to_string(kMaxGuestVcpus) + ", the most QEMU 7.2 boots";
  a.warnings.push_back(need.what + ": it needs " + std::to_string(need.nbits) +
                       " CPUs, but QEMU 7.2 boots at most " + std::to_string(kMaxGuestVcpus) +
                       " vCPUs (q35 refuses more without KVM and x2APIC, pc allows 255); the "
                       "guest gets " +
                       std::to_string(kMaxGuestVcpus) +
                       (need.from_hint ? ", fewer than the customer's machine had"
                                       : " and its kernel rejects that list (ERANGE), unlike "
                                         "the customer's"));
}

void derive_unknown(const Need& need, Analysis& a) {
  a.vcpus = 1;
  a.cpu_count_unknown = need.relative;
  a.vcpus_reason = "no CPU list gives a CPU count";
  a.warnings.emplace_back(
      need.relative
          ? "the CPU lists use only N/all, which stand for the last CPU of however many the "
            "customer's machine had, and the line does not say how many: the guest gets 1 "
            "vCPU unless a vCPU count is given"
          : "no CPU list names a CPU: the guest gets 1 vCPU unless a vCPU count is given");
}

}  // namespace

std::optional<std::string_view> isolation_cpu_list(const CmdlineToken& t) {
  if (!t.value) return std::nullopt;
  const std::string_view v = *t.value;
  if (t.normalized == "nohz_full" || t.normalized == "rcu_nocbs" || t.normalized == "irqaffinity")
    return v;
  if (t.normalized != "isolcpus") return std::nullopt;
  size_t p = 0;
  while (p < v.size() && std::isalpha(static_cast<unsigned char>(v[p]))) {
    const size_t c = v.find(',', p);
    p = c == std::string_view::npos ? v.size() : c + 1;
  }
  return v.substr(p);
}

void derive_vcpus(const AnalyzeOptions& opt, const std::vector<const CmdlineToken*>& kept,
                  Analysis& a) {
  Need need = cpu_list_need(kept);
  widen_by_hints(a.hints, need);
  a.vcpus_needed = need.nbits;
  if (opt.vcpus) return derive_overridden(opt, need, a);
  if (need.nbits > kMaxGuestVcpus) return derive_capped(need, a);
  if (need.nbits == 0) return derive_unknown(need, a);
  a.vcpus = need.nbits;
  a.vcpus_reason = need.from_hint
                       ? need.what + ": the customer's machine had at least " +
                             std::to_string(need.nbits) + " CPUs (the isolation lists need " +
                             std::to_string(need.list_nbits) + ")"
                       : need.what +
                             ": the customer's kernel accepted it (6.1 parses CPU lists with "
                             "nr_cpu_ids bits), so it had at least " +
                             std::to_string(need.nbits) + " possible CPUs";
  if (need.relative)
    a.vcpus_reason += "; N/all in the lists stand for CPU " + std::to_string(need.nbits - 1) +
                      " here (the customer may have had more)";
}

}  // namespace isolab

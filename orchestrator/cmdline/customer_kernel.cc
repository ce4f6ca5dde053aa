// The customer's kernel: version and isolation messages from its dmesg, and the isolcpus=
// parameters it ignored (declared in cmdline/customer_kernel.h).
#include "cmdline/customer_kernel.h"

#include <algorithm>
#include <cctype>

#include "base/error.h"
#include "base/files.h"
#include "cmdline/analysis.h"

namespace isolab {

std::optional<std::string> boot_image_release(std::string_view boot_image) {
  const size_t slash = boot_image.find_last_of("/)");
  const std::string_view file =
      slash == std::string_view::npos ? boot_image : boot_image.substr(slash + 1);
  constexpr std::string_view kPrefix = "vmlinuz-";
  if (file.rfind(kPrefix, 0) != 0) return std::nullopt;
  const std::string_view release = file.substr(kPrefix.size());
  if (!parse_kernel_version(release) || release.front() == 'v') return std::nullopt;
  return std::string(release);
}

namespace {

// One era of isolcpus= flag handling: from version {major, minor} on (customer_kernel.h).
struct FlagEra {
  int major;
  int minor;
  std::vector<std::string_view> flags;  // the flags the kernel knows
  bool skips_unknown;                   // an unknown all-letter flag is skipped, not fatal
  const char* rule;                     // what a kernel of this era does with another flag
};

const std::vector<FlagEra>& flag_eras() {
  static const std::vector<FlagEra> eras = {
      {0, 0, {}, false, "kernels before 4.15 take no isolcpus= flags: the list fails to parse"},
      {4,
       15,
       {"nohz", "domain"},
       false,
       "kernels 4.15 to 5.5 know the flags nohz and domain and ignore the whole parameter on "
       "any other ('isolcpus: Error, unknown flag')"},
      {5,
       6,
       {"nohz", "domain", "managed_irq"},
       false,
       "kernel 5.6 knows nohz, domain and managed_irq and ignores the whole parameter on any "
       "other ('isolcpus: Error, unknown flag')"},
      {5, 7, {"nohz", "domain", "managed_irq"}, true, ""},
  };
  return eras;
}

const FlagEra& era_of(int major, int minor) {
  const FlagEra* found = &flag_eras().front();
  for (const FlagEra& e : flag_eras())
    if (major > e.major || (major == e.major && minor >= e.minor)) found = &e;
  return *found;
}

// The leading flag words of an isolcpus= value ("managed_irq,domain,2-3" -> both words).
std::vector<std::string> flag_words(std::string_view v) {
  std::vector<std::string> words;
  size_t p = 0;
  while (p < v.size() && std::isalpha(static_cast<unsigned char>(v[p]))) {
    const size_t comma = v.find(',', p);
    words.emplace_back(v.substr(p, comma == std::string_view::npos ? v.size() - p : comma - p));
    if (comma == std::string_view::npos) break;
    p = comma + 1;
  }
  return words;
}

std::string_view trimmed(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// The starts of the messages kept in CustomerKernel::isolation_messages.
constexpr std::string_view kMessageStarts[] = {
    "isolcpus:", "Housekeeping:", "NO_HZ: Full dynticks CPUs:", "Offload RCU callbacks from CPUs:",
    "rcu_nocbs= bad CPU range"};

std::string kernel_name(const CustomerKernel& k) {
  return "the customer's kernel " + k.version + " (" + k.version_source + ")";
}

// The weakest witness of the customer's kernel: the image the boot loader started.
void kernel_of_boot_image(const std::vector<CmdlineToken>& tokens, CustomerKernel& k) {
  for (const CmdlineToken& t : tokens) {
    if (t.after_dashes || t.normalized != "BOOT_IMAGE" || !t.value) continue;
    const auto release = boot_image_release(*t.value);
    if (!release) return;
    k.version = sanitize_excerpt(*release, 64);
    k.version_source = "BOOT_IMAGE";
    if (auto mm = parse_kernel_version(k.version)) k.major = mm->first, k.minor = mm->second;
    return;
  }
}

}  // namespace

std::optional<std::pair<int, int>> parse_kernel_version(std::string_view v) {
  if (!v.empty() && v.front() == 'v') v.remove_prefix(1);
  int parts[2] = {0, 0};
  size_t p = 0;
  for (int i = 0; i < 2; ++i) {
    const size_t start = p;
    while (p < v.size() && std::isdigit(static_cast<unsigned char>(v[p])) && p - start < 4)
      parts[i] = parts[i] * 10 + (v[p++] - '0');
    if (p == start) return std::nullopt;
    if (i == 0 && (p >= v.size() || v[p++] != '.')) return std::nullopt;
  }
  return std::make_pair(parts[0], parts[1]);
}

CustomerKernel customer_kernel_of_dmesg(std::string_view text) {
  CustomerKernel k;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) nl = text.size();
    const std::string_view line = text.substr(pos, nl - pos);
    pos = nl + 1;
    if (const size_t at = line.find("Linux version ");
        at != std::string_view::npos && k.version.empty()) {
      std::string_view rest = line.substr(at + 14);
      k.version = sanitize_excerpt(rest.substr(0, rest.find(' ')), 64);  // untrusted text
      if (auto mm = parse_kernel_version(k.version)) k.major = mm->first, k.minor = mm->second;
      k.version_source = "dmesg";
      continue;
    }
    for (std::string_view start : kMessageStarts)
      if (const size_t at = line.find(start); at != std::string_view::npos) {
        k.isolation_messages.push_back(sanitize_excerpt(trimmed(line.substr(at)), 200));
        break;
      }
  }
  return k;
}

std::vector<CustomerRejection> customer_rejections(const std::vector<CmdlineToken>& tokens,
                                                   const CustomerKernel& k) {
  std::vector<const CmdlineToken*> with_flags;
  for (const CmdlineToken& t : tokens)
    if (!t.after_dashes && t.normalized == "isolcpus" && t.value && !flag_words(*t.value).empty())
      with_flags.push_back(&t);
  std::vector<CustomerRejection> out;
  const bool said = std::any_of(
      k.isolation_messages.begin(), k.isolation_messages.end(),
      [](const std::string& m) { return m.rfind("isolcpus: Error, unknown flag", 0) == 0; });
  if (said) {
    std::vector<const CmdlineToken*> odd;
    for (const CmdlineToken* t : with_flags)
      for (const std::string& w : flag_words(*t->value))
        if (w != "nohz" && w != "domain") {
          odd.push_back(t);
          break;
        }
    for (const CmdlineToken* t : odd.empty() ? with_flags : odd)
      out.push_back({t, kernel_name(k) + " printed 'isolcpus: Error, unknown flag' and ignored "
                                         "the whole parameter"});
    return out;
  }
  if (!k.major) return out;
  const FlagEra& era = era_of(*k.major, k.minor.value_or(0));
  if (era.skips_unknown) return out;
  for (const CmdlineToken* t : with_flags)
    for (const std::string& w : flag_words(*t->value))
      if (std::find(era.flags.begin(), era.flags.end(), w) == era.flags.end()) {
        out.push_back({t, kernel_name(k) + " ignored the whole parameter (flag '" + w +
                              "': " + era.rule +
                              "; judged by the version: a distribution kernel may carry a later "
                              "rule, which its dmesg shows)"});
        break;
      }
  return out;
}

std::optional<std::pair<std::string, std::string>> reported_cpu_list(std::string_view m) {
  static constexpr std::pair<std::string_view, std::string_view> kReports[] = {
      {"NO_HZ: Full dynticks CPUs:", "nohz_full"},
      {"Offload RCU callbacks from CPUs:", "rcu_nocbs"}};
  for (const auto& [start, what] : kReports)
    if (m.rfind(start, 0) == 0) {
      std::string_view list = trimmed(m.substr(start.size()));
      if (!list.empty() && list.back() == '.') list.remove_suffix(1);
      return std::make_pair(std::string(what), std::string(trimmed(list)));
    }
  return std::nullopt;
}

CustomerKernel customer_kernel_of(std::string_view text, const AnalyzeOptions& opt, Analysis& a) {
  CustomerKernel k = a.from_dmesg ? customer_kernel_of_dmesg(text) : CustomerKernel{};
  if (opt.customer_kernel_version) {
    k.version = *opt.customer_kernel_version;
    k.version_source = opt.customer_kernel_version_source;
    const auto mm = parse_kernel_version(k.version);
    if (!mm)
      throw Error(k.version_source + " '" + sanitize_excerpt(k.version, 64) +
                  "': expected MAJOR.MINOR[...]");
    k.major = mm->first, k.minor = mm->second;
  }
  if (k.version.empty()) kernel_of_boot_image(a.tokens, k);
  if (!k.version.empty()) a.customer_kernel = k.version + " (" + k.version_source + ")";
  a.customer_kernel_messages = k.isolation_messages;
  if (k.major && (*k.major != opt.kernel.major || k.minor != opt.kernel.minor))
    a.warnings.push_back("the line was written for kernel " + k.version + " (" + k.version_source +
                         "); the guest boots " + std::to_string(opt.kernel.major) + "." +
                         std::to_string(opt.kernel.minor) +
                         ": parameters are analysed as the guest's kernel treats them, except "
                         "those the customer's kernel ignored (dropped, with the reason)");
  return k;
}

void drop_customer_rejections(const CustomerKernel& k, const AnalyzeOptions& opt,
                              std::vector<const CmdlineToken*>& kept, Analysis& a) {
  const std::string guest =
      std::to_string(opt.kernel.major) + "." + std::to_string(opt.kernel.minor);
  for (const CustomerRejection& r : customer_rejections(a.tokens, k)) {
    const auto it = std::find(kept.begin(), kept.end(), r.token);
    if (it == kept.end()) continue;
    kept.erase(it);
    if (auto s = std::find(a.kept.begin(), a.kept.end(), r.token->raw); s != a.kept.end())
      a.kept.erase(s);
    const std::string canonical = r.token->canonical();
    if (auto s = std::find(a.isolation_params.begin(), a.isolation_params.end(), canonical);
        s != a.isolation_params.end())
      a.isolation_params.erase(s);
    a.dropped.push_back({r.token->raw, r.why});
    a.warnings.push_back(r.token->raw + ": " + r.why + "; the guest's " + guest +
                         " kernel would apply it, so the reproduction boots without it, as the "
                         "customer's machine ran");
  }
}

void compare_customer_reports(const CustomerKernel& k, Analysis& a) {
  for (const std::string& m : k.isolation_messages) {
    if (auto r = reported_cpu_list(m)) {
      const CpuSet& ours = r->first == "nohz_full" ? a.nohz_full : a.rcu_nocbs;
      const CpuListParse theirs = try_parse_cpulist(r->second, kMaxCpus);
      if (!theirs.ok() || !(theirs.set == ours))
        a.warnings.push_back("the customer's kernel reported " + r->first + " CPUs '" + r->second +
                             "' ('" + m + "'); the reproduction gives '" + ours.to_list() +
                             "' (check the CPU count, --vcpus)");
    } else if (m.rfind("Housekeeping: nohz_full= or isolcpus= incorrect CPU range", 0) == 0 &&
               std::find(a.expected_kernel_messages.begin(), a.expected_kernel_messages.end(), m) ==
                   a.expected_kernel_messages.end()) {
      a.warnings.push_back("the customer's kernel printed '" + m +
                           "', which the analysis does not predict: its CPU count or kernel "
                           "differs from the guest's (check --vcpus, --kernel-version)");
    }
  }
}

}  // namespace isolab

#include "spec/spec.h"

#include <algorithm>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "base/error.h"
#include "base/files.h"
#include "base/json_document.h"
#include "base/json_text.h"
#include "cmdline/analyze.h"
#include "cmdline/cpulist.h"
#include "cmdline/customer_kernel.h"
#include "spec/compare_settings.h"
#include "spec/json_object.h"
#include "spec/workloads.h"
#include "workload/registry.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace isolab {

namespace {

// A spec is written by hand: a larger file is a mistake (or an attack), not a spec.
constexpr std::size_t kMaxSpecBytes = std::size_t{4} << 20;
// The part of a patch file read for its first diff line.
constexpr std::size_t kMaxPatchBytes = std::size_t{64} << 20;

fs::path resolve_existing(const std::string& p, const fs::path& base, const std::string& ptr) {
  if (p.empty()) throw SpecError(ptr, "empty path");
  fs::path path = fs::path(p).is_absolute() ? fs::path(p) : base / p;
  std::error_code ec;
  if (!fs::exists(path, ec)) throw SpecError(ptr, "file not found: " + path.string());
  return fs::weakly_canonical(path, ec);
}

// A patch entry is a patch file or a directory holding a `series` file (one name per line,
// '#' comments), as quilt and git format-patch users keep them.
// A patch file holds a diff: a line starting "diff " (git's format), or a "--- " line followed
// by a "+++ " line (diff -u, quilt). Else SpecError at ptr naming the file: git am and git apply
// would refuse it only after the kernel source is unpacked.
void check_is_patch(const fs::path& file, const std::string& ptr) {
  std::istringstream in(read_file(file, kMaxPatchBytes));
  bool minus = false;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("diff ", 0) == 0 || (minus && line.rfind("+++ ", 0) == 0)) return;
    minus = line.rfind("--- ", 0) == 0;
  }
  throw SpecError(
      ptr,
      file.string() + " is not a patch: no line starts a diff ('diff ', or '--- ' then '+++ ')");
}

void add_patches(const std::string& entry, const fs::path& base, const std::string& ptr,
                 std::vector<fs::path>& out) {
  fs::path p = resolve_existing(entry, base, ptr);
  if (!fs::is_directory(p)) {
    check_is_patch(p, ptr);
    out.push_back(p);
    return;
  }
  fs::path series = p / "series";
  if (!fs::exists(series))
    throw SpecError(ptr, "patch directory has no series file: " + p.string());
  std::istringstream in(read_file(series));
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    ++n;
    auto hash = line.find('#');
    if (hash != std::string::npos) line.erase(hash);
    line.erase(0, line.find_first_not_of(" \t\r"));
    line.erase(line.find_last_not_of(" \t\r") + 1);
    if (line.empty()) continue;
    fs::path f = p / line;
    if (!fs::exists(f))
      throw SpecError(ptr,
                      series.string() + ":" + std::to_string(n) + ": patch not found: " + line);
    check_is_patch(f, ptr);
    out.push_back(f);
  }
}

// "sysctls": {"vm.numa_stat": 0, "kernel.foo": "1 2"}: names as sysctl(8) writes them, values
// that a shell word and /proc/sys can carry without quoting surprises.
std::map<std::string, std::string> parse_sysctls(const json& j, const std::string& ptr) {
  if (!j.is_object()) throw SpecError(ptr, "expected an object {\"name\": value}");
  static const std::regex name_re("[a-z0-9_]+(\\.[A-Za-z0-9_-]+)+");
  static const std::regex value_re("[A-Za-z0-9 _.,:+=-]{0,100}");
  std::map<std::string, std::string> out;
  for (auto it = j.begin(); it != j.end(); ++it) {
    std::string p = json_child(ptr, it.key());
    if (it.key().size() > 100 || !std::regex_match(it.key(), name_re))
      throw SpecError(p, "sysctl name '" + sanitize_excerpt(it.key(), 60) +
                             "' is not a dotted name such as vm.numa_stat");
    std::string value;
    if (it->is_number_integer())
      value = std::to_string(it->get<long long>());
    else if (it->is_string())
      value = it->get<std::string>();
    else
      throw SpecError(p, "expected a string or an integer, got " + std::string(it->type_name()));
    if (!std::regex_match(value, value_re) || value.find_first_not_of(' ') == std::string::npos)
      throw SpecError(p, "value '" + sanitize_excerpt(value, 60) +
                             "' must be 1-100 characters of A-Z a-z 0-9 space _ . , : + = -");
    out[it.key()] = value;
  }
  return out;
}

// "numa_nodes": [{"cpus": "0-1", "memory_mib": 256}, ...] of a guest with `vcpus` vCPUs (0: not
// given). Every vCPU must be on exactly one node (QEMU warns about CPUs in no node and will
// refuse them); memory_mib_given: the guest's memory_mib when the spec gives it, else 0.
std::vector<NumaNodeSpec> parse_numa_nodes(const json& j, const std::string& ptr, int vcpus,
                                           int memory_mib_given) {
  if (!j.is_array() || j.empty() || j.size() > 64)
    throw SpecError(ptr, "expected an array of 1-64 nodes {\"cpus\", \"memory_mib\"}");
  if (vcpus == 0) throw SpecError(ptr, "a NUMA layout needs guest.vcpus");
  std::vector<NumaNodeSpec> nodes;
  CpuSet seen(static_cast<unsigned>(vcpus));
  long total = 0;
  for (std::size_t i = 0; i < j.size(); ++i) {
    SpecObject no(j[i], json_child(ptr, i));
    std::string text = no.str("cpus");
    CpuListParse r = try_parse_cpulist(text, static_cast<unsigned>(vcpus));
    if (text.empty() || !r.ok() || r.set.empty())
      throw SpecError(no.ptr("cpus"), (r.ok() ? "expected a non-empty cpulist" : r.message) +
                                          " (the guest has CPUs 0-" + std::to_string(vcpus - 1) +
                                          ")");
    if (r.set.intersects(seen))
      throw SpecError(no.ptr("cpus"),
                      "CPUs " + (r.set & seen).to_list() + " are already on an earlier node");
    seen = seen | r.set;
    if (!no.has("memory_mib")) throw SpecError(no.ptr("memory_mib"), "missing");
    NumaNodeSpec n{r.set.to_list(), static_cast<int>(no.integer("memory_mib", 0, 16, 16384))};
    total += n.memory_mib;
    no.finish();
    nodes.push_back(n);
  }
  CpuSet missing = CpuSet::all(static_cast<unsigned>(vcpus)) - seen;
  if (!missing.empty())
    throw SpecError(ptr, "CPUs " + missing.to_list() + " are on no node (every vCPU needs one)");
  if (memory_mib_given && total != memory_mib_given)
    throw SpecError(ptr, "the nodes hold " + std::to_string(total) +
                             " MiB, but guest.memory_mib is " + std::to_string(memory_mib_given));
  if (total > 16384) throw SpecError(ptr, "the nodes hold more than 16384 MiB");
  return nodes;
}

}  // namespace

std::vector<HostSpec> parse_hosts(const json& hosts, const std::string& pointer) {
  if (!hosts.is_array()) throw SpecError(pointer, "expected an array of libvirt URIs");
  std::vector<HostSpec> out;
  for (std::size_t i = 0; i < hosts.size(); ++i) {
    const std::string p = json_child(pointer, i);
    HostSpec h;
    if (hosts[i].is_string()) {
      h.uri = hosts[i].get<std::string>();
    } else {
      SpecObject ho(hosts[i], p);
      h.uri = ho.str("uri");
      h.pool_dir = ho.str("pool_dir");
      if (!h.pool_dir.empty() && h.pool_dir.front() != '/')
        throw SpecError(ho.ptr("pool_dir"), "pool_dir must be an absolute path");
      ho.finish();
    }
    const std::string up = hosts[i].is_string() ? p : json_child(p, "uri");
    if (h.uri.find("://") == std::string::npos)
      throw SpecError(up, "'" + sanitize_excerpt(h.uri, 80) +
                              "' is not a libvirt URI (qemu+ssh://host/system, qemu:///system)");
    for (unsigned char ch : h.uri)
      if (ch < 0x20) throw SpecError(up, "URI contains a control character");
    for (const auto& o : out)
      if (o.uri == h.uri) throw SpecError(up, "host " + h.uri + " is listed twice");
    out.push_back(std::move(h));
  }
  return out;
}

namespace {

// The guest fields /customer sets (spec/customer.h), in place of /guest's own.
void take_customer(CustomerGuest g, Spec& s) {
  s.customer_cmdline = std::move(g.customer_cmdline);
  if (!g.customer_kernel_version.empty()) s.customer_kernel_version = g.customer_kernel_version;
  if (g.shape) {
    s.vcpus = g.shape->vcpus;
    s.topology = g.shape->topology;
    s.numa_nodes = std::move(g.shape->numa_nodes);
  }
  s.customer = std::move(g.customer);
}

// /kernel/source: exactly one of tarball, git (+ ref), prebuilt.
KernelSourceSpec parse_source(const json& src, const fs::path& base_dir) {
  SpecObject so(src, "/kernel/source");
  KernelSourceSpec k;
  int kinds = so.has("tarball") + so.has("git") + so.has("prebuilt");
  if (kinds != 1) throw SpecError("/kernel/source", "give exactly one of tarball, git, prebuilt");
  if (so.has("tarball")) {
    k.kind = KernelSourceSpec::Kind::tarball;
    k.tarball = resolve_existing(so.str("tarball"), base_dir, "/kernel/source/tarball");
  } else if (so.has("git")) {
    k.kind = KernelSourceSpec::Kind::git;
    k.git = so.str("git");
    k.ref = so.str("ref", "HEAD");
    if (k.git.empty()) throw SpecError("/kernel/source/git", "empty");
    if (k.git[0] == '-') throw SpecError("/kernel/source/git", "must not start with '-'");
    if (!k.ref.empty() && k.ref[0] == '-')
      throw SpecError("/kernel/source/ref", "must not start with '-'");
    if (k.git.find("://") == std::string::npos && k.git.find('@') == std::string::npos)
      k.git = resolve_existing(k.git, base_dir, "/kernel/source/git").string();
  } else {
    k.kind = KernelSourceSpec::Kind::prebuilt;
    k.prebuilt = resolve_existing(so.str("prebuilt"), base_dir, "/kernel/source/prebuilt");
  }
  so.finish();
  return k;
}

// /kernel/robot_checks: a boolean for all four, or an object of booleans.
RobotChecks parse_robot_checks(const json& j) {
  const std::string p = "/kernel/robot_checks";
  if (j.is_boolean()) {
    const bool on = j.get<bool>();
    return {on, on, on, on};
  }
  SpecObject o(j, p);
  RobotChecks r;
  r.checkpatch = o.boolean("checkpatch", true);
  r.includecheck = o.boolean("includecheck", true);
  r.w1 = o.boolean("w1", true);
  r.sparse = o.boolean("sparse", true);
  o.finish();
  return r;
}

// /kernel: source, base_config, config_fragments, robot_checks.
void parse_kernel(const json& k, const fs::path& base_dir, Spec& s) {
  SpecObject ko(k, "/kernel");
  if (const json* src = ko.get("source")) s.source = parse_source(*src, base_dir);
  s.base_config = ko.str("base_config", "tinyconfig");
  static const std::regex target_re("[a-z0-9_]+config");
  if (!std::regex_match(s.base_config, target_re))
    throw SpecError("/kernel/base_config",
                    "expected a make *config target such as tinyconfig or defconfig");
  auto frags = ko.strings("config_fragments");
  for (std::size_t i = 0; i < frags.size(); ++i)
    s.config_fragments.push_back(
        resolve_existing(frags[i], base_dir, json_child("/kernel/config_fragments", i)));
  if (const json* r = ko.get("robot_checks")) s.robot_checks = parse_robot_checks(*r);
  ko.finish();
}

// One variant; `names` holds the earlier variants' names.
VariantSpec parse_variant(const json& j, const std::string& p, const fs::path& base_dir,
                          std::set<std::string>& names) {
  SpecObject vo(j, p);
  VariantSpec v;
  v.name = vo.str("name");
  check_spec_name(v.name, vo.ptr("name"), "variant");
  if (!names.insert(v.name).second)
    throw SpecError(vo.ptr("name"), "duplicate variant name " + v.name);
  auto patches = vo.strings("patches");
  for (std::size_t j = 0; j < patches.size(); ++j)
    add_patches(patches[j], base_dir, json_child(vo.ptr("patches"), j), v.patches);
  auto frags = vo.strings("config_fragments");
  for (std::size_t j = 0; j < frags.size(); ++j)
    v.config_fragments.push_back(
        resolve_existing(frags[j], base_dir, json_child(vo.ptr("config_fragments"), j)));
  v.extra_cmdline = vo.str("extra_cmdline");
  if (const json* sc = vo.get("sysctls")) v.sysctls = parse_sysctls(*sc, vo.ptr("sysctls"));
  vo.finish();
  return v;
}

// /variants: 1 to 16, names unique.
std::vector<VariantSpec> parse_variants(const json* vars, const fs::path& base_dir) {
  if (!vars || !vars->is_array() || vars->empty())
    throw SpecError("/variants", "expected a non-empty array of variants");
  if (vars->size() > 16) throw SpecError("/variants", "at most 16 variants");
  std::vector<VariantSpec> out;
  std::set<std::string> names;
  for (std::size_t i = 0; i < vars->size(); ++i)
    out.push_back(parse_variant((*vars)[i], json_child("/variants", i), base_dir, names));
  return out;
}

// /guest/topology: sockets, cores, threads, each > 0 when given.
GuestTopologySpec parse_topology(const json& t) {
  SpecObject to(t, "/guest/topology");
  GuestTopologySpec g;
  g.given = true;
  g.sockets = static_cast<int>(to.integer("sockets", 1, 0, 255));
  g.cores = static_cast<int>(to.integer("cores", 0, 0, 255));
  g.threads = static_cast<int>(to.integer("threads", 1, 0, 255));
  if (to.has("cores") && g.cores == 0)
    throw SpecError("/guest/topology/cores", "CPU topology parameters must be greater than zero");
  for (const char* k : {"sockets", "threads"})
    if ((k[0] == 's' ? g.sockets : g.threads) == 0)
      throw SpecError(to.ptr(k), "CPU topology parameters must be greater than zero");
  to.finish();
  return g;
}

// /guest/vcpus, memory_mib and numa_nodes.
void parse_guest_size(SpecObject& go, Spec& s) {
  s.vcpus = static_cast<int>(go.integer("vcpus", 0, 0, 1 << 20));
  if (s.vcpus > static_cast<int>(kMaxGuestVcpus))
    throw SpecError("/guest/vcpus", std::to_string(s.vcpus) + " vCPUs: QEMU 7.2 boots at most " +
                                        std::to_string(kMaxGuestVcpus) +
                                        " (see cmdline/analyze.h kMaxGuestVcpus)");
  s.memory_mib = static_cast<int>(go.integer("memory_mib", 512, 128, 16384));
  if (const json* nn = go.get("numa_nodes")) {
    s.numa_nodes = parse_numa_nodes(*nn, go.ptr("numa_nodes"), s.vcpus,
                                    go.has("memory_mib") ? s.memory_mib : 0);
    s.memory_mib = 0;
    for (const auto& n : s.numa_nodes) s.memory_mib += n.memory_mib;
  }
}

// /guest: one of cmdline, customer_cmdline, customer_dmesg; its size; topology.
void parse_guest(const json* g, const fs::path& base_dir, Spec& s) {
  if (g) {
    SpecObject go(*g, "/guest");
    s.cmdline = go.str("cmdline");
    s.customer_cmdline = go.str("customer_cmdline");
    std::string dm = go.str("customer_dmesg");
    if (!dm.empty()) s.customer_dmesg = resolve_existing(dm, base_dir, "/guest/customer_dmesg");
    int given = !s.cmdline.empty() + !s.customer_cmdline.empty() + !dm.empty();
    if (given > 1)
      throw SpecError("/guest", "give one of cmdline, customer_cmdline, customer_dmesg");
    s.customer_kernel_version = go.str("customer_kernel_version");
    if (!s.customer_kernel_version.empty() && s.customer_cmdline.empty() && dm.empty())
      throw SpecError("/guest/customer_kernel_version",
                      "only with customer_cmdline or customer_dmesg (the customer's kernel)");
    if (!s.customer_kernel_version.empty() &&
        (s.customer_kernel_version.size() > 64 || !parse_kernel_version(s.customer_kernel_version)))
      throw SpecError(
          "/guest/customer_kernel_version",
          "expected a kernel release MAJOR.MINOR[...] such as 5.15.0-91-generic, got '" +
              sanitize_excerpt(s.customer_kernel_version, 64) + "'");
    parse_guest_size(go, s);
    if (const json* t = go.get("topology")) s.topology = parse_topology(*t);
    s.gate_expect_fail = go.strings("gate_expect_fail");
    go.finish();
  }
  for (const std::string* c : {&s.cmdline, &s.customer_cmdline})
    for (unsigned char ch : *c)
      if (ch < 0x20 && ch != '\t')
        throw SpecError("/guest", "command line contains a control character");
}

// repetitions, warmup_repetitions, boot_order_seed, overcommit, parallel.
void parse_run_fields(SpecObject& o, Spec& s) {
  s.repetitions = static_cast<int>(o.integer("repetitions", 3, 1, 1000));
  s.warmup_repetitions = static_cast<int>(o.integer("warmup_repetitions", 0, 0, 100));
  if (o.has("boot_order_seed"))
    s.boot_order_seed =
        static_cast<std::uint64_t>(o.integer("boot_order_seed", 0, 0, kMaxBootOrderSeed));
  s.overcommit = o.boolean("overcommit", false);
  if (const json* par = o.get("parallel")) {
    if (par->is_string() && par->get<std::string>() == "auto")
      s.parallel = 0;
    else if (par->is_number_integer() && par->get<long>() >= 1 && par->get<long>() <= 256)
      s.parallel = par->get<int>();
    else
      throw SpecError("/parallel", "expected \"auto\" or an integer in [1, 256]");
  }
}

TimeoutSpec parse_timeouts(const json& t) {
  SpecObject to(t, "/timeouts");
  TimeoutSpec d;
  d.build_s = static_cast<int>(to.integer("build_s", d.build_s, 60, 86400));
  d.boot_s = static_cast<int>(to.integer("boot_s", d.boot_s, 5, 3600));
  d.silence_s = static_cast<int>(to.integer("silence_s", d.silence_s, 5, 3600));
  d.shutdown_s = static_cast<int>(to.integer("shutdown_s", d.shutdown_s, 5, 3600));
  d.workload_margin_s =
      static_cast<int>(to.integer("workload_margin_s", d.workload_margin_s, 0, 3600));
  to.finish();
  return d;
}

// /baseline: run (a run directory) or last_good, and the variant compared.
void parse_baseline(const json& b, const fs::path& base_dir, Spec& s) {
  SpecObject bo(b, "/baseline");
  s.baseline_last_good =
      bo.has("last_good") && bo.get("last_good")->is_boolean() && bo.get("last_good")->get<bool>();
  if (bo.has("last_good") && !bo.get("last_good")->is_boolean())
    throw SpecError("/baseline/last_good", "expected true or false");
  std::string run = bo.str("run");
  if (!run.empty()) s.baseline_run = resolve_existing(run, base_dir, "/baseline/run");
  if (s.baseline_last_good == !run.empty())
    throw SpecError("/baseline", "give exactly one of run (a run directory) or last_good: true");
  s.baseline_variant = bo.str("variant", s.variants.back().name);
  if (std::none_of(s.variants.begin(), s.variants.end(),
                   [&](const VariantSpec& v) { return v.name == s.baseline_variant; }))
    throw SpecError("/baseline/variant",
                    "no variant named '" + sanitize_excerpt(s.baseline_variant, 40) + "'");
  bo.finish();
}

// /compare: the settings as compare reads them (compare_settings.h), and every metric they
// name (a thresholds_pct key, exact or prefix, and a primary metric) one the workloads give.
void parse_compare(const json& c, const std::vector<WorkloadSpec>& ws) {
  if (!c.is_object()) throw SpecError("/compare", "expected an object");
  const CompareSettings settings = settings_from_json(c, "/compare");
  for (const auto& [key, pct] : settings.thresholds_pct) {
    const bool prefix = key.back() == '*';
    if (!workloads_give(ws, prefix ? key.substr(0, key.size() - 1) : key, prefix))
      throw SpecError(json_child("/compare/thresholds_pct", key),
                      "'" + sanitize_excerpt(key, 80) + "' " +
                          (prefix ? "is the prefix of" : "names") +
                          " no metric the spec's workloads give (" + workload_prefixes(ws) + ")");
  }
  for (std::size_t i = 0; i < settings.primary.size(); ++i)
    if (!workloads_give(ws, settings.primary[i].metric, false))
      throw SpecError(json_child(json_child("/compare/primary", i), "metric"),
                      "'" + sanitize_excerpt(settings.primary[i].metric, 80) +
                          "' is no metric the spec's workloads give (" + workload_prefixes(ws) +
                          ")");
}

// /budgets (spec/budgets.h), each one's workload one of the spec's and its named metric one
// that workload (or some workload, without one) gives.
std::vector<BudgetSpec> parse_spec_budgets(const json& j, const std::vector<WorkloadSpec>& ws) {
  std::vector<BudgetSpec> out = parse_budgets(j, "/budgets");
  for (const auto& b : out) {
    std::vector<WorkloadSpec> of;
    for (const auto& w : ws)
      if (b.workload.empty() || w.name == b.workload) of.push_back(w);
    if (of.empty())
      throw SpecError(json_child(b.pointer, "workload"), "no workload named '" +
                                                             sanitize_excerpt(b.workload, 40) +
                                                             "' (" + workload_prefixes(ws) + ")");
    bool gives = b.percentile.has_value();
    for (const auto& w : of)
      gives = gives || workloads_give({w}, w.name + "." + b.cell_metric, false);
    if (!gives)
      throw SpecError(json_child(b.pointer, "metric"),
                      "\"" + b.metric + "\" is no metric of " +
                          (b.workload.empty() ? "any workload" : "workload " + b.workload) + " (" +
                          workload_prefixes(ws) + ")");
  }
  return out;
}

// /compare/calibration given as a file name (relative to the spec): the file is read now and
// its margins and jitters replace the name (compare_settings.h calibration_section), so that the
// run's result.json carries what was fixed before it.
json with_calibration_read(const json& doc, const fs::path& base_dir) {
  const json* c = doc.is_object() && doc.contains("compare") ? &doc["compare"] : nullptr;
  if (!c || !c->is_object() || !c->contains("calibration") || !(*c)["calibration"].is_string())
    return doc;
  const std::string ptr = "/compare/calibration";
  const std::string name = (*c)["calibration"].get<std::string>();
  const fs::path file = resolve_existing(name, base_dir, ptr);
  json cal;
  try {
    cal = read_json_document(file, std::size_t{64} << 20);
  } catch (const std::exception& e) {
    throw SpecError(ptr, file.string() + ": " + e.what());
  }
  json out = doc;
  try {
    out["compare"]["calibration"] = calibration_section(cal, name);
  } catch (const SpecError& e) {
    throw SpecError(ptr, file.string() + ": " + e.what());
  }
  return out;
}

}  // namespace

Spec parse_spec(const json& given, const fs::path& base_dir) {
  const json doc = with_calibration_read(given, base_dir);
  Spec s;
  s.raw = doc;
  SpecObject o(doc, "");
  s.name = o.str("name");
  check_spec_name(s.name, "/name", "spec");
  s.description = o.str("description");
  if (const json* k = o.get("kernel")) parse_kernel(*k, base_dir, s);
  s.variants = parse_variants(o.get("variants"), base_dir);
  parse_guest(o.get("guest"), base_dir, s);
  if (const json* c = o.get("customer"))
    take_customer(parse_customer(*c, o.get("guest"), base_dir, s.memory_mib), s);
  s.workloads = parse_workloads(o.get("workloads"));
  parse_run_fields(o, s);
  if (const json* t = o.get("timeouts")) s.timeouts = parse_timeouts(*t);
  if (const json* b = o.get("baseline")) parse_baseline(*b, base_dir, s);
  if (const json* c = o.get("compare")) {
    parse_compare(*c, s.workloads);
    s.compare = *c;
  }
  if (const json* h = o.get("hosts")) s.hosts = parse_hosts(*h, "/hosts");
  if (const json* b = o.get("budgets")) s.budgets = parse_spec_budgets(*b, s.workloads);
  o.finish();
  return s;
}

Spec load_spec_file(const fs::path& path) {
  json doc;
  try {
    doc = read_json_document(path, kMaxSpecBytes);
  } catch (const Error& e) {
    throw Error(std::string("spec ") + e.what());
  }
  try {
    Spec s = parse_spec(doc, fs::absolute(path).parent_path());
    s.spec_path = fs::absolute(path);
    return s;
  } catch (const SpecError& e) {
    throw spec_error_in_file(e, path);
  }
}

SpecError spec_error_in_file(const SpecError& e, const fs::path& path) {
  const std::string what = e.what();
  return SpecError(e.pointer(),
                   what.substr(e.pointer().size() + 2) + " (in " + path.string() + ")");
}

json workloads_to_json(const std::vector<WorkloadSpec>& ws) {
  json arr = json::array();
  for (const auto& w : ws) {
    json j = {{"name", w.name},
              {"tool", w.tool},
              {"cpus", w.cpus},
              {"duration_s", w.duration_s},
              {"interval_us", w.interval_us},
              {"priority", w.priority},
              {"histogram_us", w.histogram_us},
              {"stressors", w.stressors},
              {"extra_args", w.extra_args},
              {"mode", w.mode},
              {"iterations", w.iterations},
              {"warmup_iterations", w.warmup_iterations},
              {"touch_pages", w.touch_pages},
              {"sleep_us", w.sleep_us}};
    // Only when set, so that the hash of an existing spec's workloads does not change.
    if (!w.latency_tracer.empty()) j["latency_tracer"] = w.latency_tracer;
    if (!w.count_calls.empty()) j["count_calls"] = w.count_calls;
    if (w.load) j["load"] = workloads_to_json(*w.load);
    arr.push_back(j);
  }
  return arr;
}

bool workloads_give(const std::vector<WorkloadSpec>& ws, const std::string& name, bool prefix) {
  for (const auto& w : ws)
    for (const auto& pattern : workload_metric_patterns(w))
      if (metric_pattern_matches(pattern, name, prefix)) return true;
  return false;
}

std::string workload_prefixes(const std::vector<WorkloadSpec>& ws) {
  std::string out;
  for (const auto& w : ws) out += (out.empty() ? "" : ", ") + w.name + ".*";
  return out;
}

}  // namespace isolab

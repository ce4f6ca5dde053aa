#include "spec/spec.h"

#include <algorithm>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "base/error.h"
#include "base/files.h"
#include "base/json_text.h"
#include "cmdline/analyze.h"
#include "cmdline/cpulist.h"
#include "spec/primary.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace isolab {

namespace {

std::string child(const std::string& ptr, const std::string& key) {
  return ptr + "/" + json_pointer_token(key);
}
std::string child(const std::string& ptr, std::size_t i) { return ptr + "/" + std::to_string(i); }

// A JSON object reader that remembers which keys were consumed so that unknown keys can be
// reported with their pointer.
class Obj {
 public:
  Obj(const json& j, std::string ptr) : j_(j), ptr_(std::move(ptr)) {
    if (!j.is_object())
      throw SpecError(ptr_.empty() ? "/" : ptr_,
                      "expected an object, got " + std::string(j.type_name()));
  }
  bool has(const std::string& k) const { return j_.contains(k); }
  const json* get(const std::string& k) {
    seen_.insert(k);
    auto it = j_.find(k);
    return it == j_.end() ? nullptr : &*it;
  }
  std::string ptr(const std::string& k) const { return child(ptr_, k); }
  const std::string& ptr() const { return ptr_; }

  std::string str(const std::string& k, std::string def = "") {
    const json* v = get(k);
    if (!v) return def;
    if (!v->is_string())
      throw SpecError(ptr(k), "expected a string, got " + std::string(v->type_name()));
    return v->get<std::string>();
  }
  long integer(const std::string& k, long def, long lo, long hi) {
    const json* v = get(k);
    if (!v) return def;
    if (!v->is_number_integer())
      throw SpecError(ptr(k), "expected an integer, got " + std::string(v->type_name()));
    long x = v->get<long>();
    if (x < lo || x > hi)
      throw SpecError(ptr(k), "value " + std::to_string(x) + " out of range [" +
                                  std::to_string(lo) + ", " + std::to_string(hi) + "]");
    return x;
  }
  bool boolean(const std::string& k, bool def) {
    const json* v = get(k);
    if (!v) return def;
    if (!v->is_boolean())
      throw SpecError(ptr(k), "expected true or false, got " + std::string(v->type_name()));
    return v->get<bool>();
  }
  std::vector<std::string> strings(const std::string& k) {
    std::vector<std::string> out;
    const json* v = get(k);
    if (!v) return out;
    if (!v->is_array()) throw SpecError(ptr(k), "expected an array of strings");
    for (std::size_t i = 0; i < v->size(); ++i) {
      if (!(*v)[i].is_string()) throw SpecError(child(ptr(k), i), "expected a string");
      out.push_back((*v)[i].get<std::string>());
    }
    return out;
  }
  void finish() const {
    for (auto it = j_.begin(); it != j_.end(); ++it)
      if (!seen_.count(it.key())) throw SpecError(ptr(it.key()), "unknown field");
  }

 private:
  const json& j_;
  std::string ptr_;
  std::set<std::string> seen_;
};

void check_name(const std::string& name, const std::string& ptr, const char* what) {
  static const std::regex re("[A-Za-z0-9_.-]{1,40}");
  if (!std::regex_match(name, re) || name == "." || name == "..")
    throw SpecError(ptr, std::string(what) + " name '" + sanitize_excerpt(name, 60) +
                             "' must be 1-40 characters of A-Z a-z 0-9 _ . -");
}

fs::path resolve_existing(const std::string& p, const fs::path& base, const std::string& ptr) {
  if (p.empty()) throw SpecError(ptr, "empty path");
  fs::path path = fs::path(p).is_absolute() ? fs::path(p) : base / p;
  std::error_code ec;
  if (!fs::exists(path, ec)) throw SpecError(ptr, "file not found: " + path.string());
  return fs::weakly_canonical(path, ec);
}

// A patch entry is a patch file or a directory holding a `series` file (one name per line,
// '#' comments), as quilt and git format-patch users keep them.
void add_patches(const std::string& entry, const fs::path& base, const std::string& ptr,
                 std::vector<fs::path>& out) {
  fs::path p = resolve_existing(entry, base, ptr);
  if (!fs::is_directory(p)) {
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
    out.push_back(f);
  }
}

// latency_tracer and count_calls (cyclictest only).
void parse_cyclictest_tracing(Obj& o, WorkloadSpec& w) {
  for (const char* k : {"latency_tracer", "count_calls"})
    if (w.tool != "cyclictest" && o.has(k))
      throw SpecError(o.ptr(k), "only a cyclictest workload takes this field");
  w.latency_tracer = o.str("latency_tracer", "");
  if (!w.latency_tracer.empty() && w.latency_tracer != "wakeup_rt")
    throw SpecError(o.ptr("latency_tracer"),
                    "expected wakeup_rt, got '" + sanitize_excerpt(w.latency_tracer, 40) + "'");
  w.count_calls = o.strings("count_calls");
  static const std::regex fn_re("[A-Za-z_][A-Za-z0-9_.]{0,79}");
  for (std::size_t i = 0; i < w.count_calls.size(); ++i)
    if (!std::regex_match(w.count_calls[i], fn_re))
      throw SpecError(
          child(o.ptr("count_calls"), i),
          "not a kernel function name: '" + sanitize_excerpt(w.count_calls[i], 80) + "'");
  // The function profiler prints names cut to 30 characters (workload.cc): two names that
  // agree on those could not be told apart.
  for (std::size_t i = 0; i < w.count_calls.size(); ++i)
    for (std::size_t k = 0; k < i; ++k)
      if (w.count_calls[i].substr(0, 30) == w.count_calls[k].substr(0, 30))
        throw SpecError(child(o.ptr("count_calls"), i),
                        "its first 30 characters are those of count_calls[" + std::to_string(k) +
                            "]: the function profiler prints names cut to 30");
}

WorkloadSpec parse_workload(const json& j, const std::string& ptr, bool is_load) {
  Obj o(j, ptr);
  WorkloadSpec w;
  w.pointer = ptr;
  w.name = o.str("name", is_load ? "load" : "");
  check_name(w.name, o.ptr("name"), "workload");
  w.tool = o.str("tool");
  static const std::set<std::string> tools = {
      "cyclictest",    "stress-ng",        "vmstat-overhead", "rtla-osnoise",
      "rtla-timerlat", "madvise-pressure", "page-fault-bench"};
  if (!tools.count(w.tool))
    throw SpecError(o.ptr("tool"), "unknown tool '" + sanitize_excerpt(w.tool, 40) +
                                       "' (known: cyclictest, stress-ng, vmstat-overhead, "
                                       "rtla-osnoise, rtla-timerlat, madvise-pressure, "
                                       "page-fault-bench)");
  if (!is_load && w.tool == "madvise-pressure")
    throw SpecError(o.ptr("tool"), "madvise-pressure runs only as the load of a cyclictest");
  if (is_load && w.tool != "stress-ng" && w.tool != "madvise-pressure")
    throw SpecError(o.ptr("tool"), "a load must be stress-ng or madvise-pressure");
  const bool pfb = w.tool == "page-fault-bench";
  w.cpus = o.str("cpus", is_load || w.tool == "stress-ng" ? "housekeeping"
                         : pfb                            ? "all"
                                                          : "isolated");
  static const std::regex cpus_re("isolated|housekeeping|all|[0-9N, :/-]+");
  if (!std::regex_match(w.cpus, cpus_re))
    throw SpecError(o.ptr("cpus"), "expected isolated, housekeeping, all or a cpulist, got '" +
                                       sanitize_excerpt(w.cpus, 40) + "'");
  w.duration_s = static_cast<int>(o.integer("duration_s",
                                            w.tool == "vmstat-overhead" ? 0
                                            : pfb                       ? 2
                                                                        : 10,
                                            pfb ? 1 : 0, 86400));
  if (w.tool.rfind("rtla-", 0) == 0 && w.duration_s < 1)
    throw SpecError(o.ptr("duration_s"), "an rtla workload needs a duration of at least 1 s");
  w.interval_us = static_cast<int>(o.integer("interval_us", 1000, 50, 1000000));
  w.priority = static_cast<int>(o.integer("priority", 95, 1, 99));
  w.histogram_us = static_cast<int>(o.integer("histogram_us", 1000, 0, 100000));
  if (const json* s = o.get("stressors")) {
    if (!s->is_object() || s->empty())
      throw SpecError(o.ptr("stressors"), "expected an object {stressor: instances}");
    static const std::regex st_re("[a-z0-9-]{1,30}");
    for (auto it = s->begin(); it != s->end(); ++it) {
      std::string p = child(o.ptr("stressors"), it.key());
      if (!std::regex_match(it.key(), st_re)) throw SpecError(p, "bad stressor name");
      if (!it->is_number_integer() || it->get<int>() < 0 || it->get<int>() > 1024)
        throw SpecError(p, "expected an instance count 0-1024 (0 = one per selected CPU)");
      w.stressors[it.key()] = it->get<int>();
    }
  } else if (w.tool == "stress-ng") {
    w.stressors["cpu"] = 0;
  }
  w.extra_args = o.strings("extra_args");
  for (std::size_t i = 0; i < w.extra_args.size(); ++i)
    if (w.extra_args[i].find_first_of("\n\r'") != std::string::npos || w.extra_args[i].size() > 200)
      throw SpecError(child(o.ptr("extra_args"), i),
                      "argument has a newline or quote or is too long");
  w.mode = o.str("mode", w.tool == "vmstat-overhead" ? "syscall" : "");
  if (w.tool == "vmstat-overhead" && w.mode != "syscall" && w.mode != "idle")
    throw SpecError(o.ptr("mode"), "expected syscall or idle");
  long def_iter = w.mode == "idle" ? 2000 : 100000;
  w.iterations = o.integer("iterations", w.tool == "vmstat-overhead" ? def_iter : 0, 0, 1000000000);
  w.warmup_iterations =
      o.integer("warmup_iterations", pfb ? 20 : w.iterations / 10, 0, pfb ? 1000000 : 1000000000);
  w.touch_pages = o.boolean("touch_pages", false);
  w.sleep_us = static_cast<int>(o.integer("sleep_us", 10, 0, 1000000));
  for (const char* k : {"touch_pages", "sleep_us"})
    if (w.tool != "vmstat-overhead" && o.has(k))
      throw SpecError(o.ptr(k), "only a vmstat-overhead workload takes this field");
  parse_cyclictest_tracing(o, w);
  w.timeout_s = static_cast<int>(o.integer("timeout_s", 0, 0, 86400));
  if (const json* l = o.get("load")) {
    if (is_load) throw SpecError(o.ptr("load"), "a load cannot have a load");
    if (w.tool != "cyclictest")
      throw SpecError(o.ptr("load"), "only a cyclictest workload takes a load");
    w.load = std::vector<WorkloadSpec>{parse_workload(*l, o.ptr("load"), true)};
    w.load->front().duration_s = w.duration_s;
  }
  o.finish();
  return w;
}

// "sysctls": {"vm.numa_stat": 0, "kernel.foo": "1 2"}: names as sysctl(8) writes them, values
// that a shell word and /proc/sys can carry without quoting surprises.
std::map<std::string, std::string> parse_sysctls(const json& j, const std::string& ptr) {
  if (!j.is_object()) throw SpecError(ptr, "expected an object {\"name\": value}");
  static const std::regex name_re("[a-z0-9_]+(\\.[A-Za-z0-9_-]+)+");
  static const std::regex value_re("[A-Za-z0-9 _.,:+=-]{0,100}");
  std::map<std::string, std::string> out;
  for (auto it = j.begin(); it != j.end(); ++it) {
    std::string p = child(ptr, it.key());
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
    Obj no(j[i], child(ptr, i));
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
    const std::string p = child(pointer, i);
    HostSpec h;
    if (hosts[i].is_string()) {
      h.uri = hosts[i].get<std::string>();
    } else {
      Obj ho(hosts[i], p);
      h.uri = ho.str("uri");
      h.pool_dir = ho.str("pool_dir");
      if (!h.pool_dir.empty() && h.pool_dir.front() != '/')
        throw SpecError(ho.ptr("pool_dir"), "pool_dir must be an absolute path");
      ho.finish();
    }
    const std::string up = hosts[i].is_string() ? p : child(p, "uri");
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

Spec parse_spec(const json& doc, const fs::path& base_dir) {
  Spec s;
  s.raw = doc;
  Obj o(doc, "");
  s.name = o.str("name");
  check_name(s.name, "/name", "spec");
  s.description = o.str("description");

  if (const json* k = o.get("kernel")) {
    Obj ko(*k, "/kernel");
    if (const json* src = ko.get("source")) {
      Obj so(*src, "/kernel/source");
      int kinds = so.has("tarball") + so.has("git") + so.has("prebuilt");
      if (kinds != 1)
        throw SpecError("/kernel/source", "give exactly one of tarball, git, prebuilt");
      if (so.has("tarball")) {
        s.source.kind = KernelSourceSpec::Kind::tarball;
        s.source.tarball = resolve_existing(so.str("tarball"), base_dir, "/kernel/source/tarball");
      } else if (so.has("git")) {
        s.source.kind = KernelSourceSpec::Kind::git;
        s.source.git = so.str("git");
        s.source.ref = so.str("ref", "HEAD");
        if (s.source.git.empty()) throw SpecError("/kernel/source/git", "empty");
        if (!s.source.git.empty() && s.source.git[0] == '-')
          throw SpecError("/kernel/source/git", "must not start with '-'");
        if (!s.source.ref.empty() && s.source.ref[0] == '-')
          throw SpecError("/kernel/source/ref", "must not start with '-'");
        if (s.source.git.find("://") == std::string::npos &&
            s.source.git.find('@') == std::string::npos)
          s.source.git = resolve_existing(s.source.git, base_dir, "/kernel/source/git").string();
      } else {
        s.source.kind = KernelSourceSpec::Kind::prebuilt;
        s.source.prebuilt =
            resolve_existing(so.str("prebuilt"), base_dir, "/kernel/source/prebuilt");
      }
      so.finish();
    }
    s.base_config = ko.str("base_config", "tinyconfig");
    static const std::regex target_re("[a-z0-9_]+config");
    if (!std::regex_match(s.base_config, target_re))
      throw SpecError("/kernel/base_config",
                      "expected a make *config target such as tinyconfig or defconfig");
    auto frags = ko.strings("config_fragments");
    for (std::size_t i = 0; i < frags.size(); ++i)
      s.config_fragments.push_back(
          resolve_existing(frags[i], base_dir, child("/kernel/config_fragments", i)));
    ko.finish();
  }

  const json* vars = o.get("variants");
  if (!vars || !vars->is_array() || vars->empty())
    throw SpecError("/variants", "expected a non-empty array of variants");
  if (vars->size() > 16) throw SpecError("/variants", "at most 16 variants");
  std::set<std::string> names;
  for (std::size_t i = 0; i < vars->size(); ++i) {
    std::string p = child("/variants", i);
    Obj vo((*vars)[i], p);
    VariantSpec v;
    v.name = vo.str("name");
    check_name(v.name, vo.ptr("name"), "variant");
    if (!names.insert(v.name).second)
      throw SpecError(vo.ptr("name"), "duplicate variant name " + v.name);
    auto patches = vo.strings("patches");
    for (std::size_t j = 0; j < patches.size(); ++j)
      add_patches(patches[j], base_dir, child(vo.ptr("patches"), j), v.patches);
    auto frags = vo.strings("config_fragments");
    for (std::size_t j = 0; j < frags.size(); ++j)
      v.config_fragments.push_back(
          resolve_existing(frags[j], base_dir, child(vo.ptr("config_fragments"), j)));
    v.extra_cmdline = vo.str("extra_cmdline");
    if (const json* sc = vo.get("sysctls")) v.sysctls = parse_sysctls(*sc, vo.ptr("sysctls"));
    vo.finish();
    s.variants.push_back(std::move(v));
  }

  if (const json* g = o.get("guest")) {
    Obj go(*g, "/guest");
    s.cmdline = go.str("cmdline");
    s.customer_cmdline = go.str("customer_cmdline");
    std::string dm = go.str("customer_dmesg");
    if (!dm.empty()) s.customer_dmesg = resolve_existing(dm, base_dir, "/guest/customer_dmesg");
    int given = !s.cmdline.empty() + !s.customer_cmdline.empty() + !dm.empty();
    if (given > 1)
      throw SpecError("/guest", "give one of cmdline, customer_cmdline, customer_dmesg");
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
    if (const json* t = go.get("topology")) {
      Obj to(*t, "/guest/topology");
      s.topology.given = true;
      s.topology.sockets = static_cast<int>(to.integer("sockets", 1, 0, 255));
      s.topology.cores = static_cast<int>(to.integer("cores", 0, 0, 255));
      s.topology.threads = static_cast<int>(to.integer("threads", 1, 0, 255));
      if (to.has("cores") && s.topology.cores == 0)
        throw SpecError("/guest/topology/cores",
                        "CPU topology parameters must be greater than zero");
      for (const char* k : {"sockets", "threads"})
        if ((k[0] == 's' ? s.topology.sockets : s.topology.threads) == 0)
          throw SpecError(to.ptr(k), "CPU topology parameters must be greater than zero");
      to.finish();
    }
    s.gate_expect_fail = go.strings("gate_expect_fail");
    go.finish();
  }
  for (const std::string* c : {&s.cmdline, &s.customer_cmdline})
    for (unsigned char ch : *c)
      if (ch < 0x20 && ch != '\t')
        throw SpecError("/guest", "command line contains a control character");

  const json* wls = o.get("workloads");
  if (!wls || !wls->is_array() || wls->empty())
    throw SpecError("/workloads", "expected a non-empty array of workloads");
  std::set<std::string> wnames;
  for (std::size_t i = 0; i < wls->size(); ++i) {
    std::string p = child("/workloads", i);
    WorkloadSpec w = parse_workload((*wls)[i], p, false);
    if (!wnames.insert(w.name).second)
      throw SpecError(p + "/name", "duplicate workload name " + w.name);
    s.workloads.push_back(std::move(w));
  }

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
  if (const json* t = o.get("timeouts")) {
    Obj to(*t, "/timeouts");
    s.timeouts.build_s = static_cast<int>(to.integer("build_s", s.timeouts.build_s, 60, 86400));
    s.timeouts.boot_s = static_cast<int>(to.integer("boot_s", s.timeouts.boot_s, 5, 3600));
    s.timeouts.silence_s = static_cast<int>(to.integer("silence_s", s.timeouts.silence_s, 5, 3600));
    s.timeouts.shutdown_s =
        static_cast<int>(to.integer("shutdown_s", s.timeouts.shutdown_s, 5, 3600));
    s.timeouts.workload_margin_s =
        static_cast<int>(to.integer("workload_margin_s", s.timeouts.workload_margin_s, 0, 3600));
    to.finish();
  }
  if (const json* b = o.get("baseline")) {
    Obj bo(*b, "/baseline");
    s.baseline_last_good = bo.has("last_good") && bo.get("last_good")->is_boolean() &&
                           bo.get("last_good")->get<bool>();
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
  if (const json* c = o.get("compare")) {
    if (!c->is_object()) throw SpecError("/compare", "expected an object");
    // The primary metrics decide compare's exit status: a bad declaration is refused before
    // anything is built (compare's settings_from_json reads the rest of the section).
    if (auto p = c->find("primary"); p != c->end()) primary_from_json(*p, "/compare/primary");
    s.compare = *c;
  }
  if (const json* h = o.get("hosts")) s.hosts = parse_hosts(*h, "/hosts");
  o.finish();
  return s;
}

Spec load_spec_file(const fs::path& path) {
  std::string text;
  try {
    text = read_file(path, 4 * 1024 * 1024);
  } catch (const Error& e) {
    throw Error(std::string("spec: ") + e.what());
  }
  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::parse_error& e) {
    throw Error("spec " + path.string() + ": invalid JSON at byte " + std::to_string(e.byte) +
                ": " + e.what());
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

}  // namespace isolab

// oslat (rt-tests): a busy loop on each selected CPU reads the cycle counter and histograms every
// gap between two reads (parse/oslat.h): the interruptions the CPU suffers, as the task sees
// them. One thread per CPU of the workload's `cpus`, the main thread on a housekeeping CPU.
#include "parse/oslat.h"

#include <algorithm>
#include <regex>

#include "base/error.h"
#include "base/files.h"
#include "base/text.h"
#include "parse/oslat_json.h"
#include "parse/oslat_text.h"
#include "workload/tool.h"

namespace isolab {

namespace tool_oslat {
namespace {

// More CPUs than any guest has (a CPU number beyond it is not one oslat ran on).
constexpr unsigned kMaxGuestCpus = 8192;

// oslat's options (rt-tests 2.4 parse_options(): getopt_long over "b:Bc:C:D:f:hm:qsw:T:vz")
// that the workload's fields own: the CPUs (`cpus`), the main thread's CPU (the housekeeping),
// the run time (`duration_s`) and the JSON file. A short one may lead a cluster ("-zc1") or
// follow letters without a value; a long one may be abbreviated to any prefix ("--cpu-l").
bool owned_option(const std::string& arg) {
  static const std::regex long_re("--(c|cp|cpu|cpu-.*|d|du.*|j|js.*)(=.*)?");
  static const std::regex short_re("-[Bhqsvz]*[cCD].*");
  return std::regex_match(arg, long_re) || std::regex_match(arg, short_re);
}

void refuse_owned_options(const SpecObject& o, const WorkloadSpec& w) {
  for (std::size_t i = 0; i < w.extra_args.size(); ++i)
    if (owned_option(w.extra_args[i]))
      throw SpecError(json_child(o.ptr("extra_args"), i),
                      "'" + sanitize_excerpt(w.extra_args[i], 40) +
                          "' would choose oslat's CPUs, main thread, duration or JSON file; the "
                          "workload's \"cpus\" and \"duration_s\" do (isolab passes --cpu-list, "
                          "--cpu-main-thread, -D and --json)");
}

// priority (given: SCHED_FIFO --rtprio; absent: oslat's SCHED_OTHER), histogram_us (-b: 1 µs
// buckets, 5 to 1024), oslat_workload ("no" or "memmove").
void read_fields(SpecObject& o, WorkloadSpec& w) {
  if (!o.has("priority")) w.priority = 0;
  if (w.histogram_us < 5 || w.histogram_us > 1024)
    throw SpecError(o.ptr("histogram_us"), "oslat takes 5 to 1024 buckets of 1 us (-b), got " +
                                               std::to_string(w.histogram_us));
  w.oslat_workload = o.str("oslat_workload", "no");
  if (w.oslat_workload != "no" && w.oslat_workload != "memmove")
    throw SpecError(o.ptr("oslat_workload"),
                    "expected no or memmove, got '" + sanitize_excerpt(w.oslat_workload, 40) + "'");
  refuse_owned_options(o, w);
}

std::vector<std::string> oslat_argv(const WorkloadSpec& w, const StepInput& in) {
  std::vector<std::string> argv = {"oslat", "--cpu-list", in.cpus.to_list()};
  if (auto main_cpu = in.partition->housekeeping.first())
    argv.insert(argv.end(), {"--cpu-main-thread", std::to_string(*main_cpu)});
  argv.insert(argv.end(), {"-D", std::to_string(w.duration_s)});
  if (w.priority > 0) argv.insert(argv.end(), {"--rtprio", std::to_string(w.priority)});
  // -z: the text leaves out all-zero rows (the JSON lists only non-empty buckets anyway).
  argv.insert(argv.end(), {"-b", std::to_string(w.histogram_us), "-z"});
  if (w.oslat_workload != "no") argv.insert(argv.end(), {"-w", w.oslat_workload});
  argv.emplace_back("--json=oslat.json");
  argv.insert(argv.end(), w.extra_args.begin(), w.extra_args.end());
  return argv;
}

// oslat pre-heats for 1 s before its run. The CPUs asked for are kept beside its output.
void step(const WorkloadSpec& w, const StepInput& in, GuestStep& s) {
  s.script = "echo " + in.cpus.to_list() + " > oslat.cpus\n" + sh_words(oslat_argv(w, in)) + "\n";
  s.outputs.emplace_back("json", "oslat.json");
  s.outputs.emplace_back("cpus", "oslat.cpus");
  s.timeout_s = w.timeout_s ? w.timeout_s : w.duration_s + 1 + in.margin_s;
}

// The JSON, or, when oslat wrote none, the text: which says why (libnuma, its usage text, a
// run cut short) or, if whole, is the result.
OslatResult read_result(const WorkloadSpec& w, const StepRecords& r, WorkloadOutcome& o) {
  const ChannelRecord* js = r.all->find(w.name + ".json");
  if (js && !js->data.empty()) return parse_oslat_json(js->data);
  try {
    OslatResult res = parse_oslat_text(r.out->data);
    o.notes.emplace_back("oslat wrote no JSON file: its text summary was read");
    return res;
  } catch (const Error& e) {
    throw Error("oslat exited " + std::to_string(r.out->rc) + " without JSON output: " + e.what() +
                "; stderr: " + sanitize_excerpt(r.err ? r.err->data : "", 300));
  }
}

// oslat leaves out, without a word, a CPU of --cpu-list it cannot run on (main(): move_to_core
// fails): the CPUs measured must be the CPUs asked for.
void check_cpus(const WorkloadSpec& w, const StepRecords& r, const OslatResult& res,
                WorkloadOutcome& o) {
  const ChannelRecord* asked = r.all->find(w.name + ".cpus");
  if (!asked) throw Error("no record of the CPUs oslat was given");
  const CpuListParse want = try_parse_cpulist(std::string(trim_space(asked->data)), kMaxGuestCpus);
  if (!want.ok()) throw Error("the record of oslat's CPUs is not a CPU list: " + want.message);
  CpuSet measured(kMaxGuestCpus);
  for (const auto& t : res.threads)
    if (t.cpu >= 0 && static_cast<unsigned>(t.cpu) < kMaxGuestCpus)
      measured.set(static_cast<unsigned>(t.cpu));
  if (measured.to_list() != want.set.to_list() && o.invalid.empty())
    o.invalid = "oslat measured CPUs " + measured.to_list() + ", not the CPUs it was given (" +
                want.set.to_list() + "): it leaves out a CPU it cannot run on";
}

void parse(const WorkloadSpec& w, const StepRecords& r, WorkloadOutcome& o) {
  const OslatResult res = read_result(w, r, o);
  o.notes.insert(o.notes.end(), res.notes.begin(), res.notes.end());
  add_prefixed(o, w.name + ".", oslat_metrics(res, &o.notes));
  o.tool_versions.merge(oslat_versions(res, &o.notes));
  const nlohmann::json histograms = oslat_histograms_json(res, w.name, &o.notes);
  for (const auto& [name, h] : histograms.items()) o.histograms[name] = h;
  if (r.out->rc != 0) fail_once(o, "oslat exited " + std::to_string(r.out->rc));
  check_cpus(w, r, res, o);
  if (std::none_of(res.threads.begin(), res.threads.end(),
                   [](const OslatThread& t) { return t.has_samples(); }) &&
      o.invalid.empty())
    o.invalid = "oslat: no CPU has samples";
}

std::vector<std::string> metric_names(const WorkloadSpec&) {
  return {"oslat_min_us", "oslat_avg_us", "oslat_max_us"};
}

}  // namespace
}  // namespace tool_oslat

const WorkloadTool& oslat_tool() {
  static const WorkloadTool t{.name = "oslat",
                              .min_duration_s = 1,
                              .own_fields = {"oslat_workload"},
                              .read_fields = tool_oslat::read_fields,
                              .step = tool_oslat::step,
                              .parse = tool_oslat::parse,
                              .metric_names = tool_oslat::metric_names,
                              .guest_binary = "/usr/bin/oslat"};
  return t;
}

}  // namespace isolab

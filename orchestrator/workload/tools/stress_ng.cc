// stress-ng: a load of the selected stressors (as a workload, or as the load of a cyclictest),
// with its bogo-ops metrics, judged on its exit status and log (parse/stressng.h).
#include "base/files.h"
#include "parse/stressng.h"
#include "workload/tool.h"

namespace isolab {

namespace tool_stress_ng {
namespace {

// stressors: one instance per selected CPU of "cpu" when the spec names none.
void read_fields(SpecObject& o, WorkloadSpec& w) {
  read_iteration_fields(o, w);
  if (w.stressors.empty()) w.stressors["cpu"] = 0;
}

std::vector<std::string> stressng_argv(const WorkloadSpec& w, const CpuSet& cpus, int duration_s,
                                       const std::string& yaml) {
  std::vector<std::string> argv = {"stress-ng", "--taskset", cpus.to_list()};
  for (const auto& [stressor, n] : w.stressors) {
    argv.push_back("--" + stressor);
    argv.push_back(std::to_string(n == 0 ? cpus.count() : static_cast<unsigned>(n)));
  }
  argv.insert(argv.end(),
              {"--timeout", std::to_string(duration_s) + "s", "--metrics", "--yaml", yaml});
  argv.insert(argv.end(), w.extra_args.begin(), w.extra_args.end());
  return argv;
}

void step(const WorkloadSpec& w, const StepInput& in, GuestStep& s) {
  s.script = sh_words(stressng_argv(w, in.cpus, w.duration_s, "stress-ng.yaml")) + "\n";
  s.outputs.emplace_back("yaml", "stress-ng.yaml");
  s.timeout_s = w.timeout_s ? w.timeout_s : w.duration_s + in.margin_s;
}

// As a load: writes load.yaml, its log to load.out.
std::string load_script(const WorkloadSpec& l, const CpuSet& cpus, int duration_s, GuestStep& s) {
  s.outputs.emplace_back("load.yaml", "load.yaml");
  return sh_words(stressng_argv(l, cpus, duration_s, "load.yaml")) + " > load.out 2>&1 &\n";
}

std::string trimmed(const std::string& s) {
  auto b = s.find_first_not_of(" \t\r\n");
  return b == std::string::npos ? "" : s.substr(b, s.find_last_not_of(" \t\r\n") - b + 1);
}

// The stress-ng requested by `w` (its stressors), judged on its exit status and log;
// `prefix` is where its metrics went ("<wl>." or "<wl>.load.").
void judge(WorkloadOutcome& o, const WorkloadSpec& w, const std::string& prefix,
           const StressngResult& r, std::optional<int> rc, std::string_view log) {
  std::vector<std::string> requested;
  for (const auto& [stressor, n] : w.stressors) requested.push_back(stressor);
  StressngRunCheck c = check_stressng_run(parse_stressng_log(log), rc, requested, r);
  using O = StressngRunCheck::Outcome;
  const std::string who = prefix.ends_with(".load.") ? "the stress-ng load: " : "";
  if (c.outcome == O::failed) fail_once(o, who + c.reason);
  if (c.outcome == O::invalid && o.invalid.empty()) o.invalid = who + c.reason;
  for (const auto& [stressor, why] : c.untrustworthy) {
    const std::string reason = "stress-ng: metrics untrustworthy: " + why;
    if (mark_untrustworthy(o.metrics, prefix + stressor + ".", reason))
      o.notes.push_back(stressor + ": " + reason + " (kept out of comparisons)");
  }
}

// "0\n" -> 0; nullopt when absent or not a number (the guest is untrusted).
std::optional<int> rc_record(const ChannelRecord* r) {
  if (!r) return std::nullopt;
  const std::string t = trimmed(r->data);
  if (t.empty() || t.size() > 4 || t.find_first_not_of("0123456789") != std::string::npos)
    return std::nullopt;
  return std::stoi(t);
}

// The YAML's metrics under `prefix`, and its stress-ng-version recorded with the result.
StressngResult read_yaml(WorkloadOutcome& o, const std::string& yaml, const std::string& prefix) {
  StressngResult r = parse_stressng_yaml(yaml);
  if (!r.version.empty()) o.tool_versions["stress-ng"] = sanitize_excerpt(r.version, 40);
  add_prefixed(o, prefix, stressng_metrics(r, &o.notes));
  return r;
}

// The stress-ng tool step: stress-ng.yaml, its log on stdout/stderr, its exit status (rc).
void parse(const WorkloadSpec& w, const StepRecords& rec, WorkloadOutcome& o) {
  const std::string p = w.name + ".";
  const ChannelRecord* y = rec.all->find(p + "yaml");
  const std::string log = rec.out->data + "\n" + (rec.err ? rec.err->data : "");
  if (!y || y->data.empty()) {
    // No YAML: the log still tells why (e.g. "No stress workers invoked" with exit status 0).
    judge(o, w, p, StressngResult{}, rec.out->rc, log);
    if (o.invalid.empty())
      fail_once(o, "stress-ng exited " + std::to_string(rec.out->rc) +
                       " without YAML; output: " + sanitize_excerpt(log, 400));
    return;
  }
  judge(o, w, p, read_yaml(o, y->data, p), rec.out->rc, log);
}

// The load of a cyclictest step: load.yaml, load.out (its log), load.rc.
void parse_load(const WorkloadSpec& w, const ChannelContents& ch, WorkloadOutcome& o) {
  const std::string p = w.name + ".";
  const ChannelRecord* ly = ch.find(p + "load.yaml");
  const ChannelRecord* lo = ch.find(p + "load.out");
  if (!ly || ly->data.empty()) {
    fail_once(o, "the stress-ng load wrote no YAML; its output: " +
                     sanitize_excerpt(lo ? lo->data : "", 400));
    return;
  }
  const StressngResult r = read_yaml(o, ly->data, p + "load.");
  judge(o, w.load->front(), p + "load.", r, rc_record(ch.find(p + "load.rc")),
        lo ? std::string_view(lo->data) : std::string_view());
}

// stressng_metrics: "<stressor>.<metric>".
std::vector<std::string> metric_names(const WorkloadSpec& w) {
  std::vector<std::string> names;
  for (const auto& [stressor, n] : w.stressors) names.push_back(stressor + ".*");
  return names;
}

}  // namespace
}  // namespace tool_stress_ng

const WorkloadTool& stress_ng_tool() {
  static const WorkloadTool t{.name = "stress-ng",
                              .as_load = true,
                              .default_cpus = "housekeeping",
                              .read_fields = tool_stress_ng::read_fields,
                              .step = tool_stress_ng::step,
                              .load_script = tool_stress_ng::load_script,
                              .parse = tool_stress_ng::parse,
                              .parse_load = tool_stress_ng::parse_load,
                              .metric_names = tool_stress_ng::metric_names,
                              .guest_binary = "/usr/bin/stress-ng",
                              .binary_always = true};
  return t;
}

}  // namespace isolab

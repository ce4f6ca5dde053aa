#include "workload/tool.h"

namespace isolab {

std::string sh_words(const std::vector<std::string>& argv) {
  std::string s;
  for (const auto& a : argv) {
    if (!s.empty()) s += ' ';
    s += sh_quote(a);
  }
  return s;
}

std::string workload_pointer(const WorkloadSpec& w) {
  return w.pointer.empty() ? "/workloads/" + w.name : w.pointer;
}

void add_prefixed(WorkloadOutcome& o, const std::string& prefix, const Metrics& m) {
  for (const auto& [name, metric] : m) o.metrics[prefix + name] = metric;
}

void fail_once(WorkloadOutcome& o, const std::string& why) {
  if (o.failed) return;
  o.failed = true;
  o.failure = why;
}

void read_iteration_fields(SpecObject& o, WorkloadSpec& w) {
  w.mode = o.str("mode", "");
  w.iterations = o.integer("iterations", 0, 0, 1000000000);
  w.warmup_iterations = o.integer("warmup_iterations", w.iterations / 10, 0, 1000000000);
}

}  // namespace isolab

// vmstat-overhead (guest-tools/vmstat-overhead.c): cycles per mlock+munlock system call or per
// idle loop on one pinned CPU, its operations marked for the instruction-counting plugin.
#include "parse/vmstat_overhead.h"

#include "base/files.h"
#include "workload/tool.h"

namespace isolab {

namespace {

// mode "syscall" (default) or "idle"; iterations 100000 (syscall) or 2000 (idle); warm-up a
// tenth of them; touch_pages; sleep_us (idle mode's usleep()).
void read_fields(SpecObject& o, WorkloadSpec& w) {
  w.mode = o.str("mode", "syscall");
  if (w.mode != "syscall" && w.mode != "idle")
    throw SpecError(o.ptr("mode"), "expected syscall or idle");
  w.iterations = o.integer("iterations", w.mode == "idle" ? 2000 : 100000, 0, 1000000000);
  w.warmup_iterations = o.integer("warmup_iterations", w.iterations / 10, 0, 1000000000);
  w.touch_pages = o.boolean("touch_pages", false);
  w.sleep_us = static_cast<int>(o.integer("sleep_us", 10, 0, 1000000));
}

// With duration_s > 0 it runs for that many seconds instead of `iterations`.
void step(const WorkloadSpec& w, const StepInput& in, GuestStep& s) {
  std::vector<std::string> argv = {"vmstat-overhead", w.mode,
                                   "--cpu",           std::to_string(*in.cpus.first()),
                                   "--warmup",        std::to_string(w.warmup_iterations)};
  if (w.duration_s > 0)
    argv.insert(argv.end(), {"--duration-s", std::to_string(w.duration_s)});
  else
    argv.insert(argv.end(), {"--iterations", std::to_string(w.iterations)});
  if (w.mode == "idle") argv.insert(argv.end(), {"--sleep-us", std::to_string(w.sleep_us)});
  if (w.touch_pages) argv.emplace_back("--touch");
  argv.insert(argv.end(), w.extra_args.begin(), w.extra_args.end());
  s.script = sh_words(argv) + "\n";
  // Under emulation an idle loop of usleep(10) costs ~100 µs; allow 1 ms per iteration, and
  // the warm-up on top of a duration.
  int run_s = w.duration_s > 0 ? w.duration_s + static_cast<int>(w.warmup_iterations / 1000)
                               : static_cast<int>(w.iterations / 1000);
  s.timeout_s = w.timeout_s ? w.timeout_s : run_s + in.margin_s;
}

void parse(const WorkloadSpec& w, const StepRecords& r, WorkloadOutcome& o) {
  if (r.out->rc != 0)
    fail_once(o, "vmstat-overhead exited " + std::to_string(r.out->rc) + ": " +
                     sanitize_excerpt(r.err ? r.err->data : "", 400));
  else
    add_prefixed(o, w.name + ".", vmstat_overhead_metrics(parse_vmstat_overhead(r.out->data)));
}

// cycles_per_<operation> and the instruction counts' names of its mode.
std::vector<std::string> metric_names(const WorkloadSpec& w) {
  const auto n = vmstat_operation_names(w.mode);
  if (!n) return {};
  return {w.mode == "idle" ? "cycles_per_idle_loop" : "cycles_per_syscall",
          n->all,
          n->kernel,
          n->mean,
          rep_metric_names(n->all).norep,
          rep_metric_names(n->all).rep};
}

// The instructions of its marked operations on the CPU it was pinned to.
void plugin_metrics(const WorkloadSpec& w, const InsnStep& step, const ChannelRecord& out,
                    InsnCellOutcome& o) {
  const auto r = parsed_or_none(parse_vmstat_overhead, out.data);
  if (!r) return;
  const auto names = vmstat_operation_names(r->mode);
  if (!names || !r->marked_regions) return;  // a tool without markers
  const std::string all = w.name + "." + names->all;
  if (!r->cpu || !r->pinned) {
    o.record["invalid"][all] = "the tool was not pinned to a CPU";
    return;
  }
  const InsnPerOperation op = insn_per_operation(step, static_cast<unsigned>(*r->cpu),
                                                 static_cast<std::uint64_t>(*r->marked_regions));
  if (!op.valid) {
    o.record["invalid"][all] = op.reason;
    return;
  }
  const double per = names->operations_per_region;
  o.metrics[w.name + "." + names->mean] =
      instruction_metric("instructions", op.total / per, kPluginSource);
  if (!op.median_total) {
    o.record["invalid"][all] = "the plugin wrote no region median";
    return;
  }
  o.metrics[all] = instruction_metric("instructions", *op.median_total / per, kPluginSource);
  o.metrics[w.name + "." + names->kernel] =
      instruction_metric("instructions", *op.median_kernel / per, kPluginSource);
  add_rep_metrics(w.name, names->all, op, per, o);
}

}  // namespace

const WorkloadTool& vmstat_overhead_tool() {
  static const WorkloadTool t{.name = "vmstat-overhead",
                              .default_duration_s = 0,
                              .own_fields = {"touch_pages", "sleep_us"},
                              .read_fields = read_fields,
                              .step = step,
                              .parse = parse,
                              .metric_names = metric_names,
                              .plugin_metrics = plugin_metrics,
                              .guest_binary = "vmstat-overhead",
                              .binary_always = true};
  return t;
}

}  // namespace isolab

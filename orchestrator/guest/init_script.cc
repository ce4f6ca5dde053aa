#include "guest/init_script.h"

#include <algorithm>
#include <regex>

#include "base/error.h"

namespace isolab {

std::string trace_event_boot_param() {
  return "trace_event=irq:irq_handler_entry,irq:irq_handler_exit,irq:softirq_entry,"
         "irq:softirq_exit,workqueue:workqueue_queue_work,workqueue:workqueue_execute_start,"
         "workqueue:workqueue_execute_end,lock:contention_begin,lock:contention_end,"
         "timer:hrtimer_expire_entry,timer:timer_expire_entry,timer:tick_stop,"
         "irq_vectors:local_timer_entry,irq_vectors:local_timer_exit,"
         "irq_vectors:reschedule_entry,irq_vectors:reschedule_exit,"
         "irq_vectors:call_function_entry,irq_vectors:call_function_exit,"
         "irq_vectors:call_function_single_entry,irq_vectors:call_function_single_exit"
         " trace_clock=global";
}

std::string lock_contention_arm_script() {
  return "L=/sys/kernel/tracing/events/lock/contention_begin\n"
         "if [ \"$(cat $L/enable 2>/dev/null)\" = 1 ]; then "
         "echo 'flags == 1 || flags == 8' > $L/filter; "
         "echo 'stacktrace if flags == 1 || flags == 8' > $L/trigger; fi\n";
}

std::string lock_contention_disarm_script() {
  return "echo '!stacktrace' > /sys/kernel/tracing/events/lock/contention_begin/trigger "
         "2>/dev/null\n";
}

std::string sh_quote(const std::string& w) {
  std::string out = "'";
  for (char c : w) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

namespace {

void check(const std::string& value, const char* re_text, const char* what) {
  std::regex re(re_text);
  if (!std::regex_match(value, re))
    throw Error(std::string("guest plan: bad ") + what + " '" + value + "'");
}

// One pass over every CPU's buffer for two records. kTraceKeep is a fixed-string prefilter
// (busybox grep -F; a regular expression per line is most of a step's collection time under
// TCG) that reads the CPUs' copies itself and prefixes each line with its file (-H, no cat per
// CPU): only lines that can match a rule of kLockAwk get there. kLockAwk takes the prefix off,
// writes "# cpu N" where the file changes (a CPU none of whose lines passed has no header: each
// buffer's own "# tracer" header lines always pass), writes vmstat_update's
// queue events to the file in q and keeps our "# cpu N" headers, contention_begin/end lines,
// the "<stack trace>" line and " => " frames right after a contention_begin, and what says the
// buffer lost events (the "entries-in-buffer" header line, "CPU:N [LOST M EVENTS]"). Only a
// contention_begin carries a stack trace (its trigger, render_lock_contention_setup()), so the
// lines the prefilter drops cannot change which frames are kept.
constexpr const char* kTraceKeep =
    "grep -F -H -e '# ' -e 'CPU:' -e ': contention_' -e ': <stack trace>' -e ' => ' -e "
    "'function=vmstat_update'";
constexpr const char* kLockAwk =
    "{i=index($0, \":\"); f=substr($0, 1, i-1); $0=substr($0, i+1)} "
    "f != cur {cur=f; print \"# cpu \" substr(f, index(f, \"trace.\")+6); s=0} "
    "/workqueue_queue_work:.*function=vmstat_update/{print > q; s=0; next} "
    "/^# (cpu |entries-in-buffer)/{print; s=0; next} /^CPU:[0-9]+ \\[LOST /{print; s=0; next} "
    "/: contention_(begin|end): /{s=($0 ~ /contention_begin/); print; next} "
    "/: <stack trace>/{if (s) print; next} /^ => /{if (s) print; next} {s=0}";

// The fixed part of /init. Written for busybox sh; every command is a busybox applet.
constexpr const char* kInitHead = R"INIT(#!/bin/busybox sh
/bin/busybox mkdir -p /proc /sys /dev /tmp /run
/bin/busybox mount -t proc proc /proc
/bin/busybox mount -t sysfs sysfs /sys
/bin/busybox mount -t devtmpfs devtmpfs /dev 2>/dev/null
/bin/busybox --install -s
export PATH=/bin:/sbin:/usr/bin:/usr/sbin
mount -t tmpfs tmpfs /tmp
mkdir -p /dev/shm && mount -t tmpfs shm /dev/shm
mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null
mkdir -p /tmp/out
echo "isolab: init started"
read t_init rest < /proc/uptime
stty -F /dev/ttyS1 raw -echo 2>/dev/null
exec 3>/dev/ttyS1
# rec NAME RC FILE: one length-framed record on the result channel (guest/channel.h), sent
# as NAME.gz, compressed, when FILE is larger than 4 KiB.
rec() {
  rec_file=$3; rec_name=$1
  if [ -f "$rec_file" ]; then n=$(wc -c < "$rec_file"); else n=0; fi
  if [ "$n" -gt 4096 ] && gzip -1 -c "$rec_file" > /tmp/rec.gz 2>/dev/null; then
    rec_file=/tmp/rec.gz; rec_name=$1.gz; n=$(wc -c < /tmp/rec.gz)
  fi
  printf '@@ISOLAB REC %s %s %s %s\n' "$NONCE" "$rec_name" "$2" "$n" >&3
  [ "$n" -gt 0 ] && cat "$rec_file" >&3
  printf '\n' >&3
}
fact() {
  if [ -e "$2" ]; then cat "$2" > /tmp/fact 2>/dev/null; rec "$1" $? /tmp/fact; fi
}
# The last record and DONE may still sit in the UART's buffer: stty's tcsetattr(TCSADRAIN)
# waits until they are sent, since poweroff -f does not.
finish() {
  dmesg > /tmp/dmesg_end 2>&1; rec dmesg_end 0 /tmp/dmesg_end
  read t_end rest < /proc/uptime
  printf 'init %s\nfinish %s\n' "$t_init" "$t_end" > /tmp/timeline; rec timeline 0 /tmp/timeline
  printf '@@ISOLAB DONE %s\n' "$NONCE" >&3
  stty -F /dev/ttyS1 raw -echo 2>/dev/null
  exec 3>&-
  echo "isolab: powering off"
  poweroff -f
}
uname -r > /tmp/fact; rec uname_r 0 /tmp/fact
fact cmdline /proc/cmdline
fact cpu_online /sys/devices/system/cpu/online
fact cpu_possible /sys/devices/system/cpu/possible
fact isolated /sys/devices/system/cpu/isolated
fact nohz_full /sys/devices/system/cpu/nohz_full
fact default_smp_affinity /proc/irq/default_smp_affinity
fact workqueue_cpumask /sys/devices/virtual/workqueue/cpumask
fact clocksource /sys/devices/system/clocksource/clocksource0/current_clocksource
grep ' _stext$' /proc/kallsyms > /tmp/fact 2>/dev/null; rec kallsyms_stext $? /tmp/fact
fact trace_events /sys/kernel/tracing/set_event
fact node_online /sys/devices/system/node/online
if [ -d /sys/devices/system/node/node0 ]; then
  for d in /sys/devices/system/node/node[0-9]*; do
    echo "${d##*/} $(cat $d/cpulist) $(grep MemTotal $d/meminfo | tr -s ' ' | cut -d' ' -f4)"
  done > /tmp/fact
  rec numa_nodes 0 /tmp/fact
fi
for d in /sys/devices/system/cpu/cpu[0-9]*; do
  t=$d/topology
  echo "${d##*/cpu} $(cat $t/physical_package_id) $(cat $t/core_id) $(cat $t/thread_siblings_list)"
done > /tmp/fact 2>/dev/null
rec cpu_topology 0 /tmp/fact
)INIT";

// Where each IRQ is delivered (effective_affinity_list), read after the customer's runtime
// settings have moved the IRQs, so that the gate sees the placement the workloads run with.
constexpr const char* kIrqAffinityFact = R"INIT(for d in /proc/irq/[0-9]*; do
  echo "${d##*/} $(cat $d/effective_affinity_list 2>/dev/null)"
done > /tmp/fact
rec irq_affinity 0 /tmp/fact
)INIT";

// "5-7,9" -> "5 6 7 9": a cpulist as the words of a shell loop, so that the guest runs no tr or
// seq for it. Throws Error on a part that is not N or N-M with N <= M < 4096.
std::string expanded_cpulist(const std::string& cpulist, const char* what) {
  static const std::regex part_re("([0-9]{1,4})(-([0-9]{1,4}))?");
  std::string words;
  std::size_t at = 0;
  while (at < cpulist.size()) {
    std::size_t end = cpulist.find(',', at);
    if (end == std::string::npos) end = cpulist.size();
    const std::string part = cpulist.substr(at, end - at);
    std::smatch m;
    if (!std::regex_match(part, m, part_re))
      throw Error(std::string("guest plan: bad ") + what + " '" + cpulist + "'");
    const int lo = std::stoi(m[1]);
    const int hi = m[3].matched ? std::stoi(m[3]) : lo;
    if (hi < lo || hi >= 4096)
      throw Error(std::string("guest plan: bad ") + what + " '" + cpulist + "'");
    for (int c = lo; c <= hi; ++c) words += (words.empty() ? "" : " ") + std::to_string(c);
    at = end + 1;
  }
  return words;
}

// Writes each sysctl, reads it back and sends the lines as record "sysctls".
std::string render_sysctls(const std::vector<std::pair<std::string, std::string>>& sysctls) {
  if (sysctls.empty()) return "";
  std::string sh = ": > /tmp/sysctls\n";
  for (const auto& [name, value] : sysctls) {
    check(name, "[a-z0-9_]+(\\.[A-Za-z0-9_-]+)+", "sysctl name");
    check(value, "[A-Za-z0-9 _.,:+=-]*", "sysctl value");
    std::string path = "/proc/sys/" + name;
    for (std::size_t i = 10; i < path.size(); ++i)
      if (path[i] == '.') path[i] = '/';
    sh += "echo " + sh_quote(value) + " > " + path + "; w=$?\n";
    sh += "printf '%s\\t%s\\t%s\\n' " + name + " $w \"$(cat " + path +
          " 2>/dev/null | tr '\\t\\n' '  ')\" >> /tmp/sysctls\n";
    sh += "echo \"isolab: sysctl " + name + " = $(cat " + path + " 2>/dev/null)\"\n";
  }
  return sh + "rec sysctls 0 /tmp/sysctls\n";
}

// Tick check (docs/sources.md [o6]): /proc/interrupts around a window in which a busy loop
// runs pinned on each nohz_full CPU; the host reads the LOC delta per CPU.
std::string render_tick_check(const GuestPlan& p) {
  std::string sh;
  if (!p.busy_cpus.empty()) {
    sh += "pids=\n";
    sh += "for c in " + expanded_cpulist(p.busy_cpus, "busy cpulist") +
          "; do taskset -c $c sh -c 'while :; do :; done' & pids=\"$pids $!\"; done\n";
    // The first snapshot waits a second for the loops to settle: starting them (fork, exec,
    // migration) runs with two tasks on the CPU and so with its tick.
    sh += "sleep 1\n";
  }
  sh += "cat /proc/interrupts > /tmp/int0\n";
  sh += "sleep " + std::to_string(p.busy_window_s) + "\n";
  sh += "cat /proc/interrupts > /tmp/int1\n";
  if (!p.busy_cpus.empty()) sh += "kill $pids 2>/dev/null; wait 2>/dev/null\n";
  sh += "rec interrupts_before 0 /tmp/int0\nrec interrupts_after 0 /tmp/int1\n";
  sh += "echo " + std::to_string(p.busy_window_s) + " > /tmp/fact; rec busy_window_s 0 /tmp/fact\n";
  sh += "dmesg > /tmp/fact 2>&1; rec dmesg 0 /tmp/fact\n";
  return sh;
}

// Plain mismatch: do not measure a guest that did not get what was asked. Sets $skip and sends
// record "precheck".
std::string render_precheck(const GuestPlan& p) {
  std::string sh = "ok=1\n";
  sh += "n=$(grep -c ^processor /proc/cpuinfo)\n";
  sh += "[ \"$n\" = " + std::to_string(p.vcpus) +
        " ] || { echo \"isolab: precheck: $n CPUs online, expected " + std::to_string(p.vcpus) +
        "\"; ok=0; }\n";
  sh += "iso=$(cat /sys/devices/system/cpu/isolated 2>/dev/null)\n";
  sh += "[ \"$iso\" = '" + p.expect_isolated +
        "' ] || { echo \"isolab: precheck: isolated '$iso', expected '" + p.expect_isolated +
        "'\"; ok=0; }\n";
  if (!p.expect_nohz_full.empty()) {
    sh += "nf=$(cat /sys/devices/system/cpu/nohz_full 2>/dev/null)\n";
    sh += "[ \"$nf\" = '" + p.expect_nohz_full +
          "' ] || { echo \"isolab: precheck: nohz_full '$nf', expected '" + p.expect_nohz_full +
          "'\"; ok=0; }\n";
  }
  sh += p.skip_on_mismatch ? "skip=$((1-ok))\n" : "skip=0\n";
  sh += "echo $ok > /tmp/fact; rec precheck $((1-ok)) /tmp/fact\n";
  return sh;
}

// Lock contention: spin locks only, each with its kernel stack (see
// lock_contention_arm_script()); what the trigger file then says is sent as a fact. Only when a
// step traces.
std::string render_lock_contention_setup(const std::vector<GuestStep>& steps) {
  const bool any_trace = std::any_of(steps.begin(), steps.end(),
                                     [](const GuestStep& s) { return !s.trace_cpus.empty(); });
  if (!any_trace) return "";
  return lock_contention_arm_script() + "fact lock_contention_trigger $L/trigger\n";
}

// A step's run: the instruction counter armed, the trace buffer cleared (events were enabled
// at boot, trace_event_boot_param()), its window (uptime seconds) and /proc/interrupts around
// it (the rate denominators and the cross-check of the trace counts, parse/trace.h), the step
// under its timeout with $rc its exit status, and what it left behind killed.
std::string render_step_run(const GuestStep& s, const std::string& path) {
  std::string sh = "echo \"isolab: step " + s.name + " start\"\n";
  // A plugin that counts only inside steps starts counting here, so that the step-begin below
  // finds every block translated with its counter (guest-tools/isolab-mark.c; a NOP otherwise).
  sh += "isolab-mark step-arm 2>/dev/null\n";
  if (!s.trace_cpus.empty()) {
    sh += "T=/sys/kernel/tracing\n";
    sh +=
        "if [ -d $T/events ]; then echo 0 > $T/tracing_on; echo > $T/trace; echo 1 > "
        "$T/tracing_on; fi\n";
  }
  sh += "cat /proc/interrupts > " + s.name + ".interrupts_before\n";
  sh += "read w0 rest < /proc/uptime\n";
  // The step's edges for the instruction-counting TCG plugin (guest-tools/isolab-mark.c; a NOP
  // without the plugin): every vCPU's instruction counts are snapshot there.
  sh += "isolab-mark step-begin 2>/dev/null\n";
  // Without the result channel (fd 3): busybox timeout leaves a watcher process behind for up to
  // a second, and a holder of ttyS1 would keep finish()'s close from being the last one.
  sh += "timeout -s KILL " + std::to_string(s.timeout_s) + " sh " + path + " > " + s.name +
        ".stdout 2> " + s.name + ".stderr 3>&-\nrc=$?\n";
  sh += "isolab-mark step-end 2>/dev/null\n";
  // Tracing stops before the leftovers are killed, so their exit is not counted as noise.
  if (!s.trace_cpus.empty()) sh += "[ -d $T/events ] && echo 0 > $T/tracing_on\n";
  sh += "read w1 rest < /proc/uptime\n";
  sh += "cat /proc/interrupts > " + s.name + ".interrupts_after\n";
  sh += "echo \"$w0 $w1\" > " + s.name + ".window\n";
  // timeout(1) kills only the step's shell: end what it left behind (stress-ng workers), in one
  // process (a fork and exec costs about 10 ms under TCG).
  sh += "killall -q -KILL stress-ng cyclictest vmstat-overhead rtla page-fault-bench\n";
  return sh;
}

// A traced step's trace records: its isolated CPUs' buffers, the vmstat_update queue events of
// every CPU and the lock contention of every CPU; tracing is switched on again afterwards. Each
// CPU's buffer is read once into /tmp (the kernel formats a buffer on every read, and under TCG
// that formatting is most of a step's collection time) and the three records are cut from the
// copies.
std::string render_step_trace_records(const GuestStep& s) {
  if (s.trace_cpus.empty()) return "";
  std::string sh =
      "if [ -d $T/events ]; then\n"
      "  for d in $T/per_cpu/cpu*; do cat $d/trace > /tmp/trace.${d##*/cpu} 2>/dev/null; done\n";
  sh += "  for c in " + expanded_cpulist(s.trace_cpus, "trace cpulist") +
        "; do echo \"# cpu $c\"; cat /tmp/trace.$c 2>/dev/null; done > " + s.name + ".trace\n";
  // vmstat_shepherd queues vmstat_update from a housekeeping CPU: its queue events are in that
  // CPU's buffer, with the target in cpu= (parse/trace.h vmstat_queueing()). Lock contention of
  // every CPU (the load runs on housekeeping CPUs): the contention events and the stack trace
  // that follows each contention_begin (parse/trace.h lock_contention()). Both in one pass.
  sh += "  : > " + s.name + ".vmstat_queue\n";
  sh += "  " + std::string(kTraceKeep) + " /tmp/trace.* 2>/dev/null | awk -v q=" + s.name +
        ".vmstat_queue " + sh_quote(kLockAwk) + " > " + s.name + ".lock_contention\n";
  sh += "  rec " + s.name + ".vmstat_queue 0 " + s.name + ".vmstat_queue\n";
  sh += "  rec " + s.name + ".lock_contention 0 " + s.name + ".lock_contention\n";
  sh += "  rec " + s.name + ".trace 0 " + s.name +
        ".trace; rm -f /tmp/trace.*; echo 1 > $T/tracing_on; fi\n";
  return sh;
}

// The step's own records: stdout, stderr, window, /proc/interrupts around it and its outputs.
std::string render_step_records(const GuestStep& s) {
  std::string sh = "echo \"isolab: step " + s.name + " exit $rc\"\n";
  sh += "rec " + s.name + ".stdout $rc " + s.name + ".stdout\n";
  sh += "rec " + s.name + ".stderr $rc " + s.name + ".stderr\n";
  for (const char* rec : {"window", "interrupts_before", "interrupts_after"})
    sh += "rec " + s.name + "." + rec + " 0 " + s.name + "." + rec + "\n";
  for (const auto& [suffix, file] : s.outputs) {
    check(suffix, "[A-Za-z0-9_.-]{1,40}", "output suffix");
    check(file, "[A-Za-z0-9_.-]{1,80}", "output file");
    sh += "rec " + s.name + "." + suffix + " $rc " + file + "\n";
  }
  return sh;
}

constexpr const char* kCpulistRe = "[0-9,-]*";

// One step: its script file (appended to files) and its part of /init.
std::string render_step(const GuestStep& s,
                        std::vector<std::pair<std::string, std::string>>& files) {
  check(s.name, "[A-Za-z0-9_.-]{1,60}", "step name");
  check(s.trace_cpus, kCpulistRe, "trace cpulist");
  const std::string path = "/isolab/steps/" + s.name + ".sh";
  files.emplace_back(path, "#!/bin/sh\n" + s.script + "\n");
  return render_step_run(s, path) + render_step_trace_records(s) + render_step_records(s);
}

}  // namespace

std::vector<std::pair<std::string, std::string>> render_plan_files(const GuestPlan& p) {
  check(p.nonce, "[A-Za-z0-9]{8,64}", "nonce");
  check(p.expect_isolated, kCpulistRe, "expected isolated list");
  check(p.expect_nohz_full, kCpulistRe, "expected nohz_full list");
  check(p.busy_cpus, kCpulistRe, "busy cpulist");
  std::vector<std::pair<std::string, std::string>> files;
  std::string init = kInitHead;
  init.insert(init.find("echo \"isolab: init started\""), "NONCE=" + p.nonce + "\n");
  init += render_tick_check(p) + render_precheck(p) + render_runtime_settings(p.runtime) +
          render_sysctls(p.sysctls) + kIrqAffinityFact;
  if (!p.before_steps.empty()) init += p.before_steps + "\n";
  init += render_lock_contention_setup(p.steps);
  init += "if [ $skip = 0 ]; then\ncd /tmp/out\n";
  for (const auto& s : p.steps) init += render_step(s, files);
  init += "fi\nfinish\n";
  files.insert(files.begin(), {"/init", init});
  return files;
}

}  // namespace isolab

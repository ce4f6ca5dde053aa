/*
 * isolab-mark: executes one marker instruction (insn-marker.h) and exits. The guest's /init
 * runs "isolab-mark step-arm" before a workload step's setup, "isolab-mark step-begin" just
 * before the step and "isolab-mark step-end" just after it, so that the instruction-counting
 * TCG plugin counts the step (with count=steps only the step) and snapshots every vCPU's user
 * and kernel instruction counts at its edges. Without the plugin (KVM, hardware) the marker
 * is a NOP and the program does nothing else of note.
 *
 * The step markers run on CPU 0 (sched_setaffinity first; a failure is ignored and leaves the
 * marker where the task runs): with count=steps every plugin reset must come from one vCPU
 * (tcg-plugin/insn-count.c, request_gate).
 *
 * Usage: isolab-mark step-arm|step-begin|step-end|region-begin|region-end
 * Exit status: 0 after the marker, 2 for a missing or unknown argument (message on stderr).
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <string.h>

#include "insn-marker.h"

static void on_cpu0(void) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(0, &set);
  (void)sched_setaffinity(0, sizeof set, &set);
}

static void mark_step_arm(void) {
  on_cpu0();
  ISOLAB_MARK_STEP_ARM();
}
static void mark_step_begin(void) {
  on_cpu0();
  ISOLAB_MARK_STEP_BEGIN();
}
static void mark_step_end(void) {
  on_cpu0();
  ISOLAB_MARK_STEP_END();
}
static void mark_region_begin(void) { ISOLAB_MARK_REGION_BEGIN(); }
static void mark_region_end(void) { ISOLAB_MARK_REGION_END(); }

static const struct {
  const char* name;
  void (*mark)(void);
} kMarks[] = {
    {"step-arm", mark_step_arm},     {"step-begin", mark_step_begin},
    {"step-end", mark_step_end},     {"region-begin", mark_region_begin},
    {"region-end", mark_region_end},
};

int main(int argc, char** argv) {
  if (argc == 2)
    for (size_t i = 0; i < sizeof kMarks / sizeof kMarks[0]; i++)
      if (strcmp(argv[1], kMarks[i].name) == 0) {
        kMarks[i].mark();
        return 0;
      }
  fprintf(stderr,
          "isolab-mark: usage: isolab-mark step-arm|step-begin|step-end|region-begin|region-end\n");
  return 2;
}

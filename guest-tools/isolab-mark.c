/*
 * isolab-mark: executes one marker instruction (insn-marker.h) and exits. The guest's /init
 * runs "isolab-mark step-begin" just before a workload step and "isolab-mark step-end" just
 * after it, so that the instruction-counting TCG plugin snapshots every vCPU's user and kernel
 * instruction counts at the edges of the step. Without the plugin (KVM, hardware) the marker
 * is a NOP and the program does nothing.
 *
 * Usage: isolab-mark step-begin|step-end|region-begin|region-end
 * Exit status: 0 after the marker, 2 for a missing or unknown argument (message on stderr).
 */
#include <stdio.h>
#include <string.h>

#include "insn-marker.h"

static void mark_step_begin(void) { ISOLAB_MARK_STEP_BEGIN(); }
static void mark_step_end(void) { ISOLAB_MARK_STEP_END(); }
static void mark_region_begin(void) { ISOLAB_MARK_REGION_BEGIN(); }
static void mark_region_end(void) { ISOLAB_MARK_REGION_END(); }

static const struct {
  const char* name;
  void (*mark)(void);
} kMarks[] = {
    {"step-begin", mark_step_begin},
    {"step-end", mark_step_end},
    {"region-begin", mark_region_begin},
    {"region-end", mark_region_end},
};

int main(int argc, char** argv) {
  if (argc == 2)
    for (size_t i = 0; i < sizeof kMarks / sizeof kMarks[0]; i++)
      if (strcmp(argv[1], kMarks[i].name) == 0) {
        kMarks[i].mark();
        return 0;
      }
  fprintf(stderr, "isolab-mark: usage: isolab-mark step-begin|step-end|region-begin|region-end\n");
  return 2;
}

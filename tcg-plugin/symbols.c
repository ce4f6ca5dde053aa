/*
 * symbols.c: the kernel's System.map for isolab's insn-count plugin. A System.map (the kernel's
 * scripts/mksysmap, from `nm -n vmlinux`) has one symbol a line: "<hex address> <type> <name>".
 * The text symbols (types t, T, w, W) become the functions a kernel block is attributed to, in
 * the same way as the orchestrator's parse/system_map.h: a function spans from its address to
 * the next text symbol's, the last one up to _etext; symbols at one address are one function.
 * A few names also mark what a block starting at their address is (enum tb_kind).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "insn-count.h"

/* The entries of faults, which return to the faulting instruction (Linux x86-64's
 * arch/x86/include/asm/idtentry.h names; traps such as int3 and #DB return after it). */
static const char* const kFaultEntries[] = {
    "asm_exc_page_fault",
    "asm_exc_general_protection",
    "asm_exc_invalid_op",
    "asm_exc_divide_error",
    "asm_exc_bounds",
    "asm_exc_device_not_available",
    "asm_exc_invalid_tss",
    "asm_exc_segment_not_present",
    "asm_exc_stack_segment",
    "asm_exc_alignment_check",
    "asm_exc_coprocessor_error",
    "asm_exc_simd_coprocessor_error",
    "asm_exc_control_protection",
};

/* Functions that make a sleeping task runnable on the vCPU that runs them: an expired
 * hrtimer sleeper (clock_nanosleep), and a remote wakeup queued to this CPU's wake list. */
static const char* const kWakeFunctions[] = {"hrtimer_wakeup", "sched_ttwu_pending"};

static int in_list(const char* name, const char* const* list, size_t n) {
  for (size_t i = 0; i < n; ++i)
    if (strcmp(name, list[i]) == 0) return 1;
  return 0;
}

static uint8_t kind_of(const char* name) {
  if (in_list(name, kFaultEntries, sizeof kFaultEntries / sizeof *kFaultEntries))
    return TB_FAULT_ENTRY;
  if (strcmp(name, "asm_sysvec_apic_timer_interrupt") == 0) return TB_TIMER_ENTRY;
  if (strcmp(name, "asm_sysvec_reschedule_ipi") == 0) return TB_RESCHED_ENTRY;
  if (strncmp(name, "asm_sysvec_", 11) == 0 || strcmp(name, "asm_common_interrupt") == 0 ||
      strcmp(name, "asm_spurious_interrupt") == 0)
    return TB_IRQ_ENTRY;
  if (in_list(name, kWakeFunctions, sizeof kWakeFunctions / sizeof *kWakeFunctions)) return TB_WAKE;
  return TB_PLAIN;
}

struct raw {
  uint64_t addr;
  uint8_t kind;
};

static int by_addr(const void* a, const void* b) {
  const struct raw *x = a, *y = b;
  return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* Reads the text symbols into a growing array; 0 on success. */
static int read_map(FILE* f, struct raw** out, size_t* n, uint64_t* etext) {
  size_t cap = 0;
  char line[512];
  while (fgets(line, sizeof line, f)) {
    uint64_t addr;
    char type, name[400];
    if (sscanf(line, "%" SCNx64 " %c %399s", &addr, &type, name) != 3) continue;
    if (strcmp(name, "_etext") == 0) *etext = addr;
    if (type != 't' && type != 'T' && type != 'w' && type != 'W') continue;
    if (*n == cap) {
      cap = cap ? cap * 2 : 4096;
      struct raw* r = realloc(*out, cap * sizeof *r);
      if (!r) return -1;
      *out = r;
    }
    (*out)[(*n)++] = (struct raw){addr, kind_of(name)};
  }
  return 0;
}

int symbols_load(const char* path, struct symbols* s, char* err, size_t errlen) {
  FILE* f = fopen(path, "r");
  if (!f) {
    snprintf(err, errlen, "cannot open symbols=%s: %s", path, strerror(errno));
    return -1;
  }
  struct raw* r = NULL;
  size_t n = 0;
  uint64_t etext = 0;
  const int bad = read_map(f, &r, &n, &etext);
  fclose(f);
  if (bad || n == 0) {
    snprintf(err, errlen, bad ? "out of memory reading symbols=%s" : "symbols=%s: no text symbol",
             path);
    free(r);
    return -1;
  }
  qsort(r, n, sizeof *r, by_addr);
  s->start = malloc(n * sizeof *s->start);
  s->kind = malloc(n);
  if (!s->start || !s->kind) {
    snprintf(err, errlen, "out of memory reading symbols=%s", path);
    free(r);
    return -1;
  }
  size_t m = 0;
  for (size_t i = 0; i < n; ++i) {
    if (m && s->start[m - 1] == r[i].addr) {
      if (r[i].kind) s->kind[m - 1] = r[i].kind;
      continue;
    }
    s->start[m] = r[i].addr;
    s->kind[m++] = r[i].kind;
  }
  free(r);
  s->n = m;
  s->end = etext ? etext : s->start[m - 1];
  return 0;
}

uint32_t symbols_function(const struct symbols* s, uint64_t pc) {
  if (s->n == 0 || pc < s->start[0] || pc >= s->end) return (uint32_t)s->n;
  size_t lo = 0, hi = s->n; /* the last start <= pc lies in [lo, hi) */
  while (hi - lo > 1) {
    const size_t mid = lo + (hi - lo) / 2;
    if (s->start[mid] <= pc)
      lo = mid;
    else
      hi = mid;
  }
  return (uint32_t)lo;
}

uint8_t symbols_kind(const struct symbols* s, uint64_t pc) {
  const uint32_t f = symbols_function(s, pc);
  return f < s->n && s->start[f] == pc ? s->kind[f] : TB_PLAIN;
}

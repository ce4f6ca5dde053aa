/*
 * install.c: the plugin's entry points for QEMU (qemu_plugin_version, qemu_plugin_install):
 * the arguments (documented at the top of insn-count.c), the per-vCPU state and the output
 * file's first line.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "insn-count.h"
#include "qemu-plugin-api.h"

ISOLAB_QEMU_PLUGIN_EXPORT int qemu_plugin_version = QEMU_PLUGIN_VERSION;

#define OUTPUT_FORMAT_VERSION 3
#define MAX_VCPUS 4096u

#ifdef ISOLAB_INSN_INLINE
#define MODE "inline"
#else
#define MODE "exact"
#endif

static int fail(const char* fmt, const char* what) {
  fprintf(stderr, "isolab-insn-count: ");
  fprintf(stderr, fmt, what);
  fputc('\n', stderr);
  return 1;
}

/* Parses a decimal number; 0 on success. */
static int parse_uint(const char* s, const char** end, unsigned long* out) {
  if (*s < '0' || *s > '9') return -1;
  errno = 0;
  char* e;
  *out = strtoul(s, &e, 10);
  *end = e;
  return errno ? -1 : 0;
}

/* "5-7,9" -> g.profiled[5..7] = g.profiled[9] = 1; 0 on success. */
static int parse_cpulist(const char* s) {
  while (*s) {
    unsigned long a, b;
    const char* e;
    if (parse_uint(s, &e, &a)) return -1;
    b = a;
    if (*e == '-' && parse_uint(e + 1, &e, &b)) return -1;
    if (b < a || b >= g.n) return -1;
    for (unsigned long c = a; c <= b; ++c) g.profiled[c] = 1;
    if (*e == ',' && e[1])
      e++;
    else if (*e)
      return -1;
    s = e;
  }
  return 0;
}

static int parse_args(int argc, char** argv, const char** out, const char** cpus,
                      const char** symbols) {
  for (int i = 0; i < argc; ++i) {
    const char* a = argv[i];
    if (strncmp(a, "out=", 4) == 0 && a[4]) {
      *out = a + 4;
    } else if (strncmp(a, "symbols=", 8) == 0 && a[8]) {
      *symbols = a + 8;
    } else if (strcmp(a, "count=all") == 0 || strcmp(a, "count=steps") == 0) {
      g.steps_only = a[6] == 's';
    } else if (strncmp(a, "profile_cpus=", 13) == 0) {
      *cpus = a + 13;
      if (parse_cpulist(*cpus)) {
        fprintf(stderr, "isolab-insn-count: bad profile_cpus '%s' (a cpulist of vCPUs 0-%u)\n",
                *cpus, g.n - 1);
        return 1;
      }
    } else {
      return fail("unknown argument '%s' (expected out=, profile_cpus=, symbols=, count=all|steps)",
                  a);
    }
  }
  if (!*out) return fail("%s", "missing argument out=PATH");
  return 0;
}

static int alloc_vcpus(unsigned n) {
  g.n = n;
  g.v = aligned_alloc(64, n * sizeof *g.v);
  g.profiled = calloc(n, 1);
  if (!g.v || !g.profiled) return -1;
  memset(g.v, 0, n * sizeof *g.v);
  for (unsigned i = 0; i < n; ++i) pthread_mutex_init(&g.v[i].lock, NULL);
  return 0;
}

/* The profile arrays of the profiled vCPUs (after the symbols are known). */
static int alloc_profiles(void) {
#ifndef ISOLAB_INSN_INLINE
  for (unsigned i = 0; i < g.n; ++i) {
    if (!g.profiled[i]) continue;
    struct vcpu* v = &g.v[i];
    v->fn_insns = calloc(g.sym.n + 1, sizeof(uint64_t));
    v->fn_rep = calloc(g.sym.n + 1, sizeof(uint64_t));
    v->begin_insns = calloc(g.sym.n + 1, sizeof(uint64_t));
    v->begin_rep = calloc(g.sym.n + 1, sizeof(uint64_t));
    if (!v->fn_insns || !v->fn_rep || !v->begin_insns || !v->begin_rep) return -1;
  }
#endif
  return 0;
}

ISOLAB_QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t* info,
                                                  int argc, char** argv) {
  if (!info->system_emulation) return fail("%s", "needs system emulation (qemu-system-*)");
  if (QEMU_PLUGIN_VERSION < info->version.min || QEMU_PLUGIN_VERSION > info->version.cur)
    return fail("%s", "QEMU's plugin API range does not include version 1");
  const int maxv = info->system.max_vcpus;
  if (maxv < 1 || (unsigned)maxv > MAX_VCPUS) return fail("%s", "vCPU count outside 1..4096");
  if (alloc_vcpus((unsigned)maxv)) return fail("%s", "out of memory");
  const char *out = NULL, *cpus = "", *symbols = NULL;
  if (parse_args(argc, argv, &out, &cpus, &symbols)) return 1;
  char err[600];
  if (symbols && symbols_load(symbols, &g.sym, err, sizeof err)) return fail("%s", err);
  if (alloc_profiles()) return fail("%s", "out of memory");
  g.out_path = strdup(out);
  g.out = fopen(out, "w");
  if (!g.out) {
    fprintf(stderr, "isolab-insn-count: cannot open out=%s: %s\n", out, strerror(errno));
    return 1;
  }
  setvbuf(g.out, NULL, _IOFBF, 1 << 16);
  fprintf(g.out, "isolab-insn-count %d plugin_api=%d qemu_api=%d-%d vcpus=%u profile_cpus=%s",
          OUTPUT_FORMAT_VERSION, QEMU_PLUGIN_VERSION, info->version.min, info->version.cur, g.n,
          cpus);
  fprintf(g.out, " symbols=%zu mode=%s count=%s\n", g.sym.n, MODE, g.steps_only ? "steps" : "all");
  fflush(g.out);
  g.id = id;
  if (g.steps_only) /* nothing is counted before the first step: no boot code to tell apart */
    for (unsigned i = 0; i < g.n; ++i) g.v[i].booted = 1;
  register_callbacks(id);
  return 0;
}

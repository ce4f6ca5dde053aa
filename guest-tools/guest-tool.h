/*
 * guest-tool.h: the helpers the timing guest tools (page-fault-bench.c, vmstat-overhead.c)
 * share: the cycle counter, CPU pinning, the parsing of numeric and --counter arguments, and a
 * run without address-space randomization.
 * Header-only (static inline), so each tool stays one static binary built from one .c file
 * (CMakeLists.txt; the initramfs packs the built binaries, see orchestrator/pipeline/run.cc).
 *
 * The including file defines, before the #include:
 *   _GNU_SOURCE  first of all, before any system header (CPU_SET, sched_setaffinity);
 *   TOOL_NAME    the tool's name, the prefix of every message on stderr ("TOOL_NAME: ...");
 * and after it defines die_errno() (declared here), the message for a failing system call.
 *
 * Counter: on x86 the TSC, read with RDTSCP (falling back to LFENCE;RDTSC where the CPU model
 * lacks RDTSCP, e.g. QEMU's qemu64), followed by LFENCE so that later work cannot start before
 * the read. Elsewhere, or with --counter ns, clock_gettime(CLOCK_MONOTONIC) in nanoseconds.
 * The TSC of a TCG guest ticks at the emulated frequency, not the host's cycles.
 *
 * Errors: every helper that fails prints "TOOL_NAME: <what>" on stderr and exits with status 2
 * (the tools' "bad usage or a failing system call").
 */
#ifndef ISOLAB_GUEST_TOOL_H
#define ISOLAB_GUEST_TOOL_H

#ifndef _GNU_SOURCE
#error "define _GNU_SOURCE before any #include (guest-tool.h uses CPU_SET and sched_setaffinity)"
#endif
#ifndef TOOL_NAME
#error "define TOOL_NAME (the tool's name, the prefix of its messages) before guest-tool.h"
#endif

#include <errno.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/personality.h>
#include <time.h>
#include <unistd.h>
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#define HAVE_TSC 1
#else
#define HAVE_TSC 0
#endif

/* Set by start_counter(): read_counter() reads the TSC (1) or CLOCK_MONOTONIC (0). */
static int use_tsc;
static int have_rdtscp;

/* "TOOL_NAME: <call> failed: <strerror(errno)>..." on stderr, exit status 2. Each tool defines
 * it (vmstat-overhead adds an RLIMIT_MEMLOCK hint). */
static void die_errno(const char* call);

/* "TOOL_NAME: <what>" on stderr, exit status 2. */
static inline void die(const char* what) {
  fprintf(stderr, TOOL_NAME ": %s\n", what);
  exit(2);
}

/* The value of option opt as a strict decimal: the whole string, no sign, within [min, max];
 * otherwise a message naming opt and s, exit status 2. s may be NULL (a missing value). */
static inline unsigned long parse_count(const char* opt, const char* s, unsigned long min,
                                        unsigned long max) {
  char* end;
  unsigned long v;

  if (!s || *s < '0' || *s > '9') {
    fprintf(stderr, TOOL_NAME ": %s needs a number, got '%s'\n", opt, s ? s : "");
    exit(2);
  }
  errno = 0;
  v = strtoul(s, &end, 10);
  if (errno || *end || v < min || v > max) {
    fprintf(stderr, TOOL_NAME ": %s: '%s' is not a number in [%lu, %lu]\n", opt, s, min, max);
    exit(2);
  }
  return v;
}

/* The value of --counter: "tsc" or "ns" (the returned string is a literal). NULL, another
 * value, or tsc without a TSC: a message, exit status 2. */
static inline const char* parse_counter(const char* val) {
  if (!val || (strcmp(val, "tsc") && strcmp(val, "ns"))) die("--counter wants tsc or ns");
  if (!strcmp(val, "tsc") && !HAVE_TSC) die("--counter tsc: no TSC on this architecture");
  return !strcmp(val, "tsc") ? "tsc" : "ns";
}

/* CLOCK_MONOTONIC in nanoseconds. */
static inline uint64_t monotonic_ns(void) {
  struct timespec ts;

  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* Selects the counter read_counter() reads: counter is "tsc" or "ns" (from parse_counter()). */
static inline void start_counter(const char* counter) {
  use_tsc = !strcmp(counter, "tsc");
#if HAVE_TSC
  {
    unsigned int a, b, c, d;

    if (__get_cpuid(0x80000001, &a, &b, &c, &d)) have_rdtscp = (d >> 27) & 1;
  }
#endif
}

/* The counter start_counter() chose: TSC ticks or CLOCK_MONOTONIC nanoseconds. Only the
 * difference of two reads on one CPU means anything. */
static inline uint64_t read_counter(void) {
#if HAVE_TSC
  if (use_tsc) {
    uint32_t lo, hi, aux;

    if (have_rdtscp) {
      /* RDTSCP waits until earlier instructions have executed. */
      __asm__ __volatile__("rdtscp" : "=a"(lo), "=d"(hi), "=c"(aux)::"memory");
    } else {
      __asm__ __volatile__("lfence\n\trdtsc" : "=a"(lo), "=d"(hi)::"memory");
    }
    /* Later instructions may not start before the read. */
    __asm__ __volatile__("lfence" ::: "memory");
    (void)aux;
    return ((uint64_t)hi << 32) | lo;
  }
#endif
  return monotonic_ns();
}

/* Pins the calling task to CPU cpu (0 .. CPU_SETSIZE-1); die_errno("sched_setaffinity") if the
 * kernel refuses. */
static inline void pin(int cpu) {
  cpu_set_t set;

  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  if (sched_setaffinity(0, sizeof(set), &set)) die_errno("sched_setaffinity");
}

/* Returns 1 when this process runs without address-space randomization, re-executing it once
 * with ADDR_NO_RANDOMIZE (what `setarch -R` does; the flag is inherited across exec and fork)
 * when it does not; 0 when the kernel refuses the personality (a seccomp filter may) or the
 * exec fails, and the process goes on randomized. Why: the kernel looks a VMA up in the mm's
 * maple tree, and that walk's length follows where randomization put the mappings; a path
 * length that moves with a random layout is no path length (docs/instruction-counts.md).
 * Call it first in main(), before anything is written to stdout. */
static inline int without_aslr(char** argv) {
  const int current = personality(0xffffffff);

  if (current == -1) return 0;
  if (current & ADDR_NO_RANDOMIZE) return 1;
  if (personality((unsigned long)current | ADDR_NO_RANDOMIZE) == -1) return 0;
  execv("/proc/self/exe", argv);
  personality((unsigned long)current); /* the exec failed: go on as we are */
  return 0;
}

#endif /* ISOLAB_GUEST_TOOL_H */

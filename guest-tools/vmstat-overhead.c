/*
 * vmstat-overhead: cost of operations that touch the per-CPU vmstat counters, measured in the
 * guest on (typically) an isolated nohz_full CPU.
 *
 *   syscall  one mlock()+munlock() pair on one page-aligned page; each call changes the
 *            NR_MLOCK vmstat counter of the calling CPU (a vmstat differential).
 *   idle     one usleep(SLEEP_US) loop iteration: the CPU enters and leaves the idle loop,
 *            where quiet_vmstat()/the tick decide whether vmstat work follows.
 *
 * --touch makes every iteration first write to the next page of a private anonymous arena
 * (ARENA_PAGES pages; released with madvise(MADV_DONTNEED) and reused when exhausted), so each
 * iteration also allocates a page in a page fault and leaves the calling CPU's vmstat
 * differentials non-zero (NR_ANON_MAPPED and the LRU counters grow until the next fold), which
 * an mlock()+munlock() pair alone does not: the pair raises and lowers the same differential.
 * The touch is not timed: the timed region of an iteration is the pair or the usleep() only.
 * --duration-s N runs timed iterations until N seconds of CLOCK_MONOTONIC have passed (checked
 * every 16 iterations) instead of a fixed count, so that a run spans several vm.stat_interval
 * periods whatever the emulation speed.
 *
 * The method (the average CPU cycles of N mlock+munlock pairs and of N usleep(10) iterations,
 * read with the TSC) follows the test used in the "tick/sched: Ensure quiet_vmstat() is called
 * when the idle tick was stopped too" discussion (LKML, 2022). This is an independent program.
 *
 * Counter: on x86 the TSC, read with RDTSCP (falling back to LFENCE;RDTSC where the CPU model
 * lacks RDTSCP, e.g. QEMU's qemu64), followed by LFENCE so that later work cannot start before
 * the read. Elsewhere, or with --counter ns, clock_gettime(CLOCK_MONOTONIC) in nanoseconds.
 * Each iteration's operation is timed from a counter read just before it to one just after it;
 * total is the sum of those deltas.
 *
 * Instruction counts: inside the timed interval each operation is bracketed by the region
 * markers of insn-marker.h, so that isolab's TCG plugin counts the guest instructions of every
 * timed operation on the pinned CPU (user and kernel); the warm-up is not marked.
 * "marked_regions" is the number of marked operations (the timed iterations). The program
 * re-executes itself once with address space randomization off (personality ADDR_NO_RANDOMIZE),
 * so that the kernel's path through this process's mappings is the same in every boot.
 *
 * Output: one JSON object on stdout, e.g.
 *   {"tool":"vmstat-overhead","version":1,"mode":"syscall","cpu":1,"pinned":true,
 *    "iterations":30000,"warmup":1000,"counter":"tsc","total":123456789,
 *    "per_iteration":4115.2,"per_syscall":2057.6,"min":3900,"max":51234,
 *    "elapsed_ns":2000123456,"touched_pages":0,"marked_regions":30000}
 * per_syscall (syscall mode) is per_iteration / 2: one pair is two system calls, which is the
 * "cycles per syscall" of the 2022 test. Idle mode adds "sleep_us".
 * Exit status: 0 success, 2 bad usage or a failing system call (message on stderr).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/personality.h>
#include <time.h>
#include <unistd.h>

#define TOOL_NAME "vmstat-overhead"
#include "guest-tool.h" /* counter, pin(), die(), parse_count(), parse_counter() */
#include "insn-marker.h"

#define DEFAULT_SYSCALL_ITERATIONS 30000UL
#define DEFAULT_IDLE_ITERATIONS 100000UL
#define MAX_ITERATIONS 1000000000UL
#define ARENA_PAGES 2048UL

static void usage(FILE* out) {
  fprintf(out,
          "usage: vmstat-overhead syscall|idle [options]\n"
          "  syscall          time mlock()+munlock() pairs on one page (NR_MLOCK)\n"
          "  idle             time usleep() loop iterations\n"
          "  --iterations N   timed iterations (default %lu syscall, %lu idle)\n"
          "  --warmup N       untimed iterations first (default 1000 syscall, 100 idle)\n"
          "  --cpu N          pin to CPU N with sched_setaffinity()\n"
          "  --sleep-us N     usleep() argument in idle mode (default 10)\n"
          "  --duration-s N   run until N seconds have passed (instead of --iterations)\n"
          "  --touch          each iteration first faults in a fresh anonymous page (untimed)\n"
          "  --counter tsc|ns cycle counter (default tsc on x86) or CLOCK_MONOTONIC ns\n"
          "  --help           this text\n"
          "Prints one JSON object; exit status 2 on bad usage or a failing system call.\n",
          DEFAULT_SYSCALL_ITERATIONS, DEFAULT_IDLE_ITERATIONS);
}

static void die_errno(const char* call) {
  int e = errno;
  fprintf(stderr, "vmstat-overhead: %s failed: %s%s\n", call, strerror(e),
          e == ENOMEM || e == EPERM ? " (check RLIMIT_MEMLOCK: ulimit -l)" : "");
  exit(2);
}

/* The arena of --touch: the next page to write, released and reused when exhausted. */
static char* arena;
static size_t arena_next;
static unsigned long touched_pages;

static void touch_next_page(size_t page_size) {
  if (arena_next == ARENA_PAGES) {
    if (madvise(arena, ARENA_PAGES * page_size, MADV_DONTNEED)) die_errno("madvise");
    arena_next = 0;
  }
  arena[arena_next * page_size] = 1;
  arena_next++;
  touched_pages++;
}

static void one_pair(void* page, size_t len) {
  if (mlock(page, len)) die_errno("mlock");
  if (munlock(page, len)) die_errno("munlock");
}

/* Runs the program again with address space randomization off (once: the flag is inherited),
 * so that every boot lays out the same mappings and the kernel walks the same VMA tree in each
 * mlock()/munlock(): a path length that moves with a random layout is no path length. Falls
 * through (randomized) when the kernel refuses. */
static void without_aslr(char** argv) {
  const int p = personality(0xffffffff);

  if (p == -1 || (p & ADDR_NO_RANDOMIZE)) return;
  if (personality((unsigned long)p | ADDR_NO_RANDOMIZE) == -1) return;
  execv("/proc/self/exe", argv);
}

int main(int argc, char** argv) {
  const char* mode = NULL;
  unsigned long iterations = 0, warmup = 0, sleep_us = 10;
  int have_iterations = 0, have_warmup = 0, touch = 0;
  unsigned long duration_s = 0;
  long cpu = -1;
  const char* counter = HAVE_TSC ? "tsc" : "ns";
  void* page = NULL;
  size_t page_size;
  uint64_t start, now, d, total = 0, min = UINT64_MAX, max = 0;
  uint64_t begin_ns, deadline_ns, elapsed_ns;
  unsigned long i;
  int syscall_mode, running_cpu;

  without_aslr(argv);

  for (int a = 1; a < argc; a++) {
    const char* arg = argv[a];
    const char* val = NULL;
    char name[32];
    const char* eq = strchr(arg, '=');

    if (!strcmp(arg, "--help") || !strcmp(arg, "-h")) {
      usage(stdout);
      return 0;
    }
    if (!strcmp(arg, "--touch")) { /* the one option without a value */
      touch = 1;
      continue;
    }
    if (strncmp(arg, "--", 2) != 0) {
      if (mode) die("more than one mode given (want syscall or idle)");
      mode = arg;
      continue;
    }
    if (eq) {
      size_t n = (size_t)(eq - arg);
      if (n >= sizeof(name)) die("option name too long");
      memcpy(name, arg, n);
      name[n] = '\0';
      val = eq + 1;
    } else {
      snprintf(name, sizeof(name), "%s", arg);
      if (strlen(arg) >= sizeof(name)) die("option name too long");
      if (a + 1 < argc) val = argv[++a];
    }
    if (!strcmp(name, "--iterations")) {
      iterations = parse_count(name, val, 1, MAX_ITERATIONS);
      have_iterations = 1;
    } else if (!strcmp(name, "--warmup")) {
      warmup = parse_count(name, val, 0, MAX_ITERATIONS);
      have_warmup = 1;
    } else if (!strcmp(name, "--cpu")) {
      cpu = (long)parse_count(name, val, 0, CPU_SETSIZE - 1);
    } else if (!strcmp(name, "--duration-s")) {
      duration_s = parse_count(name, val, 1, 86400);
    } else if (!strcmp(name, "--sleep-us")) {
      sleep_us = parse_count(name, val, 0, 1000000);
    } else if (!strcmp(name, "--counter")) {
      counter = parse_counter(val);
    } else {
      fprintf(stderr, "vmstat-overhead: unknown option '%s'\n", arg);
      usage(stderr);
      return 2;
    }
  }
  if (!mode) {
    usage(stderr);
    return 2;
  }
  if (!strcmp(mode, "syscall"))
    syscall_mode = 1;
  else if (!strcmp(mode, "idle"))
    syscall_mode = 0;
  else {
    fprintf(stderr, "vmstat-overhead: unknown mode '%s' (want syscall or idle)\n", mode);
    return 2;
  }
  if (!have_iterations)
    iterations = syscall_mode ? DEFAULT_SYSCALL_ITERATIONS : DEFAULT_IDLE_ITERATIONS;
  if (!have_warmup) warmup = syscall_mode ? 1000 : 100;
  start_counter(counter);
  if (cpu >= 0) pin((int)cpu);

  if (syscall_mode) {
    long ps = sysconf(_SC_PAGESIZE);

    page_size = ps > 0 ? (size_t)ps : 4096;
    if (posix_memalign(&page, page_size, page_size)) die("cannot allocate a page");
    memset(page, 1, page_size); /* fault it in before timing */
    one_pair(page, page_size);  /* fails early on RLIMIT_MEMLOCK */
    for (i = 0; i < warmup; i++) one_pair(page, page_size);
  } else {
    page_size = 0;
    for (i = 0; i < warmup; i++) usleep((useconds_t)sleep_us);
  }

  if (touch) {
    long ps = sysconf(_SC_PAGESIZE);

    page_size = ps > 0 ? (size_t)ps : 4096;
    arena = mmap(NULL, ARENA_PAGES * page_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                 -1, 0);
    if (arena == MAP_FAILED) die_errno("mmap");
  }

  running_cpu = sched_getcpu();
  begin_ns = monotonic_ns();
  deadline_ns = duration_s ? begin_ns + (uint64_t)duration_s * 1000000000ULL : 0;
  for (i = 0; duration_s ? 1 : i < iterations; i++) {
    if (duration_s && i % 16 == 0 && monotonic_ns() >= deadline_ns) break;
    if (touch) touch_next_page(page_size);
    start = read_counter();
    ISOLAB_MARK_REGION_BEGIN();
    if (syscall_mode)
      one_pair(page, page_size);
    else
      usleep((useconds_t)sleep_us);
    ISOLAB_MARK_REGION_END();
    now = read_counter();
    d = now - start;
    total += d;
    if (d < min) min = d;
    if (d > max) max = d;
  }
  iterations = i;
  elapsed_ns = monotonic_ns() - begin_ns;
  if (iterations == 0) die("no iteration completed within --duration-s");

  {
    double per = (double)total / (double)iterations;

    printf("{\"tool\":\"vmstat-overhead\",\"version\":1,\"mode\":\"%s\",", mode);
    if (cpu >= 0)
      printf("\"cpu\":%ld,\"pinned\":true,", cpu);
    else if (running_cpu >= 0)
      printf("\"cpu\":%d,\"pinned\":false,", running_cpu);
    else
      printf("\"cpu\":null,\"pinned\":false,");
    printf("\"iterations\":%lu,\"warmup\":%lu,\"counter\":\"%s\",\"total\":%" PRIu64
           ",\"per_iteration\":%.3f,",
           iterations, warmup, counter, total, per);
    if (syscall_mode)
      printf("\"per_syscall\":%.3f,", per / 2);
    else
      printf("\"sleep_us\":%lu,", sleep_us);
    printf("\"min\":%" PRIu64 ",\"max\":%" PRIu64 ",\"elapsed_ns\":%" PRIu64
           ",\"touched_pages\":%lu,\"marked_regions\":%lu}\n",
           min, max, elapsed_ns, touched_pages, iterations);
  }
  free(page);
  if (fflush(stdout) || ferror(stdout)) die("cannot write the result to stdout");
  return 0;
}

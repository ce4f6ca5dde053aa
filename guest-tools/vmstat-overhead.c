/*
 * vmstat-overhead: cost of operations that touch the per-CPU vmstat counters, measured in the
 * guest on (typically) an isolated nohz_full CPU.
 *
 *   syscall  one mlock()+munlock() pair on one page-aligned page; each call changes the
 *            NR_MLOCK vmstat counter of the calling CPU (a vmstat differential).
 *   idle     one usleep(SLEEP_US) loop iteration: the CPU enters and leaves the idle loop,
 *            where quiet_vmstat()/the tick decide whether vmstat work follows.
 *   spin     the nohz_full case of a polling task (vmstat-spin.h has the details): the task
 *            spins in user space for --duration-s seconds and, --rate-hz times a second, does
 *            one --event that dirties its CPU's vmstat differentials (and, for some events,
 *            brings the tick back); nothing is timed, what counts is what interrupts the CPU
 *            (the host reads it from the trace). Its own options and output: vmstat-spin.h.
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
 * Guest PMU (insn-pmu.h; the source of instruction counts where the TCG plugin is absent, i.e.
 * KVM): unless --no-pmu is given, the program opens its own user and kernel instruction
 * counters (per task, one group) after the warm-up. Each timed iteration reads the group just
 * before its first cycle-counter read and just after its second, so:
 *   - the timed interval (the cycles/ns fields) holds exactly what it held without the PMU,
 *     and the region markers still bracket exactly the operation (the plugin's regions do not
 *     change); the read() system calls run between iterations, outside both;
 *   - a PMU region is the operation plus the two cycle-counter reads, the markers, and the
 *     tail and head of the two read() system calls (kernel entry/exit around the counter
 *     snapshot). That instrument cost is measured on its own: EMPTY_REGIONS "empty" regions,
 *     the same reads with no operation between, run after the warm-up; the host subtracts
 *     their median (workload/pmu_metrics.h).
 * The counters count this task only: in idle mode the idle task's instructions while the
 * program sleeps are not counted (the plugin, counting the whole vCPU, counts them), so PMU
 * and plugin counts are different quantities (isolab compare refuses to mix them).
 * Where the counters cannot be opened (TCG: no PMU) the loop is the same as with --no-pmu and
 * the output says why. On KVM the read() calls between iterations do touch caches and TLBs
 * outside the timed interval; --no-pmu restores the loop without them.
 * The JSON then ends with, after "marked_regions",
 *   "pmu":{"available":true,"method":"read","regions":N,"unscheduled_regions":N,
 *          "insns_median":N,"kernel_insns_median":N,"insns_mean":x,"kernel_insns_mean":x,
 *          "empty_regions":N,"empty_insns_median":N,"empty_kernel_insns_median":N}
 * or "pmu":{"available":false,"reason":"perf_event_open: No such file or directory"}
 * (--no-pmu: "reason":"--no-pmu"). Medians are lower medians (as the plugin's) over the first
 * PMU_KEPT regions, means over all counted regions; a region during which the group was not
 * on the PMU the whole time is not counted ("unscheduled_regions"), so regions +
 * unscheduled_regions = marked_regions. A failing read ends the counting: unavailable, with
 * "read: ..." as the reason.
 *
 * Output: one JSON object on stdout, e.g.
 *   {"tool":"vmstat-overhead","version":1,"mode":"syscall","cpu":1,"pinned":true,
 *    "iterations":30000,"warmup":1000,"counter":"tsc","total":123456789,
 *    "per_iteration":4115.2,"per_syscall":2057.6,"min":3900,"max":51234,
 *    "elapsed_ns":2000123456,"touched_pages":0,"marked_regions":30000,
 *    "pmu":{"available":false,"reason":"perf_event_open: No such file or directory"}}
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
#include <time.h>
#include <unistd.h>

#define TOOL_NAME "vmstat-overhead"
#include "guest-tool.h" /* counter, pin(), die(), parse_count(), parse_counter() */
#include "insn-marker.h"
#include "insn-pmu.h"

#define DEFAULT_SYSCALL_ITERATIONS 30000UL
#define DEFAULT_IDLE_ITERATIONS 100000UL
#define MAX_ITERATIONS 1000000000UL
#define ARENA_PAGES 2048UL
#define EMPTY_REGIONS 1000UL
#define PMU_KEPT 4194304UL /* regions kept for the medians, as the plugin's */

static void usage(FILE* out) {
  fprintf(out,
          "usage: vmstat-overhead syscall|idle|spin [options]\n"
          "  syscall          time mlock()+munlock() pairs on one page (NR_MLOCK)\n"
          "  idle             time usleep() loop iterations\n"
          "  spin             spin in user space with an event at a set rate (vmstat-spin.h)\n"
          "  --iterations N   timed iterations (default %lu syscall, %lu idle)\n"
          "  --warmup N       untimed iterations first (default 1000 syscall, 100 idle)\n"
          "  --cpu N          pin to CPU N with sched_setaffinity()\n"
          "  --sleep-us N     usleep() argument in idle mode (default 10)\n"
          "  --duration-s N   run until N seconds have passed (instead of --iterations)\n"
          "  --rate-hz N      spin: events per second (default 10)\n"
          "  --event E        spin: fault, fault+cputimer (default), cputimer+fault, fault+mlock\n"
          "  --touch          each iteration first faults in a fresh anonymous page (untimed)\n"
          "  --counter tsc|ns cycle counter (default tsc on x86) or CLOCK_MONOTONIC ns\n"
          "  --no-pmu         do not count instructions with the guest PMU\n"
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

/* The page touch_next_page() wrote last; the arena's first page before any touch. */
static char* last_touched_page(size_t page_size) {
  return arena + (arena_next ? arena_next - 1 : 0) * page_size;
}

static void one_pair(void* page, size_t len) {
  if (mlock(page, len)) die_errno("mlock");
  if (munlock(page, len)) die_errno("munlock");
}

#include "vmstat-spin.h" /* the spin mode: run_spin() */

/* The PMU regions of one kind (timed or empty): per-region counts for the medians, sums for
 * the means. */
struct pmu_regions {
  uint32_t *all, *kernel; /* the first PMU_KEPT regions, saturated at UINT32_MAX */
  size_t kept, cap;
  unsigned long counted, unscheduled;
  uint64_t sum_all, sum_kernel;
};

/* The PMU state: on while the counters work; reason[] says why not. */
static struct isolab_pmu pmu = {-1, -1};
static int pmu_on;
static char pmu_reason[160] = "--no-pmu";
static struct pmu_regions pmu_timed, pmu_empty;

static uint32_t saturate32(uint64_t v) { return v > UINT32_MAX ? UINT32_MAX : (uint32_t)v; }

/* Reads the group into *s; a failure turns the PMU off for good (the reason says why). */
static void pmu_read(struct isolab_pmu_sample* s) {
  if (pmu_on && isolab_pmu_read(&pmu, s, pmu_reason, sizeof(pmu_reason))) {
    pmu_on = 0;
    isolab_pmu_close(&pmu);
  }
}

/* Adds the region between two reads (b after a) to r. */
static void pmu_add(struct pmu_regions* r, const struct isolab_pmu_sample* a,
                    const struct isolab_pmu_sample* b) {
  const uint64_t user = b->user - a->user, kernel = b->kernel - a->kernel;

  if (!pmu_on) return;
  if (b->running_ns - a->running_ns != b->enabled_ns - a->enabled_ns) {
    r->unscheduled++;
    return;
  }
  r->counted++;
  r->sum_all += user + kernel;
  r->sum_kernel += kernel;
  if (r->kept == r->cap && r->cap < PMU_KEPT) {
    size_t cap = r->cap ? r->cap * 2 : 4096;
    uint32_t* all = realloc(r->all, cap * sizeof(uint32_t));
    uint32_t* ker = all ? realloc(r->kernel, cap * sizeof(uint32_t)) : NULL;

    if (all) r->all = all;
    if (ker) r->kernel = ker;
    if (all && ker) r->cap = cap; /* out of memory: the medians cover the regions kept */
  }
  if (r->kept == r->cap) return;
  r->all[r->kept] = saturate32(user + kernel);
  r->kernel[r->kept] = saturate32(kernel);
  r->kept++;
}

static int by_u32(const void* a, const void* b) {
  const uint32_t x = *(const uint32_t*)a, y = *(const uint32_t*)b;
  return x < y ? -1 : x > y;
}

/* The lower median of v[0..n) (sorts in place); n > 0. */
static uint32_t lower_median32(uint32_t* v, size_t n) {
  qsort(v, n, sizeof *v, by_u32);
  return v[(n - 1) / 2];
}

/* EMPTY_REGIONS regions with nothing between the reads but the two cycle-counter reads: the
 * instrument's own instructions. */
static void pmu_measure_empty(void) {
  struct isolab_pmu_sample a, b;
  uint64_t t0, t1;

  for (unsigned long i = 0; i < EMPTY_REGIONS && pmu_on; i++) {
    pmu_read(&a);
    t0 = read_counter();
    t1 = read_counter();
    pmu_read(&b);
    pmu_add(&pmu_empty, &a, &b);
    (void)t0, (void)t1;
  }
}

/* The JSON "pmu" member (with its leading comma). */
static void print_pmu(void) {
  if (!pmu_on || !pmu_timed.kept || !pmu_empty.kept) {
    if (pmu_on) snprintf(pmu_reason, sizeof(pmu_reason), "no region was counted whole");
    /* The reasons come from strerror() and literals: no quote or backslash to escape. */
    printf(",\"pmu\":{\"available\":false,\"reason\":\"%s\"}", pmu_reason);
    return;
  }
  printf(
      ",\"pmu\":{\"available\":true,\"method\":\"read\",\"regions\":%lu,"
      "\"unscheduled_regions\":%lu,\"insns_median\":%" PRIu32 ",\"kernel_insns_median\":%" PRIu32
      ",\"insns_mean\":%.3f,\"kernel_insns_mean\":%.3f,",
      pmu_timed.counted, pmu_timed.unscheduled, lower_median32(pmu_timed.all, pmu_timed.kept),
      lower_median32(pmu_timed.kernel, pmu_timed.kept),
      (double)pmu_timed.sum_all / (double)pmu_timed.counted,
      (double)pmu_timed.sum_kernel / (double)pmu_timed.counted);
  printf("\"empty_regions\":%lu,\"empty_insns_median\":%" PRIu32
         ",\"empty_kernel_insns_median\":%" PRIu32 "}",
         pmu_empty.counted, lower_median32(pmu_empty.all, pmu_empty.kept),
         lower_median32(pmu_empty.kernel, pmu_empty.kept));
}

int main(int argc, char** argv) {
  const char* mode = NULL;
  unsigned long iterations = 0, warmup = 0, sleep_us = 10;
  int have_iterations = 0, have_warmup = 0, touch = 0, use_pmu = 1;
  unsigned long duration_s = 0, rate_hz = SPIN_DEFAULT_RATE_HZ;
  enum spin_event event = SPIN_FAULT_CPUTIMER;
  long cpu = -1;
  const char* counter = HAVE_TSC ? "tsc" : "ns";
  void* page = NULL;
  size_t page_size;
  uint64_t start, now, d, total = 0, min = UINT64_MAX, max = 0;
  uint64_t begin_ns, deadline_ns, elapsed_ns;
  struct isolab_pmu_sample pa = {0}, pb = {0};
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
    if (!strcmp(arg, "--touch") || !strcmp(arg, "--no-pmu")) { /* options without a value */
      if (arg[2] == 't')
        touch = 1;
      else
        use_pmu = 0;
      continue;
    }
    if (strncmp(arg, "--", 2) != 0) {
      if (mode) die("more than one mode given (want syscall, idle or spin)");
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
    } else if (!strcmp(name, "--rate-hz")) {
      rate_hz = parse_count(name, val, 1, SPIN_MAX_RATE_HZ);
    } else if (!strcmp(name, "--event")) {
      event = parse_spin_event(val);
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
  if (!strcmp(mode, "spin")) {
    start_counter(counter);
    if (cpu >= 0) pin((int)cpu);
    run_spin(cpu, duration_s ? duration_s : 10, rate_hz, event, counter);
    if (fflush(stdout) || ferror(stdout)) die("cannot write the result to stdout");
    return 0;
  }
  if (!strcmp(mode, "syscall"))
    syscall_mode = 1;
  else if (!strcmp(mode, "idle"))
    syscall_mode = 0;
  else {
    fprintf(stderr, "vmstat-overhead: unknown mode '%s' (want syscall, idle or spin)\n", mode);
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

  if (use_pmu) {
    pmu_on = !isolab_pmu_open(&pmu, pmu_reason, sizeof(pmu_reason));
    pmu_measure_empty();
  }

  running_cpu = sched_getcpu();
  begin_ns = monotonic_ns();
  deadline_ns = duration_s ? begin_ns + (uint64_t)duration_s * 1000000000ULL : 0;
  for (i = 0; duration_s ? 1 : i < iterations; i++) {
    if (duration_s && i % 16 == 0 && monotonic_ns() >= deadline_ns) break;
    if (touch) touch_next_page(page_size);
    pmu_read(&pa);
    start = read_counter();
    ISOLAB_MARK_REGION_BEGIN();
    if (syscall_mode)
      one_pair(page, page_size);
    else
      usleep((useconds_t)sleep_us);
    ISOLAB_MARK_REGION_END();
    now = read_counter();
    pmu_read(&pb);
    pmu_add(&pmu_timed, &pa, &pb);
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
           ",\"touched_pages\":%lu,\"marked_regions\":%lu",
           min, max, elapsed_ns, touched_pages, iterations);
    print_pmu();
    printf("}\n");
  }
  free(page);
  isolab_pmu_close(&pmu);
  if (fflush(stdout) || ferror(stdout)) die("cannot write the result to stdout");
  return 0;
}

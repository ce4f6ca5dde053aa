/*
 * page-fault-bench: cost of a page allocation as a user task sees it, measured in the guest:
 * the first touch of a fresh private anonymous page (a page fault that allocates, zeroes and
 * maps a page from the page allocator, which updates the per-zone NUMA statistics numa_hit,
 * numa_local, ... on every allocation unless vm.numa_stat is 0), then its release.
 *
 * The idea follows the page_bench01 (one thread) and page_bench03 (one thread per CPU)
 * measurements of the "Handle zone statistics distinctively based-on different VM stats modes"
 * series (LKML, 2017): CPU cycles per single page allocation and free, with and without the
 * NUMA counters. Those are kernel modules calling alloc_pages()/__free_pages(); this is an
 * independent user-space program, so each page also costs the fault entry, the zeroing and the
 * page-table update, and its numbers are larger than the module's.
 *
 * Each worker owns a region of PAGES pages. One batch: read the counter, write one byte to each
 * page of the region (PAGES page faults), read the counter, madvise(MADV_DONTNEED) the region
 * (the pages go back to the allocator), read the counter. fault_total sums the first intervals,
 * free_total the second ones.
 *
 * Instruction-count markers (insn-marker.h; NOPs without isolab's TCG plugin): every timed
 * batch (not the warm-up) brackets its page faults with a region of one class and its
 * MADV_DONTNEED with a region of another, inside the counter reads: classes 0 (faults) and 1
 * (free) in the single phase, 2 (faults) and 3 (free) in the per_cpu phase. The two phases
 * run in one workload step and the single phase's CPU takes part in the per_cpu phase, so the
 * classes are what tells the phases apart on that vCPU. A worker's "marked_batches" is how
 * many batches it marked: the plugin should count that many regions of each of its phase's
 * two classes on the worker's CPU, and none on any other CPU.
 *
 * Phases, one after the other:
 *   single   one worker pinned on the first CPU of --cpus;
 *   per_cpu  one worker per CPU of --cpus, each pinned on its CPU, all starting together (a
 *            shared start flag) and stopping at one deadline.
 * Workers are forked processes, not threads, so that they share no mm: with threads every
 * MADV_DONTNEED would also take the shared mmap lock and send TLB-shootdown IPIs to the
 * other workers' CPUs, which the per-CPU kernel benchmark does not have. Results come back
 * through a shared anonymous mapping.
 *
 * Around each phase the numa_* lines of /proc/vmstat are read (vmstat_before/vmstat_after):
 * numa_hit, numa_miss, numa_foreign, numa_interleave, numa_local, numa_other (see
 * Documentation/admin-guide/numastat.rst). With vm.numa_stat = 0 they stay where the sysctl
 * left them (it zeroes them).
 *
 * Counter: on x86 the TSC (RDTSCP, or LFENCE;RDTSC without RDTSCP, then LFENCE), elsewhere or
 * with --counter ns CLOCK_MONOTONIC nanoseconds. The TSC of a TCG guest ticks at the emulated
 * frequency, not the host's cycles.
 *
 * Output: one JSON object on stdout, e.g.
 *   {"tool":"page-fault-bench","version":1,"counter":"tsc","page_size":4096,
 *    "pages_per_batch":64,"duration_s":2,"warmup_batches":20,"address_randomization":true,
 *    "phases":[{"name":"single","elapsed_ns":2000123456,
 *               "vmstat_before":{"numa_hit":123,...},"vmstat_after":{"numa_hit":456,...},
 *               "workers":[{"cpu":0,"node":0,"batches":100,"pages":6400,
 *                           "fault_total":1234567,"free_total":234567,
 *                           "min_batch_fault":9000,"max_batch_fault":90000,
 *                           "marked_batches":100,"region_address":"0x7ffff7ff7000"}]},
 *              {"name":"per_cpu",...}]}
 * "node" is the NUMA node of the CPU the worker ran on (getcpu()), -1 if unknown;
 * "region_address" where mmap put its region. "address_randomization" is false when the bench
 * ran with ADDR_NO_RANDOMIZE (--fixed-layout, see without_aslr() in guest-tool.h, or inherited).
 * A fault's instruction count depends on the VMA tree's shape, which follows the layout, and on
 * the state of the per-CPU page lists, which follows the process's history; neither option
 * makes every run count the same (docs/instruction-counts.md), and randomized runs agree more
 * often, so randomization stays the default.
 * Exit status: 0 success, 2 bad usage or a failing system call (message on stderr).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define TOOL_NAME "page-fault-bench"
#include "guest-tool.h" /* counter, pin(), die(), parse_count(), parse_counter(), without_aslr() */
#include "insn-marker.h"

#define MAX_WORKERS 1024
#define MAX_PAGES 65536UL
#define MAX_NUMA_FIELDS 16

struct worker {
  int cpu;
  int node;
  int done; /* set by the worker when its numbers are final */
  uint64_t batches, pages, fault_total, free_total, min_batch, max_batch;
  uint64_t marked_batches; /* batches bracketed with region markers */
  uintptr_t region;        /* the address mmap gave the worker's region */
};

struct shared {
  volatile int go; /* set by the parent when every worker is ready */
  volatile int ready;
  struct worker w[MAX_WORKERS];
};

static void usage(FILE* out) {
  fprintf(out,
          "usage: page-fault-bench [options]\n"
          "  --cpus LIST       CPUs (cpulist, e.g. 0-3,6); single phase on the first, per_cpu\n"
          "                    phase on each (default: the CPUs this task may run on)\n"
          "  --duration-s N    seconds per phase (default 2)\n"
          "  --pages N         pages per batch (default 64)\n"
          "  --warmup N        untimed batches per worker first (default 20)\n"
          "  --counter tsc|ns  cycle counter (default tsc on x86) or CLOCK_MONOTONIC ns\n"
          "  --fixed-layout    run without address-space randomization (default: with)\n"
          "  --help            this text\n"
          "Prints one JSON object; exit status 2 on bad usage or a failing system call.\n");
}

static void die_errno(const char* call) {
  fprintf(stderr, "page-fault-bench: %s failed: %s\n", call, strerror(errno));
  exit(2);
}

/* "0-3,6" -> cpus[], in the order given; ranges a-b with a <= b. Returns the count. */
static int parse_cpulist(const char* s, int* cpus, int max) {
  int n = 0;
  const char* p = s;

  while (*p) {
    char* end;
    long a, b;

    if (*p < '0' || *p > '9') return -1;
    a = strtol(p, &end, 10);
    b = a;
    p = end;
    if (*p == '-') {
      p++;
      if (*p < '0' || *p > '9') return -1;
      b = strtol(p, &end, 10);
      p = end;
    }
    if (a > b || b >= CPU_SETSIZE) return -1;
    for (long c = a; c <= b; c++) {
      if (n == max) return -1;
      cpus[n++] = (int)c;
    }
    if (*p == ',')
      p++;
    else if (*p)
      return -1;
  }
  return n;
}

/* The numa_* lines of /proc/vmstat as a JSON object ({} when the kernel has none). */
static void print_numa_vmstat(const char* key, char* buf, size_t len) {
  FILE* f = fopen("/proc/vmstat", "r");
  char line[128], name[64];
  unsigned long long v;
  size_t used = 0;
  int first = 1;

  used += (size_t)snprintf(buf + used, len - used, "\"%s\":{", key);
  if (!f) die_errno("open /proc/vmstat");
  while (fgets(line, sizeof(line), f)) {
    if (strncmp(line, "numa_", 5) != 0) continue;
    if (sscanf(line, "%63s %llu", name, &v) != 2) continue;
    if (used + 100 >= len) break;
    used += (size_t)snprintf(buf + used, len - used, "%s\"%s\":%llu", first ? "" : ",", name, v);
    first = 0;
  }
  fclose(f);
  snprintf(buf + used, len - used, "}");
}

static int current_node(void) {
  unsigned int cpu = 0, node = 0;

  if (syscall(SYS_getcpu, &cpu, &node, NULL) != 0) return -1;
  return (int)node;
}

#define NO_MARK() ((void)0)

/* One batch: fault in every page of the region, then give them back. Defined three times: with
 * no marker (warm-up), with the single phase's region classes and with the per_cpu phase's;
 * separate functions, so that no branch on the phase lies inside a region. */
#define DEFINE_BATCH(name, FAULT_BEGIN, FAULT_END, FREE_BEGIN, FREE_END)                 \
  static void name(char* region, size_t page_size, unsigned long pages, uint64_t* fault, \
                   uint64_t* freed) {                                                    \
    uint64_t t0, t1, t2;                                                                 \
                                                                                         \
    t0 = read_counter();                                                                 \
    FAULT_BEGIN();                                                                       \
    for (unsigned long p = 0; p < pages; p++) region[p * page_size] = 1;                 \
    FAULT_END();                                                                         \
    t1 = read_counter();                                                                 \
    FREE_BEGIN();                                                                        \
    if (madvise(region, pages * page_size, MADV_DONTNEED)) die_errno("madvise");         \
    FREE_END();                                                                          \
    t2 = read_counter();                                                                 \
    *fault = t1 - t0;                                                                    \
    *freed = t2 - t1;                                                                    \
  }
DEFINE_BATCH(batch_unmarked, NO_MARK, NO_MARK, NO_MARK, NO_MARK)
DEFINE_BATCH(batch_single, ISOLAB_MARK_REGION_BEGIN, ISOLAB_MARK_REGION_END,
             ISOLAB_MARK_REGION1_BEGIN, ISOLAB_MARK_REGION1_END)
DEFINE_BATCH(batch_per_cpu, ISOLAB_MARK_REGION2_BEGIN, ISOLAB_MARK_REGION2_END,
             ISOLAB_MARK_REGION3_BEGIN, ISOLAB_MARK_REGION3_END)

typedef void (*batch_fn)(char*, size_t, unsigned long, uint64_t*, uint64_t*);

static void worker_main(struct shared* sh, int idx, batch_fn timed, size_t page_size,
                        unsigned long pages, unsigned long warmup, uint64_t duration_ns) {
  struct worker* w = &sh->w[idx];
  uint64_t f, r, deadline;
  char* region;

  pin(w->cpu);
  region =
      mmap(NULL, pages * page_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (region == MAP_FAILED) die_errno("mmap of the region");
  w->region = (uintptr_t)region;
  for (unsigned long i = 0; i < warmup; i++) batch_unmarked(region, page_size, pages, &f, &r);
  w->node = current_node();
  w->min_batch = UINT64_MAX;
  __atomic_add_fetch(&sh->ready, 1, __ATOMIC_SEQ_CST);
  while (!__atomic_load_n(&sh->go, __ATOMIC_ACQUIRE)) sched_yield();
  deadline = monotonic_ns() + duration_ns;
  do {
    timed(region, page_size, pages, &f, &r);
    w->batches++;
    w->marked_batches++;
    w->pages += pages;
    w->fault_total += f;
    w->free_total += r;
    if (f < w->min_batch) w->min_batch = f;
    if (f > w->max_batch) w->max_batch = f;
  } while (monotonic_ns() < deadline);
  __atomic_store_n(&w->done, 1, __ATOMIC_RELEASE);
  _exit(0);
}

/* Runs one phase with workers on cpus[0..n-1], each timing its batches with `timed`; prints
 * its JSON object. */
static void run_phase(struct shared* sh, const char* name, batch_fn timed, const int* cpus, int n,
                      size_t page_size, unsigned long pages, unsigned long warmup,
                      uint64_t duration_ns, int first) {
  static char before[2048], after[2048];
  pid_t pids[MAX_WORKERS];
  uint64_t t0, elapsed;
  int status, failed = 0;

  memset(sh, 0, sizeof(*sh));
  for (int i = 0; i < n; i++) sh->w[i].cpu = cpus[i];
  for (int i = 0; i < n; i++) {
    pids[i] = fork();
    if (pids[i] < 0) die_errno("fork");
    if (pids[i] == 0) worker_main(sh, i, timed, page_size, pages, warmup, duration_ns);
  }
  while (__atomic_load_n(&sh->ready, __ATOMIC_ACQUIRE) < n) {
    /* A worker that died before it was ready would leave us waiting forever. */
    pid_t p = waitpid(-1, &status, WNOHANG);
    if (p > 0) {
      for (int i = 0; i < n; i++) kill(pids[i], SIGKILL);
      die("a worker failed before the start");
    }
    usleep(1000);
  }
  print_numa_vmstat("vmstat_before", before, sizeof(before));
  t0 = monotonic_ns();
  __atomic_store_n(&sh->go, 1, __ATOMIC_RELEASE);
  for (int i = 0; i < n; i++) {
    if (waitpid(pids[i], &status, 0) < 0) die_errno("waitpid");
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || !sh->w[i].done) failed = 1;
  }
  elapsed = monotonic_ns() - t0;
  print_numa_vmstat("vmstat_after", after, sizeof(after));
  if (failed) die("a worker failed during the measurement");

  printf("%s{\"name\":\"%s\",\"elapsed_ns\":%" PRIu64 ",%s,%s,\"workers\":[", first ? "" : ",",
         name, elapsed, before, after);
  for (int i = 0; i < n; i++) {
    const struct worker* w = &sh->w[i];

    printf("%s{\"cpu\":%d,\"node\":%d,\"batches\":%" PRIu64 ",\"pages\":%" PRIu64
           ",\"fault_total\":%" PRIu64 ",\"free_total\":%" PRIu64 ",\"min_batch_fault\":%" PRIu64
           ",\"max_batch_fault\":%" PRIu64 ",\"marked_batches\":%" PRIu64
           ",\"region_address\":\"0x%" PRIxPTR "\"}",
           i ? "," : "", w->cpu, w->node, w->batches, w->pages, w->fault_total, w->free_total,
           w->min_batch, w->max_batch, w->marked_batches, w->region);
  }
  printf("]}");
}

int main(int argc, char** argv) {
  static int cpus[MAX_WORKERS];
  int ncpus = 0;
  unsigned long duration_s = 2, pages = 64, warmup = 20;
  const char* counter = HAVE_TSC ? "tsc" : "ns";
  int fixed = 0, randomized, persona;
  struct shared* sh;
  size_t page_size;
  long ps;

  for (int a = 1; a < argc; a++) {
    const char* arg = argv[a];
    const char* val = a + 1 < argc ? argv[a + 1] : NULL;

    if (!strcmp(arg, "--help") || !strcmp(arg, "-h")) {
      usage(stdout);
      return 0;
    }
    if (!strcmp(arg, "--fixed-layout")) {
      fixed = 1;
      continue;
    }
    if (!strcmp(arg, "--cpus")) {
      ncpus = val ? parse_cpulist(val, cpus, MAX_WORKERS) : -1;
      if (ncpus <= 0) die("--cpus wants a cpulist such as 0-3,6");
    } else if (!strcmp(arg, "--duration-s")) {
      duration_s = parse_count(arg, val, 1, 86400);
    } else if (!strcmp(arg, "--pages")) {
      pages = parse_count(arg, val, 1, MAX_PAGES);
    } else if (!strcmp(arg, "--warmup")) {
      warmup = parse_count(arg, val, 0, 1000000);
    } else if (!strcmp(arg, "--counter")) {
      counter = parse_counter(val);
    } else {
      fprintf(stderr, "page-fault-bench: unknown option '%s'\n", arg);
      usage(stderr);
      return 2;
    }
    a++; /* every option but --help takes a value */
  }
  {
    cpu_set_t set;

    if (sched_getaffinity(0, sizeof(set), &set)) die_errno("sched_getaffinity");
    if (ncpus == 0)
      for (int c = 0; c < CPU_SETSIZE && ncpus < MAX_WORKERS; c++)
        if (CPU_ISSET(c, &set)) cpus[ncpus++] = c;
    for (int i = 0; i < ncpus; i++)
      if (!CPU_ISSET(cpus[i], &set)) {
        fprintf(stderr, "page-fault-bench: CPU %d is not one this task may run on\n", cpus[i]);
        return 2;
      }
  }
  if (fixed) without_aslr(argv);
  persona = personality(0xffffffff);
  randomized = persona == -1 || !(persona & ADDR_NO_RANDOMIZE);
  start_counter(counter);
  ps = sysconf(_SC_PAGESIZE);
  page_size = ps > 0 ? (size_t)ps : 4096;
  sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (sh == MAP_FAILED) die_errno("mmap");

  printf(
      "{\"tool\":\"page-fault-bench\",\"version\":1,\"counter\":\"%s\",\"page_size\":%zu,"
      "\"pages_per_batch\":%lu,\"duration_s\":%lu,\"warmup_batches\":%lu,"
      "\"address_randomization\":%s,\"phases\":[",
      counter, page_size, pages, duration_s, warmup, randomized ? "true" : "false");
  fflush(stdout); /* the workers are forked: nothing buffered may be written twice */
  run_phase(sh, "single", batch_single, cpus, 1, page_size, pages, warmup,
            duration_s * 1000000000ULL, 1);
  fflush(stdout);
  run_phase(sh, "per_cpu", batch_per_cpu, cpus, ncpus, page_size, pages, warmup,
            duration_s * 1000000000ULL, 0);
  printf("]}\n");
  if (fflush(stdout) || ferror(stdout)) die("cannot write the result to stdout");
  return 0;
}

/*
 * madvise-pressure: a memory-pressure load that goes through the kernel's
 * madvise_cold_or_pageout_pte_range() (mm/madvise.c) on every call, for isolab's
 * madvise-latency example (docs/examples/madvise-latency.md: RT wakeup latency).
 *
 * It maps one private anonymous region of --mib MiB, writes one byte to each of its pages (so
 * every pte of the region is present) and then, until --duration-s seconds of CLOCK_MONOTONIC
 * have passed, repeats: write every page again, then madvise(MADV_PAGEOUT) (or MADV_COLD, or
 * the two alternately with --advice both) over the whole region. Each such call walks the
 * region's page tables with madvise_cold_or_pageout_pte_range() once per page-table (pmd)
 * range, i.e. 512 ptes per call of the function on x86_64 with 4 KiB pages; MADV_PAGEOUT also
 * isolates the pages from the LRU and hands them to reclaim. Without swap the anonymous pages
 * cannot be written out and are put back, but the pte walk (where the seed's cond_resched()
 * sits) runs all the same. Several processes (--procs) run the loop at once, like the seed's
 * stress-ng --vm workers; pin them with taskset.
 *
 * Output: one JSON object on stdout, e.g.
 *   {"tool":"madvise-pressure","version":1,"advice":"pageout","procs":2,"mib":32,
 *    "calls":812,"failed_calls":0,"max_call_us":20345.1,"mean_call_us":1523.7,
 *    "elapsed_s":10.002}
 * calls counts successful madvise() calls summed over the processes; max/mean_call_us time
 * one madvise() call (CLOCK_MONOTONIC). Exit status: 0 success, 2 bad usage or a failing
 * system call (message on stderr).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef MADV_COLD
#define MADV_COLD 20 /* include/uapi/asm-generic/mman-common.h, Linux 5.4 */
#endif
#ifndef MADV_PAGEOUT
#define MADV_PAGEOUT 21
#endif

#define MAX_PROCS 64

struct totals {
  unsigned long calls, failed;
  double max_us, sum_us;
};

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static long number(const char* opt, const char* s, long min, long max) {
  char* end = NULL;
  errno = 0;
  long v = s ? strtol(s, &end, 10) : 0;
  if (!s || *s == '\0' || *end != '\0' || errno || v < min || v > max) {
    fprintf(stderr, "madvise-pressure: %s: '%s' is not a number in [%ld, %ld]\n", opt, s ? s : "",
            min, max);
    exit(2);
  }
  return v;
}

/* One worker: the loop described above; writes its totals to the pipe fd. */
static int worker(size_t bytes, int advice_mode, double duration_s, int fd) {
  long page = sysconf(_SC_PAGESIZE);
  char* region = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (region == MAP_FAILED) {
    fprintf(stderr, "madvise-pressure: mmap of %zu bytes failed: %s\n", bytes, strerror(errno));
    return 2;
  }
  struct totals t = {0, 0, 0, 0};
  double end = now_s() + duration_s;
  for (unsigned long round = 0; now_s() < end; ++round) {
    for (size_t off = 0; off < bytes; off += (size_t)page) region[off] = (char)round;
    int advice = advice_mode == 2 ? (round % 2 ? MADV_COLD : MADV_PAGEOUT)
                                  : (advice_mode == 1 ? MADV_COLD : MADV_PAGEOUT);
    double t0 = now_s();
    int rc = madvise(region, bytes, advice);
    double us = (now_s() - t0) * 1e6;
    if (rc != 0) {
      if (t.failed++ == 0)
        fprintf(stderr, "madvise-pressure: madvise(%d) failed: %s\n", advice, strerror(errno));
      continue;
    }
    t.calls++;
    t.sum_us += us;
    if (us > t.max_us) t.max_us = us;
  }
  if (write(fd, &t, sizeof t) != (ssize_t)sizeof t) return 2;
  return t.calls > 0 ? 0 : 2;
}

int main(int argc, char** argv) {
  long mib = 32, procs = 1, duration = 10;
  const char* advice = "pageout";
  for (int i = 1; i < argc; ++i) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(a, "--mib"))
      mib = number(a, v, 1, 65536), ++i;
    else if (!strcmp(a, "--procs"))
      procs = number(a, v, 1, MAX_PROCS), ++i;
    else if (!strcmp(a, "--duration-s"))
      duration = number(a, v, 1, 86400), ++i;
    else if (!strcmp(a, "--advice") && v)
      advice = v, ++i;
    else {
      fprintf(stderr,
              "madvise-pressure: unknown option '%s' (want --mib N --procs N --duration-s N "
              "--advice pageout|cold|both)\n",
              a);
      return 2;
    }
  }
  int mode = !strcmp(advice, "pageout") ? 0
             : !strcmp(advice, "cold")  ? 1
             : !strcmp(advice, "both")  ? 2
                                        : -1;
  if (mode < 0) {
    fprintf(stderr, "madvise-pressure: unknown advice '%s' (want pageout, cold or both)\n", advice);
    return 2;
  }
  int fds[2];
  if (pipe(fds) != 0) {
    fprintf(stderr, "madvise-pressure: pipe failed: %s\n", strerror(errno));
    return 2;
  }
  double t0 = now_s();
  for (long p = 0; p < procs; ++p) {
    pid_t pid = fork();
    if (pid < 0) {
      fprintf(stderr, "madvise-pressure: fork failed: %s\n", strerror(errno));
      return 2;
    }
    if (pid == 0) _exit(worker((size_t)mib << 20, mode, (double)duration, fds[1]));
  }
  close(fds[1]);
  struct totals sum = {0, 0, 0, 0}, t;
  long got = 0;
  while (read(fds[0], &t, sizeof t) == (ssize_t)sizeof t) {
    ++got;
    sum.calls += t.calls;
    sum.failed += t.failed;
    sum.sum_us += t.sum_us;
    if (t.max_us > sum.max_us) sum.max_us = t.max_us;
  }
  int status, bad = 0;
  while (wait(&status) > 0)
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) bad = 1;
  printf(
      "{\"tool\":\"madvise-pressure\",\"version\":1,\"advice\":\"%s\",\"procs\":%ld,"
      "\"mib\":%ld,\"calls\":%lu,\"failed_calls\":%lu,\"max_call_us\":%.1f,"
      "\"mean_call_us\":%.1f,\"elapsed_s\":%.3f}\n",
      advice, procs, mib, sum.calls, sum.failed, sum.max_us,
      sum.calls ? sum.sum_us / (double)sum.calls : 0.0, now_s() - t0);
  if (bad || got != procs) {
    fprintf(stderr, "madvise-pressure: %ld of %ld workers reported; a worker failed\n", got, procs);
    return 2;
  }
  return 0;
}

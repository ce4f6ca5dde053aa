/*
 * vmstat-spin.h: vmstat-overhead's spin mode, the case of a polling task on a nohz_full CPU
 * (the "[RFC PATCH v4] tick/sched: Ensure quiet_vmstat() is called when the idle tick was
 * stopped too" discussion, LKML 2022; docs/examples/vmstat-nohz.md): the task spins in user
 * space with its CPU's tick stopped and now and then does something that leaves a vmstat
 * differential on the CPU. Nothing is timed; the interruptions of the CPU are what the host
 * counts, from the trace of the step.
 *
 *   vmstat-overhead spin --cpu N --duration-s S [--rate-hz R] [--event E]
 *
 * For S seconds of CLOCK_MONOTONIC the task spins (PAUSE, reading the cycle counter; no system
 * call) and every 1/R seconds (default 10 Hz) does one event E:
 *   fault           write to the next page of a private anonymous arena: a page fault that
 *                   allocates a page (NR_FREE_PAGES, NR_ANON_MAPPED, the LRU counters). On a
 *                   nohz_full CPU the fault and the return to user space leave the tick
 *                   stopped.
 *   fault+cputimer  the fault, then arming a one-shot timer of 1 ns on this thread's CPU-time
 *                   clock (timer_create(CLOCK_THREAD_CPUTIME_ID), SIGVTALRM, an empty
 *                   handler): a POSIX CPU timer is a tick dependency (TICK_DEP_BIT_POSIX_TIMER),
 *                   so the tick comes back until it fires at the next tick and the dependency
 *                   is dropped; then the tick stops again. The default.
 *   cputimer+fault  the same two in the other order: the tick is back (the timer was armed)
 *                   when the fault dirties the differentials.
 *   fault+mlock     the fault, then an mlock()+munlock() pair on that page.
 * The arena is ARENA_PAGES pages, released with madvise(MADV_DONTNEED) and reused when all are
 * touched (once every ARENA_PAGES events).
 *
 * Pacing: with the TSC the period is converted to cycles once, against CLOCK_MONOTONIC over
 * SPIN_CALIBRATE_NS at the start (the spin itself then makes no system call); without it the
 * loop reads CLOCK_MONOTONIC. An event whose time has passed by more than a period when the
 * previous one ends (the emulation was slow) restarts the schedule from now and counts as late.
 *
 * Trace markers: before each event the task writes "isolab-spin event <n>\n" (n from 0) to
 * tracefs' trace_marker, so the event's time is in its CPU's trace ("tracing_mark_write: ..."),
 * which is how the host checks that the tick stopped between events. No tracefs: no markers
 * ("trace_marker": false), the run goes on.
 *
 * Output: one JSON object on stdout,
 *   {"tool":"vmstat-overhead","version":1,"mode":"spin","cpu":5,"pinned":true,
 *    "event":"fault+cputimer","rate_hz":10,"duration_s":20,"counter":"tsc",
 *    "events":200,"late_events":0,"elapsed_ns":20012345678,"touched_pages":200,
 *    "trace_marker":true,"marked_events":200,"cpu_timer_fired":200}
 * cpu_timer_fired counts the timer's signals (0 for the events without the timer).
 *
 * The including file (vmstat-overhead.c) defines, before the #include: ARENA_PAGES, the arena
 * helpers touch_next_page() and last_touched_page(), one_pair() and die_errno().
 */
#ifndef ISOLAB_VMSTAT_SPIN_H
#define ISOLAB_VMSTAT_SPIN_H

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>

#define SPIN_DEFAULT_RATE_HZ 10UL
#define SPIN_MAX_RATE_HZ 100000UL
#define SPIN_CALIBRATE_NS 100000000ULL /* 100 ms */

enum spin_event { SPIN_FAULT, SPIN_FAULT_CPUTIMER, SPIN_CPUTIMER_FAULT, SPIN_FAULT_MLOCK };

static const char* const spin_event_names[] = {"fault", "fault+cputimer", "cputimer+fault",
                                               "fault+mlock"};

/* The --event value as a spin_event; a message and exit status 2 for anything else. */
static enum spin_event parse_spin_event(const char* val) {
  for (int e = 0; e < (int)(sizeof(spin_event_names) / sizeof(*spin_event_names)); e++)
    if (val && !strcmp(val, spin_event_names[e])) return (enum spin_event)e;
  die("--event wants fault, fault+cputimer, cputimer+fault or fault+mlock");
  return SPIN_FAULT; /* not reached */
}

static volatile sig_atomic_t spin_timer_fired;

static void on_cpu_timer(int sig) {
  (void)sig;
  spin_timer_fired++;
}

/* A one-shot timer on this thread's CPU-time clock that raises SIGVTALRM (empty handler). */
static timer_t spin_make_cpu_timer(void) {
  struct sigaction sa;
  struct sigevent sev;
  timer_t t;

  memset(&sa, 0, sizeof(sa));
  sa.sa_handler = on_cpu_timer;
  sa.sa_flags = SA_RESTART;
  if (sigaction(SIGVTALRM, &sa, NULL)) die_errno("sigaction");
  memset(&sev, 0, sizeof(sev));
  sev.sigev_notify = SIGEV_SIGNAL;
  sev.sigev_signo = SIGVTALRM;
  if (timer_create(CLOCK_THREAD_CPUTIME_ID, &sev, &t)) die_errno("timer_create");
  return t;
}

/* The trace_marker file, or -1 without tracefs. */
static int spin_open_marker(void) {
  int fd = open("/sys/kernel/tracing/trace_marker", O_WRONLY | O_CLOEXEC);

  if (fd < 0) fd = open("/sys/kernel/debug/tracing/trace_marker", O_WRONLY | O_CLOEXEC);
  return fd;
}

/* Writes event n's marker; a failing write closes the file (no more markers). */
static int spin_mark(int fd, unsigned long n) {
  char buf[48];
  int len = snprintf(buf, sizeof(buf), "isolab-spin event %lu\n", n);

  if (fd < 0) return fd;
  if (write(fd, buf, (size_t)len) != len) {
    close(fd);
    return -1;
  }
  return fd;
}

/* Counter units per second: 1e9 for CLOCK_MONOTONIC; for the TSC, measured against
 * CLOCK_MONOTONIC over SPIN_CALIBRATE_NS. */
static double spin_counter_hz(void) {
  uint64_t n0, c0, n1, c1;

  if (!use_tsc) return 1e9;
  n0 = monotonic_ns();
  c0 = read_counter();
  do n1 = monotonic_ns();
  while (n1 - n0 < SPIN_CALIBRATE_NS);
  c1 = read_counter();
  return (double)(c1 - c0) * 1e9 / (double)(n1 - n0);
}

static inline void spin_pause(void) {
#if defined(__x86_64__) || defined(__i386__)
  __asm__ __volatile__("pause" ::: "memory");
#else
  __asm__ __volatile__("" ::: "memory");
#endif
}

/* Runs the spin mode and prints its JSON object; cpu < 0: not pinned. */
static void run_spin(long cpu, unsigned long duration_s, unsigned long rate_hz,
                     enum spin_event event, const char* counter) {
  const long ps = sysconf(_SC_PAGESIZE);
  const size_t page_size = ps > 0 ? (size_t)ps : 4096;
  const struct itimerspec one_ns = {{0, 0}, {0, 1}};
  timer_t timer = 0;
  int marker = spin_open_marker();
  const int had_marker = marker >= 0;
  unsigned long events = 0, late = 0, marked = 0;
  uint64_t period, next, begin_ns, deadline_ns, end_ns;

  /* The re-execution without ASLR (vmstat-overhead.c) named the task "exe"; the trace shows
   * the name. */
  prctl(PR_SET_NAME, "vmstat-overhead", 0, 0, 0);
  arena = mmap(NULL, ARENA_PAGES * page_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
               -1, 0);
  if (arena == MAP_FAILED) die_errno("mmap");
  if (event == SPIN_FAULT_CPUTIMER || event == SPIN_CPUTIMER_FAULT) timer = spin_make_cpu_timer();
  period = (uint64_t)(spin_counter_hz() / (double)rate_hz);
  if (period == 0) period = 1;
  begin_ns = monotonic_ns();
  deadline_ns = begin_ns + (uint64_t)duration_s * 1000000000ULL;
  next = read_counter() + period;
  for (;;) {
    while ((int64_t)(read_counter() - next) < 0) spin_pause();
    if (monotonic_ns() >= deadline_ns) break;
    marker = spin_mark(marker, events);
    if (marker >= 0) marked++;
    if (event == SPIN_CPUTIMER_FAULT && timer_settime(timer, 0, &one_ns, NULL))
      die_errno("timer_settime");
    touch_next_page(page_size);
    if (event == SPIN_FAULT_CPUTIMER && timer_settime(timer, 0, &one_ns, NULL))
      die_errno("timer_settime");
    if (event == SPIN_FAULT_MLOCK) one_pair(last_touched_page(page_size), page_size);
    events++;
    next += period;
    if ((int64_t)(read_counter() - next) > (int64_t)period) {
      next = read_counter() + period;
      late++;
    }
  }
  end_ns = monotonic_ns();
  if (marker >= 0) close(marker);
  printf("{\"tool\":\"vmstat-overhead\",\"version\":1,\"mode\":\"spin\",");
  if (cpu >= 0)
    printf("\"cpu\":%ld,\"pinned\":true,", cpu);
  else if (sched_getcpu() >= 0)
    printf("\"cpu\":%d,\"pinned\":false,", sched_getcpu());
  else
    printf("\"cpu\":null,\"pinned\":false,");
  printf("\"event\":\"%s\",\"rate_hz\":%lu,\"duration_s\":%lu,\"counter\":\"%s\",",
         spin_event_names[event], rate_hz, duration_s, counter);
  printf("\"events\":%lu,\"late_events\":%lu,\"elapsed_ns\":%" PRIu64
         ",\"touched_pages\":%lu,\"trace_marker\":%s,\"marked_events\":%lu,"
         "\"cpu_timer_fired\":%ld}\n",
         events, late, end_ns - begin_ns, touched_pages, had_marker ? "true" : "false", marked,
         (long)spin_timer_fired);
}

#endif /* ISOLAB_VMSTAT_SPIN_H */

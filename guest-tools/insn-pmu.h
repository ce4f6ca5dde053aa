/*
 * insn-pmu.h: guest instruction counts from the guest's own performance counters
 * (perf_event_open, PERF_TYPE_HARDWARE / PERF_COUNT_HW_INSTRUCTIONS), the source isolab uses
 * where its TCG plugin cannot count (KVM). Header-only (static inline), glibc and Linux
 * headers only, so each guest tool stays one static binary.
 *
 * Per task (isolab_pmu_open): two counters of the calling task on whatever CPU it runs
 * (pid 0, cpu -1), opened as one group so that one read() returns both at the same instant:
 *   user    instructions retired in user mode   (leader; exclude_kernel=1, exclude_hv=1)
 *   kernel  instructions retired in kernel mode (member; exclude_user=1, exclude_hv=1)
 * They count the task only: another task (a kernel thread, the idle task) that runs on the
 * CPU meanwhile is not counted; an interrupt that arrives while the task runs is.
 *
 * Per CPU (isolab_pmu_open_cpu_kernel): one kernel-mode counter of everything that runs on
 * one CPU (pid -1, cpu N), for the kernel noise of an isolated CPU.
 *
 * Unavailable: every open reports why in the caller's buffer, as
 *   "perf_event_open: <strerror(errno)>"
 * plus " (kernel.perf_event_paranoid=N)" for EACCES/EPERM. A vCPU without a PMU (QEMU TCG,
 * KVM with pmu=off) gives ENOENT (no hardware PMU registered) or EOPNOTSUPP; a kernel built
 * without CONFIG_PERF_EVENTS gives ENOSYS. Counting kernel mode needs perf_event_paranoid <= 1
 * (per task) or <= 0 (per CPU), or CAP_PERFMON/CAP_SYS_ADMIN: isolab's guest tools run as
 * root, where the paranoia does not apply.
 *
 * A count is only meaningful as the difference of two reads. The counter may not have been
 * on the PMU the whole time (multiplexing with other events); the sample carries the times
 * the kernel reports so that the caller can tell (running < enabled).
 */
#ifndef ISOLAB_INSN_PMU_H
#define ISOLAB_INSN_PMU_H

#include <errno.h>
#include <linux/perf_event.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/* The task's two counters; fds -1 while closed. */
struct isolab_pmu {
  int user_fd;   /* group leader */
  int kernel_fd; /* group member */
};

/* One group read: instruction counts since the open and the group's times in ns. */
struct isolab_pmu_sample {
  uint64_t user, kernel;
  uint64_t enabled_ns, running_ns; /* running < enabled: the group was off the PMU a while */
};

static inline void isolab_pmu_reason_(char* reason, size_t len, int e) {
  int paranoid = -99;
  FILE* f;

  if (e == EACCES || e == EPERM) {
    f = fopen("/proc/sys/kernel/perf_event_paranoid", "r");
    if (f) {
      if (fscanf(f, "%d", &paranoid) != 1) paranoid = -99;
      fclose(f);
    }
  }
  if (paranoid != -99)
    snprintf(reason, len, "perf_event_open: %s (kernel.perf_event_paranoid=%d)", strerror(e),
             paranoid);
  else
    snprintf(reason, len, "perf_event_open: %s", strerror(e));
}

/* perf_event_open() of instructions retired; user=1 counts user mode only, user=0 kernel mode
 * only. Returns the fd, or -1 with errno set. */
static inline int isolab_pmu_open_one_(int user, pid_t pid, int cpu, int group_fd,
                                       uint64_t read_format) {
  struct perf_event_attr a;

  memset(&a, 0, sizeof(a));
  a.size = sizeof(a);
  a.type = PERF_TYPE_HARDWARE;
  a.config = PERF_COUNT_HW_INSTRUCTIONS;
  a.exclude_kernel = user ? 1 : 0;
  a.exclude_user = user ? 0 : 1;
  a.exclude_hv = 1;
  a.read_format = read_format;
  return (int)syscall(SYS_perf_event_open, &a, pid, cpu, group_fd, 0UL);
}

/* Opens the calling task's user and kernel instruction counters (counting from now on).
 * Returns 0, or -1 with p's fds -1 and the reason in reason[len] (see the top of this file). */
static inline int isolab_pmu_open(struct isolab_pmu* p, char* reason, size_t len) {
  const uint64_t fmt =
      PERF_FORMAT_GROUP | PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;

  p->kernel_fd = -1;
  p->user_fd = isolab_pmu_open_one_(1, 0, -1, -1, fmt);
  if (p->user_fd >= 0) p->kernel_fd = isolab_pmu_open_one_(0, 0, -1, p->user_fd, fmt);
  if (p->user_fd >= 0 && p->kernel_fd >= 0) return 0;
  isolab_pmu_reason_(reason, len, errno);
  if (p->user_fd >= 0) close(p->user_fd);
  p->user_fd = -1;
  return -1;
}

/* Reads both counters at once (one read() of the group). Returns 0, or -1 with the reason
 * ("read: <strerror>" or "read: short group") in reason[len]. */
static inline int isolab_pmu_read(const struct isolab_pmu* p, struct isolab_pmu_sample* s,
                                  char* reason, size_t len) {
  /* PERF_FORMAT_GROUP with both times: nr, time_enabled, time_running, value[nr]. */
  uint64_t buf[5];
  ssize_t n = read(p->user_fd, buf, sizeof(buf));

  if (n < 0) {
    snprintf(reason, len, "read: %s", strerror(errno));
    return -1;
  }
  if (n != (ssize_t)sizeof(buf) || buf[0] != 2) {
    snprintf(reason, len, "read: short group");
    return -1;
  }
  s->enabled_ns = buf[1];
  s->running_ns = buf[2];
  s->user = buf[3];
  s->kernel = buf[4];
  return 0;
}

/* Closes what isolab_pmu_open() opened (idempotent). */
static inline void isolab_pmu_close(struct isolab_pmu* p) {
  if (p->kernel_fd >= 0) close(p->kernel_fd);
  if (p->user_fd >= 0) close(p->user_fd);
  p->kernel_fd = p->user_fd = -1;
}

/* Opens a kernel-mode instruction counter of everything that runs on CPU cpu (pid -1).
 * Returns the fd (read it with isolab_pmu_read_cpu), or -1 with the reason in reason[len]. */
static inline int isolab_pmu_open_cpu_kernel(int cpu, char* reason, size_t len) {
  int fd = isolab_pmu_open_one_(0, -1, cpu, -1,
                                PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING);

  if (fd < 0) isolab_pmu_reason_(reason, len, errno);
  return fd;
}

/* Reads a counter of isolab_pmu_open_cpu_kernel: the count in *count, the times in the
 * pointed-to values. Returns 0, or -1 with the reason in reason[len]. */
static inline int isolab_pmu_read_cpu(int fd, uint64_t* count, uint64_t* enabled_ns,
                                      uint64_t* running_ns, char* reason, size_t len) {
  uint64_t buf[3]; /* value, time_enabled, time_running */
  ssize_t n = read(fd, buf, sizeof(buf));

  if (n != (ssize_t)sizeof(buf)) {
    snprintf(reason, len, "read: %s", n < 0 ? strerror(errno) : "short read");
    return -1;
  }
  *count = buf[0];
  *enabled_ns = buf[1];
  *running_ns = buf[2];
  return 0;
}

#endif /* ISOLAB_INSN_PMU_H */

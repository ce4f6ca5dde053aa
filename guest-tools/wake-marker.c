/*
 * wake-marker.c: an LD_PRELOAD library that marks, for the instruction-counting TCG plugin
 * (tcg-plugin/wakeup.c), each timed sleep of an unmodified program such as cyclictest: its
 * clock_nanosleep() executes ISOLAB_MARK_WAKE_ARM (insn-marker.h) before the system call and
 * ISOLAB_MARK_WAKE as the first user instruction after it returns, so that the plugin counts the
 * wakeup's path, from the entry of the interrupt that woke the task to that instruction.
 * The guest's /init runs cyclictest with LD_PRELOAD=/usr/bin/libisolab-wake-marker.so.
 *
 * clock_nanosleep() itself is the system call (x86-64: the syscall instruction directly, the
 * WAKE marker right after it), with the libc semantics: 0, or the error number (not -1 and
 * errno). Unlike glibc's it is not a thread cancellation point; cyclictest does not cancel its
 * threads. Without the plugin (KVM, hardware) the markers are NOPs.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "insn-marker.h"

__attribute__((visibility("default"))) int clock_nanosleep(clockid_t clock, int flags,
                                                           const struct timespec* request,
                                                           struct timespec* remain) {
#if defined(__x86_64__)
  long ret;
  register long r10 __asm__("r10") = (long)remain;
  ISOLAB_MARK_WAKE_ARM();
  __asm__ __volatile__(
      "syscall\n\t"
      "nopl 0x15A1B00C(%%rax)" /* ISOLAB_MARK_WAKE */
      : "=a"(ret)
      : "0"((long)SYS_clock_nanosleep), "D"((long)clock), "S"((long)flags), "d"(request), "r"(r10)
      : "rcx", "r11", "memory");
  return ret < 0 ? (int)-ret : 0;
#else
  const long ret = syscall(SYS_clock_nanosleep, clock, flags, request, remain);
  return ret < 0 ? errno : 0;
#endif
}

/*
 * wakeup.c: wakeup path lengths for isolab's insn-count plugin. A task marks, on its vCPU,
 * WAKE_ARM before it goes to sleep and WAKE as its first user instruction after the sleep
 * returns (guest-tools/wake-marker.c puts both around clock_nanosleep()). The path of one
 * wakeup is what that vCPU executed from the entry of the interrupt that woke the task to the
 * WAKE marker (excluded): the entry, the timer's handler, the rest of whatever was running
 * (a non-preemptible section delays the switch), the scheduler, the return to user space.
 *
 * Which interrupt woke the task: while armed and not yet woken, every interrupt entry on the
 * vCPU (TB_TIMER_ENTRY, TB_IRQ_ENTRY, TB_RESCHED_ENTRY) restarts the candidate path; the first
 * wake function the vCPU then runs (TB_WAKE: hrtimer_wakeup for an expired sleeper,
 * sched_ttwu_pending for a wakeup another CPU queued here; a reschedule IPI's entry counts as
 * both) fixes the path's start at that entry. A wake function that runs with no entry since
 * the arm starts the path at itself ("noentry"). A WAKE with no wake function since the arm
 * (the sleep returned at once, or the wakeup came from another CPU by a plain reschedule)
 * gives no path ("nowake"). One armed task per vCPU: a second WAKE_ARM restarts the state.
 * Another task woken by the same functions in that window (not the marked one) would start
 * the path early; the marked tools run alone at a real-time priority on their CPUs.
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "insn-count.h"

#define MAX_KEPT_PATHS ((size_t)1 << 22)

/* Path slots: functions 0..sym.n-1, sym.n outside every function, sym.n + 1 user code. */
static size_t slots(void) { return g.sym.n + 2; }

static int ensure_arrays(struct wake_state* w) {
  if (w->cnt) return 0;
  w->cnt = calloc(slots(), sizeof *w->cnt);
  w->epoch = calloc(slots(), sizeof *w->epoch);
  w->touched = calloc(slots(), sizeof *w->touched);
  w->longest_cnt = calloc(slots(), sizeof *w->longest_cnt);
  w->longest_slot = calloc(slots(), sizeof *w->longest_slot);
  if (w->cnt && w->epoch && w->touched && w->longest_cnt && w->longest_slot) return 0;
  free(w->cnt);
  free(w->epoch);
  free(w->touched);
  free(w->longest_cnt);
  free(w->longest_slot);
  w->cnt = NULL;
  return -1;
}

static void new_path(struct wake_state* w) {
  w->cur++;
  w->ntouched = 0;
}

void wake_arm(struct vcpu* v) {
  struct wake_state* w = &v->wake;
  w->armed = ensure_arrays(w) == 0; /* out of memory: no paths on this vCPU */
  w->woken = w->entry_seen = 0;
  v->path_on = 0;
}

void wake_entry(struct vcpu* v, const struct tb_info* t) {
  struct wake_state* w = &v->wake;
  if (!w->armed || w->woken) return;
  w->entry_seen = 1;
  w->entry_total = v->user + v->kernel;
  w->entry_kind = t->kind;
  new_path(w);
  v->path_on = 1;
}

void wake_event(struct vcpu* v, const struct tb_info* t) {
  (void)t;
  struct wake_state* w = &v->wake;
  if (!w->armed || w->woken) return;
  w->woken = 1;
  if (w->entry_seen) {
    w->start = w->entry_total;
    w->start_kind = w->entry_kind;
  } else {
    w->start = v->user + v->kernel;
    w->start_kind = TB_PLAIN;
    new_path(w);
  }
  v->path_on = 1;
}

void wake_path_add(struct vcpu* v, uint32_t slot, uint64_t n) {
  struct wake_state* w = &v->wake;
  if (w->epoch[slot] != w->cur) {
    w->epoch[slot] = w->cur;
    w->cnt[slot] = 0;
    w->touched[w->ntouched++] = slot;
  }
  w->cnt[slot] += n;
}

void wake_path_take_back(struct vcpu* v, uint64_t user_insns) {
  struct wake_state* w = &v->wake;
  const uint32_t user = (uint32_t)(slots() - 1);
  if (w->epoch[user] == w->cur) w->cnt[user] -= user_insns;
}

/* Keeps a path (caller holds the vCPU's lock). */
static void keep_path(struct wake_state* w, uint64_t len) {
  if (w->npaths < MAX_KEPT_PATHS) {
    if (w->npaths == w->cap) {
      const size_t cap = w->cap ? w->cap * 2 : 4096;
      uint64_t* p = realloc(w->paths, cap * sizeof *p);
      if (p) {
        w->paths = p;
        w->cap = cap;
      }
    }
    if (w->npaths < w->cap) w->paths[w->npaths++] = len;
  }
  if (w->start_kind == TB_TIMER_ENTRY)
    w->timer++;
  else if (w->start_kind == TB_PLAIN)
    w->noentry++;
  else
    w->irq++;
  if (len <= w->longest && w->nlongest) return;
  w->longest = len;
  w->nlongest = 0;
  for (size_t i = 0; i < w->ntouched; ++i) {
    const uint32_t s = w->touched[i];
    if (!w->cnt[s]) continue;
    w->longest_slot[w->nlongest] = s;
    w->longest_cnt[w->nlongest++] = w->cnt[s];
  }
}

void wake_marker(struct vcpu* v, uint64_t total, uint64_t after) {
  struct wake_state* w = &v->wake;
  if (!w->armed) return;
  pthread_mutex_lock(&v->lock);
  if (!w->woken) {
    w->nowake++;
  } else {
    /* The marker's block went to the user slot at its entry; leave out what lies at and
     * after the marker, as the snapshot does. */
    wake_path_take_back(v, after);
    keep_path(w, total - after - w->start);
  }
  pthread_mutex_unlock(&v->lock);
  w->armed = w->woken = w->entry_seen = 0;
  v->path_on = 0;
}

void wake_clear(struct vcpu* v) {
  struct wake_state* w = &v->wake;
  w->npaths = 0;
  w->nowake = w->timer = w->irq = w->noentry = 0;
  w->longest = 0;
  w->nlongest = 0;
}

struct slot_count {
  uint32_t slot;
  uint64_t n;
};

static int by_count_desc(const void* a, const void* b) {
  const struct slot_count *x = a, *y = b;
  if (x->n != y->n) return x->n > y->n ? -1 : 1;
  return x->slot < y->slot ? -1 : x->slot > y->slot;
}

static void write_slot(FILE* out, uint32_t slot) {
  if (slot < g.sym.n)
    fprintf(out, "0x%" PRIx64, g.sym.start[slot]);
  else
    fputs(slot == g.sym.n ? "none" : "user", out);
}

void wake_write(FILE* out, uint64_t seq, unsigned cpu, struct vcpu* v) {
  struct wake_state* w = &v->wake;
  if (!w->npaths && !w->nowake) return;
  fprintf(out,
          "wake %" PRIu64 " vcpu=%u n=%zu nowake=%" PRIu64 " timer=%" PRIu64 " irq=%" PRIu64
          " noentry=%" PRIu64,
          seq, cpu, w->npaths, w->nowake, w->timer, w->irq, w->noentry);
  for (size_t i = 0; i < w->npaths; ++i)
    fprintf(out, "%s%" PRIu64, i ? "," : " insns=", w->paths[i]);
  fputc('\n', out);
  struct slot_count* s = malloc((w->nlongest + 1) * sizeof *s);
  if (!s) return;
  for (size_t i = 0; i < w->nlongest; ++i)
    s[i] = (struct slot_count){w->longest_slot[i], w->longest_cnt[i]};
  qsort(s, w->nlongest, sizeof *s, by_count_desc);
  for (size_t i = 0; i < w->nlongest; ++i) {
    fprintf(out, "wakefn %" PRIu64 " vcpu=%u fn=", seq, cpu);
    write_slot(out, s[i].slot);
    fprintf(out, " insns=%" PRIu64 "\n", s[i].n);
  }
  free(s);
}

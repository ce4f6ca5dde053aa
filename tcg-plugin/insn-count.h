/*
 * insn-count.h: the state the parts of isolab's insn-count plugin share (install.c: QEMU's entry
 * points and the arguments; insn-count.c: translation, counting, markers and output; symbols.c: the
 * kernel's System.map; wakeup.c: the wakeup path lengths). Internal to the plugin: the output
 * format and the arguments are documented at the top of insn-count.c.
 */
#ifndef ISOLAB_INSN_COUNT_H
#define ISOLAB_INSN_COUNT_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "qemu-plugin-api.h"

#define NCLASSES 4

/* What a translation block's first instruction is, from the symbols (0: nothing special). */
enum tb_kind {
  TB_PLAIN = 0,
  TB_FAULT_ENTRY = 1,  /* a fault's IDT entry (asm_exc_page_fault, ...): restarts the insn */
  TB_TIMER_ENTRY = 2,  /* asm_sysvec_apic_timer_interrupt */
  TB_IRQ_ENTRY = 3,    /* another interrupt's entry (asm_sysvec_*, asm_common_interrupt) */
  TB_WAKE = 4,         /* a function that wakes a sleeping task here (hrtimer_wakeup, ...) */
  TB_RESCHED_ENTRY = 5 /* asm_sysvec_reschedule_ipi: an interrupt entry and a wake at once */
};

/* One translated block, allocated at translation and passed to its exec callback. Never
 * freed: QEMU may still run a block after a later translation of the same address. */
struct tb_info {
  uint64_t vaddr;    /* the first instruction's guest virtual address */
  uint32_t n;        /* instructions */
  uint32_t rep;      /* rep-prefixed string instructions among them (QEMU ends the block
                        after one, so 0 or 1) */
  uint32_t fn;       /* function index (symbols.c), or sym.n when outside every function */
  uint8_t kernel;    /* bit 63 of vaddr */
  uint8_t kind;      /* enum tb_kind */
  uint16_t* offsets; /* user blocks with the fault correction on: each instruction's
                        offset from vaddr (NULL otherwise) */
};

/* The kernel's functions (text symbols of System.map), deduplicated by address. */
struct symbols {
  uint64_t* start; /* ascending; function i spans [start[i], start[i+1]) (the last up to end) */
  uint8_t* kind;   /* enum tb_kind of a block starting exactly at start[i] */
  size_t n;        /* 0 = no symbols (every kernel block is outside every function) */
  uint64_t end;    /* _etext, or the last symbol's address */
};

/* Wakeup path lengths of one vCPU (wakeup.c). Fields marked "owner" are touched only by the
 * vCPU's own thread; the step results are under the vCPU's lock. */
struct wake_state {
  int armed, woken, entry_seen;         /* owner */
  uint64_t entry_total;                 /* owner: user + kernel at the last entry */
  uint8_t entry_kind;                   /* owner: enum tb_kind of that entry */
  uint64_t start;                       /* owner: the path's start (entry_total when woken) */
  uint8_t start_kind;                   /* owner: the entry that started it */
  uint64_t* cnt;                        /* owner: per function (sym.n + 2 slots) this path */
  uint32_t* epoch;                      /* owner: the path that last wrote cnt[f] */
  uint32_t* touched;                    /* owner: the slots this path wrote */
  size_t ntouched;                      /* owner */
  uint32_t cur;                         /* owner: this path's epoch */
  uint64_t* paths;                      /* step: the path lengths, in order */
  size_t npaths, cap;                   /* step */
  uint64_t nowake, timer, irq, noentry; /* step: see the "wake" record */
  uint64_t longest;                     /* step: the longest path so far */
  uint64_t* longest_cnt;                /* step: its instructions per slot in longest_slot */
  uint32_t* longest_slot;               /* step */
  size_t nlongest;                      /* step */
};

/* One region class of one vCPU. */
struct regions {
  int open; /* owner only, like open_user, open_kernel and open_rep */
  uint64_t open_user, open_kernel, open_rep;
  uint64_t n, user, kernel, rep, unbalanced; /* step state, under the vCPU's lock */
  uint64_t *all, *ker, *norep;               /* each closed region's counts (medians) */
  size_t cap;
};

struct vcpu {
  /* Counters: the owner writes (relaxed atomic), anyone reads (relaxed atomic). */
  uint64_t user, kernel, boot, user_rep, kernel_rep;
  uint64_t faults_fixed, faults_unmatched, faults_kernel;
  uint64_t* fn_insns; /* profiled vCPUs: kernel instructions per function (sym.n + 1) */
  uint64_t* fn_rep;   /* likewise, rep-string executions */
  /* Owner only. */
  int booted;                  /* has executed kernel code (before: firmware, boot code) */
  const struct tb_info* last;  /* the block executed before this one */
  const struct tb_info* fault; /* a user block a fault left, until the next user block */
  int path_on;                 /* a wakeup path is being counted (wakeup.c) */
  /* Under the lock: step state. */
  pthread_mutex_t lock;
  struct regions reg[NCLASSES];
  uint64_t *begin_insns, *begin_rep; /* profiled: fn_insns/fn_rep at the step's begin */
  struct wake_state wake;
} __attribute__((aligned(64)));

struct plugin {
  pthread_mutex_t out_lock; /* guards out, seq, stray_step_ends and step_open changes */
  FILE* out;
  char* out_path;
  struct vcpu* v;
  unsigned n;
  unsigned char* profiled; /* per vCPU */
  struct symbols sym;
  uint64_t seq, stray_step_ends, early_markers;
  int step_open;
  /* count=steps (insn-count.c, "Counting window"): id for qemu_plugin_reset; gate_open is
   * written only while every vCPU is stopped (the reset's callback), read at translation and in
   * marker callbacks; reset_pending guards against a second request (QEMU drops it). */
  uint64_t id;               /* the qemu_plugin_id_t of the install */
  pthread_mutex_t gate_lock; /* guards the requests: reset_pending, reset_vcpu, refused_resets */
  /* reset_pending: -1 none, else the gate it will set; reset_vcpu: -1 before the first */
  int steps_only, gate_open, reset_pending, reset_vcpu;
  uint64_t late_steps, refused_resets;
};

extern struct plugin g;

static inline uint64_t load64(const uint64_t* p) { return __atomic_load_n(p, __ATOMIC_RELAXED); }
/* Single writer: a relaxed load-add-store, so that readers on other threads see whole values. */
static inline void add64(uint64_t* p, uint64_t n) { __atomic_store_n(p, *p + n, __ATOMIC_RELAXED); }

/* insn-count.c: the translation and exit callbacks, registered by install.c (and again by the
 * counting window's reset) */
void register_callbacks(qemu_plugin_id_t id);

/* profile.c: the step's profile of a profiled vCPU, end - begin of its arrays (end:
 * `end_insns`, the arrays as summed into the step end's snapshot), most instructions first.
 * Caller holds the vCPU's lock. */
void write_profile(unsigned cpu, const uint64_t* end_insns, const uint64_t* end_rep);

/* symbols.c */
int symbols_load(const char* path, struct symbols* s, char* err, size_t errlen);
uint32_t symbols_function(const struct symbols* s, uint64_t pc);
uint8_t symbols_kind(const struct symbols* s, uint64_t pc);

/* wakeup.c (all but the writer on the vCPU's own thread) */
void wake_arm(struct vcpu* v);
void wake_entry(struct vcpu* v, const struct tb_info* t);
void wake_event(struct vcpu* v, const struct tb_info* t);
void wake_path_add(struct vcpu* v, uint32_t slot, uint64_t n);
void wake_path_take_back(struct vcpu* v, uint64_t user_insns); /* the fault correction's */
void wake_marker(struct vcpu* v, uint64_t total, uint64_t after);
void wake_clear(struct vcpu* v); /* caller holds the vCPU's lock */
void wake_write(FILE* out, uint64_t seq, unsigned cpu, struct vcpu* v); /* likewise */

#endif /* ISOLAB_INSN_COUNT_H */

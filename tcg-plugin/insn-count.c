/*
 * insn-count.c: isolab's QEMU TCG plugin. Counts the guest instructions each vCPU executes,
 * split user/kernel with rep-string executions apart, and the instructions of marker-delimited
 * regions, workload steps and wakeups (the markers of guest-tools/insn-marker.h), with a
 * per-function kernel profile. System emulation, x86-64 guests, plugin API 1.
 *
 * Load: qemu-system-x86_64 -accel tcg[,thread=multi] ... \
 *         -plugin file=DIR/libisolab-insn-count.so,out=PATH[,profile_cpus=LIST][,symbols=MAP]
 *   (file= with a path that has a slash: QEMU dlopen()s it; commas in values are doubled.)
 *   out=PATH         required; created or truncated at install. If it cannot be opened the
 *                    install fails (QEMU prints our message and refuses to start).
 *   profile_cpus=L   optional cpulist ("5-7", "1,3-4"): per-function kernel profile on those.
 *   symbols=MAP      optional: the guest kernel's System.map (symbols.c). Without it every
 *                    kernel instruction is "outside every function", and the fault correction
 *                    and the wakeup paths are off (they find the kernel's entries by name).
 *   count=all|steps  optional, default all: count everything, or only inside workload steps
 *                    (below, "Counting window").
 * An unknown argument, a malformed value, a vCPU outside the machine or an unreadable MAP
 * fails the install.
 *
 * Counting. Every translation block (TB) gets an exec callback whose user data is a struct
 * tb_info made at translation: its instruction count, its rep-string instructions, whether it
 * is kernel code (bit 63 of its address: the upper half of 4- and 5-level paging alike), its
 * function and its kind. The callback adds the whole TB at its entry to counters of the
 * executing vCPU; only the vCPU's own thread writes them (relaxed atomic stores), so
 * multi-threaded TCG needs no lock, and other threads read them with relaxed atomic loads.
 *   boot     a vCPU's instructions before it first executes kernel code: firmware, the
 *            kernel's setup and decompressor code, an AP's trampoline. In neither user nor kernel.
 *   user     afterwards, instructions of TBs below the upper half.
 *   kernel   instructions of TBs in the upper half.
 *   rep      per mode, executions of rep-prefixed string instructions (movs, stos, lods, cmps,
 *            scas, ins, outs with an F2/F3 prefix). QEMU executes such an instruction once per
 *            iteration plus once for the final check (measured: "rep stosb" with ecx = 1000
 *            counts 1001), each execution counted as one instruction; user and kernel include
 *            them, and user - rep, kernel - rep are the counts with every rep-string instruction
 *            left out (clear_page_erms then counts 3 per page instead of 4100).
 * A fault (with symbols: a TB starting at a fault's entry, e.g. asm_exc_page_fault) leaves the
 * TB that faulted at the faulting instruction, which runs again after the handler. When that TB
 * was a user TB, its instructions from the faulting one on were counted but not executed: the
 * next user TB, when it starts at an instruction of the faulted TB (index i), takes back
 * n - i instructions (and its rep execution) from the user counters ("fixed"); a next user TB
 * elsewhere (a signal, another task) takes back nothing ("unmatched"). A kernel TB left by a
 * fault (an exception-table fixup in copy_from_user, say) still counts whole ("kernel").
 *
 * Counting window (count=steps). Outside steps (boot, setup, collection) the blocks are
 * translated with no callback at all, only the step markers with one, so the guest runs at
 * QEMU's uninstrumented speed. STEP_ARM asks QEMU to
 * reset the plugin (qemu_plugin_reset: the translation cache is flushed with every vCPU
 * stopped, before the arming vCPU runs its next block) and the reset's callback opens the gate:
 * from then on every block is counted as above, so the STEP_BEGIN that follows is exact.
 * STEP_END, after its lines, closes the gate the same way. Counts are then cumulative over the
 * open windows only, and boot code is not counted (every vCPU counts as booted). A STEP_BEGIN
 * with the gate closed or closing (no STEP_ARM before it, its request refused, or in the block
 * of the previous STEP_END) asks to open it and is written with late=1: that step's counts miss
 * what ran while the gate was closed and must not be used.
 * Requests are refused while one is pending and from any vCPU but the first requester's (see
 * request_gate: QEMU 7.2 keeps its plugin lock on the thread that ran a reset).
 *
 * Markers. The thirteen 7-byte NOPs "nopl DISP(%rax)" (0F 1F 80 disp32; the same bytes are
 * "nopl DISP(%eax)" in 32-bit code) are recognised by their bytes at translation and get an
 * instruction exec callback. Its user data holds how many instructions of the TB lie after
 * the snapshot point, which is subtracted from the counter that the TB callback already
 * advanced, so snapshots are exact for the executing vCPU. A begin marker's snapshot is
 * taken before it, an end marker's after it: regions and steps include both markers. A marker
 * on a vCPU still in its boot code is ignored (counted as early_markers).
 * Regions come in four classes (REGION_BEGIN/END are class 0, REGION<c>_BEGIN/END class c),
 * each with its own state per vCPU; what follows holds for each class on its own.
 *   REGION_BEGIN  opens a region of its class on the executing vCPU (one of that class
 *                 already open: unbalanced += 1, and the region restarts here).
 *   REGION_END    adds (end - begin) user, kernel and rep to the vCPU's totals of its class,
 *                 n += 1 (no region of the class open: unbalanced += 1).
 *   STEP_BEGIN    seq += 1; writes a "step begin" snapshot of every vCPU; clears every vCPU's
 *                 region totals, n and unbalanced of every class, its wakeup paths, and
 *                 snapshots the profiles. A step already open gets no end.
 *   STEP_END      writes a "step end" snapshot, the region, profile and wakeup lines of the
 *                 step, and flushes. With no step open it is only counted (stray_step_ends).
 *   WAKE_ARM, WAKE  the wakeup paths of wakeup.c (WAKE's snapshot is taken before it).
 *   STEP_ARM      with count=steps, opens the counting window (above); otherwise nothing.
 * Snapshots read the other vCPUs' counters at that instant (exact only for the executing one).
 *
 * Profile. On a profiled vCPU each kernel TB also adds its instructions and rep executions to
 * its function's counters (an array indexed by function, plus one slot for kernel code outside
 * every function: modules, trampolines, or no symbols). A step's profile is the difference of
 * the arrays between its snapshots, and on a profiled vCPU the kernel count of a snapshot is
 * the sum of the array as read, so the profile of a step sums to exactly its kernel count.
 * A TB is attributed to the function its first instruction lies in.
 *
 * Locking: each vCPU has a mutex over its step state (region totals, n, unbalanced, the
 * profile's begin snapshot, the wakeup results). Its own thread takes it only at markers;
 * STEP_BEGIN and STEP_END, on whichever vCPU executes them, take each vCPU's mutex in turn
 * (always after the output mutex, never the other way round). The TB callback takes no lock.
 *
 * Output (text, one record per line, fields separated by single spaces; after a record's
 * kind and positional fields every field is key=value; readers ignore keys they do not know):
 *   isolab-insn-count 3 plugin_api=1 qemu_api=<min>-<cur> vcpus=<n> profile_cpus=<list>
 *       symbols=<functions> mode=<exact|inline> count=<all|steps>
 *       (one line; profile_cpus= empty when none)
 *   step <seq> begin vcpu=<v> counts=<u0>:<k0>,... rep=<ur0>:<kr0>,...
 *       faults=<fixed0>:<unmatched0>:<kernel0>,... [late=1]
 *       (entry i = vCPU i, n entries each; late=1: the counting window opened at this marker)
 *   region <seq> vcpu=<c> [class=<k>] n=<regions> user=<sum> kernel=<sum> rep=<sum>
 *       unbalanced=<m> [median=<insns> kernel_median=<insns> norep_median=<insns>]
 *       (after a step end, one per vCPU and region class with n > 0 or m > 0, ascending vCPU,
 *       then ascending class; class= is written for classes 1-3 only; median is the lower
 *       median over the step's regions of the class of one region's instructions (user +
 *       kernel), kernel_median that of its kernel instructions, norep_median that of its
 *       instructions less its rep executions, each over the first 4194304 regions; absent when
 *       n = 0. A region that an interrupt, a softirq or a kernel thread entered costs more, and
 *       how many do depends on how fast the host emulates the guest, since ticks and timers
 *       follow guest time; the median is the operation's own path length.)
 *   prof <seq> vcpu=<c> fn=<0x<hex>|none> insns=<n> rep=<n>   (after the region lines; per
 *       profiled vCPU, every function with instructions in the step, fn = its address in the
 *       map, none = outside every function; largest insns first, ties by ascending fn, none
 *       last among equals. Their insns sum to the vCPU's kernel delta of the step.)
 *   wake <seq> vcpu=<c> n=<paths> nowake=<k> timer=<k> irq=<k> noentry=<k> [insns=<l1>,...]
 *   wakefn <seq> vcpu=<c> fn=<0x<hex>|none|user> insns=<n>   (wakeup.c: per vCPU with a
 *       WAKE in the step: the path lengths in order (the first 4194304), and the longest
 *       path's instructions by function, user code as "user", largest first; they sum to it)
 *   step <seq> end vcpu=<v> counts=... rep=... faults=...   (before the region lines)
 *   exit stray_step_ends=<k> early_markers=<k> [late_steps=<k> refused_resets=<k>] counts=...
 *       rep=... faults=... boot=<b0>,...   (late_steps=, refused_resets= with count=steps)
 *   end
 * seq counts STEP_BEGINs from 1; counts are cumulative since the vCPU started (count=steps:
 * over the open windows); all numbers are unsigned decimal except fn. The file is flushed after the
 * header, at every step end and at exit, so a guest or QEMU that dies leaves whole steps behind
 * (and perhaps a cut last line). Format versions: 1 had region class 0 only; 2 added classes 1-3; 3
 * splits boot code off, adds rep counts, the fault correction, wakeup paths and the per-function
 * profile (whose lines had pc= of a TB before, cut at profile_top). Reader:
 * orchestrator/parse/insn_count.h.
 *
 * Inline mode (built with -DISOLAB_INSN_INLINE, libisolab-insn-count-inline.so): the floor of
 * what counting costs. Each TB adds its count with a TCG inline add to one counter per mode
 * shared by every vCPU (racy under multi-threaded TCG); markers read those shared counters
 * and attribute them to the executing vCPU. No profile, no fault correction, no wakeup
 * paths, no boot split. Exact only while a single vCPU runs (the preflight's test guest).
 */
#define _GNU_SOURCE
#include "insn-count.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "insn-marker.h"
#include "qemu-plugin-api.h"

#define MAX_TB_INSNS 0xffffu
#define MAX_KEPT_REGIONS ((size_t)1 << 22)

#ifdef ISOLAB_INSN_INLINE
static uint64_t inline_count[2], inline_rep[2]; /* [kernel] */
#endif

_Static_assert(sizeof(void*) == 8, "user data encodings need 64-bit pointers");

struct plugin g = {.out_lock = PTHREAD_MUTEX_INITIALIZER,
                   .gate_lock = PTHREAD_MUTEX_INITIALIZER,
                   .reset_pending = -1,
                   .reset_vcpu = -1};

/* ---- translation-time allocations (never freed; any translating thread) ---- */

static pthread_mutex_t alloc_lock = PTHREAD_MUTEX_INITIALIZER;
static char *arena, *arena_end;

static __attribute__((unused)) void* arena_alloc(size_t size) {
  size = (size + 15) & ~(size_t)15;
  pthread_mutex_lock(&alloc_lock);
  if ((size_t)(arena_end - arena) < size) {
    const size_t chunk = size > (1u << 20) ? size : (1u << 20);
    arena = malloc(chunk);
    arena_end = arena ? arena + chunk : NULL;
  }
  void* p = NULL;
  if (arena) {
    p = arena;
    arena += size;
  }
  pthread_mutex_unlock(&alloc_lock);
  return p;
}

/* ---- the TB callback ---- */

static inline uint64_t owner_total(const struct vcpu* v) { return v->user + v->kernel; }

/* A user TB after a fault left a user TB: take back what the faulted TB did not execute. */
static void fix_fault(struct vcpu* v, const struct tb_info* t) {
  const struct tb_info* f = v->fault;
  v->fault = NULL;
  if (f->offsets && t->vaddr >= f->vaddr && t->vaddr - f->vaddr <= 0xffff) {
    const uint16_t off = (uint16_t)(t->vaddr - f->vaddr);
    for (uint32_t i = 0; i < f->n; ++i)
      if (f->offsets[i] == off) {
        const uint64_t over = f->n - i;
        add64(&v->user, -over);
        add64(&v->user_rep, -(uint64_t)f->rep);
        if (v->path_on) wake_path_take_back(v, over);
        add64(&v->faults_fixed, 1);
        return;
      }
  }
  add64(&v->faults_unmatched, 1);
}

/* What a TB of a kind other than TB_PLAIN means here (before its instructions are counted). */
static void special(struct vcpu* v, const struct tb_info* t) {
  switch ((enum tb_kind)t->kind) {
    case TB_FAULT_ENTRY:
      if (v->last && !v->last->kernel && v->booted)
        v->fault = v->last;
      else if (v->last && v->last->kernel)
        add64(&v->faults_kernel, 1);
      break;
    case TB_TIMER_ENTRY:
    case TB_IRQ_ENTRY:
      wake_entry(v, t);
      break;
    case TB_RESCHED_ENTRY:
      wake_entry(v, t);
      wake_event(v, t);
      break;
    case TB_WAKE:
      wake_event(v, t);
      break;
    case TB_PLAIN:
      break;
  }
}

static __attribute__((unused)) void on_tb_exec(unsigned int cpu, void* udata) {
  if (cpu >= g.n) return;
  const struct tb_info* t = udata;
  struct vcpu* v = &g.v[cpu];
  if (t->kernel) {
    v->booted = 1;
    if (t->kind) special(v, t);
    add64(&v->kernel, t->n);
    if (t->rep) add64(&v->kernel_rep, t->rep);
    if (v->fn_insns) {
      add64(&v->fn_insns[t->fn], t->n);
      if (t->rep) add64(&v->fn_rep[t->fn], t->rep);
    }
    if (v->path_on) wake_path_add(v, t->fn, t->n);
  } else if (v->booted) {
    if (v->fault) fix_fault(v, t);
    add64(&v->user, t->n);
    if (t->rep) add64(&v->user_rep, t->rep);
    if (v->path_on) wake_path_add(v, (uint32_t)g.sym.n + 1, t->n);
  } else {
    add64(&v->boot, t->n);
  }
  v->last = t;
}

/* ---- snapshots ---- */

struct snap {
  uint64_t user, kernel, user_rep, kernel_rep;
};

enum marker { REGION_BEGIN, REGION_END, STEP_BEGIN, STEP_END, WAKE_ARM, WAKE, STEP_ARM };

/* Marker user data: bits 0-2 the marker, bits 3-4 the region class, bit 5 kernel TB, bit 6
 * rep-string instruction after the snapshot point, bits 7-63 instructions after it. */
static void* marker_udata(enum marker m, unsigned cls, int kernel, int rep_after, uint64_t after) {
  return (void*)(uintptr_t)((uint64_t)m | ((uint64_t)cls << 3) | ((uint64_t)kernel << 5) |
                            ((uint64_t)rep_after << 6) | (after << 7));
}

/* The executing vCPU's exact counts at the marker's snapshot point. */
static struct snap marker_snapshot(const struct vcpu* v, uint64_t d) {
  const uint64_t after = d >> 7, rep_after = (d >> 6) & 1;
  struct snap s = {v->user, v->kernel, v->user_rep, v->kernel_rep};
#ifdef ISOLAB_INSN_INLINE
  s = (struct snap){load64(&inline_count[0]), load64(&inline_count[1]), load64(&inline_rep[0]),
                    load64(&inline_rep[1])};
#endif
  if (d & 32) {
    s.kernel -= after;
    s.kernel_rep -= rep_after;
  } else {
    s.user -= after;
    s.user_rep -= rep_after;
  }
  return s;
}

/* Another vCPU's counts (or the executing one's, given). A profiled vCPU's kernel counts are
 * the sums of its function arrays, copied to prof_insns/prof_rep when those are not NULL. */
static struct snap vcpu_snapshot(unsigned i, unsigned self, const struct snap* mine,
                                 uint64_t* prof_insns, uint64_t* prof_rep) {
  const struct vcpu* v = &g.v[i];
  struct snap s = i == self ? *mine
                            : (struct snap){load64(&v->user), load64(&v->kernel),
                                            load64(&v->user_rep), load64(&v->kernel_rep)};
#ifdef ISOLAB_INSN_INLINE
  if (i != self) s = (struct snap){0, 0, 0, 0};
#endif
  if (!v->fn_insns) return s;
  s.kernel = s.kernel_rep = 0;
  for (size_t f = 0; f <= g.sym.n; ++f) {
    const uint64_t n = load64(&v->fn_insns[f]), r = load64(&v->fn_rep[f]);
    s.kernel += n;
    s.kernel_rep += r;
    if (prof_insns) {
      prof_insns[f] = n;
      prof_rep[f] = r;
    }
  }
  return s;
}

/* The vCPUs' counts as " counts=... rep=... faults=..." (and the profiled vCPUs' arrays into
 * their begin snapshot when `begin`). Caller holds out_lock. */
static void write_counts(unsigned self, const struct snap* mine, int begin) {
  struct snap* s = calloc(g.n, sizeof *s);
  if (!s) return;
  for (unsigned i = 0; i < g.n; ++i) {
    struct vcpu* v = &g.v[i];
    const int copy = begin && v->fn_insns;
    if (copy) pthread_mutex_lock(&v->lock);
    s[i] = vcpu_snapshot(i, self, mine, copy ? v->begin_insns : NULL, copy ? v->begin_rep : NULL);
    if (copy) pthread_mutex_unlock(&v->lock);
  }
  fputs(" counts=", g.out);
  for (unsigned i = 0; i < g.n; ++i)
    fprintf(g.out, "%s%" PRIu64 ":%" PRIu64, i ? "," : "", s[i].user, s[i].kernel);
  fputs(" rep=", g.out);
  for (unsigned i = 0; i < g.n; ++i)
    fprintf(g.out, "%s%" PRIu64 ":%" PRIu64, i ? "," : "", s[i].user_rep, s[i].kernel_rep);
  fputs(" faults=", g.out);
  for (unsigned i = 0; i < g.n; ++i)
    fprintf(g.out, "%s%" PRIu64 ":%" PRIu64 ":%" PRIu64, i ? "," : "", load64(&g.v[i].faults_fixed),
            load64(&g.v[i].faults_unmatched), load64(&g.v[i].faults_kernel));
  free(s);
}

/* ---- regions ---- */

static void region_begin(struct vcpu* v, struct regions* r, const struct snap* s) {
  if (r->open) {
    pthread_mutex_lock(&v->lock);
    r->unbalanced++;
    pthread_mutex_unlock(&v->lock);
  }
  r->open = 1;
  r->open_user = s->user;
  r->open_kernel = s->kernel;
  r->open_rep = s->user_rep + s->kernel_rep;
}

/* Keeps one closed region's counts for the step's medians (caller holds the vCPU's lock). */
static void keep_region(struct regions* r, uint64_t all, uint64_t ker, uint64_t norep) {
  const size_t i = (size_t)r->n - 1;
  if (i >= MAX_KEPT_REGIONS) return;
  if (i >= r->cap) {
    const size_t cap = r->cap ? r->cap * 2 : 4096;
    uint64_t* a = realloc(r->all, cap * sizeof *a);
    if (a) r->all = a;
    uint64_t* k = a ? realloc(r->ker, cap * sizeof *k) : NULL;
    if (k) r->ker = k;
    uint64_t* nr = k ? realloc(r->norep, cap * sizeof *nr) : NULL;
    if (nr) r->norep = nr;
    if (!nr) return; /* out of memory: the medians cover the regions kept so far */
    r->cap = cap;
  }
  r->all[i] = all;
  r->ker[i] = ker;
  r->norep[i] = norep;
}

static void region_end(struct vcpu* v, struct regions* r, const struct snap* s) {
  pthread_mutex_lock(&v->lock);
  if (r->open) {
    const uint64_t u = s->user - r->open_user, k = s->kernel - r->open_kernel;
    const uint64_t rep = s->user_rep + s->kernel_rep - r->open_rep;
    r->n++;
    r->user += u;
    r->kernel += k;
    r->rep += rep;
    keep_region(r, u + k, k, u + k - rep);
  } else {
    r->unbalanced++;
  }
  pthread_mutex_unlock(&v->lock);
  r->open = 0;
}

static int by_value(const void* a, const void* b) {
  const uint64_t x = *(const uint64_t*)a, y = *(const uint64_t*)b;
  return x < y ? -1 : x > y;
}

/* The lower median of the first n values (sorts them in place); n > 0. */
static uint64_t lower_median(uint64_t* values, size_t n) {
  qsort(values, n, sizeof *values, by_value);
  return values[(n - 1) / 2];
}

/* One "region" line of vCPU i, class c, when it has regions or unbalanced markers (caller
 * holds the vCPU's lock). */
static void write_region_line(unsigned i, unsigned c, struct regions* r) {
  if (!r->n && !r->unbalanced) return;
  fprintf(g.out, "region %" PRIu64 " vcpu=%u", g.seq, i);
  if (c) fprintf(g.out, " class=%u", c);
  fprintf(g.out,
          " n=%" PRIu64 " user=%" PRIu64 " kernel=%" PRIu64 " rep=%" PRIu64 " unbalanced=%" PRIu64,
          r->n, r->user, r->kernel, r->rep, r->unbalanced);
  const size_t kept = r->n < r->cap ? (size_t)r->n : r->cap;
  if (r->n && kept) {
    fprintf(g.out, " median=%" PRIu64, lower_median(r->all, kept));
    fprintf(g.out, " kernel_median=%" PRIu64, lower_median(r->ker, kept));
    fprintf(g.out, " norep_median=%" PRIu64, lower_median(r->norep, kept));
  }
  fputc('\n', g.out);
}

static void clear_step_state(struct vcpu* v) {
  for (unsigned c = 0; c < NCLASSES; ++c)
    v->reg[c].n = v->reg[c].user = v->reg[c].kernel = v->reg[c].rep = v->reg[c].unbalanced = 0;
  wake_clear(v);
}

/* ---- steps ---- */

static void step_begin(unsigned cpu, const struct snap* s, int late) {
  pthread_mutex_lock(&g.out_lock);
  if (g.out) {
    g.seq++;
    for (unsigned i = 0; i < g.n; ++i) {
      struct vcpu* v = &g.v[i];
      pthread_mutex_lock(&v->lock);
      clear_step_state(v);
      pthread_mutex_unlock(&v->lock);
    }
    __atomic_store_n(&g.step_open, 1, __ATOMIC_RELAXED);
    fprintf(g.out, "step %" PRIu64 " begin vcpu=%u", g.seq, cpu);
    write_counts(cpu, s, 1);
    if (late) {
      fputs(" late=1", g.out);
      g.late_steps++;
    }
    fputc('\n', g.out);
  }
  pthread_mutex_unlock(&g.out_lock);
}

/* The end snapshot, then per vCPU its region, profile and wakeup lines. The profiled vCPUs'
 * arrays are read once, for both the snapshot's kernel count and the profile. */
static void step_end_lines(unsigned cpu, const struct snap* s) {
  uint64_t* ends = NULL;
  unsigned nprof = 0;
  for (unsigned i = 0; i < g.n; ++i) nprof += g.v[i].fn_insns != NULL;
  if (nprof) ends = malloc((size_t)nprof * 2 * (g.sym.n + 1) * sizeof *ends);
  struct snap* at = calloc(g.n, sizeof *at);
  if (!at || (nprof && !ends)) {
    free(ends);
    free(at);
    return;
  }
  for (unsigned i = 0, p = 0; i < g.n; ++i) {
    uint64_t* e = g.v[i].fn_insns ? ends + (size_t)2 * p++ * (g.sym.n + 1) : NULL;
    at[i] = vcpu_snapshot(i, cpu, s, e, e ? e + g.sym.n + 1 : NULL);
  }
  fprintf(g.out, "step %" PRIu64 " end vcpu=%u", g.seq, cpu);
  fputs(" counts=", g.out);
  for (unsigned i = 0; i < g.n; ++i)
    fprintf(g.out, "%s%" PRIu64 ":%" PRIu64, i ? "," : "", at[i].user, at[i].kernel);
  fputs(" rep=", g.out);
  for (unsigned i = 0; i < g.n; ++i)
    fprintf(g.out, "%s%" PRIu64 ":%" PRIu64, i ? "," : "", at[i].user_rep, at[i].kernel_rep);
  fputs(" faults=", g.out);
  for (unsigned i = 0; i < g.n; ++i)
    fprintf(g.out, "%s%" PRIu64 ":%" PRIu64 ":%" PRIu64, i ? "," : "", load64(&g.v[i].faults_fixed),
            load64(&g.v[i].faults_unmatched), load64(&g.v[i].faults_kernel));
  fputc('\n', g.out);
  for (unsigned i = 0; i < g.n; ++i) {
    struct vcpu* v = &g.v[i];
    pthread_mutex_lock(&v->lock);
    for (unsigned c = 0; c < NCLASSES; ++c) write_region_line(i, c, &v->reg[c]);
    pthread_mutex_unlock(&v->lock);
  }
  for (unsigned i = 0, p = 0; i < g.n; ++i) {
    struct vcpu* v = &g.v[i];
    if (!v->fn_insns) continue;
    const uint64_t* e = ends + (size_t)2 * p++ * (g.sym.n + 1);
    pthread_mutex_lock(&v->lock);
    write_profile(i, e, e + g.sym.n + 1);
    pthread_mutex_unlock(&v->lock);
  }
  for (unsigned i = 0; i < g.n; ++i) {
    pthread_mutex_lock(&g.v[i].lock);
    wake_write(g.out, g.seq, i, &g.v[i]);
    pthread_mutex_unlock(&g.v[i].lock);
  }
  free(ends);
  free(at);
}

static void step_end(unsigned cpu, const struct snap* s) {
  pthread_mutex_lock(&g.out_lock);
  if (g.out && !g.step_open) {
    g.stray_step_ends++;
  } else if (g.out) {
    __atomic_store_n(&g.step_open, 0, __ATOMIC_RELAXED);
    step_end_lines(cpu, s);
    fflush(g.out);
  }
  pthread_mutex_unlock(&g.out_lock);
}

/* ---- the counting window (count=steps) ---- */

/* QEMU's reset callback: the translation cache is empty and every vCPU is stopped. */
static void gate_reset_done(qemu_plugin_id_t id, int open) {
  for (unsigned i = 0; i < g.n; ++i) {
    g.v[i].last = NULL; /* blocks before the gap are no fault's or wakeup's predecessor */
    g.v[i].fault = NULL;
  }
  __atomic_store_n(&g.gate_open, open, __ATOMIC_RELAXED);
  register_callbacks(id);
  pthread_mutex_lock(&g.gate_lock);
  g.reset_pending = -1;
  pthread_mutex_unlock(&g.gate_lock);
}
static void gate_opened(qemu_plugin_id_t id) { gate_reset_done(id, 1); }
static void gate_closed(qemu_plugin_id_t id) { gate_reset_done(id, 0); }

/* Asks QEMU to flush the translation cache and translate on with the gate open or closed.
 * Refused (counted) while a request is pending, which QEMU would drop, and from any vCPU but
 * the first requester's: QEMU 7.2 leaves its plugin lock held by the thread that ran a reset,
 * so a reset requested from another vCPU's thread would never return (isolab-mark runs every
 * step marker on CPU 0 for that reason). */
static void request_gate(unsigned cpu, int open) {
  pthread_mutex_lock(&g.gate_lock);
  if (g.reset_pending >= 0 || (g.reset_vcpu >= 0 && (unsigned)g.reset_vcpu != cpu)) {
    g.refused_resets++;
  } else {
    g.reset_pending = open;
    g.reset_vcpu = (int)cpu;
    qemu_plugin_reset(g.id, open ? gate_opened : gate_closed);
  }
  pthread_mutex_unlock(&g.gate_lock);
}

static int gate_is_open(void) {
  return !g.steps_only || __atomic_load_n(&g.gate_open, __ATOMIC_RELAXED);
}

/* Whether a step beginning now would be counted whole: the gate open and no close pending (a
 * STEP_BEGIN in the block of the previous STEP_END runs before that close takes effect). */
static int gate_stays_open(void) {
  if (!g.steps_only) return 1;
  pthread_mutex_lock(&g.gate_lock);
  const int closing = g.reset_pending == 0;
  pthread_mutex_unlock(&g.gate_lock);
  return gate_is_open() && !closing;
}

static void on_marker(unsigned int cpu, void* udata) {
  if (cpu >= g.n) return;
  const uint64_t d = (uint64_t)(uintptr_t)udata;
  struct vcpu* v = &g.v[cpu];
  if ((enum marker)(d & 7) == STEP_ARM) {
    if (!gate_is_open()) request_gate(cpu, 1);
    return;
  }
#ifndef ISOLAB_INSN_INLINE
  if (!v->booted) {
    __atomic_fetch_add(&g.early_markers, 1, __ATOMIC_RELAXED);
    return;
  }
#endif
  struct regions* r = &v->reg[(d >> 3) & 3];
  const struct snap s = marker_snapshot(v, d);
  switch ((enum marker)(d & 7)) {
    case REGION_BEGIN:
      region_begin(v, r, &s);
      break;
    case REGION_END:
      region_end(v, r, &s);
      break;
    case STEP_BEGIN: {
      const int late = !gate_stays_open();
      if (late) request_gate(cpu, 1);
      step_begin(cpu, &s, late);
      break;
    }
    case STEP_END:
      step_end(cpu, &s);
      if (g.steps_only && gate_is_open()) request_gate(cpu, 0);
      break;
    case STEP_ARM:
      break;
#ifndef ISOLAB_INSN_INLINE
    case WAKE_ARM:
      wake_arm(v);
      break;
    case WAKE:
      wake_marker(v, owner_total(v), d >> 7);
      break;
#else
    case WAKE_ARM:
    case WAKE:
      break;
#endif
  }
}

/* ---- translation ---- */

static const struct {
  uint32_t disp;
  enum marker m;
  unsigned cls; /* region class (0 for the others) */
} markers[] = {
    {ISOLAB_MARK_DISP_REGION_BEGIN, REGION_BEGIN, 0},
    {ISOLAB_MARK_DISP_REGION_END, REGION_END, 0},
    {ISOLAB_MARK_DISP_STEP_BEGIN, STEP_BEGIN, 0},
    {ISOLAB_MARK_DISP_STEP_END, STEP_END, 0},
    {ISOLAB_MARK_DISP_REGION1_BEGIN, REGION_BEGIN, 1},
    {ISOLAB_MARK_DISP_REGION1_END, REGION_END, 1},
    {ISOLAB_MARK_DISP_REGION2_BEGIN, REGION_BEGIN, 2},
    {ISOLAB_MARK_DISP_REGION2_END, REGION_END, 2},
    {ISOLAB_MARK_DISP_REGION3_BEGIN, REGION_BEGIN, 3},
    {ISOLAB_MARK_DISP_REGION3_END, REGION_END, 3},
    {ISOLAB_MARK_DISP_WAKE_ARM, WAKE_ARM, 0},
    {ISOLAB_MARK_DISP_WAKE, WAKE, 0},
    {ISOLAB_MARK_DISP_STEP_ARM, STEP_ARM, 0},
};
#define NMARKERS (sizeof markers / sizeof markers[0])

/* The index in markers[] of the marker an instruction is, or -1. */
static int marker_of(const struct qemu_plugin_insn* insn) {
  if (qemu_plugin_insn_size(insn) != 7) return -1;
  const unsigned char* b = qemu_plugin_insn_data(insn);
  if (b[0] != 0x0f || b[1] != 0x1f || b[2] != 0x80) return -1;
  const uint32_t d =
      (uint32_t)b[3] | (uint32_t)b[4] << 8 | (uint32_t)b[5] << 16 | (uint32_t)b[6] << 24;
  for (size_t i = 0; i < NMARKERS; ++i)
    if (d == markers[i].disp) return (int)i;
  return -1;
}

/* Whether an instruction is a string instruction with a rep prefix: legacy prefixes (one of
 * them F2 or F3), an optional REX byte, then movs, stos, lods, cmps, scas, ins or outs. */
static int is_rep_string(const struct qemu_plugin_insn* insn) {
  const unsigned char* b = qemu_plugin_insn_data(insn);
  const size_t size = qemu_plugin_insn_size(insn);
  int rep = 0;
  size_t i = 0;
  for (; i < size; ++i) {
    const unsigned char c = b[i];
    if (c == 0xf2 || c == 0xf3)
      rep = 1;
    else if (c != 0xf0 && c != 0x2e && c != 0x36 && c != 0x3e && c != 0x26 && c != 0x64 &&
             c != 0x65 && c != 0x66 && c != 0x67)
      break;
  }
  if (!rep) return 0;
  if (i < size && (b[i] & 0xf0) == 0x40) ++i; /* REX */
  if (i >= size) return 0;
  const unsigned char op = b[i];
  return (op >= 0xa4 && op <= 0xa7) || (op >= 0xaa && op <= 0xaf) || (op >= 0x6c && op <= 0x6f);
}

/* With the gate closed only the step markers get a callback, with nothing after the snapshot
 * point (no block callback advanced the counters). */
static void register_markers(struct qemu_plugin_tb* tb, size_t n, int kernel,
                             const uint32_t* rep_at, int closed) {
  for (size_t i = 0; i < n; ++i) {
    struct qemu_plugin_insn* insn = qemu_plugin_tb_get_insn(tb, i);
    const int x = marker_of(insn);
    if (x < 0) continue;
    const enum marker m = markers[x].m;
    if (closed) {
      if (m == STEP_ARM || m == STEP_BEGIN || m == STEP_END)
        qemu_plugin_register_vcpu_insn_exec_cb(insn, on_marker, QEMU_PLUGIN_CB_NO_REGS,
                                               marker_udata(m, 0, kernel, 0, 0));
      continue;
    }
    /* begin markers and WAKE: the marker is inside; end markers: it is before the point. */
    const size_t first_after = (m == REGION_END || m == STEP_END) ? i + 1 : i;
    const int rep_after = rep_at[0] != UINT32_MAX && rep_at[0] >= first_after;
    qemu_plugin_register_vcpu_insn_exec_cb(
        insn, on_marker, QEMU_PLUGIN_CB_NO_REGS,
        marker_udata(m, markers[x].cls, kernel, rep_after, n - first_after));
  }
}

static void on_tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb* tb) {
  (void)id;
  const size_t n = qemu_plugin_tb_n_insns(tb);
  const uint64_t vaddr = qemu_plugin_tb_vaddr(tb);
  if (n == 0 || n > MAX_TB_INSNS) return; /* TCG translates at most 512 */
  const int kernel = (int)(vaddr >> 63);
  uint32_t rep = 0, rep_at = UINT32_MAX;
  if (!gate_is_open()) {
    register_markers(tb, n, kernel, &rep_at, 1);
    return;
  }
  for (size_t i = 0; i < n; ++i)
    if (is_rep_string(qemu_plugin_tb_get_insn(tb, i))) {
      rep++;
      rep_at = (uint32_t)i;
    }
#ifdef ISOLAB_INSN_INLINE
  qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64, &inline_count[kernel],
                                           n);
  if (rep)
    qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64, &inline_rep[kernel],
                                             rep);
#else
  const int fix = !kernel && g.sym.n > 0;
  struct tb_info* t = arena_alloc(sizeof *t + (fix ? n * sizeof(uint16_t) : 0));
  if (!t) return; /* out of memory: the block goes uncounted */
  *t = (struct tb_info){.vaddr = vaddr,
                        .n = (uint32_t)n,
                        .rep = rep,
                        .fn = kernel ? symbols_function(&g.sym, vaddr) : (uint32_t)g.sym.n,
                        .kernel = (uint8_t)kernel,
                        .kind = kernel ? symbols_kind(&g.sym, vaddr) : TB_PLAIN};
  if (fix) {
    t->offsets = (uint16_t*)(t + 1);
    for (size_t i = 0; i < n; ++i)
      t->offsets[i] = (uint16_t)(qemu_plugin_insn_vaddr(qemu_plugin_tb_get_insn(tb, i)) - vaddr);
  }
  qemu_plugin_register_vcpu_tb_exec_cb(tb, on_tb_exec, QEMU_PLUGIN_CB_NO_REGS, t);
#endif
  register_markers(tb, n, kernel, &rep_at, 0);
}

static void at_qemu_exit(qemu_plugin_id_t id, void* udata) {
  (void)id;
  (void)udata;
  pthread_mutex_lock(&g.out_lock);
  if (g.out) {
    fprintf(g.out, "exit stray_step_ends=%" PRIu64 " early_markers=%" PRIu64, g.stray_step_ends,
            load64(&g.early_markers));
    if (g.steps_only) {
      pthread_mutex_lock(&g.gate_lock);
      fprintf(g.out, " late_steps=%" PRIu64 " refused_resets=%" PRIu64, g.late_steps,
              g.refused_resets);
      pthread_mutex_unlock(&g.gate_lock);
    }
    write_counts(g.n, NULL, 0);
    fputs(" boot=", g.out);
    for (unsigned i = 0; i < g.n; ++i)
      fprintf(g.out, "%s%" PRIu64, i ? "," : "", load64(&g.v[i].boot));
    fputs("\nend\n", g.out);
    if (fclose(g.out) != 0)
      fprintf(stderr, "isolab-insn-count: writing %s: %s\n", g.out_path, strerror(errno));
    g.out = NULL;
  }
  pthread_mutex_unlock(&g.out_lock);
}

void register_callbacks(qemu_plugin_id_t id) {
  qemu_plugin_register_vcpu_tb_trans_cb(id, on_tb_trans);
  qemu_plugin_register_atexit_cb(id, at_qemu_exit, NULL);
}

/*
 * insn-count.c: isolab's QEMU TCG plugin. Counts the guest instructions each vCPU executes,
 * split user/kernel, and the instructions of marker-delimited regions and workload steps
 * (the markers of guest-tools/insn-marker.h). System emulation, x86-64 guests, plugin API 1.
 *
 * Load: qemu-system-x86_64 -accel tcg[,thread=multi] ... \
 *         -plugin file=DIR/libisolab-insn-count.so,out=PATH[,profile_cpus=LIST][,profile_top=N]
 *   (file= with a path that has a slash: QEMU dlopen()s it; commas in values are doubled.)
 *   out=PATH         required; created or truncated at install. If it cannot be opened the
 *                    install fails (QEMU prints our message and refuses to start).
 *   profile_cpus=L   optional cpulist ("5-7", "1,3-4"): per-TB kernel profile on those vCPUs.
 *   profile_top=N    optional, N >= 1 (default 2000): profile lines per vCPU and step.
 * An unknown argument, a malformed value or a vCPU outside the machine fails the install.
 *
 * Counting. Every translation block (TB) gets an exec callback whose user data holds its
 * instruction count and whether it is kernel code (start address >= 0xffff800000000000, the
 * x86-64 upper half; everything else, 32-bit code included, is user). The callback adds the
 * whole TB at its entry to the executing vCPU's counter. Only the vCPU's own thread writes
 * its counters (relaxed atomic stores), so multi-threaded TCG needs no lock; other threads
 * read them with relaxed atomic loads. A TB left in its middle (an exception such as a page
 * fault, or an I/O exit) still counts whole: counts of such code are upper bounds. A string
 * instruction with a rep prefix counts once per iteration, plus once for the final check:
 * QEMU executes each iteration as a one-instruction TB (measured: "rep stosb" with ecx = 1000
 * counts 1001), so kernel code using rep movs/stos (memcpy, memset, clear_page with ERMS)
 * counts more than hardware's retired instructions would.
 *
 * Markers. The ten 7-byte NOPs "nopl DISP(%rax)" (0F 1F 80 disp32; the same bytes are
 * "nopl DISP(%eax)" in 32-bit code) are recognised by their bytes at translation and get an
 * instruction exec callback. Its user data holds how many instructions of the TB lie after
 * the snapshot point, which is subtracted from the counter that the TB callback already
 * advanced, so snapshots are exact for the executing vCPU. A begin marker's snapshot is
 * taken before it, an end marker's after it: regions and steps include both markers.
 * Regions come in four classes (REGION_BEGIN/END are class 0, REGION<c>_BEGIN/END class c),
 * each with its own state per vCPU; what follows holds for each class on its own.
 *   REGION_BEGIN  opens a region of its class on the executing vCPU (one of that class
 *                 already open: unbalanced += 1, and the region restarts here).
 *   REGION_END    adds (end - begin) user and kernel to the vCPU's totals of its class,
 *                 n += 1 (no region of the class open: unbalanced += 1).
 *   STEP_BEGIN    seq += 1; writes a "step begin" snapshot of every vCPU; clears every vCPU's
 *                 region totals, n and unbalanced of every class, and its profile. A step
 *                 already open gets no end. (Open regions stay open.)
 *   STEP_END      writes a "step end" snapshot, the region lines and profile lines of the
 *                 step, and flushes. With no step open it is only counted (stray_step_ends).
 * Snapshots read the other vCPUs' counters at that instant (exact only for the executing one).
 *
 * Profile. While a step is open, each kernel TB executed on a profiled vCPU adds its
 * instruction count to that vCPU's hash table entry for the TB's start address. Locking: each
 * vCPU has a mutex over its step state (region totals, n, unbalanced, profile table). Its own
 * thread takes it, uncontended, to update them; STEP_BEGIN and STEP_END, on whichever vCPU
 * executes them, take each vCPU's mutex in turn (always after the output mutex, never the
 * other way round) to clear or copy that state.
 *
 * Output (text, one record per line, fields separated by single spaces; after a record's
 * kind and positional fields every field is key=value; readers ignore keys they do not know):
 *   isolab-insn-count 2 plugin_api=1 qemu_api=<min>-<cur> vcpus=<n> profile_cpus=<list>
 *       profile_top=<N>                        (one line; profile_cpus= empty when none)
 *   step <seq> begin vcpu=<v> counts=<u0>:<k0>,<u1>:<k1>,...   (entry i = vCPU i, n entries)
 *   region <seq> vcpu=<c> [class=<k>] n=<regions> user=<sum> kernel=<sum> unbalanced=<m>
 *       [median=<insns> kernel_median=<insns>]
 *       (after a step end, one per vCPU and region class with n > 0 or m > 0, ascending vCPU,
 *       then ascending class; class= is written for classes 1-3 only, so a class-0 line is
 *       exactly as in format 1; median is the lower median over the step's regions of the
 *       class of one region's instructions (user + kernel), kernel_median that of its kernel
 *       instructions, both over the first 4194304 regions of the class; absent when n = 0.
 *       A region that an interrupt, a softirq or a kernel thread entered costs more, and how
 *       many do depends on how fast the host emulates the guest, since ticks and timers
 *       follow guest time; the median is the operation's own path length.)
 *   prof <seq> vcpu=<c> pc=0x<hex> insns=<n>   (after the region lines; per profiled vCPU,
 *       at most profile_top lines, largest insns first, ties by ascending pc)
 *   step <seq> end vcpu=<v> counts=...         (written before the region and prof lines)
 *   exit stray_step_ends=<k> counts=...        (at QEMU's exit)
 *   end
 * seq counts STEP_BEGINs from 1; counts are cumulative since the vCPU started; all numbers are
 * unsigned decimal except pc. The file is flushed after the header, at every step end and at
 * exit, so a guest or QEMU that dies leaves whole steps behind (and perhaps a cut last line).
 * Format versions: 1 had region class 0 only (no class= field); 2 adds classes 1-3. The
 * version went up because a format-1 reader would take a class-1 line for the vCPU's class-0
 * regions. Reader (both versions): orchestrator/parse/insn_count.h.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "insn-marker.h"
#include "qemu-plugin-api.h"

ISOLAB_QEMU_PLUGIN_EXPORT int qemu_plugin_version = QEMU_PLUGIN_VERSION;

#define OUTPUT_FORMAT_VERSION 2
#define NCLASSES 4
#define KERNEL_START 0xffff800000000000ull
#define LOW47 ((1ull << 47) - 1)
#define MAX_TB_INSNS 0xffffu
#define MAX_VCPUS 4096u
#define DEFAULT_PROFILE_TOP 2000u

_Static_assert(sizeof(void*) == 8, "user data encodings need 64-bit pointers");

struct prof_entry {
  uint64_t pc; /* 0 = empty slot (kernel addresses are never 0) */
  uint64_t insns;
};

/* One region class of one vCPU. */
struct regions {
  int open; /* owner only, like open_user and open_kernel */
  uint64_t open_user, open_kernel;
  uint64_t n, user, kernel, unbalanced; /* step state, under the vCPU's lock */
  uint64_t *all, *ker;                  /* each closed region's total and kernel instructions */
  size_t cap;
};

struct vcpu {
  uint64_t user, kernel; /* owner writes (relaxed atomic), anyone reads (relaxed atomic) */
  pthread_mutex_t lock;  /* guards the step state below and in reg[] */
  struct regions reg[NCLASSES];
  struct prof_entry* prof;
  size_t prof_cap, prof_used;
} __attribute__((aligned(64)));

static struct {
  pthread_mutex_t out_lock; /* guards out, seq, stray_step_ends and step_open changes */
  FILE* out;
  char* out_path;
  struct vcpu* v;
  unsigned n;
  unsigned char* profiled; /* per vCPU */
  unsigned profile_top;
  uint64_t seq, stray_step_ends;
  int step_open; /* read without the lock (relaxed) by the TB callback */
} g = {.out_lock = PTHREAD_MUTEX_INITIALIZER};

static uint64_t load64(const uint64_t* p) { return __atomic_load_n(p, __ATOMIC_RELAXED); }
static void add64(uint64_t* p, uint64_t n) { __atomic_store_n(p, *p + n, __ATOMIC_RELAXED); }

/* ---- user data encodings ---- */

/* TB: bit 0 kernel, bits 1-16 instruction count, bits 17-63 the low 47 bits of the start
 * address (a kernel address has all of bits 47-63 set, so they need no room). */
static void* tb_udata(uint64_t vaddr, size_t n) {
  const int kernel = vaddr >= KERNEL_START;
  uint64_t d = (uint64_t)kernel | ((uint64_t)n << 1);
  if (kernel) d |= (vaddr & LOW47) << 17;
  return (void*)(uintptr_t)d;
}

enum marker { REGION_BEGIN, REGION_END, STEP_BEGIN, STEP_END };

/* Marker: bits 0-1 the marker, bits 2-3 the region class, bit 4 kernel TB, bits 5-63
 * instructions after the snapshot. */
static void* marker_udata(enum marker m, unsigned cls, int kernel, uint64_t after) {
  return (void*)(uintptr_t)((uint64_t)m | ((uint64_t)cls << 2) | ((uint64_t)kernel << 4) |
                            (after << 5));
}

/* ---- profile table (caller holds the vCPU's lock) ---- */

static size_t prof_slot(const struct prof_entry* t, size_t cap, uint64_t pc) {
  size_t i = (size_t)((pc * 0x9e3779b97f4a7c15ull) >> 20) & (cap - 1);
  while (t[i].pc != 0 && t[i].pc != pc) i = (i + 1) & (cap - 1);
  return i;
}

static int prof_grow(struct vcpu* v) {
  const size_t cap = v->prof_cap ? v->prof_cap * 2 : 1024;
  struct prof_entry* t = calloc(cap, sizeof *t);
  if (!t) return -1;
  for (size_t i = 0; i < v->prof_cap; ++i)
    if (v->prof[i].pc) t[prof_slot(t, cap, v->prof[i].pc)] = v->prof[i];
  free(v->prof);
  v->prof = t;
  v->prof_cap = cap;
  return 0;
}

static void prof_add(struct vcpu* v, uint64_t pc, uint64_t n) {
  if ((v->prof_used + 1) * 2 > v->prof_cap && prof_grow(v) != 0) return;
  struct prof_entry* e = &v->prof[prof_slot(v->prof, v->prof_cap, pc)];
  if (e->pc == 0) {
    e->pc = pc;
    v->prof_used++;
  }
  e->insns += n;
}

static void prof_clear(struct vcpu* v) {
  if (v->prof) memset(v->prof, 0, v->prof_cap * sizeof *v->prof);
  v->prof_used = 0;
}

/* ---- execution callbacks ---- */

static void on_tb_exec(unsigned int cpu, void* udata) {
  if (cpu >= g.n) return;
  const uint64_t d = (uint64_t)(uintptr_t)udata;
  const uint64_t n = (d >> 1) & MAX_TB_INSNS;
  struct vcpu* v = &g.v[cpu];
  if (!(d & 1)) {
    add64(&v->user, n);
    return;
  }
  add64(&v->kernel, n);
  if (g.profiled[cpu] && __atomic_load_n(&g.step_open, __ATOMIC_RELAXED)) {
    pthread_mutex_lock(&v->lock);
    prof_add(v, KERNEL_START | (d >> 17), n);
    pthread_mutex_unlock(&v->lock);
  }
}

/* The executing vCPU's exact counts at the marker's snapshot point. */
static void marker_snapshot(const struct vcpu* v, uint64_t d, uint64_t* u, uint64_t* k) {
  const uint64_t after = d >> 5;
  *u = v->user;
  *k = v->kernel;
  if (d & 16)
    *k -= after;
  else
    *u -= after;
}

static void region_begin(struct vcpu* v, struct regions* r, uint64_t u, uint64_t k) {
  if (r->open) {
    pthread_mutex_lock(&v->lock);
    r->unbalanced++;
    pthread_mutex_unlock(&v->lock);
  }
  r->open = 1;
  r->open_user = u;
  r->open_kernel = k;
}

#define MAX_KEPT_REGIONS ((size_t)1 << 22)

/* Keeps one closed region's counts for the step's medians (caller holds the vCPU's lock). */
static void keep_region(struct regions* r, uint64_t all, uint64_t ker) {
  const size_t i = (size_t)r->n - 1;
  if (i >= MAX_KEPT_REGIONS) return;
  if (i >= r->cap) {
    const size_t cap = r->cap ? r->cap * 2 : 4096;
    uint64_t* a = realloc(r->all, cap * sizeof *a);
    if (a) r->all = a;
    uint64_t* k = a ? realloc(r->ker, cap * sizeof *k) : NULL;
    if (k) r->ker = k;
    if (!a || !k) return; /* out of memory: the medians cover the regions kept so far */
    r->cap = cap;
  }
  r->all[i] = all;
  r->ker[i] = ker;
}

static void region_end(struct vcpu* v, struct regions* r, uint64_t u, uint64_t k) {
  pthread_mutex_lock(&v->lock);
  if (r->open) {
    r->n++;
    r->user += u - r->open_user;
    r->kernel += k - r->open_kernel;
    keep_region(r, (u - r->open_user) + (k - r->open_kernel), k - r->open_kernel);
  } else {
    r->unbalanced++;
  }
  pthread_mutex_unlock(&v->lock);
  r->open = 0;
}

/* ", counts=u0:k0,..." with the executing vCPU's exact snapshot. Caller holds out_lock. */
static void write_counts(unsigned self, uint64_t su, uint64_t sk) {
  fputs(" counts=", g.out);
  for (unsigned i = 0; i < g.n; ++i) {
    const uint64_t u = i == self ? su : load64(&g.v[i].user);
    const uint64_t k = i == self ? sk : load64(&g.v[i].kernel);
    fprintf(g.out, "%s%" PRIu64 ":%" PRIu64, i ? "," : "", u, k);
  }
  fputc('\n', g.out);
}

static void step_begin(unsigned cpu, uint64_t u, uint64_t k) {
  pthread_mutex_lock(&g.out_lock);
  if (g.out) {
    g.seq++;
    for (unsigned i = 0; i < g.n; ++i) {
      struct vcpu* v = &g.v[i];
      pthread_mutex_lock(&v->lock);
      for (unsigned c = 0; c < NCLASSES; ++c)
        v->reg[c].n = v->reg[c].user = v->reg[c].kernel = v->reg[c].unbalanced = 0;
      prof_clear(v);
      pthread_mutex_unlock(&v->lock);
    }
    __atomic_store_n(&g.step_open, 1, __ATOMIC_RELAXED);
    fprintf(g.out, "step %" PRIu64 " begin vcpu=%u", g.seq, cpu);
    write_counts(cpu, u, k);
  }
  pthread_mutex_unlock(&g.out_lock);
}

static int by_insns_desc(const void* a, const void* b) {
  const struct prof_entry *x = a, *y = b;
  if (x->insns != y->insns) return x->insns > y->insns ? -1 : 1;
  return x->pc < y->pc ? -1 : x->pc > y->pc;
}

/* Copies a vCPU's profile under its lock, then sorts and writes the top entries. */
static void write_profile(unsigned cpu) {
  struct vcpu* v = &g.v[cpu];
  pthread_mutex_lock(&v->lock);
  size_t m = 0;
  struct prof_entry* copy = v->prof_used ? malloc(v->prof_used * sizeof *copy) : NULL;
  for (size_t i = 0; copy && i < v->prof_cap; ++i)
    if (v->prof[i].pc) copy[m++] = v->prof[i];
  pthread_mutex_unlock(&v->lock);
  qsort(copy, m, sizeof *copy, by_insns_desc);
  for (size_t i = 0; i < m && i < g.profile_top; ++i)
    fprintf(g.out, "prof %" PRIu64 " vcpu=%u pc=0x%" PRIx64 " insns=%" PRIu64 "\n", g.seq, cpu,
            copy[i].pc, copy[i].insns);
  free(copy);
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
  fprintf(g.out, " n=%" PRIu64 " user=%" PRIu64 " kernel=%" PRIu64 " unbalanced=%" PRIu64, r->n,
          r->user, r->kernel, r->unbalanced);
  const size_t kept = r->n < r->cap ? (size_t)r->n : r->cap;
  if (r->n && kept)
    fprintf(g.out, " median=%" PRIu64 " kernel_median=%" PRIu64, lower_median(r->all, kept),
            lower_median(r->ker, kept));
  fputc('\n', g.out);
}

static void write_regions(void) {
  for (unsigned i = 0; i < g.n; ++i) {
    struct vcpu* v = &g.v[i];
    pthread_mutex_lock(&v->lock);
    for (unsigned c = 0; c < NCLASSES; ++c) write_region_line(i, c, &v->reg[c]);
    pthread_mutex_unlock(&v->lock);
  }
}

static void step_end(unsigned cpu, uint64_t u, uint64_t k) {
  pthread_mutex_lock(&g.out_lock);
  if (g.out && !g.step_open) {
    g.stray_step_ends++;
  } else if (g.out) {
    __atomic_store_n(&g.step_open, 0, __ATOMIC_RELAXED);
    fprintf(g.out, "step %" PRIu64 " end vcpu=%u", g.seq, cpu);
    write_counts(cpu, u, k);
    write_regions();
    for (unsigned i = 0; i < g.n; ++i)
      if (g.profiled[i]) write_profile(i);
    fflush(g.out);
  }
  pthread_mutex_unlock(&g.out_lock);
}

static void on_marker(unsigned int cpu, void* udata) {
  if (cpu >= g.n) return;
  const uint64_t d = (uint64_t)(uintptr_t)udata;
  struct vcpu* v = &g.v[cpu];
  struct regions* r = &v->reg[(d >> 2) & 3];
  uint64_t u, k;
  marker_snapshot(v, d, &u, &k);
  switch ((enum marker)(d & 3)) {
    case REGION_BEGIN:
      region_begin(v, r, u, k);
      break;
    case REGION_END:
      region_end(v, r, u, k);
      break;
    case STEP_BEGIN:
      step_begin(cpu, u, k);
      break;
    case STEP_END:
      step_end(cpu, u, k);
      break;
  }
}

/* ---- translation ---- */

static const struct {
  uint32_t disp;
  enum marker m;
  unsigned cls; /* region class (0 for the step markers) */
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

static void on_tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb* tb) {
  (void)id;
  const size_t n = qemu_plugin_tb_n_insns(tb);
  const uint64_t vaddr = qemu_plugin_tb_vaddr(tb);
  if (n == 0 || n > MAX_TB_INSNS) return; /* TCG translates at most 512 */
  qemu_plugin_register_vcpu_tb_exec_cb(tb, on_tb_exec, QEMU_PLUGIN_CB_NO_REGS, tb_udata(vaddr, n));
  for (size_t i = 0; i < n; ++i) {
    struct qemu_plugin_insn* insn = qemu_plugin_tb_get_insn(tb, i);
    const int x = marker_of(insn);
    if (x < 0) continue;
    const enum marker m = markers[x].m;
    /* begin markers: the marker is inside; end markers: it is before the point. */
    const uint64_t after = (m == REGION_BEGIN || m == STEP_BEGIN) ? n - i : n - i - 1;
    qemu_plugin_register_vcpu_insn_exec_cb(
        insn, on_marker, QEMU_PLUGIN_CB_NO_REGS,
        marker_udata(m, markers[x].cls, vaddr >= KERNEL_START, after));
  }
}

static void at_qemu_exit(qemu_plugin_id_t id, void* udata) {
  (void)id;
  (void)udata;
  pthread_mutex_lock(&g.out_lock);
  if (g.out) {
    fprintf(g.out, "exit stray_step_ends=%" PRIu64, g.stray_step_ends);
    write_counts(g.n, 0, 0);
    fputs("end\n", g.out);
    if (fclose(g.out) != 0)
      fprintf(stderr, "isolab-insn-count: writing %s: %s\n", g.out_path, strerror(errno));
    g.out = NULL;
  }
  pthread_mutex_unlock(&g.out_lock);
}

/* ---- install ---- */

static int fail(const char* fmt, const char* what) {
  fprintf(stderr, "isolab-insn-count: ");
  fprintf(stderr, fmt, what);
  fputc('\n', stderr);
  return 1;
}

/* Parses a decimal number; 0 on success. */
static int parse_uint(const char* s, const char** end, unsigned long* out) {
  if (*s < '0' || *s > '9') return -1;
  errno = 0;
  char* e;
  *out = strtoul(s, &e, 10);
  *end = e;
  return errno ? -1 : 0;
}

/* "5-7,9" -> g.profiled[5..7] = g.profiled[9] = 1; 0 on success. */
static int parse_cpulist(const char* s) {
  while (*s) {
    unsigned long a, b;
    const char* e;
    if (parse_uint(s, &e, &a)) return -1;
    b = a;
    if (*e == '-' && parse_uint(e + 1, &e, &b)) return -1;
    if (b < a || b >= g.n) return -1;
    for (unsigned long c = a; c <= b; ++c) g.profiled[c] = 1;
    if (*e == ',' && e[1])
      e++;
    else if (*e)
      return -1;
    s = e;
  }
  return 0;
}

static int parse_args(int argc, char** argv, const char** out, const char** cpus) {
  for (int i = 0; i < argc; ++i) {
    const char* a = argv[i];
    if (strncmp(a, "out=", 4) == 0 && a[4]) {
      *out = a + 4;
    } else if (strncmp(a, "profile_cpus=", 13) == 0) {
      *cpus = a + 13;
      if (parse_cpulist(*cpus)) {
        fprintf(stderr, "isolab-insn-count: bad profile_cpus '%s' (a cpulist of vCPUs 0-%u)\n",
                *cpus, g.n - 1);
        return 1;
      }
    } else if (strncmp(a, "profile_top=", 12) == 0) {
      unsigned long n;
      const char* e;
      if (parse_uint(a + 12, &e, &n) || *e || n < 1 || n > 100000000)
        return fail("bad profile_top '%s' (1..100000000)", a + 12);
      g.profile_top = (unsigned)n;
    } else {
      return fail("unknown argument '%s' (expected out=, profile_cpus=, profile_top=)", a);
    }
  }
  if (!*out) return fail("%s", "missing argument out=PATH");
  return 0;
}

static int alloc_vcpus(unsigned n) {
  g.n = n;
  g.v = aligned_alloc(64, n * sizeof *g.v);
  g.profiled = calloc(n, 1);
  if (!g.v || !g.profiled) return -1;
  memset(g.v, 0, n * sizeof *g.v);
  for (unsigned i = 0; i < n; ++i) pthread_mutex_init(&g.v[i].lock, NULL);
  return 0;
}

ISOLAB_QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t* info,
                                                  int argc, char** argv) {
  if (!info->system_emulation) return fail("%s", "needs system emulation (qemu-system-*)");
  if (QEMU_PLUGIN_VERSION < info->version.min || QEMU_PLUGIN_VERSION > info->version.cur)
    return fail("%s", "QEMU's plugin API range does not include version 1");
  const int maxv = info->system.max_vcpus;
  if (maxv < 1 || (unsigned)maxv > MAX_VCPUS) return fail("%s", "vCPU count outside 1..4096");
  if (alloc_vcpus((unsigned)maxv)) return fail("%s", "out of memory");
  const char *out = NULL, *cpus = "";
  g.profile_top = DEFAULT_PROFILE_TOP;
  if (parse_args(argc, argv, &out, &cpus)) return 1;
  g.out_path = strdup(out);
  g.out = fopen(out, "w");
  if (!g.out) {
    fprintf(stderr, "isolab-insn-count: cannot open out=%s: %s\n", out, strerror(errno));
    return 1;
  }
  setvbuf(g.out, NULL, _IOFBF, 1 << 16);
  fprintf(g.out, "isolab-insn-count %d plugin_api=%d qemu_api=%d-%d vcpus=%u profile_cpus=%s",
          OUTPUT_FORMAT_VERSION, QEMU_PLUGIN_VERSION, info->version.min, info->version.cur, g.n,
          cpus);
  fprintf(g.out, " profile_top=%u\n", g.profile_top);
  fflush(g.out);
  qemu_plugin_register_vcpu_tb_trans_cb(id, on_tb_trans);
  qemu_plugin_register_atexit_cb(id, at_qemu_exit, NULL);
  return 0;
}

/*
 * profile.c: a step's kernel-function profile of a profiled vCPU, the "prof" lines of the
 * output (documented at the top of insn-count.c).
 */
#include <inttypes.h>
#include <stdlib.h>

#include "insn-count.h"

struct fn_delta {
  uint32_t fn;
  uint64_t insns, rep;
};

static int by_insns_desc(const void* a, const void* b) {
  const struct fn_delta *x = a, *y = b;
  if (x->insns != y->insns) return x->insns > y->insns ? -1 : 1;
  return x->fn < y->fn ? -1 : x->fn > y->fn;
}

void write_profile(unsigned cpu, const uint64_t* end_insns, const uint64_t* end_rep) {
  const struct vcpu* v = &g.v[cpu];
  struct fn_delta* d = malloc((g.sym.n + 1) * sizeof *d);
  if (!d) return;
  size_t m = 0;
  for (size_t f = 0; f <= g.sym.n; ++f)
    if (end_insns[f] != v->begin_insns[f])
      d[m++] = (struct fn_delta){(uint32_t)f, end_insns[f] - v->begin_insns[f],
                                 end_rep[f] - v->begin_rep[f]};
  qsort(d, m, sizeof *d, by_insns_desc);
  for (size_t i = 0; i < m; ++i) {
    fprintf(g.out, "prof %" PRIu64 " vcpu=%u fn=", g.seq, cpu);
    if (d[i].fn < g.sym.n)
      fprintf(g.out, "0x%" PRIx64, g.sym.start[d[i].fn]);
    else
      fputs("none", g.out);
    fprintf(g.out, " insns=%" PRIu64 " rep=%" PRIu64 "\n", d[i].insns, d[i].rep);
  }
  free(d);
}

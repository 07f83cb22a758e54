/* tu_gsyn.h — a synthetic instruction stream held in memory for the Gus tests (test_gus.c,
 * test_gus_sets.c): static instructions (dec), the executed stream (ins) and its accesses (mem),
 * read through gus_source_mem. Each test file adds instructions its own way. */
#ifndef TU_GSYN_H
#define TU_GSYN_H

#include "gus.h"
#include "util.h"

typedef struct syn {
  VEC(dec_insn) dec;
  VEC(trace_insn) ins;
  VEC(trace_mem) mem;
  gus_mem_stream ms;
  gus_source src;
} syn;

static inline const gus_source *syn_source(syn *s) {
  s->ms = (gus_mem_stream){s->dec.a, (uint32_t)s->dec.n, s->ins.a, s->ins.n, s->mem.a};
  gus_source_mem(&s->src, &s->ms);
  return &s->src;
}

static inline void syn_free(syn *s) {
  VEC_FREE(s->dec);
  VEC_FREE(s->ins);
  VEC_FREE(s->mem);
}

#endif

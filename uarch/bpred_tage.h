/* bpred_tage.h — TAGE internals shared by bpred_tage.c and the out-of-order model's fetch loop:
 * table layout and the prediction, inline (design in bpred.h). */
#ifndef WHATIF_BPRED_TAGE_H
#define WHATIF_BPRED_TAGE_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "bpred.h"

typedef struct tage_entry {
  int8_t ctr;    /* 3-bit signed counter: -4..3, >= 0 predicts taken */
  uint8_t u;     /* 2-bit useful counter */
  uint16_t tag;
} tage_entry;

typedef struct tage_hdr {
  uint64_t tick;       /* updates so far (useful-counter decay clock) */
  uint32_t alloc;      /* deterministic allocation counter */
  int32_t use_alt;     /* USE_ALT_ON_NA: -8..7, >= 0 means use the alternate for new entries */
} tage_hdr;

/* Layout: hdr | base (2^bimodal_bits bytes) | tables (tage_tables x 2^tage_bits entries). */
static inline size_t tage_base_off(void) { return sizeof(tage_hdr); }
static inline size_t tage_tab_off(const bp_config *c) {
  size_t o = tage_base_off() + ((size_t)1 << c->bimodal_bits);
  return (o + 7) & ~(size_t)7;
}

static inline uint32_t tage_base_index(const bp_config *c, uint64_t pc) {
  return (uint32_t)(pc ^ (pc >> c->bimodal_bits)) & ((1u << c->bimodal_bits) - 1);
}


/* The highest set bit of a table mask (bit i: table i), 0 if none (bit 0 is never set). */
static inline int tage_top(uint32_t hit) { return 31 - __builtin_clz(hit | 1u); }

/* Eight 16-bit lanes, lane l = table 8v + l + 1 (indices and tags are at most 16 bits wide). */
typedef uint16_t tage_v8 __attribute__((vector_size(16)));

static inline tage_v8 tage_v8_ld(const uint16_t *p) {
  tage_v8 v;
  memcpy(&v, p, sizeof v);
  return v;
}
static inline tage_v8 tage_v8_dup(uint32_t x) {
  uint16_t y = (uint16_t)x;
  return (tage_v8){y, y, y, y, y, y, y, y};
}

/* Bit i set: table i holds tag[i] at idx[i] (1 <= i <= n). Branch-free: a data-dependent branch
 * per table mispredicts often on the host and, waiting for its table load, keeps the loads from
 * overlapping. idx and tag have 8 * nvec lanes from [1]. */
#if defined(__SSE2__)
/* Entry numbers over all tables of four lanes (from 16-bit indices widened to 32 bits), the
 * tags there gathered into the four lanes from q of tv. Lanes past the last table read table 1
 * (lane offset 0, index below its size) and are masked by the caller. */
#define TAGE_GATHER4(tv, q, wide, toff)                                                          \
  do {                                                                                           \
    uint32_t e_[4];                                                                              \
    _mm_storeu_si128((__m128i *)e_, _mm_add_epi32((wide), _mm_loadu_si128((const __m128i *)(toff)))); \
    tv = _mm_insert_epi16(tv, tables[e_[0]].tag, (q));                                           \
    tv = _mm_insert_epi16(tv, tables[e_[1]].tag, (q) + 1);                                       \
    tv = _mm_insert_epi16(tv, tables[e_[2]].tag, (q) + 2);                                       \
    tv = _mm_insert_epi16(tv, tables[e_[3]].tag, (q) + 3);                                       \
  } while (0)

/* With ent16, entry numbers in 16-bit lanes (one add for eight lanes), the tags there gathered
 * into the four lanes from q of tv, one lane extract each. */
#define TAGE_GATHER4_16(tv, q, ev)                                                               \
  do {                                                                                           \
    tv = _mm_insert_epi16(tv, tables[_mm_extract_epi16((ev), (q))].tag, (q));                    \
    tv = _mm_insert_epi16(tv, tables[_mm_extract_epi16((ev), (q) + 1)].tag, (q) + 1);            \
    tv = _mm_insert_epi16(tv, tables[_mm_extract_epi16((ev), (q) + 2)].tag, (q) + 2);            \
    tv = _mm_insert_epi16(tv, tables[_mm_extract_epi16((ev), (q) + 3)].tag, (q) + 3);            \
  } while (0)

/* (k12: g->k12, n 12, as constants) (GCC cannot see that the prediction wrote tag[9..16] where
 * nq > 2: nvec is 2 whenever the tables are more than eight) */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
static inline __attribute__((always_inline)) uint32_t tage_hits_k(const tage_entry *tables, const bp_geom *g,
                                                                  uint32_t n, const uint16_t *idx,
                                                                  const uint16_t *tag, const bool k12) {
  const __m128i z = _mm_setzero_si128();
  /* unused groups of four are not read (their lanes stay 0) */
  const uint32_t nq = k12 ? 3 : g->nquad;
  __m128i i0 = _mm_loadu_si128((const __m128i *)&idx[1]);
  __m128i t0 = z, t1 = z, e0, e1 = z;
  if (k12 || g->ent16) {
    const __m128i v0 = _mm_add_epi16(i0, (__m128i)bp_v8_geo(bp_k12_toff16, g->toff16, 0, k12));
    TAGE_GATHER4_16(t0, 0, v0);
    if (nq > 1) TAGE_GATHER4_16(t0, 4, v0);
    e0 = _mm_cmpeq_epi16(t0, _mm_loadu_si128((const __m128i *)&tag[1]));
    if (nq > 2) {
      const __m128i v1 = _mm_add_epi16(_mm_loadu_si128((const __m128i *)&idx[9]),
                                       (__m128i)bp_v8_geo(bp_k12_toff16, g->toff16, 8, k12));
      TAGE_GATHER4_16(t1, 0, v1);
      if (nq > 3) TAGE_GATHER4_16(t1, 4, v1);
      e1 = _mm_cmpeq_epi16(t1, _mm_loadu_si128((const __m128i *)&tag[9]));
    }
    uint32_t eq = (uint32_t)_mm_movemask_epi8(_mm_packs_epi16(e0, e1)); /* bit l: lane l */
    return (eq << 1) & ((2u << n) - 2);
  }
  TAGE_GATHER4(t0, 0, _mm_unpacklo_epi16(i0, z), &g->toff[0]);
  if (nq > 1) TAGE_GATHER4(t0, 4, _mm_unpackhi_epi16(i0, z), &g->toff[4]);
  e0 = _mm_cmpeq_epi16(t0, _mm_loadu_si128((const __m128i *)&tag[1]));
  if (nq > 2) {
    __m128i i1 = _mm_loadu_si128((const __m128i *)&idx[9]);
    TAGE_GATHER4(t1, 0, _mm_unpacklo_epi16(i1, z), &g->toff[8]);
    if (nq > 3) TAGE_GATHER4(t1, 4, _mm_unpackhi_epi16(i1, z), &g->toff[12]);
    e1 = _mm_cmpeq_epi16(t1, _mm_loadu_si128((const __m128i *)&tag[9]));
  }
  uint32_t eq = (uint32_t)_mm_movemask_epi8(_mm_packs_epi16(e0, e1)); /* bit l: lane l */
  return (eq << 1) & ((2u << n) - 2);
}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
#else
static inline __attribute__((always_inline)) uint32_t tage_hits_k(const tage_entry *tables, const bp_geom *g,
                                                                  uint32_t n, const uint16_t *idx,
                                                                  const uint16_t *tag, const bool k12) {
  (void)k12;
  uint32_t hit = 0;
  for (uint32_t i = 1; i <= n; i++) hit |= (uint32_t)(tables[g->toff[i - 1] + idx[i]].tag == tag[i]) << i;
  return hit;
}
#endif
static inline __attribute__((always_inline)) uint32_t tage_hits(const tage_entry *tables, const bp_geom *g, uint32_t n,
                                 const uint16_t *idx, const uint16_t *tag) {
  return tage_hits_k(tables, g, n, idx, tag, false);
}

/* (internal to the predictions) Provider and alternate from the indices and tags in m. */
static inline __attribute__((always_inline)) bool bp_tage_choose(const void *st, const bp_geom *g, const tage_hdr *hd,
                                                                 const tage_entry *tables, uint32_t n, bp_meta *m,
                                                                 const bool k12) {
  uint32_t hit = tage_hits_k(tables, g, n, m->idx, m->tag, k12);
  int prov = tage_top(hit);
  const uint8_t *base = (const uint8_t *)st + tage_base_off();
  bool pred;
  if (!prov) {
    pred = base[m->idx[0]] >= 2;
  } else {
    const tage_entry *pe = &tables[g->toff[prov - 1] + m->idx[prov]];
    bool weak = (pe->ctr == 0 || pe->ctr == -1) && pe->u == 0;
    if (weak && hd->use_alt >= 0) { /* the alternate: the next longest match, or the base */
      int alt = tage_top(hit & ~(1u << prov));
      pred = alt ? tables[g->toff[alt - 1] + m->idx[alt]].ctr >= 0 : base[m->idx[0]] >= 2;
    } else {
      pred = pe->ctr >= 0;
    }
  }
  m->pred = pred;
  return pred;
}

/* The terms of a prediction that depend on the branch's PC alone (and the geometry): a fetch
 * loop that predicts the same PCs again and again (the model's wrong-path fetch blocks) keeps
 * them with the PC and predicts with bp_tage_predict_pc. */
typedef struct bp_tage_pc {
  _Alignas(16) uint16_t pch[BP_TAGE_MAX]; /* lane l: (pc ^ (pc >> ishift)) of table l + 1, low 16
                                             bits (aligned: operands of the vector instructions) */
  uint16_t tpc;              /* the tag's PC term, low 16 bits */
  uint16_t idx0;             /* the base table's index */
} bp_tage_pc;

static inline __attribute__((always_inline)) void bp_tage_pc_init(const bp_geom *g, uint64_t pc, bp_tage_pc *p) {
  p->idx0 = (uint16_t)((pc ^ (pc >> g->bim_shift)) & g->bim_mask); /* tage_base_index */
  const uint32_t pcl = (uint32_t)pc ^ (uint32_t)(pc >> 32);
  p->tpc = (uint16_t)(pcl ^ (pcl >> 11)) & g->tmask16[0]; /* (masked here: the tag is not) */
  /* The low 16 bits of pc >> s (1 <= s <= 15) are (lo >> s) | (hi << (16 - s)): the high half
   * of lo * 2^(16-s) and the low half of hi * 2^(16-s), one multiply each for all lanes. */
  const tage_v8 lo = tage_v8_dup(pcl), hi = tage_v8_dup(pcl >> 16);
  for (uint32_t l = 0; l < BP_TAGE_MAX; l += 8) {
    const tage_v8 pm = tage_v8_ld(&g->pcm16[l]);
#if defined(__SSE2__)
    const tage_v8 lo_s = (tage_v8)_mm_mulhi_epu16((__m128i)lo, (__m128i)pm);
#else
    tage_v8 lo_s;
    for (int k = 0; k < 8; k++) lo_s[k] = (uint16_t)(((uint32_t)lo[k] * pm[k]) >> 16);
#endif
    const tage_v8 pch = (lo ^ lo_s ^ (hi * pm)) & tage_v8_ld(g->imask16); /* (as tpc) */
    memcpy(&p->pch[l], &pch, sizeof pch);
  }
}

/* The prediction from the PC terms p (of the branch's PC). Indices and tags of every table, eight
 * tables at a time, in 16-bit lanes (every term is masked to at most 16 bits, so 16-bit
 * arithmetic gives the same low bits):
 *   idx = pc ^ (pc >> ishift) ^ index fold ^ (path bits << (table mod 4))
 * (the path term is a cheap stand-in for the F function of the reference code: the table's
 * newest path bits, shifted by the table number so tables differ),
 *   tag = pc' ^ tag fold ^ (second tag fold << 1). */
static inline __attribute__((always_inline)) bool bp_tage_predict_pc_k(const void *st, const bp_geom *g,
                                                                       const bp_hist *h, const bp_tage_pc *p,
                                                                       bp_meta *m, const bool k12) {
  const tage_hdr *hd = st;
  const uint32_t n = k12 ? 12 : g->tage_n; /* (derived from the configuration by bp_geom_init) */
  const uint32_t nvec = k12 || g->nvec > 1 ? 2 : 1;
  const tage_entry *tables = (const tage_entry *)((const char *)st + g->tage_tab);
  m->idx[0] = p->idx0;
  const tage_v8 vph = tage_v8_dup(h->phist);
  const tage_v8 vtpc = tage_v8_dup(p->tpc);
  /* Every term is below its mask already, so the sums are: the PC terms are masked (pc_init),
   * the folds are as wide as the index (tag: tage_tag_bits and one bit less, shifted), and the
   * path mask keeps the bits the shift leaves inside the index (pmask16). */
  for (uint32_t v = 0; v < nvec; v++) {
    const uint32_t l = 8 * v;
    const tage_v8 pch = bp_v8_lda(&p->pch[l]);
    const tage_v8 path = (vph & bp_v8_geo(bp_k12_pmask16, g->pmask16, l, k12)) * bp_v8_geo(bp_k12_pmul16, g->pmul16, l, k12);
    const tage_v8 vi = pch ^ bp_v8_lda(&h->fold[BP_FOLD_IDX + l]) ^ path;
    const tage_v8 vt = vtpc ^ bp_v8_lda(&h->fold[BP_FOLD_TAG0 + l]) ^ (bp_v8_lda(&h->fold[BP_FOLD_TAG1 + l]) << 1);
    memcpy(&m->idx[1 + l], &vi, sizeof vi);
    memcpy(&m->tag[1 + l], &vt, sizeof vt);
  }
  return bp_tage_choose(st, g, hd, tables, n, m, k12);
}

/* (bp_tage_predict_pc_k with k12 only where g->k12: the geometry's tests are constants there) */
static inline __attribute__((always_inline)) bool bp_tage_predict_pc(const void *st, const bp_geom *g,
                                                                     const bp_hist *h, const bp_tage_pc *p,
                                                                     bp_meta *m) {
  return bp_tage_predict_pc_k(st, g, h, p, m, false);
}

/* The prediction (tage_predict in bpred_tage.c; inline for the fetch loop of the model, which
 * predicts every conditional branch of both paths with it): bp_tage_predict_pc with the PC
 * terms computed here (bp_tage_predict_k: bp_tage_predict_pc_k's, k12 where g->k12). */
static inline __attribute__((always_inline)) bool bp_tage_predict_k(const void *st, const bp_geom *g,
                                                                    const bp_hist *h, uint64_t pc, bp_meta *m,
                                                                    const bool k12) {
  bp_tage_pc p;
  bp_tage_pc_init(g, pc, &p);
  return bp_tage_predict_pc_k(st, g, h, &p, m, k12);
}
static inline __attribute__((always_inline)) bool bp_tage_predict(const void *st, const bp_geom *g, const bp_hist *h,
                                                                  uint64_t pc, bp_meta *m) {
  return bp_tage_predict_k(st, g, h, pc, m, false);
}

#endif

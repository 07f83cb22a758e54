/* bpred.h — branch prediction for the out-of-order model: global history with folded
 * registers, pluggable conditional-direction predictors (TAGE, gshare, bimodal) as a table of
 * functions (ChampSim style), a BTB, an indirect-target predictor and a JRS confidence
 * estimator.
 *
 * State. Every predictor keeps all its mutable state in a caller-provided byte region (inside
 * the model's copied state block); the structures declared here that hold pointers (bp_geom)
 * are derived from the configuration only and are never copied. No randomness: TAGE
 * allocation uses a deterministic counter in its state.
 *
 * History. bp_hist is the speculative global history: the outcome bits of every branch in
 * fetch order (taken = 1; unconditional branches push 1) kept in a bit ring of BP_RING bits,
 * a 64-bit window of the newest bits, a 32-bit path history (one bit of each branch PC per
 * branch) and the folded (compressed) forms of the history that TAGE indexes with. A copy of
 * bp_hist is a complete checkpoint as long as fewer than BP_RING - max history bits were
 * pushed since (the model has far fewer branches in flight). Cost per pushed bit and per
 * prediction is what bounds the model's speed on branchy code (most fetched instructions are
 * on a wrong path there), hence 16-bit folds and indices, eight tables per SSE2 vector, and
 * the ring stored twice so the bits leaving the windows are read without wrap-around.
 *
 * TAGE design (Seznec & Michaud, "A case for (partially) TAgged GEometric history length
 * branch predictors", JILP 2006; update rules after the CBP-2 reference code):
 *   - a base bimodal table of 2^bimodal_bits 2-bit counters indexed by PC;
 *   - tage_tables tagged tables of 2^tage_bits entries, table i (1-based) indexed with the
 *     newest L(i) history bits, L geometric from tage_min_hist to tage_max_hist;
 *     index = pc ^ (pc >> (bits - i)) ^ fold_idx(L(i), bits) ^ (newest min(L(i), 16) path bits
 *     << (i mod 4)),
 *     tag = pc ^ fold_tag0(L(i), tagbits) ^ (fold_tag1(L(i), tagbits - 1) << 1);
 *   - each entry: a 3-bit signed counter, a tage_tag_bits tag and a 2-bit useful counter;
 *   - prediction: the longest matching table (provider); the next longest match or the base
 *     (alternate) is used instead when the provider entry is newly allocated (weak counter)
 *     and the 4-bit USE_ALT_ON_NA counter says alternates are better for new entries;
 *   - update (at commit, with the indices and tags of the prediction; provider and alternate
 *     are the longest and next longest tables whose entry there still holds the predicted tag,
 *     so entries replaced since no longer count): the provider counter moves
 *     toward the outcome; the useful counter goes up when provider and alternate disagree and
 *     the provider was right, down when it was wrong; on a misprediction, one entry is
 *     allocated in a longer table whose useful counter is 0 (the first such, skipping one
 *     candidate when a deterministic allocation counter says so), or every candidate's useful
 *     counter is decremented when none is free; every 2^tage_u_reset updates all useful
 *     counters are halved (alternately the high and the low bit cleared).
 *   No loop predictor or statistical corrector.
 * gshare: 2^gshare_bits 2-bit counters indexed by pc ^ newest gshare_hist history bits.
 * bimodal: 2^bimodal_bits 2-bit counters indexed by pc. */
#ifndef WHATIF_BPRED_H
#define WHATIF_BPRED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "params.h"
#include "util.h"
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#define BP_TAGE_MAX 16 /* tagged tables at most */
#define BP_RING 4096   /* history ring bits (power of two) */
#define BP_RING_BYTES (2 * BP_RING) /* the ring is stored twice in a row (one bit per byte): the
                                       bit L pushes back is at a fixed offset, no wrap-around */
#define BP_MAX_HIST 2048
#define BP_NFOLD (3 * BP_TAGE_MAX)
/* Fold layout: three blocks of BP_TAGE_MAX lanes, lane i - 1 for tagged table i: the index
 * folds (BP_FOLD_IDX + i - 1), the tag folds (BP_FOLD_TAG0 + i - 1) and the second, one bit
 * narrower tag folds (BP_FOLD_TAG1 + i - 1). Unused lanes stay 0. */
#define BP_FOLD_IDX 0
#define BP_FOLD_TAG0 BP_TAGE_MAX
#define BP_FOLD_TAG1 (2 * BP_TAGE_MAX)

enum { BP_TAGE = 0, BP_GSHARE, BP_BIMODAL, BP_NUM };
enum { RAS_REPAIR_NONE = 0, RAS_REPAIR_TOS, RAS_REPAIR_FULL, RAS_REPAIR_NUM };

/* Predictor configuration (the `bpred` section of a machine configuration). */
typedef struct bp_config {
  int32_t type;            /* BP_* direction predictor */
  uint32_t bimodal_bits;   /* log2 entries of the bimodal table (TAGE's base table) */
  uint32_t gshare_bits;    /* log2 entries of the gshare table */
  uint32_t gshare_hist;    /* history bits hashed into the gshare index */
  uint32_t tage_tables;    /* tagged tables */
  uint32_t tage_bits;      /* log2 entries per tagged table */
  uint32_t tage_tag_bits;  /* tag bits */
  uint32_t tage_min_hist;  /* history bits of the shortest table */
  uint32_t tage_max_hist;  /* history bits of the longest table */
  uint32_t tage_u_reset;   /* log2 updates between useful-counter decays */
  uint32_t btb_entries;    /* branch target buffer entries */
  uint32_t btb_ways;
  uint32_t ind_bits;       /* log2 entries of the indirect-target table */
  uint32_t ind_hist;       /* history bits hashed into the indirect index */
  uint32_t ras_depth;      /* return-address stack entries */
  int32_t ras_repair;      /* RAS_REPAIR_*: what a squash restores */
  uint32_t conf_bits;      /* log2 entries of the JRS confidence table */
  uint32_t conf_max;       /* saturation value of its resetting counters */
  uint32_t conf_threshold; /* counter >= threshold: high confidence */
  uint32_t conf_gate;      /* pipeline gating threshold N (Manne et al., ISCA 1998): fetch stops
                              while MORE than N low-confidence branches are unresolved (fetched,
                              not yet executed or squashed); 0 gates at the first one */
} bp_config;

extern const param_table bp_param_table;
const char *bp_type_name(int type);
void bp_config_default(bp_config *c);
wi_rc bp_config_check(const bp_config *c, wi_err *err);

/* ---- global history ----------------------------------------------------------------------- */

typedef struct bp_hist {
  uint32_t ptr;             /* ring index of the newest bit */
  uint32_t phist;           /* path history */
  uint64_t g64;             /* newest 64 bits, bit 0 newest */
  _Alignas(16) uint16_t fold[BP_NFOLD]; /* folded histories (layout: BP_FOLD_*); 16-bit lanes:
                               every fold is at most 16 bits wide (tage_bits, tage_tag_bits <= 16),
                               so eight tables update and index in one SSE2 vector (aligned: the
                               vector instructions take the loads as operands) */
} bp_hist;

/* Geometry derived from a configuration: history length and width of every folded register. */
typedef struct bp_geom {
  const bp_config *cfg;
  uint32_t nfold;           /* fold entries in use: BP_NFOLD for TAGE (unused lanes have olen 0),
                               0 otherwise */
  uint32_t olen[BP_NFOLD];  /* original length (history bits), by fold entry (BP_FOLD_*) */
  uint32_t clen[BP_NFOLD];  /* compressed length (bits) */
  uint32_t hlen[BP_TAGE_MAX + 1]; /* TAGE: history length per table (1-based) */
  uint32_t outpt[BP_NFOLD];       /* olen % clen: where the leaving bit folds in */
  uint32_t outm[BP_NFOLD];        /* 1 << outpt */
  uint32_t cmask[BP_NFOLD];       /* (1 << clen) - 1 */
  uint32_t ishift[BP_TAGE_MAX + 1]; /* TAGE index: pc >> ishift */
  uint32_t pmask[BP_TAGE_MAX + 1];  /* TAGE: path-history bits used */
  uint32_t prot[BP_TAGE_MAX + 1];   /* TAGE: path-history rotation */
  /* 16-bit lane forms for the vector code, lane l = table l + 1 (unused lanes 0): */
  uint32_t nvec;                    /* TAGE: vectors of eight tables in use (1 or 2) */
  uint32_t fsh[3];                  /* per fold block: clen - 1 (the bit that wraps around) */
  uint16_t outm16[BP_NFOLD];        /* outm */
  uint16_t cmask16[BP_NFOLD];       /* cmask */
  uint16_t pcm16[BP_TAGE_MAX];      /* 1 << (16 - ishift): pc >> ishift as 16-bit multiplies */
  uint16_t pmask16[BP_TAGE_MAX];    /* pmask, without the bits pmul16 shifts out of the index */
  uint16_t pmul16[BP_TAGE_MAX];     /* 1 << (table mod 4): the path term's shift */
  uint16_t imask16[8], tmask16[8];  /* TAGE: index and tag masks in every lane */
  uint32_t toff[BP_TAGE_MAX];       /* TAGE: first entry of the lane's table over all tables
                                       ((table - 1) << tage_bits; 0 for lanes past the last) */
  uint16_t toff16[BP_TAGE_MAX];     /* toff, when ent16 */
  uint32_t ent16;                   /* TAGE: the entries of all tables number at most 1 << 16 */
  uint32_t k12;                     /* TAGE: golden_cove's (the default) geometry, BP_K12_*: the
                                       _k variants with k12 have it as constants */
  uint32_t nquad;                   /* TAGE: groups of four tables in use ((tables + 3) / 4) */
  size_t tage_tab;                  /* TAGE: byte offset of the tagged tables in its state */
  uint32_t tage_n;                  /* TAGE: tagged tables (tage_tables, at most BP_TAGE_MAX) */
  uint32_t bim_shift, bim_mask;     /* TAGE base table index: (pc ^ pc >> bim_shift) & bim_mask */
  uint32_t same2;                   /* TAGE: tage_tag_bits - 1 == tage_bits, so every second tag
                                       fold equals its table's index fold */
  ptrdiff_t rneg[BP_TAGE_MAX];      /* -olen of the lane's table: where its leaving bit is in the
                                       ring, from the newest bit (-1 for lanes past the last
                                       table: a 16-bit read there stays inside the ring) */
  /* TAGE, nine to twelve tables with same2 (the default twelve): the index and first tag folds
   * of tables 9..12 updated as one vector (lanes 0..3: index folds, 4..7: tag folds), with
   * their outm16, cmask16 and 1 << (17 - clen) (the overflow bit fold >> (clen - 1) as one
   * unsigned high multiply, the two halves having different widths). */
  uint16_t pk_outm[8], pk_cmask[8], pk_ov[8];
} bp_geom;

/* golden_cove's (the default) TAGE geometry, bp_geom.k12: twelve tables of 2^11 entries, 12-bit
 * tags (so same2 and ent16) and these history lengths (4 to 640). */
#define BP_K12_BITS 11u
#define BP_K12_TAG_BITS 12u
static const uint16_t bp_k12_hlen[12] = {4, 6, 10, 16, 25, 40, 64, 101, 160, 254, 403, 640};
/* bp_geom's lane vectors of that geometry, as constants (aligned: the vector instructions take
 * them as memory operands, where bp_geom's need a load each); test_bpred checks them against
 * bp_geom_init. Per table i (1..12) of history length L: the leaving bit folds in at L % clen. */
#define BP_K12_L4(f, a, b, c, d) f(a), f(b), f(c), f(d)
#define BP_K12_LANES(f) BP_K12_L4(f, 4, 6, 10, 16), BP_K12_L4(f, 25, 40, 64, 101), BP_K12_L4(f, 160, 254, 403, 640)
#define BP_K12_OI(L) (uint16_t)(1u << ((L) % BP_K12_BITS))
#define BP_K12_OT(L) (uint16_t)(1u << ((L) % BP_K12_TAG_BITS))
#define BP_K12_PM(L, s) (uint16_t)(((L) >= 16 ? 0xffffu : (1u << ((L) & 15)) - 1) & (0x7ffu >> (s)))
#define BP_K12_IM 0x7ff
#define BP_K12_TM 0xfff
static _Alignas(16) const uint16_t bp_k12_outm16[2 * BP_TAGE_MAX] = {BP_K12_LANES(BP_K12_OI), 0, 0, 0, 0,
                                                                       BP_K12_LANES(BP_K12_OT)};
static _Alignas(16) const uint16_t bp_k12_cmask16[2 * BP_TAGE_MAX] = {
    BP_K12_IM, BP_K12_IM, BP_K12_IM, BP_K12_IM, BP_K12_IM, BP_K12_IM, BP_K12_IM, BP_K12_IM,
    BP_K12_IM, BP_K12_IM, BP_K12_IM, BP_K12_IM, 0,         0,         0,         0,
    BP_K12_TM, BP_K12_TM, BP_K12_TM, BP_K12_TM, BP_K12_TM, BP_K12_TM, BP_K12_TM, BP_K12_TM,
    BP_K12_TM, BP_K12_TM, BP_K12_TM, BP_K12_TM, 0,         0,         0,         0};
static _Alignas(16) const uint16_t bp_k12_pmask16[BP_TAGE_MAX] = {
    BP_K12_PM(4, 1),   BP_K12_PM(6, 2),   BP_K12_PM(10, 3),  BP_K12_PM(16, 0),  BP_K12_PM(25, 1),  BP_K12_PM(40, 2),
    BP_K12_PM(64, 3),  BP_K12_PM(101, 0), BP_K12_PM(160, 1), BP_K12_PM(254, 2), BP_K12_PM(403, 3), BP_K12_PM(640, 0),
    0,                 0,                 0,                 0};
static _Alignas(16) const uint16_t bp_k12_pmul16[BP_TAGE_MAX] = {2, 4, 8, 1, 2, 4, 8, 1, 2, 4, 8, 1, 0, 0, 0, 0};
static _Alignas(16) const uint16_t bp_k12_toff16[BP_TAGE_MAX] = {
    0 << 11, 1 << 11, 2 << 11, 3 << 11, 4 << 11, 5 << 11, 6 << 11, 7 << 11, 8 << 11, 9 << 11, 10 << 11, 11 << 11, 0, 0, 0, 0};
/* pk_*: tables 9..12's index (lanes 0..3) and tag (4..7) folds; 1 << (17 - clen) */
static _Alignas(16) const uint16_t bp_k12_pk_outm[8] = {BP_K12_OI(160), BP_K12_OI(254), BP_K12_OI(403), BP_K12_OI(640),
                                                       BP_K12_OT(160), BP_K12_OT(254), BP_K12_OT(403), BP_K12_OT(640)};
static _Alignas(16) const uint16_t bp_k12_pk_cmask[8] = {BP_K12_IM, BP_K12_IM, BP_K12_IM, BP_K12_IM,
                                                        BP_K12_TM, BP_K12_TM, BP_K12_TM, BP_K12_TM};
static _Alignas(16) const uint16_t bp_k12_pk_ov[8] = {1 << 6, 1 << 6, 1 << 6, 1 << 6, 1 << 5, 1 << 5, 1 << 5, 1 << 5};

void bp_geom_init(bp_geom *g, const bp_config *c);
/* Reset h and ring (BP_RING_BYTES bytes: BP_RING bits, one per byte, stored twice). */
void bp_hist_init(bp_hist *h, uint8_t *ring);
/* Eight 16-bit lanes (GCC/Clang vector extension: SSE2 on x86-64, NEON on arm64). */
typedef uint16_t bp_v8 __attribute__((vector_size(16)));

static inline bp_v8 bp_v8_load(const uint16_t *p) {
  bp_v8 v;
  memcpy(&v, p, sizeof v);
  return v;
}
static inline void bp_v8_store(uint16_t *p, bp_v8 v) { memcpy(p, &v, sizeof v); }
/* An aligned load (16 bytes at p, p 16-aligned): the vector instructions take it as an operand. */
typedef uint16_t bp_v8a __attribute__((vector_size(16), may_alias));
static inline bp_v8 bp_v8_lda(const uint16_t *p) { return (bp_v8) * (const bp_v8a *)p; }
/* The lanes from l of a geometry vector: the k12 constant k, or bp_geom's g. */
static inline __attribute__((always_inline)) bp_v8 bp_v8_geo(const uint16_t *k, const uint16_t *g, uint32_t l,
                                                             const bool k12) {
  return k12 ? bp_v8_lda(k + l) : bp_v8_load(g + l);
}

/* (internal to bp_hist_push) The leaving bits of lanes l .. l + 3 (l .. l + 7 with upper), 0 or
 * 1 per lane; r[-L] is the bit pushed L pushes before the newest (r[0]). With SSE2 each lane is
 * one 16-bit insert straight from the ring (the byte above, the next newer bit, is masked off;
 * unused lanes read r[-1]: rneg, so the byte above stays inside the ring). */
static inline __attribute__((always_inline)) bp_v8
bp_hist_leave8(const bp_geom *g, const uint8_t *r, uint32_t l, bool upper, const bool k12) {
  /* (k12: the offsets are constants, so displacements of the ring loads) */
  ptrdiff_t o[8];
  for (uint32_t k = 0; k < 8; k++) o[k] = k12 && l + k < 12 ? -(ptrdiff_t)bp_k12_hlen[l + k] : g->rneg[l + k];
#if defined(__SSE2__)
  /* (inserts from memory: GCC builds the vector from scalar loads with more instructions) */
  uint16_t x;
  __m128i v = _mm_setzero_si128();
#define BP_LEAVE_LANE(k)                                                                         \
  do {                                                                                           \
    memcpy(&x, r + o[k], 2);                                                                     \
    v = _mm_insert_epi16(v, x, (k));                                                             \
  } while (0)
  BP_LEAVE_LANE(0);
  BP_LEAVE_LANE(1);
  BP_LEAVE_LANE(2);
  BP_LEAVE_LANE(3);
  if (upper) {
    BP_LEAVE_LANE(4);
    BP_LEAVE_LANE(5);
    BP_LEAVE_LANE(6);
    BP_LEAVE_LANE(7);
  }
#undef BP_LEAVE_LANE
  const bp_v8 one = {1, 1, 1, 1, 1, 1, 1, 1};
  return (bp_v8)v & one;
#else
  bp_v8 out = {r[o[0]], r[o[1]], r[o[2]], r[o[3]], 0, 0, 0, 0};
  if (upper) {
    out[4] = r[o[4]];
    out[5] = r[o[5]];
    out[6] = r[o[6]];
    out[7] = r[o[7]];
  }
  return out;
#endif
}

/* (internal to bp_hist_push) The fold update of eight tables from lane l. With !upper, lanes
 * l + 4 .. l + 7 are unused (their leaving bits are not read: outm is 0 there). With same2 the
 * second tag folds have the index folds' geometry (tage_tag_bits - 1 == tage_bits: same length
 * and width, so the same value at every push): they take the index folds' result. */
static inline __attribute__((always_inline)) void
bp_hist_fold8(const bp_geom *g, bp_hist *h, const uint8_t *r, uint32_t l, bp_v8 vb, bool upper, bool same2,
              const bool k12) {
  bp_v8 out = -bp_hist_leave8(g, r, l, upper, k12); /* all ones where the leaving bit is set */
  bp_v8 f0 = bp_v8_lda(&h->fold[BP_FOLD_IDX + l]), f1 = bp_v8_lda(&h->fold[BP_FOLD_TAG0 + l]);
  const uint32_t sh0 = k12 ? BP_K12_BITS - 1 : g->fsh[0], sh1 = k12 ? BP_K12_TAG_BITS - 1 : g->fsh[1];
  f0 = ((f0 << 1) | vb) ^ (bp_v8_geo(bp_k12_outm16, g->outm16, BP_FOLD_IDX + l, k12) & out) ^ (f0 >> sh0);
  f1 = ((f1 << 1) | vb) ^ (bp_v8_geo(bp_k12_outm16, g->outm16, BP_FOLD_TAG0 + l, k12) & out) ^ (f1 >> sh1);
  f0 &= bp_v8_geo(bp_k12_cmask16, g->cmask16, BP_FOLD_IDX + l, k12);
  bp_v8_store(&h->fold[BP_FOLD_IDX + l], f0);
  bp_v8_store(&h->fold[BP_FOLD_TAG0 + l], f1 & bp_v8_geo(bp_k12_cmask16, g->cmask16, BP_FOLD_TAG0 + l, k12));
  if (same2) {
    bp_v8_store(&h->fold[BP_FOLD_TAG1 + l], f0);
  } else {
    bp_v8 f2 = bp_v8_lda(&h->fold[BP_FOLD_TAG1 + l]);
    f2 = ((f2 << 1) | vb) ^ (bp_v8_load(&g->outm16[BP_FOLD_TAG1 + l]) & out) ^ (f2 >> g->fsh[2]);
    bp_v8_store(&h->fold[BP_FOLD_TAG1 + l], f2 & bp_v8_load(&g->cmask16[BP_FOLD_TAG1 + l]));
  }
}

#if defined(__SSE2__)
/* (internal to bp_hist_push) bp_hist_fold8 from lane 8 without upper, with same2, for the index
 * and first tag folds packed in one vector (pk_*: four lanes each; the leaving bit is the
 * table's in both halves); the second tag folds take the index folds' result. Lanes 12..15 of
 * each block are not written (they stay 0: unused). */
static inline __attribute__((always_inline)) void
bp_hist_fold4x2(const bp_geom *g, bp_hist *h, const uint8_t *r, bp_v8 vb, const bool k12) {
  const __m128i o4 = (__m128i)bp_hist_leave8(g, r, 8, false, k12);
  const bp_v8 out = -(bp_v8)_mm_unpacklo_epi64(o4, o4); /* all ones where the leaving bit is set */
  const __m128i lo = _mm_loadl_epi64((const __m128i *)&h->fold[BP_FOLD_IDX + 8]);
  const __m128i hi = _mm_loadl_epi64((const __m128i *)&h->fold[BP_FOLD_TAG0 + 8]);
  bp_v8 f = (bp_v8)_mm_unpacklo_epi64(lo, hi);
  const bp_v8 ov = (bp_v8)_mm_mulhi_epu16((__m128i)f, (__m128i)bp_v8_geo(bp_k12_pk_ov, g->pk_ov, 0, k12));
  f = (((f << 1) | vb) ^ (bp_v8_geo(bp_k12_pk_outm, g->pk_outm, 0, k12) & out) ^ ov) &
      bp_v8_geo(bp_k12_pk_cmask, g->pk_cmask, 0, k12);
  _mm_storel_epi64((__m128i *)&h->fold[BP_FOLD_IDX + 8], (__m128i)f);
  _mm_storel_epi64((__m128i *)&h->fold[BP_FOLD_TAG1 + 8], (__m128i)f);
  _mm_storel_epi64((__m128i *)&h->fold[BP_FOLD_TAG0 + 8], _mm_unpackhi_epi64((__m128i)f, (__m128i)f));
}
#endif

/* Push one outcome bit for the branch at pc (always inline: fetch pushes one for every branch, and
 * GCC leaves it out of line in the big fetch loops otherwise). With k12 (only where g->k12) the
 * geometry's tests are constants. */
static inline __attribute__((always_inline)) void bp_hist_push_k(const bp_geom *g, bp_hist *h, uint8_t *ring,
                                                                  uint64_t pc, bool taken, const bool k12) {
  uint32_t p = (h->ptr + 1) & (BP_RING - 1);
  uint8_t b = taken ? 1 : 0;
  ring[p] = ring[p + BP_RING] = b;
  h->ptr = p;
  h->g64 = (h->g64 << 1) | b;
  h->phist = (h->phist << 1) | (uint32_t)((pc ^ (pc >> 3)) & 1);
  if (!k12 && !g->nfold) return;
  /* Each fold: shift in the new bit, cancel the bit leaving the window (where it folds in:
   * outm), fold the overflow bit back to the bottom. As the fold stays below 1 << clen, the
   * overflow bit is bit clen - 1 of the old fold (fsh), and 16-bit lanes lose nothing (the bit
   * shifted out at the top is above the mask). The three folds of a table share the window, so
   * the leaving bit is read once per table; eight tables at a time. Unused lanes keep 0 (outm
   * and cmask 0). */
  const uint8_t *r = ring + p + BP_RING; /* olen <= BP_MAX_HIST < BP_RING */
  const bp_v8 vb = {b, b, b, b, b, b, b, b};
  const uint32_t nq = k12 ? 3 : g->nquad;
  if (k12 || g->same2) {
    bp_hist_fold8(g, h, r, 0, vb, nq > 1, true, k12);
#if defined(__SSE2__)
    if (nq == 3) {
      bp_hist_fold4x2(g, h, r, vb, k12);
      return;
    }
#endif
    if (nq > 2) bp_hist_fold8(g, h, r, 8, vb, nq > 3, true, k12);
  } else {
    bp_hist_fold8(g, h, r, 0, vb, nq > 1, false, false);
    if (nq > 2) bp_hist_fold8(g, h, r, 8, vb, nq > 3, false, false);
  }
}

static inline __attribute__((always_inline)) void bp_hist_push(const bp_geom *g, bp_hist *h, uint8_t *ring,
                                                                uint64_t pc, bool taken) {
  bp_hist_push_k(g, h, ring, pc, taken, false);
}

/* ---- direction predictors (table of functions) ------------------------------------------- */

/* What a prediction computed, kept until the update at commit. */
typedef struct bp_meta {
  uint16_t idx[BP_TAGE_MAX + 1]; /* [0] base / gshare / bimodal index, [i] tagged table i */
  uint16_t tag[BP_TAGE_MAX + 1];
  uint8_t pred;                  /* predicted direction */
  uint8_t pad[3];
} bp_meta;

typedef struct bp_ops {
  const char *name;
  size_t (*state_bytes)(const bp_config *c);
  void (*init)(void *st, const bp_config *c);
  /* Predict the branch at pc under history h; fill m (pred and whatever update needs). */
  bool (*predict)(const void *st, const bp_geom *g, const bp_hist *h, uint64_t pc, bp_meta *m);
  /* Train with the outcome, using the meta of the prediction. */
  void (*update)(void *st, const bp_geom *g, uint64_t pc, bool taken, const bp_meta *m);
} bp_ops;

extern const bp_ops bp_tage_ops, bp_gshare_ops, bp_bimodal_ops;
/* The ops of a BP_* type. */
const bp_ops *bp_ops_of(int type);

/* ---- BTB ----------------------------------------------------------------------------------- */

typedef struct bp_btb_entry {
  uint32_t tag;     /* 0 = invalid */
  uint32_t stamp;   /* LRU stamp */
  uint64_t target;
} bp_btb_entry;

/* State bytes of a BTB of c->btb_entries (rounded to sets of btb_ways, sets a power of two). */
size_t bp_btb_bytes(const bp_config *c);
/* Look up pc; returns true and *target on a hit (and refreshes LRU). */
bool bp_btb_lookup(void *st, const bp_config *c, uint64_t pc, uint64_t *target);

/* (BTB internals, inline for the fetch loop: bp_btb_lookup_inl is bp_btb_lookup.) State layout:
 * this header, 8 bytes, then sets x btb_ways entries. */
typedef struct bp_btb_hdr {
  uint32_t clock;   /* LRU clock */
  uint32_t sets;    /* 0 until the first access (then bp_btb_sets) */
} bp_btb_hdr;
uint32_t bp_btb_sets(const bp_config *c);

static inline bp_btb_entry *bp_btb_set(void *st, const bp_config *c, uint64_t pc, uint32_t *tag) {
  bp_btb_hdr *h = st;
  if (__builtin_expect(!h->sets, 0)) h->sets = bp_btb_sets(c);
  uint64_t x = wi_mix64(pc);
  *tag = (uint32_t)(x >> 32) | 1u;
  uint32_t set = (uint32_t)x & (h->sets - 1);
  return (bp_btb_entry *)((char *)st + sizeof(bp_btb_hdr) + 8) + (size_t)set * c->btb_ways;
}

/* (internal to the lookups) Search set e (ways entries) for tag; on a hit refresh its LRU stamp. */
static inline bool bp_btb_search(bp_btb_hdr *h, bp_btb_entry *e, uint32_t ways, uint32_t tag, uint64_t *target) {
#if defined(__SSE2__)
  /* Four ways per step: their tags gathered into one vector and compared at once. A set holds
   * a tag at most once (bp_btb_update rewrites the way that has it), so the order of the search
   * does not change its result: from the last ways, which bp_btb_update fills first (the last
   * empty way is its victim), so a hit in a set not yet full takes one step. */
  if ((ways & 3) == 0) {
    const __m128i vt = _mm_set1_epi32((int)tag);
    for (uint32_t w = ways; w;) {
      w -= 4;
      const __m128i *p = (const __m128i *)&e[w];
      __m128i a = _mm_loadu_si128(p), b = _mm_loadu_si128(p + 1), x = _mm_loadu_si128(p + 2),
              d = _mm_loadu_si128(p + 3);
      __m128i tags = _mm_unpacklo_epi64(_mm_unpacklo_epi32(a, b), _mm_unpacklo_epi32(x, d));
      int hit = _mm_movemask_ps(_mm_castsi128_ps(_mm_cmpeq_epi32(tags, vt)));
      if (hit) {
        bp_btb_entry *f = &e[w + (uint32_t)__builtin_ctz((unsigned)hit)];
        f->stamp = ++h->clock;
        *target = f->target;
        return true;
      }
    }
    return false;
  }
#endif
  for (uint32_t w = ways; w--;) /* (from the last ways, as above) */
    if (e[w].tag == tag) {
      e[w].stamp = ++h->clock;
      *target = e[w].target;
      return true;
    }
  return false;
}

static inline bool bp_btb_lookup_inl(void *st, const bp_config *c, uint64_t pc, uint64_t *target) {
  uint32_t tag;
  bp_btb_entry *e = bp_btb_set(st, c, pc, &tag);
  return bp_btb_search(st, e, c->btb_ways, tag, target);
}

/* The set and tag of pc (bp_btb_set's, without the state: a pure function of pc and the
 * configuration, so a fetch loop may keep them with the PC). */
static inline void bp_btb_where(const bp_config *c, uint64_t pc, uint32_t *set, uint32_t *tag) {
  uint64_t x = wi_mix64(pc);
  *tag = (uint32_t)(x >> 32) | 1u;
  *set = (uint32_t)x & (bp_btb_sets(c) - 1);
}

/* bp_btb_lookup_inl for the set and tag of bp_btb_where. */
static inline bool bp_btb_lookup_at(void *st, const bp_config *c, uint32_t set, uint32_t tag, uint64_t *target) {
  bp_btb_hdr *h = st;
  if (__builtin_expect(!h->sets, 0)) h->sets = bp_btb_sets(c); /* (as bp_btb_set) */
  bp_btb_entry *e = (bp_btb_entry *)((char *)st + sizeof(bp_btb_hdr) + 8) + (size_t)set * c->btb_ways;
  return bp_btb_search(h, e, c->btb_ways, tag, target);
}
/* bp_btb_lookup_at with a hint: entry *ent (set * ways + way: where the caller found the tag
 * last; any entry of the set) is checked first; on a hit found by the search, *ent becomes its
 * entry. A set holds a tag at most once, so the result and the LRU update are the search's. (A
 * tag is in the set only after bp_btb_update, which sets h->sets: a hinted hit needs no check of
 * it.) */
static inline bool bp_btb_lookup_hint(void *st, const bp_config *c, uint32_t set, uint32_t tag, uint32_t *ent,
                                      uint64_t *target) {
  bp_btb_hdr *h = st;
  bp_btb_entry *e = (bp_btb_entry *)((char *)st + sizeof(bp_btb_hdr) + 8);
  bp_btb_entry *f = &e[*ent];
  if (__builtin_expect(f->tag == tag, 1)) {
    f->stamp = ++h->clock;
    *target = f->target;
    return true;
  }
  if (!bp_btb_lookup_at(st, c, set, tag, target)) return false;
  const uint32_t e0 = set * c->btb_ways;
  for (uint32_t w = 0; w < c->btb_ways; w++)
    if (e[e0 + w].tag == tag) *ent = e0 + w;
  return true;
}
/* Insert or update pc -> target. */
void bp_btb_update(void *st, const bp_config *c, uint64_t pc, uint64_t target);

/* ---- indirect targets ------------------------------------------------------------------------ */

typedef struct bp_ind_entry {
  uint32_t tag;     /* 0 = invalid */
  uint8_t conf;     /* 2-bit hysteresis */
  uint8_t pad[3];
  uint64_t target;
} bp_ind_entry;

size_t bp_ind_bytes(const bp_config *c);
/* Index for pc under history h (kept in the branch's meta until the update). */
uint32_t bp_ind_index(const bp_config *c, const bp_hist *h, uint64_t pc);
bool bp_ind_lookup(const void *st, const bp_config *c, uint32_t idx, uint64_t pc, uint64_t *target);
void bp_ind_update(void *st, const bp_config *c, uint32_t idx, uint64_t pc, uint64_t target);

/* ---- JRS confidence (resetting counters indexed by pc ^ history) -------------------------- */

size_t bp_conf_bytes(const bp_config *c);
uint32_t bp_conf_index(const bp_config *c, const bp_hist *h, uint64_t pc);
bool bp_conf_high(const void *st, const bp_config *c, uint32_t idx);
void bp_conf_update(void *st, const bp_config *c, uint32_t idx, bool correct);

#endif

/* bpred_tage.c — TAGE conditional-branch direction predictor (design in bpred.h). */
#include "bpred.h"

#include <string.h>

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
static size_t base_off(void) { return sizeof(tage_hdr); }
static size_t tab_off(const bp_config *c) {
  size_t o = base_off() + ((size_t)1 << c->bimodal_bits);
  return (o + 7) & ~(size_t)7;
}

static size_t tage_bytes(const bp_config *c) {
  return tab_off(c) + (size_t)c->tage_tables * ((size_t)1 << c->tage_bits) * sizeof(tage_entry);
}

static void tage_init(void *st, const bp_config *c) {
  memset(st, 0, tage_bytes(c));
  uint8_t *base = (uint8_t *)st + base_off();
  memset(base, 2, (size_t)1 << c->bimodal_bits); /* weakly taken */
}

static inline tage_entry *tab(void *st, const bp_config *c, uint32_t i) {
  return (tage_entry *)((char *)st + tab_off(c)) + (size_t)(i - 1) * ((size_t)1 << c->tage_bits);
}
static inline const tage_entry *ctab(const void *st, const bp_config *c, uint32_t i) {
  return (const tage_entry *)((const char *)st + tab_off(c)) + (size_t)(i - 1) * ((size_t)1 << c->tage_bits);
}

static inline uint32_t base_index(const bp_config *c, uint64_t pc) {
  return (uint32_t)(pc ^ (pc >> c->bimodal_bits)) & ((1u << c->bimodal_bits) - 1);
}


/* The highest set bit of a table mask (bit i: table i), 0 if none (bit 0 is never set). */
static inline int tage_top(uint32_t hit) { return 31 - __builtin_clz(hit | 1u); }

typedef uint32_t tage_v4 __attribute__((vector_size(16)));

static inline tage_v4 v4_ld(const uint32_t *p) {
  tage_v4 v;
  memcpy(&v, p, sizeof v);
  return v;
}

static bool tage_predict(const void *st, const bp_geom *g, const bp_hist *h, uint64_t pc, bp_meta *m) {
  const bp_config *c = g->cfg;
  const tage_hdr *hd = st;
  const uint32_t bits = c->tage_bits, mask = (1u << bits) - 1, tmask = (1u << c->tage_tag_bits) - 1;
  /* (bp_config_check keeps tage_tables <= BP_TAGE_MAX; the clamp tells the compiler) */
  const uint32_t n = c->tage_tables < BP_TAGE_MAX ? c->tage_tables : BP_TAGE_MAX, nl = (n + 3) & ~3u;
  const size_t per = (size_t)1 << bits;
  const tage_entry *tables = ctab(st, c, 1);
  m->idx[0] = (uint16_t)base_index(c, pc);
  const uint32_t pcl = (uint32_t)pc ^ (uint32_t)(pc >> 32);
  const uint32_t tpc = pcl ^ (pcl >> 11), ph = h->phist;
  /* Indices and tags of every table, four tables at a time (lane l is table l + 1):
   *   idx = pc ^ (pc >> ishift) ^ index fold ^ (path bits << (table mod 4))
   * (the path term is a cheap stand-in for the F function of the reference code: the table's
   * newest path bits, shifted by the table number so tables differ),
   *   tag = pc' ^ tag fold ^ (second tag fold << 1)
   * the path term's shift by (l + 1) mod 4 is a multiplication by {2, 4, 8, 1}. */
  uint32_t iv[BP_TAGE_MAX], tv[BP_TAGE_MAX];
  const tage_v4 vm = {mask, mask, mask, mask}, vtm = {tmask, tmask, tmask, tmask};
  const tage_v4 vph = {ph, ph, ph, ph}, vtpc = {tpc, tpc, tpc, tpc}, mul = {2, 4, 8, 1};
  const uint32_t bits_l = bits; /* table l starts at entry l << bits */
  tage_v4 base_l = {0, 1u << bits_l, 2u << bits_l, 3u << bits_l};
  const tage_v4 step = {4u << bits_l, 4u << bits_l, 4u << bits_l, 4u << bits_l};
  for (uint32_t l = 0; l < nl; l += 4) {
    /* pc ^ (pc >> ishift) built in registers: four scalar stores read back as one vector
     * would stall on store forwarding */
    const uint32_t *is = &g->ishift[l + 1];
    const tage_v4 pch = {pcl ^ (pcl >> is[0]), pcl ^ (pcl >> is[1]), pcl ^ (pcl >> is[2]), pcl ^ (pcl >> is[3])};
    tage_v4 vi = (pch ^ v4_ld(&h->fold[BP_FOLD_IDX + l]) ^ ((vph & v4_ld(&g->pmask[l + 1])) * mul)) & vm;
    tage_v4 vt = (vtpc ^ v4_ld(&h->fold[BP_FOLD_TAG0 + l]) ^ (v4_ld(&h->fold[BP_FOLD_TAG1 + l]) << 1)) & vtm;
    vi += base_l; /* entry number over all tables */
    base_l += step;
    memcpy(&iv[l], &vi, sizeof vi);
    memcpy(&tv[l], &vt, sizeof vt);
  }
  /* Branch-free: a data-dependent branch per table mispredicts often on the host and, waiting
   * for its table load, keeps the loads from overlapping. Bit i of hit: table i matches. */
  uint32_t hit = 0;
  for (uint32_t i = 1; i <= n; i++) {
    uint32_t e = iv[i - 1], tag = tv[i - 1];
    m->idx[i] = (uint16_t)(e & mask);
    m->tag[i] = (uint16_t)tag;
    hit |= (uint32_t)(tables[e].tag == tag) << i;
  }
  int prov = tage_top(hit);
  int alt = tage_top(hit & ~(1u << prov));
  const uint8_t *base = (const uint8_t *)st + base_off();
  bool base_pred = base[m->idx[0]] >= 2;
  bool pred;
  if (!prov) {
    pred = base_pred;
  } else {
    const tage_entry *pe = &tables[(size_t)(prov - 1) * per + m->idx[prov]];
    bool ppred = pe->ctr >= 0;
    bool apred = alt ? tables[(size_t)(alt - 1) * per + m->idx[alt]].ctr >= 0 : base_pred;
    bool weak = (pe->ctr == 0 || pe->ctr == -1) && pe->u == 0;
    pred = (weak && hd->use_alt >= 0) ? apred : ppred;
  }
  m->pred = pred;
  return pred;
}

static inline void ctr_update(int8_t *ctr, bool taken, int lo, int hi) {
  if (taken) {
    if (*ctr < hi) (*ctr)++;
  } else if (*ctr > lo) {
    (*ctr)--;
  }
}

static void tage_update(void *st, const bp_geom *g, uint64_t pc, bool taken, const bp_meta *m) {
  (void)pc;
  const bp_config *c = g->cfg;
  tage_hdr *hd = st;
  uint32_t n = c->tage_tables < BP_TAGE_MAX ? c->tage_tables : BP_TAGE_MAX; /* as in tage_predict */
  /* Re-find provider and alternate in the current tables at the predicted indices. */
  size_t per = (size_t)1 << c->tage_bits;
  const tage_entry *tables = ctab(st, c, 1);
  uint32_t hit = 0; /* branch-free, as in tage_predict */
  for (uint32_t i = 1; i <= n; i++) hit |= (uint32_t)(tables[(size_t)(i - 1) * per + m->idx[i]].tag == m->tag[i]) << i;
  int prov = tage_top(hit);
  int alt = tage_top(hit & ~(1u << prov));
  uint8_t *base = (uint8_t *)st + base_off();
  uint8_t *bctr = &base[m->idx[0]];
  bool base_pred = *bctr >= 2;
  tage_entry *pe = prov ? &tab(st, c, (uint32_t)prov)[m->idx[prov]] : NULL;
  bool ppred = pe ? pe->ctr >= 0 : base_pred;
  bool apred = alt ? tab(st, c, (uint32_t)alt)[m->idx[alt]].ctr >= 0 : base_pred;
  bool weak = pe && (pe->ctr == 0 || pe->ctr == -1) && pe->u == 0;
  bool final_pred = (weak && hd->use_alt >= 0) ? apred : ppred;

  if (weak && ppred != apred) {
    if (apred == taken) {
      if (hd->use_alt < 7) hd->use_alt++;
    } else if (hd->use_alt > -8) {
      hd->use_alt--;
    }
  }

  /* Allocate on a misprediction in a longer table. */
  if (final_pred != taken && prov < (int)n) {
    uint32_t start = (uint32_t)prov + 1;
    if ((hd->alloc & 1) && start < n) start++; /* deterministic stand-in for the random skip */
    hd->alloc++;
    bool done = false;
    for (uint32_t j = start; j <= n; j++) {
      tage_entry *e = &tab(st, c, j)[m->idx[j]];
      if (e->u == 0) {
        e->tag = m->tag[j];
        e->ctr = taken ? 0 : -1;
        done = true;
        break;
      }
    }
    if (!done)
      for (uint32_t j = (uint32_t)prov + 1; j <= n; j++) {
        tage_entry *e = &tab(st, c, j)[m->idx[j]];
        if (e->u) e->u--;
      }
  }

  /* Counters. */
  if (pe) {
    ctr_update(&pe->ctr, taken, -4, 3);
    if (weak) { /* a new entry: train the alternate too */
      if (alt) ctr_update(&tab(st, c, (uint32_t)alt)[m->idx[alt]].ctr, taken, -4, 3);
      else if (taken) { if (*bctr < 3) (*bctr)++; }
      else if (*bctr > 0) (*bctr)--;
    }
    if (ppred != apred) {
      if (ppred == taken) {
        if (pe->u < 3) pe->u++;
      } else if (pe->u) {
        pe->u--;
      }
    }
  } else if (taken) {
    if (*bctr < 3) (*bctr)++;
  } else if (*bctr > 0) {
    (*bctr)--;
  }

  /* Periodic decay of useful counters. */
  hd->tick++;
  if ((hd->tick & ((1ULL << c->tage_u_reset) - 1)) == 0) {
    uint8_t keep = (hd->tick >> c->tage_u_reset) & 1 ? 1 : 2; /* alternately clear msb / lsb */
    for (uint32_t i = 1; i <= n; i++) {
      tage_entry *t = tab(st, c, i);
      for (size_t k = 0; k < per; k++) t[k].u &= keep;
    }
  }
}

const bp_ops bp_tage_ops = {"tage", tage_bytes, tage_init, tage_predict, tage_update};

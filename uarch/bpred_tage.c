/* bpred_tage.c — TAGE conditional-branch direction predictor (design in bpred.h). */
#include "bpred_tage.h"

#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

static size_t tage_bytes(const bp_config *c) {
  return tage_tab_off(c) + (size_t)c->tage_tables * ((size_t)1 << c->tage_bits) * sizeof(tage_entry);
}

static void tage_init(void *st, const bp_config *c) {
  memset(st, 0, tage_bytes(c));
  uint8_t *base = (uint8_t *)st + tage_base_off();
  memset(base, 2, (size_t)1 << c->bimodal_bits); /* weakly taken */
}

static inline tage_entry *tab(void *st, const bp_config *c, uint32_t i) {
  return (tage_entry *)((char *)st + tage_tab_off(c)) + (size_t)(i - 1) * ((size_t)1 << c->tage_bits);
}
static inline const tage_entry *ctab(const void *st, const bp_config *c, uint32_t i) {
  return (const tage_entry *)((const char *)st + tage_tab_off(c)) + (size_t)(i - 1) * ((size_t)1 << c->tage_bits);
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
  uint32_t hit =
      g->k12 ? tage_hits_k(tables, g, 12, m->idx, m->tag, true) : tage_hits(tables, g, n, m->idx, m->tag);
  int prov = tage_top(hit);
  int alt = tage_top(hit & ~(1u << prov));
  uint8_t *base = (uint8_t *)st + tage_base_off();
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

static bool tage_predict(const void *st, const bp_geom *g, const bp_hist *h, uint64_t pc, bp_meta *m) {
  return bp_tage_predict(st, g, h, pc, m);
}

const bp_ops bp_tage_ops = {"tage", tage_bytes, tage_init, tage_predict, tage_update};

/* bpred_bimodal.c — bimodal: 2-bit saturating counters indexed by pc (Smith 1981). */
#include "bpred.h"

#include <string.h>

static size_t bim_bytes(const bp_config *c) { return (size_t)1 << c->bimodal_bits; }

static void bim_init(void *st, const bp_config *c) { memset(st, 2, bim_bytes(c)); }

static bool bim_predict(const void *st, const bp_geom *g, const bp_hist *h, uint64_t pc, bp_meta *m) {
  (void)h;
  const bp_config *c = g->cfg;
  uint32_t idx = (uint32_t)(pc ^ (pc >> c->bimodal_bits)) & ((1u << c->bimodal_bits) - 1);
  m->idx[0] = (uint16_t)idx;
  m->pred = ((const uint8_t *)st)[idx] >= 2;
  return m->pred;
}

static void bim_update(void *st, const bp_geom *g, uint64_t pc, bool taken, const bp_meta *m) {
  (void)g;
  (void)pc;
  uint8_t *ctr = (uint8_t *)st + m->idx[0];
  if (taken) {
    if (*ctr < 3) (*ctr)++;
  } else if (*ctr > 0) {
    (*ctr)--;
  }
}

const bp_ops bp_bimodal_ops = {"bimodal", bim_bytes, bim_init, bim_predict, bim_update};

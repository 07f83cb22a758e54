/* bpred_gshare.c — gshare: 2-bit counters indexed by pc xor global history (McFarling 1993). */
#include "bpred.h"

#include <string.h>

static size_t gs_bytes(const bp_config *c) { return (size_t)1 << c->gshare_bits; }

static void gs_init(void *st, const bp_config *c) { memset(st, 2, gs_bytes(c)); }

static bool gs_predict(const void *st, const bp_geom *g, const bp_hist *h, uint64_t pc, bp_meta *m) {
  const bp_config *c = g->cfg;
  uint64_t hist = c->gshare_hist >= 64 ? h->g64 : h->g64 & ((1ULL << c->gshare_hist) - 1);
  uint32_t idx = (uint32_t)(pc ^ (pc >> c->gshare_bits) ^ hist) & ((1u << c->gshare_bits) - 1);
  m->idx[0] = (uint16_t)idx;
  m->pred = ((const uint8_t *)st)[idx] >= 2;
  return m->pred;
}

static void gs_update(void *st, const bp_geom *g, uint64_t pc, bool taken, const bp_meta *m) {
  (void)g;
  (void)pc;
  uint8_t *ctr = (uint8_t *)st + m->idx[0];
  if (taken) {
    if (*ctr < 3) (*ctr)++;
  } else if (*ctr > 0) {
    (*ctr)--;
  }
}

const bp_ops bp_gshare_ops = {"gshare", gs_bytes, gs_init, gs_predict, gs_update};

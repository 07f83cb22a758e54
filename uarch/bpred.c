/* bpred.c — predictor configuration, global history with folded registers, the predictor
 * registry, BTB, indirect-target table and JRS confidence estimator. */
#include "bpred_tage.h"

#include <math.h>
#include <stddef.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

/* ---- configuration -------------------------------------------------------------------------- */

static const char *const bp_type_names[] = {"tage", "gshare", "bimodal", NULL};
static const char *const ras_repair_names[] = {"none", "tos", "full", NULL};

#define BPO(f) offsetof(bp_config, f)
static const param_desc bp_params[] = {
  {"type", P_ENUM, BPO(type), 0, 0, NULL, "conditional-branch direction predictor", bp_type_names, NULL, NULL},
  {"bimodal_bits", P_U32, BPO(bimodal_bits), 4, 16, "log2 entries", "bimodal table size (also TAGE's base table)", NULL, NULL, NULL},
  {"gshare_bits", P_U32, BPO(gshare_bits), 4, 16, "log2 entries", "gshare table size", NULL, NULL, NULL},
  {"gshare_hist", P_U32, BPO(gshare_hist), 0, 64, "branches", "global history bits hashed into the gshare index", NULL, NULL, NULL},
  {"tage_tables", P_U32, BPO(tage_tables), 1, BP_TAGE_MAX, "tables", "TAGE tagged tables", NULL, NULL, NULL},
  {"tage_bits", P_U32, BPO(tage_bits), 4, 16, "log2 entries", "entries per TAGE tagged table", NULL, NULL, NULL},
  {"tage_tag_bits", P_U32, BPO(tage_tag_bits), 4, 16, "bits", "TAGE tag width", NULL, NULL, NULL},
  {"tage_min_hist", P_U32, BPO(tage_min_hist), 1, BP_MAX_HIST, "branches", "history length of the shortest TAGE table", NULL, NULL, NULL},
  {"tage_max_hist", P_U32, BPO(tage_max_hist), 1, BP_MAX_HIST, "branches", "history length of the longest TAGE table", NULL, NULL, NULL},
  {"tage_u_reset", P_U32, BPO(tage_u_reset), 8, 30, "log2 updates", "period of TAGE useful-counter decay", NULL, NULL, NULL},
  {"btb_entries", P_U32, BPO(btb_entries), 16, 1u << 20, "entries", "branch target buffer entries", NULL, NULL, NULL},
  {"btb_ways", P_U32, BPO(btb_ways), 1, 32, "ways", "BTB associativity", NULL, NULL, NULL},
  {"ind_bits", P_U32, BPO(ind_bits), 4, 16, "log2 entries", "indirect-target table size", NULL, NULL, NULL},
  {"ind_hist", P_U32, BPO(ind_hist), 0, 64, "branches", "global history bits hashed into the indirect index", NULL, NULL, NULL},
  {"ras_depth", P_U32, BPO(ras_depth), 1, 1024, "entries", "return-address stack depth", NULL, NULL, NULL},
  {"ras_repair", P_ENUM, BPO(ras_repair), 0, 0, NULL, "RAS repair after a squash: none, tos (pointer + top entry), full (whole stack)", ras_repair_names, NULL, NULL},
  {"conf_bits", P_U32, BPO(conf_bits), 4, 16, "log2 entries", "JRS confidence table size (wrong_path = \"confidence\")", NULL, NULL, NULL},
  {"conf_max", P_U32, BPO(conf_max), 1, 255, "count", "saturation value of the JRS resetting counters", NULL, NULL, NULL},
  {"conf_threshold", P_U32, BPO(conf_threshold), 0, 255, "count", "JRS counter >= threshold means high confidence", NULL, NULL, NULL},
  {"conf_gate", P_U32, BPO(conf_gate), 0, 64, "branches", "pipeline gating threshold N: fetch stops while more than N low-confidence branches are unresolved", NULL, NULL, NULL},
};
const param_table bp_param_table = PARAM_TABLE("bpred", bp_params);

const char *bp_type_name(int type) {
  return type >= 0 && type < BP_NUM ? bp_type_names[type] : "?";
}

void bp_config_default(bp_config *c) {
  memset(c, 0, sizeof *c);
  c->type = BP_TAGE;
  c->bimodal_bits = 14;
  c->gshare_bits = 16;
  c->gshare_hist = 16;
  c->tage_tables = 12;
  c->tage_bits = 11;
  c->tage_tag_bits = 12;
  c->tage_min_hist = 4;
  c->tage_max_hist = 640;
  c->tage_u_reset = 18;
  c->btb_entries = 12288;
  c->btb_ways = 8;
  c->ind_bits = 12;
  c->ind_hist = 16;
  c->ras_depth = 16;
  c->ras_repair = RAS_REPAIR_TOS;
  c->conf_bits = 12;
  c->conf_max = 15;
  c->conf_threshold = 15;
  c->conf_gate = 5;
}

wi_rc bp_config_check(const bp_config *c, wi_err *err) {
  if (c->tage_min_hist > c->tage_max_hist)
    return wi_fail(err, WI_EINVAL, "bpred.tage_min_hist (%u) exceeds bpred.tage_max_hist (%u)",
                   c->tage_min_hist, c->tage_max_hist);
  if (c->tage_tag_bits < 2)
    return wi_fail(err, WI_EINVAL, "bpred.tage_tag_bits must be at least 2");
  if (c->btb_entries < c->btb_ways)
    return wi_fail(err, WI_EINVAL, "bpred.btb_entries (%u) is smaller than bpred.btb_ways (%u)",
                   c->btb_entries, c->btb_ways);
  if (c->conf_threshold > c->conf_max)
    return wi_fail(err, WI_EINVAL, "bpred.conf_threshold (%u) exceeds bpred.conf_max (%u)",
                   c->conf_threshold, c->conf_max);
  return WI_OK;
}

const bp_ops *bp_ops_of(int type) {
  switch (type) {
  case BP_GSHARE: return &bp_gshare_ops;
  case BP_BIMODAL: return &bp_bimodal_ops;
  default: return &bp_tage_ops;
  }
}

/* ---- history -------------------------------------------------------------------------------- */

void bp_geom_init(bp_geom *g, const bp_config *c) {
  memset(g, 0, sizeof *g);
  g->cfg = c;
  if (c->type != BP_TAGE) return;
  uint32_t n = c->tage_tables;
  for (uint32_t i = 1; i <= n; i++) {
    double l = c->tage_min_hist;
    if (n > 1) {
      double r = (double)(i - 1) / (double)(n - 1);
      l = c->tage_min_hist * pow((double)c->tage_max_hist / c->tage_min_hist, r);
    }
    uint32_t len = (uint32_t)(l + 0.5);
    if (len < 1) len = 1;
    if (i > 1 && len <= g->hlen[i - 1]) len = g->hlen[i - 1] + 1; /* strictly increasing */
    if (len > BP_MAX_HIST) len = BP_MAX_HIST;
    g->hlen[i] = len;
    g->olen[BP_FOLD_IDX + i - 1] = len, g->clen[BP_FOLD_IDX + i - 1] = c->tage_bits;
    g->olen[BP_FOLD_TAG0 + i - 1] = len, g->clen[BP_FOLD_TAG0 + i - 1] = c->tage_tag_bits;
    g->olen[BP_FOLD_TAG1 + i - 1] = len, g->clen[BP_FOLD_TAG1 + i - 1] = c->tage_tag_bits - 1;
    uint32_t bits = c->tage_bits;
    g->ishift[i] = bits > i ? bits - i : 1;
    g->pmask[i] = len >= 16 ? 0xffffu : (1u << len) - 1;
    g->prot[i] = i % bits;
  }
  g->nfold = BP_NFOLD;
  for (uint32_t f = 0; f < BP_NFOLD; f++) {
    if (!g->olen[f]) continue; /* unused lane: stays 0 (mask 0) */
    g->outpt[f] = g->olen[f] % g->clen[f];
    g->outm[f] = 1u << g->outpt[f];
    g->cmask[f] = (1u << g->clen[f]) - 1;
    g->outm16[f] = (uint16_t)g->outm[f];
    g->cmask16[f] = (uint16_t)g->cmask[f];
  }
  g->nvec = n > 8 ? 2 : 1;
  g->nquad = (n + 3) / 4;
  for (uint32_t l = 0; l < 8; l++) {
    g->imask16[l] = (uint16_t)((1u << c->tage_bits) - 1);
    g->tmask16[l] = (uint16_t)((1u << c->tage_tag_bits) - 1);
  }
  g->fsh[0] = g->clen[BP_FOLD_IDX] - 1;
  g->fsh[1] = g->clen[BP_FOLD_TAG0] - 1;
  g->fsh[2] = g->clen[BP_FOLD_TAG1] - 1;
  for (uint32_t i = 1; i <= n; i++) {
    /* 1 <= ishift <= 15 (tage_bits <= 16, i >= 1) */
    g->pcm16[i - 1] = (uint16_t)(1u << (16 - g->ishift[i]));
    g->pmask16[i - 1] = (uint16_t)(g->pmask[i] & (((1u << c->tage_bits) - 1) >> (i % 4)));
    g->pmul16[i - 1] = (uint16_t)(1u << (i % 4));
    g->toff[i - 1] = (i - 1) << c->tage_bits;
    g->toff16[i - 1] = (uint16_t)g->toff[i - 1];
    g->rneg[i - 1] = -(ptrdiff_t)g->hlen[i];
  }
  for (uint32_t l = n; l < BP_TAGE_MAX; l++) g->rneg[l] = -1;
  g->same2 = c->tage_tag_bits - 1 == c->tage_bits;
  g->ent16 = ((uint64_t)n << c->tage_bits) <= 65536;
  g->k12 = n == 12 && c->tage_bits == BP_K12_BITS && c->tage_tag_bits == BP_K12_TAG_BITS;
  for (uint32_t i = 1; i <= n && g->k12; i++) g->k12 = g->hlen[i] == bp_k12_hlen[i - 1];
  for (uint32_t k = 0; k < 4; k++) { /* (clen >= 4: 1 << (17 - clen) fits 16 bits) */
    const uint32_t fi = BP_FOLD_IDX + 8 + k, ft = BP_FOLD_TAG0 + 8 + k;
    g->pk_outm[k] = g->outm16[fi];
    g->pk_outm[4 + k] = g->outm16[ft];
    g->pk_cmask[k] = g->cmask16[fi];
    g->pk_cmask[4 + k] = g->cmask16[ft];
    g->pk_ov[k] = (uint16_t)(1u << (17 - c->tage_bits));
    g->pk_ov[4 + k] = (uint16_t)(1u << (17 - c->tage_tag_bits));
  }
  g->tage_tab = tage_tab_off(c);
  g->tage_n = n < BP_TAGE_MAX ? n : BP_TAGE_MAX;
  g->bim_shift = c->bimodal_bits;
  g->bim_mask = (1u << c->bimodal_bits) - 1;
}

void bp_hist_init(bp_hist *h, uint8_t *ring) {
  memset(h, 0, sizeof *h);
  memset(ring, 0, BP_RING_BYTES);
}

/* ---- BTB ------------------------------------------------------------------------------------- */

typedef bp_btb_hdr btb_hdr;

uint32_t bp_btb_sets(const bp_config *c) {
  uint32_t s = 1;
  while (s * 2 * c->btb_ways <= c->btb_entries) s *= 2;
  return s;
}

size_t bp_btb_bytes(const bp_config *c) {
  return sizeof(btb_hdr) + 8 + (size_t)bp_btb_sets(c) * c->btb_ways * sizeof(bp_btb_entry);
}

bool bp_btb_lookup(void *st, const bp_config *c, uint64_t pc, uint64_t *target) {
  return bp_btb_lookup_inl(st, c, pc, target);
}

void bp_btb_update(void *st, const bp_config *c, uint64_t pc, uint64_t target) {
  uint32_t tag;
  bp_btb_entry *e = bp_btb_set(st, c, pc, &tag);
  btb_hdr *h = st;
  uint32_t victim = 0;
  for (uint32_t w = 0; w < c->btb_ways; w++) {
    if (e[w].tag == tag) {
      victim = w;
      break;
    }
    if (e[w].tag == 0 || (e[victim].tag != 0 && e[w].stamp < e[victim].stamp)) victim = w;
  }
  e[victim].tag = tag;
  e[victim].target = target;
  e[victim].stamp = ++h->clock;
}

/* ---- indirect targets -------------------------------------------------------------------------- */

size_t bp_ind_bytes(const bp_config *c) { return ((size_t)1 << c->ind_bits) * sizeof(bp_ind_entry); }

uint32_t bp_ind_index(const bp_config *c, const bp_hist *h, uint64_t pc) {
  uint64_t hist = c->ind_hist >= 64 ? h->g64 : h->g64 & ((1ULL << c->ind_hist) - 1);
  uint64_t x = wi_mix64(pc) ^ wi_mix64(hist + 0x9e3779b97f4a7c15ULL) ^ (h->phist & 0xff);
  return (uint32_t)x & ((1u << c->ind_bits) - 1);
}

static uint32_t ind_tag(uint64_t pc) { return (uint32_t)(wi_mix64(pc ^ 0x5bd1e995) >> 40) | 1u; }

bool bp_ind_lookup(const void *st, const bp_config *c, uint32_t idx, uint64_t pc, uint64_t *target) {
  (void)c;
  const bp_ind_entry *e = (const bp_ind_entry *)st + idx;
  if (e->tag != ind_tag(pc)) return false;
  *target = e->target;
  return true;
}

void bp_ind_update(void *st, const bp_config *c, uint32_t idx, uint64_t pc, uint64_t target) {
  (void)c;
  bp_ind_entry *e = (bp_ind_entry *)st + idx;
  uint32_t tag = ind_tag(pc);
  if (e->tag == tag) {
    if (e->target == target) {
      if (e->conf < 3) e->conf++;
    } else if (e->conf > 0) {
      e->conf--;
    } else {
      e->target = target;
    }
    return;
  }
  e->tag = tag;
  e->target = target;
  e->conf = 0;
}

/* ---- JRS confidence ------------------------------------------------------------------------------ */

size_t bp_conf_bytes(const bp_config *c) { return (size_t)1 << c->conf_bits; }

uint32_t bp_conf_index(const bp_config *c, const bp_hist *h, uint64_t pc) {
  uint64_t x = pc ^ (pc >> c->conf_bits) ^ h->g64;
  return (uint32_t)x & ((1u << c->conf_bits) - 1);
}

bool bp_conf_high(const void *st, const bp_config *c, uint32_t idx) {
  return ((const uint8_t *)st)[idx] >= c->conf_threshold;
}

void bp_conf_update(void *st, const bp_config *c, uint32_t idx, bool correct) {
  uint8_t *t = st;
  if (!correct) t[idx] = 0;
  else if (t[idx] < c->conf_max) t[idx]++;
}

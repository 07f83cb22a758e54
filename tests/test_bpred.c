/* test_bpred.c — branch predictors (TAGE, gshare, bimodal through their table of functions),
 * global history checkpoints, BTB, indirect table, JRS confidence and the RAS repair policies. */
#include <stdlib.h>
#include <string.h>

#include "bpred.h"
#include "bpred_tage.h"
#include "ras.h"
#include "testutil.h"

typedef struct pred {
  bp_config c;
  bp_geom g;
  const bp_ops *ops;
  void *st;
  bp_hist h;
  uint8_t ring[BP_RING_BYTES];
} pred;

static pred *pred_new(int type) {
  pred *p = xcalloc(1, sizeof *p);
  bp_config_default(&p->c);
  p->c.type = type;
  bp_geom_init(&p->g, &p->c);
  p->ops = bp_ops_of(type);
  p->st = xcalloc(1, p->ops->state_bytes(&p->c));
  p->ops->init(p->st, &p->c);
  bp_hist_init(&p->h, p->ring);
  return p;
}

static void pred_free(pred *p) {
  free(p->st);
  free(p);
}

/* Predict, train immediately, push history; returns true on a misprediction. */
static bool step(pred *p, uint64_t pc, bool taken) {
  bp_meta m;
  bool guess = p->ops->predict(p->st, &p->g, &p->h, pc, &m);
  p->ops->update(p->st, &p->g, pc, taken, &m);
  bp_hist_push(&p->g, &p->h, p->ring, pc, taken);
  return guess != taken;
}

/* Mispredictions in the second half of n outcomes of pattern(i). */
static uint64_t run_pattern(int type, uint64_t n, bool (*pattern)(uint64_t i, void *ctx), void *ctx) {
  pred *p = pred_new(type);
  uint64_t miss = 0;
  for (uint64_t i = 0; i < n; i++) {
    bool m = step(p, 0x401234, pattern(i, ctx));
    if (i >= n / 2) miss += m;
  }
  pred_free(p);
  return miss;
}

static bool always(uint64_t i, void *ctx) {
  (void)i;
  (void)ctx;
  return true;
}
static bool alternate(uint64_t i, void *ctx) {
  (void)ctx;
  return i & 1;
}
static bool loop40(uint64_t i, void *ctx) {
  (void)ctx;
  return i % 40 != 39; /* a loop of 40 iterations: taken 39 times, then the exit */
}
static bool random_bits(uint64_t i, void *ctx) {
  (void)i;
  return rng_below(ctx, 2);
}

static void test_direction_predictors(void **state) {
  (void)state;
  const uint64_t n = 40000;
  for (int t = 0; t < BP_NUM; t++) {
    assert_string_equal(bp_ops_of(t)->name, bp_type_name(t));
    assert_int_equal(run_pattern(t, n, always, NULL), 0);
  }
  /* alternating: needs history (gshare, TAGE), the bimodal counter cannot */
  assert_true(run_pattern(BP_BIMODAL, n, alternate, NULL) > n / 4);
  assert_int_equal(run_pattern(BP_GSHARE, n, alternate, NULL), 0);
  assert_int_equal(run_pattern(BP_TAGE, n, alternate, NULL), 0);
  /* a 40-iteration loop exit: beyond gshare's 16 history bits, within TAGE's */
  uint64_t exits = n / 2 / 40;
  uint64_t gs = run_pattern(BP_GSHARE, n, loop40, NULL), tg = run_pattern(BP_TAGE, n, loop40, NULL),
           bm = run_pattern(BP_BIMODAL, n, loop40, NULL);
  print_message("loop-40 exits: %llu; mispredicted by bimodal %llu, gshare %llu, tage %llu\n",
                (unsigned long long)exits, (unsigned long long)bm, (unsigned long long)gs, (unsigned long long)tg);
  assert_true(gs >= exits * 9 / 10);
  assert_true(tg * 20 < exits);
  /* random: about half for everyone */
  wi_rng r;
  uint64_t seed = tu_seed();
  for (int t = 0; t < BP_NUM; t++) {
    rng_seed(&r, seed);
    uint64_t m = run_pattern(t, n, random_bits, &r);
    assert_true(m > n / 2 * 40 / 100 && m < n / 2 * 60 / 100);
  }
}

/* A checkpoint of the history restores the folded registers exactly. */
static void test_history_checkpoint(void **state) {
  (void)state;
  pred *p = pred_new(BP_TAGE);
  wi_rng r;
  rng_seed(&r, tu_seed());
  for (int i = 0; i < 3000; i++) bp_hist_push(&p->g, &p->h, p->ring, rng_next(&r), rng_below(&r, 2));
  bp_hist saved = p->h;
  /* wrong-path pushes, then restore and push the real outcomes */
  for (int i = 0; i < 200; i++) bp_hist_push(&p->g, &p->h, p->ring, rng_next(&r), rng_below(&r, 2));
  p->h = saved;
  uint64_t pcs[100];
  bool bits[100];
  for (int i = 0; i < 100; i++) {
    pcs[i] = rng_next(&r);
    bits[i] = rng_below(&r, 2);
    bp_hist_push(&p->g, &p->h, p->ring, pcs[i], bits[i]);
  }
  /* the same from the checkpoint without the detour */
  pred *q = pred_new(BP_TAGE);
  memcpy(q->ring, p->ring, BP_RING_BYTES);
  q->h = saved;
  for (int i = 0; i < 100; i++) bp_hist_push(&q->g, &q->h, q->ring, pcs[i], bits[i]);
  assert_memory_equal(&p->h, &q->h, sizeof p->h);
  /* folded registers depend only on their window: replaying the newest bits into an empty
   * history gives the same folds (no drift after thousands of pushes) */
  pred *z = pred_new(BP_TAGE);
  uint32_t maxlen = 0;
  for (uint32_t f = 0; f < p->g.nfold; f++) maxlen = p->g.olen[f] > maxlen ? p->g.olen[f] : maxlen;
  assert_true(maxlen > 100);
  for (uint32_t k = maxlen; k-- > 0;) bp_hist_push(&z->g, &z->h, z->ring, 0, p->ring[(p->h.ptr - k) & (BP_RING - 1)]);
  assert_memory_equal(z->h.fold, p->h.fold, sizeof z->h.fold);
  pred_free(z);
  pred_free(p);
  pred_free(q);
}

/* Reference for the vector code: every folded register and every TAGE index and tag computed
 * from the raw history by their definitions (bpred.h), 32-bit scalar arithmetic. A fold of
 * length L into c bits is the XOR of the newest L bits, the bit of age k (0 newest) at position
 * k mod c. Random geometries cover 1..16 tables and 4..16-bit indices and tags. */
static uint32_t ref_fold(const uint8_t *bits, uint32_t nbits, uint32_t len, uint32_t clen) {
  uint32_t f = 0;
  for (uint32_t k = 0; k < len && k < nbits; k++) f ^= (uint32_t)bits[nbits - 1 - k] << (k % clen);
  return f;
}

static void test_tage_reference(void **state) {
  (void)state;
  wi_rng r;
  rng_seed(&r, tu_seed());
  enum { NPUSH = 2600 };
  uint8_t *bits = xcalloc(NPUSH, 1);
  for (int cfg = 0; cfg < 24; cfg++) {
    pred *p = xcalloc(1, sizeof *p);
    bp_config_default(&p->c);
    p->c.tage_tables = 1 + (uint32_t)rng_below(&r, BP_TAGE_MAX);
    p->c.tage_bits = 4 + (uint32_t)rng_below(&r, 13);
    p->c.tage_tag_bits = 4 + (uint32_t)rng_below(&r, 13);
    p->c.tage_min_hist = 1 + (uint32_t)rng_below(&r, 8);
    p->c.tage_max_hist = p->c.tage_min_hist + (uint32_t)rng_below(&r, BP_MAX_HIST - p->c.tage_min_hist + 1);
    if (cfg == 0) p->c.tage_tables = BP_TAGE_MAX, p->c.tage_bits = 16, p->c.tage_tag_bits = 16,
                  p->c.tage_max_hist = BP_MAX_HIST;
    /* geometries where bp_hist_push copies the index folds into the second tag folds
     * (tage_tag_bits - 1 == tage_bits): golden_cove's 12 tables, and 5 tables (unused lanes read
     * in the first group of eight) */
    if (cfg == 1) p->c.tage_tables = 12, p->c.tage_bits = 11, p->c.tage_tag_bits = 12;
    if (cfg == 2) p->c.tage_tables = 5, p->c.tage_bits = 9, p->c.tage_tag_bits = 10;
    /* nine to twelve tables with the copy: tables 9..12 update as one packed vector (index and
     * tag folds of different widths; unused lanes with 9..11 tables), narrowest and widest */
    if (cfg == 3) p->c.tage_tables = 9, p->c.tage_bits = 4, p->c.tage_tag_bits = 5;
    if (cfg == 4) p->c.tage_tables = 11, p->c.tage_bits = 15, p->c.tage_tag_bits = 16;
    if (cfg == 5) p->c.tage_tables = 10, p->c.tage_bits = 7 + (uint32_t)rng_below(&r, 6),
                  p->c.tage_tag_bits = p->c.tage_bits + 1;
    bp_geom_init(&p->g, &p->c);
    p->ops = bp_ops_of(BP_TAGE);
    p->st = xcalloc(1, p->ops->state_bytes(&p->c));
    p->ops->init(p->st, &p->c);
    bp_hist_init(&p->h, p->ring);
    const uint32_t n = p->c.tage_tables, bitsz = p->c.tage_bits, tb = p->c.tage_tag_bits;
    uint32_t phist = 0;
    for (uint32_t i = 0; i < NPUSH; i++) {
      uint64_t pc = rng_next(&r);
      if ((i % 61) == 0 || i + 1 == NPUSH) {
        bp_meta m;
        memset(&m, 0, sizeof m);
        bool taken = p->ops->predict(p->st, &p->g, &p->h, pc, &m);
        const uint32_t pcl = (uint32_t)pc ^ (uint32_t)(pc >> 32), tpc = pcl ^ (pcl >> 11);
        for (uint32_t t = 1; t <= n; t++) {
          uint32_t len = p->g.hlen[t];
          uint32_t fi = ref_fold(bits, i, len, bitsz), f0 = ref_fold(bits, i, len, tb);
          uint32_t f1 = ref_fold(bits, i, len, tb - 1);
          assert_int_equal(p->h.fold[BP_FOLD_IDX + t - 1], fi);
          assert_int_equal(p->h.fold[BP_FOLD_TAG0 + t - 1], f0);
          assert_int_equal(p->h.fold[BP_FOLD_TAG1 + t - 1], f1);
          uint32_t ish = bitsz > t ? bitsz - t : 1;
          uint32_t pmask = len >= 16 ? 0xffffu : (1u << len) - 1;
          uint32_t idx = (pcl ^ (pcl >> ish) ^ fi ^ ((phist & pmask) << (t % 4))) & ((1u << bitsz) - 1);
          uint32_t tag = (tpc ^ f0 ^ (f1 << 1)) & ((1u << tb) - 1);
          assert_int_equal(m.idx[t], idx);
          assert_int_equal(m.tag[t], tag);
        }
        p->ops->update(p->st, &p->g, pc, !taken, &m); /* allocate: later lookups find tags */
      }
      bool b = rng_below(&r, 3) != 0;
      bits[i] = b;
      phist = (phist << 1) | (uint32_t)((pc ^ (pc >> 3)) & 1);
      bp_hist_push(&p->g, &p->h, p->ring, pc, b);
    }
    pred_free(p);
  }
  free(bits);
}

static void test_btb_and_indirect(void **state) {
  (void)state;
  bp_config c;
  bp_config_default(&c);
  c.btb_entries = 64;
  c.btb_ways = 4;
  void *btb = xcalloc(1, bp_btb_bytes(&c));
  uint64_t t;
  assert_false(bp_btb_lookup(btb, &c, 0x1000, &t));
  bp_btb_update(btb, &c, 0x1000, 0x2000);
  assert_true(bp_btb_lookup(btb, &c, 0x1000, &t));
  assert_int_equal(t, 0x2000);
  bp_btb_update(btb, &c, 0x1000, 0x3000);
  assert_true(bp_btb_lookup(btb, &c, 0x1000, &t));
  assert_int_equal(t, 0x3000);
  /* capacity: 1000 distinct branches cannot all stay */
  int hits = 0;
  for (uint64_t i = 0; i < 1000; i++) bp_btb_update(btb, &c, 0x10000 + i * 7, i);
  for (uint64_t i = 0; i < 1000; i++) hits += bp_btb_lookup(btb, &c, 0x10000 + i * 7, &t) && t == i;
  assert_true(hits <= 64 && hits > 16);
  free(btb);

  bp_hist h;
  uint8_t ring[BP_RING_BYTES];
  bp_hist_init(&h, ring);
  void *ind = xcalloc(1, bp_ind_bytes(&c));
  uint32_t idx = bp_ind_index(&c, &h, 0x5000);
  assert_false(bp_ind_lookup(ind, &c, idx, 0x5000, &t));
  bp_ind_update(ind, &c, idx, 0x5000, 0x6000);
  assert_true(bp_ind_lookup(ind, &c, idx, 0x5000, &t));
  assert_int_equal(t, 0x6000);
  /* hysteresis: one different target does not replace a confirmed one */
  bp_ind_update(ind, &c, idx, 0x5000, 0x6000);
  bp_ind_update(ind, &c, idx, 0x5000, 0x7000);
  assert_true(bp_ind_lookup(ind, &c, idx, 0x5000, &t));
  assert_int_equal(t, 0x6000);
  free(ind);

  void *conf = xcalloc(1, bp_conf_bytes(&c));
  uint32_t ci = bp_conf_index(&c, &h, 0x5000);
  assert_false(bp_conf_high(conf, &c, ci));
  for (uint32_t i = 0; i < c.conf_threshold; i++) bp_conf_update(conf, &c, ci, true);
  assert_true(bp_conf_high(conf, &c, ci));
  bp_conf_update(conf, &c, ci, false); /* resetting counter */
  assert_false(bp_conf_high(conf, &c, ci));
  free(conf);
}

/* The prediction from PC terms computed once and kept with the PC (bp_tage_pc_init, then
 * bp_tage_predict_pc any time later, what the model's wrong-path fetch blocks do) is
 * bp_tage_predict's at that time: the same indices, tags and direction, over random
 * geometries, histories and table contents (bp_tage_predict itself is checked against the
 * reference formulas by test_tage_reference). */
static void test_tage_pc_terms(void **state) {
  (void)state;
  wi_rng r;
  rng_seed(&r, tu_seed());
  for (int cfg = 0; cfg < 16; cfg++) {
    pred *p = xcalloc(1, sizeof *p);
    bp_config_default(&p->c);
    if (cfg > 0) {
      p->c.tage_tables = 1 + (uint32_t)rng_below(&r, BP_TAGE_MAX);
      p->c.tage_bits = 4 + (uint32_t)rng_below(&r, 13);
      p->c.tage_tag_bits = 4 + (uint32_t)rng_below(&r, 13);
      p->c.tage_min_hist = 1 + (uint32_t)rng_below(&r, 8);
      p->c.tage_max_hist = p->c.tage_min_hist + (uint32_t)rng_below(&r, BP_MAX_HIST - p->c.tage_min_hist + 1);
      p->c.bimodal_bits = 4 + (uint32_t)rng_below(&r, 12);
    }
    bp_geom_init(&p->g, &p->c);
    p->ops = bp_ops_of(BP_TAGE);
    p->st = xcalloc(1, p->ops->state_bytes(&p->c));
    p->ops->init(p->st, &p->c);
    bp_hist_init(&p->h, p->ring);
    /* a few hundred branch PCs, some far apart (the high half of the PC counts) */
    uint64_t pcs[300];
    bp_tage_pc tps[300]; /* their terms, computed once */
    for (int i = 0; i < 300; i++) {
      pcs[i] = i % 3 ? 0x400000 + 4 * rng_below(&r, 4096) : rng_next(&r);
      bp_tage_pc_init(&p->g, pcs[i], &tps[i]);
    }
    const uint32_t n = p->c.tage_tables;
    uint32_t hits = 0;
    for (int i = 0; i < 6000; i++) {
      /* mostly a loop over 40 branches (histories repeat), sometimes any of the 300 */
      const uint32_t j = rng_below(&r, 8) ? (uint32_t)(i % 40) : (uint32_t)rng_below(&r, 300);
      const uint64_t pc = pcs[j];
      bp_meta a, b;
      memset(&a, 0, sizeof a);
      memset(&b, 0, sizeof b);
      const bool pa = bp_tage_predict(p->st, &p->g, &p->h, pc, &a);
      const bool pb = bp_tage_predict_pc(p->st, &p->g, &p->h, &tps[j], &b);
      assert_int_equal(pa, pb);
      assert_int_equal(a.pred, b.pred);
      assert_memory_equal(a.idx, b.idx, (n + 1) * sizeof a.idx[0]);
      assert_memory_equal(a.tag + 1, b.tag + 1, n * sizeof a.tag[0]);
      /* outcomes of the PC with some noise: entries are allocated (on mispredictions) and
       * found again (short histories repeat), so provider and alternate choices are compared */
      const bool taken = (((pc >> 2) ^ (pc >> 9)) & 1) ? rng_below(&r, 16) != 0 : rng_below(&r, 16) == 0;
      hits += tage_hits((const tage_entry *)((const char *)p->st + p->g.tage_tab), &p->g, n, a.idx, a.tag) != 0;
      p->ops->update(p->st, &p->g, pc, taken, &a);
      bp_hist_push(&p->g, &p->h, p->ring, pc, taken);
    }
    print_message("tage pc terms: %u tables, %u of 6000 predictions from tagged entries\n", n, hits);
    assert_true(hits > 100); /* (tagged entries were hit) */
    pred_free(p);
  }
}

/* The k12 variants (golden_cove's TAGE geometry as constants: bp_tage_predict_pc_k and
 * bp_hist_push_k with k12, what the model's fetch uses where bp_geom.k12) are the general ones:
 * the same indices, tags and directions, and the same history and ring after every push, over
 * random PCs, outcomes and table contents (entries allocated by updates); k12 is set for that
 * geometry (the default) only. */
static void test_tage_k12(void **state) {
  (void)state;
  wi_rng r;
  rng_seed(&r, tu_seed());
  for (int cfg = 0; cfg < 4; cfg++) {
    pred *p = xcalloc(1, sizeof *p), *q = xcalloc(1, sizeof *q);
    bp_config_default(&p->c);
    p->c.bimodal_bits = 4 + (uint32_t)rng_below(&r, 12);
    p->c.tage_u_reset = 6 + (uint32_t)rng_below(&r, 6); /* (useful counters decay during the run) */
    bp_geom_init(&p->g, &p->c);
    assert_true(p->g.k12);
    /* the geometry's vectors as constants (bpred.h) are bp_geom_init's */
    assert_memory_equal(bp_k12_outm16, p->g.outm16, sizeof bp_k12_outm16);
    assert_memory_equal(bp_k12_cmask16, p->g.cmask16, sizeof bp_k12_cmask16);
    assert_memory_equal(bp_k12_pmask16, p->g.pmask16, sizeof bp_k12_pmask16);
    assert_memory_equal(bp_k12_pmul16, p->g.pmul16, sizeof bp_k12_pmul16);
    assert_memory_equal(bp_k12_toff16, p->g.toff16, sizeof bp_k12_toff16);
    assert_memory_equal(bp_k12_pk_outm, p->g.pk_outm, sizeof bp_k12_pk_outm);
    assert_memory_equal(bp_k12_pk_cmask, p->g.pk_cmask, sizeof bp_k12_pk_cmask);
    assert_memory_equal(bp_k12_pk_ov, p->g.pk_ov, sizeof bp_k12_pk_ov);
    p->ops = bp_ops_of(BP_TAGE);
    p->st = xcalloc(1, p->ops->state_bytes(&p->c));
    p->ops->init(p->st, &p->c);
    bp_hist_init(&p->h, p->ring);
    bp_hist_init(&q->h, q->ring); /* (q: the history pushed by the k12 variant) */
    for (int i = 0; i < 5000; i++) {
      const uint64_t pc = i % 4 ? 0x400000 + 4 * rng_below(&r, 64) : rng_next(&r);
      bp_tage_pc tp;
      bp_tage_pc_init(&p->g, pc, &tp);
      bp_meta a, b;
      memset(&a, 0, sizeof a);
      memset(&b, 0, sizeof b);
      const bool pa = bp_tage_predict_pc(p->st, &p->g, &p->h, &tp, &a);
      const bool pb = bp_tage_predict_pc_k(p->st, &p->g, &q->h, &tp, &b, true);
      assert_int_equal(pa, pb);
      assert_memory_equal(&a, &b, sizeof a);
      const bool taken = rng_below(&r, 4) != 0;
      if (rng_below(&r, 2)) p->ops->update(p->st, &p->g, pc, taken, &a);
      bp_hist_push(&p->g, &p->h, p->ring, pc, taken);
      bp_hist_push_k(&p->g, &q->h, q->ring, pc, taken, true);
      assert_memory_equal(&p->h, &q->h, sizeof p->h);
      assert_memory_equal(p->ring, q->ring, sizeof p->ring);
    }
    pred_free(p);
    free(q);
  }
  for (int k = 0; k < 6; k++) { /* one change from the default: no k12 */
    bp_geom g;
    bp_config c;
    bp_config_default(&c);
    if (k == 0) c.tage_tables = 11;
    if (k == 1) c.tage_tag_bits = 13;
    if (k == 2) c.tage_bits = 10, c.tage_tag_bits = 11; /* (same2, ent16) */
    if (k == 3) c.tage_min_hist = 5;
    if (k == 4) c.tage_max_hist = 639;
    if (k == 5) c.type = BP_GSHARE;
    bp_geom_init(&g, &c);
    assert_false(g.k12);
  }
}

/* tage_hits (tagged tables holding the tag at the index, gathered eight lanes at a time) is the
 * table-by-table comparison, over random geometries: entry numbers over all tables in 16-bit
 * lanes (ent16: the default twelve tables of 2^11) and in 32-bit lanes (more entries), with
 * unused lanes in a group of four; tags half of the time the entry's. */
static void test_tage_hits(void **state) {
  (void)state;
  wi_rng r;
  rng_seed(&r, tu_seed());
  for (int cfg = 0; cfg < 24; cfg++) {
    bp_config c;
    bp_config_default(&c);
    c.tage_tables = 1 + (uint32_t)rng_below(&r, BP_TAGE_MAX);
    c.tage_bits = 4 + (uint32_t)rng_below(&r, 13);
    c.tage_tag_bits = 4 + (uint32_t)rng_below(&r, 13);
    if (cfg == 0) c.tage_tables = 12, c.tage_bits = 11, c.tage_tag_bits = 12; /* ent16 */
    if (cfg == 1) c.tage_tables = BP_TAGE_MAX, c.tage_bits = 16;                /* not */
    if (cfg == 2) c.tage_tables = 16, c.tage_bits = 12;                          /* 1 << 16 exactly */
    if (cfg == 3) c.tage_tables = 9, c.tage_bits = 13;                           /* not, 3 groups */
    bp_geom g;
    bp_geom_init(&g, &c);
    if (cfg == 0 || cfg == 2) assert_true(g.ent16);
    if (cfg == 1 || cfg == 3) assert_false(g.ent16);
    const uint32_t n = c.tage_tables, size = 1u << c.tage_bits;
    tage_entry *tables = xcalloc((size_t)n * size, sizeof *tables);
    for (size_t e = 0; e < (size_t)n * size; e++) tables[e].tag = (uint16_t)rng_below(&r, 1u << c.tage_tag_bits);
    for (int k = 0; k < 2000; k++) {
      uint16_t idx[BP_TAGE_MAX + 1], tag[BP_TAGE_MAX + 1];
      memset(idx, 0, sizeof idx);
      memset(tag, 0, sizeof tag);
      uint32_t want = 0;
      for (uint32_t t = 1; t <= BP_TAGE_MAX; t++) {
        idx[t] = (uint16_t)rng_below(&r, size); /* (lanes past the last table too, as predictions) */
        if (t > n) continue;
        const uint16_t have = tables[(size_t)(t - 1) * size + idx[t]].tag;
        tag[t] = rng_below(&r, 2) ? have : (uint16_t)rng_below(&r, 1u << c.tage_tag_bits);
        want |= (uint32_t)(tag[t] == have) << t;
      }
      assert_int_equal(tage_hits(tables, &g, n, idx, tag), want);
    }
    free(tables);
  }
}

/* The BTB lookup from a set and tag kept with the PC (bp_btb_where + bp_btb_lookup_at), and
 * with a way hint (bp_btb_lookup_hint: the hint kept per PC, sometimes set to any way), is
 * bp_btb_lookup_inl's: the same hits and targets, and the same state after (LRU stamps, clock,
 * the set count filled in at the first access). */
static void test_btb_where(void **state) {
  (void)state;
  wi_rng r;
  rng_seed(&r, tu_seed());
  for (int cfg = 0; cfg < 4; cfg++) {
    bp_config c;
    bp_config_default(&c);
    c.btb_entries = cfg == 0 ? c.btb_entries : 16u << cfg;
    c.btb_ways = cfg == 3 ? 2 : 4; /* (2: the scalar search) */
    const size_t nb = bp_btb_bytes(&c);
    uint8_t *a = xcalloc(1, nb), *b = xcalloc(1, nb), *d = xcalloc(1, nb);
    uint64_t pcs[200];
    uint32_t ent[200]; /* d: bp_btb_lookup_hint, a hint per PC (sometimes any way of its set) */
    for (int i = 0; i < 200; i++) {
      pcs[i] = 0x400000 + 2 * rng_below(&r, 1u << 16);
      uint32_t set, tag;
      bp_btb_where(&c, pcs[i], &set, &tag);
      ent[i] = set * c.btb_ways;
    }
    uint32_t hits = 0;
    for (int i = 0; i < 20000; i++) {
      const uint32_t j = (uint32_t)rng_below(&r, 200);
      const uint64_t pc = pcs[j];
      if (rng_below(&r, 4) == 0) {
        const uint64_t to = rng_next(&r);
        bp_btb_update(a, &c, pc, to);
        bp_btb_update(b, &c, pc, to);
        bp_btb_update(d, &c, pc, to);
        continue;
      }
      uint64_t ta = 1, tb = 2, td = 3;
      uint32_t set, tag;
      bp_btb_where(&c, pc, &set, &tag);
      if (rng_below(&r, 8) == 0) ent[j] = set * c.btb_ways + (uint32_t)rng_below(&r, c.btb_ways);
      const bool ha = bp_btb_lookup_inl(a, &c, pc, &ta), hb = bp_btb_lookup_at(b, &c, set, tag, &tb);
      const bool hd = bp_btb_lookup_hint(d, &c, set, tag, &ent[j], &td);
      assert_int_equal(ha, hb);
      assert_int_equal(ha, hd);
      if (ha) assert_int_equal(ta, tb);
      if (ha) assert_int_equal(ta, td);
      hits += ha;
    }
    assert_memory_equal(a, b, nb);
    assert_memory_equal(a, d, nb);
    assert_true(hits > 1000);
    free(a);
    free(b);
    free(d);
  }
}

static void test_ras_policies(void **state) {
  (void)state;
  enum { D = 8 };
  uint64_t e[D], full[D], a;
  ras_hdr h;
  ras_init(&h, e, D);
  assert_false(ras_pop(&h, e, D, &a));
  for (uint64_t i = 1; i <= 5; i++) ras_push(&h, e, D, i * 0x10);
  ras_ckpt ck;
  ras_save(&h, e, &ck);
  memcpy(full, e, sizeof e);
  /* wrong path: pop two, push three (overwriting entries below the top) */
  ras_pop(&h, e, D, &a);
  ras_pop(&h, e, D, &a);
  ras_push(&h, e, D, 0xbad1);
  ras_push(&h, e, D, 0xbad2);
  ras_push(&h, e, D, 0xbad3);
  ras_hdr h_none = h, h_tos = h, h_full = h;
  uint64_t e_none[D], e_tos[D], e_full[D];
  memcpy(e_none, e, sizeof e);
  memcpy(e_tos, e, sizeof e);
  memcpy(e_full, e, sizeof e);
  ras_restore(&h_none, e_none, D, RAS_REPAIR_NONE, &ck, full);
  ras_restore(&h_tos, e_tos, D, RAS_REPAIR_TOS, &ck, full);
  ras_restore(&h_full, e_full, D, RAS_REPAIR_FULL, &ck, full);
  /* full: the exact stack */
  for (uint64_t i = 5; i >= 1; i--) {
    assert_true(ras_pop(&h_full, e_full, D, &a));
    assert_int_equal(a, i * 0x10);
  }
  /* tos: the top is right, the entry below was overwritten by the wrong path */
  assert_true(ras_pop(&h_tos, e_tos, D, &a));
  assert_int_equal(a, 0x50);
  assert_true(ras_pop(&h_tos, e_tos, D, &a));
  assert_int_equal(a, 0xbad1);
  /* none: the wrong path's pushes stay */
  assert_true(ras_pop(&h_none, e_none, D, &a));
  assert_int_equal(a, 0xbad3);
  /* overflow wraps: the newest D survive */
  ras_init(&h, e, D);
  for (uint64_t i = 1; i <= 12; i++) ras_push(&h, e, D, i);
  for (uint64_t i = 12; i > 4; i--) {
    assert_true(ras_pop(&h, e, D, &a));
    assert_int_equal(a, i);
  }
  assert_false(ras_pop(&h, e, D, &a));
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_direction_predictors),
    cmocka_unit_test(test_history_checkpoint),
    cmocka_unit_test(test_tage_reference),
    cmocka_unit_test(test_btb_and_indirect),
    cmocka_unit_test(test_tage_pc_terms),
    cmocka_unit_test(test_tage_hits),
    cmocka_unit_test(test_tage_k12),
    cmocka_unit_test(test_btb_where),
    cmocka_unit_test(test_ras_policies),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

/* test_gus_cache.c — the Gus model's port choice and tag-only caches against reference models:
 * which ports a micro-op's port set shares its work among (pick_port, sets of 1 to 12 ports), and
 * the LRU caches (the L1D's last-use stamps, the lower levels' MRU-first lists) at every level,
 * for few and many ways. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#include "gus.h"
#include "gus_int.h"
#include "util.h"

/* A stream of n instructions of static sid 0 (class cls, no registers), each with the accesses
 * addr(k) when addr is given. */
typedef struct cstream {
  dec_insn dec;
  trace_insn *ins;
  trace_mem *mem;
  size_t n;
  gus_mem_stream ms;
  gus_source src;
} cstream;

static void cs_init(cstream *s, int cls, size_t n, const uint64_t *addr) {
  memset(s, 0, sizeof *s);
  s->dec.pc = 0x401000;
  s->dec.len = 4;
  s->dec.cls = (uint8_t)cls;
  if (addr) s->dec.addr_src = RG_BIT(RG_RSI);
  snprintf(s->dec.text, sizeof s->dec.text, "%s", addr ? "mov rax, [rsi]" : "add rax, rbx");
  s->n = n;
  s->ins = xcalloc(n, sizeof *s->ins);
  s->mem = xcalloc(n ? n : 1, sizeof *s->mem);
  for (size_t i = 0; i < n; i++) {
    trace_insn *t = &s->ins[i];
    t->pc = s->dec.pc;
    t->next_pc = t->pc + 4;
    t->rep = 1;
    t->len = 4;
    if (addr) {
      t->mem_off = (uint32_t)i;
      t->n_mem = 1;
      s->mem[i].addr = addr[i];
      s->mem[i].size = 8;
    }
  }
  s->ms = (gus_mem_stream){&s->dec, 1, s->ins, s->n, s->mem};
  gus_source_mem(&s->src, &s->ms);
}

static void cs_free(cstream *s) {
  free(s->ins);
  free(s->mem);
}

/* ---- ports ----------------------------------------------------------------------------------- */

/* Independent one-micro-op instructions on a port set of every size from 1 to 12 (of 16 ports):
 * with equal costs the port that frees first (the lowest-numbered on ties) takes them in turn, so
 * every port of the set, and no other, takes the same number, give or take one. A port of the set
 * left out of the scan, or one outside the set, breaks that. */
static void test_port_sets(void **state) {
  (void)state;
  wi_rng rng;
  const uint64_t seed = tu_seed();
  rng_seed(&rng, seed + 3);
  for (uint32_t k = 1; k <= 12; k++) {
    for (int round = 0; round < 3; round++) {
      gus_machine m;
      gus_machine_default(&m);
      m.n_ports = 16;
      uint32_t set = 0;
      while ((uint32_t)__builtin_popcount(set) < k) set |= 1u << rng_below(&rng, 16);
      m.cls[IC_ALU].n = 1;
      m.cls[IC_ALU].uop[0] = (gus_uop){set, 1, 1};
      m.dispatch_width = m.fe_width = m.retire_width = 1 + (uint32_t)rng_below(&rng, 16);
      cstream s;
      const size_t n = 3000 + rng_below(&rng, 100);
      cs_init(&s, IC_ALU, n, NULL);
      gus_result r;
      wi_err err = {0};
      assert_int_equal(gus_run(&m, 1, &s.src, &r, &err), WI_OK);
      uint64_t lo = UINT64_MAX, hi = 0, sum = 0;
      for (uint32_t p = 0; p < 16; p++) {
        const uint64_t u = r.res[GUS_R_PORT0 + p].uses;
        if (!(set & (1u << p))) {
          if (u) fail_msg("seed %llu: port %u outside set 0x%x took %llu micro-ops", (unsigned long long)seed, p,
                          set, (unsigned long long)u);
          continue;
        }
        lo = u < lo ? u : lo;
        hi = u > hi ? u : hi;
        sum += u;
      }
      if (sum != n || hi - lo > 1)
        fail_msg("seed %llu: set 0x%x (%u ports), width %u: uses %llu..%llu per port, %llu of %zu",
                 (unsigned long long)seed, set, k, m.dispatch_width, (unsigned long long)lo,
                 (unsigned long long)hi, (unsigned long long)sum, n);
      gus_result_free(&r);
      cs_free(&s);
    }
  }
}

/* ---- caches ---------------------------------------------------------------------------------- */

/* One step of a reference LRU set kept most recent first (line + 1; 0 = empty): true on a hit. */
static bool ref_lru(uint64_t *L, uint32_t ways, uint64_t line) {
  uint32_t w = 0;
  while (w < ways && L[w] != line + 1) w++;
  const bool hit = w < ways;
  if (!hit) w = ways - 1;
  for (; w > 0; w--) L[w] = L[w - 1];
  L[0] = line + 1;
  return hit;
}

/* The L1D, L2 and LLC misses of random loads must be those of LRU lists, for few ways and many
 * (each round has a level with at most 16 ways and one with 17 to 64), lines that come back at
 * every depth of a set (hits on the most and second most recent ways, deeper hits, many lines
 * per set), empty ways early on and evictions from full sets. */
static void test_lru_levels(void **state) {
  (void)state;
  wi_rng rng;
  const uint64_t seed = tu_seed();
  rng_seed(&rng, seed + 5);
  for (int round = 0; round < 8; round++) {
    gus_machine m;
    gus_machine_default(&m);
    uint32_t ways[3], sets[3];
    for (int k = 0; k < 3; k++) {
      const bool wide = (round + k) % 2; /* L1D and LLC on one side of 16, the L2 on the other */
      ways[k] = wide ? 17 + (uint32_t)rng_below(&rng, 48) : 1 + (uint32_t)rng_below(&rng, 16);
      sets[k] = 1u << rng_below(&rng, k ? 4 : 2);
    }
    if (round == 0) ways[0] = 16, ways[1] = 64, ways[2] = 16; /* the edges */
    gus_cache *lv[3] = {&m.l1d, &m.l2, &m.llc};
    for (int k = 0; k < 3; k++) {
      lv[k]->ways = ways[k];
      lv[k]->size = sets[k] * ways[k] * m.line;
    }
    uint64_t *list[3];
    uint32_t total = 0;
    for (int k = 0; k < 3; k++) {
      list[k] = xcalloc((size_t)sets[k] * ways[k], sizeof *list[k]);
      total += sets[k] * ways[k];
    }
    const size_t n = 20000;
    uint64_t *addr = xcalloc(n, sizeof *addr), miss[3] = {0}, prev = 0;
    const uint64_t n_lines = sets[0] * ways[0] + 2 + rng_below(&rng, 2 * (uint64_t)total);
    /* half the loads go to a few more lines than one L1D set holds, taken near the last of
     * them (two in turn, hits at every depth, evictions), the others mostly near the last line
     * of all, sometimes anywhere */
    const uint64_t hot = ways[0] + 1 + rng_below(&rng, 3);
    uint64_t hj = 0;
    for (size_t i = 0; i < n; i++) {
      uint64_t line;
      if (rng_below(&rng, 2)) {
        hj = (hj + hot - 2 + rng_below(&rng, 5)) % hot;
        line = hj * sets[0];
      } else {
        line = rng_below(&rng, 4) ? (prev + rng_below(&rng, 2 * sets[1] + 1)) % n_lines : rng_below(&rng, n_lines);
        prev = line;
      }
      addr[i] = 0x40000000 + line * m.line;
      if (ref_lru(list[0] + (line % sets[0]) * ways[0], ways[0], line)) continue;
      miss[0]++;
      if (ref_lru(list[1] + (line % sets[1]) * ways[1], ways[1], line)) continue;
      miss[1]++;
      if (!ref_lru(list[2] + (line % sets[2]) * ways[2], ways[2], line)) miss[2]++;
    }
    cstream s;
    cs_init(&s, IC_LOAD, n, addr);
    gus_result r;
    wi_err err = {0};
    assert_int_equal(gus_run(&m, 2, &s.src, &r, &err), WI_OK);
    if (r.l1d_misses != miss[0] || r.l2_misses != miss[1] || r.llc_misses != miss[2])
      fail_msg("seed %llu round %d: ways %u/%u/%u sets %u/%u/%u: misses %llu/%llu/%llu, want %llu/%llu/%llu",
               (unsigned long long)seed, round, ways[0], ways[1], ways[2], sets[0], sets[1], sets[2],
               (unsigned long long)r.l1d_misses, (unsigned long long)r.l2_misses, (unsigned long long)r.llc_misses,
               (unsigned long long)miss[0], (unsigned long long)miss[1], (unsigned long long)miss[2]);
    assert_true(miss[0] > 0 && miss[0] < n && miss[1] > 0); /* the levels below the L1D are used */
    gus_result_free(&r);
    cs_free(&s);
    free(addr);
    for (int k = 0; k < 3; k++) free(list[k]);
  }
}

/* ---- fill buffers -------------------------------------------------------------------------- */

/* The model gives L1D misses their fill buffers in turn (gus_model.c, fbnext): the buffer that
 * frees first, as every miss frees its buffer at its slot on the L2 -> L1D link, later than all
 * misses before it. Independent loads that hit the L2 (lines warmed past the L1D) between DRAM
 * misses, whose latencies alone would free buffers out of order, on 1 to 12 buffers:
 * gus_check_sets finds the buffers out of turn if that no longer holds. */
static void test_fill_buffer_order(void **state) {
  (void)state;
  wi_rng rng;
  rng_seed(&rng, tu_seed() + 7);
  for (int round = 0; round < 6; round++) {
    gus_machine m;
    gus_machine_default(&m);
    m.fill_buffers = 1 + (uint32_t)rng_below(&rng, 12);
    const size_t warm = 2 * m.l1d.size / m.line, n = warm + 4000;
    uint64_t *addr = xcalloc(n, sizeof *addr);
    for (size_t i = 0; i < n; i++) {
      const uint64_t line = i < warm || rng_below(&rng, 3) ? rng_below(&rng, warm) : warm + 64 * i;
      addr[i] = 0x40000000 + line * m.line;
    }
    cstream s;
    cs_init(&s, IC_LOAD, n, addr);
    wi_err err = {0};
    gus *g = gus_create(&m, 2, 1, true, 1, &err);
    if (!g) fail_msg("gus_create: %s", err.msg);
    char msg[200];
    for (size_t i = 0; i < n; i++) {
      gus_step(g, 0, &s.dec, &s.ins[i], s.mem);
      if (i % 5 == 0 && !gus_check_sets(g, msg, sizeof msg))
        fail_msg("round %d, %u buffers, load %zu: %s", round, m.fill_buffers, i, msg);
    }
    gus_result r;
    gus_finish(g, &r);
    assert_true(r.l1d_misses > r.l2_misses && r.l2_misses > 1000); /* both kinds of miss */
    gus_result_free(&r);
    gus_free(g);
    cs_free(&s);
    free(addr);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_port_sets),
    cmocka_unit_test(test_lru_levels),
    cmocka_unit_test(test_fill_buffer_order),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

/* test_gus.c — the one-pass Gus model on synthetic streams: analytic cycle counts, taint ranking,
 * sensitivity, memory, determinism and the taint-set machinery. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testutil.h"
#include "tu_gsyn.h"

#include "gus.h"
#include "gus_int.h"
#include "ooo.h"
#include "tbuild.h"
#include "util.h"

/* ---- building streams ------------------------------------------------------------------------ */

static uint32_t syn_static(syn *s, int cls, regset_t src, regset_t addr, regset_t dst, const char *text) {
  dec_insn d;
  memset(&d, 0, sizeof d);
  d.pc = 0x401000 + 4 * s->dec.n;
  d.len = 4;
  d.cls = (uint8_t)cls;
  d.src = src;
  d.addr_src = addr;
  d.dst = dst;
  snprintf(d.text, sizeof d.text, "%s", text);
  VEC_PUSH(s->dec, d);
  return (uint32_t)(s->dec.n - 1);
}

/* Execute sid; with n_mem accesses given as (addr, size, is_store) triples. */
static void syn_exec(syn *s, uint32_t sid, int n_mem, ...) {
  trace_insn t;
  memset(&t, 0, sizeof t);
  t.pc = s->dec.a[sid].pc;
  t.next_pc = t.pc + 4;
  t.sid = sid;
  t.rep = 1;
  t.len = 4;
  t.mem_off = (uint32_t)s->mem.n;
  t.n_mem = (uint16_t)n_mem;
  va_list ap;
  va_start(ap, n_mem);
  for (int i = 0; i < n_mem; i++) {
    trace_mem m;
    memset(&m, 0, sizeof m);
    m.addr = va_arg(ap, uint64_t);
    m.size = va_arg(ap, uint32_t);
    m.is_store = (uint8_t)va_arg(ap, int);
    VEC_PUSH(s->mem, m);
  }
  va_end(ap);
  VEC_PUSH(s->ins, t);
}

#define R(x) RG_BIT(RG_##x)
#define V(k) RG_BIT(RG_V0 + (k))
#define GPR(k) RG_BIT(k)

static gus_result run(syn *s, uint32_t window) {
  gus_machine m;
  gus_machine_default(&m);
  gus_result r;
  wi_err err = {0};
  wi_rc rc = gus_run(&m, window, syn_source(s), &r, &err);
  if (rc) fail_msg("gus_run: %s", err.msg);
  return r;
}

static void assert_near(double got, double want, double rel, const char *what) {
  if (fabs(got - want) > rel * want) fail_msg("%s: got %.4f, want %.4f (+-%.0f%%)", what, got, want, rel * 100);
}

/* ---- machine ----------------------------------------------------------------------------------- */

static void test_machine_check(void **state) {
  (void)state;
  gus_machine m;
  gus_machine_default(&m);
  wi_err err = {0};
  assert_int_equal(gus_machine_check(&m, &err), WI_OK);
  char buf[32];
  assert_string_equal(gus_res_name(&m, GUS_R_PORT0 + 5, buf, sizeof buf), "P5");
  assert_string_equal(gus_res_name(&m, GUS_R_FILLBUF, buf, sizeof buf), "fillbuf");
  assert_int_equal(gus_res_count(&m), GUS_R_PORT0 + 12);

  gus_machine b = m;
  b.cls[IC_ALU].uop[0].ports = 1u << 13; /* port 13 of 12 */
  assert_int_equal(gus_machine_check(&b, &err), WI_EINVAL);
  assert_non_null(strstr(err.msg, "alu"));
  b = m;
  b.l1d.size = 48 * 1000;
  assert_int_equal(gus_machine_check(&b, &err), WI_EINVAL);
  assert_non_null(strstr(err.msg, "l1d"));
  b = m;
  b.dispatch_width = 0;
  assert_int_equal(gus_machine_check(&b, &err), WI_EINVAL);
  assert_null(gus_new(&m, 0, 16, &err));
  assert_non_null(strstr(err.msg, "window"));
  assert_null(gus_new(&m, 17, 16, &err));
}

/* ---- analytic cases ------------------------------------------------------------------------------ */

/* A dependent add chain: 1 cycle per instruction. */
static void test_dep_chain(void **state) {
  (void)state;
  syn s = {0};
  uint32_t a = syn_static(&s, IC_ALU, R(RAX), 0, R(RAX) | R(FLAGS), "add rax, 1");
  const int N = 20000;
  for (int i = 0; i < N; i++) syn_exec(&s, a, 0);
  gus_result r = run(&s, 2);
  assert_int_equal(r.insns, N);
  assert_near((double)r.cycles / N, 1.0, 0.10, "dependent adds: cycles per instruction");
  assert_true(r.bound_data > (uint64_t)N * 9 / 10);
  gus_result_free(&r);
  syn_free(&s);
}

/* An FMA chain: FMA latency (4) per instruction. */
static void test_fma_chain(void **state) {
  (void)state;
  syn s = {0};
  uint32_t f = syn_static(&s, IC_FMA, V(0) | V(1) | V(2), 0, V(0), "vfmadd231ps ymm0, ymm1, ymm2");
  const int N = 10000;
  for (int i = 0; i < N; i++) syn_exec(&s, f, 0);
  gus_result r = run(&s, 2);
  assert_near((double)r.cycles / N, 4.0, 0.10, "FMA chain: cycles per instruction");
  gus_result_free(&r);
  syn_free(&s);
}

/* Independent adds: IPC = min(dispatch width 6, ALU ports 5) = 5. */
static void test_independent_adds(void **state) {
  (void)state;
  syn s = {0};
  uint32_t sid[10];
  for (int k = 0; k < 10; k++) sid[k] = syn_static(&s, IC_ALU, GPR(RG_R8 - 2 + k), 0, GPR(RG_R8 - 2 + k) | R(FLAGS), "add r, 1");
  const int N = 50000;
  for (int i = 0; i < N; i++) syn_exec(&s, sid[i % 10], 0);
  gus_result r = run(&s, 2);
  assert_near((double)N / (double)r.cycles, 5.0, 0.10, "independent adds: IPC");
  gus_result_free(&r);
  /* with 8 ALU ports the dispatch width (6) binds instead */
  gus_machine m;
  gus_machine_default(&m);
  m.cls[IC_ALU].uop[0].ports = 0xff;
  wi_err err = {0};
  assert_int_equal(gus_run(&m, 2, syn_source(&s), &r, &err), WI_OK);
  assert_near((double)N / (double)r.cycles, 6.0, 0.10, "independent adds on 8 ports: IPC");
  assert_true(r.res[GUS_R_DISPATCH].bound > (uint64_t)N / 2);
  gus_result_free(&r);
  syn_free(&s);
}

/* ---- taint ranking ---------------------------------------------------------------------------- */

/* imul rax, rax (3-cycle chain) among independent adds: the chain ranks first. */
static void test_chain_ranked_first(void **state) {
  (void)state;
  syn s = {0};
  uint32_t mul = syn_static(&s, IC_MUL, R(RAX), 0, R(RAX) | R(FLAGS), "imul rax, rax");
  uint32_t add[6];
  for (int k = 0; k < 6; k++) add[k] = syn_static(&s, IC_ALU, GPR(RG_R8 + k), 0, GPR(RG_R8 + k) | R(FLAGS), "add r, 1");
  const int ITERS = 5000;
  for (int i = 0; i < ITERS; i++) {
    syn_exec(&s, mul, 0);
    for (int k = 0; k < 6; k++) syn_exec(&s, add[k], 0);
  }
  for (uint32_t w = 1; w <= 4; w *= 2) {
    gus_result r = run(&s, w);
    assert_near((double)r.cycles / ITERS, 3.0, 0.10, "imul chain: cycles per iteration");
    for (uint32_t i = 0; i < r.n_static; i++) assert_true(r.taint[i] <= r.count[i]);
    if (w == 1) {
      /* At a lag of exactly one ROB the popped instruction is the one whose retirement frees
       * the entry for the next dispatch: in ROB-bound code everything is tainted (the known
       * weakness of a single fixed lag). */
      gus_result_free(&r);
      continue;
    }
    uint32_t top = 0;
    for (uint32_t i = 1; i < r.n_static; i++)
      if (r.taint[i] > r.taint[top]) top = i;
    assert_int_equal(top, mul);
    assert_true(r.taint[mul] > (uint64_t)ITERS * 9 / 10);
    for (int k = 0; k < 6; k++) assert_true(r.taint[add[k]] * 10 < r.taint[mul]);
    gus_result_free(&r);
  }
  syn_free(&s);
}

/* Dispatch-bound code: every instruction is on the dispatch chain, so all are tainted. */
static void test_dispatch_bound_all_tainted(void **state) {
  (void)state;
  syn s = {0};
  uint32_t sid[12];
  for (int k = 0; k < 12; k++) {
    regset_t r = k % 2 ? V(k) : GPR(RG_R8 + k / 2);
    sid[k] = syn_static(&s, k % 2 ? IC_VEC_ALU : IC_ALU, r, 0, r, "op");
  }
  gus_machine m;
  gus_machine_default(&m);
  m.dispatch_width = 2; /* far below the ports */
  const int N = 24000;
  for (int i = 0; i < N; i++) syn_exec(&s, sid[i % 12], 0);
  gus_result r;
  wi_err err = {0};
  assert_int_equal(gus_run(&m, 2, syn_source(&s), &r, &err), WI_OK);
  assert_near((double)N / (double)r.cycles, 2.0, 0.05, "dispatch-bound IPC");
  for (int k = 0; k < 12; k++) assert_true(r.taint[sid[k]] >= r.count[sid[k]] * 95 / 100);
  gus_result_free(&r);
  syn_free(&s);
}

/* ---- sensitivity ------------------------------------------------------------------------------ */

/* Independent shuffles (port 5 only) among adds: the port-5 bound is named by sensitivity. */
static void test_port_bound_sensitivity(void **state) {
  (void)state;
  syn s = {0};
  uint32_t shuf[8], add[8];
  for (int k = 0; k < 8; k++) {
    shuf[k] = syn_static(&s, IC_SHUFFLE, V(k) | V(15), 0, V(k), "vpshufb ymm, ymm, ymm15");
    add[k] = syn_static(&s, IC_ALU, GPR(RG_R8 + k), 0, GPR(RG_R8 + k) | R(FLAGS), "add r, 1");
  }
  const int N = 8000;
  for (int i = 0; i < N; i++) {
    syn_exec(&s, shuf[i % 8], 0);
    syn_exec(&s, add[i % 8], 0);
  }
  gus_machine m;
  gus_machine_default(&m);
  m.cls[IC_SHUFFLE].uop[0].ports = 1u << 5; /* ymm vpshufb / vpermd: port 5 only */
  int nr = gus_res_count(&m);
  gus_sens_row rows[GUS_R_MAX], rows2[GUS_R_MAX];
  gus_result base;
  wi_err err = {0};
  assert_int_equal(gus_sensitivity(&m, 2, syn_source(&s), 1.5, 1, rows, &base, &err), WI_OK);
  assert_near((double)base.cycles / N, 1.0, 0.10, "one shuffle per cycle");
  int best = 0;
  for (int r = 0; r < nr; r++) {
    assert_int_equal(rows[r].res, r);
    if (rows[r].speedup_x2 > rows[best].speedup_x2) best = r;
  }
  char buf[16];
  if (best != GUS_R_PORT0 + 5) fail_msg("top resource %s, want P5", gus_res_name(&m, best, buf, sizeof buf));
  assert_true(rows[best].speedup_x2 > 1.5);
  assert_true(rows[best].speedup_factor > 1.3);
  for (int r = 0; r < nr; r++)
    if (r != best) assert_true(rows[r].speedup_x2 < 1.1);
  /* no latency to halve on the ROB: not applicable */
  assert_true(rows[GUS_R_ROB].speedup_half_latency == 0.0);
  /* an unused port: exactly 1 */
  assert_true(rows[GUS_R_PORT0 + 7].speedup_x2 == 1.0);
  /* threads do not change anything */
  assert_int_equal(gus_sensitivity(&m, 2, syn_source(&s), 1.5, 3, rows2, NULL, &err), WI_OK);
  for (int r = 0; r < nr; r++) {
    assert_true(rows[r].speedup_x2 == rows2[r].speedup_x2);
    assert_true(rows[r].speedup_half_latency == rows2[r].speedup_half_latency);
    assert_true(rows[r].speedup_factor == rows2[r].speedup_factor);
  }
  gus_result_free(&base);
  syn_free(&s);
}

/* ---- memory ------------------------------------------------------------------------------------ */

/* A pointer chase over random lines of 256 MiB: DRAM latency per load. */
static void test_pointer_chase(void **state) {
  (void)state;
  syn s = {0};
  uint32_t ld = syn_static(&s, IC_LOAD, 0, R(RAX), R(RAX), "mov rax, [rax]");
  wi_rng rng;
  rng_seed(&rng, 42);
  const int N = 3000;
  for (int i = 0; i < N; i++) syn_exec(&s, ld, 1, (uint64_t)(0x10000000 + rng_below(&rng, 1u << 22) * 64), 8u, 0);
  gus_result r = run(&s, 2);
  gus_machine m;
  gus_machine_default(&m);
  /* random lines of 256 MiB miss the STLB and the DRAM row: DRAM latency plus a page walk and
   * a row conflict */
  assert_near((double)r.cycles / N,
              (double)(m.dram_latency + m.dram_t_rp + m.dram_t_rcd + m.stlb_latency + m.walk_latency), 0.10,
              "pointer chase: cycles per load");
  assert_true(r.llc_misses > (uint64_t)N * 9 / 10);
  assert_int_equal(r.taint[ld], r.count[ld]);
  gus_result_free(&r);
  syn_free(&s);
}

/* A sequential stream of independent loads: L1D fill buffers bound it (no prefetchers). */
static void test_stream_fill_buffers(void **state) {
  (void)state;
  syn s = {0};
  uint32_t ld = syn_static(&s, IC_LOAD, 0, R(RSI), R(RAX), "mov rax, [rsi]");
  const int N = 64000; /* 8000 lines */
  for (int i = 0; i < N; i++) syn_exec(&s, ld, 1, (uint64_t)(0x20000000 + 8 * (uint64_t)i), 8u, 0);
  gus_machine m;
  gus_machine_default(&m);
  gus_sens_row rows[GUS_R_MAX];
  gus_result base;
  wi_err err = {0};
  assert_int_equal(gus_sensitivity(&m, 2, syn_source(&s), 2.0, 2, rows, &base, &err), WI_OK);
  double lines = N / 8.0, per_line = (double)m.dram_latency / m.fill_buffers; /* row hits */
  assert_near((double)base.cycles / lines, per_line, 0.10, "stream: cycles per line");
  int best = 0;
  for (int r = 0; r < gus_res_count(&m); r++)
    if (rows[r].speedup_x2 > rows[best].speedup_x2) best = r;
  assert_int_equal(best, GUS_R_FILLBUF);
  assert_true(rows[GUS_R_DRAM].speedup_half_latency > 1.5);
  gus_result_free(&base);
  syn_free(&s);
}

/* Store, reload, add: a chain through memory of std + forwarding + add latency. */
static void test_store_forwarding(void **state) {
  (void)state;
  syn s = {0};
  uint32_t st = syn_static(&s, IC_STORE, R(RAX), R(RSP), 0, "mov [rsp-8], rax");
  uint32_t ld = syn_static(&s, IC_LOAD, 0, R(RSP), R(RAX), "mov rax, [rsp-8]");
  uint32_t ad = syn_static(&s, IC_ALU, R(RAX), 0, R(RAX) | R(FLAGS), "add rax, 1");
  const int N = 5000;
  for (int i = 0; i < N; i++) {
    syn_exec(&s, st, 1, (uint64_t)0x7ff000, 8u, 1);
    syn_exec(&s, ld, 1, (uint64_t)0x7ff000, 8u, 0);
    syn_exec(&s, ad, 0);
  }
  gus_result r = run(&s, 2);
  gus_machine m;
  gus_machine_default(&m);
  double want = m.std.latency + m.stlf_latency + m.cls[IC_ALU].uop[0].latency;
  assert_near((double)r.cycles / N, want, 0.10, "store-forwarding chain: cycles per iteration");
  assert_true(r.bound_memdep > (uint64_t)N * 9 / 10);
  gus_result_free(&r);
  syn_free(&s);
}

/* A load hitting an L1D line still being filled waits for that line's fill, also after a later
 * miss to the same set moved the line off the MRU way (the fill time stays in the line's slot
 * while the LRU order changes). Load A misses; a load dependent on it misses line B (twice as
 * late); a second load of A starts an FMA chain that outlasts both. With B in A's set or in the
 * next set the run must take the same cycles: reading B's fill instead would add a DRAM trip. */
static void test_l1_fill_slot(void **state) {
  (void)state;
  gus_machine m;
  gus_machine_default(&m);
  const uint64_t A = 0x30000000, way_bytes = (uint64_t)m.l1d.size / m.l1d.ways; /* sets x line */
  const uint64_t t_mem = m.dram_latency + m.dram_t_rp + m.dram_t_rcd + m.stlb_latency + m.walk_latency + m.l1d.latency;
  const uint32_t K = (uint32_t)(t_mem / 2) + 16; /* FMA chain: 4 cycles each, > 2 x t_mem */
  assert_true(K + 8 < m.rob); /* the chain fits in the window with the loads */
  uint64_t cyc[2];
  for (int same = 0; same < 2; same++) {
    syn s = {0};
    uint32_t l1 = syn_static(&s, IC_LOAD, 0, R(RSI), R(RAX), "mov rax, [rsi]");
    uint32_t l2 = syn_static(&s, IC_LOAD, 0, R(RAX), R(RBX), "mov rbx, [rax]");
    uint32_t l3 = syn_static(&s, IC_LOAD, 0, R(RSI), V(0), "vmovups ymm0, [rsi]");
    uint32_t f = syn_static(&s, IC_FMA, V(0) | V(1) | V(2), 0, V(0), "vfmadd231ps ymm0, ymm1, ymm2");
    /* B on the next page either way: the same set as A, or the next set */
    const uint64_t B = A + way_bytes + (same ? 0 : m.line);
    syn_exec(&s, l1, 1, A, 8u, 0);
    syn_exec(&s, l2, 1, B, 8u, 0);
    syn_exec(&s, l3, 1, A + 8, 8u, 0);
    for (uint32_t i = 0; i < K; i++) syn_exec(&s, f, 0);
    gus_result r = run(&s, 2);
    assert_int_equal(r.l1d_misses, 2);
    cyc[same] = r.cycles;
    gus_result_free(&r);
    syn_free(&s);
  }
  assert_int_equal(cyc[1], cyc[0]);
  assert_true(cyc[0] >= 4 * (uint64_t)K); /* the chain decides the run */
}

/* A serializing instruction drains the window: cycles add up instead of overlapping. */
/* The L1D keeps LRU by last-use stamps (gus_model.c, l1_access): its misses must be those of a
 * list kept most recent first, on loads over a few lines per set (hits below the most recent
 * way, evictions, empty ways early on), with random ways and sets. Up to 512 lines share the
 * 256-entry way hint (L1_HINT_N), so stale and colliding hints are exercised too: a hinted hit
 * that skips its stamp, or a hint trusted without its tag, changes the misses. */
static void test_l1_lru(void **state) {
  (void)state;
  wi_rng rng;
  rng_seed(&rng, tu_seed() + 7);
  for (int round = 0; round < 6; round++) {
    gus_machine m;
    gus_machine_default(&m);
    m.l1d.ways = 1 + (uint32_t)rng_below(&rng, 16);
    const uint32_t sets = 1u << rng_below(&rng, 5);
    m.l1d.size = sets * m.l1d.ways * m.line;
    syn s = {0};
    uint32_t ld = syn_static(&s, IC_LOAD, 0, R(RSI), R(RAX), "mov rax, [rsi]");
    /* lines a little beyond capacity, the recent ones more often */
    const uint64_t n_lines = (uint64_t)sets * m.l1d.ways + 1 + rng_below(&rng, (uint64_t)sets * m.l1d.ways);
    uint64_t *list = calloc((size_t)sets * m.l1d.ways, sizeof *list); /* per set, most recent first; line + 1 */
    uint64_t misses = 0, prev = 0;
    for (int i = 0; i < 20000; i++) {
      uint64_t line = rng_below(&rng, 4) ? (prev + rng_below(&rng, 2 * sets + 1)) % n_lines : rng_below(&rng, n_lines);
      prev = line;
      syn_exec(&s, ld, 1, 0x40000000 + line * m.line, 8u, 0);
      uint64_t *L = list + (line % sets) * m.l1d.ways;
      uint32_t w = 0;
      while (w < m.l1d.ways && L[w] != line + 1) w++;
      if (w == m.l1d.ways) {
        misses++;
        w = m.l1d.ways - 1;
      }
      for (; w > 0; w--) L[w] = L[w - 1];
      L[0] = line + 1;
    }
    gus_result r;
    wi_err err = {0};
    assert_int_equal(gus_run(&m, 2, syn_source(&s), &r, &err), WI_OK);
    assert_int_equal(r.l1d_misses, misses);
    gus_result_free(&r);
    free(list);
    syn_free(&s);
  }
}

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

/* The tag-only caches (gus_model.c, cache_access: L2, LLC, DTLB, STLB) find the line and move
 * the ways above it down in one pass: their misses must be those of LRU lists kept most recent
 * first, the L2 seeing the L1D's misses and the LLC the L2's, with random geometries (hits at
 * every depth, empty ways early on, evictions from full sets). */
static void test_lower_lru(void **state) {
  (void)state;
  wi_rng rng;
  rng_seed(&rng, tu_seed() + 11);
  int l2_both = 0; /* rounds whose L2 both hit and missed */
  for (int round = 0; round < 6; round++) {
    gus_machine m;
    gus_machine_default(&m);
    uint32_t ways[4], sets[4];
    for (int k = 0; k < 4; k++) {
      ways[k] = 1 + (uint32_t)rng_below(&rng, k ? 16 : 2);
      sets[k] = 1u << rng_below(&rng, k ? 4 : 2);
    }
    /* an L2 larger than the L1D (at most 4 lines), so that it can hit where the L1D missed */
    ways[1] = 2 + (uint32_t)rng_below(&rng, 15);
    sets[1] = 2u << rng_below(&rng, 3);
    m.l1d.ways = ways[0];
    m.l1d.size = sets[0] * ways[0] * m.line;
    m.l2.ways = ways[1];
    m.l2.size = sets[1] * ways[1] * m.line;
    m.llc.ways = ways[2];
    m.llc.size = sets[2] * ways[2] * m.line;
    m.dtlb_ways = ways[3];
    m.dtlb_entries = sets[3] * ways[3];
    syn s = {0};
    uint32_t ld = syn_static(&s, IC_LOAD, 0, R(RSI), R(RAX), "mov rax, [rsi]");
    uint32_t total = 0;
    for (int k = 0; k < 4; k++) total += sets[k] * ways[k];
    uint64_t *list[4];
    for (int k = 0; k < 4; k++) list[k] = calloc((size_t)sets[k] * ways[k], sizeof *list[k]);
    /* more lines than the L1D holds, up to a little beyond the L2's and LLC's capacity, the
     * recent ones more often */
    const uint64_t n_lines = sets[0] * ways[0] + 2 + rng_below(&rng, 2 * (uint64_t)total);
    uint64_t miss[4] = {0}, prev = 0;
    for (int i = 0; i < 20000; i++) {
      uint64_t line = rng_below(&rng, 4) ? (prev + rng_below(&rng, 2 * sets[1] + 1)) % n_lines : rng_below(&rng, n_lines);
      prev = line;
      /* four lines used per page, so the DTLB sees its own mix of hits and misses */
      const uint64_t page = line / 4, addr = 0x40000000 + page * m.page + (line % 4) * m.line;
      syn_exec(&s, ld, 1, addr, 8u, 0);
      const uint64_t pn = addr / m.page, ln = addr / m.line;
      if (!ref_lru(list[3] + (pn % sets[3]) * ways[3], ways[3], pn)) miss[3]++;
      if (ref_lru(list[0] + (ln % sets[0]) * ways[0], ways[0], ln)) continue;
      miss[0]++;
      if (ref_lru(list[1] + (ln % sets[1]) * ways[1], ways[1], ln)) continue;
      miss[1]++;
      if (!ref_lru(list[2] + (ln % sets[2]) * ways[2], ways[2], ln)) miss[2]++;
    }
    gus_result r;
    wi_err err = {0};
    assert_int_equal(gus_run(&m, 2, syn_source(&s), &r, &err), WI_OK);
    assert_int_equal(r.l1d_misses, miss[0]);
    assert_int_equal(r.l2_misses, miss[1]);
    assert_int_equal(r.llc_misses, miss[2]);
    assert_int_equal(r.res[GUS_R_TLB].uses, miss[3]);
    l2_both += miss[1] > 0 && miss[1] < miss[0]; /* the L2 both hit and missed */
    gus_result_free(&r);
    for (int k = 0; k < 4; k++) free(list[k]);
    syn_free(&s);
  }
  assert_true(l2_both >= 4);
}

static void test_serializing(void **state) {
  (void)state;
  syn s = {0};
  uint32_t mul = syn_static(&s, IC_MUL, R(RAX), 0, R(RAX), "imul rax, rax");
  uint32_t mul2 = syn_static(&s, IC_MUL, R(RBX), 0, R(RBX), "imul rbx, rbx");
  uint32_t fence = syn_static(&s, IC_SERIAL, 0, 0, 0, "lfence");
  const int N = 1000;
  for (int i = 0; i < N; i++) {
    for (int k = 0; k < 4; k++) syn_exec(&s, mul, 0);
    for (int k = 0; k < 4; k++) syn_exec(&s, mul2, 0);
  }
  gus_result a = run(&s, 2);
  s.ins.n = 0;
  for (int i = 0; i < N; i++) {
    for (int k = 0; k < 4; k++) syn_exec(&s, mul, 0);
    syn_exec(&s, fence, 0);
    for (int k = 0; k < 4; k++) syn_exec(&s, mul2, 0);
  }
  gus_result b = run(&s, 2);
  /* the two chains overlap without the fence (12 cycles per iteration), not with it (>= 24) */
  assert_near((double)a.cycles / N, 12.0, 0.10, "overlapping chains");
  assert_true((double)b.cycles / N >= 24.0);
  gus_result_free(&a);
  gus_result_free(&b);
  syn_free(&s);
}

/* ---- machinery -------------------------------------------------------------------------------- */

/* A random mix of classes, registers and memory accesses. */
static void random_stream(syn *s, wi_rng *rng, int n_static, int n) {
  static const int classes[] = {IC_ALU, IC_ALU, IC_ALU, IC_MOV, IC_LOAD, IC_STORE, IC_MUL, IC_FMA, IC_SHUFFLE,
                                IC_BRANCH, IC_LEA, IC_DIV, IC_ZERO, IC_NOP, IC_FP_ADD, IC_SERIAL};
  for (int i = 0; i < n_static; i++) {
    int cls = classes[rng_below(rng, WI_ARRAY_LEN(classes))];
    if (cls == IC_SERIAL && rng_below(rng, 4)) cls = IC_ALU;
    regset_t src = 0, dst = 0, addr = 0;
    for (int k = 0; k < 3; k++) src |= RG_BIT(rng_below(rng, 24));
    dst = RG_BIT(rng_below(rng, 24));
    if (cls == IC_LOAD || cls == IC_STORE || rng_below(rng, 4) == 0) addr = RG_BIT(rng_below(rng, 8));
    syn_static(s, cls, src, addr, dst, rng_below(rng, 8) == 0 ? "push rbx" : "op");
  }
  for (int i = 0; i < n; i++) {
    uint32_t sid = (uint32_t)rng_below(rng, (uint64_t)n_static);
    const dec_insn *d = &s->dec.a[sid];
    uint64_t a = 0x100000 + rng_below(rng, 1u << (rng_below(rng, 2) ? 12 : 26)) * 8;
    if (d->cls == IC_LOAD) syn_exec(s, sid, 1, a, 8u, 0);
    else if (d->cls == IC_STORE) syn_exec(s, sid, 1, a, 8u, 1);
    else if (d->addr_src && rng_below(rng, 2)) syn_exec(s, sid, 2, a, 8u, 0, a, 8u, 1);
    else if (d->addr_src) syn_exec(s, sid, 1, a, (uint32_t)(8 << rng_below(rng, 8)), (int)rng_below(rng, 2));
    else syn_exec(s, sid, 0);
  }
}

static gus_result run_direct(syn *s, const gus_machine *m, uint32_t window, uint32_t ring_mult, uint32_t paths) {
  wi_err err = {0};
  gus *g = gus_create(m, window, (uint32_t)s->dec.n, true, ring_mult, &err);
  if (!g) fail_msg("gus_create: %s", err.msg);
  gus_set_selfcheck(g, true);
  if (paths) gus_set_paths(g, paths);
  char msg[200];
  for (size_t i = 0; i < s->ins.n; i++) {
    const trace_insn *t = &s->ins.a[i];
    gus_step(g, t->sid, &s->dec.a[t->sid], t, s->mem.a);
    if (i % 997 == 0 && !gus_check_sets(g, msg, sizeof msg)) fail_msg("after instruction %zu: %s", i, msg);
  }
  if (!gus_check_sets(g, msg, sizeof msg)) fail_msg("at the end: %s", msg);
  gus_result r;
  gus_finish(g, &r);
  /* the flush's tests are self-checked too */
  if (!gus_check_sets(g, msg, sizeof msg)) fail_msg("after the flush: %s", msg);
  gus_free(g);
  return r;
}

/* Taint results must not depend on the ring size (stale entries never alias live instructions)
 * nor on the number of paths, the taint-queue tests (answered from the paths) must agree with
 * walking the chains, and gus_run must agree with stepping by hand. */
static void test_random_streams(void **state) {
  (void)state;
  wi_rng rng;
  uint64_t seed = tu_seed();
  rng_seed(&rng, seed);
  for (int round = 0; round < 6; round++) {
    syn s = {0};
    random_stream(&s, &rng, 5 + (int)rng_below(&rng, 60), 20000);
    gus_machine m;
    gus_machine_default(&m);
    m.rob = 16 + (uint32_t)rng_below(&rng, 200); /* small windows stress the ring */
    m.fill_buffers = 1 + (uint32_t)rng_below(&rng, 12);
    uint32_t window = 1u << rng_below(&rng, 3);
    gus_result a = run_direct(&s, &m, window, 1, 0);
    gus_result b = run_direct(&s, &m, window, 4, 2); /* 2 paths: resets and unsound paths */
    gus_result b3 = run_direct(&s, &m, window, 1, 3);
    assert_memory_equal(a.taint, b3.taint, a.n_static * sizeof *a.taint);
    gus_result_free(&b3);
    assert_int_equal(a.ticks, b.ticks);
    assert_int_equal(a.n_static, b.n_static);
    assert_memory_equal(a.taint, b.taint, a.n_static * sizeof *a.taint);
    uint64_t tainted = 0;
    for (uint32_t i = 0; i < a.n_static; i++) {
      assert_true(a.taint[i] <= a.count[i]);
      tainted += a.taint[i];
    }
    assert_true(tainted > 0);
    gus_result c;
    wi_err err = {0};
    assert_int_equal(gus_run(&m, window, syn_source(&s), &c, &err), WI_OK);
    assert_int_equal(a.ticks, c.ticks);
    assert_memory_equal(a.taint, c.taint, a.n_static * sizeof *a.taint);
    assert_true(a.cycles * m.dispatch_width >= a.insns);
    gus_result_free(&a);
    gus_result_free(&b);
    gus_result_free(&c);
    syn_free(&s);
  }
}

/* A ROB-bound dispatch materializes the ROB entry's pending interval as a new node; the tests
 * then take that node and the ROB entry's own node for one another (gus_model.c, pair_*): small
 * ROBs and every window, self-checked against the chain walk, so that a pair used after another
 * node's test, or a wrong interval, shows up as a disagreement. */
static void test_rob_bound_pairs(void **state) {
  (void)state;
  wi_rng rng;
  uint64_t seed = tu_seed() + 2;
  rng_seed(&rng, seed);
  for (int round = 0; round < 12; round++) {
    syn s = {0};
    random_stream(&s, &rng, 4 + (int)rng_below(&rng, 24), 12000);
    gus_machine m;
    gus_machine_default(&m);
    m.rob = 4 + (uint32_t)rng_below(&rng, 28);
    m.fill_buffers = 1 + (uint32_t)rng_below(&rng, 4);
    uint32_t window = 1 + (uint32_t)rng_below(&rng, 4);
    gus_result a = run_direct(&s, &m, window, 1, 0);
    gus_result_free(&a);
    syn_free(&s);
  }
}

/* A ROB of one entry: each instruction dispatches in the tick the one before retires (a ROB entry
 * binds on a tie), so N independent adds take exactly N times as long as one, and every add
 * after the first is ROB-bound. Through gus_run (the step's copies) and gus_step alike. */
static void test_rob_one_entry(void **state) {
  (void)state;
  gus_machine m;
  gus_machine_default(&m);
  m.rob = 1;
  m.fe_latency = 0; /* the first add dispatches at tick 0 */
  uint64_t one = 0;
  for (int n = 1; n <= 1000; n += 999) {
    syn s = {0};
    uint32_t a = syn_static(&s, IC_ALU, R(RAX), 0, R(RCX) | R(FLAGS), "add rcx, rax");
    for (int i = 0; i < n; i++) syn_exec(&s, a, 0);
    gus_result r, d;
    wi_err err = {0};
    if (gus_run(&m, 2, syn_source(&s), &r, &err)) fail_msg("gus_run: %s", err.msg);
    d = run_direct(&s, &m, 2, 1, 0);
    if (n == 1) one = r.ticks;
    assert_true(one > 0);
    if (r.ticks != n * one || d.ticks != n * one)
      fail_msg("%d adds: %llu and %llu ticks (by step), want %d x %llu", n, (unsigned long long)r.ticks,
               (unsigned long long)d.ticks, n, (unsigned long long)one);
    assert_int_equal(r.res[GUS_R_ROB].bound, n - 1);
    assert_int_equal(d.res[GUS_R_ROB].bound, n - 1);
    gus_result_free(&r);
    gus_result_free(&d);
    syn_free(&s);
  }
}

/* Dispatch sets that alternate between interleaved dependency chains (ROB-bound code with K
 * independent multiply chains; the chains share no live node) must not make each taint-queue
 * test walk a whole chain: the walks stay a few nodes per instruction. The answers are
 * self-checked against the chain walk. */
static void test_interleaved_chains_walk(void **state) {
  (void)state;
  for (int K = 1; K <= 8; K++) {
    syn s = {0};
    uint32_t mul[8];
    for (int k = 0; k < K; k++) mul[k] = syn_static(&s, IC_MUL, GPR(RG_R8 + k), 0, GPR(RG_R8 + k) | R(FLAGS), "imul r, r");
    const int N = 20000;
    for (int i = 0; i < N; i++) syn_exec(&s, mul[i % K], 0);
    gus_machine m;
    gus_machine_default(&m);
    wi_err err = {0};
    gus_result r[2];
    for (int v = 0; v < 2; v++) {
      /* v = 1: with 2 paths for K chains, paths are reset all the time (slow, but the same) */
      gus *g = gus_create(&m, 2, (uint32_t)s.dec.n, true, 1, &err);
      assert_non_null(g);
      gus_set_selfcheck(g, true);
      if (v) gus_set_paths(g, 2);
      for (size_t i = 0; i < s.ins.n; i++) gus_step(g, s.ins.a[i].sid, &s.dec.a[s.ins.a[i].sid], &s.ins.a[i], s.mem.a);
      gus_finish(g, &r[v]);
      char msg[200];
      if (!gus_check_sets(g, msg, sizeof msg)) fail_msg("K = %d, %s paths: %s", K, v ? "2" : "all", msg);
      uint64_t steps = gus_walk_steps(g);
      if (!v && steps > 4 * (uint64_t)N)
        fail_msg("K = %d: %llu nodes walked for %d instructions", K, (unsigned long long)steps, N);
      gus_free(g);
    }
    assert_true(r[0].taint[mul[0]] > 0);
    assert_memory_equal(r[0].taint, r[1].taint, r[0].n_static * sizeof *r[0].taint);
    gus_result_free(&r[0]);
    gus_result_free(&r[1]);
    syn_free(&s);
  }
}

/* Scaling every resource's throughput by 2 and latency by 0.5 can only make things faster. */
static void test_scaling_monotone(void **state) {
  (void)state;
  wi_rng rng;
  rng_seed(&rng, tu_seed() + 1);
  syn s = {0};
  random_stream(&s, &rng, 40, 20000);
  gus_machine m;
  gus_machine_default(&m);
  gus_result base = run(&s, 2), fast;
  gus_machine f = m;
  for (int r = 0; r < GUS_R_MAX; r++) {
    f.tput[r] = 2;
    f.lat[r] = 0.5;
  }
  wi_err err = {0};
  assert_int_equal(gus_run(&f, 2, syn_source(&s), &fast, &err), WI_OK);
  assert_true(fast.ticks < base.ticks);
  gus_result_free(&base);
  gus_result_free(&fast);
  syn_free(&s);
}

/* Taint tracking must not change timing or accounting: the model is compiled twice (with and
 * without the sets) and the copies take different shortcuts (no set moves in the L1D without
 * taint, one set union for the latest register operand). Every instruction uses the front end,
 * a dispatch slot, a ROB entry and a retire slot once, and its dispatch stage has one bound. */
/* Two results agree on everything but taint: cycles, counts, misses, resource uses and bounds. */
static void assert_same_timing(const gus_result *a, const gus_result *b) {
  assert_int_equal(a->ticks, b->ticks);
  assert_int_equal(a->insns, b->insns);
  assert_int_equal(a->n_static, b->n_static);
  assert_int_equal(a->bound_data, b->bound_data);
  assert_int_equal(a->bound_memdep, b->bound_memdep);
  assert_int_equal(a->l1d_misses, b->l1d_misses);
  assert_int_equal(a->l2_misses, b->l2_misses);
  assert_int_equal(a->llc_misses, b->llc_misses);
  for (int k = 0; k < GUS_R_MAX; k++) {
    assert_int_equal(a->res[k].uses, b->res[k].uses);
    assert_int_equal(a->res[k].bound, b->res[k].bound);
  }
  assert_memory_equal(a->count, b->count, a->n_static * sizeof *a->count);
}

static void test_taint_off_same_timing(void **state) {
  (void)state;
  wi_rng rng;
  rng_seed(&rng, tu_seed() + 2);
  for (int round = 0; round < 4; round++) {
    syn s = {0};
    random_stream(&s, &rng, 5 + (int)rng_below(&rng, 60), 20000);
    gus_machine m;
    gus_machine_default(&m);
    m.rob = 16 + (uint32_t)rng_below(&rng, 300);
    m.fill_buffers = 1 + (uint32_t)rng_below(&rng, 12);
    m.l1d.size = m.l1d.ways * m.line * (1u << rng_below(&rng, 7)); /* small L1D: many misses and fills */
    gus_result r[2];
    for (int taint = 0; taint < 2; taint++) {
      wi_err err = {0};
      gus *g = gus_create(&m, 2, (uint32_t)s.dec.n, taint, 1, &err);
      if (!g) fail_msg("gus_create: %s", err.msg);
      assert_int_equal(gus_run_source(g, syn_source(&s), &err), WI_OK);
      gus_finish(g, &r[taint]);
      gus_free(g);
    }
    assert_same_timing(&r[0], &r[1]);
    assert_int_equal(r[0].insns, s.ins.n);
    assert_true(r[0].l1d_misses > 0 || s.mem.n == 0); /* a few static sets have no memory operand */
    for (int k = GUS_R_FRONTEND; k <= GUS_R_RETIRE; k++) assert_int_equal(r[1].res[k].uses, s.ins.n);
    gus_result_free(&r[0]);
    gus_result_free(&r[1]);
    syn_free(&s);
  }
}

/* gus_run steps each instruction with a copy of the step made for its shape (no access, one load,
 * one store, the number of micro-ops, no serializing or stack-engine work; gus_model.c,
 * run_batch), gus_step with the general copy: both must give the same timing, accounting and
 * taint, with and without taint tracking, on streams holding every shape. */
static void test_step_shapes(void **state) {
  (void)state;
  wi_rng rng;
  rng_seed(&rng, tu_seed() + 5);
  for (int round = 0; round < 4; round++) {
    syn s = {0};
    random_stream(&s, &rng, 20 + (int)rng_below(&rng, 60), 20000);
    /* and a run of one static instruction of each shape, in random order */
    uint32_t fixed[8];
    fixed[0] = syn_static(&s, IC_ALU, GPR(1) | GPR(2), 0, GPR(1), "add");
    fixed[1] = syn_static(&s, IC_FMA, V(1) | V(2), 0, V(1), "vfmadd");
    fixed[2] = syn_static(&s, IC_LOAD, 0, GPR(3), GPR(4), "mov");
    fixed[3] = syn_static(&s, IC_STORE, GPR(4), GPR(3), 0, "mov");
    fixed[4] = syn_static(&s, IC_ALU, GPR(4), GPR(3), GPR(4), "add");
    fixed[5] = syn_static(&s, IC_ALU, GPR(4), GPR(3), 0, "add");
    fixed[6] = syn_static(&s, IC_SERIAL, 0, 0, 0, "cpuid");
    fixed[7] = syn_static(&s, IC_NOP, 0, 0, 0, "nop");
    for (int i = 0; i < 4000; i++) {
      const int k = (int)rng_below(&rng, 8);
      const uint64_t a = 0x100000 + rng_below(&rng, 1u << 14) * 8;
      if (k == 2 || k == 4) syn_exec(&s, fixed[k], 1, a, 8u, 0);
      else if (k == 3 || k == 5) syn_exec(&s, fixed[k], 1, a, 8u, 1);
      else if (k == 6) syn_exec(&s, fixed[k], 2, a, 8u, 0, a + 64, 8u, 1);
      else syn_exec(&s, fixed[k], 0);
    }
    gus_machine m;
    gus_machine_default(&m);
    m.rob = 16 + (uint32_t)rng_below(&rng, 300);
    m.fill_buffers = 1 + (uint32_t)rng_below(&rng, 12);
    m.l1d.size = m.l1d.ways * m.line * (1u << rng_below(&rng, 7));
    m.cls[IC_FMA].n = 2; /* a class of two micro-ops */
    m.cls[IC_FMA].uop[1] = m.cls[IC_FMA].uop[0];
    /* every shape run_batch tells apart occurs: no access (one micro-op, other), one store or
     * one load (no micro-op, one: a load-op), one access otherwise, several accesses */
    uint64_t shape[7] = {0};
    for (size_t i = 0; i < s.ins.n; i++) {
      const trace_insn *t = &s.ins.a[i];
      const dec_insn *d = &s.dec.a[t->sid];
      const uint32_t nu = m.cls[d->cls].n;
      const bool st = t->n_mem && s.mem.a[t->mem_off].is_store;
      if (!t->n_mem) shape[nu == 1 ? 0 : 1]++;
      else if (t->n_mem > 1) shape[6]++;
      else if (!nu) shape[st ? 2 : 3]++;
      else shape[nu == 1 && !st ? 4 : 5]++;
    }
    for (int k = 0; k < 7; k++) assert_true(shape[k] > 0);
    for (int taint = 0; taint < 2; taint++) {
      gus_result r[2];
      for (int by_step = 0; by_step < 2; by_step++) {
        wi_err err = {0};
        gus *g = gus_create(&m, 2, (uint32_t)s.dec.n, taint, 1, &err);
        if (!g) fail_msg("gus_create: %s", err.msg);
        if (by_step)
          for (size_t i = 0; i < s.ins.n; i++)
            gus_step(g, s.ins.a[i].sid, &s.dec.a[s.ins.a[i].sid], &s.ins.a[i], s.mem.a);
        else
          assert_int_equal(gus_run_source(g, syn_source(&s), &err), WI_OK);
        gus_finish(g, &r[by_step]);
        gus_free(g);
      }
      assert_same_timing(&r[0], &r[1]);
      assert_memory_equal(r[0].taint, r[1].taint, r[0].n_static * sizeof *r[0].taint);
      gus_result_free(&r[0]);
      gus_result_free(&r[1]);
    }
    syn_free(&s);
  }
}

static void test_bad_source(void **state) {
  (void)state;
  syn s = {0};
  uint32_t a = syn_static(&s, IC_ALU, R(RAX), 0, R(RAX), "add rax, 1");
  syn_exec(&s, a, 0);
  s.ins.a[0].sid = 7;
  gus_result r;
  wi_err err = {0};
  gus_machine m;
  gus_machine_default(&m);
  assert_int_equal(gus_run(&m, 2, syn_source(&s), &r, &err), WI_EINVAL);
  assert_non_null(strstr(err.msg, "sid 7"));
  syn_free(&s);
}

/* A source that wraps another, cutting its batches to `cut` instructions and failing with
 * WI_ECORRUPT once `fail_at` instructions have been returned (0 = never). */
typedef struct cut_src {
  const gus_source *inner;
  size_t cut;
  uint64_t fail_at;
} cut_src;
typedef struct cut_cur {
  const cut_src *cs;
  void *inner;
  trace_batch b; /* the inner batch not yet handed out */
  size_t pos;
  uint64_t given;
} cut_cur;
static const dec_insn *cut_decoded(void *ctx, uint32_t sid) {
  const cut_src *cs = ctx;
  return cs->inner->decoded(cs->inner->ctx, sid);
}
static void *cut_open(void *ctx, wi_err *err) {
  const cut_src *cs = ctx;
  cut_cur *c = xcalloc(1, sizeof *c);
  c->cs = cs;
  c->inner = cs->inner->open(cs->inner->ctx, err);
  return c;
}
static wi_rc cut_next(void *cursor, trace_batch *b, wi_err *err) {
  cut_cur *c = cursor;
  if (c->cs->fail_at && c->given >= c->cs->fail_at) return wi_fail(err, WI_ECORRUPT, "cut source: failing at %llu", (unsigned long long)c->given);
  if (c->pos == c->b.n) {
    wi_rc rc = c->cs->inner->next(c->inner, &c->b, err);
    if (rc) return rc;
    c->pos = 0;
  }
  size_t k = c->b.n - c->pos < c->cs->cut ? c->b.n - c->pos : c->cs->cut;
  *b = c->b;
  b->insns = c->b.insns + c->pos;
  b->n = k;
  b->first_index = c->b.first_index + c->pos;
  c->pos += k;
  c->given += k;
  return WI_OK;
}
static void cut_close(void *cursor) {
  cut_cur *c = cursor;
  c->cs->inner->close(c->inner);
  free(c);
}

static wi_rc run_pf(const gus_machine *m, const gus_source *src, bool prefetch, gus_result *r, wi_err *err) {
  gus *g = gus_create(m, 2, src->n_static, true, 1, err);
  if (!g) fail_msg("gus_create: %s", err->msg);
  gus_set_prefetch(g, prefetch);
  wi_rc rc = gus_run_source(g, src, err);
  if (rc == WI_OK) gus_finish(g, r);
  gus_free(g);
  return rc;
}

/* Reading the source on a second thread (gus_pf) hands the model exactly the same batches: the
 * same results for batches of every size (copies whose mem_off is rebased: the in-memory source
 * indexes one array for all of them), the source's error when it fails part-way, and the
 * model's own error (a bad sid) while the reader is still running ahead. */
static void test_prefetch(void **state) {
  (void)state;
  wi_rng rng;
  rng_seed(&rng, tu_seed() + 3);
  syn s = {0};
  random_stream(&s, &rng, 50, 30000);
  gus_machine m;
  gus_machine_default(&m);
  m.rob = 64;
  const size_t cuts[] = {1, 7, 333, 4096};
  gus_result ref;
  wi_err err = {0};
  assert_int_equal(run_pf(&m, syn_source(&s), false, &ref, &err), WI_OK);
  for (size_t k = 0; k < WI_ARRAY_LEN(cuts); k++) {
    cut_src cs = {syn_source(&s), cuts[k], 0};
    gus_source src = *cs.inner;
    src.ctx = &cs;
    src.decoded = cut_decoded;
    src.open = cut_open;
    src.next = cut_next;
    src.close = cut_close;
    gus_result r;
    assert_int_equal(run_pf(&m, &src, true, &r, &err), WI_OK);
    assert_int_equal(r.ticks, ref.ticks);
    assert_int_equal(r.insns, ref.insns);
    assert_int_equal(r.n_static, ref.n_static);
    assert_memory_equal(r.taint, ref.taint, r.n_static * sizeof *r.taint);
    assert_memory_equal(r.count, ref.count, r.n_static * sizeof *r.count);
    assert_memory_equal(r.res, ref.res, sizeof r.res);
    gus_result_free(&r);
    /* the source fails part-way: its error, not a short result */
    cs.fail_at = 12345;
    memset(&err, 0, sizeof err);
    assert_int_equal(run_pf(&m, &src, true, &r, &err), WI_ECORRUPT);
    assert_non_null(strstr(err.msg, "cut source: failing at"));
  }
  /* a bad sid: the model stops while the reader is ahead (early: it waits on a full ring; late:
   * it may have finished) */
  const size_t bad[] = {100, 25000};
  for (size_t k = 0; k < 2; k++) {
    uint32_t keep = s.ins.a[bad[k]].sid;
    s.ins.a[bad[k]].sid = 999;
    cut_src cs = {syn_source(&s), 7, 0};
    gus_source src = *cs.inner;
    src.ctx = &cs;
    src.decoded = cut_decoded;
    src.open = cut_open;
    src.next = cut_next;
    src.close = cut_close;
    for (int pf = 0; pf < 2; pf++) {
      gus_result r;
      char want[64];
      snprintf(want, sizeof want, "instruction %zu has sid 999", bad[k]);
      memset(&err, 0, sizeof err);
      assert_int_equal(run_pf(&m, k ? syn_source(&s) : &src, pf, &r, &err), WI_EINVAL);
      assert_non_null(strstr(err.msg, want));
    }
    s.ins.a[bad[k]].sid = keep;
  }
  gus_result_free(&ref);
  syn_free(&s);
}

/* Empty input: zero cycles, no crash. */
static void test_empty(void **state) {
  (void)state;
  syn s = {0};
  syn_static(&s, IC_ALU, 0, 0, 0, "nop");
  gus_result r = run(&s, 2);
  assert_int_equal(r.cycles, 0);
  assert_int_equal(r.insns, 0);
  gus_result_free(&r);
  syn_free(&s);
}

/* ---- against the detailed model -------------------------------------------------------------- */

static uint64_t chase_state;
static void chase_addr(void *ctx, uint64_t pc, int slot, uint64_t *addr, uint32_t *size, bool *is_store) {
  (void)ctx, (void)pc, (void)slot, (void)size, (void)is_store;
  chase_state = chase_state * 6364136223846793005ULL + 1442695040888963407ULL;
  *addr = 0x20000000 + ((chase_state >> 20) % (1u << 22)) * 64; /* random lines of 256 MiB */
}

typedef struct vs_case {
  const char *name, *src;
  uint64_t iters;
  tb_mem_fn fn;
  const char *key; /* label of the instruction that must rank first by taint, or NULL */
} vs_case;

/* The same tbuild trace through uarch/ooo and Gus (machine from the same configuration):
 * predicted cycles within 10% on the analytic cases, and the chain ranked first. */
static void test_vs_detailed_model(void **state) {
  (void)state;
  static const vs_case cases[] = {
    {"dependent adds", "loop: add rax, 1\n add rax, 1\n add rax, 1\n add rax, 1\n dec rcx\n jnz loop\ndone: ret\n",
     20000, NULL, NULL},
    {"fma chain", "loop: key: vfmadd231ps ymm0, ymm1, ymm2\n vfmadd231ps ymm0, ymm1, ymm2\n dec rcx\n jnz loop\ndone: ret\n",
     20000, NULL, NULL},
    {"independent adds", "loop: add r8, 1\n add r9, 1\n add r10, 1\n add r11, 1\n add r12, 1\n add r13, 1\n add r14, 1\n"
     " add r15, 1\n add rsi, 1\n add rdi, 1\n dec rcx\n jnz loop\ndone: ret\n", 10000, NULL, NULL},
    {"imul chain", "loop: key: imul rax, rax\n add r8, 1\n add r9, 1\n add r10, 1\n add r11, 1\n dec rcx\n jnz loop\n"
     "done: ret\n", 20000, NULL, "key"},
    {"divider", "loop: key: div rbx\n dec rcx\n jnz loop\ndone: ret\n", 3000, NULL, "key"},
    {"L1 loads", "loop: mov r8, [rsi]\n mov r9, [rsi+8]\n mov r10, [rsi+16]\n add r8, r9\n add r10, r8\n dec rcx\n"
     " jnz loop\ndone: ret\n", 10000, NULL, NULL},
    {"pointer chase", "loop: key: mov rax, [rax]\n dec rcx\n jnz loop\ndone: ret\n", 1500, chase_addr, "key"},
  };
  ooo_config cfg;
  ooo_config_default(&cfg);
  gus_machine m;
  wi_err err = {0};
  assert_int_equal(gus_machine_from_ooo(&m, &cfg, &err), WI_OK);
  char *path = tu_tmp_path(".wtr");
  for (size_t i = 0; i < WI_ARRAY_LEN(cases); i++) {
    const vs_case *c = &cases[i];
    chase_state = 7;
    tbuild *tb = tb_new(c->src, 0x401000, &err);
    if (!tb) fail_msg("%s: tb_new: %s", c->name, err.msg);
    tb_loop(tb, "loop", "done", c->iters, c->fn, NULL);
    tb_exec(tb, tb_label(tb, "done"), NULL, 0);
    uint64_t key_pc = c->key ? tb_label(tb, c->key) : 0;
    if (tb_write(tb, path, &err)) fail_msg("%s: tb_write: %s", c->name, err.msg);
    tb_free(tb);
    trace_t *t = trace_open(path, &err);
    if (!t) fail_msg("%s: trace_open: %s", c->name, err.msg);
    ooo_model *om = ooo_new(&cfg, t, 0, &err);
    if (!om || ooo_run(om, UINT64_MAX, &err)) fail_msg("%s: ooo: %s", c->name, err.msg);
    uint64_t ooo_cyc = ooo_cycles(om);
    ooo_free(om);
    gus_source src;
    gus_source_trace(&src, t);
    gus_result r;
    assert_int_equal(gus_run(&m, 2, &src, &r, &err), WI_OK);
    double ratio = (double)r.cycles / (double)ooo_cyc;
    fprintf(stderr, "  %-16s ooo %8llu cycles, gus %8llu (%.3f)\n", c->name, (unsigned long long)ooo_cyc,
            (unsigned long long)r.cycles, ratio);
    if (ratio < 0.9 || ratio > 1.1) fail_msg("%s: gus %llu vs ooo %llu cycles", c->name, (unsigned long long)r.cycles,
                                             (unsigned long long)ooo_cyc);
    if (key_pc) {
      uint32_t top = 0;
      for (uint32_t s = 1; s < r.n_static; s++)
        if (r.taint[s] > r.taint[top]) top = s;
      assert_int_equal(trace_decoded(t, top)->pc, key_pc);
    }
    gus_result_free(&r);
    trace_close(t);
  }
  unlink(path);
  free(path);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_machine_check),
    cmocka_unit_test(test_dep_chain),
    cmocka_unit_test(test_fma_chain),
    cmocka_unit_test(test_independent_adds),
    cmocka_unit_test(test_chain_ranked_first),
    cmocka_unit_test(test_dispatch_bound_all_tainted),
    cmocka_unit_test(test_port_bound_sensitivity),
    cmocka_unit_test(test_pointer_chase),
    cmocka_unit_test(test_stream_fill_buffers),
    cmocka_unit_test(test_store_forwarding),
    cmocka_unit_test(test_l1_fill_slot),
    cmocka_unit_test(test_l1_lru),
    cmocka_unit_test(test_lower_lru),
    cmocka_unit_test(test_serializing),
    cmocka_unit_test(test_random_streams),
    cmocka_unit_test(test_rob_bound_pairs),
    cmocka_unit_test(test_rob_one_entry),
    cmocka_unit_test(test_interleaved_chains_walk),
    cmocka_unit_test(test_scaling_monotone),
    cmocka_unit_test(test_taint_off_same_timing),
    cmocka_unit_test(test_step_shapes),
    cmocka_unit_test(test_bad_source),
    cmocka_unit_test(test_empty),
    cmocka_unit_test(test_prefetch),
    cmocka_unit_test(test_vs_detailed_model),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

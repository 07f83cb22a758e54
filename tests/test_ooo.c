/* test_ooo.c — the out-of-order core model on synthetic traces: analytic throughput and
 * latency, branch prediction and wrong path, RAS repair, determinism and checkpoints,
 * memory ordering, interventions, top-down accounting. */
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "machine.h"
#include "ooo.h"
#include "tbuild.h"
#include "testutil.h"
#include "trace.h"

#define BASE 0x401000ULL

/* ---- helpers ------------------------------------------------------------------------------- */

typedef struct run_res {
  ooo_stats s;
  ooo_topdown td;
  double ipc;
  uint64_t warm_insns, warm_cycles; /* after the warm-up (the first 10% of the instructions) */
} run_res;

static void check_topdown(const ooo_model *m) {
  ooo_topdown td;
  ooo_get_topdown(m, &td);
  double sum = td.retiring + td.bad_speculation + td.frontend_bound + td.backend_bound;
  assert_true(fabs(sum - 1.0) < 1e-9);
  /* every slot of every cycle is accounted exactly once */
  const ooo_stats *s = ooo_get_stats(m);
  uint64_t tot = 0;
  for (int i = 0; i < OOO_SLOT_NUM; i++) tot += s->slots[i];
  assert_int_equal(tot, s->cycles * ooo_get_config(m)->core.rename_width);
}

static run_res run_cfg(const char *path, const ooo_config *cfg) {
  wi_err err;
  trace_t *t = tu_open_trace(path);
  ooo_model *m = ooo_new(cfg, t, 0, &err);
  if (!m) fail_msg("ooo_new: %s", err.msg);
  uint64_t n = trace_get_info(t)->n_insns;
  if (ooo_run(m, n / 10, &err)) fail_msg("ooo_run: %s", err.msg);
  uint64_t i0 = ooo_committed(m), c0 = ooo_cycles(m);
  if (ooo_run(m, UINT64_MAX, &err)) fail_msg("ooo_run: %s", err.msg);
  assert_true(ooo_finished(m));
  if (getenv("OOO_VERBOSE")) ooo_stats_print(m, 0, stderr);
  run_res r;
  r.s = *ooo_get_stats(m);
  ooo_get_topdown(m, &r.td);
  r.ipc = (double)r.s.insns / (double)r.s.cycles;
  r.warm_insns = r.s.insns - i0;
  r.warm_cycles = r.s.cycles - c0;
  assert_int_equal(r.s.insns, trace_get_info(t)->n_insns);
  check_topdown(m);
  ooo_free(m);
  trace_close(t);
  return r;
}

static run_res run_default(const char *path) {
  ooo_config c;
  ooo_config_default(&c);
  return run_cfg(path, &c);
}

static tbuild *build(const char *src) {
  wi_err err;
  tbuild *tb = tb_new(src, BASE, &err);
  if (!tb) fail_msg("tb_new: %s", err.msg);
  return tb;
}

/* A loop body of `n` copies of `line`, then dec rcx / jnz, run `iters` times. */
static char *loop_trace(const char *line, int n, uint64_t iters, tb_mem_fn fn, void *ctx) {
  size_t cap = (size_t)n * (strlen(line) + 2) + 256;
  char *src = malloc(cap);
  strcpy(src, "loop:\n");
  for (int i = 0; i < n; i++) {
    strcat(src, "  ");
    strcat(src, line);
    strcat(src, "\n");
  }
  strcat(src, "  dec rcx\n  jnz loop\ndone:\n  nop\n");
  tbuild *tb = build(src);
  tb_loop(tb, "loop", "done", iters, fn, ctx);
  char *path = tu_tb_finish(tb, tb_label(tb, "done"));
  free(src);
  return path;
}

/* ---- analytic throughput and latency ------------------------------------------------------------ */

static void test_dependent_add_chain(void **state) {
  (void)state;
  char *path = loop_trace("add rax, rbx", 40, 500, NULL, NULL);
  run_res r = run_default(path);
  /* 40 chained adds per iteration: 1 cycle each */
  double cyc_per_add = (double)r.warm_cycles / ((double)r.warm_insns * 40.0 / 42.0);
  print_message("add chain: %llu insns, %llu cycles, %.3f cycles/add\n", (unsigned long long)r.s.insns,
                (unsigned long long)r.s.cycles, cyc_per_add);
  assert_true(cyc_per_add > 0.99 && cyc_per_add < 1.03);
  unlink(path);
  free(path);
}

static void test_independent_adds(void **state) {
  (void)state;
  /* 10 independent accumulators: IPC = min(rename width 6, integer ALU ports 5) = 5 */
  const char *regs[] = {"rax", "rbx", "rdx", "rsi", "rdi", "r8", "r9", "r10", "r11", "r12"};
  char line[4096] = "";
  for (int k = 0; k < 4; k++)
    for (int i = 0; i < 10; i++) {
      char one[64];
      snprintf(one, sizeof one, "%sadd %s, 1", line[0] ? "\n  " : "", regs[i]);
      strcat(line, one);
    }
  char *path = loop_trace(line, 1, 1000, NULL, NULL);
  run_res r = run_default(path);
  double ipc = (double)r.warm_insns / (double)r.warm_cycles;
  print_message("independent adds: IPC %.3f (after warm-up)\n", ipc);
  assert_true(ipc > 4.9 && ipc < 5.01);
  /* with 4-wide rename the width binds instead */
  ooo_config c;
  ooo_config_default(&c);
  c.core.rename_width = 4;
  run_res r4 = run_cfg(path, &c);
  ipc = (double)r4.warm_insns / (double)r4.warm_cycles;
  print_message("independent adds, rename 4: IPC %.3f\n", ipc);
  assert_true(ipc > 3.95 && ipc <= 4.0);
  unlink(path);
  free(path);
}

static void test_fma_chain_and_throughput(void **state) {
  (void)state;
  ooo_config c;
  ooo_config_default(&c);
  uint32_t lat = c.uops[IC_FMA].u[0].latency;
  char *path = loop_trace("vfmadd231ps ymm0, ymm1, ymm2", 40, 200, NULL, NULL);
  run_res r = run_default(path);
  double per = (double)r.warm_cycles / ((double)r.warm_insns * 40.0 / 42.0);
  print_message("FMA chain: %.3f cycles/FMA (latency %u)\n", per, lat);
  assert_true(per > lat * 0.99 && per < lat * 1.03);
  unlink(path);
  free(path);
  /* 8 independent accumulators: 2 FMA ports -> 2 per cycle */
  char line[2048] = "";
  for (int k = 0; k < 5; k++)
    for (int i = 0; i < 8; i++) {
      char one[96];
      snprintf(one, sizeof one, "%svfmadd231ps ymm%d, ymm14, ymm15", line[0] ? "\n  " : "", i);
      strcat(line, one);
    }
  path = loop_trace(line, 1, 500, NULL, NULL);
  r = run_default(path);
  double fma_per_cycle = (double)r.warm_insns * 40.0 / 42.0 / (double)r.warm_cycles;
  print_message("independent FMAs: %.3f per cycle\n", fma_per_cycle);
  assert_true(fma_per_cycle > 1.97 && fma_per_cycle <= 2.001);
  unlink(path);
  free(path);
}

static void fixed_addr(void *ctx, uint64_t pc, int slot, uint64_t *addr, uint32_t *size, bool *is_store) {
  (void)ctx;
  (void)pc;
  (void)slot;
  (void)size;
  (void)is_store;
  *addr = 0x20000000ULL;
}

static void test_load_chain_l1(void **state) {
  (void)state;
  ooo_config c;
  ooo_config_default(&c);
  char *path = loop_trace("mov rax, [rax]", 40, 300, fixed_addr, NULL);
  run_res r = run_default(path);
  double per = (double)r.warm_cycles / ((double)r.warm_insns * 40.0 / 42.0);
  print_message("load chain: %.3f cycles/load (L1 latency %u)\n", per, c.mem.l1d.latency);
  assert_true(per > c.mem.l1d.latency * 0.99 && per < c.mem.l1d.latency * 1.03);
  unlink(path);
  free(path);
}

/* Accesses in the last line of the address space: the line-end computation wraps to 0 there, and
 * once made the model loop forever splitting the access. Loads and stores must complete. */
static void top_addr(void *ctx, uint64_t pc, int slot, uint64_t *addr, uint32_t *size, bool *is_store) {
  (void)ctx;
  (void)pc;
  (void)slot;
  (void)size;
  (void)is_store;
  *addr = 0xfffffffffffffff0ULL;
}

static void test_top_of_address_space(void **state) {
  (void)state;
  char *path = loop_trace("mov rax, [rbx]", 4, 50, top_addr, NULL);
  run_res r = run_default(path);
  assert_true(r.warm_insns > 0);
  unlink(path);
  free(path);
  path = loop_trace("mov [rbx], rax", 4, 50, top_addr, NULL);
  r = run_default(path);
  assert_true(r.warm_insns > 0);
  unlink(path);
  free(path);
}

/* ---- branches ------------------------------------------------------------------------------------ */

static void test_loop_branch_learned(void **state) {
  (void)state;
  char *path = loop_trace("add rax, rbx", 4, 5000, NULL, NULL);
  run_res r = run_default(path);
  print_message("loop branch: %llu mispredicts of %llu\n", (unsigned long long)r.s.mispredicts[BR_COND],
                (unsigned long long)r.s.branches[BR_COND]);
  assert_int_equal(r.s.branches[BR_COND], 5000);
  assert_true(r.s.mispredicts[BR_COND] <= 3);
  unlink(path);
  free(path);
}

static const char *const rand_src =
  "loop:\n"
  "  test rax, rax\n"
  "  jz skip\n"
  "  add rbx, 1\n"
  "  add rsi, 2\n"
  "skip:\n"
  "  add rdx, 1\n"
  "  dec rcx\n"
  "  jnz loop\n"
  "done:\n"
  "  nop\n";

/* Random outcomes of `jz skip`, seeded. */
static char *random_branch_trace(uint64_t seed, int iters) {
  tbuild *tb = build(rand_src);
  uint64_t loop = tb_label(tb, "loop"), skip = tb_label(tb, "skip"), done = tb_label(tb, "done");
  uint64_t jz = loop + tb_len(tb, loop);
  wi_rng rng;
  rng_seed(&rng, seed);
  for (int i = 0; i < iters; i++) {
    tb_exec(tb, loop, NULL, 0);
    tb_exec(tb, jz, NULL, 0);
    if (rng_below(&rng, 2)) tb_run(tb, jz + tb_len(tb, jz), skip, NULL, NULL);
    tb_run(tb, skip, done, NULL, NULL);
  }
  char *path = tu_tb_finish(tb, done);
  return path;
}

static void test_random_branch(void **state) {
  (void)state;
  uint64_t seed = tu_seed();
  char *path = random_branch_trace(seed, 4000);
  run_res r = run_default(path);
  double rate = (double)r.s.mispredicts[BR_COND] / 4000.0;
  print_message("random branch: %.1f%% of the random branches mispredicted; bad speculation %.1f%%, retiring %.1f%%, "
                "wrong path fetched %llu\n",
                100 * rate, 100 * r.td.bad_speculation, 100 * r.td.retiring, (unsigned long long)r.s.fetched[1]);
  assert_true(rate > 0.38 && rate < 0.62);
  assert_true(r.td.bad_speculation > r.td.retiring);
  assert_true(r.td.bad_speculation > r.td.frontend_bound);
  assert_true(r.td.bad_speculation > r.td.backend_bound);
  assert_true(r.s.fetched[1] > 0 && r.s.executed[1] > 0);
  /* perfect prediction removes all of it */
  ooo_config c;
  ooo_config_default(&c);
  c.fe.perfect_branch = true;
  run_res p = run_cfg(path, &c);
  assert_int_equal(p.s.mispredicts[BR_COND], 0);
  assert_int_equal(p.s.fetched[1], 0);
  assert_true(p.s.cycles * 2 < r.s.cycles);
  /* wrong_path = off: no wrong-path work at all, same mispredictions */
  ooo_config_default(&c);
  c.fe.wrong_path = WP_OFF;
  run_res o = run_cfg(path, &c);
  assert_int_equal(o.s.fetched[1], 0);
  assert_int_equal(o.s.mispredicts[BR_COND], r.s.mispredicts[BR_COND]);
  /* cap: at most N per misprediction */
  ooo_config_default(&c);
  c.fe.wrong_path = WP_CAP;
  c.fe.wrong_path_cap = 3;
  run_res k = run_cfg(path, &c);
  assert_true(k.s.fetched[1] <= 3 * k.s.mispredicts[BR_COND]);
  assert_true(k.s.fetched[1] > 0);
  /* JRS confidence with pipeline gating (Manne et al., ISCA 1998): fetch stops only while more
   * than conf_gate low-confidence branches are unresolved. Every random branch is low
   * confidence; the loop branch becomes high confidence. */
  run_res gate[7];
  for (uint32_t n = 0; n < 7; n++) {
    ooo_config_default(&c);
    c.fe.wrong_path = WP_CONFIDENCE;
    c.bp.conf_gate = n;
    gate[n] = run_cfg(path, &c);
    /* the same branches mispredict (give or take a few: training at commit sees another timing) */
    assert_true(gate[n].s.mispredicts[BR_COND] * 50 > r.s.mispredicts[BR_COND] * 49 &&
                gate[n].s.mispredicts[BR_COND] * 50 < r.s.mispredicts[BR_COND] * 51);
    print_message("confidence gating N=%u: wrong path fetched %llu (%.0f%% of normal %llu), IPC %.3f (%+.1f%% vs %.3f)\n",
                  n, (unsigned long long)gate[n].s.fetched[1], 100.0 * (double)gate[n].s.fetched[1] / (double)r.s.fetched[1],
                  (unsigned long long)r.s.fetched[1], gate[n].ipc, 100.0 * (gate[n].ipc / r.ipc - 1), r.ipc);
    if (n) { /* a higher threshold gates less: more wrong-path work, fewer cycles */
      assert_true(gate[n].s.fetched[1] >= gate[n - 1].s.fetched[1]);
      assert_true(gate[n].s.cycles <= gate[n - 1].s.cycles);
    }
  }
  /* N = 0 stops at every low-confidence branch: almost no wrong path, much slower */
  assert_true(gate[0].s.fetched[1] * 10 < r.s.fetched[1]);
  assert_true(gate[0].ipc < 0.9 * r.ipc);
  /* the default threshold: much less wrong-path work for a small IPC loss */
  ooo_config_default(&c);
  c.fe.wrong_path = WP_CONFIDENCE;
  const run_res *d = &gate[c.bp.conf_gate < 7 ? c.bp.conf_gate : 6];
  assert_true(d->s.fetched[1] * 10 < r.s.fetched[1] * 7); /* at least 30% less */
  assert_true(d->ipc > 0.95 * r.ipc);                     /* at most 5% slower */
  unlink(path);
  free(path);
}

/* ---- return-address stack ------------------------------------------------------------------------ */

static const char *const walk_src =
  "top:\n"
  "  call walk\n"
  "  dec rbx\n"
  "  jnz top\n"
  "done:\n"
  "  nop\n"
  "walk:\n"
  "  test rdi, rdi\n"
  "  jz leaf\n"
  "  call walk\n"
  "siteb:\n"
  "  call walk\n"
  "  nop\n" /* a `ret` right after the call would return to itself: a self-loop the trace
                reader takes for rep-string iterations */
  "  ret\n"
  "leaf:\n"
  "  ret\n";

typedef struct walk_gen {
  tbuild *tb;
  wi_rng rng;
  uint64_t walk, jz, call_a, call_b, nop_b, ret_n, leaf, rsp;
} walk_gen;

static void wg_call(walk_gen *g, uint64_t pc) {
  g->rsp -= 8;
  trace_mem a = {g->rsp, 8, 1, {0}};
  tb_exec(g->tb, pc, &a, 1);
}

static void wg_ret(walk_gen *g, uint64_t pc) {
  trace_mem a = {g->rsp, 8, 0, {0}};
  g->rsp += 8;
  tb_exec(g->tb, pc, &a, 1);
}

/* One random binary tree walk: every node is a call; a node is a leaf with probability 0.55
 * (data-dependent `jz leaf`) or at depth 12. */
static void wg_walk(walk_gen *g, int depth) {
  tb_exec(g->tb, g->walk, NULL, 0);
  tb_exec(g->tb, g->jz, NULL, 0);
  if (depth >= 12 || rng_below(&g->rng, 100) < 55) {
    wg_ret(g, g->leaf);
    return;
  }
  wg_call(g, g->call_a);
  wg_walk(g, depth + 1);
  wg_call(g, g->call_b);
  wg_walk(g, depth + 1);
  tb_exec(g->tb, g->nop_b, NULL, 0);
  wg_ret(g, g->ret_n);
}

static char *walk_trace(uint64_t seed, int walks) {
  walk_gen g;
  g.tb = build(walk_src);
  rng_seed(&g.rng, seed);
  tbuild *tb = g.tb;
  uint64_t top = tb_label(tb, "top");
  g.walk = tb_label(tb, "walk");
  g.jz = g.walk + tb_len(tb, g.walk);
  g.call_a = g.jz + tb_len(tb, g.jz);
  g.call_b = tb_label(tb, "siteb");
  g.nop_b = g.call_b + tb_len(tb, g.call_b);
  g.ret_n = g.nop_b + tb_len(tb, g.nop_b);
  g.leaf = tb_label(tb, "leaf");
  g.rsp = 0x7fff0000ULL;
  uint64_t dec = top + tb_len(tb, top), jnz = dec + tb_len(tb, dec);
  for (int i = 0; i < walks; i++) {
    wg_call(&g, top);
    wg_walk(&g, 0);
    tb_exec(tb, dec, NULL, 0);
    tb_exec(tb, jnz, NULL, 0);
  }
  char *path = tu_tb_finish(tb, tb_label(tb, "done"));
  return path;
}

static void test_ras_repair(void **state) {
  (void)state;
  uint64_t seed = tu_seed();
  char *path = walk_trace(seed, 400);
  uint64_t rets = 0, mis[RAS_REPAIR_NUM];
  for (int pol = 0; pol < RAS_REPAIR_NUM; pol++) {
    ooo_config c;
    ooo_config_default(&c);
    c.bp.ras_repair = pol;
    run_res r = run_cfg(path, &c);
    rets = r.s.branches[BR_RET];
    mis[pol] = r.s.mispredicts[BR_RET];
    print_message("RAS repair %-4s: %llu of %llu returns mispredicted, %llu conditional mispredicts, IPC %.3f\n",
                  pol == 0 ? "none" : pol == 1 ? "tos" : "full", (unsigned long long)mis[pol],
                  (unsigned long long)rets, (unsigned long long)r.s.mispredicts[BR_COND], r.ipc);
  }
  assert_true(rets > 1000);
  assert_true(mis[RAS_REPAIR_NONE] > 10 * (mis[RAS_REPAIR_FULL] + 1));
  assert_true(mis[RAS_REPAIR_FULL] * 1000 < rets); /* near zero */
  assert_true(mis[RAS_REPAIR_TOS] <= mis[RAS_REPAIR_NONE]);
  unlink(path);
  free(path);
}

/* ---- determinism and checkpoints ------------------------------------------------------------------- */

static void test_determinism_and_checkpoints(void **state) {
  (void)state;
  uint64_t seed = tu_seed();
  char *path = walk_trace(seed, 150);
  wi_err err;
  trace_t *t = tu_open_trace(path);
  uint64_t n = trace_get_info(t)->n_insns;
  const char *machines[] = {"golden_cove", "stress"};
  for (size_t k = 0; k < WI_ARRAY_LEN(machines); k++) {
    ooo_config c;
    if (machine_load(machines[k], &c, &err)) fail_msg("%s", err.msg);
    ooo_model *a = tu_ooo_new(t, &c), *b = tu_ooo_new(t, &c);
    tu_ooo_run(a, UINT64_MAX);
    tu_ooo_run(b, UINT64_MAX);
    assert_true(ooo_finished(a));
    tu_ooo_assert_same(a, b); /* the same trace twice: identical */
    assert_memory_equal(ooo_get_sid_stats(a), ooo_get_sid_stats(b), trace_get_info(t)->n_static * sizeof(ooo_sid_stats));
    /* in small pieces */
    ooo_model *p = tu_ooo_new(t, &c);
    while (!ooo_finished(p)) tu_ooo_run(p, 997);
    tu_ooo_assert_same(a, p);
    /* a checkpoint taken a third of the way: a clone and a copy continue identically */
    ooo_model *q = tu_ooo_new(t, &c);
    tu_ooo_run(q, n / 3);
    ooo_model *cl = ooo_clone(q, &err);
    if (!cl) fail_msg("%s", err.msg);
    ooo_model *cp = tu_ooo_new(t, &c);
    tu_ooo_run(cp, n / 2); /* whatever it did before is overwritten */
    if (ooo_copy(cp, q, &err)) fail_msg("%s", err.msg);
    tu_ooo_run(q, UINT64_MAX);
    tu_ooo_run(cl, UINT64_MAX);
    tu_ooo_run(cp, UINT64_MAX);
    tu_ooo_assert_same(a, q);
    tu_ooo_assert_same(a, cl);
    tu_ooo_assert_same(a, cp);
    /* reading the trace ahead on a second thread changes nothing, nor does a checkpoint copied
     * into such a model part-way (its reader seeks) */
    ooo_model *rd = ooo_new(&c, t, OOO_SID_STATS | OOO_READER, &err), *rc = ooo_new(&c, t, OOO_SID_STATS | OOO_READER, &err);
    if (!rd || !rc) fail_msg("%s", err.msg);
    tu_ooo_run(rd, UINT64_MAX);
    tu_ooo_assert_same(a, rd);
    ooo_model *mid = tu_ooo_new(t, &c);
    tu_ooo_run(mid, n / 3);
    tu_ooo_run(rc, n / 2);
    if (ooo_copy(rc, mid, &err)) fail_msg("%s", err.msg);
    tu_ooo_run(rc, UINT64_MAX);
    tu_ooo_assert_same(a, rc);
    ooo_free(rd);
    ooo_free(rc);
    ooo_free(mid);
    print_message("%s: %llu cycles, state %zu bytes; checkpoint at %llu resumed identically\n", machines[k],
                  (unsigned long long)ooo_cycles(a), ooo_state_bytes(a), (unsigned long long)(n / 3));
    /* copies between different configurations are refused */
    ooo_config other = c;
    other.core.rob = c.core.rob == 8 ? 16 : 256;
    ooo_model *o = tu_ooo_new(t, &other);
    assert_int_not_equal(ooo_copy(o, q, &err), WI_OK);
    ooo_free(o);
    ooo_free(a);
    ooo_free(b);
    ooo_free(p);
    ooo_free(q);
    ooo_free(cl);
    ooo_free(cp);
  }
  trace_close(t);
  unlink(path);
  free(path);
}

/* Models are independent: several run in parallel threads over one shared trace. */
typedef struct thr_arg {
  const trace_t *t;
  ooo_stats s;
} thr_arg;

static void *thr_run(void *p) {
  thr_arg *a = p;
  ooo_config c;
  ooo_config_default(&c);
  wi_err err;
  ooo_model *m = ooo_new(&c, a->t, 0, &err);
  if (m && !ooo_run(m, UINT64_MAX, &err)) a->s = *ooo_get_stats(m);
  ooo_free(m);
  return NULL;
}

static void test_parallel_models(void **state) {
  (void)state;
  char *path = walk_trace(tu_seed(), 80);
  trace_t *t = tu_open_trace(path);
  thr_arg a[4];
  pthread_t th[4];
  memset(a, 0, sizeof a);
  for (int i = 0; i < 4; i++) {
    a[i].t = t;
    assert_int_equal(pthread_create(&th[i], NULL, thr_run, &a[i]), 0);
  }
  for (int i = 0; i < 4; i++) pthread_join(th[i], NULL);
  assert_true(a[0].s.insns > 0);
  for (int i = 1; i < 4; i++) assert_memory_equal(&a[0].s, &a[i].s, sizeof a[0].s);
  trace_close(t);
  unlink(path);
  free(path);
}

/* ---- memory ordering ---------------------------------------------------------------------------------- */

static void same_addr(void *ctx, uint64_t pc, int slot, uint64_t *addr, uint32_t *size, bool *is_store) {
  (void)ctx;
  (void)pc;
  (void)slot;
  (void)size;
  (void)is_store;
  *addr = 0x20000040ULL;
}

/* A store whose address waits for a three-multiply chain (loads beside it are ready early). */
#define SLOW_ADDR_STORE                                                                        \
  "  imul rbx, rbx, 1\n"                                                                      \
  "  imul rbx, rbx, 1\n"                                                                      \
  "  imul rbx, rbx, 1\n"                                                                      \
  "  mov [rbx], rax\n"

static void test_memory_ordering(void **state) {
  (void)state;
  /* the store's address depends on a slow chain; the load of the same bytes is ready early */
  const char *src =
    "loop:\n" SLOW_ADDR_STORE
    "  mov rcx, [rdx]\n"
    "  add rax, rcx\n"
    "  dec rsi\n"
    "  jnz loop\n"
    "done:\n"
    "  nop\n";
  tbuild *tb = build(src);
  tb_loop(tb, "loop", "done", 2000, same_addr, NULL);
  char *path = tu_tb_finish(tb, tb_label(tb, "done"));
  ooo_config c;
  ooo_config_default(&c);
  c.core.mem_dep = MDP_SPECULATE;
  run_res spec = run_cfg(path, &c);
  c.core.mem_dep = MDP_PREDICT;
  run_res pred = run_cfg(path, &c);
  c.core.mem_dep = MDP_CONSERVATIVE;
  run_res cons = run_cfg(path, &c);
  print_message("memory ordering: clears speculate %llu, predict %llu, conservative %llu; forwarded %llu/%llu/%llu; "
                "cycles %llu/%llu/%llu; load waits (predict) %llu\n",
                (unsigned long long)spec.s.machine_clears, (unsigned long long)pred.s.machine_clears,
                (unsigned long long)cons.s.machine_clears, (unsigned long long)spec.s.forwarded,
                (unsigned long long)pred.s.forwarded, (unsigned long long)cons.s.forwarded,
                (unsigned long long)spec.s.cycles, (unsigned long long)pred.s.cycles,
                (unsigned long long)cons.s.cycles, (unsigned long long)pred.s.mdp_waits);
  assert_true(spec.s.machine_clears > 1000);           /* every iteration violates */
  assert_true(pred.s.machine_clears >= 1 && pred.s.machine_clears < 20); /* learned (periodic clears re-learn) */
  assert_int_equal(cons.s.machine_clears, 0);
  assert_true(pred.s.forwarded > 1000 && cons.s.forwarded > 1000);
  assert_true(spec.td.machine_clears > 0.1);
  assert_true(pred.s.cycles < spec.s.cycles);
  unlink(path);
  free(path);
}

/* A load that waits for older store addresses (the load-wait table named its PC) while a younger
 * load violates against the same store: the store's address both clears the machine from the
 * younger load and is the last address the older one waited for. Nothing after it stores, so
 * only that store can wake the waiting load (a model that returned after the clear deadlocked:
 * found on python3). */
typedef struct clr_ctx {
  uint64_t pc_l, pc_l2;
  int n_l, n_l2, iters;
} clr_ctx;

static void clear_addr(void *vctx, uint64_t pc, int slot, uint64_t *addr, uint32_t *size, bool *is_store) {
  (void)slot;
  (void)size;
  clr_ctx *c = vctx;
  const uint64_t a = 0x20000040ULL;
  if (*is_store) *addr = a;
  else if (pc == c->pc_l) *addr = ++c->n_l == 1 ? a : 0x30000000ULL;              /* trains its PC once */
  else if (pc == c->pc_l2) *addr = ++c->n_l2 == c->iters ? a : 0x40000000ULL;   /* violates at the end */
}

static void test_clear_wakes_waiting_load(void **state) {
  (void)state;
  const char *src =
    "loop:\n" SLOW_ADDR_STORE
    "waiter:\n"
    "  mov rcx, [rdx]\n"
    "violator:\n"
    "  mov r9, [rdi]\n"
    "  dec rsi\n"
    "  jnz loop\n"
    "done:\n"
    "  nop\n";
  tbuild *tb = build(src);
  clr_ctx ctx = {tb_label(tb, "waiter"), tb_label(tb, "violator"), 0, 0, 20};
  tb_loop(tb, "loop", "done", (uint64_t)ctx.iters, clear_addr, &ctx);
  char *path = tu_tb_finish(tb, tb_label(tb, "done"));
  ooo_config c;
  ooo_config_default(&c);
  c.core.mem_dep = MDP_PREDICT;
  run_res r = run_cfg(path, &c); /* fails on a deadlock */
  print_message("clear beside a waiting load: %llu machine clears, %llu load waits, %llu cycles\n",
                (unsigned long long)r.s.machine_clears, (unsigned long long)r.s.mdp_waits,
                (unsigned long long)r.s.cycles);
  assert_true(r.s.machine_clears >= 2); /* the training one and the last */
  assert_true(r.s.mdp_waits >= (uint64_t)ctx.iters - 2);
  unlink(path);
  free(path);
}

static void test_store_forwarding_latency(void **state) {
  (void)state;
  /* a value travelling through memory: store, reload, increment */
  char *path = loop_trace("mov [rdi], rax\n  mov rax, [rdi]\n  add rax, 1", 10, 300, same_addr, NULL);
  ooo_config c;
  ooo_config_default(&c);
  run_res r = run_default(path);
  double per = (double)r.warm_cycles / ((double)r.warm_insns / 32.0 * 10.0);
  print_message("store-reload-add chain: %.2f cycles per round (forwarding %u + add 1 + store data %u)\n", per,
                c.core.stlf_latency, c.core.std_latency);
  assert_true(per > c.core.stlf_latency + 1 - 0.01 && per < c.core.stlf_latency + 1 + c.core.std_latency + 0.5);
  assert_true(r.s.forwarded >= 2900);
  unlink(path);
  free(path);
}

/* ---- interventions through the filter ---------------------------------------------------------------- */

typedef struct filt_ctx {
  uint64_t pc;          /* the instruction to modify */
  ooo_mod mod;
  uint64_t calls, wrong_calls, last_index;
  bool ordered;         /* correct-path indices arrived in increasing order */
} filt_ctx;

static void filt(void *vctx, uint64_t index, const trace_insn *ti, const dec_insn *di, bool wrong, ooo_mod *out) {
  filt_ctx *c = vctx;
  assert_non_null(ti);
  assert_non_null(di);
  if (wrong) {
    assert_int_equal(index, UINT64_MAX);
    c->wrong_calls++;
  } else {
    if (c->calls && index <= c->last_index) c->ordered = false;
    c->last_index = index;
    c->calls++;
  }
  if (ti->pc == c->pc) *out = c->mod;
}

static run_res run_filtered(const char *path, filt_ctx *fc) {
  trace_t *t = tu_open_trace(path);
  ooo_config c;
  ooo_config_default(&c);
  ooo_model *m = tu_ooo_new(t, &c);
  fc->calls = fc->wrong_calls = 0;
  fc->ordered = true;
  ooo_set_filter(m, filt, fc);
  tu_ooo_run(m, UINT64_MAX);
  run_res r;
  r.s = *ooo_get_stats(m);
  ooo_get_topdown(m, &r.td);
  r.ipc = (double)r.s.insns / (double)r.s.cycles;
  check_topdown(m);
  ooo_free(m);
  trace_close(t);
  return r;
}

static void test_filter_interventions(void **state) {
  (void)state;
  /* the add chain: 40 adds, then dec/jnz */
  char *path = loop_trace("add rax, rbx", 40, 200, NULL, NULL);
  filt_ctx fc;
  memset(&fc, 0, sizeof fc);
  fc.pc = BASE; /* the first add of the body */
  fc.mod.lat_set = -1;
  run_res base = run_filtered(path, &fc);
  assert_int_equal(fc.calls, 42 * 200 + 1);
  assert_true(fc.ordered);
  /* +3 cycles on one add of 40: 3 more cycles per iteration */
  fc.mod.lat_add = 3;
  run_res lat = run_filtered(path, &fc);
  double d = ((double)lat.s.cycles - (double)base.s.cycles) / 200.0;
  print_message("lat_add 3 on one add: %+.2f cycles/iteration\n", d);
  assert_true(d > 2.9 && d < 3.1);
  /* lat_set 10 on it: +9 */
  fc.mod.lat_add = 0;
  fc.mod.lat_set = 10;
  lat = run_filtered(path, &fc);
  d = ((double)lat.s.cycles - (double)base.s.cycles) / 200.0;
  assert_true(d > 8.9 && d < 9.1);
  /* drop: one instruction less per iteration, one cycle less */
  fc.mod.lat_set = -1;
  fc.mod.drop = true;
  run_res drop = run_filtered(path, &fc);
  assert_int_equal(drop.s.insns, base.s.insns - 200);
  d = ((double)base.s.cycles - (double)drop.s.cycles) / 200.0;
  assert_true(d > 0.9 && d < 1.1);
  /* nop: the same count, but it no longer carries the chain: one cycle less too */
  fc.mod.drop = false;
  fc.mod.nop = true;
  run_res nop = run_filtered(path, &fc);
  assert_int_equal(nop.s.insns, base.s.insns);
  d = ((double)base.s.cycles - (double)nop.s.cycles) / 200.0;
  assert_true(d > 0.9 && d < 1.1);
  /* a filter set halfway applies from the first instruction not yet fetched */
  {
    trace_t *t = tu_open_trace(path);
    ooo_config c;
    ooo_config_default(&c);
    ooo_model *m = tu_ooo_new(t, &c);
    tu_ooo_run(m, 42 * 100);
    uint64_t from = ooo_fetched_index(m);
    assert_true(from >= ooo_committed(m));
    memset(&fc, 0, sizeof fc);
    fc.pc = BASE;
    fc.mod.lat_set = -1;
    fc.mod.lat_add = 3;
    ooo_set_filter(m, filt, &fc);
    tu_ooo_run(m, UINT64_MAX);
    assert_int_equal(fc.last_index, 42 * 200); /* the filter saw the rest of the trace */
    d = ((double)ooo_cycles(m) - (double)base.s.cycles) / 100.0; /* the second half: +3 per iteration */
    print_message("filter from index %llu: %+.2f cycles per later iteration\n", (unsigned long long)from, d);
    assert_true(d > 2.8 && d < 3.2);
    ooo_free(m);
    trace_close(t);
  }
  unlink(path);
  free(path);

  /* perfect_branch on the random branch */
  uint64_t seed = tu_seed();
  path = random_branch_trace(seed, 2000);
  memset(&fc, 0, sizeof fc);
  fc.mod.lat_set = -1;
  fc.pc = BASE + 3; /* `jz skip` after the 3-byte `test rax, rax` */
  run_res rb = run_filtered(path, &fc);
  assert_true(fc.wrong_calls > 0); /* wrong-path instructions went through the filter */
  fc.mod.perfect_branch = true;
  run_res pb = run_filtered(path, &fc);
  print_message("perfect_branch on the random branch: mispredicts %llu -> %llu, cycles %llu -> %llu\n",
                (unsigned long long)rb.s.mispredicts[BR_COND], (unsigned long long)pb.s.mispredicts[BR_COND],
                (unsigned long long)rb.s.cycles, (unsigned long long)pb.s.cycles);
  assert_true(rb.s.mispredicts[BR_COND] > 500);
  assert_true(pb.s.mispredicts[BR_COND] <= 2);
  assert_true(pb.s.cycles * 2 < rb.s.cycles);
  unlink(path);
  free(path);
}

typedef struct chase_ctx {
  uint64_t i;
} chase_ctx;

/* A pointer chase over 4 MiB: every load a new line, far apart. */
static void chase_addr(void *vctx, uint64_t pc, int slot, uint64_t *addr, uint32_t *size, bool *is_store) {
  (void)pc;
  (void)slot;
  (void)size;
  (void)is_store;
  chase_ctx *c = vctx;
  c->i++;
  *addr = 0x40000000ULL + ((c->i * 2654435761ULL) % 65536) * 64;
}

static void test_perfect_mem_and_skipping(void **state) {
  (void)state;
  chase_ctx cc = {0};
  char *path = loop_trace("mov rax, [rax]", 10, 400, chase_addr, &cc);
  filt_ctx fc;
  memset(&fc, 0, sizeof fc);
  fc.mod.lat_set = -1;
  fc.pc = 0;
  run_res miss = run_filtered(path, &fc);
  print_message("pointer chase: %.1f cycles/load, %.0f%% of cycles skipped, memory bound %.2f\n",
                (double)miss.s.cycles / 4000.0, 100.0 * (double)miss.s.skipped_cycles / (double)miss.s.cycles,
                miss.td.memory_bound);
  assert_true(miss.s.cycles / 4000 > 100);
  assert_true(miss.s.skipped_cycles * 10 > miss.s.cycles * 8); /* nearly every cycle skipped */
  assert_true(miss.td.memory_bound > 0.8);
  /* perfect_mem on every load of the chase: L1 latency */
  ooo_config c;
  ooo_config_default(&c);
  for (int i = 0; i < 10; i++) {
    fc.pc = BASE + (uint64_t)i * 3; /* mov rax, [rax] is 3 bytes */
    fc.mod.perfect_mem = true;
  }
  /* one filter entry matches one pc: use a pc-range filter instead */
  unlink(path);
  free(path);
  cc.i = 0;
  path = loop_trace("mov rax, [rax]", 1, 4000, chase_addr, &cc);
  fc.pc = BASE;
  fc.mod.perfect_mem = false;
  miss = run_filtered(path, &fc);
  fc.mod.perfect_mem = true;
  run_res hit = run_filtered(path, &fc);
  double per = (double)hit.s.cycles / 4000.0;
  print_message("perfect_mem: %.1f -> %.2f cycles/iteration\n", (double)miss.s.cycles / 4000.0, per);
  assert_true(per < c.mem.l1d.latency + 1.5);
  assert_true(miss.s.cycles > 20 * hit.s.cycles);
  unlink(path);
  free(path);
}

/* ---- observer ------------------------------------------------------------------------------------------ */

typedef struct obs_ctx {
  uint64_t fetch, dispatch, issue, complete, commit, squash, mem, slot_cycles;
  uint64_t slots[OOO_SLOT_NUM];      /* unfilled slots from slot records */
  uint64_t filled;                   /* filled slots from slot records */
  uint64_t disp_slots_right, disp_slots_wrong;
  uint64_t operand_binds, operand_prev, port_binds, unit_binds;
  uint64_t last_fid;
  bool order_ok;
} obs_ctx;

static void o_fetch(void *c, const ooo_ev *e) {
  (void)e;
  ((obs_ctx *)c)->fetch++;
}
static void o_dispatch(void *vc, const ooo_ev *e) {
  obs_ctx *c = vc;
  c->dispatch++;
  if (e->wrong_path) {
    assert_true(e->fid & OOO_FID_WRONG);
    c->disp_slots_wrong += e->slots;
  } else {
    assert_false(e->fid & OOO_FID_WRONG);
    c->disp_slots_right += e->slots;
  }
}
static void o_issue(void *c, const ooo_ev *e) {
  assert_true(e->rid >= OOO_RID_PORT && e->rid < OOO_RID_PORT + OOO_MAX_PORTS);
  ((obs_ctx *)c)->issue++;
}
static void o_complete(void *c, const ooo_ev *e) {
  (void)e;
  ((obs_ctx *)c)->complete++;
}
static void o_commit(void *vc, const ooo_commit_ev *e) {
  obs_ctx *c = vc;
  if (c->commit && e->fid <= c->last_fid) c->order_ok = false;
  c->last_fid = e->fid;
  c->commit++;
  assert_true(e->fetch_cycle <= e->dispatch_cycle && e->dispatch_cycle <= e->complete_cycle + 1 &&
              e->complete_cycle <= e->cycle);
  for (int s = 0; s < OOO_NSTAGE; s++) assert_true(e->bind[s].kind > OB_NONE && e->bind[s].kind < OB_NUM);
  assert_true(e->bind[OOO_STAGE_DISPATCH].kind <= OB_SERIAL);
  assert_true(e->bind[OOO_STAGE_ISSUE].kind >= OB_DISPATCHED && e->bind[OOO_STAGE_ISSUE].kind <= OB_MSHR);
  assert_true(e->bind[OOO_STAGE_COMPLETE].kind >= OB_EXEC && e->bind[OOO_STAGE_COMPLETE].kind <= OB_FORWARD);
  assert_true(e->bind[OOO_STAGE_COMMIT].kind >= OB_COMPLETION);
  if (e->bind[OOO_STAGE_ISSUE].kind == OB_OPERAND) {
    c->operand_binds++;
    if (e->bind[OOO_STAGE_ISSUE].by_fid + 1 == e->fid) c->operand_prev++;
  }
  if (e->bind[OOO_STAGE_ISSUE].kind == OB_PORT) c->port_binds++;
  if (e->bind[OOO_STAGE_ISSUE].kind == OB_UNIT) c->unit_binds++;
}
static void o_squash(void *c, const ooo_ev *e) {
  (void)e;
  ((obs_ctx *)c)->squash++;
}
static void o_slots(void *vc, const ooo_slot_ev *e) {
  obs_ctx *c = vc;
  for (int i = 0; i < OOO_SLOT_NUM; i++) c->slots[i] += (uint64_t)e->slots[i] * e->n_cycles;
  c->filled += (uint64_t)e->filled * e->n_cycles;
  c->slot_cycles += e->n_cycles;
}
static void o_mem(void *c, const mem_event *e) {
  (void)e;
  ((obs_ctx *)c)->mem++;
}

static const ooo_observer all_obs = {o_fetch, o_dispatch, o_issue, o_complete, o_commit, o_squash, o_slots, o_mem};

/* Run t to the end on c twice, observed by all_obs into *oc and unobserved (*plain): observing
 * must change nothing. Returns the observed model. */
static ooo_model *run_observed(trace_t *t, const ooo_config *c, obs_ctx *oc, ooo_model **plain) {
  ooo_model *m = tu_ooo_new(t, c);
  *plain = tu_ooo_new(t, c);
  memset(oc, 0, sizeof *oc);
  oc->order_ok = true;
  ooo_set_observer(m, &all_obs, oc);
  tu_ooo_run(m, UINT64_MAX);
  tu_ooo_run(*plain, UINT64_MAX);
  assert_true(ooo_finished(*plain));
  tu_ooo_assert_same(m, *plain);
  return m;
}

static void test_observer(void **state) {
  (void)state;
  uint64_t seed = tu_seed();
  char *path = random_branch_trace(seed, 1500);
  trace_t *t = tu_open_trace(path);
  ooo_config c;
  ooo_config_default(&c);
  ooo_model *plain;
  obs_ctx oc;
  ooo_model *m = run_observed(t, &c, &oc, &plain);
  const ooo_stats *s = ooo_get_stats(m);
  assert_true(oc.order_ok);
  assert_int_equal(oc.commit, s->insns);
  assert_int_equal(oc.fetch, s->fetched[0] + s->fetched[1]);
  assert_int_equal(oc.dispatch, s->dispatched[0] + s->dispatched[1]);
  /* every committed instruction completed; squashed ones may or may not have */
  assert_true(oc.complete >= s->insns && oc.complete <= s->dispatched[0] + s->dispatched[1]);
  assert_true(oc.squash >= s->squashed);
  assert_true(oc.mem > 0);
  /* top-down from the observer stream equals the model's */
  assert_int_equal(oc.slot_cycles, s->cycles);
  for (int i = OOO_SLOT_FE_LATENCY; i < OOO_SLOT_NUM; i++) assert_int_equal(oc.slots[i], s->slots[i]);
  assert_int_equal(oc.filled, oc.disp_slots_right + oc.disp_slots_wrong);
  assert_int_equal(s->slots[OOO_SLOT_RETIRING] + s->slots[OOO_SLOT_BAD_BRANCH] + s->slots[OOO_SLOT_BAD_CLEAR] -
                       oc.slots[OOO_SLOT_BAD_BRANCH] - oc.slots[OOO_SLOT_BAD_CLEAR],
                   oc.filled);
  ooo_free(m);
  ooo_free(plain);
  trace_close(t);
  unlink(path);
  free(path);

  /* binding constraints on the dependent add chain: each add waits for its predecessor */
  path = loop_trace("add rax, rbx", 40, 100, NULL, NULL);
  t = tu_open_trace(path);
  m = tu_ooo_new(t, &c);
  memset(&oc, 0, sizeof oc);
  oc.order_ok = true;
  ooo_set_observer(m, &all_obs, &oc);
  tu_ooo_run(m, UINT64_MAX);
  print_message("add chain bindings: %llu operand (%llu on the previous add), %llu port of %llu\n",
                (unsigned long long)oc.operand_binds, (unsigned long long)oc.operand_prev,
                (unsigned long long)oc.port_binds, (unsigned long long)oc.commit);
  assert_true(oc.operand_prev > 35 * 100);
  ooo_free(m);
  trace_close(t);
  unlink(path);
  free(path);
}

/* Completion bindings of the loop's first instruction, by kind, and how many saw a miss. */
typedef struct cbind_ctx {
  uint64_t n[OB_NUM];
} cbind_ctx;
static void o_commit_cbind(void *vc, const ooo_commit_ev *e) {
  if (e->pc == BASE) ((cbind_ctx *)vc)->n[e->bind[OOO_STAGE_COMPLETE].kind]++;
}

/* A load-op (add rax, [rax]) or read-modify-write (add [rax], 1) instruction whose load misses
 * is bound at completion by the level that served its load, as a plain load is: its addition
 * only waited for the load's data (the binding once named the addition's execution). */
static void test_load_op_binding(void **state) {
  (void)state;
  ooo_config c;
  ooo_config_default(&c);
  const char *lines[] = {"mov rax, [rax]", "add rax, [rax]", "add qword ptr [rax], 1"};
  for (size_t k = 0; k < WI_ARRAY_LEN(lines); k++) {
    chase_ctx cc = {0};
    char *path = loop_trace(lines[k], 1, 2000, chase_addr, &cc);
    trace_t *t = tu_open_trace(path);
    ooo_model *m = tu_ooo_new(t, &c);
    ooo_observer o;
    memset(&o, 0, sizeof o);
    o.commit = o_commit_cbind;
    cbind_ctx bc;
    memset(&bc, 0, sizeof bc);
    ooo_set_observer(m, &o, &bc);
    tu_ooo_run(m, UINT64_MAX);
    uint64_t miss = bc.n[OB_L2] + bc.n[OB_LLC] + bc.n[OB_DRAM];
    print_message("%s: completion bound by exec %llu, l1 %llu, a miss %llu of 2000\n", lines[k],
                  (unsigned long long)bc.n[OB_EXEC], (unsigned long long)bc.n[OB_L1], (unsigned long long)miss);
    assert_true(miss > 1500);
    assert_true(bc.n[OB_EXEC] < 100);
    ooo_free(m);
    trace_close(t);
    unlink(path);
    free(path);
  }
}

/* ---- serializing instructions, unpipelined units, stress --------------------------------------------- */

static void test_serialize_and_divider(void **state) {
  (void)state;
  ooo_config c;
  ooo_config_default(&c);
  char *path = loop_trace("add r8, 1\n  add r9, 1\n  add r10, 1\n  lfence", 1, 300, NULL, NULL);
  run_res r = run_default(path);
  double per = (double)r.warm_cycles / ((double)r.warm_insns / 6.0);
  print_message("lfence loop: %.1f cycles/iteration\n", per);
  assert_true(per > c.uops[IC_SERIAL].u[0].latency);
  assert_true(r.s.dispatch_stall[OB_SERIAL] > 0);
  unlink(path);
  free(path);
  /* independent FP divides: one per `occupancy` cycles on the single divider */
  char line[1024] = "";
  for (int i = 0; i < 8; i++) {
    char one[64];
    snprintf(one, sizeof one, "%sdivps xmm%d, xmm15", line[0] ? "\n  " : "", i);
    strcat(line, one);
  }
  path = loop_trace(line, 1, 200, NULL, NULL);
  r = run_default(path);
  per = (double)r.warm_cycles / ((double)r.warm_insns * 8.0 / 10.0);
  print_message("independent divps: %.2f cycles each (occupancy %u)\n", per, c.uops[IC_FP_DIV].u[0].occupancy);
  assert_true(per > c.uops[IC_FP_DIV].u[0].occupancy - 0.05 && per < c.uops[IC_FP_DIV].u[0].occupancy + 0.2);
  unlink(path);
  free(path);
}

/* Micro-ops that find their unpipelined unit busy are skipped by issue until it frees (oo_issue):
 * the result must be that of trying them every cycle. Divides before and on both paths of a
 * random branch (ready divides squashed, their slots reused), adds sharing the ports. */
static void test_unit_skip(void **state) {
  (void)state;
  uint64_t seed = tu_seed();
  tbuild *tb = build("loop:\n  divps xmm0, xmm15\n  divps xmm1, xmm15\n  divps xmm2, xmm15\n  add r8, 1\n"
                     "  test rax, rax\n  jz skip\n  divps xmm3, xmm15\n  divps xmm4, xmm15\n  add r9, 1\n"
                     "skip:\n  divps xmm5, xmm15\n  add r10, 1\n  dec rcx\n  jnz loop\ndone:\n  nop\n");
  uint64_t loop = tb_label(tb, "loop"), skip = tb_label(tb, "skip"), done = tb_label(tb, "done");
  uint64_t jz = loop;
  for (int i = 0; i < 5; i++) jz += tb_len(tb, jz);
  wi_rng rng;
  rng_seed(&rng, seed);
  uint64_t n_div = 0;
  for (int i = 0; i < 600; i++) {
    tb_run(tb, loop, jz, NULL, NULL);
    tb_exec(tb, jz, NULL, 0);
    n_div += 4;
    if (rng_below(&rng, 2)) {
      tb_run(tb, jz + tb_len(tb, jz), skip, NULL, NULL);
      n_div += 2;
    }
    tb_run(tb, skip, done, NULL, NULL);
  }
  char *path = tu_tb_finish(tb, done);
  wi_err err;
  trace_t *t = tu_open_trace(path);
  uint64_t n = trace_get_info(t)->n_insns;
  ooo_config c;
  ooo_config_default(&c);
  ooo_model *plain;
  obs_ctx oc;
  ooo_model *m = run_observed(t, &c, &oc, &plain);
  const ooo_stats *s = ooo_get_stats(plain);
  double per = (double)s->cycles / (double)n_div;
  print_message("unit skip: %llu divides, %.2f cycles each (occupancy %u), %llu issued after waiting for the unit, "
                "%llu mispredicts\n",
                (unsigned long long)n_div, per, c.uops[IC_FP_DIV].u[0].occupancy,
                (unsigned long long)oc.unit_binds, (unsigned long long)s->mispredicts[BR_COND]);
  /* the divider is the bottleneck: one divide per occupancy cycles, almost all of them waited
   * for the unit (the binding of a skipped micro-op is the one it had when first found busy) */
  assert_true(per > c.uops[IC_FP_DIV].u[0].occupancy - 0.05 && per < c.uops[IC_FP_DIV].u[0].occupancy + 0.3);
  assert_true(oc.unit_binds > n_div * 8 / 10 && oc.unit_binds <= n_div);
  assert_true(s->mispredicts[BR_COND] > 100);
  /* a checkpoint taken with skipped micro-ops in flight resumes identically */
  ooo_model *q = tu_ooo_new(t, &c);
  tu_ooo_run(q, n / 3);
  ooo_model *cl = ooo_clone(q, &err);
  if (!cl) fail_msg("%s", err.msg);
  tu_ooo_run(q, UINT64_MAX);
  tu_ooo_run(cl, UINT64_MAX);
  tu_ooo_assert_same(plain, q);
  tu_ooo_assert_same(plain, cl);
  ooo_free(m);
  ooo_free(plain);
  ooo_free(q);
  ooo_free(cl);
  trace_close(t);
  unlink(path);
  free(path);
}

/* A rep movsb of 16 KiB: 16384 recorded iterations collapse into one fast-string instruction. */
static void test_rep_string(void **state) {
  (void)state;
  tbuild *tb = build("start:\n  nop\ncopy:\n  rep movsb\ndone:\n  nop\n");
  uint64_t start = tb_label(tb, "start"), copy = tb_label(tb, "copy"), done = tb_label(tb, "done");
  const uint32_t n = 16384;
  for (int rep = 0; rep < 3; rep++) {
    tb_exec(tb, start, NULL, 0);
    for (uint32_t i = 0; i < n; i++) {
      trace_mem a[2] = {{0x30000000ULL + i, 1, 0, {0}}, {0x38000000ULL + i, 1, 1, {0}}};
      tb_exec(tb, copy, a, 2);
    }
  }
  char *path = tu_tb_finish(tb, done);
  ooo_config c;
  ooo_config_default(&c);
  run_res r = run_default(path);
  print_message("rep movsb 16 KiB x 3: %llu model instructions, %llu cycles (%.1f bytes/cycle)\n",
                (unsigned long long)r.s.insns, (unsigned long long)r.s.cycles, 3.0 * n / (double)r.s.cycles);
  assert_int_equal(r.s.insns, 7); /* the iterations were collapsed */
  /* bounded by the fast-string bandwidth, not one micro-op per byte */
  assert_true(r.s.cycles > 3 * n / c.core.rep_bytes_per_cycle);
  assert_true(r.s.cycles < 3 * n / 2);
  unlink(path);
  free(path);
}

static void test_stress_config(void **state) {
  (void)state;
  /* every synthetic workload of this file on the tiny machine, to the end */
  ooo_config c;
  wi_err err;
  if (machine_load("stress", &c, &err)) fail_msg("%s", err.msg);
  uint64_t seed = tu_seed();
  char *paths[5];
  chase_ctx cc = {0};
  paths[0] = random_branch_trace(seed, 500);
  paths[1] = walk_trace(seed, 60);
  paths[2] = loop_trace("mov [rdi], rax\n  mov rax, [rdi]\n  add rax, 1", 5, 100, same_addr, NULL);
  paths[3] = loop_trace("mov rax, [rax]\n  mov [rax+8], rbx", 4, 200, chase_addr, &cc);
  paths[4] = loop_trace("vfmadd231ps ymm0, ymm1, ymm2\n  divps xmm3, xmm4\n  imul rbx, rcx", 5, 100, NULL, NULL);
  for (int i = 0; i < 5; i++) {
    run_res r = run_cfg(paths[i], &c);
    print_message("stress #%d: IPC %.3f, %llu squashed, %llu machine clears\n", i, r.ipc,
                  (unsigned long long)r.s.squashed, (unsigned long long)r.s.machine_clears);
    for (int pol = 0; pol < WP_NUM; pol++) {
      ooo_config d = c;
      d.fe.wrong_path = pol;
      d.fe.wrong_path_cap = 2;
      run_cfg(paths[i], &d);
    }
    unlink(paths[i]);
    free(paths[i]);
  }
}

/* ---- memory-only cycles ------------------------------------------------------------------------------ */

typedef struct seq_ctx {
  uint64_t i;
} seq_ctx;

/* Streaming loads: one new line per load, in address order (prefetchers run ahead). */
static void seq_addr(void *vctx, uint64_t pc, int slot, uint64_t *addr, uint32_t *size, bool *is_store) {
  (void)pc;
  (void)slot;
  (void)size;
  (void)is_store;
  seq_ctx *c = vctx;
  *addr = 0x50000000ULL + c->i++ * 64;
}

/* Cycles chosen only for a memory-system event that does not call back into the core skip the core
 * stages (ooo_model.c step): results must equal a run with an observer, which steps every such
 * cycle in full. */
static void test_mem_only_cycles(void **state) {
  (void)state;
  seq_ctx sc = {0};
  char *path = loop_trace("mov rax, [rsi]\n  add rbx, rax", 8, 1500, seq_addr, &sc);
  wi_err err;
  trace_t *t = tu_open_trace(path);
  const char *machines[] = {"golden_cove", "skylake", "stress"};
  for (size_t k = 0; k < WI_ARRAY_LEN(machines); k++) {
    ooo_config c;
    if (machine_load(machines[k], &c, &err)) fail_msg("%s", err.msg);
    ooo_model *plain = tu_ooo_new(t, &c), *obs = tu_ooo_new(t, &c), *half = tu_ooo_new(t, &c);
    obs_ctx oc;
    memset(&oc, 0, sizeof oc);
    oc.order_ok = true;
    ooo_set_observer(obs, &all_obs, &oc);
    tu_ooo_run(plain, UINT64_MAX);
    tu_ooo_run(obs, UINT64_MAX);
    /* in pieces, through a checkpoint copy (the flag that selects such a cycle is state) */
    tu_ooo_run(half, 3000);
    ooo_model *cp = ooo_clone(half, &err);
    if (!cp) fail_msg("%s", err.msg);
    tu_ooo_run(cp, UINT64_MAX);
    print_message("%s: %llu cycles, %llu memory-only (%.0f%%), %llu skipped\n", machines[k],
                  (unsigned long long)ooo_cycles(plain), (unsigned long long)ooo_mem_only_cycles(plain),
                  100.0 * (double)ooo_mem_only_cycles(plain) / (double)ooo_cycles(plain),
                  (unsigned long long)ooo_get_stats(plain)->skipped_cycles);
    assert_true(ooo_finished(plain) && ooo_finished(cp));
    tu_ooo_assert_same(plain, obs);
    tu_ooo_assert_same(plain, cp);
    assert_int_equal(ooo_mem_only_cycles(obs), 0);
    if (k == 0) assert_true(ooo_mem_only_cycles(plain) > ooo_cycles(plain) / 50); /* the path is taken */
    check_topdown(plain);
    ooo_free(plain);
    ooo_free(obs);
    ooo_free(half);
    ooo_free(cp);
  }
  trace_close(t);
  unlink(path);
  free(path);
}

/* ---- fast paths of rename and squash: the same results as the direct ones ------------------------ */

/* After a misprediction of `jz skip` the wrong path writes rbx twice while the correct path's
 * producer of rbx (a load that misses) is still executing. */
static const char *const mix_src =
  "loop:\n"
  "  mov rax, [rsi]\n"
  "miss:\n"
  "  mov rbx, [r8]\n"
  "  test rax, rax\n"
  "br:\n"
  "  jz skip\n"
  "rmw:\n"
  "  add [rdi], rax\n"
  "  add rbx, 1\n"
  "  add rbx, 2\n"
  "skip:\n"
  "  add rdx, rbx\n"
  "  imul rdi, rdi, 1\n"
  "  imul rdi, rdi, 1\n"
  "  mov [rdi+8], rbx\n"
  "  dec rcx\n"
  "  jnz loop\n"
  "done:\n"
  "  nop\n";

typedef struct mix_gen {
  uint64_t miss_pc, n;
} mix_gen;

/* The load at miss_pc reads a new page each time (misses); stores write one word, the other
 * loads read it or the next: forwarding, and ordering violations (the store's address comes
 * late, from the imul chain). */
static void mix_addr(void *ctx, uint64_t pc, int slot, uint64_t *addr, uint32_t *size, bool *is_store) {
  mix_gen *g = ctx;
  (void)size;
  if (pc == g->miss_pc) *addr = 0x40000000ULL + 4096 * g->n++;
  else *addr = 0x20000000ULL + (*is_store ? 0 : 8 * ((pc + (uint64_t)slot) % 2));
}

/* A trace of tb's loop (labels loop, br, rmw, skip, done): `iters` turns with random outcomes
 * of the branch at br (seeded; the rmw block runs when it falls through), accesses from fn. */
static char *branch_loop_trace(tbuild *tb, tb_mem_fn fn, void *ctx, uint64_t seed, int iters) {
  uint64_t loop = tb_label(tb, "loop"), br = tb_label(tb, "br"), skip = tb_label(tb, "skip");
  uint64_t done = tb_label(tb, "done");
  wi_rng rng;
  rng_seed(&rng, seed);
  for (int i = 0; i < iters; i++) {
    tb_run(tb, loop, br, fn, ctx);
    tb_exec(tb, br, NULL, 0);
    if (rng_below(&rng, 2)) tb_run(tb, tb_label(tb, "rmw"), skip, fn, ctx);
    tb_run(tb, skip, done, fn, ctx);
  }
  char *path = tu_tb_finish(tb, done);
  return path;
}

/* Random outcomes of `jz skip` (seeded) between loads, a read-modify-write and a store. */
static char *mix_trace(uint64_t seed, int iters) {
  tbuild *tb = build(mix_src);
  mix_gen g = {tb_label(tb, "miss"), 0};
  return branch_loop_trace(tb, mix_addr, &g, seed, iters);
}

/* Turns the instructions at three pcs (a load, a read-modify-write, an add) into nops,
 * perfect-memory or slower ones by a hash of their index (wrong path: of a counter), so the
 * plans of one static instruction keep changing, with and without accesses. */
typedef struct mix_filt {
  uint64_t pc[3];
  uint64_t wrong_n, nops, pmems;
} mix_filt;

static void mix_filter(void *vctx, uint64_t index, const trace_insn *ti, const dec_insn *di, bool wrong,
                       ooo_mod *out) {
  mix_filt *c = vctx;
  (void)di;
  if (ti->pc != c->pc[0] && ti->pc != c->pc[1] && ti->pc != c->pc[2]) return;
  uint64_t h = wi_mix64(wrong ? ++c->wrong_n : index) % 4;
  if (h == 1) {
    out->nop = true;
    c->nops++;
  } else if (h == 2) {
    out->perfect_mem = true;
    c->pmems++;
  } else if (h == 3) {
    out->lat_add = 2;
  }
}

/* Rename reuses the plan header last made for a static instruction when its accesses and
 * modifications match (OOO_NO_PLAN_CACHE computes each afresh): identical results while the
 * plans of one instruction keep changing (loads, stores, nops, perfect memory, wrong path).
 * Likewise rename's lean copies, prebuilt micro-op and ROB words and blocked-rename shortcut
 * (OOO_NO_LEAN builds everything through the general path). */
static void test_plan_cache(void **state) {
  (void)state;
  uint64_t seed = tu_seed();
  char *path = mix_trace(seed, 3000);
  wi_err err;
  trace_t *t = tu_open_trace(path);
  tbuild *tb = build(mix_src);
  uint64_t pcs[3] = {tb_label(tb, "loop"), tb_label(tb, "rmw"), tb_label(tb, "skip")};
  tb_free(tb);
  const char *machines[] = {"golden_cove", "stress"};
  for (size_t k = 0; k < WI_ARRAY_LEN(machines); k++) {
    ooo_config c;
    if (machine_load(machines[k], &c, &err)) fail_msg("%s", err.msg);
    for (int f = 0; f < 2; f++) {
      ooo_model *a = ooo_new(&c, t, OOO_SID_STATS, &err);
      ooo_model *b = ooo_new(&c, t, OOO_SID_STATS | OOO_NO_PLAN_CACHE, &err);
      ooo_model *l = ooo_new(&c, t, OOO_SID_STATS | OOO_NO_LEAN, &err);
      if (!a || !b || !l) fail_msg("ooo_new: %s", err.msg);
      mix_filt fa = {{pcs[0], pcs[1], pcs[2]}, 0, 0, 0}, fb = fa, fl = fa;
      if (f) {
        ooo_set_filter(a, mix_filter, &fa);
        ooo_set_filter(b, mix_filter, &fb);
        ooo_set_filter(l, mix_filter, &fl);
      }
      tu_ooo_run(a, UINT64_MAX);
      tu_ooo_run(b, UINT64_MAX);
      tu_ooo_run(l, UINT64_MAX);
      assert_true(ooo_finished(a));
      tu_ooo_assert_same(a, b);
      tu_ooo_assert_same(a, l);
      assert_memory_equal(ooo_get_sid_stats(a), ooo_get_sid_stats(b),
                          trace_get_info(t)->n_static * sizeof(ooo_sid_stats));
      assert_memory_equal(ooo_get_sid_stats(a), ooo_get_sid_stats(l),
                          trace_get_info(t)->n_static * sizeof(ooo_sid_stats));
      const ooo_stats *s = ooo_get_stats(a);
      assert_true(s->loads > 2000 && s->stores > 3000 && s->dispatched[1] > 100);
      if (f) {
        print_message("plan cache (%s): %llu nops, %llu perfect-memory of the three instructions, "
                      "%llu wrong-path dispatched; identical\n",
                      machines[k], (unsigned long long)fa.nops, (unsigned long long)fa.pmems,
                      (unsigned long long)s->dispatched[1]);
        assert_true(fa.nops > 500 && fa.pmems > 500 && fa.wrong_n > 10);
      }
      ooo_free(a);
      ooo_free(b);
      ooo_free(l);
    }
  }
  trace_close(t);
  unlink(path);
  free(path);
}

static void o_squash_count(void *c, const ooo_ev *e) {
  (void)e;
  (*(uint64_t *)c)++;
}

/* A squash with a squash observer undoes instruction by instruction with an event for each,
 * without one each structure in one pass: identical results at every point of a run with
 * mispredictions and machine clears (loads, stores, scheduler entries, links, the rename map).
 * Both models have an observer (the other one without callbacks): without any, cycles woken only
 * by the memory system skip the core stages, which can change the commit-stall counts. */
static void squash_paths(uint64_t seed) {
  char *path = mix_trace(seed, 3000);
  wi_err err;
  trace_t *t = tu_open_trace(path);
  const char *machines[] = {"golden_cove", "skylake", "stress"};
  for (size_t k = 0; k < WI_ARRAY_LEN(machines); k++) {
    ooo_config c;
    if (machine_load(machines[k], &c, &err)) fail_msg("%s", err.msg);
    c.core.mem_dep = MDP_SPECULATE; /* machine clears too */
    ooo_model *plain = tu_ooo_new(t, &c), *obs = tu_ooo_new(t, &c);
    ooo_observer o;
    memset(&o, 0, sizeof o);
    o.squash = o_squash_count;
    uint64_t events = 0;
    /* `plain` has no observer, so it also takes the memory-only cycle shortcut, which must
     * account stalls as the full step would (it once missed a commit stall after a cycle that
     * stopped at the commit width) */
    ooo_set_observer(obs, &o, &events);
    while (!ooo_finished(plain)) {
      tu_ooo_run(plain, 997);
      tu_ooo_run(obs, 997);
      tu_ooo_assert_same(plain, obs);
    }
    assert_true(ooo_finished(obs));
    const ooo_stats *s = ooo_get_stats(plain);
    print_message("squash paths (%s): %llu squashed, %llu machine clears, %llu squash events; identical\n",
                  machines[k], (unsigned long long)s->squashed, (unsigned long long)s->machine_clears,
                  (unsigned long long)events);
    assert_true(s->squashed > 1000 && s->machine_clears > 10 && events >= s->squashed);
    ooo_free(plain);
    ooo_free(obs);
  }
  trace_close(t);
  unlink(path);
  free(path);
}

static void test_squash_paths(void **state) {
  (void)state;
  squash_paths(tu_seed());
  squash_paths(1796015009); /* a stream whose memory-only cycle once followed a width-limited commit */
}

/* Loads search the store queue for the youngest older overlapping store from the store filter's
 * bound down (OOO_NO_SQ_BOUND: from the tail, without the filter): identical results with stores
 * and loads, some unaligned (two granules), over a few addresses, most of them rewritten by many
 * stores in flight (as stack slots are), with mispredictions (squashed stores) in between. The
 * vector loop's 32-byte accesses at 32-byte aligned addresses take the filter's quad path (four
 * granules as one word of counters), the others and the 8-byte ones the granule loop. */
typedef struct sqb_gen {
  wi_rng rng;
} sqb_gen;

static void sqb_addr(void *ctx, uint64_t pc, int slot, uint64_t *addr, uint32_t *size, bool *is_store) {
  sqb_gen *g = ctx;
  (void)pc;
  (void)slot;
  (void)size;
  (void)is_store;
  uint64_t k = rng_below(&g->rng, 12);
  *addr = 0x20000000ULL + 8 * k + (rng_below(&g->rng, 8) == 0 ? 4 : 0) + (k >= 10 ? 4096 * k : 0);
}

static void sq_search_bound(const char *src, uint64_t seed, uint64_t min_fwd, uint64_t min_partial) {
  sqb_gen g;
  rng_seed(&g.rng, seed);
  char *path = branch_loop_trace(build(src), sqb_addr, &g, seed ^ 0x5bd1e995u, 3000);
  wi_err err;
  trace_t *t = tu_open_trace(path);
  const char *machines[] = {"golden_cove", "stress"};
  for (size_t k = 0; k < WI_ARRAY_LEN(machines); k++) {
    ooo_config c;
    if (machine_load(machines[k], &c, &err)) fail_msg("%s", err.msg);
    ooo_model *a = ooo_new(&c, t, OOO_SID_STATS, &err);
    ooo_model *b = ooo_new(&c, t, OOO_SID_STATS | OOO_NO_SQ_BOUND, &err);
    if (!a || !b) fail_msg("ooo_new: %s", err.msg);
    while (!ooo_finished(a)) {
      tu_ooo_run(a, 1009);
      tu_ooo_run(b, 1009);
      tu_ooo_assert_same(a, b);
    }
    const ooo_stats *s = ooo_get_stats(a);
    print_message("store-queue search bound (%s): %llu loads, %llu forwarded, %llu partial, %llu squashed; "
                  "identical\n",
                  machines[k], (unsigned long long)s->loads, (unsigned long long)s->forwarded,
                  (unsigned long long)s->forward_fail, (unsigned long long)s->squashed);
    assert_true(s->forwarded > min_fwd && s->forward_fail > min_partial && s->squashed > 100);
    ooo_free(a);
    ooo_free(b);
  }
  trace_close(t);
  unlink(path);
  free(path);
}

static void test_sq_search_bound(void **state) {
  (void)state;
  uint64_t seed = tu_seed();
  const char *src =
    "loop:\n"
    "  mov [rdi], rax\n"
    "  mov [rsi], rbx\n"
    "  mov rcx, [rdx]\n"
    "  add rax, rcx\n"
    "  mov [rdi], rcx\n"
    "  mov r8, [r9]\n"
    "  add rbx, r8\n"
    "  test rax, 1\n"
    "br:\n"
    "  jz skip\n"
    "rmw:\n"
    "  mov r10, [r11]\n"
    "  mov [r12], r10\n"
    "skip:\n"
    "  dec r13\n"
    "  jnz loop\n"
    "done:\n"
    "  nop\n";
  sq_search_bound(src, seed, 300, 100);
  const char *vsrc =
    "loop:\n"
    "  vmovdqu [rdi], ymm0\n"
    "  mov [rsi], rbx\n"
    "  vmovdqu ymm1, [rdx]\n"
    "  vpaddd ymm0, ymm0, ymm1\n"
    "  vmovdqu [rdi], ymm1\n"
    "  mov r8, [r9]\n"
    "  add rbx, r8\n"
    "  test r8, 1\n"
    "br:\n"
    "  jz skip\n"
    "rmw:\n"
    "  vmovdqu ymm2, [r11]\n"
    "  vmovdqu [r12], ymm2\n"
    "skip:\n"
    "  dec r13\n"
    "  jnz loop\n"
    "done:\n"
    "  nop\n";
  sq_search_bound(vsrc, seed ^ 0x9e3779b9u, 300, 300);
}

/* Wrong-path fetch has a block path (no filter, no fetch observer: cached straight-line runs,
 * the line check only where a line starts, conditional TAGE branches inline) and the
 * per-instruction path an observer takes; both must fetch the same instructions in the same
 * cycles. Long runs on both sides of a random branch, with loads (one instruction with two) and
 * instructions of several lengths across lines, under front ends that cut blocks at every limit. */
static const char *const wpblk_src =
  "loop:\n"
  "  mov rax, [rsi]\n"
  "  test rax, rax\n"
  "br:\n"
  "  jz skip\n"
  "rmw:\n"
  "  add rbx, 1\n"
  "  mov r9, [rdi+8]\n"
  "  add rbx, 0x12345678\n"
  "  imul r10, r10, 3\n"
  "  add r11, [rdi+16]\n"
  "  lea r12, [r12+r13*4+0x100]\n"
  "  add rbx, 3\n"
  "  movabs r14, 0x1122334455667788\n"
  "  add rbx, 4\n"
  "  add r15, [rdi+24]\n"
  "  add [rdi+40], rbx\n"
  "  add rbx, 5\n"
  "skip:\n"
  "  add rdx, rbx\n"
  "  mov r8, [rdi]\n"
  "  add rdx, 0x7654321\n"
  "  xor r9, r9\n"
  "  push qword ptr [rdi+48]\n"
  "  pop r9\n"
  "  add rdx, [rdi+32]\n"
  "  movabs r13, 0x8877665544332211\n"
  "  add rdx, 7\n"
  "  imul rdi, rdi, 1\n"
  "  add rdx, 8\n"
  "  mov [rdi+8], rbx\n"
  "  dec rcx\n"
  "  jnz loop\n"
  "done:\n"
  "  nop\n";

/* Addresses walk over 1 MiB in lines, so where a wrong-path access goes (the last address of
 * its PC) changes what hits. */
static void wpblk_addr(void *ctx, uint64_t pc, int slot, uint64_t *addr, uint32_t *size, bool *is_store) {
  uint64_t *n = ctx;
  (void)pc;
  (void)size;
  (void)is_store;
  *addr = 0x20000000ULL + 64 * (wi_mix64(++*n) % 16384) + 8 * (uint64_t)slot;
}

static void test_wrong_path_blocks(void **state) {
  (void)state;
  uint64_t seed = tu_seed();
  uint64_t an = 0;
  char *path = branch_loop_trace(build(wpblk_src), wpblk_addr, &an, seed, 1200);
  trace_t *t = tu_open_trace(path);
  wi_err err;
  for (int k = 0; k < 8; k++) {
    ooo_config c;
    if (machine_load(k == 7 ? "stress" : "golden_cove", &c, &err)) fail_msg("%s", err.msg);
    if (k == 1) c.fe.fetch_width = 3;           /* blocks cut by the width */
    if (k == 2) c.fe.fetch_bytes = 16;          /* by the bytes */
    if (k == 3) c.fe.fetch_queue = 12;          /* by the queue */
    if (k == 4) {                               /* by the wrong-path cap */
      c.fe.wrong_path = WP_CAP;
      c.fe.wrong_path_cap = 5;
    }
    if (k == 5) c.fe.fetch_taken = 1;           /* by taken branches */
    if (k == 6) c.fe.uop_cache_lines = 0;       /* every line through the I-cache */
    ooo_model *plain;
    obs_ctx oc;
    ooo_model *m = run_observed(t, &c, &oc, &plain); /* asserts identical results */
    for (int lv = 0; lv < 4; lv++) /* and the same cache accesses (the I-cache lines fetched) */
      assert_memory_equal(mem_stats(ooo_get_mem(m), lv), mem_stats(ooo_get_mem(plain), lv), sizeof(mem_level_stats));
    const ooo_stats *s = ooo_get_stats(plain);
    print_message("front end %d: %llu committed, %llu wrong-path fetched, %llu mispredicts\n", k,
                  (unsigned long long)s->insns, (unsigned long long)s->fetched[1],
                  (unsigned long long)s->mispredicts[BR_COND]);
    assert_true(s->mispredicts[BR_COND] > 200);
    if (k == 4) /* about the cap after each misprediction: a squash can come first, and a machine
                 * clear refetches a mispredicted branch that commits once */
      assert_true(s->fetched[1] > 4 * s->mispredicts[BR_COND] && s->fetched[1] < 6 * s->mispredicts[BR_COND]);
    else
      assert_true(s->fetched[1] > 5 * s->mispredicts[BR_COND] - 1); /* the wrong path was fetched */
    ooo_free(m);
    ooo_free(plain);
  }
  trace_close(t);
  unlink(path);
  free(path);
}

/* The port choice: the lean copies pick the least loaded port (lowest number on ties) of more
 * than two with SSE2 from keys (queue length << 4 | port), rename's reference path
 * (OOO_NO_LEAN) by walking the ports: every micro-op issues on the same port in both (an
 * observer hashes the sequence of fid, micro-op, port), on streams that load the ALU ports
 * (5 on golden_cove, 4 on skylake), the load ports (3 on golden_cove) and a mix with wrong
 * paths. */
typedef struct port_ctx {
  uint64_t hash, n, per_port[OOO_MAX_PORTS];
} port_ctx;
static void p_issue(void *vc, const ooo_ev *e) {
  port_ctx *c = vc;
  uint32_t p = e->rid - OOO_RID_PORT;
  c->hash = (c->hash ^ (e->fid * 1315423911u + e->uop * 64u + p)) * 0x100000001b3ULL;
  c->n++;
  c->per_port[p]++;
}
static void test_port_choice(void **state) {
  (void)state;
  uint64_t seed = tu_seed();
  enum { NP = 3 };
  char *paths[NP];
  paths[0] = loop_trace("add rax, 1\n  imul rbx, rbx\n  add rcx, rdx\n  shl rsi, 3\n  lea rdi, [rdi+rsi]", 8, 300,
                        NULL, NULL);
  paths[1] = loop_trace("mov rbx, [rdi]\n  mov rdx, [rdi+64]\n  add rsi, rbx", 8, 300, NULL, NULL);
  paths[2] = mix_trace(seed, 1500);
  const char *machines[] = {"golden_cove", "skylake"};
  const ooo_observer obs = {.issue = p_issue};
  wi_err err;
  for (int i = 0; i < NP; i++) {
    trace_t *t = tu_open_trace(paths[i]);
    for (size_t k = 0; k < WI_ARRAY_LEN(machines); k++) {
      ooo_config c;
      if (machine_load(machines[k], &c, &err)) fail_msg("%s", err.msg);
      port_ctx pa = {0}, pl = {0};
      ooo_model *a = ooo_new(&c, t, 0, &err);
      ooo_model *l = ooo_new(&c, t, OOO_NO_LEAN, &err);
      if (!a || !l) fail_msg("ooo_new: %s", err.msg);
      if (ooo_attach_observer(a, &obs, &pa, &err) || ooo_attach_observer(l, &obs, &pl, &err)) fail_msg("%s", err.msg);
      tu_ooo_run(a, UINT64_MAX);
      tu_ooo_run(l, UINT64_MAX);
      assert_true(ooo_finished(a) && ooo_finished(l));
      tu_ooo_assert_same(a, l);
      assert_true(pa.n > 1000);
      assert_int_equal(pa.n, pl.n);
      assert_memory_equal(pa.per_port, pl.per_port, sizeof pa.per_port);
      assert_int_equal(pa.hash, pl.hash);
      uint32_t used = 0;
      for (uint32_t p = 0; p < OOO_MAX_PORTS; p++) used += pa.per_port[p] != 0;
      assert_true(used > 3); /* the choice had several ports to take from */
      ooo_free(a);
      ooo_free(l);
    }
    trace_close(t);
    unlink(paths[i]);
    free(paths[i]);
  }
}

/* ---- models without bindings ---------------------------------------------------------------------- */

/* OOO_NO_BINDINGS leaves out only what observers see (also the scheduler entry numbers: only
 * the counts are kept): every statistic (per sid too) and the cycle count equal a model's that
 * keeps the bindings, on streams of every kind the commands
 * run (branchy, calls and returns, FMA chains with a divider, forwarding, pointer chasing with
 * misses, a mix with wrong paths and machine clears, port pressure) on three machines (one
 * through rename's reference path, OOO_NO_LEAN), also for a clone taken halfway (which inherits
 * the flag); an observer is refused. */
static void test_no_bindings(void **state) {
  (void)state;
  uint64_t seed = tu_seed();
  enum { NP = 7 };
  char *paths[NP];
  chase_ctx cc = {0};
  paths[0] = random_branch_trace(seed, 1500);
  paths[1] = walk_trace(seed, 120);
  paths[2] = loop_trace("vfmadd231ps ymm0, ymm1, ymm2\n  divps xmm3, xmm4\n  imul rbx, rcx", 8, 150, NULL, NULL);
  paths[3] = loop_trace("mov [rdi], rax\n  mov rax, [rdi]\n  add rax, 1", 6, 200, same_addr, NULL);
  paths[4] = loop_trace("mov rax, [rax]\n  mov [rax+8], rbx", 4, 300, chase_addr, &cc);
  paths[5] = mix_trace(seed, 1500);
  paths[6] = loop_trace("add rax, 1\n  imul rbx, rbx\n  add rcx, rdx\n  shl rsi, 3\n  lea rdi, [rdi+rsi]", 8, 300,
                        NULL, NULL);
  const char *machines[] = {"golden_cove", "skylake", "stress"};
  wi_err err;
  uint64_t n_cmp = 0;
  for (int i = 0; i < NP; i++) {
    trace_t *t = tu_open_trace(paths[i]);
    size_t sid_bytes = trace_get_info(t)->n_static * sizeof(ooo_sid_stats);
    for (size_t k = 0; k < WI_ARRAY_LEN(machines); k++) {
      ooo_config c;
      if (machine_load(machines[k], &c, &err)) fail_msg("%s", err.msg);
      if (k == 1) c.core.mem_dep = MDP_SPECULATE; /* machine clears too */
      unsigned fl = OOO_SID_STATS | (k == 2 ? OOO_NO_LEAN : 0u); /* (rename's reference path too) */
      ooo_model *a = ooo_new(&c, t, fl, &err);
      ooo_model *b = ooo_new(&c, t, fl | OOO_NO_BINDINGS, &err);
      if (!a || !b) fail_msg("ooo_new: %s", err.msg);
      uint64_t half = trace_get_info(t)->n_insns / 2;
      tu_ooo_run(a, half);
      tu_ooo_run(b, half);
      ooo_model *h = ooo_clone(b, &err); /* a checkpoint copy: no bindings either */
      if (!h) fail_msg("ooo_clone: %s", err.msg);
      assert_int_equal(ooo_attach_observer(h, &all_obs, NULL, &err), WI_EINVAL);
      assert_int_equal(ooo_copy(a, b, &err), WI_EINVAL); /* the flags differ */
      tu_ooo_run(a, UINT64_MAX);
      tu_ooo_run(b, UINT64_MAX);
      tu_ooo_run(h, UINT64_MAX);
      assert_true(ooo_finished(a) && ooo_finished(b) && ooo_finished(h));
      tu_ooo_assert_same(a, b);
      tu_ooo_assert_same(a, h);
      assert_memory_equal(ooo_get_sid_stats(a), ooo_get_sid_stats(b), sid_bytes);
      assert_memory_equal(ooo_get_sid_stats(a), ooo_get_sid_stats(h), sid_bytes);
      n_cmp += ooo_committed(a);
      ooo_free(a);
      ooo_free(b);
      ooo_free(h);
    }
    trace_close(t);
    unlink(paths[i]);
    free(paths[i]);
  }
  print_message("no bindings: %llu instructions over %d streams x 3 machines; identical\n",
                (unsigned long long)n_cmp, NP);
}

/* A rename blocked on a resource notes the first short one and the need of the fetch-queue head
 * that stopped it, and while that stays short the next cycles stop at once for the same reason;
 * the copy without bindings also names that resource from the lanes of the all-at-once check
 * instead of checking them one by one. Every statistic (dispatch stalls and slots too) equals a
 * model's without either (one with bindings, and one through rename's reference path,
 * OOO_NO_LEAN) at every point, on streams that block on the ROB, each scheduler, the load and
 * store queues and the physical registers (shrunk machines), and with squashes and machine
 * clears (which drop the note) and filters. */
static void test_blocked_rename(void **state) {
  (void)state;
  uint64_t seed = tu_seed();
  enum { NP = 6 };
  char *paths[NP];
  chase_ctx cc = {0}, cl = {0}, cs = {0};
  paths[0] = loop_trace("vfmadd231ps ymm0, ymm1, ymm2\n  divps xmm3, xmm4\n  imul rbx, rcx", 8, 150, NULL, NULL);
  paths[1] = loop_trace("mov rax, [rax]\n  mov [rax+8], rbx", 4, 300, chase_addr, &cc);
  paths[2] = loop_trace("mov rbx, [rdi]\n  add rdx, rbx", 8, 200, chase_addr, &cl);
  paths[3] = loop_trace("mov [rdi], rax", 8, 200, chase_addr, &cs);
  paths[4] = loop_trace("vaddps ymm1, ymm2, ymm3\n  vmulps ymm4, ymm5, ymm6\n  add rax, rbx", 8, 300, NULL, NULL);
  paths[5] = mix_trace(seed, 1500);
  wi_err err;
  uint64_t stalls[OB_NUM] = {0}, n_cmp = 0;
  for (int i = 0; i < NP; i++) {
    trace_t *t = tu_open_trace(paths[i]);
    size_t sid_bytes = trace_get_info(t)->n_static * sizeof(ooo_sid_stats);
    for (int k = 0; k < 3; k++) {
      ooo_config c;
      if (machine_load(k == 2 ? "stress" : "golden_cove", &c, &err)) fail_msg("%s", err.msg);
      if (k == 1) { /* every structure small: each can be the one that stops rename */
        c.core.rob = 64;
        c.core.sched_math = 12;
        c.core.sched_load = 6;
        c.core.sched_store = 6;
        c.core.lq = 10;
        c.core.sq = 8;
        c.core.int_prf = 60;
        c.core.vec_prf = 56;
        c.core.mem_dep = MDP_SPECULATE; /* machine clears too */
      }
      ooo_model *a = ooo_new(&c, t, OOO_SID_STATS | OOO_NO_BINDINGS, &err);
      ooo_model *b = ooo_new(&c, t, OOO_SID_STATS, &err);
      ooo_model *l = ooo_new(&c, t, OOO_SID_STATS | OOO_NO_BINDINGS | OOO_NO_LEAN, &err);
      if (!a || !b || !l) fail_msg("ooo_new: %s", err.msg);
      mix_filt fa = {{0, 0, 0}, 0, 0, 0}, fb = fa, fl = fa;
      bool filtered = false;
      while (!ooo_finished(a)) {
        tu_ooo_run(a, 613);
        tu_ooo_run(b, 613);
        tu_ooo_run(l, 613);
        tu_ooo_assert_same(a, b);
        tu_ooo_assert_same(a, l);
        if (i == NP - 1 && ooo_committed(a) > 2000 && !filtered) { /* a filter from here on */
          filtered = true;
          tbuild *tb = build(mix_src);
          uint64_t pc0 = tb_label(tb, "loop"), pc1 = tb_label(tb, "rmw"), pc2 = tb_label(tb, "skip");
          tb_free(tb);
          mix_filt f0 = {{pc0, pc1, pc2}, 0, 0, 0};
          fa = fb = fl = f0;
          ooo_set_filter(a, mix_filter, &fa);
          ooo_set_filter(b, mix_filter, &fb);
          ooo_set_filter(l, mix_filter, &fl);
        }
      }
      assert_true(ooo_finished(b) && ooo_finished(l));
      assert_memory_equal(ooo_get_sid_stats(a), ooo_get_sid_stats(b), sid_bytes);
      assert_memory_equal(ooo_get_sid_stats(a), ooo_get_sid_stats(l), sid_bytes);
      const ooo_stats *s = ooo_get_stats(a);
      for (int o = 0; o < OB_NUM; o++) stalls[o] += s->dispatch_stall[o];
      n_cmp += ooo_committed(a);
      ooo_free(a);
      ooo_free(b);
      ooo_free(l);
    }
    trace_close(t);
    unlink(paths[i]);
    free(paths[i]);
  }
  print_message("blocked rename: %llu instructions; rename stopped on ROB %llu, scheduler %llu, LQ %llu, SQ %llu, "
                "registers %llu cycles; identical\n",
                (unsigned long long)n_cmp, (unsigned long long)stalls[OB_ROB_FULL],
                (unsigned long long)stalls[OB_SCHED_FULL], (unsigned long long)stalls[OB_LQ_FULL],
                (unsigned long long)stalls[OB_SQ_FULL], (unsigned long long)stalls[OB_PRF_FULL]);
  assert_true(stalls[OB_ROB_FULL] && stalls[OB_SCHED_FULL] && stalls[OB_LQ_FULL] && stalls[OB_SQ_FULL] &&
              stalls[OB_PRF_FULL]);
}

/* Attaching an observer to a model without bindings: an error from ooo_attach_observer (none
 * attached; detaching is fine), an abort with a message from ooo_set_observer. */
static void test_no_bindings_observer(void **state) {
  (void)state;
  char *path = loop_trace("add rax, rbx", 8, 50, NULL, NULL);
  trace_t *t = tu_open_trace(path);
  ooo_config c;
  ooo_config_default(&c);
  wi_err err;
  ooo_model *m = ooo_new(&c, t, OOO_NO_BINDINGS, &err);
  ooo_model *o = ooo_new(&c, t, 0, &err);
  if (!m || !o) fail_msg("ooo_new: %s", err.msg);
  assert_int_equal(ooo_attach_observer(m, &all_obs, NULL, &err), WI_EINVAL);
  assert_non_null(strstr(err.msg, "OOO_NO_BINDINGS"));
  assert_int_equal(ooo_attach_observer(m, NULL, NULL, &err), WI_OK);
  assert_int_equal(ooo_attach_observer(o, &all_obs, NULL, &err), WI_OK); /* (not run) */
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) {
    if (!freopen("/dev/null", "w", stderr)) _exit(2); /* (the expected message) */
    ooo_set_observer(m, &all_obs, NULL);
    _exit(0); /* not reached */
  }
  assert_true(pid > 0);
  int ws = 0;
  assert_int_equal(waitpid(pid, &ws, 0), pid);
  assert_true(WIFSIGNALED(ws) && WTERMSIG(ws) == SIGABRT);
  ooo_free(m);
  ooo_free(o);
  trace_close(t);
  unlink(path);
  free(path);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_dependent_add_chain),
    cmocka_unit_test(test_independent_adds),
    cmocka_unit_test(test_fma_chain_and_throughput),
    cmocka_unit_test(test_load_chain_l1),
    cmocka_unit_test(test_top_of_address_space),
    cmocka_unit_test(test_loop_branch_learned),
    cmocka_unit_test(test_random_branch),
    cmocka_unit_test(test_ras_repair),
    cmocka_unit_test(test_determinism_and_checkpoints),
    cmocka_unit_test(test_parallel_models),
    cmocka_unit_test(test_memory_ordering),
    cmocka_unit_test(test_clear_wakes_waiting_load),
    cmocka_unit_test(test_store_forwarding_latency),
    cmocka_unit_test(test_filter_interventions),
    cmocka_unit_test(test_perfect_mem_and_skipping),
    cmocka_unit_test(test_observer),
    cmocka_unit_test(test_load_op_binding),
    cmocka_unit_test(test_serialize_and_divider),
    cmocka_unit_test(test_unit_skip),
    cmocka_unit_test(test_rep_string),
    cmocka_unit_test(test_stress_config),
    cmocka_unit_test(test_mem_only_cycles),
    cmocka_unit_test(test_plan_cache),
    cmocka_unit_test(test_squash_paths),
    cmocka_unit_test(test_sq_search_bound),
    cmocka_unit_test(test_wrong_path_blocks),
    cmocka_unit_test(test_no_bindings),
    cmocka_unit_test(test_port_choice),
    cmocka_unit_test(test_no_bindings_observer),
    cmocka_unit_test(test_blocked_rename),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

/* test_int_replay.c — interventions on recorded bundled workloads (integration): the
 * mechanisms each intervention targets, checkpoint identity on real traces, sweeps (threads,
 * resume after a kill, shards + merge), `whatif replay --json` and the example scripts. */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "interv.h"
#include "machine.h"
#include "replay.h"
#include "testutil.h"

/* ---- helpers -------------------------------------------------------------------------------------- */

typedef struct wl {
  trace_t *t;
  rp_base *b;
  rp_result base;
} wl;

static void wl_open(wl *w, const char *name, unsigned flags, bool snapshots) {
  char *path = tu_trace_path(name);
  wi_err err = {0};
  w->t = trace_open(path, &err);
  if (!w->t) fail_msg("%s", err.msg);
  free(path);
  ooo_config cfg;
  if (machine_load(NULL, &cfg, &err)) fail_msg("%s", err.msg);
  rp_base_opts o = {0};
  o.ooo_flags = flags;
  o.no_snapshots = !snapshots;
  if (!(w->b = rp_base_new(w->t, &cfg, &o, &err))) fail_msg("%s", err.msg);
  if (rp_base_run(w->b, &err)) fail_msg("%s", err.msg);
  rp_result_from_model(rp_base_model(w->b), &w->base);
}

static void wl_close(wl *w) {
  rp_base_free(w->b);
  trace_close(w->t);
}

static rp_result replay(wl *w, const char *text, bool ckpt) {
  rp_interv *v;
  size_t n;
  wi_err err = {0};
  if (interv_parse_list(text, "test", &v, &n, &err)) fail_msg("%s", err.msg);
  rp_plan *p = rp_plan_new(w->b, v, n, &err);
  interv_free_list(v, n);
  if (!p) fail_msg("%s: %s", text, err.msg);
  rp_result r;
  if (rp_replay(w->b, p, NULL, ckpt, &r, &err)) fail_msg("%s: %s", text, err.msg);
  rp_plan_free(p);
  print_message("  %-44s cycles %10llu (%+.3f%%)  ret-mispredicts %llu  wp-fetched %llu  from %llu\n", text,
                (unsigned long long)r.cycles,
                100.0 * ((double)r.cycles - (double)w->base.cycles) / (double)w->base.cycles,
                (unsigned long long)r.ret_mispredicts, (unsigned long long)r.wp_fetched,
                (unsigned long long)r.start_insn);
  return r;
}

static uint64_t backend_slots(const rp_result *r) {
  return r->stats.slots[OOO_SLOT_BE_MEMORY] + r->stats.slots[OOO_SLOT_BE_CORE];
}

/* The most executed static instruction satisfying pred (UINT32_MAX if none). */
static uint32_t hottest(const trace_t *t, bool (*pred)(const trace_t *, uint32_t, const void *), const void *ctx) {
  uint32_t best = UINT32_MAX;
  for (uint32_t s = 0; s < trace_get_info(t)->n_static; s++)
    if (pred(t, s, ctx) && (best == UINT32_MAX || trace_static_at(t, s)->count > trace_static_at(t, best)->count))
      best = s;
  return best;
}

static bool is_class(const trace_t *t, uint32_t s, const void *ctx) {
  return trace_decoded(t, s)->cls == *(const int *)ctx;
}

/* ---- the mechanisms -------------------------------------------------------------------------------- */

/* Widening the pressured port (5, the only one with a cross-lane permute unit) speeds up `ports`
 * and leaves fma_chain within 1%. */
static void test_widen_port(void **state) {
  (void)state;
  wl w;
  wl_open(&w, "ports", 0, false);
  rp_result r = replay(&w, "port{name='P5', add=1}", true);
  assert_true((double)r.cycles < 0.99 * (double)w.base.cycles);
  r = replay(&w, "port{classes={'permute'}}", true);
  assert_true((double)r.cycles < 0.99 * (double)w.base.cycles);
  wl_close(&w);
  wl_open(&w, "fma_chain", 0, false);
  r = replay(&w, "port{name='P5', add=1}", true);
  assert_true(llabs((long long)r.cycles - (long long)w.base.cycles) < (long long)w.base.cycles / 100);
  wl_close(&w);
}

/* RAS full repair removes most return mispredictions on recursion; none keeps them. */
static void test_ras_repair(void **state) {
  (void)state;
  wl w;
  wl_open(&w, "recursion", 0, false);
  print_message("  baseline: %llu return mispredicts (repair %s)\n", (unsigned long long)w.base.ret_mispredicts,
                rp_base_config(w.b)->bp.ras_repair == RAS_REPAIR_TOS ? "tos" : "?");
  rp_result full = replay(&w, "ras{repair='full'}", true);
  rp_result none = replay(&w, "ras{repair='none'}", true);
  assert_true(none.ret_mispredicts > 1000);
  assert_true(none.ret_mispredicts * 10 >= w.base.ret_mispredicts * 9);
  assert_true(full.ret_mispredicts * 2 < none.ret_mispredicts);
  assert_true(full.cycles < none.cycles);
  wl_close(&w);
}

/* wrong_path{policy="off"}: no wrong-path instruction at all, and the cycles change. */
static void test_wrong_path_off(void **state) {
  (void)state;
  wl w;
  wl_open(&w, "recursion", 0, false);
  assert_true(w.base.wp_fetched > 0);
  rp_result r = replay(&w, "wrong_path{policy='off'}", true);
  assert_int_equal(r.wp_fetched, 0);
  assert_int_equal(r.wp_executed, 0);
  assert_int_equal(r.stats.dispatched[1], 0);
  assert_int_not_equal(r.cycles, w.base.cycles);
  assert_int_equal(r.insns, w.base.insns);
  wl_close(&w);
}

static bool is_pass_load(const trace_t *t, uint32_t s, const void *ctx) {
  const trace_sym *fn = trace_sym_lookup(t, trace_static_at(t, s)->pc);
  return trace_decoded(t, s)->cls == *(const int *)ctx && fn && fn->name && !strcmp(fn->name, "pass");
}

/* Removing the FMA on fma_chain's critical chain speeds it up by the FMA latency per iteration
 * (less what the loop costs without it, measured by setting that latency to 0); removing an
 * off-chain instruction changes little. */
static void test_remove_fma(void **state) {
  (void)state;
  wl w;
  wl_open(&w, "fma_chain", 0, true);
  int fma_cls = IC_FMA, load_cls = IC_LOAD, alu_cls = IC_ALU;
  uint32_t fma = hottest(w.t, is_class, &fma_cls);
  assert_int_not_equal(fma, UINT32_MAX);
  uint64_t pc = trace_static_at(w.t, fma)->pc, n = trace_static_at(w.t, fma)->count;
  const ooo_class_spec *spec = &rp_base_config(w.b)->uops[IC_FMA];
  double lat = spec->u[spec->n - 1].latency;
  char text[128];
  /* the chain binds: one more cycle of FMA latency costs one cycle per iteration */
  snprintf(text, sizeof text, "latency{pc=0x%llx, add=1}", (unsigned long long)pc);
  rp_result add1 = replay(&w, text, true);
  double per = ((double)add1.cycles - (double)w.base.cycles) / (double)n;
  assert_true(per > 0.97 && per < 1.03);
  snprintf(text, sizeof text, "remove{pc=0x%llx}", (unsigned long long)pc);
  rp_result rm = replay(&w, text, true);
  snprintf(text, sizeof text, "latency{pc=0x%llx, set=0}", (unsigned long long)pc);
  rp_result zero = replay(&w, text, true);
  double saved = ((double)w.base.cycles - (double)rm.cycles) / (double)n;
  double saved0 = ((double)w.base.cycles - (double)zero.cycles) / (double)n;
  print_message("  FMA latency %.0f: removing it saves %.2f cycles/iteration; latency 0 saves %.2f\n", lat, saved,
                saved0);
  assert_true(saved > 0.4 * lat && saved < lat + 0.5);
  assert_true(saved > 0.95 * saved0 && saved < 1.05 * saved0);
  /* off the chain: the independent load and the loop counter */
  uint32_t ld = hottest(w.t, is_pass_load, &load_cls), add = hottest(w.t, is_pass_load, &alu_cls);
  assert_int_not_equal(ld, UINT32_MAX);
  assert_int_not_equal(add, UINT32_MAX);
  uint32_t off[2] = {ld, add};
  for (int i = 0; i < 2; i++) {
    snprintf(text, sizeof text, "remove{pc=0x%llx}", (unsigned long long)trace_static_at(w.t, off[i])->pc);
    rp_result r = replay(&w, text, true);
    assert_true(llabs((long long)r.cycles - (long long)w.base.cycles) * 500 < (long long)w.base.cycles);
  }
  wl_close(&w);
}

/* The chasing load reads the register it writes: mov rdx, [rdx]. */
static bool is_chase(const trace_t *t, uint32_t s, const void *ctx) {
  (void)ctx;
  const dec_insn *d = trace_decoded(t, s);
  return d->cls == IC_LOAD && (d->dst & d->addr_src & 0xffffULL) != 0;
}

/* perfect_cache on ptrchase's chasing load removes most of the backend-bound slots. */
static void test_perfect_cache_chase(void **state) {
  (void)state;
  wl w;
  wl_open(&w, "ptrchase", 0, true);
  uint32_t s = hottest(w.t, is_chase, NULL);
  assert_int_not_equal(s, UINT32_MAX);
  char text[128];
  snprintf(text, sizeof text, "perfect_cache{pc=0x%llx}", (unsigned long long)trace_static_at(w.t, s)->pc);
  print_message("  chasing load: %s\n", trace_decoded(w.t, s)->text);
  rp_result r = replay(&w, text, true);
  print_message("  backend-bound slots %llu -> %llu\n", (unsigned long long)backend_slots(&w.base),
                (unsigned long long)backend_slots(&r));
  assert_true(backend_slots(&r) * 2 < backend_slots(&w.base));
  assert_true(r.cycles < w.base.cycles);
  assert_true(r.start_insn > 0); /* its first execution is late: the replay skipped the set-up */
  wl_close(&w);
}

/* ---- checkpoints ------------------------------------------------------------------------------------- */

/* Checkpoint-skipped replays equal full replays for interventions whose first occurrence is
 * early, in the middle and late in the trace (ptrchase: set-up, then the walk, then the exit;
 * fma_chain: set-up, then the passes). */
static void test_checkpoint_identity(void **state) {
  (void)state;
  static const char *const names[] = {"ptrchase", "fma_chain"};
  for (int k = 0; k < 2; k++) {
    wl w;
    wl_open(&w, names[k], 0, true);
    size_t ns = rp_base_n_snaps(w.b);
    assert_true(ns >= 8);
    uint32_t n_static = trace_get_info(w.t)->n_static;
    /* the most executed sid whose first entry falls in each third of the snapshots (an entry
     * before the first snapshot leaves nothing to skip) */
    uint32_t pick[3] = {UINT32_MAX, UINT32_MAX, UINT32_MAX};
    for (uint32_t s = 0; s < n_static; s++) {
      uint32_t fe = rp_base_first_entry(w.b, s);
      if (fe == UINT32_MAX || fe == 0) continue;
      int third = fe * 3 < ns ? 0 : fe * 3 < 2 * ns ? 1 : 2;
      if (pick[third] == UINT32_MAX || trace_static_at(w.t, s)->count > trace_static_at(w.t, pick[third])->count)
        pick[third] = s;
    }
    static const char *const forms[] = {"remove{pc=0x%llx}", "latency{pc=0x%llx, add=30}"};
    int tried = 0;
    for (int i = 0; i < 3; i++) {
      if (pick[i] == UINT32_MAX) continue;
      for (int f = 0; f < (k == 0 ? 2 : 1); f++) {
        char text[128];
        snprintf(text, sizeof text, forms[f], (unsigned long long)trace_static_at(w.t, pick[i])->pc);
        rp_result a = replay(&w, text, true), full = replay(&w, text, false);
        if (a.cycles != full.cycles)
          fail_msg("%s %s: checkpointed %llu != full %llu", names[k], text, (unsigned long long)a.cycles,
                   (unsigned long long)full.cycles);
        assert_int_equal(a.insns, full.insns);
        assert_memory_equal(a.stats.slots, full.stats.slots, sizeof a.stats.slots);
        assert_memory_equal(a.stats.mispredicts, full.stats.mispredicts, sizeof a.stats.mispredicts);
        assert_int_equal(a.stats.fetched[1], full.stats.fetched[1]);
        assert_true(a.start_insn > 0);
        if (f == 0) assert_true(a.insns < w.base.insns); /* the drop had an effect */
        tried++;
      }
    }
    if (k == 0) assert_int_equal(tried, 6); /* early, middle and late all exist in ptrchase */
    else assert_true(tried >= 2);
    wl_close(&w);
  }
}

/* ---- the command line ---------------------------------------------------------------------------------- */

static char *run_cmd(const char *cmd, int want_status) {
  int st;
  char *full = xasprintf("%s 2>&1", cmd);
  char *out = tu_run(full, &st);
  free(full);
  if (st != want_status) fail_msg("'%s' exited %d (want %d): %s", cmd, st, want_status, out);
  return out;
}

/* The results table without wall times and checkpoint positions, in index order. */
static char *dump_db(const char *path) {
  return tu_sql_file_rows(path, "SELECT r.trace_hash, r.config_hash, r.base_cycles, x.idx, x.interv, x.pc, x.cycles,"
                                " x.insns, x.ipc, x.delta_cycles, x.delta_ipc, x.ipc_pct, x.mpki, x.wp_fetched"
                                " FROM replay x JOIN run r ON x.run_id = r.id ORDER BY x.idx");
}

static void rm_db(const char *p) {
  char *w = xasprintf("%s-wal", p), *s = xasprintf("%s-shm", p);
  unlink(p);
  unlink(w);
  unlink(s);
  free(w);
  free(s);
}

/* A 1-thread and a 2-thread sweep give identical tables; a killed sweep resumes to the same
 * table; merged shards equal the unsharded sweep. */
static void test_sweep_cli(void **state) {
  (void)state;
  const char *bin = getenv("WHATIF_BIN");
  char *trace = tu_trace_path("fma_chain");
  if (!bin) skip();
  char *db[6];
  for (int i = 0; i < 6; i++) db[i] = tu_tmp_path(".db");
  const char *common = "--per-pc 'latency{add=1}' --top 5 --quiet";
  char *cmd;
#define RUN(status, ...)                    \
  do {                                      \
    cmd = xasprintf(__VA_ARGS__);           \
    free(run_cmd(cmd, status));             \
    free(cmd);                              \
  } while (0)
  RUN(0, "'%s' sweep '%s' %s -j 1 -o '%s'", bin, trace, common, db[0]);
  RUN(0, "'%s' sweep '%s' %s -j 2 -o '%s'", bin, trace, common, db[1]);
  RUN(137, "'%s' sweep '%s' %s -j 2 -o '%s' --batch 2 --die-after 3", bin, trace, common, db[2]);
  char *partial = dump_db(db[2]);
  size_t rows = 0;
  for (char *p = partial; *p; p++) rows += *p == '\n';
  print_message("  rows after the kill: %zu of 5\n", rows);
  assert_int_equal(rows, 2); /* the committed batch survives; the open one is lost */
  free(partial);
  cmd = xasprintf("'%s' sweep '%s' --per-pc 'latency{add=1}' --top 5 -j 1 -o '%s'", bin, trace, db[2]);
  char *out = run_cmd(cmd, 0);
  free(cmd);
  char want[64];
  snprintf(want, sizeof want, "%zu already stored", rows);
  if (!strstr(out, want)) fail_msg("resume output lacks '%s': %s", want, out);
  free(out);
  RUN(0, "'%s' sweep '%s' %s -o '%s' --shard 0/2", bin, trace, common, db[3]);
  RUN(0, "'%s' sweep '%s' %s -o '%s' --shard 1/2 --no-ckpt", bin, trace, common, db[4]);
  RUN(0, "'%s' merge '%s' '%s' '%s'", bin, db[5], db[3], db[4]);
  char *a = dump_db(db[0]);
  const char *what[] = {NULL, "2 threads", "killed and resumed", NULL, NULL, "merged shards"};
  for (int i = 1; i < 6; i++) {
    if (!what[i]) continue;
    char *b = dump_db(db[i]);
    if (strcmp(a, b)) fail_msg("%s differs from the 1-thread sweep:\n%s\nvs\n%s", what[i], b, a);
    free(b);
  }
  size_t n = 0;
  for (char *p = a; *p; p++) n += *p == '\n';
  assert_int_equal(n, 5);
  free(a);
  /* bad input: exit 2 with one line */
  RUN(2, "'%s' sweep '%s' --per-pc 'ras{repair=\"full\"}' -o '%s'", bin, trace, db[0]);
  RUN(2, "'%s' replay '%s' --do 'latency{pc=0x1, add=1}'", bin, trace);
#undef RUN
  for (int i = 0; i < 6; i++) {
    rm_db(db[i]);
    free(db[i]);
  }
  free(trace);
}

/* `whatif replay --json` has the documented members. */
static void test_replay_json(void **state) {
  (void)state;
  const char *bin = getenv("WHATIF_BIN");
  char *trace = tu_trace_path("fma_chain");
  if (!bin) skip();
  char *cmd = xasprintf("'%s' replay '%s' --do 'latency{func=\"pass\", add=1}' --json", bin, trace);
  char *out = run_cmd(cmd, 0);
  static const char *const keys[] = {"\"baseline\"", "\"intervened\"", "\"delta\"", "\"cycles\"", "\"ipc\"",
                                     "\"ipc_pct\"", "\"topdown\"", "\"backend_bound\"", "\"mpki\""};
  for (size_t i = 0; i < WI_ARRAY_LEN(keys); i++)
    if (!strstr(out, keys[i])) fail_msg("JSON lacks %s: %s", keys[i], out);
  free(out);
  free(cmd);
  free(trace);
}

/* Every example script runs on its bundled workload and prints a table. */
static void test_examples(void **state) {
  (void)state;
  const char *bin = getenv("WHATIF_BIN"), *home = getenv("WHATIF_HOME");
  char *probe = tu_trace_path("fma_chain");
  free(probe);
  if (!bin || !home) skip();
  static const char *const ex[][2] = {
    {"remove_instruction.lua", "cycles/execution"}, {"ras_checkpoint.lua", "return mispredicts"},
    {"wp_throttle.lua", "wp fetched"},              {"widen_port.lua", "delta cycles"},
    {"per_pc_sweep.lua", "Kendall tau-b"},          {"validate_fix.lua", "regression projection"},
  };
  for (size_t i = 0; i < WI_ARRAY_LEN(ex); i++) {
    double t0 = wi_now();
    char *cmd = xasprintf("'%s' script '%s/scripts/examples/%s'", bin, home, ex[i][0]);
    char *out = run_cmd(cmd, 0);
    if (!strstr(out, ex[i][1]) || !strstr(out, "---")) fail_msg("%s: no table:\n%s", ex[i][0], out);
    print_message("  %s: %.1f s\n", ex[i][0], wi_now() - t0);
    free(out);
    free(cmd);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_widen_port),        cmocka_unit_test(test_ras_repair),
    cmocka_unit_test(test_wrong_path_off),    cmocka_unit_test(test_remove_fma),
    cmocka_unit_test(test_perfect_cache_chase), cmocka_unit_test(test_checkpoint_identity),
    cmocka_unit_test(test_sweep_cli),         cmocka_unit_test(test_replay_json),
    cmocka_unit_test(test_examples),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

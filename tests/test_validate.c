/* test_validate.c — validate/ experiments on synthetic traces: the injected-cause table and its
 * KEY-line / function resolution, the perturbation ground truth and rankings of a known FMA
 * chain, determinism across thread counts, and the JSON / HTML reports. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "testutil.h"

#include "replay.h"
#include "symbols.h"
#include "tbuild.h"
#include "trace.h"
#include "util.h"
#include "val.h"

#define BASE 0x401000ULL

/* ---- helpers ----------------------------------------------------------------------------------- */

static char *slurp(const char *path) {
  char *buf = NULL;
  size_t n = 0;
  wi_err err = {0};
  if (read_file(path, &buf, &n, &err)) fail_msg("%s", err.msg);
  return buf;
}

static size_t count_of(const char *hay, const char *needle) {
  size_t n = 0;
  for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle)) n++;
  return n;
}

static void write_text(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fputs(text, f);
  fclose(f);
}

/* ---- the table ------------------------------------------------------------------------------------ */

static void test_cause_table(void **state) {
  (void)state;
  static const char *const names[] = {"fma_chain", "ptrchase", "branchy", "ports", "recursion"};
  size_t n = 0;
  assert_non_null(val_cause_at(0, &n));
  assert_int_equal(n, 5);
  for (size_t i = 0; i < 5; i++) {
    const val_cause *c = val_cause_find(names[i]);
    assert_non_null(c);
    assert_string_equal(c->workload, names[i]);
    assert_true(c->gt == VAL_GT_LAT || c->gt == VAL_GT_REMOVE);
    assert_true(c->cause && c->why);
  }
  /* chains by latency+1, branches, returns and port pressure by removal */
  assert_int_equal(val_cause_find("fma_chain")->gt, VAL_GT_LAT);
  assert_int_equal(val_cause_find("ptrchase")->gt, VAL_GT_LAT);
  assert_int_equal(val_cause_find("branchy")->gt, VAL_GT_REMOVE);
  assert_int_equal(val_cause_find("recursion")->br, BR_RET);
  assert_null(val_cause_find("branchless"));
  assert_null(val_cause_find(NULL));
  assert_string_equal(val_gt_name(VAL_GT_LAT), "latency+1");
  assert_string_equal(val_rk_name(VAL_RK_GUS2), "gus_taint_2x");
  assert_string_equal(val_rk_name(VAL_RK_MFIR), "mfir_critical_path");
}

/* ---- KEY lines -------------------------------------------------------------------------------------- */

static const char k_key_src[] =
  "/* wlunit.c: the line marked KEY is the chain (a header mention: not a marker) */\n" /* 1 */
  "int x;\n"                                                                              /* 2 */
  "acc = fma(acc, a, b); /* KEY: the chain */\n"                                          /* 3 */
  "other = fma(other, a, b);\n"                                                           /* 4 */
  "p = p->next; /* KEY */\n";                                                             /* 5 */

/* A trace whose lines point at src_path: fma (line 3), fma (4), load (5), add (5), ret (1). */
static void write_key_trace(const char *path, const char *src_path) {
  wi_err err = {0};
  tbuild *tb = tb_new("a: vfmadd231ps ymm0, ymm1, ymm2\n b: vfmadd231ps ymm3, ymm1, ymm2\n"
                      " c: mov rax, [rax]\n d: add rbx, 1\n e: ret\n",
                      BASE, &err);
  if (!tb) fail_msg("%s", err.msg);
  size_t ncode;
  const uint8_t *code = tb_code(tb, &ncode);
  trace_writer *w = tw_open(path, NULL, &err);
  if (!w) fail_msg("%s", err.msg);
  static const char *const labels[] = {"a", "b", "c", "d", "e"};
  static const uint32_t lines[] = {3, 4, 5, 5, 1};
  for (int rep = 0; rep < 3; rep++)
    for (int i = 0; i < 5; i++) {
      uint64_t pc = tb_label(tb, labels[i]);
      uint32_t sid = tw_static(w, pc, tb_len(tb, pc), code + (pc - BASE));
      tw_exec(w, sid);
      if (i == 2) tw_mem(w, 0x10000000ULL, 8, false);
    }
  for (int i = 0; i < 5; i++) tw_line(w, tb_label(tb, labels[i]), src_path, lines[i]);
  tw_meta(w, "program", "/nowhere/wlunit");
  if (tw_close(w, &err)) fail_msg("%s", err.msg);
  tb_free(tb);
}

static void test_key_lines(void **state) {
  (void)state;
  char *dir = tu_tmp_path("-src");
  assert_int_equal(mkdir(dir, 0755), 0);
  char *src = xasprintf("%s/wlunit.c", dir);
  write_text(src, k_key_src);
  char *tpath = tu_tmp_path(".wtr");
  write_key_trace(tpath, src);
  wi_err err = {0};
  trace_t *t = trace_open(tpath, &err);
  if (!t) fail_msg("%s", err.msg);

  val_cause fma = {"wlunit", "fma chain", NULL, IC_FMA, -1, false, VAL_GT_LAT, "test"};
  uint32_t *sids = NULL;
  size_t n = 0;
  assert_int_equal(val_cause_pcs(&fma, t, NULL, &sids, &n, &err), WI_OK);
  assert_int_equal(n, 1); /* line 3 only: line 4's fma carries no marker */
  assert_int_equal(trace_static_at(t, sids[0])->pc, BASE);
  free(sids);

  val_cause load = {"wlunit", "load", NULL, -1, -1, true, VAL_GT_LAT, "test"};
  assert_int_equal(val_cause_pcs(&load, t, NULL, &sids, &n, &err), WI_OK);
  assert_int_equal(n, 1); /* the load on line 5, not the add beside it */
  assert_true(trace_decoded(t, sids[0])->cls == IC_LOAD);
  free(sids);

  val_cause ret = {"wlunit", "ret", NULL, -1, BR_RET, false, VAL_GT_REMOVE, "test"};
  assert_int_equal(val_cause_pcs(&ret, t, NULL, &sids, &n, &err), WI_OK);
  assert_int_equal(n, 0); /* line 1 mentions KEY in prose only */
  free(sids);
  trace_close(t);

  /* the source moved: found through src_dir, an error without it */
  write_key_trace(tpath, "/nonexistent/whatif/wlunit.c");
  t = trace_open(tpath, &err);
  if (!t) fail_msg("%s", err.msg);
  assert_int_equal(val_cause_pcs(&fma, t, dir, &sids, &n, &err), WI_OK);
  assert_int_equal(n, 1);
  free(sids);
  assert_int_equal(val_cause_pcs(&fma, t, NULL, &sids, &n, &err), WI_EIO);
  assert_non_null(strstr(err.msg, "wlunit"));
  assert_int_equal(n, 0);
  trace_close(t);

  unlink(tpath);
  unlink(src);
  rmdir(dir);
  free(tpath);
  free(src);
  free(dir);
}

/* sym_stmt_line_at (core/symbols, added for the KEY lines): inside inlined code it gives the
 * call site's line, where sym_line_at gives the inlined body's. */
static void test_stmt_lines(void **state) {
  (void)state;
  char *src = tu_tmp_path(".c"), *exe = tu_tmp_path(".elf");
  write_text(src, "static inline __attribute__((always_inline)) unsigned sq(unsigned x) {\n" /* 1 */
                  "  return x * x * x + 3u;\n"                                             /* 2 */
                  "}\n"                                                                    /* 3 */
                  "__attribute__((noinline)) unsigned f(unsigned a) {\n"                   /* 4 */
                  "  return sq(a) ^ 5u;\n"                                                 /* 5 */
                  "}\n"
                  "int main(int c, char **v) { (void)v; return (int)f((unsigned)c); }\n");
  char *cmd = xasprintf("cc -O2 -g -o '%s' '%s' 2>&1", exe, src);
  int st = -1;
  char *out = tu_run(cmd, &st);
  free(out);
  free(cmd);
  if (st != 0) {
    unlink(src);
    free(src);
    free(exe);
    skip(); /* no C compiler */
  }
  wi_err err = {0};
  sym_file *sf = sym_open(exe, 0, &err);
  if (!sf) fail_msg("%s", err.msg);
  const sym_func *fn = sym_func_by_name(sf, "f");
  assert_non_null(fn);
  int inlined = 0;
  for (uint64_t a = fn->addr; a < fn->addr + fn->size; a++) {
    const char *file = NULL, *sfile = NULL;
    uint32_t line = 0, sline = 0;
    if (!sym_line_at(sf, a, &file, &line)) continue;
    assert_true(sym_stmt_line_at(sf, a, &sfile, &sline));
    if (line == 2) { /* the inlined body */
      assert_int_equal(sline, 5);
      inlined++;
    } else {
      assert_int_equal(sline, line);
    }
  }
  assert_true(inlined > 0);
  sym_close(sf);
  unlink(exe);
  unlink(src);
  free(exe);
  free(src);
}

/* The returns of a function: both of walk's, not another function's. */
static void test_func_cause(void **state) {
  (void)state;
  wi_err err = {0};
  tbuild *tb = tb_new("start: call walk\n jmp fin\n"
                      "walk: test rdi, rdi\n je .Lleaf\n ret\n .Lleaf: ret\n"
                      "fin: call other\n nop\n"
                      "other: ret\n",
                      BASE, &err);
  if (!tb) fail_msg("%s", err.msg);
  uint64_t walk = tb_label(tb, "walk");
  uint64_t je = walk + tb_len(tb, walk);
  uint64_t ret1 = je + tb_len(tb, je), ret2 = ret1 + 1;
  uint64_t start = tb_label(tb, "start"), fin = tb_label(tb, "fin"), other = tb_label(tb, "other");
  uint64_t jmp = start + tb_len(tb, start);
  /* two visits: one through each return */
  tb_exec(tb, start, NULL, 0);
  tb_exec(tb, walk, NULL, 0);
  tb_exec(tb, je, NULL, 0);
  tb_exec(tb, ret1, NULL, 0);
  tb_exec(tb, jmp, NULL, 0);
  tb_exec(tb, fin, NULL, 0);
  tb_exec(tb, other, NULL, 0);
  tb_exec(tb, fin + tb_len(tb, fin), NULL, 0);
  tb_exec(tb, start, NULL, 0);
  tb_exec(tb, walk, NULL, 0);
  tb_exec(tb, je, NULL, 0);
  tb_exec(tb, ret2, NULL, 0);
  tb_exec(tb, jmp, NULL, 0);
  char *path = tu_tmp_path(".wtr");
  if (tb_write(tb, path, &err)) fail_msg("%s", err.msg);
  tb_free(tb);
  trace_t *t = trace_open(path, &err);
  if (!t) fail_msg("%s", err.msg);
  const trace_sym *s = trace_sym_lookup(t, walk);
  assert_non_null(s);
  val_cause c = {s->object ? s->object : "", "returns", "walk", -1, BR_RET, false, VAL_GT_REMOVE, "test"};
  uint32_t *sids = NULL;
  size_t n = 0;
  assert_int_equal(val_cause_pcs(&c, t, NULL, &sids, &n, &err), WI_OK);
  assert_int_equal(n, 2);
  uint64_t a = trace_static_at(t, sids[0])->pc, b = trace_static_at(t, sids[1])->pc;
  assert_true((a == ret1 && b == ret2) || (a == ret2 && b == ret1));
  free(sids);
  trace_close(t);
  unlink(path);
  free(path);
}

/* ---- the experiment on a known FMA chain ------------------------------------------------------------- */

#define ITERS 3000

typedef struct chain_fix {
  char *path;
  uint64_t fma;
  trace_t *t;
} chain_fix;

static int chain_setup(void **state) {
  chain_fix *f = xcalloc(1, sizeof *f);
  wi_err err = {0};
  /* ymm0 carries a 4-cycle chain; everything else is independent 1-cycle work */
  tbuild *tb = tb_new("loop: vfmadd231ps ymm0, ymm1, ymm2\n add rax, 1\n add rbx, rax\n"
                      " vpaddd ymm4, ymm5, ymm6\n dec rcx\n jnz loop\ndone: ret\n",
                      BASE, &err);
  if (!tb) fail_msg("%s", err.msg);
  tb_loop(tb, "loop", "done", ITERS, NULL, NULL);
  tb_exec(tb, tb_label(tb, "done"), NULL, 0);
  f->fma = tb_label(tb, "loop");
  f->path = tu_tmp_path(".wtr");
  if (tb_write(tb, f->path, &err)) fail_msg("%s", err.msg);
  tb_free(tb);
  f->t = trace_open(f->path, &err);
  if (!f->t) fail_msg("%s", err.msg);
  *state = f;
  return 0;
}

static int chain_teardown(void **state) {
  chain_fix *f = *state;
  trace_close(f->t);
  unlink(f->path);
  free(f->path);
  free(f);
  return 0;
}

static void chain_opts(val_opts *o, unsigned threads) {
  val_opts_default(o);
  o->min_count = 100;
  o->top = 0;
  o->threads = threads;
  o->boot_iters = 200;
  o->workload = ""; /* no injected check */
}

static char *json_of(val_result *r) {
  char *buf = NULL;
  size_t n = 0;
  FILE *f = open_memstream(&buf, &n);
  val_json(&r, 1, false, f);
  fclose(f);
  return buf;
}

static void test_chain_ground_truth(void **state) {
  chain_fix *f = *state;
  ooo_config cfg;
  ooo_config_default(&cfg);
  val_opts o;
  chain_opts(&o, 1);
  val_result r;
  wi_err err = {0};
  if (val_run_trace(f->t, f->path, &cfg, &o, &r, &err)) fail_msg("%s", err.msg);
  assert_int_equal(r.n_pcs, 6); /* the loop body; ret ran once */
  assert_int_equal(r.n_replays, 12);
  assert_false(r.has_check);
  for (int k = 0; k < VAL_RK_NUM; k++)
    if (k != VAL_RK_MFIR) assert_true(r.has_rk[k]);
  if (!r.has_rk[VAL_RK_MFIR]) fprintf(stderr, "  note: MFIR ranking absent: %s\n", r.mfir_note);

  /* the chain: one more cycle per FMA costs about one cycle per iteration; nothing else does */
  size_t fi = SIZE_MAX;
  for (size_t i = 0; i < r.n_pcs; i++)
    if (r.pcs[i].pc == f->fma) fi = i;
  assert_true(fi != SIZE_MAX);
  int64_t d = r.pcs[fi].delta[VAL_GT_LAT];
  fprintf(stderr, "  fma latency+1: %+lld cycles over %d iterations; removal %+lld\n", (long long)d, ITERS,
          (long long)r.pcs[fi].delta[VAL_GT_REMOVE]);
  assert_true(d > ITERS * 9 / 10 && d < ITERS * 11 / 10);
  for (size_t i = 0; i < r.n_pcs; i++) {
    if (i == fi) continue;
    assert_true(r.pcs[i].delta[VAL_GT_LAT] < ITERS / 5);
    /* removing the FMA saves most */
    assert_true(val_importance(&r.pcs[i], VAL_GT_REMOVE) < val_importance(&r.pcs[fi], VAL_GT_REMOVE));
  }
  assert_true(r.pcs[fi].delta[VAL_GT_REMOVE] < -(int64_t)ITERS); /* 4 -> ~1 cycle per iteration */
  assert_true(val_importance(&r.pcs[fi], VAL_GT_REMOVE) == -(double)r.pcs[fi].delta[VAL_GT_REMOVE]);
  assert_true(val_importance(&r.pcs[fi], VAL_GT_LAT) == (double)d);
  assert_true(r.pcs[fi].score[VAL_RK_COUNT] == (double)ITERS);

  /* statistics: every comparison over the whole PC set, tau in range or undefined */
  for (int k = 0; k < VAL_RK_NUM; k++)
    for (int g = 0; g < VAL_GT_NUM; g++) {
      const val_cmp *c = &r.cmp[k][g];
      assert_int_equal(c->rk, k);
      assert_int_equal(c->gt, g);
      if (!r.has_rk[k]) continue;
      assert_int_equal(c->n, r.n_pcs);
      assert_true(isnan(c->tau) || (c->tau >= -1 && c->tau <= 1));
      assert_true(isnan(c->top10)); /* 6 PCs: the top 10 is everything */
    }
  /* every loop PC runs ITERS times: the count ranking says nothing */
  assert_true(isnan(r.cmp[VAL_RK_COUNT][VAL_GT_LAT].tau));
  val_result_free(&r);
}

static void test_chain_deterministic(void **state) {
  chain_fix *f = *state;
  ooo_config cfg;
  ooo_config_default(&cfg);
  val_opts o1, o2;
  chain_opts(&o1, 1);
  chain_opts(&o2, 2);
  val_result r1, r2;
  wi_err err = {0};
  if (val_run_trace(f->t, f->path, &cfg, &o1, &r1, &err)) fail_msg("%s", err.msg);
  if (val_run_trace(f->t, f->path, &cfg, &o2, &r2, &err)) fail_msg("%s", err.msg);
  char *j1 = json_of(&r1), *j2 = json_of(&r2);
  assert_string_equal(j1, j2);
  assert_null(strstr(j1, "\"timings\""));
  free(j1);
  free(j2);
  val_result_free(&r1);
  val_result_free(&r2);
}

/* The experiment refuses a baseline without per-sid statistics (it needs ROB-head stalls). */
static void test_needs_sid_stats(void **state) {
  chain_fix *f = *state;
  ooo_config cfg;
  ooo_config_default(&cfg);
  wi_err err = {0};
  rp_base_opts bo;
  memset(&bo, 0, sizeof bo);
  rp_base *b = rp_base_new(f->t, &cfg, &bo, &err);
  assert_non_null(b);
  val_result r;
  assert_int_equal(val_run(b, f->path, NULL, &r, &err), WI_ESTATE); /* not run yet */
  assert_int_equal(rp_base_run(b, &err), WI_OK);
  assert_int_equal(val_run(b, f->path, NULL, &r, &err), WI_ESTATE);
  assert_non_null(strstr(err.msg, "OOO_SID_STATS"));
  rp_base_free(b);
}

/* More jobs than one batch of plans (256): every delta lands on its own PC, as a direct replay
 * of that PC's intervention says. */
static void test_batches(void **state) {
  (void)state;
  static const char *const body[4] = {" add rax, 1\n", " imul rbx, rsi\n", " vaddps ymm1, ymm1, ymm2\n",
                                      " xor rdx, rdi\n"};
  char *src = xstrdup("loop:\n");
  for (int i = 0; i < 148; i++) {
    char *t = xasprintf("%s%s", src, body[i % 4]);
    free(src);
    src = t;
  }
  char *t = xasprintf("%s dec rcx\n jnz loop\ndone: ret\n", src);
  free(src);
  src = t;
  wi_err err = {0};
  tbuild *tb = tb_new(src, BASE, &err);
  free(src);
  if (!tb) fail_msg("%s", err.msg);
  tb_loop(tb, "loop", "done", 40, NULL, NULL);
  tb_exec(tb, tb_label(tb, "done"), NULL, 0);
  char *path = tu_tmp_path(".wtr");
  if (tb_write(tb, path, &err)) fail_msg("%s", err.msg);
  tb_free(tb);
  trace_t *tr = trace_open(path, &err);
  if (!tr) fail_msg("%s", err.msg);
  ooo_config cfg;
  ooo_config_default(&cfg);
  rp_base_opts bo;
  memset(&bo, 0, sizeof bo);
  bo.ooo_flags = OOO_SID_STATS;
  rp_base *b = rp_base_new(tr, &cfg, &bo, &err);
  assert_non_null(b);
  assert_int_equal(rp_base_run(b, &err), WI_OK);
  val_opts o;
  chain_opts(&o, 2);
  o.min_count = 40;
  o.no_mfir = true;
  o.boot_iters = 50;
  val_result r;
  if (val_run(b, path, &o, &r, &err)) fail_msg("%s", err.msg);
  assert_int_equal(r.n_pcs, 150);
  assert_int_equal(r.n_replays, 300); /* two batches */
  rp_result base;
  rp_result_from_model(rp_base_model(b), &base);
  int64_t lo = INT64_MAX, hi = INT64_MIN;
  static const size_t probe[] = {0, 1, 127, 128, 129, 149};
  for (size_t k = 0; k < sizeof probe / sizeof probe[0]; k++) {
    const val_pc *p = &r.pcs[probe[k]];
    for (int g = 0; g < VAL_GT_NUM; g++) {
      char *text = g == VAL_GT_LAT ? xasprintf("latency{pc=0x%llx, add=1}", (unsigned long long)p->pc)
                                   : xasprintf("remove{pc=0x%llx}", (unsigned long long)p->pc);
      cfg_val *v = cv_table();
      cv_set(v, "kind", cv_str(g == VAL_GT_LAT ? "latency" : "remove"));
      cv_set(v, "pc", cv_num((double)p->pc));
      if (g == VAL_GT_LAT) cv_set(v, "add", cv_num(1));
      cv_sort(v);
      rp_interv iv;
      if (rp_interv_parse(v, &iv, &err)) fail_msg("%s: %s", text, err.msg);
      cv_free(v);
      rp_plan *pl = rp_plan_new(b, &iv, 1, &err);
      assert_non_null(pl);
      rp_result res;
      assert_int_equal(rp_replay(b, pl, NULL, false, &res, &err), WI_OK);
      int64_t want = (int64_t)res.cycles - (int64_t)base.cycles;
      if (p->delta[g] != want) fail_msg("%s: %lld in the sweep, %lld replayed alone", text, (long long)p->delta[g], (long long)want);
      lo = WI_MIN(lo, want);
      hi = WI_MAX(hi, want);
      rp_plan_free(pl);
      rp_interv_free(&iv);
      free(text);
    }
  }
  assert_true(lo < hi); /* the probes differ, so a shifted index would show */
  val_result_free(&r);
  rp_base_free(b);
  trace_close(tr);
  unlink(path);
  free(path);
}

/* ---- reports ------------------------------------------------------------------------------------------ */

/* A result built by hand: 12 PCs, every ranking, one undefined statistic, a passed check. */
static void fake_result(val_result *r) {
  memset(r, 0, sizeof *r);
  r->trace_path = xstrdup("/tmp/a<b>.wtr");
  r->workload = xstrdup("fma_chain");
  r->machine = xstrdup("m&m");
  r->insns = 1000;
  r->cycles = 500;
  r->ipc = 2.0;
  r->n_pcs = 12;
  r->pcs = xcalloc(r->n_pcs, sizeof *r->pcs);
  for (size_t i = 0; i < r->n_pcs; i++) {
    val_pc *p = &r->pcs[i];
    p->pc = 0x401000 + 4 * i;
    snprintf(p->text, sizeof p->text, "%s", i == 0 ? "vaddps <x>&'\"" : "add rax, 1");
    snprintf(p->where, sizeof p->where, "f+0x%zx", 4 * i);
    p->count = 100 - i;
    p->delta[VAL_GT_LAT] = (int64_t)(50 - 4 * i);
    p->delta[VAL_GT_REMOVE] = -(int64_t)(60 - 5 * i);
    for (int k = 0; k < VAL_RK_NUM; k++) p->score[k] = (double)(100 - i * (k + 1));
  }
  r->pcs[0].expected = true;
  r->n_replays = 24;
  for (int k = 0; k < VAL_RK_NUM; k++) {
    r->has_rk[k] = true;
    for (int g = 0; g < VAL_GT_NUM; g++) {
      val_cmp *c = &r->cmp[k][g];
      c->rk = k;
      c->gt = g;
      c->rk2 = -1;
      c->n = r->n_pcs;
      c->tau = 0.5;
      c->ci_lo = 0.2;
      c->ci_hi = 0.7;
      c->spearman = 0.6;
      c->top10 = 0.8;
    }
  }
  r->cmp[VAL_RK_COUNT][VAL_GT_LAT].tau = NAN;
  for (int p = 0; p < 3; p++) {
    r->stab[p].rk = p == 1 ? VAL_RK_GUS2 : VAL_RK_GUS1;
    r->stab[p].rk2 = p == 0 ? VAL_RK_GUS2 : VAL_RK_GUS4;
    r->stab[p].tau = 0.9;
    r->stab[p].n = r->n_pcs;
  }
  snprintf(r->mfir_note, sizeof r->mfir_note, "window <all>");
  r->has_check = true;
  r->check.cause = val_cause_find("fma_chain");
  r->check.top_truth = 0;
  for (int k = 0; k < VAL_RK_NUM; k++) r->check.top_rank[k] = k == VAL_RK_COUNT ? SIZE_MAX : (size_t)k;
  r->check.pass = true;
  r->check.n_exp = 1;
  r->min_count = 10;
  r->top = 30;
  r->boot_iters = 1000;
  r->seed = VAL_SEED;
}

static void test_json_report(void **state) {
  (void)state;
  val_result r;
  fake_result(&r);
  val_result *rs[1] = {&r};
  char *buf = NULL;
  size_t n = 0;
  FILE *f = open_memstream(&buf, &n);
  val_json(rs, 1, true, f);
  fclose(f);
  /* every ranking against every ground truth, with the promised members */
  const char *rk = strstr(buf, "\"rankings\": [");
  const char *st = strstr(buf, "\"stability\": [");
  assert_non_null(rk);
  assert_non_null(st);
  assert_int_equal(count_of(buf, "\"top10_precision\""), VAL_RK_NUM * VAL_GT_NUM);
  for (int k = 0; k < VAL_RK_NUM; k++)
    for (int g = 0; g < VAL_GT_NUM; g++) {
      char want[200];
      snprintf(want, sizeof want, "\"name\": \"%s\",\n      \"ground_truth\": \"%s\"", val_rk_name(k), val_gt_name(g));
      const char *at = strstr(rk, want);
      assert_non_null(at);
      assert_true(at < st);
    }
  assert_int_equal(count_of(buf, "\"ci_low\""), VAL_RK_NUM * VAL_GT_NUM + 3);
  assert_non_null(strstr(buf, "\"kendall_tau_b\": null")); /* NaN */
  assert_non_null(strstr(buf, "\"spearman\": 0.6"));
  /* the injected check */
  const char *inj = strstr(buf, "\"injected\": [");
  assert_non_null(inj);
  assert_non_null(strstr(inj, "\"top_by_perturbation\": {"));
  assert_non_null(strstr(inj, "\"asm\": \"vaddps <x>&'\\\"\""));
  assert_non_null(strstr(inj, "\"top_by_ranking\": {"));
  assert_non_null(strstr(inj, "\"exec_count\": null"));
  assert_non_null(strstr(inj, "\"pass\": true"));
  assert_non_null(strstr(buf, "\"timings\""));
  free(buf);
  val_result_free(&r);
}

static void test_html_report(void **state) {
  (void)state;
  val_result r;
  fake_result(&r);
  val_result *rs[1] = {&r};
  char *path = tu_tmp_path(".html");
  wi_err err = {0};
  assert_int_equal(val_html(rs, 1, path, &err), WI_OK);
  char *html = slurp(path);
  assert_true(!strncmp(html, "<!DOCTYPE html>", 15));
  assert_non_null(strstr(html, "</html>"));
  assert_true(count_of(html, "<svg") >= 1 + VAL_RK_NUM * VAL_GT_NUM); /* bars + one scatter each */
  assert_non_null(strstr(html, "vaddps &lt;x&gt;&amp;&#39;&quot;"));
  assert_null(strstr(html, "<x>"));
  assert_non_null(strstr(html, "m&amp;m"));
  assert_non_null(strstr(html, "a&lt;b&gt;.wtr"));
  /* self-contained: no scripts, no external resources */
  assert_null(strstr(html, "<script"));
  assert_null(strstr(html, " src="));
  assert_null(strstr(html, "<link"));
  assert_null(strstr(html, "url("));
  assert_null(strstr(html, "href='http"));
  assert_non_null(strstr(html, "PASS"));
  free(html);
  /* nothing left beside it: written to a temporary and renamed */
  char *tmp = atomic_tmp_path(path);
  assert_int_not_equal(access(tmp, F_OK), 0);
  free(tmp);
  /* an unwritable place is an error, not a crash */
  assert_int_equal(val_html(rs, 1, "/nonexistent/dir/r.html", &err), WI_EIO);
  unlink(path);
  free(path);
  val_result_free(&r);
}

static void test_text_report(void **state) {
  (void)state;
  val_result r;
  fake_result(&r);
  val_result *rs[2] = {&r, &r};
  char *buf = NULL;
  size_t n = 0;
  FILE *f = open_memstream(&buf, &n);
  val_text(rs, 2, f);
  val_summary(rs, 2, f);
  fclose(f);
  for (int k = 0; k < VAL_RK_NUM; k++) assert_non_null(strstr(buf, val_rk_name(k)));
  assert_non_null(strstr(buf, "injected-cause checks: 2 of 2 pass"));
  free(buf);
  val_result_free(&r);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_cause_table),
    cmocka_unit_test(test_key_lines),
    cmocka_unit_test(test_stmt_lines),
    cmocka_unit_test(test_func_cause),
    cmocka_unit_test_setup_teardown(test_chain_ground_truth, chain_setup, chain_teardown),
    cmocka_unit_test_setup_teardown(test_chain_deterministic, chain_setup, chain_teardown),
    cmocka_unit_test_setup_teardown(test_needs_sid_stats, chain_setup, chain_teardown),
    cmocka_unit_test(test_batches),
    cmocka_unit_test(test_json_report),
    cmocka_unit_test(test_html_report),
    cmocka_unit_test(test_text_report),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

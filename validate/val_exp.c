/* val_exp.c — the validation experiment on one trace: PC set, perturbation ground truth by
 * exact replays, rankings (Gus, MFIR, naive), rank statistics and the injected-cause check. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gus.h"
#include "mfir.h"
#include "stats.h"
#include "val.h"
#include "val_int.h"

/* ---- names ------------------------------------------------------------------------------------ */

static const char *const k_gt_names[VAL_GT_NUM] = {"latency+1", "removal"};
static const char *const k_gt_templates[VAL_GT_NUM] = {"latency{add=1}", "remove{}"};
static const char *const k_rk_names[VAL_RK_NUM] = {"gus_taint_1x",       "gus_taint_2x", "gus_taint_4x",
                                                   "mfir_critical_path", "exec_count",   "rob_head_stall"};
static const char *const k_rk_docs[VAL_RK_NUM] = {
  "Gus taint count, taint queue of 1 x ROB",
  "Gus taint count, taint queue of 2 x ROB (the Gus default)",
  "Gus taint count, taint queue of 4 x ROB",
  "cycles of the MFIR critical path (walk back from the window's last commit) at the PC",
  "committed executions (naive baseline)",
  "cycles the PC sat at the ROB head not yet committable (naive baseline)",
};

const char *val_gt_name(int gt) { return gt >= 0 && gt < VAL_GT_NUM ? k_gt_names[gt] : "?"; }
const char *val_gt_template(int gt) { return gt >= 0 && gt < VAL_GT_NUM ? k_gt_templates[gt] : "?"; }
const char *val_rk_name(int rk) { return rk >= 0 && rk < VAL_RK_NUM ? k_rk_names[rk] : "?"; }
const char *val_rk_doc(int rk) { return rk >= 0 && rk < VAL_RK_NUM ? k_rk_docs[rk] : "?"; }

void val_opts_default(val_opts *o) {
  memset(o, 0, sizeof *o);
  o->min_count = 1000;
  o->top = 20;
  o->threads = 1;
  o->boot_iters = 1000;
  o->seed = VAL_SEED;
  o->mfir_window = 500000;
}

double val_importance(const val_pc *p, int gt) {
  return gt == VAL_GT_REMOVE ? -(double)p->delta[gt] : (double)p->delta[gt];
}

void val_result_free(val_result *r) {
  if (!r) return;
  free(r->trace_path);
  free(r->workload);
  free(r->machine);
  free(r->pcs);
  free(r->check.exp_sids);
  memset(r, 0, sizeof *r);
}

static void vlog(const val_opts *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void vlog(const val_opts *o, const char *fmt, ...) {
  if (!o->log) return;
  va_list ap;
  va_start(ap, fmt);
  vfprintf(o->log, fmt, ap);
  va_end(ap);
  fflush(o->log);
}

/* ---- the PC set ---------------------------------------------------------------------------------- */

typedef struct sid_count {
  uint32_t sid;
  uint64_t count, pc;
} sid_count;

static int sid_count_cmp(const void *a, const void *b) {
  const sid_count *x = a, *y = b;
  if (x->count != y->count) return x->count < y->count ? 1 : -1;
  return x->pc < y->pc ? -1 : x->pc > y->pc;
}

static bool sid_in(const uint32_t *v, size_t n, uint32_t sid) {
  size_t lo = 0, hi = n; /* v is sorted */
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (v[mid] == sid) return true;
    if (v[mid] < sid) lo = mid + 1;
    else hi = mid;
  }
  return false;
}

static int u32_cmp(const void *a, const void *b) {
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  return (x > y) - (x < y);
}

static void describe_pc(const trace_t *t, val_lines *vl, val_pc *p) {
  const dec_insn *d = trace_decoded(t, p->sid);
  snprintf(p->text, sizeof p->text, "%s", d->text);
  const trace_sym *s = trace_sym_lookup(t, p->pc);
  if (s && s->name && p->pc == s->addr) snprintf(p->where, sizeof p->where, "%s", s->name);
  else if (s && s->name && p->pc > s->addr)
    snprintf(p->where, sizeof p->where, "%s+0x%llx", s->name, (unsigned long long)(p->pc - s->addr));
  else snprintf(p->where, sizeof p->where, "0x%llx", (unsigned long long)p->pc);
  const char *file;
  uint32_t line;
  if (val_line(vl, p->pc, &file, &line)) {
    const char *bn = strrchr(file, '/');
    snprintf(p->line, sizeof p->line, "%s:%u", bn ? bn + 1 : file, line);
  }
}

/* ---- ground truth ------------------------------------------------------------------------------- */

typedef struct sweep_ctx {
  val_result *r;
  uint64_t base_cycles;
  size_t first;        /* job index of the batch's first plan */
} sweep_ctx;

static wi_rc on_replay(void *ctx, size_t job, const rp_result *res, wi_err *err) {
  (void)err;
  sweep_ctx *c = ctx;
  size_t j = c->first + job;
  c->r->pcs[j / VAL_GT_NUM].delta[j % VAL_GT_NUM] = (int64_t)res->cycles - (int64_t)c->base_cycles;
  return WI_OK;
}

/* Plans compiled per batch: a plan holds per-sid filter tables, so thousands at once would
 * cost memory for nothing; results still arrive in job order. */
#define VAL_BATCH 256

static wi_rc run_sweep(const rp_base *b, const val_opts *o, val_result *r, uint64_t base_cycles, wi_err *err) {
  size_t n = r->n_pcs * VAL_GT_NUM;
  rp_plan **plans = xcalloc(VAL_BATCH, sizeof *plans);
  wi_rc rc = WI_OK;
  rp_interv tmpl[VAL_GT_NUM];
  memset(tmpl, 0, sizeof tmpl);
  for (int g = 0; g < VAL_GT_NUM && !rc; g++) {
    cfg_val *v = cv_table(); /* latency{add=1} / remove{}, completed per PC */
    cv_set(v, "kind", cv_str(g == VAL_GT_LAT ? "latency" : "remove"));
    if (g == VAL_GT_LAT) cv_set(v, "add", cv_num(1));
    cv_sort(v);
    rc = rp_interv_parse(v, &tmpl[g], err);
    cv_free(v);
  }
  for (size_t first = 0; first < n && !rc; first += VAL_BATCH) {
    size_t m = WI_MIN(n - first, (size_t)VAL_BATCH);
    for (size_t k = 0; k < m && !rc; k++) {
      size_t j = first + k;
      rp_interv iv;
      rp_interv_copy(&iv, &tmpl[j % VAL_GT_NUM]);
      rp_interv_set_pc(&iv, r->pcs[j / VAL_GT_NUM].pc);
      plans[k] = rp_plan_new(b, &iv, 1, err);
      if (!plans[k]) rc = err ? err->rc : WI_EINVAL;
      rp_interv_free(&iv);
    }
    if (!rc) {
      sweep_ctx sc = {r, base_cycles, first};
      rp_sweep_opts so = {o->threads ? o->threads : 1, false, "validate: replays"};
      rc = rp_sweep(b, plans, m, &so, on_replay, &sc, err);
    }
    for (size_t k = 0; k < m; k++) {
      rp_plan_free(plans[k]);
      plans[k] = NULL;
    }
  }
  free(plans);
  for (int g = 0; g < VAL_GT_NUM; g++) rp_interv_free(&tmpl[g]);
  return rc;
}

/* ---- rankings ------------------------------------------------------------------------------------- */

static wi_rc run_gus(const trace_t *t, const ooo_config *cfg, val_result *r, wi_err *err) {
  gus_machine gm;
  wi_rc rc = gus_machine_from_ooo(&gm, cfg, err);
  if (rc) return rc;
  gus_source src;
  gus_source_trace(&src, t);
  static const uint32_t windows[3] = {1, 2, 4};
  for (int k = 0; k < 3; k++) {
    gus_result gr;
    memset(&gr, 0, sizeof gr);
    if ((rc = gus_run(&gm, windows[k], &src, &gr, err))) return rc;
    for (size_t i = 0; i < r->n_pcs; i++) {
      uint32_t sid = r->pcs[i].sid;
      r->pcs[i].score[VAL_RK_GUS1 + k] = sid < gr.n_static ? (double)gr.taint[sid] : 0.0;
    }
    gus_result_free(&gr);
    r->has_rk[VAL_RK_GUS1 + k] = true;
  }
  return WI_OK;
}

/* The MFIR ranking: build the window's graph into a temporary database, walk the critical path
 * from the window's last commit, score each PC by its cycles on the path. A failure is not an
 * error of the validation: the ranking is left out and the note says why. */
static void run_mfir(const trace_t *t, const ooo_config *cfg, const val_opts *o, val_result *r) {
  const trace_info *ti = trace_get_info(t);
  uint64_t n = ti->n_insns;
  uint64_t count = o->mfir_window && o->mfir_window < n ? o->mfir_window : n;
  uint64_t start = (n - count) / 2; /* centred: past start-up, before the exit path */
  r->mfir_start = start;
  r->mfir_count = count;
  const char *dir = o->tmp_dir ? o->tmp_dir : getenv("TMPDIR");
  if (!dir || !*dir) dir = "/tmp";
  char *path = xasprintf("%s/whatif-validate-XXXXXX", dir);
  int fd = mkstemp(path);
  if (fd < 0) {
    snprintf(r->mfir_note, sizeof r->mfir_note, "cannot create a temporary in %s: %s", dir, strerror(errno));
    free(path);
    return;
  }
  close(fd);
  wi_err e = {0};
  mfir_build_opts bo;
  memset(&bo, 0, sizeof bo);
  bo.start = start;
  bo.count = count;
  bo.no_mem_hits = true;          /* hits are not on binding edges' targets we rank */
  bo.threaded = o->threads > 1;
  bo.trace_path = r->trace_path;
  bo.uarch = cfg->name;
  mfir_db *d = NULL;
  mfir_critical c;
  memset(&c, 0, sizeof c);
  bool have_c = false;
  if (mfir_build(t, cfg, &bo, path, NULL, &e) || !(d = mfir_open(path, &e)) ||
      mfir_critical_path(d, NULL, &c, &e)) {
    snprintf(r->mfir_note, sizeof r->mfir_note, "MFIR failed: %s", e.msg);
  } else {
    have_c = true;
    wi_map64 at;
    map64_init(&at, r->n_pcs * 2 + 16);
    for (size_t i = 0; i < r->n_pcs; i++) map64_put(&at, r->pcs[i].pc, (uint32_t)i);
    for (size_t i = 0; i < c.n_pc; i++) {
      uint32_t *k = map64_get(&at, c.by_pc[i].key);
      if (k) r->pcs[*k].score[VAL_RK_MFIR] = (double)c.by_pc[i].cycles;
    }
    map64_free(&at);
    r->has_rk[VAL_RK_MFIR] = true;
    snprintf(r->mfir_note, sizeof r->mfir_note, "window of %llu instructions from %llu, %llu cycles on the path",
             (unsigned long long)count, (unsigned long long)start, (unsigned long long)c.total);
  }
  if (have_c) mfir_critical_free(&c);
  mfir_close(d);
  unlink(path);
  char *side = xasprintf("%s-journal", path); /* SQLite's, should a build have died half-way */
  unlink(side);
  free(side);
  free(path);
}

/* ---- statistics ---------------------------------------------------------------------------------- */

typedef struct topk_ctx {
  size_t k;
} topk_ctx;

static void compare(const double *x, const double *y, size_t n, uint32_t iters, uint64_t seed, bool topk,
                    val_cmp *c) {
  c->n = n;
  c->tau = val_kendall_tau_b(x, y, n);
  c->spearman = val_spearman(x, y, n);
  c->ci_lo = c->ci_hi = NAN;
  c->boot_kept = 0;
  if (!isnan(c->tau) && iters) {
    double lo, hi;
    c->boot_kept = val_bootstrap_ci(val_kendall_tau_b, x, y, n, iters, 0.05, seed, &lo, &hi);
    if (c->boot_kept >= (size_t)(0.9 * iters)) { /* an interval from too few replicates misleads */
      c->ci_lo = lo;
      c->ci_hi = hi;
    }
  }
  c->top10 = NAN;
  if (n > 10) val_topk(x, y, n, 10, topk ? &c->top10 : NULL, NULL); /* else the top 10 is everything */
}

static void run_stats(val_result *r) {
  size_t n = r->n_pcs;
  double *x = xmalloc((n ? n : 1) * sizeof *x), *y = xmalloc((n ? n : 1) * sizeof *y);
  for (int k = 0; k < VAL_RK_NUM; k++)
    for (int g = 0; g < VAL_GT_NUM; g++) {
      val_cmp *c = &r->cmp[k][g];
      memset(c, 0, sizeof *c);
      c->rk = k;
      c->gt = g;
      c->rk2 = -1;
      c->tau = c->ci_lo = c->ci_hi = c->spearman = c->top10 = NAN;
      if (!r->has_rk[k]) continue;
      for (size_t i = 0; i < n; i++) {
        x[i] = r->pcs[i].score[k];
        y[i] = val_importance(&r->pcs[i], g);
      }
      compare(x, y, n, r->boot_iters, r->seed, true, c);
    }
  static const int pairs[3][2] = {{VAL_RK_GUS1, VAL_RK_GUS2}, {VAL_RK_GUS2, VAL_RK_GUS4}, {VAL_RK_GUS1, VAL_RK_GUS4}};
  for (int p = 0; p < 3; p++) {
    val_cmp *c = &r->stab[p];
    memset(c, 0, sizeof *c);
    c->rk = pairs[p][0];
    c->rk2 = pairs[p][1];
    c->gt = -1;
    c->tau = c->ci_lo = c->ci_hi = c->spearman = c->top10 = NAN;
    if (!r->has_rk[c->rk] || !r->has_rk[c->rk2]) continue;
    for (size_t i = 0; i < n; i++) {
      x[i] = r->pcs[i].score[c->rk];
      y[i] = r->pcs[i].score[c->rk2];
    }
    compare(x, y, n, r->boot_iters, r->seed, true, c); /* top10 here: overlap of the two top-10 sets */
  }
  free(x);
  free(y);
}

/* Index of the largest v over the PC set; ties go to the earlier PC (more executed, then lower
 * pc). SIZE_MAX when every value is equal (the ranking says nothing). */
static size_t argmax(const val_result *r, int rk, int gt) {
  size_t best = SIZE_MAX;
  double bv = 0;
  bool all_equal = true;
  for (size_t i = 0; i < r->n_pcs; i++) {
    double v = rk >= 0 ? r->pcs[i].score[rk] : val_importance(&r->pcs[i], gt);
    if (best == SIZE_MAX) {
      best = i;
      bv = v;
      continue;
    }
    if (v != bv) all_equal = false;
    if (v > bv) {
      best = i;
      bv = v;
    }
  }
  return all_equal && r->n_pcs > 1 ? SIZE_MAX : best;
}

static void run_check(val_result *r) {
  val_check *ch = &r->check;
  for (int k = 0; k < VAL_RK_NUM; k++) ch->top_rank[k] = SIZE_MAX;
  ch->top_truth = SIZE_MAX;
  ch->pass = false;
  if (!ch->cause) return;
  if (!ch->n_exp) {
    if (!ch->note[0])
      snprintf(ch->note, sizeof ch->note, "no executed instruction matches the expected cause in this trace");
    return;
  }
  ch->top_truth = argmax(r, -1, ch->cause->gt);
  for (int k = 0; k < VAL_RK_NUM; k++)
    if (r->has_rk[k]) ch->top_rank[k] = argmax(r, k, 0);
  ch->pass = ch->top_truth != SIZE_MAX && r->pcs[ch->top_truth].expected;
  if (!ch->pass && ch->top_truth != SIZE_MAX) {
    /* say where the expected set stands, so a failure reads as a finding */
    size_t best = SIZE_MAX, rank = 0;
    for (size_t i = 0; i < r->n_pcs; i++)
      if (r->pcs[i].expected && (best == SIZE_MAX || val_importance(&r->pcs[i], ch->cause->gt) >
                                                          val_importance(&r->pcs[best], ch->cause->gt)))
        best = i;
    if (best != SIZE_MAX) {
      double bv = val_importance(&r->pcs[best], ch->cause->gt);
      for (size_t i = 0; i < r->n_pcs; i++)
        if (val_importance(&r->pcs[i], ch->cause->gt) > bv) rank++;
      snprintf(ch->note, sizeof ch->note,
               "the best expected PC (%s, %s) is #%zu by %s with %+lld cycles; #1 is %s (%s) with %+lld", r->pcs[best].where,
               r->pcs[best].text, rank + 1, val_gt_name(ch->cause->gt), (long long)r->pcs[best].delta[ch->cause->gt],
               r->pcs[ch->top_truth].where, r->pcs[ch->top_truth].text,
               (long long)r->pcs[ch->top_truth].delta[ch->cause->gt]);
    }
  }
  /* a ground truth under which nothing matters cannot name a cause: say so */
  if (ch->top_truth != SIZE_MAX) {
    double top = fabs(val_importance(&r->pcs[ch->top_truth], ch->cause->gt));
    if (top < 0.001 * (double)r->cycles) {
      size_t len = strlen(ch->note);
      snprintf(ch->note + len, sizeof ch->note - len,
               "%severy PC's %s delta is below 0.1%% of the baseline's %llu cycles: no single instruction is a "
               "bottleneck under it", len ? "; " : "", val_gt_name(ch->cause->gt), (unsigned long long)r->cycles);
    }
  }
}

/* ---- the experiment -------------------------------------------------------------------------------- */

wi_rc val_run(const rp_base *b, const char *trace_path, const val_opts *oin, val_result *r, wi_err *err) {
  val_opts o;
  if (oin) o = *oin;
  else val_opts_default(&o);
  memset(r, 0, sizeof *r);
  double t_start = wi_now();
  const trace_t *t = rp_base_trace(b);
  const ooo_config *cfg = rp_base_config(b);
  const ooo_model *m = rp_base_model(b);
  if (!m) return wi_fail(err, WI_ESTATE, "validate: the baseline has not been run");
  const ooo_sid_stats *ss = ooo_get_sid_stats(m);
  if (!ss) return wi_fail(err, WI_ESTATE, "validate: the baseline was run without OOO_SID_STATS");
  const trace_info *ti = trace_get_info(t);

  r->trace_path = xstrdup(trace_path ? trace_path : "");
  r->machine = xstrdup(cfg->name);
  if (o.workload) {
    r->workload = xstrdup(o.workload);
  } else {
    const char *prog = trace_meta(t, "program");
    const char *bn = prog ? strrchr(prog, '/') : NULL;
    r->workload = xstrdup(bn ? bn + 1 : prog ? prog : "");
  }
  rp_result base;
  rp_result_from_model(m, &base);
  r->insns = base.insns;
  r->cycles = base.cycles;
  r->ipc = base.ipc;
  r->n_static = ti->n_static;
  r->min_count = o.min_count;
  r->top = o.top;
  r->boot_iters = o.boot_iters;
  r->seed = o.seed;
  r->baseline_s = rp_base_seconds(b);

  /* the injected cause's expected set, before the PC set (its PCs are always swept) */
  val_check *ch = &r->check;
  ch->cause = val_cause_find(r->workload);
  r->has_check = ch->cause != NULL;
  if (ch->cause) {
    wi_err e2 = {0};
    if (val_cause_pcs(ch->cause, t, o.src_dir, &ch->exp_sids, &ch->n_exp, &e2))
      snprintf(ch->note, sizeof ch->note, "%s", e2.msg);
    else if (ch->n_exp) qsort(ch->exp_sids, ch->n_exp, sizeof *ch->exp_sids, u32_cmp);
  }

  /* the PC set */
  sid_count *sc = xmalloc((ti->n_static ? ti->n_static : 1) * sizeof *sc);
  size_t nsc = 0;
  for (uint32_t sid = 0; sid < ti->n_static; sid++) {
    const trace_static *s = trace_static_at(t, sid);
    if (s->count >= o.min_count) sc[nsc++] = (sid_count){sid, s->count, s->pc};
  }
  qsort(sc, nsc, sizeof *sc, sid_count_cmp);
  if (o.top && nsc > o.top) nsc = (size_t)o.top;
  for (size_t i = 0; i < ch->n_exp; i++) {
    bool have = false;
    for (size_t j = 0; j < nsc && !have; j++) have = sc[j].sid == ch->exp_sids[i];
    if (!have) {
      const trace_static *s = trace_static_at(t, ch->exp_sids[i]);
      sc[nsc++] = (sid_count){ch->exp_sids[i], s->count, s->pc};
    }
  }
  qsort(sc, nsc, sizeof *sc, sid_count_cmp);
  if (!nsc) {
    free(sc);
    val_result_free(r);
    return wi_fail(err, WI_EINVAL, "validate: no static instruction executed at least %llu times (--min-count)",
                   (unsigned long long)o.min_count);
  }
  r->pcs = xcalloc(nsc, sizeof *r->pcs);
  r->n_pcs = nsc;
  val_lines *vl = val_lines_new(t);
  for (size_t i = 0; i < nsc; i++) {
    val_pc *p = &r->pcs[i];
    p->pc = sc[i].pc;
    p->sid = sc[i].sid;
    p->count = ss[p->sid].count;
    p->expected = ch->n_exp && sid_in(ch->exp_sids, ch->n_exp, p->sid);
    describe_pc(t, vl, p);
    p->score[VAL_RK_COUNT] = (double)ss[p->sid].count;
    p->score[VAL_RK_HEAD] = (double)ss[p->sid].head_cycles;
  }
  free(sc);
  val_lines_free(vl);
  r->has_rk[VAL_RK_COUNT] = r->has_rk[VAL_RK_HEAD] = true;

  /* rankings that need their own runs */
  double t0 = wi_now();
  vlog(&o, "  gus: taint at 1x, 2x, 4x ROB ...");
  wi_rc rc = run_gus(t, cfg, r, err);
  r->gus_s = wi_now() - t0;
  vlog(&o, " %.1f s\n", r->gus_s);
  if (rc) goto fail;
  if (!o.no_mfir) {
    t0 = wi_now();
    vlog(&o, "  mfir: critical path ...");
    run_mfir(t, cfg, &o, r);
    r->mfir_s = wi_now() - t0;
    vlog(&o, " %.1f s (%s)\n", r->mfir_s, r->mfir_note);
  } else {
    snprintf(r->mfir_note, sizeof r->mfir_note, "left out (--no-mfir)");
  }

  /* ground truth */
  t0 = wi_now();
  r->n_replays = r->n_pcs * VAL_GT_NUM;
  vlog(&o, "  ground truth: %zu replays (%zu PCs x latency+1, removal) on %u thread%s ...", r->n_replays, r->n_pcs,
        o.threads ? o.threads : 1, o.threads > 1 ? "s" : "");
  if ((rc = run_sweep(b, &o, r, base.cycles, err))) goto fail;
  r->sweep_s = wi_now() - t0;
  vlog(&o, " %.1f s\n", r->sweep_s);

  t0 = wi_now();
  run_stats(r);
  run_check(r);
  r->stats_s = wi_now() - t0;
  r->total_s = wi_now() - t_start + r->baseline_s;
  return WI_OK;
fail:
  if (o.log) fputc('\n', o.log);
  val_result_free(r);
  return rc;
}

wi_rc val_run_trace(const trace_t *t, const char *trace_path, const ooo_config *cfg, const val_opts *o,
                    val_result *r, wi_err *err) {
  rp_base_opts bo;
  memset(&bo, 0, sizeof bo);
  bo.ooo_flags = OOO_SID_STATS;
  bo.progress = o && o->progress;
  rp_base *b = rp_base_new(t, cfg, &bo, err);
  if (!b) return err ? err->rc : WI_EINVAL;
  if (o && o->log) {
    fprintf(o->log, "  baseline ...");
    fflush(o->log);
  }
  wi_rc rc = rp_base_run(b, err);
  if (!rc && o && o->log) {
    rp_result base;
    rp_result_from_model(rp_base_model(b), &base);
    fprintf(o->log, " %llu instructions, %llu cycles, IPC %.3f (%.1f s)\n", (unsigned long long)base.insns,
            (unsigned long long)base.cycles, base.ipc, rp_base_seconds(b));
  }
  if (!rc) rc = val_run(b, trace_path, o, r, err);
  rp_base_free(b);
  return rc;
}

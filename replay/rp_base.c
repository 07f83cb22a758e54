/* rp_base.c — baselines (a run with snapshots and first-entry records), workers and replays. */
#include <stdlib.h>
#include <string.h>

#include "rp_int.h"

/* ---- the recording filter --------------------------------------------------------------------
 * Installed during the baseline: changes nothing, notes when each static instruction (and each
 * wrong-path PC outside the static table) first entered the model, counted in snapshots taken
 * before, and how far the correct path has entered. */

typedef struct rec_ctx {
  const trace_t *t;
  uint32_t n_static;
  uint32_t cur;           /* snapshots taken so far */
  uint32_t *first_sid;
  wi_map64 wp;            /* wrong-path-only pc -> first */
  uint64_t entered_hi;    /* correct-path indices below this have entered */
} rec_ctx;

static void rec_filter(void *ctx, uint64_t index, const trace_insn *ti, const dec_insn *di, bool wrong_path,
                       ooo_mod *out) {
  (void)di;
  (void)out;
  rec_ctx *r = ctx;
  uint32_t sid = rp_sid_of(r->t, r->n_static, ti);
  if (sid < r->n_static) {
    if (r->first_sid[sid] == RP_NEVER) r->first_sid[sid] = r->cur;
  } else if (ti->pc) {
    if (!map64_get(&r->wp, ti->pc)) map64_put(&r->wp, ti->pc, r->cur);
  }
  if (!wrong_path && index != UINT64_MAX && index + 1 > r->entered_hi) r->entered_hi = index + 1;
}

/* ---- the interval observer: wrong-path scheduler occupancy -----------------------------------
 * A wrong-path instruction holds scheduler entries from dispatch until its first micro-op issues
 * or it is squashed; the ring remembers dispatch cycles by wrong-path flow number. */

#define WPO_RING 65536u

typedef struct wpo_slot {
  uint64_t fid;
  uint64_t cycle;
} wpo_slot;

typedef struct wpo_ctx {
  wpo_slot *ring;
  uint64_t held;          /* entry-cycles so far */
} wpo_ctx;

static void wpo_dispatch(void *ctx, const ooo_ev *e) {
  if (!e->wrong_path) return;
  wpo_ctx *w = ctx;
  wpo_slot *s = &w->ring[e->fid & (WPO_RING - 1)];
  s->fid = e->fid;
  s->cycle = e->cycle;
}

static void wpo_leave(wpo_ctx *w, const ooo_ev *e) {
  if (!e->wrong_path) return;
  wpo_slot *s = &w->ring[e->fid & (WPO_RING - 1)];
  if (s->fid != e->fid) return; /* never dispatched, or already left */
  if (e->cycle > s->cycle) w->held += e->cycle - s->cycle;
  s->fid = OOO_FID_NONE;
}

static void wpo_issue(void *ctx, const ooo_ev *e) { wpo_leave(ctx, e); }
static void wpo_squash(void *ctx, const ooo_ev *e) { wpo_leave(ctx, e); }

/* ---- results ---------------------------------------------------------------------------------- */

void rp_result_from_model(const ooo_model *m, rp_result *r) {
  memset(r, 0, sizeof *r);
  const ooo_stats *s = ooo_get_stats(m);
  r->stats = *s;
  r->cycles = s->cycles;
  r->insns = s->insns;
  r->ipc = s->cycles ? (double)s->insns / (double)s->cycles : 0.0;
  uint64_t all = 0;
  for (int k = 0; k < BR_NUM; k++) all += s->mispredicts[k];
  r->mispredicts = all;
  r->ret_mispredicts = s->mispredicts[BR_RET];
  double ki = s->insns ? (double)s->insns / 1000.0 : 1.0;
  r->mpki = (double)all / ki;
  r->cond_mpki = (double)s->mispredicts[BR_COND] / ki;
  r->ind_mpki = (double)(s->mispredicts[BR_IND_JUMP] + s->mispredicts[BR_IND_CALL]) / ki;
  r->ret_mpki = (double)s->mispredicts[BR_RET] / ki;
  r->wp_fetched = s->fetched[1];
  r->wp_executed = s->executed[1];
  ooo_get_topdown(m, &r->td);
  r->start_snap = -1;
}

/* ---- baselines -------------------------------------------------------------------------------- */

typedef struct pc_sid {
  uint64_t pc;
  uint32_t sid;
} pc_sid;

static int pc_sid_cmp(const void *a, const void *b) {
  const pc_sid *x = a, *y = b;
  return x->pc < y->pc ? -1 : x->pc > y->pc;
}

rp_base *rp_base_new(const trace_t *t, const ooo_config *cfg, const rp_base_opts *opts, wi_err *err) {
  rp_base *b = xcalloc(1, sizeof *b);
  b->t = t;
  b->cfg = *cfg;
  if (opts) b->o = *opts;
  const trace_info *ti = trace_get_info(t);
  b->n_static = ti->n_static;
  b->n_insns = ti->n_insns;
  /* Only the baseline's per-interval observer reads bindings: without it no model made here
   * (baseline, snapshots, workers, edited-configuration replays) ever gets an observer, so
   * they all skip the bookkeeping (4..6% of the model's host instructions, same results). */
  bool binds = b->o.keep_bindings || b->o.stats_interval;
  if (binds && (b->o.ooo_flags & OOO_NO_BINDINGS)) {
    wi_fail(err, WI_EINVAL, "rp_base_new: OOO_NO_BINDINGS given with %s (needs an observer)",
            b->o.stats_interval ? "stats_interval" : "keep_bindings");
    free(b);
    return NULL;
  }
  b->nobind = binds ? 0 : OOO_NO_BINDINGS;
  b->fresh = ooo_new(cfg, t, b->o.ooo_flags | b->nobind, err);
  if (!b->fresh) {
    free(b);
    return NULL;
  }
  pc_sid *v = xmalloc((b->n_static ? b->n_static : 1) * sizeof *v);
  for (uint32_t i = 0; i < b->n_static; i++) v[i] = (pc_sid){trace_static_at(t, i)->pc, i};
  qsort(v, b->n_static, sizeof *v, pc_sid_cmp);
  b->spc = xmalloc((b->n_static ? b->n_static : 1) * sizeof *b->spc);
  b->ssid = xmalloc((b->n_static ? b->n_static : 1) * sizeof *b->ssid);
  for (uint32_t i = 0; i < b->n_static; i++) {
    b->spc[i] = v[i].pc;
    b->ssid[i] = v[i].sid;
  }
  free(v);
  b->first_sid = xmalloc((b->n_static ? b->n_static : 1) * sizeof *b->first_sid);
  for (uint32_t i = 0; i < b->n_static; i++) b->first_sid[i] = RP_NEVER;
  return b;
}

void rp_base_free(rp_base *b) {
  if (!b) return;
  ooo_free(b->fresh);
  ooo_free(b->final);
  for (size_t i = 0; i < b->n_snap; i++) ooo_free(b->snap[i]);
  free(b->snap);
  free(b->snap_commit);
  free(b->snap_entered);
  free(b->spc);
  free(b->ssid);
  free(b->first_sid);
  free(b->wp_pc);
  free(b->wp_first);
  free(b->ivl);
  free(b);
}

typedef VEC(rp_interval) ivl_vec;

static void interval_push(rp_base *b, ivl_vec *v, const ooo_stats *prev, const ooo_stats *now,
                          uint64_t held_prev, uint64_t held_now) {
  (void)b;
  rp_interval iv;
  memset(&iv, 0, sizeof iv);
  iv.first_insn = prev->insns;
  iv.insns = now->insns - prev->insns;
  iv.cycles = now->cycles - prev->cycles;
  iv.wp_fetched = now->fetched[1] - prev->fetched[1];
  iv.wp_dispatched = now->dispatched[1] - prev->dispatched[1];
  iv.wp_sched_cycles = held_now - held_prev;
  for (int k = 0; k < BR_NUM; k++) iv.mispredicts += now->mispredicts[k] - prev->mispredicts[k];
  iv.backend_slots = (now->slots[OOO_SLOT_BE_MEMORY] + now->slots[OOO_SLOT_BE_CORE]) -
                     (prev->slots[OOO_SLOT_BE_MEMORY] + prev->slots[OOO_SLOT_BE_CORE]);
  for (int k = 0; k < OOO_SLOT_NUM; k++) iv.slots += now->slots[k] - prev->slots[k];
  VEC_PUSH(*v, iv);
}

wi_rc rp_base_run(rp_base *b, wi_err *err) {
  if (b->ran) return wi_fail(err, WI_ESTATE, "rp_base_run: the baseline already ran");
  double t0 = wi_now();
  ooo_model *m = ooo_clone(b->fresh, err);
  if (!m) return err ? err->rc : WI_EINVAL;
  rec_ctx rec = {b->t, b->n_static, 0, b->first_sid, {0}, 0};
  map64_init(&rec.wp, 1024);
  ooo_set_filter(m, rec_filter, &rec);
  wpo_ctx wpo = {NULL, 0};
  ooo_observer obs;
  memset(&obs, 0, sizeof obs);
  if (b->o.stats_interval) {
    wpo.ring = xcalloc(WPO_RING, sizeof *wpo.ring);
    for (size_t i = 0; i < WPO_RING; i++) wpo.ring[i].fid = OOO_FID_NONE;
    obs.dispatch = wpo_dispatch;
    obs.issue = wpo_issue;
    obs.squash = wpo_squash;
    ooo_set_observer(m, &obs, &wpo);
  }
  uint32_t max_snaps = b->o.max_snaps ? b->o.max_snaps : 32;
  uint64_t interval = b->o.interval;
  if (!interval) {
    interval = (b->n_insns + max_snaps) / (max_snaps + 1);
    if (interval < 10000) interval = 10000;
  }
  b->interval = interval;
  bool snaps = !b->o.no_snapshots;
  VEC(ooo_model *) sv = {0};
  VEC(uint64_t) sc = {0}, se = {0};
  ivl_vec iv = {0};
  ooo_stats prev = *ooo_get_stats(m);
  uint64_t held_prev = 0;
  uint64_t next_snap = snaps ? interval : UINT64_MAX;
  uint64_t next_stat = b->o.stats_interval ? b->o.stats_interval : UINT64_MAX;
  wi_rc rc = WI_OK;
  wi_progress pg;
  if (b->o.progress) progress_begin(&pg, "baseline", b->n_insns);
  while (!ooo_finished(m)) {
    uint64_t done = ooo_committed(m);
    if (b->o.progress) progress_update(&pg, done);
    uint64_t target = WI_MIN(next_snap, next_stat);
    if (b->o.progress) target = WI_MIN(target, done + 1000000); /* a progress update per million */
    uint64_t want = target == UINT64_MAX ? UINT64_MAX : (target > done ? target - done : 1);
    if ((rc = ooo_run(m, want, err))) break;
    done = ooo_committed(m);
    if (ooo_finished(m)) break;
    if (done >= next_stat) {
      const ooo_stats *now = ooo_get_stats(m);
      interval_push(b, &iv, &prev, now, held_prev, wpo.held);
      prev = *now;
      held_prev = wpo.held;
      while (next_stat <= done) next_stat += b->o.stats_interval;
    }
    if (done >= next_snap) {
      if (sv.n < max_snaps) {
        ooo_model *s = ooo_clone(m, err);
        if (!s) {
          rc = err ? err->rc : WI_EINVAL;
          break;
        }
        VEC_PUSH(sv, s);
        VEC_PUSH(sc, done);
        VEC_PUSH(se, rec.entered_hi);
        rec.cur++;
      }
      while (next_snap <= done) next_snap += interval;
      if (sv.n >= max_snaps) next_snap = UINT64_MAX;
    }
  }
  if (b->o.progress) progress_end(&pg);
  if (!rc && b->o.stats_interval) {
    const ooo_stats *now = ooo_get_stats(m);
    if (now->insns > prev.insns) interval_push(b, &iv, &prev, now, held_prev, wpo.held);
  }
  ooo_set_filter(m, NULL, NULL);
  ooo_set_observer(m, NULL, NULL);
  free(wpo.ring);
  b->snap = sv.a;
  b->n_snap = sv.n;
  b->snap_commit = sc.a;
  b->snap_entered = se.a;
  b->ivl = iv.a;
  b->n_ivl = iv.n;
  /* wrong-path-only PCs, sorted */
  b->n_wp = rec.wp.n;
  b->wp_pc = xmalloc((b->n_wp ? b->n_wp : 1) * sizeof *b->wp_pc);
  b->wp_first = xmalloc((b->n_wp ? b->n_wp : 1) * sizeof *b->wp_first);
  {
    pc_sid *v = xmalloc((b->n_wp ? b->n_wp : 1) * sizeof *v);
    size_t k = 0;
    for (size_t i = 0; i < rec.wp.cap; i++)
      if (rec.wp.keys[i]) v[k++] = (pc_sid){rec.wp.keys[i], rec.wp.vals[i]};
    qsort(v, k, sizeof *v, pc_sid_cmp);
    for (size_t i = 0; i < k; i++) {
      b->wp_pc[i] = v[i].pc;
      b->wp_first[i] = v[i].sid;
    }
    free(v);
  }
  map64_free(&rec.wp);
  if (rc) {
    ooo_free(m);
    return rc;
  }
  b->final = m;
  b->ran = true;
  b->seconds = wi_now() - t0;
  return WI_OK;
}

const trace_t *rp_base_trace(const rp_base *b) { return b->t; }
const ooo_config *rp_base_config(const rp_base *b) { return &b->cfg; }
const ooo_model *rp_base_model(const rp_base *b) { return b->final; }
double rp_base_seconds(const rp_base *b) { return b->seconds; }
size_t rp_base_n_snaps(const rp_base *b) { return b->n_snap; }
uint64_t rp_base_snap_commit(const rp_base *b, size_t i) { return i < b->n_snap ? b->snap_commit[i] : 0; }
uint32_t rp_base_first_entry(const rp_base *b, uint32_t sid) {
  return sid < b->n_static ? b->first_sid[sid] : RP_NEVER;
}
const rp_interval *rp_base_intervals(const rp_base *b, size_t *n) {
  *n = b->n_ivl;
  return b->ivl;
}

/* ---- workers and replays ---------------------------------------------------------------------- */

struct rp_worker {
  const rp_base *b;
  ooo_model *m; /* base configuration; reset by copying a snapshot or the pristine model */
};

rp_worker *rp_worker_new(const rp_base *b) {
  rp_worker *w = xcalloc(1, sizeof *w);
  w->b = b;
  return w;
}

void rp_worker_free(rp_worker *w) {
  if (!w) return;
  ooo_free(w->m);
  free(w);
}

static void plan_filter_cb(void *ctx, uint64_t index, const trace_insn *ti, const dec_insn *di, bool wrong_path,
                           ooo_mod *out) {
  rp_plan_filter(ctx, index, ti, di, wrong_path, out);
}

static void set_perfect(ooo_model *m, int perfect) {
  mem_sys *ms = ooo_mem_mut(m);
  mem_set_perfect(ms, MREQ_LOAD, (perfect & RP_LVL_L1D) != 0);
  mem_set_perfect(ms, MREQ_STORE, (perfect & RP_LVL_L1D) != 0);
  mem_set_perfect(ms, MREQ_IFETCH, (perfect & RP_LVL_L1I) != 0);
}

wi_rc rp_replay(const rp_base *b, const rp_plan *p, rp_worker *w, bool use_ckpt, rp_result *out, wi_err *err) {
  double t0 = wi_now();
  if (p->b != b) return wi_fail(err, WI_ESTATE, "rp_replay: the plan was compiled for another baseline");
  int s = use_ckpt ? rp_plan_start_snap(p, b) : -1;
  ooo_model *m = NULL, *own = NULL;
  rp_worker *tmp = NULL;
  wi_rc rc = WI_OK;
  if (p->cfg_changed) {
    s = -1;
    own = m = ooo_new(&p->cfg, b->t, b->nobind, err);
    if (!m) return err ? err->rc : WI_EINVAL;
  } else {
    if (!w) w = tmp = rp_worker_new(b);
    if (!w->m) {
      w->m = ooo_clone(b->fresh, err);
      if (!w->m) {
        rp_worker_free(tmp);
        return err ? err->rc : WI_EINVAL;
      }
    }
    m = w->m;
    rc = ooo_copy(m, s >= 0 ? b->snap[s] : b->fresh, err);
  }
  if (!rc) {
    set_perfect(m, p->perfect);
    ooo_set_filter(m, (p->has_stream || p->hook) ? plan_filter_cb : NULL, (void *)p);
    rc = ooo_run(m, UINT64_MAX, err);
    ooo_set_filter(m, NULL, NULL);
  }
  if (!rc) {
    rp_result_from_model(m, out);
    out->start_snap = s;
    out->start_insn = s >= 0 ? b->snap_commit[s] : 0;
    out->wall_s = wi_now() - t0;
  }
  if (m && !own) set_perfect(m, 0);
  ooo_free(own);
  rp_worker_free(tmp);
  return rc;
}

/* ---- JSON ------------------------------------------------------------------------------------------ */

static void td_json(const ooo_topdown *td, jw *w) {
  jw_knum(w, "retiring", td->retiring);
  jw_knum(w, "bad_speculation", td->bad_speculation);
  jw_knum(w, "frontend_bound", td->frontend_bound);
  jw_knum(w, "backend_bound", td->backend_bound);
  jw_knum(w, "branch_mispredicts", td->branch_mispredicts);
  jw_knum(w, "machine_clears", td->machine_clears);
  jw_knum(w, "fe_latency", td->fe_latency);
  jw_knum(w, "fe_bandwidth", td->fe_bandwidth);
  jw_knum(w, "memory_bound", td->memory_bound);
  jw_knum(w, "core_bound", td->core_bound);
}

void rp_result_json(const rp_result *r, jw *w) {
  jw_kuint(w, "cycles", r->cycles);
  jw_kuint(w, "insns", r->insns);
  jw_knum(w, "ipc", r->ipc);
  jw_knum(w, "mpki", r->mpki);
  jw_key(w, "branch");
  jw_obj_begin(w);
  jw_kuint(w, "mispredicts", r->mispredicts);
  jw_knum(w, "cond_mpki", r->cond_mpki);
  jw_knum(w, "indirect_mpki", r->ind_mpki);
  jw_knum(w, "return_mpki", r->ret_mpki);
  jw_kuint(w, "return_mispredicts", r->ret_mispredicts);
  jw_obj_end(w);
  jw_key(w, "wrong_path");
  jw_obj_begin(w);
  jw_kuint(w, "fetched", r->wp_fetched);
  jw_kuint(w, "executed", r->wp_executed);
  jw_obj_end(w);
  jw_key(w, "topdown");
  jw_obj_begin(w);
  td_json(&r->td, w);
  jw_obj_end(w);
}

void rp_delta_json(const rp_result *base, const rp_result *r, jw *w) {
  jw_kint(w, "cycles", (int64_t)r->cycles - (int64_t)base->cycles);
  jw_knum(w, "ipc", r->ipc - base->ipc);
  jw_knum(w, "ipc_pct", base->ipc > 0 ? 100.0 * (r->ipc - base->ipc) / base->ipc : 0.0);
  jw_knum(w, "cycles_pct",
          base->cycles ? 100.0 * ((double)r->cycles - (double)base->cycles) / (double)base->cycles : 0.0);
  jw_knum(w, "mpki", r->mpki - base->mpki);
  jw_kint(w, "return_mispredicts", (int64_t)r->ret_mispredicts - (int64_t)base->ret_mispredicts);
  jw_key(w, "wrong_path");
  jw_obj_begin(w);
  jw_kint(w, "fetched", (int64_t)r->wp_fetched - (int64_t)base->wp_fetched);
  jw_kint(w, "executed", (int64_t)r->wp_executed - (int64_t)base->wp_executed);
  jw_obj_end(w);
  ooo_topdown d;
  const ooo_topdown *a = &base->td, *b = &r->td;
  d.retiring = b->retiring - a->retiring;
  d.bad_speculation = b->bad_speculation - a->bad_speculation;
  d.frontend_bound = b->frontend_bound - a->frontend_bound;
  d.backend_bound = b->backend_bound - a->backend_bound;
  d.branch_mispredicts = b->branch_mispredicts - a->branch_mispredicts;
  d.machine_clears = b->machine_clears - a->machine_clears;
  d.fe_latency = b->fe_latency - a->fe_latency;
  d.fe_bandwidth = b->fe_bandwidth - a->fe_bandwidth;
  d.memory_bound = b->memory_bound - a->memory_bound;
  d.core_bound = b->core_bound - a->core_bound;
  jw_key(w, "topdown");
  jw_obj_begin(w);
  td_json(&d, w);
  jw_obj_end(w);
}

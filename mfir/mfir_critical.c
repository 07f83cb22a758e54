/* mfir_critical.c — backward walks along binding edges: the window's critical path (from the last
 * commit to the window's start, composition by edge kind, resource, static PC and function) and
 * root-cause chains from a stall symptom (the hops inside the stall's interval, plus the cause
 * they lead to: a mispredicted branch, the flow whose fill evicted a missing line, ...). */
#include <stdlib.h>
#include <string.h>

#include "mfir_int.h"

#define MAX_CHAIN (1 << 20) /* hops kept for a chain (the walk itself is not limited) */

/* ---- accumulation -------------------------------------------------------------------------------- */

typedef struct acc {
  wi_map64 map;            /* key + 1 -> index */
  VEC(mfir_share) v;
} acc;

static void acc_add(acc *a, uint64_t key, uint64_t cycles) {
  uint32_t *i = map64_get(&a->map, key + 1);
  if (!i) {
    mfir_share s = {key, NULL, 0};
    VEC_PUSH(a->v, s);
    i = map64_put(&a->map, key + 1, (uint32_t)(a->v.n - 1));
  }
  a->v.a[*i].cycles += cycles;
}

static int cmp_share(const void *a, const void *b) {
  const mfir_share *x = a, *y = b;
  if (x->cycles != y->cycles) return x->cycles > y->cycles ? -1 : 1;
  return x->key < y->key ? -1 : x->key > y->key;
}

static char *own(mfir_critical *c, const char *s) {
  c->names = xrealloc(c->names, (c->n_names + 1) * sizeof *c->names);
  return c->names[c->n_names++] = xstrdup(s ? s : "?");
}

/* Sorted list out of an accumulator (frees the accumulator). */
static mfir_share *acc_take(acc *a, size_t *n) {
  map64_free(&a->map);
  if (a->v.n > 1) qsort(a->v.a, a->v.n, sizeof *a->v.a, cmp_share);
  *n = a->v.n;
  mfir_share *r = a->v.a;
  a->v.a = NULL;
  a->v.n = a->v.cap = 0;
  return r;
}

/* ---- symptoms ------------------------------------------------------------------------------------- */

typedef struct sym {
  int64_t fid;
  int stage;
  int64_t floor;           /* the walk covers cycles > floor */
} sym;

typedef struct dnode {
  uint64_t t;
  int64_t fid;
  uint64_t order;          /* fetch time, to order flows dispatched in one cycle */
} dnode;

/* x before y among the flows dispatched in one cycle. */
static bool dnode_before(const dnode *x, const dnode *y) {
  if (x->order != y->order) return x->order < y->order;
  return x->fid < y->fid;
}

typedef VEC(dnode) dnode_vec;
typedef struct dnodes {
  dnode_vec *v;
} dnodes;

/* rd_scan of wflow: the dispatches of wrong-path flows. */
static int wrong_dispatch(void *ctx, int64_t rowid, const int64_t *v, int ncols) {
  (void)rowid;
  (void)ncols;
  if (v[WC_DISPATCH] == MW_NULL) return 0;
  dnode x = {(uint64_t)v[WC_DISPATCH], v[WC_FID], v[WC_FETCH] == MW_NULL ? 0 : (uint64_t)v[WC_FETCH]};
  VEC_PUSH(*((dnodes *)ctx)->v, x);
  return 0;
}

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

/* The first largest gap between consecutive distinct times of v (gap 0 and t_hi the earliest time
 * if there is none). The cycles with a dispatch as a bitmap when that is no larger than the
 * flows (there are millions: no sort), else sorted. */
static void max_gap(const dnode_vec *v, uint64_t *gap, uint64_t *t_lo, uint64_t *t_hi) {
  size_t n = v->n;
  uint64_t tmin = UINT64_MAX, tmax = 0;
  for (size_t i = 0; i < n; i++) {
    tmin = WI_MIN(tmin, v->a[i].t);
    tmax = WI_MAX(tmax, v->a[i].t);
  }
  *gap = 0;
  *t_lo = *t_hi = tmin;
  uint64_t prev = tmin;
  if ((tmax - tmin) / 64 <= n) {
    size_t nw = (size_t)((tmax - tmin) / 64) + 1;
    uint64_t *bits = xcalloc(nw, sizeof *bits);
    for (size_t i = 0; i < n; i++) {
      uint64_t b = v->a[i].t - tmin;
      bits[b / 64] |= 1ULL << (b % 64);
    }
    for (size_t wd = 0; wd < nw; wd++)
      for (uint64_t m = bits[wd]; m; m &= m - 1) {
        uint64_t t = tmin + wd * 64 + (uint64_t)__builtin_ctzll(m);
        if (t - prev > *gap) {
          *gap = t - prev;
          *t_hi = t;
          *t_lo = prev;
        }
        prev = t;
      }
    free(bits);
    return;
  }
  uint64_t *ts = xmalloc(n * sizeof *ts);
  for (size_t i = 0; i < n; i++) ts[i] = v->a[i].t;
  qsort(ts, n, sizeof *ts, cmp_u64);
  for (size_t i = 1; i < n; i++)
    if (ts[i] - ts[i - 1] > *gap) {
      *gap = ts[i] - ts[i - 1];
      *t_hi = ts[i];
      *t_lo = ts[i - 1];
    }
  free(ts);
}

static wi_rc pick_symptom(mfir_db *d, const char *name, sym *s, wi_err *err) {
  const mfir_window *w = &d->win;
  int64_t base = (int64_t)w->start_cycle - 1;
  if (!name || !strcmp(name, "end")) {
    *s = (sym){w->last_fid, MFIR_R, base};
    return WI_OK;
  }
  if (!strcmp(name, "rob-head")) {
    /* The longest wait of a ROB head: the largest gap between consecutive commits. */
    int64_t best = w->first_fid;
    uint64_t gap = 0, prev = (uint64_t)base;
    int64_t best_floor = base;
    for (size_t i = 0; i < d->n_flows; i++) {
      uint64_t r = d->flows[i].t[MFIR_R];
      uint64_t g = r - prev; /* prev may be start - 1 (wraps consistently) */
      if (i == 0 || g > gap) {
        gap = g;
        best = d->flows[i].fid;
        best_floor = (int64_t)prev;
      }
      prev = r;
    }
    *s = (sym){best, MFIR_R, best_floor};
    return WI_OK;
  }
  if (!strcmp(name, "dispatch")) {
    /* The longest dispatch stall: the largest gap between consecutive dispatches (both paths). */
    dnode_vec v = {0};
    VEC_RESERVE(v, d->n_flows + 1);
    for (size_t i = 0; i < d->n_flows; i++)
      if (d->flows[i].t[MFIR_D] != MFIR_NOTIME) {
        dnode x = {d->flows[i].t[MFIR_D], d->flows[i].fid, d->flows[i].t[MFIR_F]};
        VEC_PUSH(v, x);
      }
    dnodes dn = {&v};
    wi_rc rc = rd_scan(d, MT_WFLOW, WC_DISPATCH + 1, wrong_dispatch, &dn, err);
    if (rc) {
      VEC_FREE(v);
      return rc;
    }
    size_t n = v.n;
    if (!n) {
      VEC_FREE(v);
      return wi_fail(err, WI_EINVAL, "%s: no dispatch in the window", d->path);
    }
    /* The first largest gap between two cycles with a dispatch; the symptom is the first flow
     * dispatched at its end. */
    uint64_t gap = 0, t_hi = 0, t_lo = 0;
    max_gap(&v, &gap, &t_lo, &t_hi);
    const dnode *best = NULL;
    for (size_t i = 0; i < n; i++)
      if (v.a[i].t == t_hi && (!best || dnode_before(&v.a[i], best))) best = &v.a[i];
    *s = (sym){best->fid, MFIR_D, gap ? (int64_t)t_lo : base};
    VEC_FREE(v);
    return WI_OK;
  }
  if (!strcmp(name, "miss")) {
    /* The load that took longest from issue to completion below L1. */
    int64_t best = MFIR_NOFID;
    uint64_t lat = 0;
    for (size_t i = 0; i < d->n_flows; i++) {
      const mfir_rec *r = &d->flows[i];
      int k = r->kind[MFIR_C];
      if ((k != OB_L2 && k != OB_LLC && k != OB_DRAM) || r->t[MFIR_I] == MFIR_NOTIME) continue;
      uint64_t l = r->t[MFIR_C] - r->t[MFIR_I];
      if (best == MFIR_NOFID || l > lat) {
        lat = l;
        best = r->fid;
      }
    }
    if (best == MFIR_NOFID) return wi_fail(err, WI_EINVAL, "%s: no load missed L1 in the window", d->path);
    const mfir_rec *r = rd_get(d, best);
    *s = (sym){best, MFIR_C, (int64_t)r->t[MFIR_I]};
    return WI_OK;
  }
  if (!strncmp(name, "fid:", 4)) {
    char *end;
    long long f = strtoll(name + 4, &end, 10);
    int stage = MFIR_R;
    if (*end == ':') {
      static const char st[] = "FDICR";
      const char *p = end[1] ? strchr(st, end[1]) : NULL;
      if (!p || end[2]) return wi_fail(err, WI_EINVAL, "symptom '%s': stage must be one of F D I C R", name);
      stage = (int)(p - st);
    } else if (*end || end == name + 4) {
      return wi_fail(err, WI_EINVAL, "symptom '%s': want fid:N[:STAGE]", name);
    }
    const mfir_rec *r = rd_get(d, (int64_t)f);
    if (!r) return wi_fail(err, WI_EINVAL, "symptom '%s': flow %lld is not in the window", name, f);
    if (r->t[stage] == MFIR_NOTIME)
      return wi_fail(err, WI_EINVAL, "symptom '%s': flow %lld never reached stage %s", name, f, mfir_stage_name(stage));
    /* Interval: since the previous correct-path flow reached the same stage. */
    int64_t floor = base;
    const mfir_rec *p = r->fid > w->first_fid ? rd_get(d, r->fid - 1) : NULL;
    if (p && p->t[stage] != MFIR_NOTIME && p->t[stage] < r->t[stage]) floor = (int64_t)p->t[stage];
    *s = (sym){(int64_t)f, stage, floor};
    return WI_OK;
  }
  return wi_fail(err, WI_EINVAL, "unknown symptom '%s' (end, rob-head, dispatch, miss, fid:N[:STAGE])", name);
}

/* ---- the walk ----------------------------------------------------------------------------------------- */

/* The flow whose fill evicted the line a load of fid missed on (memtx.evictor), or MFIR_NOFID. */
static int64_t evictor_of(mfir_db *d, int64_t fid, uint32_t *set_rid) {
  sqlite3_stmt *st = NULL;
  int64_t ev = MFIR_NOFID;
  if (sqlite3_prepare_v2(d->db,
                         "SELECT evictor, set_rid FROM memtx WHERE fid = ? AND kind = 0 AND evictor IS NOT NULL"
                         " ORDER BY level DESC, id LIMIT 1",
                         -1, &st, NULL) != SQLITE_OK)
    return ev;
  sqlite3_bind_int64(st, 1, fid);
  if (sqlite3_step(st) == SQLITE_ROW) {
    ev = sqlite3_column_int64(st, 0);
    *set_rid = (uint32_t)sqlite3_column_int64(st, 1);
  }
  sqlite3_finalize(st);
  return ev;
}

static bool is_cause_kind(int k) {
  return k == MK_REDIRECT || k == MK_SQUASH_BRANCH || k == MK_SQUASH_CLEAR || k == MK_WRONG_PATH ||
         k == MK_EVICTED;
}

wi_rc mfir_critical_path(mfir_db *d, const char *symptom, mfir_critical *out, wi_err *err) {
  memset(out, 0, sizeof *out);
  out->root_fid = MFIR_NOFID;
  wi_rc rc = rd_load_flows(d, err);
  if (rc) return rc;
  sym s = {MFIR_NOFID, MFIR_R, 0};
  if ((rc = pick_symptom(d, symptom, &s, err))) return rc;
  bool chain = symptom != NULL;
  snprintf(out->symptom, sizeof out->symptom, "%s", symptom ? symptom : "end");
  out->symptom_fid = s.fid;
  out->symptom_stage = s.stage;

  acc by_kind = {0}, by_rid = {0}, by_pc = {0};
  map64_init(&by_kind.map, 64);
  map64_init(&by_rid.map, 256);
  map64_init(&by_pc.map, 1024);
  VEC(mfir_step) steps = {0};

  const mfir_rec *cur = rd_get(d, s.fid);
  int stage = s.stage;
  uint64_t t = cur->t[stage];
  out->end_cycle = t;
  out->start_cycle = (uint64_t)(s.floor + 1);
  uint64_t guard = 8 * (d->n_flows + d->n_wflows + 1) * MFIR_NSTAGE;
  int64_t last_wrong = MFIR_NOFID;
  for (;;) {
    mfir_hop_t h = mfir_hop(cur, stage, rd_get, d);
    const mfir_rec *next = h.fid == MFIR_NOFID ? NULL : rd_get(d, h.fid);
    uint64_t tt = next ? next->t[h.stage] : 0;
    bool last = !next || (int64_t)tt <= s.floor || --guard == 0;
    uint64_t cyc = last ? (uint64_t)((int64_t)t - s.floor) : h.cycles;
    int kind = next ? h.kind : MK_START;
    uint64_t pc = rd_flow_pc(d, cur->fid);
    acc_add(&by_kind, (uint64_t)kind, cyc);
    if (h.rid != OOO_RID_NONE) acc_add(&by_rid, h.rid, cyc);
    /* A full store queue's cycles are the holding store's write, not the waiting instruction's
     * (which is whatever rename reached first after the stall): they go to the store's PC. */
    acc_add(&by_pc, kind == OB_SQ_FULL ? rd_flow_pc(d, h.fid) : pc, cyc);
    out->total += cyc;
    out->n_hops++;
    if (chain && steps.n < MAX_CHAIN) {
      mfir_step st = {cur->fid, stage, t, kind, h.rid, last ? MFIR_NOFID : h.fid, last ? 0 : h.stage, cyc, pc};
      if (last && next) { /* the hop crosses the interval's start: name its target all the same */
        st.to_fid = h.fid;
        st.to_stage = h.stage;
      }
      VEC_PUSH(steps, st);
      /* Wrong-path work holding a resource: the branch whose misprediction fetched it is a cause. */
      if (cur->wrong && cur->by[MFIR_R] != MFIR_NOFID && cur->fid != last_wrong) {
        mfir_step ws = {cur->fid, stage, t, MK_WRONG_PATH, OOO_RID_NONE, cur->by[MFIR_R], MFIR_C, 0, pc};
        VEC_PUSH(steps, ws);
        last_wrong = cur->fid;
      }
      /* A load that missed because its line was evicted: the evicting flow is a cause. */
      if ((kind == OB_L2 || kind == OB_LLC || kind == OB_DRAM) && stage == MFIR_C && cur->fid >= 0) {
        uint32_t set = OOO_RID_NONE;
        int64_t ev = evictor_of(d, cur->fid, &set);
        if (ev != MFIR_NOFID) {
          mfir_step es = {cur->fid, MFIR_C, t, MK_EVICTED, set, ev, MFIR_C, 0, pc};
          VEC_PUSH(steps, es);
        }
      }
    }
    if (last) break;
    cur = next;
    stage = h.stage;
    t = tt;
  }

  /* Root cause: the first causal hop (misprediction, squash, wrong path, eviction) from the
   * symptom, else the hop that took longest. */
  if (chain) {
    size_t big = 0;
    for (size_t i = 0; i < steps.n; i++) {
      if (is_cause_kind(steps.a[i].kind) && steps.a[i].to_fid != MFIR_NOFID) {
        out->root_fid = steps.a[i].to_fid;
        out->root_kind = steps.a[i].kind;
        break;
      }
      if (steps.a[i].cycles > steps.a[big].cycles) big = i;
    }
    if (out->root_fid == MFIR_NOFID && steps.n) {
      out->root_fid = steps.a[big].fid;
      out->root_kind = steps.a[big].kind;
    }
    if (out->root_fid != MFIR_NOFID) out->root_pc = rd_flow_pc(d, out->root_fid);
    out->chain = steps.a;
    out->n_chain = steps.n;
  } else {
    VEC_FREE(steps);
  }

  out->by_kind = acc_take(&by_kind, &out->n_kind);
  for (size_t i = 0; i < out->n_kind; i++) out->by_kind[i].name = mfir_kind_name((int)out->by_kind[i].key);
  out->by_rid = acc_take(&by_rid, &out->n_rid);
  for (size_t i = 0; i < out->n_rid; i++) {
    char buf[64];
    out->by_rid[i].name = own(out, mfir_rid_name((uint32_t)out->by_rid[i].key, buf, sizeof buf));
  }
  out->by_pc = acc_take(&by_pc, &out->n_pc);
  /* Functions: from the PCs. */
  acc by_func = {0};
  map64_init(&by_func.map, 256);
  VEC(const char *) fnames = {0};
  for (size_t i = 0; i < out->n_pc; i++) {
    const mfir_pcinfo *pi = mfir_pc_info(d, out->by_pc[i].key);
    const char *fn = pi ? pi->function : "?";
    out->by_pc[i].name = pi ? pi->asm_text : "?";
    size_t k = 0;
    while (k < fnames.n && strcmp(fnames.a[k], fn)) k++;
    if (k == fnames.n) VEC_PUSH(fnames, fn);
    acc_add(&by_func, k, out->by_pc[i].cycles);
  }
  out->by_func = acc_take(&by_func, &out->n_func);
  for (size_t i = 0; i < out->n_func; i++) out->by_func[i].name = own(out, fnames.a[out->by_func[i].key]);
  VEC_FREE(fnames);
  return WI_OK;
}

void mfir_critical_free(mfir_critical *c) {
  if (!c) return;
  free(c->by_kind);
  free(c->by_rid);
  free(c->by_pc);
  free(c->by_func);
  free(c->chain);
  for (size_t i = 0; i < c->n_names; i++) free(c->names[i]);
  free(c->names);
  memset(c, 0, sizeof *c);
}

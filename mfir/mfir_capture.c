/* mfir_capture.c — the MFIR observer: turns the model's events (with their flow and resource
 * ids) into flow rows with inline binding edges, register dependences, memory transactions,
 * squash groups, flushed attempts and slot records, streamed into the bulk writer; at the end
 * writes the static tables (pc, resource, kind, meta), indexes and views. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mfir_int.h"

#define RING_MASK (CAP_RING - 1u)

/* ---- small helpers -------------------------------------------------------------------------------- */

static inline int64_t t_or_null(uint64_t t) { return t == MFIR_NOTIME ? MW_NULL : (int64_t)t; }
static inline int64_t rid_or_null(uint32_t rid) { return rid == OOO_RID_NONE ? MW_NULL : (int64_t)rid; }
static inline int64_t fid_or_null(int64_t fid) { return fid == MFIR_NOFID ? MW_NULL : fid; }
static inline uint64_t ntime(uint64_t t) { return t == UINT64_MAX ? MFIR_NOTIME : t; }

/* Direct counters for the core's resources (a few per flow, so no hashing on the hot path). */
#define RC_ROB 0u
#define RC_SCHED (RC_ROB + 65536u)
#define RC_POOL 4096u
#define RC_LQ (RC_SCHED + OOO_NPOOL * RC_POOL)
#define RC_SQ (RC_LQ + 4096u)
#define RC_PORT (RC_SQ + 4096u)
#define RC_UNIT (RC_PORT + 64u)
#define RC_SINGLE (RC_UNIT + 64u)
#define RC_NUM (RC_SINGLE + 16u)

static long rid_core_slot(uint32_t rid) {
  if (rid < OOO_RID_BASE) return -1;
  uint32_t x;
  if (rid < OOO_RID_SCHED) return (x = rid - OOO_RID_ROB) < 65536u ? (long)(RC_ROB + x) : -1;
  if (rid < OOO_RID_LQ) {
    uint32_t pool = (rid - OOO_RID_SCHED) / OOO_RID_POOL_STRIDE, e = (rid - OOO_RID_SCHED) % OOO_RID_POOL_STRIDE;
    return pool < OOO_NPOOL && e < RC_POOL ? (long)(RC_SCHED + pool * RC_POOL + e) : -1;
  }
  if (rid < OOO_RID_SQ) return (x = rid - OOO_RID_LQ) < 4096u ? (long)(RC_LQ + x) : -1;
  if (rid < OOO_RID_PORT) return (x = rid - OOO_RID_SQ) < 4096u ? (long)(RC_SQ + x) : -1;
  if (rid < OOO_RID_UNIT) return (x = rid - OOO_RID_PORT) < 64u ? (long)(RC_PORT + x) : -1;
  if (rid < OOO_RID_FETCH) return (x = rid - OOO_RID_UNIT) < 64u ? (long)(RC_UNIT + x) : -1;
  return (x = rid - OOO_RID_FETCH) < 16u ? (long)(RC_SINGLE + x) : -1;
}

/* The rid of a direct counter slot (inverse of rid_core_slot). */
static uint32_t rid_of_core_slot(uint32_t i) {
  if (i < RC_SCHED) return OOO_RID_ROB + (i - RC_ROB);
  if (i < RC_LQ) return OOO_RID_SCHED + (i - RC_SCHED) / RC_POOL * OOO_RID_POOL_STRIDE + (i - RC_SCHED) % RC_POOL;
  if (i < RC_SQ) return OOO_RID_LQ + (i - RC_LQ);
  if (i < RC_PORT) return OOO_RID_SQ + (i - RC_SQ);
  if (i < RC_UNIT) return OOO_RID_PORT + (i - RC_PORT);
  if (i < RC_SINGLE) return OOO_RID_UNIT + (i - RC_UNIT);
  return OOO_RID_FETCH + (i - RC_SINGLE);
}

static void count_rid(mfir_capture *c, uint32_t rid) {
  if (rid == OOO_RID_NONE) return;
  long k = rid_core_slot(rid);
  if (k >= 0) {
    c->rid_core[k]++;
    return;
  }
  uint32_t *v = map64_get(&c->rid_map, rid);
  if (v) (*v)++;
  else map64_put(&c->rid_map, rid, 1);
}

static void count_pc(mfir_capture *c, uint64_t pc, uint32_t sid, bool wrong) {
  if (sid < c->n_static) { /* executed on the correct path: counted by static id */
    c->sid_count[2 * (size_t)sid + wrong]++;
    return;
  }
  uint64_t key = pc ? pc : UINT64_MAX; /* map keys must be non-zero */
  uint32_t *v = map64_get(&c->pc_map, key);
  if (!v) {
    cap_pcstat s = {pc, sid, 0, 0};
    VEC_PUSH(c->pcs, s);
    v = map64_put(&c->pc_map, key, (uint32_t)(c->pcs.n - 1));
  }
  cap_pcstat *s = &c->pcs.a[*v];
  if (wrong) s->wrong++;
  else s->count++;
  if (s->sid == UINT32_MAX) s->sid = sid;
}

static void cap_fail(mfir_capture *c, wi_rc rc, const char *msg) {
  if (c->failed) return;
  c->failed = true;
  wi_fail(&c->err, rc, "mfir: %s", msg);
}

/* In the window: started, at or after its first cycle, not after its last commit. */
static inline bool in_window(const mfir_capture *c, uint64_t cycle) {
  return c->started && cycle >= c->c0 && !(c->done && cycle > c->r_last);
}

/* The hop rule's view of the capture: recently finished flows, and correct-path flows still in
 * flight (a squash names its branch before the branch commits). The result is valid until the
 * next call. */
static const mfir_rec *cap_get(void *ctx, int64_t fid) {
  mfir_capture *c = ctx;
  const mfir_rec *r;
  if (fid >= 0) r = &c->done_c[(uint64_t)fid & RING_MASK];
  else r = &c->done_w[(uint64_t)(-1 - fid) & RING_MASK];
  if (r->fid == fid) return r;
  if (fid < 0) return NULL;
  const cap_pend *p = &c->pend_c[(uint64_t)fid & RING_MASK];
  if (p->fid != (uint64_t)fid) return NULL;
  /* The hop rule reads only a target's fid and times. */
  mfir_rec *s = &c->scratch;
  s->fid = fid;
  for (int k = 0; k < 4; k++) s->t[k] = p->t[k];
  s->t[MFIR_R] = MFIR_NOTIME;
  return s;
}

static cap_pend *pend_find(mfir_capture *c, uint64_t fid) {
  cap_pend *p = ((fid & OOO_FID_WRONG) ? c->pend_w : c->pend_c) + ((fid & ~OOO_FID_WRONG) & RING_MASK);
  return p->fid == fid ? p : NULL;
}

static cap_pend *pend_new(mfir_capture *c, uint64_t fid, uint64_t pc, uint32_t sid) {
  cap_pend *p = ((fid & OOO_FID_WRONG) ? c->pend_w : c->pend_c) + ((fid & ~OOO_FID_WRONG) & RING_MASK);
  /* (no read of a wrong-path entry: its old contents do not matter, and the load would miss) */
  uint8_t refetched = !(fid & OOO_FID_WRONG) && p->fid == fid && p->refetched;
  *p = (cap_pend){.fid = fid, .pc = pc, .t = {MFIR_NOTIME, MFIR_NOTIME, MFIR_NOTIME, MFIR_NOTIME},
                  .d_by = OOO_FID_NONE, .f_by = OOO_FID_NONE, .f_rid = OOO_RID_NONE, .sid = sid,
                  .refetched = refetched};
  return p;
}

static cap_pend *pend_get(mfir_capture *c, const ooo_ev *e) {
  cap_pend *p = pend_find(c, e->fid);
  return p ? p : pend_new(c, e->fid, e->pc, e->sid);
}

/* ---- wrong-path rows in key order -------------------------------------------------------------------
 * The page writer wants wflow rows in fid order (-1 - n: n ascending), but a squash reports the
 * fetch queue before the ROB's youngest-first, and squashes may nest. So a squashed flow's row
 * waits in a ring, by n, until every older wrong-path flow has been squashed. A flow older than
 * the ring reaches (never seen squashed) is given up on: should it come after all, its row is
 * written out of order (and inserted through SQLite at the end). */

enum { WQ_OPEN = 0, WQ_ROW, WQ_NONE };

static void wq_put(mfir_capture *c, size_t i) {
  if (c->wq_state[i] == WQ_ROW)
    memcpy(mw_row_raw(&c->w, MT_WFLOW), c->wq_rows + i * WC_NUM, WC_NUM * sizeof *c->wq_rows);
  c->wq_state[i] = WQ_OPEN;
  c->wq_next++;
}

/* Write the rows whose older flows are all resolved. */
static void wq_emit(mfir_capture *c) {
  while (c->wq_next < c->wq_hi && c->wq_state[c->wq_next & RING_MASK] != WQ_OPEN) wq_put(c, c->wq_next & RING_MASK);
}

/* Wrong-path flow n exists: keep it in the ring's reach. */
static void wq_see(mfir_capture *c, uint64_t n) {
  if (!c->wq_on) {
    c->wq_on = true;
    c->wq_next = c->wq_hi = n;
  }
  if (n < c->wq_next) return;
  if (n >= c->wq_hi) c->wq_hi = n + 1;
  while (n - c->wq_next >= CAP_RING) {
    wq_put(c, c->wq_next & RING_MASK);
    wq_emit(c);
  }
}

/* The row of squashed wrong-path flow n (all NULL), in the ring or straight to the table. */
static int64_t *wq_row(mfir_capture *c, uint64_t n) {
  wq_see(c, n);
  if (n < c->wq_next) return mw_row(&c->w, MT_WFLOW);
  size_t i = n & RING_MASK;
  c->wq_state[i] = WQ_ROW;
  int64_t *r = c->wq_rows + i * WC_NUM;
  for (int k = 0; k < WC_NUM; k++) r[k] = MW_NULL;
  return r;
}

/* Squashed wrong-path flow n has no row (outside the window, or not dispatched). */
static void wq_skip(mfir_capture *c, uint64_t n) {
  wq_see(c, n);
  if (n >= c->wq_next) c->wq_state[n & RING_MASK] = WQ_NONE;
}

/* The end: every row still waiting, in order. */
static void wq_finish(mfir_capture *c) {
  while (c->wq_next < c->wq_hi) wq_put(c, c->wq_next & RING_MASK);
}

/* ---- flows ----------------------------------------------------------------------------------------- */

/* Append the flow row of r (effective bindings and cycles imposed, by the hop rule): correct-path
 * flows to cflow, wrong-path flows to wflow. A binding whose named constraint was met before the
 * flow's own previous stage is replaced by the own-stage edge (flags bit 8 << stage - D). */
static void write_flow(mfir_capture *c, mfir_rec *r, uint64_t pc, uint32_t rob, uint32_t sched,
                       uint32_t port, uint8_t slots, uint8_t flags, const int64_t prod[3]) {
  int64_t cyc[MFIR_NSTAGE];
  for (int s = MFIR_D; s < MFIR_NSTAGE; s++) {
    cyc[s] = MW_NULL;
    if (r->t[s] == MFIR_NOTIME || r->kind[s] == OB_NONE) continue;
    mfir_hop_t h = mfir_hop(r, s, cap_get, c);
    cyc[s] = (int64_t)h.cycles;
    if (h.corrected) {
      r->kind[s] = (uint8_t)h.kind;
      r->by[s] = MFIR_NOFID;
      r->rid[s] = h.rid;
      flags |= (uint8_t)(FF_FIX_D << (s - MFIR_D));
    }
  }
  count_rid(c, rob);
  count_rid(c, sched);
  count_rid(c, port);
  if (r->wrong) {
    int64_t *v = wq_row(c, (uint64_t)(-1 - r->fid));
    v[WC_FID] = r->fid;
    v[WC_PC] = (int64_t)pc;
    v[WC_FETCH] = t_or_null(r->t[MFIR_F]);
    v[WC_DISPATCH] = t_or_null(r->t[MFIR_D]);
    v[WC_ISSUE] = t_or_null(r->t[MFIR_I]);
    v[WC_COMPLETE] = t_or_null(r->t[MFIR_C]);
    v[WC_RETIRE] = t_or_null(r->t[MFIR_R]);
    v[WC_ROB] = rid_or_null(rob);
    v[WC_SCHED] = rid_or_null(sched);
    v[WC_PORT] = rid_or_null(port);
    v[WC_SLOTS] = slots;
    v[WC_FLAGS] = flags;
    if (cyc[MFIR_D] != MW_NULL) {
      v[WC_D_KIND] = r->kind[MFIR_D];
      v[WC_D_BY] = fid_or_null(r->by[MFIR_D]);
      v[WC_D_CYC] = cyc[MFIR_D];
    }
    if (r->t[MFIR_C] != MFIR_NOTIME) v[WC_C_KIND] = r->kind[MFIR_C];
    v[WC_R_KIND] = r->kind[MFIR_R];
    v[WC_R_BY] = fid_or_null(r->by[MFIR_R]);
    v[WC_R_CYC] = cyc[MFIR_R];
    return;
  }
  int64_t *v = mw_row(&c->w, MT_FLOW);
  v[FC_FID] = r->fid;
  v[FC_PC] = (int64_t)pc;
  for (int s = 0; s < MFIR_NSTAGE; s++) v[FC_FETCH + s] = t_or_null(r->t[s]);
  v[FC_ROB] = rid_or_null(rob);
  v[FC_SCHED] = rid_or_null(sched);
  v[FC_PORT] = rid_or_null(port);
  v[FC_SLOTS] = slots;
  v[FC_FLAGS] = flags;
  for (int s = MFIR_D; s < MFIR_NSTAGE; s++) {
    if (cyc[s] == MW_NULL) continue;
    int col = FC_D_KIND + 4 * (s - MFIR_D);
    v[col] = r->kind[s];
    v[col + 1] = fid_or_null(r->by[s]);
    v[col + 2] = rid_or_null(r->rid[s]);
    v[col + 3] = cyc[s];
    count_rid(c, r->rid[s]);
  }
  if (prod)
    for (int k = 0; k < 3; k++) v[FC_P1 + k] = fid_or_null(prod[k]);
  v[FC_F_BY] = fid_or_null(r->by[MFIR_F]);
  v[FC_F_RID] = rid_or_null(r->rid[MFIR_F]);
  count_rid(c, r->rid[MFIR_F]);
}

/* Register producers of a committed correct-path instruction, in program order. */
static void compute_deps(mfir_capture *c, int64_t fid, uint32_t sid, int64_t prod[3]) {
  prod[0] = prod[1] = prod[2] = MFIR_NOFID;
  const dec_insn *di = c->trace && sid != UINT32_MAX ? trace_decoded(c->trace, sid) : NULL;
  if (!di) return;
  regset_t src = (di->flags & DF_ZERO_IDIOM) ? 0 : (di->src | di->addr_src);
  int64_t pf[RG_NUM];
  regset_t pm[RG_NUM];
  int np = 0;
  for (regset_t m = src; m; m &= m - 1) {
    int reg = __builtin_ctzll(m);
    int64_t p = c->last_writer[reg];
    if (p == MFIR_NOFID) continue;
    int k = 0;
    while (k < np && pf[k] != p) k++;
    if (k == np) {
      pf[np] = p;
      pm[np] = 0;
      np++;
    }
    pm[k] |= RG_BIT(reg);
  }
  /* Most recent producers first (they are the likeliest binding ones); three inline. */
  for (int i = 1; i < np; i++)
    for (int j = i; j > 0 && pf[j] > pf[j - 1]; j--) {
      int64_t tf = pf[j];
      pf[j] = pf[j - 1];
      pf[j - 1] = tf;
      regset_t tm = pm[j];
      pm[j] = pm[j - 1];
      pm[j - 1] = tm;
    }
  for (int k = 0; k < np; k++) {
    if (k < 3) {
      prod[k] = pf[k];
    } else {
      int64_t *v = mw_row(&c->w, MT_DEPX);
      v[0] = fid;
      v[1] = pf[k];
      v[2] = (int64_t)pm[k];
    }
  }
  c->n_deps += (uint64_t)np;
  for (regset_t m = di->dst; m; m &= m - 1) c->last_writer[__builtin_ctzll(m)] = fid;
}

static void on_fetch(void *ctx, const ooo_ev *e) {
  mfir_capture *c = ctx;
  cap_pend *p = pend_new(c, e->fid, e->pc, e->sid);
  p->t[MFIR_F] = e->cycle;
  p->f_by = e->by_fid;
  /* only a front-end stall is worth a column: plain fetch order stays NULL */
  p->f_rid = e->rid2 == OOO_RID_ICACHE || e->rid2 == OOO_RID_BPRED ? e->rid2 : OOO_RID_NONE;
  if (e->fid & OOO_FID_WRONG) wq_see(c, e->fid & ~OOO_FID_WRONG);
}

static void on_dispatch(void *ctx, const ooo_ev *e) {
  mfir_capture *c = ctx;
  cap_pend *p = pend_get(c, e);
  p->t[MFIR_D] = e->cycle;
  p->rob = e->rid;
  p->sched = e->rid2;
  p->slots = e->slots;
  /* A dispatch binding carried by the event (extra = OB_* kind, by_fid) is used for wrong-path
   * flows, whose commit event never comes. */
  if (e->extra && e->extra < OB_NUM && mfir_kind_stage((int)e->extra) == MFIR_D) {
    p->d_kind = (uint8_t)e->extra;
    p->d_by = e->by_fid;
  }
}

static void on_issue(void *ctx, const ooo_ev *e) {
  mfir_capture *c = ctx;
  cap_pend *p = pend_get(c, e);
  if (p->t[MFIR_I] == MFIR_NOTIME || e->cycle < p->t[MFIR_I]) p->t[MFIR_I] = e->cycle;
  p->port = e->rid;
}

static void on_complete(void *ctx, const ooo_ev *e) {
  mfir_capture *c = ctx;
  cap_pend *p = pend_get(c, e);
  p->t[MFIR_C] = e->cycle;
  if (e->extra && e->extra < OB_NUM && mfir_kind_stage((int)e->extra) == MFIR_C) p->c_kind = (uint8_t)e->extra;
}

static void on_commit(void *ctx, const ooo_commit_ev *e) {
  mfir_capture *c = ctx;
  if (c->failed) return;
  if (e->fid & OOO_FID_WRONG) {
    cap_fail(c, WI_ESTATE, "a wrong-path flow committed");
    return;
  }
  int64_t fid = (int64_t)e->fid;
  cap_pend *p = pend_find(c, e->fid);
  mfir_rec *r = &c->done_c[e->fid & RING_MASK];
  memset(r, 0, sizeof *r);
  r->fid = fid;
  r->t[MFIR_F] = ntime(e->fetch_cycle);
  r->t[MFIR_D] = ntime(e->dispatch_cycle);
  r->t[MFIR_I] = ntime(e->issue_cycle);
  r->t[MFIR_C] = ntime(e->complete_cycle);
  r->t[MFIR_R] = e->cycle;
  r->by[MFIR_F] = p ? mfir_db_fid(p->f_by) : MFIR_NOFID;
  r->rid[MFIR_F] = p ? p->f_rid : OOO_RID_NONE;
  for (int s = 0; s < OOO_NSTAGE; s++) {
    r->kind[s + 1] = e->bind[s].kind;
    r->rid[s + 1] = e->bind[s].rid;
    r->by[s + 1] = mfir_db_fid(e->bind[s].by_fid);
  }
  uint32_t sched = p ? p->sched : OOO_RID_NONE, port = p ? p->port : OOO_RID_NONE;
  bool refetched = p && p->refetched;
  if (p) p->fid = OOO_FID_NONE;

  if (e->fid < c->start) { /* margin before the window: known to the hop rule only */
    if (e->fid + 1 == c->start) {
      c->started = true;
      c->c0 = e->cycle + 1;
    }
    return;
  }
  if (c->done || e->fid >= c->end) return; /* the run overshoots by up to commit_width - 1 */
  if (!c->started) {
    cap_fail(c, WI_ESTATE, "the window's start was not observed (attach the observer earlier)");
    return;
  }
  if (c->last_fid != MFIR_NOFID ? fid != c->last_fid + 1 : e->fid != c->start) {
    cap_fail(c, WI_ESTATE, "commits are not contiguous in program order");
    return;
  }
  int64_t prod[3];
  compute_deps(c, fid, e->sid, prod);
  uint8_t flags = (uint8_t)((e->mispredicted ? FF_MISPRED : 0) | (refetched ? FF_REFETCHED : 0));
  write_flow(c, r, e->pc, e->rob, sched, port, e->slots, flags, prod);
  count_pc(c, e->pc, e->sid, false);
  c->r_last = e->cycle;
  c->last_fid = fid;
  if (e->fid + 1 == c->end) c->done = true;
}

/* ---- squashes ------------------------------------------------------------------------------------ */

static void squash_flush_group(mfir_capture *c) {
  if (!c->sq.on) return;
  int64_t *v = mw_row(&c->w, MT_SQUASH);
  v[0] = (int64_t)c->sq.cycle;
  v[1] = fid_or_null(mfir_db_fid(c->sq.by));
  v[2] = c->sq.cause;
  v[3] = c->sq.wrong;
  v[4] = c->sq.n;
  v[5] = c->sq.first;
  v[6] = c->sq.last;
  c->sq.on = false;
}

static void squash_group(mfir_capture *c, const ooo_ev *e, int64_t fid, bool wrong) {
  if (c->sq.on && c->sq.cycle == e->cycle && c->sq.by == e->by_fid && c->sq.cause == e->extra &&
      c->sq.wrong == wrong) {
    c->sq.n++;
    if (fid < c->sq.first) c->sq.first = fid;
    if (fid > c->sq.last) c->sq.last = fid;
    return;
  }
  squash_flush_group(c);
  c->sq.on = true;
  c->sq.cycle = e->cycle;
  c->sq.by = e->by_fid;
  c->sq.cause = (uint8_t)e->extra;
  c->sq.wrong = wrong;
  c->sq.n = 1;
  c->sq.first = c->sq.last = fid;
}

static void on_squash(void *ctx, const ooo_ev *e) {
  mfir_capture *c = ctx;
  if (c->failed) return;
  bool wrong = (e->fid & OOO_FID_WRONG) != 0;
  int64_t fid = mfir_db_fid(e->fid);
  cap_pend *p = pend_find(c, e->fid);
  /* Dispatched before the observer was attached: the event's own slot count. */
  uint8_t slots = p ? (p->t[MFIR_D] != MFIR_NOTIME ? p->slots : 0) : e->slots;
  int kind = e->extra ? MK_SQUASH_CLEAR : MK_SQUASH_BRANCH;
  bool inw = in_window(c, e->cycle);
  if (wrong) {
    /* Only a dispatched wrong-path flow can be named by another flow's binding (it held a ROB or
     * scheduler entry, a port, a rename slot): the others are not kept for the hop rule. */
    mfir_rec local;
    mfir_rec *r = p && p->t[MFIR_D] != MFIR_NOTIME ? &c->done_w[(e->fid & ~OOO_FID_WRONG) & RING_MASK] : &local;
    memset(r, 0, sizeof *r);
    r->fid = fid;
    r->wrong = true;
    for (int s = 0; s < 4; s++) r->t[s] = p ? p->t[s] : MFIR_NOTIME;
    r->t[MFIR_R] = e->cycle;
    for (int s = 0; s < MFIR_NSTAGE; s++) r->by[s] = MFIR_NOFID;
    if (r->t[MFIR_D] != MFIR_NOTIME) {
      r->kind[MFIR_D] = p && p->d_kind ? p->d_kind : OB_FRONTEND;
      r->by[MFIR_D] = p ? mfir_db_fid(p->d_by) : MFIR_NOFID;
    }
    if (r->t[MFIR_I] != MFIR_NOTIME) r->kind[MFIR_I] = OB_DISPATCHED;
    if (r->t[MFIR_C] != MFIR_NOTIME) r->kind[MFIR_C] = p && p->c_kind ? p->c_kind : OB_EXEC;
    r->kind[MFIR_R] = (uint8_t)kind;
    r->by[MFIR_R] = mfir_db_fid(e->by_fid);
    if (inw && !(c->opts.wrong_dispatched && r->t[MFIR_D] == MFIR_NOTIME)) {
      write_flow(c, r, e->pc, p ? p->rob : e->rid, p ? p->sched : OOO_RID_NONE, p ? p->port : OOO_RID_NONE,
                 slots, FF_WRONG, NULL);
      count_pc(c, e->pc, e->sid, true);
      c->n_written_wrong++;
    } else {
      wq_skip(c, e->fid & ~OOO_FID_WRONG);
    }
    wq_emit(c);
  } else if (inw) {
    /* A correct-path attempt thrown away by a machine clear; the instruction is refetched. */
    int64_t *v = mw_row(&c->w, MT_FLUSH);
    v[0] = fid;
    v[1] = (int64_t)e->pc;
    for (int s = 0; s < 4; s++) v[2 + s] = p ? t_or_null(p->t[s]) : MW_NULL;
    v[6] = (int64_t)e->cycle;
    v[7] = slots;
    v[8] = fid_or_null(mfir_db_fid(e->by_fid));
    v[9] = e->extra ? 1 : 0;
    c->n_flushed++;
  }
  if (inw) squash_group(c, e, fid, wrong);
  if (p) p->fid = OOO_FID_NONE;
  if (!wrong) {
    /* Remember the flush for the commit row's flags (the refetch creates a new entry). */
    cap_pend *q = pend_new(c, e->fid, e->pc, e->sid);
    q->refetched = 1;
  }
}

/* ---- slot records --------------------------------------------------------------------------------- */

static void slot_flush(mfir_capture *c) {
  if (!c->slot.on) return;
  int64_t *v = mw_row(&c->w, MT_SLOT);
  v[0] = (int64_t)c->slot.cycle;
  v[1] = (int64_t)c->slot.n_cycles;
  for (int k = 0; k < OOO_SLOT_NUM; k++) v[2 + k] = c->slot.slots[k];
  v[9] = c->slot.filled;
  c->slot.on = false;
  c->n_slot_rows++;
}

static void on_slots(void *ctx, const ooo_slot_ev *e) {
  mfir_capture *c = ctx;
  if (c->failed || !c->started || !e->n_cycles) return;
  uint64_t lo = e->cycle, hi = e->cycle + e->n_cycles; /* [lo, hi) */
  if (lo < c->c0) lo = c->c0;
  if (c->done && hi > c->r_last + 1) hi = c->r_last + 1;
  if (lo >= hi) return;
  if (c->slot.on && c->slot.cycle + c->slot.n_cycles == lo && c->slot.filled == e->filled &&
      !memcmp(c->slot.slots, e->slots, OOO_SLOT_NUM)) {
    c->slot.n_cycles += hi - lo;
    return;
  }
  slot_flush(c);
  c->slot.on = true;
  c->slot.cycle = lo;
  c->slot.n_cycles = hi - lo;
  memcpy(c->slot.slots, e->slots, OOO_SLOT_NUM);
  c->slot.filled = e->filled;
}

/* ---- memory transactions --------------------------------------------------------------------------- */

static inline uint64_t evict_key(int level, uint64_t line_addr, uint32_t shift) {
  return ((uint64_t)(level + 1) << 58) | ((line_addr >> shift) & ((1ULL << 58) - 1));
}

static int mshr_col(int level) { return level <= 1 ? 0 : level - 1; }

static void tx_write(mfir_capture *c, const cap_tx *x, uint64_t fill) {
  if (!in_window(c, x->cycle)) return;
  int64_t *v = mw_row(&c->w, MT_MEMTX);
  v[XC_ID] = c->next_tx++; /* ids in the order rows are written: the page writer wants them ascending */
  v[XC_FID] = x->fid == UINT64_MAX ? MW_NULL : mfir_db_fid(x->fid);
  v[XC_KIND] = x->kind;
  v[XC_ADDR] = (int64_t)x->line;
  v[XC_CYCLE] = (int64_t)x->cycle;
  v[XC_LEVEL] = x->level;
  v[XC_FILL] = t_or_null(fill);
  v[XC_SET] = rid_or_null(x->set_rid);
  for (int k = 0; k < 3; k++) v[XC_MSHR1 + k] = rid_or_null(x->mshr[k]);
  v[XC_DRAM] = rid_or_null(x->dram);
  v[XC_FLAGS] = x->flags;
  v[XC_EVICTOR] = x->evictor;
  v[XC_EVICT_CYCLE] = x->evict_cycle;
  count_rid(c, x->set_rid);
  for (int k = 0; k < 3; k++) count_rid(c, x->mshr[k]);
  count_rid(c, x->dram);
  c->n_tx++;
}

/* The open transaction an event continues: same line, same prefetch-ness, preferring the same
 * requesting flow; -1 if none. */
static long tx_find(const mfir_capture *c, uint64_t line, uint64_t fid, bool pf) {
  long best = -1;
  for (size_t i = c->open.n; i-- > 0;) {
    const cap_tx *x = &c->open.a[i];
    if (x->line != line || (x->kind == TX_PREFETCH) != pf) continue;
    if (x->fid == fid) return (long)i;
    if (best < 0) best = (long)i;
  }
  return best;
}

#define MAX_OPEN_TX 4096 /* far more than every MSHR of every level: the excess never completes */

static void tx_close_at(mfir_capture *c, size_t i, uint64_t fill);

static cap_tx *tx_open(mfir_capture *c, const mem_event *e, uint64_t line, int kind) {
  if (c->open.n >= MAX_OPEN_TX) { /* a transaction whose fill we never saw: keep it as open */
    c->open.a[0].flags |= TXF_OPEN;
    tx_close_at(c, 0, MFIR_NOTIME);
  }
  cap_tx x;
  memset(&x, 0, sizeof x);
  x.fid = e->fid;
  x.line = line;
  x.cycle = e->cycle;
  x.kind = (uint8_t)kind;
  x.first_level = e->level;
  x.level = e->level;
  x.flags = e->wrong_path ? TXF_WRONG : 0;
  x.evictor = MW_NULL;
  x.evict_cycle = MW_NULL;
  VEC_PUSH(c->open, x);
  return &c->open.a[c->open.n - 1];
}

static void tx_close_at(mfir_capture *c, size_t i, uint64_t fill) {
  tx_write(c, &c->open.a[i], fill);
  c->open.a[i] = c->open.a[--c->open.n];
}

static void on_mem(void *ctx, const mem_event *e) {
  mfir_capture *c = ctx;
  if (c->failed) return;
  uint64_t line = e->addr >> c->line_shift << c->line_shift;
  bool first = e->level <= 1; /* L1I or L1D: where demand requests start */
  switch (e->kind) {
  case MEV_EVICT: {
    uint64_t key = evict_key(e->level, line, c->line_shift);
    uint32_t *v = map64_get(&c->evict_map, key);
    cap_evict ev = {e->other_fid, e->cycle};
    if (v) {
      c->evicts.a[*v] = ev;
    } else {
      VEC_PUSH(c->evicts, ev);
      map64_put(&c->evict_map, key, (uint32_t)(c->evicts.n - 1));
    }
    break;
  }
  case MEV_TLB_MISS:
    c->tlb_fid = e->fid;
    c->tlb_cycle = e->cycle;
    break;
  case MEV_HIT:
  case MEV_MISS:
  case MEV_MERGE:
    if (first && !e->prefetch) {
      int kind = e->level == 0 ? TX_IFETCH
                 : (!(e->fid & OOO_FID_WRONG) && e->fid != UINT64_MAX && c->commit_hi != UINT64_MAX &&
                    e->fid <= c->commit_hi)
                     ? TX_STORE /* stores write to L1 after they commit */
                     : TX_LOAD;
      if (e->kind == MEV_HIT) {
        if (c->opts.no_mem_hits) break;
        cap_tx x;
        memset(&x, 0, sizeof x);
        x.fid = e->fid;
        x.line = line;
        x.cycle = e->cycle;
        x.kind = (uint8_t)kind;
        x.level = e->level;
        x.set_rid = e->rid;
        x.flags = (uint8_t)((e->wrong_path ? TXF_WRONG : 0) |
                            (c->tlb_fid == e->fid && c->tlb_cycle == e->cycle ? TXF_TLB_MISS : 0));
        x.evictor = x.evict_cycle = MW_NULL;
        tx_write(c, &x, MFIR_NOTIME);
        break;
      }
      cap_tx *x = tx_open(c, e, line, kind);
      if (c->tlb_fid == e->fid && c->tlb_cycle == e->cycle) x->flags |= TXF_TLB_MISS;
      if (e->kind == MEV_MERGE) {
        x->flags |= TXF_MERGED;
        x->wait_rid = e->rid;
      } else {
        x->set_rid = e->rid;
        uint32_t *v = map64_get(&c->evict_map, evict_key(e->level, line, c->line_shift));
        if (v && c->evicts.a[*v].fid != UINT64_MAX) {
          x->evictor = mfir_db_fid(c->evicts.a[*v].fid);
          x->evict_cycle = (int64_t)c->evicts.a[*v].cycle;
        }
      }
    } else {
      long i = tx_find(c, line, e->fid, e->prefetch);
      if (i >= 0 && e->level > c->open.a[i].level) c->open.a[i].level = e->level;
    }
    break;
  case MEV_PREFETCH: {
    cap_tx *x = tx_open(c, e, line, TX_PREFETCH);
    x->fid = e->other_fid; /* the triggering flow */
    x->set_rid = e->rid;
    break;
  }
  case MEV_MSHR_ALLOC: {
    long i = tx_find(c, line, e->prefetch ? e->other_fid : e->fid, e->prefetch);
    if (i < 0) break;
    cap_tx *x = &c->open.a[i];
    if (e->level == x->first_level) x->wait_rid = e->rid;
    if (e->level <= 3) x->mshr[mshr_col(e->level)] = e->rid;
    if (e->level > x->level) x->level = e->level;
    break;
  }
  case MEV_DRAM_ENQ: {
    if (e->fid == UINT64_MAX && !e->prefetch) break; /* write-back traffic */
    long i = tx_find(c, line, e->fid, e->prefetch);
    if (i < 0) break;
    c->open.a[i].dram = e->rid;
    c->open.a[i].level = 4;
    break;
  }
  case MEV_FILL:
    for (size_t i = c->open.n; i-- > 0;)
      if (c->open.a[i].wait_rid == e->rid && c->open.a[i].first_level == e->level) tx_close_at(c, i, e->cycle);
    break;
  case MEV_WRITEBACK:
    if (in_window(c, e->cycle)) {
      cap_tx x;
      memset(&x, 0, sizeof x);
      x.fid = UINT64_MAX;
      x.line = line;
      x.cycle = e->cycle;
      x.kind = TX_WRITEBACK;
      x.level = e->level;
      x.set_rid = e->rid;
      x.evictor = x.evict_cycle = MW_NULL;
      tx_write(c, &x, MFIR_NOTIME);
    }
    break;
  case MEV_MSHR_FULL:
    if (in_window(c, e->cycle)) {
      int64_t *v = mw_row(&c->w, MT_MEMBLOCK);
      v[0] = (int64_t)e->cycle;
      v[1] = e->level;
      v[2] = rid_or_null(e->rid);
      v[3] = e->fid == UINT64_MAX ? MW_NULL : mfir_db_fid(e->fid);
      v[4] = e->other_fid == UINT64_MAX ? MW_NULL : mfir_db_fid(e->other_fid);
      count_rid(c, e->rid);
    }
    break;
  default:
    break;
  }
}

/* on_commit wrapper keeping the highest committed fid (stores drain after it). */
static void on_commit_top(void *ctx, const ooo_commit_ev *e) {
  mfir_capture *c = ctx;
  if (!(e->fid & OOO_FID_WRONG) && (c->commit_hi == UINT64_MAX || e->fid > c->commit_hi)) c->commit_hi = e->fid;
  on_commit(ctx, e);
}

static const ooo_observer observer = {
  .fetch = on_fetch,
  .dispatch = on_dispatch,
  .issue = on_issue,
  .complete = on_complete,
  .commit = on_commit_top,
  .squash = on_squash,
  .slots = on_slots,
  .mem = on_mem,
};

const ooo_observer *mfir_observer(void) { return &observer; }

bool mfir_capture_done(const mfir_capture *c) { return c->done || c->failed; }

/* ---- lifecycle ----------------------------------------------------------------------------------------- */

/* Last writer of every register before the window, from the trace in program order. */
static wi_rc seed_deps(mfir_capture *c, wi_err *err) {
  for (int r = 0; r < RG_NUM; r++) c->last_writer[r] = MFIR_NOFID;
  if (!c->trace || c->start == 0) return WI_OK;
  trace_cursor *cur = trace_cursor_new(c->trace, 0);
  trace_batch b;
  wi_rc rc = WI_OK;
  uint64_t idx = 0;
  while (idx < c->start) {
    if ((rc = trace_cursor_next(cur, &b, err)) || !b.n) break;
    for (size_t i = 0; i < b.n && idx < c->start; i++, idx++) {
      const dec_insn *di = trace_decoded(c->trace, b.insns[i].sid);
      if (!di) continue;
      for (regset_t m = di->dst; m; m &= m - 1) c->last_writer[__builtin_ctzll(m)] = (int64_t)idx;
    }
  }
  trace_cursor_free(cur);
  return rc;
}

mfir_capture *mfir_capture_new(const char *out_path, const trace_t *t, const ooo_config *cfg,
                               const mfir_build_opts *o, wi_err *err) {
  mfir_capture *c = xcalloc(1, sizeof *c);
  c->t_begin = wi_now();
  c->out_path = xstrdup(out_path);
  c->tmp_path = atomic_tmp_path(out_path);
  c->trace = t;
  if (cfg) c->cfg = *cfg;
  else ooo_config_default(&c->cfg);
  if (o) c->opts = *o;
  else c->opts.count = UINT64_MAX;
  c->start = c->opts.start;
  c->end = c->opts.count == UINT64_MAX || c->opts.count > UINT64_MAX - c->start ? UINT64_MAX
                                                                                 : c->start + c->opts.count;
  if (c->end == c->start) {
    wi_fail(err, WI_EINVAL, "mfir: the window is empty (count 0)");
    free(c->out_path);
    free(c->tmp_path);
    free(c);
    return NULL;
  }
  c->started = c->start == 0;
  c->c0 = 0;
  c->last_fid = MFIR_NOFID;
  c->commit_hi = UINT64_MAX;
  c->tlb_fid = UINT64_MAX;
  uint32_t line = mem_line_bytes(&c->cfg.mem);
  c->line_shift = line ? (uint32_t)__builtin_ctz(line) : 6;
  c->pend_c = xcalloc(CAP_RING, sizeof *c->pend_c);
  c->pend_w = xcalloc(CAP_RING, sizeof *c->pend_w);
  c->done_c = xcalloc(CAP_RING, sizeof *c->done_c);
  c->done_w = xcalloc(CAP_RING, sizeof *c->done_w);
  c->wq_rows = xmalloc((size_t)CAP_RING * WC_NUM * sizeof *c->wq_rows);
  c->wq_state = xcalloc(CAP_RING, sizeof *c->wq_state);
  for (uint32_t i = 0; i < CAP_RING; i++) {
    c->pend_c[i].fid = c->pend_w[i].fid = OOO_FID_NONE;
    c->done_c[i].fid = c->done_w[i].fid = MFIR_NOFID;
  }
  map64_init(&c->evict_map, 1024);
  map64_init(&c->pc_map, 1024);
  map64_init(&c->rid_map, 1024);
  c->rid_core = xcalloc(RC_NUM, sizeof *c->rid_core);
  if (t) {
    c->dcache = dec_cache_new(t);
    c->n_static = trace_get_info(t)->n_static;
    c->sid_count = xcalloc(2 * (size_t)c->n_static + 1, sizeof *c->sid_count);
  }
  if (seed_deps(c, err) || mw_open(&c->w, c->tmp_path, c->opts.threaded, err)) {
    mfir_capture_abort(c);
    return NULL;
  }
  c->w.discard = c->opts.dry_run;
  return c;
}

static void capture_free(mfir_capture *c) {
  mw_close(&c->w);
  free(c->pend_c);
  free(c->pend_w);
  free(c->done_c);
  free(c->done_w);
  free(c->wq_rows);
  free(c->wq_state);
  VEC_FREE(c->open);
  VEC_FREE(c->evicts);
  VEC_FREE(c->pcs);
  map64_free(&c->evict_map);
  map64_free(&c->pc_map);
  map64_free(&c->rid_map);
  free(c->rid_core);
  free(c->sid_count);
  dec_cache_free(c->dcache);
  free(c->out_path);
  free(c->tmp_path);
  free(c);
}

void mfir_capture_abort(mfir_capture *c) {
  if (!c) return;
  char *tmp = xstrdup(c->tmp_path);
  capture_free(c);
  unlink(tmp);
  free(tmp);
}

/* ---- finishing: static tables -------------------------------------------------------------------------- */

static wi_rc put_meta(mfir_capture *c, sqlite3_stmt *st, const char *key, const char *text, int64_t num, bool is_num,
                      wi_err *err) {
  sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
  if (is_num) sqlite3_bind_int64(st, 2, num);
  else if (text) sqlite3_bind_text(st, 2, text, -1, SQLITE_TRANSIENT);
  else sqlite3_bind_null(st, 2);
  int rc = sqlite3_step(st);
  sqlite3_reset(st);
  if (rc != SQLITE_DONE) return wi_fail(err, WI_EIO, "mfir: writing meta %s: %s", key, sqlite3_errmsg(c->w.db));
  return WI_OK;
}

static wi_rc write_meta(mfir_capture *c, wi_err *err) {
  sqlite3_stmt *st = NULL;
  if (sqlite3_prepare_v2(c->w.db, "INSERT INTO meta VALUES(?, ?)", -1, &st, NULL) != SQLITE_OK)
    return wi_fail(err, WI_EIO, "mfir: preparing meta: %s", sqlite3_errmsg(c->w.db));
  const trace_info *ti = c->trace ? trace_get_info(c->trace) : NULL;
  char hash[32] = "", cfgh[32];
  if (ti) snprintf(hash, sizeof hash, "%016llx", (unsigned long long)ti->content_hash);
  snprintf(cfgh, sizeof cfgh, "%016llx", (unsigned long long)ooo_config_hash(&c->cfg));
  uint64_t total = c->last_fid == MFIR_NOFID ? 0 : c->r_last + 1 - c->c0;
  wi_rc rc = WI_OK;
#define META_S(k, v) do { if (!rc) rc = put_meta(c, st, k, v, 0, false, err); } while (0)
#define META_N(k, v) do { if (!rc) rc = put_meta(c, st, k, NULL, (int64_t)(v), true, err); } while (0)
  META_N("format", MFIR_FORMAT);
  META_S("whatif_version", WHATIF_VERSION);
  META_S("trace", c->opts.trace_path);
  META_S("trace_hash", ti ? hash : NULL);
  META_S("program", c->trace ? trace_meta(c->trace, "program") : NULL);
  META_S("uarch", c->opts.uarch ? c->opts.uarch : c->cfg.name);
  META_S("config_name", c->cfg.name);
  META_S("config_hash", cfgh);
  META_N("rename_width", c->cfg.core.rename_width);
  META_N("commit_width", c->cfg.core.commit_width);
  META_N("rob", c->cfg.core.rob);
  META_N("window_start", c->start);
  if (c->end == UINT64_MAX) META_S("window_count", NULL);
  else META_N("window_count", c->end - c->start);
  META_N("first_fid", c->start);
  if (c->last_fid == MFIR_NOFID) {
    META_S("last_fid", NULL);
  } else {
    META_N("last_fid", c->last_fid);
  }
  META_N("start_cycle", c->c0);
  META_N("end_cycle", c->r_last);
  META_N("total_cycles", total);
  META_N("insns", c->last_fid == MFIR_NOFID ? 0 : (uint64_t)(c->last_fid + 1) - c->start);
  META_N("wrong_flows", c->n_written_wrong);
  META_N("flushed", c->n_flushed);
  META_N("memtx", c->n_tx);
  META_N("mem_hits", !c->opts.no_mem_hits);
  META_S("wrong_path", c->opts.wrong_dispatched ? "dispatched" : "all");
  META_N("line_bytes", 1u << c->line_shift);
#undef META_S
#undef META_N
  sqlite3_finalize(st);
  return rc;
}

static wi_rc write_kinds(mfir_capture *c, wi_err *err) {
  sqlite3_stmt *st = NULL;
  if (sqlite3_prepare_v2(c->w.db, "INSERT INTO kind VALUES(?, ?, ?)", -1, &st, NULL) != SQLITE_OK)
    return wi_fail(err, WI_EIO, "mfir: preparing kind: %s", sqlite3_errmsg(c->w.db));
  wi_rc rc = WI_OK;
  for (int k = 0; k < MK_END && !rc; k++) {
    const char *name = mfir_kind_name(k);
    if (!strcmp(name, "?")) continue;
    int stage = mfir_kind_stage(k);
    sqlite3_bind_int(st, 1, k);
    sqlite3_bind_text(st, 2, name, -1, SQLITE_STATIC);
    if (stage >= 0) sqlite3_bind_text(st, 3, mfir_stage_name(stage), -1, SQLITE_STATIC);
    else sqlite3_bind_null(st, 3);
    if (sqlite3_step(st) != SQLITE_DONE) rc = wi_fail(err, WI_EIO, "mfir: writing kind: %s", sqlite3_errmsg(c->w.db));
    sqlite3_reset(st);
  }
  sqlite3_finalize(st);
  return rc;
}

static int cmp_pcstat(const void *a, const void *b) {
  uint64_t x = ((const cap_pcstat *)a)->pc, y = ((const cap_pcstat *)b)->pc;
  return x < y ? -1 : x > y;
}

static void bind_text_or_null(sqlite3_stmt *st, int i, const char *s) {
  if (s && *s) sqlite3_bind_text(st, i, s, -1, SQLITE_TRANSIENT);
  else sqlite3_bind_null(st, i);
}

/* Static ids counted directly become pc entries (PCs seen only off the correct path are there). */
static void merge_sid_counts(mfir_capture *c) {
  for (uint32_t sid = 0; sid < c->n_static; sid++) {
    uint64_t n = c->sid_count[2 * (size_t)sid], w = c->sid_count[2 * (size_t)sid + 1];
    if (!n && !w) continue;
    const trace_static *ts = trace_static_at(c->trace, sid);
    uint64_t pc = ts->pc, key = pc ? pc : UINT64_MAX;
    uint32_t *v = map64_get(&c->pc_map, key);
    if (!v) {
      cap_pcstat z = {pc, sid, 0, 0};
      VEC_PUSH(c->pcs, z);
      v = map64_put(&c->pc_map, key, (uint32_t)(c->pcs.n - 1));
    }
    c->pcs.a[*v].count += n;
    c->pcs.a[*v].wrong += w;
    c->pcs.a[*v].sid = sid;
  }
}

static wi_rc write_pcs(mfir_capture *c, wi_err *err) {
  sqlite3_stmt *st = NULL;
  if (sqlite3_prepare_v2(c->w.db, "INSERT INTO pc VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", -1, &st, NULL) !=
      SQLITE_OK)
    return wi_fail(err, WI_EIO, "mfir: preparing pc: %s", sqlite3_errmsg(c->w.db));
  merge_sid_counts(c);
  if (c->pcs.n > 1) qsort(c->pcs.a, c->pcs.n, sizeof *c->pcs.a, cmp_pcstat);
  wi_rc rc = WI_OK;
  for (size_t i = 0; i < c->pcs.n && !rc; i++) {
    const cap_pcstat *s = &c->pcs.a[i];
    const dec_insn *di = NULL;
    uint32_t sid = s->sid;
    if (c->trace) {
      if (sid == UINT32_MAX) sid = trace_sid_of(c->trace, s->pc);
      di = sid != UINT32_MAX ? trace_decoded(c->trace, sid) : dec_cache_get(c->dcache, s->pc);
    }
    sqlite3_bind_int64(st, 1, (int64_t)s->pc);
    if (sid != UINT32_MAX) sqlite3_bind_int64(st, 2, sid);
    else sqlite3_bind_null(st, 2);
    if (di) {
      sqlite3_bind_int(st, 3, di->len);
      bind_text_or_null(st, 4, di->text);
      bind_text_or_null(st, 5, insn_class_name(di->cls));
      bind_text_or_null(st, 6, di->br ? branch_kind_name(di->br) : NULL);
    } else {
      for (int k = 3; k <= 6; k++) sqlite3_bind_null(st, k);
    }
    const trace_sym *sym = c->trace ? trace_sym_lookup(c->trace, s->pc) : NULL;
    bind_text_or_null(st, 7, sym ? sym->name : NULL);
    bind_text_or_null(st, 8, sym ? sym->object : NULL);
    const char *file = NULL;
    uint32_t line = 0;
    if (c->trace && trace_line_lookup(c->trace, s->pc, &file, &line)) {
      bind_text_or_null(st, 9, file);
      sqlite3_bind_int64(st, 10, line);
    } else {
      sqlite3_bind_null(st, 9);
      sqlite3_bind_null(st, 10);
    }
    sqlite3_bind_int64(st, 11, (int64_t)s->count);
    sqlite3_bind_int64(st, 12, (int64_t)s->wrong);
    if (sqlite3_step(st) != SQLITE_DONE) rc = wi_fail(err, WI_EIO, "mfir: writing pc: %s", sqlite3_errmsg(c->w.db));
    sqlite3_reset(st);
  }
  sqlite3_finalize(st);
  return rc;
}

static const char *rid_type(uint32_t rid, int *level) {
  *level = -1;
  if (rid < OOO_RID_BASE) {
    static const char *const mk[] = {"mshr", "set", "queue", "bank", "bus", "tlb", "port"};
    uint32_t kind = rid / 100000u % 10u;
    *level = (int)(rid / 1000000u);
    return kind < WI_ARRAY_LEN(mk) ? mk[kind] : "memory";
  }
  if (rid < OOO_RID_SCHED) return "rob";
  if (rid < OOO_RID_LQ) return "sched";
  if (rid < OOO_RID_SQ) return "lq";
  if (rid < OOO_RID_PORT) return "sq";
  if (rid < OOO_RID_UNIT) return "port";
  if (rid < OOO_RID_FETCH) return "unit";
  if (rid == OOO_RID_PRF_INT || rid == OOO_RID_PRF_VEC) return "prf";
  if (rid == OOO_RID_ICACHE) return "icache";
  if (rid == OOO_RID_BPRED) return "bpred";
  if (rid == OOO_RID_FETCH) return "fetch";
  if (rid == OOO_RID_RENAME) return "rename";
  if (rid == OOO_RID_COMMIT) return "commit";
  return "core";
}

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

static wi_rc write_resources(mfir_capture *c, wi_err *err) {
  sqlite3_stmt *st = NULL;
  if (sqlite3_prepare_v2(c->w.db, "INSERT INTO resource VALUES(?, ?, ?, ?, ?)", -1, &st, NULL) != SQLITE_OK)
    return wi_fail(err, WI_EIO, "mfir: preparing resource: %s", sqlite3_errmsg(c->w.db));
  for (uint32_t i = 0; i < RC_NUM; i++)
    if (c->rid_core[i]) map64_put(&c->rid_map, rid_of_core_slot(i), c->rid_core[i]);
  uint64_t *keys = xmalloc((c->rid_map.n + 1) * sizeof *keys);
  size_t n = 0;
  for (size_t i = 0; i < c->rid_map.cap; i++)
    if (c->rid_map.keys[i]) keys[n++] = c->rid_map.keys[i];
  if (n > 1) qsort(keys, n, sizeof *keys, cmp_u64);
  wi_rc rc = WI_OK;
  for (size_t i = 0; i < n && !rc; i++) {
    uint32_t rid = (uint32_t)keys[i];
    char name[64];
    int level;
    const char *type = rid_type(rid, &level);
    sqlite3_bind_int64(st, 1, rid);
    sqlite3_bind_text(st, 2, mfir_rid_name(rid, name, sizeof name), -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 3, type, -1, SQLITE_STATIC);
    if (level >= 0) sqlite3_bind_int(st, 4, level);
    else sqlite3_bind_null(st, 4);
    sqlite3_bind_int64(st, 5, *map64_get(&c->rid_map, rid));
    if (sqlite3_step(st) != SQLITE_DONE)
      rc = wi_fail(err, WI_EIO, "mfir: writing resource: %s", sqlite3_errmsg(c->w.db));
    sqlite3_reset(st);
  }
  free(keys);
  sqlite3_finalize(st);
  return rc;
}

wi_rc mfir_capture_finish(mfir_capture *c, mfir_build_stats *st, wi_err *err) {
  double t0 = wi_now();
  wi_rc rc = WI_OK;
  if (c->failed) {
    *err = c->err;
    rc = c->err.rc;
  } else if (c->last_fid == MFIR_NOFID) {
    rc = wi_fail(err, WI_EINVAL, "mfir: no instruction of the window committed (start %llu beyond the trace?)",
                 (unsigned long long)c->start);
  }
  if (!rc) {
    squash_flush_group(c);
    slot_flush(c);
    wq_finish(c);
    for (size_t i = c->open.n; i-- > 0;) { /* still in flight */
      c->open.a[i].flags |= TXF_OPEN;
      tx_close_at(c, i, MFIR_NOTIME);
    }
    rc = mw_drain(&c->w, err);
  }
  if (!rc) rc = write_meta(c, err);
  if (!rc) rc = write_kinds(c, err);
  if (!rc) rc = write_pcs(c, err);
  if (!rc) rc = write_resources(c, err);
  if (!rc) rc = mw_exec(&c->w, mw_post_sql, err);
  if (!rc) rc = mw_exec(&c->w, "COMMIT", err);
  if (rc) {
    mfir_capture_abort(c);
    return rc;
  }
  if (st) {
    memset(st, 0, sizeof *st);
    st->insns = (uint64_t)(c->last_fid + 1) - c->start;
    st->wrong = c->n_written_wrong;
    st->flushed = c->n_flushed;
    st->memtx = c->n_tx;
    st->deps = c->n_deps;
    st->slot_rows = c->n_slot_rows;
    for (int t = 0; t < MT_NUM; t++) st->rows += c->w.rows[t];
    st->cycles = c->r_last + 1 - c->c0;
  }
  mw_close(&c->w);
  char *tmp = xstrdup(c->tmp_path), *out = xstrdup(c->out_path);
  double t_begin = c->t_begin;
  capture_free(c);
  if (rename(tmp, out) != 0) {
    rc = wi_fail(err, WI_EIO, "mfir: cannot rename %s to %s", tmp, out);
    unlink(tmp);
  } else if (st) {
    FILE *f = fopen(out, "rb");
    if (f) {
      fseek(f, 0, SEEK_END);
      long sz = ftell(f);
      st->db_bytes = sz > 0 ? (uint64_t)sz : 0;
      fclose(f);
    }
    double t1 = wi_now();
    st->finish_seconds = t1 - t0;
    st->build_seconds = t1 - t_begin;
  }
  free(tmp);
  free(out);
  return rc;
}

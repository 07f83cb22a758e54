/* mfir_hop.c — the hop rule: which node a flow's node waited for, by its binding constraint.
 * Shared by the builder (effective bindings and cycles imposed, stored per stage) and the walks
 * (critical path, root-cause chains), so both agree to the cycle. */
#include "mfir.h"

/* Candidate targets named by a binding: alternatives tried in order (the first known one counts),
 * each with the edge kind it makes. */
typedef struct cand {
  int64_t fid[2];
  int stage[2];
  int kind[2];
  int n;
} cand;

static void add(cand *c, int64_t fid, int stage, int kind) {
  if (fid == MFIR_NOFID || c->n >= 2) return;
  c->fid[c->n] = fid;
  c->stage[c->n] = stage;
  c->kind[c->n] = kind;
  c->n++;
}

static bool is_squash(int kind) { return kind == MK_SQUASH_BRANCH || kind == MK_SQUASH_CLEAR; }

/* Time of the first known candidate not later than t (MFIR_NOTIME if none); its index in *k. */
static uint64_t first_valid(const mfir_rec *r, int stage, const cand *c, mfir_get_fn get, void *ctx, uint64_t t,
                            int *k) {
  for (int i = 0; i < c->n; i++) {
    const mfir_rec *o = c->fid[i] == r->fid ? r : get(ctx, c->fid[i]);
    if (!o || (o == r && c->stage[i] >= stage)) continue;
    uint64_t tt = o->t[c->stage[i]];
    if (tt == MFIR_NOTIME || tt > t) continue;
    *k = i;
    return tt;
  }
  return MFIR_NOTIME;
}

mfir_hop_t mfir_hop(const mfir_rec *r, int stage, mfir_get_fn get, void *ctx) {
  mfir_hop_t h = {MFIR_NOFID, 0, MK_START, OOO_RID_NONE, 0, false};
  if (stage < 0 || stage >= MFIR_NSTAGE) return h;
  uint64_t t = r->t[stage];
  if (t == MFIR_NOTIME) return h;
  int kind = r->kind[stage];
  int64_t by = r->by[stage];
  uint32_t rid = stage == MFIR_F ? OOO_RID_NONE : r->rid[stage];

  if (stage == MFIR_F) {
    /* Fetch: after the previous correct-path fetch, after the redirecting flow resolved (a flow
     * refetched after a machine clear names itself: not a redirect), or after the rename that
     * freed its fetch-queue entry (a full queue) — whichever came last. Ties: the redirect, then
     * the entry (rename runs before fetch in a cycle, so an entry freed in the cycle of the
     * previous fetch was free for this one: fetch bandwidth held it back, not the queue). A
     * wrong-path flow was fetched down the path its mispredicted branch predicted. */
    cand a = {{0, 0}, {0, 0}, {0, 0}, 0}, b = a, q = a;
    if (r->wrong) {
      add(&a, r->by[MFIR_R], MFIR_F, MK_WRONG_PATH);
    } else {
      if (r->kind[MFIR_D] == OB_FRONTEND && r->by[MFIR_D] != MFIR_NOFID && r->by[MFIR_D] != r->fid)
        add(&a, r->by[MFIR_D], MFIR_C, MK_REDIRECT);
      if (r->fid > 0) add(&b, r->fid - 1, MFIR_F, MK_FETCH_ORDER);
      add(&q, r->by[MFIR_F], MFIR_D, MK_FETCH_SLOT);
    }
    int ka = -1, kb = -1, kq = -1;
    uint64_t ta = first_valid(r, stage, &a, get, ctx, t, &ka);
    uint64_t tb = first_valid(r, stage, &b, get, ctx, t, &kb);
    uint64_t tq = first_valid(r, stage, &q, get, ctx, t, &kq);
    const cand *w = NULL;
    int k = -1;
    uint64_t tt = 0;
    if (ta != MFIR_NOTIME && (tb == MFIR_NOTIME || ta >= tb) && (tq == MFIR_NOTIME || ta >= tq)) {
      w = &a, k = ka, tt = ta;
    } else if (tq != MFIR_NOTIME && (tb == MFIR_NOTIME || tq > tb)) {
      w = &q, k = kq, tt = tq;
    } else if (tb != MFIR_NOTIME) {
      w = &b, k = kb, tt = tb;
    }
    if (!w) return h; /* the first flow of the window: the walk ends */
    h.fid = w->fid[k];
    h.stage = w->stage[k];
    h.kind = w->kind[k];
    h.rid = h.kind == MK_REDIRECT    ? r->rid[MFIR_D]
            : h.kind == MK_FETCH_SLOT ? OOO_RID_FETCH
            : h.kind == MK_FETCH_ORDER ? r->rid[MFIR_F] /* an I-cache miss or BTB bubble before it */
                                       : OOO_RID_NONE;
    h.cycles = t - tt;
    return h;
  }

  cand c = {{0, 0}, {0, 0}, {0, 0}, 0};
  int own = kind; /* the kind of an edge to the flow's own previous stage */
  bool late = false; /* the named node comes before the release it stands for */
  switch (stage) {
  case MFIR_D:
    own = OB_FRONTEND;
    switch (kind) {
    case OB_ROB_FULL: case OB_LQ_FULL: case OB_PRF_FULL: case OB_SERIAL:
      add(&c, by, MFIR_R, kind);
      break;
    case OB_SQ_FULL:
      /* A store's entry frees when its write is done, after its commit: named by the stall in
       * effect, it still held the entry then even if it committed before this flow was fetched
       * (a queue full of committed stores waiting for memory). */
      add(&c, by, MFIR_R, kind);
      late = true;
      break;
    case OB_SCHED_FULL: /* the entry frees when its micro-op issues, or when it is squashed */
      add(&c, by, MFIR_I, kind);
      add(&c, by, MFIR_R, kind);
      break;
    case OB_WIDTH: /* rename width used by older instructions: the previous one in program order */
      if (!r->wrong && r->fid > 0) add(&c, r->fid - 1, MFIR_D, kind);
      add(&c, by, MFIR_D, kind);
      break;
    default:
      own = kind; /* front-end delivery: its own fetch */
      break;
    }
    break;
  case MFIR_I:
    own = OB_DISPATCHED;
    switch (kind) {
    case OB_OPERAND: case OB_MSHR:
      add(&c, by, MFIR_C, kind);
      break;
    case OB_PORT: case OB_UNIT:
      add(&c, by, MFIR_I, kind);
      break;
    case OB_MEM_ORDER:
      add(&c, by, MFIR_C, kind);
      add(&c, by, MFIR_I, kind);
      break;
    default:
      own = kind;
      break;
    }
    break;
  case MFIR_C:
    break; /* execution or memory latency after its own issue */
  case MFIR_R:
    if (is_squash(kind)) {
      add(&c, by, MFIR_C, kind);
    } else if (kind == OB_COMMIT_WIDTH || kind == OB_PREV_COMMIT) {
      own = OB_COMPLETION;
      add(&c, by, MFIR_R, kind);
    }
    break;
  }

  /* The flow's own previous reached stage is always a constraint too. */
  int ps = -1;
  for (int s = stage - 1; s >= 0 && ps < 0; s--)
    if (r->t[s] != MFIR_NOTIME && r->t[s] <= t) ps = s;
  int k = -1;
  uint64_t tt = first_valid(r, stage, &c, get, ctx, t, &k);
  /* The last-arriving constraint binds: the named one unless the flow's own previous stage came
   * later (the model's constraint was already met) or the named node is unknown. */
  if (tt != MFIR_NOTIME && (ps < 0 || tt >= r->t[ps] || late)) {
    const mfir_rec *o = c.fid[k] == r->fid ? r : get(ctx, c.fid[k]);
    h.fid = o->fid;
    h.stage = c.stage[k];
    h.kind = c.kind[k];
    h.rid = rid;
    h.cycles = t - tt;
    return h;
  }
  if (ps >= 0) {
    h.fid = r->fid;
    h.stage = ps;
    h.kind = own;
    h.rid = own == kind ? rid : OOO_RID_NONE;
    h.cycles = t - r->t[ps];
    h.corrected = c.n > 0;
    return h;
  }
  return h;
}

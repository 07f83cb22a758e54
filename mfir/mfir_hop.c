/* mfir_hop.c — the hop rule: which node a flow's node waited for, by its binding constraint.
 * Shared by the builder (cycles imposed, stored per binding) and the walks (critical path,
 * root-cause chains), so both agree to the cycle. */
#include "mfir.h"

/* Candidate targets of a node: up to two (fid, stage) pairs tried in order. */
typedef struct cand {
  int64_t fid[2];
  int stage[2];
  int kind[2];             /* edge kind if this candidate is taken (-1: the node's own kind) */
  int n;
} cand;

static void add_k(cand *c, int64_t fid, int stage, int kind) {
  if (fid == MFIR_NOFID || c->n >= 2) return;
  c->fid[c->n] = fid;
  c->stage[c->n] = stage;
  c->kind[c->n] = kind;
  c->n++;
}
static void add(cand *c, int64_t fid, int stage) { add_k(c, fid, stage, -1); }

static bool is_squash(int kind) { return kind == MK_SQUASH_BRANCH || kind == MK_SQUASH_CLEAR; }

mfir_hop_t mfir_hop(const mfir_rec *r, int stage, mfir_get_fn get, void *ctx) {
  mfir_hop_t h = {MFIR_NOFID, 0, MK_START, OOO_RID_NONE, 0};
  if (stage < 0 || stage >= MFIR_NSTAGE) return h;
  uint64_t t = r->t[stage];
  if (t == MFIR_NOTIME) return h;
  int kind = r->kind[stage];
  int64_t by = r->by[stage];
  uint32_t rid = stage == MFIR_F ? OOO_RID_NONE : r->rid[stage];
  cand c = {{0, 0}, {0, 0}, {0, 0}, 0};

  switch (stage) {
  case MFIR_F:
    if (r->wrong) {
      /* A wrong-path flow was fetched down the path its mispredicted branch predicted. */
      kind = MK_WRONG_PATH;
      add(&c, r->by[MFIR_R], MFIR_F);
    } else {
      /* Delivery after a redirect: fetch restarted when the redirecting flow resolved (a flow
       * refetched after a machine clear names itself: fetch order then). */
      kind = MK_FETCH_ORDER;
      if (r->kind[MFIR_D] == OB_FRONTEND && r->by[MFIR_D] != MFIR_NOFID && r->by[MFIR_D] != r->fid)
        add_k(&c, r->by[MFIR_D], MFIR_C, MK_REDIRECT);
      if (r->fid > 0) add_k(&c, r->fid - 1, MFIR_F, MK_FETCH_ORDER);
    }
    break;
  case MFIR_D:
    switch (kind) {
    case OB_ROB_FULL: case OB_LQ_FULL: case OB_SQ_FULL: case OB_PRF_FULL: case OB_SERIAL:
      add(&c, by, MFIR_R);
      break;
    case OB_SCHED_FULL: /* the entry frees when its micro-op issues, or when it is squashed */
      add(&c, by, MFIR_I);
      add(&c, by, MFIR_R);
      break;
    case OB_WIDTH:
      add(&c, by, MFIR_D);
      break;
    default:
      break; /* front-end delivery: own fetch */
    }
    break;
  case MFIR_I:
    switch (kind) {
    case OB_OPERAND: case OB_MSHR:
      add(&c, by, MFIR_C);
      break;
    case OB_PORT: case OB_UNIT:
      add(&c, by, MFIR_I);
      break;
    case OB_MEM_ORDER:
      add(&c, by, MFIR_C);
      add(&c, by, MFIR_I);
      break;
    default:
      break; /* ready at dispatch: own dispatch */
    }
    break;
  case MFIR_C:
    break; /* execution or memory latency after its own issue */
  case MFIR_R:
    if (is_squash(kind)) add(&c, by, MFIR_C);
    else if (kind == OB_COMMIT_WIDTH || kind == OB_PREV_COMMIT) add(&c, by, MFIR_R);
    break;
  }

  for (int k = 0; k < c.n; k++) {
    const mfir_rec *o = c.fid[k] == r->fid ? r : get(ctx, c.fid[k]);
    if (!o) continue;
    if (o == r && c.stage[k] >= stage) continue;
    uint64_t tt = o->t[c.stage[k]];
    if (tt == MFIR_NOTIME || tt > t) continue;
    h.fid = o->fid;
    h.stage = c.stage[k];
    h.kind = c.kind[k] >= 0 ? c.kind[k] : kind;
    h.rid = h.kind == MK_REDIRECT ? r->rid[MFIR_D] : rid;
    h.cycles = t - tt;
    return h;
  }
  /* Fallback: the flow's own previous reached stage. */
  for (int s = stage - 1; s >= 0; s--) {
    if (r->t[s] == MFIR_NOTIME || r->t[s] > t) continue;
    h.fid = r->fid;
    h.stage = s;
    h.kind = stage == MFIR_F ? MK_START : kind;
    h.rid = rid;
    h.cycles = t - r->t[s];
    return h;
  }
  h.kind = MK_START;
  return h;
}

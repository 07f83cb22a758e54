/* mfir_stacks.c — per-instruction cycle stacks at commit (time-proportional): every cycle of the
 * window goes to the instruction that commits next and to what it was waiting for in that
 * cycle, so the stacks sum to the window's cycles. */
#include <stdlib.h>
#include <string.h>

#include "mfir_int.h"

/* Cycles of [lo, hi) (empty when hi <= lo). */
static inline uint64_t span(uint64_t lo, uint64_t hi) { return hi > lo ? hi - lo : 0; }

static int cmp_stack(const void *a, const void *b) {
  const mfir_stack_pc *x = a, *y = b;
  if (x->cycles != y->cycles) return x->cycles > y->cycles ? -1 : 1;
  return x->pc < y->pc ? -1 : x->pc > y->pc;
}

typedef struct stk_ctx {
  mfir_db *d;
  mfir_stacks *out;
  wi_map64 map;            /* pc -> index into pcs */
  VEC(mfir_stack_pc) pcs;
  uint64_t lo;             /* first cycle not yet attributed */
  int64_t expect;          /* next fid */
  wi_err *err;
  wi_rc rc;
} stk_ctx;

static inline uint64_t v_time(int64_t v) { return v == MW_NULL ? MFIR_NOTIME : (uint64_t)v; }

/* rd_scan of cflow, in fid order: one instruction's cycles. */
static int stack_row(void *vctx, int64_t rowid, const int64_t *v, int ncols) {
  (void)rowid;
  (void)ncols;
  stk_ctx *x = vctx;
  int64_t fid = v[FC_FID];
  uint64_t pc = (uint64_t)v[FC_PC];
  uint64_t t[MFIR_NSTAGE];
  for (int k = 0; k < MFIR_NSTAGE; k++) t[k] = v_time(v[FC_FETCH + k]);
  int kind[4];
  static const int dflt[4] = {OB_FRONTEND, OB_DISPATCHED, OB_EXEC, OB_COMPLETION};
  for (int k = 0; k < 4; k++) {
    int64_t kv = v[FC_D_KIND + 4 * k];
    kind[k] = kv <= OB_NONE || kv >= MK_END ? dflt[k] : (int)kv; /* NULL (MW_NULL) is below */
  }
  if (fid != x->expect || t[MFIR_R] == MFIR_NOTIME) {
    x->rc = wi_fail(x->err, WI_ECORRUPT, "%s: flow %lld: committed flows must be contiguous and have a retire cycle",
                    x->d->path, (long long)fid);
    return 1;
  }
  x->expect++;
  uint64_t r = t[MFIR_R], lo = x->lo;
  /* Effective stage times, monotone and within the commit (stages an instruction skipped, such
   * as issue of an eliminated move, take the time of the one before). */
  uint64_t dd = t[MFIR_D] == MFIR_NOTIME ? (t[MFIR_F] == MFIR_NOTIME ? lo : t[MFIR_F]) : t[MFIR_D];
  uint64_t ii = t[MFIR_I] == MFIR_NOTIME ? dd : t[MFIR_I];
  uint64_t cc = t[MFIR_C] == MFIR_NOTIME ? ii : t[MFIR_C];
  dd = WI_MIN(dd, r);
  ii = WI_MIN(WI_MAX(ii, dd), r);
  cc = WI_MIN(WI_MAX(cc, ii), r);
  uint64_t part[5] = {0, 0, 0, 0, 0};
  if (r >= lo) {
    part[0] = span(lo, dd);                 /* not yet dispatched */
    part[1] = span(WI_MAX(lo, dd), ii);     /* waiting to issue */
    part[2] = span(WI_MAX(lo, ii), cc);     /* executing */
    part[3] = span(WI_MAX(lo, cc), r);      /* completed, not committed */
    part[4] = 1;                            /* the commit cycle */
    x->lo = r + 1;
  }
  uint32_t *ix = map64_get(&x->map, pc ? pc : UINT64_MAX);
  if (!ix) {
    mfir_stack_pc z;
    memset(&z, 0, sizeof z);
    z.pc = pc;
    VEC_PUSH(x->pcs, z);
    ix = map64_put(&x->map, pc ? pc : UINT64_MAX, (uint32_t)(x->pcs.n - 1));
  }
  mfir_stack_pc *p = &x->pcs.a[*ix];
  p->count++;
  for (int k = 0; k < 5; k++) {
    if (!part[k]) continue;
    int kd = k < 4 ? kind[k] : MK_BASE;
    p->by_kind[kd] += part[k];
    p->cycles += part[k];
    x->out->by_kind[kd] += part[k];
    x->out->total += part[k];
  }
  return 0;
}

wi_rc mfir_cycle_stacks(mfir_db *d, mfir_stacks *out, wi_err *err) {
  memset(out, 0, sizeof *out);
  stk_ctx x;
  memset(&x, 0, sizeof x);
  x.d = d;
  x.out = out;
  x.lo = d->win.start_cycle;
  x.expect = d->win.first_fid;
  x.err = err;
  map64_init(&x.map, 1024);
  wi_rc rc = rd_scan(d, MT_FLOW, FC_R_KIND + 1, stack_row, &x, err);
  if (!rc) rc = x.rc;
  if (!rc && x.expect != d->win.last_fid + 1)
    rc = wi_fail(err, WI_ECORRUPT, "%s: flow table ends at %lld, meta says %lld", d->path, (long long)(x.expect - 1),
                 (long long)d->win.last_fid);
  map64_free(&x.map);
  if (rc) {
    VEC_FREE(x.pcs);
    memset(out, 0, sizeof *out);
    return rc;
  }
  if (x.pcs.n > 1) qsort(x.pcs.a, x.pcs.n, sizeof *x.pcs.a, cmp_stack);
  out->pcs = x.pcs.a;
  out->n_pcs = x.pcs.n;
  return WI_OK;
}

void mfir_stacks_free(mfir_stacks *s) {
  if (!s) return;
  free(s->pcs);
  memset(s, 0, sizeof *s);
}

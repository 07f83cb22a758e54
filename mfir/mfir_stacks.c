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

wi_rc mfir_cycle_stacks(mfir_db *d, mfir_stacks *out, wi_err *err) {
  memset(out, 0, sizeof *out);
  sqlite3_stmt *st = NULL;
  wi_rc rc = rd_prepare(d,
                        "SELECT fid, pc, fetch, dispatch, issue, complete, retire, d_kind, i_kind, c_kind, r_kind"
                        " FROM cflow ORDER BY fid",
                        &st, err);
  if (rc) return rc;
  wi_map64 map;
  map64_init(&map, 1024);
  VEC(mfir_stack_pc) pcs = {0};
  uint64_t lo = d->win.start_cycle; /* first cycle not yet attributed */
  int64_t expect = d->win.first_fid;
  int s;
  while ((s = sqlite3_step(st)) == SQLITE_ROW) {
    int64_t fid = sqlite3_column_int64(st, 0);
    uint64_t pc = (uint64_t)sqlite3_column_int64(st, 1);
    uint64_t t[MFIR_NSTAGE];
    for (int k = 0; k < MFIR_NSTAGE; k++)
      t[k] = sqlite3_column_type(st, 2 + k) == SQLITE_NULL ? MFIR_NOTIME : (uint64_t)sqlite3_column_int64(st, 2 + k);
    int kind[4];
    static const int dflt[4] = {OB_FRONTEND, OB_DISPATCHED, OB_EXEC, OB_COMPLETION};
    for (int k = 0; k < 4; k++) {
      kind[k] = sqlite3_column_int(st, 7 + k);
      if (kind[k] <= OB_NONE || kind[k] >= MK_END) kind[k] = dflt[k];
    }
    if (fid != expect || t[MFIR_R] == MFIR_NOTIME) {
      rc = wi_fail(err, WI_ECORRUPT, "%s: flow %lld: committed flows must be contiguous and have a retire cycle",
                   d->path, (long long)fid);
      break;
    }
    expect++;
    uint64_t r = t[MFIR_R];
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
      lo = r + 1;
    }
    uint32_t *v = map64_get(&map, pc ? pc : UINT64_MAX);
    if (!v) {
      mfir_stack_pc z;
      memset(&z, 0, sizeof z);
      z.pc = pc;
      VEC_PUSH(pcs, z);
      v = map64_put(&map, pc ? pc : UINT64_MAX, (uint32_t)(pcs.n - 1));
    }
    mfir_stack_pc *p = &pcs.a[*v];
    p->count++;
    for (int k = 0; k < 5; k++) {
      if (!part[k]) continue;
      int kd = k < 4 ? kind[k] : MK_BASE;
      p->by_kind[kd] += part[k];
      p->cycles += part[k];
      out->by_kind[kd] += part[k];
      out->total += part[k];
    }
  }
  if (!rc && s != SQLITE_DONE) rc = wi_fail(err, WI_ECORRUPT, "%s: reading flows: %s", d->path, sqlite3_errmsg(d->db));
  if (!rc && expect != d->win.last_fid + 1)
    rc = wi_fail(err, WI_ECORRUPT, "%s: flow table ends at %lld, meta says %lld", d->path, (long long)(expect - 1),
                 (long long)d->win.last_fid);
  sqlite3_finalize(st);
  map64_free(&map);
  if (rc) {
    VEC_FREE(pcs);
    memset(out, 0, sizeof *out);
    return rc;
  }
  if (pcs.n > 1) qsort(pcs.a, pcs.n, sizeof *pcs.a, cmp_stack);
  out->pcs = pcs.a;
  out->n_pcs = pcs.n;
  return WI_OK;
}

void mfir_stacks_free(mfir_stacks *s) {
  if (!s) return;
  free(s->pcs);
  memset(s, 0, sizeof *s);
}

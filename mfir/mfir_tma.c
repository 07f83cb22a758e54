/* mfir_tma.c — exact top-down (level 1 and 2) from MFIR: unfilled slots from the slot records,
 * filled slots by the fate of the flow that took them (committed: retiring; squashed: bad
 * speculation by the squash's cause). */
#include <string.h>

#include "mfir_int.h"

void mfir_topdown_from_slots(const uint64_t slots[OOO_SLOT_NUM], ooo_topdown *td) {
  /* The same arithmetic as ooo_get_topdown (level 2 first, level 1 as their sums), so equal slot
   * counts give bit-identical fractions. */
  memset(td, 0, sizeof *td);
  uint64_t total = 0;
  for (int k = 0; k < OOO_SLOT_NUM; k++) total += slots[k];
  if (!total) return;
  double t = (double)total;
  td->retiring = (double)slots[OOO_SLOT_RETIRING] / t;
  td->branch_mispredicts = (double)slots[OOO_SLOT_BAD_BRANCH] / t;
  td->machine_clears = (double)slots[OOO_SLOT_BAD_CLEAR] / t;
  td->bad_speculation = td->branch_mispredicts + td->machine_clears;
  td->fe_latency = (double)slots[OOO_SLOT_FE_LATENCY] / t;
  td->fe_bandwidth = (double)slots[OOO_SLOT_FE_BANDWIDTH] / t;
  td->frontend_bound = td->fe_latency + td->fe_bandwidth;
  td->memory_bound = (double)slots[OOO_SLOT_BE_MEMORY] / t;
  td->core_bound = (double)slots[OOO_SLOT_BE_CORE] / t;
  td->backend_bound = td->memory_bound + td->core_bound;
}

/* Run a query returning rows of (category-ish key, sum); add sums via map(). */
static wi_rc sum_query(mfir_db *d, const char *sql, uint64_t *out, int n_out, bool keyed, wi_err *err) {
  sqlite3_stmt *st = NULL;
  wi_rc rc = rd_prepare(d, sql, &st, err);
  if (rc) return rc;
  int s;
  while ((s = sqlite3_step(st)) == SQLITE_ROW) {
    if (keyed) {
      int k = sqlite3_column_int(st, 0);
      if (k >= 0 && k < n_out) out[k] += (uint64_t)sqlite3_column_int64(st, 1);
    } else {
      for (int k = 0; k < n_out; k++) out[k] += (uint64_t)sqlite3_column_int64(st, k);
    }
  }
  if (s != SQLITE_DONE) rc = wi_fail(err, WI_ECORRUPT, "%s: top-down query: %s", d->path, sqlite3_errmsg(d->db));
  sqlite3_finalize(st);
  return rc;
}

wi_rc mfir_topdown(mfir_db *d, mfir_tma *out, wi_err *err) {
  memset(out, 0, sizeof *out);
  uint64_t *s = out->slots;
  wi_rc rc = sum_query(d,
                       "SELECT coalesce(sum(retiring * n_cycles), 0), coalesce(sum(bad_branch * n_cycles), 0),"
                       " coalesce(sum(bad_clear * n_cycles), 0), coalesce(sum(fe_latency * n_cycles), 0),"
                       " coalesce(sum(fe_bandwidth * n_cycles), 0), coalesce(sum(be_memory * n_cycles), 0),"
                       " coalesce(sum(be_core * n_cycles), 0) FROM slot",
                       s, OOO_SLOT_NUM, false, err);
  _Static_assert(OOO_SLOT_RETIRING == 0 && OOO_SLOT_BAD_BRANCH == 1 && OOO_SLOT_BAD_CLEAR == 2 &&
                     OOO_SLOT_FE_LATENCY == 3 && OOO_SLOT_FE_BANDWIDTH == 4 && OOO_SLOT_BE_MEMORY == 5 &&
                     OOO_SLOT_BE_CORE == 6,
                 "slot columns follow the category order");
  uint64_t ret = 0, sq[2] = {0, 0};
  if (!rc) rc = sum_query(d, "SELECT coalesce(sum(slots), 0) FROM cflow", &ret, 1, false, err);
  if (!rc)
    rc = sum_query(d, "SELECT r_kind - 43, coalesce(sum(slots), 0) FROM wflow GROUP BY r_kind", sq, 2,
                   true, err);
  if (!rc) rc = sum_query(d, "SELECT cause, coalesce(sum(slots), 0) FROM flush GROUP BY cause", sq, 2, true, err);
  if (rc) return rc;
  s[OOO_SLOT_RETIRING] += ret;
  s[OOO_SLOT_BAD_BRANCH] += sq[0];
  s[OOO_SLOT_BAD_CLEAR] += sq[1];
  for (int k = 0; k < OOO_SLOT_NUM; k++) out->total += s[k];
  mfir_topdown_from_slots(s, &out->td);
  return WI_OK;
}

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

/* rd_scan callbacks: slots by category. */
static int sum_slot(void *ctx, int64_t rowid, const int64_t *v, int ncols) {
  (void)rowid;
  (void)ncols;
  uint64_t *s = ctx, n = v[1] == MW_NULL ? 0 : (uint64_t)v[1]; /* n_cycles; then a column per category */
  for (int k = 0; k < OOO_SLOT_NUM; k++)
    if (v[2 + k] != MW_NULL) s[k] += (uint64_t)v[2 + k] * n;
  return 0;
}

static int sum_retiring(void *ctx, int64_t rowid, const int64_t *v, int ncols) {
  (void)rowid;
  (void)ncols;
  if (v[FC_SLOTS] != MW_NULL) ((uint64_t *)ctx)[OOO_SLOT_RETIRING] += (uint64_t)v[FC_SLOTS];
  return 0;
}

/* Squashed flows: bad speculation by the squash's cause. */
static int sum_wrong(void *ctx, int64_t rowid, const int64_t *v, int ncols) {
  (void)rowid;
  (void)ncols;
  if (v[WC_SLOTS] == MW_NULL || v[WC_R_KIND] == MW_NULL) return 0;
  if (v[WC_R_KIND] == MK_SQUASH_BRANCH) ((uint64_t *)ctx)[OOO_SLOT_BAD_BRANCH] += (uint64_t)v[WC_SLOTS];
  else if (v[WC_R_KIND] == MK_SQUASH_CLEAR) ((uint64_t *)ctx)[OOO_SLOT_BAD_CLEAR] += (uint64_t)v[WC_SLOTS];
  return 0;
}

static int sum_flush(void *ctx, int64_t rowid, const int64_t *v, int ncols) {
  (void)rowid;
  (void)ncols;
  if (v[7] == MW_NULL || v[9] == MW_NULL) return 0; /* slots, cause */
  if (v[9] == 0) ((uint64_t *)ctx)[OOO_SLOT_BAD_BRANCH] += (uint64_t)v[7];
  else if (v[9] == 1) ((uint64_t *)ctx)[OOO_SLOT_BAD_CLEAR] += (uint64_t)v[7];
  return 0;
}

wi_rc mfir_topdown(mfir_db *d, mfir_tma *out, wi_err *err) {
  memset(out, 0, sizeof *out);
  uint64_t *s = out->slots;
  _Static_assert(OOO_SLOT_RETIRING == 0 && OOO_SLOT_BAD_BRANCH == 1 && OOO_SLOT_BAD_CLEAR == 2 &&
                     OOO_SLOT_FE_LATENCY == 3 && OOO_SLOT_FE_BANDWIDTH == 4 && OOO_SLOT_BE_MEMORY == 5 &&
                     OOO_SLOT_BE_CORE == 6,
                 "slot columns follow the category order");
  wi_rc rc = rd_scan(d, MT_SLOT, 2 + OOO_SLOT_NUM, sum_slot, s, err);
  if (!rc) rc = rd_scan(d, MT_FLOW, FC_SLOTS + 1, sum_retiring, s, err);
  if (!rc) rc = rd_scan(d, MT_WFLOW, WC_R_KIND + 1, sum_wrong, s, err);
  if (!rc) rc = rd_scan(d, MT_FLUSH, 10, sum_flush, s, err);
  if (rc) {
    memset(out, 0, sizeof *out);
    return rc;
  }
  for (int k = 0; k < OOO_SLOT_NUM; k++) out->total += s[k];
  mfir_topdown_from_slots(s, &out->td);
  return WI_OK;
}

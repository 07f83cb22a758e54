/* mfir_names.c — names of MFIR edge kinds, stages and resource ids. */
#include <stdio.h>
#include <string.h>

#include "mfir.h"

/* Kind ids are the model's OB_* values (0 .. OB_NUM-1) followed by MFIR's MK_* values. */
static const struct {
  int id;
  const char *name;
  int stage;
} kinds[] = {
  {OB_NONE, "none", -1},
  {OB_FRONTEND, "frontend", MFIR_D},
  {OB_ROB_FULL, "rob_full", MFIR_D},
  {OB_SCHED_FULL, "sched_full", MFIR_D},
  {OB_LQ_FULL, "lq_full", MFIR_D},
  {OB_SQ_FULL, "sq_full", MFIR_D},
  {OB_PRF_FULL, "prf_full", MFIR_D},
  {OB_WIDTH, "width", MFIR_D},
  {OB_SERIAL, "serialize", MFIR_D},
  {OB_DISPATCHED, "dispatched", MFIR_I},
  {OB_OPERAND, "operand", MFIR_I},
  {OB_PORT, "port", MFIR_I},
  {OB_UNIT, "unit", MFIR_I},
  {OB_MEM_ORDER, "mem_order", MFIR_I},
  {OB_MSHR, "mshr", MFIR_I},
  {OB_EXEC, "exec", MFIR_C},
  {OB_L1, "l1", MFIR_C},
  {OB_L2, "l2", MFIR_C},
  {OB_LLC, "llc", MFIR_C},
  {OB_DRAM, "dram", MFIR_C},
  {OB_FORWARD, "forward", MFIR_C},
  {OB_COMPLETION, "completion", MFIR_R},
  {OB_COMMIT_WIDTH, "commit_width", MFIR_R},
  {OB_PREV_COMMIT, "prev_commit", MFIR_R},
  {MK_FETCH_ORDER, "fetch_order", MFIR_F},
  {MK_REDIRECT, "redirect", MFIR_F},
  {MK_WRONG_PATH, "wrong_path", MFIR_F},
  {MK_SQUASH_BRANCH, "squash_branch", MFIR_R},
  {MK_SQUASH_CLEAR, "squash_clear", MFIR_R},
  {MK_START, "start", -1},
  {MK_EVICTED, "evicted", -1},
  {MK_BASE, "base", -1},
  {MK_FETCH_SLOT, "fetch_slot", MFIR_F},
};
_Static_assert((int)OB_NUM <= (int)MK_FETCH_ORDER, "MFIR kinds must follow the model's binding kinds");
_Static_assert(MK_END < 256, "kinds are stored in a byte");

const char *mfir_kind_name(int kind) {
  for (size_t i = 0; i < WI_ARRAY_LEN(kinds); i++)
    if (kinds[i].id == kind) return kinds[i].name;
  return "?";
}

int mfir_kind_from_name(const char *name) {
  for (size_t i = 0; i < WI_ARRAY_LEN(kinds); i++)
    if (!strcmp(kinds[i].name, name)) return kinds[i].id;
  return -1;
}

int mfir_kind_stage(int kind) {
  /* Hot (the capture asks per event): the model's kinds by their contiguous ranges. */
  if (kind > OB_NONE && kind <= OB_SERIAL) return MFIR_D;
  if (kind >= OB_DISPATCHED && kind <= OB_MSHR) return MFIR_I;
  if (kind >= OB_EXEC && kind <= OB_FORWARD) return MFIR_C;
  if (kind >= OB_COMPLETION && kind <= OB_PREV_COMMIT) return MFIR_R;
  for (size_t i = 0; i < WI_ARRAY_LEN(kinds); i++)
    if (kinds[i].id == kind) return kinds[i].stage;
  return -1;
}

const char *mfir_stage_name(int stage) {
  static const char *const names[MFIR_NSTAGE] = {"F", "D", "I", "C", "R"};
  return stage >= 0 && stage < MFIR_NSTAGE ? names[stage] : "?";
}

const char *mfir_rid_name(uint32_t rid, char *buf, size_t n) { return ooo_rid_name(rid, buf, n); }

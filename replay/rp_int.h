/* rp_int.h — private layouts shared by the replay module's files (rp_base.c, rp_plan.c,
 * rp_sweep.c). */
#ifndef WHATIF_RP_INT_H
#define WHATIF_RP_INT_H

#include "replay.h"

#define RP_NEVER UINT32_MAX /* first-entry value of something that never entered the model */

struct rp_base {
  const trace_t *t;
  ooo_config cfg;
  rp_base_opts o;
  uint32_t n_static;
  uint64_t n_insns;
  unsigned nobind;            /* OOO_NO_BINDINGS when no model of this baseline or its replays
                                 can get an observer (see rp_base_opts.keep_bindings), else 0 */
  /* static instructions sorted by pc (for range and function matches) */
  uint64_t *spc;
  uint32_t *ssid;
  /* the pristine model (state at instruction 0) and the finished baseline */
  ooo_model *fresh;
  ooo_model *final;
  double seconds;
  bool ran;
  /* snapshots: snap[i] was taken when snap_commit[i] instructions had committed; correct-path
   * instructions with index >= snap_entered[i] had not entered the model yet (as seen by the
   * recording filter, which is exactly what a replay's filter would have seen) */
  ooo_model **snap;
  uint64_t *snap_commit, *snap_entered;
  size_t n_snap;
  uint64_t interval;          /* committed instructions between snapshots */
  /* first entries: the number of snapshots taken before the first instance entered */
  uint32_t *first_sid;        /* n_static entries */
  uint64_t *wp_pc;            /* wrong-path-only PCs, sorted */
  uint32_t *wp_first;
  size_t n_wp;
  /* per-interval statistics */
  rp_interval *ivl;
  size_t n_ivl;
};

/* A filter modification together with its interval of application. */
typedef struct rp_range_mod {
  uint64_t lo, hi;
  ooo_mod mod;
} rp_range_mod;

struct rp_plan {
  const rp_base *b;
  ooo_config cfg;             /* the edited configuration */
  bool cfg_changed;           /* configuration-level interventions present */
  int perfect;                /* RP_LVL_* bits: memory-system perfect settings */
  bool has_stream;            /* anything for the filter */
  uint64_t *sid_bits;         /* bit per sid: has a static modification */
  uint32_t *msid;             /* sorted sids with modifications */
  ooo_mod *mmod;
  size_t nm;
  rp_range_mod *pr;           /* PC ranges (for wrong-path PCs outside the static table) */
  size_t npr;
  rp_range_mod *ir;           /* correct-path index ranges */
  size_t nir;
  rp_hook_fn hook;
  void *hook_ctx;
  char *text;
};

/* Merge modification a into out (flags or-ed, added latencies summed, a set latency wins). */
static inline void rp_mod_merge(ooo_mod *out, const ooo_mod *a) {
  out->drop |= a->drop;
  out->nop |= a->nop;
  out->perfect_branch |= a->perfect_branch;
  out->perfect_mem |= a->perfect_mem;
  out->lat_add += a->lat_add;
  if (a->lat_set >= 0) out->lat_set = a->lat_set;
}

/* The "nothing" modification. */
static inline void rp_mod_none(ooo_mod *m) {
  m->drop = m->nop = m->perfect_branch = m->perfect_mem = false;
  m->lat_add = 0;
  m->lat_set = -1;
}

/* The static id of an instruction entering the model (wrong-path PCs may come without one). */
static inline uint32_t rp_sid_of(const trace_t *t, uint32_t n_static, const trace_insn *ti) {
  if (ti->sid < n_static) return ti->sid;
  return trace_sid_of(t, ti->pc);
}

#endif

/* ooo.h — the detailed out-of-order core model: machine configuration, model lifecycle, run
 * control, checkpoints, interventions on the instruction stream, observers and statistics.
 *
 * The model is trace-driven with a real wrong path. Each cycle, in this order:
 *   1. the memory system advances (mem_advance) and reports finished misses;
 *   2. micro-ops whose execution finishes this cycle complete: consumers wake up, branches
 *      resolve (a misprediction squashes everything younger, repairs history and RAS per the
 *      configured policy and redirects fetch after frontend.mispredict_penalty cycles), store
 *      addresses resolve (a younger load that already read the same bytes causes a machine
 *      clear: flush and refetch from that load);
 *   3. up to core.commit_width instructions commit in order (stores then drain to L1 in order,
 *      core.store_drain_width lines per cycle);
 *   4. every port issues its oldest ready micro-op (ports are bound at dispatch to the least
 *      loaded port that can run the micro-op; unpipelined units block their next use for
 *      `occupancy` cycles);
 *   5. up to core.rename_width slots of instructions are renamed and dispatched into ROB,
 *      schedulers and load/store queues (zero idioms and eliminated moves take no port);
 *   6. fetch follows the branch predictor: on the recorded path it reads the trace; when the
 *      prediction differs from the trace it keeps fetching down the predicted path by decoding
 *      the trace's code image (frontend.wrong_path policy).
 * When nothing can progress before cycle T the model jumps to T (cycle skipping).
 *
 * Micro-ops. An instruction of class C expands into the configured micro-ops of C (a dependent
 * chain: sources feed the first, each next one consumes the previous), plus one load micro-op
 * per memory read (before the chain; the load ports; latency from the memory system) and a
 * store-address and a store-data micro-op per memory write (ports.sta / ports.std).
 * Rename slots: max(1, computation micro-ops + stores) (a load micro-fuses with its consumer,
 * a store address with its data). Collapsed rep-string runs (TI_REP) are modelled as fast
 * strings: the class's micro-ops (startup) plus one load micro-op occupying its port for
 * bytes / core.rep_bytes_per_cycle cycles, and one store entry whose lines drain after commit.
 *
 * Memory dependences. Store addresses come from the trace. A load may issue before older
 * stores whose address micro-op has not executed; if one of them writes bytes the load read,
 * the store's address execution raises a machine clear (flush from the load, refetch after
 * frontend.machine_clear_penalty cycles) and the load's PC is marked in a load-wait table
 * (core.mem_dep = "predict", Alpha 21264 style; the table is cleared every core.mdp_reset
 * cycles): marked loads wait until all older store addresses are known. A load that finds the
 * youngest older overlapping store with a known address takes its data by forwarding
 * (core.stlf_latency cycles, after the store data), or, when the store does not cover it,
 * after core.stlf_fail_penalty more cycles. A load the memory system refuses (MEM_BLOCKED:
 * MSHRs or queues full) keeps its port slot and retries later; refused loads retry oldest
 * first and stop at the first one refused again.
 *
 * Front-end details. Fetch reads a line through the memory system (MREQ_IFETCH) unless the
 * line is held by the uop cache (frontend.uop_cache_lines, direct mapped), whose hits skip the
 * L1I like a decoded-uop cache. A taken direct branch that misses the BTB costs a decoder
 * redirect bubble (frontend.btb_miss_penalty). Conditional branches: TAGE (or gshare /
 * bimodal); indirect: a tagged target table indexed by pc and history, then the BTB; returns:
 * the RAS. Wrong-path branches follow the predictor (they are not resolved against anything)
 * and wrong-path calls and returns push and pop the RAS. History and RAS are checkpointed at
 * each correct-path branch and repaired per bpred.ras_repair on a squash. Predictors train at
 * commit. Wrong-path policies: normal; off (fetch stops at a mispredicted branch until it
 * resolves); cap (at most frontend.wrong_path_cap wrong-path instructions); confidence
 * (pipeline gating, Manne et al., ISCA 1998: a JRS table of resetting counters indexed by
 * pc ^ history marks conditional branches low-confidence; fetch stops while more than
 * bpred.conf_gate of them are unresolved, and resumes when one resolves or is squashed).
 *
 * Top-down (Yasin's level 1 and 2 from rename slots): a filled slot is retiring if its
 * instruction commits, bad speculation if it is squashed; an empty slot is bad speculation
 * while the front-end recovers from a squash, back-end bound when rename stopped on a full
 * resource (memory bound if the oldest instruction waits for a load that missed L1 or the
 * store queue holds committed stores still writing, else core bound), front-end bound
 * otherwise (latency if nothing was renamed that cycle, else bandwidth).

 * State. Everything that evolves lives in one block (no pointers inside) that ooo_copy copies
 * with memcpy, plus the memory system's block (mem_copy) and the trace position. Caches of
 * decoded instructions and micro-op templates are not state. No globals, no randomness: the
 * same configuration, trace and filter give identical results in any thread. */
#ifndef WHATIF_OOO_H
#define WHATIF_OOO_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "bpred.h"
#include "insn.h"
#include "memsys.h"
#include "obs.h"
#include "params.h"
#include "trace.h"
#include "util.h"

/* ---- configuration --------------------------------------------------------------------------- */

#define OOO_MAX_PORTS 32
#define OOO_MAX_CLASS_UOPS 4

enum { WP_NORMAL = 0, WP_OFF, WP_CAP, WP_CONFIDENCE, WP_NUM }; /* frontend.wrong_path */
enum { MDP_PREDICT = 0, MDP_SPECULATE, MDP_CONSERVATIVE, MDP_NUM }; /* core.mem_dep */

typedef struct ooo_uop_spec {
  uint32_t ports;      /* bit p: port P<p> can execute it */
  uint32_t latency;    /* cycles from issue to result */
  uint32_t occupancy;  /* cycles the unit stays busy (1 = pipelined; >1 blocks the unit) */
} ooo_uop_spec;

/* Micro-ops of one operation class (computation only; memory micro-ops are added per access). */
typedef struct ooo_class_spec {
  uint32_t n;          /* 0: no computation micro-op (eliminated, or memory only) */
  ooo_uop_spec u[OOO_MAX_CLASS_UOPS];
} ooo_class_spec;

typedef struct ooo_fe_config {
  uint32_t fetch_width;           /* instructions per cycle */
  uint32_t fetch_bytes;           /* instruction bytes per cycle */
  uint32_t fetch_taken;           /* predicted-taken branches per cycle */
  uint32_t fetch_queue;           /* instructions between fetch and rename (decode pipe + IDQ) */
  uint32_t fetch_to_rename;       /* cycles from fetch to the earliest rename */
  uint32_t mispredict_penalty;    /* cycles from branch resolution to fetch on the right path */
  uint32_t machine_clear_penalty; /* cycles from a machine clear to the refetch */
  uint32_t btb_miss_penalty;      /* cycles of bubble when a taken direct branch misses the BTB */
  uint32_t branch_checkpoints;    /* correct-path branches in flight (fetch stalls beyond) */
  uint32_t uop_cache_lines;       /* decoded-line cache (uop cache / DSB): lines held, direct
                                     mapped; fetch from a held line needs no L1I access (0: off) */
  int32_t wrong_path;             /* WP_*: normal, off, cap, confidence */
  uint32_t wrong_path_cap;        /* WP_CAP: wrong-path instructions per misprediction */
  bool perfect_branch;            /* every branch predicted correctly */
} ooo_fe_config;

typedef struct ooo_core_config {
  uint32_t rename_width;          /* slots per cycle */
  uint32_t commit_width;          /* instructions per cycle */
  uint32_t commit_latency;        /* cycles from completion to the earliest commit */
  uint32_t rob;                   /* reorder-buffer slots */
  uint32_t sched_math;            /* scheduler entries: computation micro-ops */
  uint32_t sched_load;            /* scheduler entries: load micro-ops */
  uint32_t sched_store;           /* scheduler entries: store-address and store-data micro-ops */
  bool unified_sched;             /* one scheduler of sched_math entries for every micro-op */
  uint32_t lq;                    /* load-queue entries */
  uint32_t sq;                    /* store-queue entries (incl. committed stores not yet written) */
  uint32_t int_prf;               /* integer physical registers */
  uint32_t vec_prf;               /* vector / FP physical registers */
  bool move_elim;                 /* register moves eliminated at rename */
  bool zero_idiom;                /* zero idioms eliminated at rename */
  bool stack_engine;              /* push/pop/call/ret update rsp at decode (no rsp dependence) */
  uint32_t agu_latency;           /* cycles: store-address micro-op */
  uint32_t std_latency;           /* cycles: store-data micro-op */
  uint32_t stlf_latency;          /* cycles: load forwarded from an older store */
  uint32_t stlf_fail_penalty;     /* extra cycles when the store covers the load only partly */
  uint32_t store_drain_width;     /* store lines written to L1 per cycle after commit */
  int32_t mem_dep;                /* MDP_*: predict (load-wait table), speculate, conservative */
  uint32_t mdp_bits;              /* log2 entries of the load-wait table */
  uint32_t mdp_reset;             /* cycles between load-wait table clears */
  uint32_t rep_bytes_per_cycle;   /* fast-string bytes moved per cycle */
  uint32_t rep_startup;           /* cycles added to the first micro-op of a rep-string run */
} ooo_core_config;

typedef struct ooo_port_config {
  uint32_t count;                 /* ports P0 .. P<count-1> */
  uint32_t load;                  /* port mask: load micro-ops */
  uint32_t sta;                   /* port mask: store-address micro-ops */
  uint32_t std;                   /* port mask: store-data micro-ops */
} ooo_port_config;

typedef struct ooo_config {
  char name[64];
  ooo_fe_config fe;               /* `frontend` */
  bp_config bp;                   /* `bpred` */
  ooo_core_config core;           /* `core` */
  ooo_port_config ports;          /* `ports` */
  ooo_class_spec uops[IC_NUM];    /* `uops`, indexed by insn_class */
  mem_config mem;                 /* `mem` */
} ooo_config;

/* The whole configuration as a parameter table (sections frontend, bpred, core, ports, uops,
 * mem, plus name / description / base). */
extern const param_table ooo_param_table;
/* Golden Cove defaults (the same values as uarch/configs/golden_cove.lua). */
void ooo_config_default(ooo_config *c);
/* Apply a configuration table onto c (keys absent keep their values). Errors name
 * "<file>: <key path>". The key `base` is accepted and ignored (the loader resolves it). */
wi_rc ooo_config_apply(ooo_config *c, const cfg_val *v, const char *file, wi_err *err);
/* Cross-field checks (port masks within count, classes with ports, sizes). */
wi_rc ooo_config_check(const ooo_config *c, wi_err *err);
/* Write c as a Lua table (`return { ... }`) that loads back to the same configuration. */
void ooo_config_dump_lua(const ooo_config *c, FILE *f);
/* Document every parameter (path, type, unit, range, doc). */
void ooo_config_doc(FILE *f);
/* A hash of the resolved configuration (identifies it in result stores). */
uint64_t ooo_config_hash(const ooo_config *c);
/* Parse "P0 P1 P5" into a port mask; false on a bad name. Format a mask into buf. */
bool ooo_ports_parse(const char *s, uint32_t *mask);
const char *ooo_ports_format(uint32_t mask, char *buf, size_t n);

/* ---- interventions on the instruction stream ----------------------------------------------- */

/* What a filter may change about one dynamic instruction (initialised to "nothing"). */
typedef struct ooo_mod {
  bool drop;            /* as if it never existed: no fetch, no slot; consumers read the previous
                           producer (correct path only) */
  bool nop;             /* keeps its fetch, rename slot and ROB entry; no sources, destinations,
                           memory or micro-ops; completes 1 cycle after dispatch */
  bool perfect_branch;  /* predicted correctly (direction and target) */
  bool perfect_mem;     /* its loads hit L1 with the L1 latency; its stores write without misses */
  int32_t lat_add;      /* cycles added to its last micro-op's execution (may be negative) */
  int32_t lat_set;      /* if >= 0: its last micro-op's execution latency in cycles */
} ooo_mod;

/* Called once per dynamic instruction as it enters the model: correct-path instructions with
 * their model index (before fetch; ti and di are the trace's records), wrong-path ones with
 * index UINT64_MAX (ti is synthesized: pc, sid, next_pc = fall-through). */
typedef void (*ooo_filter_fn)(void *ctx, uint64_t index, const trace_insn *ti, const dec_insn *di,
                              bool wrong_path, ooo_mod *out);

/* ---- statistics --------------------------------------------------------------------------------- */

typedef struct ooo_stats {
  uint64_t cycles;                /* cycles simulated (last commit + 1 at the end) */
  uint64_t insns;                 /* correct-path instructions committed */
  uint64_t uops;                  /* their micro-ops */
  uint64_t fetched[2];            /* instructions fetched: [0] correct path, [1] wrong path */
  uint64_t dispatched[2];         /* instructions renamed/dispatched */
  uint64_t executed[2];           /* instructions with at least one micro-op issued */
  uint64_t squashed;              /* instructions squashed after dispatch (both paths) */
  uint64_t branches[BR_NUM];      /* committed branches by kind */
  uint64_t mispredicts[BR_NUM];   /* ... that mispredicted */
  uint64_t btb_bubbles;           /* taken direct branches that missed the BTB (decode redirect) */
  uint64_t machine_clears;        /* memory-ordering violations */
  uint64_t loads, stores;         /* committed load / store micro-ops */
  uint64_t forwarded;             /* loads served by store-to-load forwarding */
  uint64_t forward_fail;          /* loads partly covered by an older store */
  uint64_t mdp_waits;             /* loads held by the load-wait table */
  uint64_t load_level[4];         /* committed loads by the deepest level their instruction missed
                                     (L1 hit, L2 hit, LLC hit, DRAM) with OOO_SID_STATS or a memory
                                     observer; else estimated from the load's latency */
  uint64_t slots[OOO_SLOT_NUM];   /* top-down rename slots */
  uint64_t dispatch_stall[OB_NUM];/* cycles in which rename stopped early, by reason (OB_*);
                                     OB_FRONTEND = nothing to rename */
  uint64_t commit_stall[OB_NUM];  /* cycles the ROB head was not ready, by its completion kind */
  uint64_t rob_occupancy;         /* sum over cycles of ROB slots in use */
  uint64_t skipped_cycles;        /* cycles jumped over by cycle skipping */
} ooo_stats;

/* Per static instruction (sid), when enabled with OOO_SID_STATS. */
typedef struct ooo_sid_stats {
  uint64_t count;                 /* committed executions */
  uint64_t head_cycles;           /* cycles it sat at the ROB head not yet committable */
  uint64_t mispredicts;
  uint64_t l1d_misses, l2_misses, llc_misses; /* executions whose loads missed that level (from the
                                                 memory system's miss events; merges into an
                                                 in-flight miss are not misses) */
} ooo_sid_stats;

/* Top-down level 1 and 2 fractions (of all accounted slots; they sum to 1). */
typedef struct ooo_topdown {
  double retiring, bad_speculation, frontend_bound, backend_bound;
  double branch_mispredicts, machine_clears;     /* bad speculation split */
  double fe_latency, fe_bandwidth;               /* frontend split */
  double memory_bound, core_bound;               /* backend split */
} ooo_topdown;

/* ---- the model ----------------------------------------------------------------------------------- */

typedef struct ooo_model ooo_model;

/* ooo_new flags. OOO_NO_PLAN_CACHE: rename computes every instruction's plan afresh instead of
 * reusing the last one made for its static instruction (same results, slower; for tests). */
/* OOO_NO_SQ_BOUND: the store-queue search of every load starts at the tail, without the store
 * filter (its answer "no overlapping store" nor its bound; same results; for tests). */
/* OOO_NO_LEAN: rename builds every instruction through its general path (no lean copies for
 * instructions of one computation micro-op, no prebuilt micro-op and ROB words, no shortcut for
 * a rename blocked in the last cycle, nor, without bindings, for one still blocked on the same
 * resource or for naming the resource that stops it); the cycle loop works out the core's next
 * event again after a cycle stepped only for the memory system (same results, slower; for
 * tests). */
/* OOO_READER: read (decompress and decode) the trace ahead on a second thread when the process
 * may run on two CPUs (core/batch_pf.h; same results). For a model that runs alone: clones do
 * not inherit it, so parallel replays do not each start a reader. Off in the commands: reading
 * is ~5% of the model's host instructions, and on the 2-CPU development machine the hand-off
 * cost as much as it saved (whatif bench run --reader). */
/* OOO_NO_BINDINGS: no observer will ever be attached to this model or its copies (clones
 * inherit the flag; ooo_copy needs it on both sides), so the per-stage binding constraints that
 * only observers see (the flow and resource each dispatch, issue, completion and commit waited
 * for) are not kept: same simulated results and statistics, fewer host instructions (for
 * `whatif run` and `whatif bench run`). Attaching an observer to such a model is a programming
 * error: ooo_attach_observer fails, ooo_set_observer aborts. */
enum {
  OOO_SID_STATS = 1 << 0, OOO_NO_PLAN_CACHE = 1 << 1, OOO_NO_SQ_BOUND = 1 << 2, OOO_NO_LEAN = 1 << 3,
  OOO_READER = 1 << 4, OOO_NO_BINDINGS = 1 << 5
};

/* Create a model over trace t (which must outlive it) with configuration cfg (copied).
 * Checks the configuration. Returns NULL and fills err on failure. Free with ooo_free. */
ooo_model *ooo_new(const ooo_config *cfg, const trace_t *t, unsigned flags, wi_err *err);
void ooo_free(ooo_model *m); /* accepts NULL */

/* Run until `max_commits` more correct-path instructions committed (UINT64_MAX: to the end).
 * Returns at the end of the cycle in which the count was reached (it may be exceeded by up to
 * commit_width - 1); splitting a run into pieces gives results identical to one run.
 * WI_ECORRUPT on a trace read error, WI_ESTATE on an internal deadlock (a bug). */
wi_rc ooo_run(ooo_model *m, uint64_t max_commits, wi_err *err);
/* True when every instruction of the trace has committed. */
bool ooo_finished(const ooo_model *m);
uint64_t ooo_committed(const ooo_model *m);
uint64_t ooo_cycles(const ooo_model *m);
/* Simulated cycles in which only the memory system acted, so the core stages were not run (a
 * host-work counter of this model object, not a simulated result: not copied by ooo_copy; always
 * 0 with an observer, which sees every cycle's stages). */
uint64_t ooo_mem_only_cycles(const ooo_model *m);
/* Model index of the next correct-path instruction not yet fetched: a filter set now applies
 * from that instruction on. */
uint64_t ooo_fetched_index(const ooo_model *m);

/* Copy the complete state of src into dst (created with the same configuration and trace);
 * dst then continues exactly as src would. dst keeps its own observer and filter. */
wi_rc ooo_copy(ooo_model *dst, const ooo_model *src, wi_err *err);
/* A new model with src's configuration, trace, flags and state (no observer, no filter). */
ooo_model *ooo_clone(const ooo_model *src, wi_err *err);
/* Bytes copied by ooo_copy for the core state (the memory system's block comes on top). */
size_t ooo_state_bytes(const ooo_model *m);

/* Attach an observer (NULL to detach); also forwards memory-system events to obs->mem.
 * Aborts (with a message) on a non-NULL observer for a model made with OOO_NO_BINDINGS. */
void ooo_set_observer(ooo_model *m, const ooo_observer *obs, void *ctx);
/* ooo_set_observer that reports the error instead: WI_EINVAL (nothing attached) on a non-NULL
 * observer for a model made with OOO_NO_BINDINGS (it has not kept the bindings observers see). */
wi_rc ooo_attach_observer(ooo_model *m, const ooo_observer *obs, void *ctx, wi_err *err);
/* Set the instruction filter (NULL to remove). It applies to correct-path instructions from
 * ooo_fetched_index() on and to every later wrong-path instruction. */
void ooo_set_filter(ooo_model *m, ooo_filter_fn fn, void *ctx);

const ooo_config *ooo_get_config(const ooo_model *m);
const ooo_stats *ooo_get_stats(const ooo_model *m);
/* Per-sid statistics (trace_get_info(t)->n_static entries), or NULL without OOO_SID_STATS. */
const ooo_sid_stats *ooo_get_sid_stats(const ooo_model *m);
void ooo_get_topdown(const ooo_model *m, ooo_topdown *td);
const mem_sys *ooo_get_mem(const ooo_model *m);
mem_sys *ooo_mem_mut(ooo_model *m); /* e.g. mem_set_perfect */

/* Write the run's results (the `whatif run --json` members) into an open JSON object. */
void ooo_stats_json(const ooo_model *m, double seconds, jw *w);
/* Print the results as a human-readable report. */
void ooo_stats_print(const ooo_model *m, double seconds, FILE *f);

#endif

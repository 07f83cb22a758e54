/* replay.h — interventions (the catalogue), intervention plans, baselines with checkpoints,
 * exact replays and thread-pool sweeps over the out-of-order model.
 *
 * An intervention is data: a kind, a match and parameters. It is applied either to the
 * machine configuration (ras, wrong_path, port, resize, predictor, config, latency by class,
 * perfect_branch for all branches, perfect_cache for a level) or to the instruction stream as
 * it enters the model (remove, latency by pc/function/range/index, perfect_branch and
 * perfect_cache by pc/function/range/index). scripts/ parses the textual form
 * (`latency{pc=0x401a2c, add=1}`) through Lua into a cfg_val table tagged with `kind`;
 * rp_interv_parse() validates it here in C, so every error names the intervention and field.
 *
 * Replays are exact: the same trace, configuration and interventions give the same cycles in
 * any thread. A baseline run keeps model snapshots every K committed instructions and records,
 * for every static instruction (and every wrong-path-only PC), the first snapshot interval in
 * which any instance of it entered the model (correct or wrong path). A replay whose
 * stream-level interventions match nothing before snapshot S starts from S: up to S the
 * intervened run is, instruction for instruction, the baseline run, so the result is identical
 * to a full replay. Entries are recorded when an instruction is read into the model's window
 * (ahead of fetch), which is conservative: ooo_set_filter re-reads the window's unfetched
 * instructions, so a replay copied from a snapshot filters them exactly as a full replay did.
 * Configuration-level interventions, perfect_cache levels and custom hooks start at
 * instruction 0.
 *
 * Thread safety: an rp_base is read-only after rp_base_run(); rp_plan_new() and rp_replay() may
 * be called concurrently on one base from many threads (each with its own rp_worker). */
#ifndef WHATIF_REPLAY_H
#define WHATIF_REPLAY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cfgtree.h"
#include "ooo.h"
#include "trace.h"
#include "util.h"

/* ---- the intervention catalogue --------------------------------------------------------- */

typedef enum rp_kind {
  RP_REMOVE = 0,      /* remove{pc|range|func|index = ..., mode = "drop"|"nop"} */
  RP_LATENCY,         /* latency{pc|range|func|index|class = ..., add = N | set = N} (cycles) */
  RP_PERFECT_BRANCH,  /* perfect_branch{pc|range|func|index = ...} or perfect_branch{} (all) */
  RP_PERFECT_CACHE,   /* perfect_cache{pc|range|func|index = ...} or perfect_cache{level = ...} */
  RP_RAS,             /* ras{depth = N, repair = "none"|"tos"|"full"} */
  RP_WRONG_PATH,      /* wrong_path{policy = "normal"|"off"|"cap"|"confidence", cap = N,
                         conf_bits = N, conf_max = N, conf_threshold = N, conf_gate = N} */
  RP_PORT,            /* port{name = "P5", add = N} or port{classes = {"shuffle", ...}, add = N} */
  RP_RESIZE,          /* resize{rob = N, lq = N, l1d_mshrs = N, rename_width = N, ...} */
  RP_PREDICTOR,       /* predictor{type = "tage"|"gshare"|"bimodal", <bpred keys>...} */
  RP_CONFIG,          /* config{core = {rob = 256}, ...}: any machine-configuration edit */
  RP_KIND_NUM
} rp_kind;

/* Name of a kind ("remove", ...); rp_kind_from_name returns -1 for an unknown name. */
const char *rp_kind_name(int kind);
int rp_kind_from_name(const char *name);
/* Comma-separated list of every kind (for error messages). */
const char *rp_kind_list(void);

/* What a stream-level intervention matches. */
enum {
  RPM_ALL = 0,  /* no match: the configuration-level form (perfect_branch{}, perfect_cache{level}),
                   or a per-PC sweep template (remove{}, latency{add=1}, perfect_cache{}) */
  RPM_PC,       /* one static instruction: pc (or sym + lo when sym is set) */
  RPM_RANGE,    /* static instructions with lo <= pc < hi */
  RPM_FUNC,     /* every static instruction of the function(s) named sym */
  RPM_INDEX,    /* correct-path dynamic instructions with model index lo <= i < hi */
  RPM_CLASS,    /* an operation class (latency only: a configuration edit) */
};

enum { RP_DROP = 0, RP_NOP = 1 };                              /* remove modes */
enum { RP_LVL_L1D = 1, RP_LVL_L1I = 2, RP_LVL_ALL = 3 };        /* perfect_cache levels (bits) */

typedef struct rp_match {
  int kind;           /* RPM_* */
  uint64_t lo, hi;    /* RPM_PC: lo = pc (offset from sym when sym is set); RPM_RANGE: PCs
                         [lo, hi); RPM_INDEX: model indices [lo, hi) */
  char *sym;          /* RPM_FUNC: function name; RPM_PC: symbol the pc is relative to (owned) */
  int cls;            /* RPM_CLASS: insn_class */
} rp_match;

/* One validated intervention. Fields not used by its kind are zero. Free with rp_interv_free. */
typedef struct rp_interv {
  rp_kind kind;
  rp_match m;
  int mode;              /* remove: RP_DROP / RP_NOP */
  bool has_add;          /* latency: add (cycles, may be negative) when true, else set */
  int32_t lat;           /* latency: cycles added, or the latency set */
  int level;             /* perfect_cache with RPM_ALL: RP_LVL_* bits */
  int port;              /* port: the port widened (-1: a new port for `classes`) */
  uint32_t add;          /* port: units (ports) added */
  uint32_t classes;      /* port: bit c = insn_class c gets the new port */
  uint32_t mem_ports;    /* port: bit 0 load, bit 1 sta, bit 2 std get the new port */
  cfg_val *edit;         /* ras, wrong_path, resize, predictor, config: a configuration table
                            applied with ooo_config_apply (owned) */
  cfg_val *fields;       /* those kinds: the intervention's own fields, sorted, for the text
                            (owned) */
  char *text;            /* canonical textual form, e.g. "latency{pc=0x401a2c, add=1}" (owned) */
} rp_interv;

/* Validate the intervention table v (a CV_TABLE whose string field `kind` names the kind, as
 * the textual parser produces) into *out. Errors (WI_EINVAL) say which and why, e.g.
 * "unknown field 'x' in latency{...} (fields: ...)". On failure *out is left empty. */
wi_rc rp_interv_parse(const cfg_val *v, rp_interv *out, wi_err *err);
void rp_interv_free(rp_interv *iv);
/* Deep copy. */
void rp_interv_copy(rp_interv *dst, const rp_interv *src);
/* True when the kind edits the configuration (rather than the instruction stream). */
bool rp_interv_is_config(const rp_interv *iv);
/* True for a stream-level kind without a match (remove{}, latency{add=1}, perfect_branch{},
 * perfect_cache{}): a template that a per-PC sweep completes with rp_interv_set_pc. */
bool rp_interv_is_template(const rp_interv *iv);
/* Re-target a stream-level intervention without a match (a per-PC sweep template such as
 * latency{add=1}) at one pc; regenerates the text. */
void rp_interv_set_pc(rp_interv *iv, uint64_t pc);
/* Regenerate iv->text from the fields. */
void rp_interv_format(rp_interv *iv);

/* Apply the configuration-level interventions of ivs[0..n) to cfg (stream-level ones are
 * skipped), then check the result. Errors name the intervention: "port P13 does not exist
 * (ports: P0..P11)". */
wi_rc rp_apply_config(const rp_interv *ivs, size_t n, ooo_config *cfg, wi_err *err);

/* ---- baselines ------------------------------------------------------------------------------ */

typedef struct rp_base rp_base;

typedef struct rp_base_opts {
  uint64_t interval;       /* committed instructions between snapshots (0: automatic, about
                              n_insns / max_snaps, at least 10000) */
  uint32_t max_snaps;      /* snapshot budget (0: 32) */
  bool no_snapshots;       /* keep no snapshots: every replay runs from the start */
  uint64_t stats_interval; /* if > 0: also record statistics every this many committed
                              instructions (rp_base_intervals) */
  unsigned ooo_flags;      /* ooo_new flags for the baseline (e.g. OOO_SID_STATS) */
  bool keep_bindings;      /* keep the per-stage bindings that observers read in every model of
                              the baseline and its replays (for a caller that clones
                              rp_base_model() and attaches an observer). By default they are
                              kept only when stats_interval needs its own observer: no other
                              model of a baseline or replay ever gets one, so the rest run with
                              OOO_NO_BINDINGS (same results, fewer host instructions). Passing
                              OOO_NO_BINDINGS in ooo_flags together with this or with
                              stats_interval is an error (WI_EINVAL from rp_base_new). */
  bool progress;           /* show progress on stderr (only when it is a terminal) */
} rp_base_opts;

/* Statistics of one interval of the baseline (rp_base_opts.stats_interval). */
typedef struct rp_interval {
  uint64_t first_insn, insns;   /* committed instructions: first index, count */
  uint64_t cycles;              /* cycles of the interval */
  uint64_t wp_fetched;          /* wrong-path instructions fetched in it */
  uint64_t wp_dispatched;       /* wrong-path instructions dispatched in it */
  uint64_t wp_sched_cycles;     /* scheduler entry-cycles held by wrong-path instructions
                                   (dispatch until issue or squash), summed */
  uint64_t mispredicts;         /* branch mispredictions committed in it */
  uint64_t backend_slots, slots;/* back-end-bound and all top-down slots */
} rp_interval;

/* Prepare a baseline over trace t (which must outlive it) with configuration cfg (copied):
 * index the static table and symbols. Returns NULL and fills err on failure. Free with
 * rp_base_free. */
rp_base *rp_base_new(const trace_t *t, const ooo_config *cfg, const rp_base_opts *opts, wi_err *err);
void rp_base_free(rp_base *b); /* accepts NULL */
/* Run the baseline to the end, keeping snapshots and first-entry records. Call once. */
wi_rc rp_base_run(rp_base *b, wi_err *err);
const trace_t *rp_base_trace(const rp_base *b);
const ooo_config *rp_base_config(const rp_base *b);
/* The finished baseline model (statistics, top-down), or NULL before rp_base_run. */
const ooo_model *rp_base_model(const rp_base *b);
double rp_base_seconds(const rp_base *b);   /* wall time of the baseline run */
size_t rp_base_n_snaps(const rp_base *b);
/* Committed-instruction count and fetched index at snapshot i. */
uint64_t rp_base_snap_commit(const rp_base *b, size_t i);
/* Snapshot interval of the first entry of static instruction sid (UINT32_MAX: never entered):
 * the number of snapshots taken before it first entered the model. */
uint32_t rp_base_first_entry(const rp_base *b, uint32_t sid);
/* Intervals recorded with stats_interval (NULL and 0 otherwise). */
const rp_interval *rp_base_intervals(const rp_base *b, size_t *n);

/* ---- plans ------------------------------------------------------------------------------------ */

typedef struct rp_plan rp_plan;

/* A custom per-instruction intervention (the slow path, e.g. Lua's on_insn): called after the
 * plan's own matches with `out` already filled by them. */
typedef ooo_filter_fn rp_hook_fn;

/* Compile interventions ivs[0..n) against base b: resolve PCs, functions and ranges against
 * the trace (errors: "pc 0x... never executed", "function 'x' not found"), build the edited
 * configuration and the filter tables (a per-sid lookup plus PC and index ranges), and find
 * the snapshot the replay may start from. Thread-safe. Returns NULL and fills err. */
rp_plan *rp_plan_new(const rp_base *b, const rp_interv *ivs, size_t n, wi_err *err);
void rp_plan_free(rp_plan *p); /* accepts NULL */
/* Attach a custom hook (forces the replay to start at instruction 0). */
void rp_plan_set_hook(rp_plan *p, rp_hook_fn fn, void *ctx);
/* True when the plan changes the configuration (the replay starts at instruction 0). */
bool rp_plan_config_changed(const rp_plan *p);
const ooo_config *rp_plan_config(const rp_plan *p);
/* Snapshot of base b (after rp_base_run) the replay may start from: the last one taken before
 * anything the plan matches first entered the model; -1 for the start. */
int rp_plan_start_snap(const rp_plan *p, const rp_base *b);
/* Interventions text, joined by ", " (owned by the plan). */
const char *rp_plan_text(const rp_plan *p);
/* The filter decision for one instruction (what the model's filter gets), for tests. */
void rp_plan_filter(const rp_plan *p, uint64_t index, const trace_insn *ti, const dec_insn *di,
                    bool wrong_path, ooo_mod *out);

/* ---- replays ------------------------------------------------------------------------------------ */

/* The headline numbers of one run. */
typedef struct rp_result {
  uint64_t cycles, insns;
  double ipc;
  double mpki;                  /* branch mispredictions per 1000 instructions (all kinds) */
  double cond_mpki, ind_mpki, ret_mpki;
  uint64_t mispredicts, ret_mispredicts;
  uint64_t wp_fetched, wp_executed;
  ooo_topdown td;
  uint64_t start_insn;          /* committed instructions of the snapshot the replay started
                                   from (0: from the start) */
  int start_snap;               /* that snapshot, or -1 */
  double wall_s;                /* wall time of the replay, seconds */
  ooo_stats stats;              /* everything else */
} rp_result;

/* Fill r from a finished model. */
void rp_result_from_model(const ooo_model *m, rp_result *r);
/* Write r's headline members (cycles, insns, ipc, mpki, branch, wrong_path, topdown) into an
 * open JSON object. */
void rp_result_json(const rp_result *r, jw *w);
/* Write the exact differences r - base (cycles, ipc, ipc_pct, mpki, wrong_path, topdown in
 * fractions) into an open JSON object. */
void rp_delta_json(const rp_result *base, const rp_result *r, jw *w);

/* A per-thread replay context (a model kept between replays so starting from a snapshot is a
 * copy, not an allocation). Free with rp_worker_free. */
typedef struct rp_worker rp_worker;
rp_worker *rp_worker_new(const rp_base *b);
void rp_worker_free(rp_worker *w); /* accepts NULL */

/* Replay plan p against its base to the end. use_ckpt = false forces a full replay from
 * instruction 0. w may be NULL (a temporary worker). Thread-safe with distinct workers. */
wi_rc rp_replay(const rp_base *b, const rp_plan *p, rp_worker *w, bool use_ckpt, rp_result *out,
                wi_err *err);

/* ---- sweeps --------------------------------------------------------------------------------------- */

/* Called on the sweep's calling thread, in job order (0, 1, 2, ...), once per job. */
typedef wi_rc (*rp_sweep_fn)(void *ctx, size_t job, const rp_result *r, wi_err *err);

typedef struct rp_sweep_opts {
  unsigned threads;        /* worker threads (0: 1) */
  bool no_ckpt;            /* full replays (no checkpoint skipping) */
  const char *what;        /* progress label (NULL: "sweep") */
} rp_sweep_opts;

/* Run plans[0..n) on a thread pool; deliver results to fn in order. Stops at the first error
 * (of a replay or of fn) and returns it. */
wi_rc rp_sweep(const rp_base *b, rp_plan *const *plans, size_t n, const rp_sweep_opts *o,
               rp_sweep_fn fn, void *ctx, wi_err *err);

#endif

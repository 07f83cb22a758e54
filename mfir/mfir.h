/* mfir.h — MFIR: the causal graph of one replay window, captured from the out-of-order model's
 * observer (uarch/obs.h) into SQLite, and its analyses: exact top-down, per-instruction cycle
 * stacks, and critical-path / root-cause traversal along binding edges.
 *
 * The database layout is documented in mfir/SCHEMA.md. In short: one wide `flow` row per
 * dynamic instruction (stage cycles and the four binding constraints inline), `memtx` rows for
 * memory transactions, `squash` groups, `flush` rows for correct-path attempts a machine clear
 * threw away, `slot` records (top-down), `pc` (static instructions with disassembly, function
 * and source line), `resource` (every resource id seen), `dep_x` (register producers beyond
 * the three inline ones), `mem_block` (requests refused by a full MSHR file / DRAM queue),
 * `meta`, `kind`; views `edge`, `dep`, `occupancy`, `topdown`, `attribution`.
 *
 * Flow ids in the database. A correct-path instruction's flow id is its model index (>= 0); a
 * wrong-path instruction OOO_FID_WRONG | n is stored as -1 - n (so fid < 0 <=> wrong path);
 * OOO_FID_NONE is NULL. mfir_db_fid / mfir_model_fid convert.
 *
 * Nodes and binding edges. Each flow has up to five nodes: F fetch, D dispatch, I issue,
 * C complete, R retire (commit, or squash for a wrong-path flow). Every node but F carries the
 * model's binding constraint (what it waited for last); F's is derived (fetch order, or the
 * redirect by a mispredicted branch). mfir_hop() maps a node to the node it waited for; the
 * critical path is the backward walk along these hops from the window's last commit, and each
 * hop contributes (time of node - time of target) cycles, so a walk's composition sums exactly
 * to the window's cycles. */
#ifndef WHATIF_MFIR_H
#define WHATIF_MFIR_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "obs.h"
#include "ooo.h"
#include "trace.h"
#include "util.h"

#define MFIR_FORMAT 1 /* database format version (meta key format) */

/* ---- nodes and edge kinds ------------------------------------------------------------------ */

enum { MFIR_F = 0, MFIR_D, MFIR_I, MFIR_C, MFIR_R, MFIR_NSTAGE };

/* Edge kinds MFIR adds to the model's OB_* binding kinds (same id space, stored in the
 * database's *_kind columns and named in table `kind`). */
enum {
  MK_FETCH_ORDER = 40, /* F: fetched after the previous correct-path instruction's fetch */
  MK_REDIRECT,         /* F: fetch restarted after a mispredicted branch (or clear) resolved */
  MK_WRONG_PATH,       /* F of a wrong-path flow: fetched after its mispredicted branch */
  MK_SQUASH_BRANCH,    /* R of a squashed flow: squashed when a mispredicted branch resolved */
  MK_SQUASH_CLEAR,     /* R of a squashed flow: squashed by a machine clear */
  MK_START,            /* the part of a walk before the window's first cycle */
  MK_EVICTED,          /* root-cause hop: a load missed because another flow's fill evicted
                          its line (from memtx.evictor) */
  MK_BASE,             /* cycle stacks: the commit cycle itself */
  MK_FETCH_SLOT,       /* F: fetched when a fetch-queue entry freed: the rename (D) of the flow
                          that held the entry, fe.fetch_queue entries earlier (a full queue:
                          back-pressure from rename) */
  MK_END
};
/* Name of a kind (OB_* or MK_*): "rob_full", "operand", "fetch_order", ...; "?" if unknown. */
const char *mfir_kind_name(int kind);
/* Kind id for a name, or -1. */
int mfir_kind_from_name(const char *name);
/* Stage a kind belongs to (MFIR_F .. MFIR_R), or -1 for MK_START / MK_EVICTED / MK_BASE. */
int mfir_kind_stage(int kind);
/* "F", "D", "I", "C", "R". */
const char *mfir_stage_name(int stage);
/* Name of a core or memory resource id ("ROB[12]", "port P5", "L1D.mshr[3]"). */
const char *mfir_rid_name(uint32_t rid, char *buf, size_t n);

/* Database flow id of a model flow id (OOO_FID_NONE -> MFIR_NOFID) and back. */
#define MFIR_NOFID INT64_MIN
static inline int64_t mfir_db_fid(uint64_t fid) {
  if (fid == OOO_FID_NONE) return MFIR_NOFID;
  return (fid & OOO_FID_WRONG) ? -1 - (int64_t)(fid & ~OOO_FID_WRONG) : (int64_t)fid;
}
static inline uint64_t mfir_model_fid(int64_t fid) {
  if (fid == MFIR_NOFID) return OOO_FID_NONE;
  return fid < 0 ? (OOO_FID_WRONG | (uint64_t)(-1 - fid)) : (uint64_t)fid;
}

/* ---- hops (shared by the builder and the analyses) ------------------------------------------ */

#define MFIR_NOTIME UINT64_MAX

/* What the hop rule needs to know about one flow. */
typedef struct mfir_rec {
  int64_t fid;
  uint64_t t[MFIR_NSTAGE];  /* cycle of each node; MFIR_NOTIME if never reached */
  uint8_t kind[MFIR_NSTAGE];/* binding kind of D, I, C, R (kind[MFIR_F] unused: derived) */
  uint32_t rid[MFIR_NSTAGE];/* binding resource (OOO_RID_NONE if none); for F an I-cache miss
                               or BTB-miss bubble that held fetch back just before it */
  int64_t by[MFIR_NSTAGE];  /* binding flow (MFIR_NOFID if none); for R of a squashed flow the
                               flow whose resolution squashed it; for F the flow whose rename
                               freed the fetch-queue entry this one took */
  bool wrong;               /* wrong-path flow */
} mfir_rec;

/* Looks up a flow's record by database fid; NULL when it is not known (outside the window). */
typedef const mfir_rec *(*mfir_get_fn)(void *ctx, int64_t fid);

typedef struct mfir_hop_t {
  int64_t fid;     /* target node's flow (MFIR_NOFID: no target, the walk ends) */
  int stage;       /* target node's stage */
  int kind;        /* edge kind (OB_* or MK_*) */
  uint32_t rid;    /* resource of the edge (OOO_RID_NONE if none) */
  uint64_t cycles; /* time of the node minus time of the target (0 when there is no target) */
  bool corrected;  /* the binding named another node, but the flow's own previous stage came
                      later (or the named node is unknown): the edge goes there instead */
} mfir_hop_t;

/* The node (r, stage) waited for: the last-arriving of the constraint its binding names (when
 * known and not later than the node) and the flow's own previous reached stage. For F: the latest
 * of the previous correct-path fetch, the redirecting flow's completion and the rename of the flow
 * whose fetch-queue entry it took (ties in that order of preference, the other way round). So every walk is
 * monotone and ends, and an edge never names a constraint that was met before the flow's own
 * previous stage. */
mfir_hop_t mfir_hop(const mfir_rec *r, int stage, mfir_get_fn get, void *ctx);

/* ---- building -------------------------------------------------------------------------------- */

typedef struct mfir_build_opts {
  uint64_t start;           /* first correct-path instruction (model index) of the window */
  uint64_t count;           /* instructions in the window (UINT64_MAX: to the end of the trace) */
  uint64_t margin;          /* instructions observed (not written) before start so binding
                               targets just before the window are known (0: default 4096) */
  bool no_mem_hits;         /* do not write first-level cache hits as memory transactions
                               (`whatif mfir` sets it unless given --mem-hits) */
  bool wrong_dispatched;    /* write only wrong-path flows that were dispatched (those squashed
                               in the fetch queue are then only counted in squash groups) */
  bool threaded;            /* write SQLite on a second thread while the model runs */
  bool dry_run;             /* benchmarking: capture and format every row, insert none (the file
                               holds the schema and static tables only) */
  const char *trace_path;   /* recorded in meta (may be NULL) */
  const char *uarch;        /* machine configuration name or file, recorded in meta */
} mfir_build_opts;

typedef struct mfir_build_stats {
  uint64_t insns;           /* correct-path instructions written (flows with fid >= 0) */
  uint64_t wrong;           /* wrong-path flows written */
  uint64_t flushed;         /* flushed correct-path attempts written */
  uint64_t memtx;           /* memory transactions written */
  uint64_t deps;            /* register producer -> consumer pairs */
  uint64_t slot_rows;       /* slot records written (after merging runs) */
  uint64_t rows;            /* rows written to all tables */
  uint64_t cycles;          /* window cycles */
  uint64_t db_bytes;        /* size of the finished database file */
  double model_seconds;     /* running the model up to the window (no observer) */
  double build_seconds;     /* observed run + writing + indexes, until the file is renamed */
  double finish_seconds;    /* of which: static tables, indexes and commit at the end */
} mfir_build_stats;

/* A capture: the observer state plus the database being written. */
typedef struct mfir_capture mfir_capture;

/* Create a capture writing to a temporary file beside out_path (renamed by finish). t (may be
 * NULL in tests: no disassembly or symbols) and cfg (NULL: Golden Cove defaults) must outlive
 * it; o NULL means the whole trace with default options. Seeds the register-producer table by reading the trace up to o->start (so dependences
 * reaching back before the window are exact). Returns NULL and fills err on failure. */
mfir_capture *mfir_capture_new(const char *out_path, const trace_t *t, const ooo_config *cfg,
                               const mfir_build_opts *o, wi_err *err);
/* The observer callbacks; pass with the capture as ctx: ooo_set_observer(m, obs, cap). */
const ooo_observer *mfir_observer(void);
/* True once the window's last instruction has committed (the run may stop). */
bool mfir_capture_done(const mfir_capture *c);
/* Write the static tables, indexes and views, commit, close and rename the file into place;
 * frees c (also on failure, when the temporary is removed). st may be NULL. */
wi_rc mfir_capture_finish(mfir_capture *c, mfir_build_stats *st, wi_err *err);
/* Discard c and its temporary file. Accepts NULL. */
void mfir_capture_abort(mfir_capture *c);

/* Run the model over the window of o (without an observer up to start - margin, then
 * observed) and write the database to out_path. st may be NULL. */
wi_rc mfir_build(const trace_t *t, const ooo_config *cfg, const mfir_build_opts *o,
                 const char *out_path, mfir_build_stats *st, wi_err *err);

/* ---- reading ---------------------------------------------------------------------------------- */

typedef struct mfir_db mfir_db;

/* Open an MFIR database read-only and check its format. Returns NULL and fills err. */
mfir_db *mfir_open(const char *path, wi_err *err);
void mfir_close(mfir_db *d); /* accepts NULL */
/* The underlying SQLite handle (struct sqlite3 *), for queries. */
void *mfir_sqlite(mfir_db *d);

/* The window. Cycles are attributed as (start_cycle - 1, end_cycle]: total = end - start + 1. */
typedef struct mfir_window {
  int64_t first_fid, last_fid;   /* correct-path flows of the window */
  uint64_t start_cycle;          /* first cycle of the window */
  uint64_t end_cycle;            /* cycle of the last commit */
  uint64_t total_cycles;         /* end_cycle - start_cycle + 1 */
  uint64_t insns;                /* last_fid - first_fid + 1 */
  uint32_t rename_width;         /* slots per cycle */
} mfir_window;
const mfir_window *mfir_get_window(const mfir_db *d);

/* Static information of a PC: pointers valid until mfir_close (strings never NULL: "" or "?"). */
typedef struct mfir_pcinfo {
  uint64_t pc;
  const char *asm_text, *function, *file;
  uint32_t line;
  uint64_t count;                /* committed executions in the window */
} mfir_pcinfo;
const mfir_pcinfo *mfir_pc_info(mfir_db *d, uint64_t pc);

/* ---- analyses ----------------------------------------------------------------------------------- */

/* Top-down from the slot records and the fates of dispatched flows. */
typedef struct mfir_tma {
  uint64_t slots[OOO_SLOT_NUM];  /* slots by OOO_SLOT_* category */
  uint64_t total;                /* their sum */
  ooo_topdown td;                /* fractions, computed as ooo_get_topdown does */
} mfir_tma;
wi_rc mfir_topdown(mfir_db *d, mfir_tma *out, wi_err *err);
/* Fractions from slot counts by category (the rule ooo_get_topdown follows). */
void mfir_topdown_from_slots(const uint64_t slots[OOO_SLOT_NUM], ooo_topdown *td);

/* Cycle stacks at commit: every cycle of the window goes to exactly one instruction (the one
 * that commits next: cycles (R[i-1], R[i]] go to i) and one cause (what i was waiting for in
 * that cycle: its dispatch, issue, completion or commit binding kind, or MK_BASE for the commit
 * cycle itself). */
typedef struct mfir_stack_pc {
  uint64_t pc;
  uint64_t count;                /* dynamic instances */
  uint64_t cycles;               /* their cycles */
  uint64_t by_kind[MK_END];      /* cycles by cause */
} mfir_stack_pc;
typedef struct mfir_stacks {
  uint64_t total;                /* window cycles (= sum of everything below) */
  uint64_t by_kind[MK_END];
  mfir_stack_pc *pcs;            /* sorted by cycles, descending (then pc) */
  size_t n_pcs;
} mfir_stacks;
wi_rc mfir_cycle_stacks(mfir_db *d, mfir_stacks *out, wi_err *err);
void mfir_stacks_free(mfir_stacks *s);

/* One hop of a walk. */
typedef struct mfir_step {
  int64_t fid;                   /* node's flow */
  int stage;                     /* node's stage */
  uint64_t cycle;                /* node's time */
  int kind;                      /* edge kind to the target */
  uint32_t rid;
  int64_t to_fid;                /* target (MFIR_NOFID at the end) */
  int to_stage;
  uint64_t cycles;               /* contributed to the walk */
  uint64_t pc;                   /* pc of fid */
} mfir_step;

typedef struct mfir_share {
  uint64_t key;                  /* kind, rid, pc, or index into names */
  const char *name;              /* kind / resource / function name, or the PC's disassembly
                                    (valid until mfir_critical_free and mfir_close) */
  uint64_t cycles;
} mfir_share;

typedef struct mfir_critical {
  uint64_t total;                /* cycles of the walk (the window's cycles for `end`) */
  uint64_t start_cycle, end_cycle;
  size_t n_hops;
  mfir_share *by_kind, *by_rid, *by_pc, *by_func; /* sorted by cycles, descending */
  size_t n_kind, n_rid, n_pc, n_func;
  /* Symptom walks only: */
  char symptom[64];              /* symptom name */
  int64_t symptom_fid;
  int symptom_stage;
  mfir_step *chain;              /* hops inside the symptom's interval, symptom first */
  size_t n_chain;
  int64_t root_fid;              /* the root cause (MFIR_NOFID if none found) */
  uint64_t root_pc;              /* its pc (0 if unknown) */
  int root_kind;                 /* how it was found (MK_REDIRECT, MK_SQUASH_*, MK_EVICTED,
                                    MK_WRONG_PATH) or the kind of the largest hop */
  char **names;                  /* owned strings */
  size_t n_names;
} mfir_critical;

/* Walk back from a node: the window's last commit ("end"), or a symptom:
 *   "rob-head"         the longest ROB-head stall (largest gap between consecutive commits);
 *   "dispatch"         the longest dispatch stall (largest gap between consecutive dispatches,
 *                      both paths);
 *   "miss"             the load with the longest time from issue to completion below L1;
 *   "fid:N[:STAGE]"    flow N (database id) at stage F/D/I/C/R (default R).
 * A symptom's chain covers the symptom's interval (from the previous event of its kind to it)
 * and ends with the root cause. symptom NULL or "end": the critical path of the window. */
wi_rc mfir_critical_path(mfir_db *d, const char *symptom, mfir_critical *out, wi_err *err);
void mfir_critical_free(mfir_critical *c);

#endif

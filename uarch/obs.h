/* obs.h — the observer interface of the out-of-order core model: events with flow ids (FID) and
 * resource ids (RID), per-stage binding constraints, and per-cycle top-down slot records.
 *
 * Flow ids. Every dynamic instruction the model fetches has a FID: a correct-path instruction's
 * FID is its model index in the trace (0, 1, 2, ...); a wrong-path instruction's FID is
 * OOO_FID_WRONG | n, with n counting wrong-path fetches from 0. Memory-system events
 * (memsys.h) carry the same FIDs and are forwarded through the same observer.
 *
 * Resource ids. Core resources have RIDs at or above OOO_RID_BASE, disjoint from the memory
 * system's (level * 1e6 + kind * 1e5 + entry, all below 1e7):
 *   OOO_RID_ROB + entry        reorder-buffer entry (ring index)
 *   OOO_RID_SCHED + pool * OOO_RID_POOL_STRIDE + entry   scheduler entry of a pool
 *   OOO_RID_LQ + entry, OOO_RID_SQ + entry               load / store queue entries
 *   OOO_RID_PORT + port        execution port
 *   OOO_RID_UNIT + port        the unpipelined unit (divider) behind a port
 *   OOO_RID_FETCH, OOO_RID_RENAME, OOO_RID_COMMIT, OOO_RID_PRF_INT, OOO_RID_PRF_VEC,
 *   OOO_RID_ICACHE, OOO_RID_BPRED                        single resources
 * ooo_rid_name() renders one.
 *
 * Top-down. Slots are counted at rename/dispatch: rename_width slots per cycle. Filled slots
 * are attributed when the instruction that took them leaves the machine: committed →
 * retiring, squashed → bad speculation (by cause). Unfilled slots are attributed in the cycle
 * they are lost (OOO_SLOT_* categories). An observer that sums ooo_slot_ev records and the
 * `slots` field of dispatch events (by their commit / squash fate) reproduces the model's
 * top-down exactly. */
#ifndef WHATIF_OBS_H
#define WHATIF_OBS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "memsys.h"

#define OOO_FID_WRONG (1ULL << 63)
#define OOO_FID_NONE UINT64_MAX

/* ---- resource ids ------------------------------------------------------------------------ */
#define OOO_RID_BASE 100000000u
#define OOO_RID_ROB (OOO_RID_BASE + 0u)
#define OOO_RID_SCHED (OOO_RID_BASE + 1000000u)
#define OOO_RID_POOL_STRIDE 100000u
#define OOO_RID_LQ (OOO_RID_BASE + 2000000u)
#define OOO_RID_SQ (OOO_RID_BASE + 3000000u)
#define OOO_RID_PORT (OOO_RID_BASE + 4000000u)
#define OOO_RID_UNIT (OOO_RID_BASE + 4100000u)
#define OOO_RID_FETCH (OOO_RID_BASE + 5000000u)
#define OOO_RID_RENAME (OOO_RID_BASE + 5000001u)
#define OOO_RID_COMMIT (OOO_RID_BASE + 5000002u)
#define OOO_RID_PRF_INT (OOO_RID_BASE + 5000003u)
#define OOO_RID_PRF_VEC (OOO_RID_BASE + 5000004u)
#define OOO_RID_ICACHE (OOO_RID_BASE + 5000005u)
#define OOO_RID_BPRED (OOO_RID_BASE + 5000006u)
#define OOO_RID_NONE 0u

/* Scheduler pools. */
enum { OOO_POOL_MATH = 0, OOO_POOL_LOAD, OOO_POOL_STORE, OOO_NPOOL };

/* Micro-op kinds. */
enum {
  OOO_UOP_EXEC = 0, /* computation on an execution port (ALU, FMA, branch, ...) */
  OOO_UOP_LOAD,     /* load (memory read) */
  OOO_UOP_STA,      /* store address */
  OOO_UOP_STD,      /* store data */
  OOO_UOP_NUM
};

/* ---- binding constraints ------------------------------------------------------------------
 * For every correct-path instruction and each of four stages, what it waited for last: the
 * constraint whose release let the stage proceed. `by_fid` names the flow that imposed it
 * (OOO_FID_NONE if none), `rid` the resource (OOO_RID_NONE if none), `cycle` when the stage
 * happened.
 * Dispatch: an instruction renamed in the cycle it became available to rename (fetch cycle +
 * frontend.fetch_to_rename) has OB_FRONTEND; one that had to wait has the rename stall in effect
 * when it was renamed: the reason rename stopped in the last simulated cycle before, which is
 * always a cycle in which it (or an older instruction ahead of it) was available and waiting
 * (a cycle in which rename ran dry ends any earlier stall). */
enum { OOO_STAGE_DISPATCH = 0, OOO_STAGE_ISSUE, OOO_STAGE_COMPLETE, OOO_STAGE_COMMIT, OOO_NSTAGE };

typedef enum ooo_bind_kind {
  OB_NONE = 0,
  /* dispatch */
  OB_FRONTEND,     /* delivery by the front-end: by_fid = redirecting branch/load if the
                      front-end was recovering, rid = OOO_RID_ICACHE on an I-cache miss,
                      OOO_RID_BPRED on a BTB-miss bubble, else OOO_RID_FETCH */
  OB_ROB_FULL,     /* by_fid = ROB head */
  OB_SCHED_FULL,   /* rid = scheduler pool; by_fid = the flow of the oldest micro-op holding an entry
                      of that pool (not yet issued) */
  OB_LQ_FULL,      /* by_fid = oldest load in the LQ */
  OB_SQ_FULL,      /* by_fid = oldest store in the SQ */
  OB_PRF_FULL,     /* rid = OOO_RID_PRF_INT / _VEC */
  OB_WIDTH,        /* rename width used by older instructions: by_fid = previous instruction (the
                      last one renamed in the cycle the width ran out) */
  OB_SERIAL,       /* a serializing instruction drained the machine: by_fid = it or the ROB head */
  /* issue */
  OB_DISPATCHED,   /* ready when dispatched (no operand or port wait) */
  OB_OPERAND,      /* last-arriving source operand: by_fid = its producer */
  OB_PORT,         /* port busy with an older micro-op: rid = port, by_fid = that micro-op's flow */
  OB_UNIT,         /* unpipelined unit busy: rid = OOO_RID_UNIT + port, by_fid = its occupant */
  OB_MEM_ORDER,    /* waited for older store addresses / store data: by_fid = the store */
  OB_MSHR,         /* memory system refused (MSHR / queue full): rid = memory resource */
  /* complete */
  OB_EXEC,         /* execution latency of the last micro-op (rid = port) */
  OB_L1,           /* load served by L1 (rid = port) */
  OB_L2, OB_LLC, OB_DRAM, /* load served by that level (a miss above it) */
  OB_FORWARD,      /* store-to-load forwarding: by_fid = the store */
  /* commit */
  OB_COMPLETION,   /* committed as soon as it completed */
  OB_COMMIT_WIDTH, /* commit width used by older instructions this cycle */
  OB_PREV_COMMIT,  /* in-order commit: waited for the previous instruction (by_fid) */
  OB_NUM
} ooo_bind_kind;

typedef struct ooo_bind {
  uint8_t kind;    /* ooo_bind_kind */
  uint8_t pad[3];
  uint32_t rid;
  uint64_t by_fid;
  uint64_t cycle;
} ooo_bind;

/* Name of a binding kind ("rob_full", "operand", ...). */
const char *ooo_bind_name(int kind);

/* ---- top-down slot categories ------------------------------------------------------------- */
enum {
  OOO_SLOT_RETIRING = 0,   /* filled by an instruction that committed */
  OOO_SLOT_BAD_BRANCH,     /* filled by a wrong-path instruction, or lost while recovering
                              from a branch misprediction */
  OOO_SLOT_BAD_CLEAR,      /* filled by an instruction flushed by a machine clear (memory
                              ordering), or lost while recovering from one */
  OOO_SLOT_FE_LATENCY,     /* nothing delivered this cycle by the front-end */
  OOO_SLOT_FE_BANDWIDTH,   /* some but fewer than rename_width delivered */
  OOO_SLOT_BE_MEMORY,      /* back-end stall while the oldest instruction waits on memory */
  OOO_SLOT_BE_CORE,        /* other back-end stalls (ROB/scheduler/PRF full, ports, serialize) */
  OOO_SLOT_NUM
};
/* Name of a slot category ("retiring", "bad_branch", ...). */
const char *ooo_slot_name(int cat);

/* ---- events -------------------------------------------------------------------------------- */

/* One event of one dynamic instruction (or micro-op). Fields not relevant to an event are 0 /
 * OOO_RID_NONE. */
typedef struct ooo_ev {
  uint64_t cycle;
  uint64_t fid;
  uint64_t pc;
  uint32_t sid;        /* static id (UINT32_MAX for wrong-path PCs never executed) */
  uint32_t rid;        /* ROB entry (fetch: OOO_RID_FETCH; issue: port; dispatch: ROB entry) */
  uint32_t rid2;       /* dispatch: scheduler entry of the first micro-op, or LQ/SQ entry;
                          issue: scheduler entry released; fetch of a correct-path
                          instruction: what held fetch back just before it — OOO_RID_ICACHE
                          (an I-cache miss), OOO_RID_BPRED (a BTB-miss bubble), else
                          OOO_RID_FETCH */
  uint8_t wrong_path;
  uint8_t uop;         /* micro-op index within the instruction (issue/complete) */
  uint8_t uop_kind;    /* OOO_UOP_* */
  uint8_t slots;       /* dispatch: rename slots taken; squash: the rename slots it had taken
                          (0 when squashed in the fetch queue, before rename) */
  uint32_t extra;      /* squash: cause (0 branch mispredict, 1 machine clear);
                          dispatch: OB_* kind of its dispatch binding (as in its commit event;
                          wrong-path flows have no commit event);
                          issue: latency in cycles; complete: OB_* completion kind */
  uint64_t by_fid;     /* squash: the flow whose resolution squashed it; dispatch: the flow
                          named by its dispatch binding (OOO_FID_NONE if none); fetch: the flow
                          whose rename freed the fetch-queue entry this one took (the entry
                          fe.fetch_queue positions earlier; OOO_FID_NONE for the first ones) */
  uint32_t rid_lq;     /* dispatch: first LQ entry taken (OOO_RID_NONE if none) */
  uint32_t rid_sq;     /* dispatch: first SQ entry taken (OOO_RID_NONE if none) */
  uint8_t n_lq, n_sq;  /* dispatch: LQ / SQ entries taken (consecutive, wrapping) */
  uint8_t pad2[6];
} ooo_ev;

/* Commit of a correct-path instruction with the binding constraint of each stage. */
typedef struct ooo_commit_ev {
  uint64_t cycle;
  uint64_t fid;        /* = model index */
  uint64_t pc;
  uint32_t sid;
  uint32_t rob;        /* ROB entry released */
  uint64_t fetch_cycle, dispatch_cycle, issue_cycle, complete_cycle;
  ooo_bind bind[OOO_NSTAGE];
  uint8_t slots;       /* rename slots it took (retiring) */
  uint8_t mispredicted;/* a branch that mispredicted (its younger work was squashed) */
  uint8_t pad[6];
} ooo_commit_ev;

/* Unfilled slots of a run of cycles [cycle, cycle + n_cycles), all alike: slots[c] per cycle. */
typedef struct ooo_slot_ev {
  uint64_t cycle;
  uint64_t n_cycles;
  uint8_t slots[OOO_SLOT_NUM]; /* per cycle, unfilled slots by category (filled slots are not
                                  here: they come with dispatch events) */
  uint8_t filled;              /* slots filled in each of these cycles (0 when n_cycles > 1) */
} ooo_slot_ev;

/* The observer: any callback may be NULL. ctx is passed back. Callbacks must not call back
 * into the model. */
typedef struct ooo_observer {
  void (*fetch)(void *ctx, const ooo_ev *e);
  void (*dispatch)(void *ctx, const ooo_ev *e);
  void (*issue)(void *ctx, const ooo_ev *e);
  void (*complete)(void *ctx, const ooo_ev *e);   /* per instruction, when its last micro-op completes */
  void (*commit)(void *ctx, const ooo_commit_ev *e);
  void (*squash)(void *ctx, const ooo_ev *e);     /* per squashed instruction (fetched or dispatched) */
  void (*slots)(void *ctx, const ooo_slot_ev *e);
  void (*mem)(void *ctx, const mem_event *e);     /* forwarded memory-system events */
} ooo_observer;

/* Render a core or memory resource id ("ROB[12]", "port P5", "L1D.mshr[3]", ...) into buf. */
const char *ooo_rid_name(uint32_t rid, char *buf, size_t n);

#endif

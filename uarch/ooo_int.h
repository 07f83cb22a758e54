/* ooo_int.h — private layout of the out-of-order model, shared by ooo_model.c (lifecycle, run
 * loop, timing wheel, checkpoints), ooo_front.c (fetch, prediction, repair), ooo_back.c
 * (rename/dispatch, issue, completion, load/store queues, commit, squash), ooo_stats.c and
 * ooo_config.c.
 *
 * Layout. `ooo_model` holds the configuration, the trace, caches and pointers; every array the
 * simulation mutates lives in one state block (`blk`) that starts with `ooo_state` (scalars)
 * and holds only indices, never pointers, so ooo_copy is a memcpy. Rings are powers of two and
 * indexed by free-running 64-bit positions (& mask).
 *
 * Hot-path structures:
 *   - window (win): correct-path instructions read from the trace, from the oldest uncommitted
 *     one to the fill point; refetched from here after a machine clear;
 *   - fetch queue (fq): fetched instructions waiting for rename (both paths);
 *   - ROB (rob): renamed instructions; their micro-ops are contiguous in the uop ring;
 *   - uops: one entry per micro-op; producer -> consumer links are nodes from a pool
 *     (singly linked, validated lazily by the consumer's sequence number);
 *   - per-port ready bitmaps over the uop ring: the oldest ready micro-op of a port is the first
 *     set bit from the ring head (oldest-ready-first without scanning the scheduler);
 *   - timing wheel of OOO_WHEEL buckets (doubly linked lists through the uops, so a squash
 *     unlinks in O(1)); events further than the wheel are parked in the last bucket and
 *     re-inserted when reached; a bitmap finds the next non-empty bucket for cycle skipping;
 *   - store queue (sq) in program order, including committed stores not yet written.
 */
#ifndef WHATIF_OOO_INT_H
#define WHATIF_OOO_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "batch_pf.h"
#include "decode.h"
#include "ooo.h"
#include "ras.h"

#define OOO_NIL UINT32_MAX
#define OOO_WHEEL 1024u      /* timing-wheel buckets (cycles) */
#define OOO_MAX_LD 8         /* load micro-ops per instruction (further reads are dropped) */
#define OOO_MAX_ST 4         /* store entries per instruction (further writes merge into the last) */
#define OOO_MAX_UOPS (OOO_MAX_CLASS_UOPS + OOO_MAX_LD + 2 * OOO_MAX_ST)
#define OOO_WIN_MEM 16       /* accesses kept per window instruction */
#define OOO_SFILT 4096       /* store filter counters (8-byte granules) */
#define OOO_SFLAST 512       /* store filter scan bounds (see sfilt_enter in ooo_back.c) */
#define OOO_TID_PC UINT32_MAX /* fq entry: template found by PC (wrong-path PC with no sid) */
#define OOO_TC 4096u         /* front cache of oo_tmpl_pc (entries; wrong paths after return
                                mispredictions wander through many PCs) */
/* Its slot for pc (ooo_model.c: oo_tmpl_pc, ooo_front.c: tmpl_at). */
static inline uint32_t oo_tc_slot(uint64_t pc) { return (uint32_t)(pc ^ (pc >> 12)) & (OOO_TC - 1); }

/* ---- static micro-op templates (not state) --------------------------------------------------- */

enum {
  TF_SERIAL = 1 << 0,   /* drain before and after */
  TF_ELIM = 1 << 1,     /* eliminated at rename (zero idiom, move, nop): no micro-op */
  TF_ZERO = 1 << 2,     /* zero idiom: destinations ready, no sources */
  TF_MOVE = 1 << 3,     /* eliminated move: destination aliases the source's producer */
  TF_STACK = 1 << 4,    /* push/pop/call/ret under the stack engine */
  TF_REP = 1 << 5,      /* string instruction with a rep prefix */
  TF_NOCODE = 1 << 6,   /* no code bytes at this PC (wrong path ends) */
};

/* Dispatch resources in the order rename checks them (the first short one is the stop reason). */
enum {
  OOO_RES_ROB = 0, OOO_RES_UOPS, OOO_RES_LINKS, OOO_RES_UNDO, /* OB_ROB_FULL */
  OOO_RES_SCHED,                                               /* + pool: OB_SCHED_FULL */
  OOO_RES_LQ = OOO_RES_SCHED + OOO_NPOOL, OOO_RES_SQ, OOO_RES_INT, OOO_RES_VEC,
  OOO_NRES_USED,
  OOO_NRES = 12                                                /* lanes (a multiple of 4) */
};
_Static_assert(OOO_NRES_USED <= OOO_NRES, "dispatch resource lanes");

/* What renaming an instruction takes apart from the addresses of its memory accesses. The plan
 * of an instruction without memory accesses or modifications is static and comes with its
 * template; others are computed when the instruction reaches the fetch-queue head (make_plan in
 * ooo_back.c). */
typedef struct ooo_phdr {
  const struct ooo_tmpl *t;
  uint32_t n_exec, n_ld, n_st, nu, slots;
  uint32_t need[OOO_NPOOL];   /* scheduler entries per pool */
  uint32_t n_int, n_vec, n_undo, max_links;
  uint64_t rob_counts;        /* the ROB entry's n_uops .. n_vec bytes, ready to store */
  uint64_t rob_img[2];        /* the ROB entry's flags .. last_uop, ready to store (plan_counts) */
  regset_t src, addr, dst;
  bool nop, rep, pmem;
  bool simple;                /* static plan with one computation micro-op and nothing else
                                 (dispatch_one's lean copy; never with OOO_NO_LEAN) */
  uint16_t rf;                /* the ROB entry's flags the template decides (RF_BRANCH, RF_SERIAL) */
  int32_t needv[OOO_NRES];    /* what it takes of each dispatch resource (OOO_RES_*); the links
                                 lane is max_links (check_resources) */
} ooo_phdr;

#define OOO_XPORTS 8 /* ports of a prebuilt micro-op listed for the port choice */
#define OOO_VPORTS 16 /* ports the vector port choice covers (ooo_model.port_vec) */

/* A computation micro-op of a template prebuilt for dispatch (oo_plan_static): the words
 * new_uop would compute, so renaming it is a few copies plus the dynamic fields. */
typedef struct ooo_ximg {
  _Alignas(16) uint16_t vnot[OOO_VPORTS]; /* lane p: 0 if port p can execute it, else 0x7fff
                                             (OR-ed into ooo_state.port_key by bind_port_x) */
  uint64_t small0;          /* ooo_uop.small[0]: kind, state US_WAIT, cls, pool, idx as if the
                               instruction had no loads; port 0 */
  uint64_t small1;          /* ooo_uop.small[1]: 0, or for the last one `last` and `br` */
  uint32_t latocc;          /* ooo_uop.lat | occ << 16 (cycles, clamped to 16 bits) */
  uint32_t ports;           /* bit p: port p can execute it */
  uint8_t np;               /* ports in plist, 0 if more than fit (dispatch walks `ports`) */
  uint8_t plist[OOO_XPORTS]; /* the ports of `ports` in increasing order */
  bool vec;                 /* bind_port_x takes the least port_key with vnot (m->port_vec, and
                               more than two ports: fewer are as cheap walked) */
} ooo_ximg;

typedef struct ooo_tmpl {
  uint64_t pc, target;
  regset_t src, addr_src, dst;
  uint32_t sid;             /* UINT32_MAX if never executed on the correct path */
  uint16_t flags;           /* TF_* */
  uint8_t cls, br, len;
  uint8_t n_exec;           /* computation micro-ops */
  uint8_t n_mem_def;        /* default accesses (wrong path): from the trace's static table or
                               the decoder */
  uint8_t n_int, n_vec;     /* physical registers its destinations take (0 when eliminated) */
  uint8_t n_dst, n_src;     /* destination registers; source + address registers */
  uint8_t mem_store_def;    /* bit i: default access i writes */
  uint16_t mem_size_def[2];
  ooo_uop_spec exec[OOO_MAX_CLASS_UOPS];
  const dec_insn *di;       /* decoded record (pointer into the trace or the decode cache) */
  ooo_phdr sp;              /* its plan without memory accesses or modifications */
  ooo_ximg ximg[OOO_MAX_CLASS_UOPS]; /* exec[] prebuilt (oo_plan_static; next to sp: rename
                                        reads both) */
  /* cache (not part of the template's meaning): the last plan header make_plan computed for it
   * and that header's key (loads, stores, nop, pmem, rep; 0 = none) */
  uint32_t dp_key;
  ooo_phdr dp;
} ooo_tmpl;

/* ---- state records ------------------------------------------------------------------------------ */

/* Modification bits of a window / fetch-queue entry (from the filter). */
enum { MOD_NOP = 1, MOD_PBRANCH = 2, MOD_PMEM = 4, MOD_LAT = 8 };

typedef struct ooo_win {
  uint64_t index;           /* model index (the FID) */
  uint64_t pc, next_pc;
  uint64_t mem_pos;         /* first access in the memory ring */
  uint32_t sid, rep;
  uint16_t n_mem;
  uint8_t flags;            /* TI_* */
  uint8_t mod;              /* MOD_* */
  int32_t lat_add, lat_set; /* MOD_LAT */
} ooo_win;

/* A fetched instruction waiting for rename. */
enum {
  FQ_WRONG = 1 << 0,    /* wrong path */
  FQ_MISPRED = 1 << 1,  /* correct-path branch whose prediction differs from the trace */
  FQ_GATE = 1 << 2,     /* low-confidence branch (counted in lowconf_n until it resolves) */
  FQ_TAKEN = 1 << 3,    /* predicted taken */
  FQ_MEM = 1 << 4,      /* has memory accesses (window entry, or the template's defaults on the
                           wrong path): rename needs a plan of its own, not the static one */
};

typedef struct ooo_fq {
  /* Order: the fetch loops (ooo_front.c) may store neighbouring fields (tid + bck, fe_rid +
   * flags + mod + pad) as one word or vector each. Fields that nothing
   * reads may hold stale data: lat_add / lat_set without MOD_LAT, wp_addr[i] on the correct
   * path and past the template's default accesses (n_mem_def) on the wrong path, fetch_cycle and
   * win on the wrong path (read from the ROB at commit only), fe_by / fe_rid on the wrong path
   * without bindings. */
  uint64_t fid;
  uint64_t pc;
  uint64_t fetch_cycle;
  uint64_t avail;           /* earliest rename cycle */
  uint64_t win;             /* window position (correct path) */
  uint64_t fe_by;           /* front-end binding: redirecting flow, or OOO_FID_NONE */
  uint64_t bck_at;          /* branch-checkpoint tail when fetched (first checkpoint at or after it) */
  uint32_t tid;             /* template: sid, or OOO_TID_PC */
  uint32_t bck;             /* branch checkpoint position (& mask), OOO_NIL if none */
  uint32_t fe_rid;          /* front-end binding resource */
  uint8_t flags;            /* FQ_* */
  uint8_t mod;              /* MOD_* (wrong path: from the filter) */
  uint8_t pad[2];
  int32_t lat_add, lat_set; /* MOD_LAT */
  uint64_t wp_addr[2];      /* wrong path: load/store addresses (0 = unknown) */
} ooo_fq;

/* A branch checkpoint (correct-path branches only): front-end state before the branch's own
 * update, the prediction's meta for the training at commit. */
typedef struct ooo_bck {
  bp_hist h;
  ras_ckpt ras;
  bp_meta meta;
  uint64_t pc;
  uint64_t fall;            /* fall-through PC */
  uint64_t next_pc;         /* actual next PC */
  uint32_t ind_idx;         /* indirect table index */
  uint32_t conf_idx;        /* confidence table index */
  uint8_t br;               /* branch kind */
  uint8_t taken;            /* actual direction */
  uint8_t mispred;
  uint8_t pred_taken;
  uint8_t btb_ok;           /* a direct branch found in the BTB at fetch (no update needed) */
} ooo_bck;

/* Reorder-buffer entry. A wrong-path entry of a model without bindings (no observer) keeps
 * stale win, fetch_cycle, dispatch_cycle, done_cycle, bck_at, sid and bck: only commit,
 * correct-path recovery and observers read them (dispatch_one in ooo_back.c). */
enum {
  /* (wrong, mispredicted, gate: the fetch-queue bits FQ_WRONG, FQ_MISPRED, FQ_GATE) */
  RF_WRONG = 1 << 0, RF_MISPRED = 1 << 1, RF_GATE = 1 << 2, RF_DONE = 1 << 3,
  RF_BRANCH = 1 << 4, RF_SERIAL = 1 << 5, RF_EXECUTED = 1 << 6, RF_LOADMISS = 1 << 7,
};

typedef struct ooo_rob {
  uint64_t fid, pc;
  uint64_t win;             /* window position (correct path) */
  uint64_t fetch_cycle, dispatch_cycle, done_cycle;
  uint64_t uop0;            /* first micro-op position */
  uint64_t undo0;           /* first undo-log position */
  uint64_t sq0;             /* first SQ position */
  uint64_t bck_at;          /* branch-checkpoint tail when fetched */
  uint32_t sid;
  uint32_t bck;             /* checkpoint position & mask, or OOO_NIL */
  uint16_t flags;           /* RF_* */
  uint8_t n_uops, left, slots, n_lq, n_sq, n_undo;
  uint8_t n_int, n_vec;     /* physical registers taken */
  uint8_t br;
  uint8_t miss;             /* levels its loads missed (bit 1 L1D, 2 L2, 3 LLC), when tracked */
  uint32_t last_uop;        /* slot of the micro-op that completed last */
  ooo_bind bind_dispatch;
} ooo_rob;

/* Micro-op states. */
enum { US_FREE = 0, US_WAIT, US_READY, US_MEMWAIT, US_ISSUED, US_RETRY, US_DONE };

typedef struct ooo_uop {
  /* first cache line: what dispatch, wakeup, issue and completion touch */
  uint64_t seq;             /* unique, increasing; 0 = free */
  uint64_t ready_cycle;     /* when its last source arrived (>= dispatch + 1) */
  uint64_t done_cycle;      /* loads: when the data is available (max over parts so far);
                               not kept for others */
  uint32_t rob;             /* ROB ring index */
  uint32_t dep_head;        /* first consumer link node */
  uint32_t ready_by;        /* slot of the producer that arrived last, OOO_NIL if none */
  uint32_t next, prev;      /* wheel links */
  uint16_t lat, occ;        /* cycles */
  uint16_t sched_id;        /* scheduler entry (kept with bindings only: observers name it) */
  uint16_t wb;              /* wheel bucket while in_wheel */
  union {                   /* small fields, cleared together at dispatch */
    struct {
      uint8_t kind;         /* OOO_UOP_* */
      uint8_t port;
      uint8_t state;        /* US_* */
      uint8_t pending;      /* sources not yet available */
      uint8_t cls;
      uint8_t pool;
      uint8_t idx;          /* index within the instruction */
      uint8_t bind_kind;    /* issue binding kind */
      uint8_t done_kind;    /* completion kind (OB_EXEC / OB_L1.. / OB_FORWARD) */
      uint8_t mparts;       /* memory requests outstanding */
      uint8_t last;         /* the instruction's result micro-op */
      uint8_t mdp;          /* load marked by the load-wait table */
      uint8_t pmem;         /* perfect memory (2: fixed latency `lat`) */
      uint8_t in_wheel;     /* linked in the timing wheel (bucket wb) */
      uint8_t br;           /* the branch micro-op (resolves the branch) */
      uint8_t issued;       /* a load that has taken its port (later parts continue without one) */
    };
    uint64_t small[2];
  };
  /* second line: issue, wheel and binding details */
  uint64_t issue_cycle;
  uint64_t ev_cycle;        /* wheel: cycle of its pending event */
  uint64_t bind_by;         /* issue binding: by flow */
  uint64_t fwd_fid;         /* load: the store it forwarded from (OOO_FID_NONE) */
  uint32_t bind_rid;
  uint32_t sq;              /* STA/STD: SQ position & mask */
  /* memory micro-ops only */
  uint64_t addr;            /* next byte to request */
  uint64_t end;             /* end of the range */
  uint64_t dep_sq;          /* load: SQ position of the youngest older overlapping store, or
                               UINT64_MAX */
  uint64_t sq_at;           /* load: SQ tail at dispatch (older stores are below) */
} ooo_uop;

/* Link node: consumer `cons` (a uop slot, valid while its seq is cons_seq) waits for the
 * producer whose list holds the node. */
typedef struct ooo_link {
  uint64_t cons_seq;
  uint32_t cons;
  uint32_t next;
} ooo_link;

/* Rename-map entry: producer micro-op (slot + seq) of an architectural register. */
typedef struct ooo_map {
  uint64_t seq;             /* 0: no producer in flight (value ready) */
  uint32_t slot;
  uint32_t off;             /* slot * sizeof(ooo_uop): rename's address of the producer without a
                               multiply */
} ooo_map;

typedef struct ooo_undo {
  ooo_map old;
  uint32_t reg;
  uint32_t pad;
} ooo_undo;

/* Store-queue entry. */
enum { SQS_INFLIGHT = 0, SQS_SENIOR, SQS_WRITING, SQS_WRITTEN };

typedef struct ooo_sq {
  uint64_t addr;
  uint64_t fid, pc;
  uint64_t sta_cycle;       /* address known (UINT64_MAX until the STA executes) */
  uint64_t std_seq;         /* store-data micro-op */
  uint64_t viol_seq;        /* oldest load that read before this address was known (0: none) */
  uint64_t drain_next;      /* next byte to write */
  uint64_t done;            /* write finished (UINT64_MAX until known) */
  uint64_t retry;           /* MEM_BLOCKED: retry at */
  uint32_t size;
  uint32_t std_slot;
  uint32_t viol_slot;
  uint32_t sid;
  uint8_t state;            /* SQS_* */
  uint8_t wrong_path;
  uint8_t parts;            /* write requests outstanding */
  uint8_t pmem;
  uint8_t std_done;
  uint8_t filt;             /* counted in the store filter */
  uint8_t pad[2];
} ooo_sq;

/* Fetch stall states. */
enum {
  FS_RUN = 0,
  FS_MISPRED,     /* waiting for a mispredicted branch to resolve (off / cap / no code) */
  FS_GATE,        /* waiting until at most conf_gate low-confidence branches are unresolved */
  FS_ICACHE,      /* waiting for an instruction-cache miss (MEM_PENDING) */
  FS_END,         /* trace exhausted on the correct path */
};

/* Memory request tags: kind in the top 2 bits, position and generation below. */
enum { TAG_LOAD = 0, TAG_STORE = 1, TAG_IFETCH = 2 };

/* Everything scalar of the state (at the start of the block). */
typedef struct ooo_state {
  uint64_t now;             /* current cycle */
  uint64_t uop_seq;         /* last micro-op sequence number handed out */
  uint64_t wp_count;        /* wrong-path instructions fetched (FID counter) */
  uint64_t last_commit_cycle;
  uint64_t last_commit_fid;
  bool finished;
  bool trace_end;           /* the cursor is exhausted */
  bool need_seek;           /* reposition the cursor at next_index before reading */
  uint8_t fstall;           /* FS_* */
  uint8_t recovering;       /* 0, or 1 + cause (0 branch, 1 clear): until the first correct-path
                               instruction after a redirect renames */
  uint8_t pad0[3];
  uint64_t next_index;      /* model index of the next trace instruction to read */
  /* window */
  uint64_t win_head, win_fetch, win_fill;
  uint64_t mem_head, mem_fill;
  /* fetch */
  bool wrong;               /* fetching down a wrong path */
  uint8_t pad1[7];
  uint64_t wp_pc;
  uint64_t wp_since;        /* wrong-path instructions since the misprediction */
  uint64_t fetch_resume;    /* no fetch before this cycle */
  uint64_t ic_line;         /* line address being fetched from (UINT64_MAX none) */
  uint64_t ic_refused;      /* line + 1 of the last instruction fetch the memory system refused
                               (its next request is a retry), 0 if none */
  uint32_t ic_gen;          /* instruction-fetch request generation */
  uint32_t pad2;
  uint32_t lowconf_n;       /* unresolved low-confidence branches (FQ_GATE / RF_GATE) */
  uint32_t pad8;
  uint64_t fe_by;           /* binding for the next fetched instruction */
  uint32_t fe_rid;
  uint32_t pad3;
  /* fetch queue */
  uint64_t fq_head, fq_tail;
  /* branch checkpoints */
  uint64_t bck_head, bck_tail;
  bp_hist hist;
  ras_hdr ras;
  /* ROB and micro-ops */
  uint64_t rob_head, rob_tail;
  uint32_t rob_slots;       /* slots in use */
  uint32_t int_free, vec_free;
  uint32_t link_free;       /* head of the link free list */
  uint32_t link_avail;      /* free link nodes */
  uint64_t uop_head, uop_tail;
  uint64_t undo_head, undo_tail;
  uint32_t sched_used[OOO_NPOOL];
  uint64_t sched_cur[OOO_NPOOL];       /* uop positions below hold no entry of the pool (observer
                                          bindings: the oldest waiting micro-op of a full pool) */
  uint32_t port_queued[OOO_MAX_PORTS]; /* micro-ops bound to the port, not yet issued */
  _Alignas(16) uint16_t port_key[OOO_MAX_PORTS]; /* port_queued << 4 | port (ports < OOO_VPORTS;
                                         meaningful when m->port_vec: the queues then fit 11 bits);
                                         aligned vector loads (the state is 64-byte aligned in the
                                         model's block) */
  uint32_t rdy_ports;                  /* bit p: rdy_sum[p] != 0 (port p has ready micro-ops) */
  uint64_t rdy_sum[OOO_MAX_PORTS];     /* bit w: word w of the port's ready bitmap is non-zero */
  uint64_t ublk_until[OOO_MAX_PORTS];  /* cycle: the micro-ops marked in the port's ublk bitmap
                                          wait for a busy unpipelined unit until at least then
                                          (UINT64_MAX: none marked) */
  uint64_t port_last_cycle[OOO_MAX_PORTS];
  uint64_t port_last_fid[OOO_MAX_PORTS];
  uint64_t serial_fid;      /* a serializing instruction in flight (OOO_FID_NONE if none) */
  /* dispatch binding of the last stalled cycle */
  ooo_bind stall;
  uint8_t pad9;
  uint8_t disp_wait;        /* 0 rename can act next cycle, 1 blocked on a resource, 2 waits for
                               the queue head's delivery, 3 nothing to rename */
  uint8_t fe_block;         /* fetch stopped on a full structure (woken by others) */
  uint8_t commit_stall;     /* OB_* kind of the current commit stall (OB_NONE if none) */
  uint8_t disp_stop;        /* OB_* reason rename stopped this cycle (OB_NONE: width not exhausted
                               by anything, or all slots filled) */
  uint8_t mem_wake;         /* the current cycle was chosen only for a memory-system event (all
                               core events are later, no observer): if that event does not call
                               back into the core, the core stages have nothing to do */
  uint8_t blk_lane;         /* rename's last failed resource check (check_resources_slow or
                               _lanes; for blk_still): 1 + the first short resource (OOO_RES_*),
                               0 none */
  uint8_t blk_stop;         /* its OB_* stop */
  uint32_t blk_need;        /* the fetch-queue head's need of that resource (links: max_links) */
  uint32_t blk_links;       /* the head's max_links */
  uint64_t blk_fid;         /* the head it failed for */
  uint64_t wheel_floor;     /* earliest cycle an event may be inserted for */
  /* load/store queues */
  uint64_t lq_head, lq_tail;
  uint64_t sq_head, sq_commit, sq_drain, sq_tail, sq_unres;
  uint32_t big_stores;      /* correct-path stores larger than 64 bytes in the SQ */
  uint32_t mblk_n;          /* loads refused by the memory system, waiting to retry */
  uint64_t mblk_retry;      /* cycle of their next retry (UINT64_MAX: none) */
  uint32_t mdpw_n;          /* loads waiting in the load-wait list */
  uint32_t mblk_h;          /* where the mblk_n waiting loads start in mblk_slot/mblk_seq */
  uint64_t mdp_epoch;       /* cycle of the last load-wait table clear */
  /* wheel */
  uint32_t wheel_n;         /* events in the wheel */
  uint32_t pad6;
  ooo_stats stats;
} ooo_state;
_Static_assert(offsetof(ooo_state, port_key) % 16 == 0, "ooo_state.port_key: aligned vector loads (bind_port_x)");

struct ooo_model {
  ooo_config cfg;
  const trace_t *trace;
  uint32_t n_static;
  unsigned flags;
  /* derived sizes */
  uint32_t win_cap, win_mask, mem_mask, fq_mask, rob_mask, uop_mask, link_n, undo_mask;
  uint32_t lq_mask, sq_mask, bck_mask, nwords; /* nwords: 64-bit words of a ready bitmap */
  uint32_t uop_bits;
  uint32_t line_bytes, line_shift;
  uint32_t sched_cap[OOO_NPOOL];
  uint32_t pool_of[OOO_UOP_NUM];
  uint32_t ras_depth;
  uint32_t max_ld, max_st;  /* memory micro-ops per instruction that always fit */
  uint32_t l1d_lat, l2_lat, llc_lat, l1i_lat;
  const bp_ops *bp;
  bp_geom geom;
  /* state block */
  uint8_t *blk;
  size_t blk_bytes;
  ooo_state *st;
  ooo_win *win;
  trace_mem *mem;           /* memory ring (accesses of window instructions) */
  ooo_fq *fq;
  ooo_bck *bck;
  uint64_t *bck_ras;        /* full RAS copies per checkpoint (ras_repair = full) */
  uint8_t *hist_ring;
  uint8_t *bp_state, *btb, *ind, *conf;
  uint64_t *ras_e;
  ooo_rob *rob;
  ooo_uop *uops;
  ooo_link *links;
  ooo_map *map;             /* RG_NUM entries */
  ooo_undo *undo;
  uint16_t *sched_free[OOO_NPOOL]; /* free entry numbers per pool (used with bindings only) */
  uint64_t *rdy;            /* OOO_MAX_PORTS x nwords */
  uint64_t *rdy_of[OOO_MAX_PORTS];  /* &rdy[p * nwords]: port p's ready bitmap (no multiply) */
  uint64_t *ublk_of[OOO_MAX_PORTS]; /* &ublk[p * nwords] */
  uint64_t *ublk;           /* OOO_MAX_PORTS x nwords: ready micro-ops that found their unit busy
                               (issue skips them until ublk_until, then clears the port's marks;
                               a squashed ready micro-op's mark is cleared by squash_uop) */
  uint32_t *wheel;          /* OOO_WHEEL heads */
  uint64_t *wheel_bits;     /* OOO_WHEEL / 64 */
  uint64_t *lq;             /* LQ ring: flow of each load (for bindings) */
  ooo_sq *sq;
  uint32_t *mdpw;           /* load-wait list: uop slots */
  uint32_t *mblk_slot;      /* refused loads in age order from st->mblk_h: uop slot ... */
  uint64_t *mblk_seq;       /* ... and its sequence number (stale entries are skipped) */
  uint8_t *mdp;             /* load-wait table */
  uint16_t *sfilt;          /* store filter */
  uint64_t *sflast;         /* store filter scan bounds: SQ positions (OOO_SFLAST) */
  uint64_t *unit_free;      /* OOO_MAX_PORTS x IC_NUM: unpipelined unit busy until */
  uint64_t *last_addr;      /* n_static x 2: last correct-path addresses */
  uint64_t *dsb;            /* uop cache: line address + 1 per entry (0 = empty) */
  ooo_sid_stats *sid_stats; /* n_static, or NULL */
  /* not state */
  trace_cursor *cur;
  batch_pf *rd;             /* reads cur (on a second thread with OOO_READER) */
  trace_batch batch;
  size_t batch_pos;
  dec_cache *dcache;
  ooo_tmpl *tmpl;           /* n_static templates by sid (built lazily) */
  uint8_t *tmpl_ok;
  ooo_tmpl **wp_blk;        /* templates of wrong-path-only PCs, in blocks of 256 (pointers to
                               them stay valid) */
  size_t wp_n, wp_nblk;
  wi_map64 wp_map;          /* pc -> template (sid | top bit, wrong-path index, or OOO_NIL) */
  uint64_t tc_pc[OOO_TC];   /* direct-mapped front cache of oo_tmpl_pc: pc + 1 (0 = empty) */
  const ooo_tmpl *tc_t[OOO_TC];
  mem_sys *memsys;
  const ooo_observer *obs;
  void *obs_ctx;
  ooo_filter_fn filter;
  void *filter_ctx;
  wi_err err;               /* trace read error raised inside the run loop */
  bool failed;
  uint64_t mem_cbs;         /* memory-system callbacks into the core so far (not state: only
                               compared within one step) */
  uint64_t mem_only_cycles; /* cycles stepped with the core stages left out (not state) */
  uint64_t core_next;       /* next_cycle's core part (the next cycle any core stage can act)
                               when the memory system's next event came first; core_next_set:
                               set in this ooo_run (not state) */
  bool core_next_set;
  /* the rename plan of the fetch-queue head, kept while it waits for resources (not state:
   * invalidated by squashes, copies and filters) */
  bool lvl_track;           /* memory events tell which levels a load missed (OOO_SID_STATS or a
                               memory observer): precise per-sid miss counts */
  const uint16_t *vnot_load; /* ldv when port_vec and ports.load has more than two ports, else
                               NULL (new_uop binds a load with bind_port_v) */
  _Alignas(16) uint16_t ldv[OOO_VPORTS]; /* ooo_ximg.vnot of ports.load */
  bool port_vec;            /* at most OOO_VPORTS ports, fewer than 2047 scheduler entries in all
                               and no OOO_NO_LEAN: the port choice takes the least port_key with
                               SSE2 (bind_port_v) for more than two ports */
  bool binds;               /* keep the bindings observers see (no OOO_NO_BINDINGS): ready_cycle,
                               ready_by, bind_*, fwd_fid of micro-ops, port_last_*, the LQ ring,
                               last_uop, the dispatch stall record; nothing simulated reads them */
  uint64_t cur_fid;         /* the flow whose memory request is being made */
  uint32_t cur_miss;        /* levels it missed so far (MEV_MISS events during mem_access) */
  bool hp_valid;
  uint64_t hp_pos, hp_fid;
  const ooo_phdr *hp_h;     /* its header: in hp, or the template's cached one (make_plan) */
  uint8_t hp[512];
  struct oo_fblk *fblk;     /* wrong-path fetch blocks (ooo_front.c; not state): NULL until used */
};

/* ---- shared helpers ----------------------------------------------------------------------------- */

/* ooo_model.c */
const ooo_tmpl *oo_tmpl_build_sid(ooo_model *m, uint32_t sid);
static inline const ooo_tmpl *oo_tmpl_sid(ooo_model *restrict m, uint32_t sid) {
  return m->tmpl_ok[sid] ? &m->tmpl[sid] : oo_tmpl_build_sid(m, sid);
}
const ooo_tmpl *oo_tmpl_pc(ooo_model *m, uint64_t pc); /* wrong-path lookups; NULL if no code */

/* ooo_front.c */
void oo_fetch(ooo_model *m, uint64_t now);
void oo_redirect(ooo_model *restrict m, uint64_t now, uint64_t fid, uint64_t win_pos, uint32_t penalty,
                 int cause);
void oo_restore_branch(ooo_model *m, uint32_t bck, bool apply_outcome);
void oo_train_branch(ooo_model *m, uint32_t bck);
bool oo_fill_window(ooo_model *m);
void oo_icache_done(ooo_model *m, uint32_t tag, uint64_t cycle);

/* ooo_back.c */
/* Fill t->sp, the plan of the template without memory accesses or modifications. */
void oo_plan_static(const ooo_model *m, ooo_tmpl *t);
/* Complete the micro-ops whose events fall in cycle `now` (its timing-wheel bucket; parked far
 * events move closer). */
void oo_complete_due(ooo_model *m, uint64_t now);
/* Commit from the ROB head, which can commit (not empty, commit_width > 0, oo_head_stall
 * OB_NONE: the caller checked). */
void oo_commit(ooo_model *m, uint64_t now);
void oo_drain(ooo_model *m, uint64_t now);
void oo_issue(ooo_model *m, uint64_t now);
void oo_dispatch(ooo_model *m, uint64_t now);
void oo_load_done(ooo_model *m, uint32_t tag, uint64_t cycle);
void oo_store_done(ooo_model *m, uint32_t tag, uint64_t cycle);
uint64_t oo_backend_next(const ooo_model *m, uint64_t now);
void oo_mem_retry(ooo_model *m, uint64_t now);
/* Slot category of unfilled rename slots when rename stopped for `stop` after `used` slots. */
int oo_slot_category(ooo_model *m, int stop, uint32_t used);
/* Account a rename cycle lost to `stop` (disp_stop, the stall count, every slot unfilled). */
void oo_rename_lost(ooo_model *m, int stop);

static inline ooo_rob *oo_rob(ooo_model *m, uint64_t pos) { return &m->rob[pos & m->rob_mask]; }

/* c ? a : b without a host branch (for unpredictable conditions the compiler would branch on). */
static inline uint32_t oo_sel32(bool c, uint32_t a, uint32_t b) { return b ^ ((a ^ b) & (0u - (uint32_t)c)); }
static inline uint64_t oo_sel64(bool c, uint64_t a, uint64_t b) { return b ^ ((a ^ b) & (0ull - (uint64_t)c)); }

/* Timing wheel: insert micro-op `slot` for an event at `cycle` (clamped to the wheel floor);
 * events more than OOO_WHEEL cycles ahead are parked in the last bucket and re-inserted. */
static inline __attribute__((always_inline)) void oo_wheel_insert(ooo_model *restrict m, uint32_t slot,
                                                                  uint64_t cycle) {
  ooo_state *st = m->st;
  ooo_uop *u = &m->uops[slot];
  if (cycle < st->wheel_floor) cycle = st->wheel_floor;
  u->ev_cycle = cycle;
  uint64_t at = cycle - st->now >= OOO_WHEEL ? st->now + OOO_WHEEL - 1 : cycle;
  uint32_t b = (uint32_t)at & (OOO_WHEEL - 1);
  u->wb = (uint16_t)b;
  u->next = m->wheel[b];
  /* branch-free (whether a bucket is empty is unpredictable): with no successor the store lands
   * on u->prev itself, set right after */
  m->uops[oo_sel32(u->next != OOO_NIL, u->next, slot)].prev = slot;
  u->prev = OOO_NIL;
  m->wheel[b] = slot;
  m->wheel_bits[b >> 6] |= 1ULL << (b & 63);
  u->in_wheel = 1;
  st->wheel_n++;
}

static inline void oo_wheel_unlink(ooo_model *restrict m, uint32_t slot) {
  ooo_uop *u = &m->uops[slot];
  uint32_t b = u->wb;
  if (u->prev != OOO_NIL) m->uops[u->prev].next = u->next;
  else m->wheel[b] = u->next;
  /* branch-free: with no successor this rewrites u->prev unchanged */
  m->uops[oo_sel32(u->next != OOO_NIL, u->next, slot)].prev = u->prev;
  if (m->wheel[b] == OOO_NIL) m->wheel_bits[b >> 6] &= ~(1ULL << (b & 63));
  u->in_wheel = 0;
  m->st->wheel_n--;
}

static inline void oo_wheel_remove(ooo_model *restrict m, uint32_t slot) {
  if (m->uops[slot].in_wheel) oo_wheel_unlink(m, slot);
}
/* An observer event of flow fid (instruction pc, static sid) at cycle now on resource rid;
 * every other field zero. */
static inline ooo_ev oo_ev_make(uint64_t now, uint64_t fid, uint64_t pc, uint32_t sid, uint32_t rid, bool wrong) {
  ooo_ev e;
  memset(&e, 0, sizeof e);
  e.cycle = now;
  e.fid = fid;
  e.pc = pc;
  e.sid = sid;
  e.rid = rid;
  e.wrong_path = wrong;
  return e;
}

/* Why the ROB head `r` cannot commit at cycle `now` (OB_NONE if it can): not complete yet
 * (a load miss or execution), or completed less than commit_latency cycles ago. */
static inline uint8_t oo_head_stall(const ooo_model *m, const ooo_rob *r, uint64_t now) {
  if (!(r->flags & RF_DONE)) return (r->flags & RF_LOADMISS) ? OB_L2 : OB_EXEC;
  return r->done_cycle + m->cfg.core.commit_latency > now ? OB_COMPLETION : OB_NONE;
}
static inline ooo_fq *oo_fq(ooo_model *m, uint64_t pos) { return &m->fq[pos & m->fq_mask]; }
static inline ooo_win *oo_win(ooo_model *m, uint64_t pos) { return &m->win[pos & m->win_mask]; }

#endif

/* gus_model.c — the Gus model proper: persistent taint sets, tag-only caches and the
 * per-instruction step (gus_new / gus_step / gus_finish). */
#include "gus.h"
#include "gus_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef uint64_t gtick; /* GUS_TICKS per cycle */

#define ALWAYS_INLINE inline __attribute__((always_inline))
#define STLF_BITS 6     /* store-forwarding table: 64 entries by exact address, direct mapped */
#define STLF_N (1u << STLF_BITS)
#define QP_BITS 4       /* taint-queue test paths: QP_N of them */
#define QP_N (1u << QP_BITS)
#define QP_FAST 4       /* q_new walks this many nodes before it calls q_walk */
#define QP_CUT 8        /* a walk meeting a path this many nodes below its newest cuts them off */
#define N_LINKS 3       /* bandwidth links: 0 l2 -> l1d, 1 llc -> l2, 2 dram -> llc */

/* ======================================================================================
 * Taint sets
 *
 * Every set the model forms is "an existing set plus the current instruction n": taint sets are
 * binding chains. A set value (gtv) is a node (an immutable, persistent set: an interval of
 * instruction indices plus a parent node) and a pending interval [lo, hi] of recent indices, so
 * that extending a set by the next instruction costs nothing. Extending it by an instruction
 * that does not continue the interval materializes the interval as a new node: O(1), no copy.
 * Along a chain the intervals strictly decrease, so "is j a member" is decided by the oldest
 * node of the chain whose hi >= j (j is a member iff that node's lo <= j).
 * The taint-queue tests ask with j = n - Q, one more each instruction. They keep a few chains,
 * the paths (gpath), each an array of node ids, oldest first, each the parent of the next; the
 * first node's parent is either older than j (a root path) or a node on another path, the base.
 * Every node on a path records which path and where (gnode.mark). A test walks its set's chain
 * from the head only until it meets a node on a path: the chain's oldest live node is then that
 * path's oldest live one, or, while its base is live, the base path's (and so on). The walked
 * nodes extend the met path when they meet its newest node or one at most QP_CUT below (the
 * nodes above are cut off), else they form a new path based on it (the least recently used path
 * is reset; paths based on what was reset or cut off are found unsound, and reset, when met).
 * A chain whose only live node is its head needs no path (qp[QP_N]). Consecutive dispatch sets share most of their chains, and sets that alternate
 * between a few chains (interleaved dependency chains) each keep a path: a test walks a node or
 * two, if any.
 * Nodes live in a ring indexed by id; an entry is reused only once every member it holds is
 * older than the window (the ring grows otherwise), and stale references are detected by id.
 * Members older than n - R + 1 are dropped: no test ever asks for them (R > Q).
 * Every set the step of instruction n forms holds n (it comes from a tv_add of n or from a set
 * that did), so at the next step the front end's, dispatch's and retire's sets end at n - 1, and
 * no register's or ROB entry's set holds n before n writes its results: the step skips the tests
 * of tv_add and tv_has_q that these facts decide (tv_next, tv_add_h, tv_has_q_h, use_res), and the
 * self-check counts every set that breaks them (check_holds).
 * ====================================================================================== */

typedef struct gtv {
  uint64_t hi; /* pending interval [hi - len, hi] */
  uint64_t nl; /* node id << TV_LEN_BITS | len; len == TV_NOLEN: no pending interval (hi = TV_NOHI) */
} gtv;         /* 16 bytes: passed and returned in registers */
#define TV_LEN_BITS 24
#define TV_NOLEN ((1u << TV_LEN_BITS) - 1)
#define TV_NOHI UINT64_MAX /* hi of a set without a pending interval */
#define TV_MAX_NODE (1ULL << (64 - TV_LEN_BITS))
static const gtv TV_EMPTY = {TV_NOHI, TV_NOLEN};
static inline uint64_t tv_node(gtv v) { return v.nl >> TV_LEN_BITS; }
static inline uint32_t tv_len(gtv v) { return (uint32_t)(v.nl & TV_NOLEN); }

typedef struct gnode {
  uint64_t id;     /* id of the node in this slot (0 = never used) */
  uint64_t hi;     /* the instructions this node adds: [hi - len, hi] */
  uint64_t parent; /* the rest of the set (node id), 0 = none */
  uint32_t len;
  uint32_t mark;   /* on a path: index << QP_BITS | path (the index's low bits; on_path) */
} gnode;           /* 32 bytes: slots are found by a shift, not a multiply */

/* A path of the taint-queue tests (see "Taint sets"). */
typedef struct gpath {
  uint64_t *ids;     /* ids[i & mask] for i in [tail, top): node ids, oldest first */
  uint64_t mask;
  uint64_t tail, top;
  uint64_t lo, hi;   /* the interval of the node at tail (immutable while it is there) */
  uint64_t base_id;  /* the parent of the node at the first index (on path `base`); 0 = none */
  uint64_t base_hi;  /* its hi */
  uint64_t base_idx; /* its index there (sound while it is still there, or dead) */
  uint64_t used;     /* j + 1 of the last test that used it (least recently used is reset first) */
  uint32_t base;
} gpath;

typedef struct gstlf {
  uint64_t key;  /* store address + 1; 0 = empty */
  uint64_t n;    /* index of the store */
  gtick t;       /* store data ready */
  uint32_t size; /* bytes stored */
  gtv tv;
} gstlf;

/* A class micro-op with its costs per port precomputed (ticks), so that the step multiplies
 * nothing: cost[p] = occupancy x port p's cost per cycle, lat[p] = latency x port p's latency. */
typedef struct gxuop {
  uint32_t ports;
  uint32_t np;              /* ports in pl */
  uint8_t pl[GUS_MAX_PORTS]; /* the ports of `ports`, ascending (pick_port scans them without a bit loop) */
  gtick cost[GUS_MAX_PORTS], lat[GUS_MAX_PORTS];
} gxuop;

typedef struct gxcls {
  uint32_t n;
  gxuop u[GUS_MAX_UOPS];
} gxcls;

/* Everything the step needs about a static instruction, computed on first sight (build_sinfo). */
typedef struct gsinfo {
  regset_t data, addr, dst;
  const gxcls *xc;  /* the class's micro-ops (g->xcls[cls]) */
  gtick disp_cost;  /* dispatch slots without store accesses x cost_disp (ticks) */
  uint8_t cls, nuops;
  uint8_t serial, stack, built, taken; /* taken: a branch and the front end limits taken branches */
  uint8_t plain; /* neither serial nor stack: the step's lean copies (run_batch) */
} gsinfo;

#define L1_HINT_BITS 8
#define L1_HINT_N (1u << L1_HINT_BITS)

typedef struct gcache {
  uint64_t *tags;  /* [sets * ways], MRU first within a set (L1D: in no order); line + 1, 0 = empty */
  uint32_t sets, ways;
  /* L1D only: LRU by last-use stamps, so that a hit below the MRU way (loops over arrays that
   * share sets) stores one stamp instead of moving the ways above it; a line and its data stay
   * in their way. The same LRU order as a list kept MRU-first, so the same hits and victims. */
  uint64_t *stamp; /* [sets * ways]: clock at the way's last use; 0 = never (empty) */
  uint32_t *hint;  /* [L1_HINT_N] by line hash: a way index (base + way) that held the line at
                    * its last use; a guess, checked against tags (streams that share sets hit here
                    * without a scan of the set's ways) */
  uint64_t clock;  /* uses so far */
  gtick *ready;    /* [sets * ways]: when the line's data arrives (fills in flight) */
  gtv *tv;         /* [sets * ways]: the taint of that arrival (not kept up to date without taint) */
} gcache;

struct gus {
  gus_machine m;
  bool taint_on, selfcheck, prefetch;
  uint32_t window;
  uint64_t Q;    /* taint-queue length (instructions) */
  uint64_t R;    /* ring of positions: a multiple of 64, > Q */
  uint64_t qmask; /* qsid holds instruction e at e & qmask: a power of two minus one, >= Q */
  /* taint-set storage */
  gnode *nodes;
  uint64_t nmask, nid;
  uint64_t selfcheck_bad, selfcheck_n;
  uint64_t selfcheck_inv; /* sets that broke what the step's shortcuts assume (check_holds) */
  uint64_t q_steps; /* nodes the taint-queue tests walked beyond their set's head (gus_walk_steps) */
  /* the paths of the taint-queue tests (see "Taint sets"); qw: the nodes a test walked, newest
   * first */
  gpath qp[QP_N + 1]; /* [QP_N]: a chain whose only live node is its head (never marked) */
  uint32_t qp_n;      /* paths in use: QP_N (fewer in tests: gus_set_paths) */
  uint64_t *qw;
  uint32_t qs;     /* the path of node qx_id */
  uint32_t qf;     /* the path holding that chain's oldest live node: qs or one of its bases */
  uint64_t qf_end; /* qf stays so while j < qf_end (the base that led there is live) */
  /* the node the last test reached (on the path until a walk cuts it off) and its hi + 1; 0, 0 at
   * first: id 0 (no node) then answers "not a member" */
  uint64_t qx_id, qx_end;
  /* the newest node ever put on a path (ids grow: a parent is older than its child); a newer
   * node is on no path, which spares q_new the test for the usual new head node */
  uint64_t q_top_id;
  /* a pair of nodes the tests take for one another: node pair_n is node pair_p's set plus
   * [pair_lo, pair_hi] (newer than pair_p's members), a pending interval the dispatch has just
   * materialized (see step_impl). While pair_ok (q_new clears it), qx_id is one of them and
   * qx_*, qs, qf describe pair_p's chain. */
  uint64_t pair_p, pair_n, pair_lo, pair_hi;
  bool pair_ok;
  /* costs and latencies (ticks) */
  gtick cost_fe, cost_taken, cost_disp, cost_ret, ret_lat, fe_lat, fq_lag;
  gtick cost_port[GUS_MAX_PORTS], lat_port[GUS_MAX_PORTS]; /* lat_port: ticks per cycle of latency */
  gxcls xcls[IC_NUM]; /* m.cls with tick costs per port */
  gxuop xload, xsta, xstd; /* m.load (lat: the L1D latency), m.sta, m.std */
  gtick stlf_lat[GUS_MAX_PORTS]; /* store-forwarding latency on each port (ticks) */
  gtick lat_lvl[4];                                         /* [1] L2, [2] LLC, [3] DRAM */
  gtick cost_link[N_LINKS];
  gtick lat_stlb, lat_walk, lat_rcd, lat_rp;
  uint64_t *open_row; /* [channels * banks]: open row + 1, 0 = none */
  uint32_t rob, nfb, lsh, psh;
  /* state */
  uint64_t n;
  gtick fe_avail, disp_avail, ret_avail, last_ret, last_taken;
  gtv fe_tv, disp_tv, ret_tv;
  gtick pavail[GUS_MAX_PORTS];
  gtv ptv[GUS_MAX_PORTS];
  gtick lavail[N_LINKS];
  gtv ltv[N_LINKS];
  gtick *fbavail;
  gtv *fbtv;
  /* the fill buffer that frees first (the lowest-numbered on ties): the misses take them in
   * turn. Every miss's line crosses the L2 -> L1D link last and its buffer frees at its slot
   * there, and those slots strictly increase: a buffer just taken frees after all others. */
  uint32_t fbnext;
  gtick ravail[RG_NUM];
  gtv rtv[RG_NUM];
  gtick *robt; /* [rob]: retire time + 1 of the instruction in each ROB entry (0: never used, so
                * an entry binds dispatch only once it was: no test of n against rob) */
  gtv *robtv;
  uint32_t rpos;
  gstlf stlf[STLF_N];
  uint32_t *qsid; /* [qmask + 1]: sid of each instruction in the taint queue (and n), by index & qmask */
  gcache cache[3];
  gcache dtlb, stlb; /* tags are page numbers */
  /* per static instruction */
  gsinfo *si;
  uint64_t *taint, *count;
  uint32_t scap;
  /* statistics */
  gus_res_stats rs[GUS_R_MAX];
  uint64_t miss[3];
  /* [bind + 1]: results decided by each binding id (-1: the instruction's own dispatch); counted
   * without a branch on the id, folded into rs[].bound, bound_data and bound_memdep at the end */
  uint64_t bound_res[GUS_B_NUM + 1];
};

/* Oldest instruction any future test can ask about. */
static inline uint64_t window_lo(const gus *g, uint64_t n) { return n + 1 > g->R ? n + 1 - g->R : 0; }

/* Rare (the ring doubles a few times per run at most): kept out of line so that node_new's fast
 * path needs fewer registers. */
static __attribute__((noinline, cold)) void grow_nodes(gus *g) {
  uint64_t on = g->nmask + 1, nn = on * 2;
  gnode *nw = xcalloc(nn, sizeof *nw);
  for (uint64_t i = 0; i < on; i++)
    if (g->nodes[i].id) nw[g->nodes[i].id & (nn - 1)] = g->nodes[i];
  free(g->nodes);
  g->nodes = nw;
  g->nmask = nn - 1;
}

static inline const gnode *node_get(const gus *g, uint64_t id) {
  const gnode *x = &g->nodes[id & g->nmask];
  return x->id == id ? x : NULL;
}

static inline uint64_t node_lo(const gnode *x) { return x->hi - x->len; }
/* A new node adding [lo, hi] to the set `parent`; returns its id, or the parent's when nothing of
 * [lo, hi] is within the window. The parent (and members of [lo, hi]) may be older than the
 * window: tests never ask about them, and walks stop at the first node older than what they ask. */
static uint64_t node_new(gus *g, uint64_t parent, uint64_t lo, uint64_t hi, uint64_t n) {
  if (hi + g->R <= n) return parent;
  const uint64_t id = ++g->nid;
  if (__builtin_expect(id >= TV_MAX_NODE, 0)) wi_die(70, "gus: more than 2^40 taint-set nodes in one run");
  gnode *x = &g->nodes[id & g->nmask];
  if (__builtin_expect(x->id && x->hi + g->R > n, 0)) {
    grow_nodes(g);
    x = &g->nodes[id & g->nmask];
  }
  x->id = id;
  x->hi = hi;
  x->len = (uint32_t)(hi - lo); /* < R + TV_CLAMP: pending intervals saturate there (tv_next) */
  x->parent = parent;
  /* mark: any value; the path cannot hold the new id */
  return id;
}

/* The set *src plus instruction n (never older than any member). When that needs a new node,
 * *src is rewritten to the equivalent materialized form so that later users share the node.
 * The common cases first: a set without a pending interval has hi = TV_NOHI, never n.
 * HOLDS: *src may hold n already (false: the caller knows it cannot, e.g. a register's set
 * before the step writes results). */
static ALWAYS_INLINE gtv tv_add_h(gus *g, gtv *src, uint64_t n, const bool HOLDS) {
  gtv v = *src;
  if (HOLDS && v.hi == n) return v;
  uint32_t len = tv_len(v);
  if (v.hi + 1 == n && len != TV_NOLEN) {
    /* members older than the window are never asked about: the length saturates at R (and comes
     * back to R from the longer intervals tv_next leaves between two tv_clamp calls) */
    v.hi = n;
    if (__builtin_expect(len < g->R, 1)) v.nl++;
    else v.nl -= len - g->R;
    return v;
  }
  if (len == TV_NOLEN) {
    v.hi = n;
    v.nl &= ~(uint64_t)TV_NOLEN; /* len 0: [n, n] */
    return v;
  }
  uint64_t id = node_new(g, tv_node(v), v.hi - len, v.hi, n);
  src->hi = TV_NOHI;
  src->nl = id << TV_LEN_BITS | TV_NOLEN;
  gtv r = {n, id << TV_LEN_BITS};
  return r;
}

static ALWAYS_INLINE gtv tv_add(gus *g, gtv *src, uint64_t n) { return tv_add_h(g, src, n, true); }

/* Self-check: the step's shortcuts (tv_next, tv_add_h and tv_has_q_h without their tests, and
 * use_res taking its floor's set as it is) rest on which sets hold instruction n: every chain's
 * and the front end's, dispatch's and retire's after n's step, no register's or ROB entry's
 * before n's results. Counts v when it does not hold n (with a pending interval ending there) as
 * `want` says. */
static ALWAYS_INLINE void check_holds(gus *g, gtv v, uint64_t n, bool want) {
  const bool holds = v.hi == n && tv_len(v) != TV_NOLEN;
  g->selfcheck_inv += holds != want;
}

/* tv_add for a set whose pending interval ends at n - 1 (the front end's, dispatch's and
 * retire's: every step leaves them holding that step's instruction). The length is not capped
 * at R here (one add, no compare): a longer interval holds only members older than the window
 * besides, so every test answers the same. A set only grows past R through tv_next, along the
 * front end's, dispatch's and retire's sets (tv_add_h brings what passes through it back to R),
 * and tv_clamp caps those every TV_CLAMP steps: lengths stay below R + TV_CLAMP < TV_NOLEN. */
static ALWAYS_INLINE gtv tv_next(gtv v, uint64_t n) {
  v.hi = n;
  v.nl++;
  return v;
}

/* Steps between tv_clamp calls: R < TV_NOLEN is a multiple of 64, so R + TV_CLAMP < TV_NOLEN. */
#define TV_CLAMP 32

static inline gtv tv_cap(const gus *g, gtv v) {
  const uint32_t len = tv_len(v);
  if (len != TV_NOLEN && len > g->R) v.nl -= len - g->R;
  return v;
}

/* Cap the lengths tv_next lets grow (at most every TV_CLAMP steps: see tv_next). */
static void tv_clamp(gus *g) {
  g->fe_tv = tv_cap(g, g->fe_tv);
  g->disp_tv = tv_cap(g, g->disp_tv);
  g->ret_tv = tv_cap(g, g->ret_tv);
}

/* Whether node x is on a path: which (*ps) and where (*at). */
static ALWAYS_INLINE bool on_path(const gus *g, const gnode *x, uint32_t *ps, uint64_t *at) {
  const uint32_t s = x->mark & (QP_N - 1);
  const gpath *P = &g->qp[s];
  const uint64_t i = P->tail + (((x->mark >> QP_BITS) - (uint32_t)P->tail) & (UINT32_MAX >> QP_BITS));
  *ps = s;
  *at = i;
  return i < P->top && P->ids[i & P->mask] == x->id;
}

/* Whether path s's chain is known down to its oldest live node: every live base it rests on is
 * still on the path it was linked to. If so, *pf is the path holding that node and *end bounds
 * the j for which it does (the hi + 1 of the live base that led there). */
static ALWAYS_INLINE bool path_resolve(const gus *g, uint32_t s, uint64_t j, uint32_t *pf, uint64_t *end) {
  uint64_t e = UINT64_MAX;
  for (unsigned k = 0; k < QP_N; k++) {
    const gpath *P = &g->qp[s];
    if (!P->base_id || P->base_hi < j) {
      *pf = s;
      *end = e;
      return true;
    }
    const gpath *B = &g->qp[P->base];
    if (P->base_idx < B->tail || P->base_idx >= B->top || B->ids[P->base_idx & B->mask] != P->base_id) return false;
    e = P->base_hi + 1;
    s = P->base;
  }
  return false; /* a cycle of bases (cannot form: a base is older than what rests on it) */
}

static bool path_sound(const gus *g, uint32_t s, uint64_t j) {
  uint32_t f;
  uint64_t e;
  return path_resolve(g, s, j, &f, &e);
}

/* Drop path P's nodes older than j from its tail; it holds a live node (hi >= j). */
static __attribute__((noinline)) void path_trim(gus *g, gpath *P, uint64_t j) {
  for (;; P->tail++) {
    const uint64_t id = P->ids[P->tail & P->mask];
    const gnode *y = &g->nodes[id & g->nmask];
    if (y->id == id && y->hi >= j) {
      P->lo = node_lo(y);
      P->hi = y->hi;
      return;
    }
  }
}

static __attribute__((noinline, cold)) void path_grow(gpath *P, uint64_t want) {
  uint64_t nc = (P->mask + 1) * 2;
  while (nc < want) nc *= 2;
  uint64_t *ids = xmalloc(nc * sizeof *ids);
  for (uint64_t i = P->tail; i < P->top; i++) ids[i & (nc - 1)] = P->ids[i & P->mask];
  free(P->ids);
  P->ids = ids;
  P->mask = nc - 1;
}

/* For a chain whose head x (live, hi >= j) is on no sound path: walk from x until a node of a
 * sound path, or the end of the live chain, and put the walked nodes on a path. Returns it, or
 * QP_N when x is the chain's only live node (no path needed). */
static __attribute__((noinline)) uint32_t q_walk(gus *g, const gnode *x, uint64_t j) {
  size_t nw = 0;
  uint64_t at = 0;
  uint32_t ms = 0;
  bool met = false;
  for (;;) {
    g->qw[nw++] = x->id;
    const uint64_t pid = x->parent;
    const gnode *p = &g->nodes[pid & g->nmask];
    if (!pid || p->id != pid || p->hi < j) break;
    if (on_path(g, p, &ms, &at)) {
      if (path_sound(g, ms, j)) {
        met = true;
        break;
      }
      /* rests on a reset path: reset it too (its nodes are walked like any others) */
      gpath *B = &g->qp[ms];
      B->tail = B->top;
    }
    x = p;
  }
  g->q_steps += nw - 1;
  if (!met && nw == 1) {
    gpath *D = &g->qp[QP_N];
    D->lo = node_lo(x);
    D->hi = x->hi;
    return QP_N;
  }
  gpath *P;
  uint32_t s;
  if (met && at + 1 + QP_CUT >= g->qp[ms].top) {
    /* the walk meets the met path's newest node or one just below (a set that another test
     * extended differently; paths based above are found unsound): cut and extend it */
    s = ms;
    P = &g->qp[s];
    P->top = at + 1; /* (dead nodes at its tail go when a test next reads it: path_trim) */
  } else {
    /* a new path in the least recently used slot, but not the met path's bases (used now) */
    if (met)
      for (uint32_t b = ms, k = 0; k < QP_N; k++) {
        g->qp[b].used = j + 1;
        const gpath *B = &g->qp[b];
        if (!B->base_id || B->base_hi < j) break;
        b = B->base;
      }
    s = 0;
    for (uint32_t k = 1; k < g->qp_n; k++)
      if (g->qp[k].used < g->qp[s].used) s = k;
    P = &g->qp[s];
    if (P->used == j + 1) {
      /* every path is a base of the met one (never seen): reset them all, walk to the end */
      met = false;
      for (uint32_t k = 0; k < QP_N; k++) g->qp[k].tail = g->qp[k].top;
      const gnode *y = &g->nodes[g->qw[nw - 1] & g->nmask];
      for (;;) {
        const uint64_t pid = y->parent;
        const gnode *p = &g->nodes[pid & g->nmask];
        if (!pid || p->id != pid || p->hi < j) break;
        g->qw[nw++] = pid;
        y = p;
      }
    }
    P->tail = P->top;
    if (met) {
      const gpath *M = &g->qp[ms];
      P->base = ms;
      P->base_id = M->ids[at & M->mask];
      P->base_hi = g->nodes[P->base_id & g->nmask].hi;
      P->base_idx = at;
    } else {
      P->base_id = 0;
    }
    const gnode *y = &g->nodes[g->qw[nw - 1] & g->nmask];
    P->lo = node_lo(y);
    P->hi = y->hi;
  }
  if (P->top - P->tail + nw > P->mask + 1) path_grow(P, P->top - P->tail + nw);
  if (g->qw[0] > g->q_top_id) g->q_top_id = g->qw[0]; /* the walk's head: its newest node */
  uint64_t top = P->top;
  while (nw) {
    const uint64_t id = g->qw[--nw];
    P->ids[top & P->mask] = id;
    g->nodes[id & g->nmask].mark = (uint32_t)(top << QP_BITS) | s;
    top++;
  }
  P->top = top;
  return s;
}

/* q_new in full (q_new tries its common case first). */
static __attribute__((noinline)) bool q_new_slow(gus *g, uint64_t id, uint64_t j) {
  const gnode *x = &g->nodes[id & g->nmask];
  if (!id || x->id != id || x->hi < j) return false;
  uint64_t at;
  uint32_t s;
  g->qx_id = id;
  g->qx_end = x->hi + 1;
  g->pair_ok = false;
  if (id <= g->q_top_id && on_path(g, x, &s, &at)) {
    if (path_resolve(g, s, j, &g->qf, &g->qf_end)) goto found;
  } else {
    /* the common case: a node or a few above x is the newest node of a path without a live
     * base, or just below it (the path's test set was extended differently): x and the nodes
     * between extend the path */
    uint64_t w[QP_FAST];
    const gnode *y = x;
    for (unsigned k = 0; k < QP_FAST; k++) {
      w[k] = y->id;
      const uint64_t pid = y->parent;
      const gnode *p = &g->nodes[pid & g->nmask];
      uint64_t pat;
      if (!pid || p->id != pid || p->hi < j) break;
      if (on_path(g, p, &s, &pat)) {
        gpath *P = &g->qp[s];
        if (pat + 1 + QP_CUT < P->top || (P->base_id && P->base_hi >= j) || pat + 1 + k - P->tail > P->mask) break;
        for (unsigned i = 0; i <= k; i++) {
          const uint64_t wi = w[k - i];
          P->ids[(pat + 1 + i) & P->mask] = wi;
          g->nodes[wi & g->nmask].mark = (uint32_t)((pat + 1 + i) << QP_BITS) | s;
        }
        P->top = pat + 2 + k;
        if (id > g->q_top_id) g->q_top_id = id;
        g->q_steps += k;
        g->qf = s;
        g->qf_end = UINT64_MAX;
        goto found;
      }
      y = p;
    }
  }
  s = q_walk(g, x, j);
  path_resolve(g, s, j, &g->qf, &g->qf_end); /* sound: just built */
found:
  g->qp[s].used = j + 1;
  g->qs = s;
  return true;
}

/* Make node id (not the last test's) the test's node: false when it is no live node, else
 * qx_*, qs, qf and qf_end describe it, walking its chain to a path if need be.
 * Most calls (a ROB-bound dispatch tests its ROB entry's set) bring a node newer than every node
 * on a path whose parent is the newest node, or one just below, of a path without a live base:
 * q_new_slow's first step, done inline in the tests (the rest is out of line). */
static ALWAYS_INLINE bool q_new(gus *g, uint64_t id, uint64_t j) {
  gnode *x = &g->nodes[id & g->nmask];
  if (id > g->q_top_id && x->id == id && x->hi >= j) { /* id > q_top_id: no path holds it, id != 0 */
    const uint64_t pid = x->parent;
    const gnode *p = &g->nodes[pid & g->nmask];
    uint32_t s;
    uint64_t pat;
    if (pid && p->id == pid && p->hi >= j && on_path(g, p, &s, &pat)) {
      gpath *P = &g->qp[s];
      if (pat + 1 + QP_CUT >= P->top && !(P->base_id && P->base_hi >= j) && pat + 1 - P->tail <= P->mask) {
        /* as q_new_slow's loop at its first node: x extends the path (cut above its parent) */
        P->ids[(pat + 1) & P->mask] = id;
        x->mark = (uint32_t)((pat + 1) << QP_BITS) | s;
        P->top = pat + 2;
        g->q_top_id = id;
        g->qx_id = id;
        g->qx_end = x->hi + 1;
        g->pair_ok = false;
        g->qf = s;
        g->qf_end = UINT64_MAX;
        P->used = j + 1;
        g->qs = s;
        return true;
      }
    }
  }
  return q_new_slow(g, id, j);
}

/* Is instruction j a member of v? For the taint-queue tests and the final flush: j = n - Q (or,
 * at the end, the queue's instructions in order), never less than the previous call's j.
 * NEWEST: v has a pending interval and its hi is newer than j (a set holding n). */
static ALWAYS_INLINE bool tv_has_q_h(gus *g, gtv v, uint64_t j, const bool NEWEST) {
  const uint32_t len = tv_len(v);
  if (NEWEST ? j + len >= v.hi : len != TV_NOLEN && j <= v.hi && j + len >= v.hi) return true;
  const uint64_t id = tv_node(v);
  if (id != g->qx_id) {
    if (!g->pair_ok || (id != g->pair_p && id != g->pair_n)) {
      /* consecutive tests often reach the same node: that one is known to be on a sound path
       * (paths change only in q_walk) */
      if (!q_new(g, id, j)) return false;
      goto resolved;
    }
    g->qx_id = id; /* the other node of the pair */
  }
  if (g->qx_end <= j) return g->pair_ok && id == g->pair_n && j >= g->pair_lo && j <= g->pair_hi;
  if (__builtin_expect(j >= g->qf_end, 0)) path_resolve(g, g->qs, j, &g->qf, &g->qf_end); /* the base that led to qf died */
resolved:;
  gpath *P = &g->qp[g->qf];
  if (P->hi < j) path_trim(g, P, j);
  return P->lo <= j;
}

static ALWAYS_INLINE bool tv_has_q(gus *g, gtv v, uint64_t j) { return tv_has_q_h(g, v, j, false); }

/* tv_has_q by walking the whole chain: the reference the self-check compares against. */
static bool tv_has_walk(const gus *g, const gtv *v, uint64_t j) {
  if (tv_len(*v) != TV_NOLEN && j <= v->hi && j + tv_len(*v) >= v->hi) return true;
  for (uint64_t id = tv_node(*v); id;) {
    const gnode *x = node_get(g, id);
    if (!x || x->hi < j) return false;
    if (node_lo(x) <= j) return true;
    id = x->parent;
  }
  return false;
}

/* ======================================================================================
 * Caches (tags only; LRU by keeping each set MRU-first)
 * ====================================================================================== */

static void cache_init(gcache *c, const gus_cache *cfg, uint32_t line) {
  c->ways = cfg->ways;
  c->sets = cfg->size / (cfg->ways * line);
  c->tags = xcalloc((size_t)c->sets * c->ways, sizeof(uint64_t));
}

/* Look up line (inserting it as MRU, evicting the LRU on a miss); true on a hit. */
static ALWAYS_INLINE bool cache_access(gcache *c, uint64_t line) {
  uint64_t *s = c->tags + (size_t)(line & (c->sets - 1)) * c->ways, key = line + 1;
  if (s[0] == key) return true;
  /* one pass: each way takes the tag above it until the line (a hit) or an empty way is found;
   * a miss in a full set drops the last (least recently used) tag */
  uint64_t up = s[0];
  s[0] = key;
  for (uint32_t w = 1; w < c->ways; w++) {
    const uint64_t t = s[w];
    s[w] = up;
    if (t == key || !t) return t == key;
    up = t;
  }
  return false;
}

/* The L1D: like cache_access (a hit, or a miss that replaces the least recently used way: an
 * empty one first); *e is the index of the line's way, of its fill time and taint (ready[*e],
 * tv[*e]). On a miss the caller sets them. */
static ALWAYS_INLINE bool l1_access(gcache *c, uint64_t line, size_t *e) {
  const uint64_t key = line + 1;
  uint32_t *h = &c->hint[(key * 0x9E3779B97F4A7C15ULL) >> (64 - L1_HINT_BITS)];
  /* a line sits in one way of its own set only, so a hinted way that holds it is its way */
  if (c->tags[*h] == key) {
    *e = *h;
    c->stamp[*e] = ++c->clock;
    return true;
  }
  const size_t base = (size_t)(line & (c->sets - 1)) * c->ways;
  const uint64_t *s = c->tags + base, *st = c->stamp + base;
  /* one pass: the line's way, else the victim: the smallest stamp, the first on ties (only
   * empty ways tie, at 0) */
  uint32_t w = 0;
  uint64_t bt = st[0];
  bool hit = s[0] == key;
  if (!hit)
    for (uint32_t k = 1; k < c->ways; k++) {
      if (s[k] == key) {
        w = k;
        hit = true;
        break;
      }
      bool lt = st[k] < bt;
      bt = lt ? st[k] : bt;
      w = lt ? k : w;
    }
  if (!hit) c->tags[base + w] = key;
  c->stamp[base + w] = ++c->clock;
  *e = base + w;
  *h = (uint32_t)*e;
  return hit;
}

/* Extra DRAM latency of line for the bank's open row (uarch/mem_dram.c's address mapping:
 * lines interleave over channels, then columns of a row, then banks XOR-hashed with the row). */
static ALWAYS_INLINE gtick dram_prep(gus *g, uint64_t line) {
  const gus_machine *m = &g->m;
  uint64_t x = line;
  uint32_t ch = (uint32_t)(x % m->dram_channels);
  x /= m->dram_channels;
  x /= m->dram_row / m->line;
  uint64_t b = x % m->dram_banks;
  x /= m->dram_banks;
  uint32_t bank = (uint32_t)((b ^ (x % m->dram_banks)) % m->dram_banks);
  uint64_t *open = &g->open_row[(size_t)ch * m->dram_banks + bank];
  gtick prep = *open == x + 1 ? 0 : *open ? g->lat_rp + g->lat_rcd : g->lat_rcd;
  *open = x + 1;
  return prep;
}

/* Level below the L1D that serves line: 1 L2, 2 LLC, 3 DRAM (filling the levels above). */
static ALWAYS_INLINE int lower_level(gus *g, uint64_t line) {
  g->miss[0]++;
  if (cache_access(&g->cache[1], line)) return 1;
  g->miss[1]++;
  if (cache_access(&g->cache[2], line)) return 2;
  g->miss[2]++;
  return 3;
}

/* ======================================================================================
 * Model instance
 * ====================================================================================== */

static gtick ticks_of(double cycles) {
  double t = floor(cycles * GUS_TICKS + 0.5);
  return t < 1 ? 1 : (gtick)t;
}

static gtick lat_ticks(double cycles) {
  double t = floor(cycles * GUS_TICKS + 0.5);
  return t < 0 ? 0 : (gtick)t;
}

static void grow_static(gus *g, uint32_t want) {
  uint32_t nc = g->scap ? g->scap : 64;
  while (nc < want) nc *= 2;
  g->si = xrealloc(g->si, nc * sizeof *g->si);
  g->taint = xrealloc(g->taint, nc * sizeof *g->taint);
  g->count = xrealloc(g->count, nc * sizeof *g->count);
  memset(g->si + g->scap, 0, (nc - g->scap) * sizeof *g->si);
  memset(g->taint + g->scap, 0, (nc - g->scap) * sizeof *g->taint);
  memset(g->count + g->scap, 0, (nc - g->scap) * sizeof *g->count);
  g->scap = nc;
}

static uint32_t scaled_count(uint32_t v, double f) {
  double x = floor(v * f + 0.5);
  return x < 1 ? 1 : x > 1e7 ? 10000000u : (uint32_t)x;
}

static uint64_t pow2_at_least(uint64_t x) {
  uint64_t p = 1;
  while (p < x) p *= 2;
  return p;
}

/* x = u with its costs and latencies per port in ticks (after g's cost_port, lat_port). Products
 * of integers: the step's sums come out exactly as if it multiplied itself. */
static void xuop_init(const gus *g, gxuop *x, const gus_uop *u) {
  x->ports = u->ports;
  x->np = 0;
  for (uint32_t p = 0; p < GUS_MAX_PORTS; p++)
    if (u->ports & (1u << p)) x->pl[x->np++] = (uint8_t)p;
  for (uint32_t p = 0; p < g->m.n_ports; p++) {
    x->cost[p] = (gtick)u->occupancy * g->cost_port[p];
    x->lat[p] = (gtick)u->latency * g->lat_port[p];
  }
}

gus *gus_create(const gus_machine *m, uint32_t window, uint32_t n_static, bool taint_on,
                uint32_t ring_mult, wi_err *err) {
  if (gus_machine_check(m, err)) return NULL;
  if (window < 1 || window > 16) {
    wi_fail(err, WI_EINVAL, "gus: window = %u x ROB is out of range [1, 16]", window);
    return NULL;
  }
  if (ring_mult < 1 || ring_mult > 64) {
    wi_fail(err, WI_EINVAL, "gus: ring_mult = %u is out of range [1, 64]", ring_mult);
    return NULL;
  }
  gus *g = xcalloc(1, sizeof *g);
  g->m = *m;
  g->taint_on = taint_on;
  g->window = window;
  g->rob = scaled_count(m->rob, m->tput[GUS_R_ROB]);
  g->nfb = scaled_count(m->fill_buffers, m->tput[GUS_R_FILLBUF]);
  g->Q = (uint64_t)window * g->rob;
  g->R = (g->Q / 64 + 1) * 64 * ring_mult;
  g->qmask = pow2_at_least(g->Q + 1) - 1;
  if (taint_on && g->R >= TV_NOLEN) {
    wi_fail(err, WI_EINVAL, "gus: taint window of %llu instructions is too large (at most %u)",
            (unsigned long long)g->Q, TV_NOLEN - 64);
    free(g);
    return NULL;
  }
  g->lsh = (uint32_t)__builtin_ctz(m->line);
  g->psh = (uint32_t)__builtin_ctz(m->page);

  g->cost_fe = ticks_of(1.0 / (m->fe_width * m->tput[GUS_R_FRONTEND]));
  g->cost_disp = ticks_of(1.0 / (m->dispatch_width * m->tput[GUS_R_DISPATCH]));
  g->cost_ret = ticks_of(1.0 / (m->retire_width * m->tput[GUS_R_RETIRE]));
  g->cost_taken = m->fe_taken ? ticks_of(1.0 / (m->fe_taken * m->tput[GUS_R_FRONTEND])) : 0;
  g->ret_lat = (gtick)m->retire_latency * GUS_TICKS;
  g->fe_lat = lat_ticks(m->fe_latency * m->lat[GUS_R_FRONTEND]);
  g->fq_lag = g->fe_lat + m->fe_queue * g->cost_fe;
  for (uint32_t p = 0; p < m->n_ports; p++) {
    g->cost_port[p] = ticks_of(1.0 / m->tput[GUS_R_PORT0 + p]);
    g->lat_port[p] = lat_ticks(m->lat[GUS_R_PORT0 + p]);
  }
  for (int c = 0; c < IC_NUM; c++) {
    g->xcls[c].n = m->cls[c].n;
    for (uint32_t k = 0; k < m->cls[c].n && k < GUS_MAX_UOPS; k++) xuop_init(g, &g->xcls[c].u[k], &m->cls[c].uop[k]);
  }
  xuop_init(g, &g->xload, &m->load);
  xuop_init(g, &g->xsta, &m->sta);
  xuop_init(g, &g->xstd, &m->std);
  for (uint32_t p = 0; p < m->n_ports; p++) {
    g->xload.lat[p] = (gtick)m->l1d.latency * g->lat_port[p]; /* a load's latency is the cache's */
    g->stlf_lat[p] = (gtick)m->stlf_latency * g->lat_port[p];
  }
  g->lat_lvl[1] = lat_ticks(m->l2.latency * m->lat[GUS_R_L2]);
  g->lat_lvl[2] = lat_ticks(m->llc.latency * m->lat[GUS_R_LLC]);
  g->lat_lvl[3] = lat_ticks(m->dram_latency * m->lat[GUS_R_DRAM]);
  g->lat_rcd = lat_ticks(m->dram_t_rcd * m->lat[GUS_R_DRAM]);
  g->lat_rp = lat_ticks(m->dram_t_rp * m->lat[GUS_R_DRAM]);
  g->open_row = xcalloc((size_t)m->dram_channels * m->dram_banks, sizeof *g->open_row);
  g->lat_stlb = lat_ticks(m->stlb_latency * m->lat[GUS_R_TLB]);
  g->lat_walk = lat_ticks(m->walk_latency * m->lat[GUS_R_TLB]);
  g->cost_link[0] = ticks_of(1.0 / (m->l2_bw * m->tput[GUS_R_L2]));
  g->cost_link[1] = ticks_of(1.0 / (m->llc_bw * m->tput[GUS_R_LLC]));
  g->cost_link[2] = ticks_of(1.0 / (m->dram_bw * m->tput[GUS_R_DRAM]));

  if (taint_on) {
    /* the rings grow when an entry is still live on reuse */
    uint64_t nn = pow2_at_least(2 * g->R), nq = pow2_at_least(g->R + 2);
    g->nodes = xcalloc(nn, sizeof *g->nodes);
    g->nmask = nn - 1;
    /* a walk visits live nodes only: fewer than R (their hi are distinct and in the window) */
    g->qw = xmalloc(nq * sizeof *g->qw);
    g->qp_n = QP_N;
    for (uint32_t k = 0; k < QP_N; k++) {
      g->qp[k].ids = xcalloc(64, sizeof *g->qp[k].ids);
      g->qp[k].mask = 63;
    }
    g->qsid = xcalloc(g->qmask + 1, sizeof *g->qsid);
  }
  g->fe_tv = g->disp_tv = g->ret_tv = TV_EMPTY;
  for (int p = 0; p < GUS_MAX_PORTS; p++) g->ptv[p] = TV_EMPTY;
  for (int l = 0; l < N_LINKS; l++) g->ltv[l] = TV_EMPTY;
  for (int r = 0; r < RG_NUM; r++) g->rtv[r] = TV_EMPTY;
  g->fbavail = xcalloc(g->nfb, sizeof *g->fbavail);
  g->fbtv = xmalloc(g->nfb * sizeof *g->fbtv);
  for (uint32_t i = 0; i < g->nfb; i++) g->fbtv[i] = TV_EMPTY;
  g->robt = xcalloc(g->rob, sizeof *g->robt);
  g->robtv = xmalloc(g->rob * sizeof *g->robtv);
  for (uint32_t i = 0; i < g->rob; i++) g->robtv[i] = TV_EMPTY;
  for (uint32_t i = 0; i < STLF_N; i++) g->stlf[i].tv = TV_EMPTY;
  {
    /* TLB reach scales with tput[GUS_R_TLB] through the ways (sets stay a power of two) */
    uint32_t dw = scaled_count(m->dtlb_ways, m->tput[GUS_R_TLB]), sw = scaled_count(m->stlb_ways, m->tput[GUS_R_TLB]);
    gus_cache d = {m->dtlb_entries / m->dtlb_ways * dw, dw, 0}, s2 = {m->stlb_entries / m->stlb_ways * sw, sw, 0};
    cache_init(&g->dtlb, &d, 1);
    cache_init(&g->stlb, &s2, 1);
  }
  cache_init(&g->cache[0], &m->l1d, m->line);
  g->cache[0].stamp = xcalloc((size_t)g->cache[0].sets * g->cache[0].ways, sizeof(uint64_t));
  g->cache[0].hint = xcalloc(L1_HINT_N, sizeof *g->cache[0].hint);
  g->cache[0].ready = xcalloc((size_t)g->cache[0].sets * g->cache[0].ways, sizeof(gtick));
  g->cache[0].tv = xcalloc((size_t)g->cache[0].sets * g->cache[0].ways, sizeof(gtv));
  for (size_t i = 0; i < (size_t)g->cache[0].sets * g->cache[0].ways; i++) g->cache[0].tv[i] = TV_EMPTY;
  cache_init(&g->cache[1], &m->l2, m->line);
  cache_init(&g->cache[2], &m->llc, m->line);
  grow_static(g, n_static ? n_static : 64);
  return g;
}

gus *gus_new(const gus_machine *m, uint32_t window, uint32_t n_static, wi_err *err) {
  gus *g = gus_create(m, window, n_static, true, 1, err);
  if (g) g->prefetch = true;
  return g;
}

void gus_set_prefetch(gus *g, bool on) { g->prefetch = on; }

void gus_free(gus *g) {
  if (!g) return;
  free(g->nodes);
  for (uint32_t k = 0; k < QP_N; k++) free(g->qp[k].ids);
  free(g->qw);
  free(g->qsid);
  free(g->fbavail);
  free(g->fbtv);
  free(g->robt);
  free(g->robtv);
  for (int i = 0; i < 3; i++) free(g->cache[i].tags);
  free(g->dtlb.tags);
  free(g->open_row);
  free(g->stlb.tags);
  free(g->cache[0].stamp);
  free(g->cache[0].hint);
  free(g->cache[0].ready);
  free(g->cache[0].tv);
  free(g->si);
  free(g->taint);
  free(g->count);
  free(g);
}

uint64_t gus_now_ticks(const gus *g) { return g->last_ret; }

void gus_set_selfcheck(gus *g, bool on) { g->selfcheck = on; }

uint64_t gus_walk_steps(const gus *g) { return g->q_steps; }

void gus_set_paths(gus *g, uint32_t n) { g->qp_n = n < 1 ? 1 : n > QP_N ? QP_N : n; }

static bool check_chain(const gus *g, const gtv *v, const char *what, char *msg, size_t n) {
  if (tv_len(*v) != TV_NOLEN && tv_len(*v) > g->R + TV_CLAMP) {
    snprintf(msg, n, "%s: pending interval of %u instructions > R + TV_CLAMP = %llu (tv_clamp)", what, tv_len(*v),
             (unsigned long long)(g->R + TV_CLAMP));
    return false;
  }
  uint64_t prev_lo = tv_len(*v) != TV_NOLEN ? v->hi - tv_len(*v) : UINT64_MAX;
  for (uint64_t id = tv_node(*v); id;) {
    const gnode *x = node_get(g, id);
    if (!x || x->hi + g->R <= g->n) return true; /* reused or out of the window, as all below it */
    if (x->hi >= prev_lo) {
      snprintf(msg, n, "%s: node %llu [%llu, %llu] is not below %llu", what, (unsigned long long)id,
               (unsigned long long)node_lo(x), (unsigned long long)x->hi, (unsigned long long)prev_lo);
      return false;
    }
    prev_lo = node_lo(x);
    id = x->parent;
  }
  return true;
}

/* The fill buffers from fbnext on, in turn, are in order of (fbavail, index): fbnext is the
 * buffer that frees first. */
static bool fb_order_ok(const gus *g, char *msg, size_t n) {
  for (uint32_t i = 1; i < g->nfb; i++) {
    const uint32_t a = (g->fbnext + i) % g->nfb, b = (g->fbnext + i - 1) % g->nfb;
    if (g->fbavail[b] > g->fbavail[a] || (g->fbavail[b] == g->fbavail[a] && b >= a)) {
      snprintf(msg, n, "fill buffers: %u (free at %llu) is taken after %u (free at %llu)", a,
               (unsigned long long)g->fbavail[a], b, (unsigned long long)g->fbavail[b]);
      return false;
    }
  }
  return true;
}

bool gus_check_sets(const gus *g, char *msg, size_t n) {
  if (!g->taint_on) return true;
  if (g->selfcheck_bad) {
    snprintf(msg, n, "%llu of %llu membership tests disagree with the chain walk",
             (unsigned long long)g->selfcheck_bad, (unsigned long long)g->selfcheck_n);
    return false;
  }
  if (g->selfcheck_inv) {
    snprintf(msg, n, "%llu sets broke what the step assumes of them (holding instruction n or not)",
             (unsigned long long)g->selfcheck_inv);
    return false;
  }
  /* the paths: chains, oldest first, every node marked with its path and index */
  for (uint32_t k = 0; k < QP_N; k++) {
    const gpath *P = &g->qp[k];
    for (uint64_t i = P->tail; i < P->top; i++) {
      const uint64_t id = P->ids[i & P->mask];
      const gnode *x = node_get(g, id);
      uint64_t at;
      uint32_t ps;
      if (!x) continue; /* reused: out of the window, like everything below it */
      if (!on_path(g, x, &ps, &at) || ps != k || at != i) {
        snprintf(msg, n, "path %u: node %llu at %llu is not marked there", k, (unsigned long long)id,
                 (unsigned long long)i);
        return false;
      }
      if (i > P->tail && x->parent != P->ids[(i - 1) & P->mask]) {
        snprintf(msg, n, "path %u: node %llu at %llu is not the child of the node before it", k,
                 (unsigned long long)id, (unsigned long long)i);
        return false;
      }
    }
  }
  if (!check_chain(g, &g->fe_tv, "frontend", msg, n) || !check_chain(g, &g->disp_tv, "dispatch", msg, n) ||
      !check_chain(g, &g->ret_tv, "retire", msg, n))
    return false;
  for (int p = 0; p < GUS_MAX_PORTS; p++)
    if (!check_chain(g, &g->ptv[p], "port", msg, n)) return false;
  for (int r = 0; r < RG_NUM; r++)
    if (!check_chain(g, &g->rtv[r], "register", msg, n)) return false;
  for (uint32_t i = 0; i < g->rob; i++)
    if (!check_chain(g, &g->robtv[i], "rob", msg, n)) return false;
  for (uint32_t i = 0; i < g->nfb; i++)
    if (!check_chain(g, &g->fbtv[i], "fillbuf", msg, n)) return false;
  for (uint32_t i = 0; i < STLF_N; i++)
    if (!check_chain(g, &g->stlf[i].tv, "stlf", msg, n)) return false;
  return fb_order_ok(g, msg, n);
}

/* ======================================================================================
 * The step
 * ====================================================================================== */

static void build_sinfo(gus *g, gsinfo *si, const dec_insn *d) {
  int cls = d->cls < IC_NUM ? d->cls : IC_OTHER;
  if (d->flags & DF_INVALID) cls = IC_OTHER;
  bool zero = cls == IC_ZERO || (d->flags & DF_ZERO_IDIOM);
  si->cls = (uint8_t)cls;
  si->nuops = g->m.cls[cls].n;
  si->taken = d->br != BR_NONE && g->cost_taken;
  si->xc = &g->xcls[cls];
  si->disp_cost = (si->nuops ? si->nuops : 1) * g->cost_disp;
  si->serial = cls == IC_SERIAL || (d->flags & DF_SERIAL);
  const regset_t all = RG_BIT(RG_NUM) - 1;
  si->data = zero ? 0 : (d->src & all);
  si->addr = d->addr_src & all;
  si->dst = d->dst & all;
  bool pushpop = !strncmp(d->text, "push", 4) || !strncmp(d->text, "pop", 3);
  si->stack = g->m.stack_engine && (si->dst & RG_BIT(RG_RSP)) &&
              (d->br == BR_CALL || d->br == BR_IND_CALL || d->br == BR_RET || pushpop);
  if (si->stack) si->dst &= ~RG_BIT(RG_RSP);
  si->plain = !si->serial && !si->stack;
  si->built = 1;
}

/* A chain under construction: a time and the taint of what decided it. */
typedef struct gch {
  gtick t;
  gtv tv;
  int bind; /* binding id; -1 = the instruction's own dispatch */
} gch;

/* Raise c to (t, *src + n) if t is later. */
static ALWAYS_INLINE void ch_max(gus *g, gch *c, gtick t, gtv *src, int bind, uint64_t n, const bool TAINT) {
  if (t <= c->t) return;
  c->t = t;
  c->bind = bind;
  if (TAINT) c->tv = tv_add(g, src, n);
}

/* Raise c to the latest of the registers in s (ch_max over each); with taint tracking only the
 * winner's set is extended, once, after the scan (the same set: each raise replaces the last). */
static ALWAYS_INLINE void ch_regs(gus *g, gch *c, regset_t s, uint64_t n, const bool TAINT) {
  gtick ct = c->t;
  int w = -1; /* the last register that raised c: one select per register */
  for (; s; s &= s - 1) {
    int r = __builtin_ctzll(s);
    gtick t = g->ravail[r];
    bool up = t > ct;
    ct = up ? t : ct;
    w = up ? r : w;
  }
  if (w >= 0) {
    c->t = ct;
    c->bind = GUS_B_DATA;
    if (TAINT) c->tv = tv_add_h(g, &g->rtv[w], n, false); /* results are written after the reads */
  }
}

/* Use a throughput resource (availability *avail, taint *tv) no earlier than floor_t (decided
 * by *floor_tv): returns the slot's start. The resource's new taint follows whichever was later. */
static ALWAYS_INLINE gtick use_res(gus *g, gtick *avail, gtv *tv, gtick floor_t, gtv *floor_tv, gtick cost,
                                   uint64_t n, const bool TAINT) {
  gtick s;
  if (*avail > floor_t) {
    s = *avail;
    if (TAINT) *tv = tv_add(g, tv, n);
  } else {
    s = floor_t;
    if (TAINT) *tv = *floor_tv; /* a chain's set always holds n */
  }
  *avail = s + cost;
  return s;
}

/* The port of u that frees first (the lowest-numbered on ties). Selects, not branches: which
 * port wins is data-dependent and mispredicts often. */
static ALWAYS_INLINE int pick_port(const gus *g, const gxuop *u) {
  int best = u->pl[0];
  gtick bt = g->pavail[best];
  for (const uint8_t *q = u->pl + 1, *e = u->pl + u->np; q < e; q++) {
    int p = *q;
    gtick t = g->pavail[p];
    bool lt = t < bt;
    bt = lt ? t : bt;
    best = lt ? p : best;
  }
  return best;
}

/* Issue micro-op u (occupancy x mult) no earlier than dispatch (td, *Td); chain c is raised to
 * the port's slot if that is later. Returns the port. */
static ALWAYS_INLINE int issue(gus *g, gch *c, const gxuop *u, gtick mult, gtick td, gtv *Td, uint64_t n,
                               const bool TAINT) {
  int p = pick_port(g, u);
  gtick s = use_res(g, &g->pavail[p], &g->ptv[p], td, Td, u->cost[p] * mult, n, TAINT);
  g->rs[GUS_R_PORT0 + p].uses++;
  ch_max(g, c, s, &g->ptv[p], GUS_R_PORT0 + p, n, TAINT);
  return p;
}

static inline uint64_t gran_slot(uint64_t key) { return (key * 0x9E3779B97F4A7C15ULL) >> (64 - STLF_BITS); }

static inline uint64_t n_lines(const gus *g, uint64_t addr, uint32_t size) {
  return ((addr + (size ? size : 1) - 1) >> g->lsh) - (addr >> g->lsh) + 1;
}

/* A load access whose address is ready per chain c (in/out): c becomes the data-ready chain. */
static ALWAYS_INLINE void load_access(gus *g, gch *c, uint64_t addr, uint32_t size, gtick td, gtv *Td, uint64_t n,
                                      const bool TAINT) {
  if (!size) size = 1;
  const uint64_t lines = n_lines(g, addr, size);
  int p = issue(g, c, &g->xload, lines, td, Td, n, TAINT);
  /* store-to-load forwarding from a store to the same address, covering the load, still
   * within the window (the common spill/reload, push/pop pattern; partial overlaps read the
   * cache) */
  {
    gstlf *e = &g->stlf[gran_slot(addr + 1)];
    if (e->key == addr + 1 && e->size >= size && n - e->n <= g->rob) {
      ch_max(g, c, e->t, &e->tv, GUS_B_MEMDEP, n, TAINT);
      c->t += g->stlf_lat[p]; /* forwarding is in the load pipeline */
      return;
    }
  }
  gtick t0 = c->t;
  /* address translation */
  uint64_t page = addr >> g->psh;
  if (!cache_access(&g->dtlb, page)) {
    g->rs[GUS_R_TLB].uses++;
    t0 += g->lat_stlb;
    if (!cache_access(&g->stlb, page)) t0 += g->lat_walk;
  }
  gch best = {t0 + g->xload.lat[p], c->tv, c->bind};
  const uint64_t first = addr >> g->lsh;
  gcache *l1 = &g->cache[0];
  for (uint64_t line = first; line < first + lines; line++) {
    size_t e;
    if (l1_access(l1, line, &e)) {
      /* a hit on a line still being filled waits for the fill (an MSHR merge) */
      ch_max(g, &best, l1->ready[e], &l1->tv[e], GUS_R_FILLBUF, n, TAINT);
      continue;
    }
    int lvl = lower_level(g, line);
    /* a miss holds a fill buffer for its latency; the line crosses each link on the way up */
    gch mc = {t0, c->tv, c->bind};
    const uint32_t u = g->fbnext; /* the buffer that frees first (see fbnext) */
    if (++g->fbnext == g->nfb) g->fbnext = 0;
    ch_max(g, &mc, g->fbavail[u], &g->fbtv[u], GUS_R_FILLBUF, n, TAINT);
    g->rs[GUS_R_FILLBUF].uses++;
    mc.t += g->lat_lvl[lvl];
    if (lvl == 3) mc.t += dram_prep(g, line);
    for (int l = lvl - 1; l >= 0; l--) {
      gtick s = use_res(g, &g->lavail[l], &g->ltv[l], mc.t, &mc.tv, g->cost_link[l], n, TAINT);
      g->rs[GUS_R_L2 + l].uses++;
      ch_max(g, &mc, s, &g->ltv[l], GUS_R_L2 + l, n, TAINT);
    }
    g->fbavail[u] = mc.t; /* (mc.t is the L2 -> L1D link's slot: l = 0 above) */
    l1->ready[e] = mc.t;
    if (TAINT) {
      g->fbtv[u] = mc.tv;
      l1->tv[e] = mc.tv;
    }
    ch_max(g, &best, mc.t, &mc.tv, mc.bind, n, TAINT);
  }
  *c = best;
}

/* A store access: allocate its lines (write-allocate: a missing line is read for ownership
 * and arrives after the level's latency; loads to it wait for that) and charge the links; the
 * store itself does not wait. */
static ALWAYS_INLINE void store_lines(gus *g, uint64_t addr, uint32_t size, gtick t, gtv *tv, uint64_t n,
                                      const bool TAINT) {
  const uint64_t first = addr >> g->lsh, lines = n_lines(g, addr, size);
  uint64_t page = addr >> g->psh;
  if (!cache_access(&g->dtlb, page)) cache_access(&g->stlb, page);
  gcache *l1 = &g->cache[0];
  for (uint64_t line = first; line < first + lines; line++) {
    size_t e;
    if (l1_access(l1, line, &e)) continue;
    int lvl = lower_level(g, line);
    gtick at = t + g->lat_lvl[lvl] + (lvl == 3 ? dram_prep(g, line) : 0);
    for (int l = lvl - 1; l >= 0; l--) {
      gtick s = use_res(g, &g->lavail[l], &g->ltv[l], t, tv, g->cost_link[l], n, TAINT);
      g->rs[GUS_R_L2 + l].uses++;
      if (s + g->lat_lvl[lvl] > at) at = s + g->lat_lvl[lvl];
    }
    l1->ready[e] = at;
    if (TAINT) l1->tv[e] = tv_add(g, tv, n);
  }
}

/* Make the descriptor of sid (growing the tables), on its first sight. */
static __attribute__((noinline)) void prepare_sid(gus *g, uint32_t sid, const dec_insn *d) {
  if (sid >= g->scap) grow_static(g, sid + 1);
  gsinfo *si = &g->si[sid];
  if (!si->built) build_sinfo(g, si, d);
}

/* The memory accesses of an instruction as far as the caller knows them: a copy of the step for
 * each common shape has only the code that shape needs and keeps more of its values in registers
 * (the general copy spilled ~80 of its ~500 instructions per step on the bench traces). */
enum { MS_NONE, MS_LOAD, MS_STORE, MS_ANY }; /* none, one load, one store, any */

/* Step instruction n; sid's descriptor is built (prepare_sid). What the caller knows about the
 * instruction, so that this copy has only the code it needs: MS, its accesses (MS_ANY: any);
 * NU, its micro-ops (si->nuops; -1: any); PLAIN, si->plain (false: either). */
static ALWAYS_INLINE void step_impl(gus *g, uint32_t sid, const trace_insn *ti, const trace_mem *mems,
                                    const bool TAINT, const bool CHECK, const int MS, const int NU,
                                    const bool PLAIN) {
  const gsinfo *si = &g->si[sid];
  const bool serial = !PLAIN && si->serial, stack = !PLAIN && si->stack;
  const uint64_t n = g->n;
  g->count[sid]++;

  /* ---- dispatch: front end, dispatch width, a free ROB entry (ties go to the later ones) */
  gtick t_fe = g->fe_avail;
  if (si->taken && (ti->flags & TI_TAKEN)) {
    /* fe_taken taken branches fetched per cycle */
    if (n && t_fe < g->last_taken + g->cost_taken) t_fe = g->last_taken + g->cost_taken;
    g->last_taken = t_fe;
  }
  /* branches, not selects: predicted, they keep the taint set's loads off the comparisons */
  gtick td = t_fe + g->fe_lat;
  int bd = GUS_R_FRONTEND;
  gtv *src = &g->fe_tv;
  if (g->disp_avail >= td) {
    td = g->disp_avail;
    bd = GUS_R_DISPATCH;
    src = &g->disp_tv;
  }
  const uint32_t rp = g->rpos;
  if (g->robt[rp] > td) {
    td = g->robt[rp] - 1;
    bd = GUS_R_ROB;
    src = &g->robtv[rp];
  }
  if (serial && n && g->last_ret > td) {
    td = g->last_ret;
    bd = GUS_R_RETIRE;
    src = &g->ret_tv;
  }
  gtv Td = TV_EMPTY;
  if (TAINT) {
    const gtv S = *src;
    /* the front end's, dispatch's and retire's sets end at n - 1 (each step extends them or
     * replaces them with a set holding n; for n = 0 they are empty); a ROB entry's is older */
    const bool fresh = bd == GUS_R_ROB || !n;
    Td = fresh ? tv_add_h(g, src, n, false) : tv_next(S, n);
    if (CHECK) {
      if (fresh) check_holds(g, S, n, false);
      else check_holds(g, S, n - 1, true);
      check_holds(g, Td, n, true);
      for (int r = 0; r < RG_NUM; r++) check_holds(g, g->rtv[r], n, false);
    }
    g->disp_tv = Td;
    /* Taint queue: n enters, the instruction Q older leaves; it is tainted if it is on the
     * chain that decided n's dispatch. */
    if (n >= g->Q) {
      uint64_t j = n - g->Q;
      /* When S's pending interval became a new node (a ROB-bound dispatch, mostly), no path holds
       * it, but S's node is likely on one: test S (the same answer: j < n), then let the new
       * node stand for S's in the tests that follow (the dispatch chain goes on from it). */
      bool in;
      if (__builtin_expect(!fresh || tv_node(Td) == tv_node(S), 1)) {
        in = tv_has_q_h(g, Td, j, true); /* Td holds n */
      } else {
        in = tv_has_q(g, S, j);
        if (g->qx_id == tv_node(S) && !(g->pair_ok && g->qx_id == g->pair_n)) {
          /* (not when S's node is itself a pair's new node: qx_* describe its base, and the
           * new node would add two intervals) */
          g->pair_p = tv_node(S);
          g->qx_id = g->pair_n = tv_node(Td);
          g->pair_lo = S.hi - tv_len(S);
          g->pair_hi = S.hi;
          g->pair_ok = true;
        }
      }
      if (CHECK) {
        g->selfcheck_n++;
        if (in != tv_has_walk(g, &Td, j)) g->selfcheck_bad++;
      }
      g->taint[g->qsid[j & g->qmask]] += in;
    }
    g->qsid[n & g->qmask] = sid;
  }
  g->rs[bd].bound++; /* uses of the front end, dispatch, ROB and retire: one each, set at the end */
  const trace_mem *mv = mems + ti->mem_off;
  const unsigned nm = MS == MS_NONE ? 0 : MS == MS_ANY ? ti->n_mem : 1;
  {
    /* the front end runs at most fq_lag ahead of dispatch */
    gtick fl = td > g->fq_lag ? td - g->fq_lag : 0;
    if (fl > t_fe) {
      g->fe_avail = fl + g->cost_fe;
      if (TAINT) g->fe_tv = Td;
    } else {
      g->fe_avail = t_fe + g->cost_fe;
      if (TAINT) g->fe_tv = bd == GUS_R_FRONTEND ? Td : tv_add(g, &g->fe_tv, n);
    }
  }

  /* ---- operands */
  /* lea, or a memory form the trace did not access: addresses are data (masks, not a branch) */
  const regset_t nomem = nm ? 0 : ~(regset_t)0;
  regset_t data = si->data | (si->addr & nomem), addr = si->addr & ~nomem;
  gch cur = {td, Td, -1};
  ch_regs(g, &cur, data, n, TAINT);
  gch ach = {td, Td, -1}; /* address chain */
  unsigned n_st = MS == MS_STORE; /* store accesses: each takes a dispatch slot */
  if (nm) {
    ch_regs(g, &ach, addr, n, TAINT);
    if (CHECK) check_holds(g, ach.tv, n, true);
    /* ---- loads: one load micro-op per access; the computation waits for all of them */
    for (unsigned k = 0; k < nm && MS != MS_STORE; k++) {
      if (MS == MS_ANY && mv[k].is_store) {
        n_st++;
        continue;
      }
      gch lc = ach;
      load_access(g, &lc, mv[k].addr, mv[k].size, td, &Td, n, TAINT);
      if (CHECK) check_holds(g, lc.tv, n, true);
      if (lc.t > cur.t) cur = lc;
    }
  }

  g->disp_avail = td + (n_st ? (si->nuops + n_st) * g->cost_disp : si->disp_cost);

  /* ---- execute: the class's micro-ops in sequence */
  const gxcls *xc = si->xc;
  const unsigned nu = NU >= 0 ? (unsigned)NU : xc->n;
  for (unsigned k = 0; k < nu; k++) {
    int p = issue(g, &cur, &xc->u[k], 1, td, &Td, n, TAINT);
    cur.t += xc->u[k].lat[p];
  }
  /* what decided the result (other than the instruction's own dispatch) */
  g->bound_res[cur.bind + 1]++;

  /* ---- stores: address and data micro-ops; the data is the computation's result */
  gch fin = cur;
  if (MS != MS_NONE && MS != MS_LOAD && n_st) {
    for (unsigned k = 0; k < nm; k++) {
      if (MS == MS_ANY && !mv[k].is_store) continue;
      uint32_t size = mv[k].size ? mv[k].size : 1;
      uint64_t lines = n_lines(g, mv[k].addr, size);
      gch sa = ach;
      int pa = issue(g, &sa, &g->xsta, lines, td, &Td, n, TAINT);
      sa.t += g->xsta.lat[pa];
      gch sd = cur;
      int pd = issue(g, &sd, &g->xstd, lines, td, &Td, n, TAINT);
      sd.t += g->xstd.lat[pd];
      /* the forwarding entry carries when the data is ready */
      {
        gstlf *e = &g->stlf[gran_slot(mv[k].addr + 1)];
        e->key = mv[k].addr + 1;
        e->n = n;
        e->t = sd.t;
        e->size = size;
        if (TAINT) e->tv = sd.tv;
      }
      if (CHECK) check_holds(g, sd.tv, n, true);
      store_lines(g, mv[k].addr, size, sd.t, &sd.tv, n, TAINT);
      ch_max(g, &fin, sa.t, &sa.tv, sa.bind, n, TAINT);
      ch_max(g, &fin, sd.t, &sd.tv, sd.bind, n, TAINT);
    }
  }

  /* ---- results */
  for (regset_t s = si->dst; s; s &= s - 1) {
    int r = __builtin_ctzll(s);
    g->ravail[r] = cur.t;
    if (TAINT) g->rtv[r] = cur.tv;
  }
  if (stack) {
    /* the stack engine computes rsp at rename: ready at dispatch, or when rsp itself was */
    if (td >= g->ravail[RG_RSP]) {
      g->ravail[RG_RSP] = td;
      if (TAINT) g->rtv[RG_RSP] = Td;
    } else if (TAINT) {
      g->rtv[RG_RSP] = tv_add(g, &g->rtv[RG_RSP], n);
    }
  }

  /* ---- retire, in order, retire_width per cycle, retire_latency after completing */
  fin.t += g->ret_lat;
  gtick tr;
  if (g->ret_avail > fin.t) {
    tr = g->ret_avail;
    g->rs[GUS_R_RETIRE].bound++;
    if (TAINT) {
      if (CHECK) check_holds(g, g->ret_tv, n - 1, true);
      g->ret_tv = tv_next(g->ret_tv, n);
      fin.tv = g->ret_tv;
    }
  } else {
    tr = fin.t;
    if (TAINT) g->ret_tv = fin.tv;
  }
  g->ret_avail = tr + g->cost_ret;
  g->robt[rp] = tr + 1;
  if (TAINT) g->robtv[rp] = fin.tv;
  if (++g->rpos == g->rob) g->rpos = 0;
  g->last_ret = tr;
  if (serial && tr > g->disp_avail) {
    /* nothing dispatches before a serializing instruction retires */
    g->disp_avail = tr;
    if (TAINT) g->disp_tv = g->ret_tv;
  }
  if (CHECK) {
    check_holds(g, cur.tv, n, true);
    check_holds(g, fin.tv, n, true);
    check_holds(g, g->fe_tv, n, true);
    check_holds(g, g->disp_tv, n, true);
    check_holds(g, g->ret_tv, n, true);
  }
  g->n = n + 1;
}

static void step_taint(gus *g, uint32_t sid, const trace_insn *ti, const trace_mem *mems) {
  step_impl(g, sid, ti, mems, true, false, MS_ANY, -1, false);
}

static void step_check(gus *g, uint32_t sid, const trace_insn *ti, const trace_mem *mems) {
  step_impl(g, sid, ti, mems, true, true, MS_ANY, -1, false);
}

static void step_fast(gus *g, uint32_t sid, const trace_insn *ti, const trace_mem *mems) {
  step_impl(g, sid, ti, mems, false, false, MS_ANY, -1, false);
}

void gus_step(gus *g, uint32_t sid, const dec_insn *d, const trace_insn *ti, const trace_mem *mems) {
  if (sid >= g->scap || !g->si[sid].built) prepare_sid(g, sid, d);
  if (g->taint_on && !(g->n % TV_CLAMP)) tv_clamp(g);
  if (!g->taint_on) step_fast(g, sid, ti, mems);
  else if (g->selfcheck) step_check(g, sid, ti, mems);
  else step_taint(g, sid, ti, mems);
}

/* Step a batch (the step is inlined: one copy with taint tracking, one without, one with the
 * self-check), TV_CLAMP instructions between tv_clamp calls. Static ids below `ready` have their
 * descriptors built (gus_run_source). */
static ALWAYS_INLINE wi_rc run_batch(gus *g, const gus_source *src, const trace_batch *b, uint32_t ready,
                                     wi_err *err, const bool TAINT, const bool CHECK) {
  for (size_t i0 = 0; i0 < b->n; i0 += TV_CLAMP) {
    if (TAINT) tv_clamp(g);
    const size_t i1 = b->n - i0 > TV_CLAMP ? i0 + TV_CLAMP : b->n;
    for (size_t i = i0; i < i1; i++) {
      const trace_insn *ti = &b->insns[i];
      const uint32_t sid = ti->sid;
      if (__builtin_expect(sid >= ready, 0) && (sid >= g->scap || !g->si[sid].built)) {
        const dec_insn *d = sid < src->n_static ? src->decoded(src->ctx, sid) : NULL;
        if (!d)
          return wi_fail(err, WI_EINVAL, "gus: instruction %llu has sid %u, not a static instruction of the source",
                         (unsigned long long)(b->first_index + i), sid);
        prepare_sid(g, sid, d);
      }
      /* the common shapes get lean copies of the step */
      const gsinfo *si = &g->si[sid];
      if (!ti->n_mem) {
        if (si->nuops == 1 && si->plain) step_impl(g, sid, ti, b->mems, TAINT, CHECK, MS_NONE, 1, true);
        else step_impl(g, sid, ti, b->mems, TAINT, CHECK, MS_NONE, -1, false);
      } else if (ti->n_mem == 1 && !si->nuops && si->plain) {
        if (b->mems[ti->mem_off].is_store) step_impl(g, sid, ti, b->mems, TAINT, CHECK, MS_STORE, 0, true);
        else step_impl(g, sid, ti, b->mems, TAINT, CHECK, MS_LOAD, 0, true);
      } else if (ti->n_mem == 1 && si->nuops == 1 && si->plain && !b->mems[ti->mem_off].is_store) {
        step_impl(g, sid, ti, b->mems, TAINT, CHECK, MS_LOAD, 1, true);
      } else step_impl(g, sid, ti, b->mems, TAINT, CHECK, MS_ANY, -1, false);
    }
  }
  if (TAINT) tv_clamp(g); /* (gus_step may follow: its clamps come every TV_CLAMP-th instruction) */
  return WI_OK;
}

static wi_rc run_batch_taint(gus *g, const gus_source *src, const trace_batch *b, uint32_t ready, wi_err *err) {
  return run_batch(g, src, b, ready, err, true, false);
}

static wi_rc run_batch_check(gus *g, const gus_source *src, const trace_batch *b, uint32_t ready, wi_err *err) {
  return run_batch(g, src, b, ready, err, true, true);
}

static wi_rc run_batch_fast(gus *g, const gus_source *src, const trace_batch *b, uint32_t ready, wi_err *err) {
  return run_batch(g, src, b, ready, err, false, false);
}

wi_rc gus_run_source(gus *g, const gus_source *src, wi_err *err) {
  gus_pf *cur = gus_pf_open(src, g->prefetch, err);
  if (!cur) return err && err->rc ? err->rc : WI_EIO;
  wi_rc rc = WI_OK;
  wi_rc (*batch)(gus *, const gus_source *, const trace_batch *, uint32_t, wi_err *) =
    !g->taint_on ? run_batch_fast : g->selfcheck ? run_batch_check : run_batch_taint;
  /* Build every static descriptor up front (they depend on the machine only), so that the loop
   * tests one bound per instruction; `ready` stops at the first sid the source cannot decode. */
  uint32_t ready = 0;
  while (ready < src->n_static) {
    const dec_insn *d = src->decoded(src->ctx, ready);
    if (!d) break;
    prepare_sid(g, ready++, d);
  }
  for (;;) {
    trace_batch b;
    if ((rc = gus_pf_next(cur, &b, err)) != WI_OK || !b.n) break;
    if ((rc = batch(g, src, &b, ready, err)) != WI_OK) break;
  }
  gus_pf_close(cur);
  return rc;
}

void gus_finish(gus *g, gus_result *r) {
  memset(r, 0, sizeof *r);
  if (g->taint_on) {
    /* Flush the queue: what is left is tested against the chain that decided the last
     * retirement (the end of the run), as if dispatch had continued behind it. */
    for (uint64_t j = g->n > g->Q ? g->n - g->Q : 0; j < g->n; j++) {
      bool in = tv_has_q(g, g->ret_tv, j);
      if (g->selfcheck) {
        g->selfcheck_n++;
        if (in != tv_has_walk(g, &g->ret_tv, j)) g->selfcheck_bad++;
      }
      g->taint[g->qsid[j & g->qmask]] += in;
    }
  }
  r->ticks = g->last_ret;
  r->cycles = (g->last_ret + GUS_TICKS - 1) / GUS_TICKS;
  r->insns = g->n;
  r->window = g->window;
  uint32_t ns = 0;
  for (uint32_t s = 0; s < g->scap; s++)
    if (g->count[s]) ns = s + 1;
  r->n_static = ns;
  r->taint = xcalloc(ns ? ns : 1, sizeof *r->taint);
  r->count = xcalloc(ns ? ns : 1, sizeof *r->count);
  memcpy(r->taint, g->taint, ns * sizeof *r->taint);
  memcpy(r->count, g->count, ns * sizeof *r->count);
  r->n_res = gus_res_count(&g->m);
  memcpy(r->res, g->rs, sizeof r->res);
  /* every instruction uses the front end, a dispatch slot, a ROB entry and a retire slot once */
  r->res[GUS_R_FRONTEND].uses = r->res[GUS_R_DISPATCH].uses = r->res[GUS_R_ROB].uses = r->res[GUS_R_RETIRE].uses = g->n;
  for (int b = 0; b < GUS_R_MAX; b++) r->res[b].bound += g->bound_res[b + 1];
  r->bound_data = g->bound_res[GUS_B_DATA + 1];
  r->bound_memdep = g->bound_res[GUS_B_MEMDEP + 1];
  r->l1d_misses = g->miss[0];
  r->l2_misses = g->miss[1];
  r->llc_misses = g->miss[2];
}

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
#define N_LINKS 3       /* bandwidth links: 0 l2 -> l1d, 1 llc -> l2, 2 dram -> llc */
#define CK_DEPTH 16     /* a bitset checkpoint every CK_DEPTH nodes along a chain */

/* ======================================================================================
 * Taint sets
 *
 * Every set the model forms is "an existing set plus the current instruction n": taint sets are
 * binding chains. A set value (gtv) is a node (an immutable, persistent set: an interval of
 * instruction indices plus a parent node) and a pending interval [lo, hi] of recent indices, so
 * that extending a set by the next instruction costs nothing. Extending it by an instruction
 * that does not continue the interval materializes the interval as a new node: O(1), no copy.
 * Every CK_DEPTH nodes along a chain a node carries a bitset checkpoint (its members over the
 * ring of the last R instructions), built from the previous checkpoint by a word-wise copy, so
 * a membership test walks at most CK_DEPTH nodes and copying costs nw / CK_DEPTH words per node.
 * Bitsets are built when a test (or a newer checkpoint) first needs them: many chains (ports,
 * registers) are never asked about before they leave the window.
 * Nodes and bitsets live in rings indexed by id; an entry is reused only once every member it
 * holds is older than the window (the rings grow otherwise), and stale references are detected
 * by id. Members older than n - R + 1 are dropped: no test ever asks for them (R > Q).
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
  uint64_t up;     /* the nearest checkpoint at or above this node (node id), 0 = none */
  uint64_t seg_lo; /* oldest member added by the non-checkpoint nodes from here up to `up` */
  uint64_t bits;   /* a checkpoint's bitset id (0 = not built yet: ck_bits) */
  uint32_t len;
  uint16_t depth;  /* nodes since the nearest checkpoint or root above */
  uint16_t ck;     /* a checkpoint: `bits` holds its bitset (every member in [hi-R+1, hi]) */
  uint64_t spare;  /* pads the node to 64 bytes: slots are found by a shift, not a multiply */
} gnode;

typedef struct gbmeta {
  uint64_t id; /* id of the bitset in this slot */
  uint64_t c;  /* formed at instruction c: valid for members in [c - R + 1, c] */
} gbmeta;

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
} gsinfo;

typedef struct gcache {
  uint64_t *tags;  /* [sets * ways], MRU first within a set; line + 1, 0 = empty */
  uint32_t sets, ways;
  /* L1D only: a line's data lives in a fixed slot of its set, so that an LRU update moves one
   * byte per way instead of the fill time and the taint set (a line's data stays put) */
  uint8_t *slot;   /* [sets * ways], parallel to tags: the slot (0..ways-1) of each way's line */
  gtick *ready;    /* [sets * ways] by slot: when the line's data arrives (fills in flight) */
  gtv *tv;         /* by slot: the taint of that arrival (not kept up to date without taint) */
} gcache;

struct gus {
  gus_machine m;
  bool taint_on, selfcheck, prefetch;
  uint32_t window;
  uint64_t Q;    /* taint-queue length (instructions) */
  uint64_t R;    /* ring of bit positions: a multiple of 64, > Q */
  uint32_t nw;   /* words per bitset */
  uint64_t npos; /* n mod R */
  uint64_t qpos; /* (n - Q) mod R: the ring position of the instruction leaving the taint queue */
  /* taint-set storage */
  gnode *nodes;
  uint64_t nmask, nid;
  gbmeta *bmeta;
  uint64_t *bwords;
  uint64_t bmask, bid;
  uint64_t selfcheck_bad, selfcheck_n;
  /* the last taint-queue test answered by a checkpoint (tv_has_q): node mq_id (hi, seg_lo), its
   * checkpoint's hi and bitset id. Consecutive dispatch sets often share the node. 0 = none. */
  uint64_t mq_id, mq_hi, mq_seg, mq_chi, mq_bid;
  uint64_t *ckstack; /* ck_bits: checkpoints waiting to be built */
  size_t ckcap;
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
  gtick ravail[RG_NUM];
  gtv rtv[RG_NUM];
  gtick *robt; /* [rob]: retire time of the instruction in each ROB entry */
  gtv *robtv;
  uint32_t rpos;
  gstlf stlf[STLF_N];
  uint32_t *qsid; /* [R]: sid of each instruction in the taint queue, by ring position */
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

/* Ring position of instruction e (n - R < e <= n). */
static inline uint64_t tpos(const gus *g, uint64_t e) {
  uint64_t d = g->n - e;
  return g->npos >= d ? g->npos - d : g->npos + g->R - d;
}

/* Oldest instruction any future test can ask about. */
static inline uint64_t window_lo(const gus *g, uint64_t n) { return n + 1 > g->R ? n + 1 - g->R : 0; }

/* Set or clear bit positions [p, p + len) of w (no wrap-around; len >= 1). */
static inline void bits_range(uint64_t *w, uint64_t p, uint64_t len, bool set) {
  uint64_t e = p + len, wa = p >> 6, we = (e - 1) >> 6;
  uint64_t ma = ~0ULL << (p & 63), me = ~0ULL >> (63 - ((e - 1) & 63));
  if (wa == we) {
    if (set) w[wa] |= ma & me;
    else w[wa] &= ~(ma & me);
    return;
  }
  if (set) {
    w[wa] |= ma;
    for (uint64_t i = wa + 1; i < we; i++) w[i] = ~0ULL;
    w[we] |= me;
  } else {
    w[wa] &= ~ma;
    for (uint64_t i = wa + 1; i < we; i++) w[i] = 0;
    w[we] &= ~me;
  }
}

/* Set or clear the positions of instructions [a, a + len), a <= g->n. */
static void ring_range(const gus *g, uint64_t *w, uint64_t a, uint64_t len, bool set) {
  if (!len) return;
  if (len >= g->R) {
    memset(w, set ? 0xff : 0, g->nw * sizeof(uint64_t));
    return;
  }
  uint64_t p;
  if (a + g->R > g->n) {
    p = tpos(g, a);
  } else {
    /* older than the window (clearing stale positions): reduce modulo R */
    uint64_t d = (g->n - a) % g->R;
    p = g->npos >= d ? g->npos - d : g->npos + g->R - d;
  }
  if (len == 1) {
    if (set) w[p >> 6] |= 1ULL << (p & 63);
    else w[p >> 6] &= ~(1ULL << (p & 63));
    return;
  }
  uint64_t k = g->R - p;
  if (k >= len) {
    bits_range(w, p, len, set);
  } else {
    bits_range(w, p, k, set);
    bits_range(w, 0, len - k, set);
  }
}

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

static __attribute__((noinline, cold)) void grow_bits(gus *g) {
  uint64_t on = g->bmask + 1, nn = on * 2;
  gbmeta *nm = xcalloc(nn, sizeof *nm);
  uint64_t *nwds = xmalloc(nn * g->nw * sizeof(uint64_t));
  for (uint64_t i = 0; i < on; i++)
    if (g->bmeta[i].id) {
      uint64_t s = g->bmeta[i].id & (nn - 1);
      nm[s] = g->bmeta[i];
      memcpy(nwds + s * g->nw, g->bwords + i * g->nw, g->nw * sizeof(uint64_t));
    }
  free(g->bmeta);
  free(g->bwords);
  g->bmeta = nm;
  g->bwords = nwds;
  g->bmask = nn - 1;
}

static inline const gnode *node_get(const gus *g, uint64_t id) {
  const gnode *x = &g->nodes[id & g->nmask];
  return x->id == id ? x : NULL;
}

static inline uint64_t node_lo(const gnode *x) { return x->hi - x->len; }
static inline uint64_t node_bits(const gus *g, const gnode *x) {
  (void)g;
  return x->bits;
}

/* Set the ring positions of x's interval clipped to the window [wlo, n] (make_checkpoint). */
static ALWAYS_INLINE void ck_set_node(const gus *g, uint64_t *w, const gnode *x, uint64_t wlo) {
  uint64_t lo = node_lo(x) < wlo ? wlo : node_lo(x);
  if (lo > x->hi) return;
  /* in the window (lo >= wlo): positions run from tpos(lo), wrapping at R */
  uint64_t p = tpos(g, lo), len = x->hi - lo + 1;
  if (len == 1) {
    w[p >> 6] |= 1ULL << (p & 63); /* the common case: one instruction */
  } else if (p + len <= g->R) {
    bits_range(w, p, len, true);
  } else {
    bits_range(w, p, g->R - p, true);
    bits_range(w, 0, len - (g->R - p), true);
  }
}

/* A checkpoint bitset for node x (formed now, at instruction n): the previous checkpoint up its
 * chain, copied and cleared of positions that now stand for newer instructions, plus the
 * intervals of the nodes in between and of x itself. The previous checkpoint is the parent's
 * `up` (no walk to find it), so the nodes in between are walked once, setting their bits. */
static uint64_t make_checkpoint(gus *g, const gnode *x, uint64_t n) {
  uint64_t bid = ++g->bid;
  gbmeta *bm = &g->bmeta[bid & g->bmask];
  if (bm->id && bm->c + g->R > n) {
    grow_bits(g);
    bm = &g->bmeta[bid & g->bmask];
  }
  bm->id = bid;
  bm->c = x->hi;
  uint64_t *w = g->bwords + (bid & g->bmask) * g->nw;
  const uint64_t wlo = window_lo(g, n);
  /* Chains are strictly decreasing and a slot is reused only once its node is out of the window,
   * so when the parent is in the window the nodes down to its `up` are too (all newer than it). */
  const gnode *par = x->parent ? node_get(g, x->parent) : NULL;
  if (par && par->hi < wlo) par = NULL;
  const gnode *base = NULL;
  if (par && par->up) {
    const gnode *c = node_get(g, par->up);
    /* not built (0): ck_build builds older first, so only when it is out of the window */
    if (c && c->hi >= wlo && c->bits && g->bmeta[c->bits & g->bmask].id == c->bits) base = c;
  }
  if (base) {
    uint64_t bb = base->bits;
    const gbmeta *yb = &g->bmeta[bb & g->bmask];
    memcpy(w, g->bwords + (bb & g->bmask) * g->nw, g->nw * sizeof(uint64_t));
    /* positions of (cb, c] still hold members older than c - R + 1 */
    uint64_t cb = yb->c, c = x->hi;
    if (c > cb) ring_range(g, w, cb + 1, c - cb, false);
  } else {
    memset(w, 0, g->nw * sizeof(uint64_t));
  }
  ck_set_node(g, w, x, wlo);
  /* the nodes between x and the previous checkpoint (depth bounds the walk) */
  const gnode *y = par;
  for (unsigned k = 0; y && !y->ck && k < CK_DEPTH + 2; k++) {
    ck_set_node(g, w, y, wlo);
    if (!y->parent) break;
    y = node_get(g, y->parent);
    if (y && y->hi < wlo) break;
  }
  return bid;
}

/* A new node adding [lo, hi] to the set `parent`; returns its id (or the parent's, or 0, when
 * nothing of [lo, hi] is within the window). */
static uint64_t node_new(gus *g, uint64_t parent, uint64_t lo, uint64_t hi, uint64_t n) {
  const uint64_t wlo = window_lo(g, n);
  if (lo < wlo) lo = wlo;
  const gnode *p = parent ? node_get(g, parent) : NULL;
  if (p && p->hi < wlo) p = NULL;
  if (lo > hi) return p ? parent : 0;
  uint64_t id = ++g->nid;
  if (id >= TV_MAX_NODE) wi_die(70, "gus: more than 2^40 taint-set nodes in one run");
  gnode *x = &g->nodes[id & g->nmask];
  if (__builtin_expect(x->id && x->hi + g->R > n, 0)) {
    grow_nodes(g);
    x = &g->nodes[id & g->nmask];
    p = p ? node_get(g, parent) : NULL; /* the ring moved */
  }
  x->id = id;
  x->hi = hi;
  x->len = (uint32_t)(hi - lo); /* < R (lo >= wlo, hi <= n): no clamp needed */
  x->ck = 0;
  x->parent = p ? parent : 0;
  x->depth = (uint16_t)(p ? p->depth + 1 : 0);
  x->up = p ? p->up : 0;
  x->seg_lo = p && !p->ck ? p->seg_lo : lo;
  if (x->depth >= CK_DEPTH) {
    x->bits = 0; /* the bitset is built when first needed (ck_bits) */
    x->ck = 1;
    x->depth = 0;
    x->up = id;
    x->seg_lo = UINT64_MAX;
  }
  return id;
}

/* The bitset id of checkpoint node x, built now if it is not yet (ck_bits). Checkpoints are built lazily:
 * about half are never needed by a membership test. A bitset is built from the next older
 * checkpoint on the chain, so the unbuilt ones below x are built first, oldest first. Built late
 * (at instruction g->n rather than x->hi) it holds the members still in the window, the only ones
 * a test can ask about. */
static __attribute__((noinline)) uint64_t ck_build(gus *g, const gnode *x) {
  uint64_t b = 0;
  const uint64_t wlo = window_lo(g, g->n);
  size_t ns = 0;
  for (const gnode *y = x;;) {
    if (y->bits) break;
    if (ns == g->ckcap) {
      g->ckcap = g->ckcap ? 2 * g->ckcap : 64;
      g->ckstack = xrealloc(g->ckstack, g->ckcap * sizeof *g->ckstack);
    }
    g->ckstack[ns++] = y->id;
    /* the next older checkpoint: the nearest one at or above the parent */
    const gnode *p = y->parent ? node_get(g, y->parent) : NULL;
    if (!p || p->hi < wlo || !p->up) break;
    y = node_get(g, p->up);
    if (!y || y->hi < wlo) break;
  }
  while (ns) {
    const gnode *y = node_get(g, g->ckstack[--ns]);
    b = make_checkpoint(g, y, g->n); /* may grow the bitset ring, never the node ring */
    g->nodes[y->id & g->nmask].bits = b;
  }
  return b;
}

static ALWAYS_INLINE uint64_t ck_bits(gus *g, const gnode *x) {
  uint64_t b = x->bits;
  return b ? b : ck_build(g, x);
}

/* The set *src plus instruction n (never older than any member). When that needs a new node,
 * *src is rewritten to the equivalent materialized form so that later users share the node.
 * The common cases first: a set without a pending interval has hi = TV_NOHI, never n. */
static ALWAYS_INLINE gtv tv_add(gus *g, gtv *src, uint64_t n) {
  gtv v = *src;
  if (v.hi == n) return v;
  uint32_t len = tv_len(v);
  if (v.hi + 1 == n && len != TV_NOLEN) {
    /* members older than the window are never asked about: the length saturates at R */
    v.hi = n;
    v.nl += len < g->R;
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

/* The bit of ring position p in checkpoint c's bitset (c->hi >= the member asked about, so the
 * bitset's slot cannot have been reused: slots are reused once their checkpoint is out of the
 * window). */
static ALWAYS_INLINE bool ck_test(gus *g, const gnode *c, uint64_t p) {
  uint64_t bid = ck_bits(g, c);
  return (g->bwords[(bid & g->bmask) * g->nw + (p >> 6)] >> (p & 63)) & 1;
}

/* tv_has from node x (x->hi >= j >= x->seg_lo): walk the nodes down to the checkpoint. */
static __attribute__((noinline)) bool tv_has_seg(gus *g, const gnode *x, uint64_t j, uint64_t p) {
  for (;;) {
    if (node_lo(x) <= j) return true;
    if (x->ck) return ck_test(g, x, p);
    if (!x->parent || !(x = node_get(g, x->parent)) || x->hi < j) return false;
  }
}

/* Is instruction j (n - R < j <= n, at ring position p = tpos(g, j)) a member of v? */
static ALWAYS_INLINE bool tv_has(gus *g, const gtv *v, uint64_t j, uint64_t p) {
  const uint32_t len = tv_len(*v);
  if (len != TV_NOLEN && j <= v->hi && j + len >= v->hi) return true;
  const uint64_t id = tv_node(*v);
  const gnode *x = &g->nodes[id & g->nmask];
  if (!id || x->id != id || x->hi < j) return false;
  if (j >= x->seg_lo) return tv_has_seg(g, x, j, p);
  /* not among the nodes below the checkpoint: ask the checkpoint's bitset */
  const uint64_t cid = x->up;
  const gnode *c = &g->nodes[cid & g->nmask];
  if (!cid || c->id != cid || c->hi < j) return false;
  return ck_test(g, c, p);
}

/* tv_has for the taint-queue test, remembering the node and checkpoint that answered it: the
 * next test (of the next instruction) usually reaches the same node and skips two dependent
 * loads. The answers are tv_has's: node and checkpoint are immutable while hi >= j (their slots
 * are reused only once out of the window). */
static ALWAYS_INLINE bool tv_has_q(gus *g, const gtv *v, uint64_t j, uint64_t p) {
  const uint32_t len = tv_len(*v);
  if (len != TV_NOLEN && j <= v->hi && j + len >= v->hi) return true;
  const uint64_t id = tv_node(*v);
  if (id && id == g->mq_id && j < g->mq_seg) {
    if (g->mq_hi < j || g->mq_chi < j) return false;
    return (g->bwords[(g->mq_bid & g->bmask) * g->nw + (p >> 6)] >> (p & 63)) & 1;
  }
  const gnode *x = &g->nodes[id & g->nmask];
  if (!id || x->id != id || x->hi < j) return false;
  if (j >= x->seg_lo) return tv_has_seg(g, x, j, p);
  const uint64_t cid = x->up;
  const gnode *c = &g->nodes[cid & g->nmask];
  if (!cid || c->id != cid || c->hi < j) return false;
  const uint64_t bid = ck_bits(g, c);
  g->mq_id = id;
  g->mq_hi = x->hi;
  g->mq_seg = x->seg_lo;
  g->mq_chi = c->hi;
  g->mq_bid = bid;
  return (g->bwords[(bid & g->bmask) * g->nw + (p >> 6)] >> (p & 63)) & 1;
}

/* tv_has without the checkpoints: the reference the self-check compares against. */
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
  uint32_t w = 1;
  while (w < c->ways && s[w] != key && s[w]) w++;
  bool hit = w < c->ways && s[w] == key;
  if (w == c->ways) w--;
  for (; w > 0; w--) s[w] = s[w - 1];
  s[0] = key;
  return hit;
}

/* The L1D: like cache_access, moving each line's data slot along; *e is the index of the line's
 * fill time and taint (ready[*e], tv[*e]). A missing line gets the slot of the way it replaces:
 * the caller sets its fill time and taint. */
static ALWAYS_INLINE bool l1_access(gcache *c, uint64_t line, size_t *e) {
  size_t base = (size_t)(line & (c->sets - 1)) * c->ways;
  uint64_t *s = c->tags + base, key = line + 1;
  uint8_t *sl = c->slot + base;
  if (s[0] == key) {
    *e = base + sl[0];
    return true;
  }
  uint32_t w = 1;
  while (w < c->ways && s[w] != key && s[w]) w++;
  bool hit = w < c->ways && s[w] == key;
  if (w == c->ways) w--;
  const uint8_t k = sl[w];
  for (; w > 0; w--) {
    s[w] = s[w - 1];
    sl[w] = sl[w - 1];
  }
  s[0] = key;
  sl[0] = k;
  *e = base + k;
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
  g->nw = (uint32_t)(g->R / 64);
  g->qpos = g->R - g->Q;
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
    uint64_t nn = pow2_at_least(2 * g->R), nb = pow2_at_least(g->R / 4);
    g->nodes = xcalloc(nn, sizeof *g->nodes);
    g->nmask = nn - 1;
    g->bmeta = xcalloc(nb, sizeof *g->bmeta);
    g->bwords = xmalloc(nb * g->nw * sizeof(uint64_t));
    g->bmask = nb - 1;
    g->qsid = xcalloc(g->R, sizeof *g->qsid);
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
  g->cache[0].slot = xmalloc((size_t)g->cache[0].sets * g->cache[0].ways);
  for (size_t i = 0; i < (size_t)g->cache[0].sets * g->cache[0].ways; i++)
    g->cache[0].slot[i] = (uint8_t)(i % g->cache[0].ways); /* ways <= 64 (gus_machine_check) */
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
  free(g->bmeta);
  free(g->bwords);
  free(g->ckstack);
  free(g->qsid);
  free(g->fbavail);
  free(g->fbtv);
  free(g->robt);
  free(g->robtv);
  for (int i = 0; i < 3; i++) free(g->cache[i].tags);
  free(g->dtlb.tags);
  free(g->open_row);
  free(g->stlb.tags);
  free(g->cache[0].slot);
  free(g->cache[0].ready);
  free(g->cache[0].tv);
  free(g->si);
  free(g->taint);
  free(g->count);
  free(g);
}

uint64_t gus_now_ticks(const gus *g) { return g->last_ret; }

void gus_set_selfcheck(gus *g, bool on) { g->selfcheck = on; }

static bool check_chain(const gus *g, const gtv *v, const char *what, char *msg, size_t n) {
  uint64_t prev_lo = tv_len(*v) != TV_NOLEN ? v->hi - tv_len(*v) : UINT64_MAX;
  unsigned steps = 0;
  for (uint64_t id = tv_node(*v); id;) {
    const gnode *x = node_get(g, id);
    if (!x) return true; /* reused: everything below is out of the window */
    if (x->hi >= prev_lo) {
      snprintf(msg, n, "%s: node %llu [%llu, %llu] is not below %llu", what, (unsigned long long)id,
               (unsigned long long)node_lo(x), (unsigned long long)x->hi, (unsigned long long)prev_lo);
      return false;
    }
    if (x->ck) steps = 0;
    else if (++steps > CK_DEPTH + 1) {
      snprintf(msg, n, "%s: more than %d nodes without a checkpoint", what, CK_DEPTH);
      return false;
    }
    prev_lo = node_lo(x);
    id = x->parent;
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
  return true;
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
  int cb = c->bind;
  gtv *src = NULL;
  for (; s; s &= s - 1) {
    int r = __builtin_ctzll(s);
    gtick t = g->ravail[r];
    bool up = t > ct;
    ct = up ? t : ct;
    cb = up ? GUS_B_DATA : cb;
    if (TAINT) src = up ? &g->rtv[r] : src;
  }
  c->t = ct;
  c->bind = cb;
  if (TAINT && src) c->tv = tv_add(g, src, n);
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
    if (TAINT) *tv = tv_add(g, floor_tv, n);
  }
  *avail = s + cost;
  return s;
}

/* The port of u that frees first (the lowest-numbered on ties). Selects, not branches: which
 * port wins is data-dependent and mispredicts often. */
static ALWAYS_INLINE int pick_port(const gus *g, const gxuop *u) {
  int best = u->pl[0];
  gtick bt = g->pavail[best];
  for (uint32_t k = 1; k < u->np; k++) {
    int p = u->pl[k];
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
    uint32_t u = 0;
    for (uint32_t i = 1; i < g->nfb; i++)
      if (g->fbavail[i] < g->fbavail[u]) u = i;
    ch_max(g, &mc, g->fbavail[u], &g->fbtv[u], GUS_R_FILLBUF, n, TAINT);
    g->rs[GUS_R_FILLBUF].uses++;
    mc.t += g->lat_lvl[lvl];
    if (lvl == 3) mc.t += dram_prep(g, line);
    for (int l = lvl - 1; l >= 0; l--) {
      gtick s = use_res(g, &g->lavail[l], &g->ltv[l], mc.t, &mc.tv, g->cost_link[l], n, TAINT);
      g->rs[GUS_R_L2 + l].uses++;
      ch_max(g, &mc, s, &g->ltv[l], GUS_R_L2 + l, n, TAINT);
    }
    g->fbavail[u] = mc.t;
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

/* Step instruction n; sid's descriptor is built (prepare_sid). */
static ALWAYS_INLINE void step_impl(gus *g, uint32_t sid, const trace_insn *ti, const trace_mem *mems,
                                    const bool TAINT, const bool CHECK) {
  const gsinfo *si = &g->si[sid];
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
  if (n >= g->rob && g->robt[rp] >= td) {
    td = g->robt[rp];
    bd = GUS_R_ROB;
    src = &g->robtv[rp];
  }
  if (si->serial && n && g->last_ret > td) {
    td = g->last_ret;
    bd = GUS_R_RETIRE;
    src = &g->ret_tv;
  }
  gtv Td = TV_EMPTY;
  if (TAINT) {
    Td = tv_add(g, src, n);
    g->disp_tv = Td;
    /* Taint queue: n enters, the instruction Q older leaves; it is tainted if it is on the
     * chain that decided n's dispatch. */
    if (n >= g->Q) {
      uint64_t j = n - g->Q;
      const uint64_t qp = g->qpos; /* tpos(g, j) */
      bool in = tv_has_q(g, &Td, j, qp);
      if (CHECK) {
        g->selfcheck_n++;
        if (in != tv_has_walk(g, &Td, j)) g->selfcheck_bad++;
      }
      g->taint[g->qsid[qp]] += in;
    }
    g->qsid[g->npos] = sid;
  }
  g->rs[bd].bound++; /* uses of the front end, dispatch, ROB and retire: one each, set at the end */
  const trace_mem *mv = mems + ti->mem_off;
  const unsigned nm = ti->n_mem;
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
  unsigned n_st = 0; /* store accesses: each takes a dispatch slot */
  if (nm) {
    ch_regs(g, &ach, addr, n, TAINT);
    /* ---- loads: one load micro-op per access; the computation waits for all of them */
    for (unsigned k = 0; k < nm; k++) {
      if (mv[k].is_store) {
        n_st++;
        continue;
      }
      gch lc = ach;
      load_access(g, &lc, mv[k].addr, mv[k].size, td, &Td, n, TAINT);
      if (lc.t > cur.t) cur = lc;
    }
  }

  g->disp_avail = td + (n_st ? (si->nuops + n_st) * g->cost_disp : si->disp_cost);

  /* ---- execute: the class's micro-ops in sequence */
  const gxcls *xc = si->xc;
  const unsigned nu = xc->n;
  for (unsigned k = 0; k < nu; k++) {
    int p = issue(g, &cur, &xc->u[k], 1, td, &Td, n, TAINT);
    cur.t += xc->u[k].lat[p];
  }
  /* what decided the result (other than the instruction's own dispatch) */
  g->bound_res[cur.bind + 1]++;

  /* ---- stores: address and data micro-ops; the data is the computation's result */
  gch fin = cur;
  if (n_st) {
    for (unsigned k = 0; k < nm; k++) {
      if (!mv[k].is_store) continue;
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
  if (si->stack) {
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
      g->ret_tv = tv_add(g, &g->ret_tv, n);
      fin.tv = g->ret_tv;
    }
  } else {
    tr = fin.t;
    if (TAINT) g->ret_tv = fin.tv;
  }
  g->ret_avail = tr + g->cost_ret;
  g->robt[rp] = tr;
  if (TAINT) g->robtv[rp] = fin.tv;
  if (++g->rpos == g->rob) g->rpos = 0;
  g->last_ret = tr;
  if (si->serial && tr > g->disp_avail) {
    /* nothing dispatches before a serializing instruction retires */
    g->disp_avail = tr;
    if (TAINT) g->disp_tv = g->ret_tv;
  }
  g->n = n + 1;
  if (TAINT) {
    /* the taint ring only */
    if (++g->npos == g->R) g->npos = 0;
    if (++g->qpos == g->R) g->qpos = 0;
  }
}

static void step_taint(gus *g, uint32_t sid, const trace_insn *ti, const trace_mem *mems) {
  step_impl(g, sid, ti, mems, true, false);
}

static void step_check(gus *g, uint32_t sid, const trace_insn *ti, const trace_mem *mems) {
  step_impl(g, sid, ti, mems, true, true);
}

static void step_fast(gus *g, uint32_t sid, const trace_insn *ti, const trace_mem *mems) {
  step_impl(g, sid, ti, mems, false, false);
}

void gus_step(gus *g, uint32_t sid, const dec_insn *d, const trace_insn *ti, const trace_mem *mems) {
  if (sid >= g->scap || !g->si[sid].built) prepare_sid(g, sid, d);
  if (!g->taint_on) step_fast(g, sid, ti, mems);
  else if (g->selfcheck) step_check(g, sid, ti, mems);
  else step_taint(g, sid, ti, mems);
}

/* Step a batch (the step is inlined: one copy with taint tracking, one without, one with the
 * self-check). Static ids below `ready` have their descriptors built (gus_run_source). */
static ALWAYS_INLINE wi_rc run_batch(gus *g, const gus_source *src, const trace_batch *b, uint32_t ready,
                                     wi_err *err, const bool TAINT, const bool CHECK) {
  for (size_t i = 0; i < b->n; i++) {
    const trace_insn *ti = &b->insns[i];
    const uint32_t sid = ti->sid;
    if (__builtin_expect(sid >= ready, 0) && (sid >= g->scap || !g->si[sid].built)) {
      const dec_insn *d = sid < src->n_static ? src->decoded(src->ctx, sid) : NULL;
      if (!d)
        return wi_fail(err, WI_EINVAL, "gus: instruction %llu has sid %u, not a static instruction of the source",
                       (unsigned long long)(b->first_index + i), sid);
      prepare_sid(g, sid, d);
    }
    step_impl(g, sid, ti, b->mems, TAINT, CHECK);
  }
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
    for (uint64_t j = g->n > g->Q ? g->n - g->Q : 0; j < g->n; j++)
      if (tv_has(g, &g->ret_tv, j, tpos(g, j))) g->taint[g->qsid[tpos(g, j)]]++;
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

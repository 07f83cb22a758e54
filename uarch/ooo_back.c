/* ooo_back.c — the out-of-order model's back-end: rename and dispatch (micro-op expansion,
 * register renaming, port binding, load/store queue allocation), oldest-ready-first issue,
 * completion and wakeup, memory dependences and machine clears, branch resolution and
 * squash, in-order commit, store drain, and top-down slot accounting. */
#include <stddef.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "ooo_int.h"

/* ---- small helpers ----------------------------------------------------------------------------- */

static inline uint64_t max64(uint64_t a, uint64_t b) { return a > b ? a : b; }

static inline uint64_t rob_pos(const ooo_model *m, uint32_t idx) {
  const ooo_state *st = m->st;
  return st->rob_head + ((idx - (uint32_t)st->rob_head) & m->rob_mask);
}

static inline uint32_t load_gen_mask(const ooo_model *m) { return (1u << (30 - m->uop_bits)) - 1; }

static inline uint32_t load_tag(const ooo_model *m, uint32_t slot) {
  uint32_t gen = (uint32_t)m->uops[slot].seq & load_gen_mask(m);
  return ((uint32_t)TAG_LOAD << 30) | (gen << m->uop_bits) | slot;
}

static inline void make_ready(ooo_model *restrict m, uint32_t slot) {
  ooo_state *st = m->st;
  ooo_uop *u = &m->uops[slot];
  u->state = US_READY;
  uint32_t p = u->port;
  m->rdy_of[p][slot >> 6] |= 1ULL << (slot & 63);
  st->rdy_sum[p] |= 1ULL << (slot >> 6);
  st->rdy_ports |= 1u << p; /* unconditionally: no host branch to mispredict */
}

/* (unready, link_add and oo_wheel_insert are forced in line: with the issue stage's two copies, with and
 * without bindings, the compiler put them out of line) */
static inline __attribute__((always_inline)) void unready(ooo_model *restrict m, uint32_t slot) {
  ooo_state *st = m->st;
  ooo_uop *u = &m->uops[slot];
  uint32_t p = u->port;
  uint64_t *w = &m->rdy_of[p][slot >> 6];
  *w &= ~(1ULL << (slot & 63));
  /* branch-free: clear the summary bit when the word empties, the port bit when the port does
   * (its summary empties: a micro-op is made ready only when not ready, so the bitmaps count) */
  uint64_t sum = st->rdy_sum[p] & ~((uint64_t)(*w == 0) << (slot >> 6));
  st->rdy_sum[p] = sum;
  st->rdy_ports &= ~((uint32_t)(sum == 0) << p);
}

/* Micro-op u leaves its scheduler entry. `ids`: the model keeps bindings (m->binds), so the
 * entry's number goes back to the pool's free stack; without them only the count matters (the
 * numbers name entries for observers only, and a model without bindings never has one). */
static inline __attribute__((always_inline)) void sched_release(ooo_model *restrict m, ooo_uop *u, const bool ids) {
  ooo_state *st = m->st;
  uint32_t p = u->pool;
  if (ids) m->sched_free[p][m->sched_cap[p] - st->sched_used[p]] = u->sched_id;
  st->sched_used[p]--;
  uint32_t port = u->port;
  st->port_queued[port]--;
  st->port_key[port] -= 16;
}

static inline __attribute__((always_inline)) void link_add(ooo_model *restrict m, uint32_t prod,
                                                           uint32_t cons) {
  ooo_state *st = m->st;
  uint32_t n = st->link_free;
  ooo_link *l = &m->links[n];
  st->link_free = l->next;
  st->link_avail--;
  l->cons = cons;
  l->cons_seq = m->uops[cons].seq;
  l->next = m->uops[prod].dep_head;
  m->uops[prod].dep_head = n;
}

static inline void links_release(ooo_model *restrict m, uint32_t head) {
  ooo_state *st = m->st;
  while (head != OOO_NIL) {
    ooo_link *l = &m->links[head];
    uint32_t next = l->next;
    l->next = st->link_free;
    st->link_free = head;
    st->link_avail++;
    head = next;
  }
}

/* Wake the consumers of producer `prod`, whose result is available at `now`; with `binds`
 * (m->binds: a constant in each copy) also note when and from whom their operands arrived. */
static inline __attribute__((always_inline)) void wake(ooo_model *restrict m, uint32_t prod, uint64_t now,
                                                       const bool binds) {
  ooo_state *st = m->st;
  ooo_uop *p = &m->uops[prod];
  uint32_t n = p->dep_head;
  if (n == OOO_NIL) return; /* no consumers (a third of the micro-ops): not even the flow */
  p->dep_head = OOO_NIL;
  uint64_t pfid = binds ? m->rob[p->rob].fid : OOO_FID_NONE;
  /* the list goes back to the free list whole (which node serves which link next does not
   * matter, only how many are free) */
  uint32_t first = n, last = n, count = 0;
  while (n != OOO_NIL) {
    ooo_link *l = &m->links[n];
    uint32_t next = l->next;
    ooo_uop *c = &m->uops[l->cons];
    if (c->seq == l->cons_seq && c->state == US_WAIT) {
      if (binds && now >= c->ready_cycle) {
        c->ready_cycle = now;
        c->ready_by = prod;
        if (c->bind_kind != OB_MEM_ORDER) c->bind_by = pfid;
      }
      if (--c->pending == 0) make_ready(m, l->cons);
    }
    last = n;
    count++;
    n = next;
  }
  m->links[last].next = st->link_free;
  st->link_free = first;
  st->link_avail += count;
}

/* Store filter over 8-byte granules of correct-path stores up to 64 bytes. */
static inline uint32_t sf_hash(uint64_t g) { return (uint32_t)(g ^ (g >> 12) ^ (g >> 24)) & (OOO_SFILT - 1); }

/* The granules first..last are an aligned quad (first a multiple of 4, last = first + 3: an
 * aligned 32-byte access, a vector's): g + j (j < 4) differs from g in its two low bits only,
 * which sf_hash passes through (its shifted terms are the same for the four), so
 * sf_hash(g + j) == sf_hash(g) ^ j and their counters are the aligned group of four around
 * sf_hash(g), one 8-byte word, and their scan bounds the group of four around it in sflast. */
static inline bool sf_quad(uint64_t first, uint64_t last) { return !(first & 3) && last == first + 3; }

/* Add d (+1 or -1) to each 16-bit lane of x without carries or borrows between lanes: the same
 * wrap-around as four uint16 additions. */
#define SF_LANE_TOP 0x8000800080008000ULL
#define SF_LANE_ONE 0x0001000100010001ULL
static inline uint64_t sf_lanes_add(uint64_t x, int d) {
  if (d > 0) return ((x & ~SF_LANE_TOP) + SF_LANE_ONE) ^ (x & SF_LANE_TOP);
  return ((x | SF_LANE_TOP) - SF_LANE_ONE) ^ (~x & SF_LANE_TOP);
}

/* The counters of an aligned quad of granules from g, as one word (see sf_quad). */
static inline uint16_t *sf_quad_counters(ooo_model *restrict m, uint64_t g) {
  return &m->sfilt[sf_hash(g) & ~3u];
}

static inline __attribute__((always_inline)) void sfilt_add(ooo_model *restrict m, uint64_t addr,
                                                            uint32_t size, int d) {
  const uint64_t first = addr >> 3, last = (addr + size - 1) >> 3;
  if (sf_quad(first, last)) {
    uint16_t *c = sf_quad_counters(m, first);
    uint64_t x;
    memcpy(&x, c, 8);
    x = sf_lanes_add(x, d);
    memcpy(c, &x, 8);
    return;
  }
  for (uint64_t g = first; g <= last; g++)
    m->sfilt[sf_hash(g)] = (uint16_t)(m->sfilt[sf_hash(g)] + d);
}

/* Scan bound of the store filter: sflast[sf_hash(g) & (OOO_SFLAST - 1)] is at least the SQ
 * position of every store in the SQ counted in sfilt for granule g. Stores enter at the tail, so
 * the last position written is such a bound: a squash only removes younger positions, and a
 * stale entry is merely a loose bound. It lets find_dep_store start its scan at the youngest
 * candidate instead of the SQ tail (stack slots are rewritten by every call frame: the scan
 * from the tail passed all the stores of the deeper frames).
 * A store at SQ position pos enters the filter: its granules' counts and scan bounds, in one
 * pass. */
static inline __attribute__((always_inline)) void sfilt_enter(ooo_model *restrict m, uint64_t addr,
                                                              uint32_t size, uint64_t pos) {
  const uint64_t first = addr >> 3, last = (addr + size - 1) >> 3;
  if (sf_quad(first, last)) {
    _Static_assert(OOO_SFLAST % 4 == 0 && OOO_SFILT % 4 == 0, "store filter: groups of four");
    uint16_t *c = sf_quad_counters(m, first);
    uint64_t x;
    memcpy(&x, c, 8);
    x = sf_lanes_add(x, 1);
    memcpy(c, &x, 8);
    uint64_t *b = &m->sflast[sf_hash(first) & (OOO_SFLAST - 4)];
    b[0] = b[1] = b[2] = b[3] = pos;
    return;
  }
  for (uint64_t g = first; g <= last; g++) {
    uint32_t h = sf_hash(g);
    m->sfilt[h] = (uint16_t)(m->sfilt[h] + 1);
    m->sflast[h & (OOO_SFLAST - 1)] = pos;
  }
}

static inline __attribute__((always_inline)) void store_filter_release(ooo_model *restrict m, ooo_sq *s) {
  if (s->filt == 1) sfilt_add(m, s->addr, s->size, -1);
  else if (s->filt == 2) m->st->big_stores--;
  s->filt = 0;
}

/* SQ position of the youngest older correct-path store overlapping [addr, end), or UINT64_MAX. */
static uint64_t find_dep_store(ooo_model *restrict m, uint64_t addr, uint64_t end) {
  ooo_state *st = m->st;
  if (st->sq_tail == st->sq_head || end <= addr) return UINT64_MAX;
  uint64_t top = st->sq_tail; /* scan below */
  if (!st->big_stores && end - addr <= 64 && !(m->flags & OOO_NO_SQ_BOUND)) {
    /* every overlapping store that counts is counted in the filter for a granule of the load:
     * none if all are 0, else at or below the largest scan bound of the non-zero ones */
    uint64_t lim = 0;
    const uint64_t first = addr >> 3, last = (end - 1) >> 3;
    if (sf_quad(first, last)) {
      const uint16_t *c = sf_quad_counters(m, first);
      uint64_t x;
      memcpy(&x, c, 8);
      if (!x) return UINT64_MAX;
      const uint64_t *b = &m->sflast[sf_hash(first) & (OOO_SFLAST - 4)];
      for (uint32_t j = 0; j < 4; j++)
        if (c[j]) lim = max64(lim, b[j] + 1);
    } else {
      for (uint64_t g = first; g <= last; g++) {
        uint32_t h = sf_hash(g);
        if (m->sfilt[h]) lim = max64(lim, m->sflast[h & (OOO_SFLAST - 1)] + 1);
      }
    }
    if (!lim) return UINT64_MAX;
    if (lim < top) top = lim;
  }
  for (uint64_t pos = top; pos-- > st->sq_head;) {
    const ooo_sq *s = &m->sq[pos & m->sq_mask];
    if (!s->wrong_path && s->size && s->addr < end && addr < s->addr + s->size) return pos;
  }
  return UINT64_MAX;
}

/* First SQ position whose store address is still unknown. */
static uint64_t sq_unresolved(ooo_model *restrict m) {
  ooo_state *st = m->st;
  if (st->sq_unres < st->sq_head) st->sq_unres = st->sq_head;
  while (st->sq_unres < st->sq_tail && m->sq[st->sq_unres & m->sq_mask].sta_cycle != UINT64_MAX) st->sq_unres++;
  return st->sq_unres;
}

static inline uint32_t mdp_index(const ooo_model *m, uint64_t pc) {
  return (uint32_t)(pc ^ (pc >> m->cfg.core.mdp_bits)) & ((1u << m->cfg.core.mdp_bits) - 1);
}

/* ---- squash -------------------------------------------------------------------------------------- */

static inline __attribute__((always_inline)) void squash_uop(ooo_model *restrict m, uint32_t slot, const bool ids) {
  ooo_uop *u = &m->uops[slot];
  switch (u->state) {
  case US_WAIT:
  case US_MEMWAIT: sched_release(m, u, ids); break;
  case US_READY:
    unready(m, slot);
    /* a marked micro-op leaves the ready set only here or after its mark is cleared: a reused
     * slot must not inherit the mark */
    m->ublk_of[u->port][slot >> 6] &= ~(1ULL << (slot & 63));
    sched_release(m, u, ids);
    break;
  case US_ISSUED:
  case US_RETRY: oo_wheel_remove(m, slot); break;
  default: break;
  }
  links_release(m, u->dep_head); /* (dep_head of a free slot is never read: dispatch sets it) */
  u->seq = 0;
  u->state = US_FREE;
}

static void emit_squash(ooo_model *restrict m, uint64_t fid, uint64_t pc, uint32_t sid, uint32_t rid, bool wrong,
                        uint64_t now, uint64_t by, int cause, uint32_t slots) {
  ooo_ev e = oo_ev_make(now, fid, pc, sid, rid, wrong);
  e.extra = (uint32_t)cause;
  e.by_fid = by;
  e.slots = (uint8_t)slots;
  m->obs->squash(m->obs_ctx, &e);
}

/* Squash ROB positions >= from one instruction at a time, youngest first, with an observer
 * event for each (the observer sees the state as each one is undone). */
static void squash_rob_obs(ooo_model *restrict m, uint64_t from, uint64_t now, uint64_t by, int cause) {
  ooo_state *st = m->st;
  uint64_t new_uop_tail = st->uop_tail;
  while (st->rob_tail > from) {
    uint64_t pos = --st->rob_tail;
    ooo_rob *r = oo_rob(m, pos);
    for (uint32_t k = r->n_uops; k-- > 0;) squash_uop(m, (uint32_t)((r->uop0 + k) & m->uop_mask), m->binds);
    for (uint32_t j = r->n_undo; j-- > 0;) {
      const ooo_undo *e = &m->undo[(r->undo0 + j) & m->undo_mask];
      m->map[e->reg] = e->old;
    }
    st->undo_tail = r->undo0;
    st->lq_tail -= r->n_lq;
    for (uint32_t j = 0; j < r->n_sq; j++) store_filter_release(m, &m->sq[(r->sq0 + j) & m->sq_mask]);
    st->sq_tail -= r->n_sq;
    st->int_free += r->n_int;
    st->vec_free += r->n_vec;
    st->rob_slots -= r->slots;
    if (st->serial_fid == r->fid) st->serial_fid = OOO_FID_NONE;
    if (r->flags & RF_GATE) st->lowconf_n--;
    st->stats.squashed++;
    st->stats.slots[cause ? OOO_SLOT_BAD_CLEAR : OOO_SLOT_BAD_BRANCH] += r->slots;
    new_uop_tail = r->uop0;
    emit_squash(m, r->fid, r->pc, r->sid, OOO_RID_ROB + (uint32_t)(pos & m->rob_mask), r->flags & RF_WRONG,
                now, by, cause, r->slots);
  }
  st->uop_tail = new_uop_tail;
}

_Static_assert(offsetof(ooo_rob, slots) == offsetof(ooo_rob, n_uops) + 2 && offsetof(ooo_rob, n_lq) == offsetof(ooo_rob, n_uops) + 3 &&
                   offsetof(ooo_rob, n_int) == offsetof(ooo_rob, n_uops) + 6 &&
                   offsetof(ooo_rob, n_vec) == offsetof(ooo_rob, n_uops) + 7,
               "ooo_rob: the counts word");

/* Squash ROB positions >= from without an observer: the same end state as squash_rob_obs with
 * each structure undone in one pass. The micro-ops, undo-log entries and SQ entries of the
 * squashed instructions are contiguous ranges ending at the tails; they are walked from the
 * youngest down, the order squash_rob_obs takes (scheduler entries and link nodes return to
 * their free lists in the same order). */
static void squash_rob_fast(ooo_model *restrict m, uint64_t from, int cause) {
  ooo_state *st = m->st;
  uint64_t tail = st->rob_tail;
  if (tail <= from) return;
  const ooo_rob *f = oo_rob(m, from);
  uint64_t uop0 = f->uop0, undo0 = f->undo0, sq0 = f->sq0, serial = st->serial_fid;
  uint32_t n_lq = 0, n_int = 0, n_vec = 0, slots = 0, gates = 0;
  /* the squashed entries are at most two contiguous runs of the ring: walked by pointer; gates
   * and the serializing instruction only when there are any (low-confidence gating is a
   * wrong-path mode of its own) */
  const bool any = st->lowconf_n || serial != OOO_FID_NONE;
  uint32_t i = (uint32_t)(from & m->rob_mask), n = (uint32_t)(tail - from);
  while (n) {
    uint32_t run = WI_MIN(n, m->rob_mask + 1 - i);
    if (any) {
      for (const ooo_rob *r = &m->rob[i], *e = r + run; r < e; r++) {
        n_lq += r->n_lq;
        n_int += r->n_int;
        n_vec += r->n_vec;
        slots += r->slots;
        gates += (r->flags & RF_GATE) != 0;
        serial = serial == r->fid ? OOO_FID_NONE : serial;
      }
    } else {
#if defined(__SSE2__)
      /* the counts word (n_uops .. n_vec) of each entry widened and added as eight 16-bit
       * lanes, at most 256 entries at a time (no lane can overflow) */
      const __m128i z = _mm_setzero_si128();
      for (const ooo_rob *r = &m->rob[i], *e = r + run; r < e;) {
        const ooo_rob *ce = e - r > 256 ? r + 256 : e;
        __m128i acc = z;
        for (; r < ce; r++) acc = _mm_add_epi16(acc, _mm_unpacklo_epi8(_mm_loadl_epi64((const __m128i *)&r->n_uops), z));
        slots += (uint32_t)_mm_extract_epi16(acc, 2);
        n_lq += (uint32_t)_mm_extract_epi16(acc, 3);
        n_int += (uint32_t)_mm_extract_epi16(acc, 6);
        n_vec += (uint32_t)_mm_extract_epi16(acc, 7);
      }
#else
      for (const ooo_rob *r = &m->rob[i], *e = r + run; r < e; r++) {
        n_lq += r->n_lq;
        n_int += r->n_int;
        n_vec += r->n_vec;
        slots += r->slots;
      }
#endif
    }
    n -= run;
    i = 0;
  }
  const bool ids = m->binds;
  for (uint64_t k = st->uop_tail, left = k - uop0; left;) { /* youngest first, by contiguous runs */
    uint32_t hi = (uint32_t)((k - 1) & m->uop_mask);
    uint32_t run = (uint32_t)WI_MIN(left, (uint64_t)hi + 1);
    if (ids)
      for (uint32_t s = hi + 1; s-- > hi + 1 - run;) squash_uop(m, s, true);
    else
      for (uint32_t s = hi + 1; s-- > hi + 1 - run;) squash_uop(m, s, false);
    k -= run;
    left -= run;
  }
  /* youngest first, so each register ends with its oldest saved mapping; by contiguous runs */
  const ooo_undo *restrict undo = m->undo;
  ooo_map *restrict map = m->map;
  for (uint64_t j = st->undo_tail, left = j - undo0; left;) {
    uint32_t hi = (uint32_t)((j - 1) & m->undo_mask); /* the youngest left */
    uint32_t run = (uint32_t)WI_MIN(left, (uint64_t)hi + 1);
    for (uint32_t k = hi + 1; k-- > hi + 1 - run;) map[undo[k].reg] = undo[k].old;
    j -= run;
    left -= run;
  }
  for (uint64_t j = sq0; j < st->sq_tail; j++) store_filter_release(m, &m->sq[j & m->sq_mask]);
  st->rob_tail = from;
  st->uop_tail = uop0;
  st->undo_tail = undo0;
  st->sq_tail = sq0;
  st->lq_tail -= n_lq;
  st->int_free += n_int;
  st->vec_free += n_vec;
  st->rob_slots -= slots;
  st->serial_fid = serial;
  st->lowconf_n -= gates;
  st->stats.squashed += tail - from;
  st->stats.slots[cause ? OOO_SLOT_BAD_CLEAR : OOO_SLOT_BAD_BRANCH] += slots;
}

/* Squash every instruction at ROB position >= from and everything in the fetch queue. */
static void squash_from(ooo_model *restrict m, uint64_t from, uint64_t now, uint64_t by, int cause, uint64_t bck_tail) {
  ooo_state *st = m->st;
  bool obs = m->obs && m->obs->squash;
  if (obs || st->lowconf_n) /* without either, nothing to do per entry (no FQ_GATE entry is queued) */
    for (uint64_t pos = st->fq_head; pos < st->fq_tail; pos++) {
      const ooo_fq *q = oo_fq(m, pos);
      if (q->flags & FQ_GATE) st->lowconf_n--;
      if (obs)
        emit_squash(m, q->fid, q->pc, q->tid == OOO_TID_PC ? UINT32_MAX : q->tid, OOO_RID_FETCH, q->flags & FQ_WRONG,
                    now, by, cause, 0);
    }
  st->fq_tail = st->fq_head;
  m->hp_valid = false;
  st->blk_lane = 0; /* (rename's blocked memo: the queue head goes) */
  if (obs) squash_rob_obs(m, from, now, by, cause);
  else squash_rob_fast(m, from, cause);
  uint64_t new_uop_tail = st->uop_tail;
  for (int pl = 0; pl < OOO_NPOOL; pl++)
    if (st->sched_cur[pl] > new_uop_tail) st->sched_cur[pl] = new_uop_tail;
  st->bck_tail = bck_tail;
  if (st->sq_unres > st->sq_tail) st->sq_unres = st->sq_tail;
  /* drop squashed loads from the load-wait list */
  uint32_t k = 0;
  for (uint32_t i = 0; i < st->mdpw_n; i++) {
    uint32_t s = m->mdpw[i];
    if (m->uops[s].state == US_MEMWAIT) m->mdpw[k++] = s;
  }
  st->mdpw_n = k;
}

/* ---- branch resolution and machine clears ------------------------------------------------------------ */

/* The branch at ROB index robidx resolved (its last micro-op completed): a low-confidence one
 * releases the fetch gate; a mispredicted one squashes what follows it and redirects fetch. */
static __attribute__((noinline)) void resolve_branch_slow(ooo_model *restrict m, uint32_t robidx, uint64_t now) {
  ooo_state *st = m->st;
  ooo_rob *r = &m->rob[robidx];
  if (r->flags & RF_GATE) { /* a low-confidence branch resolved */
    r->flags &= (uint16_t)~RF_GATE;
    st->lowconf_n--;
    if (st->fstall == FS_GATE && st->lowconf_n <= m->cfg.bp.conf_gate) {
      st->fstall = FS_RUN;
      if (st->fetch_resume < now + 1) st->fetch_resume = now + 1;
    }
  }
  if (!(r->flags & RF_MISPRED)) return;
  r->flags &= (uint16_t)~RF_MISPRED;
  uint64_t pos = rob_pos(m, robidx);
  uint64_t bpos = r->bck_at; /* the branch's own checkpoint */
  squash_from(m, pos + 1, now, r->fid, 0, bpos + 1);
  oo_restore_branch(m, r->bck, true);
  oo_redirect(m, now, r->fid, r->win + 1, m->cfg.fe.mispredict_penalty, 0);
}

/* A branch resolved: the rest only for a low-confidence or mispredicted one. */
static inline void resolve_branch(ooo_model *restrict m, uint32_t robidx, uint64_t now) {
  if (m->rob[robidx].flags & (RF_GATE | RF_MISPRED)) resolve_branch_slow(m, robidx, now);
}

static void machine_clear(ooo_model *restrict m, uint32_t load_slot, uint64_t now) {
  ooo_state *st = m->st;
  ooo_uop *l = &m->uops[load_slot];
  ooo_rob *r = &m->rob[l->rob];
  uint64_t pos = rob_pos(m, l->rob);
  uint64_t fid = r->fid, win = r->win, bck_at = r->bck_at, pc = r->pc;
  bool has_ck = bck_at < st->bck_tail;
  squash_from(m, pos, now, fid, 1, bck_at);
  if (has_ck) oo_restore_branch(m, (uint32_t)(bck_at & m->bck_mask), false);
  if (m->cfg.core.mem_dep == MDP_PREDICT) m->mdp[mdp_index(m, pc)] = 1;
  st->stats.machine_clears++;
  oo_redirect(m, now, fid, win, m->cfg.fe.machine_clear_penalty, 1);
}

/* ---- memory requests of loads -------------------------------------------------------------------------- */

static inline int level_kind(const ooo_model *m, uint64_t lat) {
  if (lat <= m->l1d_lat) return OB_L1;
  if (lat <= m->l2_lat) return OB_L2;
  if (lat <= m->llc_lat) return OB_LLC;
  return OB_DRAM;
}

static void load_finish(ooo_model *restrict m, uint32_t slot) {
  ooo_uop *u = &m->uops[slot];
  uint64_t lat = u->done_cycle - u->issue_cycle;
  uint8_t miss = m->rob[u->rob].miss;
  if (m->lvl_track && miss) /* the memory system said which levels missed */
    u->done_kind = (miss & 8) ? OB_DRAM : (miss & 4) ? OB_LLC : OB_L2;
  else /* a hit, or a merge into an in-flight miss: by latency */
    u->done_kind = (uint8_t)level_kind(m, lat);
  if (u->done_kind != OB_L1) m->rob[u->rob].flags |= RF_LOADMISS;
  oo_wheel_insert(m, slot, u->done_cycle + u->lat);
}

/* Request the remaining lines of load `slot`. */
/* End of the piece of access [addr, end) that lies in addr's cache line. The line after the
 * last line of the address space would be 0: that line ends the access instead. */
static inline uint64_t piece_end(uint64_t addr, uint64_t end, uint32_t line_bytes) {
  uint64_t le = (addr | (line_bytes - 1)) + 1;
  return le && le < end ? le : end;
}

/* Request the remaining lines of load `slot`; false (and *retry) when the memory system
 * refused one (the load then waits in state US_RETRY). */
static inline __attribute__((always_inline)) bool load_lines(ooo_model *restrict m, uint32_t slot, uint64_t now,
                                                             uint64_t *retry) {
  ooo_uop *u = &m->uops[slot];
  const ooo_rob *r = &m->rob[u->rob];
  mem_req q;
  q.pc = r->pc;
  q.fid = r->fid;
  q.tag = load_tag(m, slot);
  q.type = MREQ_LOAD;
  q.wrong_path = (r->flags & RF_WRONG) != 0;
  q.retry = u->state == US_RETRY; /* the first line was refused before */
  while (u->addr < u->end) {
    uint64_t e = piece_end(u->addr, u->end, m->line_bytes);
    q.addr = u->addr;
    q.size = (uint32_t)(e - u->addr);
    uint64_t ready = now;
    m->cur_fid = q.fid;
    m->cur_miss = 0;
    int rc = mem_access(m->memsys, &q, now, &ready);
    m->cur_fid = OOO_FID_NONE;
    if (m->cur_miss) m->rob[u->rob].miss |= (uint8_t)m->cur_miss;
    if (rc == MEM_BLOCKED) {
      u->state = US_RETRY;
      u->bind_kind = OB_MSHR;
      u->bind_rid = OOO_RID_NONE;
      *retry = ready > now ? ready : now + 1;
      return false;
    }
    if (rc == MEM_DONE) {
      if (ready > u->done_cycle) u->done_cycle = ready;
      if (ready > now + m->l1d_lat) m->rob[u->rob].flags |= RF_LOADMISS;
    } else {
      u->mparts++;
      m->rob[u->rob].flags |= RF_LOADMISS;
    }
    u->addr = e;
    q.retry = 0;
  }
  u->state = US_ISSUED;
  if (!u->mparts) load_finish(m, slot);
  return true;
}

/* Refused loads retry in age order, oldest first, and stop at the first refused again (FIFO
 * replay): a full memory system costs one refused request per retry, not one per waiting
 * load. The list is mblk_n entries from mblk_h: retries take from the front by moving
 * mblk_h, and the entries move down only when the list reaches the end of the arrays. */
static void mblk_add(ooo_model *restrict m, uint32_t slot, uint64_t retry) {
  ooo_state *st = m->st;
  /* At the end of the arrays: move the list down, dropping stale (squashed) entries. */
  if (st->mblk_h + st->mblk_n > m->lq_mask) {
    uint32_t k = 0;
    for (uint32_t i = st->mblk_h, e = st->mblk_h + st->mblk_n; i < e; i++) {
      const ooo_uop *v = &m->uops[m->mblk_slot[i]];
      if (v->seq == m->mblk_seq[i] && v->state == US_RETRY) {
        m->mblk_slot[k] = m->mblk_slot[i];
        m->mblk_seq[k++] = m->mblk_seq[i];
      }
    }
    st->mblk_h = 0;
    st->mblk_n = k;
  }
  uint64_t seq = m->uops[slot].seq;
  uint32_t h = st->mblk_h, i = h + st->mblk_n++;
  while (i > h && m->mblk_seq[i - 1] > seq) {
    m->mblk_seq[i] = m->mblk_seq[i - 1];
    m->mblk_slot[i] = m->mblk_slot[i - 1];
    i--;
  }
  m->mblk_seq[i] = seq;
  m->mblk_slot[i] = slot;
  if (retry < st->mblk_retry) st->mblk_retry = retry;
}

static void load_request(ooo_model *restrict m, uint32_t slot, uint64_t now) {
  uint64_t retry;
  if (!load_lines(m, slot, now, &retry)) mblk_add(m, slot, retry);
}

/* The entries behind the first load refused again are not looked at (a full memory system
 * keeps ~15 loads waiting, and most retries send one or two). Squashed entries among them stay
 * until a later retry reaches them or mblk_add moves the list down: a squashed load's (slot,
 * seq) never waits again, so they are only skipped. */
void oo_mem_retry(ooo_model *restrict m, uint64_t now) {
  ooo_state *st = m->st;
  st->mblk_retry = UINT64_MAX;
  uint32_t h = st->mblk_h, i = h, e = h + st->mblk_n;
  for (; i < e; i++) {
    uint32_t slot = m->mblk_slot[i];
    const ooo_uop *u = &m->uops[slot];
    if (u->seq != m->mblk_seq[i] || u->state != US_RETRY) continue; /* squashed */
    uint64_t retry;
    if (!load_lines(m, slot, now, &retry)) {
      st->mblk_retry = retry;
      break;
    }
  }
  st->mblk_n = e - i;
  st->mblk_h = st->mblk_n ? i : 0; /* (empty: from the start again) */
}

void oo_load_done(ooo_model *restrict m, uint32_t tag, uint64_t cycle) {
  uint32_t slot = tag & m->uop_mask;
  uint32_t gen = (tag >> m->uop_bits) & load_gen_mask(m);
  ooo_uop *u = &m->uops[slot];
  if (!u->seq || ((uint32_t)u->seq & load_gen_mask(m)) != gen || u->kind != OOO_UOP_LOAD || !u->mparts) return;
  u->mparts--;
  if (cycle > u->done_cycle) u->done_cycle = cycle;
  if (!u->mparts && u->addr >= u->end && u->state == US_ISSUED) load_finish(m, slot);
}

void oo_store_done(ooo_model *restrict m, uint32_t tag, uint64_t cycle) {
  ooo_sq *s = &m->sq[tag & m->sq_mask];
  if (s->state != SQS_WRITING || !s->parts) return;
  s->parts--;
  if (cycle > s->done) s->done = cycle;
}

/* ---- issue ------------------------------------------------------------------------------------------ */

/* The issue observer event of micro-op u on port p (out of line: its event record would take
 * stack and registers from every issue). */
static __attribute__((noinline)) void emit_issue(ooo_model *restrict m, const ooo_uop *u, const ooo_rob *r, uint32_t p,
                                                 uint64_t now) {
  ooo_ev e = oo_ev_make(now, r->fid, r->pc, r->sid, OOO_RID_PORT + p, (r->flags & RF_WRONG) != 0);
  e.rid2 = OOO_RID_SCHED + u->pool * OOO_RID_POOL_STRIDE + u->sched_id;
  e.uop = u->idx;
  e.uop_kind = u->kind;
  e.extra = u->lat;
  m->obs->issue(m->obs_ctx, &e);
}

/* `ld`: u is a load (a constant at each call). Only loads read issue_cycle (load_finish) and
 * issued (a store's violation check) in the model; observers read issue_cycle of any. */
static inline __attribute__((always_inline)) void issue_common(ooo_model *restrict m, uint32_t slot, uint32_t p,
                                                             uint64_t now, const bool binds, const bool ld) {
  ooo_state *st = m->st;
  ooo_uop *u = &m->uops[slot];
  unready(m, slot);
  sched_release(m, u, binds);
  u->state = US_ISSUED;
  if (binds || ld) u->issue_cycle = now;
  if (ld) u->issued = 1;
  if (binds && !u->bind_kind) {
    /* selects, not branches: whether a micro-op waited for its port is unpredictable (the kind
     * from a table, the resource by a mask) */
    static const uint8_t kinds[4] = {OB_DISPATCHED, OB_OPERAND, OB_PORT, OB_PORT};
    _Static_assert(OOO_RID_NONE == 0, "bind_rid: masked to OOO_RID_NONE");
    bool late = now > u->ready_cycle;
    uint64_t pby = oo_sel64(st->port_last_cycle[p] + 1 == now, st->port_last_fid[p], OOO_FID_NONE);
    u->bind_kind = kinds[(uint32_t)late * 2 + (u->ready_by != OOO_NIL)];
    u->bind_rid = (OOO_RID_PORT + p) & (0u - (uint32_t)late);
    u->bind_by = oo_sel64(late, pby, u->bind_by);
  }
  ooo_rob *r = &m->rob[u->rob];
  uint16_t fl = r->flags;
  if (!(fl & RF_EXECUTED)) { /* its first micro-op */
    _Static_assert(RF_WRONG == 1, "executed[]: wrong-path index");
    st->stats.executed[fl & RF_WRONG]++;
    r->flags = (uint16_t)(fl | RF_EXECUTED);
  }
  if (!binds) return; /* (no observer either) */
  st->port_last_cycle[p] = now;
  st->port_last_fid[p] = r->fid;
  if (m->obs && m->obs->issue) emit_issue(m, u, r, p, now);
}

/* 1 issued, 0 not now (stays ready), -1 left the ready set (waits for something). */
static inline __attribute__((always_inline)) int issue_load(ooo_model *restrict m, uint32_t slot, uint32_t p,
                                                             uint64_t now, const bool binds) {
  ooo_state *st = m->st;
  ooo_uop *u = &m->uops[slot];
  const ooo_rob *r = &m->rob[u->rob];
  bool wrong = (r->flags & RF_WRONG) != 0;
  if (!wrong && u->mdp && sq_unresolved(m) < u->sq_at) {
    unready(m, slot);
    u->state = US_MEMWAIT;
    m->mdpw[st->mdpw_n++] = slot;
    u->bind_kind = OB_MEM_ORDER;
    u->bind_rid = OOO_RID_SQ + (uint32_t)(st->sq_unres & m->sq_mask);
    u->bind_by = m->sq[st->sq_unres & m->sq_mask].fid;
    st->stats.mdp_waits++;
    return -1;
  }
  if (!wrong && u->dep_sq != UINT64_MAX && u->dep_sq >= st->sq_head) {
    ooo_sq *s = &m->sq[u->dep_sq & m->sq_mask];
    if (s->sta_cycle <= now) {
      if (!s->std_done) {
        const ooo_uop *sd = &m->uops[s->std_slot];
        if (sd->seq == s->std_seq && sd->state != US_DONE) {
          if (!st->link_avail) return 0;
          unready(m, slot);
          u->state = US_WAIT;
          u->pending++;
          link_add(m, s->std_slot, slot);
          u->bind_kind = OB_MEM_ORDER;
          u->bind_rid = OOO_RID_SQ + (uint32_t)(u->dep_sq & m->sq_mask);
          u->bind_by = s->fid;
          return -1;
        }
      }
      bool full = s->addr <= u->addr && s->addr + s->size >= u->end;
      issue_common(m, slot, p, now, binds, true);
      u->fwd_fid = s->fid;
      u->done_kind = full ? OB_FORWARD : OB_L1;
      if (full) st->stats.forwarded++;
      else st->stats.forward_fail++;
      uint64_t lat = full ? m->cfg.core.stlf_latency : m->cfg.core.stlf_fail_penalty + m->l1d_lat;
      u->done_cycle = now + lat;
      oo_wheel_insert(m, slot, now + lat + u->lat);
      return 1;
    }
    /* the store's address is unknown: read speculatively, remember the possible violation */
    if (!s->viol_seq || u->seq < s->viol_seq) {
      s->viol_seq = u->seq;
      s->viol_slot = slot;
    }
  }
  issue_common(m, slot, p, now, binds, true);
  if (u->pmem || u->end <= u->addr) {
    u->done_kind = OB_L1;
    uint64_t lat = u->pmem == 2 ? 0 : m->l1d_lat;
    u->done_cycle = now + lat;
    oo_wheel_insert(m, slot, now + lat + u->lat);
    return 1;
  }
  u->done_cycle = now + (u->occ > 1 ? u->occ : 0);
  load_request(m, slot, now);
  return 1;
}

/* The cycle port p's unpipelined unit for u's class frees (divider, fast-string load). */
static inline uint64_t *unit_free_at(ooo_model *restrict m, const ooo_uop *u, uint32_t p) {
  return &m->unit_free[(size_t)p * IC_NUM + u->cls];
}

/* True (with u bound to the unit) when that unit is still busy at cycle now. */
static inline bool unit_busy(ooo_uop *u, uint32_t p, uint64_t free_at, uint64_t now) {
  if (free_at <= now) return false;
  u->bind_kind = OB_UNIT;
  u->bind_rid = OOO_RID_UNIT + p;
  u->bind_by = OOO_FID_NONE;
  return true;
}

/* Issue micro-op `slot` on port p: 1 issued, 0 not, 2 not because its unpipelined unit is busy
 * (until *unit_free_at(); only an issue on port p moves that). In line in the issue loop, and
 * issue_load in it: most micro-ops issue at their first try, and a call's register saves cost
 * about as much as the issue. */
static inline __attribute__((always_inline)) int try_issue(ooo_model *restrict m, uint32_t slot, uint32_t p,
                                                            uint64_t now, const bool binds) {
  ooo_uop *u = &m->uops[slot];
  switch (u->kind) {
  case OOO_UOP_EXEC:
    if (u->occ > 1) {
      uint64_t *uf = unit_free_at(m, u, p);
      if (unit_busy(u, p, *uf, now)) return 2;
      *uf = now + u->occ;
    }
    /* (no done_cycle: only a load's is read; done_kind: only observers read a non-load's) */
    issue_common(m, slot, p, now, binds, false);
    if (binds) u->done_kind = OB_EXEC;
    oo_wheel_insert(m, slot, now + u->lat);
    return 1;
  case OOO_UOP_STA:
    issue_common(m, slot, p, now, binds, false);
    if (binds) u->done_kind = OB_EXEC;
    oo_wheel_insert(m, slot, now + m->cfg.core.agu_latency);
    return 1;
  case OOO_UOP_STD:
    issue_common(m, slot, p, now, binds, false);
    if (binds) u->done_kind = OB_EXEC;
    oo_wheel_insert(m, slot, now + m->cfg.core.std_latency);
    return 1;
  default:
    if (u->occ > 1) { /* a fast-string load holds its port for bytes / rep_bytes_per_cycle cycles */
      uint64_t *uf = unit_free_at(m, u, p);
      if (unit_busy(u, p, *uf, now)) return 2;
      int r = issue_load(m, slot, p, now, binds);
      if (r == 1) *uf = now + u->occ;
      return r;
    }
    return issue_load(m, slot, p, now, binds);
  }
}

/* Micro-op `slot` (bit of word wi) found its unit on port p busy: mark it in ub and keep the
 * earliest free cycle of the marked units (out of line: rare, and in line the compiler prepares
 * its addresses for every try). */
static __attribute__((noinline, cold)) void unit_blocked(ooo_model *restrict m, uint32_t p, uint64_t *ub, uint32_t wi,
                                                         uint32_t slot) {
  ooo_state *st = m->st;
  uint64_t uf = *unit_free_at(m, &m->uops[slot], p);
  ub[wi] |= 1ULL << (slot & 63);
  if (uf < st->ublk_until[p]) st->ublk_until[p] = uf;
}

/* Oldest-ready-first issue on port p (words of the ready bitmap in age order, see oo_issue);
 * filt: skip the micro-ops marked in ub. Marks the ones that find their unit busy. */
static inline __attribute__((always_inline)) void issue_port(ooo_model *restrict m, uint32_t p, uint64_t now,
                                                              const uint64_t *bm, uint64_t *ub,
                              uint64_t hi_words, uint64_t lo_words, uint64_t first_bits, uint64_t last_bits,
                              uint32_t w0, bool filt, const bool binds) {
  ooo_state *st = m->st;
  uint64_t sum = st->rdy_sum[p];
  for (int pass = 0; pass < 2; pass++) {
    uint64_t words = sum & (pass ? lo_words : hi_words);
    while (words) {
      uint32_t wi = (uint32_t)__builtin_ctzll(words);
      words &= words - 1;
      uint64_t bits = bm[wi];
      if (filt) bits &= ~ub[wi];
      if (wi == w0) bits &= pass ? last_bits : first_bits;
      while (bits) {
        uint32_t slot = wi * 64 + (uint32_t)__builtin_ctzll(bits);
        bits &= bits - 1;
        int r = try_issue(m, slot, p, now, binds);
        if (r == 1) goto out;
        if (r == 2) unit_blocked(m, p, ub, wi, slot);
      }
    }
  }
out:;
}

/* Micro-ops that found their unit busy are marked in the port's ublk bitmap and skipped until
 * the earliest of their units frees (ublk_until): trying them again before would only rewrite
 * the same OB_UNIT binding (a ready micro-op's binding changes nowhere else, and the unit's free
 * cycle moves only when port p issues to it), so the result is the same as trying every ready
 * micro-op every cycle. */
/* `binds` (m->binds) is a constant in each copy of the issue stage (oo_issue). */
static inline __attribute__((always_inline)) void issue_cycle(ooo_model *restrict m, uint64_t now,
                                                              const bool binds) {
  ooo_state *st = m->st;
  uint32_t ports = st->rdy_ports;
  if (!ports) return; /* nothing ready (before the age-order masks are worked out) */
  uint32_t nw = m->nwords;
  /* words in age order: w0 (bits >= start), w0+1 .. nw-1, 0 .. w0-1, w0 (bits < start);
   */
  uint32_t start = (uint32_t)(st->uop_head & m->uop_mask);
  uint32_t w0 = start >> 6;
  uint64_t hi_words = ~0ULL << w0, lo_words = ((1ULL << w0) - 1) | (1ULL << w0);
  uint64_t first_bits = ~0ULL << (start & 63), last_bits = (start & 63) ? (1ULL << (start & 63)) - 1 : 0;
  while (ports) {
    uint32_t p = (uint32_t)__builtin_ctz(ports);
    ports &= ports - 1;
    const uint64_t *bm = m->rdy_of[p];
    uint64_t *ub = m->ublk_of[p];
    uint64_t until = st->ublk_until[p];
    if (__builtin_expect(until == UINT64_MAX, 1)) {
      issue_port(m, p, now, bm, ub, hi_words, lo_words, first_bits, last_bits, w0, false, binds);
      continue;
    }
    if (now >= until) { /* a unit is free again: try them all */
      memset(ub, 0, (size_t)nw * sizeof *ub);
      st->ublk_until[p] = UINT64_MAX;
      issue_port(m, p, now, bm, ub, hi_words, lo_words, first_bits, last_bits, w0, false, binds);
      continue;
    }
    issue_port(m, p, now, bm, ub, hi_words, lo_words, first_bits, last_bits, w0, true, binds);
  }
}

/* (each copy out of line with its own registers, as complete_due's) */
static __attribute__((noinline)) void issue_cycle_b(ooo_model *restrict m, uint64_t now) {
  issue_cycle(m, now, true);
}
static __attribute__((noinline)) void issue_cycle_nb(ooo_model *restrict m, uint64_t now) {
  issue_cycle(m, now, false);
}

void oo_issue(ooo_model *restrict m, uint64_t now) {
  if (m->binds) issue_cycle_b(m, now);
  else issue_cycle_nb(m, now);
}

/* ---- completion -------------------------------------------------------------------------------------- */

static __attribute__((noinline)) void store_address_known(ooo_model *restrict m, ooo_sq *s, uint64_t now) {
  ooo_state *st = m->st;
  s->sta_cycle = now;
  if (s->viol_seq) {
    ooo_uop *l = &m->uops[s->viol_slot];
    uint64_t vseq = s->viol_seq;
    s->viol_seq = 0;
    if (l->seq == vseq && l->kind == OOO_UOP_LOAD && l->issued && !(m->rob[l->rob].flags & RF_WRONG))
      machine_clear(m, s->viol_slot, now);
  }
  /* (also after a machine clear: a waiting load older than the violating one survives it, and
   * this store's address may be the last it waited for — no later store would wake it) */
  if (st->mdpw_n) {
    uint64_t unres = sq_unresolved(m);
    uint32_t k = 0;
    for (uint32_t i = 0; i < st->mdpw_n; i++) {
      uint32_t slot = m->mdpw[i];
      ooo_uop *u = &m->uops[slot];
      if (u->state != US_MEMWAIT) continue;
      if (unres >= u->sq_at) {
        u->ready_cycle = now;
        make_ready(m, slot);
      } else {
        m->mdpw[k++] = slot;
      }
    }
    st->mdpw_n = k;
  }
}

/* The micro-op at the root of u's chain of last-arriving operands inside its own instruction
 * (u itself when its last operand came from another instruction or it waited for something
 * else): the issue binding of the instruction is the root's. */
static const ooo_uop *chain_root(const ooo_model *restrict m, const ooo_rob *r, const ooo_uop *u) {
  for (int guard = 0; guard < OOO_MAX_UOPS; guard++) {
    if (u->bind_kind != OB_OPERAND || u->ready_by == OOO_NIL) break;
    const ooo_uop *pu = &m->uops[u->ready_by];
    if (pu->rob != u->rob || pu->seq > u->seq || pu->seq < m->uops[r->uop0 & m->uop_mask].seq) break;
    u = pu;
  }
  return u;
}

/* The micro-op whose service names an instruction's completion binding, given its last
 * micro-op and the root of that one's chain (chain_root): the load at the root of a load-op or
 * read-modify-write instruction (`add rax, [m]`, `add [m], 1`: the operation waited for the
 * load's data, so the level that served the load bound it, as for a plain load), else last. */
static inline const ooo_uop *completion_uop(const ooo_uop *last, const ooo_uop *root) {
  return root->kind == OOO_UOP_LOAD ? root : last;
}

static void emit_complete(ooo_model *restrict m, const ooo_rob *r, const ooo_uop *u, uint64_t now) {
  ooo_ev e = oo_ev_make(now, r->fid, r->pc, r->sid, OOO_RID_ROB + (uint32_t)(r - m->rob), (r->flags & RF_WRONG) != 0);
  if (u) {
    const ooo_uop *cu = completion_uop(u, chain_root(m, r, u));
    e.uop = u->idx;
    e.uop_kind = u->kind;
    e.extra = cu->done_kind;
    e.by_fid = cu->fwd_fid;
  } else {
    e.extra = OB_EXEC;
    e.by_fid = OOO_FID_NONE;
  }
  m->obs->complete(m->obs_ctx, &e);
}

/* Micro-op `slot` completes at `now`: wake its consumers, finish its instruction, its store's
 * address or data, its branch (in line in oo_complete_due: a call per micro-op cost as much as
 * the completion of one without consumers). */
static inline __attribute__((always_inline)) void complete_uop(ooo_model *restrict m, uint32_t slot, uint64_t now,
                                                               const bool binds) {
  ooo_uop *u = &m->uops[slot];
  u->state = US_DONE; /* (done_cycle: nothing reads it after completion) */
  wake(m, slot, now, binds);
  uint32_t ri = u->rob;
  ooo_rob *r = &m->rob[ri];
  if (--r->left == 0) {
    r->flags |= RF_DONE;
    r->done_cycle = now;
    if (binds) {
      r->last_uop = slot;
      if (m->obs && m->obs->complete) emit_complete(m, r, u, now);
    }
  }
  if (u->kind == OOO_UOP_STA) store_address_known(m, &m->sq[u->sq], now);
  else if (u->kind == OOO_UOP_STD) m->sq[u->sq].std_done = 1;
  if (u->br) resolve_branch(m, ri, now);
}

static inline __attribute__((always_inline)) void complete_due(ooo_model *restrict m, uint64_t now,
                                                               const bool binds) {
  uint32_t b = (uint32_t)now & (OOO_WHEEL - 1);
  uint32_t slot;
  /* The bucket's bit in wheel_bits is cleared once, when the bucket is empty at the end (only
   * wheel_next reads the bits, after the core stages; events inserted for this cycle while it
   * is processed land in this bucket and are processed here too). Each micro-op is unlinked
   * before it completes: a completion may squash (unlink) others of the bucket. */
  while ((slot = m->wheel[b]) != OOO_NIL) {
    /* oo_wheel_unlink of the bucket's head (no predecessor) */
    ooo_uop *u = &m->uops[slot];
    uint32_t nx = u->next;
    m->wheel[b] = nx;
    m->uops[oo_sel32(nx != OOO_NIL, nx, slot)].prev = OOO_NIL;
    u->in_wheel = 0;
    m->st->wheel_n--;
    if (u->ev_cycle > now) { /* a parked far event: move it closer */
      oo_wheel_insert(m, slot, u->ev_cycle);
      continue;
    }
    complete_uop(m, slot, now, binds);
  }
  m->wheel_bits[b >> 6] &= ~(1ULL << (b & 63));
}

/* The two copies out of line, each with its own registers (one function holding both cost the
 * copy with bindings ~5% more host instructions). */
static __attribute__((noinline)) void complete_due_b(ooo_model *restrict m, uint64_t now) {
  complete_due(m, now, true);
}
static __attribute__((noinline)) void complete_due_nb(ooo_model *restrict m, uint64_t now) {
  complete_due(m, now, false);
}

void oo_complete_due(ooo_model *restrict m, uint64_t now) {
  if (m->binds) complete_due_b(m, now);
  else complete_due_nb(m, now);
}

/* ---- dispatch ----------------------------------------------------------------------------------------- */

/* The plan of the fetch-queue head with its memory accesses (kept in m->hp while it waits). */
typedef struct plan {
  ooo_phdr h;
  uint64_t ld_addr[OOO_MAX_LD], ld_end[OOO_MAX_LD];
  uint64_t st_addr[OOO_MAX_ST];
  uint32_t st_size[OOO_MAX_ST];
} plan;

#define OOO_MAX_MERGE_BYTES 65536u

static void add_store(plan *p, uint32_t max_st, uint64_t addr, uint32_t size) {
  if (p->h.n_st < max_st) {
    p->st_addr[p->h.n_st] = addr;
    p->st_size[p->h.n_st++] = size;
    return;
  }
  /* merge into the last entry as one range */
  uint32_t i = p->h.n_st - 1;
  uint64_t lo = p->st_addr[i] < addr ? p->st_addr[i] : addr;
  uint64_t hi = max64(p->st_addr[i] + p->st_size[i], addr + size);
  if (hi - lo > OOO_MAX_MERGE_BYTES) return; /* scattered writes: keep the first ones only */
  p->st_addr[i] = lo;
  p->st_size[i] = (uint32_t)(hi - lo);
}

_Static_assert(sizeof(plan) <= sizeof(((ooo_model *)0)->hp), "plan cache too small");
_Static_assert(offsetof(ooo_rob, n_vec) == offsetof(ooo_rob, n_uops) + 7 &&
                   offsetof(ooo_rob, left) == offsetof(ooo_rob, n_uops) + 1 &&
                   offsetof(ooo_rob, slots) == offsetof(ooo_rob, n_uops) + 2 &&
                   offsetof(ooo_rob, n_lq) == offsetof(ooo_rob, n_uops) + 3 &&
                   offsetof(ooo_rob, n_sq) == offsetof(ooo_rob, n_uops) + 4 &&
                   offsetof(ooo_rob, n_undo) == offsetof(ooo_rob, n_uops) + 5 &&
                   offsetof(ooo_rob, n_int) == offsetof(ooo_rob, n_uops) + 6,
               "ooo_rob: n_uops .. n_vec are stored as one word");

static const ooo_tmpl *fq_tmpl(ooo_model *restrict m, const ooo_fq *q) {
  return q->tid == OOO_TID_PC ? oo_tmpl_pc(m, q->pc) : oo_tmpl_sid(m, q->tid);
}

/* Largest byte range one access may cover: rep-string runs move large blocks; anything else
 * larger is a trace artifact (e.g. a collapsed self-loop) and is clipped. */
#define OOO_MAX_REP_BYTES (4u << 20)
#define OOO_MAX_ACCESS_BYTES 4096u

typedef int32_t oo_v4 __attribute__((vector_size(16)));
typedef uint64_t oo_v2u64 __attribute__((vector_size(16)));

/* The counts of a plan from its micro-ops (n_exec, n_ld, n_st, n_int, n_vec, n_undo set). */
static void plan_counts(const ooo_model *m, ooo_phdr *h, uint32_t nsrc) {
  uint32_t n_exec = h->n_exec, n_ld = h->n_ld, n_st = h->n_st;
  uint32_t nu = n_exec + n_ld + 2 * n_st;
  h->nu = nu;
  uint32_t slots = n_exec + n_st, W = m->cfg.core.rename_width;
  h->slots = slots < 1 ? 1 : slots > W ? W : slots;
  if (m->cfg.core.unified_sched) {
    h->need[OOO_POOL_MATH] = nu;
    h->need[OOO_POOL_LOAD] = h->need[OOO_POOL_STORE] = 0;
  } else {
    h->need[OOO_POOL_MATH] = n_exec;
    h->need[OOO_POOL_LOAD] = n_ld;
    h->need[OOO_POOL_STORE] = 2 * n_st;
  }
  h->max_links = nu * (nsrc + n_ld + 2) + 1;
  h->rob_counts = (uint64_t)(nu & 0xff) | (uint64_t)(nu & 0xff) << 8 | (uint64_t)(h->slots & 0xff) << 16 |
                  (uint64_t)(n_ld & 0xff) << 24 | (uint64_t)(n_st & 0xff) << 32 | (uint64_t)(h->n_undo & 0xff) << 40 |
                  (uint64_t)(h->n_int & 0xff) << 48 | (uint64_t)(h->n_vec & 0xff) << 56;
  /* Built in registers and stored whole: check_resources reads it back as vectors at once,
   * and scalar stores read back as a vector stall on store forwarding. The links lane holds
   * max_links, a bound for the all-at-once check (see check_resources). */
  _Static_assert(OOO_RES_ROB == 0 && OOO_RES_UOPS == 1 && OOO_RES_LINKS == 2 && OOO_RES_UNDO == 3 &&
                     OOO_RES_SCHED == 4 && OOO_NPOOL == 3 && OOO_RES_LQ == 7 && OOO_RES_SQ == 8 &&
                     OOO_RES_INT == 9 && OOO_RES_VEC == 10 && OOO_NRES == 12,
                 "dispatch resource lanes");
  const oo_v4 v[OOO_NRES / 4] = {
      {(int32_t)h->slots, (int32_t)nu, (int32_t)h->max_links, (int32_t)h->n_undo},
      {(int32_t)h->need[0], (int32_t)h->need[1], (int32_t)h->need[2], (int32_t)n_ld},
      {(int32_t)n_st, (int32_t)h->n_int, (int32_t)h->n_vec, 0}};
  memcpy(h->needv, v, sizeof v);
  h->rf = (uint16_t)((h->t->br ? RF_BRANCH : 0) | ((h->t->flags & TF_SERIAL) && !h->nop ? RF_SERIAL : 0));
  /* the ROB entry's flags .. last_uop as dispatch stores them (the fetch-queue flags are or-ed
   * in): flags, n_uops .. n_vec, br, miss 0, last_uop OOO_NIL */
  _Static_assert(offsetof(ooo_rob, n_uops) == offsetof(ooo_rob, flags) + 2 &&
                     offsetof(ooo_rob, br) == offsetof(ooo_rob, flags) + 10 &&
                     offsetof(ooo_rob, miss) == offsetof(ooo_rob, flags) + 11 &&
                     offsetof(ooo_rob, last_uop) == offsetof(ooo_rob, flags) + 12,
                 "ooo_rob: flags .. last_uop are stored as two words");
  h->rob_img[0] = (uint64_t)h->rf | h->rob_counts << 16;
  h->rob_img[1] = h->rob_counts >> 48 | (uint64_t)h->t->br << 16 | (uint64_t)OOO_NIL << 32;
}

/* The parts of a plan header the template decides alone: micro-ops, registers, rename needs. */
static inline void plan_from_tmpl(ooo_phdr *h, const ooo_tmpl *t) {
  h->n_exec = t->n_exec;
  h->src = t->src;
  h->addr = t->addr_src;
  h->dst = t->dst;
  h->n_int = t->n_int;
  h->n_vec = t->n_vec;
  h->n_undo = t->n_dst;
}

/* ooo_ximg words are the ooo_uop.small[] bytes in this order (little-endian host). */
_Static_assert(offsetof(ooo_uop, kind) == offsetof(ooo_uop, small) && offsetof(ooo_uop, port) == offsetof(ooo_uop, small) + 1 &&
                   offsetof(ooo_uop, state) == offsetof(ooo_uop, small) + 2 &&
                   offsetof(ooo_uop, pending) == offsetof(ooo_uop, small) + 3 &&
                   offsetof(ooo_uop, cls) == offsetof(ooo_uop, small) + 4 &&
                   offsetof(ooo_uop, pool) == offsetof(ooo_uop, small) + 5 &&
                   offsetof(ooo_uop, idx) == offsetof(ooo_uop, small) + 6 &&
                   offsetof(ooo_uop, last) == offsetof(ooo_uop, small) + 10 &&
                   offsetof(ooo_uop, br) == offsetof(ooo_uop, small) + 14 &&
                   offsetof(ooo_uop, occ) == offsetof(ooo_uop, lat) + 2,
               "ooo_uop small fields as ooo_ximg builds them");

void oo_plan_static(const ooo_model *m, ooo_tmpl *t) {
  ooo_phdr *h = &t->sp;
  memset(h, 0, sizeof *h);
  h->t = t;
  plan_from_tmpl(h, t);
  plan_counts(m, h, t->n_src);
  h->simple = h->n_exec == 1 && !h->n_ld && !h->n_st && !h->nop && !h->rep && !h->pmem && !(m->flags & OOO_NO_LEAN);
  t->dp_key = 0;
  /* the computation micro-ops as new_uop would build them (port, idx offset, rep start-up and
   * the first one's pending count are added at dispatch) */
  memset(t->ximg, 0, sizeof t->ximg);
  for (uint32_t k = 0; k < t->n_exec && k < OOO_MAX_CLASS_UOPS; k++) {
    const ooo_uop_spec *sp = &t->exec[k];
    ooo_ximg *x = &t->ximg[k];
    uint32_t lat = sp->latency > 65535 ? 65535 : sp->latency, occ = sp->occupancy > 65535 ? 65535 : sp->occupancy;
    x->latocc = lat | occ << 16;
    x->ports = sp->ports;
    uint32_t np = (uint32_t)__builtin_popcount(sp->ports);
    x->np = (uint8_t)(np <= OOO_XPORTS ? np : 0);
    for (uint32_t b = sp->ports, i = 0; b && i < OOO_XPORTS; b &= b - 1) x->plist[i++] = (uint8_t)__builtin_ctz(b);
    for (uint32_t p = 0; p < OOO_VPORTS; p++) x->vnot[p] = (sp->ports >> p & 1) ? 0 : 0x7fff;
    x->vec = m->port_vec && (np > 2 || !x->np);
    x->small0 = (uint64_t)OOO_UOP_EXEC | (uint64_t)US_WAIT << 16 | (uint64_t)t->cls << 32 |
                (uint64_t)m->pool_of[OOO_UOP_EXEC] << 40 | (uint64_t)k << 48;
    /* the last one is the result (last) and resolves a branch (br) */
    x->small1 = k + 1 == t->n_exec ? (uint64_t)1 << 16 | (uint64_t)(t->br != 0) << 48 : 0;
  }
}

/* The plan of fetch-queue head q: its accesses into p, and the header for their counts, which
 * it returns: the template's cached header when the counts and modifications are those of the
 * last plan made for it, as they mostly are (an instruction usually makes the same accesses
 * every time; only make_plan for the fetch-queue head rewrites that cache, so it stays valid
 * while the head waits), else p->h. */
/* (forced in line: with rename's two copies, with and without bindings, the compiler put it out of
 * line, which cost ~40 host instructions a call) */
static inline __attribute__((always_inline)) const ooo_phdr *make_plan(ooo_model *restrict m, const ooo_fq *q,
                                                                      const ooo_tmpl *t, plan *p) {
  ooo_phdr *h = &p->h;
  uint32_t n_ld = 0;
  h->n_st = 0;
  bool nop = (q->mod & MOD_NOP) != 0, rep = false;
  if (!nop) {
    if (!(q->flags & FQ_WRONG)) {
      const ooo_win *w = oo_win(m, q->win);
      uint32_t nm = w->n_mem;
      if (nm) {
        rep = (t->flags & TF_REP) && (w->flags & TI_REP);
        uint32_t lim = rep ? OOO_MAX_REP_BYTES : OOO_MAX_ACCESS_BYTES;
        for (uint32_t i = 0; i < nm; i++) {
          const trace_mem *a = &m->mem[(w->mem_pos + i) & m->mem_mask];
          uint32_t size = a->size < lim ? a->size : lim;
          if (a->is_store) add_store(p, m->max_st, a->addr, size);
          else if (n_ld < m->max_ld) {
            p->ld_addr[n_ld] = a->addr;
            p->ld_end[n_ld++] = a->addr + size;
          }
        }
      }
    } else {
      for (uint32_t i = 0; i < t->n_mem_def; i++) {
        uint64_t a = q->wp_addr[i];
        uint32_t sz = t->mem_size_def[i];
        if (t->mem_store_def & (1u << i)) add_store(p, m->max_st, a, a ? sz : 0);
        else if (n_ld < m->max_ld) {
          p->ld_addr[n_ld] = a;
          p->ld_end[n_ld++] = a ? a + sz : 0;
        }
      }
    }
  }
  bool pmem = (q->mod & MOD_PMEM) != 0;
  uint32_t key =
      1u << 31 | n_ld | h->n_st << 8 | (uint32_t)nop << 16 | (uint32_t)pmem << 17 | (uint32_t)rep << 18;
  ooo_tmpl *mt = (ooo_tmpl *)t; /* the cache is the only part make_plan writes */
  if (mt->dp_key == key) return &mt->dp;
  h->t = t;
  h->nop = nop;
  h->pmem = pmem;
  h->rep = rep;
  h->simple = false; /* (only static plans take the lean path) */
  uint32_t nsrc;
  if (nop) {
    h->n_exec = nsrc = 0;
    h->src = h->addr = h->dst = 0;
    h->n_int = h->n_vec = h->n_undo = 0;
  } else {
    plan_from_tmpl(h, t);
    nsrc = t->n_src;
  }
  h->n_ld = n_ld;
  plan_counts(m, h, nsrc);
  if (!(m->flags & OOO_NO_PLAN_CACHE)) {
    mt->dp = *h;
    mt->dp_key = key;
  }
  return h;
}

/* The flow of the oldest micro-op holding an entry of scheduler pool `pool` (waiting to issue),
 * OOO_FID_NONE if none. A per-pool cursor skips micro-ops that left the scheduler: they never
 * return to it, so every micro-op is passed at most once (squashes pull the cursor back). */
static uint64_t sched_oldest_fid(ooo_model *restrict m, uint32_t pool) {
  ooo_state *st = m->st;
  uint64_t cur = st->sched_cur[pool] > st->uop_head ? st->sched_cur[pool] : st->uop_head;
  for (; cur < st->uop_tail; cur++) {
    const ooo_uop *u = &m->uops[cur & m->uop_mask];
    if (u->pool == pool && (u->state == US_WAIT || u->state == US_READY || u->state == US_MEMWAIT)) break;
  }
  st->sched_cur[pool] = cur;
  return cur < st->uop_tail ? m->rob[m->uops[cur & m->uop_mask].rob].fid : OOO_FID_NONE;
}

/* Why the instruction cannot be dispatched now (OB_NONE if it can); checked in this order.
 * Every resource's use never exceeds its capacity, so a need of 0 always fits. A stop is also
 * noted in the state (blk_*: the first short resource and the need of it) for the next rename
 * cycle's shortcut (blk_still). */
static int check_resources_slow(ooo_model *restrict m, const ooo_phdr *p, uint32_t *rid, uint64_t *by) {
  ooo_state *st = m->st;
  const ooo_core_config *c = &m->cfg.core;
  *rid = OOO_RID_NONE; /* (the binding of a stop that names no flow or resource) */
  *by = OOO_FID_NONE;
  int stop;
  uint32_t lane, need;
  if (st->rob_slots + p->slots > c->rob || st->uop_tail - st->uop_head + p->nu > m->uop_mask + 1 ||
      st->link_avail < p->max_links || st->undo_tail - st->undo_head + p->n_undo > m->undo_mask + 1) {
    *rid = OOO_RID_ROB;
    if (st->rob_head != st->rob_tail) *by = oo_rob(m, st->rob_head)->fid;
    stop = OB_ROB_FULL;
    /* (the first short one of the four) */
    if (st->rob_slots + p->slots > c->rob) {
      lane = OOO_RES_ROB;
      need = p->slots;
    } else if (st->uop_tail - st->uop_head + p->nu > m->uop_mask + 1) {
      lane = OOO_RES_UOPS;
      need = p->nu;
    } else if (st->link_avail < p->max_links) {
      lane = OOO_RES_LINKS;
      need = p->max_links;
    } else {
      lane = OOO_RES_UNDO;
      need = p->n_undo;
    }
    goto stopped;
  }
  for (uint32_t pl = 0; pl < OOO_NPOOL; pl++)
    if (st->sched_used[pl] + p->need[pl] > m->sched_cap[pl]) {
      *rid = OOO_RID_SCHED + pl * OOO_RID_POOL_STRIDE;
      stop = OB_SCHED_FULL;
      lane = OOO_RES_SCHED + pl;
      need = p->need[pl];
      goto stopped;
    }
  if (st->lq_tail - st->lq_head + p->n_ld > c->lq) {
    *rid = OOO_RID_LQ;
    *by = m->lq[st->lq_head & m->lq_mask];
    stop = OB_LQ_FULL;
    lane = OOO_RES_LQ;
    need = p->n_ld;
    goto stopped;
  }
  if (st->sq_tail - st->sq_head + p->n_st > c->sq) {
    *rid = OOO_RID_SQ;
    *by = m->sq[st->sq_head & m->sq_mask].fid;
    stop = OB_SQ_FULL;
    lane = OOO_RES_SQ;
    need = p->n_st;
    goto stopped;
  }
  if (p->n_int > st->int_free) {
    *rid = OOO_RID_PRF_INT;
    stop = OB_PRF_FULL;
    lane = OOO_RES_INT;
    need = p->n_int;
    goto stopped;
  }
  if (p->n_vec > st->vec_free) {
    *rid = OOO_RID_PRF_VEC;
    stop = OB_PRF_FULL;
    lane = OOO_RES_VEC;
    need = p->n_vec;
    goto stopped;
  }
  return OB_NONE;
stopped:
  st->blk_lane = (uint8_t)(lane + 1);
  st->blk_stop = (uint8_t)stop;
  st->blk_need = need;
  st->blk_links = p->max_links;
  return stop;
}

/* The free amount of dispatch resource `lane` (OOO_RES_*; links: free link nodes). */
static inline uint64_t res_free(const ooo_model *m, uint32_t lane) {
  const ooo_state *st = m->st;
  const ooo_core_config *c = &m->cfg.core;
  switch (lane) {
  case OOO_RES_ROB: return c->rob - st->rob_slots;
  case OOO_RES_UOPS: return (uint64_t)m->uop_mask + 1 - (st->uop_tail - st->uop_head);
  case OOO_RES_LINKS: return st->link_avail;
  case OOO_RES_UNDO: return (uint64_t)m->undo_mask + 1 - (st->undo_tail - st->undo_head);
  case OOO_RES_LQ: return c->lq - (st->lq_tail - st->lq_head);
  case OOO_RES_SQ: return c->sq - (st->sq_tail - st->sq_head);
  case OOO_RES_INT: return st->int_free;
  case OOO_RES_VEC: return st->vec_free;
  default: return m->sched_cap[lane - OOO_RES_SCHED] - st->sched_used[lane - OOO_RES_SCHED];
  }
}

/* The shortcut of a rename blocked on a resource in its last cycle (disp_wait 1), for queue head
 * q: 1 when the check that stopped it (the blk_* memo, for this head) would stop it again for the
 * same reason (blk_stop), 0 when it may not (check them all at once), -1 when there is no memo for
 * this head (check them the slow way). Between two rename cycles nothing but rename takes a
 * resource, except link nodes (a load waiting for a store's data takes one at issue): the
 * resources checked before the noted one, enough then, are enough now unless they are the links
 * (checked again), so the first short one is still the noted one while it stays short. A squash
 * (which empties the queue and may refetch the same flow) or a filter change drops the memo; the
 * flow comparison only guards against a head changed some other way. */
static inline int blk_still(const ooo_model *m, const ooo_fq *q) {
  const ooo_state *st = m->st;
  if (!st->blk_lane || st->blk_fid != q->fid) return -1;
  uint32_t lane = st->blk_lane - 1u;
  if (res_free(m, lane) >= st->blk_need) return 0;
  return lane <= OOO_RES_UNDO || st->link_avail >= st->blk_links; /* (links: first in check order) */
}

/* The free amount of every dispatch resource (OOO_RES_* lanes), taken at the start of a rename
 * cycle and kept up to date as instructions are renamed (nothing else takes resources then). */
typedef struct oo_free {
  oo_v4 v0, v1, v2;
  bool ok;
  bool blocked;     /* rename was blocked on a resource in its last cycle (see check_resources) */
} oo_free;

/* Lane vectors of a plan's needs, read in place (needv is only 4-byte aligned). */
typedef int32_t oo_v4u __attribute__((vector_size(16), aligned(4)));

static inline oo_v4 need_v(const ooo_phdr *p, int k) { return *(const oo_v4u *)&p->needv[4 * k]; }

static void free_take(const ooo_model *m, oo_free *f) {
  const ooo_state *st = m->st;
  const ooo_core_config *c = &m->cfg.core;
  /* lanes as in plan_counts (links: see check_resources) */
  f->v0 = (oo_v4){(int32_t)(c->rob - st->rob_slots),
                  (int32_t)((uint64_t)m->uop_mask + 1 - (st->uop_tail - st->uop_head)), (int32_t)st->link_avail,
                  (int32_t)((uint64_t)m->undo_mask + 1 - (st->undo_tail - st->undo_head))};
  f->v1 = (oo_v4){(int32_t)(m->sched_cap[0] - st->sched_used[0]), (int32_t)(m->sched_cap[1] - st->sched_used[1]),
                  (int32_t)(m->sched_cap[2] - st->sched_used[2]), (int32_t)(c->lq - (st->lq_tail - st->lq_head))};
  f->v2 = (oo_v4){(int32_t)(c->sq - (st->sq_tail - st->sq_head)), (int32_t)st->int_free, (int32_t)st->vec_free, 0};
  f->ok = true;
}

/* The stop of a plan whose lanes' comparison with the free amounts failed (g0..g2: need > free,
 * per lane) or whose links do not fit, named from those lanes: the first short one in check
 * order (the lanes' order; the links count as the ROB lane OOO_RES_LINKS), noted as
 * check_resources_slow notes it. For the copy without bindings, which needs no flow or resource
 * for the stall record (~40 host instructions less than the slow path, which ran at nearly every
 * rename cycle of a run bound by a full scheduler). */
static int check_resources_lanes(ooo_model *restrict m, const ooo_phdr *p, oo_v4 g0, oo_v4 g1, oo_v4 g2) {
  static const uint8_t lane_stop[OOO_NRES] = {
      OB_ROB_FULL, OB_ROB_FULL, OB_ROB_FULL, OB_ROB_FULL, OB_SCHED_FULL, OB_SCHED_FULL,
      OB_SCHED_FULL, OB_LQ_FULL, OB_SQ_FULL, OB_PRF_FULL, OB_PRF_FULL, OB_NONE};
  _Static_assert(OOO_RES_SCHED == 4 && OOO_NPOOL == 3 && OOO_RES_LQ == 7 && OOO_RES_SQ == 8 && OOO_RES_INT == 9 &&
                     OOO_RES_VEC == 10 && OOO_NRES == 12,
                 "lane_stop: the lanes in check order");
  ooo_state *st = m->st;
  /* one bit per lane (lane k: bit k) */
  oo_v4 b = (g0 & (oo_v4){1, 2, 4, 8}) | (g1 & (oo_v4){16, 32, 64, 128}) | (g2 & (oo_v4){256, 512, 1024, 2048});
  int32_t bl[4];
  memcpy(bl, &b, sizeof bl);
  uint32_t mask = (uint32_t)(bl[0] | bl[1] | bl[2] | bl[3]);
  mask |= (uint32_t)(st->link_avail < p->max_links) << OOO_RES_LINKS;
  uint32_t lane = (uint32_t)__builtin_ctz(mask); /* (not 0: the comparison failed) */
  int stop = lane_stop[lane];
  st->blk_lane = (uint8_t)(lane + 1);
  st->blk_stop = (uint8_t)stop;
  st->blk_need = lane == OOO_RES_LINKS ? p->max_links : (uint32_t)p->needv[lane];
  st->blk_links = p->max_links;
  return stop;
}

/* Why the instruction cannot be dispatched now (OB_NONE if it can, and then its resources are
 * taken from f: the caller renames it): all resources compared at once, the links too by a
 * lower bound (their free count at the cycle's first check less max_links per rename since:
 * nothing but rename takes links during its cycle, and a rename at most max_links), and when
 * that fails the links exactly as a scalar; the slow path names the first short one in check
 * order (without bindings, unless OOO_NO_LEAN (`lean` false): named from the lanes). */
static inline int check_resources(ooo_model *restrict m, oo_free *f, const ooo_phdr *p, uint32_t *rid, uint64_t *by,
                                  const bool binds, bool lean) {
  if (!f->ok) {
    /* blocked last cycle: most likely still (a memory-bound core waits many cycles), and the
     * slow path alone gives the same answer (its checks are the lanes' and the links') */
    if (f->blocked) {
      f->blocked = false;
      int stop = check_resources_slow(m, p, rid, by);
      if (stop != OB_NONE) return stop;
    }
    free_take(m, f);
  }
  /* what would be left: a lane short (need > free) goes negative (small counts: no overflow) */
  oo_v4 l0 = f->v0 - need_v(p, 0), l1 = f->v1 - need_v(p, 1), l2 = f->v2 - need_v(p, 2);
  oo_v4 neg = l0 | l1 | l2;
#if defined(__SSE2__)
  bool fits = !_mm_movemask_ps(_mm_castsi128_ps((__m128i)neg));
#else
  uint64_t w[2];
  memcpy(w, &neg, sizeof w);
  bool fits = !((w[0] | w[1]) & 0x8000000080000000ULL);
#endif
  if (__builtin_expect(!fits, 0)) {
    /* one short, or the links' bound: the lanes without it, the links exactly (as a scalar) */
    const oo_v4 z = {0, 0, 0, 0};
    oo_v4 g0 = (l0 < z) & (oo_v4){-1, -1, 0, -1}, g1 = l1 < z, g2 = l2 < z; /* need > free */
    oo_v4 gt = g0 | g1 | g2;
    uint64_t wg[2];
    memcpy(wg, &gt, sizeof wg);
    if (wg[0] | wg[1] || p->max_links > m->st->link_avail) {
      if (!binds && lean) return check_resources_lanes(m, p, g0, g1, g2);
      return check_resources_slow(m, p, rid, by);
    }
  }
  f->v0 = l0; /* taken */
  f->v1 = l1;
  f->v2 = l2;
  return OB_NONE;
}

/* Dedupe list of the producers of one micro-op. */
typedef struct srcset {
  uint32_t prod[24];
  uint32_t n;
} srcset;

/* Micro-op cons waits for producer prod (once per producer). */
static inline void dep_on(ooo_model *restrict m, srcset *ss, uint32_t prod, uint32_t cons) {
  for (uint32_t i = 0; i < ss->n; i++)
    if (ss->prod[i] == prod) return;
  if (ss->n < WI_ARRAY_LEN(ss->prod)) ss->prod[ss->n++] = prod;
  ooo_state *st = m->st;
  ooo_uop *restrict uops = m->uops;
  uint32_t n = st->link_free;
  ooo_link *l = &m->links[n];
  st->link_free = l->next;
  st->link_avail--;
  l->cons = cons;
  l->cons_seq = uops[cons].seq;
  l->next = uops[prod].dep_head;
  uops[prod].dep_head = n;
  uops[cons].pending++;
}

/* Micro-op cons reads registers regs: wait for their producers still in flight. */
static inline void dep_regs(ooo_model *restrict m, srcset *ss, regset_t regs, uint32_t cons) {
  const ooo_uop *restrict uops = m->uops;
  while (regs) {
    int r = __builtin_ctzll(regs);
    regs &= regs - 1;
    const ooo_map *e = &m->map[r];
    if (!e->seq) continue;
    const ooo_uop *p = (const ooo_uop *)((const char *)uops + e->off); /* (&uops[e->slot]) */
    if (p->seq != e->seq || p->state == US_DONE) continue;
    dep_on(m, ss, e->slot, cons);
  }
}

static inline uint32_t bind_port(ooo_state *restrict st, uint32_t mask) {
  uint32_t best = (uint32_t)__builtin_ctz(mask);
  if (mask & (mask - 1)) { /* the least loaded allowed port, lowest number on ties */
    uint32_t bq = st->port_queued[best];
    for (uint32_t b = mask & (mask - 1); b; b &= b - 1) {
      uint32_t p = (uint32_t)__builtin_ctz(b), qp = st->port_queued[p];
      bool lt = qp < bq; /* selects, not a branch: queue lengths are unpredictable */
      best = lt ? p : best;
      bq = lt ? qp : bq;
    }
  }
  st->port_queued[best]++;
  st->port_key[best] += 16;
  return best;
}

#if defined(__SSE2__)
/* bind_port's choice with m->port_vec for the ports whose lanes in vnot are 0 (the others'
 * are 0x7fff, above any key: queues < 2047): the least key (queue length << 4 | port, so the
 * lowest port on ties) in a few vector steps instead of a walk (~10 host instructions fewer for
 * golden_cove's 5 ALU or 3 load ports). */
static inline uint32_t bind_port_v(ooo_state *restrict st, const uint16_t *vnot) {
  _Static_assert(OOO_VPORTS == 16, "bind_port_v: two vectors of 8 lanes");
  __m128i k0 = _mm_or_si128(_mm_load_si128((const __m128i *)&st->port_key[0]), _mm_load_si128((const __m128i *)&vnot[0]));
  __m128i k1 = _mm_or_si128(_mm_load_si128((const __m128i *)&st->port_key[8]), _mm_load_si128((const __m128i *)&vnot[8]));
  __m128i k = _mm_min_epi16(k0, k1);
  k = _mm_min_epi16(k, _mm_shuffle_epi32(k, _MM_SHUFFLE(1, 0, 3, 2)));
  k = _mm_min_epi16(k, _mm_shufflelo_epi16(k, _MM_SHUFFLE(1, 0, 3, 2)));
  k = _mm_min_epi16(k, _mm_srli_epi32(k, 16));
  size_t best = (size_t)(uint32_t)_mm_cvtsi128_si32(k) & 15;
  st->port_queued[best]++;
  st->port_key[best] += 16;
  return (uint32_t)best;
}
#endif

/* bind_port for a prebuilt computation micro-op: more than two ports with bind_port_v (x->vec),
 * else the same choice from its port list, walked from the highest port down without a loop (a
 * jump into the unrolled steps), so that on ties the lowest port, compared last with <=, wins. */
static inline uint32_t bind_port_x(ooo_state *restrict st, const ooo_ximg *x) {
#if defined(__SSE2__)
  if (__builtin_expect(x->vec, 1)) return bind_port_v(st, x->vnot);
#endif
  uint32_t n = x->np;
  if (__builtin_expect(n == 0, 0)) return bind_port(st, x->ports);
  const uint8_t *pl = x->plist;
  const uint32_t *pq = st->port_queued;
  uint32_t best = pl[n - 1], bq = pq[best];
#define OOO_BP_STEP(i)                                                                                            \
  do {                                                                                                             \
    uint32_t p_ = pl[i], q_ = pq[p_];                                                                              \
    bool le_ = q_ <= bq; /* selects, not a branch: queue lengths are unpredictable */                           \
    best = le_ ? p_ : best;                                                                                        \
    bq = le_ ? q_ : bq;                                                                                            \
  } while (0)
  _Static_assert(OOO_XPORTS == 8, "bind_port_x: steps");
  switch (n) {
  case 8: OOO_BP_STEP(6); __attribute__((fallthrough));
  case 7: OOO_BP_STEP(5); __attribute__((fallthrough));
  case 6: OOO_BP_STEP(4); __attribute__((fallthrough));
  case 5: OOO_BP_STEP(3); __attribute__((fallthrough));
  case 4: OOO_BP_STEP(2); __attribute__((fallthrough));
  case 3: OOO_BP_STEP(1); __attribute__((fallthrough));
  case 2: OOO_BP_STEP(0); __attribute__((fallthrough));
  default: break;
  }
#undef OOO_BP_STEP
  st->port_queued[best]++;
  st->port_key[best] += 16;
  return best;
}

/* A new micro-op at the tail of the ring (state US_WAIT, no sources yet). */
static inline uint32_t new_uop(ooo_model *restrict m, uint32_t robidx, int kind, uint32_t ports, const uint16_t *vnot,
                               uint32_t lat, uint32_t occ, uint32_t cls, uint32_t idx, uint64_t now) {
  ooo_state *st = m->st;
  /* every state word read before the micro-op's stores (which the compiler cannot tell apart
   * from the state) */
  uint64_t ut = st->uop_tail, seq = st->uop_seq + 1;
  uint32_t pl = m->pool_of[kind], used = st->sched_used[pl];
  const bool binds = m->binds;
  /* (the entry's number only with bindings: see sched_release) */
  uint16_t sched_id = binds ? m->sched_free[pl][m->sched_cap[pl] - used - 1] : 0;
#if defined(__SSE2__)
  uint32_t port = __builtin_expect(vnot != NULL, 1) ? bind_port_v(st, vnot) : bind_port(st, ports);
#else
  (void)vnot;
  uint32_t port = bind_port(st, ports);
#endif
  st->uop_tail = ut + 1;
  st->uop_seq = seq;
  st->sched_used[pl] = used + 1;
  uint32_t slot = (uint32_t)(ut & m->uop_mask);
  ooo_uop *u = &m->uops[slot];
  u->seq = seq;
  u->rob = robidx;
  u->dep_head = OOO_NIL;
  u->lat = (uint16_t)(lat > 65535 ? 65535 : lat);
  u->occ = (uint16_t)(occ > 65535 ? 65535 : occ);
  /* kind, port, state, pending, cls, pool, idx, bind_kind | the rest zero */
  u->small[0] = (uint64_t)(uint32_t)kind | (uint64_t)port << 8 | (uint64_t)US_WAIT << 16 | (uint64_t)cls << 32 |
                (uint64_t)pl << 40 | (uint64_t)idx << 48;
  u->small[1] = 0;
  if (binds) {
    u->ready_cycle = now + 1;
    u->ready_by = OOO_NIL;
    u->bind_by = OOO_FID_NONE;
    u->fwd_fid = OOO_FID_NONE;
  }
  u->sched_id = sched_id;
  return slot;
}

/* The latency modification of fetch-queue head q on its result micro-op u (MOD_LAT; out of
 * line: rare). A load's is the time after the data arrives (lat_set: instead of the memory). */
static __attribute__((noinline)) void apply_lat_mod(const ooo_fq *q, ooo_uop *u) {
  if (u->kind == OOO_UOP_LOAD) {
    if (q->lat_set >= 0) {
      u->pmem = 2;
      u->lat = (uint16_t)(q->lat_set > 65535 ? 65535 : q->lat_set);
    } else {
      u->lat = (uint16_t)(q->lat_add > 0 ? (q->lat_add > 65535 ? 65535 : q->lat_add) : 0);
    }
    return;
  }
  int64_t lat = q->lat_set >= 0 ? q->lat_set : (int64_t)u->lat;
  lat += q->lat_add;
  if (lat < 0) lat = 0;
  if (lat > 65535) lat = 65535;
  u->lat = (uint16_t)lat;
}

/* Load i of plan pm (micro-op index i of its instruction) and its LQ entry; ld[i] receives its
 * slot. sq_at: the SQ tail before the instruction's stores; mdp: marked by the load-wait table. */
static inline __attribute__((always_inline)) void dispatch_load(ooo_model *restrict m, const ooo_fq *q,
                                                               const ooo_phdr *p, const plan *pm, uint32_t ri,
                                                               uint32_t cls, uint64_t now, uint32_t *ld, uint32_t i,
                                                               uint64_t sq_at, bool mdp, bool wrong) {
  ooo_state *st = m->st;
  const ooo_config *c = &m->cfg;
  ooo_uop *restrict uops = m->uops;
  uint64_t a = pm->ld_addr[i], e = pm->ld_end[i];
  uint32_t occ = 1;
  if (p->rep && e > a) occ = (uint32_t)((e - a + c->core.rep_bytes_per_cycle - 1) / c->core.rep_bytes_per_cycle);
  uint32_t s = new_uop(m, ri, OOO_UOP_LOAD, c->ports.load, m->vnot_load, 0, occ, cls, i, now);
  ooo_uop *u = &uops[s];
  u->addr = a;
  u->end = e;
  u->sq_at = sq_at;
  u->mdp = mdp;
  if (p->pmem) u->pmem = 1;
  u->dep_sq = !wrong && e > a ? find_dep_store(m, a, e) : UINT64_MAX;
  if (p->addr) {
    srcset ss;
    ss.n = 0;
    dep_regs(m, &ss, p->addr, s);
  }
  if (m->binds) m->lq[st->lq_tail & m->lq_mask] = q->fid;
  st->lq_tail++;
  ld[i] = s;
  if (!u->pending) make_ready(m, s);
}

/* The load micro-ops of fetch-queue head q (the first of its instruction), their LQ entries;
 * ld receives their slots. A single load (the common case) is renamed without a loop: the
 * compiler would hoist the loop's invariants into registers and spill them, which costs more
 * than one pass through the body. */
static __attribute__((noinline)) void dispatch_loads(ooo_model *restrict m, const ooo_fq *q,
                                                     const ooo_phdr *p, const plan *pm, uint32_t ri,
                                                     uint32_t cls, uint64_t now, uint32_t *ld) {
  ooo_state *st = m->st;
  const ooo_config *c = &m->cfg;
  bool wrong = (q->flags & FQ_WRONG) != 0;
  uint64_t sq_at = st->sq_tail;
  bool mdp = false;
  if (!wrong) {
    if (c->core.mem_dep == MDP_CONSERVATIVE) mdp = true;
    else if (c->core.mem_dep == MDP_PREDICT) {
      if (now - st->mdp_epoch >= c->core.mdp_reset) {
        memset(m->mdp, 0, (size_t)1 << c->core.mdp_bits);
        st->mdp_epoch = now - (now - st->mdp_epoch) % c->core.mdp_reset;
      }
      mdp = m->mdp[mdp_index(m, q->pc)] != 0;
    }
  }
  if (p->n_ld == 1) dispatch_load(m, q, p, pm, ri, cls, now, ld, 0, sq_at, mdp, wrong);
  else
    for (uint32_t i = 0; i < p->n_ld; i++) dispatch_load(m, q, p, pm, ri, cls, now, ld, i, sq_at, mdp, wrong);
}

/* Store i of plan pm: its address and data micro-ops (indices idx, idx + 1) and its SQ entry;
 * the data waits for the last computation micro-op `prev`, or without one for the sources and
 * loads ld. */
static inline __attribute__((always_inline)) void dispatch_store(ooo_model *restrict m, const ooo_fq *q,
                                                                const ooo_phdr *p, const plan *pm, uint32_t ri,
                                                                uint32_t cls, uint32_t idx, uint32_t prev,
                                                                const uint32_t *ld, uint64_t now, uint32_t i,
                                                                bool wrong) {
  ooo_state *st = m->st;
  const ooo_config *c = &m->cfg;
  const ooo_tmpl *t = p->t;
  ooo_uop *restrict uops = m->uops;
  uint64_t spos = st->sq_tail++;
  uint32_t si = (uint32_t)(spos & m->sq_mask);
  uint32_t sa = new_uop(m, ri, OOO_UOP_STA, c->ports.sta, NULL, c->core.agu_latency, 1, cls, idx, now);
  srcset ss;
  ss.n = 0;
  dep_regs(m, &ss, p->addr, sa);
  uint32_t sd = new_uop(m, ri, OOO_UOP_STD, c->ports.std, NULL, c->core.std_latency, 1, cls, idx + 1, now);
  ss.n = 0;
  if (prev != OOO_NIL) {
    dep_on(m, &ss, prev, sd);
  } else {
    dep_regs(m, &ss, p->src, sd);
    for (uint32_t k = 0; k < p->n_ld; k++) dep_on(m, &ss, ld[k], sd);
  }
  uops[sa].sq = si;
  uops[sd].sq = si;
  if (!uops[sa].pending) make_ready(m, sa);
  if (!uops[sd].pending) make_ready(m, sd);
  ooo_sq *s = &m->sq[si];
  s->viol_seq = 0;
  s->drain_next = 0;
  s->retry = 0;
  s->viol_slot = 0;
  s->parts = 0;
  s->std_done = 0;
  s->filt = 0;
  s->addr = pm->st_addr[i];
  s->size = pm->st_size[i];
  s->fid = q->fid;
  s->pc = q->pc;
  s->sid = t->sid;
  s->sta_cycle = UINT64_MAX;
  s->done = UINT64_MAX;
  s->std_seq = uops[sd].seq;
  s->std_slot = sd;
  s->state = SQS_INFLIGHT;
  s->wrong_path = wrong;
  s->pmem = p->pmem;
  if (!wrong && s->size) {
    if (s->size <= 64) {
      sfilt_enter(m, s->addr, s->size, spos);
      s->filt = 1;
    } else {
      st->big_stores++;
      s->filt = 2;
    }
  }
}

/* The store micro-ops (address, data) and SQ entries of fetch-queue head q (micro-op indices
 * from idx); a single store without a loop, as dispatch_loads. */
static __attribute__((noinline)) void dispatch_stores(ooo_model *restrict m, const ooo_fq *q,
                                                      const ooo_phdr *p, const plan *pm, uint32_t ri,
                                                      uint32_t cls, uint32_t idx, uint32_t prev,
                                                      const uint32_t *ld, uint64_t now) {
  bool wrong = (q->flags & FQ_WRONG) != 0;
  if (p->n_st == 1) dispatch_store(m, q, p, pm, ri, cls, idx, prev, ld, now, 0, wrong);
  else
    for (uint32_t i = 0; i < p->n_st; i++) dispatch_store(m, q, p, pm, ri, cls, idx + 2 * i, prev, ld, now, i, wrong);
}

/* The computation micro-ops of plan p built from the configuration by new_uop, the reference
 * for the prebuilt words of dispatch_one (OOO_NO_LEAN); the first waits for the sources and the
 * loads ld. Returns the last one's slot (OOO_NIL if none). */
static __attribute__((noinline)) uint32_t dispatch_exec_ref(ooo_model *restrict m, const ooo_phdr *p, bool rep,
                                                            uint32_t n_ld, const uint32_t *ld, uint32_t ri,
                                                            uint32_t idx, uint64_t now) {
  const ooo_tmpl *t = p->t;
  ooo_uop *restrict uops = m->uops;
  uint32_t prev = OOO_NIL;
  for (uint32_t k = 0; k < p->n_exec; k++) {
    const ooo_uop_spec *sp = &t->exec[k];
    uint32_t lat = sp->latency + (k == 0 && rep ? m->cfg.core.rep_startup : 0);
    uint32_t s = new_uop(m, ri, OOO_UOP_EXEC, sp->ports, NULL, lat, sp->occupancy, t->cls, idx++, now);
    srcset ss;
    ss.n = 0;
    if (k == 0) {
      dep_regs(m, &ss, p->src, s);
      for (uint32_t i = 0; i < n_ld; i++) dep_on(m, &ss, ld[i], s);
      if (!uops[s].pending) make_ready(m, s);
    } else {
      dep_on(m, &ss, prev, s);
    }
    prev = s;
  }
  if (prev != OOO_NIL) uops[prev].br = t->br != 0; /* the last one resolves a branch */
  return prev;
}

/* The dispatch observer event of fetch-queue head q, renamed into ROB entry r (index ri) by
 * plan p (out of line: its event record would take stack and registers from every rename). */
static __attribute__((noinline)) void emit_dispatch(ooo_model *restrict m, const ooo_fq *q, const ooo_phdr *p,
                                                    const ooo_rob *r, uint32_t ri, const ooo_bind *bind,
                                                    uint64_t now) {
  const ooo_state *st = m->st;
  const ooo_uop *u0 = &m->uops[r->uop0 & m->uop_mask];
  ooo_ev e = oo_ev_make(now, q->fid, q->pc, r->sid, OOO_RID_ROB + ri, (q->flags & FQ_WRONG) != 0);
  e.rid2 = p->nu ? OOO_RID_SCHED + u0->pool * OOO_RID_POOL_STRIDE + u0->sched_id : OOO_RID_NONE;
  e.slots = (uint8_t)p->slots;
  e.n_lq = (uint8_t)p->n_ld;
  e.n_sq = (uint8_t)p->n_st;
  e.rid_lq = p->n_ld ? OOO_RID_LQ + (uint32_t)((st->lq_tail - p->n_ld) & m->lq_mask) : OOO_RID_NONE;
  e.rid_sq = p->n_st ? OOO_RID_SQ + (uint32_t)(r->sq0 & m->sq_mask) : OOO_RID_NONE;
  e.by_fid = bind ? bind->by_fid : OOO_FID_NONE;
  e.extra = bind ? bind->kind : OB_NONE;
  m->obs->dispatch(m->obs_ctx, &e);
}

/* Rename and dispatch fetch-queue head q (resources were checked). `lean` is a constant at each
 * call, so the compiler builds lean copies: bit 0 (OOO_LEAN_STATIC) p is a template's static
 * plan (no loads, stores, modifications, rep start-up or nop), bit 1 (OOO_LEAN_ONE) p has
 * exactly one computation micro-op (so no nop); both: ooo_phdr.simple. OOO_LEAN_REF alone: the
 * reference path of OOO_NO_LEAN (micro-ops and ROB entry built field by field). Bit 3
 * (OOO_LEAN_NOBIND): the model keeps no bindings (OOO_NO_BINDINGS, so no observer either). */
enum { OOO_LEAN_STATIC = 1, OOO_LEAN_ONE = 2, OOO_LEAN_REF = 4, OOO_LEAN_NOBIND = 8 };
static inline __attribute__((always_inline)) void dispatch_one(ooo_model *restrict m, ooo_fq *q, const ooo_phdr *p,
                                                              const plan *pm, uint64_t now, const ooo_bind *bind,
                                                              const int lean) {
  ooo_state *st = m->st;
  const ooo_config *c = &m->cfg;
  const ooo_tmpl *t = p->t;
  ooo_uop *restrict uops = m->uops;
  bool wrong = (q->flags & FQ_WRONG) != 0;
  const bool stat = (lean & OOO_LEAN_STATIC) != 0, one = (lean & OOO_LEAN_ONE) != 0;
  const uint32_t n_ld = stat ? 0 : p->n_ld, n_st = stat ? 0 : p->n_st;
  const uint32_t nu = stat && one ? 1 : p->nu;
  const uint8_t mod = stat ? 0 : q->mod;
  const bool rep = !stat && p->rep, nop = !stat && !one && p->nop;
  const bool ref = (lean & OOO_LEAN_REF) != 0;
  const bool binds = !(lean & OOO_LEAN_NOBIND); /* (an observer needs bindings) */
  uint64_t pos = st->rob_tail++;
  uint32_t ri = (uint32_t)(pos & m->rob_mask);
  ooo_rob *r = &m->rob[ri];
  r->fid = q->fid;
  r->pc = q->pc;
  r->uop0 = st->uop_tail;
  r->undo0 = st->undo_tail;
  r->sq0 = st->sq_tail;
  /* Fields that only commit, a mispredicted branch's or a clearing load's recovery (correct path
   * only) and observers read: a wrong-path instruction never commits, so without observers its
   * entry keeps stale ones (2/3 of the instructions renamed after mispredictions). */
  if (!wrong || binds) {
    r->win = q->win;
    r->fetch_cycle = q->fetch_cycle;
    r->dispatch_cycle = now;
    r->done_cycle = 0;
    r->bck_at = q->bck_at;
    r->sid = t->sid;
    r->bck = q->bck;
  }
  /* the template's part from the plan, the fetch-queue bits (wrong, mispredicted, gate) in place */
  _Static_assert(FQ_WRONG == 1 && FQ_MISPRED == 2 && FQ_GATE == 4 && RF_WRONG == 1 && RF_MISPRED == 2 && RF_GATE == 4,
                 "fq -> rob flags");
  if (!ref) {
    uint64_t rw0 = p->rob_img[0] | (q->flags & (FQ_WRONG | FQ_MISPRED | FQ_GATE));
    memcpy(&r->flags, &rw0, 8);                       /* flags, n_uops .. n_undo */
    memcpy((char *)&r->flags + 8, &p->rob_img[1], 8); /* n_int, n_vec, br, miss, last_uop */
  } else {
    uint32_t qf = q->flags;
    r->flags = (uint16_t)(p->rf | (qf & FQ_WRONG) | (qf & FQ_MISPRED) | (qf & FQ_GATE));
    memcpy(&r->n_uops, &p->rob_counts, 8); /* n_uops, left, slots, n_lq, n_sq, n_undo, n_int, n_vec */
    r->br = t->br;
    r->miss = 0;
    r->last_uop = OOO_NIL;
  }
  if (binds && bind) r->bind_dispatch = *bind;
  st->rob_slots += p->slots;
  st->int_free -= p->n_int;
  st->vec_free -= p->n_vec;
  const uint32_t cls = t->cls;
  uint32_t idx;

  /* Loads (out of line: most instructions have none, and the rename path keeps its registers). */
  uint32_t ld[OOO_MAX_LD];
  if (n_ld) dispatch_loads(m, q, p, pm, ri, cls, now, ld);
  idx = n_ld;
  /* Computation chain: new_uop from the template's prebuilt words, with the ring position,
   * sequence number and scheduler stack in registers (written back before the stores). */
  uint32_t prev = OOO_NIL;
  uint64_t prev_seq = 0; /* its sequence number (lean copies) */
  const uint32_t n_exec = one ? 1 : p->n_exec;
  if (ref) {
    prev = dispatch_exec_ref(m, p, rep, n_ld, ld, ri, idx, now);
    idx += n_exec;
  } else if (n_exec) {
    const ooo_ximg *x = t->ximg;
    const uint32_t xpl = m->pool_of[OOO_UOP_EXEC], umask = m->uop_mask;
    const uint16_t *sfree = m->sched_free[xpl];
    uint32_t top = m->sched_cap[xpl] - st->sched_used[xpl]; /* free entries of the pool */
    uint64_t ut = st->uop_tail, seq = st->uop_seq;
    const uint64_t idx_add = (uint64_t)idx << 48;
    for (uint32_t k = 0; k < n_exec; k++) {
      uint32_t s = (uint32_t)(ut++ & umask);
      ooo_uop *u = &uops[s];
      uint32_t port = bind_port_x(st, &x[k]);
      u->seq = ++seq;
      u->rob = ri;
      u->dep_head = OOO_NIL;
      memcpy(&u->lat, &x[k].latocc, 4); /* lat, occ */
      if (binds) u->sched_id = sfree[--top]; /* (see sched_release) */
      /* all but the first wait for exactly their predecessor: pending 1 */
      u->small[0] = x[k].small0 + idx_add + ((uint64_t)port << 8) + ((uint64_t)(k != 0) << 24);
      u->small[1] = x[k].small1;
      if (binds) {
        u->ready_cycle = now + 1;
        u->ready_by = OOO_NIL;
        u->bind_by = OOO_FID_NONE;
        u->fwd_fid = OOO_FID_NONE;
      }
      if (k == 0) {
        if (rep) {
          uint32_t lat = t->exec[0].latency + c->core.rep_startup;
          u->lat = (uint16_t)(lat > 65535 ? 65535 : lat);
        }
        srcset ss;
        ss.n = 0;
        dep_regs(m, &ss, p->src, s);
        for (uint32_t i = 0; i < n_ld; i++) dep_on(m, &ss, ld[i], s);
        /* only the first can be ready: the others wait for their predecessor (make_ready is
         * independent of the latency change below) */
        if (!u->pending) make_ready(m, s);
      } else {
        link_add(m, prev, s);
      }
      prev = s;
    }
    idx += n_exec;
    prev_seq = seq;
    st->uop_tail = ut;
    st->uop_seq = seq;
    st->sched_used[xpl] += n_exec;
  }
  uint32_t result = prev != OOO_NIL ? prev : (n_ld ? ld[n_ld - 1] : OOO_NIL);
  if (result != OOO_NIL) {
    ooo_uop *u = &uops[result];
    if (ref || prev == OOO_NIL) u->last = 1; /* (the prebuilt words mark the last computation one) */
    if (mod & MOD_LAT) apply_lat_mod(q, u);
  }
  /* Stores (out of line, as the loads). */
  if (n_st) dispatch_stores(m, q, p, pm, ri, cls, idx, prev, ld, now);
  /* Rename destinations. */
  if (p->dst) {
    ooo_map alias = {0, 0, 0};
    bool move = !one && (t->flags & TF_MOVE) && !nop; /* (moves have no micro-op) */
    if (move) alias = m->map[__builtin_ctzll(p->src)];
    ooo_map now_map = {0, 0, 0};
    if (result != OOO_NIL) {
      /* (the lean copies have the last computation micro-op's number in a register) */
      now_map.seq = !ref && prev != OOO_NIL ? prev_seq : uops[result].seq;
      now_map.slot = result;
      now_map.off = result * (uint32_t)sizeof(ooo_uop);
    } else if (move) {
      now_map = alias;
    }
    /* the new mapping as one 16-byte store per register (seq, slot, off) */
    _Static_assert(sizeof(ooo_map) == 16 && offsetof(ooo_map, slot) == 8 && offsetof(ooo_map, off) == 12,
                   "ooo_map: two words");
    const oo_v2u64 nm = {now_map.seq, now_map.slot | (uint64_t)now_map.off << 32};
    regset_t d = p->dst;
    uint64_t ut = st->undo_tail;
    while (d) {
      int reg = __builtin_ctzll(d);
      d &= d - 1;
      ooo_undo *un = &m->undo[ut++ & m->undo_mask];
      un->old = m->map[reg];
      un->reg = (uint32_t)reg;
      memcpy(&m->map[reg], &nm, sizeof nm);
    }
    st->undo_tail = ut;
  }
  if (p->rf & RF_SERIAL) st->serial_fid = q->fid; /* (r->flags: the plan's rf and fetch-queue bits) */
  _Static_assert(FQ_WRONG == 1, "dispatched[]: wrong-path index");
  const uint32_t wi = q->flags & FQ_WRONG; /* (read again: cheaper than keeping `wrong`) */
  st->stats.dispatched[wi]++;
  if (!wi) st->recovering = 0;
  if (binds && m->obs && m->obs->dispatch) emit_dispatch(m, q, p, r, ri, bind, now);
  if (!nu) { /* eliminated, nop: complete at rename (a nop one cycle later) */
    r->flags |= RF_DONE | RF_EXECUTED;
    r->done_cycle = now + (nop ? 1 : 0);
    st->stats.executed[wrong ? 1 : 0]++;
    if (binds && m->obs && m->obs->complete) emit_complete(m, r, NULL, r->done_cycle);
    r->flags &= (uint16_t)~RF_MISPRED; /* cannot happen (a nop implies a perfect prediction) */
  }
}

/* dispatch_one's reference copy, out of line (tests only: keeps oo_dispatch's code small). */
static __attribute__((noinline, cold)) void dispatch_one_ref(ooo_model *restrict m, ooo_fq *q, const ooo_phdr *p,
                                                             const plan *pm, uint64_t now, const ooo_bind *bind) {
  if (m->binds) dispatch_one(m, q, p, pm, now, bind, OOO_LEAN_REF);
  else dispatch_one(m, q, p, pm, now, bind, OOO_LEAN_REF | OOO_LEAN_NOBIND);
}

/* Top-down category for unfilled slots given why rename stopped (in line in oo_dispatch, which
 * asks every cycle it leaves slots unfilled). */
static inline int slot_category(ooo_model *restrict m, int stop, uint32_t used) {
  ooo_state *st = m->st;
  switch (stop) {
  case OB_FRONTEND:
  case OB_NONE:
    if (st->recovering) return st->recovering == 2 ? OOO_SLOT_BAD_CLEAR : OOO_SLOT_BAD_BRANCH;
    if (st->rob_slots >= m->cfg.core.rob) break; /* the back-end could not take anything anyway */
    return used ? OOO_SLOT_FE_BANDWIDTH : OOO_SLOT_FE_LATENCY;
  default: break;
  }
  /* Memory bound: the oldest instruction waits for a load that missed L1, or the store queue is
   * full of committed stores waiting for their writes (store bound). Else core bound. */
  if (stop == OB_SQ_FULL && st->sq_head < st->sq_commit) return OOO_SLOT_BE_MEMORY;
  if (st->rob_head < st->rob_tail) {
    const ooo_rob *h = oo_rob(m, st->rob_head);
    if (!(h->flags & RF_DONE) && (h->flags & RF_LOADMISS)) return OOO_SLOT_BE_MEMORY;
  }
  return OOO_SLOT_BE_CORE;
}

int oo_slot_category(ooo_model *restrict m, int stop, uint32_t used) { return slot_category(m, stop, used); }

/* A rename cycle that renames nothing because of `stop`, accounted as dispatch_cycle's end would
 * account it: the stop, its stall count and every slot unfilled. (The shortcuts that end such a
 * cycle early share it.) */
static inline void rename_lost(ooo_model *restrict m, int stop) {
  ooo_state *st = m->st;
  st->disp_stop = (uint8_t)stop;
  st->stats.dispatch_stall[stop]++;
  st->stats.slots[slot_category(m, stop, 0)] += m->cfg.core.rename_width;
}
void oo_rename_lost(ooo_model *restrict m, int stop) { rename_lost(m, stop); }

/* One rename cycle; `binds` is a constant at each call (oo_dispatch): without bindings the copy
 * keeps no stall record and no dispatch binding, and has no observer to call. */
static inline __attribute__((always_inline)) void dispatch_cycle(ooo_model *restrict m, uint64_t now,
                                                                 const bool binds) {
  ooo_state *st = m->st;
  const int nb = binds ? 0 : OOO_LEAN_NOBIND;
  uint32_t W = m->cfg.core.rename_width;
  uint32_t used = 0;
  int stop = OB_NONE;
  uint32_t rid = OOO_RID_NONE;
  uint64_t by = OOO_FID_NONE;
  const bool lean_ok = !(m->flags & OOO_NO_LEAN);
  /* the accesses of a plan that is not static (unused for a static one, which has none) */
  const plan *pm = (const plan *)m->hp;
  oo_free fr; /* (its amounts are taken at the first check: ok false) */
  fr.ok = false;
  fr.blocked = st->disp_wait == 1 && lean_ok;
  if (!binds && fr.blocked && st->fq_head != st->fq_tail) {
    /* blocked on a resource in the last cycle: if still for the same reason, the cycle renames
     * nothing and ends as the loop below would end it (same stop, disp_wait stays 1; `rid` and
     * `by` only feed the stall record, which this copy does not keep); else the queue head
     * (the one that stopped it: nothing else has renamed since) skips the slow check */
    int still = blk_still(m, oo_fq(m, st->fq_head));
    if (still > 0) {
      rename_lost(m, st->blk_stop);
      return;
    }
    if (still == 0) fr.blocked = false;
  }
  st->disp_wait = 0;
  /* the ROB and micro-op rings are far larger than the host's L1: prefetch (for writing) the
   * entries the next rename cycles fill */
  __builtin_prefetch(oo_rob(m, st->rob_tail + 8), 1);
  __builtin_prefetch(&m->uops[(st->uop_tail + 12) & m->uop_mask], 1);
  __builtin_prefetch((const char *)&m->uops[(st->uop_tail + 12) & m->uop_mask] + 64, 1);
  __builtin_prefetch((const char *)&m->uops[(st->uop_tail + 12) & m->uop_mask] + 128, 1);
  while (used < W) {
    if (st->fq_head == st->fq_tail) {
      stop = OB_FRONTEND;
      st->disp_wait = 3;
      break;
    }
    ooo_fq *q = oo_fq(m, st->fq_head);
    if (q->avail > now) {
      stop = OB_FRONTEND;
      st->disp_wait = 2;
      break;
    }
    const ooo_phdr *pl;
    if (m->hp_valid && m->hp_pos == st->fq_head && m->hp_fid == q->fid) {
      pl = m->hp_h;
    } else {
      const ooo_tmpl *qt = fq_tmpl(m, q);
      /* flags and mod read as one word: no memory accesses, no modifications */
      _Static_assert(offsetof(ooo_fq, mod) == offsetof(ooo_fq, flags) + 1, "ooo_fq: flags, mod");
      uint16_t fm;
      memcpy(&fm, &q->flags, 2);
      if (!(fm & (FQ_MEM | 0xff00))) { /* the template's static plan */
        pl = &qt->sp;
      } else {
        plan *pp = (plan *)m->hp;
        pl = make_plan(m, q, qt, pp);
        m->hp_valid = true;
        m->hp_pos = st->fq_head;
        m->hp_fid = q->fid;
        m->hp_h = pl;
      }
    }
    if (used + pl->slots > W && used) { /* (slots <= W: the first test decides mostly) */
      stop = OB_WIDTH; /* by: the previous instruction, dispatched this cycle */
      break;
    }
    if (st->serial_fid != OOO_FID_NONE) {
      stop = OB_SERIAL;
      by = st->serial_fid;
      st->disp_wait = 1;
      st->blk_lane = 0; /* (not a resource stop: no shortcut next cycle) */
      break;
    }
    if ((pl->rf & RF_SERIAL) && st->rob_head != st->rob_tail) {
      stop = OB_SERIAL;
      by = oo_rob(m, st->rob_head)->fid;
      st->disp_wait = 1;
      st->blk_lane = 0;
      break;
    }
    stop = check_resources(m, &fr, pl, &rid, &by, binds, lean_ok); /* (sets rid, by, blk_* when it stops) */
    if (stop != OB_NONE) {
      st->blk_fid = q->fid;
      if (stop == OB_SCHED_FULL && binds && m->obs)
        by = sched_oldest_fid(m, (rid - OOO_RID_SCHED) / OOO_RID_POOL_STRIDE);
      st->disp_wait = 1;
      break;
    }
    ooo_bind b, *bp = NULL;
    if (binds && m->obs) { /* the dispatch stage's binding constraint */
      memset(&b, 0, sizeof b);
      b.cycle = now;
      if (q->avail >= now) {
        b.kind = OB_FRONTEND;
        b.rid = q->fe_rid;
        b.by_fid = q->fe_by;
      } else if (st->stall.kind) { /* it waited: for the stall in effect */
        b.kind = st->stall.kind;
        b.rid = st->stall.rid;
        b.by_fid = st->stall.by_fid;
      } else { /* (no stall recorded since it arrived: its delivery) */
        b.kind = OB_FRONTEND;
        b.rid = q->fe_rid;
        b.by_fid = q->fe_by;
      }
      bp = &b;
    }
    if (pl->simple) dispatch_one(m, q, pl, pm, now, bp, OOO_LEAN_STATIC | OOO_LEAN_ONE | nb);
    else if (!lean_ok) dispatch_one_ref(m, q, pl, pm, now, bp);
    else if (pl->n_exec == 1) dispatch_one(m, q, pl, pm, now, bp, OOO_LEAN_ONE | nb);
    else dispatch_one(m, q, pl, pm, now, bp, nb);
    m->hp_valid = false;
    st->fq_head++;
    used += pl->slots;
    if (binds) by = q->fid; /* for a width stop: the previous instruction */
  }
  /* the stall record (read by the next instructions' dispatch bindings) */
  if (used >= W) {
    /* all slots filled: a width stop if more is waiting */
    if (binds) {
      if (st->fq_head != st->fq_tail && oo_fq(m, st->fq_head)->avail <= now) {
        /* the binding of whoever waits: the width (all slots used is not a stall) */
        st->stall.kind = OB_WIDTH;
        st->stall.rid = OOO_RID_RENAME;
        st->stall.by_fid = by;
      } else {
        st->stall.kind = OB_NONE; /* nobody waits: any earlier stall is over */
      }
    }
    stop = OB_NONE;
    st->disp_wait = 0;
  } else if (stop == OB_FRONTEND) {
    if (binds) st->stall.kind = OB_NONE; /* nothing available waits: any earlier stall is over */
  } else {
    if (binds) {
      st->stall.kind = (uint8_t)stop;
      st->stall.rid = stop == OB_WIDTH ? OOO_RID_RENAME : rid;
      st->stall.by_fid = by;
    }
    if (stop == OB_WIDTH) st->disp_wait = 0;
  }
  st->disp_stop = (uint8_t)stop;
  if (stop != OB_NONE) st->stats.dispatch_stall[stop]++;
  uint32_t unfilled = W - (used < W ? used : W);
  int cat = OOO_SLOT_FE_LATENCY;
  if (unfilled) {
    cat = slot_category(m, stop, used);
    st->stats.slots[cat] += unfilled;
  }
  if (binds && m->obs && m->obs->slots) {
    ooo_slot_ev e;
    memset(&e, 0, sizeof e);
    e.cycle = now;
    e.n_cycles = 1;
    if (unfilled) e.slots[cat] = (uint8_t)unfilled;
    e.filled = (uint8_t)(used < W ? used : W);
    m->obs->slots(m->obs_ctx, &e);
  }
}

static __attribute__((noinline)) void dispatch_cycle_b(ooo_model *restrict m, uint64_t now) {
  dispatch_cycle(m, now, true);
}
static __attribute__((noinline)) void dispatch_cycle_nb(ooo_model *restrict m, uint64_t now) {
  dispatch_cycle(m, now, false);
}

void oo_dispatch(ooo_model *restrict m, uint64_t now) {
  if (m->binds) {
    dispatch_cycle_b(m, now);
    return;
  }
  /* Nothing for rename from the front end (an empty queue, or its head not delivered yet): the
   * cycle ends here as dispatch_cycle_nb would end it, without its set-up (after a
   * misprediction's squash rename waits for the front end for many cycles). Asked only when the
   * last cycle ended so too (disp_wait 2 or 3; not after a resource stop, disp_wait 1, where
   * dispatch_cycle asks blk_still first), so busy cycles pay one check. */
  ooo_state *st = m->st;
  const uint32_t W = m->cfg.core.rename_width;
  if (st->disp_wait >= 2 && W) {
    uint8_t wait = 0;
    if (st->fq_head == st->fq_tail) wait = 3;
    else if (oo_fq(m, st->fq_head)->avail > now) wait = 2;
    if (wait) {
      st->disp_wait = wait;
      rename_lost(m, OB_FRONTEND);
      return;
    }
  }
  dispatch_cycle_nb(m, now);
}

/* ---- commit ----------------------------------------------------------------------------------------- */

static void emit_commit(ooo_model *restrict m, ooo_rob *r, uint64_t now, const ooo_bind *cb) {
  ooo_commit_ev e;
  memset(&e, 0, sizeof e);
  e.cycle = now;
  e.fid = r->fid;
  e.pc = r->pc;
  e.sid = r->sid;
  e.rob = OOO_RID_ROB + (uint32_t)(r - m->rob);
  e.fetch_cycle = r->fetch_cycle;
  e.dispatch_cycle = r->dispatch_cycle;
  e.complete_cycle = r->done_cycle;
  e.slots = r->slots;
  e.mispredicted = r->bck != OOO_NIL && m->bck[r->bck].mispred;
  e.bind[OOO_STAGE_DISPATCH] = r->bind_dispatch;
  e.bind[OOO_STAGE_COMMIT] = *cb;
  if (r->last_uop != OOO_NIL) {
    /* issue: the root of the operand chain inside the instruction; completion: see completion_uop */
    const ooo_uop *last = &m->uops[r->last_uop], *u = chain_root(m, r, last), *cu = completion_uop(last, u);
    e.bind[OOO_STAGE_COMPLETE].kind = cu->done_kind;
    e.bind[OOO_STAGE_COMPLETE].rid = OOO_RID_PORT + cu->port;
    e.bind[OOO_STAGE_COMPLETE].by_fid = cu->fwd_fid != OOO_FID_NONE ? cu->fwd_fid : r->fid;
    e.bind[OOO_STAGE_COMPLETE].cycle = r->done_cycle;
    e.bind[OOO_STAGE_ISSUE].kind = u->bind_kind;
    e.bind[OOO_STAGE_ISSUE].rid = u->bind_kind == OB_OPERAND ? OOO_RID_NONE : u->bind_rid;
    e.bind[OOO_STAGE_ISSUE].by_fid = u->bind_by;
    e.bind[OOO_STAGE_ISSUE].cycle = u->issue_cycle;
    e.issue_cycle = u->issue_cycle;
  } else {
    e.bind[OOO_STAGE_ISSUE].kind = OB_DISPATCHED;
    e.bind[OOO_STAGE_ISSUE].by_fid = OOO_FID_NONE;
    e.bind[OOO_STAGE_ISSUE].cycle = r->dispatch_cycle;
    e.bind[OOO_STAGE_COMPLETE].kind = OB_EXEC;
    e.bind[OOO_STAGE_COMPLETE].by_fid = r->fid;
    e.bind[OOO_STAGE_COMPLETE].cycle = r->done_cycle;
    e.issue_cycle = r->dispatch_cycle;
  }
  m->obs->commit(m->obs_ctx, &e);
}

void oo_commit(ooo_model *restrict m, uint64_t now) {
  ooo_state *st = m->st;
  const ooo_core_config *c = &m->cfg.core;
  uint32_t n = 0;
  st->commit_stall = OB_NONE;
  /* (most cycles commit nothing: the caller checked the head; the loop checks each next head
   * at its end) */
  ooo_rob *r = oo_rob(m, st->rob_head);
  /* the ROB ring is far larger than the host's L1: fetch the entries the next cycles commit */
  __builtin_prefetch(oo_rob(m, st->rob_head + 8));
  __builtin_prefetch(oo_rob(m, st->rob_head + 12));
  __builtin_prefetch(oo_win(m, st->win_head + 8)); /* correct-path commits walk the window in order */
  for (;;) {
    if (m->obs && m->obs->commit) { /* binding of the commit stage */
      ooo_bind cb;
      memset(&cb, 0, sizeof cb);
      cb.cycle = now;
      if (r->done_cycle + c->commit_latency >= now) {
        cb.kind = OB_COMPLETION;
        cb.by_fid = r->fid;
      } else if (st->last_commit_cycle == now && st->stats.insns) {
        cb.kind = OB_PREV_COMMIT;
        cb.by_fid = st->last_commit_fid;
      } else {
        cb.kind = OB_COMMIT_WIDTH;
        cb.rid = OOO_RID_COMMIT;
        cb.by_fid = st->last_commit_fid;
      }
      emit_commit(m, r, now, &cb);
    }
    st->stats.insns++;
    st->stats.uops += r->n_uops;
    st->stats.slots[OOO_SLOT_RETIRING] += r->slots;
    ooo_sid_stats *ss = m->sid_stats ? &m->sid_stats[r->sid] : NULL;
    if (ss) {
      ss->count++;
      uint64_t since = max64(st->stats.insns > 1 ? st->last_commit_cycle : 0, r->dispatch_cycle);
      ss->head_cycles += now > since ? now - since : 0;
    }
    if (r->flags & RF_BRANCH) {
      st->stats.branches[r->br]++;
      if (r->bck != OOO_NIL) {
        const ooo_bck *b = &m->bck[r->bck];
        if (b->mispred) {
          st->stats.mispredicts[r->br]++;
          if (ss) ss->mispredicts++;
        }
        oo_train_branch(m, r->bck);
        st->bck_head++;
      }
    }
    if (r->n_lq) {
      int mlv = (r->miss & 8) ? 3 : (r->miss & 4) ? 2 : (r->miss & 2) ? 1 : 0;
      for (uint32_t k = 0; k < r->n_lq; k++) { /* loads are the first micro-ops */
        const ooo_uop *u = &m->uops[(r->uop0 + k) & m->uop_mask];
        int lv = u->done_kind == OB_FORWARD ? 0 : m->lvl_track ? mlv : u->done_kind - OB_L1;
        if (lv < 0 || lv > 3) lv = 0;
        st->stats.load_level[lv]++;
        if (ss && !m->lvl_track) { /* by latency */
          if (lv >= 1) ss->l1d_misses++;
          if (lv >= 2) ss->l2_misses++;
          if (lv >= 3) ss->llc_misses++;
        }
      }
      st->stats.loads += r->n_lq;
      st->lq_head += r->n_lq;
    }
    if (ss && m->lvl_track && r->miss) { /* from the memory system's miss events */
      if (r->miss & 2) ss->l1d_misses++;
      if (r->miss & 4) ss->l2_misses++;
      if (r->miss & 8) ss->llc_misses++;
    }
    if (r->n_sq) {
      st->stats.stores += r->n_sq;
      for (uint32_t j = 0; j < r->n_sq; j++) m->sq[(r->sq0 + j) & m->sq_mask].state = SQS_SENIOR;
      st->sq_commit += r->n_sq;
    }
    st->int_free += r->n_int;
    st->vec_free += r->n_vec;
    st->rob_slots -= r->slots;
    st->uop_head = r->uop0 + r->n_uops;
    st->undo_head = r->undo0 + r->n_undo;
    const ooo_win *w = oo_win(m, r->win);
    st->mem_head = w->mem_pos + w->n_mem;
    st->win_head++;
    if (st->serial_fid == r->fid) st->serial_fid = OOO_FID_NONE;
    st->last_commit_cycle = now;
    st->last_commit_fid = r->fid;
    st->rob_head++;
    n++;
    if (n >= c->commit_width || st->rob_head >= st->rob_tail) break;
    r = oo_rob(m, st->rob_head);
    uint8_t stall = oo_head_stall(m, r, now);
    if (stall != OB_NONE) {
      st->commit_stall = stall;
      break;
    }
  }
}

/* ---- store drain --------------------------------------------------------------------------------------- */

void oo_drain(ooo_model *restrict m, uint64_t now) {
  ooo_state *st = m->st;
  if (st->sq_head == st->sq_commit) return; /* no committed store (sq_head <= sq_drain <= sq_commit) */
  /* free written stores in order */
  while (st->sq_head < st->sq_drain) {
    ooo_sq *s = &m->sq[st->sq_head & m->sq_mask];
    if (s->parts || s->done > now) break;
    s->state = SQS_WRITTEN;
    store_filter_release(m, s);
    st->sq_head++;
  }
  uint32_t budget = m->cfg.core.store_drain_width;
  while (budget && st->sq_drain < st->sq_commit) {
    uint64_t pos = st->sq_drain;
    ooo_sq *s = &m->sq[pos & m->sq_mask];
    if (s->state == SQS_SENIOR) {
      s->state = SQS_WRITING;
      s->drain_next = s->addr;
      s->done = now;
      s->parts = 0;
      s->retry = 0;
    }
    if (s->retry > now) break;
    uint64_t end = s->addr + s->size;
    if (s->pmem || !s->size) {
      s->drain_next = end;
      s->done = now + 1;
    }
    mem_req q;
    q.pc = s->pc;
    q.fid = s->fid;
    q.tag = ((uint32_t)TAG_STORE << 30) | (uint32_t)(pos & m->sq_mask);
    q.type = MREQ_STORE;
    q.wrong_path = 0;
    q.retry = s->retry != 0; /* drain_next was refused before */
    while (budget && s->drain_next < end) {
      uint64_t e = piece_end(s->drain_next, end, m->line_bytes);
      q.addr = s->drain_next;
      q.size = (uint32_t)(e - s->drain_next);
      uint64_t ready = now;
      int rc = mem_access(m->memsys, &q, now, &ready);
      if (rc == MEM_BLOCKED) {
        s->retry = ready > now ? ready : now + 1;
        return;
      }
      if (rc == MEM_DONE) {
        if (ready > s->done) s->done = ready;
      } else {
        s->parts++;
      }
      s->drain_next = e;
      s->retry = 0; /* (it was <= now: no effect on timing) */
      q.retry = 0;
      budget--;
    }
    if (s->drain_next >= end) st->sq_drain++;
    else break;
  }
}

/* ---- cycle skipping --------------------------------------------------------------------------------------- */

uint64_t oo_backend_next(const ooo_model *m, uint64_t now) {
  const ooo_state *st = m->st;
  if (st->rdy_ports) return now + 1;
  uint64_t next = UINT64_MAX;
  if (st->disp_wait == 0) return now + 1;
  if (st->rob_head < st->rob_tail) {
    const ooo_rob *h = &m->rob[st->rob_head & m->rob_mask];
    if (h->flags & RF_DONE) next = max64(now + 1, h->done_cycle + m->cfg.core.commit_latency);
  }
  if (st->sq_drain < st->sq_commit) {
    const ooo_sq *s = &m->sq[st->sq_drain & m->sq_mask];
    uint64_t t = max64(now + 1, s->state == SQS_WRITING ? s->retry : 0);
    if (t < next) next = t;
  }
  if (st->sq_head < st->sq_drain) {
    const ooo_sq *s = &m->sq[st->sq_head & m->sq_mask];
    if (!s->parts) {
      uint64_t t = max64(now + 1, s->done);
      if (t < next) next = t;
    }
  }
  if (st->disp_wait != 1 && st->fq_head < st->fq_tail) {
    uint64_t t = max64(now + 1, m->fq[st->fq_head & m->fq_mask].avail);
    if (t < next) next = t;
  }
  return next;
}

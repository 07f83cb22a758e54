/* mem_dram.c — DRAM: channels of banks with open rows, bounded read and write queues per
 * channel, FR-FCFS scheduling, and a data bus busy t_burst cycles per line (the bandwidth
 * limit). All times in core cycles.
 *
 * Timing of one read issued at cycle t to a bank whose open row is `open`:
 *   prep  = 0 (row hit) | t_rcd (bank precharged) | t_rp + t_rcd (row conflict)
 *   data  = max(t + prep + t_cas, bus_free) .. + t_burst   (the bus is then busy until there)
 *   fill  = data end + base_latency   (controller, mesh and return path: fixed overhead)
 * A request is schedulable at t when it has arrived, its bank is ready, and its data would not
 * have to wait for the bus (the controller holds column commands rather than queueing them on
 * the bus, so waiting happens in the queue, where FR-FCFS can reorder it). Among schedulable
 * requests row hits go first, then the oldest. Writes (dirty LLC victims) wait in a write
 * queue and go when no read is schedulable, or first once the write queue is 3/4 full. */
#include <assert.h>
#include <string.h>

#include "mem_int.h"

#define NO_ROW UINT64_MAX

static void dram_map(const mem_sys *m, uint64_t line, uint32_t *ch, uint32_t *bank, uint64_t *row) {
  const dram_config *d = &m->cfg->dram;
  uint64_t x = line;
  *ch = (uint32_t)(x % d->channels); /* consecutive lines alternate channels */
  x /= d->channels;
  x /= m->lines_per_row;             /* column within the row */
  uint64_t b = x % d->banks;
  x /= d->banks;
  *row = x;
  *bank = (uint32_t)((b ^ (x % d->banks)) % d->banks); /* XOR hashing spreads row conflicts */
}

void mem_dram_init(mem_sys *m) {
  const dram_config *d = &m->cfg->dram;
  for (uint32_t c = 0; c < d->channels; c++) {
    m->chan[c].bus_free = 0;
    m->chan[c].next_sched = UINT64_MAX;
    m->chan[c].nread = m->chan[c].nwrite = 0;
    m->chan[c].memo_ok = 0;
    m->chan[c].memo_slot = -1;
    memset(m->chan[c].dv, 0, sizeof m->chan[c].dv);
  }
  for (uint32_t i = 0; i < d->channels * d->banks; i++) {
    m->bank[i].ready = 0;
    m->bank[i].open_row = NO_ROW;
  }
  m->st->dram_next = UINT64_MAX;
  memset(m->rq, 0, sizeof(mem_dreq) * d->channels * d->queue);
  memset(m->wq, 0, sizeof(mem_dreq) * d->channels * d->queue);
}

_Static_assert(MEM_DQ_WORDS * 64 >= 500, "mem_chan.dv: a bit per slot (mem_config_check: queue < 500)");

/* The valid-slot words of channel ch's read (w 0) or write (w 1) queue. */
static inline uint64_t *dq_bits(const mem_sys *m, uint32_t ch, bool w) {
  return m->chan[ch].dv[w ? 1 : 0];
}

/* The lowest free slot of a queue that is not full (the bits past the queue's last slot are
 * clear, so the search stops at a real slot). */
static inline uint32_t dq_free(const uint64_t *v) {
  uint32_t k = 0;
  while (!~v[k]) k++;
  return k * 64 + (uint32_t)__builtin_ctzll(~v[k]);
}

/* Take the lowest free slot of queue q (valid words v, not full) for a request: its index. Field
 * by field (pad is never read): no zeroed temporary to copy. */
static inline uint32_t dq_put(mem_sys *m, mem_dreq *q, uint64_t *v, uint64_t arrive, uint64_t row, uint32_t bank,
                              uint32_t mshr, uint64_t line, uint64_t fid, bool wrong_path, bool prefetch) {
  uint32_t i = dq_free(v);
  mem_dreq *r = &q[i];
  r->arrive = arrive;
  r->row = row;
  r->seq = m->st->seq++;
  r->bank = bank;
  r->mshr = mshr;
  r->line = line;
  r->fid = fid;
  r->wrong_path = wrong_path;
  r->prefetch = prefetch;
  v[i >> 6] |= 1ULL << (i & 63);
  return i;
}

/* Visit slot i of every request of the queue whose valid words are v (in slot order). */
#define DQ_EACH(m, v, i, body)                                                                   \
  for (uint32_t dq_k_ = 0; dq_k_ < (m)->dwords; dq_k_++)                                         \
    for (uint64_t dq_b_ = (v)[dq_k_]; dq_b_; dq_b_ &= dq_b_ - 1) {                               \
      uint32_t i = dq_k_ * 64 + (uint32_t)__builtin_ctzll(dq_b_);                                \
      body                                                                                       \
    }

static uint32_t prep_of(const dram_config *d, const mem_bank *b, uint64_t row) {
  if (b->open_row == row) return 0;
  if (b->open_row == NO_ROW) return d->t_rcd;
  return d->t_rp + d->t_rcd;
}

/* Earliest cycle request r could be scheduled given the channel's current state. */
static inline uint64_t ready_at(const mem_sys *m, uint32_t ch, const mem_dreq *r) {
  const dram_config *d = &m->cfg->dram;
  const mem_bank *b = &m->bank[ch * d->banks + r->bank];
  uint64_t need = (uint64_t)prep_of(d, b, r->row) + d->t_cas;
  uint64_t t = r->arrive > b->ready ? r->arrive : b->ready;
  uint64_t bus = m->chan[ch].bus_free > need ? m->chan[ch].bus_free - need : 0;
  return t > bus ? t : bus;
}

/* Recompute the cached minimum of the channels' next_sched. */
static void update_next(mem_sys *m) {
  uint64_t best = UINT64_MAX;
  const mem_chan *chan = m->chan;
  for (uint32_t c = 0, n = m->cfg->dram.channels; c < n; c++)
    if (chan[c].next_sched < best) best = chan[c].next_sched;
  m->st->dram_next = best;
}


static void resched(mem_sys *m, uint32_t ch);

/* Request r joined channel ch's read (w 0) or write (w 1) queue in slot i, with nothing else
 * changed since next_sched was set (it is the minimum ready cycle of the other requests): the
 * new minimum, and the memo. The memo stands if r cannot go at next_sched; if it can go
 * earlier, nothing else can go then (every other request's ready cycle is >= next_sched): it
 * is the memo. */
static inline void arrived(mem_sys *m, uint32_t ch, const mem_dreq *r, uint32_t i, bool w) {
  uint64_t t = ready_at(m, ch, r);
  mem_chan *c = &m->chan[ch];
  if (c->memo_ok && t <= c->next_sched) {
    if (t < c->next_sched) {
      c->memo_slot = (int32_t)i;
      c->memo_write = w;
    } else {
      c->memo_ok = 0; /* a tie: FR-FCFS decides at the next scan */
    }
  }
  if (t < c->next_sched) c->next_sched = t;
  if (t < m->st->dram_next) m->st->dram_next = t;
}

/* Issue request r, in slot i of a queue (read or write), at cycle t; returns the cycle its data
 * transfer ends. (Inline: it runs once per request.) */
static inline __attribute__((always_inline)) uint64_t issue(mem_sys *m, uint32_t ch,
                                                            const mem_dreq *r, uint32_t i,
                                                            uint64_t t, bool is_write) {
  const dram_config *d = &m->cfg->dram;
  mem_chan *c = &m->chan[ch];
  mem_bank *b = &m->bank[ch * d->banks + r->bank];
  mem_dram_stats *s = &m->st->dram;
  uint32_t prep = prep_of(d, b, r->row);
  if (prep == 0) s->row_hits++;
  else if (b->open_row == NO_ROW) s->row_misses++;
  else s->row_conflicts++;
  uint64_t start = t + prep + d->t_cas;
  if (start < c->bus_free) start = c->bus_free;
  uint64_t end = start + d->t_burst;
  c->bus_free = end;
  b->open_row = r->row;
  b->ready = t + prep + d->t_burst; /* next column command to this bank one burst later */
  s->busy_cycles += d->t_burst;
  if (is_write) {
    s->writes++;
    c->nwrite--;
  } else {
    s->reads++;
    s->queue_wait_sum += t - r->arrive;
    c->nread--;
    m->st->dram_ver++;
  }
  dq_bits(m, ch, is_write)[i >> 6] &= ~(1ULL << (i & 63));
  return end;
}

void mem_dram_read(mem_sys *m, uint64_t line, uint64_t arrive, uint32_t mshr, uint64_t fid,
                   bool wrong_path, bool prefetch, uint64_t now) {
  const dram_config *d = &m->cfg->dram;
  uint32_t ch, bank;
  uint64_t row;
  dram_map(m, line, &ch, &bank, &row);
  mem_dreq *q = &m->rq[ch * d->queue];
  if (m->chan[ch].nread == d->queue) return; /* callers check mem_dram_can_read first */
  uint32_t i = dq_put(m, q, dq_bits(m, ch, false), arrive, row, bank, mshr, line, fid, wrong_path, prefetch);
  mem_dreq *r = &q[i];
  m->chan[ch].nread++;
  m->st->dram_ver++;
  mem_emit(m, MEV_DRAM_ENQ, ML_DRAM, MEM_RID(ML_DRAM, MRK_QUEUE, ch * 1000 + i), fid,
           line << m->c[ML_LLC].line_shift, now, UINT64_MAX, wrong_path, prefetch);
  arrived(m, ch, r, i, false);
}

void mem_dram_write(mem_sys *m, uint64_t line, uint64_t now) {
  const dram_config *d = &m->cfg->dram;
  uint32_t ch, bank;
  uint64_t row;
  dram_map(m, line, &ch, &bank, &row);
  mem_dreq *q = &m->wq[ch * d->queue];
  uint64_t *v = dq_bits(m, ch, true);
  mem_chan *c = &m->chan[ch];
  bool forced = c->nwrite == d->queue;
  if (forced) {
    /* Write queue full: force the oldest write out now (a real controller would stall
     * reads to drain; the bus time it takes is charged all the same). */
    uint32_t slot = UINT32_MAX;
    DQ_EACH(m, v, i, {
      if (slot == UINT32_MAX || q[i].seq < q[slot].seq) slot = i;
    })
    const mem_dreq *old = &q[slot];
    mem_bank *b = &m->bank[ch * d->banks + old->bank];
    uint64_t t = now > b->ready ? now : b->ready;
    issue(m, ch, old, slot, t, true);
    mem_emit(m, MEV_DRAM_DEQ, ML_DRAM, MEM_RID(ML_DRAM, MRK_QUEUE, ch * 1000 + 500 + slot),
             UINT64_MAX, old->line << m->c[ML_LLC].line_shift, t, UINT64_MAX, false, false);
  }
  uint32_t i = dq_put(m, q, v, now, row, bank, UINT32_MAX, line, UINT64_MAX, false, false);
  mem_dreq *r = &q[i];
  bool drain = c->nwrite * 4 >= d->queue * 3;
  c->nwrite++;
  mem_emit(m, MEV_DRAM_ENQ, ML_DRAM, MEM_RID(ML_DRAM, MRK_QUEUE, ch * 1000 + 500 + i), UINT64_MAX,
           line << m->c[ML_LLC].line_shift, now, UINT64_MAX, false, false);
  if (forced) {
    resched(m, ch); /* an issue changed the bus and a bank: every ready cycle may have moved */
    return;
  }
  /* Entering drain mode turns the order the queues are taken in, which decides a tie of a
   * read and a write at next_sched: the memo may no longer be FR-FCFS's pick. */
  if (drain != (c->nwrite * 4 >= d->queue * 3)) c->memo_ok = 0;
  arrived(m, ch, r, i, true);
}

/* What a pass over either queue of a channel needs, loaded once per scheduling round. */
typedef struct dq_scan {
  const mem_bank *banks; /* the channel's */
  uint64_t bus_hit, bus_pre, bus_conf; /* bus_free - need of a row hit, a precharged bank and a
                                          row conflict (0 when need exceeds bus_free) */
} dq_scan;

static inline dq_scan dq_scan_of(const mem_sys *m, uint32_t ch) {
  const dram_config *d = &m->cfg->dram;
  const uint64_t bus_free = m->chan[ch].bus_free, n_hit = d->t_cas,
                 n_pre = (uint64_t)d->t_rcd + d->t_cas, n_conf = n_pre + d->t_rp;
  return (dq_scan){.banks = &m->bank[ch * d->banks],
                   .bus_hit = bus_free > n_hit ? bus_free - n_hit : 0,
                   .bus_pre = bus_free > n_pre ? bus_free - n_pre : 0,
                   .bus_conf = bus_free > n_conf ? bus_free - n_conf : 0};
}

/* One pass over a queue (slots q, valid-slot words v) at t: the slot of the best schedulable
 * request (row hits first, then the oldest) into *best, the earliest cycle any request of the
 * queue could be scheduled into *min_t and the slot of the request FR-FCFS would pick at that
 * cycle (the best of those ready exactly then: no other is ready by then) into *first (-1:
 * none), so that the next scheduling cycle needs no scan if nothing changes until it.
 * It visits only the valid slots, and ranks by one key, the seq with the top bit set for a row
 * miss (seq counts events: it never reaches 2^63, and no two requests share one), so "hit
 * first, then oldest" is one compare. ready_at() and prep_of() inline, with the channel's
 * constants loaded once per round (dq_scan). The scan runs once per issued request, and once
 * more per scheduling cycle only when the remembered first request was invalidated: it is the
 * scheduler's cost. */
static inline __attribute__((always_inline)) void scan_queue(const mem_sys *m, const dq_scan *sc,
                                                             const mem_dreq *q, const uint64_t *v,
                                                             uint64_t t, int32_t *best,
                                                             uint64_t *min_t, int32_t *first) {
  const mem_bank *banks = sc->banks;
  const uint64_t bus_hit = sc->bus_hit, bus_pre = sc->bus_pre, bus_conf = sc->bus_conf;
  int32_t b = -1, f = -1;
  uint64_t bkey = UINT64_MAX;
  uint64_t mt = UINT64_MAX, fkey = UINT64_MAX;
  for (uint32_t k = 0, nw = m->dwords; k < nw; k++) {
    const mem_dreq *qk = q + 64 * k;
    for (uint64_t bits = v[k]; bits; bits &= bits - 1) {
      uint32_t i = (uint32_t)__builtin_ctzll(bits);
      const mem_dreq *r = &qk[i];
      const mem_bank *bk = &banks[r->bank];
      uint64_t open = bk->open_row, rt = bk->ready, seq = r->seq;
      bool hit = open == r->row;
      uint64_t bus = hit ? bus_hit : open == NO_ROW ? bus_pre : bus_conf;
      uint64_t key = hit ? seq : seq | (1ULL << 63);
      if (r->arrive > rt) rt = r->arrive;
      if (bus > rt) rt = bus;
      if (rt < mt || (rt == mt && key < fkey)) {
        mt = rt;
        fkey = key;
        f = (int32_t)(64 * k + i);
      }
      if (rt <= t && key < bkey) {
        bkey = key;
        b = (int32_t)(64 * k + i);
      }
    }
  }
  *best = b;
  *min_t = mt;
  *first = f;
}

/* After a write joined channel ch's queue: its next scheduling cycle and the request that goes
 * first then (the memo), as the pass of chan_run that finds nothing to issue would set them:
 * both queues in the order the scheduler takes them, the first one winning a tie. (t = 0 in
 * the scans: only min_t and first are used, which do not depend on t.) */
static void resched(mem_sys *m, uint32_t ch) {
  const dram_config *d = &m->cfg->dram;
  mem_chan *c = &m->chan[ch];
  const mem_dreq *rq = &m->rq[ch * d->queue], *wq = &m->wq[ch * d->queue];
  bool drain = c->nwrite * 4 >= d->queue * 3;
  uint64_t min_t = UINT64_MAX;
  int32_t first = -1;
  bool first_w = false;
  const dq_scan sc = dq_scan_of(m, ch); /* (a write was just queued: never empty) */
  for (int k = 0; k < 2; k++) {
    bool w = drain ? k == 0 : k == 1;
    if (!(w ? c->nwrite : c->nread)) continue;
    uint64_t qmin;
    int32_t qfirst, unused;
    scan_queue(m, &sc, w ? wq : rq, dq_bits(m, ch, w), 0, &unused, &qmin, &qfirst);
    if (qmin < min_t) {
      min_t = qmin;
      first = qfirst;
      first_w = w;
    }
  }
  c->next_sched = min_t;
  c->memo_ok = 1;
  c->memo_slot = first;
  c->memo_write = first_w;
  update_next(m);
}

/* Issue everything schedulable on channel ch at t (writes first when the write queue is 3/4
 * full, else reads first and writes when no read can go), then set its next scheduling cycle
 * from the passes that found nothing to issue. A queue is scanned only when its turn comes, an
 * empty one not at all. (Out of line: mem_dram_run's pass over the channels then keeps its
 * values in registers; -0.5% Ir on `bench mem --scenario stream`.) */
static __attribute__((noinline)) void chan_run(mem_sys *m, uint32_t ch, uint64_t t) {
  const dram_config *d = &m->cfg->dram;
  mem_dreq *rq = &m->rq[ch * d->queue], *wq = &m->wq[ch * d->queue];
  mem_chan *c = &m->chan[ch];
  /* The pass that set next_sched found what goes first at it (see mem_chan.memo_slot). */
  bool memo = c->memo_ok && c->memo_slot >= 0 && t == c->next_sched;
  for (;;) {
    int32_t slot = -1;
    bool is_write = false;
    if (memo) {
      memo = false;
      is_write = c->memo_write;
      slot = c->memo_slot;
      assert((dq_bits(m, ch, is_write)[slot >> 6] >> (slot & 63)) & 1);
    } else {
      bool drain = c->nwrite * 4 >= d->queue * 3;
      uint64_t min_t = UINT64_MAX;
      int32_t first = -1;
      bool first_w = false;
      dq_scan sc;
      if (c->nread | c->nwrite) sc = dq_scan_of(m, ch); /* (no scan at all: no setup) */
      for (int k = 0; k < 2 && slot < 0; k++) {
        bool w = drain ? k == 0 : k == 1;
        uint32_t n = w ? c->nwrite : c->nread;
        if (!n) continue; /* nothing to issue, no ready cycle: the scan's result changes nothing */
        uint64_t qmin;
        int32_t qfirst;
        scan_queue(m, &sc, w ? wq : rq, dq_bits(m, ch, w), t, &slot, &qmin, &qfirst);
        is_write = w;
        if (qmin < min_t) { /* strict: the queue scanned first wins a tie, as it would at min_t */
          min_t = qmin;
          first = qfirst;
          first_w = w;
        }
      }
      if (slot < 0) {
        c->next_sched = min_t;
        c->memo_ok = 1;
        c->memo_slot = first;
        c->memo_write = first_w;
        break;
      }
    }
    c->memo_ok = 0;
    const mem_dreq *r = &(is_write ? wq : rq)[slot];
    uint32_t mshr = r->mshr;
    uint64_t fid = r->fid, line = r->line;
    bool wp = r->wrong_path, pf = r->prefetch;
    uint64_t end = issue(m, ch, r, (uint32_t)slot, t, is_write);
    mem_emit(m, MEV_DRAM_DEQ, ML_DRAM,
             MEM_RID(ML_DRAM, MRK_QUEUE, ch * 1000 + (is_write ? 500 : 0) + (uint32_t)slot), fid,
             line << m->c[ML_LLC].line_shift, t, UINT64_MAX, wp, pf);
    if (!is_write) mem_llc_fill_known(m, mshr, end + d->base_latency);
  }
}

void mem_dram_run(mem_sys *m, uint64_t t) {
  const uint32_t nch = m->cfg->dram.channels; /* loaded once: chan_run's stores may alias */
  const mem_chan *chan = m->chan;
  /* The new minimum of next_sched in the same pass (update_next's result): chan_run changes
   * only its own channel. */
  uint64_t best = UINT64_MAX;
  for (uint32_t c = 0; c < nch; c++) {
    uint64_t ns = chan[c].next_sched;
    if (ns <= t) {
      chan_run(m, c, ns);
      ns = chan[c].next_sched;
    }
    if (ns < best) best = ns;
  }
  m->st->dram_next = best;
}

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
  }
  for (uint32_t i = 0; i < d->channels * d->banks; i++) {
    m->bank[i].ready = 0;
    m->bank[i].open_row = NO_ROW;
  }
  m->st->dram_next = UINT64_MAX;
  memset(m->rq, 0, sizeof(mem_dreq) * d->channels * d->queue);
  memset(m->wq, 0, sizeof(mem_dreq) * d->channels * d->queue);
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

static void resched(mem_sys *m, uint32_t ch) {
  const dram_config *d = &m->cfg->dram;
  uint64_t best = UINT64_MAX;
  const mem_dreq *q = &m->rq[ch * d->queue], *w = &m->wq[ch * d->queue];
  for (uint32_t i = 0, seen = 0, n = m->chan[ch].nread; seen < n; i++)
    if (q[i].valid) {
      seen++;
      uint64_t t = ready_at(m, ch, &q[i]);
      if (t < best) best = t;
    }
  for (uint32_t i = 0, seen = 0, n = m->chan[ch].nwrite; seen < n; i++)
    if (w[i].valid) {
      seen++;
      uint64_t t = ready_at(m, ch, &w[i]);
      if (t < best) best = t;
    }
  m->chan[ch].next_sched = best;
  m->chan[ch].memo_ok = 0; /* a min without the request behind it */
  update_next(m);
}

/* Issue r (read or write) at cycle t; returns the cycle its data transfer ends. (Inline: it
 * runs once per request.) */
static inline uint64_t issue(mem_sys *m, uint32_t ch, mem_dreq *r, uint64_t t, bool is_write) {
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
  r->valid = 0;
  return end;
}

static uint32_t slot_of(const mem_sys *m, uint32_t ch, const mem_dreq *r, bool is_write) {
  const mem_dreq *base = (is_write ? m->wq : m->rq) + ch * m->cfg->dram.queue;
  return (uint32_t)(r - base);
}

void mem_dram_read(mem_sys *m, uint64_t line, uint64_t arrive, uint32_t mshr, uint64_t fid,
                   bool wrong_path, bool prefetch, uint64_t now) {
  const dram_config *d = &m->cfg->dram;
  uint32_t ch, bank;
  uint64_t row;
  dram_map(m, line, &ch, &bank, &row);
  mem_dreq *q = &m->rq[ch * d->queue];
  uint32_t i = 0;
  while (i < d->queue && q[i].valid) i++;
  if (i == d->queue) return; /* callers check mem_dram_can_read first */
  mem_dreq *r = &q[i];
  *r = (mem_dreq){.line = line, .arrive = arrive, .seq = m->st->seq++, .fid = fid, .row = row,
                  .bank = bank, .mshr = mshr, .valid = 1, .wrong_path = wrong_path,
                  .prefetch = prefetch};
  m->chan[ch].nread++;
  m->st->dram_ver++;
  mem_emit(m, MEV_DRAM_ENQ, ML_DRAM, MEM_RID(ML_DRAM, MRK_QUEUE, ch * 1000 + i), fid,
           line << m->c[ML_LLC].line_shift, now, UINT64_MAX, wrong_path, prefetch);
  uint64_t t = ready_at(m, ch, r);
  mem_chan *c = &m->chan[ch];
  /* The memo stands if the new read cannot go at next_sched; if it can go earlier, nothing
   * else can go then (every other request's ready cycle is >= next_sched): it is the memo. */
  if (c->memo_ok && t <= c->next_sched) {
    if (t < c->next_sched) {
      c->memo_slot = (int32_t)i;
      c->memo_write = 0;
    } else {
      c->memo_ok = 0; /* a tie: FR-FCFS decides at the next scan */
    }
  }
  if (t < c->next_sched) c->next_sched = t;
  if (t < m->st->dram_next) m->st->dram_next = t;
}

void mem_dram_write(mem_sys *m, uint64_t line, uint64_t now) {
  const dram_config *d = &m->cfg->dram;
  uint32_t ch, bank;
  uint64_t row;
  dram_map(m, line, &ch, &bank, &row);
  mem_dreq *q = &m->wq[ch * d->queue];
  if (m->chan[ch].nwrite == d->queue) {
    /* Write queue full: force the oldest write out now (a real controller would stall
     * reads to drain; the bus time it takes is charged all the same). */
    mem_dreq *old = NULL;
    for (uint32_t i = 0; i < d->queue; i++)
      if (q[i].valid && (!old || q[i].seq < old->seq)) old = &q[i];
    mem_bank *b = &m->bank[ch * d->banks + old->bank];
    uint64_t t = now > b->ready ? now : b->ready;
    uint32_t slot = slot_of(m, ch, old, true);
    issue(m, ch, old, t, true);
    mem_emit(m, MEV_DRAM_DEQ, ML_DRAM, MEM_RID(ML_DRAM, MRK_QUEUE, ch * 1000 + 500 + slot),
             UINT64_MAX, old->line << m->c[ML_LLC].line_shift, t, UINT64_MAX, false, false);
  }
  uint32_t i = 0;
  while (q[i].valid) i++;
  q[i] = (mem_dreq){.line = line, .arrive = now, .seq = m->st->seq++, .fid = UINT64_MAX,
                    .row = row, .bank = bank, .mshr = UINT32_MAX, .valid = 1};
  m->chan[ch].nwrite++;
  mem_emit(m, MEV_DRAM_ENQ, ML_DRAM, MEM_RID(ML_DRAM, MRK_QUEUE, ch * 1000 + 500 + i), UINT64_MAX,
           line << m->c[ML_LLC].line_shift, now, UINT64_MAX, false, false);
  resched(m, ch);
}

/* One pass over a queue at t: the best schedulable request (row hits first, then the oldest)
 * into *best, the earliest cycle any request of the queue could be scheduled into *min_t and
 * the request FR-FCFS would pick at that cycle (the best of those ready exactly then: no other
 * is ready by then) into *first, so that the next scheduling cycle needs no scan if nothing
 * changes until it.
 * ready_at() and prep_of() inline, with the channel's constants loaded once (the scan runs
 * once per issued request, and once more per scheduling cycle only when the remembered first
 * request was invalidated: it is the scheduler's cost). */
static void scan_queue(mem_sys *m, uint32_t ch, mem_dreq *q, uint32_t n, uint64_t t, mem_dreq **best,
                       uint64_t *min_t, mem_dreq **first) {
  const dram_config *d = &m->cfg->dram;
  const mem_bank *banks = &m->bank[ch * d->banks];
  const uint64_t bus_free = m->chan[ch].bus_free, t_cas = d->t_cas, t_rcd = d->t_rcd,
                 t_miss = (uint64_t)d->t_rp + d->t_rcd;
  mem_dreq *b = NULL, *f = NULL;
  bool best_hit = false, first_hit = false;
  uint64_t mt = UINT64_MAX;
  for (uint32_t i = 0, seen = 0; seen < n; i++) {
    mem_dreq *r = &q[i];
    if (!r->valid) continue;
    seen++;
    const mem_bank *bk = &banks[r->bank];
    bool hit = bk->open_row == r->row;
    uint64_t need = (hit ? 0 : bk->open_row == NO_ROW ? t_rcd : t_miss) + t_cas;
    uint64_t rt = r->arrive > bk->ready ? r->arrive : bk->ready;
    uint64_t bus = bus_free > need ? bus_free - need : 0;
    if (bus > rt) rt = bus;
    if (rt <= mt) {
      if (!f || rt < mt || (hit && !first_hit) || (hit == first_hit && r->seq < f->seq)) {
        f = r;
        first_hit = hit;
      }
      mt = rt;
    }
    if (rt > t) continue;
    if (!b || (hit && !best_hit) || (hit == best_hit && r->seq < b->seq)) {
      b = r;
      best_hit = hit;
    }
  }
  *best = b;
  *min_t = mt;
  *first = f;
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
    mem_dreq *r = NULL;
    bool is_write = false;
    if (memo) {
      memo = false;
      is_write = c->memo_write;
      r = &(is_write ? wq : rq)[c->memo_slot];
      assert(r->valid);
    } else {
      bool drain = c->nwrite * 4 >= d->queue * 3;
      uint64_t min_t = UINT64_MAX;
      mem_dreq *first = NULL;
      bool first_w = false;
      for (int k = 0; k < 2 && !r; k++) {
        bool w = drain ? k == 0 : k == 1;
        uint32_t n = w ? c->nwrite : c->nread;
        if (!n) continue; /* nothing to issue, no ready cycle: the scan's result changes nothing */
        uint64_t qmin;
        mem_dreq *qfirst;
        scan_queue(m, ch, w ? wq : rq, n, t, &r, &qmin, &qfirst);
        is_write = w;
        if (qmin < min_t) { /* strict: the queue scanned first wins a tie, as it would at min_t */
          min_t = qmin;
          first = qfirst;
          first_w = w;
        }
      }
      if (!r) {
        c->next_sched = min_t;
        c->memo_ok = 1;
        c->memo_slot = first ? (int32_t)slot_of(m, ch, first, first_w) : -1;
        c->memo_write = first_w;
        break;
      }
    }
    c->memo_ok = 0;
    uint32_t slot = slot_of(m, ch, r, is_write);
    uint32_t mshr = r->mshr;
    uint64_t fid = r->fid, line = r->line;
    bool wp = r->wrong_path, pf = r->prefetch;
    uint64_t end = issue(m, ch, r, t, is_write);
    mem_emit(m, MEV_DRAM_DEQ, ML_DRAM,
             MEM_RID(ML_DRAM, MRK_QUEUE, ch * 1000 + (is_write ? 500 : 0) + slot), fid,
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

/* ooo_front.c — the out-of-order model's front-end: trace window, fetch with branch prediction
 * (direction, BTB, indirect, RAS), wrong-path fetch from the code image, fetch policies,
 * instruction cache, redirects and predictor repair/training. */
#include <stddef.h>
#include <string.h>

#include "bpred_tage.h"
#include "ooo_int.h"

/* ---- the trace window ------------------------------------------------------------------------- */

/* oo_fill_window copies these fields of a trace instruction as whole words */
_Static_assert(offsetof(trace_insn, next_pc) == offsetof(trace_insn, pc) + 8 &&
                   offsetof(ooo_win, next_pc) == offsetof(ooo_win, pc) + 8 &&
                   offsetof(trace_insn, rep) == offsetof(trace_insn, sid) + 4 &&
                   offsetof(ooo_win, rep) == offsetof(ooo_win, sid) + 4,
               "oo_fill_window: word copies");

/* Copy an instruction's nm accesses src into the window's memory ring dst at position pos.
 * Most instructions make one or two: element copies (a memcpy of a variable size becomes
 * `rep movs`, slow to start for 16 or 32 bytes). */
static inline __attribute__((always_inline)) void win_copy_mems(trace_mem *dst, uint64_t mem_mask, uint64_t pos,
                                                                const trace_mem *src, uint32_t nm) {
  const uint64_t at = pos & mem_mask, cap = mem_mask + 1;
  if (nm <= 2 && at + 2 <= cap) {
    dst[at] = src[0];
    if (nm == 2) dst[at + 1] = src[1];
  } else if (at + nm <= cap) {
    memcpy(&dst[at], src, nm * sizeof *src);
  } else {
    for (uint32_t i = 0; i < nm; i++) dst[(pos + i) & mem_mask] = src[i];
  }
}

/* oo_fill_window with a filter: instruction by instruction, the filter called on each. */
static __attribute__((noinline)) bool fill_window_filtered(ooo_model *restrict m) {
  ooo_state *st = m->st;
  /* The fill and read positions, the batch and the rings live in locals (the window stores
   * would make the compiler reload them per instruction); the positions are written back before
   * anything outside runs (cursor, filter), the batch reloaded after the cursor. At most 64
   * instructions per call, and no further than the window's room: one bound on win_fill (an
   * instruction the filter drops takes no window entry). */
  const uint64_t mem_cap = (uint64_t)m->mem_mask + 1, win_lim = st->win_head + m->win_cap;
  const uint64_t mem_lim = st->mem_head + mem_cap, mem_mask = m->mem_mask, win_mask = m->win_mask;
  uint64_t win_fill = st->win_fill, mem_fill = st->mem_fill, next_index = st->next_index;
  const uint64_t fill_lim = win_lim - win_fill > 64 && win_lim > win_fill ? win_fill + 64 : win_lim;
  ooo_win *const win = m->win;
  trace_mem *const dst = m->mem;
  const trace_insn *insns = m->batch.insns;
  const trace_mem *mems = m->batch.mems;
  size_t bn = m->batch.n;
  uint64_t first = m->batch.first_index;
  size_t pos = m->batch_pos;
  bool end = false;
  while (win_fill < fill_lim) {
    if (pos >= bn) {
      st->win_fill = win_fill;
      st->mem_fill = mem_fill;
      st->next_index = next_index;
      m->batch_pos = pos;
      if (batch_pf_next(m->rd, &m->batch, &m->err)) {
        m->failed = true;
        return false;
      }
      pos = 0;
      insns = m->batch.insns;
      mems = m->batch.mems;
      bn = m->batch.n;
      first = m->batch.first_index;
      if (!bn) {
        end = true;
        break;
      }
    }
    const trace_insn *ti = &insns[pos];
    const uint64_t index = first + pos;
    const uint32_t nm = ti->n_mem < OOO_WIN_MEM ? ti->n_mem : OOO_WIN_MEM;
    if (mem_fill + nm > mem_lim) break;
    pos++;
    next_index = index + 1;
    if (ti->flags & TI_LAST) end = true;
    ooo_win *w = &win[win_fill & win_mask];
    if (__builtin_expect(m->filter != NULL, 0)) {
      st->win_fill = win_fill;
      st->mem_fill = mem_fill;
      st->next_index = next_index;
      m->batch_pos = pos;
      if (end) st->trace_end = true;
      ooo_mod mod = {.lat_set = -1};
      m->filter(m->filter_ctx, index, ti, trace_decoded(m->trace, ti->sid), false, &mod);
      if (mod.drop) {
        if (end) break;
        continue;
      }
      w->mod = (uint8_t)((mod.nop ? MOD_NOP | MOD_PBRANCH : 0) | (mod.perfect_branch ? MOD_PBRANCH : 0) |
                         (mod.perfect_mem ? MOD_PMEM : 0) | (mod.lat_add || mod.lat_set >= 0 ? MOD_LAT : 0));
      w->lat_add = mod.lat_add;
      w->lat_set = mod.lat_set;
    } else {
      w->mod = 0;
    }
    w->index = index;
    w->pc = ti->pc;
    w->next_pc = ti->next_pc;
    w->sid = ti->sid;
    w->rep = ti->rep;
    w->flags = ti->flags;
    w->n_mem = (uint16_t)nm;
    w->mem_pos = mem_fill;
    if (nm) win_copy_mems(dst, mem_mask, mem_fill, mems + ti->mem_off, nm);
    mem_fill += nm;
    win_fill++;
    if (end) break;
  }
  st->win_fill = win_fill;
  st->mem_fill = mem_fill;
  st->next_index = next_index;
  m->batch_pos = pos;
  if (end) st->trace_end = true;
  return st->win_fetch < win_fill;
}

/* Read more correct-path instructions from the trace into the window. Returns true when an
 * instruction is available at win_fetch. Without a filter, by runs: the instructions of the
 * batch the window has room for at once are copied in an inner loop that calls nothing (the
 * batch refill and the write-backs around it are per run, not per instruction). An
 * instruction is taken only with room for its accesses in the memory ring, and the trace's last
 * instruction ends the fill, as instruction by instruction (fill_window_filtered). */
bool oo_fill_window(ooo_model *restrict m) {
  ooo_state *st = m->st;
  if (st->win_fetch < st->win_fill) return true;
  if (st->trace_end) return false;
  if (st->need_seek) {
    if (batch_pf_seek(m->rd, st->next_index, &m->err)) {
      m->failed = true;
      return false;
    }
    m->batch.n = 0;
    m->batch_pos = 0;
    st->need_seek = false;
  }
  if (__builtin_expect(m->filter != NULL, 0)) return fill_window_filtered(m);
  const uint64_t mem_cap = (uint64_t)m->mem_mask + 1, win_lim = st->win_head + m->win_cap;
  const uint64_t mem_lim = st->mem_head + mem_cap, mem_mask = m->mem_mask, win_mask = m->win_mask;
  uint64_t win_fill = st->win_fill, mem_fill = st->mem_fill;
  const uint64_t fill_lim = win_lim - win_fill > 64 && win_lim > win_fill ? win_fill + 64 : win_lim;
  ooo_win *const win = m->win;
  trace_mem *const dst = m->mem;
  bool end = false, full = false;
  while (win_fill < fill_lim) {
    if (m->batch_pos >= m->batch.n) {
      st->win_fill = win_fill;
      st->mem_fill = mem_fill;
      if (batch_pf_next(m->rd, &m->batch, &m->err)) {
        m->failed = true;
        return false;
      }
      m->batch_pos = 0;
      if (!m->batch.n) {
        end = true;
        break;
      }
    }
    const trace_insn *const insns = m->batch.insns;
    const trace_mem *const mems = m->batch.mems;
    const uint64_t first = m->batch.first_index;
    size_t pos = m->batch_pos;
    /* a run within the batch, the fill limit and the window ring's contiguous part: entries by
     * pointer, not by position (mask and multiply) */
    const uint64_t wat = win_fill & win_mask;
    size_t run = (size_t)WI_MIN((uint64_t)(m->batch.n - pos), fill_lim - win_fill);
    if (run > win_mask + 1 - wat) run = (size_t)(win_mask + 1 - wat);
    const trace_insn *ti = &insns[pos], *const ti_end = ti + run;
    ooo_win *w = &win[wat];
    uint64_t index = first + pos;
    for (; ti < ti_end; ti++, w++, index++) {
      const uint32_t nm = ti->n_mem < OOO_WIN_MEM ? ti->n_mem : OOO_WIN_MEM;
      if (mem_fill + nm > mem_lim) {
        full = true;
        break;
      }
      /* (pc + next_pc and sid + rep as whole words: the layouts are checked above) */
      const uint8_t flags = ti->flags;
      w->index = index;
      memcpy(&w->pc, &ti->pc, 16);
      memcpy(&w->sid, &ti->sid, 8);
      w->n_mem = (uint16_t)nm;
      w->flags = flags;
      w->mod = 0;
      w->mem_pos = mem_fill;
      if (nm) win_copy_mems(dst, mem_mask, mem_fill, mems + ti->mem_off, nm);
      mem_fill += nm;
      if (flags & TI_LAST) {
        end = true;
        ti++;
        w++;
        break;
      }
    }
    win_fill += (uint64_t)(w - &win[wat]);
    pos = (size_t)(ti - insns);
    m->batch_pos = pos;
    st->next_index = first + pos; /* (batches are contiguous: the first not taken) */
    if (end || full) break;
  }
  st->win_fill = win_fill;
  st->mem_fill = mem_fill;
  if (end) st->trace_end = true;
  return st->win_fetch < win_fill;
}

/* ---- predictor repair and training ------------------------------------------------------------- */

/* Restore the front-end state saved at checkpoint `bck` (history, RAS per policy); with
 * apply_outcome, then apply the branch's actual outcome (after a misprediction). */
void oo_restore_branch(ooo_model *restrict m, uint32_t bck, bool apply_outcome) {
  ooo_state *st = m->st;
  const ooo_bck *b = &m->bck[bck];
  int pol = m->cfg.bp.ras_repair;
  st->hist = b->h;
  ras_restore(&st->ras, m->ras_e, m->ras_depth, pol, &b->ras,
              m->bck_ras ? m->bck_ras + (size_t)bck * m->ras_depth : NULL);
  if (!apply_outcome) return;
  if (m->geom.k12) bp_hist_push_k(&m->geom, &st->hist, m->hist_ring, b->pc, b->taken, true);
  else bp_hist_push(&m->geom, &st->hist, m->hist_ring, b->pc, b->taken);
  if (pol != RAS_REPAIR_NONE) {
    if (br_is_call(b->br)) ras_push(&st->ras, m->ras_e, m->ras_depth, b->fall);
    else if (b->br == BR_RET) {
      uint64_t a;
      ras_pop(&st->ras, m->ras_e, m->ras_depth, &a);
    }
  }
}

/* Train the predictors with a committed branch. */
void oo_train_branch(ooo_model *restrict m, uint32_t bck) {
  const ooo_bck *b = &m->bck[bck];
  const bp_config *c = &m->cfg.bp;
  switch (b->br) {
  case BR_COND:
    m->bp->update(m->bp_state, &m->geom, b->pc, b->taken, &b->meta);
    if (m->cfg.fe.wrong_path == WP_CONFIDENCE) bp_conf_update(m->conf, c, b->conf_idx, !b->mispred);
    break;
  case BR_IND_JUMP:
  case BR_IND_CALL: bp_ind_update(m->ind, c, b->ind_idx, b->pc, b->next_pc); break;
  default: break;
  }
  if (b->taken && b->br != BR_RET && !b->btb_ok) bp_btb_update(m->btb, c, b->pc, b->next_pc);
}

/* Fetch resumes on the correct path at window position win_pos after `penalty` cycles. */
void oo_redirect(ooo_model *restrict m, uint64_t now, uint64_t fid, uint64_t win_pos, uint32_t penalty, int cause) {
  ooo_state *st = m->st;
  st->wrong = false;
  st->win_fetch = win_pos;
  /* older low-confidence branches may still hold the gate */
  st->fstall = st->lowconf_n > m->cfg.bp.conf_gate ? FS_GATE : FS_RUN;
  st->fetch_resume = now + (penalty ? penalty : 1);
  st->ic_line = UINT64_MAX;
  st->ic_gen++;
  st->fe_by = fid;
  st->fe_rid = OOO_RID_FETCH;
  st->recovering = (uint8_t)(1 + cause);
  st->wp_since = 0;
}

/* ---- instruction cache ---------------------------------------------------------------------------- */

void oo_icache_done(ooo_model *restrict m, uint32_t tag, uint64_t cycle) {
  ooo_state *st = m->st;
  if ((tag & 0x3fffffffu) != (st->ic_gen & 0x3fffffffu) || st->fstall != FS_ICACHE) return;
  st->fstall = FS_RUN;
  uint64_t r = cycle > m->l1i_lat ? cycle - m->l1i_lat : 0;
  st->fetch_resume = r > st->now ? r : st->now;
}

/* Access the line holding pc; true when fetch may proceed this cycle. */
static bool icache_access(ooo_model *restrict m, uint64_t now, uint64_t pc, uint64_t line, uint64_t fid) {
  ooo_state *st = m->st;
  st->ic_gen++;
  mem_req r;
  r.addr = line << m->line_shift;
  r.pc = pc;
  r.fid = fid;
  r.size = m->line_bytes;
  r.tag = ((uint32_t)TAG_IFETCH << 30) | (st->ic_gen & 0x3fffffffu);
  r.type = MREQ_IFETCH;
  r.wrong_path = st->wrong;
  r.retry = st->ic_refused == line + 1;
  uint64_t ready = now;
  int rc = mem_access(m->memsys, &r, now, &ready);
  st->ic_refused = rc == MEM_BLOCKED ? line + 1 : 0;
  st->ic_line = line;
  if (rc == MEM_DONE) {
    if (ready <= now + m->l1i_lat) return true;
    st->fetch_resume = ready - m->l1i_lat;
    st->fe_rid = OOO_RID_ICACHE;
    return false;
  }
  st->fe_rid = OOO_RID_ICACHE;
  if (rc == MEM_PENDING) {
    st->fstall = FS_ICACHE;
    return false;
  }
  st->ic_line = UINT64_MAX; /* blocked: access again */
  st->fetch_resume = ready > now ? ready : now + 1;
  return false;
}

/* ---- fetch ------------------------------------------------------------------------------------------ */

static void call_wp_filter(ooo_model *restrict m, const ooo_tmpl *t, ooo_fq *q) {
  trace_insn ti;
  memset(&ti, 0, sizeof ti);
  ti.pc = t->pc;
  ti.next_pc = t->pc + t->len;
  ti.sid = t->sid;
  ti.rep = 1;
  ti.len = t->len;
  ooo_mod mod = {.lat_set = -1};
  m->filter(m->filter_ctx, UINT64_MAX, &ti, t->di, true, &mod);
  q->mod = (uint8_t)((mod.nop ? MOD_NOP | MOD_PBRANCH : 0) | (mod.perfect_branch ? MOD_PBRANCH : 0) |
                     (mod.perfect_mem ? MOD_PMEM : 0) | (mod.lat_add || mod.lat_set >= 0 ? MOD_LAT : 0));
  q->lat_add = mod.lat_add;
  q->lat_set = mod.lat_set;
}

/* The hit path of oo_tmpl_pc's front cache (same hash as in ooo_model.c), inline: wrong-path
 * fetch looks up every instruction by PC. */
static inline const ooo_tmpl *tmpl_at(ooo_model *restrict m, uint64_t pc) {
  uint32_t k = oo_tc_slot(pc);
  if (__builtin_expect(m->tc_pc[k] == pc + 1, 1)) return m->tc_t[k];
  return oo_tmpl_pc(m, pc);
}

/* Predict the branch t at pc (fetch-queue entry q; window entry w on the correct path, NULL on
 * the wrong path): checkpoint (correct path), direction, target, RAS, history, BTB bubble,
 * confidence gating. Sets *next and, when fetch must stop this cycle, *stop. Inlined into the
 * correct-path and the wrong-path loops (w NULL there drops the checkpoint code). */
static inline __attribute__((always_inline)) void
fetch_branch(ooo_model *restrict m, ooo_state *st, uint64_t now, const ooo_tmpl *t, ooo_win *w, ooo_fq *q,
             uint64_t pc, bool perfect, uint32_t *taken, uint64_t *next, bool *stop) {
  const ooo_fe_config *fc = &m->cfg.fe;
  const bp_config *bc = &m->cfg.bp;
  const uint64_t fall = pc + t->len;
  /* Checkpoint (correct path) before the branch updates history and RAS. */
  ooo_bck *b = NULL;
  uint32_t bi = OOO_NIL;
  if (w) {
    bi = (uint32_t)(st->bck_tail & m->bck_mask);
    b = &m->bck[bi];
    b->h = st->hist;
    ras_save(&st->ras, m->ras_e, &b->ras);
    if (m->bck_ras) memcpy(m->bck_ras + (size_t)bi * m->ras_depth, m->ras_e, m->ras_depth * 8);
    b->pc = pc;
    b->fall = fall;
    b->next_pc = w->next_pc;
    b->br = t->br;
    b->taken = w->next_pc != fall || t->br != BR_COND;
    b->mispred = 0;
    q->bck = bi;
    st->bck_tail++;
  }
  bool ptaken = true, btb_hit = true;
  uint64_t ptarget = fall, tmp;
  bp_meta meta_wp; /* wrong path: the prediction's meta is not kept */
  bp_meta *meta = b ? &b->meta : &meta_wp;
  uint32_t ind_idx = 0, conf_idx = 0;
  switch (t->br) {
  case BR_COND: /* TAGE inline (the default predictor, called for most fetched branches) */
    if (m->geom.k12) ptaken = bp_tage_predict_k(m->bp_state, &m->geom, &st->hist, pc, meta, true);
    else
      ptaken = m->bp == &bp_tage_ops ? bp_tage_predict(m->bp_state, &m->geom, &st->hist, pc, meta)
                                     : m->bp->predict(m->bp_state, &m->geom, &st->hist, pc, meta);
    ptarget = t->target;
    if (ptaken) btb_hit = bp_btb_lookup_inl(m->btb, bc, pc, &tmp);
    break;
  case BR_JUMP:
  case BR_CALL: /* (inline: calls and jumps are most branches of call-heavy code) */
    ptarget = t->target;
    btb_hit = bp_btb_lookup_inl(m->btb, bc, pc, &tmp);
    break;
  case BR_IND_JUMP:
  case BR_IND_CALL:
    ind_idx = bp_ind_index(bc, &st->hist, pc);
    if (!bp_ind_lookup(m->ind, bc, ind_idx, pc, &ptarget) && !bp_btb_lookup(m->btb, bc, pc, &ptarget))
      ptarget = fall;
    break;
  case BR_RET:
    if (!ras_pop(&st->ras, m->ras_e, m->ras_depth, &ptarget)) ptarget = fall;
    break;
  default: break;
  }
  if (t->br == BR_COND && fc->wrong_path == WP_CONFIDENCE) conf_idx = bp_conf_index(bc, &st->hist, pc);
  if (br_is_call(t->br)) ras_push(&st->ras, m->ras_e, m->ras_depth, fall);
  if (w && perfect && !(w->flags & TI_ASYNC)) {
    ptaken = w->next_pc != fall || t->br != BR_COND;
    ptarget = w->next_pc;
    btb_hit = true;
  }
  *next = ptaken ? ptarget : fall;
  if (m->geom.k12) bp_hist_push_k(&m->geom, &st->hist, m->hist_ring, pc, ptaken, true);
  else bp_hist_push(&m->geom, &st->hist, m->hist_ring, pc, ptaken);
  if (ptaken) q->flags |= FQ_TAKEN;
  if (b) {
    b->ind_idx = ind_idx;
    b->conf_idx = conf_idx;
    b->pred_taken = ptaken;
    b->btb_ok = btb_hit && ptaken && !br_is_indirect(t->br) && t->br != BR_RET;
    if (!(w->flags & TI_ASYNC) && *next != w->next_pc) {
      b->mispred = 1;
      q->flags |= FQ_MISPRED;
    }
  }
  if (!btb_hit && ptaken && (t->br == BR_COND || t->br == BR_JUMP || t->br == BR_CALL)) {
    /* The decoder finds the taken direct branch: insert it, bubble. */
    bp_btb_update(m->btb, bc, pc, t->target);
    if (w) st->stats.btb_bubbles++;
    st->fetch_resume = now + fc->btb_miss_penalty;
    st->fe_rid = OOO_RID_BPRED;
    *stop = true;
  }
  if (t->br == BR_COND && fc->wrong_path == WP_CONFIDENCE && !perfect &&
      !bp_conf_high(m->conf, bc, conf_idx)) {
    q->flags |= FQ_GATE;
    if (++st->lowconf_n > bc->conf_gate) { /* more than N unresolved: gate fetch */
      st->fstall = FS_GATE;
      *stop = true;
    }
  }
  if (ptaken && ++*taken >= fc->fetch_taken) *stop = true;
}

/* fetch_branch on the wrong path for what fetch_wrong does not do inline (other branch kinds,
 * other predictors, confidence gating): out of line, one copy. */
static __attribute__((noinline)) void fetch_branch_wp(ooo_model *restrict m, ooo_state *st, uint64_t now,
                                                      const ooo_tmpl *t, ooo_fq *q, uint64_t pc, bool perfect,
                                                      uint32_t *taken, uint64_t *next, bool *stop) {
  fetch_branch(m, st, now, t, NULL, q, pc, perfect, taken, next, stop);
}

/* Access the instruction line of pc unless fetch is on it already (or the uop cache holds it);
 * false when fetch cannot proceed this cycle. tail: the fetch loop's queue tail, stored before
 * the memory system runs. */
static inline bool fetch_line(ooo_model *restrict m, ooo_state *st, uint64_t now, uint64_t pc, uint64_t fid,
                              uint64_t tail) {
  uint64_t line = pc >> m->line_shift;
  if (line == st->ic_line) return true;
  uint32_t nd = m->cfg.fe.uop_cache_lines;
  uint64_t *d = nd ? &m->dsb[line & (nd - 1)] : NULL;
  if (d && *d == line + 1) {
    st->ic_line = line; /* delivered by the uop cache */
    return true;
  }
  st->fq_tail = tail;
  if (!icache_access(m, now, pc, line, fid)) return false;
  if (d) *d = line + 1;
  return true;
}

/* The common part of a fetch-queue entry. */
static inline ooo_fq *fq_entry(ooo_model *restrict m, ooo_state *st, uint64_t tail, uint64_t pc, uint64_t now,
                               uint64_t avail) {
  ooo_fq *q = oo_fq(m, tail);
  q->pc = pc;
  q->fetch_cycle = now;
  q->avail = avail;
  q->fe_by = st->fe_by;
  q->fe_rid = st->fe_rid;
  st->fe_by = OOO_FID_NONE;
  st->fe_rid = OOO_RID_FETCH;
  q->bck = OOO_NIL;
  q->bck_at = st->bck_tail;
  return q;
}

/* (Called with st->fq_tail at q's queue position. The entry fetch_queue positions earlier was
 * renamed, so its slot became free, before q could be fetched: positions below the head are never
 * rewritten and the ring holds more than fetch_queue entries, so its flow is still there.) */
static void fetch_event(ooo_model *restrict m, uint64_t now, const ooo_fq *q, const ooo_tmpl *t, bool wrong) {
  ooo_ev e = oo_ev_make(now, q->fid, q->pc, t->sid, OOO_RID_FETCH, wrong);
  const uint64_t pos = m->st->fq_tail, cap = m->cfg.fe.fetch_queue;
  e.by_fid = pos >= cap ? oo_fq(m, pos - cap)->fid : OOO_FID_NONE;
  e.rid2 = wrong ? OOO_RID_NONE : q->fe_rid; /* (the model with observers keeps bindings) */
  m->obs->fetch(m->obs_ctx, &e);
}

/* Fetch down the wrong path for the rest of the cycle: n instructions, `bytes` bytes and `taken`
 * predicted-taken branches fetched so far, fetch-queue tail `tail`. Its own loop: nothing of
 * the correct path (window, checkpoints) is live, and wrong-path fetch is most of the fetched
 * instructions of a branchy program. This one goes instruction by instruction and serves
 * filters and fetch observers; fetch_wrong (below) is the same by fetch blocks. */
static void fetch_wrong_each(ooo_model *restrict m, uint64_t now, uint32_t n, uint32_t bytes, uint32_t taken,
                             uint64_t tail) {
  ooo_state *st = m->st;
  const ooo_fe_config *fc = &m->cfg.fe;
  const uint32_t width = fc->fetch_width, max_bytes = fc->fetch_bytes;
  const uint64_t avail = now + fc->fetch_to_rename;
  uint64_t pc = st->wp_pc;
  while (n < width) {
    if (tail - st->fq_head >= fc->fetch_queue) {
      st->fe_block = 1;
      break;
    }
    const ooo_tmpl *t = tmpl_at(m, pc);
    if (!t) { /* no code here: the wrong path ends until the redirect */
      st->fstall = FS_MISPRED;
      break;
    }
    if (n && bytes + t->len > max_bytes) break;
    if (!fetch_line(m, st, now, pc, OOO_FID_WRONG | st->wp_count, tail)) break;
    ooo_fq *q = fq_entry(m, st, tail, pc, now, avail);
    bool perfect = fc->perfect_branch;
    q->fid = OOO_FID_WRONG | st->wp_count++;
    q->win = 0;
    q->flags = (uint8_t)(FQ_WRONG | (t->n_mem_def ? FQ_MEM : 0));
    q->mod = 0;
    q->lat_add = 0;
    q->lat_set = -1;
    if (t->sid != UINT32_MAX) {
      const uint64_t *la = &m->last_addr[(size_t)t->sid * 2];
      q->tid = t->sid;
      q->wp_addr[0] = la[0];
      q->wp_addr[1] = la[1];
    } else {
      q->tid = OOO_TID_PC;
      q->wp_addr[0] = q->wp_addr[1] = 0;
    }
    if (__builtin_expect(m->filter != NULL, 0)) {
      call_wp_filter(m, t, q);
      if (q->mod & MOD_PBRANCH) perfect = true;
    }
    st->stats.fetched[1]++;
    st->wp_since++;
    if (__builtin_expect(m->obs && m->obs->fetch, 0)) {
      st->fq_tail = tail;
      st->wp_pc = pc;
      fetch_event(m, now, q, t, true);
    }
    n++;
    bytes += t->len;
    tail++;
    uint64_t next = pc + t->len;
    bool stop = false;
    if (t->br) fetch_branch(m, st, now, t, NULL, q, pc, perfect, &taken, &next, &stop);
    pc = next;
    if (fc->wrong_path == WP_CAP && st->wp_since >= fc->wrong_path_cap) {
      st->fstall = FS_MISPRED;
      stop = true;
    }
    if (stop) break;
  }
  st->wp_pc = pc;
  st->fq_tail = tail;
}

/* ---- wrong-path fetch by blocks ------------------------------------------------------------- */

/* A fetch block: the straight-line run of instructions from a PC up to and including the first
 * branch (at most OO_FB_MAX instructions; shorter when the code ends). Derived from the code
 * image and the configuration alone (templates by PC never change), so cached for the model's
 * lifetime, not state. The wrong path spends most of its per-instruction work finding
 * templates, byte counts and lines, and per branch computing what its prediction and BTB
 * lookup derive from the PC (some 25 and 15 host instructions); a block has them at hand. */
#define OO_FB_MAX 8u   /* instructions per block (fetch_wrong's unrolled entries: at most 8) */
#define OO_FB_N 1024u  /* cached blocks (direct-mapped by start PC) */
/* oo_fblk.br: the branch at the end (the configuration fixes which way fetch_wrong predicts it:
 * TAGE inline, with golden_cove's geometry as constants (FB_TAGE_COND12: bp_geom.k12), or
 * fetch_branch) */
enum { FB_NONE = 0, FB_TAGE_COND, FB_TAGE_COND12, FB_OTHER };
typedef struct oo_fblk {
  uint64_t key;                 /* start PC + 1 (0: empty) */
  const ooo_tmpl *last;         /* template of the last instruction */
  bp_tage_pc tp;                /* a branch at the end, under TAGE: its prediction's PC terms
                                   (here: 16-aligned) */
  uint32_t tid[OO_FB_MAX];      /* fetch-queue template id per instruction (sid or OOO_TID_PC) */
  uint8_t off[OO_FB_MAX + 1];   /* byte offset of each instruction from the start; off[n]: bytes */
  uint8_t nmem[OO_FB_MAX];      /* default accesses (template n_mem_def) */
  uint8_t n;                    /* instructions (0: no code at the start PC) */
  uint8_t br;                   /* the last instruction is a branch: FB_* */
  uint8_t lchg;                 /* bit i: instruction i starts in another line than i - 1 */
  uint32_t btb_set, btb_tag;    /* a branch at the end: its BTB set and tag (bp_btb_where) */
  uint32_t btb_ent;             /* the BTB entry (set * ways + way) its tag was found in last: a
                                   hint (bp_btb_lookup_hint); the block is 128 bytes (a power of
                                   two: its address is a shift) */
} oo_fblk;
_Static_assert(sizeof(void *) != 8 || sizeof(oo_fblk) == 128, "oo_fblk: 128 bytes (64-bit hosts)");

static __attribute__((noinline)) void fblk_build(ooo_model *restrict m, oo_fblk *b, uint64_t pc) {
  uint32_t n = 0, off = 0, lchg = 0;
  const ooo_tmpl *last = NULL;
  while (n < OO_FB_MAX) {
    const ooo_tmpl *t = tmpl_at(m, pc + off);
    if (!t || off + t->len > 255) break; /* (offsets are bytes; x86 instructions have <= 15) */
    if (n && ((pc + off) >> m->line_shift) != ((pc + b->off[n - 1]) >> m->line_shift)) lchg |= 1u << n;
    b->tid[n] = t->sid != UINT32_MAX ? t->sid : OOO_TID_PC;
    b->nmem[n] = t->n_mem_def;
    b->off[n] = (uint8_t)off;
    last = t;
    off += t->len;
    n++;
    if (t->br) break;
  }
  b->off[n] = (uint8_t)off;
  b->n = (uint8_t)n;
  b->br = FB_NONE;
  if (last && last->br) {
    const bool tage_nc = m->bp == &bp_tage_ops && m->cfg.fe.wrong_path != WP_CONFIDENCE;
    b->br = last->br == BR_COND && tage_nc ? (m->geom.k12 ? FB_TAGE_COND12 : FB_TAGE_COND) : FB_OTHER;
    /* (what the branch's prediction computes from its PC alone) */
    const uint64_t bpc = pc + b->off[n - 1];
    bp_btb_where(&m->cfg.bp, bpc, &b->btb_set, &b->btb_tag);
    if (m->bp == &bp_tage_ops) bp_tage_pc_init(&m->geom, bpc, &b->tp);
  }
  b->lchg = (uint8_t)lchg;
  b->btb_ent = b->btb_set * m->cfg.bp.btb_ways; /* (any way of the set) */
  b->last = last;
  b->key = pc + 1;
}

/* (m->fblk allocated: fetch_wrong does it before its loop) */
static inline oo_fblk *fblk_at(ooo_model *restrict m, uint64_t pc) {
  oo_fblk *b = &m->fblk[oo_tc_slot(pc) & (OO_FB_N - 1)];
  if (__builtin_expect(b->key != pc + 1, 0)) fblk_build(m, b, pc);
  return b;
}

/* (fetch_wrong) Write the fetch-queue entry q of instruction i of block b (FID fid, at pc). */
static inline __attribute__((always_inline)) void
fblk_entry(ooo_state *st, ooo_fq *restrict q, const oo_fblk *restrict b, uint32_t i, uint64_t fid,
           uint64_t pc, uint64_t avail, uint64_t bck_at, bool binds, const uint64_t *restrict last_addr) {
  const uint32_t tid = b->tid[i], nmem = b->nmem[i];
  q->fid = fid;
  q->pc = pc;
  q->avail = avail;
  if (binds) {
    q->fe_by = st->fe_by;
    q->fe_rid = st->fe_rid;
    st->fe_by = OOO_FID_NONE;
    st->fe_rid = OOO_RID_FETCH;
  }
  q->bck = OOO_NIL;
  q->bck_at = bck_at;
  q->tid = tid;
  q->mod = 0;
  q->flags = (uint8_t)(FQ_WRONG | (nmem ? FQ_MEM : 0));
  if (nmem) {
    const bool known = tid != OOO_TID_PC;
    const uint64_t *la = &last_addr[(size_t)(known ? tid : 0) * 2];
    q->wp_addr[0] = known ? la[0] : 0;
    if (nmem > 1) q->wp_addr[1] = known ? la[1] : 0;
  }
}

/* (fblk_branch) fetch_branch for a conditional branch under TAGE without confidence gating (most
 * wrong-path branches), the same steps in the same order without its dispatch, with the block's
 * PC terms of the prediction and BTB set and tag; k12: m->geom.k12. */
static inline __attribute__((always_inline)) void fblk_tage(ooo_model *restrict m, ooo_state *st,
                                                           uint64_t now, oo_fblk *b, ooo_fq *q,
                                                           uint64_t pc, uint32_t *taken, uint64_t *next,
                                                           bool *stop, const bool k12) {
  const ooo_fe_config *fc = &m->cfg.fe;
  const ooo_tmpl *t = b->last;
  bp_meta meta;
  const bool pt = bp_tage_predict_pc_k(m->bp_state, &m->geom, &st->hist, &b->tp, &meta, k12);
  /* (the BTB lookup after the push, one test of pt: the two change different state) */
  bp_hist_push_k(&m->geom, &st->hist, m->hist_ring, pc, pt, k12);
  if (pt) {
    uint64_t tmp;
    *next = t->target;
    q->flags |= FQ_TAKEN;
    if (!bp_btb_lookup_hint(m->btb, &m->cfg.bp, b->btb_set, b->btb_tag, &b->btb_ent, &tmp)) {
      /* the decoder finds the taken direct branch: insert it, bubble */
      bp_btb_update(m->btb, &m->cfg.bp, pc, t->target);
      st->fetch_resume = now + fc->btb_miss_penalty;
      st->fe_rid = OOO_RID_BPRED;
      *stop = true;
    }
    if (++*taken >= fc->fetch_taken) *stop = true;
  }
}

/* (fetch_wrong) The branch that ends block b, at pc (its fetch-queue entry q): *next (the
 * fall-through on entry), *taken and *stop as fetch_branch sets them. */
static inline __attribute__((always_inline)) void
fblk_branch(ooo_model *restrict m, ooo_state *st, uint64_t now, oo_fblk *b, ooo_fq *q, uint64_t pc,
            bool perfect, uint32_t *taken, uint64_t *next, bool *stop) {
  if (b->br == FB_TAGE_COND12) fblk_tage(m, st, now, b, q, pc, taken, next, stop, true);
  else if (b->br == FB_TAGE_COND) fblk_tage(m, st, now, b, q, pc, taken, next, stop, false);
  else fetch_branch_wp(m, st, now, b->last, q, pc, perfect, taken, next, stop);
}

/* fetch_wrong_each without filter or fetch observer, block by block; the same checks in the
 * same order per instruction (queue room, code, bytes, line, then the branch and the cap), only
 * the line check is skipped where an instruction starts in the line of the one before it (the
 * previous check left ic_line on that line). Without bindings, a block that fits whole (width,
 * queue room, bytes, the cap before its last instruction; contiguous in the queue ring) skips
 * the per-instruction checks, which cannot stop it: only its line checks remain, one per run of
 * instructions in one line. Fields nothing reads are not written: lat_add /
 * lat_set (only with MOD_LAT; mod is 0 here), wp_addr past the template's default accesses,
 * fetch_cycle and win (rename copies them into the ROB, where only commit reads them, which the
 * wrong path never reaches), and without bindings fe_by / fe_rid (nor the state's: bindings
 * only). */
static inline __attribute__((always_inline)) void fetch_wrong(ooo_model *restrict m, uint64_t now, uint32_t n,
                                                             uint32_t bytes, uint32_t taken,
                                                             uint64_t tail) {
  if (__builtin_expect(m->filter != NULL || (m->obs && m->obs->fetch), 0)) {
    fetch_wrong_each(m, now, n, bytes, taken, tail);
    return;
  }
  ooo_state *st = m->st;
  const ooo_fe_config *fc = &m->cfg.fe;
  /* (the configuration and the model's arrays are read where used, not copied: GCC reloads
   * them instead of spilling copies) */
  const uint64_t avail = now + fc->fetch_to_rename, bck_at = st->bck_tail;
  uint64_t pc = st->wp_pc;
  /* the next FID (the counter with OOO_FID_WRONG set); the counter is written back before
   * anything outside runs */
  uint64_t fid = OOO_FID_WRONG | st->wp_count;
  /* Each instruction takes one FID: the fetched statistic and wp_since grow with it (added at
   * the end; wp_since before the cap checks), not by a store per instruction. */
  const uint64_t fid0 = fid, since0 = st->wp_since;
  /* (without bindings, m->binds, nothing reads the front-end binding: fe_by, fe_rid) */
  const uint64_t fq_lim = st->fq_head + fc->fetch_queue; /* (rename does not run during fetch) */
  if (__builtin_expect(!m->fblk, 0)) m->fblk = xcalloc(OO_FB_N, sizeof(oo_fblk));
  bool stop = false;
  while (!stop && n < fc->fetch_width) {
    if (tail >= fq_lim) {
      st->fe_block = 1;
      break;
    }
    oo_fblk *b = fblk_at(m, pc);
    if (!b->n) { /* no code here: the wrong path ends until the redirect */
      st->fstall = FS_MISPRED;
      break;
    }
    const uint32_t nb = b->n;
    const uint64_t at = tail & m->fq_mask;
    if (!m->binds && n + nb <= fc->fetch_width && tail + nb <= fq_lim &&
        at + nb <= (uint64_t)m->fq_mask + 1 && bytes + b->off[nb] <= fc->fetch_bytes &&
        (fc->wrong_path != WP_CAP || since0 + (fid - fid0) + nb <= fc->wrong_path_cap)) {
      /* the whole block, by runs of instructions in one line */
      ooo_fq *restrict q = &m->fq[at];
      const oo_fblk *restrict bb = b; /* (the entries are not the block: no alias checks) */
      const uint64_t pc0 = pc;
      /* bit i: instruction i starts a line run (lchg) or is past the block (nb) */
      const uint32_t run_end = (uint32_t)bb->lchg | 1u << nb;
      uint32_t i = 0;
      if (!bb->lchg) {
        /* one line (almost every block): its check, then the entries unrolled by count, without
         * loop control per entry */
        if ((pc0 >> m->line_shift) == st->ic_line) i = nb;
        else {
          st->wp_count = fid ^ OOO_FID_WRONG;
          if (fetch_line(m, st, now, pc0, fid, tail)) i = nb;
        }
        if (i) {
#define FB_ENTRY(k) fblk_entry(st, &q[k], bb, k, fid + k, pc0 + bb->off[k], avail, bck_at, false, m->last_addr)
          switch (nb) { /* (1 <= nb <= OO_FB_MAX) */
          case 8: FB_ENTRY(7); __attribute__((fallthrough));
          case 7: FB_ENTRY(6); __attribute__((fallthrough));
          case 6: FB_ENTRY(5); __attribute__((fallthrough));
          case 5: FB_ENTRY(4); __attribute__((fallthrough));
          case 4: FB_ENTRY(3); __attribute__((fallthrough));
          case 3: FB_ENTRY(2); __attribute__((fallthrough));
          case 2: FB_ENTRY(1); __attribute__((fallthrough));
          case 1: FB_ENTRY(0); break;
          default: __builtin_unreachable();
          }
#undef FB_ENTRY
        }
      } else {
        for (;;) {
          const uint64_t ipc = pc0 + bb->off[i];
          if ((ipc >> m->line_shift) != st->ic_line) {
            st->wp_count = fid ^ OOO_FID_WRONG;
            if (!fetch_line(m, st, now, ipc, fid, tail + i)) break;
          }
          ooo_fq *restrict qi = &q[i];
          do { /* (a loop of unknown count: GCC does not version it for aliasing) */
            fblk_entry(st, qi++, bb, i, fid + i, pc0 + bb->off[i], avail, bck_at, false, m->last_addr);
            i++;
          } while (!(run_end >> i & 1));
          if (i == nb) break;
        }
      }
      n += i;
      bytes += b->off[i];
      tail += i;
      fid += i;
      pc = pc0 + b->off[i];
      if (i < nb) { /* the line check stopped fetch */
        stop = true;
        break;
      }
      if (b->br) {
        const uint64_t bpc = pc0 + b->off[nb - 1];
        fblk_branch(m, st, now, b, &q[nb - 1], bpc, fc->perfect_branch, &taken, &pc, &stop);
      }
      if (fc->wrong_path == WP_CAP && since0 + (fid - fid0) >= fc->wrong_path_cap) {
        st->fstall = FS_MISPRED;
        stop = true;
      }
      continue;
    }
    for (uint32_t i = 0;;) {
      const uint32_t len = (uint32_t)b->off[i + 1] - b->off[i];
      if (n && bytes + len > fc->fetch_bytes) {
        stop = true;
        break;
      }
      if (i == 0 || (b->lchg >> i & 1)) {
        if ((pc >> m->line_shift) != st->ic_line) {
          st->wp_count = fid ^ OOO_FID_WRONG;
          if (!fetch_line(m, st, now, pc, fid, tail)) {
            stop = true;
            break;
          }
        }
      }
      ooo_fq *q = oo_fq(m, tail);
      fblk_entry(st, q, b, i, fid++, pc, avail, bck_at, m->binds, m->last_addr);
      n++;
      bytes += len;
      tail++;
      uint64_t next = pc + len;
      if (++i == nb) { /* the block's last instruction: a branch, or the code ends after it */
        if (b->br) fblk_branch(m, st, now, b, q, pc, fc->perfect_branch, &taken, &next, &stop);
        pc = next;
        if (fc->wrong_path == WP_CAP && since0 + (fid - fid0) >= fc->wrong_path_cap) {
          st->fstall = FS_MISPRED;
          stop = true;
        }
        break;
      }
      pc = next;
      if (fc->wrong_path == WP_CAP && since0 + (fid - fid0) >= fc->wrong_path_cap) {
        st->fstall = FS_MISPRED;
        stop = true;
        break;
      }
      if (n >= fc->fetch_width) break;
      if (tail >= fq_lim) {
        st->fe_block = 1;
        stop = true;
        break;
      }
    }
  }
  st->wp_count = fid ^ OOO_FID_WRONG;
  st->wp_pc = pc;
  st->fq_tail = tail;
  st->stats.fetched[1] += fid - fid0;
  st->wp_since = since0 + (fid - fid0);
}

/* Fetch on the correct path for the cycle; true when a misprediction sends the rest of the cycle
 * down the wrong path (*pn instructions, *pbytes bytes, *ptaken taken branches fetched, queue
 * tail *ptail), false when fetch is done for the cycle. */
static inline __attribute__((always_inline)) bool fetch_correct(ooo_model *restrict m, uint64_t now, uint32_t *pn,
                                                                uint32_t *pbytes, uint32_t *ptaken,
                                                                uint64_t *ptail) {
  ooo_state *st = m->st;
  const ooo_fe_config *fc = &m->cfg.fe;
  /* Loop-carried values in locals (the stores into the fetch queue would make the compiler
   * reload them from the state for every instruction); written back before anything outside
   * this file runs (memory system, observer) and at the end. */
  const uint32_t width = fc->fetch_width, max_bytes = fc->fetch_bytes;
  const uint64_t avail = now + fc->fetch_to_rename;
  /* (rename does not run during fetch: the queue head stays) */
  const uint64_t fq_lim = st->fq_head + fc->fetch_queue;
  uint32_t n = 0, taken = 0, bytes = 0;
  uint64_t tail = st->fq_tail;
  uint64_t wf = st->win_fetch; /* st->win_fetch is kept equal (stored, never reloaded) */
  while (n < width) {
    if (tail >= fq_lim) {
      st->fe_block = 1;
      break;
    }
    if (wf == st->win_fill && !oo_fill_window(m)) {
      if (!m->failed) st->fstall = FS_END;
      break;
    }
    ooo_win *w = oo_win(m, wf);
    const uint64_t pc = w->pc;
    const uint32_t sid = w->sid, nmw = w->n_mem;
    const ooo_tmpl *t = oo_tmpl_sid(m, sid);
    if (n && bytes + t->len > max_bytes) break;
    if (t->br && st->bck_tail - st->bck_head >= fc->branch_checkpoints) {
      st->fe_block = 1;
      st->fe_rid = OOO_RID_BPRED;
      break;
    }
    if (!fetch_line(m, st, now, pc, w->index, tail)) break;

    ooo_fq *q = fq_entry(m, st, tail, pc, now, avail);
    bool perfect = fc->perfect_branch;
    q->fid = w->index;
    q->tid = sid;
    q->win = wf;
    q->mod = w->mod;
    q->flags = nmw ? FQ_MEM : 0;
    if (__builtin_expect(w->mod != 0, 0)) {
      q->lat_add = w->lat_add;
      q->lat_set = w->lat_set;
      if (w->mod & MOD_PBRANCH) perfect = true;
    }
    if (nmw) { /* remember addresses for wrong-path executions of this PC */
      uint64_t *la = &m->last_addr[(size_t)sid * 2];
      const uint64_t mp = w->mem_pos;
      la[0] = m->mem[mp & m->mem_mask].addr;
      if (nmw > 1) la[1] = m->mem[(mp + 1) & m->mem_mask].addr;
    }
    st->stats.fetched[0]++;
    if (__builtin_expect(m->obs && m->obs->fetch, 0)) {
      st->fq_tail = tail;
      fetch_event(m, now, q, t, false);
    }
    n++;
    bytes += t->len;
    tail++;
    uint64_t next = pc + t->len;
    bool stop = false;
    if (t->br) fetch_branch(m, st, now, t, w, q, pc, perfect, &taken, &next, &stop);

    st->win_fetch = ++wf;
    if (q->flags & FQ_MISPRED) {
      st->wrong = true;
      st->wp_pc = next;
      st->wp_since = 0;
      if (fc->wrong_path == WP_OFF) {
        st->fstall = FS_MISPRED;
        stop = true;
      }
      if (!stop) {
        *pn = n;
        *pbytes = bytes;
        *ptaken = taken;
        *ptail = tail;
        return true;
      }
    } else if (w->next_pc != next) {
      /* an asynchronous transfer (signal, sigreturn): follow the trace */
      st->ic_line = UINT64_MAX;
    }
    if (stop) break;
  }
  st->fq_tail = tail;
  return false;
}

/* oo_fetch once fetch can go: the loops, out of line (their set-up and saved registers are paid
 * only when they run), each in its own function (the register allocation of one does not bend
 * to the other's): the wrong path from the start of the cycle or after a misprediction on the
 * correct path (its one copy, inline), the correct path. */
static __attribute__((noinline)) void fetch_run_wrong(ooo_model *restrict m, uint64_t now, uint32_t n, uint32_t bytes,
                                                      uint32_t taken, uint64_t tail) {
  fetch_wrong(m, now, n, bytes, taken, tail);
}

static __attribute__((noinline)) void fetch_run(ooo_model *restrict m, uint64_t now) {
  uint32_t n = 0, bytes = 0, taken = 0;
  uint64_t tail = m->st->fq_tail;
  if (fetch_correct(m, now, &n, &bytes, &taken, &tail)) fetch_run_wrong(m, now, n, bytes, taken, tail);
}

void oo_fetch(ooo_model *restrict m, uint64_t now) {
  ooo_state *st = m->st;
  st->fe_block = 0;
  if (st->fstall != FS_RUN || now < st->fetch_resume) return;
  /* A full fetch queue (a back-end-bound loop: rename frees a few entries a cycle, fetch is called
   * every cycle): either loop would stop at its first check (queue room) and change nothing but
   * fe_block; stop here, before their set-up. (fetch_width >= 1: the loops do reach that check.) */
  if (st->fq_tail - st->fq_head >= m->cfg.fe.fetch_queue) {
    st->fe_block = 1;
    return;
  }
  if (st->wrong) fetch_run_wrong(m, now, 0, 0, 0, st->fq_tail);
  else fetch_run(m, now);
}

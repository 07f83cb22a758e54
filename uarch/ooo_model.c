/* ooo_model.c — the out-of-order model's lifecycle: state layout, micro-op templates, the
 * timing wheel, the cycle loop with cycle skipping, checkpoints (copy/clone), observers and
 * filters. The pipeline stages live in ooo_front.c and ooo_back.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ooo_int.h"

/* ---- small helpers --------------------------------------------------------------------------- */

static uint32_t pow2_at_least(uint64_t n) {
  uint32_t p = 1;
  while (p < n) p <<= 1;
  return p;
}

static uint32_t log2u(uint32_t v) {
  uint32_t l = 0;
  while ((1u << l) < v) l++;
  return l;
}

/* ---- templates --------------------------------------------------------------------------------- */

static bool is_stack_op(const dec_insn *di) {
  if (br_is_call(di->br) || di->br == BR_RET) return true;
  static const char *const names[] = {"push", "pop", "pushfq", "popfq", "pushq", "popq", "pushf", "popf"};
  char word[16];
  size_t k = 0;
  while (k + 1 < sizeof word && di->text[k] && di->text[k] != ' ') {
    word[k] = di->text[k];
    k++;
  }
  word[k] = 0;
  for (size_t i = 0; i < WI_ARRAY_LEN(names); i++)
    if (!strcmp(word, names[i])) return true;
  return false;
}

static void tmpl_build(ooo_model *m, const dec_insn *di, uint32_t sid, ooo_tmpl *t) {
  const ooo_config *c = &m->cfg;
  memset(t, 0, sizeof *t);
  t->di = di;
  t->pc = di->pc;
  t->target = di->target;
  t->sid = sid;
  t->len = di->len ? di->len : 1;
  t->cls = di->cls < IC_NUM ? di->cls : IC_OTHER;
  t->br = di->br < BR_NUM ? di->br : BR_NONE;
  t->src = di->src;
  t->addr_src = di->addr_src;
  t->dst = di->dst;
  if (di->flags & DF_INVALID) {
    t->cls = IC_OTHER;
    t->br = BR_NONE;
    t->src = t->addr_src = t->dst = 0;
  }
  int cls = t->br ? IC_BRANCH : t->cls;
  const ooo_class_spec *s = &c->uops[cls];
  t->n_exec = (uint8_t)s->n;
  memcpy(t->exec, s->u, sizeof t->exec);
  if (di->flags & DF_SERIAL) t->flags |= TF_SERIAL; /* sfence (IC_SERIAL alone) orders stores only */
  if ((di->flags & DF_REP) && t->cls == IC_STRING) t->flags |= TF_REP;
  if (t->cls == IC_ZERO || (di->flags & DF_ZERO_IDIOM)) {
    t->src = t->addr_src = 0;
    t->flags |= TF_ZERO;
    if (c->core.zero_idiom) {
      t->n_exec = 0;
      t->flags |= TF_ELIM;
    }
  } else if (t->cls == IC_MOV && c->core.move_elim && __builtin_popcountll(t->src) == 1 &&
             __builtin_popcountll(t->dst) == 1 && strncmp(di->text, "movzx", 5) && strncmp(di->text, "movsx", 5)) {
    int r = __builtin_ctzll(t->src);
    if (r < RG_FLAGS || (r >= RG_V0 && r < RG_V0 + 16)) {
      t->n_exec = 0;
      t->flags |= TF_MOVE | TF_ELIM;
    }
  } else if (t->n_exec == 0 && t->cls == IC_NOP) {
    t->flags |= TF_ELIM;
  }
  if (c->core.stack_engine && is_stack_op(di)) {
    t->flags |= TF_STACK;
    t->src &= ~RG_BIT(RG_RSP);
    t->addr_src &= ~RG_BIT(RG_RSP);
    t->dst &= ~RG_BIT(RG_RSP);
  }
  /* Default memory accesses (wrong path): the trace's static record, else the decoder's. */
  if (sid != UINT32_MAX) {
    const trace_static *ts = trace_static_at(m->trace, sid);
    uint32_t n = ts->n_mem < 2 ? ts->n_mem : 2;
    for (uint32_t i = 0; i < n; i++) {
      if (ts->mem_store & (1u << i)) t->mem_store_def |= (uint8_t)(1u << i);
      t->mem_size_def[i] = ts->mem_size[i];
    }
    t->n_mem_def = (uint8_t)n;
  } else {
    uint32_t n = 0;
    for (uint32_t i = 0; i < di->n_mem && i < DEC_MAX_MEM && n < 2; i++) {
      if (di->mem_dir[i] & MEM_R) t->mem_size_def[n++] = di->mem_size[i];
      if ((di->mem_dir[i] & MEM_W) && n < 2) {
        t->mem_store_def |= (uint8_t)(1u << n);
        t->mem_size_def[n++] = di->mem_size[i];
      }
    }
    t->n_mem_def = (uint8_t)n;
  }
  for (uint32_t i = 0; i < 2; i++)
    if (!t->mem_size_def[i]) t->mem_size_def[i] = 8;
  const regset_t int_regs = 0xffffULL, vec_regs = (0xffffULL << RG_V0) | (0xffULL << RG_ST0);
  bool elim = (t->flags & TF_ELIM) != 0;
  t->n_int = elim ? 0 : (uint8_t)__builtin_popcountll(t->dst & int_regs);
  t->n_vec = elim ? 0 : (uint8_t)__builtin_popcountll(t->dst & vec_regs);
  t->n_dst = (uint8_t)__builtin_popcountll(t->dst);
  t->n_src = (uint8_t)__builtin_popcountll(t->src | t->addr_src);
  oo_plan_static(m, t);
}

const ooo_tmpl *oo_tmpl_build_sid(ooo_model *m, uint32_t sid) {
  tmpl_build(m, trace_decoded(m->trace, sid), sid, &m->tmpl[sid]);
  m->tmpl_ok[sid] = 1;
  return &m->tmpl[sid];
}

static const ooo_tmpl *tmpl_pc_slow(ooo_model *m, uint64_t pc) {
  uint32_t *v = map64_get(&m->wp_map, pc);
  if (v) {
    if (*v == OOO_NIL) return NULL;
    if (*v & 0x80000000u) return oo_tmpl_sid(m, *v & 0x7fffffffu);
    return &m->wp_blk[*v >> 8][*v & 255];
  }
  uint32_t sid = trace_sid_of(m->trace, pc);
  if (sid != UINT32_MAX) {
    map64_put(&m->wp_map, pc, sid | 0x80000000u);
    return oo_tmpl_sid(m, sid);
  }
  const dec_insn *di = dec_cache_get(m->dcache, pc);
  if (!di || (di->flags & DF_INVALID)) {
    map64_put(&m->wp_map, pc, OOO_NIL);
    return NULL;
  }
  size_t i = m->wp_n++;
  if ((i >> 8) >= m->wp_nblk) {
    m->wp_blk = xrealloc(m->wp_blk, (m->wp_nblk + 1) * sizeof *m->wp_blk);
    m->wp_blk[m->wp_nblk++] = xmalloc(256 * sizeof(ooo_tmpl));
  }
  ooo_tmpl *t = &m->wp_blk[i >> 8][i & 255];
  tmpl_build(m, di, UINT32_MAX, t);
  map64_put(&m->wp_map, pc, (uint32_t)i);
  return t;
}

const ooo_tmpl *oo_tmpl_pc(ooo_model *m, uint64_t pc) {
  if (!pc) return NULL;
  uint32_t k = oo_tc_slot(pc);
  if (m->tc_pc[k] == pc + 1) return m->tc_t[k];
  const ooo_tmpl *t = tmpl_pc_slow(m, pc);
  m->tc_pc[k] = pc + 1;
  m->tc_t[k] = t;
  return t;
}

/* ---- timing wheel ------------------------------------------------------------------------------- */

static uint64_t wheel_next(const ooo_model *m, uint64_t now) {
  if (!m->st->wheel_n) return UINT64_MAX;
  uint32_t start = (uint32_t)(now + 1) & (OOO_WHEEL - 1);
  uint32_t w0 = start >> 6, nw = OOO_WHEEL / 64;
  for (uint32_t k = 0; k <= nw; k++) {
    uint32_t w = (w0 + k) % nw;
    uint64_t bits = m->wheel_bits[w];
    if (k == 0) bits &= ~0ULL << (start & 63);
    else if (k == nw) bits &= (start & 63) ? ((1ULL << (start & 63)) - 1) : 0;
    if (bits) {
      uint32_t b = w * 64 + (uint32_t)__builtin_ctzll(bits);
      return now + 1 + ((b - start) & (OOO_WHEEL - 1));
    }
  }
  return UINT64_MAX;
}

/* ---- memory-system callbacks ----------------------------------------------------------------------- */

static void mem_cb(void *ctx, uint32_t tag, uint64_t cycle) {
  ooo_model *m = ctx;
  m->mem_cbs++;
  switch (tag >> 30) {
  case TAG_LOAD: oo_load_done(m, tag, cycle); break;
  case TAG_STORE: oo_store_done(m, tag, cycle); break;
  default: oo_icache_done(m, tag, cycle); break;
  }
}

static void mem_obs_fwd(void *ctx, const mem_event *e) {
  ooo_model *m = ctx;
  if (e->kind == MEV_MISS && e->fid == m->cur_fid && !e->prefetch) m->cur_miss |= 1u << e->level;
  if (m->obs && m->obs->mem) m->obs->mem(m->obs_ctx, e);
}

/* ---- creation ------------------------------------------------------------------------------------ */

typedef struct lay {
  size_t off;
} lay;

static size_t lay_add(lay *l, size_t bytes) {
  size_t o = (l->off + 63) & ~(size_t)63;
  l->off = o + bytes;
  return o;
}

ooo_model *ooo_new(const ooo_config *cfg, const trace_t *t, unsigned flags, wi_err *err) {
  if (ooo_config_check(cfg, err)) return NULL;
  ooo_model *m = xcalloc(1, sizeof *m);
  m->cfg = *cfg;
  m->trace = t;
  m->flags = flags;
  m->binds = !(flags & OOO_NO_BINDINGS);
  const ooo_config *c = &m->cfg;
  m->n_static = trace_get_info(t)->n_static;
  m->bp = bp_ops_of(c->bp.type);
  bp_geom_init(&m->geom, &m->cfg.bp);
  m->line_bytes = mem_line_bytes(&c->mem);
  m->line_shift = log2u(m->line_bytes);
  m->l1d_lat = c->mem.l1d.latency;
  m->l2_lat = c->mem.l2.latency;
  m->llc_lat = c->mem.llc.latency;
  m->l1i_lat = c->mem.l1i.latency;
  m->ras_depth = c->bp.ras_depth;

  /* Sizes. */
  uint32_t rob_ring = pow2_at_least(c->core.rob);
  m->rob_mask = rob_ring - 1;
  uint32_t fq = pow2_at_least((uint64_t)c->fe.fetch_queue + 1); /* > capacity: see fetch_event */
  m->fq_mask = fq - 1;
  m->win_cap = c->core.rob + c->fe.fetch_queue + 64;
  uint32_t win = pow2_at_least(m->win_cap);
  m->win_mask = win - 1;
  uint32_t memr = pow2_at_least((uint64_t)win * 2 + 64);
  m->mem_mask = memr - 1;
  uint32_t U = pow2_at_least((uint64_t)c->core.rob * 2 + 2 * OOO_MAX_UOPS);
  if (U < 64) U = 64; /* (U * sizeof(ooo_uop) fits ooo_map.off: rob is at most 2000) */
  m->uop_mask = U - 1;
  m->uop_bits = log2u(U);
  m->nwords = U / 64;
  m->link_n = U * 4;
  uint32_t undo = pow2_at_least((uint64_t)c->core.rob * 4 + 128);
  m->undo_mask = undo - 1;
  m->lq_mask = pow2_at_least(c->core.lq) - 1;
  m->sq_mask = pow2_at_least(c->core.sq) - 1;
  uint32_t nb = pow2_at_least(c->fe.branch_checkpoints);
  m->bck_mask = nb - 1;
  if (c->core.unified_sched) {
    m->sched_cap[OOO_POOL_MATH] = c->core.sched_math;
    m->pool_of[OOO_UOP_EXEC] = m->pool_of[OOO_UOP_LOAD] = m->pool_of[OOO_UOP_STA] = m->pool_of[OOO_UOP_STD] = OOO_POOL_MATH;
    uint32_t left = c->core.sched_math - OOO_MAX_CLASS_UOPS;
    m->max_st = WI_MIN(OOO_MAX_ST, WI_MIN(c->core.sq, (left - 1) / 2));
    m->max_ld = WI_MIN(OOO_MAX_LD, WI_MIN(c->core.lq, left - 2 * m->max_st));
  } else {
    m->sched_cap[OOO_POOL_MATH] = c->core.sched_math;
    m->sched_cap[OOO_POOL_LOAD] = c->core.sched_load;
    m->sched_cap[OOO_POOL_STORE] = c->core.sched_store;
    m->pool_of[OOO_UOP_EXEC] = OOO_POOL_MATH;
    m->pool_of[OOO_UOP_LOAD] = OOO_POOL_LOAD;
    m->pool_of[OOO_UOP_STA] = m->pool_of[OOO_UOP_STD] = OOO_POOL_STORE;
    m->max_ld = WI_MIN(OOO_MAX_LD, WI_MIN(c->core.lq, c->core.sched_load));
    m->max_st = WI_MIN(OOO_MAX_ST, WI_MIN(c->core.sq, c->core.sched_store / 2));
  }
  if (m->max_ld < 1) m->max_ld = 1;
  if (m->max_st < 1) m->max_st = 1;
  /* port_key holds a queue length in 11 bits: it never exceeds the scheduler entries in all;
   * rename's reference path (OOO_NO_LEAN) keeps the walk (tests compare the two choices) */
  uint32_t sched_all = 0;
  for (int p = 0; p < OOO_NPOOL; p++) sched_all += m->sched_cap[p];
  m->port_vec = c->ports.count <= OOO_VPORTS && sched_all < 2047 && !(flags & OOO_NO_LEAN);
  for (uint32_t p = 0; p < OOO_VPORTS; p++) m->ldv[p] = (c->ports.load >> p & 1) ? 0 : 0x7fff;
  m->vnot_load = m->port_vec && __builtin_popcount(c->ports.load) > 2 ? m->ldv : NULL;

  /* Layout of the state block. */
  lay l = {0};
  size_t o_st = lay_add(&l, sizeof(ooo_state));
  size_t o_win = lay_add(&l, (size_t)win * sizeof(ooo_win));
  size_t o_mem = lay_add(&l, (size_t)memr * sizeof(trace_mem));
  size_t o_fq = lay_add(&l, (size_t)fq * sizeof(ooo_fq));
  size_t o_bck = lay_add(&l, (size_t)nb * sizeof(ooo_bck));
  size_t o_bras = c->bp.ras_repair == RAS_REPAIR_FULL ? lay_add(&l, (size_t)nb * c->bp.ras_depth * 8) : 0;
  size_t o_ring = lay_add(&l, BP_RING_BYTES);
  size_t o_bp = lay_add(&l, m->bp->state_bytes(&c->bp));
  size_t o_btb = lay_add(&l, bp_btb_bytes(&c->bp));
  size_t o_ind = lay_add(&l, bp_ind_bytes(&c->bp));
  size_t o_conf = lay_add(&l, bp_conf_bytes(&c->bp));
  size_t o_ras = lay_add(&l, (size_t)c->bp.ras_depth * 8);
  size_t o_rob = lay_add(&l, (size_t)rob_ring * sizeof(ooo_rob));
  size_t o_uops = lay_add(&l, (size_t)U * sizeof(ooo_uop));
  size_t o_links = lay_add(&l, (size_t)m->link_n * sizeof(ooo_link));
  size_t o_map = lay_add(&l, RG_NUM * sizeof(ooo_map));
  size_t o_undo = lay_add(&l, (size_t)undo * sizeof(ooo_undo));
  size_t o_sf[OOO_NPOOL];
  for (int p = 0; p < OOO_NPOOL; p++) o_sf[p] = lay_add(&l, (size_t)(m->sched_cap[p] + 1) * sizeof(uint16_t));
  size_t o_rdy = lay_add(&l, (size_t)OOO_MAX_PORTS * m->nwords * 8);
  size_t o_ublk = lay_add(&l, (size_t)OOO_MAX_PORTS * m->nwords * 8);
  size_t o_wheel = lay_add(&l, OOO_WHEEL * sizeof(uint32_t));
  size_t o_wbits = lay_add(&l, OOO_WHEEL / 8);
  size_t o_lq = lay_add(&l, (size_t)(m->lq_mask + 1) * 8);
  size_t o_sq = lay_add(&l, (size_t)(m->sq_mask + 1) * sizeof(ooo_sq));
  size_t o_mdpw = lay_add(&l, (size_t)(m->lq_mask + 1) * sizeof(uint32_t));
  size_t o_mbs = lay_add(&l, (size_t)(m->lq_mask + 1) * sizeof(uint32_t));
  size_t o_mbq = lay_add(&l, (size_t)(m->lq_mask + 1) * sizeof(uint64_t));
  size_t o_mdp = lay_add(&l, (size_t)1 << c->core.mdp_bits);
  size_t o_sfilt = lay_add(&l, OOO_SFILT * sizeof(uint16_t));
  size_t o_sflast = lay_add(&l, OOO_SFLAST * sizeof(uint64_t));
  size_t o_unit = lay_add(&l, (size_t)OOO_MAX_PORTS * IC_NUM * 8);
  size_t o_last = lay_add(&l, (size_t)m->n_static * 2 * 8);
  size_t o_dsb = lay_add(&l, (size_t)(c->fe.uop_cache_lines ? c->fe.uop_cache_lines : 1) * 8);
  size_t o_sids = (flags & OOO_SID_STATS) ? lay_add(&l, (size_t)m->n_static * sizeof(ooo_sid_stats)) : 0;
  m->blk_bytes = (l.off + 63) & ~(size_t)63;
  if (posix_memalign((void **)&m->blk, 64, m->blk_bytes)) wi_die(1, "out of memory allocating %zu bytes", m->blk_bytes);
  memset(m->blk, 0, m->blk_bytes);
  uint8_t *b = m->blk;
  m->st = (ooo_state *)(b + o_st);
  m->win = (ooo_win *)(b + o_win);
  m->mem = (trace_mem *)(b + o_mem);
  m->fq = (ooo_fq *)(b + o_fq);
  m->bck = (ooo_bck *)(b + o_bck);
  m->bck_ras = o_bras ? (uint64_t *)(b + o_bras) : NULL;
  m->hist_ring = b + o_ring;
  m->bp_state = b + o_bp;
  m->btb = b + o_btb;
  m->ind = b + o_ind;
  m->conf = b + o_conf;
  m->ras_e = (uint64_t *)(b + o_ras);
  m->rob = (ooo_rob *)(b + o_rob);
  m->uops = (ooo_uop *)(b + o_uops);
  m->links = (ooo_link *)(b + o_links);
  m->map = (ooo_map *)(b + o_map);
  m->undo = (ooo_undo *)(b + o_undo);
  for (int p = 0; p < OOO_NPOOL; p++) m->sched_free[p] = (uint16_t *)(b + o_sf[p]);
  m->rdy = (uint64_t *)(b + o_rdy);
  m->ublk = (uint64_t *)(b + o_ublk);
  for (uint32_t p = 0; p < OOO_MAX_PORTS; p++) {
    m->rdy_of[p] = m->rdy + (size_t)p * m->nwords;
    m->ublk_of[p] = m->ublk + (size_t)p * m->nwords;
  }
  m->wheel = (uint32_t *)(b + o_wheel);
  m->wheel_bits = (uint64_t *)(b + o_wbits);
  m->lq = (uint64_t *)(b + o_lq);
  m->sq = (ooo_sq *)(b + o_sq);
  m->mdpw = (uint32_t *)(b + o_mdpw);
  m->mblk_slot = (uint32_t *)(b + o_mbs);
  m->mblk_seq = (uint64_t *)(b + o_mbq);
  m->mdp = b + o_mdp;
  m->sfilt = (uint16_t *)(b + o_sfilt);
  m->sflast = (uint64_t *)(b + o_sflast);
  m->unit_free = (uint64_t *)(b + o_unit);
  m->last_addr = (uint64_t *)(b + o_last);
  m->dsb = (uint64_t *)(b + o_dsb);
  m->sid_stats = o_sids ? (ooo_sid_stats *)(b + o_sids) : NULL;

  /* Initial state. */
  ooo_state *st = m->st;
  st->ic_line = UINT64_MAX;
  st->fe_by = OOO_FID_NONE;
  st->fe_rid = OOO_RID_FETCH;
  st->serial_fid = OOO_FID_NONE;
  st->last_commit_fid = OOO_FID_NONE;
  st->mblk_retry = UINT64_MAX;
  st->int_free = c->core.int_prf - 16;
  st->vec_free = c->core.vec_prf - 16;
  for (uint32_t i = 0; i < m->link_n; i++) m->links[i].next = i + 1 < m->link_n ? i + 1 : OOO_NIL;
  st->link_free = 0;
  st->link_avail = m->link_n;
  for (int p = 0; p < OOO_NPOOL; p++)
    for (uint32_t i = 0; i < m->sched_cap[p]; i++) m->sched_free[p][i] = (uint16_t)(m->sched_cap[p] - 1 - i);
  for (uint32_t i = 0; i < OOO_WHEEL; i++) m->wheel[i] = OOO_NIL;
  for (uint32_t i = 0; i < OOO_MAX_PORTS; i++) {
    st->port_last_fid[i] = OOO_FID_NONE;
    st->ublk_until[i] = UINT64_MAX;
  }
  for (uint32_t i = 0; i < OOO_VPORTS; i++) st->port_key[i] = (uint16_t)i; /* nothing queued */
  bp_hist_init(&st->hist, m->hist_ring);
  m->bp->init(m->bp_state, &c->bp);
  ras_init(&st->ras, m->ras_e, c->bp.ras_depth);

  /* Not state. */
  m->cur = trace_cursor_new(t, 0);
  m->rd = batch_pf_trace(m->cur, (flags & OOO_READER) != 0);
  m->dcache = dec_cache_new(t);
  m->tmpl = xcalloc(m->n_static ? m->n_static : 1, sizeof(ooo_tmpl));
  m->tmpl_ok = xcalloc(m->n_static ? m->n_static : 1, 1);
  map64_init(&m->wp_map, 1024);
  m->memsys = mem_new(&m->cfg.mem, mem_cb, m);
  m->cur_fid = OOO_FID_NONE;
  if (flags & OOO_SID_STATS) {
    m->lvl_track = true;
    mem_set_observer(m->memsys, mem_obs_fwd, m);
    mem_set_observer_kinds(m->memsys, 1u << MEV_MISS); /* no observer yet: only misses feed the stats */
  }
  return m;
}

void ooo_free(ooo_model *m) {
  if (!m) return;
  mem_free(m->memsys);
  batch_pf_free(m->rd); /* stops the reader before its cursor goes */
  trace_cursor_free(m->cur);
  dec_cache_free(m->dcache);
  free(m->tmpl);
  free(m->tmpl_ok);
  for (size_t i = 0; i < m->wp_nblk; i++) free(m->wp_blk[i]);
  free(m->wp_blk);
  map64_free(&m->wp_map);
  free(m->fblk);
  free(m->blk);
  free(m);
}

/* ---- the cycle loop ----------------------------------------------------------------------------------- */

/* The next cycle anything can happen; *mem_only: only the memory system has an event then (every
 * core event is later). */
static uint64_t next_cycle(ooo_model *m, uint64_t now, bool *mem_only, bool core_same) {
  ooo_state *st = m->st;
  uint64_t next;
  *mem_only = false;
  if (core_same) {
    next = m->core_next;
  } else {
    next = oo_backend_next(m, now);
    if (next == now + 1) return next;
    if (st->fstall == FS_RUN && !st->fe_block) {
      uint64_t f = st->fetch_resume > now + 1 ? st->fetch_resume : now + 1;
      if (f < next) next = f;
    }
    uint64_t w = wheel_next(m, now);
    if (w < next) next = w;
    if (st->mblk_retry < next) next = st->mblk_retry > now ? st->mblk_retry : now + 1;
  }
  uint64_t e = mem_next_event(m->memsys);
  if (e != UINT64_MAX) {
    if (e <= now) e = now + 1;
    if (e < next) {
      /* the core part, for the cycle stepped only for the memory system (see step) */
      m->core_next = next;
      m->core_next_set = !(m->flags & OOO_NO_LEAN);
      next = e;
      *mem_only = true;
    }
  }
  return next;
}

static void check_finished(ooo_model *m) {
  ooo_state *st = m->st;
  if (st->trace_end && st->win_head == st->win_fill && st->rob_head == st->rob_tail && !st->wrong) {
    st->finished = true;
    st->stats.cycles = st->last_commit_cycle + 1;
  }
}

/* Cycles [from, from + n) were skipped: nothing changed, so rename was stopped for the same
 * reason as in the last simulated cycle, with nothing renamed. */
static void account_idle(ooo_model *m, uint64_t from, uint64_t n) {
  ooo_state *st = m->st;
  if (!n) return;
  uint32_t w = m->cfg.core.rename_width;
  int cat = oo_slot_category(m, st->disp_stop == OB_WIDTH ? OB_NONE : st->disp_stop, 0);
  st->stats.slots[cat] += n * w;
  st->stats.skipped_cycles += n;
  if (m->obs && m->obs->slots) {
    ooo_slot_ev e;
    memset(&e, 0, sizeof e);
    e.cycle = from;
    e.n_cycles = n;
    e.slots[cat] = (uint8_t)w;
    m->obs->slots(m->obs_ctx, &e);
  }
}

/* The core stages of cycle `now` (after the memory system advanced to it). */
static void step_core(ooo_model *m, uint64_t now) {
  ooo_state *st = m->st;
  /* The first checks of completion, commit, drain and issue are made here: in many cycles a
   * stage has nothing to do, and its call (saved registers, frame) costs more than the check.
   * Each does what the stage would do then (completion, drain and issue check again; commit
   * relies on them). */
  const uint32_t b = (uint32_t)now & (OOO_WHEEL - 1);
  if (m->wheel[b] != OOO_NIL) oo_complete_due(m, now);
  else m->wheel_bits[b >> 6] &= ~(1ULL << (b & 63)); /* (an empty bucket: only its bit cleared) */
  if (now >= st->mblk_retry) oo_mem_retry(m, now);
  st->wheel_floor = now + 1;
  if (st->rob_head == st->rob_tail || !m->cfg.core.commit_width) {
    st->commit_stall = OB_NONE;
  } else {
    uint8_t stall = oo_head_stall(m, oo_rob(m, st->rob_head), now);
    if (stall != OB_NONE) st->commit_stall = stall; /* the head cannot commit */
    else oo_commit(m, now);                         /* (which relies on these checks) */
  }
  if (st->sq_head != st->sq_commit) oo_drain(m, now); /* (else no committed store to write) */
  if (st->rdy_ports) oo_issue(m, now);                /* (else nothing ready) */
  oo_dispatch(m, now);
  oo_fetch(m, now);
}

static void step(ooo_model *m) {
  ooo_state *st = m->st;
  uint64_t now = st->now;
  st->wheel_floor = now;
  uint64_t cbs = m->mem_cbs;
  bool core_same = false;
  mem_advance(m->memsys, now);
  if (st->mem_wake && m->mem_cbs == cbs && !m->obs && st->disp_stop != OB_NONE) {
    /* Only the memory system acted, without calling back: no wheel event, refused-load retry,
     * commit, store drain, issue or fetch is due before the next core event, and rename stays
     * stopped for the reason it stopped in the last stepped cycle (it stopped: disp_wait != 0, or
     * this cycle would not have been skipped to). Account the cycle as the stages would: a
     * dispatch stall and unfilled slots, as for a skipped cycle but counted as simulated. */
    st->wheel_floor = now + 1;
    m->mem_only_cycles++;
    /* commit would stop at the head as in the last stepped cycle, unless that cycle stopped at the
     * commit width: then the new head names the stall */
    if (st->rob_head < st->rob_tail) st->commit_stall = oo_head_stall(m, oo_rob(m, st->rob_head), now);
    oo_rename_lost(m, st->disp_stop);
    /* next_cycle's core part is the one the last cycle found (core_next, > now): each of its
     * terms is a cycle of the core's own state, which did not change, taken at least now + 1
     * (not with OOO_NO_LEAN) */
    core_same = m->core_next_set;
  } else {
    step_core(m, now);
    if (m->failed) return;
    check_finished(m);
    if (st->finished) return;
  }
  bool mem_only;
  uint64_t next = next_cycle(m, now, &mem_only, core_same);
  st->mem_wake = (uint8_t)(mem_only && !m->obs);
  if (next == UINT64_MAX) {
    m->failed = true;
    const ooo_rob *h = st->rob_head < st->rob_tail ? &m->rob[st->rob_head & m->rob_mask] : NULL;
    wi_fail(&m->err, WI_ESTATE,
            "ooo: the model deadlocked at cycle %llu (ROB %llu entries, head fid %llu pc 0x%llx, fetch state %d, "
            "wrong path %d, queue %llu, window %llu/%llu/%llu, trace end %d, committed %llu, rename stop %s/%d)",
            (unsigned long long)now, (unsigned long long)(st->rob_tail - st->rob_head),
            h ? (unsigned long long)h->fid : 0ULL, h ? (unsigned long long)h->pc : 0ULL, st->fstall, st->wrong,
            (unsigned long long)(st->fq_tail - st->fq_head), (unsigned long long)st->win_head,
            (unsigned long long)st->win_fetch, (unsigned long long)st->win_fill, st->trace_end,
            (unsigned long long)st->stats.insns, ooo_bind_name(st->disp_stop), st->disp_wait);
    return;
  }
  uint64_t dt = next - now;
  st->stats.rob_occupancy += (uint64_t)st->rob_slots * dt;
  if (st->commit_stall) st->stats.commit_stall[st->commit_stall] += dt;
  if (st->disp_stop && dt > 1) st->stats.dispatch_stall[st->disp_stop] += dt - 1;
  account_idle(m, now + 1, dt - 1);
  st->now = next;
  st->stats.cycles = next;
}

wi_rc ooo_run(ooo_model *m, uint64_t max_commits, wi_err *err) {
  ooo_state *st = m->st;
  if (m->failed) {
    if (err) *err = m->err;
    return m->err.rc ? m->err.rc : WI_ESTATE;
  }
  uint64_t target = max_commits == UINT64_MAX || st->stats.insns + max_commits < st->stats.insns
                        ? UINT64_MAX
                        : st->stats.insns + max_commits;
  m->core_next_set = false; /* (the model may have changed since the last run) */
  while (!st->finished && st->stats.insns < target) {
    step(m);
    if (m->failed) {
      if (err) *err = m->err;
      return m->err.rc;
    }
  }
  return WI_OK;
}

bool ooo_finished(const ooo_model *m) { return m->st->finished; }
uint64_t ooo_committed(const ooo_model *m) { return m->st->stats.insns; }
uint64_t ooo_cycles(const ooo_model *m) { return m->st->stats.cycles; }
uint64_t ooo_mem_only_cycles(const ooo_model *m) { return m->mem_only_cycles; }

uint64_t ooo_fetched_index(const ooo_model *m) {
  const ooo_state *st = m->st;
  if (st->win_fetch < st->win_fill) return m->win[st->win_fetch & m->win_mask].index;
  return st->next_index;
}

/* ---- checkpoints ---------------------------------------------------------------------------------------- */

wi_rc ooo_copy(ooo_model *dst, const ooo_model *src, wi_err *err) {
  if (dst == src) return WI_OK;
  if (dst->trace != src->trace || dst->blk_bytes != src->blk_bytes || ((dst->flags ^ src->flags) & ~(unsigned)OOO_READER) ||
      memcmp(&dst->cfg, &src->cfg, sizeof dst->cfg))
    return wi_fail(err, WI_EINVAL, "ooo_copy: the models differ in configuration, trace or flags");
  memcpy(dst->blk, src->blk, src->blk_bytes);
  mem_copy(dst->memsys, src->memsys);
  dst->st->need_seek = true;
  dst->batch.n = 0;
  dst->batch_pos = 0;
  dst->failed = src->failed;
  dst->err = src->err;
  dst->hp_valid = false;
  dst->core_next_set = false;
  return WI_OK;
}

ooo_model *ooo_clone(const ooo_model *src, wi_err *err) {
  ooo_model *m = ooo_new(&src->cfg, src->trace, src->flags & ~(unsigned)OOO_READER, err);
  if (!m) return NULL;
  if (ooo_copy(m, src, err)) {
    ooo_free(m);
    return NULL;
  }
  return m;
}

size_t ooo_state_bytes(const ooo_model *m) { return m->blk_bytes; }

/* ---- observers, filters, accessors ------------------------------------------------------------------------ */

wi_rc ooo_attach_observer(ooo_model *m, const ooo_observer *obs, void *ctx, wi_err *err) {
  if (obs && !m->binds)
    return wi_fail(err, WI_EINVAL, "ooo_attach_observer: the model was made with OOO_NO_BINDINGS (no observer)");
  ooo_set_observer(m, obs, ctx);
  return WI_OK;
}

void ooo_set_observer(ooo_model *m, const ooo_observer *obs, void *ctx) {
  if (obs && !m->binds) { /* its in-flight instructions have no bindings to report */
    fprintf(stderr, "whatif: ooo_set_observer on a model made with OOO_NO_BINDINGS\n");
    abort();
  }
  m->obs = obs;
  m->obs_ctx = ctx;
  m->lvl_track = (obs && obs->mem) || (m->flags & OOO_SID_STATS);
  if (m->lvl_track) mem_set_observer(m->memsys, mem_obs_fwd, m);
  else mem_set_observer(m->memsys, NULL, NULL);
  /* per-sid stats only need this flow's misses: spare building every other event */
  if (m->lvl_track && !(obs && obs->mem)) mem_set_observer_kinds(m->memsys, 1u << MEV_MISS);
}

void ooo_set_filter(ooo_model *m, ooo_filter_fn fn, void *ctx) {
  ooo_state *st = m->st;
  m->filter = fn;
  m->filter_ctx = ctx;
  m->hp_valid = false;
  st->blk_lane = 0; /* (rename's blocked memo, as the plan) */
  /* Re-read (and re-filter) every correct-path instruction not fetched yet. */
  if (st->win_fetch < st->win_fill) {
    const ooo_win *w = &m->win[st->win_fetch & m->win_mask];
    st->next_index = w->index;
    st->mem_fill = w->mem_pos;
    st->win_fill = st->win_fetch;
    st->trace_end = false;
    st->need_seek = true;
    m->batch.n = 0;
    m->batch_pos = 0;
    if (st->fstall == FS_END) st->fstall = FS_RUN;
  }
}

const ooo_config *ooo_get_config(const ooo_model *m) { return &m->cfg; }
const ooo_stats *ooo_get_stats(const ooo_model *m) { return &m->st->stats; }
const ooo_sid_stats *ooo_get_sid_stats(const ooo_model *m) { return m->sid_stats; }
const mem_sys *ooo_get_mem(const ooo_model *m) { return m->memsys; }
mem_sys *ooo_mem_mut(ooo_model *m) { return m->memsys; }

void ooo_get_topdown(const ooo_model *m, ooo_topdown *td) {
  const uint64_t *s = m->st->stats.slots;
  uint64_t tot = 0;
  for (int i = 0; i < OOO_SLOT_NUM; i++) tot += s[i];
  memset(td, 0, sizeof *td);
  if (!tot) return;
  double d = (double)tot;
  td->retiring = (double)s[OOO_SLOT_RETIRING] / d;
  td->branch_mispredicts = (double)s[OOO_SLOT_BAD_BRANCH] / d;
  td->machine_clears = (double)s[OOO_SLOT_BAD_CLEAR] / d;
  td->bad_speculation = td->branch_mispredicts + td->machine_clears;
  td->fe_latency = (double)s[OOO_SLOT_FE_LATENCY] / d;
  td->fe_bandwidth = (double)s[OOO_SLOT_FE_BANDWIDTH] / d;
  td->frontend_bound = td->fe_latency + td->fe_bandwidth;
  td->memory_bound = (double)s[OOO_SLOT_BE_MEMORY] / d;
  td->core_bound = (double)s[OOO_SLOT_BE_CORE] / d;
  td->backend_bound = td->memory_bound + td->core_bound;
}

/* memsys.c — the memory hierarchy: set-associative non-blocking caches with MSHRs, write-back
 * and (non-)inclusive LLC, prefetcher hooks, TLBs, and the event queue that drives fills;
 * DRAM lives in mem_dram.c, policies in mem_repl.c and mem_pf.c, reports in mem_stats.c.
 *
 * Latency model (all in core cycles, load-to-use from the cycle of the request):
 *   L1 hit          l1.latency
 *   L2 hit          l2.latency             (the L1 miss holds an L1 MSHR until then)
 *   LLC hit         llc.latency
 *   DRAM            llc.latency + DRAM queueing + row timing + burst + dram.base_latency
 *   + port queueing at L2/LLC when more than `bandwidth` requests arrive in one cycle
 *   + TLB: an L1 TLB miss adds stlb.latency, an STLB miss additionally walk_latency (a fixed
 *     page-walk time; the walk's own memory accesses are not modelled).
 * Inclusion: an inclusive LLC is filled with every line coming from memory and, when it evicts
 * a line, invalidates the L1/L2 copies (dirty ones go to DRAM). A non-inclusive LLC (Intel
 * since Skylake-SP) is filled with L2 victims, clean or dirty; memory fills go to the L2 and
 * L1 only. L1 and L2 are non-inclusive of each other (an L1 miss fills both).
 * Lower levels are looked up when the miss is accepted (eagerly): an L1 miss that hits the L2
 * knows its fill cycle at once (MEM_DONE); only misses that reach DRAM are MEM_PENDING until
 * the DRAM scheduler issues them. MSHRs of consecutive levels for one line form a chain that
 * fills in the same cycle (see mem_int.h).
 *
 * All mutable state lives in one block (mem_state + arrays) that mem_copy copies with one
 * memcpy; nothing is allocated after mem_new.
 *
 * Golden Cove / Sapphire Rapids defaults, ready to paste into a machine configuration
 * (cycles assume a 3.0 GHz core clock, SPR's all-core turbo; rescale the DRAM and LLC
 * figures for another clock):
 *
 *   mem = {
 *     l1i = { size = 32768, ways = 8, line = 64,  -- GLC L1I 32 KiB 8-way (Intel optimization
 *             latency = 4,                        -- manual, Golden Cove section); latency and
 *             mshrs = 16, bandwidth = 1,          -- MSHRs not published: assumed (set latency
 *             replacement = "lru",                -- to 1 if the front-end pipeline already
 *             prefetcher = "next_line", pf_degree = 2, inclusive = false },  -- counts it)
 *     l1d = { size = 49152, ways = 12, line = 64, -- GLC L1D 48 KiB 12-way, 5-cycle load-to-use
 *             latency = 5, mshrs = 16,            -- (Intel opt. manual; Chips and Cheese "Popping
 *             bandwidth = 5,                      -- the Hood on Golden Cove"); 16 fill buffers;
 *             replacement = "lru",                -- 3 loads + 2 stores per cycle
 *             prefetcher = "ip_stride", pf_degree = 2, inclusive = false }, -- DCU IP prefetcher
 *     l2  = { size = 2097152, ways = 16, line = 64, -- SPR L2 2 MiB 16-way (Intel SPR
 *             latency = 16, mshrs = 48,           -- disclosures); ~16 cycles (Chips and Cheese
 *             bandwidth = 1,                      -- "Sapphire Rapids: Golden Cove Hits
 *             replacement = "lru",                -- Servers"); 48 outstanding misses (Intel
 *             prefetcher = "stream", pf_degree = 8, inclusive = false }, -- Architecture Day
 *                                                 -- 2021); 64 B/cycle; L2 streamer
 *     llc = { size = 1966080, ways = 15, line = 64, -- one SPR LLC slice: 1.875 MiB, 15-way,
 *             latency = 100, mshrs = 64,          -- non-inclusive (Intel SPR disclosures);
 *             bandwidth = 1, replacement = "lru", -- ~33 ns ≈ 100 cycles (Chips and Cheese
 *             prefetcher = "none", pf_degree = 0, -- SPR article, approx.); MSHRs assumed.
 *             inclusive = false },                -- Non-inclusive: filled with L2 victims.
 *                          -- Intel's LLC policy is adaptive (RRIP-like since Ivy Bridge, H. Wong
 *                          -- 2013) but unpublished; plain SRRIP on a victim-filled LLC evicts
 *                          -- fresh victims before their one reuse (a 3 MiB chase: 42% DRAM
 *                          -- reads with SRRIP, 0.1% with LRU), so LRU is the neutral default.
 *                                                 -- (H. Wong, "Intel Ivy Bridge cache
 *                                                 -- replacement policy", 2013)
 *     itlb = { entries = 256, ways = 8, latency = 0 },   -- GLC ITLB 256 x 4 KiB (opt. manual)
 *     dtlb = { entries = 96, ways = 6, latency = 0 },    -- GLC load DTLB 96 entries (Intel
 *                                                        -- Architecture Day 2021); ways assumed
 *     stlb = { entries = 2048, ways = 16, latency = 7 }, -- GLC STLB 2048 entries; ~7-cycle hit
 *                                                        -- (7-cpu.com, Skylake-class); ways assumed
 *     page_bytes = 4096,
 *     walk_latency = 30,       -- page walk with paging-structure-cache hits (assumed, 7-cpu.com
 *                              -- reports 20-35 cycles on recent Intel cores)
 *     dram = { channels = 4,   -- two DDR5-4800 channels = four 32-bit sub-channels (SPR has
 *                              -- 8 channels per socket; one core sees a share)
 *              banks = 32,     -- DDR5: 8 bank groups x 4 banks (JESD79-5)
 *              row_bytes = 4096, -- 4 x8 devices per sub-channel x 1 KiB page
 *              t_cas = 50, t_rcd = 49, t_rp = 49, -- DDR5-4800B CL40-39-39 at 2400 MHz
 *                              -- (16.7/16.3/16.3 ns) in 3.0 GHz cycles
 *              t_burst = 10,   -- BL16 x 32 bits = 64 B in 3.33 ns
 *              queue = 32,     -- read (and write) queue entries per channel (assumed)
 *              base_latency = 120 }, -- controller + mesh: makes an idle row-miss load total
 *                              -- ~330 cycles ≈ 110 ns, SPR's measured idle DRAM latency
 *                              -- (Chips and Cheese SPR article, approx.)
 *   }
 */
#include "memsys.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "mem_int.h"

#define UNKNOWN UINT64_MAX

/* ---- configuration ------------------------------------------------------------------------ */

#define CF(f) offsetof(cache_config, f)
static const param_desc cache_params[] = {
    {"size", P_U32, CF(size), 256, 2147483648.0, "bytes", "capacity", NULL, NULL, NULL},
    {"ways", P_U32, CF(ways), 1, 64, "ways", "associativity", NULL, NULL, NULL},
    {"line", P_U32, CF(line), 16, 4096, "bytes", "line size (the same at every level)", NULL, NULL, NULL},
    {"latency", P_U32, CF(latency), 1, 100000, "cycles", "load-to-use latency of a hit at this level", NULL, NULL, NULL},
    {"mshrs", P_U32, CF(mshrs), 1, 4096, "entries", "miss-status holding registers (fill buffers at L1)", NULL, NULL, NULL},
    {"bandwidth", P_U32, CF(bandwidth), 0, 64, "accesses/cycle", "requests accepted per cycle (0 = unlimited)", NULL, NULL, NULL},
    {"replacement", P_ENUM, CF(replacement), 0, 0, NULL, "replacement policy", mem_repl_names, NULL, NULL},
    {"prefetcher", P_ENUM, CF(prefetcher), 0, 0, NULL, "prefetcher trained at this level", mem_pf_names, NULL, NULL},
    {"pf_degree", P_U32, CF(pf_degree), 0, MEM_PF_MAX, "lines", "lines (or strides) fetched ahead per trigger", NULL, NULL, NULL},
    {"inclusive", P_BOOL, CF(inclusive), 0, 0, NULL, "LLC only: true = filled from memory, back-invalidates L1/L2 copies on eviction; false = filled with L2 victims", NULL, NULL, NULL},
};
static const param_table cache_table = PARAM_TABLE("cache", cache_params);

#define TF(f) offsetof(tlb_config, f)
static const param_desc tlb_params[] = {
    {"entries", P_U32, TF(entries), 1, 1048576, "entries", "translations held", NULL, NULL, NULL},
    {"ways", P_U32, TF(ways), 1, 64, "ways", "associativity", NULL, NULL, NULL},
    {"latency", P_U32, TF(latency), 0, 100000, "cycles", "extra cycles on a hit at this level (0 for L1 TLBs)", NULL, NULL, NULL},
};
static const param_table tlb_table = PARAM_TABLE("tlb", tlb_params);

#define DF(f) offsetof(dram_config, f)
static const param_desc dram_params[] = {
    {"channels", P_U32, DF(channels), 1, 64, "channels", "independent channels (lines interleave across them)", NULL, NULL, NULL},
    {"banks", P_U32, DF(banks), 1, 256, "banks", "banks per channel", NULL, NULL, NULL},
    {"row_bytes", P_U32, DF(row_bytes), 64, 1048576, "bytes", "row-buffer (page) size per bank", NULL, NULL, NULL},
    {"t_cas", P_U32, DF(t_cas), 0, 100000, "cycles", "column access (read command to data)", NULL, NULL, NULL},
    {"t_rcd", P_U32, DF(t_rcd), 0, 100000, "cycles", "activate to column command", NULL, NULL, NULL},
    {"t_rp", P_U32, DF(t_rp), 0, 100000, "cycles", "precharge (closing an open row)", NULL, NULL, NULL},
    {"t_burst", P_U32, DF(t_burst), 1, 100000, "cycles", "data-bus cycles per line: the bandwidth limit", NULL, NULL, NULL},
    {"queue", P_U32, DF(queue), 1, 256, "entries", "read-queue (and write-queue) entries per channel", NULL, NULL, NULL},
    {"base_latency", P_U32, DF(base_latency), 0, 100000, "cycles", "fixed controller and interconnect overhead", NULL, NULL, NULL},
};
static const param_table dram_table = PARAM_TABLE("dram", dram_params);

#define MF(f) offsetof(mem_config, f)
static const param_desc mem_params[] = {
    {"l1i", P_TABLE, MF(l1i), 0, 0, NULL, "L1 instruction cache", NULL, &cache_table, NULL},
    {"l1d", P_TABLE, MF(l1d), 0, 0, NULL, "L1 data cache", NULL, &cache_table, NULL},
    {"l2", P_TABLE, MF(l2), 0, 0, NULL, "unified L2 cache", NULL, &cache_table, NULL},
    {"llc", P_TABLE, MF(llc), 0, 0, NULL, "last-level cache", NULL, &cache_table, NULL},
    {"itlb", P_TABLE, MF(itlb), 0, 0, NULL, "instruction TLB", NULL, &tlb_table, NULL},
    {"dtlb", P_TABLE, MF(dtlb), 0, 0, NULL, "data TLB", NULL, &tlb_table, NULL},
    {"stlb", P_TABLE, MF(stlb), 0, 0, NULL, "second-level (shared) TLB", NULL, &tlb_table, NULL},
    {"page_bytes", P_U32, MF(page_bytes), 4096, 1073741824.0, "bytes", "page size", NULL, NULL, NULL},
    {"walk_latency", P_U32, MF(walk_latency), 0, 100000, "cycles", "page walk after an STLB miss", NULL, NULL, NULL},
    {"dram", P_TABLE, MF(dram), 0, 0, NULL, "main memory", NULL, &dram_table, NULL},
};
const param_table mem_param_table = PARAM_TABLE("mem", mem_params);

void mem_config_default(mem_config *cfg) {
  memset(cfg, 0, sizeof *cfg);
  /* Values and sources: see the `mem = {...}` block at the top of this file. */
  cfg->l1i = (cache_config){32768, 8, 64, 4, 16, 1, REPL_LRU, PF_NEXT_LINE, 2, false};
  cfg->l1d = (cache_config){49152, 12, 64, 5, 16, 5, REPL_LRU, PF_IP_STRIDE, 2, false};
  cfg->l2 = (cache_config){2097152, 16, 64, 16, 48, 1, REPL_LRU, PF_STREAM, 8, false};
  cfg->llc = (cache_config){1966080, 15, 64, 100, 64, 1, REPL_LRU, PF_NONE, 0, false};
  cfg->itlb = (tlb_config){256, 8, 0};
  cfg->dtlb = (tlb_config){96, 6, 0};
  cfg->stlb = (tlb_config){2048, 16, 7};
  cfg->page_bytes = 4096;
  cfg->walk_latency = 30;
  cfg->dram = (dram_config){.channels = 4, .banks = 32, .row_bytes = 4096, .t_cas = 50,
                            .t_rcd = 49, .t_rp = 49, .t_burst = 10, .queue = 32,
                            .base_latency = 120};
}

static bool is_pow2(uint64_t x) { return x && !(x & (x - 1)); }

static unsigned log2u(uint64_t x) {
  unsigned n = 0;
  while (x > 1) {
    x >>= 1;
    n++;
  }
  return n;
}

static const char *const level_key[ML_NCACHE] = {"l1i", "l1d", "l2", "llc"};

static wi_rc check_cache(const cache_config *c, const char *name, uint32_t line, wi_err *err) {
  if (!c->ways || !c->line || !c->mshrs)
    return wi_fail(err, WI_EINVAL, "mem.%s: ways, line and mshrs must be positive", name);
  if (!is_pow2(c->line))
    return wi_fail(err, WI_EINVAL, "mem.%s.line = %u is not a power of two", name, c->line);
  if (c->line != line)
    return wi_fail(err, WI_EINVAL, "mem.%s.line = %u differs from mem.l1d.line = %u (one line size for all levels)",
                   name, c->line, line);
  uint64_t per_set = (uint64_t)c->ways * c->line;
  if (c->size % per_set)
    return wi_fail(err, WI_EINVAL, "mem.%s.size = %u is not a multiple of ways x line = %llu", name,
                   c->size, (unsigned long long)per_set);
  uint64_t sets = c->size / per_set;
  if (!is_pow2(sets))
    return wi_fail(err, WI_EINVAL, "mem.%s: %llu sets (size / (ways x line)) is not a power of two", name,
                   (unsigned long long)sets);
  if (sets >= 100000)
    return wi_fail(err, WI_EINVAL, "mem.%s: %llu sets exceeds 99999 (resource-id encoding)", name,
                   (unsigned long long)sets);
  if (c->replacement < 0 || c->replacement >= REPL_NUM)
    return wi_fail(err, WI_EINVAL, "mem.%s.replacement = %d is not a policy", name, c->replacement);
  if (c->prefetcher < 0 || c->prefetcher >= PF_NUM)
    return wi_fail(err, WI_EINVAL, "mem.%s.prefetcher = %d is not a prefetcher", name, c->prefetcher);
  if (c->pf_degree > MEM_PF_MAX)
    return wi_fail(err, WI_EINVAL, "mem.%s.pf_degree = %u exceeds %d", name, c->pf_degree, MEM_PF_MAX);
  if (c->mshrs > 4096) /* the parameter's range; MSHR links are 16-bit (mem_mshr.up) */
    return wi_fail(err, WI_EINVAL, "mem.%s.mshrs = %u exceeds 4096", name, c->mshrs);
  return WI_OK;
}

static wi_rc check_tlb(const tlb_config *t, const char *name, wi_err *err) {
  if (!t->entries || !t->ways || t->entries % t->ways)
    return wi_fail(err, WI_EINVAL, "mem.%s.entries = %u is not a positive multiple of ways = %u", name,
                   t->entries, t->ways);
  if (!is_pow2(t->entries / t->ways))
    return wi_fail(err, WI_EINVAL, "mem.%s: %u sets (entries / ways) is not a power of two", name,
                   t->entries / t->ways);
  return WI_OK;
}

wi_rc mem_config_check(const mem_config *cfg, wi_err *err) {
  const cache_config *cc[ML_NCACHE] = {&cfg->l1i, &cfg->l1d, &cfg->l2, &cfg->llc};
  for (int i = 0; i < ML_NCACHE; i++) {
    wi_rc rc = check_cache(cc[i], level_key[i], cfg->l1d.line, err);
    if (rc) return rc;
  }
  if (cfg->l1i.inclusive || cfg->l1d.inclusive || cfg->l2.inclusive)
    return wi_fail(err, WI_EINVAL, "mem: `inclusive` is only supported at the llc level");
  wi_rc rc;
  if ((rc = check_tlb(&cfg->itlb, "itlb", err)) || (rc = check_tlb(&cfg->dtlb, "dtlb", err)) ||
      (rc = check_tlb(&cfg->stlb, "stlb", err)))
    return rc;
  if (!is_pow2(cfg->page_bytes) || cfg->page_bytes < cfg->l1d.line)
    return wi_fail(err, WI_EINVAL, "mem.page_bytes = %u is not a power of two >= the line size", cfg->page_bytes);
  const dram_config *d = &cfg->dram;
  if (!d->channels || !d->banks || !d->queue || !d->t_burst)
    return wi_fail(err, WI_EINVAL, "mem.dram: channels, banks, queue and t_burst must be positive");
  if (d->row_bytes % cfg->l1d.line || d->row_bytes < cfg->l1d.line)
    return wi_fail(err, WI_EINVAL, "mem.dram.row_bytes = %u is not a multiple of the line size %u",
                   d->row_bytes, cfg->l1d.line);
  if (d->queue >= 500 || d->banks >= 1000 || d->channels >= 1000)
    return wi_fail(err, WI_EINVAL, "mem.dram: queue < 500, banks and channels < 1000 (resource ids)");
  return WI_OK;
}

uint32_t mem_line_bytes(const mem_config *cfg) { return cfg->l1d.line; }

/* ---- creation, copy ---------------------------------------------------------------------- */

/* Reserve n bytes (64-byte aligned) in the block layout; returns the offset. */
static size_t lay(size_t *off, size_t n) {
  size_t o = (*off + 63) & ~(size_t)63;
  *off = o + n;
  return o;
}

static const cache_config *level_cfg(const mem_config *cfg, int l) {
  return l == ML_L1I ? &cfg->l1i : l == ML_L1D ? &cfg->l1d : l == ML_L2 ? &cfg->l2 : &cfg->llc;
}

/* Lay out (blk == NULL: only measure) and point every array of m into blk. */
static size_t layout(mem_sys *m, uint8_t *blk) {
  const mem_config *cfg = m->cfg;
  size_t off = 0, o;
#define PLACE(ptr, n)                      \
  do {                                     \
    o = lay(&off, (n));                    \
    if (blk) (ptr) = (void *)(blk + o);    \
  } while (0)
  PLACE(m->st, sizeof(mem_state));
  uint32_t total_mshrs = 0;
  for (int l = 0; l < ML_NCACHE; l++) {
    mem_cache *c = &m->c[l];
    const cache_config *cc = level_cfg(cfg, l);
    c->cfg = cc;
    c->level = l;
    c->ways = cc->ways;
    c->sets = cc->size / (cc->ways * cc->line);
    c->set_mask = c->sets - 1;
    c->line_shift = log2u(cc->line);
    size_t lines = (size_t)c->sets * c->ways;
    PLACE(c->tags, lines * sizeof(uint64_t));
    c->hstride = (c->ways + MEM_HB_CHUNK - 1) & ~(uint32_t)(MEM_HB_CHUNK - 1);
#if defined(__SSE2__)
    c->hb_last = c->ways % 16 ? (1ULL << (c->ways % 16)) - 1 : 0xffffULL;
#else
    c->hb_last = c->ways % 8 ? 0x8080808080808080ULL & ((1ULL << (8 * (c->ways % 8))) - 1)
                             : 0x8080808080808080ULL;
#endif
    /* Replacement state: recency ranks (LRU, up to 16 ways; in the set records after the hash
     * bytes) or one word per line. */
    bool lru16 = cc->replacement == REPL_LRU && cc->ways <= 16;
    c->mstride = c->hstride;
    if (lru16) { /* hash bytes (8 or 16) + 16 ranks, rounded up to a power of two (<= 32) */
      c->mstride = 16;
      while (c->mstride < c->hstride + 16) c->mstride *= 2;
    }
    PLACE(c->hb, (size_t)c->sets * c->mstride);
    c->age = NULL;
    c->repl = NULL;
    if (lru16) {
      if (blk) c->age = c->hb + c->hstride;
    } else {
      PLACE(c->repl, lines * sizeof(uint32_t));
    }
    assert(cc->mshrs <= INT16_MAX); /* mem_mshr.up holds MSHR indices in 16 bits */
    PLACE(c->mshr, cc->mshrs * sizeof(mem_mshr));
    PLACE(c->mline, cc->mshrs * sizeof(uint64_t));
    PLACE(c->mfill, cc->mshrs * sizeof(uint64_t));
    PLACE(c->mtrig, cc->mshrs * sizeof(uint64_t));
    c->mh_mask = 7;
    while (c->mh_mask + 1 < 2 * cc->mshrs) c->mh_mask = 2 * c->mh_mask + 1;
    c->mwords = (cc->mshrs + 63) / 64;
    PLACE(c->mh_head, (c->mh_mask + 1) * sizeof(int32_t));
    PLACE(c->mh_next, cc->mshrs * sizeof(int32_t));
    PLACE(c->mbusy, c->mwords * sizeof(uint64_t));
    total_mshrs += cc->mshrs;
    if (l <= ML_L1D) PLACE(c->waiters, (size_t)cc->mshrs * MEM_WAIT_PER_MSHR * sizeof(mem_waiter));
    PLACE(c->pfvict, MEM_PFVICT * sizeof(uint64_t));
    c->pf_ops = mem_pf_table[cc->prefetcher];
    c->pf_kind = cc->prefetcher;
    c->lat = cc->latency;
    c->bw = cc->bandwidth;
    c->pf_deg = cc->pf_degree ? cc->pf_degree : 1;
    if (c->pf_deg > MEM_PF_MAX) c->pf_deg = MEM_PF_MAX;
    c->repl_ops = lru16 ? &mem_repl_lru16 : mem_repl_table[cc->replacement];
    if (c->pf_ops) PLACE(c->pf_state, c->pf_ops->state_bytes(cc));
    if (blk) {
      c->ls = &m->st->lv[l];
      c->stats = &m->st->stats[l];
    }
  }
  const tlb_config *tc[3] = {&cfg->itlb, &cfg->dtlb, &cfg->stlb};
  for (int i = 0; i < 3; i++) {
    mem_tlb *t = &m->tlb[i];
    t->cfg = tc[i];
    t->ways = tc[i]->ways;
    t->sets = tc[i]->entries / tc[i]->ways;
    t->latency = tc[i]->latency;
    PLACE(t->tags, tc[i]->entries * sizeof(uint64_t));
    PLACE(t->stamp, tc[i]->entries * sizeof(uint32_t));
  }
  m->heap_cap = total_mshrs; /* at most one FILL event per busy MSHR */
  PLACE(m->heap, m->heap_cap * sizeof(mem_ev));
  const dram_config *d = &cfg->dram;
  PLACE(m->chan, d->channels * sizeof(mem_chan));
  PLACE(m->bank, (size_t)d->channels * d->banks * sizeof(mem_bank));
  PLACE(m->rq, (size_t)d->channels * d->queue * sizeof(mem_dreq));
  PLACE(m->wq, (size_t)d->channels * d->queue * sizeof(mem_dreq));
  m->dwords = (d->queue + 63) / 64;
  m->lines_per_row = d->row_bytes / cfg->l1d.line;
  m->page_shift = log2u(cfg->page_bytes);
#undef PLACE
  return (off + 63) & ~(size_t)63;
}

static void reset_state(mem_sys *m) {
  memset(m->blk, 0, m->blk_bytes);
  for (int l = 0; l < ML_NCACHE; l++) {
    mem_cache *c = &m->c[l];
    for (uint32_t i = 0; i < c->cfg->mshrs; i++) {
      c->mshr[i].wait_head = -1;
      c->mfill[i] = UNKNOWN;
    }
    for (uint32_t i = 0; i <= c->mh_mask; i++) c->mh_head[i] = -1;
    if (c->cfg->mshrs % 64) c->mbusy[c->mwords - 1] = ~0ULL << (c->cfg->mshrs % 64);
    memset(c->memo_line, 0, sizeof c->memo_line);
    if (c->waiters) {
      uint32_t n = c->cfg->mshrs * MEM_WAIT_PER_MSHR;
      for (uint32_t i = 0; i < n; i++) c->waiters[i].next = i + 1 < n ? (int32_t)(i + 1) : -1;
      c->ls->wait_free = 0;
    } else {
      c->ls->wait_free = -1;
    }
    if (c->pf_ops) c->pf_ops->init(c->pf_state, c->cfg);
    if (c->age) mem_repl_age_init(c);
  }
  m->st->l1_bw_cycle[0] = m->st->l1_bw_cycle[1] = UINT64_MAX;
  mem_dram_init(m);
}

mem_sys *mem_new(const mem_config *cfg, mem_done_fn done, void *ctx) {
  mem_sys *m = xcalloc(1, sizeof *m);
  m->cfg = cfg;
  m->done = done;
  m->done_ctx = ctx;
  m->blk_bytes = layout(m, NULL);
  m->blk = aligned_alloc(64, m->blk_bytes);
  if (!m->blk) wi_die(2, "out of memory allocating %zu bytes of memory-system state", m->blk_bytes);
  layout(m, m->blk);
  reset_state(m);
  return m;
}

void mem_free(mem_sys *m) {
  if (!m) return;
  free(m->blk);
  free(m);
}

void mem_copy(mem_sys *dst, const mem_sys *src) {
  assert(dst->blk_bytes == src->blk_bytes);
  memcpy(dst->blk, src->blk, src->blk_bytes);
  for (int l = 0; l < ML_NCACHE; l++) memset(dst->c[l].memo_line, 0, sizeof dst->c[l].memo_line);
  memset(dst->refusal, 0, sizeof dst->refusal);
  for (int i = 0; i < 3; i++) memset(dst->tlb[i].memo_page, 0, sizeof dst->tlb[i].memo_page);
}

size_t mem_state_bytes(const mem_sys *m) { return m->blk_bytes; }

void mem_set_observer(mem_sys *m, mem_event_fn fn, void *ctx) {
  m->obs = fn;
  m->obs_ctx = ctx;
  m->obs_want = ~0u;
  m->obs_kinds = fn ? m->obs_want : 0;
}

void mem_set_observer_kinds(mem_sys *m, uint32_t kinds) {
  m->obs_want = kinds;
  m->obs_kinds = m->obs ? kinds : 0;
}

void mem_set_perfect(mem_sys *m, int type, bool on) {
  if (type >= 0 && type < MREQ_NUM) m->perfect[type] = on;
}

void mem_stats_reset(mem_sys *m) {
  memset(m->st->stats, 0, sizeof m->st->stats);
  memset(&m->st->dram, 0, sizeof m->st->dram);
  memset(m->st->tlb, 0, sizeof m->st->tlb);
}

/* ---- event heap (min on cycle, then seq) ------------------------------------------------- */

static inline bool ev_less(const mem_ev *a, const mem_ev *b) {
  return a->cycle < b->cycle || (a->cycle == b->cycle && a->seq < b->seq);
}

static inline void heap_push(mem_sys *m, int level, uint32_t idx, uint64_t cycle) {
  mem_state *st = m->st;
  assert(st->nheap < m->heap_cap);
  uint32_t i = st->nheap++;
  mem_ev e = {cycle, st->seq++, (uint32_t)level, idx};
  while (i) {
    uint32_t p = (i - 1) / 2;
    if (!ev_less(&e, &m->heap[p])) break;
    m->heap[i] = m->heap[p];
    i = p;
  }
  m->heap[i] = e;
}

static mem_ev heap_pop(mem_sys *m) {
  mem_state *st = m->st;
  mem_ev top = m->heap[0], last = m->heap[--st->nheap];
  uint32_t i = 0, n = st->nheap;
  for (;;) {
    uint32_t l = 2 * i + 1, r = l + 1, s = i;
    const mem_ev *sv = &last;
    if (l < n && ev_less(&m->heap[l], sv)) {
      s = l;
      sv = &m->heap[l];
    }
    if (r < n && ev_less(&m->heap[r], sv)) s = r;
    if (s == i) break;
    m->heap[i] = m->heap[s];
    i = s;
  }
  if (n) m->heap[i] = last;
  return top;
}

/* ---- caches and MSHRs -------------------------------------------------------------------- */

/* Something of a level that a refusal depends on changed. */
static inline void lvl_touch(mem_lstate *ls) {
  ls->minf_ok = 0;
  ls->ver++;
}

static inline int next_level(int l) { return l == ML_L1I || l == ML_L1D ? ML_L2 : l + 1; }

#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "cache_find's byte-parallel hash filter assumes a little-endian host"
#endif

/* Hash byte of a valid way holding line for the set-scan filter: the top byte of a
 * multiplicative hash (so lines of one set, which share their low bits, still differ), 1 for
 * 0. Never 0, the byte of an invalid way, which therefore never matches. */
static inline uint8_t line_hash8(uint64_t line) {
  uint8_t h = (uint8_t)((line * 0x9E3779B97F4A7C15ULL) >> 56);
  return (uint8_t)(h + (h == 0));
}

/* The lowest invalid way of set (hash byte 0), or c->ways when every way is valid. */
static inline uint32_t first_invalid(const mem_cache *c, uint32_t set) {
  const uint8_t *hb = &c->hb[(size_t)set * c->mstride];
#if defined(__SSE2__)
  const __m128i zero = _mm_setzero_si128();
  if (c->hstride == 16) { /* up to 16 ways (every default level): one chunk */
    __m128i x = _mm_loadu_si128((const __m128i *)(const void *)hb);
    uint32_t inv = (uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(x, zero)) & (uint32_t)c->hb_last;
    return inv ? (uint32_t)__builtin_ctz(inv) : c->ways;
  }
  for (uint32_t k = 0; k < c->hstride; k += 16) {
    __m128i x = _mm_loadu_si128((const __m128i *)(const void *)(hb + k));
    uint64_t inv = (uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(x, zero));
    if (k + 16 > c->ways) inv &= c->hb_last;
    if (inv) return k + (uint32_t)__builtin_ctzll(inv);
  }
#else
  const uint64_t lo7 = 0x7f7f7f7f7f7f7f7fULL;
  for (uint32_t k = 0; k < c->hstride; k += 8) {
    uint64_t x;
    memcpy(&x, hb + k, 8);
    uint64_t inv = ~(((x & lo7) + lo7) | x) & ~lo7; /* high bit of each zero byte */
    if (k + 8 > c->ways) inv &= c->hb_last;
    if (inv) return k + ((uint32_t)__builtin_ctzll(inv) >> 3);
  }
#endif
  return c->ways;
}

/* The way of set `line & set_mask` holding line, or -1. The hash bytes of the set are compared
 * sixteen at a time (SSE2: one compare and a byte mask cover a 16-way set) or eight at a time
 * (elsewhere: a byte is zero in x exactly where it matches, the usual SWAR test), and only
 * matching ways are checked against their tag. A line is held in at most one way. */
static inline int cache_find(const mem_cache *c, uint64_t line, uint32_t *set) {
  uint32_t s = (uint32_t)(line & c->set_mask);
  *set = s;
  const uint64_t *t = &c->tags[(size_t)s * c->ways];
  const uint8_t *hb = &c->hb[(size_t)s * c->mstride];
  const uint64_t key = (line << MT_SHIFT) | MT_VALID;
#if defined(__SSE2__)
  const __m128i pat = _mm_set1_epi8((char)line_hash8(line));
  if (c->hstride == 16) { /* up to 16 ways (every default level): one chunk, no loop */
    __m128i x = _mm_loadu_si128((const __m128i *)(const void *)hb);
    uint64_t hit = (uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(x, pat)) & c->hb_last;
    for (; hit; hit &= hit - 1) {
      uint32_t w = (uint32_t)__builtin_ctzll(hit);
      if ((t[w] & ~(uint64_t)(MT_DIRTY | MT_PF)) == key) return (int)w;
    }
    return -1;
  }
  for (uint32_t k = 0; k < c->hstride; k += 16) {
    __m128i x = _mm_loadu_si128((const __m128i *)(const void *)(hb + k));
    uint64_t hit = (uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(x, pat));
    if (k + 16 > c->ways) hit &= c->hb_last;
    for (; hit; hit &= hit - 1) {
      uint32_t w = k + (uint32_t)__builtin_ctzll(hit);
      if ((t[w] & ~(uint64_t)(MT_DIRTY | MT_PF)) == key) return (int)w;
    }
  }
  return -1;
#else
  const uint64_t lo7 = 0x7f7f7f7f7f7f7f7fULL;
  const uint64_t pat = 0x0101010101010101ULL * line_hash8(line);
  for (uint32_t k = 0; k < c->hstride; k += 8) {
    uint64_t x;
    memcpy(&x, hb + k, 8);
    x ^= pat;
    uint64_t hit = ~(((x & lo7) + lo7) | x) & ~lo7; /* high bit of each zero byte */
    if (k + 8 > c->ways) hit &= c->hb_last;
    for (; hit; hit &= hit - 1) {
      uint32_t w = k + ((uint32_t)__builtin_ctzll(hit) >> 3);
      if ((t[w] & ~(uint64_t)(MT_DIRTY | MT_PF)) == key) return (int)w;
    }
  }
  return -1;
#endif
}

/* cache_find through the level's line -> way hints (L1 levels: most accesses hit a line
 * found recently); also gives the way's tag position (set * ways + way) when found. The same
 * result as cache_find: a line is held in at most one way. */
static inline int cache_find_pos(mem_cache *c, uint64_t line, uint32_t *set, uint32_t *pos) {
  uint32_t s = (uint32_t)(line & c->set_mask);
  uint32_t k = (uint32_t)(line ^ (line >> 6) ^ (line >> 12)) & (MEM_MEMO - 1);
  uint64_t key = (line << MT_SHIFT) | MT_VALID;
  *set = s;
  if (c->memo_line[k] == line + 1) {
    uint32_t p = c->memo_pos[k];
    if ((c->tags[p] & ~(uint64_t)(MT_DIRTY | MT_PF)) == key) {
      *pos = p;
      return (int)(p - s * c->ways);
    }
  }
  int w = cache_find(c, line, set);
  if (w >= 0) {
    *pos = s * c->ways + (uint32_t)w;
    c->memo_line[k] = line + 1;
    c->memo_pos[k] = *pos;
  }
  return w;
}

/* Bucket of a line (any spread will do: a lookup compares whole lines; consecutive lines, the
 * common case, get consecutive buckets). */
static inline uint32_t mh_hash(const mem_cache *c, uint64_t line) {
  return (uint32_t)(line ^ (line >> 11)) & c->mh_mask;
}

static inline int mshr_find(const mem_cache *c, uint64_t line) {
  if (!c->ls->mshr_used) return -1;
  for (int32_t i = c->mh_head[mh_hash(c, line)]; i >= 0; i = c->mh_next[i])
    if (c->mline[i] == line + 1) return (int)i;
  return -1;
}

/* Take MSHR index i off its bucket chain and out of the busy set. */
static inline void mshr_unlink(mem_cache *c, uint32_t i) {
  int32_t *pp = &c->mh_head[mh_hash(c, c->mline[i] - 1)];
  while (*pp != (int32_t)i) pp = &c->mh_next[*pp];
  *pp = c->mh_next[i];
  c->mbusy[i >> 6] &= ~(1ULL << (i & 63));
  lvl_touch(c->ls);
}

/* The memoized refusal of a line (see mem_refusal). */
static inline uint32_t mem_refusal_slot(uint64_t line) {
  return (uint32_t)(line ^ (line >> 4)) & (MEM_REFUSALS - 1);
}

/* MSHRs a request may use: prefetches leave an eighth of them to demand misses. */
static inline uint32_t mshr_limit(const mem_cache *c, bool prefetch) {
  uint32_t n = c->cfg->mshrs;
  return prefetch ? n - (n >= 8 ? n / 8 : (n > 1 ? 1 : 0)) : n;
}

typedef struct req_info {
  uint64_t fid, trig_fid, pc;
  uint8_t wrong_path;
  uint8_t pf;           /* 0 demand, 1 prefetch issued at the starting level */
  uint8_t store;
} req_info;

/* (Inline in its two callers: the call cost a quarter of its work.) */
static inline __attribute__((always_inline)) uint32_t mshr_alloc(mem_sys *m, int level,
                                                                 uint64_t line,
                                                                 const req_info *ri, uint8_t pf,
                                                                 uint64_t now) {
  mem_cache *c = &m->c[level];
  uint32_t i = 0, wd = 0; /* the lowest free index */
  while (!~c->mbusy[wd]) wd++;
  i = wd * 64 + (uint32_t)__builtin_ctzll(~c->mbusy[wd]);
  assert(i < c->cfg->mshrs && !c->mline[i]);
  c->mbusy[wd] |= 1ULL << (i & 63);
  c->mline[i] = line + 1;
  uint32_t h = mh_hash(c, line);
  c->mh_next[i] = c->mh_head[h];
  c->mh_head[h] = (int32_t)i;
  lvl_touch(c->ls);
  if (level <= ML_L1D) { /* the line may now enter the level: a `full` refusal of it lapses */
    mem_refusal *rf = &m->refusal[mem_refusal_slot(line)];
    if (rf->line1 == line + 1) rf->line1 = 0;
  }
  mem_mshr *ms = &c->mshr[i];
  /* Field by field (pad stays 0 from reset_state): no temporary to copy. */
  ms->fid = pf ? UINT64_MAX : ri->fid;
  if (pf) c->mtrig[i] = ri->fid; /* a demand's is its fid, which then never changes */
  ms->alloc = now;
  ms->wait_head = -1;
  ms->busy = 1;
  ms->chained = 0;
  ms->pf = pf;
  ms->wrong_path = ri->wrong_path;
  ms->dirty = ri->store;
  ms->primary = pf == 0;
  ms->up[0] = ms->up[1] = -1;
  c->ls->mshr_used++;
  mem_emit(m, MEV_MSHR_ALLOC, level, MEM_RID(level, MRK_MSHR, i), ms->fid, line << c->line_shift,
           now, pf ? ri->fid : UINT64_MAX, ri->wrong_path, pf != 0);
  return i;
}

/* The level of the MSHRs in slot k of up[] of an MSHR at `level` (see mem_mshr.up). */
static inline int up_level(int level, int k) { return level == ML_LLC ? ML_L2 : k; }

/* Set a known fill cycle on every MSHR chained above MSHR idx of level. A chain is at most
 * LLC -> L2 -> L1I/L1D (only the LLC's up[0] and the L2's up[] are ever set), so no recursion. */
static void propagate_fill(mem_sys *m, int level, uint32_t idx, uint64_t fill) {
  const mem_mshr *ms = &m->c[level].mshr[idx];
  if (level == ML_LLC) {
    int32_t u = ms->up[0];
    if (u < 0) return;
    mem_cache *c = &m->c[ML_L2];
    c->mfill[u] = fill;
    lvl_touch(c->ls);
    ms = &c->mshr[u];
  } else if (level != ML_L2) {
    return;
  }
  for (int k = 0; k < 2; k++) {
    int32_t u = ms->up[k];
    if (u < 0) continue;
    mem_cache *c = &m->c[up_level(ML_L2, k)];
    c->mfill[u] = fill;
    lvl_touch(c->ls);
  }
}

/* Installs are compiled once per level (install_l1i .. install_llc: each level's fields at fixed
 * offsets, and its branches on the level, on inclusion and on write-back targets folded); the
 * chain a fill sets off -- an L1 victim written back into the L2, an L2 victim into the LLC, an
 * LLC victim to DRAM -- is a sequence of direct calls. */
static void install_l1i(mem_sys *m, uint64_t line, uint64_t t, bool dirty, bool pf, uint64_t fid,
                        bool absent);
static void install_l1d(mem_sys *m, uint64_t line, uint64_t t, bool dirty, bool pf, uint64_t fid,
                        bool absent);
static void install_l2(mem_sys *m, uint64_t line, uint64_t t, bool dirty, bool pf, uint64_t fid,
                       bool absent);
static void install_llc(mem_sys *m, uint64_t line, uint64_t t, bool dirty, bool pf, uint64_t fid,
                        bool absent);

/* Install line at level (absent: the caller has just looked it up there and not found it). */
static inline __attribute__((always_inline)) void cache_install(mem_sys *m, const int level,
                                                                uint64_t line, uint64_t t,
                                                                bool dirty, bool pf, uint64_t fid,
                                                                bool absent) {
  switch (level) {
  case ML_L1I: install_l1i(m, line, t, dirty, pf, fid, absent); break;
  case ML_L1D: install_l1d(m, line, t, dirty, pf, fid, absent); break;
  case ML_L2: install_l2(m, line, t, dirty, pf, fid, absent); break;
  default: install_llc(m, line, t, dirty, pf, fid, absent); break;
  }
}

/* Write a dirty victim back into `level` (or DRAM): marks the copy there dirty, or allocates it. */
static inline __attribute__((always_inline)) void writeback_to(mem_sys *m, const int level,
                                                               uint64_t line, uint64_t t) {
  if (level == ML_DRAM) {
    mem_dram_write(m, line, t);
    return;
  }
  mem_cache *c = &m->c[level];
  uint32_t set;
  int w = cache_find(c, line, &set);
  if (w >= 0) {
    c->tags[(size_t)set * c->ways + (uint32_t)w] |= MT_DIRTY;
    if (level == ML_LLC && !c->cfg->inclusive) mem_repl_hit(c, set, (uint32_t)w); /* see evict */
  } else {
    cache_install(m, level, line, t, true, false, UINT64_MAX, true);
  }
}

/* Inclusive LLC: remove line from the inner levels (dirty copies go to DRAM). */
static void back_invalidate(mem_sys *m, uint64_t line, uint64_t t) {
  for (int l = ML_L1I; l <= ML_L2; l++) {
    mem_cache *c = &m->c[l];
    uint32_t set;
    int w = cache_find(c, line, &set);
    if (w < 0) continue;
    uint64_t *tag = &c->tags[(size_t)set * c->ways + (uint32_t)w];
    c->stats->evictions++;
    mem_emit(m, MEV_EVICT, l, MEM_RID(l, MRK_SET, set), UINT64_MAX, line << c->line_shift, t,
             UINT64_MAX, false, false);
    if (*tag & MT_DIRTY) {
      c->stats->writebacks++;
      mem_emit(m, MEV_WRITEBACK, l, MEM_RID(l, MRK_SET, set), UINT64_MAX, line << c->line_shift, t,
               UINT64_MAX, false, false);
      mem_dram_write(m, line, t);
    }
    if (*tag & MT_PF) c->stats->pf_useless++;
    *tag = 0;
    c->hb[(size_t)set * c->mstride + (uint32_t)w] = 0;
    c->ls->ver++;
  }
}

/* Evict way w of set at level (fid: the flow whose fill needs the room). */
static inline __attribute__((always_inline)) void evict(mem_sys *m, const int level, uint32_t set,
                                                        uint32_t w, uint64_t t, uint64_t fid,
                                                        bool by_prefetch) {
  mem_cache *c = &m->c[level];
  uint64_t *tag = &c->tags[(size_t)set * c->ways + w];
  uint64_t v = *tag, vline = v >> MT_SHIFT;
  *tag = 0;
  c->hb[(size_t)set * c->mstride + w] = 0;
  c->ls->ver++;
  c->stats->evictions++;
  mem_emit(m, MEV_EVICT, level, MEM_RID(level, MRK_SET, set), UINT64_MAX, vline << c->line_shift,
           t, fid, false, by_prefetch);
  if (v & MT_PF) c->stats->pf_useless++;
  if (by_prefetch) c->pfvict[wi_mix64(vline) % MEM_PFVICT] = vline + 1;
  if (v & MT_DIRTY) {
    c->stats->writebacks++;
    mem_emit(m, MEV_WRITEBACK, level, MEM_RID(level, MRK_SET, set), UINT64_MAX,
             vline << c->line_shift, t, fid, false, false);
    writeback_to(m, next_level(level), vline, t);
  } else if (level == ML_L2 && !m->cfg->llc.inclusive) {
    /* A non-inclusive LLC is filled with L2 victims, clean ones included; a victim it already
     * holds counts as a recent use. */
    mem_cache *llc = &m->c[ML_LLC];
    uint32_t lset;
    int lw = cache_find(llc, vline, &lset);
    if (lw < 0) install_llc(m, vline, t, false, false, fid, true);
    else mem_repl_hit(llc, lset, (uint32_t)lw);
  }
  if (level == ML_LLC && c->cfg->inclusive) back_invalidate(m, vline, t);
}

/* cache_install at a constant level (the body of install_l1i .. install_llc). */
static inline __attribute__((always_inline)) void install_at(mem_sys *m, const int level,
                                                             uint64_t line, uint64_t t, bool dirty,
                                                             bool pf, uint64_t fid, bool absent) {
  mem_cache *c = &m->c[level];
  uint32_t set = (uint32_t)(line & c->set_mask);
  /* Only L2 and LLC receive write-backs, so only there can a fill find its line present. */
  int w = level >= ML_L2 && !absent ? cache_find(c, line, &set) : -1;
  uint64_t *tags = &c->tags[(size_t)set * c->ways];
  if (w >= 0) { /* already here (a write-back raced the fill): merge the dirty bit */
    if (dirty) tags[w] |= MT_DIRTY;
    return;
  }
  uint32_t v = first_invalid(c, set); /* the lowest invalid way, else a victim */
  if (v == c->ways) {
    v = mem_repl_victim(c, set);
    evict(m, level, set, v, t, fid, pf);
  }
  tags[v] = (line << MT_SHIFT) | MT_VALID | (dirty ? MT_DIRTY : 0) | (pf ? MT_PF : 0);
  c->hb[(size_t)set * c->mstride + v] = line_hash8(line);
  c->ls->ver++;
  mem_repl_fill(c, set, v, pf);
}

static void install_l1i(mem_sys *m, uint64_t line, uint64_t t, bool dirty, bool pf, uint64_t fid,
                        bool absent) {
  install_at(m, ML_L1I, line, t, dirty, pf, fid, absent);
}
static void install_l1d(mem_sys *m, uint64_t line, uint64_t t, bool dirty, bool pf, uint64_t fid,
                        bool absent) {
  install_at(m, ML_L1D, line, t, dirty, pf, fid, absent);
}
static void install_l2(mem_sys *m, uint64_t line, uint64_t t, bool dirty, bool pf, uint64_t fid,
                       bool absent) {
  install_at(m, ML_L2, line, t, dirty, pf, fid, absent);
}
static void install_llc(mem_sys *m, uint64_t line, uint64_t t, bool dirty, bool pf, uint64_t fid,
                        bool absent) {
  install_at(m, ML_LLC, line, t, dirty, pf, fid, absent);
}

/* ---- TLBs -------------------------------------------------------------------------------- */

/* Advance the TLB LRU clock for one lookup; returns the new stamp. */
static inline uint32_t tlb_tick(mem_sys *m) {
  if (__builtin_expect(++m->st->tlb_clock == 0, 0)) { /* wrapped: restart ages (once per 4 G lookups) */
    for (int i = 0; i < 3; i++) memset(m->tlb[i].stamp, 0, m->tlb[i].cfg->entries * sizeof(uint32_t));
    m->st->tlb_clock = 1;
  }
  return m->st->tlb_clock;
}

/* Is page in TLB `which`? A hit becomes most recently used; a miss is installed over the least
 * recently used way (lowest index on ties). The position hints are checked first. */
static inline bool tlb_lookup(mem_sys *m, int which, uint64_t page) {
  mem_tlb *t = &m->tlb[which];
  uint32_t k = (uint32_t)page & (MEM_TLB_MEMO - 1); /* a hint, checked against the tag */
  uint32_t mp = t->memo_pos[k];
  if (t->memo_page[k] == page + 1 && t->tags[mp] == page + 1) {
    t->stamp[mp] = tlb_tick(m);
    return true;
  }
  uint32_t set = (uint32_t)(page & (t->sets - 1));
  uint64_t *tags = &t->tags[(size_t)set * t->ways];
  uint32_t *stamp = &t->stamp[(size_t)set * t->ways];
  uint32_t clk = tlb_tick(m);
  t->memo_page[k] = page + 1;
  for (uint32_t w = 0; w < t->ways; w++)
    if (tags[w] == page + 1) {
      stamp[w] = clk;
      t->memo_pos[k] = set * t->ways + w;
      return true;
    }
  uint32_t v = 0;
  for (uint32_t w = 1; w < t->ways; w++)
    if (stamp[w] < stamp[v]) v = w;
  tags[v] = page + 1;
  stamp[v] = clk;
  t->memo_pos[k] = set * t->ways + v;
  return false;
}

/* The L1 TLB missed page: count it, look it up in the STLB; returns the extra cycles. */
static __attribute__((noinline)) uint32_t tlb_miss(mem_sys *m, int which, uint64_t page,
                                                   uint64_t now, uint64_t fid, bool wp) {
  const mem_config *cfg = m->cfg;
  m->st->tlb[which].misses++;
  mem_emit(m, MEV_TLB_MISS, ML_TLB, MEM_RID(ML_TLB, MRK_TLB, which), fid, page * cfg->page_bytes,
           now, UINT64_MAX, wp, false);
  uint32_t pen = m->tlb[which].latency + cfg->stlb.latency;
  m->st->tlb[2].accesses++;
  if (!tlb_lookup(m, 2, page)) {
    m->st->tlb[2].misses++;
    m->st->tlb[2].walks++;
    mem_emit(m, MEV_TLB_MISS, ML_TLB, MEM_RID(ML_TLB, MRK_TLB, 2), fid, page * cfg->page_bytes,
             now, UINT64_MAX, wp, false);
    pen += cfg->walk_latency;
  }
  return pen;
}

/* Translate addr for an access by `fid`; returns the extra cycles. */
static inline uint32_t tlb_access(mem_sys *m, bool ifetch, uint64_t addr, uint64_t now,
                                  uint64_t fid, bool wp) {
  int which = ifetch ? 0 : 1;
  uint64_t page = addr >> m->page_shift;
  m->st->tlb[which].accesses++;
  /* The last page looked up is present and already most recently used: nothing to update. */
  if (m->st->tlb_last[which] == page + 1) return m->tlb[which].latency;
  m->st->tlb_last[which] = page + 1;
  if (tlb_lookup(m, which, page)) return m->tlb[which].latency;
  return tlb_miss(m, which, page, now, fid, wp);
}

/* ---- ports ------------------------------------------------------------------------------- */

/* Reserve a slot on a lower level's port at or after t; returns the cycle granted. */
static uint64_t port_take(mem_cache *c, uint64_t t) {
  uint32_t bw = c->cfg->bandwidth;
  if (!bw) return t;
  mem_lstate *ls = c->ls;
  if (t > ls->port_cycle || ls->port_used == 0) {
    ls->port_cycle = t > ls->port_cycle ? t : ls->port_cycle;
    ls->port_used = 1;
    return ls->port_cycle;
  }
  if (ls->port_used < bw) {
    ls->port_used++;
    return ls->port_cycle;
  }
  ls->port_cycle++;
  ls->port_used = 1;
  return ls->port_cycle;
}

/* ---- the miss path ----------------------------------------------------------------------- */

/* Prefetch candidates collected while committing an access, issued after it. */
typedef struct pf_batch {
  uint32_t any;         /* bit l: level l has candidates */
  uint32_t n[ML_NCACHE];
  uint64_t line[ML_NCACHE][MEM_PF_MAX];
} pf_batch;

/* Train level's prefetcher on one access; up to max candidates go to out; returns how many.
 * A switch on the kind, so the common trainers inline. */
static inline __attribute__((always_inline)) uint32_t pf_run(mem_cache *c, uint64_t addr,
                                                             uint64_t line, uint64_t pc, bool hit,
                                                             bool pf_hit, uint8_t type,
                                                             uint64_t *out, uint32_t max) {
  /* One mem_pf_access per branch: the inlined trainers' copies stay in registers. */
  switch (c->pf_kind) {
  case PF_NONE: return 0;
  case PF_NEXT_LINE: {
    mem_pf_access a = {addr, line, pc, hit, pf_hit, type};
    return mem_nl_train(c->pf_deg, &a, out, max);
  }
  case PF_IP_STRIDE: {
    mem_pf_access a = {addr, line, pc, hit, pf_hit, type};
    return mem_ips_train(c->pf_state, c->pf_deg, c->line_shift, &a, out, max);
  }
  case PF_STREAM: {
    mem_pf_access a = {addr, line, pc, hit, pf_hit, type};
    return mem_str_train(c->pf_state, c->pf_deg, c->line_shift, &a, out, max);
  }
  default: {
    mem_pf_access a = {addr, line, pc, hit, pf_hit, type};
    return c->pf_ops->train(c->pf_state, c->cfg, c->line_shift, &a, out, max);
  }
  }
}

/* pf_train's work at a constant level (compiled once per level: pf_train_l1i .. pf_train_llc). */
static inline __attribute__((always_inline)) void pf_train_at(mem_sys *m, const int level,
                                                              const mem_req *req, uint64_t line,
                                                              bool hit, bool pf_hit, pf_batch *pb) {
  mem_cache *c = &m->c[level];
  uint32_t room = MEM_PF_MAX - pb->n[level];
  uint32_t k = pf_run(c, req->addr, line, req->pc, hit, pf_hit, req->type,
                      &pb->line[level][pb->n[level]], room);
  if (k) {
    pb->n[level] += k;
    pb->any |= 1u << level;
  }
}

#define PF_TRAIN_FN(name, level)                                                                 \
  static __attribute__((noinline)) void name(mem_sys *m, const mem_req *req, uint64_t line,     \
                                             bool hit, bool pf_hit, pf_batch *pb) {             \
    pf_train_at(m, level, req, line, hit, pf_hit, pb);                                           \
  }
PF_TRAIN_FN(pf_train_l1i, ML_L1I)
PF_TRAIN_FN(pf_train_l1d, ML_L1D)
PF_TRAIN_FN(pf_train_l2, ML_L2)
PF_TRAIN_FN(pf_train_llc, ML_LLC)
#undef PF_TRAIN_FN

/* Train level's prefetcher (if it has one) on a demand access; candidates go to pb. (level is
 * a constant at every call: a direct call to its copy.) */
static inline __attribute__((always_inline)) void pf_train(mem_sys *m, const int level,
                                                           const mem_req *req, uint64_t line,
                                                           bool hit, bool pf_hit, pf_batch *pb) {
  if (m->c[level].pf_kind == PF_NONE || !pb) return;
  switch (level) {
  case ML_L1I: pf_train_l1i(m, req, line, hit, pf_hit, pb); break;
  case ML_L1D: pf_train_l1d(m, req, line, hit, pf_hit, pb); break;
  case ML_L2: pf_train_l2(m, req, line, hit, pf_hit, pb); break;
  default: pf_train_llc(m, req, line, hit, pf_hit, pb); break;
  }
}

/* What the lower levels hold for a line, found by miss_probe and used by miss_commit (the
 * state does not change in between). */
typedef struct probe_res {
  int32_t way[ML_NCACHE];   /* hit way at a level, -1 when absent */
  int32_t mshr[ML_NCACHE];  /* in-flight MSHR for the line at a level, -1 when none */
  uint32_t set[ML_NCACHE];
} probe_res;

/* One level l below the entry level of miss_probe: true when it decides (*blk: -1 the miss can
 * go, else the full level). */
static inline __attribute__((always_inline)) bool probe_step(const mem_sys *m, const int l,
                                                             uint64_t line, bool prefetch,
                                                             probe_res *pr, int *blk) {
  if (l == ML_DRAM) {
    *blk = mem_dram_can_read(m, line) ? -1 : ML_DRAM;
    return true;
  }
  const mem_cache *c = &m->c[l];
  pr->mshr[l] = -1;
  *blk = -1;
  if ((pr->way[l] = cache_find(c, line, &pr->set[l])) >= 0) return true;
  if ((pr->mshr[l] = mshr_find(c, line)) >= 0) return true;
  if (c->ls->mshr_used >= mshr_limit(c, prefetch)) {
    *blk = l;
    return true;
  }
  return false;
}

/* Can a miss of line at `level` get every resource it needs? -1 if so, else the level
 * (ML_DRAM for the DRAM read queue) that is full. No side effects; fills *pr for the levels
 * below `level` down to where the line is found. (level is a constant after inlining: the
 * levels below it are unrolled, see cache_install.) */
static inline __attribute__((always_inline)) int miss_probe(const mem_sys *m, const int level,
                                                            uint64_t line, bool prefetch,
                                                            probe_res *pr) {
  const mem_cache *c = &m->c[level];
  if (c->ls->mshr_used >= mshr_limit(c, prefetch)) return level;
  int blk = -1;
  if (level <= ML_L1D && probe_step(m, ML_L2, line, prefetch, pr, &blk)) return blk;
  if (level <= ML_L2 && probe_step(m, ML_LLC, line, prefetch, pr, &blk)) return blk;
  probe_step(m, ML_DRAM, line, prefetch, pr, &blk);
  return blk;
}

/* Count a demand miss that allocates at level: pollution check against recent prefetch victims. */
static void count_miss(mem_cache *c, uint64_t line, bool wp) {
  c->stats->misses++;
  if (wp) c->stats->wrong_path_accesses++;
  uint64_t *pv = &c->pfvict[wi_mix64(line) % MEM_PFVICT];
  if (*pv == line + 1) {
    c->stats->pf_polluting++;
    *pv = 0;
  }
}

/* One level l of a miss being committed, below the MSHR *uidx of level `up` (the one above l):
 * a hit (the chain's fill is known: *fill), an in-flight MSHR (the chain joins it: its fill
 * cycle, possibly unknown), DRAM (a read), or a miss (a new MSHR at l becomes *uidx, leaving
 * l at *t). Returns true when the chain ends at l. */
static inline __attribute__((always_inline)) bool commit_step(
    mem_sys *m, const int up, const int l, uint64_t line, const req_info *ri, const mem_req *req,
    uint64_t *t, uint64_t now, pf_batch *pb, const probe_res *pr, uint32_t *uidx, uint64_t *fill) {
  bool demand = !ri->pf;
  if (l == ML_DRAM) {
    mem_dram_read(m, line, *t + m->c[ML_LLC].cfg->latency, *uidx, ri->fid, ri->wrong_path,
                  !demand, now);
    return true;
  }
  mem_cache *c = &m->c[l];
  uint64_t s = port_take(c, *t);
  uint32_t set = pr->set[l];
  int w = pr->way[l];
  if (demand) {
    c->stats->accesses++;
    if (ri->wrong_path && w >= 0) c->stats->wrong_path_accesses++;
  }
  if (w >= 0) {
    uint64_t *tag = &c->tags[(size_t)set * c->ways + (uint32_t)w];
    bool pf_hit = false;
    if (demand) {
      c->stats->hits++;
      mem_repl_hit(c, set, (uint32_t)w);
      if (*tag & MT_PF) {
        c->stats->pf_useful++;
        *tag &= ~(uint64_t)MT_PF;
        pf_hit = true;
      }
      mem_emit(m, MEV_HIT, l, MEM_RID(l, MRK_SET, set), ri->fid, line << c->line_shift, now,
               UINT64_MAX, ri->wrong_path, false);
      if (req) pf_train(m, l, req, line, true, pf_hit, pb);
    }
    *fill = s + c->cfg->latency;
    heap_push(m, up, *uidx, *fill);
    return true;
  }
  m->c[up].mshr[*uidx].chained = 1;
  int j = pr->mshr[l];
  if (j >= 0) {
    mem_mshr *ms = &c->mshr[j];
    ms->up[up & 1] = (int16_t)*uidx;
    if (demand) {
      c->stats->merges++;
      if (ri->wrong_path) c->stats->wrong_path_accesses++;
      if (ms->pf) {
        if (ms->pf == 1) c->stats->pf_late++;
        ms->pf = 0;
        ms->fid = ri->fid;
      }
      mem_emit(m, MEV_MERGE, l, MEM_RID(l, MRK_MSHR, (uint32_t)j), ri->fid, line << c->line_shift,
               now, ms->fid, ri->wrong_path, false);
      if (req) pf_train(m, l, req, line, false, false, pb);
    }
    *fill = c->mfill[j];
    return true;
  }
  if (demand) {
    count_miss(c, line, ri->wrong_path);
    mem_emit(m, MEV_MISS, l, MEM_RID(l, MRK_SET, set), ri->fid, line << c->line_shift, now,
             UINT64_MAX, ri->wrong_path, false);
    if (req) pf_train(m, l, req, line, false, false, pb);
  }
  req_info lower = *ri;
  lower.store = 0; /* only the L1 copy becomes dirty */
  uint32_t lidx = mshr_alloc(m, l, line, &lower, demand ? 0 : 2, now);
  c->mshr[lidx].up[up & 1] = (int16_t)*uidx;
  *uidx = lidx;
  *t = s;
  return false;
}

/* The chain ended below MSHR idx of level with a fill cycle (UNKNOWN until DRAM schedules it):
 * every MSHR of the new chain shares it. */
static inline __attribute__((always_inline)) void commit_fill(mem_sys *m, const int level,
                                                              uint32_t idx, uint64_t fill) {
  if (fill == UNKNOWN) return;
  m->c[level].mfill[idx] = fill;
  lvl_touch(m->c[level].ls);
  propagate_fill(m, level, idx, fill);
}

/* Commit a miss of line at `level` (miss_probe passed): allocate the MSHR chain down to where
 * the line is found (a hit, an in-flight MSHR, or DRAM). t is the cycle the request leaves
 * `level` (after TLB). Returns the MSHR index at `level`. req is NULL for prefetches. (level
 * is a constant after inlining: the levels below it are unrolled.) */
static inline __attribute__((always_inline)) uint32_t miss_commit(
    mem_sys *m, const int level, uint64_t line, const req_info *ri, const mem_req *req, uint64_t t,
    uint64_t now, pf_batch *pb, const probe_res *pr) {
  uint32_t top = mshr_alloc(m, level, line, ri, ri->pf, now);
  uint32_t uidx = top;
  uint64_t fill = UNKNOWN;
  if (level <= ML_L1D) {
    if (commit_step(m, level, ML_L2, line, ri, req, &t, now, pb, pr, &uidx, &fill)) {
      commit_fill(m, level, uidx, fill);
      return top;
    }
  }
  if (level <= ML_L2) {
    if (commit_step(m, ML_L2, ML_LLC, line, ri, req, &t, now, pb, pr, &uidx, &fill)) {
      commit_fill(m, ML_L2, uidx, fill);
      return top;
    }
  }
  commit_step(m, ML_LLC, ML_DRAM, line, ri, req, &t, now, pb, pr, &uidx, &fill);
  return top;
}

/* Issue prefetches of the candidates of level (each needs a free MSHR; dropped otherwise).
 * (level is a constant after inlining; pf_issue_l1i .. pf_issue_llc below.) */
static inline __attribute__((always_inline)) void pf_issue_at(mem_sys *m, const int level,
                                                              const uint64_t *lines, uint32_t n,
                                                              uint64_t now, uint64_t trig_fid,
                                                              bool wp) {
  mem_cache *c = &m->c[level];
  const uint32_t limit = mshr_limit(c, true);
  for (uint32_t k = 0; k < n; k++) {
    /* A full level drops every candidate left (miss_probe's first test; the lookups below
     * have no effect): only an issue changes mshr_used here, and it adds. */
    if (c->ls->mshr_used >= limit) break;
    uint64_t line = lines[k];
    uint32_t set;
    /* A probe, not a use: the plain lookup leaves the hints to the demand stream. */
    if (cache_find(c, line, &set) >= 0 || mshr_find(c, line) >= 0) continue;
    probe_res pr = {{0}, {0}, {0}}; /* (set by miss_probe where miss_commit reads it; GCC cannot tell) */
    if (miss_probe(m, level, line, true, &pr) >= 0) continue;
    req_info ri = {.fid = trig_fid, .trig_fid = trig_fid, .wrong_path = wp, .pf = 1};
    c->stats->pf_issued++;
    mem_emit(m, MEV_PREFETCH, level, MEM_RID(level, MRK_SET, set), UINT64_MAX,
             line << c->line_shift, now, trig_fid, wp, true);
    miss_commit(m, level, line, &ri, NULL, now, now, NULL, &pr);
  }
}

static __attribute__((noinline)) void pf_issue_l1i(mem_sys *m, const uint64_t *lines, uint32_t n,
                                                   uint64_t now, uint64_t trig_fid, bool wp) {
  pf_issue_at(m, ML_L1I, lines, n, now, trig_fid, wp);
}
static __attribute__((noinline)) void pf_issue_l1d(mem_sys *m, const uint64_t *lines, uint32_t n,
                                                   uint64_t now, uint64_t trig_fid, bool wp) {
  pf_issue_at(m, ML_L1D, lines, n, now, trig_fid, wp);
}
static __attribute__((noinline)) void pf_issue_l2(mem_sys *m, const uint64_t *lines, uint32_t n,
                                                  uint64_t now, uint64_t trig_fid, bool wp) {
  pf_issue_at(m, ML_L2, lines, n, now, trig_fid, wp);
}
static __attribute__((noinline)) void pf_issue_llc(mem_sys *m, const uint64_t *lines, uint32_t n,
                                                   uint64_t now, uint64_t trig_fid, bool wp) {
  pf_issue_at(m, ML_LLC, lines, n, now, trig_fid, wp);
}

/* pf_issue_at through the level's compiled copy (a direct call when level is a constant). */
static inline __attribute__((always_inline)) void pf_issue(mem_sys *m, const int level,
                                                           const uint64_t *lines, uint32_t n,
                                                           uint64_t now, uint64_t trig_fid,
                                                           bool wp) {
  switch (level) {
  case ML_L1I: pf_issue_l1i(m, lines, n, now, trig_fid, wp); break;
  case ML_L1D: pf_issue_l1d(m, lines, n, now, trig_fid, wp); break;
  case ML_L2: pf_issue_l2(m, lines, n, now, trig_fid, wp); break;
  default: pf_issue_llc(m, lines, n, now, trig_fid, wp); break;
  }
}

/* ---- fills ------------------------------------------------------------------------------- */

static void fill_l1(mem_sys *m, int level, uint32_t idx, uint64_t t);
static void fill_l2(mem_sys *m, uint32_t idx, uint64_t t);

/* MSHR idx of level fills at t: install the line, fill the MSHRs chained above (same cycle),
 * wake the waiting core requests, release. Inline with a constant level in fill_l1, fill_l2
 * and do_fill (a chain is at most LLC -> L2 -> L1I/L1D: see propagate_fill), so the chain is
 * three direct calls rather than a recursion through every level's branches. */
static inline __attribute__((always_inline)) void fill_at(mem_sys *m, const int level,
                                                          uint32_t idx, uint64_t t) {
  mem_cache *c = &m->c[level];
  mem_mshr *ms = &c->mshr[idx];
  uint64_t line = c->mline[idx] - 1;
  c->mfill[idx] = t;
  /* A non-inclusive LLC passes memory fills up to the L2 without keeping them (it receives
   * them later as L2 victims), unless no L2 miss waits for the line (an LLC prefetch). */
  bool keep = !(level == ML_LLC && !c->cfg->inclusive && ms->up[0] >= 0);
  if (keep) cache_install(m, level, line, t, ms->dirty, ms->pf == 1, ms->fid, false);
  if (ms->primary) c->stats->miss_latency_sum += t - ms->alloc;
  if ((m->obs_kinds >> MEV_FILL) & 1) /* (the trigger's flow is worked out only then) */
    mem_emit(m, MEV_FILL, level, MEM_RID(level, MRK_MSHR, idx), ms->fid, line << c->line_shift, t,
             ms->primary ? ms->fid : c->mtrig[idx], ms->wrong_path, ms->pf != 0);
  /* Fill the MSHRs chained above, in the same cycle (an L1 MSHR has none). */
  if (level == ML_LLC) {
    for (int k = 0; k < 2; k++)
      if (ms->up[k] >= 0) fill_l2(m, (uint32_t)ms->up[k], t);
  } else if (level == ML_L2) {
    for (int k = 0; k < 2; k++)
      if (ms->up[k] >= 0) fill_l1(m, k, (uint32_t)ms->up[k], t);
  }
  /* Wake the core requests waiting here. */
  for (int32_t w = ms->wait_head; w >= 0;) {
    mem_waiter *wt = &c->waiters[w];
    int32_t next = wt->next;
    if (m->done) m->done(m->done_ctx, wt->tag, t);
    wt->next = c->ls->wait_free;
    c->ls->wait_free = w;
    w = next;
  }
  c->stats->mshr_occupancy_sum += t - ms->alloc;
  c->ls->mshr_used--;
  ms->busy = 0;
  mshr_unlink(c, idx);
  c->mline[idx] = 0;
  c->mfill[idx] = UNKNOWN;
  ms->wait_head = -1;
  mem_emit(m, MEV_MSHR_RELEASE, level, MEM_RID(level, MRK_MSHR, idx), ms->fid,
           line << c->line_shift, t, UINT64_MAX, ms->wrong_path, ms->pf != 0);
}

static void fill_l1(mem_sys *m, int level, uint32_t idx, uint64_t t) {
  if (level == ML_L1I) fill_at(m, ML_L1I, idx, t);
  else fill_at(m, ML_L1D, idx, t);
}

static void fill_l2(mem_sys *m, uint32_t idx, uint64_t t) { fill_at(m, ML_L2, idx, t); }

static void do_fill(mem_sys *m, int level, uint32_t idx, uint64_t t) {
  if (level == ML_LLC) fill_at(m, ML_LLC, idx, t);
  else if (level == ML_L2) fill_l2(m, idx, t);
  else fill_l1(m, level, idx, t);
}

void mem_llc_fill_known(mem_sys *m, uint32_t idx, uint64_t fill) {
  m->c[ML_LLC].mfill[idx] = fill;
  lvl_touch(m->c[ML_LLC].ls);
  heap_push(m, ML_LLC, idx, fill);
  propagate_fill(m, ML_LLC, idx, fill);
}

/* ---- the core's interface ---------------------------------------------------------------- */

uint64_t mem_next_event(const mem_sys *m) {
  uint64_t t = m->st->nheap ? m->heap[0].cycle : UINT64_MAX;
  uint64_t d = mem_dram_next(m);
  return t < d ? t : d;
}

/* mem_advance once something is due (out of line: most cycles nothing is). */
static __attribute__((noinline)) void advance_run(mem_sys *m, uint64_t now) {
  for (;;) {
    uint64_t te = m->st->nheap ? m->heap[0].cycle : UINT64_MAX;
    uint64_t td = mem_dram_next(m);
    if (te <= td) { /* fills first at equal cycles: they may free queue space */
      if (te > now) break;
      mem_ev e = heap_pop(m);
      do_fill(m, (int)e.level, e.idx, e.cycle);
    } else {
      if (td > now) break;
      mem_dram_run(m, td);
    }
  }
}

void mem_advance(mem_sys *m, uint64_t now) {
  if ((m->st->nheap ? m->heap[0].cycle : UINT64_MAX) > now && m->st->dram_next > now) return;
  advance_run(m, now);
}

/* Does a memoized refusal stand? Only the levels from the entry level down to the full one
 * decided it; a `full` one stands while its level stays full (see mem_refusal). */
static inline bool refusal_stands(const mem_sys *m, const mem_refusal *rf) {
  const mem_state *st = m->st;
  if (rf->full) return st->lv[rf->level].mshr_used >= m->c[rf->level].cfg->mshrs;
  if (rf->ver[0] != st->lv[rf->level].ver) return false;
  if (rf->blk >= ML_L2 && rf->ver[1] != st->lv[ML_L2].ver) return false;
  if (rf->blk >= ML_LLC && rf->ver[2] != st->lv[ML_LLC].ver) return false;
  if (rf->blk == ML_DRAM && rf->ver[3] != st->dram_ver) return false;
  return true;
}

/* Find the busy MSHR of c that frees first (mem_lstate.minf_*). Free entries hold UNKNOWN in
 * mfill, so a scan for the smallest fill cycle (lowest index on ties) finds it; with none known,
 * the lowest busy index. The scan takes pairs: the lower index of a pair wins its tie and a pair
 * replaces the best only when strictly smaller, so ties go to the lowest index as in a plain
 * scan, with half the dependent compares. */
static __attribute__((noinline)) void minf_scan(mem_cache *c) {
  mem_lstate *ls = c->ls;
  const uint64_t *mf = c->mfill;
  uint32_t n = c->cfg->mshrs, i = 0;
  int32_t best = -1;
  uint64_t bf = UNKNOWN;
  for (; i + 1 < n; i += 2) {
    uint64_t f0 = mf[i], f1 = mf[i + 1];
    uint32_t one = f1 < f0;
    uint64_t f = one ? f1 : f0;
    if (f < bf) {
      bf = f;
      best = (int32_t)(i + one);
    }
  }
  if (i < n && mf[i] < bf) {
    bf = mf[i];
    best = (int32_t)i;
  }
  if (best < 0 && ls->mshr_used) {
    uint32_t wd = 0;
    while (!c->mbusy[wd]) wd++;
    best = (int32_t)(wd * 64 + (uint32_t)__builtin_ctzll(c->mbusy[wd]));
  }
  ls->minf_fill = bf;
  ls->minf_idx = best;
  ls->minf_ok = 1;
}

/* A request could not get an MSHR of cache level blk: count it, tell the observer, pick a
 * retry cycle (when the MSHR that frees first fills). */
static inline void blocked_cache(mem_sys *m, int blk, const mem_req *req, uint64_t now,
                                 uint64_t *ready) {
  mem_cache *c = &m->c[blk];
  if (!req->retry) c->stats->mshr_full_events++;
  const mem_lstate *ls = c->ls;
  if (!ls->minf_ok) minf_scan(c);
  uint64_t retry = ls->minf_idx >= 0 ? ls->minf_fill : UINT64_MAX;
  if (retry == UINT64_MAX) retry = mem_next_event(m);
  if (retry == UINT64_MAX || retry <= now) retry = now + 1;
  *ready = retry;
  if ((m->obs_kinds >> MEV_MSHR_FULL) & 1)
    mem_emit(m, MEV_MSHR_FULL, blk, MEM_RID(blk, MRK_MSHR, 0), req->fid, req->addr, now,
             ls->minf_idx >= 0 ? c->mshr[ls->minf_idx].fid : UINT64_MAX, req->wrong_path, false);
}

/* A request could not get `blk`'s resources: count it, tell the observer, pick a retry cycle. */
static void blocked(mem_sys *m, int blk, const mem_req *req, uint64_t now, uint64_t *ready) {
  if (blk != ML_DRAM) {
    blocked_cache(m, blk, req, now, ready);
    return;
  }
  if (!req->retry) m->st->dram.queue_full_events++;
  uint64_t retry = mem_next_event(m);
  if (retry == UINT64_MAX || retry <= now) retry = now + 1;
  *ready = retry;
  uint32_t rid = MEM_RID(ML_DRAM, MRK_QUEUE,
                         (req->addr >> m->c[ML_L1D].line_shift) % m->cfg->dram.channels * 1000);
  mem_emit(m, MEV_MSHR_FULL, blk, rid, req->fid, req->addr, now, UINT64_MAX, req->wrong_path,
           false);
}

/* blocked_cache's common case without its calls: the MSHR of cache level blk that frees first
 * is known and in the future, and no observer wants the event. Counts the refusal and sets
 * *ready as blocked_cache would; false (nothing done) otherwise. */
static inline bool blocked_cache_fast(mem_sys *m, int blk, const mem_req *req, uint64_t now,
                                      uint64_t *ready) {
  mem_cache *c = &m->c[blk];
  const mem_lstate *ls = c->ls;
  uint64_t f = ls->minf_fill;
  if (!ls->minf_ok || ls->minf_idx < 0 || f == UINT64_MAX || f <= now ||
      ((m->obs_kinds >> MEV_MSHR_FULL) & 1))
    return false;
  if (!req->retry) c->stats->mshr_full_events++;
  *ready = f;
  return true;
}

static __attribute__((noinline)) int refused_slow(mem_sys *m, int blk, const mem_req *req,
                                                  uint64_t now, uint64_t *ready) {
  blocked(m, blk, req, now, ready);
  return MEM_BLOCKED;
}

/* A standing refusal (out of line: the L1 paths stay small; the common case makes no call, so
 * it saves no registers). */
static __attribute__((noinline)) int refused(mem_sys *m, int blk, const mem_req *req, uint64_t now,
                                             uint64_t *ready) {
  if (blk != ML_DRAM && blocked_cache_fast(m, blk, req, now, ready)) return MEM_BLOCKED;
  return refused_slow(m, blk, req, now, ready);
}

/* Remember that line, entering at `level`, was refused for want of blk's resources. */
static inline void refusal_note(mem_sys *m, int level, int blk, uint64_t line) {
  const mem_state *st = m->st;
  mem_refusal *rf = &m->refusal[mem_refusal_slot(line)];
  rf->line1 = line + 1;
  rf->level = (uint8_t)level;
  rf->blk = (uint8_t)blk;
  rf->full = 0;
  rf->ver[0] = st->lv[level].ver;
  rf->ver[1] = st->lv[ML_L2].ver;
  rf->ver[2] = st->lv[ML_LLC].ver;
  rf->ver[3] = st->dram_ver;
}

/* A miss at a full entry level with no MSHR of its own for the line: refused there, as
 * access_miss would (miss_probe's first test), without its frame or the probe (out of line:
 * the L1 paths stay small). */
static __attribute__((noinline)) int refuse_full_slow(mem_sys *m, const mem_req *req, int level,
                                                      uint64_t now, uint64_t *ready) {
  blocked_cache(m, level, req, now, ready);
  return MEM_BLOCKED;
}
static __attribute__((noinline)) int refuse_full(mem_sys *m, const mem_req *req, int level,
                                                 uint64_t line, uint64_t now, uint64_t *ready) {
  mem_refusal *rf = &m->refusal[mem_refusal_slot(line)];
  rf->line1 = line + 1;
  rf->level = (uint8_t)level;
  rf->blk = (uint8_t)level;
  rf->full = 1;
  /* (The common case makes no call, so it saves no registers.) */
  if (blocked_cache_fast(m, level, req, now, ready)) return MEM_BLOCKED;
  return refuse_full_slow(m, req, level, now, ready);
}

/* The entry level missed line (accepted or not): the rest of mem_access, out of line so the
 * hit path stays small. j: the level's MSHR for the line (mshr_find), -1 when none. */
static inline __attribute__((always_inline)) int access_miss(mem_sys *m, const mem_req *req,
                                                             int type, const int level,
                                                             uint64_t line, uint32_t set, int j,
                                                             uint64_t now, uint64_t *ready) {
  mem_cache *c = &m->c[level];
  mem_level_stats *s = c->stats;
  mem_state *st = m->st;
  uint32_t bw = c->cfg->bandwidth;
  /* access_l1 has checked for a standing refusal. */
  probe_res pr = {{0}, {0}, {0}}; /* (set by miss_probe where miss_commit reads it; GCC cannot tell) */
  {
    int blk = -1;
    if (j >= 0) {
      if (c->mfill[j] == UNKNOWN && c->ls->wait_free < 0) blk = level;
    } else {
      blk = miss_probe(m, level, line, false, &pr);
    }
    if (blk >= 0) {
      refusal_note(m, level, blk, line);
      blocked(m, blk, req, now, ready);
      return MEM_BLOCKED;
    }
  }
  /* Accepted: from here on the request changes state. */
  if (bw) st->l1_bw_used[level]++;
  s->accesses++;
  uint64_t t = now + tlb_access(m, type == MREQ_IFETCH, req->addr, now, req->fid, req->wrong_path);
  uint64_t lat = c->cfg->latency;
  pf_batch pb;
  pb.any = 0;
  pb.n[0] = pb.n[1] = pb.n[2] = pb.n[3] = 0;
  int rc;
  uint32_t idx;
  if (j >= 0) {
    mem_mshr *ms = &c->mshr[j];
    s->merges++;
    if (req->wrong_path) s->wrong_path_accesses++;
    if (ms->pf) {
      if (ms->pf == 1) s->pf_late++;
      ms->pf = 0;
      ms->fid = req->fid;
    }
    if (type == MREQ_STORE) ms->dirty = 1;
    mem_emit(m, MEV_MERGE, level, MEM_RID(level, MRK_MSHR, (uint32_t)j), req->fid, req->addr,
             now, ms->fid, req->wrong_path, false);
    idx = (uint32_t)j;
  } else {
    count_miss(c, line, req->wrong_path);
    mem_emit(m, MEV_MISS, level, MEM_RID(level, MRK_SET, set), req->fid, req->addr, now,
             UINT64_MAX, req->wrong_path, false);
    req_info ri = {.fid = req->fid, .trig_fid = req->fid, .pc = req->pc,
                   .wrong_path = req->wrong_path, .pf = 0, .store = type == MREQ_STORE};
    idx = miss_commit(m, level, line, &ri, req, t, now, &pb, &pr);
  }
  mem_mshr *ms = &c->mshr[idx];
  uint64_t mf = c->mfill[idx];
  if (mf != UNKNOWN) {
    *ready = mf > t + lat ? mf : t + lat;
    rc = MEM_DONE;
  } else {
    int32_t wi = c->ls->wait_free;
    c->ls->ver++;
    mem_waiter *wt = &c->waiters[wi];
    c->ls->wait_free = wt->next;
    wt->tag = req->tag;
    wt->next = ms->wait_head;
    ms->wait_head = wi;
    *ready = UNKNOWN;
    rc = MEM_PENDING;
  }
  pf_train(m, level, req, line, false, false, &pb);
  if (pb.any) {
    /* Level by level, each through its own copy of pf_issue (pf_issue's first test here). */
#define PB_ISSUE(l)                                                                              \
  if (pb.n[l] && m->c[l].ls->mshr_used < mshr_limit(&m->c[l], true))                             \
    pf_issue(m, l, pb.line[l], pb.n[l], now, req->fid, req->wrong_path);
    PB_ISSUE(ML_L1I)
    PB_ISSUE(ML_L1D)
    PB_ISSUE(ML_L2)
    PB_ISSUE(ML_LLC)
#undef PB_ISSUE
  }
  return rc;
}

/* access_miss compiled once per entry level (out of line, so the hit path stays small). */
static __attribute__((noinline)) int access_miss_l1i(mem_sys *m, const mem_req *req, int type,
                                                     uint64_t line, uint32_t set, int j,
                                                     uint64_t now, uint64_t *ready) {
  return access_miss(m, req, type, ML_L1I, line, set, j, now, ready);
}
static __attribute__((noinline)) int access_miss_l1d(mem_sys *m, const mem_req *req, int type,
                                                     uint64_t line, uint32_t set, int j,
                                                     uint64_t now, uint64_t *ready) {
  return access_miss(m, req, type, ML_L1D, line, set, j, now, ready);
}

/* mem_access at one entry level (a constant after inlining: the level's fields are at fixed
 * offsets, which keeps the hit path short). */
static inline __attribute__((always_inline)) int access_l1(mem_sys *m, const mem_req *req,
                                                           int type, const int level,
                                                           uint64_t now, uint64_t *ready) {
  mem_cache *c = &m->c[level];
  mem_level_stats *s = c->stats;
  if (m->perfect[type]) {
    s->accesses++;
    s->hits++;
    if (req->wrong_path) s->wrong_path_accesses++;
    *ready = now + c->lat;
    return MEM_DONE;
  }
  mem_state *st = m->st;
  uint32_t bw = c->bw;
  if (bw) {
    if (st->l1_bw_cycle[level] != now) {
      st->l1_bw_cycle[level] = now;
      st->l1_bw_used[level] = 0;
    }
    if (st->l1_bw_used[level] >= bw) {
      if (!req->retry) s->port_blocked++;
      *ready = now + 1;
      return MEM_BLOCKED;
    }
  }
  uint64_t line = req->addr >> c->line_shift;
  /* A standing refusal first, before the lookup (it implies the line is still absent from the
   * entry level: any change of that level's contents changes its version, so a hit never has
   * one): a retried request that is still refused costs no set scan. */
  const mem_refusal *rf = &m->refusal[mem_refusal_slot(line)];
  if (rf->line1 == line + 1 && rf->level == level && refusal_stands(m, rf))
    return refused(m, rf->blk, req, now, ready);
  uint32_t set, pos;
  int w = cache_find_pos(c, line, &set, &pos);
  if (w < 0) {
    int j = mshr_find(c, line);
    if (j < 0 && c->ls->mshr_used >= c->cfg->mshrs)
      return refuse_full(m, req, level, line, now, ready);
    return level == ML_L1I ? access_miss_l1i(m, req, type, line, set, j, now, ready)
                           : access_miss_l1d(m, req, type, line, set, j, now, ready);
  }
  /* An L1 hit: accepted. */
  if (bw) st->l1_bw_used[level]++;
  s->accesses++;
  s->hits++;
  if (req->wrong_path) s->wrong_path_accesses++;
  uint64_t t = now + tlb_access(m, type == MREQ_IFETCH, req->addr, now, req->fid, req->wrong_path);
  uint64_t *tag = &c->tags[pos];
  bool pf_hit = false;
  if (c->age)
    mem_lru16_use(c, set, (uint32_t)w);
  else
    c->repl_ops->hit(c, set, (uint32_t)w);
  if (*tag & MT_PF) {
    s->pf_useful++;
    *tag &= ~(uint64_t)MT_PF;
    pf_hit = true;
  }
  if (type == MREQ_STORE) *tag |= MT_DIRTY;
  mem_emit(m, MEV_HIT, level, MEM_RID(level, MRK_SET, set), req->fid, req->addr, now, UINT64_MAX,
           req->wrong_path, false);
  *ready = t + c->lat;
  /* Only this level's prefetcher trains on a hit. */
  if (c->pf_kind != PF_NONE) {
    uint64_t cand[MEM_PF_MAX];
    uint32_t k = pf_run(c, req->addr, line, req->pc, true, pf_hit, req->type, cand, MEM_PF_MAX);
    if (k) pf_issue(m, level, cand, k, now, req->fid, req->wrong_path);
  }
  return MEM_DONE;
}

int mem_access(mem_sys *m, const mem_req *req, uint64_t now, uint64_t *ready) {
  int type = req->type < MREQ_NUM ? req->type : MREQ_LOAD;
  if (type == MREQ_IFETCH) return access_l1(m, req, type, ML_L1I, now, ready);
  return access_l1(m, req, type, ML_L1D, now, ready);
}

/* ---- statistics accessors ---------------------------------------------------------------- */

const mem_level_stats *mem_stats(const mem_sys *m, int level) {
  if (level < 0 || level >= ML_NCACHE) return NULL;
  return &m->st->stats[level];
}

const mem_dram_stats *mem_get_dram_stats(const mem_sys *m) { return &m->st->dram; }

const mem_tlb_stats *mem_tlb_stats_get(const mem_sys *m, int which) {
  if (which < 0 || which > 2) return NULL;
  return &m->st->tlb[which];
}

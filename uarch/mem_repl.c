/* mem_repl.c — cache replacement policies (LRU, SRRIP) as tables of functions over one 32-bit
 * replacement word per line. */
#include "mem_int.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

/* ---- LRU: the word is a last-use stamp from a per-level clock --------------------------- */

/* Renumber every set's stamps to 1..ways in age order, so the clock can restart after it
 * wraps (once per 4 G accesses; keeps lines at 4 bytes of replacement state). */
static void lru_renormalize(mem_cache *c) {
  uint32_t rank[64];
  for (uint32_t s = 0; s < c->sets; s++) {
    uint32_t *r = &c->repl[(size_t)s * c->ways];
    for (uint32_t w = 0; w < c->ways; w++) {
      uint32_t k = 1; /* 1 + number of ways older than w (ties by way index) */
      for (uint32_t v = 0; v < c->ways; v++)
        if (r[v] < r[w] || (r[v] == r[w] && v < w)) k++;
      rank[w] = k;
    }
    for (uint32_t w = 0; w < c->ways; w++) r[w] = rank[w];
  }
  c->ls->stamp = c->ways;
}

static inline uint32_t lru_tick(mem_cache *c) {
  if (c->ls->stamp == UINT32_MAX) lru_renormalize(c);
  return ++c->ls->stamp;
}

static void lru_hit(mem_cache *c, uint32_t set, uint32_t way) {
  c->repl[(size_t)set * c->ways + way] = lru_tick(c);
}

static void lru_fill(mem_cache *c, uint32_t set, uint32_t way, bool prefetch) {
  (void)prefetch; /* prefetches insert at MRU like demand fills (ChampSim's convention) */
  c->repl[(size_t)set * c->ways + way] = lru_tick(c);
}

static uint32_t lru_victim(mem_cache *c, uint32_t set) {
  const uint32_t *r = &c->repl[(size_t)set * c->ways];
  uint32_t v = 0;
  for (uint32_t w = 1; w < c->ways; w++)
    if (r[w] < r[v]) v = w;
  return v;
}

static const mem_repl_ops repl_lru = {"lru", lru_hit, lru_fill, lru_victim};

/* ---- LRU as recency ranks (ways <= 16) ---------------------------------------------------
 * The stamps above order the ways of a set by last use; the victim is the oldest (stamps of
 * valid ways are distinct: each fill or hit takes a new one). The ranks below keep that order
 * directly: a use moves the way to rank 0 and ages every way that was younger than it, so the
 * oldest way is the one ranked ways - 1. The ranks start as a permutation in way order; a set
 * needs a victim only when all its ways are valid, i.e. each was filled (moved to rank 0) at
 * least once, so from then on the ranks are exactly the stamps' order: the same victims. */

void mem_repl_age_init(mem_cache *c) {
  for (uint32_t s = 0; s < c->sets; s++)
    for (uint32_t w = 0; w < 16; w++) c->age[(size_t)s * c->mstride + w] = w < c->ways ? (uint8_t)w : MEM_AGE_NONE;
}

/* The use itself (mem_lru16_use) lives in mem_int.h, so the L1 hit path inlines it. */
static inline void lru16_use(mem_cache *c, uint32_t set, uint32_t way) { mem_lru16_use(c, set, way); }

static void lru16_hit(mem_cache *c, uint32_t set, uint32_t way) { lru16_use(c, set, way); }

static void lru16_fill(mem_cache *c, uint32_t set, uint32_t way, bool prefetch) {
  (void)prefetch; /* MRU, as lru_fill */
  lru16_use(c, set, way);
}

static uint32_t lru16_victim(mem_cache *c, uint32_t set) { return mem_lru16_victim(c, set); }

const mem_repl_ops mem_repl_lru16 = {"lru", lru16_hit, lru16_fill, lru16_victim};

/* ---- SRRIP-HP (Jaleel et al., ISCA 2010), 2-bit re-reference prediction values ---------- */

enum { RRPV_MAX = 3, RRPV_INSERT = 2 };

static void srrip_hit(mem_cache *c, uint32_t set, uint32_t way) {
  c->repl[(size_t)set * c->ways + way] = 0; /* hit priority: predict near re-reference */
}

static void srrip_fill(mem_cache *c, uint32_t set, uint32_t way, bool prefetch) {
  /* New lines are predicted "long" re-reference; prefetches "distant" so that an unused
   * prefetch is the first to go. */
  c->repl[(size_t)set * c->ways + way] = prefetch ? RRPV_MAX : RRPV_INSERT;
}

static uint32_t srrip_victim(mem_cache *c, uint32_t set) {
  uint32_t *r = &c->repl[(size_t)set * c->ways];
  for (;;) {
    for (uint32_t w = 0; w < c->ways; w++)
      if (r[w] >= RRPV_MAX) return w;
    for (uint32_t w = 0; w < c->ways; w++) r[w]++;
  }
}

static const mem_repl_ops repl_srrip = {"srrip", srrip_hit, srrip_fill, srrip_victim};

const mem_repl_ops *const mem_repl_table[REPL_NUM] = {&repl_lru, &repl_srrip};
const char *const mem_repl_names[REPL_NUM + 1] = {"lru", "srrip", NULL};

/* mem_int.h — private layouts of the memory hierarchy, shared by memsys.c and its parts
 * (mem_repl.c replacement policies, mem_pf.c prefetchers, mem_dram.c DRAM, mem_stats.c). */
#ifndef WHATIF_MEM_INT_H
#define WHATIF_MEM_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "memsys.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

/* Levels, in mem_event.level numbering. The four caches are 0..3. */
enum { ML_L1I = 0, ML_L1D = 1, ML_L2 = 2, ML_LLC = 3, ML_DRAM = 4, ML_TLB = 5, ML_NCACHE = 4 };

/* Resource-id kinds (rid = level * 1e6 + kind * 1e5 + entry, see mem_rid_name). */
enum {
  MRK_MSHR = 0,  /* entry = MSHR index */
  MRK_SET = 1,   /* entry = set index */
  MRK_QUEUE = 2, /* DRAM: entry = channel * 1000 + slot (reads; writes at slot + 500) */
  MRK_BANK = 3,  /* DRAM: entry = channel * 1000 + bank */
  MRK_BUS = 4,   /* DRAM: entry = channel */
  MRK_TLB = 5,   /* TLB: entry = 0 ITLB, 1 DTLB, 2 STLB */
  MRK_PORT = 6,  /* a cache level's access port (bandwidth) */
};
#define MEM_RID(level, kind, entry) \
  ((uint32_t)(level) * 1000000u + (uint32_t)(kind) * 100000u + (uint32_t)(entry))

/* ---- cache lines --------------------------------------------------------------------------
 * A line is one 64-bit tag word: (line address << MT_SHIFT) | flags. Line addresses are byte
 * addresses >> log2(line bytes), so they fit with room to spare. */
#define MT_VALID 1u
#define MT_DIRTY 2u
#define MT_PF 4u      /* brought in by this level's prefetcher and not yet used by a demand access */
#define MT_SHIFT 3
#define MT_FLAGS ((1u << MT_SHIFT) - 1)

/* One miss-status holding register. MSHRs of consecutive levels for the same line form a
 * chain: an upper MSHR marked `chained` is filled (recursively, same cycle) when the lower
 * level's MSHR for that line fills. Exactly one MSHR per chain (the deepest) owns a FILL
 * event, or, at the LLC, a DRAM read. */
typedef struct mem_mshr {
  uint64_t fid;         /* first demand requester's flow (UINT64_MAX for a prefetch) */
  uint64_t alloc;       /* cycle allocated */
  /* The line address + 1 is mem_cache.mline[index], the cycle the data arrives here
   * (UINT64_MAX until known) mem_cache.mfill[index], the flow whose access triggered a
   * prefetch's mem_cache.mtrig[index]. */
  int32_t wait_head;    /* first core waiter (L1 levels), -1 when none */
  uint8_t busy;
  uint8_t chained;      /* filled by the next level's MSHR for the same line */
  uint8_t pf;           /* 0 demand, 1 this level's prefetch, 2 on behalf of an upper prefetch */
  uint8_t wrong_path;   /* allocated by a wrong-path request */
  uint8_t dirty;        /* a store is waiting: install the line dirty */
  uint8_t primary;      /* allocated by a demand miss: its fill adds to miss_latency_sum */
  int16_t up[2];        /* the MSHRs chained to this one, by upper level & 1 (L2: [0] L1I,
                           [1] L1D; LLC: [0] L2); -1 when none. The same MSHRs a search of the
                           upper levels for this line's `chained` entry finds, without it */
  uint8_t pad[2];       /* 32 bytes: indexing is a shift, and an MSHR file takes half the host
                           cache lines it took at 64 (fills find their entries there less often
                           evicted) */
} mem_mshr;
_Static_assert(sizeof(mem_mshr) == 32, "mem_mshr: 32 bytes (indexing, host cache lines)");

/* A core request waiting (MEM_PENDING) on an L1 MSHR. */
typedef struct mem_waiter {
  uint32_t tag;
  int32_t next;         /* next waiter of the same MSHR or of the free list; -1 ends */
} mem_waiter;

/* Per-level scalar state (lives in the copied state block). */
typedef struct mem_lstate {
  uint64_t port_cycle;  /* cycle of the current port reservation */
  uint32_t port_used;   /* accesses accepted in port_cycle */
  uint32_t stamp;       /* replacement clock (LRU stamps) */
  uint32_t mshr_used;   /* busy MSHRs */
  int32_t wait_free;    /* head of the free waiter list, -1 when exhausted */
  /* The busy MSHR that frees first (smallest fill cycle, lowest index on ties; the lowest busy
   * index when no fill cycle is known): what a refused request waits for. Recomputed lazily
   * when minf_ok is 0 (any allocation, release or new fill cycle at this level clears it). */
  uint64_t minf_fill;
  int32_t minf_idx;
  uint32_t minf_ok;
  uint32_t ver;         /* changes whenever this level's MSHRs, fill cycles, waiters or contents
                           change: a refusal that depends only on unchanged levels stands */
  uint32_t pad;
} mem_lstate;

/* Pending internal events: a FILL of MSHR idx at level. Ordered by (cycle, seq). */
typedef struct mem_ev {
  uint64_t cycle;
  uint64_t seq;
  uint32_t level;
  uint32_t idx;
} mem_ev;

/* ---- DRAM ---------------------------------------------------------------------------------- */

typedef struct mem_dreq {
  uint64_t arrive;      /* cycle the request reaches the controller */
  uint64_t row;         /* decoded row */
  uint64_t seq;         /* arrival order (FCFS tie-break) */
  uint32_t bank;        /* decoded bank within the channel */
  uint32_t mshr;        /* LLC MSHR to fill (reads) */
  uint64_t line;        /* line address */
  uint64_t fid;
  uint8_t wrong_path;
  uint8_t prefetch;
  uint8_t pad[14];      /* 64 bytes: the scheduler's scan indexes slots with a shift */
} mem_dreq;               /* a slot holds one while its bit of mem_chan.dv is set */
_Static_assert(sizeof(mem_dreq) == 64, "mem_dreq: 64 bytes");

typedef struct mem_bank {
  uint64_t ready;       /* cycle the bank accepts its next command */
  uint64_t open_row;    /* UINT64_MAX when precharged */
} mem_bank;

#define MEM_DQ_WORDS 8 /* valid-slot words per DRAM queue (queue < 500) */

typedef struct mem_chan {
  uint64_t dv[2][MEM_DQ_WORDS]; /* read (0) and write (1) queue: bit i set while slot i holds a
                                   request (scans visit only those) */
  uint64_t bus_free;    /* cycle the data bus is next free */
  uint64_t next_sched;  /* cycle the scheduler must run next; UINT64_MAX when idle */
  uint32_t nread, nwrite;
  /* The request the scheduler will issue first at next_sched, found by the pass that set
   * next_sched (a function of the channel's state: valid while memo_ok, cleared by anything
   * that changes the queues, banks or bus other than a read arriving after next_sched). It
   * saves the scheduler one queue scan per scheduling cycle. */
  int32_t memo_slot;    /* slot in the read (memo_write 0) or write queue */
  uint8_t memo_write;
  uint8_t memo_ok;
  uint8_t pad[2];
} mem_chan;

/* ---- TLB ---------------------------------------------------------------------------------- */

#define MEM_TLB_MEMO 16 /* page -> position hints per TLB (not state) */
typedef struct mem_tlb {
  const tlb_config *cfg;
  uint32_t sets, ways;
  uint64_t *tags;       /* page number + 1; 0 = invalid */
  uint32_t *stamp;      /* LRU stamps */
  uint32_t latency;     /* cfg->latency (cycles), copied next to the hints */
  uint64_t memo_page[MEM_TLB_MEMO]; /* not state: page + 1 recently found at position memo_pos
                                       (a hint, checked against the tag; cleared by mem_copy) */
  uint32_t memo_pos[MEM_TLB_MEMO];  /* set * ways + way of the page */
} mem_tlb;

/* ---- the whole state block (copied by mem_copy) -------------------------------------------- */

typedef struct mem_state {
  mem_level_stats stats[ML_NCACHE];
  mem_dram_stats dram;
  mem_tlb_stats tlb[3];
  mem_lstate lv[ML_NCACHE];
  uint64_t seq;         /* event / DRAM arrival sequence counter */
  uint32_t nheap;       /* events in the heap */
  uint32_t tlb_clock;   /* TLB LRU clock */
  uint64_t l1_bw_cycle[2]; /* L1I/L1D: the cycle counted in l1_bw_used */
  uint32_t l1_bw_used[2];
  uint64_t dram_next;   /* min over channels of next_sched (UINT64_MAX when idle) */
  uint64_t tlb_last[3]; /* page + 1 of the last lookup per TLB: it is present and MRU */
  uint32_t dram_ver;    /* changes whenever a DRAM read is queued or issued */
  uint32_t pad;
} mem_state;

typedef struct mem_cache mem_cache;

/* Replacement policy: a table of functions over the per-line `repl` word of a set. */
typedef struct mem_repl_ops {
  const char *name;
  void (*hit)(mem_cache *c, uint32_t set, uint32_t way);
  void (*fill)(mem_cache *c, uint32_t set, uint32_t way, bool prefetch);
  /* Choose a victim among the (all valid) ways of set. */
  uint32_t (*victim)(mem_cache *c, uint32_t set);
} mem_repl_ops;

/* What a prefetcher is told about one demand access at its level. */
typedef struct mem_pf_access {
  uint64_t addr;        /* byte address */
  uint64_t line;        /* line address */
  uint64_t pc;
  bool hit;             /* hit at this level */
  bool pf_hit;          /* first demand hit on a line this prefetcher brought in */
  uint8_t type;         /* MREQ_* */
} mem_pf_access;

/* Prefetcher: a table of functions over a fixed-size state region (in the state block). */
typedef struct mem_pf_ops {
  const char *name;
  size_t (*state_bytes)(const cache_config *cfg);
  void (*init)(void *st, const cache_config *cfg);
  /* Train on one access; write up to max candidate line addresses into out; return count. */
  uint32_t (*train)(void *st, const cache_config *cfg, uint32_t line_shift,
                    const mem_pf_access *a, uint64_t *out, uint32_t max);
} mem_pf_ops;

#define MEM_PF_MAX 32        /* candidates per trigger (pf_degree is capped to this) */
#define MEM_PFVICT 64        /* evicted-by-prefetch filter entries per level (pollution stat) */
#define MEM_WAIT_PER_MSHR 32 /* core waiters per L1 MSHR, pooled */
#define MEM_MEMO 64          /* line -> way hints per cache level (not state) */
#if defined(__SSE2__)
#define MEM_HB_CHUNK 16      /* hash bytes compared at once: one SSE2 compare covers 16 ways */
#else
#define MEM_HB_CHUNK 8       /* hash bytes compared at once: one 64-bit SWAR test covers 8 ways */
#endif

struct mem_cache {
  const cache_config *cfg;
  int level;
  uint32_t sets, ways, set_mask, line_shift;
  uint64_t *tags;       /* sets * ways tag words */
  /* Per-set metadata, one mstride-byte record per set (sets * mstride bytes, 64-byte aligned;
   * with at most 16 ways mstride is 16 or 32, so a record never straddles a host cache line):
   * the hash bytes at offset 0, then (LRU ranks) the 16 rank bytes. A lookup and the
   * replacement update it implies touch one host line, not three arrays (hashes, ranks, valid
   * counts), and finding a free way reads no tags. */
  uint8_t *hb;          /* = the records: byte w of set s at hb[s * mstride + w] is 0 when way w
                           is invalid, else a nonzero 8-bit hash of its line (a filter for set
                           scans, checked against the tag; its zero bytes are the free ways) */
  uint32_t mstride;     /* bytes per set record */
  uint32_t hstride;     /* ways rounded up to a multiple of MEM_HB_CHUNK */
  uint64_t hb_last;     /* mask of the real ways in a set's last chunk of hash bytes (SSE2: one
                           bit per way; else the high bit of each way's byte) */
  uint32_t *repl;       /* sets * ways replacement words (NULL with `age`) */
  uint8_t *age;         /* LRU with ways <= 16 (mem_repl_lru16): hb + hstride, 16 recency ranks
                           per set record: byte w of a set = number of ways used more recently
                           than way w (a permutation of 0..ways-1; unused bytes MEM_AGE_NONE);
                           NULL otherwise */
  mem_mshr *mshr;       /* cfg->mshrs */
  uint64_t *mline;      /* cfg->mshrs: line + 1 of each busy MSHR, 0 when free (fast search) */
  uint64_t *mfill;      /* cfg->mshrs: cycle MSHR i's data arrives here; UINT64_MAX until known
                           and when free (dense, so the entry that frees first is a short scan) */
  uint64_t *mtrig;      /* cfg->mshrs: the flow whose access triggered MSHR i if a prefetch
                           allocated it (a demand's is mem_mshr.fid, which then never changes);
                           read only for observer events, so kept out of the entry */
  int32_t *mh_head;     /* MSHR lookup by line: mh_mask + 1 bucket heads (MSHR index, -1 empty);
                           a level holds at most one MSHR per line */
  int32_t *mh_next;     /* cfg->mshrs: next MSHR of the same bucket, -1 ends */
  uint64_t *mbusy;      /* mwords words: bit i set when MSHR i is busy (bits past cfg->mshrs
                           are set, so they are never allocated) */
  uint32_t mh_mask, mwords;
  mem_waiter *waiters;  /* L1 levels: cfg->mshrs * MEM_WAIT_PER_MSHR */
  uint64_t *pfvict;     /* MEM_PFVICT lines (+1) evicted by prefetch fills */
  void *pf_state;
  mem_lstate *ls;       /* = &state->lv[level] */
  mem_level_stats *stats;
  const mem_repl_ops *repl_ops;
  const mem_pf_ops *pf_ops;
  int32_t pf_kind;      /* cfg->prefetcher (PF_*): the hit path dispatches on it, not pf_ops */
  uint32_t pf_deg;      /* cfg->pf_degree, at least 1 and at most MEM_PF_MAX (lines) */
  uint32_t lat;         /* cfg->latency (cycles) */
  uint32_t bw;          /* cfg->bandwidth (accesses per cycle, 0 = unlimited) */
  /* Not state (a hint, checked against the tags before use, so a stale entry after mem_copy
   * costs only a lookup): recently found lines and their tag positions, direct mapped. */
  uint64_t memo_line[MEM_MEMO]; /* line + 1, 0 empty */
  uint32_t memo_pos[MEM_MEMO];  /* set * ways + way */
};

/* A refused request (not state: a memo, cleared by mem_copy). It is refused again, for the same
 * level, as long as the versions of the levels it went through are unchanged: resources are
 * freed only by fills and DRAM issues, which change them. A line refused at a full entry level
 * where it has no MSHR (`full`) is refused again while that level stays full, whatever else
 * changed there: only an MSHR for the line can bring it into the level, and its allocation
 * drops the entry (mshr_alloc), so the line is still absent with no MSHR of its own. */
#define MEM_REFUSALS 16
typedef struct mem_refusal {
  uint64_t line1;       /* line + 1 (0: empty) */
  uint32_t ver[4];      /* entry L1 level, L2, LLC, DRAM versions when refused (not `full`) */
  uint8_t level;        /* entry level (ML_L1I / ML_L1D) */
  uint8_t blk;          /* the full level (ML_DRAM for the read queue) */
  uint8_t full;         /* refused at the full entry level (blk == level) with no MSHR there */
  uint8_t pad[5];
} mem_refusal;

struct mem_sys {
  const mem_config *cfg;
  mem_done_fn done;
  void *done_ctx;
  mem_event_fn obs;
  void *obs_ctx;
  uint32_t obs_want;    /* kinds asked for by mem_set_observer_kinds (all by default) */
  uint32_t obs_kinds;   /* kinds emitted: obs_want with an observer attached, else 0 */
  bool perfect[MREQ_NUM];
  mem_refusal refusal[MEM_REFUSALS];
  /* Everything below points into blk; mem_copy copies blk. */
  uint8_t *blk;
  size_t blk_bytes;
  mem_state *st;
  mem_cache c[ML_NCACHE];
  mem_tlb tlb[3];
  mem_ev *heap;
  uint32_t heap_cap;
  mem_chan *chan;
  mem_bank *bank;       /* channels * banks */
  mem_dreq *rq, *wq;    /* channels * queue each */
  uint32_t dwords;      /* (queue + 63) / 64: the words of mem_chan.dv in use */
  uint32_t lines_per_row;
  uint32_t page_shift;  /* log2(page_bytes) */
};

/* LRU ranks (mem_repl_lru16): make `way` the most recently used of its set. Here, not in
 * mem_repl.c, so the L1 hit path inlines it. */
static inline void mem_lru16_use(mem_cache *c, uint32_t set, uint32_t way) {
  uint8_t *a = &c->age[(size_t)set * c->mstride];
#if defined(__SSE2__)
  __m128i x = _mm_loadu_si128((const __m128i *)(const void *)a);
  __m128i r = _mm_set1_epi8((char)a[way]);
  x = _mm_sub_epi8(x, _mm_cmplt_epi8(x, r)); /* younger than `way` (all-ones lanes): one older */
  _mm_storeu_si128((__m128i *)(void *)a, x);
#else
  uint8_t r = a[way];
  for (uint32_t w = 0; w < 16; w++) a[w] = (uint8_t)(a[w] + (a[w] < r));
#endif
  a[way] = 0;
}

/* LRU ranks: the way ranked last (the victim) of a full set. */
static inline uint32_t mem_lru16_victim(const mem_cache *c, uint32_t set) {
  const uint8_t *a = &c->age[(size_t)set * c->mstride];
#if defined(__SSE2__)
  __m128i x = _mm_loadu_si128((const __m128i *)(const void *)a);
  uint32_t hit = (uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(x, _mm_set1_epi8((char)(c->ways - 1))));
  return (uint32_t)__builtin_ctz(hit); /* exactly one way holds the last rank */
#else
  uint32_t w = 0;
  while (a[w] != c->ways - 1) w++;
  return w;
#endif
}

/* The level's replacement policy: LRU ranks inline (c->age is set exactly when repl_ops is
 * mem_repl_lru16), any other policy through its table. */
static inline void mem_repl_hit(mem_cache *c, uint32_t set, uint32_t way) {
  if (c->age) mem_lru16_use(c, set, way);
  else c->repl_ops->hit(c, set, way);
}
static inline void mem_repl_fill(mem_cache *c, uint32_t set, uint32_t way, bool prefetch) {
  if (c->age) mem_lru16_use(c, set, way); /* prefetches too go to MRU (as lru16_fill) */
  else c->repl_ops->fill(c, set, way, prefetch);
}
static inline uint32_t mem_repl_victim(mem_cache *c, uint32_t set) {
  return c->age ? mem_lru16_victim(c, set) : c->repl_ops->victim(c, set);
}

/* ---- prefetcher training, inline (mem_pf.c wraps these in its table; memsys.c calls them
 * directly, dispatching on mem_cache.pf_kind) ------------------------------------------------ */

/* next-line: on a miss (or the first use of a prefetched line) fetch the next `deg` lines. */
static inline uint32_t mem_nl_train(uint32_t deg, const mem_pf_access *a, uint64_t *out,
                                    uint32_t max) {
  if (a->hit && !a->pf_hit) return 0;
  uint32_t n = 0;
  for (uint32_t k = 1; k <= deg && n < max; k++) out[n++] = a->line + k;
  return n;
}

/* IP-stride: per-PC last address, stride and 2-bit confidence. */
#define MEM_IPS_ENTRIES 256 /* direct-mapped by PC bits (Intel does not publish the table size) */

typedef struct mem_ips_entry {
  uint64_t pc;
  uint64_t last;        /* last byte address */
  int64_t stride;       /* bytes */
  uint32_t conf;        /* 0..3; prefetch at >= 2 */
  uint32_t pad;
} mem_ips_entry;

static inline uint32_t mem_ips_train(void *st, uint32_t deg, uint32_t line_shift,
                                     const mem_pf_access *a, uint64_t *out, uint32_t max) {
  mem_ips_entry *e =
      &((mem_ips_entry *)st)[(a->pc ^ (a->pc >> 8) ^ (a->pc >> 16)) & (MEM_IPS_ENTRIES - 1)];
  if (e->pc != a->pc) {
    e->pc = a->pc;
    e->last = a->addr;
    e->stride = 0;
    e->conf = 0;
    return 0;
  }
  int64_t d = (int64_t)(a->addr - e->last);
  if (d == 0) return 0;
  uint64_t prev = e->last;
  e->last = a->addr;
  if (d == e->stride) {
    if (e->conf < 3) e->conf++;
  } else if (e->conf > 0) {
    e->conf--;
  } else {
    e->stride = d;
  }
  /* Trigger once per new line, so a small stride does not re-issue the same candidates. */
  if (e->conf < 2 || (prev >> line_shift) == a->line) return 0;
  uint32_t n = 0;
  int64_t s = e->stride, lb = (int64_t)1 << line_shift;
  if (s >= lb || s <= -lb) {
    for (uint32_t k = 1; k <= deg && n < max; k++)
      out[n++] = (a->addr + (uint64_t)(s * (int64_t)k)) >> line_shift;
  } else { /* sub-line stride: run `degree` lines ahead in the stride's direction */
    for (uint32_t k = 1; k <= deg && n < max; k++)
      out[n++] = s > 0 ? a->line + k : a->line - k;
  }
  return n;
}

/* stream: per-4-KiB-region direction detection, prefetch ahead within the region. */
#define MEM_STR_TRACKERS 32 /* Intel's L2 streamer tracks 32 streams (optimization manual) */
#define MEM_STR_WAYS 4      /* trackers are found by region: 8 sets of 4 */
#define MEM_STR_REGION_SHIFT 12 /* streams do not cross 4 KiB pages (physical contiguity unknown) */

typedef struct mem_str_tracker {
  uint64_t region;      /* region number + 1; 0 = free */
  uint64_t last;        /* last line address */
  uint64_t next;        /* next line to prefetch (0 = none yet) */
  int32_t dir;          /* +1 / -1 / 0 */
  uint32_t conf;
  uint32_t lru;
  uint32_t pad;
} mem_str_tracker;

typedef struct mem_str_state {
  mem_str_tracker t[MEM_STR_TRACKERS];
  uint32_t clock;
} mem_str_state;

static inline uint32_t mem_str_train(void *st, uint32_t deg, uint32_t line_shift,
                                     const mem_pf_access *a, uint64_t *out, uint32_t max) {
  mem_str_state *s = st;
  uint32_t rshift = MEM_STR_REGION_SHIFT > line_shift ? MEM_STR_REGION_SHIFT - line_shift : 0;
  uint64_t region = (a->line >> rshift) + 1;
  mem_str_tracker *set = &s->t[(region % (MEM_STR_TRACKERS / MEM_STR_WAYS)) * MEM_STR_WAYS];
  mem_str_tracker *t = NULL;
  for (uint32_t i = 0; i < MEM_STR_WAYS; i++)
    if (set[i].region == region) {
      t = &set[i];
      break;
    }
  s->clock++;
  if (!t) {
    if (a->hit) return 0; /* allocate trackers on misses only */
    mem_str_tracker *lru = &set[0];
    for (uint32_t i = 1; i < MEM_STR_WAYS; i++)
      if (set[i].lru < lru->lru) lru = &set[i];
    *lru = (mem_str_tracker){0};
    lru->region = region;
    lru->last = a->line;
    lru->lru = s->clock;
    return 0;
  }
  t->lru = s->clock;
  if (a->line == t->last) return 0;
  int32_t dir = a->line > t->last ? 1 : -1;
  if (dir == t->dir) {
    if (t->conf < 3) t->conf++;
  } else {
    t->dir = dir;
    t->conf = 1;
    t->next = 0;
  }
  t->last = a->line;
  if (t->conf < 2) return 0;
  /* Keep the prefetch pointer `degree` lines ahead of the demand stream. */
  uint32_t dgr = deg, n = 0;
  uint64_t lo = (region - 1) << rshift, hi = lo + ((uint64_t)1 << rshift); /* [lo, hi) */
  uint64_t want_end = dir > 0 ? a->line + dgr : a->line - dgr;
  uint64_t p = t->next;
  if (!p || (dir > 0 ? p <= a->line : p >= a->line)) p = dir > 0 ? a->line + 1 : a->line - 1;
  while (n < max && (dir > 0 ? p <= want_end : p >= want_end) && p >= lo && p < hi) {
    out[n++] = p;
    p = dir > 0 ? p + 1 : p - 1;
  }
  t->next = p;
  return n;
}

/* mem_repl.c */
extern const mem_repl_ops *const mem_repl_table[REPL_NUM];
/* LRU for sets of at most 16 ways: the same choices as mem_repl_table[REPL_LRU], kept as ranks
 * in mem_cache.age, so the victim is found without a scan. */
extern const mem_repl_ops mem_repl_lru16;
#define MEM_AGE_NONE 0x7f /* age byte of a way a set does not have: never younger, never last */
/* Initialise the ranks of every set of c (ways in index order). */
void mem_repl_age_init(mem_cache *c);
extern const char *const mem_repl_names[REPL_NUM + 1];
/* mem_pf.c */
extern const mem_pf_ops *const mem_pf_table[PF_NUM];
extern const char *const mem_pf_names[PF_NUM + 1];

/* mem_dram.c */
/* Reset the DRAM state (channels, banks, queues) to idle. */
void mem_dram_init(mem_sys *m);
/* Has the read queue of line's channel room? (Inline: the miss probe asks it per miss.) */
static inline bool mem_dram_can_read(const mem_sys *m, uint64_t line) {
  const dram_config *d = &m->cfg->dram;
  return m->chan[line % d->channels].nread < d->queue;
}
/* Queue a read for LLC MSHR `mshr`, reaching the controller at `arrive`. */
void mem_dram_read(mem_sys *m, uint64_t line, uint64_t arrive, uint32_t mshr, uint64_t fid,
                   bool wrong_path, bool prefetch, uint64_t now);
/* Queue a write-back of line at cycle now (never blocks: a full write queue drains). */
void mem_dram_write(mem_sys *m, uint64_t line, uint64_t now);
/* Earliest scheduling cycle over all channels (UINT64_MAX when idle). */
static inline uint64_t mem_dram_next(const mem_sys *m) { return m->st->dram_next; }
/* Run the scheduler of every channel whose next_sched is <= t. */
void mem_dram_run(mem_sys *m, uint64_t t);

/* memsys.c, for mem_dram.c: the DRAM read for LLC MSHR idx was scheduled; its data reaches
 * the LLC at `fill`. */
void mem_llc_fill_known(mem_sys *m, uint32_t idx, uint64_t fill);
/* Emit an observer event (cheap no-op without an observer). */
static inline void mem_emit(const mem_sys *m, int kind, int level, uint32_t rid, uint64_t fid,
                            uint64_t addr, uint64_t cycle, uint64_t other, bool wp, bool pf) {
  if (!((m->obs_kinds >> kind) & 1)) return; /* no observer, or not a kind it wants */
  mem_event e = {(uint8_t)kind, (uint8_t)level, (uint8_t)wp, (uint8_t)pf, rid, fid, addr, cycle, other};
  m->obs(m->obs_ctx, &e);
}

#endif

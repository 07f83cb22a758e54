/* memsys.h — the memory hierarchy (L1I, L1D, L2, LLC, TLBs, prefetchers, DRAM) as the core
 * model sees it: requests in, ready cycles or completion callbacks out.
 *
 * Timing contract. mem_access() is called by the core at cycle `now`:
 *   MEM_DONE     the data is ready at *ready (>= now): a hit whose latency is known now
 *                (including a merge into an in-flight miss whose fill time is known);
 *   MEM_PENDING  a miss whose completion depends on later events (DRAM scheduling); it is
 *                reported later by mem_advance() through the completion callback with `tag`;
 *   MEM_BLOCKED  no MSHR / queue entry free: nothing happened; retry at or after *ready.
 * mem_advance(now) processes every internal event with cycle <= now, in cycle order, calling
 * the completion callback for finished requests. mem_next_event() is the earliest cycle at
 * which anything internal happens (UINT64_MAX when idle), for cycle skipping.
 *
 * State. A mem_sys holds no pointers into other objects except its configuration and the
 * callback context given at creation; mem_copy() copies the complete state between two
 * instances created from the same configuration (a checkpoint) without allocating. No
 * globals, no randomness: identical inputs give identical outputs. */
#ifndef WHATIF_MEMSYS_H
#define WHATIF_MEMSYS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "params.h"
#include "util.h"

typedef struct mem_sys mem_sys;

/* ---- configuration (all times in core cycles) ------------------------------------------ */

enum { REPL_LRU = 0, REPL_SRRIP, REPL_NUM };                       /* replacement policies */
enum { PF_NONE = 0, PF_NEXT_LINE, PF_IP_STRIDE, PF_STREAM, PF_NUM }; /* prefetchers */

typedef struct cache_config {
  uint32_t size;        /* bytes */
  uint32_t ways;
  uint32_t line;        /* bytes */
  uint32_t latency;     /* cycles from request to data on a hit at this level (load-to-use) */
  uint32_t mshrs;       /* miss-status holding registers (fill buffers at L1) */
  uint32_t bandwidth;   /* accesses accepted per cycle */
  int32_t replacement;  /* REPL_* */
  int32_t prefetcher;   /* PF_* */
  uint32_t pf_degree;   /* lines per prefetch trigger */
  bool inclusive;       /* LLC only: back-invalidate inner levels on eviction */
} cache_config;

typedef struct tlb_config {
  uint32_t entries, ways;
  uint32_t latency;     /* extra cycles on a hit in this level (0 for L1 TLBs) */
} tlb_config;

typedef struct dram_config {
  uint32_t channels, banks;      /* banks per channel */
  uint32_t row_bytes;            /* row-buffer size */
  uint32_t t_cas, t_rcd, t_rp;   /* cycles: column access, activate, precharge */
  uint32_t t_burst;              /* cycles the data bus is busy per 64-byte transfer */
  uint32_t queue;                /* request-queue entries per channel */
  uint32_t base_latency;         /* cycles of fixed overhead (controller, interconnect) */
} dram_config;

typedef struct mem_config {
  cache_config l1i, l1d, l2, llc;
  tlb_config itlb, dtlb, stlb;
  uint32_t page_bytes;
  uint32_t walk_latency;         /* cycles for a page walk after an STLB miss */
  dram_config dram;
} mem_config;

/* Request types. */
enum {
  MREQ_LOAD = 0,  /* data read */
  MREQ_STORE,     /* data write (from the store buffer after commit; write-allocate) */
  MREQ_IFETCH,    /* instruction fetch */
  MREQ_NUM
};

enum { MEM_DONE = 0, MEM_PENDING, MEM_BLOCKED };

typedef struct mem_req {
  uint64_t addr;       /* byte address (virtual = physical in this model) */
  uint64_t pc;         /* PC of the requesting instruction (IP-based prefetchers) */
  uint64_t fid;        /* flow id of the requesting dynamic instruction (for the observer) */
  uint32_t size;       /* bytes; a request never crosses a line (the core splits) */
  uint32_t tag;        /* the core's handle, echoed in the completion callback */
  uint8_t type;        /* MREQ_* */
  uint8_t wrong_path;  /* issued by a wrong-path instruction */
  uint8_t retry;       /* (added) 1: the core sends again a request refused before (MEM_BLOCKED);
                          a refused request is counted once, at its first refusal */
} mem_req;

/* Completion of a MEM_PENDING request: ready at `cycle`. */
typedef void (*mem_done_fn)(void *ctx, uint32_t tag, uint64_t cycle);

/* Memory-system events for observers (MFIR). Resource ids (rid) are stable small integers:
 * level * 1e6 + kind * 1e5 + entry (see mem_rid_name). */
typedef enum mem_ev_kind {
  MEV_HIT, MEV_MISS, MEV_MERGE,        /* lookup outcome at a level */
  MEV_MSHR_ALLOC, MEV_MSHR_RELEASE,    /* miss-status holding register entry */
  MEV_MSHR_FULL,                       /* request blocked: every MSHR of the level busy */
  MEV_FILL, MEV_EVICT, MEV_WRITEBACK,  /* line fill, eviction (victim address), dirty write-back */
  MEV_DRAM_ENQ, MEV_DRAM_DEQ,          /* DRAM request queue */
  MEV_PREFETCH,                        /* prefetch issued */
  MEV_TLB_MISS,
  MEV_NUM
} mem_ev_kind;

typedef struct mem_event {
  uint8_t kind;        /* mem_ev_kind */
  uint8_t level;       /* 0 = L1I, 1 = L1D, 2 = L2, 3 = LLC, 4 = DRAM, 5 = TLB */
  uint8_t wrong_path;
  uint8_t prefetch;    /* caused by a prefetcher, not an instruction */
  uint32_t rid;        /* resource id (MSHR entry, queue slot, bank, cache set) */
  uint64_t fid;        /* requesting flow (UINT64_MAX for prefetches and write-backs) */
  uint64_t addr;       /* line address (the victim's for EVICT/WRITEBACK) */
  uint64_t cycle;
  uint64_t other_fid;  /* EVICT: the flow whose fill evicted the line; FULL: current holder */
} mem_event;
typedef void (*mem_event_fn)(void *ctx, const mem_event *e);

/* Per-level statistics, as `whatif run` reports them under memory.<level>. */
typedef struct mem_level_stats {
  uint64_t accesses, hits, misses, merges;
  uint64_t miss_latency_sum;     /* cycles, summed over misses (for the average) */
  uint64_t mshr_occupancy_sum;   /* entry-cycles (mean occupancy = sum / cycles) */
  uint64_t mshr_full_events;
  uint64_t writebacks, evictions;
  uint64_t wrong_path_accesses;
  uint64_t pf_issued, pf_useful, pf_late, pf_polluting;
  /* Added after the first contract: */
  uint64_t pf_useless;           /* prefetched lines evicted without a demand use */
  uint64_t port_blocked;         /* L1 only: requests refused because `bandwidth` was used up */
} mem_level_stats;

typedef struct mem_dram_stats {
  uint64_t reads, writes, row_hits, row_misses, row_conflicts;
  uint64_t queue_wait_sum;       /* cycles waited in the request queue, summed */
  uint64_t busy_cycles;          /* data-bus cycles */
  /* Added after the first contract: */
  uint64_t queue_full_events;    /* requests refused because the read queue was full */
} mem_dram_stats;

typedef struct mem_tlb_stats {
  uint64_t accesses, misses, walks;
} mem_tlb_stats;

/* The parameter table of mem_config (nested under `mem` in a machine configuration). */
extern const param_table mem_param_table;
/* Default values (Golden Cove / Sapphire Rapids class). */
void mem_config_default(mem_config *cfg);
/* Check cross-field consistency (sizes divisible by ways * line, powers of two, ...). */
wi_rc mem_config_check(const mem_config *cfg, wi_err *err);
uint32_t mem_line_bytes(const mem_config *cfg);

/* Create a memory system (cfg must outlive it). done/ctx receive MEM_PENDING completions. */
mem_sys *mem_new(const mem_config *cfg, mem_done_fn done, void *ctx);
void mem_free(mem_sys *m); /* accepts NULL */
/* Copy all state from src to dst (same configuration), keeping dst's callbacks. */
void mem_copy(mem_sys *dst, const mem_sys *src);
/* Attach an event observer (NULL to detach). With none attached the cost is a null check. */
void mem_set_observer(mem_sys *m, mem_event_fn fn, void *ctx);

int mem_access(mem_sys *m, const mem_req *req, uint64_t now, uint64_t *ready);
void mem_advance(mem_sys *m, uint64_t now);
uint64_t mem_next_event(const mem_sys *m);

/* Perfect-cache intervention support: treat every access of `type` as an L1 hit. */
void mem_set_perfect(mem_sys *m, int type, bool on);

/* Statistics: level 0 L1I, 1 L1D, 2 L2, 3 LLC. */
const mem_level_stats *mem_stats(const mem_sys *m, int level);
const mem_dram_stats *mem_get_dram_stats(const mem_sys *m);
const mem_tlb_stats *mem_tlb_stats_get(const mem_sys *m, int which); /* 0 ITLB, 1 DTLB, 2 STLB */
/* Write statistics as JSON members (level objects) into an open JSON object. */
void mem_stats_json(const mem_sys *m, uint64_t cycles, uint64_t insns, jw *w);
/* Write a human-readable statistics table. */
void mem_stats_print(const mem_sys *m, uint64_t cycles, uint64_t insns, FILE *f);
/* Name of a resource id ("L1D.mshr[3]", "DRAM.bank[1.5]", ...) into buf. */
const char *mem_rid_name(uint32_t rid, char *buf, size_t n);

/* ---- added after the first contract -------------------------------------------------------
 * Notes on the contract above, as implemented:
 * - The completion callback is called from inside mem_advance(); it must not call back into
 *   the same mem_sys. mem_access() never calls it.
 * - mem_copy() copies caches, MSHRs, events, DRAM, TLBs, prefetcher tables and statistics;
 *   dst keeps its own callbacks, observer and mem_set_perfect() settings.
 * - Call order: mem_advance(now) before the mem_access() calls of cycle `now`; `now` never
 *   decreases. A MEM_PENDING completion arrives through the callback during the
 *   mem_advance() that reaches its cycle (the callback's `cycle` is that cycle).
 * - MEM_BLOCKED happens when: an MSHR is needed at some level and all are busy (that level's
 *   mshr_full_events, observer MEV_MSHR_FULL at that level); the DRAM read queue of the
 *   line's channel is full (dram queue_full_events, MEV_MSHR_FULL at level 4); the L1's
 *   `bandwidth` accesses were already accepted this cycle (port_blocked, *ready = now + 1);
 *   or, rarely, the L1's pool of pending waiters (32 per MSHR, shared) is used up. A refused
 *   request counts once, at its first refusal: a request sent again with `retry` set is not
 *   counted again (the observer still sees MEV_MSHR_FULL for every refusal). *ready is the
 *   earliest cycle at which the resource can have freed (>= now + 1); retrying earlier is
 *   harmless.
 * - Hits, misses, merges: a miss allocates an MSHR; a merge joins an MSHR already in flight
 *   for the line (Intel's FB_HIT, not counted in `misses` or MPKI); accesses = hits + misses
 *   + merges. A demand merging into a prefetch's MSHR counts pf_late at that level.
 * - Statistics (accesses, hits, misses, merges, wrong_path_accesses) count demand requests
 *   (correct- and wrong-path instructions); requests made by prefetchers are counted only in
 *   pf_* of the level whose prefetcher issued them. avg miss latency = miss_latency_sum /
 *   misses, from MSHR allocation to fill at that level. pf_useful: first demand hits on
 *   prefetched lines; pf_late: demands that merged into a prefetch still in flight;
 *   pf_useless: prefetched lines evicted unused; pf_polluting: demand misses on a line that
 *   a prefetch fill evicted (remembered in a 64-entry filter per level).
 * - Observer fields: fid is the requesting flow (UINT64_MAX for prefetch-owned MSHRs and
 *   write-backs); other_fid is, for MERGE the flow that owns the MSHR joined, for
 *   MSHR_ALLOC/FILL/PREFETCH of a prefetch the flow whose access triggered it, for EVICT and
 *   WRITEBACK the flow whose fill needed the room, for MSHR_FULL the flow holding the entry
 *   that frees first. rid: MSHR entries for ALLOC/RELEASE/FILL/MERGE/FULL, cache sets for
 *   HIT/MISS/EVICT/WRITEBACK/PREFETCH, DRAM queue slots for DRAM_ENQ/DEQ (write queue slots
 *   are numbered from 500), the TLB for TLB_MISS. */

/* Limit the observer to the event kinds in `kinds` (bit k: mem_ev_kind k); mem_set_observer()
 * resets it to every kind. An observer that needs a few kinds (the core model's miss tracking
 * needs MEV_MISS only) spares the memory system building and passing the others. */
void mem_set_observer_kinds(mem_sys *m, uint32_t kinds);

/* Zero every statistic (after a warm-up), keeping all other state. */
void mem_stats_reset(mem_sys *m);
/* Bytes mem_copy() copies (the whole mutable state). */
size_t mem_state_bytes(const mem_sys *m);
/* Name of an event kind ("hit", "mshr_alloc", ...). */
const char *mem_ev_kind_name(int kind);
/* Name of a level as used in statistics ("l1i", "l1d", "l2", "llc", "dram", "tlb"). */
const char *mem_level_name(int level);

#endif

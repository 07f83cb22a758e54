/* mem_stats.c — memory-hierarchy reports (text table and JSON under memory.<level>) and the
 * names of levels, event kinds and resource ids. */
#include <inttypes.h>
#include <stdio.h>

#include "mem_int.h"

static const char *const level_names[] = {"l1i", "l1d", "l2", "llc", "dram", "tlb"};
static const char *const level_upper[] = {"L1I", "L1D", "L2", "LLC", "DRAM", "TLB"};

const char *mem_level_name(int level) {
  return level >= 0 && level <= ML_TLB ? level_names[level] : "?";
}

const char *mem_ev_kind_name(int kind) {
  static const char *const names[MEV_NUM] = {
      "hit", "miss", "merge", "mshr_alloc", "mshr_release", "mshr_full", "fill",
      "evict", "writeback", "dram_enq", "dram_deq", "prefetch", "tlb_miss"};
  return kind >= 0 && kind < MEV_NUM ? names[kind] : "?";
}

const char *mem_rid_name(uint32_t rid, char *buf, size_t n) {
  uint32_t level = rid / 1000000u, kind = rid / 100000u % 10u, e = rid % 100000u;
  const char *lv = level <= ML_TLB ? level_upper[level] : "?";
  static const char *const tlbs[] = {"itlb", "dtlb", "stlb"};
  switch (kind) {
  case MRK_MSHR: snprintf(buf, n, "%s.mshr[%u]", lv, e); break;
  case MRK_SET: snprintf(buf, n, "%s.set[%u]", lv, e); break;
  case MRK_QUEUE:
    if (e % 1000 >= 500) snprintf(buf, n, "%s.wqueue[%u.%u]", lv, e / 1000, e % 1000 - 500);
    else snprintf(buf, n, "%s.queue[%u.%u]", lv, e / 1000, e % 1000);
    break;
  case MRK_BANK: snprintf(buf, n, "%s.bank[%u.%u]", lv, e / 1000, e % 1000); break;
  case MRK_BUS: snprintf(buf, n, "%s.bus[%u]", lv, e); break;
  case MRK_TLB: snprintf(buf, n, "%s.%s", lv, e < 3 ? tlbs[e] : "?"); break;
  case MRK_PORT: snprintf(buf, n, "%s.port", lv); break;
  default: snprintf(buf, n, "%s.?%u[%u]", lv, kind, e); break;
  }
  return buf;
}

static double ratio(uint64_t a, uint64_t b) { return b ? (double)a / (double)b : 0.0; }

void mem_stats_json(const mem_sys *m, uint64_t cycles, uint64_t insns, jw *w) {
  for (int l = 0; l < ML_NCACHE; l++) {
    const mem_level_stats *s = &m->st->stats[l];
    jw_key(w, level_names[l]);
    jw_obj_begin(w);
    jw_kuint(w, "accesses", s->accesses);
    jw_kuint(w, "hits", s->hits);
    jw_kuint(w, "misses", s->misses);
    jw_kuint(w, "merges", s->merges);
    jw_knum(w, "hit_rate", ratio(s->hits, s->accesses));
    jw_knum(w, "mpki", 1000.0 * ratio(s->misses, insns));
    jw_knum(w, "avg_miss_latency_cycles", ratio(s->miss_latency_sum, s->misses));
    jw_knum(w, "mean_mshr_occupancy", ratio(s->mshr_occupancy_sum, cycles));
    jw_kuint(w, "mshr_full_events", s->mshr_full_events);
    jw_kuint(w, "evictions", s->evictions);
    jw_kuint(w, "writebacks", s->writebacks);
    jw_kuint(w, "wrong_path_accesses", s->wrong_path_accesses);
    if (l <= ML_L1D) jw_kuint(w, "port_blocked", s->port_blocked);
    jw_key(w, "prefetch");
    jw_obj_begin(w);
    jw_kstr(w, "kind", mem_pf_names[m->c[l].cfg->prefetcher]);
    jw_kuint(w, "issued", s->pf_issued);
    jw_kuint(w, "useful", s->pf_useful);
    jw_kuint(w, "late", s->pf_late);
    jw_kuint(w, "polluting", s->pf_polluting);
    jw_kuint(w, "useless", s->pf_useless);
    jw_obj_end(w);
    jw_obj_end(w);
  }
  const mem_dram_stats *d = &m->st->dram;
  uint64_t rows = d->row_hits + d->row_misses + d->row_conflicts;
  jw_key(w, "dram");
  jw_obj_begin(w);
  jw_kuint(w, "reads", d->reads);
  jw_kuint(w, "writes", d->writes);
  jw_kuint(w, "row_hits", d->row_hits);
  jw_kuint(w, "row_misses", d->row_misses);
  jw_kuint(w, "row_conflicts", d->row_conflicts);
  jw_knum(w, "row_hit_rate", ratio(d->row_hits, rows));
  jw_knum(w, "mean_queue_wait_cycles", ratio(d->queue_wait_sum, d->reads));
  jw_kuint(w, "bus_busy_cycles", d->busy_cycles);
  jw_knum(w, "bus_utilization", ratio(d->busy_cycles, cycles * m->cfg->dram.channels));
  jw_knum(w, "bytes_per_cycle", ratio((d->reads + d->writes) * m->cfg->l1d.line, cycles));
  jw_kuint(w, "queue_full_events", d->queue_full_events);
  jw_obj_end(w);
  static const char *const tlbs[] = {"itlb", "dtlb", "stlb"};
  for (int i = 0; i < 3; i++) {
    const mem_tlb_stats *t = &m->st->tlb[i];
    jw_key(w, tlbs[i]);
    jw_obj_begin(w);
    jw_kuint(w, "accesses", t->accesses);
    jw_kuint(w, "misses", t->misses);
    jw_knum(w, "mpki", 1000.0 * ratio(t->misses, insns));
    if (i == 2) jw_kuint(w, "walks", t->walks);
    jw_obj_end(w);
  }
}

void mem_stats_print(const mem_sys *m, uint64_t cycles, uint64_t insns, FILE *f) {
  fprintf(f, "%-5s %12s %7s %12s %10s %8s %9s %8s %10s %10s %s\n", "level", "accesses", "hit%",
          "misses", "merges", "MPKI", "miss-lat", "MSHR-occ", "mshr-full", "writebacks",
          "prefetch issued/useful/late/polluting/useless");
  for (int l = 0; l < ML_NCACHE; l++) {
    const mem_level_stats *s = &m->st->stats[l];
    fprintf(f, "%-5s %12" PRIu64 " %6.2f%% %12" PRIu64 " %10" PRIu64 " %8.3f %9.1f %8.2f %10" PRIu64
               " %10" PRIu64 " ",
            level_upper[l], s->accesses, 100.0 * ratio(s->hits, s->accesses), s->misses, s->merges,
            1000.0 * ratio(s->misses, insns), ratio(s->miss_latency_sum, s->misses),
            ratio(s->mshr_occupancy_sum, cycles), s->mshr_full_events, s->writebacks);
    if (m->c[l].cfg->prefetcher == PF_NONE) fprintf(f, "-\n");
    else
      fprintf(f, "%s %" PRIu64 "/%" PRIu64 "/%" PRIu64 "/%" PRIu64 "/%" PRIu64 "\n",
              mem_pf_names[m->c[l].cfg->prefetcher], s->pf_issued, s->pf_useful, s->pf_late,
              s->pf_polluting, s->pf_useless);
  }
  const mem_dram_stats *d = &m->st->dram;
  uint64_t rows = d->row_hits + d->row_misses + d->row_conflicts;
  fprintf(f,
          "DRAM  reads %" PRIu64 ", writes %" PRIu64 ", row-buffer hit rate %.1f%% (%" PRIu64
          " hits, %" PRIu64 " misses, %" PRIu64 " conflicts), mean queue wait %.1f cycles, bus "
          "utilization %.1f%%, %.2f bytes/cycle\n",
          d->reads, d->writes, 100.0 * ratio(d->row_hits, rows), d->row_hits, d->row_misses,
          d->row_conflicts, ratio(d->queue_wait_sum, d->reads),
          100.0 * ratio(d->busy_cycles, cycles * m->cfg->dram.channels),
          ratio((d->reads + d->writes) * m->cfg->l1d.line, cycles));
  const mem_tlb_stats *t = m->st->tlb;
  fprintf(f,
          "TLB   ITLB %" PRIu64 " misses / %" PRIu64 ", DTLB %" PRIu64 " misses / %" PRIu64
          ", STLB %" PRIu64 " misses / %" PRIu64 " (%.3f walks per 1000 instructions)\n",
          t[0].misses, t[0].accesses, t[1].misses, t[1].accesses, t[2].misses, t[2].accesses,
          1000.0 * ratio(t[2].walks, insns));
}

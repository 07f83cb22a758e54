/* test_memsys.c — the memory hierarchy driven directly with request sequences through a small
 * event loop: per-level latencies, MSHR-limited overlap, DRAM bandwidth, prefetchers,
 * replacement, write-backs, TLBs, inclusion, observer events, checkpoints and a stress run. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "cfgtree.h"
#include "memsys.h"
#include "util.h"

/* ---- harness ------------------------------------------------------------------------------ */

#define MAXTAG 4096

typedef struct harness {
  mem_config cfg;
  mem_sys *m;
  uint64_t now;                 /* cycles */
  uint64_t done_at[MAXTAG];     /* completion cycle per tag (UINT64_MAX = pending) */
  uint8_t inflight[MAXTAG];     /* MEM_PENDING and not yet completed */
  uint32_t ndone;               /* callbacks received */
  uint32_t next_tag;
} harness;

static void on_done(void *ctx, uint32_t tag, uint64_t cycle) {
  harness *h = ctx;
  assert_true(tag < MAXTAG);
  if (h->done_at[tag] != UINT64_MAX) fail_msg("tag %u completed twice", tag);
  if (!h->inflight[tag]) fail_msg("tag %u completed but was not pending", tag);
  h->done_at[tag] = cycle;
  h->inflight[tag] = 0;
  h->ndone++;
}

/* A small, easily reasoned-about hierarchy: no prefetchers, no TLB penalties, no port limits. */
static void test_config(mem_config *c) {
  mem_config_default(c);
  c->l1i = (cache_config){32768, 8, 64, 4, 8, 0, REPL_LRU, PF_NONE, 0, false};
  c->l1d = (cache_config){32768, 8, 64, 5, 16, 0, REPL_LRU, PF_NONE, 0, false};
  c->l2 = (cache_config){262144, 8, 64, 16, 32, 0, REPL_LRU, PF_NONE, 0, false};
  c->llc = (cache_config){2097152, 16, 64, 50, 64, 0, REPL_LRU, PF_NONE, 0, false};
  c->itlb = (tlb_config){256, 8, 0};
  c->dtlb = (tlb_config){256, 8, 0};
  c->stlb = (tlb_config){8192, 8, 0};
  c->walk_latency = 0;
  c->dram = (dram_config){.channels = 2, .banks = 8, .row_bytes = 4096, .t_cas = 20, .t_rcd = 20,
                          .t_rp = 20, .t_burst = 4, .queue = 32, .base_latency = 40};
}

static harness *h_new(const mem_config *cfg) {
  harness *h = xcalloc(1, sizeof *h);
  h->cfg = *cfg;
  wi_err err = {0};
  if (mem_config_check(&h->cfg, &err) != WI_OK) fail_msg("config: %s", err.msg);
  h->m = mem_new(&h->cfg, on_done, h);
  for (uint32_t i = 0; i < MAXTAG; i++) h->done_at[i] = UINT64_MAX;
  return h;
}

static void h_free(harness *h) {
  if (!h) return;
  mem_free(h->m);
  free(h);
}

static uint32_t h_tag(harness *h) {
  uint32_t t = h->next_tag++ % MAXTAG;
  if (h->inflight[t]) fail_msg("tag %u reused while pending", t);
  h->done_at[t] = UINT64_MAX;
  return t;
}

/* Advance time to t, processing every internal event on the way. */
static void h_advance(harness *h, uint64_t t) {
  if (t > h->now) h->now = t;
  mem_advance(h->m, h->now);
}

/* Issue one request at h->now, retrying while blocked (time moves to the retry cycle).
 * Returns the cycle the request was accepted; *tag_out is its tag; the result is MEM_DONE
 * (with *ready) or MEM_PENDING. */
static int h_issue(harness *h, uint64_t addr, uint64_t pc, int type, bool wp, uint32_t *tag_out,
                   uint64_t *ready) {
  uint32_t tag = h_tag(h);
  mem_req r = {.addr = addr, .pc = pc, .fid = h->next_tag, .size = 8, .tag = tag,
               .type = (uint8_t)type, .wrong_path = wp};
  for (int tries = 0;; tries++) {
    mem_advance(h->m, h->now);
    int rc = mem_access(h->m, &r, h->now, ready);
    if (rc != MEM_BLOCKED) {
      if (rc == MEM_PENDING) h->inflight[tag] = 1;
      *tag_out = tag;
      return rc;
    }
    assert_true(*ready > h->now);
    assert_true(tries < 1000000);
    h->now = *ready;
  }
}

/* Run events until tag completes; returns its cycle. */
static uint64_t h_wait(harness *h, uint32_t tag) {
  while (h->done_at[tag] == UINT64_MAX) {
    uint64_t t = mem_next_event(h->m);
    if (t == UINT64_MAX) fail_msg("tag %u pending with no event left", tag);
    h_advance(h, t);
  }
  return h->done_at[tag];
}

/* One access, waited for; returns its latency from issue (cycles). h->now moves to the end. */
static uint64_t h_access(harness *h, uint64_t addr, uint64_t pc, int type) {
  uint32_t tag;
  uint64_t ready;
  int rc = h_issue(h, addr, pc, type, false, &tag, &ready);
  uint64_t start = h->now;
  if (rc == MEM_PENDING) ready = h_wait(h, tag);
  assert_true(ready >= start);
  h_advance(h, ready);
  return ready - start;
}

/* Drain every pending event. */
static void h_drain(harness *h) {
  for (uint64_t t; (t = mem_next_event(h->m)) != UINT64_MAX;) h_advance(h, t);
}

/* A random cyclic order of the nlines lines starting at base. */
static uint64_t *chase_order(uint64_t base, uint32_t nlines, uint64_t seed) {
  uint64_t *a = xmalloc(nlines * sizeof *a);
  for (uint32_t i = 0; i < nlines; i++) a[i] = base + (uint64_t)i * 64;
  wi_rng r;
  rng_seed(&r, seed);
  for (uint32_t i = nlines - 1; i > 0; i--) {
    uint32_t j = (uint32_t)rng_below(&r, i + 1);
    uint64_t t = a[i];
    a[i] = a[j];
    a[j] = t;
  }
  return a;
}

/* Mean latency (cycles) of a dependent pointer chase over `bytes`, after `warm` passes. */
static double chase(const mem_config *cfg, uint64_t bytes, int warm, uint32_t max_measure) {
  harness *h = h_new(cfg);
  uint32_t n = (uint32_t)(bytes / 64);
  uint64_t *ord = chase_order(0x10000000, n, 42);
  for (int p = 0; p < warm; p++)
    for (uint32_t i = 0; i < n; i++) h_access(h, ord[i], 0x400000, MREQ_LOAD);
  uint64_t sum = 0;
  uint32_t cnt = n < max_measure ? n : max_measure;
  for (uint32_t i = 0; i < cnt; i++) sum += h_access(h, ord[i], 0x400000, MREQ_LOAD);
  free(ord);
  h_free(h);
  return (double)sum / cnt;
}

/* ---- the required mechanisms ------------------------------------------------------------- */

/* A pointer chase whose footprint fits a level shows that level's configured latency. */
static void test_chase_latency_per_level(void **state) {
  (void)state;
  mem_config c;
  test_config(&c);
  double l1 = chase(&c, 16 << 10, 1, 1u << 30);
  double l2 = chase(&c, 128 << 10, 1, 1u << 30);
  double l3 = chase(&c, 1 << 20, 1, 1u << 30);
  double dr = chase(&c, 64 << 20, 0, 20000);
  fprintf(stderr, "chase: L1 %.2f  L2 %.2f  LLC %.2f  DRAM %.2f cycles\n", l1, l2, l3, dr);
  assert_true(fabs(l1 - c.l1d.latency) < 0.5);
  assert_true(fabs(l2 - c.l2.latency) < 0.5);
  assert_true(fabs(l3 - c.llc.latency) < 0.5);
  /* DRAM: llc + base + (row hit .. conflict) + t_cas + t_burst, one miss at a time. */
  double lo = c.llc.latency + c.dram.base_latency + c.dram.t_cas + c.dram.t_burst;
  double hi = lo + c.dram.t_rp + c.dram.t_rcd;
  assert_true(dr >= lo && dr <= hi);
  /* The latency follows the configuration, not a constant. */
  c.l2.latency = 25;
  c.llc.latency = 70;
  assert_true(fabs(chase(&c, 128 << 10, 1, 1u << 30) - 25) < 0.5);
  assert_true(fabs(chase(&c, 1 << 20, 1, 1u << 30) - 70) < 0.5);
}

/* The Golden Cove defaults: L1 5 cycles, L2 16 cycles, L2 + LLC victims hold 3 MiB, DRAM a
 * few hundred cycles. */
static void test_chase_golden_cove(void **state) {
  (void)state;
  mem_config c;
  mem_config_default(&c);
  double l1 = chase(&c, 32 << 10, 1, 1u << 30);
  double l2 = chase(&c, 256 << 10, 1, 1u << 30); /* 64 pages: within the 96-entry DTLB */
  double l3 = chase(&c, 3 << 20, 2, 1u << 30); /* > 2 MiB L2, < L2 + 1.875 MiB LLC victims */
  double dr = chase(&c, 256 << 20, 0, 4000);
  fprintf(stderr, "golden cove chase: L1 %.2f  L2 %.2f  3 MiB %.2f  DRAM %.2f cycles\n", l1, l2, l3, dr);
  /* 768 pages: mostly DTLB misses + STLB hits (7); L2 or LLC (100) hits, few DRAM. */
  assert_true(l3 > 16 + 7 && l3 < 100 + 7 + 15);
  assert_true(fabs(l1 - 5) < 0.5);
  assert_true(fabs(l2 - 16) < 0.5);
  /* llc 100 + base 120 + t_cas 50 + burst 10 + row 0..98 + TLB up to 37 */
  assert_true(dr > 300 && dr < 460);
}

/* Makespan (cycles) of n independent loads issued back to back at cycle t0 to lines that
 * were made resident at `where` (2 = L2 only, 3 = LLC only). */
static uint64_t burst(mem_config *c, uint32_t n, int where) {
  harness *h = h_new(c);
  uint64_t base = 0x20000000;
  for (uint32_t i = 0; i < n; i++) h_access(h, base + i * 64ull, 1, MREQ_LOAD);
  /* Flush the levels above `where` by streaming other lines through them. */
  uint64_t flush = where == 2 ? 2 * (uint64_t)c->l1d.size : 2 * (uint64_t)c->l2.size;
  for (uint64_t a = 0; a < flush; a += 64) h_access(h, 0x40000000 + a, 2, MREQ_LOAD);
  h_drain(h);
  uint64_t t0 = h->now + 10, end = 0;
  h->now = t0;
  uint32_t tags[256];
  uint64_t ready[256];
  int rc[256];
  for (uint32_t i = 0; i < n; i++) {
    rc[i] = h_issue(h, base + i * 64ull, 1, MREQ_LOAD, false, &tags[i], &ready[i]);
    if (rc[i] == MEM_DONE && ready[i] > end) end = ready[i];
  }
  for (uint32_t i = 0; i < n; i++)
    if (rc[i] == MEM_PENDING) {
      uint64_t t = h_wait(h, tags[i]);
      if (t > end) end = t;
    }
  const mem_level_stats *s = mem_stats(h->m, where);
  assert_true(s->hits >= n); /* really served from that level */
  h_free(h);
  return end - t0;
}

/* N independent misses with M MSHRs take about ceil(N/M) miss latencies. */
static void test_mshr_overlap(void **state) {
  (void)state;
  mem_config c;
  test_config(&c);
  const uint32_t n = 64;
  uint64_t t[3];
  uint32_t ms[3] = {4, 8, 16};
  for (int i = 0; i < 3; i++) { /* L1 fill buffers against L2 hits */
    c.l1d.mshrs = ms[i];
    t[i] = burst(&c, n, 2);
    uint64_t want = (n + ms[i] - 1) / ms[i] * c.l2.latency;
    fprintf(stderr, "L1 MSHRs %2u: %3u L2 hits in %4llu cycles (ceil(N/M) x latency = %llu)\n", ms[i],
            n, (unsigned long long)t[i], (unsigned long long)want);
    assert_true(t[i] + 2 >= want && t[i] <= want + want / 10 + 2);
  }
  assert_true(t[0] > t[1] && t[1] > t[2]);
  c.l1d.mshrs = 64; /* L2 MSHRs against LLC hits */
  for (int i = 0; i < 3; i++) {
    c.l2.mshrs = ms[i];
    t[i] = burst(&c, n, 3);
    uint64_t want = (n + ms[i] - 1) / ms[i] * c.llc.latency;
    fprintf(stderr, "L2 MSHRs %2u: %3u LLC hits in %4llu cycles (ceil(N/M) x latency = %llu)\n", ms[i],
            n, (unsigned long long)t[i], (unsigned long long)want);
    assert_true(t[i] + 2 >= want && t[i] <= want + want / 10 + 2);
  }
  assert_true(t[0] > t[1] && t[1] > t[2]);
}

/* Stream n new lines as fast as the hierarchy accepts them; returns bytes per cycle. */
static double stream_bw(const mem_config *c, uint32_t n, uint64_t *busy, uint64_t *span) {
  harness *h = h_new(c);
  uint64_t base = 0x80000000, t0 = h->now, end = 0;
  uint32_t *tags = xmalloc(n * sizeof *tags);
  int *rcs = xmalloc(n * sizeof *rcs);
  for (uint32_t i = 0; i < n; i++) {
    uint64_t ready;
    rcs[i] = h_issue(h, base + i * 64ull, 7, MREQ_LOAD, false, &tags[i], &ready);
    if (rcs[i] == MEM_DONE && ready > end) end = ready;
    if (rcs[i] == MEM_PENDING) { /* tags recycle after MAXTAG: collect as we go */
      if (i >= MAXTAG / 2 && rcs[i - MAXTAG / 2] == MEM_PENDING) {
        uint64_t d = h_wait(h, tags[i - MAXTAG / 2]);
        if (d > end) end = d;
        rcs[i - MAXTAG / 2] = MEM_DONE;
      }
    }
  }
  for (uint32_t i = 0; i < n; i++)
    if (rcs[i] == MEM_PENDING) {
      uint64_t d = h_wait(h, tags[i]);
      if (d > end) end = d;
    }
  *busy = mem_get_dram_stats(h->m)->busy_cycles;
  *span = end - t0;
  double bw = (double)n * 64 / (double)(end - t0);
  free(tags);
  free(rcs);
  h_free(h);
  return bw;
}

/* A streaming read saturates the configured DRAM bandwidth and not more. */
static void test_dram_bandwidth(void **state) {
  (void)state;
  mem_config c;
  test_config(&c);
  c.l1d.mshrs = 64;
  c.l2.mshrs = 64;
  c.llc.mshrs = 128;
  c.dram.channels = 1;
  c.dram.t_burst = 20; /* 3.2 bytes/cycle */
  uint64_t busy, span;
  double bw1 = stream_bw(&c, 4000, &busy, &span);
  double peak1 = 64.0 / c.dram.t_burst;
  fprintf(stderr, "stream, 1 channel: %.3f B/cycle (peak %.3f), bus busy %llu of %llu cycles\n", bw1,
          peak1, (unsigned long long)busy, (unsigned long long)span);
  assert_true(bw1 <= peak1 * 1.0001);
  assert_true(bw1 >= peak1 * 0.95);
  assert_true(busy <= span);
  c.dram.channels = 2;
  double bw2 = stream_bw(&c, 4000, &busy, &span);
  fprintf(stderr, "stream, 2 channels: %.3f B/cycle (peak %.3f)\n", bw2, 2 * peak1);
  assert_true(bw2 <= 2 * peak1 * 1.0001);
  assert_true(bw2 >= 2 * peak1 * 0.9);
  c.dram.t_burst = 40; /* halving the bus rate halves the stream */
  double bw3 = stream_bw(&c, 4000, &busy, &span);
  assert_true(bw3 <= peak1 * 1.0001 && bw3 >= peak1 * 0.9);
}

/* Row-buffer states and FR-FCFS: with one bank, a later row hit overtakes an older row
 * conflict; a full read queue refuses requests; streams hit open rows, random reads do not. */
static void test_dram_rows_frfcfs(void **state) {
  (void)state;
  mem_config c;
  test_config(&c);
  c.dram.channels = 1;
  c.dram.banks = 1;
  harness *h = h_new(&c);
  const uint64_t row = c.dram.row_bytes;
  uint32_t ta, tb, tc;
  uint64_t r;
  h_issue(h, 0x100000000, 1, MREQ_LOAD, false, &ta, &r);       /* row R, oldest */
  h_issue(h, 0x100000000 + row, 1, MREQ_LOAD, false, &tb, &r); /* row R+1: conflicts */
  h_issue(h, 0x100000040, 1, MREQ_LOAD, false, &tc, &r);       /* row R again: a hit */
  uint64_t a = h_wait(h, ta), b = h_wait(h, tb), cc = h_wait(h, tc);
  fprintf(stderr, "FR-FCFS completions: A %llu, B(conflict) %llu, C(row hit) %llu\n", (unsigned long long)a,
          (unsigned long long)b, (unsigned long long)cc);
  assert_true(a < cc && cc < b);
  const mem_dram_stats *d = mem_get_dram_stats(h->m);
  assert_int_equal(d->row_misses, 1);
  assert_int_equal(d->row_hits, 1);
  assert_int_equal(d->row_conflicts, 1);
  assert_true(d->queue_wait_sum > 0);
  h_free(h);
  /* Bounded queue: 2 entries, 8 parallel misses. */
  c.dram.queue = 2;
  h = h_new(&c);
  uint32_t tags[8];
  for (uint32_t i = 0; i < 8; i++) h_issue(h, 0x110000000 + i * 8192ull, 1, MREQ_LOAD, false, &tags[i], &r);
  for (uint32_t i = 0; i < 8; i++) h_wait(h, tags[i]);
  assert_true(mem_get_dram_stats(h->m)->queue_full_events > 0);
  h_free(h);
  /* Streams hit open rows; random lines over 1 GiB mostly conflict. */
  test_config(&c);
  h = h_new(&c);
  for (uint32_t i = 0; i < 2000; i++) h_access(h, 0x120000000 + i * 64ull, 1, MREQ_LOAD);
  d = mem_get_dram_stats(h->m);
  double seq = (double)d->row_hits / (double)d->reads;
  h_free(h);
  h = h_new(&c);
  wi_rng rng;
  rng_seed(&rng, 7);
  for (uint32_t i = 0; i < 2000; i++) h_access(h, 0x200000000 + (rng_next(&rng) % (1ull << 30) & ~63ull), 1, MREQ_LOAD);
  d = mem_get_dram_stats(h->m);
  double rnd = (double)d->row_hits / (double)d->reads;
  fprintf(stderr, "row-buffer hit rate: sequential %.3f, random %.3f (conflicts %llu)\n", seq, rnd,
          (unsigned long long)d->row_conflicts);
  assert_true(seq > 0.9 && rnd < 0.1 && d->row_conflicts > 1500);
  h_free(h);
}

/* The DRAM scheduler remembers what goes first at its next scheduling cycle; a read that
 * arrives later but can go earlier (another bank) must replace that choice. One channel, two
 * banks, a slow activate: A (bank 0) issues first, B (bank 0, another row) must wait for the
 * bank; E (bank 1), sent after A issued, can go before B and must. */
static void test_dram_sched_late_arrival(void **state) {
  (void)state;
  mem_config c;
  test_config(&c);
  c.dram.channels = 1;
  c.dram.banks = 2;
  c.dram.t_rcd = 100;
  harness *h = h_new(&c);
  const uint64_t a_addr = 0x100000000; /* bank 0 (see mem_dram.c dram_map) */
  uint32_t ta, tb, te;
  uint64_t r;
  h_issue(h, a_addr, 1, MREQ_LOAD, false, &ta, &r);
  h_issue(h, a_addr + 16384, 1, MREQ_LOAD, false, &tb, &r); /* bank 0, another row */
  h_advance(h, 60); /* A issued at 50; B waits for bank 0 until 154 */
  h_issue(h, a_addr + 4096, 1, MREQ_LOAD, false, &te, &r); /* bank 1: ready at 110 */
  uint64_t a = h_wait(h, ta), b = h_wait(h, tb), e = h_wait(h, te);
  fprintf(stderr, "late arrival: A %llu, B(bank 0, conflict) %llu, E(bank 1) %llu\n",
          (unsigned long long)a, (unsigned long long)b, (unsigned long long)e);
  assert_true(a < e && e < b);
  const mem_dram_stats *d = mem_get_dram_stats(h->m);
  assert_int_equal(d->row_conflicts, 1);
  assert_int_equal(d->row_misses, 2);
  h_free(h);
}

/* Constant-stride loads over an L2-resident array, one at a time with some work in between;
 * returns the L1D misses of the second pass. */
static uint64_t stride_run(const mem_config *c, uint64_t *useful, uint64_t *cycles) {
  harness *h = h_new(c);
  const uint64_t base = 0x30000000, stride = 192;
  const uint32_t n = 1000; /* 187.5 KiB: > L1D, < L2 */
  uint64_t t0 = 0;
  for (int pass = 0; pass < 2; pass++) {
    if (pass == 1) {
      h_drain(h);
      mem_stats_reset(h->m);
      t0 = h->now;
    }
    for (uint32_t i = 0; i < n; i++) {
      h_access(h, base + i * stride, 0x401234, MREQ_LOAD);
      h_advance(h, h->now + 4); /* a few cycles of work per element */
    }
  }
  *cycles = h->now - t0;
  uint64_t misses = mem_stats(h->m, 1)->misses;
  *useful = mem_stats(h->m, 1)->pf_useful;
  h_free(h);
  return misses;
}

/* The IP-stride prefetcher covers a constant-stride stream; turning it off restores the misses. */
static void test_ip_stride_prefetch(void **state) {
  (void)state;
  mem_config c;
  test_config(&c);
  c.l1d.prefetcher = PF_IP_STRIDE;
  c.l1d.pf_degree = 4;
  uint64_t useful_on, useful_off, cyc_on, cyc_off;
  uint64_t on = stride_run(&c, &useful_on, &cyc_on);
  c.l1d.prefetcher = PF_NONE;
  uint64_t off = stride_run(&c, &useful_off, &cyc_off);
  fprintf(stderr, "ip-stride: L1D misses %llu with, %llu without (useful %llu); %llu vs %llu cycles\n",
          (unsigned long long)on, (unsigned long long)off, (unsigned long long)useful_on,
          (unsigned long long)cyc_on, (unsigned long long)cyc_off);
  assert_true(off >= 990);
  assert_true(on * 10 <= off);
  assert_true(useful_on >= 900 && useful_off == 0);
  assert_true(cyc_on < cyc_off);
}

/* Sequential DRAM-bound stream, one access at a time with `gap` cycles of work between. */
static uint64_t seq_run(const mem_config *c, uint64_t gap, mem_level_stats *l1, mem_level_stats *l2) {
  harness *h = h_new(c);
  for (uint32_t i = 0; i < 4096; i++) {
    h_access(h, 0x50000000 + i * 64ull, 0x402000, MREQ_LOAD);
    h_advance(h, h->now + gap);
  }
  *l1 = *mem_stats(h->m, 1);
  *l2 = *mem_stats(h->m, 2);
  uint64_t cycles = h->now;
  h_free(h);
  return cycles;
}

/* Next-line (L1D) and stream (L2) prefetchers on a sequential stream: demand misses at their
 * level drop; prefetches that arrive after the demand are counted late. */
static void test_nextline_and_stream(void **state) {
  (void)state;
  mem_config c;
  test_config(&c);
  mem_level_stats a1, a2, b1, b2, c1, c2, d1, d2;
  uint64_t cyc_a = seq_run(&c, 20, &a1, &a2);
  c.l1d.prefetcher = PF_NEXT_LINE;
  c.l1d.pf_degree = 2;
  uint64_t cyc_b = seq_run(&c, 20, &b1, &b2);
  seq_run(&c, 0, &d1, &d2);
  c.l1d.prefetcher = PF_NONE;
  c.l2.prefetcher = PF_STREAM;
  c.l2.pf_degree = 8;
  seq_run(&c, 20, &c1, &c2);
  fprintf(stderr,
          "sequential: L1D misses %llu, with next-line %llu (useful %llu, late %llu, %llu vs %llu cycles; back to back: late %llu); "
          "L2 misses %llu, with stream %llu (issued %llu)\n",
          (unsigned long long)a1.misses, (unsigned long long)b1.misses, (unsigned long long)b1.pf_useful,
          (unsigned long long)b1.pf_late, (unsigned long long)cyc_b, (unsigned long long)cyc_a,
          (unsigned long long)d1.pf_late, (unsigned long long)a2.misses,
          (unsigned long long)c2.misses, (unsigned long long)c2.pf_issued);
  assert_true(a1.misses == 4096 && a2.misses == 4096);
  /* Paced by DRAM latency, a degree-2 next-line prefetch is just late: the demand merges into
   * the prefetch's MSHR (a merge, not a miss, as Intel's FB_HIT vs L1_MISS). */
  assert_true(b1.misses * 10 < a1.misses);
  assert_true(b1.pf_useful + b1.pf_late > 4000);
  assert_true(cyc_b * 3 < cyc_a * 2); /* and the stream runs faster */
  assert_true(d1.pf_late > 1000);
  assert_true(c2.misses * 4 < a2.misses);
  assert_true(c2.pf_issued > 3000);
  assert_true(c1.misses == 4096); /* the L2 prefetcher does not fill the L1 */
}

/* Hit count of L1D over `iters` repetitions of a cyclic pattern: a hot set read twice, then a
 * scan, 1.25x the cache in total (Jaleel et al.'s "mixed" pattern). */
static uint64_t cyclic_hits(int repl) {
  mem_config c;
  test_config(&c);
  c.l1d.replacement = repl; /* 32 KiB, 8-way: 512 lines */
  harness *h = h_new(&c);
  const uint32_t hot = 384, scan = 256; /* 640 lines = 1.25 x 512 */
  for (int it = 0; it < 20; it++) {
    if (it == 2) mem_stats_reset(h->m);
    for (int rep = 0; rep < 2; rep++)
      for (uint32_t i = 0; i < hot; i++) h_access(h, 0x60000000 + i * 64ull, 3, MREQ_LOAD);
    for (uint32_t i = 0; i < scan; i++) h_access(h, 0x70000000 + i * 64ull, 3, MREQ_LOAD);
  }
  uint64_t hits = mem_stats(h->m, 1)->hits;
  h_free(h);
  return hits;
}

/* A cyclic access pattern slightly larger than the cache thrashes LRU and does better under
 * SRRIP. */
/* LRU victims against a reference recency list, for set sizes kept as packed ranks (<= 16
 * ways) and as stamps (more): a random load sequence over 3 x ways lines per set, each access
 * completed before the next; every L1D eviction must be the reference's least recent line. */
typedef struct evict_log {
  uint64_t addr[8];
  uint32_t n;
} evict_log;

static void on_evict(void *ctx, const mem_event *e) {
  evict_log *o = ctx;
  if (e->kind == MEV_EVICT && e->level == 1 && o->n < 8) o->addr[o->n++] = e->addr;
}

static void lru_order_run(uint32_t ways, uint64_t seed) {
  enum { SETS = 4 };
  mem_config c;
  test_config(&c);
  c.l1d.size = SETS * ways * 64;
  c.l1d.ways = ways;
  harness *h = h_new(&c);
  evict_log o = {0};
  mem_set_observer(h->m, on_evict, &o);
  uint64_t lru[SETS][64]; /* per set: lines, most recent first */
  uint32_t nl[SETS] = {0};
  wi_rng r;
  rng_seed(&r, seed);
  for (uint32_t i = 0; i < 4000; i++) {
    uint32_t set = (uint32_t)rng_below(&r, SETS);
    uint64_t line = (uint64_t)set + SETS * rng_below(&r, 3 * ways);
    o.n = 0;
    h_access(h, 0x20000000 + line * 64, 1, MREQ_LOAD);
    uint64_t *l = lru[set];
    uint32_t k = 0;
    while (k < nl[set] && l[k] != line) k++;
    if (k == nl[set]) { /* a miss: the fill evicts the least recent line of a full set */
      if (nl[set] == ways) {
        assert_int_equal(o.n, 1);
        assert_int_equal(o.addr[0], 0x20000000 + l[ways - 1] * 64);
        k = ways - 1;
      } else {
        assert_int_equal(o.n, 0);
        nl[set]++;
      }
    } else {
      assert_int_equal(o.n, 0);
    }
    memmove(&l[1], &l[0], k * sizeof l[0]);
    l[0] = line;
  }
  mem_set_observer(h->m, NULL, NULL);
  h_free(h);
}

static void test_lru_order(void **state) {
  (void)state;
  uint64_t seed = tu_seed();
  lru_order_run(1, seed);
  lru_order_run(4, seed);
  lru_order_run(12, seed);
  lru_order_run(16, seed);
  lru_order_run(20, seed); /* stamps */
}

static void test_srrip_vs_lru(void **state) {
  (void)state;
  uint64_t lru = cyclic_hits(REPL_LRU), srrip = cyclic_hits(REPL_SRRIP);
  uint64_t total = 18 * (2 * 384 + 256);
  fprintf(stderr, "cyclic 1.25x cache: LRU %.1f%% hits, SRRIP %.1f%% hits\n", 100.0 * (double)lru / (double)total,
          100.0 * (double)srrip / (double)total);
  /* LRU keeps only the second read of each hot line; SRRIP keeps the hot set across scans. */
  assert_true(lru <= 18 * 384 + 18 * 16);
  assert_true(srrip >= lru * 3 / 2);
}

/* Dirty evictions write back (counted, down to DRAM); a clean read-only stream causes none. */
static void test_writebacks(void **state) {
  (void)state;
  mem_config c;
  test_config(&c);
  harness *h = h_new(&c);
  uint32_t lines = 2 * c.l1d.size / 64;
  for (uint32_t i = 0; i < lines; i++) h_access(h, 0x90000000 + i * 64ull, 5, MREQ_STORE);
  const mem_level_stats *l1 = mem_stats(h->m, 1);
  fprintf(stderr, "store stream of %u lines: L1D write-backs %llu\n", lines, (unsigned long long)l1->writebacks);
  assert_true(l1->writebacks == lines - c.l1d.size / 64);
  h_free(h);
  /* Stores that hit dirty the line too: read a cache-full, overwrite it, push it out. */
  h = h_new(&c);
  lines = c.l1d.size / 64;
  for (uint32_t i = 0; i < lines; i++) h_access(h, 0x90000000 + i * 64ull, 5, MREQ_LOAD);
  for (uint32_t i = 0; i < lines; i++) assert_int_equal(h_access(h, 0x90000000 + i * 64ull, 5, MREQ_STORE), 5);
  for (uint32_t i = 0; i < lines; i++) h_access(h, 0x98000000 + i * 64ull, 5, MREQ_LOAD);
  assert_int_equal(mem_stats(h->m, 1)->writebacks, lines);
  h_free(h);
  /* Far beyond every level: dirty lines reach DRAM. */
  h = h_new(&c);
  lines = 4 * c.llc.size / 64;
  for (uint32_t i = 0; i < lines; i++) h_access(h, 0x90000000 + i * 64ull, 5, MREQ_STORE);
  h_drain(h);
  fprintf(stderr, "store stream of %u lines: write-backs L1D %llu L2 %llu LLC %llu, DRAM writes %llu\n", lines,
          (unsigned long long)mem_stats(h->m, 1)->writebacks, (unsigned long long)mem_stats(h->m, 2)->writebacks,
          (unsigned long long)mem_stats(h->m, 3)->writebacks,
          (unsigned long long)mem_get_dram_stats(h->m)->writes);
  assert_true(mem_stats(h->m, 2)->writebacks > 0);
  assert_true(mem_stats(h->m, 3)->writebacks > 0);
  assert_true(mem_get_dram_stats(h->m)->writes > lines / 2);
  h_free(h);
  /* The same stream read-only: no write-back anywhere. */
  h = h_new(&c);
  for (uint32_t i = 0; i < lines; i++) h_access(h, 0x90000000 + i * 64ull, 5, MREQ_LOAD);
  h_drain(h);
  for (int l = 0; l < 4; l++) assert_true(mem_stats(h->m, l)->writebacks == 0);
  assert_true(mem_get_dram_stats(h->m)->writes == 0);
  assert_true(mem_stats(h->m, 1)->evictions > 0);
  h_free(h);
}

/* ---- other mechanisms -------------------------------------------------------------------- */

/* TLB: an L1 TLB miss adds the STLB latency, an STLB miss also the walk latency. */
static void test_tlb(void **state) {
  (void)state;
  mem_config c;
  test_config(&c);
  c.dtlb = (tlb_config){16, 4, 0};
  c.stlb = (tlb_config){64, 4, 7};
  c.walk_latency = 30;
  harness *h = h_new(&c);
  uint64_t a = 0xA0000000;
  h_access(h, a, 1, MREQ_LOAD);                          /* cold: cache miss + walk */
  assert_int_equal(h_access(h, a, 1, MREQ_LOAD), 5);     /* L1 hit, DTLB hit */
  for (uint32_t p = 1; p <= 32; p++) h_access(h, a + p * 4096ull + 64, 1, MREQ_LOAD);
  assert_int_equal(h_access(h, a, 1, MREQ_LOAD), 5 + 7); /* DTLB miss, STLB hit */
  for (uint32_t p = 1; p <= 200; p++) h_access(h, a + p * 4096ull + 64, 1, MREQ_LOAD);
  assert_int_equal(h_access(h, a, 1, MREQ_LOAD), 5 + 7 + 30); /* STLB miss: walk */
  const mem_tlb_stats *s = mem_tlb_stats_get(h->m, 2);
  assert_true(s->walks > 0 && s->walks <= s->misses);
  h_free(h);
}

/* Reference TLB for test_tlb_lru: per set, the pages from most to least recently used. */
typedef struct ref_tlb {
  uint64_t page[64][16];
  uint32_t n[64];
  uint32_t sets, ways;
} ref_tlb;

/* Look page up; a miss installs it over the least recently used page. Returns hit. */
static bool ref_tlb_lookup(ref_tlb *r, uint64_t page) {
  uint32_t s = (uint32_t)(page & (r->sets - 1)), i = 0;
  uint64_t *p = r->page[s];
  while (i < r->n[s] && p[i] != page) i++;
  bool hit = i < r->n[s];
  if (!hit && r->n[s] < r->ways) r->n[s]++;
  if (i >= r->n[s]) i = r->n[s] - 1; /* full set: the LRU page goes */
  memmove(&p[1], &p[0], i * sizeof *p);
  p[0] = page;
  return hit;
}

/* TLB replacement is exact LRU per set whatever the position hints and the last-page shortcut
 * remember: the DTLB and STLB misses of a random page stream (pages sharing sets and hint
 * slots, runs of one page) match a reference LRU model access by access. */
static void test_tlb_lru(void **state) {
  (void)state;
  mem_config c;
  test_config(&c);
  c.dtlb = (tlb_config){16, 4, 0};  /* 4 sets */
  c.stlb = (tlb_config){32, 4, 7};  /* 8 sets */
  harness *h = h_new(&c);
  ref_tlb *d = xcalloc(1, sizeof *d), *st = xcalloc(1, sizeof *st);
  d->sets = 4, d->ways = 4, st->sets = 8, st->ways = 4;
  wi_rng r;
  rng_seed(&r, tu_seed());
  uint64_t page = 0;
  for (int i = 0; i < 3000; i++) {
    if (rng_below(&r, 3)) page = rng_below(&r, 64); /* else the same page again */
    uint64_t dm = mem_tlb_stats_get(h->m, 1)->misses, sm = mem_tlb_stats_get(h->m, 2)->misses;
    h_access(h, 0xA0000000ull + page * 4096 + rng_below(&r, 4) * 64, 1, MREQ_LOAD);
    bool dhit = ref_tlb_lookup(d, page), shit = dhit || ref_tlb_lookup(st, page);
    if (mem_tlb_stats_get(h->m, 1)->misses - dm != !dhit ||
        mem_tlb_stats_get(h->m, 2)->misses - sm != !shit)
      fail_msg("access %d page %llu: DTLB miss %d (ref %d), STLB miss %d (ref %d)", i,
               (unsigned long long)page, (int)(mem_tlb_stats_get(h->m, 1)->misses - dm), !dhit,
               (int)(mem_tlb_stats_get(h->m, 2)->misses - sm), !shit);
  }
  free(d);
  free(st);
  h_free(h);
}

/* Inclusive LLC back-invalidates inner copies; non-inclusive keeps them. */
static void test_inclusion(void **state) {
  (void)state;
  for (int incl = 0; incl < 2; incl++) {
    mem_config c;
    test_config(&c);
    c.llc = (cache_config){65536, 4, 64, 50, 64, 0, REPL_LRU, PF_NONE, 0, incl != 0};
    c.l2 = (cache_config){16384, 4, 64, 16, 32, 0, REPL_LRU, PF_NONE, 0, false};
    c.l1d = (cache_config){4096, 4, 64, 5, 16, 0, REPL_LRU, PF_NONE, 0, false};
    harness *h = h_new(&c);
    uint64_t x = 0xB0000000, conflict = 256ull * 64; /* same set at every level */
    h_access(h, x, 1, MREQ_LOAD);
    /* Three conflicting lines, x re-read after each: x stays MRU in the L1 while it ages in
     * the LLC (L1 hits do not touch the LLC). */
    for (uint32_t k = 1; k <= 3; k++) {
      h_access(h, x + k * conflict, 1, MREQ_LOAD);
      assert_int_equal(h_access(h, x, 1, MREQ_LOAD), c.l1d.latency);
    }
    h_access(h, x + 4 * conflict, 1, MREQ_LOAD); /* evicts x from the 4-way LLC set */
    uint64_t lat = h_access(h, x, 1, MREQ_LOAD);
    fprintf(stderr, "%s LLC: x after its LLC eviction: %llu cycles\n", incl ? "inclusive" : "non-inclusive",
            (unsigned long long)lat);
    if (incl) assert_true(lat > c.llc.latency); /* back-invalidated everywhere: from DRAM */
    else assert_int_equal(lat, c.l1d.latency);
    h_free(h);
  }
}

/* A way emptied by a back-invalidation is the next fill's place: the fill that caused it
 * lands there at the L1 without evicting the set's least recently used line. (Free ways are
 * found from the set's hash bytes, so this fails if an invalidation leaves its way's byte.) */
static void test_free_way_reuse(void **state) {
  (void)state;
  mem_config c;
  test_config(&c);
  c.llc = (cache_config){65536, 4, 64, 50, 64, 0, REPL_LRU, PF_NONE, 0, true};
  c.l2 = (cache_config){16384, 4, 64, 16, 32, 0, REPL_LRU, PF_NONE, 0, false};
  c.l1d = (cache_config){4096, 4, 64, 5, 16, 0, REPL_LRU, PF_NONE, 0, false};
  harness *h = h_new(&c);
  uint64_t x = 0xB0000000, conflict = 256ull * 64; /* same set at every level */
  for (uint32_t k = 0; k < 4; k++) h_access(h, x + k * conflict, 1, MREQ_LOAD); /* sets full */
  /* x becomes the L1's most recently used line but stays the LLC's least recently used. */
  assert_int_equal(h_access(h, x, 1, MREQ_LOAD), c.l1d.latency);
  uint64_t ev = mem_stats(h->m, 1)->evictions; /* level 1: the L1D */
  /* The LLC fill of a fifth line evicts x there and back-invalidates it in the L1 and L2;
   * the L1 fill then takes x's way, not that of x + conflict (the L1's LRU line). */
  h_access(h, x + 4 * conflict, 1, MREQ_LOAD);
  assert_int_equal(mem_stats(h->m, 1)->evictions - ev, 1); /* x's back-invalidation */
  for (uint32_t k = 1; k <= 4; k++)
    assert_int_equal(h_access(h, x + k * conflict, 1, MREQ_LOAD), c.l1d.latency);
  h_free(h);
}

/* A non-inclusive LLC is filled with L2 victims, so L2 + LLC hold a footprint larger than
 * either; an inclusive LLC (filled from memory) duplicates the L2 and the same chase thrashes. */
static void test_victim_llc(void **state) {
  (void)state;
  mem_config c;
  test_config(&c);
  c.l2.size = 262144;
  c.llc = (cache_config){262144, 16, 64, 50, 64, 0, REPL_LRU, PF_NONE, 0, false};
  double non_incl = chase(&c, 384 << 10, 2, 1u << 30);
  c.llc.inclusive = true;
  double incl = chase(&c, 384 << 10, 2, 1u << 30);
  fprintf(stderr, "384 KiB chase, 256 KiB L2 + 256 KiB LLC: non-inclusive %.1f, inclusive %.1f cycles\n",
          non_incl, incl);
  /* Random order: a few lines age out of their LLC set before reuse, so not exactly 50. */
  assert_true(non_incl < c.llc.latency + 15);
  assert_true(incl > 2 * c.llc.latency);
}

/* mem_set_perfect: every access of the type is an L1 hit. */
static void test_perfect(void **state) {
  (void)state;
  mem_config c;
  test_config(&c);
  harness *h = h_new(&c);
  mem_set_perfect(h->m, MREQ_LOAD, true);
  for (uint32_t i = 0; i < 100; i++) assert_int_equal(h_access(h, 0xC0000000 + i * 4096ull, 1, MREQ_LOAD), 5);
  assert_int_equal(mem_stats(h->m, 1)->misses, 0);
  assert_int_equal(mem_stats(h->m, 1)->hits, 100);
  assert_true(h_access(h, 0xC0000000, 1, MREQ_IFETCH) > 4); /* other types unaffected */
  mem_set_perfect(h->m, MREQ_LOAD, false);
  assert_true(h_access(h, 0xD0000000, 1, MREQ_LOAD) > 5);
  h_free(h);
}

/* Wrong-path requests really access the caches (they prefetch) and are counted apart. */
static void test_wrong_path(void **state) {
  (void)state;
  mem_config c;
  test_config(&c);
  harness *h = h_new(&c);
  uint32_t tag;
  uint64_t ready;
  int rc = h_issue(h, 0xE0000000, 9, MREQ_LOAD, true, &tag, &ready);
  if (rc == MEM_PENDING) h_wait(h, tag);
  h_drain(h);
  assert_int_equal(mem_stats(h->m, 1)->wrong_path_accesses, 1);
  assert_int_equal(mem_stats(h->m, 3)->wrong_path_accesses, 1);
  assert_int_equal(h_access(h, 0xE0000000, 9, MREQ_LOAD), 5); /* the correct path hits */
  assert_int_equal(mem_stats(h->m, 1)->wrong_path_accesses, 1);
  h_free(h);
}

/* Merges: a second load to an in-flight line waits for the same fill (MEM_DONE at the known
 * fill cycle, or MEM_PENDING with a callback at the same cycle). */
static void test_merge(void **state) {
  (void)state;
  mem_config c;
  test_config(&c);
  harness *h = h_new(&c);
  uint32_t t1, t2;
  uint64_t r1, r2;
  int rc1 = h_issue(h, 0xF0000000, 1, MREQ_LOAD, false, &t1, &r1);
  h->now += 3;
  int rc2 = h_issue(h, 0xF0000008, 2, MREQ_LOAD, false, &t2, &r2);
  assert_int_equal(rc1, MEM_PENDING); /* a DRAM miss */
  assert_int_equal(rc2, MEM_PENDING);
  assert_int_equal(h_wait(h, t1), h_wait(h, t2));
  assert_int_equal(mem_stats(h->m, 1)->merges, 1);
  assert_int_equal(mem_stats(h->m, 1)->misses, 1);
  /* After DRAM schedules a miss, its fill is known: a merge then completes as MEM_DONE. */
  rc1 = h_issue(h, 0xF1000000, 1, MREQ_LOAD, false, &t1, &r1);
  assert_int_equal(rc1, MEM_PENDING);
  while (mem_get_dram_stats(h->m)->reads < 2) h_advance(h, mem_next_event(h->m));
  rc2 = h_issue(h, 0xF1000000, 2, MREQ_LOAD, false, &t2, &r2);
  assert_int_equal(rc2, MEM_DONE);
  assert_int_equal(h_wait(h, t1), r2);
  h_free(h);
}

/* One request at h->now, not retried (fid and the retry flag given); *tag_out its tag. */
static int h_once(harness *h, uint64_t addr, uint64_t fid, bool retry, uint32_t *tag_out,
                  uint64_t *ready) {
  uint32_t tag = h_tag(h);
  mem_req r = {.addr = addr, .pc = 3, .fid = fid, .size = 8, .tag = tag, .type = MREQ_LOAD,
               .retry = retry};
  mem_advance(h->m, h->now);
  int rc = mem_access(h->m, &r, h->now, ready);
  if (rc == MEM_PENDING) h->inflight[tag] = 1;
  *tag_out = tag;
  return rc;
}

/* The last MSHR_FULL event seen. */
typedef struct full_log {
  uint32_t n;
  mem_event last;
} full_log;

static void on_full(void *ctx, const mem_event *e) {
  full_log *f = ctx;
  if (e->kind != MEV_MSHR_FULL) return;
  f->n++;
  f->last = *e;
}

/* A full L1: a new line is refused (counted once, not on its retries) and told to retry when
 * the MSHR that frees first fills (with none known yet: at the next event), naming that MSHR's
 * requester; a line already in flight still merges and a present line still hits. The retry
 * cycle is checked against a copy of the state run to completion. */
static void test_full_refusal(void **state) {
  (void)state;
  mem_config c;
  test_config(&c);
  c.l1d.mshrs = 4;
  harness *h = h_new(&c);
  full_log fl;
  memset(&fl, 0, sizeof fl);
  mem_set_observer(h->m, on_full, &fl);
  const uint64_t present = 0x21000000, z = 0x22000000;
  h_access(h, present, 3, MREQ_LOAD); /* now an L1 hit */
  uint32_t tags[4], tz;
  uint64_t ready;
  for (uint32_t i = 0; i < 4; i++) /* four DRAM misses fill the L1's MSHRs */
    assert_int_equal(h_once(h, 0x23000000 + i * 4160ull, 100 + i, false, &tags[i], &ready),
                     MEM_PENDING);
  /* No fill cycle known yet: refused until the next event, naming the lowest MSHR's flow. */
  assert_int_equal(h_once(h, z, 200, false, &tz, &ready), MEM_BLOCKED);
  assert_int_equal(ready, mem_next_event(h->m) > h->now ? mem_next_event(h->m) : h->now + 1);
  assert_int_equal(mem_stats(h->m, 1 /* L1D */)->mshr_full_events, 1);
  assert_int_equal(fl.n, 1);
  assert_int_equal(fl.last.level, 1 /* L1D */);
  assert_int_equal(fl.last.other_fid, 100);
  assert_int_equal(h_once(h, z, 200, true, &tz, &ready), MEM_BLOCKED); /* a retry: not counted */
  assert_int_equal(mem_stats(h->m, 1 /* L1D */)->mshr_full_events, 1);
  assert_int_equal(fl.n, 2);
  uint32_t tm;
  assert_int_equal(h_once(h, 0x23000000 + 2 * 4160ull + 8, 300, false, &tm, &ready), MEM_PENDING);
  assert_int_equal(mem_stats(h->m, 1 /* L1D */)->merges, 1);
  assert_int_equal(h_once(h, present + 16, 301, false, &tm, &ready), MEM_DONE);
  assert_int_equal(ready, h->now + c.l1d.latency);
  /* Once DRAM has scheduled the four, the refusal names the first to fill (lowest index on
   * ties) and its fill cycle, which a copy run to completion confirms. */
  while (mem_get_dram_stats(h->m)->reads < 5) h_advance(h, mem_next_event(h->m));
  assert_int_equal(h_once(h, z, 200, false, &tz, &ready), MEM_BLOCKED);
  harness *g = h_new(&c);
  mem_copy(g->m, h->m);
  memcpy(g->inflight, h->inflight, sizeof h->inflight);
  memcpy(g->done_at, h->done_at, sizeof h->done_at);
  g->now = h->now;
  uint64_t first = UINT64_MAX, holder = 0;
  for (uint32_t i = 0; i < 4; i++) {
    uint64_t d = h_wait(g, tags[i]);
    if (d < first) {
      first = d;
      holder = 100 + i;
    }
  }
  h_free(g);
  assert_int_equal(ready, first);
  assert_int_equal(fl.last.other_fid, holder);
  assert_int_equal(mem_stats(h->m, 1 /* L1D */)->mshr_full_events, 2);
  /* Ties: four L2 hits issued in one cycle fill together; the refusal names the lowest MSHR.
   * (Lines 4 KiB apart share an L1 set, not an L2 set: eight more push them out of the L1.) */
  h_drain(h);
  const uint64_t x = 0x24000000;
  for (uint32_t i = 0; i < 12; i++) h_access(h, x + i * 4096ull, 3, MREQ_LOAD);
  for (uint32_t i = 0; i < 4; i++)
    assert_int_equal(h_once(h, x + i * 4096ull, 100 + i, false, &tags[i], &ready), MEM_DONE);
  assert_int_equal(h_once(h, z, 200, false, &tz, &ready), MEM_BLOCKED);
  assert_int_equal(ready, h->now + c.l2.latency);
  assert_int_equal(fl.last.other_fid, 100);
  mem_set_observer(h->m, NULL, NULL);
  h_free(h);
}

/* A line refused at a full L1 is refused again without a lookup while the level stays full
 * (mem_refusal.full), until an MSHR of its own is allocated: once the line has been accepted
 * (an MSHR freed, then the level filled up again), a second request for it merges, it is not
 * refused by the old refusal. */
static void test_full_refusal_lapses(void **state) {
  (void)state;
  mem_config c;
  test_config(&c);
  c.l1d.mshrs = 2;
  harness *h = h_new(&c);
  /* (lines of distinct refusal-memo entries, in distinct L1 sets) */
  const uint64_t a = 0x23000000, b = 0x23000000 + 4160, x = 0x25000000, d = 0x26000080, e = 0x27000040;
  uint32_t ta, tb, tx, td, te, tx2;
  uint64_t ready;
  assert_int_equal(h_once(h, a, 100, false, &ta, &ready), MEM_PENDING);
  assert_int_equal(h_once(h, b, 101, false, &tb, &ready), MEM_PENDING);
  assert_int_equal(h_once(h, x, 102, false, &tx, &ready), MEM_BLOCKED);
  assert_int_equal(h_once(h, x, 102, true, &tx, &ready), MEM_BLOCKED); /* (the memo's refusal) */
  h_wait(h, ta); /* an MSHR frees: x is accepted */
  assert_int_equal(h_once(h, x, 102, true, &tx, &ready), MEM_PENDING);
  if (h->done_at[tb] != UINT64_MAX) /* b filled too: fill the level up again */
    assert_int_equal(h_once(h, d, 103, false, &td, &ready), MEM_PENDING);
  assert_int_equal(h_once(h, e, 104, false, &te, &ready), MEM_BLOCKED); /* full */
  uint64_t merges = mem_stats(h->m, 1 /* L1D */)->merges;
  assert_int_equal(h_once(h, x + 8, 105, false, &tx2, &ready), MEM_PENDING);
  assert_int_equal(mem_stats(h->m, 1 /* L1D */)->merges, merges + 1);
  assert_int_equal(h_wait(h, tx2), h_wait(h, tx));
  h_free(h);
}

/* Observer: events name their resources, MSHR allocations are all released, FULL is reported. */
typedef struct obs_log {
  uint64_t n[MEV_NUM];
  uint64_t bad_rid;
  uint64_t last_cycle_fill;
} obs_log;

static void on_event(void *ctx, const mem_event *e) {
  obs_log *o = ctx;
  assert_true(e->kind < MEV_NUM);
  o->n[e->kind]++;
  char buf[64];
  mem_rid_name(e->rid, buf, sizeof buf);
  if (strchr(buf, '?')) o->bad_rid++;
}

static void test_observer(void **state) {
  (void)state;
  mem_config c;
  test_config(&c);
  c.l1d.mshrs = 4;
  c.l1d.prefetcher = PF_NEXT_LINE;
  c.l1d.pf_degree = 1;
  harness *h = h_new(&c);
  obs_log o;
  memset(&o, 0, sizeof o);
  mem_set_observer(h->m, on_event, &o);
  uint32_t tags[64];
  uint64_t ready;
  for (uint32_t i = 0; i < 64; i++) h_issue(h, 0x11000000 + i * 4096ull, 1, MREQ_STORE, false, &tags[i], &ready);
  for (uint32_t i = 0; i < 3000; i++) h_access(h, 0x12000000 + i * 64ull, 1, MREQ_LOAD);
  h_drain(h);
  mem_set_observer(h->m, NULL, NULL);
  for (int k = 0; k < MEV_NUM; k++) fprintf(stderr, "%s=%llu ", mem_ev_kind_name(k), (unsigned long long)o.n[k]);
  fprintf(stderr, "\n");
  assert_int_equal(o.bad_rid, 0);
  assert_true(o.n[MEV_MSHR_FULL] > 0);
  assert_true(o.n[MEV_MSHR_ALLOC] > 0);
  assert_int_equal(o.n[MEV_MSHR_ALLOC], o.n[MEV_MSHR_RELEASE]);
  assert_int_equal(o.n[MEV_MSHR_ALLOC], o.n[MEV_FILL]);
  assert_int_equal(o.n[MEV_DRAM_ENQ], o.n[MEV_DRAM_DEQ]);
  assert_true(o.n[MEV_PREFETCH] > 0 && o.n[MEV_WRITEBACK] > 0 && o.n[MEV_EVICT] > 0);
  uint64_t ev = 0, wb = 0;
  for (int l = 0; l < 4; l++) {
    ev += mem_stats(h->m, l)->evictions;
    wb += mem_stats(h->m, l)->writebacks;
  }
  assert_int_equal(o.n[MEV_EVICT], ev);
  assert_int_equal(o.n[MEV_WRITEBACK], wb);
  assert_true(mem_stats(h->m, 1)->mshr_full_events > 0);
  h_free(h);
  char buf[64];
  assert_string_equal(mem_rid_name(1 * 1000000 + 0 * 100000 + 3, buf, sizeof buf), "L1D.mshr[3]");
  assert_string_equal(mem_rid_name(4 * 1000000 + 3 * 100000 + 1005, buf, sizeof buf), "DRAM.bank[1.5]");
}

/* mem_set_observer_kinds: only the kinds asked for reach the observer, the same count of them
 * as with every kind on, and mem_set_observer() turns every kind back on. */
static void kinds_run(uint32_t kinds, bool reset, obs_log *o) {
  mem_config c;
  test_config(&c);
  c.l1d.mshrs = 4;
  harness *h = h_new(&c);
  memset(o, 0, sizeof *o);
  mem_set_observer_kinds(h->m, 0); /* no observer yet: nothing to limit, nothing called */
  mem_set_observer(h->m, on_event, o);
  if (kinds != ~0u) mem_set_observer_kinds(h->m, kinds);
  if (reset) mem_set_observer(h->m, on_event, o);
  for (uint32_t i = 0; i < 500; i++) h_access(h, 0x13000000 + i * 4160ull, 1, MREQ_LOAD);
  h_drain(h);
  h_free(h);
}

static void test_observer_kinds(void **state) {
  (void)state;
  obs_log all, some, reset;
  kinds_run(~0u, false, &all);
  kinds_run((1u << MEV_MISS) | (1u << MEV_FILL), false, &some);
  kinds_run(1u << MEV_MISS, true, &reset);
  assert_true(all.n[MEV_MISS] > 0 && all.n[MEV_FILL] > 0 && all.n[MEV_MSHR_ALLOC] > 0);
  for (int k = 0; k < MEV_NUM; k++) {
    bool want = k == MEV_MISS || k == MEV_FILL;
    assert_int_equal(some.n[k], want ? all.n[k] : 0);
    assert_int_equal(reset.n[k], all.n[k]);
  }
}

/* A random mixed request stream with prefetchers on, driven by a seeded RNG. Writes a log of
 * (tag, rc, ready) and completions into *out (hash). */
static uint64_t random_run(harness *h, wi_rng *r, uint32_t n, uint64_t *log_hash) {
  wi_hasher hs;
  wi_hasher_init(&hs, 1);
  uint64_t footprint = 8ull << 20;
  for (uint32_t i = 0; i < n; i++) {
    uint64_t x = rng_next(r);
    int type = (int)(x % 10 < 6 ? MREQ_LOAD : x % 10 < 8 ? MREQ_STORE : MREQ_IFETCH);
    uint64_t addr = 0x1000000 + (rng_next(r) % footprint & ~7ull);
    if (x % 7 == 0) addr = 0x1000000 + (uint64_t)i * 64; /* some streaming */
    uint32_t tag;
    uint64_t ready;
    bool wp = (x >> 20) % 16 == 0;
    int rc = h_issue(h, addr, 0x400000 + (x >> 40) % 64 * 4, type, wp, &tag, &ready);
    uint64_t rec[3] = {tag, (uint64_t)rc, rc == MEM_DONE ? ready : 0};
    wi_hasher_update(&hs, rec, sizeof rec);
    h_advance(h, h->now + (x >> 32) % 4);
  }
  h_drain(h);
  wi_hasher_update(&hs, h->done_at, sizeof h->done_at);
  wi_hasher_update(&hs, mem_stats(h->m, 1), sizeof(mem_level_stats));
  wi_hasher_update(&hs, mem_get_dram_stats(h->m), sizeof(mem_dram_stats));
  *log_hash = wi_hasher_digest(&hs);
  return h->now;
}

static void prefetch_config(mem_config *c) {
  mem_config_default(c);
  c->l2.size = 262144;
  c->llc.size = 983040; /* 15-way, 1024 sets */
}

/* Identical inputs give identical outputs; a copy (checkpoint) continues exactly like the
 * original. */
static void test_determinism_and_copy(void **state) {
  (void)state;
  uint64_t seed = tu_seed();
  mem_config c;
  prefetch_config(&c);
  uint64_t hash[3];
  for (int k = 0; k < 2; k++) {
    harness *h = h_new(&c);
    wi_rng r;
    rng_seed(&r, seed);
    random_run(h, &r, 3000, &hash[k]);
    h_free(h);
  }
  assert_true(hash[0] == hash[1]);
  /* Checkpoint mid-run (with requests in flight), continue both. */
  harness *a = h_new(&c), *b = h_new(&c);
  wi_rng ra, rb;
  rng_seed(&ra, seed ^ 0x55);
  uint64_t ha, hb;
  random_run(a, &ra, 1500, &ha);
  for (uint32_t i = 0; i < 40; i++) { /* leave misses in flight */
    uint32_t tag;
    uint64_t ready;
    h_issue(a, 0x7000000 + i * 4160ull, 5, MREQ_LOAD, false, &tag, &ready);
  }
  assert_true(mem_next_event(a->m) != UINT64_MAX);
  double t0 = wi_now();
  mem_copy(b->m, a->m);
  double dt = wi_now() - t0;
  fprintf(stderr, "mem_copy of %zu bytes: %.1f us\n", mem_state_bytes(a->m), dt * 1e6);
  memcpy(b->done_at, a->done_at, sizeof a->done_at);
  memcpy(b->inflight, a->inflight, sizeof a->inflight);
  b->now = a->now;
  b->next_tag = a->next_tag;
  b->ndone = a->ndone;
  rb = ra;
  random_run(a, &ra, 1500, &ha);
  random_run(b, &rb, 1500, &hb);
  assert_true(ha == hb);
  assert_memory_equal(mem_stats(a->m, 2), mem_stats(b->m, 2), sizeof(mem_level_stats));
  h_free(a);
  h_free(b);
}

static void copy_bench(void **state) {
  (void)state;
  mem_config c;
  mem_config_default(&c);
  mem_sys *a = mem_new(&c, NULL, NULL), *b = mem_new(&c, NULL, NULL);
  double t0 = wi_now();
  int reps = 200;
  for (int i = 0; i < reps; i++) mem_copy(b, a);
  double dt = (wi_now() - t0) / reps;
  fprintf(stderr, "golden cove mem_copy: %zu bytes in %.1f us\n", mem_state_bytes(a), dt * 1e6);
  mem_free(a);
  mem_free(b);
}

/* Tiny structures, random traffic: every pending request completes exactly once, never before
 * it was issued, and everything drains. */
static void test_stress_tiny(void **state) {
  (void)state;
  uint64_t seed = tu_seed();
  mem_config c;
  mem_config_default(&c);
  c.l1i = (cache_config){1024, 2, 64, 2, 2, 1, REPL_LRU, PF_NEXT_LINE, 2, false};
  c.l1d = (cache_config){1024, 2, 64, 3, 2, 2, REPL_SRRIP, PF_IP_STRIDE, 3, false};
  c.l2 = (cache_config){4096, 4, 64, 8, 3, 1, REPL_LRU, PF_STREAM, 4, false};
  c.llc = (cache_config){8192, 4, 64, 20, 4, 1, REPL_SRRIP, PF_NEXT_LINE, 1, true};
  c.itlb = (tlb_config){4, 2, 0};
  c.dtlb = (tlb_config){4, 2, 0};
  c.stlb = (tlb_config){8, 2, 3};
  c.dram = (dram_config){.channels = 1, .banks = 2, .row_bytes = 256, .t_cas = 5, .t_rcd = 5,
                         .t_rp = 5, .t_burst = 3, .queue = 2, .base_latency = 4};
  harness *h = h_new(&c);
  obs_log o;
  memset(&o, 0, sizeof o);
  mem_set_observer(h->m, on_event, &o);
  wi_rng r;
  rng_seed(&r, seed);
  uint32_t pending[MAXTAG], npend = 0;
  uint64_t issued_at[MAXTAG];
  for (uint32_t i = 0; i < 20000; i++) {
    uint64_t x = rng_next(&r);
    int type = (int)(x % 3);
    uint64_t addr = (rng_next(&r) % 65536) & ~3ull;
    uint32_t tag;
    uint64_t ready;
    if (npend > MAXTAG / 2) { /* bound the tags in flight */
      h_wait(h, pending[0]);
      memmove(pending, pending + 1, --npend * sizeof *pending);
    }
    int rc = h_issue(h, addr, x >> 50, type, (x >> 8) % 8 == 0, &tag, &ready);
    issued_at[tag] = h->now;
    if (rc == MEM_DONE) assert_true(ready >= h->now);
    else pending[npend++] = tag;
    for (uint32_t k = 0; k < npend;)
      if (h->done_at[pending[k]] != UINT64_MAX) {
        assert_true(h->done_at[pending[k]] >= issued_at[pending[k]]);
        pending[k] = pending[--npend];
      } else {
        k++;
      }
    h_advance(h, h->now + (x >> 40) % 3);
  }
  h_drain(h);
  for (uint32_t k = 0; k < npend; k++) assert_true(h->done_at[pending[k]] != UINT64_MAX);
  assert_int_equal(mem_next_event(h->m), UINT64_MAX);
  assert_int_equal(o.n[MEV_MSHR_ALLOC], o.n[MEV_MSHR_RELEASE]);
  assert_int_equal(o.bad_rid, 0);
  for (int l = 0; l < 4; l++) {
    const mem_level_stats *s = mem_stats(h->m, l);
    assert_int_equal(s->accesses, s->hits + s->misses + s->merges);
  }
  fprintf(stderr, "stress: %llu fills, %llu full events, %llu dram reads, %llu writes\n",
          (unsigned long long)o.n[MEV_FILL], (unsigned long long)o.n[MEV_MSHR_FULL],
          (unsigned long long)mem_get_dram_stats(h->m)->reads,
          (unsigned long long)mem_get_dram_stats(h->m)->writes);
  h_free(h);
}

/* ---- configuration and reports ------------------------------------------------------------ */

static void test_config_table(void **state) {
  (void)state;
  mem_config c;
  mem_config_default(&c);
  wi_err err = {0};
  assert_int_equal(mem_config_check(&c, &err), WI_OK);
  assert_int_equal(mem_line_bytes(&c), 64);
  assert_int_equal(c.l1d.size, 49152);
  assert_int_equal(c.l1d.ways, 12);
  assert_int_equal(c.l1d.mshrs, 16);
  assert_int_equal(c.l2.mshrs, 48);
  /* mem = { l1d = { ways = 8, replacement = "srrip" }, dram = { channels = 2 } } */
  cfg_val *root = cv_table(), *l1d = cv_table(), *dram = cv_table();
  cv_set(l1d, "ways", cv_num(8));
  cv_set(l1d, "replacement", cv_str("srrip"));
  cv_set(l1d, "prefetcher", cv_str("stream"));
  cv_set(dram, "channels", cv_num(2));
  cv_set(root, "l1d", l1d);
  cv_set(root, "dram", dram);
  cv_sort(root);
  cv_sort(l1d);
  assert_int_equal(param_apply(&mem_param_table, &c, root, "t.lua", "mem", &err), WI_OK);
  assert_int_equal(c.l1d.ways, 8);
  assert_int_equal(c.l1d.replacement, REPL_SRRIP);
  assert_int_equal(c.l1d.prefetcher, PF_STREAM);
  assert_int_equal(c.dram.channels, 2);
  /* 48 KiB / (8 ways x 64 B) = 96 sets: not a power of two. */
  assert_int_equal(mem_config_check(&c, &err), WI_EINVAL);
  assert_non_null(strstr(err.msg, "mem.l1d"));
  cv_free(root);
  c.l1d.ways = 12;
  c.l1d.size = 40000;
  assert_int_equal(mem_config_check(&c, &err), WI_EINVAL);
  assert_non_null(strstr(err.msg, "mem.l1d"));
  mem_config_default(&c);
  c.l2.line = 128;
  assert_int_equal(mem_config_check(&c, &err), WI_EINVAL);
  mem_config_default(&c);
  root = cv_table();
  l1d = cv_table();
  cv_set(l1d, "latency", cv_num(0));
  cv_set(root, "l1d", l1d);
  assert_int_equal(param_apply(&mem_param_table, &c, root, "t.lua", "mem", &err), WI_EINVAL);
  assert_non_null(strstr(err.msg, "mem.l1d.latency"));
  cv_free(root);
  root = cv_table();
  l1d = cv_table();
  cv_set(l1d, "replacement", cv_str("plru"));
  cv_set(root, "l1d", l1d);
  assert_int_equal(param_apply(&mem_param_table, &c, root, "t.lua", "mem", &err), WI_EINVAL);
  cv_free(root);
}

static void test_reports(void **state) {
  (void)state;
  mem_config c;
  test_config(&c);
  harness *h = h_new(&c);
  for (uint32_t i = 0; i < 2000; i++) h_access(h, 0x13000000 + i * 64ull, 1, MREQ_LOAD);
  char *buf = NULL;
  size_t n = 0;
  FILE *f = open_memstream(&buf, &n);
  jw w;
  jw_init(&w, f, false);
  jw_obj_begin(&w);
  mem_stats_json(h->m, h->now, 10000, &w);
  jw_obj_end(&w);
  jw_end(&w);
  mem_stats_print(h->m, h->now, 10000, f);
  fclose(f);
  assert_non_null(strstr(buf, "\"l1d\":{\"accesses\":2000"));
  assert_non_null(strstr(buf, "\"mpki\":200"));
  assert_non_null(strstr(buf, "\"row_hit_rate\""));
  assert_non_null(strstr(buf, "\"mean_queue_wait_cycles\""));
  assert_non_null(strstr(buf, "\"avg_miss_latency_cycles\""));
  assert_non_null(strstr(buf, "\"mean_mshr_occupancy\""));
  assert_non_null(strstr(buf, "L1D"));
  free(buf);
  h_free(h);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_chase_latency_per_level),
      cmocka_unit_test(test_chase_golden_cove),
      cmocka_unit_test(test_mshr_overlap),
      cmocka_unit_test(test_dram_bandwidth),
      cmocka_unit_test(test_dram_rows_frfcfs),
      cmocka_unit_test(test_dram_sched_late_arrival),
      cmocka_unit_test(test_ip_stride_prefetch),
      cmocka_unit_test(test_nextline_and_stream),
      cmocka_unit_test(test_srrip_vs_lru),
      cmocka_unit_test(test_lru_order),
      cmocka_unit_test(test_writebacks),
      cmocka_unit_test(test_tlb),
      cmocka_unit_test(test_tlb_lru),
      cmocka_unit_test(test_inclusion),
      cmocka_unit_test(test_free_way_reuse),
      cmocka_unit_test(test_victim_llc),
      cmocka_unit_test(test_perfect),
      cmocka_unit_test(test_wrong_path),
      cmocka_unit_test(test_merge),
      cmocka_unit_test(test_full_refusal),
      cmocka_unit_test(test_full_refusal_lapses),
      cmocka_unit_test(test_observer),
      cmocka_unit_test(test_observer_kinds),
      cmocka_unit_test(test_determinism_and_copy),
      cmocka_unit_test(copy_bench),
      cmocka_unit_test(test_stress_tiny),
      cmocka_unit_test(test_config_table),
      cmocka_unit_test(test_reports),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

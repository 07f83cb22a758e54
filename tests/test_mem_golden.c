/* test_mem_golden.c — the memory hierarchy's exact behaviour, pinned: fixed pseudo-random request
 * mixes (loads, stores, fetches, wrong-path requests; streams, random lines, hot sets) under
 * several configurations (every prefetcher at some level, inclusive and non-inclusive LLC, LRU
 * ranks and SRRIP, 24-way sets, port limits, one-channel DRAM with tiny queues) are hashed --
 * every answer and ready cycle, completion, observer event and statistic -- and compared with
 * the digests the model gave before its paths were compiled once per level (memsys.c: install_*,
 * access_miss_*, pf_issue_*, pf_train_*, the unrolled miss_probe / miss_commit chains; mem_dram.c:
 * empty queues not scanned). A copy compiled for the wrong level, a level skipped in an unrolled
 * chain or a changed DRAM choice changes a digest. The digests are the model's behaviour, not a
 * derivation: a deliberate model change must update them (run with WHATIF_GOLDEN_PRINT=1 to print
 * the new values). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "memsys.h"
#include "util.h"

typedef struct gd_ctx {
  wi_hasher h;          /* completions and events, in order */
  uint64_t ndone, nev;
} gd_ctx;

static void gd_done(void *vctx, uint32_t tag, uint64_t cycle) {
  gd_ctx *c = vctx;
  uint64_t x[2] = {tag, cycle};
  wi_hasher_update(&c->h, x, sizeof x);
  c->ndone++;
}

static void gd_event(void *vctx, const mem_event *e) {
  gd_ctx *c = vctx;
  uint64_t x[7] = {e->kind, e->level, (uint64_t)e->wrong_path << 8 | e->prefetch, e->rid, e->fid,
                   e->addr, e->cycle ^ (e->other_fid * 0x9E3779B97F4A7C15ULL)};
  wi_hasher_update(&c->h, x, sizeof x);
  c->nev++;
}

/* Drive n requests of a fixed mix (seed) through cfg; returns the digest. */
static uint64_t gd_run(const mem_config *cfg, uint64_t seed, uint32_t n, bool observe) {
  gd_ctx ctx;
  memset(&ctx, 0, sizeof ctx);
  wi_hasher_init(&ctx.h, seed);
  mem_sys *m = mem_new(cfg, gd_done, &ctx);
  if (observe) mem_set_observer(m, gd_event, &ctx);
  wi_rng r;
  rng_seed(&r, seed);
  uint64_t now = 0, stream[4] = {0x10000000, 0x20000000, 0x30000000, 0x38000000};
  for (uint32_t i = 0; i < n; i++) {
    uint64_t x = rng_next(&r);
    mem_req q;
    memset(&q, 0, sizeof q);
    uint32_t kind = (uint32_t)(x % 100);
    q.type = kind < 55 ? MREQ_LOAD : kind < 85 ? MREQ_STORE : MREQ_IFETCH;
    uint64_t y = rng_next(&r);
    switch ((x >> 8) % 6) {
    case 0: case 1: { /* four sequential streams, 8-byte steps (several accesses per line) */
      uint32_t s = (uint32_t)(y % 4);
      q.addr = stream[s];
      stream[s] += (y >> 8) % 3 == 0 ? 64 : 8;
      q.pc = 0x401000 + s * 16;
      break;
    }
    case 2: /* random lines over 64 MiB (DRAM, TLB misses) */
      q.addr = 0x40000000 + (y % (64ull << 20));
      q.pc = 0x402000 + (y >> 40) % 8 * 4;
      break;
    case 3: /* random lines over 512 KiB (L2 / LLC hits) */
      q.addr = 0x50000000 + (y % (512ull << 10));
      q.pc = 0x403000 + (y >> 40) % 8 * 4;
      break;
    default: /* a hot 16 KiB (L1 hits) */
      q.addr = 0x60000000 + (y % (16ull << 10));
      q.pc = 0x404000 + (y >> 40) % 16 * 4;
      break;
    }
    if (q.type == MREQ_IFETCH) q.addr = 0x400000 + (y % (256ull << 10)) / 4 * 4;
    q.size = 8;
    q.fid = i;
    q.tag = i;
    q.wrong_path = (x >> 20) % 20 == 0;
    uint64_t ready = 0;
    int rc;
    uint32_t refusals = 0;
    while ((rc = mem_access(m, &q, now, &ready)) == MEM_BLOCKED) {
      if (++refusals > 100000) fail_msg("request %u refused 100000 times: the model is stuck", i);
      uint64_t b[2] = {0xB10C, ready};
      wi_hasher_update(&ctx.h, b, sizeof b);
      q.retry = 1;
      now = ready > now ? ready : now + 1;
      mem_advance(m, now);
    }
    uint64_t a[3] = {(uint64_t)rc, rc == MEM_DONE ? ready : 0, now};
    wi_hasher_update(&ctx.h, a, sizeof a);
    if ((x >> 32) % 3 == 0) { /* time passes: 1 .. 4 cycles */
      now += 1 + (x >> 40) % 4;
      mem_advance(m, now);
    }
  }
  for (uint64_t t, k = 0; (t = mem_next_event(m)) != UINT64_MAX; k++) {
    if (k > 10000000) fail_msg("events still pending after 10M steps: the model is stuck");
    now = t > now ? t : now;
    mem_advance(m, now);
  }
  for (int l = 0; l < 4; l++) wi_hasher_update(&ctx.h, mem_stats(m, l), sizeof(mem_level_stats));
  wi_hasher_update(&ctx.h, mem_get_dram_stats(m), sizeof(mem_dram_stats));
  for (int k = 0; k < 3; k++) wi_hasher_update(&ctx.h, mem_tlb_stats_get(m, k), sizeof(mem_tlb_stats));
  /* Something happened at every level: the mixes reach DRAM and complete pending requests. */
  assert_true(ctx.ndone > 0);
  assert_true(mem_get_dram_stats(m)->reads > 0);
  assert_true(mem_stats(m, 3)->accesses > 0);
  if (observe) assert_true(ctx.nev > n);
  mem_free(m);
  return wi_hasher_digest(&ctx.h);
}

/* Configurations: 0 Golden Cove defaults; 1 small caches, inclusive LLC, a prefetcher at every
 * level (LLC next-line), port limits, one DRAM channel with 4-entry queues (read refusals,
 * forced write drains); 2 SRRIP, 24-way L2 and LLC (no rank bytes, two hash chunks),
 * non-inclusive, 2 channels. */
static void gd_config(int k, mem_config *c) {
  mem_config_default(c);
  if (k == 1) {
    c->l1i = (cache_config){4096, 4, 64, 3, 4, 1, REPL_LRU, PF_NEXT_LINE, 2, false};
    c->l1d = (cache_config){8192, 4, 64, 4, 8, 2, REPL_LRU, PF_IP_STRIDE, 3, false};
    c->l2 = (cache_config){32768, 8, 64, 12, 12, 1, REPL_LRU, PF_STREAM, 4, false};
    c->llc = (cache_config){131072, 16, 64, 30, 16, 1, REPL_LRU, PF_NEXT_LINE, 1, true};
    c->dram = (dram_config){.channels = 1, .banks = 4, .row_bytes = 1024, .t_cas = 12,
                            .t_rcd = 12, .t_rp = 12, .t_burst = 4, .queue = 4, .base_latency = 20};
  } else if (k == 2) {
    c->l1d.replacement = REPL_SRRIP;
    c->l2 = (cache_config){393216, 24, 64, 14, 24, 0, REPL_SRRIP, PF_STREAM, 6, false};
    c->llc = (cache_config){786432, 24, 64, 40, 32, 2, REPL_SRRIP, PF_IP_STRIDE, 2, false};
    c->dram.channels = 2;
    c->dram.queue = 8;
  }
}

/* The digests before the per-level compilation (HEAD 35f8aa7), per configuration, without and
 * with an observer attached. */
static const uint64_t golden[3][2] = {
    {0x01fe91712436a171ull, 0x74d33b9112104788ull},
    {0xdb30fb6d1ebac890ull, 0x21bb9fcbba48b618ull},
    {0xf44c6ba9113cbff9ull, 0xb3c68d5a82c787ceull},
};

#define GD_N 40000      /* requests per run */
#define GD_SEED 0x5eedULL /* fixed: the digests belong to this mix */

static void test_golden(void **state) {
  (void)state;
  bool print = getenv("WHATIF_GOLDEN_PRINT") != NULL;
  fprintf(stderr, "seed %llu (fixed)\n", (unsigned long long)GD_SEED);
  for (int k = 0; k < 3; k++) {
    mem_config c;
    gd_config(k, &c);
    wi_err err = {0};
    if (mem_config_check(&c, &err) != WI_OK) fail_msg("config %d: %s", k, err.msg);
    for (int obs = 0; obs < 2; obs++) {
      uint64_t d = gd_run(&c, GD_SEED + (uint64_t)k, GD_N, obs != 0);
      if (print) fprintf(stderr, "config %d observer %d: 0x%016llxull\n", k, obs, (unsigned long long)d);
      else if (d != golden[k][obs])
        fail_msg("config %d observer %d: digest 0x%016llx, expected 0x%016llx", k, obs,
                 (unsigned long long)d, (unsigned long long)golden[k][obs]);
    }
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_golden),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

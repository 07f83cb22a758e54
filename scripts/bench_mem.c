/* bench_mem.c — `whatif bench mem`: cost of the memory-hierarchy model per access (ns) on the
 * Golden Cove defaults, for several access patterns, and the cost of mem_copy (a checkpoint).
 * For instruction counts run it under callgrind, counting only bm_run:
 *   valgrind --tool=callgrind --collect-atstart=no --toggle-collect=bm_run \
 *            whatif bench mem --scenario l1_hit --n 200000 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "memsys.h"
#include "util.h"

int bench_mem(int argc, char **argv);

typedef struct bm_ctx {
  uint64_t done;        /* completions received */
  uint64_t last_cycle;  /* cycle of the last completion */
  uint64_t blocked;     /* MEM_BLOCKED answers (each is a retry) */
} bm_ctx;

static void bm_done(void *ctx, uint32_t tag, uint64_t cycle) {
  bm_ctx *c = ctx;
  (void)tag;
  c->done++;
  c->last_cycle = cycle;
}

typedef struct bm_scn {
  const char *name;
  const char *doc;
  int dependent;        /* 1: each access waits for the previous one (a pointer chase) */
} bm_scn;

static const bm_scn scenarios[] = {
    {"l1_hit", "8 PCs each walking its own 2 KiB array by 8 bytes, one load per cycle (the hit path)", 0},
    {"l2_chase", "dependent random loads over 1 MiB (L1 misses, L2 hits)", 1},
    {"dram_chase", "dependent random loads over 512 MiB (DRAM, TLB misses)", 1},
    {"stream", "independent sequential loads over 64 MiB, as fast as accepted (prefetchers, MSHRs, DRAM bandwidth)", 0},
    {"mixed", "60% loads / 25% stores / 15% fetches, 90% within 32 KiB, rest over 64 MiB, 2 per cycle", 0},
};

/* Address of access i of scenario s. */
static uint64_t bm_addr(int s, uint64_t i, wi_rng *r, int *type, uint64_t *pc) {
  *type = MREQ_LOAD;
  *pc = 0x401000 + (i & 7) * 16;
  switch (s) {
  case 0: return 0x10000000 + (i & 7) * 4096 + (i >> 3) * 8 % 2048;
  case 1: return 0x20000000 + (rng_next(r) % (1u << 20) & ~63ull);
  case 2: return 0x40000000 + (rng_next(r) % (512ull << 20) & ~63ull);
  case 3: *pc = 0x402000; return 0x80000000 + i * 64 % (64ull << 20);
  default: {
    uint64_t x = rng_next(r);
    *type = x % 100 < 60 ? MREQ_LOAD : x % 100 < 85 ? MREQ_STORE : MREQ_IFETCH;
    if (*type == MREQ_IFETCH) return 0x400000 + (x >> 8) % 8192 * 4;
    if ((x >> 20) % 10) return 0x10000000 + (x >> 32) % 32768;
    return 0x90000000 + (x >> 32) % (64ull << 20);
  }
  }
}

/* Drive n accesses of scenario s through m (timed by the caller; the callgrind toggle point).
 * Returns the final cycle. */
__attribute__((noinline)) uint64_t bm_run(mem_sys *m, bm_ctx *ctx, int s, uint64_t n);
__attribute__((noinline)) uint64_t bm_run(mem_sys *m, bm_ctx *ctx, int s, uint64_t n) {
  wi_rng r;
  rng_seed(&r, 12345);
  uint64_t now = 0;
  uint32_t per_cycle = s == 4 ? 2 : 1, in_cycle = 0;
  for (uint64_t i = 0; i < n; i++) {
    int type;
    uint64_t pc;
    mem_req q = {.addr = bm_addr(s, i, &r, &type, &pc), .pc = pc, .fid = i, .size = 8,
                 .tag = (uint32_t)i, .type = (uint8_t)type};
    uint64_t ready;
    int rc;
    while ((rc = mem_access(m, &q, now, &ready)) == MEM_BLOCKED) {
      ctx->blocked++;
      now = ready;
      mem_advance(m, now);
    }
    if (scenarios[s].dependent) {
      if (rc == MEM_PENDING) {
        uint64_t want = ctx->done + 1;
        while (ctx->done < want) {
          now = mem_next_event(m);
          mem_advance(m, now);
        }
        ready = ctx->last_cycle;
      }
      now = ready;
      mem_advance(m, now);
    } else if (++in_cycle == per_cycle) {
      in_cycle = 0;
      now++;
      mem_advance(m, now);
    }
  }
  for (uint64_t t; (t = mem_next_event(m)) != UINT64_MAX;) {
    now = t > now ? t : now;
    mem_advance(m, now);
  }
  return now;
}

int bench_mem(int argc, char **argv) {
  uint64_t n = 1000000;
  bool json = false;
  const char *only = NULL;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--n") && i + 1 < argc) {
      if (!parse_u64(argv[++i], &n) || n == 0 || n > 1000000000)
        return cli_usage("bench mem", "--n wants a count in 1..1G, not '%s'", argv[i]);
    } else if (!strcmp(argv[i], "--scenario") && i + 1 < argc) {
      only = argv[++i];
    } else if (!strcmp(argv[i], "--json")) {
      json = true;
    } else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
      printf("usage: whatif bench mem [--n N] [--scenario NAME] [--json]\n"
             "  Memory-hierarchy model cost per access on the Golden Cove defaults (N accesses per\n"
             "  scenario, default 1M), and the cost of one mem_copy. Scenarios:\n");
      for (size_t k = 0; k < WI_ARRAY_LEN(scenarios); k++)
        printf("    %-10s %s\n", scenarios[k].name, scenarios[k].doc);
      return 0;
    } else {
      return cli_usage("bench mem", "unknown argument '%s' (try --help)", argv[i]);
    }
  }
  int sel = -1;
  if (only) {
    for (size_t k = 0; k < WI_ARRAY_LEN(scenarios); k++)
      if (!strcmp(only, scenarios[k].name)) sel = (int)k;
    if (sel < 0) return cli_usage("bench mem", "unknown scenario '%s' (try --help)", only);
  }
  mem_config cfg;
  mem_config_default(&cfg);
  jw w;
  if (json) {
    jw_init(&w, stdout, true);
    jw_obj_begin(&w);
    jw_kuint(&w, "accesses_per_scenario", n);
    jw_key(&w, "scenarios");
    jw_obj_begin(&w);
  } else {
    printf("%-10s %10s %10s %10s %12s %8s %8s %8s\n", "scenario", "accesses", "retries", "ns/access",
           "cycles", "L1D hit%", "L2 hit%", "DRAM rd");
  }
  for (int s = 0; s < (int)WI_ARRAY_LEN(scenarios); s++) {
    if (sel >= 0 && s != sel) continue;
    bm_ctx ctx = {0, 0, 0};
    mem_sys *m = mem_new(&cfg, bm_done, &ctx);
    double t0 = wi_now();
    uint64_t cycles = bm_run(m, &ctx, s, n);
    double dt = wi_now() - t0;
    const mem_level_stats *l1 = mem_stats(m, 1), *l2 = mem_stats(m, 2);
    double ns = dt * 1e9 / (double)n;
    double h1 = l1->accesses ? 100.0 * (double)l1->hits / (double)l1->accesses : 0;
    double h2 = l2->accesses ? 100.0 * (double)l2->hits / (double)l2->accesses : 0;
    if (json) {
      jw_key(&w, scenarios[s].name);
      jw_obj_begin(&w);
      jw_knum(&w, "ns_per_access", ns);
      jw_kuint(&w, "retries", ctx.blocked);
      jw_kuint(&w, "cycles", cycles);
      jw_knum(&w, "l1d_hit_rate", h1 / 100);
      jw_knum(&w, "l2_hit_rate", h2 / 100);
      jw_kuint(&w, "dram_reads", mem_get_dram_stats(m)->reads);
      jw_obj_end(&w);
    } else {
      printf("%-10s %10llu %10llu %10.1f %12llu %7.1f%% %7.1f%% %8llu\n", scenarios[s].name,
             (unsigned long long)n, (unsigned long long)ctx.blocked, ns, (unsigned long long)cycles, h1, h2,
             (unsigned long long)mem_get_dram_stats(m)->reads);
    }
    mem_free(m);
  }
  if (sel >= 0) { /* one scenario (e.g. under callgrind): no copy measurement */
    if (json) {
      jw_obj_end(&w);
      jw_obj_end(&w);
      jw_end(&w);
    }
    return 0;
  }
  /* Checkpoint cost: copy a warmed-up state. */
  mem_sys *a = mem_new(&cfg, NULL, NULL), *b = mem_new(&cfg, NULL, NULL);
  bm_ctx ctx = {0, 0, 0};
  mem_sys *warm = mem_new(&cfg, bm_done, &ctx);
  bm_run(warm, &ctx, 4, n < 200000 ? n : 200000);
  mem_copy(a, warm);
  int reps = 500;
  double t0 = wi_now();
  for (int k = 0; k < reps; k++) mem_copy(k & 1 ? a : b, k & 1 ? b : a);
  double copy_us = (wi_now() - t0) * 1e6 / reps;
  if (json) {
    jw_obj_end(&w);
    jw_kuint(&w, "state_bytes", mem_state_bytes(a));
    jw_knum(&w, "mem_copy_us", copy_us);
    jw_obj_end(&w);
    jw_end(&w);
  } else {
    printf("mem_copy   %zu bytes of state: %.1f us per copy\n", mem_state_bytes(a), copy_us);
  }
  mem_free(a);
  mem_free(b);
  mem_free(warm);
  return 0;
}

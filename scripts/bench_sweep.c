/* bench_sweep.c — `whatif bench sweep TRACE`: per-PC sweep throughput with and without
 * checkpoint skipping, on 1 and N threads, and a check that every configuration gives the same
 * cycles for every replay. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "interv.h"
#include "replay.h"
#include "rp_cli.h"
#include "trace.h"

int bench_sweep(int argc, char **argv);

typedef struct bs_ctx {
  uint64_t *cycles;   /* per job */
  uint64_t *start;    /* start instruction per job */
} bs_ctx;

static wi_rc bs_store(void *ctx, size_t i, const rp_result *r, wi_err *err) {
  (void)err;
  bs_ctx *c = ctx;
  c->cycles[i] = r->cycles;
  c->start[i] = r->start_insn;
  return WI_OK;
}

/* CPU seconds used by the whole process so far (all threads). */
static double cpu_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

typedef struct bs_case {
  const char *name;
  unsigned threads;
  bool ckpt;
  double seconds;
  double cpu;         /* CPU seconds of all threads */
  uint64_t *cycles, *start;
} bs_case;

static int u64_cmp(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

int bench_sweep(int argc, char **argv) {
  const char *path = NULL, *uarch = NULL, *tmpl_text = "latency{add=1}";
  uint64_t top = 12, threads = 2, snaps = 0;
  bool json = false;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      printf("usage: whatif bench sweep TRACE [--per-pc TEMPLATE] [--top K] [-j N] [--snapshots N] [--uarch M] [--json]\n"
             "  Per-PC sweep throughput over the K most executed PCs (default 12, template latency{add=1}):\n"
             "  with checkpoint skipping and without, on 1 thread and on N threads (default 2). Reports\n"
             "  replays/s and total time, and checks that all four give identical cycles for every replay.\n");
      return 0;
    } else if (!strcmp(a, "--json")) {
      json = true;
    } else if (!strcmp(a, "--per-pc") || !strcmp(a, "--top") || !strcmp(a, "-j") || !strcmp(a, "--uarch") ||
               !strcmp(a, "--snapshots")) {
      if (i + 1 >= argc) return cli_usage("bench sweep", "%s needs a value", a);
      const char *v = argv[++i];
      bool ok = true;
      if (!strcmp(a, "--per-pc")) tmpl_text = v;
      else if (!strcmp(a, "--uarch")) uarch = v;
      else if (!strcmp(a, "--top")) ok = parse_u64(v, &top) && top > 0;
      else if (!strcmp(a, "--snapshots")) ok = parse_u64(v, &snaps) && snaps > 0;
      else ok = parse_u64(v, &threads) && threads >= 1 && threads <= 64;
      if (!ok) return cli_usage("bench sweep", "bad value '%s' for %s", v, a);
    } else if (a[0] == '-') {
      return cli_usage("bench sweep", "unknown option '%s' (try --help)", a);
    } else if (path) {
      return cli_usage("bench sweep", "more than one trace given ('%s')", a);
    } else {
      path = a;
    }
  }
  if (!path) return cli_usage("bench sweep", "no trace given (usage: whatif bench sweep TRACE [--top K] [-j N])");
  wi_err err = {0};
  ooo_config cfg;
  if (rpc_machine(uarch, NULL, 0, &cfg, &err)) return cli_fail(&err);
  rp_interv tmpl;
  if (interv_parse_one(tmpl_text, "--per-pc", &tmpl, &err)) return cli_fail(&err);
  if (!rp_interv_is_template(&tmpl)) {
    rp_interv_free(&tmpl);
    return cli_usage("bench sweep", "--per-pc wants a template such as latency{add=1}");
  }
  trace_t *t = trace_open(path, &err);
  if (!t) {
    rp_interv_free(&tmpl);
    return cli_fail(&err);
  }
  rp_interv *ivs = NULL;
  size_t n = rpc_per_pc(t, &tmpl, 1, top, &ivs);
  rp_base_opts bo = {0};
  bo.max_snaps = (uint32_t)snaps;
  rp_base *b = rp_base_new(t, &cfg, &bo, &err);
  rp_plan **plans = xcalloc(n ? n : 1, sizeof *plans);
  int status = 0;
  bs_case cases[4] = {
    {"checkpoints, 1 thread", 1, true, 0, 0, NULL, NULL},
    {"full replays, 1 thread", 1, false, 0, 0, NULL, NULL},
    {"checkpoints, N threads", (unsigned)threads, true, 0, 0, NULL, NULL},
    {"full replays, N threads", (unsigned)threads, false, 0, 0, NULL, NULL},
  };
  size_t ncase = threads > 1 ? 4 : 2;
  if (!b) goto fail;
  for (size_t i = 0; i < n; i++)
    if (!(plans[i] = rp_plan_new(b, &ivs[i], 1, &err))) goto fail;
  double t0 = wi_now();
  if (rp_base_run(b, &err)) goto fail;
  double base_s = wi_now() - t0;
  for (size_t k = 0; k < ncase; k++) {
    bs_case *c = &cases[k];
    c->cycles = xcalloc(n ? n : 1, sizeof *c->cycles);
    c->start = xcalloc(n ? n : 1, sizeof *c->start);
    bs_ctx ctx = {c->cycles, c->start};
    rp_sweep_opts so = {c->threads, !c->ckpt, c->name};
    double s0 = wi_now(), c0 = cpu_now();
    if (rp_sweep(b, plans, n, &so, bs_store, &ctx, &err)) goto fail;
    c->seconds = wi_now() - s0;
    c->cpu = cpu_now() - c0;
  }
  bool same = true;
  for (size_t k = 1; k < ncase; k++)
    for (size_t i = 0; i < n; i++) same &= cases[k].cycles[i] == cases[0].cycles[i];
  uint64_t *st = xcalloc(n ? n : 1, sizeof *st);
  memcpy(st, cases[0].start, n * sizeof *st);
  qsort(st, n, sizeof *st, u64_cmp);
  uint64_t median_start = n ? st[n / 2] : 0;
  free(st);
  uint64_t insns = trace_get_info(t)->n_insns;
  if (json) {
    jw w;
    jw_init(&w, stdout, true);
    jw_obj_begin(&w);
    jw_kstr(&w, "trace", path);
    jw_kuint(&w, "instructions", insns);
    jw_kstr(&w, "template", tmpl.text);
    jw_kuint(&w, "replays", n);
    jw_kuint(&w, "snapshots", rp_base_n_snaps(b));
    jw_kuint(&w, "median_start_insn", median_start);
    jw_knum(&w, "baseline_seconds", base_s);
    jw_key(&w, "cases");
    jw_arr_begin(&w);
    for (size_t k = 0; k < ncase; k++) {
      jw_obj_begin(&w);
      jw_kuint(&w, "threads", cases[k].threads);
      jw_kbool(&w, "checkpoints", cases[k].ckpt);
      jw_knum(&w, "seconds", cases[k].seconds);
      jw_knum(&w, "cpu_seconds", cases[k].cpu);
      jw_knum(&w, "replays_per_s", cases[k].seconds > 0 ? (double)n / cases[k].seconds : 0.0);
      jw_obj_end(&w);
    }
    jw_arr_end(&w);
    jw_kbool(&w, "identical", same);
    jw_obj_end(&w);
    jw_end(&w);
  } else {
    printf("trace        %s (%llu instructions)\n", path, (unsigned long long)insns);
    printf("sweep        %s over the %zu most executed PCs\n", tmpl.text, n);
    printf("baseline     %.2f s with %zu snapshots (every %llu instructions)\n", base_s, rp_base_n_snaps(b),
           (unsigned long long)(rp_base_n_snaps(b) ? rp_base_snap_commit(b, 0) : 0));
    printf("median start %llu instructions (%.0f%% of the trace skipped by checkpoints)\n\n",
           (unsigned long long)median_start, insns ? 100.0 * (double)median_start / (double)insns : 0.0);
    printf("  %-14s %8s %10s %12s %9s %10s %9s\n", "case", "threads", "seconds", "replays/s", "speedup",
           "CPU s", "CPU/wall");
    for (size_t k = 0; k < ncase; k++)
      printf("  %-14s %8u %10.2f %12.3f %8.2fx %10.2f %9.2f\n", cases[k].ckpt ? "checkpoints" : "full replays",
             cases[k].threads, cases[k].seconds, cases[k].seconds > 0 ? (double)n / cases[k].seconds : 0.0,
             cases[k].seconds > 0 ? cases[1].seconds / cases[k].seconds : 0.0, cases[k].cpu,
             cases[k].seconds > 0 ? cases[k].cpu / cases[k].seconds : 0.0);
    printf("  (speedup: wall time against full replays on 1 thread; CPU/wall: cores busy on average)\n");
    printf("\nidentical cycles in every case: %s\n", same ? "yes" : "NO");
  }
  if (!same) status = EXIT_CHECK;
  goto done;
fail:
  status = cli_fail(&err);
done:
  for (size_t k = 0; k < 4; k++) {
    free(cases[k].cycles);
    free(cases[k].start);
  }
  for (size_t i = 0; i < n; i++) rp_plan_free(plans[i]);
  free(plans);
  interv_free_list(ivs, n);
  rp_interv_free(&tmpl);
  rp_base_free(b);
  trace_close(t);
  return status;
}

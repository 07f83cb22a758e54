/* cmd_gus.c — `whatif gus TRACE`: the one-pass Gus model's predicted cycles, per-PC taint ranking
 * and (with --sensitivity) per-resource speedups. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "gus.h"
#include "machine.h"
#include "ooo.h"
#include "trace.h"

static void usage(FILE *f) {
  fprintf(f,
          "usage: whatif gus TRACE [--uarch NAME|FILE] [--set LUA-TABLE] [--window 1|2|4]\n"
          "                  [--sensitivity] [--factor F] [--threads N] [--top N] [--json]\n"
          "  One pass of the resource-centric Gus model over the trace: predicted cycles and IPC,\n"
          "  and the PCs ranked by taint (how often an instruction leaving the taint queue of\n"
          "  window x ROB instructions was still on the chain that decides dispatch).\n"
          "  --uarch        machine configuration (default %s); Gus uses its widths, ROB, ports,\n"
          "                 port groups, latencies and cache geometry\n"
          "  --set          overrides on top of it, e.g. --set '{core = {rob = 256}}'\n"
          "  --window       taint-queue length in ROBs (default 2)\n"
          "  --sensitivity  re-run with each resource scaled: throughput x2, latency x0.5, and\n"
          "                 throughput x F with latency / F (--factor, default 1.5); speedups\n"
          "  --threads      parallel sensitivity runs (default: online CPUs)\n"
          "  --top          PCs listed (default 20; 0 = every tainted PC)\n"
          "  --json         {predicted_cycles, ipc, window, taint: [...], sensitivity: [...]}\n",
          MACHINE_DEFAULT);
}

typedef struct pc_row {
  uint32_t sid;
  uint64_t taint, count;
} pc_row;

static int by_taint(const void *a, const void *b) {
  const pc_row *x = a, *y = b;
  if (x->taint != y->taint) return x->taint < y->taint ? 1 : -1;
  if (x->count != y->count) return x->count < y->count ? 1 : -1;
  return x->sid < y->sid ? -1 : x->sid > y->sid;
}

static const char *func_of(const trace_t *t, uint64_t pc) {
  const trace_sym *s = trace_sym_lookup(t, pc);
  return s ? s->name : NULL;
}

int cmd_gus(int argc, char **argv) {
  const char *path = NULL, *uarch = NULL, *set = NULL;
  uint64_t window = 2, top = 20, threads = 0;
  double factor = 1.5;
  bool sens = false, json = false;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      usage(stdout);
      return 0;
    } else if (!strcmp(a, "--json")) {
      json = true;
    } else if (!strcmp(a, "--sensitivity")) {
      sens = true;
    } else if (!strcmp(a, "--uarch") || !strcmp(a, "--set") || !strcmp(a, "--window") || !strcmp(a, "--top") ||
               !strcmp(a, "--threads") || !strcmp(a, "--factor")) {
      if (i + 1 >= argc) return cli_usage("gus", "%s needs a value", a);
      const char *v = argv[++i];
      if (!strcmp(a, "--uarch")) uarch = v;
      else if (!strcmp(a, "--set")) set = v;
      else if (!strcmp(a, "--factor")) {
        char *end;
        factor = strtod(v, &end);
        if (*end || !(factor > 0) || factor > 1000)
          return cli_usage("gus", "--factor wants a number in (0, 1000], not '%s'", v);
      } else if (!strcmp(a, "--window")) {
        if (!parse_u64(v, &window) || window < 1 || window > 16)
          return cli_usage("gus", "--window wants a multiple of the ROB in 1..16 (1, 2 or 4), not '%s'", v);
      } else if (!strcmp(a, "--top")) {
        if (!parse_u64(v, &top)) return cli_usage("gus", "--top wants a count, not '%s'", v);
      } else if (!parse_u64(v, &threads) || threads < 1 || threads > 64) {
        return cli_usage("gus", "--threads wants a count in 1..64, not '%s'", v);
      }
    } else if (a[0] == '-' && a[1]) {
      return cli_usage("gus", "unknown option '%s' (try --help)", a);
    } else if (!path) {
      path = a;
    } else {
      return cli_usage("gus", "one trace only ('%s' is extra)", a);
    }
  }
  if (!path) return cli_usage("gus", "no trace given (usage: whatif gus TRACE [options]; see whatif gus --help)");
  if (!threads) {
    long nc = sysconf(_SC_NPROCESSORS_ONLN);
    threads = nc > 0 ? (uint64_t)(nc > 64 ? 64 : nc) : 1;
  }

  wi_err err = {0};
  ooo_config cfg;
  gus_machine m;
  if (machine_load(uarch, &cfg, &err)) return cli_fail(&err);
  if (set && machine_apply_expr(&cfg, set, &err)) return cli_fail(&err);
  if (gus_machine_from_ooo(&m, &cfg, &err)) return cli_fail(&err);
  trace_t *t = trace_open(path, &err);
  if (!t) return cli_fail(&err);
  gus_source src;
  gus_source_trace(&src, t);

  gus_result r;
  gus_sens_row rows[GUS_R_MAX];
  double t0 = wi_now();
  wi_rc rc = sens ? gus_sensitivity(&m, (uint32_t)window, &src, factor, (unsigned)threads, rows, &r, &err)
                  : gus_run(&m, (uint32_t)window, &src, &r, &err);
  double secs = wi_now() - t0;
  if (rc) {
    trace_close(t);
    return cli_fail(&err);
  }

  /* rank the PCs by taint (ties: more executions first, then address order) */
  pc_row *rows_pc = xcalloc(r.n_static ? r.n_static : 1, sizeof *rows_pc);
  size_t np = 0;
  for (uint32_t s = 0; s < r.n_static; s++)
    if (r.count[s]) rows_pc[np++] = (pc_row){s, r.taint[s], r.count[s]};
  qsort(rows_pc, np, sizeof *rows_pc, by_taint);
  size_t shown = 0, tainted = 0;
  while (tainted < np && rows_pc[tainted].taint) tainted++; /* sorted by taint, most first */
  while (shown < tainted && (top == 0 || shown < top)) shown++;
  double ipc = r.cycles ? (double)r.insns / (double)r.cycles : 0;
  int nres = gus_res_count(&m);
  char nb[32];

  if (json) {
    jw w;
    jw_init(&w, stdout, true);
    jw_obj_begin(&w);
    jw_kstr(&w, "trace", path);
    jw_kstr(&w, "machine", cfg.name);
    jw_kuint(&w, "instructions", r.insns);
    jw_kuint(&w, "predicted_cycles", r.cycles);
    jw_knum(&w, "ipc", ipc);
    jw_kuint(&w, "window", r.window);
    jw_kuint(&w, "taint_queue", (uint64_t)r.window * m.rob);
    jw_key(&w, "taint");
    jw_arr_begin(&w);
    for (size_t i = 0; i < shown; i++) {
      const dec_insn *d = trace_decoded(t, rows_pc[i].sid);
      jw_obj_begin(&w);
      jw_kuint(&w, "pc", d->pc);
      jw_kstr(&w, "asm", d->text);
      jw_kstr(&w, "function", func_of(t, d->pc));
      jw_kuint(&w, "taint", rows_pc[i].taint);
      jw_kuint(&w, "count", rows_pc[i].count);
      jw_obj_end(&w);
    }
    jw_arr_end(&w);
    jw_key(&w, "bindings");
    jw_obj_begin(&w);
    for (int b = 0; b < nres; b++)
      if (r.res[b].bound) jw_kuint(&w, gus_res_name(&m, b, nb, sizeof nb), r.res[b].bound);
    jw_kuint(&w, "data", r.bound_data);
    jw_kuint(&w, "memdep", r.bound_memdep);
    jw_obj_end(&w);
    if (sens) {
      jw_knum(&w, "factor", factor);
      jw_key(&w, "sensitivity");
      jw_arr_begin(&w);
      for (int k = 0; k < nres; k++) {
        jw_obj_begin(&w);
        jw_kstr(&w, "resource", gus_res_name(&m, k, nb, sizeof nb));
        jw_knum(&w, "speedup_x2", rows[k].speedup_x2);
        if (rows[k].speedup_half_latency > 0) jw_knum(&w, "speedup_half_latency", rows[k].speedup_half_latency);
        else jw_kstr(&w, "speedup_half_latency", NULL);
        jw_knum(&w, "speedup_factor", rows[k].speedup_factor);
        jw_obj_end(&w);
      }
      jw_arr_end(&w);
    }
    jw_knum(&w, "seconds", secs);
    jw_obj_end(&w);
    jw_end(&w);
  } else {
    char b1[32], b2[32];
    printf("trace        %s\n", path);
    printf("machine      %s (Gus: %u-wide dispatch, ROB %u, %u ports)\n", cfg.name, m.dispatch_width, m.rob,
           m.n_ports);
    printf("instructions %s\n", fmt_si(b1, sizeof b1, (double)r.insns));
    printf("predicted    %llu cycles, IPC %.3f\n", (unsigned long long)r.cycles, ipc);
    printf("taint queue  %u x ROB = %llu instructions\n", r.window, (unsigned long long)r.window * m.rob);
    /* runs: the baseline, plus one per scaling of every resource the baseline used */
    uint64_t runs = 1;
    for (int k = 0; sens && k < nres; k++)
      if (r.res[k].uses) runs += gus_res_has_latency(k) ? 3 : 2;
    printf("model time   %.2f s for %llu run%s (%s instructions/s)\n", secs, (unsigned long long)runs,
           runs == 1 ? "" : "s", fmt_si(b2, sizeof b2, secs > 0 ? (double)r.insns * (double)runs / secs : 0));
    printf("\nbinding constraints (instruction stages they decided):\n");
    for (int b = 0; b < nres; b++)
      if (r.res[b].bound) printf("  %-10s %12llu\n", gus_res_name(&m, b, nb, sizeof nb), (unsigned long long)r.res[b].bound);
    printf("  %-10s %12llu\n  %-10s %12llu\n", "data", (unsigned long long)r.bound_data, "memdep",
           (unsigned long long)r.bound_memdep);
    printf("\ntop %zu PCs by taint (%zu of %zu executed PCs tainted):\n", shown, tainted, np);
    printf("  %-18s %10s %10s %6s  %-30s %s\n", "pc", "taint", "count", "frac", "asm", "function");
    for (size_t i = 0; i < shown; i++) {
      const dec_insn *d = trace_decoded(t, rows_pc[i].sid);
      const char *fn = func_of(t, d->pc);
      printf("  0x%016llx %10llu %10llu %5.1f%%  %-30s %s\n", (unsigned long long)d->pc,
             (unsigned long long)rows_pc[i].taint, (unsigned long long)rows_pc[i].count,
             100.0 * (double)rows_pc[i].taint / (double)rows_pc[i].count, d->text, fn ? fn : "?");
    }
    if (sens) {
      printf("\nsensitivity (speedup of predicted cycles; factor %.3g = throughput x%.3g, latency /%.3g):\n", factor,
             factor, factor);
      printf("  %-10s %9s %12s %9s\n", "resource", "x2", "half-lat", "factor");
      for (int k = 0; k < nres; k++) {
        char hl[32];
        if (rows[k].speedup_half_latency > 0) snprintf(hl, sizeof hl, "%.3f", rows[k].speedup_half_latency);
        else snprintf(hl, sizeof hl, "-");
        printf("  %-10s %9.3f %12s %9.3f\n", gus_res_name(&m, k, nb, sizeof nb), rows[k].speedup_x2, hl,
               rows[k].speedup_factor);
      }
    }
  }
  free(rows_pc);
  gus_result_free(&r);
  trace_close(t);
  return 0;
}

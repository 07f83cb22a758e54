/* cmd_run.c — `whatif run TRACE [--uarch NAME|FILE] [--set LUA] [--json]`: run a trace through
 * the out-of-order core model and report IPC, top-down, branches, wrong path, stalls, memory
 * and simulation speed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "machine.h"
#include "ooo.h"
#include "trace.h"

static void usage(FILE *f) {
  fprintf(f,
          "usage: whatif run TRACE [--uarch NAME|FILE] [--set LUA-TABLE] [--max N] [--hot N] [--json]\n"
          "  Run TRACE through the out-of-order core model.\n"
          "  --uarch    machine configuration: a bundled name (golden_cove, skylake, stress) or a .lua\n"
          "             file (default golden_cove)\n"
          "  --set      overrides on top of it, e.g. --set '{core = {rob = 256}, bpred = {ras_repair = \"full\"}}'\n"
          "  --max N    stop after N committed instructions\n"
          "  --hot N    also list the N static instructions with the most ROB-head stall cycles\n"
          "  --json     machine-readable output\n");
}

typedef struct hot_row {
  uint32_t sid;
  uint64_t head;
} hot_row;

static int hot_cmp(const void *a, const void *b) {
  const hot_row *x = a, *y = b;
  if (x->head != y->head) return x->head < y->head ? 1 : -1;
  return x->sid < y->sid ? -1 : x->sid > y->sid;
}

/* Rows of the N static instructions with the most head-stall cycles (caller frees). */
static size_t hot_rows(const ooo_model *m, const trace_t *t, uint64_t n, hot_row **out) {
  const ooo_sid_stats *ss = ooo_get_sid_stats(m);
  uint32_t ns = trace_get_info(t)->n_static;
  hot_row *rows = xcalloc(ns ? ns : 1, sizeof *rows);
  for (uint32_t i = 0; i < ns; i++) rows[i] = (hot_row){i, ss[i].head_cycles};
  qsort(rows, ns, sizeof *rows, hot_cmp);
  *out = rows;
  return n < ns ? (size_t)n : ns;
}

int cmd_run(int argc, char **argv) {
  const char *path = NULL, *uarch = NULL, *set = NULL;
  bool json = false;
  uint64_t max = UINT64_MAX, hot = 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      usage(stdout);
      return 0;
    } else if (!strcmp(a, "--json")) {
      json = true;
    } else if (!strcmp(a, "--uarch") || !strcmp(a, "--set") || !strcmp(a, "--max") || !strcmp(a, "--hot")) {
      if (i + 1 >= argc) return cli_usage("run", "%s needs a value", a);
      const char *v = argv[++i];
      if (!strcmp(a, "--uarch")) uarch = v;
      else if (!strcmp(a, "--set")) set = v;
      else if (!parse_u64(v, !strcmp(a, "--max") ? &max : &hot))
        return cli_usage("run", "%s wants a count, not '%s'", a, v);
    } else if (a[0] == '-') {
      return cli_usage("run", "unknown option '%s' (see whatif run --help)", a);
    } else if (!path) {
      path = a;
    } else {
      return cli_usage("run", "more than one trace given ('%s' and '%s')", path, a);
    }
  }
  if (!path) return cli_usage("run", "no trace given (usage: whatif run TRACE [options]; see whatif run --help)");
  wi_err err = {0};
  ooo_config cfg;
  if (machine_load(uarch, &cfg, &err)) return cli_fail(&err);
  if (set && machine_apply_expr(&cfg, set, &err)) return cli_fail(&err);
  trace_t *t = trace_open(path, &err);
  if (!t) return cli_fail(&err);
  /* per-sid statistics also make the load-level breakdown exact (memory-system miss events);
   * no observer ever watches this model: it need not keep the bindings */
  ooo_model *m = ooo_new(&cfg, t, OOO_SID_STATS | OOO_NO_BINDINGS, &err);
  if (!m) {
    trace_close(t);
    return cli_fail(&err);
  }
  const trace_info *ti = trace_get_info(t);
  uint64_t total = max < ti->n_insns ? max : ti->n_insns;
  wi_progress pr;
  progress_begin(&pr, "run", total);
  double t0 = wi_now();
  wi_rc rc = WI_OK;
  while (!ooo_finished(m) && ooo_committed(m) < total) {
    uint64_t step = total - ooo_committed(m);
    if (step > 1000000) step = 1000000;
    if ((rc = ooo_run(m, step, &err))) break;
    progress_update(&pr, ooo_committed(m));
  }
  double secs = wi_now() - t0;
  progress_end(&pr);
  if (rc) {
    ooo_free(m);
    trace_close(t);
    return cli_fail(&err);
  }
  if (json) {
    jw w;
    jw_init(&w, stdout, true);
    jw_obj_begin(&w);
    jw_kstr(&w, "trace", path);
    ooo_stats_json(m, secs, &w);
    if (hot) {
      hot_row *rows;
      size_t n = hot_rows(m, t, hot, &rows);
      const ooo_sid_stats *ss = ooo_get_sid_stats(m);
      jw_key(&w, "hot");
      jw_arr_begin(&w);
      for (size_t i = 0; i < n; i++) {
        const trace_static *st = trace_static_at(t, rows[i].sid);
        const trace_sym *sym = trace_sym_lookup(t, st->pc);
        jw_obj_begin(&w);
        jw_kuint(&w, "pc", st->pc);
        jw_kstr(&w, "insn", trace_decoded(t, rows[i].sid)->text);
        jw_kstr(&w, "function", sym ? sym->name : NULL);
        jw_kuint(&w, "count", ss[rows[i].sid].count);
        jw_kuint(&w, "head_cycles", ss[rows[i].sid].head_cycles);
        jw_kuint(&w, "mispredicts", ss[rows[i].sid].mispredicts);
        jw_kuint(&w, "l1d_misses", ss[rows[i].sid].l1d_misses);
        jw_kuint(&w, "l2_misses", ss[rows[i].sid].l2_misses);
        jw_kuint(&w, "llc_misses", ss[rows[i].sid].llc_misses);
        jw_obj_end(&w);
      }
      jw_arr_end(&w);
      free(rows);
    }
    jw_obj_end(&w);
    jw_end(&w);
  } else {
    printf("trace              %s\n", path);
    ooo_stats_print(m, secs, stdout);
    if (hot) {
      hot_row *rows;
      size_t n = hot_rows(m, t, hot, &rows);
      const ooo_sid_stats *ss = ooo_get_sid_stats(m);
      printf("\nstatic instructions by ROB-head stall cycles\n");
      printf("  %-14s %-32s %12s %12s %10s %10s %10s  %s\n", "pc", "instruction", "count", "head cyc", "mispred",
             "L1D miss", "LLC miss", "function");
      for (size_t i = 0; i < n; i++) {
        uint32_t sid = rows[i].sid;
        const trace_static *st = trace_static_at(t, sid);
        const trace_sym *sym = trace_sym_lookup(t, st->pc);
        printf("  0x%-12llx %-32.32s %12llu %12llu %10llu %10llu %10llu  %s\n", (unsigned long long)st->pc,
               trace_decoded(t, sid)->text, (unsigned long long)ss[sid].count,
               (unsigned long long)ss[sid].head_cycles, (unsigned long long)ss[sid].mispredicts,
               (unsigned long long)ss[sid].l1d_misses, (unsigned long long)ss[sid].llc_misses,
               sym ? sym->name : "?");
      }
      free(rows);
    }
  }
  ooo_free(m);
  trace_close(t);
  return 0;
}

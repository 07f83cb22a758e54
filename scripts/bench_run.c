/* bench_run.c — `whatif bench run TRACE...`: speed of the out-of-order model (instructions and
 * cycles simulated per second, fastest of N passes) and the cost of a checkpoint (ooo_copy).
 * For instruction-level profiles run it under callgrind:
 *   valgrind --tool=callgrind whatif bench run TRACE --repeat 1 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "machine.h"
#include "ooo.h"
#include "trace.h"

int bench_run(int argc, char **argv);

static double cpu_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

typedef struct br_result {
  uint64_t insns, cycles, skipped;
  double best_s, best_cpu_s;
  double copy_us;        /* one ooo_copy (core + memory state), microseconds */
  size_t state_bytes, mem_bytes;
} br_result;

static wi_rc bench_one(const char *path, const ooo_config *cfg, int repeat, uint64_t max, unsigned flags, br_result *r,
                       wi_err *err) {
  memset(r, 0, sizeof *r);
  r->best_s = r->best_cpu_s = 1e300;
  trace_t *t = trace_open(path, err);
  if (!t) return err->rc;
  wi_rc rc = WI_OK;
  for (int k = 0; k < repeat && !rc; k++) {
    ooo_model *m = ooo_new(cfg, t, flags, err);
    if (!m) {
      rc = err->rc;
      break;
    }
    double t0 = wi_now(), c0 = cpu_now();
    rc = ooo_run(m, max, err);
    double dt = wi_now() - t0, dc = cpu_now() - c0;
    if (dt < r->best_s) r->best_s = dt;
    if (dc < r->best_cpu_s) r->best_cpu_s = dc;
    r->insns = ooo_committed(m);
    r->cycles = ooo_cycles(m);
    r->skipped = ooo_get_stats(m)->skipped_cycles;
    ooo_free(m);
  }
  if (!rc) { /* checkpoint cost: copy a model stopped halfway */
    ooo_model *a = ooo_new(cfg, t, OOO_NO_BINDINGS, err), *b = a ? ooo_new(cfg, t, OOO_NO_BINDINGS, err) : NULL;
    if (!a || !b) rc = err->rc;
    else if (!(rc = ooo_run(a, r->insns / 2, err))) {
      int n = 200;
      double t0 = wi_now();
      for (int i = 0; i < n && !rc; i++) rc = ooo_copy(b, a, err);
      r->copy_us = (wi_now() - t0) / n * 1e6;
      r->state_bytes = ooo_state_bytes(a);
      r->mem_bytes = mem_state_bytes(ooo_get_mem(a));
    }
    ooo_free(a);
    ooo_free(b);
  }
  trace_close(t);
  return rc;
}

int bench_run(int argc, char **argv) {
  const char *uarch = NULL;
  uint64_t repeat = 3, max = UINT64_MAX;
  bool json = false, reader = false;
  const char **paths = xcalloc((size_t)argc, sizeof *paths);
  int np = 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      printf("usage: whatif bench run TRACE... [--uarch NAME|FILE] [--repeat N] [--max N] [--reader] [--json]\n"
             "  Simulation speed of the out-of-order model on each trace (fastest of N passes,\n"
             "  default 3): instructions/s, cycles/s, share of cycles skipped, and the cost of one\n"
             "  checkpoint copy (ooo_copy of the core and memory state). --reader: read the trace\n"
             "  ahead on a second thread (OOO_READER; measured no faster on this 2-CPU machine).\n"
             "  Anchors (shared/FACTS.md): ChampSim runs ~0.30 M instructions/s on an L1-resident\n"
             "  stream and ~0.041 M/s on a DRAM-bound one on this machine.\n");
      free(paths);
      return 0;
    } else if (!strcmp(a, "--json")) {
      json = true;
    } else if (!strcmp(a, "--reader")) {
      reader = true;
    } else if (!strcmp(a, "--uarch") || !strcmp(a, "--repeat") || !strcmp(a, "--max")) {
      if (i + 1 >= argc) {
        free(paths);
        return cli_usage("bench run", "%s needs a value", a);
      }
      const char *v = argv[++i];
      if (!strcmp(a, "--uarch")) uarch = v;
      else if (!parse_u64(v, !strcmp(a, "--repeat") ? &repeat : &max) || (!strcmp(a, "--repeat") && (!repeat || repeat > 100))) {
        free(paths);
        return cli_usage("bench run", "%s wants a count, not '%s'", a, v);
      }
    } else if (a[0] == '-') {
      free(paths);
      return cli_usage("bench run", "unknown option '%s'", a);
    } else {
      paths[np++] = a;
    }
  }
  if (!np) {
    free(paths);
    return cli_usage("bench run", "no trace given (whatif bench run TRACE...)");
  }
  wi_err err = {0};
  ooo_config cfg;
  if (machine_load(uarch, &cfg, &err)) {
    free(paths);
    return cli_fail(&err);
  }
  jw w;
  if (json) {
    jw_init(&w, stdout, true);
    jw_obj_begin(&w);
    jw_kstr(&w, "machine", cfg.name);
    jw_kbool(&w, "reader_thread", reader);
    jw_key(&w, "traces");
    jw_arr_begin(&w);
  } else {
    printf("%-20s %10s %7s %8s %9s %9s %8s %8s %9s %9s\n", "trace", "insns", "IPC", "skipped", "M insn/s",
           "(cpu)", "M cyc/s", "ns/insn", "copy us", "state KiB");
  }
  int status = 0;
  for (int i = 0; i < np; i++) {
    br_result r;
    /* as `whatif run`: no observer, so no bindings */
    if (bench_one(paths[i], &cfg, (int)repeat, max, OOO_NO_BINDINGS | (reader ? OOO_READER : 0u), &r, &err)) {
      wi_perror(&err);
      status = EXIT_BADINPUT;
      continue;
    }
    double mips = (double)r.insns / r.best_s / 1e6;
    const char *base = strrchr(paths[i], '/');
    base = base ? base + 1 : paths[i];
    if (json) {
      jw_obj_begin(&w);
      jw_kstr(&w, "trace", paths[i]);
      jw_kuint(&w, "instructions", r.insns);
      jw_kuint(&w, "cycles", r.cycles);
      jw_knum(&w, "ipc", r.cycles ? (double)r.insns / (double)r.cycles : 0);
      jw_knum(&w, "skipped_fraction", r.cycles ? (double)r.skipped / (double)r.cycles : 0);
      jw_knum(&w, "seconds", r.best_s);
      jw_knum(&w, "cpu_seconds", r.best_cpu_s);
      jw_knum(&w, "sim_mips", mips);
      jw_knum(&w, "sim_mips_cpu", (double)r.insns / r.best_cpu_s / 1e6);
      jw_knum(&w, "sim_mcps", (double)r.cycles / r.best_s / 1e6);
      jw_knum(&w, "ns_per_insn", r.best_s * 1e9 / (double)(r.insns ? r.insns : 1));
      jw_knum(&w, "copy_us", r.copy_us);
      jw_kuint(&w, "state_bytes", r.state_bytes);
      jw_kuint(&w, "mem_state_bytes", r.mem_bytes);
      jw_obj_end(&w);
    } else {
      printf("%-20.20s %10llu %7.3f %7.1f%% %9.2f %9.2f %8.2f %8.1f %9.1f %9.0f\n", base, (unsigned long long)r.insns,
             r.cycles ? (double)r.insns / (double)r.cycles : 0, r.cycles ? 100.0 * (double)r.skipped / (double)r.cycles : 0,
             mips, (double)r.insns / r.best_cpu_s / 1e6, (double)r.cycles / r.best_s / 1e6,
             r.best_s * 1e9 / (double)(r.insns ? r.insns : 1), r.copy_us, (double)(r.state_bytes + r.mem_bytes) / 1024.0);
    }
  }
  if (json) {
    jw_arr_end(&w);
    jw_obj_end(&w);
    jw_end(&w);
  } else {
    printf("(%s; fastest of %llu passes; trace read %s; M insn/s by wall clock, (cpu) by the model\n"
           " thread's CPU time; ChampSim anchors: 0.30 M insn/s L1-resident, 0.041 M/s DRAM-bound)\n",
           cfg.name, (unsigned long long)repeat, reader ? "ahead on a second thread" : "in line");
  }
  free(paths);
  return status;
}

/* bench_gus.c — `whatif bench gus [TRACE...]`: speed of the one-pass Gus model (instructions per
 * second of CPU time, fastest of N passes) with taint tracking, without it (the sensitivity
 * runs), and of reading the trace alone; on recorded traces and on a synthetic stream. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "gus.h"
#include "gus_int.h"
#include "machine.h"
#include "ooo.h"
#include "trace.h"

int bench_gus(int argc, char **argv);

static double cpu_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* CPU seconds of every thread of the process (the prefetching reader included) */
static double proc_cpu_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

typedef struct bg_result {
  uint64_t insns, cycles;
  double read_cpu, taint_cpu, fast_cpu; /* fastest pass, CPU seconds */
  double taint_wall;
  double pf_wall, pf_cpu; /* taint run reading on a second thread: wall and process CPU seconds */
  double pf_tcpu;         /* the same run: CPU seconds of the model thread alone */
} bg_result;

/* Iterate the source without modelling (the reader's share of a run). */
static wi_rc read_pass(const gus_source *src, uint64_t *n, wi_err *err) {
  void *c = src->open(src->ctx, err);
  if (!c) return err->rc ? err->rc : WI_EIO;
  wi_rc rc;
  uint64_t sum = 0, k = 0;
  for (;;) {
    trace_batch b;
    if ((rc = src->next(c, &b, err)) || !b.n) break;
    for (size_t i = 0; i < b.n; i++) sum += b.insns[i].pc + b.insns[i].n_mem;
    k += b.n;
  }
  src->close(c);
  *n = k + (sum == 42); /* keeps the loop */
  return rc;
}

static wi_rc bench_source(const gus_machine *m, uint32_t window, const gus_source *src, int repeat, bg_result *r,
                          wi_err *err) {
  memset(r, 0, sizeof *r);
  r->read_cpu = r->taint_cpu = r->fast_cpu = r->taint_wall = r->pf_wall = r->pf_cpu = r->pf_tcpu = 1e300;
  for (int k = 0; k < repeat; k++) {
    uint64_t n;
    double c0 = cpu_now();
    wi_rc rc = read_pass(src, &n, err);
    if (rc) return rc;
    double dc = cpu_now() - c0;
    if (dc < r->read_cpu) r->read_cpu = dc;
    /* taint = 2: with taint tracking and the prefetching reader (what `whatif gus` runs) */
    for (int taint = 2; taint >= 0; taint--) {
      gus *g = gus_create(m, window, src->n_static, taint > 0, 1, err);
      if (!g) return err->rc ? err->rc : WI_EINVAL;
      gus_set_prefetch(g, taint == 2);
      double w0 = wi_now();
      c0 = cpu_now();
      double p0 = proc_cpu_now();
      rc = gus_run_source(g, src, err);
      dc = cpu_now() - c0;
      double dp = proc_cpu_now() - p0;
      double dw = wi_now() - w0;
      gus_result res;
      gus_finish(g, &res);
      gus_free(g);
      if (rc) return rc;
      r->insns = res.insns;
      r->cycles = res.cycles;
      gus_result_free(&res);
      if (taint == 2) {
        if (dw < r->pf_wall) r->pf_wall = dw;
        if (dp < r->pf_cpu) r->pf_cpu = dp;
        if (dc < r->pf_tcpu) r->pf_tcpu = dc;
      } else if (taint) {
        if (dc < r->taint_cpu) r->taint_cpu = dc;
        if (dw < r->taint_wall) r->taint_wall = dw;
      } else if (dc < r->fast_cpu) {
        r->fast_cpu = dc;
      }
    }
  }
  return WI_OK;
}

/* A synthetic stream: a 64-instruction loop body of integer, vector and memory work over a
 * 64 KiB working set (mostly L1/L2 hits), with dependencies through 16 registers. */
typedef struct synth {
  dec_insn *dec;
  trace_insn *ins;
  trace_mem *mem;
  gus_mem_stream ms;
} synth;

static void synth_make(synth *s, uint64_t n) {
  static const int classes[] = {IC_ALU, IC_ALU, IC_ALU, IC_ALU, IC_MOV, IC_LOAD, IC_LOAD, IC_STORE,
                                IC_LEA, IC_SHIFT, IC_MUL, IC_FMA, IC_VEC_ALU, IC_FP_ADD, IC_BRANCH, IC_LOAD};
  const uint32_t ns = 64;
  wi_rng rng;
  rng_seed(&rng, 1);
  s->dec = xcalloc(ns, sizeof *s->dec);
  for (uint32_t i = 0; i < ns; i++) {
    dec_insn *d = &s->dec[i];
    d->pc = 0x401000 + 4 * i;
    d->len = 4;
    d->cls = (uint8_t)(i == ns - 1 ? IC_BRANCH : classes[rng_below(&rng, WI_ARRAY_LEN(classes))]);
    bool vec = d->cls == IC_FMA || d->cls == IC_VEC_ALU || d->cls == IC_FP_ADD;
    int base = vec ? RG_V0 : RG_RAX;
    d->src = RG_BIT(base + (int)rng_below(&rng, 16)) | RG_BIT(base + (int)rng_below(&rng, 16));
    d->dst = d->cls == IC_STORE || d->cls == IC_BRANCH ? 0 : RG_BIT(base + (int)rng_below(&rng, 16));
    if (d->cls == IC_BRANCH) {
      d->src = RG_BIT(RG_FLAGS);
      d->br = BR_COND;
    } else if (!vec && d->cls != IC_MOV) {
      d->dst |= RG_BIT(RG_FLAGS);
    }
    if (d->cls == IC_LOAD || d->cls == IC_STORE) d->addr_src = RG_BIT(RG_RSI);
    if (d->dst & RG_BIT(RG_RSP)) d->dst = RG_BIT(RG_R8);
    snprintf(d->text, sizeof d->text, "%s", insn_class_name(d->cls));
  }
  s->ins = xcalloc(n, sizeof *s->ins);
  s->mem = xcalloc(n, sizeof *s->mem);
  size_t nm = 0;
  for (uint64_t i = 0; i < n; i++) {
    uint32_t sid = (uint32_t)(i % ns);
    trace_insn *t = &s->ins[i];
    t->sid = sid;
    t->pc = s->dec[sid].pc;
    t->len = 4;
    t->rep = 1;
    t->mem_off = (uint32_t)nm;
    if (sid == ns - 1) t->flags = TI_TAKEN;
    if (s->dec[sid].cls == IC_LOAD || s->dec[sid].cls == IC_STORE) {
      s->mem[nm] = (trace_mem){0x7f0000 + 8 * rng_below(&rng, 8192), 8, s->dec[sid].cls == IC_STORE, {0}};
      nm++;
      t->n_mem = 1;
    }
  }
  s->ms = (gus_mem_stream){s->dec, ns, s->ins, (size_t)n, s->mem};
}

static void synth_free(synth *s) {
  free(s->dec);
  free(s->ins);
  free(s->mem);
}

/* in_memory: the source is an array (reading it costs nothing worth reporting) */
static void print_row(const char *name, const bg_result *r, bool in_memory, jw *w) {
  const double n = (double)r->insns;
  double mt = n / r->taint_cpu / 1e6, mf = n / r->fast_cpu / 1e6, mr = n / r->read_cpu / 1e6;
  if (w) {
    jw_obj_begin(w);
    jw_kstr(w, "trace", name);
    jw_kuint(w, "instructions", r->insns);
    jw_kuint(w, "predicted_cycles", r->cycles);
    jw_knum(w, "taint_minsns_per_s", mt);
    jw_knum(w, "fast_minsns_per_s", mf);
    if (in_memory) jw_kstr(w, "read_minsns_per_s", NULL);
    else jw_knum(w, "read_minsns_per_s", mr);
    jw_knum(w, "taint_cpu_s", r->taint_cpu);
    jw_knum(w, "taint_wall_s", r->taint_wall);
    jw_knum(w, "prefetch_wall_minsns_per_s", n / r->pf_wall / 1e6);
    jw_knum(w, "prefetch_cpu_minsns_per_s", n / r->pf_cpu / 1e6);
    jw_knum(w, "prefetch_model_thread_minsns_per_s", n / r->pf_tcpu / 1e6);
    jw_knum(w, "prefetch_wall_s", r->pf_wall);
    jw_knum(w, "prefetch_cpu_s", r->pf_cpu);
    jw_obj_end(w);
  } else {
    char rd[32];
    if (in_memory) snprintf(rd, sizeof rd, "-");
    else snprintf(rd, sizeof rd, "%.1f", mr);
    printf("%-28s %10llu %9.1f %9.1f %9s %9.3f %9.3f %9.1f %9.1f %9.1f\n", name, (unsigned long long)r->insns, mt,
           mf, rd, r->taint_cpu, r->taint_wall, n / r->pf_wall / 1e6, n / r->pf_cpu / 1e6, n / r->pf_tcpu / 1e6);
  }
}

int bench_gus(int argc, char **argv) {
  const char *uarch = NULL;
  uint64_t repeat = 3, window = 2, synthetic = 0;
  bool json = false;
  const char **paths = xcalloc((size_t)argc + 1, sizeof *paths);
  int np = 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      printf("usage: whatif bench gus [TRACE...] [--synthetic N] [--window W] [--repeat N] [--uarch NAME] [--json]\n"
             "  Gus model speed: millions of instructions per CPU second with taint tracking (a\n"
             "  `whatif gus` run), without it (each sensitivity run) and for reading the trace\n"
             "  alone; fastest of --repeat passes (default 3). --synthetic N adds an in-memory\n"
             "  stream of N instructions (default 5M when no trace is given). 'pf wall' and\n"
             "  'pf cpu': the taint run with the trace read on a second thread (as `whatif gus`\n"
             "  runs it), per wall-clock second and per CPU second of both threads; 'pf model':\n"
             "  per CPU second of the model thread alone (the wall rate when a CPU is free).\n");
      free(paths);
      return 0;
    } else if (!strcmp(a, "--json")) {
      json = true;
    } else if (!strcmp(a, "--repeat") || !strcmp(a, "--window") || !strcmp(a, "--synthetic") || !strcmp(a, "--uarch")) {
      if (i + 1 >= argc) {
        free(paths);
        return cli_usage("bench gus", "%s needs a value", a);
      }
      const char *v = argv[++i];
      uint64_t *dst = !strcmp(a, "--repeat") ? &repeat : !strcmp(a, "--window") ? &window : &synthetic;
      if (!strcmp(a, "--uarch")) uarch = v;
      else if (!parse_u64(v, dst) || (dst == &repeat && (repeat < 1 || repeat > 100)) ||
               (dst == &window && (window < 1 || window > 16)) || (dst == &synthetic && synthetic > 500000000)) {
        free(paths);
        return cli_usage("bench gus", "bad value '%s' for %s", v, a);
      }
    } else if (a[0] == '-') {
      free(paths);
      return cli_usage("bench gus", "unknown option '%s'", a);
    } else {
      paths[np++] = a;
    }
  }
  if (!np && !synthetic) synthetic = 5000000;
  wi_err err = {0};
  ooo_config cfg;
  gus_machine m;
  if (machine_load(uarch, &cfg, &err) || gus_machine_from_ooo(&m, &cfg, &err)) {
    free(paths);
    return cli_fail(&err);
  }
  jw w;
  if (json) {
    jw_init(&w, stdout, true);
    jw_obj_begin(&w);
    jw_kstr(&w, "machine", cfg.name);
    jw_kuint(&w, "window", window);
    jw_key(&w, "results");
    jw_arr_begin(&w);
  } else {
    printf("Gus model speed (%s, window %llu x ROB; M instructions per CPU second, fastest of %llu)\n", cfg.name,
           (unsigned long long)window, (unsigned long long)repeat);
    printf("%-28s %10s %9s %9s %9s %9s %9s %9s %9s %9s\n", "trace", "insns", "taint", "no-taint", "read", "cpu s",
           "wall s", "pf wall", "pf cpu", "pf model");
  }
  int status = 0;
  for (int i = 0; i < np && !status; i++) {
    trace_t *t = trace_open(paths[i], &err);
    if (!t) {
      status = cli_fail(&err);
      break;
    }
    gus_source src;
    gus_source_trace(&src, t);
    bg_result r;
    if (bench_source(&m, (uint32_t)window, &src, (int)repeat, &r, &err)) status = cli_fail(&err);
    else print_row(paths[i], &r, false, json ? &w : NULL);
    trace_close(t);
  }
  if (synthetic && !status) {
    synth s;
    synth_make(&s, synthetic);
    gus_source src;
    gus_source_mem(&src, &s.ms);
    bg_result r;
    char name[64];
    snprintf(name, sizeof name, "<synthetic %llu>", (unsigned long long)synthetic);
    if (bench_source(&m, (uint32_t)window, &src, (int)repeat, &r, &err)) status = cli_fail(&err);
    else print_row(name, &r, true, json ? &w : NULL);
    synth_free(&s);
  }
  if (json) {
    jw_arr_end(&w);
    jw_obj_end(&w);
    jw_end(&w);
  }
  free(paths);
  return status;
}

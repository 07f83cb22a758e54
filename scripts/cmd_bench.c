/* cmd_bench.c — `whatif bench <what> ...`: speed measurements (a table of subcommands; `read`
 * measures the trace reader; `run` and `record` are added by their owners). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "trace.h"

typedef struct bench_sub {
  const char *name;
  int (*fn)(int argc, char **argv); /* argv[0] is the subcommand name */
  const char *summary;
} bench_sub;

/* ---- bench read ------------------------------------------------------------------------------ */

typedef struct read_result {
  uint64_t insns, raw, accesses; /* per pass */
  double best_s;                 /* fastest pass, wall seconds */
  double best_cpu_s;             /* fastest pass, this thread's CPU seconds */
  uint64_t checksum;             /* folds every field read, so no pass is optimised away */
} read_result;

static double thread_cpu_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* One timed pass over the whole trace per repeat; keeps the fastest. */
static wi_rc bench_pass(const trace_t *t, unsigned flags, int repeat, read_result *r, wi_err *err) {
  memset(r, 0, sizeof *r);
  r->best_s = r->best_cpu_s = 1e300;
  trace_cursor *c = trace_cursor_new(t, flags);
  wi_rc rc = WI_OK;
  for (int k = 0; k < repeat && !rc; k++) {
    if ((rc = trace_cursor_seek(c, 0, err))) break;
    uint64_t n = 0, raw = 0, acc = 0, sum = 0;
    double t0 = wi_now(), c0 = thread_cpu_s();
    trace_batch b;
    for (;;) {
      if ((rc = trace_cursor_next(c, &b, err)) || !b.n) break;
      for (size_t i = 0; i < b.n; i++) {
        const trace_insn *in = &b.insns[i];
        sum += in->pc ^ in->next_pc ^ in->flags;
        raw += in->rep;
        for (uint32_t j = 0; j < in->n_mem; j++) sum += b.mems[in->mem_off + j].addr;
        acc += in->n_mem;
      }
      n += b.n;
    }
    double dt = wi_now() - t0, dc = thread_cpu_s() - c0;
    if (dt < r->best_s) r->best_s = dt;
    if (dc < r->best_cpu_s) r->best_cpu_s = dc;
    r->insns = n;
    r->raw = raw;
    r->accesses = acc;
    r->checksum = sum;
  }
  trace_cursor_free(c);
  return rc;
}

static int bench_read(int argc, char **argv) {
  const char *path = NULL;
  uint64_t repeat = 3;
  bool json = false;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--repeat") && i + 1 < argc) {
      if (!parse_u64(argv[++i], &repeat) || repeat == 0 || repeat > 1000)
        return cli_usage("bench read", "--repeat wants a count in 1..1000, not '%s'", argv[i]);
    } else if (!strcmp(argv[i], "--json")) {
      json = true;
    } else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
      printf("usage: whatif bench read TRACE [--repeat N] [--json]\n"
             "  Reader throughput: iterate the whole trace N times (default 3) in model mode and in\n"
             "  raw mode, touching every field; reports the fastest pass.\n");
      return 0;
    } else if (argv[i][0] == '-') {
      return cli_usage("bench read", "unknown option '%s' (try --help)", argv[i]);
    } else if (path) {
      return cli_usage("bench read", "more than one trace given ('%s')", argv[i]);
    } else {
      path = argv[i];
    }
  }
  if (!path) return cli_usage("bench read", "no trace given (usage: whatif bench read TRACE [--repeat N])");
  wi_err err;
  double t0 = wi_now();
  trace_t *t = trace_open(path, &err);
  double open_s = wi_now() - t0;
  if (!t) return cli_fail(&err);
  const trace_info *ti = trace_get_info(t);
  read_result model, raw;
  if (bench_pass(t, 0, (int)repeat, &model, &err) || bench_pass(t, TRACE_CUR_RAW, (int)repeat, &raw, &err)) {
    trace_close(t);
    return cli_fail(&err);
  }
  double nraw = ti->n_raw ? (double)ti->n_raw : 1.0;
  double m_rate = (double)model.insns / model.best_s, m_raw_rate = (double)model.raw / model.best_s;
  double r_rate = (double)raw.insns / raw.best_s;
  if (json) {
    jw w;
    jw_init(&w, stdout, true);
    jw_obj_begin(&w);
    jw_kstr(&w, "trace", path);
    jw_kuint(&w, "repeat", repeat);
    jw_knum(&w, "open_seconds", open_s);
    jw_kuint(&w, "instructions", model.insns);
    jw_kuint(&w, "raw_instructions", raw.insns);
    jw_knum(&w, "model_seconds", model.best_s);
    jw_knum(&w, "model_instructions_per_second", m_rate);
    jw_knum(&w, "model_raw_instructions_per_second", m_raw_rate);
    jw_knum(&w, "raw_seconds", raw.best_s);
    jw_knum(&w, "raw_instructions_per_second", r_rate);
    jw_knum(&w, "model_cpu_seconds", model.best_cpu_s);
    jw_knum(&w, "model_instructions_per_cpu_second", (double)model.insns / model.best_cpu_s);
    jw_knum(&w, "raw_cpu_seconds", raw.best_cpu_s);
    jw_knum(&w, "raw_instructions_per_cpu_second", (double)raw.insns / raw.best_cpu_s);
    jw_kuint(&w, "file_bytes", ti->file_bytes);
    jw_kuint(&w, "stream_bytes", ti->stream_bytes);
    jw_knum(&w, "bytes_per_instruction", (double)ti->file_bytes / nraw);
    jw_knum(&w, "stream_bytes_per_instruction", (double)ti->stream_bytes / nraw);
    jw_kuint(&w, "checksum", model.checksum + raw.checksum);
    jw_obj_end(&w);
    jw_end(&w);
  } else {
    char a[32], b[32], c[32], d[32];
    printf("trace       %s (%u chunks, %u static PCs; open %.3f s)\n", path, ti->n_chunks, ti->n_static, open_s);
    printf("model mode  %s instructions in %.3f s: %s instructions/s (%s raw/s); CPU %.3f s: %s/s\n",
           fmt_si(a, sizeof a, (double)model.insns), model.best_s, fmt_si(b, sizeof b, m_rate),
           fmt_si(c, sizeof c, m_raw_rate), model.best_cpu_s,
           fmt_si(d, sizeof d, (double)model.insns / model.best_cpu_s));
    printf("raw mode    %s instructions in %.3f s: %s instructions/s; CPU %.3f s: %s/s\n",
           fmt_si(a, sizeof a, (double)raw.insns), raw.best_s, fmt_si(b, sizeof b, r_rate), raw.best_cpu_s,
           fmt_si(d, sizeof d, (double)raw.insns / raw.best_cpu_s));
    printf("size        %.3f bytes/instruction (stream %.3f), per raw instruction\n",
           (double)ti->file_bytes / nraw, (double)ti->stream_bytes / nraw);
    printf("(fastest of %llu passes, wall clock and this thread's CPU time; checksum %016llx)\n",
           (unsigned long long)repeat, (unsigned long long)(model.checksum + raw.checksum));
  }
  trace_close(t);
  return 0;
}

/* ---- dispatch -------------------------------------------------------------------------------- */

int bench_mem(int argc, char **argv); /* scripts/bench_mem.c */
int bench_run(int argc, char **argv); /* scripts/bench_run.c */
int bench_sweep(int argc, char **argv); /* scripts/bench_sweep.c (engineer replay) */
int bench_gus(int argc, char **argv);   /* scripts/bench_gus.c (engineer gus) */
int bench_mfir(int argc, char **argv);  /* scripts/bench_mfir.c (engineer mfir) */
static const bench_sub subs[] = {
  {"read", bench_read, "trace reader throughput (model and raw mode) and bytes/instruction"},
  {"mem", bench_mem, "memory-hierarchy model cost per access (ns) and mem_copy cost"},
  {"run", bench_run, "out-of-order model speed (instructions/s) and checkpoint copy cost"},
  {"sweep", bench_sweep, "per-PC sweep throughput with and without checkpoint skipping, 1 and N threads"},
  {"gus", bench_gus, "Gus model speed with and without taint tracking (instructions/s)"},
  {"mfir", bench_mfir, "MFIR build rate into SQLite (instructions/s), bytes/instruction, critical-path time"},
};

static void bench_help(FILE *f) {
  fprintf(f, "usage: whatif bench <what> [options]\n");
  for (size_t i = 0; i < WI_ARRAY_LEN(subs); i++) fprintf(f, "  %-8s %s\n", subs[i].name, subs[i].summary);
}

int cmd_bench(int argc, char **argv) {
  if (argc < 2) return cli_usage("bench", "no benchmark given (one of: read mem run sweep gus mfir; see whatif bench --help)");
  if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
    bench_help(stdout);
    return 0;
  }
  for (size_t i = 0; i < WI_ARRAY_LEN(subs); i++)
    if (!strcmp(argv[1], subs[i].name)) return subs[i].fn(argc - 1, argv + 1);
  fprintf(stderr, "whatif bench: unknown benchmark '%s' (one of:", argv[1]);
  for (size_t i = 0; i < WI_ARRAY_LEN(subs); i++) fprintf(stderr, " %s", subs[i].name);
  fprintf(stderr, ")\n");
  return EXIT_BADINPUT;
}

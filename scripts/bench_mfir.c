/* bench_mfir.c — `whatif bench mfir TRACE [--window S:C]`: the cost of MFIR: the model alone, the
 * model with the capture (rows formatted, none inserted), the full build into SQLite (one thread
 * and with the writer thread), database bytes per instruction, and the time of the critical-path
 * walk (open, load, walk) on the result. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "cli.h"
#include "machine.h"
#include "mfir.h"

int bench_mfir(int argc, char **argv);

static void usage(FILE *f) {
  fprintf(f,
          "usage: whatif bench mfir TRACE [--window S:C] [--uarch NAME|FILE] [--mem-hits] [--wrong-dispatched]\n"
          "                        [--keep OUT.db] [--json]\n"
          "  Time the model alone, the model with the MFIR capture but no inserts, the full build\n"
          "  (on one thread, then with the writer thread), and `critical` on the result.\n"
          "  Rates are correct-path instructions per second; the SQLite rate (writing the database:\n"
          "  pages, static tables, indexes) is instructions over (one-thread build - capture without\n"
          "  inserts). CPU seconds are given too: steadier than wall time on a shared machine.\n");
}

static bool parse_window(const char *s, uint64_t *start, uint64_t *count) {
  const char *colon = strchr(s, ':');
  char buf[64];
  if (!colon || colon == s || (size_t)(colon - s) >= sizeof buf) return false;
  memcpy(buf, s, (size_t)(colon - s));
  buf[colon - s] = 0;
  if (!parse_u64(buf, start)) return false;
  if (!colon[1] || !strcmp(colon + 1, "end")) {
    *count = UINT64_MAX;
    return true;
  }
  return parse_u64(colon + 1, count) && *count > 0;
}

/* CPU seconds of this process so far (all threads; user + system): steadier than wall time on a
 * shared machine. */
static double cpu_now(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return (double)ru.ru_utime.tv_sec + 1e-6 * (double)ru.ru_utime.tv_usec + (double)ru.ru_stime.tv_sec +
         1e-6 * (double)ru.ru_stime.tv_usec;
}

static wi_rc model_only(const trace_t *t, const ooo_config *cfg, uint64_t end, double *secs, uint64_t *insns,
                        wi_err *err) {
  ooo_model *m = ooo_new(cfg, t, 0, err);
  if (!m) return err->rc;
  double t0 = wi_now();
  wi_rc rc = ooo_run(m, end, err);
  *secs = wi_now() - t0;
  *insns = ooo_committed(m);
  ooo_free(m);
  return rc;
}

int bench_mfir(int argc, char **argv) {
  const char *path = NULL, *uarch = NULL, *keep = NULL;
  mfir_build_opts o;
  memset(&o, 0, sizeof o);
  o.count = UINT64_MAX;
  o.no_mem_hits = true; /* as `whatif mfir` by default */
  bool json = false;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      usage(stdout);
      return 0;
    } else if (!strcmp(a, "--json")) {
      json = true;
    } else if (!strcmp(a, "--no-mem-hits")) {
      o.no_mem_hits = true;
    } else if (!strcmp(a, "--mem-hits")) {
      o.no_mem_hits = false;
    } else if (!strcmp(a, "--wrong-dispatched")) {
      o.wrong_dispatched = true;
    } else if (!strcmp(a, "--window") || !strcmp(a, "--uarch") || !strcmp(a, "--keep")) {
      if (i + 1 >= argc) return cli_usage("bench mfir", "%s needs a value", a);
      const char *v = argv[++i];
      if (!strcmp(a, "--uarch")) uarch = v;
      else if (!strcmp(a, "--keep")) keep = v;
      else if (!parse_window(v, &o.start, &o.count))
        return cli_usage("bench mfir", "--window wants START:COUNT, not '%s'", v);
    } else if (a[0] == '-') {
      return cli_usage("bench mfir", "unknown option '%s' (try --help)", a);
    } else if (!path) {
      path = a;
    } else {
      return cli_usage("bench mfir", "more than one trace given ('%s')", a);
    }
  }
  if (!path) {
    usage(stderr);
    return EXIT_BADINPUT;
  }
  wi_err err = {0};
  ooo_config cfg;
  if (machine_load(uarch, &cfg, &err)) return cli_fail(&err);
  trace_t *t = trace_open(path, &err);
  if (!t) return cli_fail(&err);
  o.trace_path = path;
  o.uarch = uarch ? uarch : MACHINE_DEFAULT;
  const trace_info *ti = trace_get_info(t);
  uint64_t end = o.count == UINT64_MAX || o.start + o.count > ti->n_insns ? ti->n_insns : o.start + o.count;
  char *out = keep ? xstrdup(keep) : xasprintf("%s.bench-%ld.db", path, (long)getpid());
  char *dry = xasprintf("%s.dry", out);
  double model_s = 0, dry_s = 0, one_s = 0, thr_s = 0, crit_s = 0, crit_load_s = 0;
  uint64_t model_insns = 0;
  mfir_build_stats s1, s2, sd;
  double c0 = cpu_now(), model_cpu = 0, dry_cpu = 0, one_cpu = 0, thr_cpu = 0;
  wi_rc rc = model_only(t, &cfg, end, &model_s, &model_insns, &err);
  model_cpu = cpu_now() - c0;
  /* The window part of the model time, for the rates below. */
  if (!rc) {
    o.dry_run = true;
    o.threaded = false;
    c0 = cpu_now();
    rc = mfir_build(t, &cfg, &o, dry, &sd, &err);
    dry_cpu = cpu_now() - c0;
    dry_s = sd.build_seconds;
    unlink(dry);
  }
  if (!rc) {
    o.dry_run = false;
    c0 = cpu_now();
    rc = mfir_build(t, &cfg, &o, out, &s1, &err);
    one_cpu = cpu_now() - c0;
    one_s = s1.build_seconds;
  }
  if (!rc) {
    o.threaded = true;
    c0 = cpu_now();
    rc = mfir_build(t, &cfg, &o, out, &s2, &err);
    thr_cpu = cpu_now() - c0;
    thr_s = s2.build_seconds;
  }
  mfir_critical c;
  memset(&c, 0, sizeof c);
  if (!rc) {
    double t0 = wi_now();
    mfir_db *d = mfir_open(out, &err);
    if (!d) rc = err.rc;
    else {
      rc = mfir_critical_path(d, NULL, &c, &err);
      crit_s = wi_now() - t0;
      mfir_critical_free(&c);
      /* the walk alone, flows already loaded */
      double t1 = wi_now();
      if (!rc) rc = mfir_critical_path(d, NULL, &c, &err);
      crit_load_s = crit_s - (wi_now() - t1);
      mfir_critical_free(&c);
      mfir_close(d);
    }
  }
  trace_close(t);
  if (!keep) unlink(out);
  free(dry);
  if (rc) {
    free(out);
    return cli_fail(&err);
  }
  uint64_t n = s1.insns;
  double win_model_s = model_insns ? model_s * (double)n / (double)model_insns : model_s;
  double sql_s = one_s - dry_s, sql_cpu = one_cpu - dry_cpu;
  double bpi = n ? (double)s1.db_bytes / (double)n : 0;
  if (json) {
    jw w;
    jw_init(&w, stdout, true);
    jw_obj_begin(&w);
    jw_kstr(&w, "trace", path);
    jw_kuint(&w, "window_start", o.start);
    jw_kuint(&w, "instructions", n);
    jw_kuint(&w, "cycles", s1.cycles);
    jw_kuint(&w, "rows", s1.rows);
    jw_kuint(&w, "wrong_path_flows", s1.wrong);
    jw_kuint(&w, "memory_transactions", s1.memtx);
    jw_knum(&w, "model_seconds", win_model_s);
    jw_knum(&w, "capture_seconds", dry_s);
    jw_knum(&w, "build_seconds_one_thread", one_s);
    jw_knum(&w, "build_seconds_threaded", thr_s);
    jw_knum(&w, "finish_seconds", s1.finish_seconds);
    jw_knum(&w, "sqlite_seconds", sql_s);
    jw_knum(&w, "model_cpu_seconds", model_cpu * (model_insns ? (double)n / (double)model_insns : 1.0));
    jw_knum(&w, "capture_cpu_seconds", dry_cpu);
    jw_knum(&w, "build_cpu_seconds_one_thread", one_cpu);
    jw_knum(&w, "build_cpu_seconds_threaded", thr_cpu);
    jw_knum(&w, "sqlite_cpu_seconds", sql_cpu);
    jw_knum(&w, "sqlite_instructions_per_cpu_second", sql_cpu > 0 ? (double)n / sql_cpu : 0);
    jw_knum(&w, "sqlite_instructions_per_second", sql_s > 0 ? (double)n / sql_s : 0);
    jw_knum(&w, "build_instructions_per_second", thr_s > 0 ? (double)n / thr_s : 0);
    jw_knum(&w, "build_instructions_per_second_one_thread", one_s > 0 ? (double)n / one_s : 0);
    jw_kuint(&w, "db_bytes", s1.db_bytes);
    jw_knum(&w, "bytes_per_instruction", bpi);
    jw_knum(&w, "critical_seconds", crit_s);
    jw_knum(&w, "critical_open_load_seconds", crit_load_s);
    jw_obj_end(&w);
    jw_end(&w);
  } else {
    char a[32], b[32], c2[32], d2[32];
    printf("window      %s: %s instructions from %llu, %s cycles; %s rows (%llu wrong-path flows, %s memory "
           "transactions)\n",
           path, fmt_si(a, sizeof a, (double)n), (unsigned long long)o.start, fmt_si(b, sizeof b, (double)s1.cycles),
           fmt_si(c2, sizeof c2, (double)s1.rows), (unsigned long long)s1.wrong,
           fmt_si(d2, sizeof d2, (double)s1.memtx));
    printf("model       %.3f s alone (%s instructions/s)\n", win_model_s,
           fmt_si(a, sizeof a, win_model_s > 0 ? (double)n / win_model_s : 0));
    printf("capture     %.3f s with the observer, no inserts (cpu %.3f s)\n", dry_s, dry_cpu);
    printf("build       %.3f s one thread (cpu %.3f s), %.3f s with the writer thread (cpu %.3f s); %.3f s of it\n"
           "            indexes and commit\n",
           one_s, one_cpu, thr_s, thr_cpu, s1.finish_seconds);
    printf("rate        %s instructions/s end to end (threaded); SQLite part %s instructions/s (%s per cpu-second)\n",
           fmt_si(a, sizeof a, thr_s > 0 ? (double)n / thr_s : 0), fmt_si(b, sizeof b, sql_s > 0 ? (double)n / sql_s : 0),
           fmt_si(c2, sizeof c2, sql_cpu > 0 ? (double)n / sql_cpu : 0));
    printf("size        %s bytes, %.1f bytes/instruction\n", fmt_si(a, sizeof a, (double)s1.db_bytes), bpi);
    printf("critical    %.3f s (open + load %.3f s)\n", crit_s, crit_load_s);
  }
  free(out);
  return 0;
}

/* cmd_mfir.c — `whatif mfir TRACE -o OUT.db [--window START:COUNT] [--uarch ...]`: replay a
 * window of a trace through the out-of-order model with the MFIR observer attached and write
 * the causal graph to SQLite (schema: mfir/SCHEMA.md). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "machine.h"
#include "mfir.h"

static void usage(FILE *f) {
  fprintf(f,
          "usage: whatif mfir TRACE -o OUT.db [--window START:COUNT] [--uarch NAME|FILE] [--set LUA-TABLE]\n"
          "                   [--margin N] [--mem-hits] [--wrong-dispatched] [--no-thread] [--dry-run]\n"
          "                   [--json]\n"
          "  Replay TRACE (or the COUNT instructions from model index START) with the MFIR observer and\n"
          "  write flows, binding edges, memory transactions, squashes, slot records, static PCs and\n"
          "  resources to OUT.db (written to a temporary beside it, then renamed).\n"
          "  --window S:C   the window (default: the whole trace); C may be 'end'\n"
          "  --uarch        machine configuration (bundled name or .lua file; default golden_cove)\n"
          "  --set          overrides, e.g. --set '{core = {rob = 256}}'\n"
          "  --margin N     instructions observed before START so edges into the window resolve (4096)\n"
          "  --mem-hits     also store first-level cache hits as memory transactions (by default only\n"
          "                 misses, prefetches and write-backs: hits are most of the rows and no edge\n"
          "                 leads to them)\n"
          "  --wrong-dispatched  store only wrong-path flows that were dispatched (branchy code fetches\n"
          "                 several wrong-path instructions per instruction; the rest stay counted in\n"
          "                 the squash groups)\n"
          "  --no-thread    write SQLite on the model's thread (default: a writer thread)\n"
          "  --dry-run      capture and format every row but insert none (to time the capture)\n"
          "  --json         print the build summary as JSON\n");
}

/* "S:C" or "S:end" or "S:" into start/count. */
static bool parse_window(const char *s, uint64_t *start, uint64_t *count) {
  const char *colon = strchr(s, ':');
  if (!colon) return false;
  char buf[64];
  size_t n = (size_t)(colon - s);
  if (n == 0 || n >= sizeof buf) return false;
  memcpy(buf, s, n);
  buf[n] = 0;
  if (!parse_u64(buf, start)) return false;
  if (!colon[1] || !strcmp(colon + 1, "end")) {
    *count = UINT64_MAX;
    return true;
  }
  return parse_u64(colon + 1, count) && *count > 0;
}

int cmd_mfir(int argc, char **argv) {
  const char *path = NULL, *out = NULL, *uarch = NULL, *set = NULL;
  mfir_build_opts o;
  memset(&o, 0, sizeof o);
  o.count = UINT64_MAX;
  o.threaded = true;
  o.no_mem_hits = true;
  bool json = false;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      usage(stdout);
      return 0;
    } else if (!strcmp(a, "--json")) {
      json = true;
    } else if (!strcmp(a, "--no-mem-hits")) { /* the default; kept for old command lines */
      o.no_mem_hits = true;
    } else if (!strcmp(a, "--mem-hits")) {
      o.no_mem_hits = false;
    } else if (!strcmp(a, "--wrong-dispatched")) {
      o.wrong_dispatched = true;
    } else if (!strcmp(a, "--no-thread")) {
      o.threaded = false;
    } else if (!strcmp(a, "--dry-run")) {
      o.dry_run = true;
    } else if (!strcmp(a, "-o") || !strcmp(a, "--window") || !strcmp(a, "--uarch") || !strcmp(a, "--set") ||
               !strcmp(a, "--margin")) {
      if (i + 1 >= argc) return cli_usage("mfir", "%s needs a value", a);
      const char *v = argv[++i];
      if (!strcmp(a, "-o")) out = v;
      else if (!strcmp(a, "--uarch")) uarch = v;
      else if (!strcmp(a, "--set")) set = v;
      else if (!strcmp(a, "--margin")) {
        if (!parse_u64(v, &o.margin)) return cli_usage("mfir", "--margin wants a count, not '%s'", v);
      } else if (!parse_window(v, &o.start, &o.count)) {
        return cli_usage("mfir", "--window wants START:COUNT (e.g. 1000000:100000 or 0:end), not '%s'", v);
      }
    } else if (a[0] == '-') {
      return cli_usage("mfir", "unknown option '%s' (see whatif mfir --help)", a);
    } else if (!path) {
      path = a;
    } else {
      return cli_usage("mfir", "more than one trace given ('%s' and '%s')", path, a);
    }
  }
  if (!path || !out) {
    return cli_usage("mfir", "%s", !path ? "no trace given" : "no output given (-o OUT.db)");
  }
  wi_err err = {0};
  ooo_config cfg;
  if (machine_load(uarch, &cfg, &err)) return cli_fail(&err);
  if (set && machine_apply_expr(&cfg, set, &err)) return cli_fail(&err);
  trace_t *t = trace_open(path, &err);
  if (!t) return cli_fail(&err);
  o.trace_path = path;
  o.uarch = uarch ? uarch : MACHINE_DEFAULT;
  mfir_build_stats st;
  double t0 = wi_now();
  wi_rc rc = mfir_build(t, &cfg, &o, out, &st, &err);
  double secs = wi_now() - t0;
  trace_close(t);
  if (rc) return cli_fail(&err);
  double rate = st.build_seconds > 0 ? (double)st.insns / st.build_seconds : 0.0;
  double bpi = st.insns ? (double)st.db_bytes / (double)st.insns : 0.0;
  if (json) {
    jw w;
    jw_init(&w, stdout, true);
    jw_obj_begin(&w);
    jw_kstr(&w, "trace", path);
    jw_kstr(&w, "database", out);
    jw_kuint(&w, "window_start", o.start);
    jw_kuint(&w, "instructions", st.insns);
    jw_kuint(&w, "cycles", st.cycles);
    jw_kuint(&w, "wrong_path_flows", st.wrong);
    jw_kuint(&w, "flushed", st.flushed);
    jw_kuint(&w, "memory_transactions", st.memtx);
    jw_kuint(&w, "dependences", st.deps);
    jw_kuint(&w, "slot_records", st.slot_rows);
    jw_kuint(&w, "rows", st.rows);
    jw_kuint(&w, "bytes", st.db_bytes);
    jw_knum(&w, "bytes_per_instruction", bpi);
    jw_knum(&w, "model_seconds", st.model_seconds);
    jw_knum(&w, "build_seconds", st.build_seconds);
    jw_knum(&w, "finish_seconds", st.finish_seconds);
    jw_knum(&w, "instructions_per_second", rate);
    jw_knum(&w, "seconds", secs);
    jw_obj_end(&w);
    jw_end(&w);
  } else {
    char a[32], b[32], c[32];
    printf("mfir        %s -> %s\n", path, out);
    printf("window      %s instructions from %llu, %s cycles\n", fmt_si(a, sizeof a, (double)st.insns),
           (unsigned long long)o.start, fmt_si(b, sizeof b, (double)st.cycles));
    printf("flows       %llu wrong-path, %llu flushed; %s memory transactions; %s dependences\n",
           (unsigned long long)st.wrong, (unsigned long long)st.flushed, fmt_si(a, sizeof a, (double)st.memtx),
           fmt_si(b, sizeof b, (double)st.deps));
    printf("database    %s rows, %s bytes (%.1f bytes/instruction)\n", fmt_si(a, sizeof a, (double)st.rows),
           fmt_si(b, sizeof b, (double)st.db_bytes), bpi);
    printf("time        %.2f s observed build (%s instructions/s; %.2f s of it indexes and commit), "
           "%.2f s model before the window\n",
           st.build_seconds, fmt_si(c, sizeof c, rate), st.finish_seconds, st.model_seconds);
  }
  return 0;
}

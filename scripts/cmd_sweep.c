/* cmd_sweep.c — `whatif sweep TRACE (--per-pc TEMPLATE | --list FILE) -o OUT.db [...]`: one
 * replay per static PC (or per line of a list) on a thread pool, results into SQLite; resumes
 * a killed sweep; shards with --shard i/N (merge them with `whatif merge`). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "interv.h"
#include "replay.h"
#include "rp_cli.h"
#include "rp_store.h"
#include "trace.h"

static void usage(FILE *f) {
  fprintf(f,
          "usage: whatif sweep TRACE (--per-pc 'TEMPLATE' | --list FILE) -o OUT.db [--min-count N] [--top K]\n"
          "                    [-j N] [--shard i/N] [--uarch NAME|FILE] [--set LUA-TABLE] [--no-ckpt]\n"
          "                    [--interval N] [--snapshots N] [--batch N] [--quiet]\n"
          "  One replay per static PC (--per-pc, e.g. 'latency{add=1}', 'remove{}', 'remove{mode=\"nop\"}',\n"
          "  'perfect_cache{}', 'perfect_branch{}') or per line of FILE (each line: interventions separated by\n"
          "  commas; '#' starts a comment), on N threads, into the SQLite database OUT.db (tables run and\n"
          "  replay). Running the same sweep again skips the replays already stored (resume after a kill).\n"
          "  --min-count N  only PCs executed at least N times (default 1)\n"
          "  --top K        only the K most executed PCs (default all)\n"
          "  -j N           worker threads (default 1)\n"
          "  --shard i/N    only jobs with index %% N == i (i from 0); merge shards with whatif merge\n"
          "                 (e.g. a Slurm array: --shard $SLURM_ARRAY_TASK_ID/$SLURM_ARRAY_TASK_COUNT)\n"
          "  --no-ckpt      replay every job from the start (default: from the last baseline snapshot before\n"
          "                 the job's intervention first matters; identical results)\n"
          "  --interval N   committed instructions between snapshots (default: automatic)\n"
          "  --snapshots N  snapshot budget (default 32)\n"
          "  --batch N      commit results every N rows (default 64; also at least once a second): a\n"
          "                 killed sweep loses at most the rows of the open batch\n"
          "  --quiet        no summary table\n");
}

typedef struct job {
  char *text;          /* canonical text: the resume key */
  bool has_pc;
  uint64_t pc;
  size_t idx;          /* position in the full (unsharded) job list */
  rp_interv *ivs;
  size_t n;
} job;

typedef VEC(job) job_vec;

typedef struct sweep_ctx {
  rp_store *st;
  int64_t run_id;
  const rp_result *base;
  job **jobs;          /* the jobs being run, in order */
  uint64_t die_after;  /* test hook: die after this many rows (0: never) */
  uint64_t rows;
  VEC(rp_row) keep;    /* for the summary */
  VEC(char *) keep_text;
} sweep_ctx;

static wi_rc on_result(void *ctx, size_t i, const rp_result *r, wi_err *err) {
  sweep_ctx *c = ctx;
  const job *j = c->jobs[i];
  rp_row row;
  memset(&row, 0, sizeof row);
  row.idx = (int64_t)j->idx;
  row.interv = j->text;
  row.has_pc = j->has_pc;
  row.pc = j->pc;
  row.cycles = r->cycles;
  row.insns = r->insns;
  row.ipc = r->ipc;
  row.delta_cycles = (int64_t)r->cycles - (int64_t)c->base->cycles;
  row.delta_ipc = r->ipc - c->base->ipc;
  row.ipc_pct = c->base->ipc > 0 ? 100.0 * row.delta_ipc / c->base->ipc : 0.0;
  row.mpki = r->mpki;
  row.wp_fetched = r->wp_fetched;
  row.start_insn = r->start_insn;
  row.wall_s = r->wall_s;
  wi_rc rc = rp_store_put(c->st, c->run_id, &row, err);
  if (rc) return rc;
  c->rows++;
  /* Test hook: die like a killed process (no SQLite commit or close, no atexit handlers; the
   * rows of the open batch are lost, as with SIGKILL). <signal.h> clashes with insn.h's REG_*. */
  if (c->die_after && c->rows >= c->die_after) _exit(137);
  VEC_PUSH(c->keep, row);
  VEC_PUSH(c->keep_text, j->text);
  return WI_OK;
}

static int row_cmp(const void *a, const void *b) {
  const rp_row *x = a, *y = b;
  int64_t ax = x->delta_cycles < 0 ? -x->delta_cycles : x->delta_cycles;
  int64_t ay = y->delta_cycles < 0 ? -y->delta_cycles : y->delta_cycles;
  if (ax != ay) return ax < ay ? 1 : -1;
  return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* Read a list file: one job per non-empty, non-comment line. */
static wi_rc read_list(const char *path, job_vec *jobs, wi_err *err) {
  char *buf;
  size_t len;
  wi_rc rc = read_file(path, &buf, &len, err);
  if (rc) return rc;
  size_t lineno = 0;
  for (char *line = buf, *next; line && *line; line = next) {
    next = strchr(line, '\n');
    if (next) *next++ = 0;
    lineno++;
    char *h = strchr(line, '#');
    if (h) *h = 0;
    char *s = line;
    while (*s == ' ' || *s == '\t' || *s == '\r') s++;
    if (!*s) continue;
    char where[600];
    snprintf(where, sizeof where, "%s:%zu", path, lineno);
    job j;
    memset(&j, 0, sizeof j);
    if ((rc = interv_parse_list(s, where, &j.ivs, &j.n, err))) break;
    size_t tl = 1;
    for (size_t k = 0; k < j.n; k++) tl += strlen(j.ivs[k].text) + 2;
    j.text = xmalloc(tl);
    j.text[0] = 0;
    for (size_t k = 0; k < j.n; k++) {
      if (k) strcat(j.text, ", ");
      strcat(j.text, j.ivs[k].text);
    }
    if (j.n == 1 && j.ivs[0].m.kind == RPM_PC && !j.ivs[0].m.sym) {
      j.has_pc = true;
      j.pc = j.ivs[0].m.lo;
    }
    j.idx = jobs->n;
    VEC_PUSH(*jobs, j);
  }
  free(buf);
  if (!rc && !jobs->n) rc = wi_fail(err, WI_EINVAL, "%s: no interventions in the list", path);
  return rc;
}

int cmd_sweep(int argc, char **argv) {
  const char *path = NULL, *uarch = NULL, *per_pc = NULL, *list = NULL, *out = NULL;
  VEC(const char *) sets = {0};
  uint64_t min_count = 1, top = UINT64_MAX, threads = 1, shard_i = 0, shard_n = 1, interval = 0, snaps = 0;
  uint64_t die_after = 0, batch = 0;
  bool ckpt = true, quiet = false;
  int status = EXIT_BADINPUT;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      usage(stdout);
      VEC_FREE(sets);
      return 0;
    } else if (!strcmp(a, "--no-ckpt")) {
      ckpt = false;
    } else if (!strcmp(a, "--quiet") || !strcmp(a, "-q")) {
      quiet = true;
    } else if (!strcmp(a, "--uarch") || !strcmp(a, "--set") || !strcmp(a, "--per-pc") || !strcmp(a, "--list") ||
               !strcmp(a, "-o") || !strcmp(a, "--min-count") || !strcmp(a, "--top") || !strcmp(a, "-j") ||
               !strcmp(a, "--shard") || !strcmp(a, "--interval") || !strcmp(a, "--snapshots") ||
               !strcmp(a, "--die-after") || !strcmp(a, "--batch")) {
      if (i + 1 >= argc) {
        cli_usage("sweep", "%s needs a value", a);
        goto out_args;
      }
      const char *v = argv[++i];
      bool ok = true;
      if (!strcmp(a, "--uarch")) uarch = v;
      else if (!strcmp(a, "--set")) VEC_PUSH(sets, v);
      else if (!strcmp(a, "--per-pc")) per_pc = v;
      else if (!strcmp(a, "--list")) list = v;
      else if (!strcmp(a, "-o")) out = v;
      else if (!strcmp(a, "--min-count")) ok = parse_u64(v, &min_count);
      else if (!strcmp(a, "--top")) ok = parse_u64(v, &top) && top > 0;
      else if (!strcmp(a, "-j")) ok = parse_u64(v, &threads) && threads >= 1 && threads <= 256;
      else if (!strcmp(a, "--interval")) ok = parse_u64(v, &interval) && interval > 0;
      else if (!strcmp(a, "--snapshots")) ok = parse_u64(v, &snaps) && snaps > 0 && snaps < 100000;
      else if (!strcmp(a, "--die-after")) ok = parse_u64(v, &die_after);
      else if (!strcmp(a, "--batch")) ok = parse_u64(v, &batch) && batch >= 1 && batch <= 1000000;
      else {
        char *slash = strchr(v, '/');
        char ib[32];
        ok = slash && (size_t)(slash - v) < sizeof ib;
        if (ok) {
          memcpy(ib, v, (size_t)(slash - v));
          ib[slash - v] = 0;
          ok = parse_u64(ib, &shard_i) && parse_u64(slash + 1, &shard_n) && shard_n >= 1 && shard_i < shard_n;
        }
      }
      if (!ok) {
        cli_usage("sweep", "bad value '%s' for %s", v, a);
        goto out_args;
      }
    } else if (a[0] == '-') {
      cli_usage("sweep", "unknown option '%s' (see whatif sweep --help)", a);
      goto out_args;
    } else if (!path) {
      path = a;
    } else {
      cli_usage("sweep", "more than one trace given ('%s' and '%s')", path, a);
      goto out_args;
    }
  }
  if (!path) {
    cli_usage("sweep", "no trace given (usage: whatif sweep TRACE (--per-pc 'TEMPLATE' | --list FILE) -o OUT.db; see whatif sweep --help)");
    goto out_args;
  }
  if (!!per_pc == !!list) {
    cli_usage("sweep", "give either --per-pc 'TEMPLATE' or --list FILE");
    goto out_args;
  }
  if (!out) {
    cli_usage("sweep", "no output database (-o OUT.db)");
    goto out_args;
  }

  wi_err err = {0};
  ooo_config cfg;
  trace_t *t = NULL;
  rp_base *b = NULL;
  rp_store *st = NULL;
  job_vec jobs = {0};
  VEC(job *) run = {0};
  VEC(rp_plan *) plans = {0};
  rp_interv tmpl;
  memset(&tmpl, 0, sizeof tmpl);
  sweep_ctx sc;
  memset(&sc, 0, sizeof sc);
  bool created = false; /* OUT.db did not exist before: remove it when we fail before any row */
  char *cmdline = rpc_command_line("whatif", argc, argv);
  if (rpc_machine(uarch, sets.a, sets.n, &cfg, &err)) goto fail;
  if (!(t = trace_open(path, &err))) goto fail;
  const trace_info *ti = trace_get_info(t);

  /* the job list */
  if (per_pc) {
    if (interv_parse_one(per_pc, "--per-pc", &tmpl, &err)) goto fail;
    if (!rp_interv_is_template(&tmpl)) {
      wi_fail(&err, WI_EINVAL, "--per-pc: '%s' is not a per-PC template: use remove, latency, perfect_branch or "
              "perfect_cache without pc/range/func/index/class/level, e.g. 'latency{add=1}'", tmpl.text);
      goto fail;
    }
    rp_interv *pv;
    size_t np = rpc_per_pc(t, &tmpl, min_count, top, &pv);
    for (size_t i = 0; i < np; i++) {
      job j;
      memset(&j, 0, sizeof j);
      j.ivs = xcalloc(1, sizeof *j.ivs);
      j.n = 1;
      j.ivs[0] = pv[i]; /* moved */
      j.text = xstrdup(j.ivs[0].text);
      j.has_pc = true;
      j.pc = j.ivs[0].m.lo;
      j.idx = i;
      VEC_PUSH(jobs, j);
    }
    free(pv);
    if (!jobs.n) {
      wi_fail(&err, WI_EINVAL, "--per-pc: no static instruction qualifies (--min-count %llu)",
              (unsigned long long)min_count);
      goto fail;
    }
  } else if (read_list(list, &jobs, &err)) {
    goto fail;
  }

  /* the baseline's compile-time checks, then the store (resume), then the baseline run */
  rp_base_opts bo = {0};
  bo.progress = true;
  bo.interval = interval;
  bo.max_snaps = (uint32_t)snaps;
  bo.no_snapshots = !ckpt;
  if (!(b = rp_base_new(t, &cfg, &bo, &err))) goto fail;
  for (size_t i = 0; i < jobs.n; i++) { /* validate every job before any long run */
    rp_plan *p = rp_plan_new(b, jobs.a[i].ivs, jobs.a[i].n, &err);
    if (!p) goto fail;
    rp_plan_free(p);
  }
  created = access(out, F_OK) != 0;
  if (!(st = rp_store_open(out, &err))) goto fail;
  rp_store_set_batch(st, (int)batch, 0);
  double t0 = wi_now();
  if (rp_base_run(b, &err)) goto fail;
  rp_result base;
  rp_result_from_model(rp_base_model(b), &base);
  rp_run_info ri = {ti->content_hash, ooo_config_hash(&cfg), WHATIF_VERSION, cmdline, path, cfg.name,
                    base.cycles, base.insns, base.ipc};
  if (rp_store_run(st, &ri, &sc.run_id, &err)) goto fail;
  size_t skipped = 0, other_shards = 0;
  for (size_t i = 0; i < jobs.n; i++) {
    job *j = &jobs.a[i];
    if (j->idx % shard_n != shard_i) {
      other_shards++;
      continue;
    }
    if (rp_store_has(st, sc.run_id, j->text)) {
      skipped++;
      continue;
    }
    rp_plan *p = rp_plan_new(b, j->ivs, j->n, &err);
    if (!p) goto fail;
    VEC_PUSH(plans, p);
    VEC_PUSH(run, j);
  }
  sc.st = st;
  sc.base = &base;
  sc.jobs = run.a;
  sc.die_after = die_after;
  rp_sweep_opts so = {(unsigned)threads, !ckpt, "sweep"};
  double t1 = wi_now();
  if (rp_sweep(b, plans.a, plans.n, &so, on_result, &sc, &err)) goto fail;
  if (rp_store_flush(st, &err)) goto fail;
  double t2 = wi_now();

  if (!quiet) {
    printf("trace     %s (%llu instructions, %llu cycles, IPC %.4f)\nmachine   %s\n", path,
           (unsigned long long)base.insns, (unsigned long long)base.cycles, base.ipc, cfg.name);
    printf("replays   %zu run, %zu already stored%s", run.n, skipped, other_shards ? "" : "\n");
    if (other_shards) printf(", %zu in other shards (shard %llu/%llu)\n", other_shards,
                             (unsigned long long)shard_i, (unsigned long long)shard_n);
    printf("time      baseline %.2f s, replays %.2f s (%.2f replays/s, %llu thread%s, checkpoints %s)\n", t1 - t0,
           t2 - t1, t2 > t1 && run.n ? (double)run.n / (t2 - t1) : 0.0, (unsigned long long)threads,
           threads == 1 ? "" : "s", ckpt ? "on" : "off");
    printf("results   %s (%lld rows for this trace and machine)\n", out, (long long)rp_store_count(st, sc.run_id));
    if (sc.keep.n) {
      qsort(sc.keep.a, sc.keep.n, sizeof *sc.keep.a, row_cmp);
      size_t show = sc.keep.n < 10 ? sc.keep.n : 10;
      printf("\nlargest effects this run:\n  %-44s %12s %10s %9s  %s\n", "intervention", "delta cyc", "IPC", "IPC %",
             "where");
      for (size_t i = 0; i < show; i++) {
        const rp_row *r = &sc.keep.a[i];
        char where[200] = "";
        if (r->has_pc) rpc_pc_name(t, r->pc, where, sizeof where);
        printf("  %-44.44s %+12lld %10.4f %+8.2f%%  %s\n", r->interv, (long long)r->delta_cycles, r->ipc, r->ipc_pct,
               where);
      }
    }
  }
  status = 0;
  goto done;
fail:
  status = cli_fail(&err);
done:
  if (st) {
    wi_err e2 = {0};
    if (rp_store_close(st, &e2) && !status) status = cli_fail(&e2);
  }
  if (status && created && !sc.rows) {
    static const char *const sfx[] = {"", "-wal", "-shm", "-journal"};
    for (size_t i = 0; i < WI_ARRAY_LEN(sfx); i++) {
      char *p = xasprintf("%s%s", out, sfx[i]);
      unlink(p);
      free(p);
    }
  }
  for (size_t i = 0; i < plans.n; i++) rp_plan_free(plans.a[i]);
  VEC_FREE(plans);
  VEC_FREE(run);
  for (size_t i = 0; i < jobs.n; i++) {
    interv_free_list(jobs.a[i].ivs, jobs.a[i].n);
    free(jobs.a[i].text);
  }
  VEC_FREE(jobs);
  VEC_FREE(sc.keep);
  VEC_FREE(sc.keep_text);
  rp_interv_free(&tmpl);
  rp_base_free(b);
  trace_close(t);
  free(cmdline);
out_args:
  VEC_FREE(sets);
  return status;
}

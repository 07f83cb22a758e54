/* cmd_demo.c — `whatif demo [--quick]`: the main job on the bundled workloads. Records each
 * workload once (cached), runs its baseline, applies a handful of interventions chosen from the
 * data (remove the hottest chain instruction, RAS checkpointing, wrong-path throttling, widen
 * the busiest port, a perfect cache for the chasing load) with exact IPC deltas, validates the
 * rankings against per-PC perturbation and prints the summary; an HTML report beside the
 * traces. Progress on stderr, the report on stdout. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "interv.h"
#include "record.h"
#include "replay.h"
#include "rp_cli.h"
#include "trace.h"
#include "val.h"

static void usage(FILE *f) {
  fprintf(f,
          "usage: whatif demo [--quick] [--dir DIR] [--workloads DIR] [-j N] [-o REPORT.html] [--rerecord]\n"
          "                   [--uarch NAME|FILE]\n"
          "  Record the bundled workloads (fma_chain, ptrchase, branchy, ports, recursion) under QEMU between\n"
          "  their SSC marks, run each baseline, apply interventions picked from the data with exact IPC\n"
          "  deltas, validate Gus / MFIR / naive rankings against per-PC perturbation, and check that the\n"
          "  perturbation ground truth names each workload's known cause first.\n"
          "  --quick          small sizes (about a minute on 2 cores), for CI\n"
          "  --dir DIR        cache of recorded traces and the report (default ./whatif-demo); traces are\n"
          "                   recorded again only when missing, unreadable or older than the workload binary\n"
          "  --workloads DIR  the workload binaries (default <whatif's directory>/workloads, then\n"
          "                   $WHATIF_WORKLOADS)\n"
          "  -j N             replay threads (default: number of cores)\n"
          "  -o FILE          the HTML report (default DIR/report.html)\n"
          "  --rerecord       record every workload again\n"
          "Exit status 0 when everything ran (failed injected-cause checks are reported, not fatal), 2 on\n"
          "an error.\n");
}

/* A bundled workload and its sizes. */
typedef struct demo_wl {
  const char *name;
  const char *quick, *full; /* arguments (space-separated) */
} demo_wl;

/* Sizes: quick ~0.4-1 M instructions each; full about four times that. */
static const demo_wl k_wls[] = {
  {"fma_chain", "150", "600"},
  {"ptrchase", "16384 60000", "65536 200000"},
  {"branchy", "1 65536", "4 65536"},
  {"ports", "40000", "160000"},
  {"recursion", "1500 64", "6000 64"},
};
#define N_WL (sizeof k_wls / sizeof k_wls[0])

/* One intervention row of the report. */
typedef struct demo_row {
  const char *workload;
  char *text;      /* the intervention */
  char *why;       /* how it was chosen */
  rp_result base, r;
} demo_row;
typedef VEC(demo_row) row_vec;

/* ---- recording ------------------------------------------------------------------------------- */

static bool file_mtime(const char *path, struct timespec *ts) {
  struct stat st;
  if (stat(path, &st) != 0) return false;
  *ts = st.st_mtim;
  return true;
}

static bool newer_or_same(struct timespec a, struct timespec b) {
  return a.tv_sec > b.tv_sec || (a.tv_sec == b.tv_sec && a.tv_nsec >= b.tv_nsec);
}

/* Record binary with args (space-separated) into out; the workload's own output goes to
 * out_log, not to our stdout. */
static wi_rc record(const char *binary, const char *args, const char *out, const char *out_log, wi_err *err) {
  char *dup_args = xstrdup(args);
  char *argv[16];
  int argc = 0;
  argv[argc++] = (char *)binary;
  for (char *tok = strtok(dup_args, " "); tok && argc < 15; tok = strtok(NULL, " ")) argv[argc++] = tok;
  argv[argc] = NULL;
  rec_opts o;
  memset(&o, 0, sizeof o);
  o.out = out;
  o.roi = "ssc";
  o.exe_dir = cli_exe_dir();
  rec_result res;
  memset(&res, 0, sizeof res);
  fflush(stdout);
  int saved = dup(1);
  int lf = open(out_log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (lf >= 0 && saved >= 0) dup2(lf, 1);
  wi_rc rc = rec_run(&o, argc, argv, &res, err);
  if (saved >= 0) {
    dup2(saved, 1);
    close(saved);
  }
  if (lf >= 0) close(lf);
  if (!rc && res.exit_status != 0)
    rc = wi_fail(err, WI_ECHILD, "%s %s exited with status %d while recording", binary, args, res.exit_status);
  rec_result_free(&res);
  free(dup_args);
  return rc;
}

/* ---- port statistics ----------------------------------------------------------------------------- */

typedef struct port_count {
  uint64_t n[OOO_MAX_PORTS];
} port_count;

static void on_issue(void *ctx, const ooo_ev *e) {
  port_count *pc = ctx;
  if (e->rid >= OOO_RID_PORT && e->rid < OOO_RID_PORT + OOO_MAX_PORTS) pc->n[e->rid - OOO_RID_PORT]++;
}

/* Micro-ops issued per port in a run of the baseline configuration (both paths). */
static wi_rc port_usage(const trace_t *t, const ooo_config *cfg, port_count *pc, wi_err *err) {
  memset(pc, 0, sizeof *pc);
  ooo_model *m = ooo_new(cfg, t, 0, err);
  if (!m) return err->rc;
  ooo_observer obs;
  memset(&obs, 0, sizeof obs);
  obs.issue = on_issue;
  ooo_set_observer(m, &obs, pc);
  wi_rc rc = ooo_run(m, UINT64_MAX, err);
  ooo_free(m);
  return rc;
}

/* ---- interventions -------------------------------------------------------------------------------- */

static wi_rc apply(const rp_base *b, const char *workload, const char *text, char *why, row_vec *rows,
                   wi_err *err) {
  rp_interv iv;
  wi_rc rc = interv_parse_one(text, "demo", &iv, err);
  if (rc) {
    free(why);
    return rc;
  }
  rp_plan *p = rp_plan_new(b, &iv, 1, err);
  demo_row row;
  memset(&row, 0, sizeof row);
  row.workload = workload;
  row.text = xstrdup(iv.text);
  row.why = why;
  rp_result_from_model(rp_base_model(b), &row.base);
  if (!p) rc = err->rc;
  else rc = rp_replay(b, p, NULL, true, &row.r, err);
  rp_plan_free(p);
  rp_interv_free(&iv);
  if (rc) {
    free(row.text);
    free(row.why);
    return rc;
  }
  if (!strncmp(row.text, "wrong_path", 10) && row.base.wp_fetched) { /* what throttling saved */
    char *more = xasprintf("%s; wrong-path instructions fetched %llu -> %llu (%+.0f%%)", row.why,
                          (unsigned long long)row.base.wp_fetched, (unsigned long long)row.r.wp_fetched,
                          100.0 * ((double)row.r.wp_fetched - (double)row.base.wp_fetched) / (double)row.base.wp_fetched);
    free(row.why);
    row.why = more;
  }
  VEC_PUSH(*rows, row);
  return WI_OK;
}

/* Index of the PC with the largest delta under ground truth gt (ties: the earlier PC). */
static size_t top_by(const val_result *r, int gt) {
  size_t best = 0;
  for (size_t i = 1; i < r->n_pcs; i++)
    if (val_importance(&r->pcs[i], gt) > val_importance(&r->pcs[best], gt)) best = i;
  return best;
}

static wi_rc interventions(const char *name, const rp_base *b, const val_result *r, row_vec *rows,
                           wi_err *err) {
  char text[256];
  if (!strcmp(name, "fma_chain") && r->n_pcs) {
    /* the hottest chain instruction: the top of the latency+1 ground truth */
    const val_pc *p = &r->pcs[top_by(r, VAL_GT_LAT)];
    snprintf(text, sizeof text, "remove{pc=0x%llx}", (unsigned long long)p->pc);
    return apply(b, name, text, xasprintf("the hottest chain instruction (#1 by latency+1: %s, %+lld cycles)", p->text,
                                          (long long)p->delta[VAL_GT_LAT]), rows, err);
  }
  if (!strcmp(name, "ptrchase") && r->n_pcs) {
    const val_pc *p = &r->pcs[top_by(r, VAL_GT_LAT)];
    snprintf(text, sizeof text, "perfect_cache{pc=0x%llx}", (unsigned long long)p->pc);
    return apply(b, name, text, xasprintf("the chasing load always hits L1 (#1 by latency+1: %s)", p->text), rows, err);
  }
  if (!strcmp(name, "branchy"))
    return apply(b, name, "wrong_path{policy=\"confidence\"}",
                 xstrdup("wrong-path throttling: fetch gated at low-confidence branches"), rows, err);
  if (!strcmp(name, "recursion")) {
    wi_rc rc = apply(b, name, "ras{repair=\"full\"}", xstrdup("RAS checkpointing: the whole stack restored on a squash"),
                     rows, err);
    if (!rc) rc = apply(b, name, "wrong_path{policy=\"confidence\"}",
                        xstrdup("wrong-path throttling: fetch gated at low-confidence branches"), rows, err);
    return rc;
  }
  if (!strcmp(name, "ports")) {
    port_count pc;
    const ooo_config *cfg = rp_base_config(b);
    wi_rc rc = port_usage(rp_base_trace(b), cfg, &pc, err);
    if (rc) return rc;
    uint32_t best = 0;
    for (uint32_t p = 1; p < cfg->ports.count && p < OOO_MAX_PORTS; p++)
      if (pc.n[p] > pc.n[best]) best = p;
    uint64_t cycles = ooo_cycles(rp_base_model(b));
    snprintf(text, sizeof text, "port{name=\"P%u\", add=1}", best);
    return apply(b, name, text,
                 xasprintf("widen the busiest port: P%u issued %llu micro-ops in %llu cycles (%.0f%% busy)", best,
                           (unsigned long long)pc.n[best], (unsigned long long)cycles,
                           cycles ? 100.0 * (double)pc.n[best] / (double)cycles : 0.0),
                 rows, err);
  }
  return WI_OK;
}

/* ---- the command ------------------------------------------------------------------------------------- */

static const char *td_top(const ooo_topdown *td, double *frac) {
  const char *names[4] = {"retiring", "bad speculation", "frontend bound", "backend bound"};
  double v[4] = {td->retiring, td->bad_speculation, td->frontend_bound, td->backend_bound};
  int best = 0;
  for (int i = 1; i < 4; i++)
    if (v[i] > v[best]) best = i;
  *frac = v[best];
  return names[best];
}

static char *find_workloads(const char *opt) {
  if (opt) return xstrdup(opt);
  char *d = xasprintf("%s/workloads", cli_exe_dir());
  char *probe = xasprintf("%s/%s", d, k_wls[0].name);
  bool ok = access(probe, X_OK) == 0;
  free(probe);
  if (ok) return d;
  free(d);
  const char *env = getenv("WHATIF_WORKLOADS");
  return env ? xstrdup(env) : NULL;
}

int cmd_demo(int argc, char **argv) {
  bool quick = false, rerecord = false;
  const char *dir = "whatif-demo", *wdir_opt = NULL, *report = NULL, *uarch = NULL;
  long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
  uint64_t threads = ncpu > 0 ? (uint64_t)ncpu : 1;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      usage(stdout);
      return 0;
    } else if (!strcmp(a, "--quick")) {
      quick = true;
    } else if (!strcmp(a, "--rerecord")) {
      rerecord = true;
    } else if (!strcmp(a, "--dir") || !strcmp(a, "--workloads") || !strcmp(a, "-j") || !strcmp(a, "-o") ||
               !strcmp(a, "--uarch")) {
      if (i + 1 >= argc) return cli_usage("demo", "%s needs a value", a);
      const char *v = argv[++i];
      if (!strcmp(a, "--dir")) dir = v;
      else if (!strcmp(a, "--workloads")) wdir_opt = v;
      else if (!strcmp(a, "-o")) report = v;
      else if (!strcmp(a, "--uarch")) uarch = v;
      else if (!parse_u64(v, &threads) || threads < 1 || threads > 256)
        return cli_usage("demo", "bad value '%s' for -j", v);
    } else {
      return cli_usage("demo", "unknown argument '%s' (see whatif demo --help)", a);
    }
  }
  if (report && cli_check_out("demo", report)) return EXIT_BADINPUT; /* not after minutes of work */

  double t_start = wi_now();
  int status = EXIT_BADINPUT;
  wi_err err = {0};
  char *wdir = find_workloads(wdir_opt);
  char *report_path = report ? xstrdup(report) : xasprintf("%s/report.html", dir);
  row_vec rows = {0};
  char *src_dir = NULL;
  val_result *results[N_WL];
  trace_t *traces[N_WL];
  char *paths[N_WL];
  memset(results, 0, sizeof results);
  memset(traces, 0, sizeof traces);
  memset(paths, 0, sizeof paths);
  size_t n_done = 0;
  double t_record = 0, t_base = 0, t_val = 0, t_iv = 0;
  ooo_config cfg;
  if (rpc_machine(uarch, NULL, 0, &cfg, &err)) goto fail;
  if (!wdir) {
    wi_fail(&err, WI_EINVAL, "demo: cannot find the workload binaries (build the `workloads` target, or give --workloads DIR)");
    goto fail;
  }
  /* Bad input is reported before any progress line or directory: every binary must be there. */
  for (size_t i = 0; i < N_WL; i++) {
    char *bin = xasprintf("%s/%s", wdir, k_wls[i].name);
    bool ok = access(bin, X_OK) == 0;
    if (!ok) wi_fail(&err, WI_EINVAL, "demo: workload binary %s not found (build the `workloads` target)", bin);
    free(bin);
    if (!ok) goto fail;
  }
  if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
    wi_fail(&err, WI_EIO, "demo: cannot create %s: %s", dir, strerror(errno));
    goto fail;
  }
  {
    char *p = cli_find_data("validate/workloads/workloads.txt");
    if (p) {
      char *slash = strrchr(p, '/');
      if (slash) *slash = 0;
      src_dir = p;
    }
  }
  fprintf(stderr, "whatif demo: %s sizes, machine %s, %llu thread%s, traces in %s/\n", quick ? "quick" : "full",
          cfg.name, (unsigned long long)threads, threads == 1 ? "" : "s", dir);

  for (size_t i = 0; i < N_WL; i++) {
    const demo_wl *w = &k_wls[i];
    const char *args = quick ? w->quick : w->full;
    char tag[64];
    snprintf(tag, sizeof tag, "%s", args);
    for (char *c = tag; *c; c++)
      if (*c == ' ') *c = '_';
    char *bin = xasprintf("%s/%s", wdir, w->name);
    paths[i] = xasprintf("%s/%s-%s.wtr", dir, w->name, tag);
    fprintf(stderr, "[%zu/%zu] %s %s\n", i + 1, N_WL, w->name, args);

    /* record unless a fresh trace is cached */
    struct timespec tb, tt;
    if (!file_mtime(bin, &tb)) {
      wi_fail(&err, WI_EINVAL, "demo: workload binary %s not found (build the `workloads` target)", bin);
      free(bin);
      goto fail;
    }
    bool fresh = !rerecord && file_mtime(paths[i], &tt) && newer_or_same(tt, tb);
    if (fresh) {
      wi_err e2 = {0};
      traces[i] = trace_open(paths[i], &e2);
      if (!traces[i]) fresh = false;
    }
    if (!fresh) {
      double t0 = wi_now();
      fprintf(stderr, "  record under QEMU ...");
      char *log = xasprintf("%s/%s-%s.out", dir, w->name, tag);
      wi_rc rc = record(bin, args, paths[i], log, &err);
      free(log);
      if (!rc && !(traces[i] = trace_open(paths[i], &err))) rc = err.rc;
      t_record += wi_now() - t0;
      if (rc) {
        fputc('\n', stderr);
        free(bin);
        goto fail;
      }
      fprintf(stderr, " %.1f s\n", wi_now() - t0);
    } else {
      fprintf(stderr, "  trace cached: %s\n", paths[i]);
    }
    free(bin);

    /* baseline */
    double t0 = wi_now();
    rp_base_opts bo;
    memset(&bo, 0, sizeof bo);
    bo.ooo_flags = OOO_SID_STATS;
    bo.progress = true;
    rp_base *b = rp_base_new(traces[i], &cfg, &bo, &err);
    if (!b) goto fail;
    fprintf(stderr, "  baseline ...");
    if (rp_base_run(b, &err)) {
      rp_base_free(b);
      goto fail;
    }
    t_base += wi_now() - t0;
    rp_result base;
    rp_result_from_model(rp_base_model(b), &base);
    fprintf(stderr, " IPC %.3f (%.1f s)\n", base.ipc, wi_now() - t0);

    /* validation */
    t0 = wi_now();
    val_opts vo;
    val_opts_default(&vo);
    vo.threads = (unsigned)threads;
    vo.top = quick ? 12 : 24;
    vo.min_count = 100; /* the region of interest is the kernel: its outer loops count too */
    vo.mfir_window = quick ? 150000 : 400000;
    vo.src_dir = src_dir;
    vo.workload = w->name;
    vo.log = stderr;
    vo.progress = true;
    results[i] = xcalloc(1, sizeof *results[i]);
    wi_rc rc = val_run(b, paths[i], &vo, results[i], &err);
    t_val += wi_now() - t0;
    if (rc) {
      free(results[i]);
      results[i] = NULL;
      rp_base_free(b);
      goto fail;
    }
    n_done++;

    /* interventions */
    t0 = wi_now();
    fprintf(stderr, "  interventions ...");
    rc = interventions(w->name, b, results[i], &rows, &err);
    t_iv += wi_now() - t0;
    rp_base_free(b);
    if (rc) {
      fputc('\n', stderr);
      goto fail;
    }
    fprintf(stderr, " %.1f s\n", wi_now() - t0);
  }

  if (val_html(results, n_done, report_path, &err)) goto fail;

  /* the report */
  printf("whatif demo — counterfactual replay on the bundled workloads (%s sizes, machine %s)\n\n",
         quick ? "quick" : "full", cfg.name);
  printf("Each workload was recorded once under QEMU (between its SSC marks) and replayed through the\n"
         "detailed out-of-order model; every number below is an exact replay of that one trace.\n\n");
  printf("  %-10s %-13s %12s %12s %7s  %s\n", "workload", "arguments", "instructions", "cycles", "IPC",
         "top-down level 1 (largest)");
  for (size_t i = 0; i < n_done; i++) {
    const val_result *r = results[i];
    const demo_row *row = NULL;
    for (size_t k = 0; k < rows.n && !row; k++)
      if (!strcmp(rows.a[k].workload, k_wls[i].name)) row = &rows.a[k];
    double frac = 0;
    const char *top = row ? td_top(&row->base.td, &frac) : "?";
    printf("  %-10s %-13s %12llu %12llu %7.3f  %s %.0f%%\n", k_wls[i].name, quick ? k_wls[i].quick : k_wls[i].full,
           (unsigned long long)r->insns, (unsigned long long)r->cycles, r->ipc, top, 100 * frac);
  }
  printf("\nWhat if ... (one intervention per replay; exact deltas against the baseline)\n");
  printf("  %-10s %-36s %10s %10s %9s %12s\n", "workload", "intervention", "base IPC", "new IPC", "IPC", "cycles");
  for (size_t k = 0; k < rows.n; k++) {
    const demo_row *row = &rows.a[k];
    double pct = row->base.ipc > 0 ? 100.0 * (row->r.ipc - row->base.ipc) / row->base.ipc : 0.0;
    printf("  %-10s %-36s %10.4f %10.4f %+8.2f%% %+12lld\n", row->workload, row->text, row->base.ipc, row->r.ipc, pct,
           (long long)row->r.cycles - (long long)row->base.cycles);
    printf("  %-10s   %s\n", "", row->why);
  }
  printf("\nValidation: do attributions agree with perturbation? (per-PC replays: latency+1 and removal)\n");
  val_summary(results, n_done, stdout);
  double total = wi_now() - t_start;
  printf("\nreport     %s\n", report_path);
  printf("wall time  %.1f s (record %.1f s, baselines %.1f s, validation %.1f s, interventions %.1f s)\n", total,
         t_record, t_base, t_val, t_iv);
  status = 0;
  goto done;
fail:
  status = cli_fail(&err);
done:
  for (size_t i = 0; i < N_WL; i++) {
    if (results[i]) val_result_free(results[i]);
    free(results[i]);
    trace_close(traces[i]);
    free(paths[i]);
  }
  for (size_t k = 0; k < rows.n; k++) {
    free(rows.a[k].text);
    free(rows.a[k].why);
  }
  VEC_FREE(rows);
  free(wdir);
  free(src_dir);
  free(report_path);
  return status;
}

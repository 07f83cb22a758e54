/* cmd_validate.c — `whatif validate TRACE... [-o report.html] [--json]`: rank attributions (Gus
 * taint at 1x/2x/4x ROB, MFIR critical path, naive baselines) against per-PC perturbation ground
 * truth, and run the injected-cause check of bundled workloads. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "rp_cli.h"
#include "trace.h"
#include "val.h"

static void usage(FILE *f) {
  fprintf(f,
          "usage: whatif validate TRACE... [-o REPORT.html] [--json] [--min-count N] [--top K] [-j N]\n"
          "                       [--uarch NAME|FILE] [--set LUA-TABLE] [--no-mfir] [--mfir-window N]\n"
          "                       [--boot N] [--seed N] [--workload NAME] [--no-timings] [-v] [-q]\n"
          "  For each trace: run the baseline once, replay every static instruction of the PC set under\n"
          "  latency{add=1} and remove{} (exact ground truth: intervened - baseline cycles), compute the\n"
          "  rankings (Gus taint at 1x/2x/4x ROB, MFIR critical-path cycles, execution count, ROB-head\n"
          "  stall cycles) and compare each with each ground truth: Kendall tau-b with a 95%% bootstrap\n"
          "  interval, Spearman, top-10 precision; Gus stability across windows. A trace of a bundled\n"
          "  workload with a known cause (fma_chain, ptrchase, branchy, ports, recursion) also gets its\n"
          "  injected-cause check. Text summary on stdout (or JSON with --json).\n"
          "  -o FILE          write a self-contained HTML report (inline SVG) to FILE\n"
          "  --json           JSON on stdout instead of the text summary\n"
          "  --min-count N    only PCs executed at least N times (default 1000)\n"
          "  --top K          at most the K most executed of those (default 20; 0: all)\n"
          "  -j N             replay threads (default: number of cores)\n"
          "  --no-mfir        leave out the MFIR critical-path ranking\n"
          "  --mfir-window N  instructions of the MFIR window, centred in the trace (default 500000; 0: all)\n"
          "  --boot N         bootstrap resamples (default 1000)\n"
          "  --seed N         bootstrap seed (default %u)\n"
          "  --workload NAME  the workload whose injected check applies (default: the trace's program name;\n"
          "                   'none' for no check)\n"
          "  --no-timings     leave wall times out of the JSON (byte-comparable output)\n"
          "  -v               stage lines on stderr even when it is not a terminal; -q: none\n"
          "Exit status: 0, or 1 when an injected-cause check fails, 2 on bad input.\n",
          VAL_SEED);
}

static char *workload_src_dir(void) {
  char *p = cli_find_data("validate/workloads/workloads.txt");
  if (!p) return NULL;
  char *slash = strrchr(p, '/');
  if (slash) *slash = 0;
  return p;
}

int cmd_validate(int argc, char **argv) {
  VEC(const char *) paths = {0};
  VEC(const char *) sets = {0};
  const char *out = NULL, *uarch = NULL, *workload = NULL;
  bool json = false, timings = true, verbose = false, quiet = false;
  val_opts o;
  val_opts_default(&o);
  long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
  uint64_t threads = ncpu > 0 ? (uint64_t)ncpu : 1, win = o.mfir_window, boot = o.boot_iters;
  int status = EXIT_BADINPUT;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      usage(stdout);
      status = 0;
      goto out_args;
    } else if (!strcmp(a, "--json")) {
      json = true;
    } else if (!strcmp(a, "--no-mfir")) {
      o.no_mfir = true;
    } else if (!strcmp(a, "--no-timings")) {
      timings = false;
    } else if (!strcmp(a, "-v") || !strcmp(a, "--verbose")) {
      verbose = true;
    } else if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) {
      quiet = true;
    } else if (!strcmp(a, "-o") || !strcmp(a, "--min-count") || !strcmp(a, "--top") || !strcmp(a, "-j") ||
               !strcmp(a, "--uarch") || !strcmp(a, "--set") || !strcmp(a, "--mfir-window") || !strcmp(a, "--boot") ||
               !strcmp(a, "--seed") || !strcmp(a, "--workload")) {
      if (i + 1 >= argc) {
        cli_usage("validate", "%s needs a value", a);
        goto out_args;
      }
      const char *v = argv[++i];
      bool ok = true;
      if (!strcmp(a, "-o")) out = v;
      else if (!strcmp(a, "--uarch")) uarch = v;
      else if (!strcmp(a, "--set")) VEC_PUSH(sets, v);
      else if (!strcmp(a, "--workload")) workload = v;
      else if (!strcmp(a, "--min-count")) ok = parse_u64(v, &o.min_count) && o.min_count >= 1;
      else if (!strcmp(a, "--top")) ok = parse_u64(v, &o.top);
      else if (!strcmp(a, "-j")) ok = parse_u64(v, &threads) && threads >= 1 && threads <= 256;
      else if (!strcmp(a, "--mfir-window")) ok = parse_u64(v, &win);
      else if (!strcmp(a, "--boot")) ok = parse_u64(v, &boot) && boot <= 1000000;
      else ok = parse_u64(v, &o.seed);
      if (!ok) {
        cli_usage("validate", "bad value '%s' for %s", v, a);
        goto out_args;
      }
    } else if (a[0] == '-' && a[1]) {
      cli_usage("validate", "unknown option '%s' (see whatif validate --help)", a);
      goto out_args;
    } else {
      VEC_PUSH(paths, a);
    }
  }
  if (!paths.n) {
    cli_usage("validate", "no trace given (usage: whatif validate TRACE... [options]; see whatif validate --help)");
    goto out_args;
  }
  if (out && cli_check_out("validate", out)) goto out_args; /* before minutes of replays */
  if (workload && strcmp(workload, "none") && !val_cause_find(workload)) {
    /* a typo would otherwise silently drop the injected-cause check */
    cli_usage("validate", "--workload '%s' has no injected-cause check (fma_chain, ptrchase, branchy, ports, "
              "recursion, or none)", workload);
    goto out_args;
  }
  o.threads = (unsigned)threads;
  o.mfir_window = win ? win : UINT64_MAX;
  o.boot_iters = (uint32_t)boot;
  o.workload = workload && !strcmp(workload, "none") ? "" : workload;
  o.log = quiet ? NULL : (verbose || isatty(2)) ? stderr : NULL;
  o.progress = !quiet;

  char *src_dir = workload_src_dir();
  o.src_dir = src_dir;
  wi_err err = {0};
  ooo_config cfg;
  VEC(val_result *) rs = {0};
  if (rpc_machine(uarch, sets.a, sets.n, &cfg, &err)) {
    status = cli_fail(&err);
    goto done;
  }
  for (size_t i = 0; i < paths.n; i++) {
    trace_t *t = trace_open(paths.a[i], &err);
    if (!t) {
      status = cli_fail(&err);
      goto done;
    }
    if (o.log) fprintf(o.log, "validate %s\n", paths.a[i]);
    val_result *r = xcalloc(1, sizeof *r);
    wi_rc rc = val_run_trace(t, paths.a[i], &cfg, &o, r, &err);
    trace_close(t);
    if (rc) {
      free(r);
      status = cli_fail(&err);
      goto done;
    }
    VEC_PUSH(rs, r);
  }
  if (out && val_html(rs.a, rs.n, out, &err)) {
    status = cli_fail(&err);
    goto done;
  }
  if (json) val_json(rs.a, rs.n, timings, stdout);
  else val_text(rs.a, rs.n, stdout);
  if (out && !json) printf("\nreport    %s\n", out);
  status = 0;
  for (size_t i = 0; i < rs.n; i++)
    if (rs.a[i]->has_check && !rs.a[i]->check.pass) status = EXIT_CHECK;
done:
  for (size_t i = 0; i < rs.n; i++) {
    val_result_free(rs.a[i]);
    free(rs.a[i]);
  }
  VEC_FREE(rs);
  free(src_dir);
out_args:
  VEC_FREE(paths);
  VEC_FREE(sets);
  return status;
}

/* test_int_demo.c — `whatif demo --quick` end to end (CI size): records the bundled workloads,
 * applies the data-chosen interventions with exact deltas, validates, and runs every injected-
 * cause check; the chain, pointer-chase and branch checks must pass. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "testutil.h"

#include "util.h"

/* The line of out that starts (after spaces) with the injected-check row of workload w. */
static const char *check_row(const char *out, const char *w) {
  const char *tab = strstr(out, "injected-cause checks:");
  if (!tab) return NULL;
  char key[64];
  snprintf(key, sizeof key, "\n  %-10s ", w);
  return strstr(tab, key);
}

static void test_demo_quick(void **state) {
  (void)state;
  const char *bin = getenv("WHATIF_BIN");
  if (!bin) skip();
  char *dir = tu_tmp_path("-demo");
  char *err_log = xasprintf("%s.stderr", dir);
  char *cmd = xasprintf("'%s' demo --quick --dir '%s' -j 2 2>'%s'", bin, dir, err_log);
  double t0 = wi_now();
  int st = -1;
  char *out = tu_run(cmd, &st);
  double secs = wi_now() - t0;
  fprintf(stderr, "  whatif demo --quick: %.1f s, exit %d\n", secs, st);
  if (st != 0) {
    char *e = NULL;
    size_t n = 0;
    wi_err err = {0};
    if (!read_file(err_log, &e, &n, &err)) fprintf(stderr, "%s\n", e);
    free(e);
    fail_msg("whatif demo --quick exited with %d", st);
  }
  /* the interventions, each with an exact delta */
  static const char *const ivs[] = {"remove{pc=0x", "perfect_cache{pc=0x", "ras{repair=\"full\"}",
                                    "wrong_path{policy=\"confidence\"}", "port{name=\"P"};
  for (size_t i = 0; i < sizeof ivs / sizeof ivs[0]; i++)
    if (!strstr(out, ivs[i])) fail_msg("intervention %s missing from the demo's report:\n%s", ivs[i], out);
  assert_non_null(strstr(out, "the hottest chain instruction (#1 by latency+1: vfmadd231ps"));
  /* the validation summary: every ranking, every workload, every injected check */
  assert_non_null(strstr(out, "gus_taint_4x"));
  assert_non_null(strstr(out, "rob_head_stall"));
  assert_non_null(strstr(out, "injected-cause checks:"));
  static const char *const wls[] = {"fma_chain", "ptrchase", "branchy", "ports", "recursion"};
  for (size_t i = 0; i < 5; i++) {
    const char *row = check_row(out, wls[i]);
    if (!row) fail_msg("no injected check for %s:\n%s", wls[i], out);
    const char *verdict = row + 3 + 11;
    assert_true(!strncmp(verdict, "PASS", 4) || !strncmp(verdict, "FAIL", 4));
    if (i < 3 && strncmp(verdict, "PASS", 4)) fail_msg("the %s check failed:\n%s", wls[i], out);
  }
  /* the report and the cached traces */
  char *report = xasprintf("%s/report.html", dir);
  assert_int_equal(access(report, R_OK), 0);
  char *tr = xasprintf("%s/fma_chain-150.wtr", dir);
  assert_int_equal(access(tr, R_OK), 0);
  assert_non_null(strstr(out, "wall time"));
  free(tr);
  free(report);
  free(out);
  free(cmd);
  char *rm = xasprintf("rm -rf '%s' '%s'", dir, err_log);
  int rs = system(rm);
  (void)rs;
  free(rm);
  free(err_log);
  free(dir);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_demo_quick),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

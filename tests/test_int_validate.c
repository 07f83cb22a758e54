/* test_int_validate.c — `whatif validate` on a recorded bundled workload (fma_chain): every
 * ranking against every ground truth, the injected-cause check naming the FMA chain, the HTML
 * report, and byte-identical JSON for 1 and 2 threads. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testutil.h"

#include "util.h"
#include "val.h"

static size_t count_of(const char *hay, const char *needle) {
  size_t n = 0;
  for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle)) n++;
  return n;
}

static char *workload_trace(const char *name) {
  char *path = tu_trace_path(name);
  if (access(path, R_OK) != 0) {
    fprintf(stderr, "  %s: not recorded, skipped\n", path);
    free(path);
    skip();
  }
  return path;
}

static const char *bin(void) {
  const char *b = getenv("WHATIF_BIN");
  if (!b) skip();
  return b;
}

/* Run validate on fma_chain with j threads; returns the JSON (caller frees). */
static char *run_validate(const char *trace, int j, const char *html, int *status) {
  char *cmd = xasprintf("'%s' validate '%s' --json --no-timings --top 8 -j %d -q%s%s", bin(), trace, j,
                        html ? " -o " : "", html ? html : "");
  double t0 = wi_now();
  char *out = tu_run(cmd, status);
  fprintf(stderr, "  %s: %.1f s\n", cmd, wi_now() - t0);
  free(cmd);
  return out;
}

static void test_validate_fma_chain(void **state) {
  (void)state;
  char *trace = workload_trace("fma_chain");
  char *html = tu_tmp_path(".html");
  int st1 = -1, st2 = -1;
  char *j1 = run_validate(trace, 1, html, &st1);
  assert_int_equal(st1, 0); /* the injected check passes: exit 0 */

  /* every ranking against every ground truth, with its statistics */
  const char *rk = strstr(j1, "\"rankings\": [");
  const char *stab = strstr(j1, "\"stability\": [");
  assert_non_null(rk);
  assert_non_null(stab);
  for (int k = 0; k < VAL_RK_NUM; k++)
    for (int g = 0; g < VAL_GT_NUM; g++) {
      char want[200];
      snprintf(want, sizeof want, "\"name\": \"%s\",\n      \"ground_truth\": \"%s\"", val_rk_name(k),
               val_gt_name(g));
      const char *at = strstr(rk, want);
      if (!at || at > stab) fail_msg("ranking %s vs %s missing from the JSON", val_rk_name(k), val_gt_name(g));
    }
  assert_int_equal(count_of(j1, "\"top10_precision\""), VAL_RK_NUM * VAL_GT_NUM);
  assert_int_equal(count_of(j1, "\"kendall_tau_b\""), VAL_RK_NUM * VAL_GT_NUM + 3); /* + Gus stability */
  /* the Gus ranking names the chain: its tau against latency+1 is a number, not null */
  const char *g2 = strstr(rk, "\"name\": \"gus_taint_2x\",\n      \"ground_truth\": \"latency+1\"");
  assert_non_null(g2);
  const char *tv = strstr(g2, "\"kendall_tau_b\": ");
  assert_non_null(tv);
  char *end = NULL;
  double tau = strtod(tv + strlen("\"kendall_tau_b\": "), &end);
  assert_true(end && end != tv + strlen("\"kendall_tau_b\": ")); /* a number, not null */
  assert_true(tau > 0);

  /* the injected check: perturbation names the FMA chain first */
  const char *inj = strstr(j1, "\"injected\": [");
  assert_non_null(inj);
  assert_non_null(strstr(inj, "\"workload\": \"fma_chain\""));
  const char *top = strstr(inj, "\"top_by_perturbation\": {");
  assert_non_null(top);
  const char *asm_at = strstr(top, "\"asm\": \"vfmadd231ps");
  assert_non_null(asm_at);
  assert_true(asm_at < strstr(top, "\"top_by_ranking\""));
  assert_non_null(strstr(inj, "\"top_by_ranking\": {"));
  for (int k = 0; k < VAL_RK_NUM; k++) {
    char want[80];
    snprintf(want, sizeof want, "\"%s\": ", val_rk_name(k));
    assert_non_null(strstr(strstr(inj, "\"top_by_ranking\""), want));
  }
  assert_non_null(strstr(inj, "\"pass\": true"));

  /* the report: one self-contained file */
  char *doc = NULL;
  size_t n = 0;
  wi_err err = {0};
  if (read_file(html, &doc, &n, &err)) fail_msg("%s", err.msg);
  assert_true(!strncmp(doc, "<!DOCTYPE html>", 15));
  assert_true(count_of(doc, "<svg") > VAL_RK_NUM * VAL_GT_NUM);
  assert_null(strstr(doc, "<script"));
  assert_null(strstr(doc, " src="));
  assert_null(strstr(doc, "<link"));
  assert_non_null(strstr(doc, "vfmadd231ps"));
  free(doc);

  /* determinism: the same bytes with two threads */
  char *j2 = run_validate(trace, 2, NULL, &st2);
  assert_int_equal(st2, 0);
  assert_string_equal(j1, j2);
  free(j1);
  free(j2);
  unlink(html);
  free(html);
  free(trace);
}

/* The text summary and bad input. */
static void test_validate_cli(void **state) {
  (void)state;
  char *trace = workload_trace("fma_chain");
  int st = -1;
  char *cmd = xasprintf("'%s' validate '%s' --top 4 --no-mfir -j 2 -q --workload none", bin(), trace);
  char *out = tu_run(cmd, &st);
  assert_int_equal(st, 0);
  assert_non_null(strstr(out, "gus_taint_2x"));
  assert_non_null(strstr(out, "Gus stability"));
  assert_null(strstr(out, "mfir_critical_path "));
  assert_null(strstr(out, "injected")); /* --workload none: no check */
  free(out);
  free(cmd);
  cmd = xasprintf("'%s' validate /nonexistent.wtr 2>&1", bin());
  out = tu_run(cmd, &st);
  assert_int_equal(st, 2);
  assert_non_null(strstr(out, "nonexistent.wtr"));
  free(out);
  free(cmd);
  cmd = xasprintf("'%s' validate '%s' --top x 2>&1", bin(), trace);
  out = tu_run(cmd, &st);
  assert_int_equal(st, 2);
  free(out);
  free(cmd);
  free(trace);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_validate_fma_chain),
    cmocka_unit_test(test_validate_cli),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

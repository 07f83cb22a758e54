/* test_int_gus.c — the Gus model on the recorded bundled workloads: the known bottleneck ranks
 * first by taint, runs are deterministic, and `whatif gus --json` reports what it promises. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testutil.h"

#include "gus.h"
#include "ooo.h"
#include "trace.h"
#include "util.h"

/* Open a recorded workload's trace, or skip when it was not recorded. */
static trace_t *open_workload(const char *name) {
  char *path = tu_trace_path(name);
  if (access(path, R_OK) != 0) {
    fprintf(stderr, "  %s: not recorded, skipped\n", path);
    free(path);
    skip();
  }
  wi_err err = {0};
  trace_t *t = trace_open(path, &err);
  if (!t) fail_msg("%s: %s", path, err.msg);
  free(path);
  return t;
}

static void golden_cove(gus_machine *m) {
  ooo_config cfg;
  ooo_config_default(&cfg);
  wi_err err = {0};
  if (gus_machine_from_ooo(m, &cfg, &err)) fail_msg("%s", err.msg);
}

static uint32_t top_sid(const gus_result *r) {
  uint32_t top = 0;
  for (uint32_t s = 1; s < r->n_static; s++)
    if (r->taint[s] > r->taint[top]) top = s;
  return top;
}

/* Run twice: identical results; every PC's taint at most its count. */
static void run_twice(const trace_t *t, uint32_t window, gus_result *r) {
  gus_machine m;
  golden_cove(&m);
  gus_source src;
  gus_source_trace(&src, t);
  gus_result r2;
  wi_err err = {0};
  if (gus_run(&m, window, &src, r, &err) || gus_run(&m, window, &src, &r2, &err)) fail_msg("%s", err.msg);
  assert_int_equal(r->ticks, r2.ticks);
  assert_int_equal(r->n_static, r2.n_static);
  assert_memory_equal(r->taint, r2.taint, r->n_static * sizeof *r->taint);
  for (uint32_t s = 0; s < r->n_static; s++) assert_true(r->taint[s] <= r->count[s]);
  assert_int_equal(r->insns, trace_get_info(t)->n_insns);
  gus_result_free(&r2);
}

/* fma_chain: the vfmadd231ps on the loop-carried accumulator is the chain. */
static void test_fma_chain(void **state) {
  (void)state;
  trace_t *t = open_workload("fma_chain");
  for (uint32_t w = 2; w <= 4; w *= 2) {
    gus_result r;
    run_twice(t, w, &r);
    const dec_insn *d = trace_decoded(t, top_sid(&r));
    if (strncmp(d->text, "vfmadd", 6)) fail_msg("window %u: top PC %s, want the vfmadd", w, d->text);
    gus_result_free(&r);
  }
  trace_close(t);
}

/* ptrchase: the load whose address is its own previous result (p = p->next) is tainted nearly
 * every time and ranks in the top two (the other being p->val: it reads the same line first,
 * so the chasing load waits on the fill that load started). */
static void test_ptrchase(void **state) {
  (void)state;
  trace_t *t = open_workload("ptrchase");
  gus_result r;
  run_twice(t, 2, &r);
  uint32_t chase = UINT32_MAX;
  for (uint32_t s = 0; s < r.n_static; s++) {
    const dec_insn *d = trace_decoded(t, s);
    if (r.count[s] > 10000 && d->cls == IC_LOAD && (d->dst & d->addr_src)) chase = s;
  }
  if (chase == UINT32_MAX) fail_msg("no chasing load in the trace");
  assert_true(r.taint[chase] * 100 >= r.count[chase] * 99);
  unsigned above = 0;
  for (uint32_t s = 0; s < r.n_static; s++)
    if (r.taint[s] > r.taint[chase]) above++;
  if (above > 1) fail_msg("%u PCs rank above the chasing load", above);
  gus_result_free(&r);
  trace_close(t);
}

/* Every other recorded workload at least runs deterministically (windows 1, 2 and 4 in turn). */
static void test_all_windows(void **state) {
  (void)state;
  static const char *const names[] = {"branchy", "branchless", "recursion", "stream", "ports"};
  for (size_t i = 0; i < WI_ARRAY_LEN(names); i++) {
    char *path = tu_trace_path(names[i]);
    bool have = access(path, R_OK) == 0;
    free(path);
    if (!have) continue;
    trace_t *t = open_workload(names[i]);
    gus_result r;
    run_twice(t, 1u << (i % 3), &r);
    assert_true(r.cycles > 0);
    gus_result_free(&r);
    trace_close(t);
  }
}

/* The command line: JSON with the promised keys, sensitivity rows for every resource. */
static void test_cli_json(void **state) {
  (void)state;
  const char *bin = getenv("WHATIF_BIN");
  char *path = tu_trace_path("fma_chain");
  if (!bin || access(path, R_OK) != 0) {
    free(path);
    skip();
  }
  char *cmd = xasprintf("%s gus %s --json --sensitivity --threads 2 --top 5", bin, path);
  int status;
  char *out = tu_run(cmd, &status);
  assert_int_equal(status, 0);
  static const char *const keys[] = {"\"predicted_cycles\"", "\"ipc\"", "\"window\"", "\"taint\"", "\"pc\"",
                                     "\"asm\"", "\"function\"", "\"count\"", "\"sensitivity\"", "\"resource\"",
                                     "\"speedup_x2\"", "\"speedup_half_latency\"", "\"speedup_factor\"", "vfmadd"};
  for (size_t i = 0; i < WI_ARRAY_LEN(keys); i++)
    if (!strstr(out, keys[i])) fail_msg("no %s in: %.400s", keys[i], out);
  free(out);
  free(cmd);
  /* the text header counts the tainted PCs, not the ones shown (--top) */
  cmd = xasprintf("%s gus %s --top 2", bin, path);
  out = tu_run(cmd, &status);
  assert_int_equal(status, 0);
  const char *h = strstr(out, "\ntop ");
  assert_non_null(h);
  unsigned shown = 0, tainted = 0, executed = 0;
  assert_int_equal(sscanf(h, "\ntop %u PCs by taint (%u of %u executed PCs tainted)", &shown, &tainted, &executed), 3);
  assert_int_equal(shown, 2);
  assert_true(tainted > 2 && tainted <= executed);
  free(out);
  free(cmd);
  /* bad input: exit 2 with one line */
  cmd = xasprintf("%s gus %s --window 3x 2>&1", bin, path);
  out = tu_run(cmd, &status);
  assert_int_equal(status, 2);
  assert_non_null(strstr(out, "--window"));
  free(out);
  free(cmd);
  free(path);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_fma_chain),
    cmocka_unit_test(test_ptrchase),
    cmocka_unit_test(test_all_windows),
    cmocka_unit_test(test_cli_json),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

/* test_int_ooo.c — the out-of-order model over the recorded bundled workloads: every workload
 * runs to the end on Golden Cove and on the stress machine, results are deterministic and
 * survive checkpoints, each workload's known bottleneck shows, and `whatif run --json` reports
 * the documented members. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "machine.h"
#include "ooo.h"
#include "testutil.h"
#include "trace.h"

/* The bundled workloads: the names in validate/workloads/workloads.txt (every one that has a
 * recorded trace), else this list. */
static const char *const default_workloads[] = {"fma_chain", "ptrchase", "recursion", "branchy", "branchless",
                                                "stream", "ports"};

static size_t workload_names(char names[][64], size_t max) {
  const char *home = getenv("WHATIF_HOME");
  char *list = home ? xasprintf("%s/validate/workloads/workloads.txt", home) : NULL;
  FILE *f = list ? fopen(list, "r") : NULL;
  free(list);
  size_t n = 0;
  char line[512];
  while (f && n < max && fgets(line, sizeof line, f)) {
    if (line[0] == '#' || line[0] == '\n') continue;
    size_t k = strcspn(line, "\t\n");
    if (!k || k >= 64) continue;
    memcpy(names[n], line, k);
    names[n][k] = 0;
    n++;
  }
  if (f) fclose(f);
  if (!n)
    for (; n < WI_ARRAY_LEN(default_workloads) && n < max; n++) snprintf(names[n], 64, "%s", default_workloads[n]);
  return n;
}

static trace_t *open_wl(const char *name) {
  char *path = tu_trace_path(name);
  wi_err err;
  trace_t *t = trace_open(path, &err);
  if (!t) fail_msg("%s: %s", path, err.msg);
  free(path);
  return t;
}

static ooo_model *model(const trace_t *t, const char *machine, const char *set) {
  ooo_config c;
  wi_err err;
  if (machine_load(machine, &c, &err)) fail_msg("%s", err.msg);
  if (set && machine_apply_expr(&c, set, &err)) fail_msg("%s", err.msg);
  ooo_model *m = ooo_new(&c, t, 0, &err);
  if (!m) fail_msg("%s", err.msg);
  return m;
}

static void run(ooo_model *m, uint64_t n) {
  wi_err err;
  if (ooo_run(m, n, &err)) fail_msg("%s", err.msg);
}

static void check_accounting(const ooo_model *m) {
  ooo_topdown td;
  ooo_get_topdown(m, &td);
  double sum = td.retiring + td.bad_speculation + td.frontend_bound + td.backend_bound;
  assert_true(sum > 1 - 1e-9 && sum < 1 + 1e-9);
  const ooo_stats *s = ooo_get_stats(m);
  uint64_t tot = 0;
  for (int i = 0; i < OOO_SLOT_NUM; i++) tot += s->slots[i];
  assert_int_equal(tot, s->cycles * ooo_get_config(m)->core.rename_width);
}

static void test_all_workloads(void **state) {
  (void)state;
  char workloads[32][64];
  size_t nw = workload_names(workloads, 32);
  assert_true(nw >= 7);
  for (size_t i = 0; i < nw; i++) {
    trace_t *t = open_wl(workloads[i]);
    uint64_t n = trace_get_info(t)->n_insns;
    const char *machines[] = {"golden_cove", "skylake", "stress"};
    for (size_t k = 0; k < WI_ARRAY_LEN(machines); k++) {
      ooo_model *m = model(t, machines[k], NULL);
      double t0 = wi_now();
      run(m, UINT64_MAX);
      double dt = wi_now() - t0;
      assert_true(ooo_finished(m));
      assert_int_equal(ooo_committed(m), n);
      check_accounting(m);
      ooo_topdown td;
      ooo_get_topdown(m, &td);
      const ooo_stats *s = ooo_get_stats(m);
      print_message("%-10s %-11s IPC %.3f  ret %.2f bad %.2f fe %.2f be %.2f (mem %.2f)  MPKI %.2f  wrong path %llu/%llu  "
                    "%.2f M insn/s\n",
                    workloads[i], machines[k], (double)s->insns / (double)s->cycles, td.retiring, td.bad_speculation,
                    td.frontend_bound, td.backend_bound, td.memory_bound,
                    1000.0 * (double)(s->mispredicts[BR_COND] + s->mispredicts[BR_IND_JUMP] +
                                      s->mispredicts[BR_IND_CALL] + s->mispredicts[BR_RET]) /
                        (double)s->insns,
                    (unsigned long long)s->fetched[1], (unsigned long long)s->executed[1], (double)n / dt / 1e6);
      ooo_free(m);
    }
    trace_close(t);
  }
}

static void test_determinism_checkpoint(void **state) {
  (void)state;
  const char *names[] = {"recursion", "ptrchase", "stream"};
  for (size_t i = 0; i < WI_ARRAY_LEN(names); i++) {
    trace_t *t = open_wl(names[i]);
    uint64_t n = trace_get_info(t)->n_insns;
    uint64_t lim = n < 600000 ? n : 600000;
    ooo_model *a = model(t, "golden_cove", NULL), *b = model(t, "golden_cove", NULL);
    run(a, lim);
    run(b, lim / 3);
    wi_err err;
    ooo_model *c = ooo_clone(b, &err);
    if (!c) fail_msg("%s", err.msg);
    run(b, lim - ooo_committed(b));
    run(c, lim - ooo_committed(c));
    assert_int_equal(ooo_committed(a), ooo_committed(b));
    assert_memory_equal(ooo_get_stats(a), ooo_get_stats(b), sizeof(ooo_stats));
    assert_memory_equal(ooo_get_stats(a), ooo_get_stats(c), sizeof(ooo_stats));
    print_message("%s: %llu instructions, %llu cycles, identical after a checkpoint at %llu\n", names[i],
                  (unsigned long long)ooo_committed(a), (unsigned long long)ooo_cycles(a),
                  (unsigned long long)(lim / 3));
    ooo_free(a);
    ooo_free(b);
    ooo_free(c);
    trace_close(t);
  }
}

static void test_known_bottlenecks(void **state) {
  (void)state;
  /* ptrchase: memory bound */
  trace_t *t = open_wl("ptrchase");
  ooo_model *m = model(t, "golden_cove", NULL);
  run(m, UINT64_MAX);
  ooo_topdown td;
  ooo_get_topdown(m, &td);
  assert_true(td.memory_bound > td.core_bound && td.backend_bound > 0.5);
  ooo_free(m);
  trace_close(t);
  /* recursion: branch and return mispredictions; a full RAS repair removes return mispredicts
   * caused by wrong-path calls and returns */
  t = open_wl("recursion");
  ooo_model *none = model(t, "golden_cove", "{ bpred = { ras_repair = \"none\" } }");
  ooo_model *full = model(t, "golden_cove", "{ bpred = { ras_repair = \"full\", ras_depth = 64 } }");
  run(none, UINT64_MAX);
  run(full, UINT64_MAX);
  uint64_t rn = ooo_get_stats(none)->mispredicts[BR_RET], rf = ooo_get_stats(full)->mispredicts[BR_RET];
  ooo_get_topdown(none, &td);
  print_message("recursion: return mispredicts none %llu, full %llu; bad speculation %.2f\n", (unsigned long long)rn,
                (unsigned long long)rf, td.bad_speculation);
  assert_true(rn > 4 * rf);
  assert_true(td.bad_speculation > 0.25);
  ooo_free(none);
  ooo_free(full);
  trace_close(t);
  /* branchy vs branchless: the same work, mispredictions only in the first */
  trace_t *tb = open_wl("branchy"), *tl = open_wl("branchless");
  ooo_model *mb = model(tb, "golden_cove", NULL), *ml = model(tl, "golden_cove", NULL);
  run(mb, UINT64_MAX);
  run(ml, UINT64_MAX);
  ooo_topdown tdb, tdl;
  ooo_get_topdown(mb, &tdb);
  ooo_get_topdown(ml, &tdl);
  assert_true(tdb.bad_speculation > 2 * tdl.bad_speculation);
  assert_true(tdb.bad_speculation > tdb.retiring);
  ooo_free(mb);
  ooo_free(ml);
  trace_close(tb);
  trace_close(tl);
}

static void test_run_command_json(void **state) {
  (void)state;
  const char *bin = getenv("WHATIF_BIN");
  if (!bin) skip();
  char *path = tu_trace_path("fma_chain");
  char *cmd = xasprintf("%s run %s --json --uarch skylake --max 200000", bin, path);
  int status = 0;
  char *out = tu_run(cmd, &status);
  assert_int_equal(status, 0);
  const char *keys[] = {"\"instructions\"", "\"cycles\"", "\"ipc\"", "\"topdown\"", "\"retiring\"",
                        "\"bad_speculation\"", "\"frontend_bound\"", "\"backend_bound\"", "\"branch\"", "\"mpki\"",
                        "\"cond_mpki\"", "\"indirect_mpki\"", "\"return_mpki\"", "\"wrong_path\"", "\"fetched\"",
                        "\"executed\"", "\"sim_mips\"", "\"stalls\"", "\"memory\""};
  for (size_t i = 0; i < WI_ARRAY_LEN(keys); i++)
    if (!strstr(out, keys[i])) fail_msg("whatif run --json lacks %s:\n%s", keys[i], out);
  assert_non_null(strstr(out, "\"machine\": \"skylake\""));
  free(out);
  free(cmd);
  /* a bad configuration is an input error naming the key */
  cmd = xasprintf("%s run %s --set '{ core = { robb = 1 } }' 2>&1", bin, path);
  out = tu_run(cmd, &status);
  assert_int_equal(status, 2);
  assert_non_null(strstr(out, "core.robb"));
  free(out);
  free(cmd);
  free(path);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_all_workloads),
    cmocka_unit_test(test_determinism_checkpoint),
    cmocka_unit_test(test_known_bottlenecks),
    cmocka_unit_test(test_run_command_json),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

/* test_int_mfir.c — MFIR over recorded bundled workloads, through the `whatif` command line: the
 * database passes integrity_check; `whatif tma` equals `whatif run` slot for slot; `stacks` and
 * `critical` sum to the cycles; a window built alone equals the same range of the full build;
 * `query --json/--csv` and `export --kanata` work on it. */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testutil.h"
#include "util.h"

static const char *bin(void) {
  const char *b = getenv("WHATIF_BIN");
  if (!b) skip();
  return b;
}

/* Run a command line; returns stdout (caller frees); fails the test on a non-zero exit. */
static char *run_ok(const char *cmd) {
  int st;
  double t0 = wi_now();
  char *out = tu_run(cmd, &st);
  if (st != 0) fail_msg("`%s` exited %d:\n%.2000s", cmd, st, out);
  print_message("%.2f s: %s\n", wi_now() - t0, cmd);
  return out;
}

/* The number after "key": in json, searching from `from` (a prior key narrowing the scope). */
static double jnum(const char *json, const char *from, const char *key) {
  const char *p = json;
  if (from) {
    p = strstr(json, from);
    if (!p) fail_msg("no %s in %.500s", from, json);
  }
  char k[128];
  snprintf(k, sizeof k, "\"%s\":", key);
  p = strstr(p, k);
  if (!p) fail_msg("no %s in %.500s", key, json);
  return strtod(p + strlen(k), NULL);
}

static int64_t q1(const char *db_path, const char *sql) {
  sqlite3 *db = NULL;
  if (sqlite3_open_v2(db_path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) fail_msg("open %s", db_path);
  sqlite3_stmt *st = NULL;
  if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) fail_msg("%s: %s", sql, sqlite3_errmsg(db));
  int64_t v = INT64_MIN;
  if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL) v = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  sqlite3_close(db);
  return v;
}

typedef struct fixture {
  char *trace, *db;
} fixture;

static fixture fx;

static int setup(void **state) {
  (void)state;
  const char *dir = getenv("WHATIF_TRACES");
  if (!dir || !getenv("WHATIF_BIN")) return 0;
  fx.trace = xasprintf("%s/fma_chain.wtr", dir);
  if (access(fx.trace, R_OK) != 0) {
    free(fx.trace);
    fx.trace = NULL;
    return 0;
  }
  fx.db = tu_tmp_path(".db");
  char *cmd = xasprintf("%s mfir %s -o %s --json", getenv("WHATIF_BIN"), fx.trace, fx.db);
  int st;
  char *out = tu_run(cmd, &st);
  if (st) fprintf(stderr, "%s: exit %d\n%s\n", cmd, st, out);
  else fprintf(stderr, "%s", out);
  free(out);
  free(cmd);
  return st;
}

static int teardown(void **state) {
  (void)state;
  if (fx.db) unlink(fx.db);
  free(fx.db);
  free(fx.trace);
  return 0;
}

static void need_fixture(void) {
  bin();
  if (!fx.trace) skip();
}

static void test_integrity_and_tma(void **state) {
  (void)state;
  need_fixture();
  char cmd[4096];
  snprintf(cmd, sizeof cmd, "%s query %s \"PRAGMA integrity_check\" --csv", bin(), fx.db);
  char *out = run_ok(cmd);
  assert_string_equal(out, "integrity_check\nok\n");
  free(out);
  snprintf(cmd, sizeof cmd, "%s run %s --json", bin(), fx.trace);
  char *run = run_ok(cmd);
  snprintf(cmd, sizeof cmd, "%s tma %s --json", bin(), fx.db);
  char *tma = run_ok(cmd);
  static const char *const cats[] = {"retiring", "bad_branch", "bad_clear", "fe_latency", "fe_bandwidth",
                                     "be_memory", "be_core"};
  for (size_t k = 0; k < WI_ARRAY_LEN(cats); k++)
    assert_true(jnum(run, "\"slots\"", cats[k]) == jnum(tma, "\"slots\"", cats[k]));
  static const char *const fr[] = {"retiring", "bad_speculation", "frontend_bound", "backend_bound",
                                   "branch_mispredicts", "machine_clears", "fe_latency", "fe_bandwidth",
                                   "memory_bound", "core_bound"};
  for (size_t k = 0; k < WI_ARRAY_LEN(fr); k++)
    assert_true(jnum(run, "\"topdown\"", fr[k]) == jnum(tma, "\"topdown\"", fr[k]));
  assert_true(jnum(run, NULL, "cycles") == jnum(tma, NULL, "cycles"));
  assert_true(jnum(run, NULL, "instructions") == jnum(tma, NULL, "instructions"));
  free(run);
  free(tma);
}

static void test_stacks_and_critical(void **state) {
  (void)state;
  need_fixture();
  char cmd[4096];
  int64_t cycles = q1(fx.db, "SELECT value FROM meta WHERE key = 'total_cycles'");
  snprintf(cmd, sizeof cmd, "%s stacks %s --json --top 0", bin(), fx.db);
  char *out = run_ok(cmd);
  assert_true(jnum(out, NULL, "total_cycles") == (double)cycles);
  /* by_pc covers every cycle */
  double sum = 0;
  for (const char *p = strstr(out, "\"by_pc\""); (p = strstr(p, "\"cycles\":")); p += 9) sum += strtod(p + 9, NULL);
  assert_true(sum == (double)cycles);
  free(out);
  snprintf(cmd, sizeof cmd, "%s critical %s --json --top 0", bin(), fx.db);
  out = run_ok(cmd);
  assert_true(jnum(out, NULL, "total_cycles") == (double)cycles);
  print_message("critical on %lld instructions: %.3f s in the walk\n",
                (long long)q1(fx.db, "SELECT count(*) FROM cflow"), jnum(out, NULL, "seconds"));
  /* by_kind sums to the cycles; by_pc entries carry pc, asm, function, cycles, share, sorted */
  const char *bk = strstr(out, "\"by_kind\"");
  const char *end = strstr(bk, "}");
  double ks = 0;
  for (const char *p = strchr(bk, '{'); p && p < end; p = strchr(p, ',')) {
    const char *colon = strchr(p, ':');
    if (!colon || colon > end) break;
    ks += strtod(colon + 1, NULL);
    p = colon;
  }
  assert_true(ks == (double)cycles);
  const char *bp = strstr(out, "\"by_pc\"");
  assert_non_null(bp);
  assert_non_null(strstr(bp, "\"asm\":"));
  assert_non_null(strstr(bp, "\"function\":"));
  assert_non_null(strstr(bp, "\"share\":"));
  double prev = 1e300, total = 0;
  const char *stop = strstr(bp, "\"by_function\"");
  for (const char *p = bp; (p = strstr(p, "\"cycles\":")) && p < stop; p += 9) {
    double c = strtod(p + 9, NULL);
    assert_true(c <= prev);
    prev = c;
    total += c;
  }
  assert_true(total == (double)cycles);
  free(out);
  /* a symptom: the chain and its root */
  snprintf(cmd, sizeof cmd, "%s critical %s --symptom rob-head --json", bin(), fx.db);
  out = run_ok(cmd);
  assert_non_null(strstr(out, "\"chain\""));
  assert_non_null(strstr(out, "\"root\""));
  free(out);
}

static void test_window_equals_range(void **state) {
  (void)state;
  need_fixture();
  char *win = tu_tmp_path(".db");
  char cmd[4096];
  const long long s0 = 300000, n = 200000;
  snprintf(cmd, sizeof cmd, "%s mfir %s -o %s --window %lld:%lld", bin(), fx.trace, win, s0, n);
  free(run_ok(cmd));
  /* the same rows, compared inside SQLite with the full database attached */
  sqlite3 *db = NULL;
  assert_int_equal(sqlite3_open_v2(win, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
  char *att = xasprintf("ATTACH '%s' AS full", fx.db);
  assert_int_equal(sqlite3_exec(db, att, NULL, NULL, NULL), SQLITE_OK);
  free(att);
  char sql[1024];
  sqlite3_stmt *st = NULL;
  snprintf(sql, sizeof sql,
           "SELECT (SELECT count(*) FROM main.cflow),"
           " (SELECT count(*) FROM (SELECT * FROM main.cflow EXCEPT SELECT * FROM full.cflow)),"
           " (SELECT count(*) FROM (SELECT * FROM main.wflow EXCEPT SELECT * FROM full.wflow)),"
           " (SELECT count(*) FROM main.wflow),"
           " (SELECT count(*) FROM full.wflow WHERE retire BETWEEN"
           "   (SELECT value FROM main.meta WHERE key = 'start_cycle') AND (SELECT value FROM main.meta WHERE key = 'end_cycle')),"
           " (SELECT count(*) FROM (SELECT * FROM main.dep_x EXCEPT SELECT * FROM full.dep_x))");
  assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
  assert_int_equal(sqlite3_step(st), SQLITE_ROW);
  assert_int_equal(sqlite3_column_int64(st, 0), n);
  assert_int_equal(sqlite3_column_int64(st, 1), 0);
  assert_int_equal(sqlite3_column_int64(st, 2), 0);
  assert_int_equal(sqlite3_column_int64(st, 3), sqlite3_column_int64(st, 4));
  assert_int_equal(sqlite3_column_int64(st, 5), 0);
  sqlite3_finalize(st);
  sqlite3_close(db);
  unlink(win);
  free(win);
}

static void test_query_and_kanata(void **state) {
  (void)state;
  need_fixture();
  char cmd[4096];
  snprintf(cmd, sizeof cmd, "%s query %s \"SELECT count(*) AS n FROM cflow; SELECT 1 AS a, 'x,y' AS b\" --csv", bin(),
           fx.db);
  char *out = run_ok(cmd);
  char expect[128];
  snprintf(expect, sizeof expect, "n\n%lld\n\na,b\n1,\"x,y\"\n", (long long)q1(fx.db, "SELECT count(*) FROM cflow"));
  assert_string_equal(out, expect);
  free(out);
  snprintf(cmd, sizeof cmd, "%s query %s \"SELECT fid, asm FROM flow JOIN pc USING (pc) ORDER BY fid DESC LIMIT 2\" --json",
           bin(), fx.db);
  out = run_ok(cmd);
  assert_non_null(strstr(out, "\"fid\":"));
  assert_non_null(strstr(out, "\"asm\":"));
  free(out);
  /* bad SQL: exit 2, one line */
  int st;
  snprintf(cmd, sizeof cmd, "%s query %s \"SELECT nonsense FROM nowhere\" 2>&1", bin(), fx.db);
  out = tu_run(cmd, &st);
  assert_int_equal(st, 2);
  assert_non_null(strstr(out, "no such table"));
  free(out);
  /* Kanata: a slice; every instruction opened by I before anything else and closed by one R */
  char *log = tu_tmp_path(".log");
  snprintf(cmd, sizeof cmd, "%s export %s --kanata %s --from 500000 --count 5000", bin(), fx.db, log);
  free(run_ok(cmd));
  FILE *f = fopen(log, "r");
  assert_non_null(f);
  char line[1024];
  assert_non_null(fgets(line, sizeof line, f));
  assert_string_equal(line, "Kanata\t0004\n");
  size_t cap = 1 << 16, n = 0, retired = 0;
  unsigned char *seen = calloc(cap, 1);
  while (fgets(line, sizeof line, f)) {
    unsigned long long id, a, b;
    if (line[0] == 'C') continue;
    assert_true(sscanf(line + 2, "%llu", &id) == 1);
    assert_true(id < cap);
    if (line[0] == 'I') {
      assert_int_equal(seen[id], 0);
      seen[id] = 1;
      n++;
    } else if (line[0] == 'R') {
      assert_int_equal(seen[id], 1);
      seen[id] = 2;
      assert_true(sscanf(line, "R\t%llu\t%llu\t%llu", &id, &a, &b) == 3);
      retired += b == 0;
    } else {
      assert_int_equal(seen[id], 1);
    }
  }
  fclose(f);
  for (size_t i = 0; i < n; i++) assert_int_equal(seen[i], 2);
  assert_int_equal(retired, 5000);
  free(seen);
  unlink(log);
  free(log);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_integrity_and_tma),
    cmocka_unit_test(test_stacks_and_critical),
    cmocka_unit_test(test_window_equals_range),
    cmocka_unit_test(test_query_and_kanata),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}

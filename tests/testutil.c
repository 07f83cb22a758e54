/* testutil.c — helpers shared by the cmocka tests. */
#include "testutil.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ooo.h"
#include "tbuild.h"
#include "trace.h"
#include "util.h"

char *tu_trace_path(const char *name) {
  const char *dir = getenv("WHATIF_TRACES");
  if (!dir) {
    skip();
    return NULL;
  }
  return xasprintf("%s/%s.wtr", dir, name);
}

char *tu_tmp_path(const char *suffix) {
  static unsigned counter;
  const char *dir = getenv("TMPDIR");
  return xasprintf("%s/whatif-test-%ld-%u%s", dir ? dir : "/tmp", (long)getpid(), counter++, suffix);
}

uint64_t tu_seed(void) {
  static uint64_t seed;
  static int done;
  if (!done) {
    const char *s = getenv("WHATIF_SEED");
    seed = s ? strtoull(s, NULL, 0) : (uint64_t)time(NULL);
    fprintf(stderr, "seed: %llu (set WHATIF_SEED to reproduce)\n", (unsigned long long)seed);
    done = 1;
  }
  return seed;
}

char *tu_run(const char *cmd, int *status) {
  FILE *p = popen(cmd, "r");
  if (!p) {
    *status = -1;
    return xstrdup("");
  }
  size_t cap = 4096, n = 0;
  char *buf = xmalloc(cap);
  size_t r;
  while ((r = fread(buf + n, 1, cap - n - 1, p)) > 0) {
    n += r;
    if (cap - n < 1024) buf = xrealloc(buf, cap *= 2);
  }
  buf[n] = 0;
  int st = pclose(p);
  *status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
  return buf;
}

char *tu_sql_rows(sqlite3 *db, const char *sql) {
  sqlite3_stmt *st = NULL;
  if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) fail_msg("%s: %s", sql, sqlite3_errmsg(db));
  char *buf = NULL;
  size_t n = 0;
  FILE *f = open_memstream(&buf, &n);
  while (sqlite3_step(st) == SQLITE_ROW) {
    int nc = sqlite3_column_count(st);
    for (int c = 0; c < nc; c++) {
      const char *v = (const char *)sqlite3_column_text(st, c);
      fprintf(f, "%s%c", v ? v : "NULL", c + 1 < nc ? '|' : '\n');
    }
  }
  fclose(f);
  sqlite3_finalize(st);
  return buf;
}

char *tu_sql_file_rows(const char *path, const char *sql) {
  sqlite3 *db;
  if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) fail_msg("open %s", path);
  char *rows = tu_sql_rows(db, sql);
  sqlite3_close(db);
  return rows;
}

struct trace *tu_open_trace(const char *path) {
  wi_err err;
  trace_t *t = trace_open(path, &err);
  if (!t) fail_msg("cannot open %s: %s", path, err.msg);
  return t;
}

char *tu_tb_finish(tbuild *tb, uint64_t done) {
  wi_err err;
  tb_exec(tb, done, NULL, 0);
  assert_null(tb_error(tb));
  char *path = tu_tmp_path(".wtr");
  if (tb_write(tb, path, &err)) fail_msg("tb_write: %s", err.msg);
  tb_free(tb);
  return path;
}

ooo_model *tu_ooo_new(const trace_t *t, const ooo_config *c) {
  wi_err err;
  ooo_model *m = ooo_new(c, t, OOO_SID_STATS, &err);
  if (!m) fail_msg("ooo_new: %s", err.msg);
  return m;
}

void tu_ooo_run(ooo_model *m, uint64_t n) {
  wi_err err;
  if (ooo_run(m, n, &err)) fail_msg("ooo_run: %s", err.msg);
}

void tu_ooo_assert_same(const ooo_model *a, const ooo_model *b) {
  assert_memory_equal(ooo_get_stats(a), ooo_get_stats(b), sizeof(ooo_stats));
  assert_int_equal(ooo_cycles(a), ooo_cycles(b));
}

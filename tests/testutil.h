/* testutil.h — helpers shared by the cmocka tests. */
#ifndef WHATIF_TESTUTIL_H
#define WHATIF_TESTUTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

/* Path of the recorded trace of a bundled workload ("$WHATIF_TRACES/<name>.wtr"); the
 * caller frees. Skips the test when $WHATIF_TRACES is unset. */
char *tu_trace_path(const char *name);
/* A fresh temporary file path with the given suffix (caller frees; file not created). */
char *tu_tmp_path(const char *suffix);
/* Seed for randomized tests: $WHATIF_SEED or time-based; printed once. */
uint64_t tu_seed(void);
/* Run a shell command and capture its stdout (malloc'd) and exit status. */
char *tu_run(const char *cmd, int *status);
/* The rows of sql on an open database as text, one line per row, columns separated by '|',
 * NULL as "NULL" (malloc'd; fails the test on an SQL error). */
struct sqlite3;
char *tu_sql_rows(struct sqlite3 *db, const char *sql);
/* The same on the database at path, opened read-only. */
char *tu_sql_file_rows(const char *path, const char *sql);
/* Open the trace at path, failing the test (with the reader's message) when it cannot. */
struct trace;
struct trace *tu_open_trace(const char *path);

/* ---- synthetic traces and the detailed model ---- */
/* End tb's stream with the instruction at `done`, write it to a temporary trace (caller frees
 * the path) and free tb; fails the test on a builder error. */
struct tbuild;
char *tu_tb_finish(struct tbuild *tb, uint64_t done);
/* A model of c over t with OOO_SID_STATS (fails the test when it cannot be made). */
struct ooo_model;
struct ooo_config;
struct ooo_model *tu_ooo_new(const struct trace *t, const struct ooo_config *c);
/* ooo_run to n instructions, failing the test on an error. */
void tu_ooo_run(struct ooo_model *m, uint64_t n);
/* Same statistics and cycles: two runs that must not differ. */
void tu_ooo_assert_same(const struct ooo_model *a, const struct ooo_model *b);

#endif

/* cmd_query.c — `whatif query DB "SQL" [--json|--csv]`: run SQL on an MFIR database (opened
 * read-only) and print the rows as an aligned table, JSON (an array of objects per statement)
 * or CSV. */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

enum { OUT_TABLE = 0, OUT_JSON, OUT_CSV };

#define TABLE_BUFFER 2000 /* rows buffered to size the columns; later rows reuse the widths */

static void usage(FILE *f) {
  fprintf(f,
          "usage: whatif query DB \"SQL\" [--json | --csv]\n"
          "  Run SQL (one or more statements) on an MFIR database opened read-only. Tables, views and\n"
          "  example queries: mfir/SCHEMA.md. Output: an aligned table (default), JSON (an array of row\n"
          "  objects; with several statements, an array of such arrays) or CSV with a header line.\n");
}

/* Text of column i of the current row ("NULL" for NULL; blobs as x'..'); caller frees. */
static char *cell_text(sqlite3_stmt *st, int i) {
  switch (sqlite3_column_type(st, i)) {
  case SQLITE_NULL: return xstrdup("NULL");
  case SQLITE_BLOB: {
    int n = sqlite3_column_bytes(st, i);
    const unsigned char *b = sqlite3_column_blob(st, i);
    char *s = xmalloc((size_t)n * 2 + 4);
    size_t p = 0;
    s[p++] = 'x';
    s[p++] = '\'';
    for (int k = 0; k < n; k++) p += (size_t)snprintf(s + p, 3, "%02x", b[k]);
    s[p++] = '\'';
    s[p] = 0;
    return s;
  }
  default: return xstrdup((const char *)sqlite3_column_text(st, i));
  }
}

static void csv_field(FILE *f, const char *s) {
  if (!strpbrk(s, ",\"\n\r")) {
    fputs(s, f);
    return;
  }
  fputc('"', f);
  for (; *s; s++) {
    if (*s == '"') fputc('"', f);
    fputc(*s, f);
  }
  fputc('"', f);
}

static void json_cell(jw *w, sqlite3_stmt *st, int i) {
  switch (sqlite3_column_type(st, i)) {
  case SQLITE_NULL: jw_null(w); break;
  case SQLITE_INTEGER: jw_int(w, sqlite3_column_int64(st, i)); break;
  case SQLITE_FLOAT: jw_num(w, sqlite3_column_double(st, i)); break;
  default: {
    char *s = cell_text(st, i);
    jw_str(w, s);
    free(s);
  }
  }
}

typedef VEC(char *) strvec;

static void print_row(const strvec *cells, size_t first, int nc, const size_t *width, const bool *right) {
  for (int c = 0; c < nc; c++) {
    const char *s = cells->a[first + (size_t)c];
    if (right[c]) printf("%s%*s", c ? "  " : "", (int)width[c], s);
    else if (c + 1 < nc) printf("%s%-*s", c ? "  " : "", (int)width[c], s);
    else printf("%s%s", c ? "  " : "", s);
  }
  putchar('\n');
}

/* Print the rows of one prepared statement; returns the SQLite step status. */
static int run_stmt(sqlite3_stmt *st, int mode, jw *w, bool *first_csv) {
  int nc = sqlite3_column_count(st), rc;
  if (mode == OUT_JSON) {
    jw_arr_begin(w);
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
      jw_obj_begin(w);
      for (int c = 0; c < nc; c++) {
        jw_key(w, sqlite3_column_name(st, c));
        json_cell(w, st, c);
      }
      jw_obj_end(w);
    }
    jw_arr_end(w);
    return rc;
  }
  if (mode == OUT_CSV) {
    if (nc && !*first_csv) putchar('\n');
    if (nc) *first_csv = false;
    for (int c = 0; c < nc; c++) {
      if (c) putchar(',');
      csv_field(stdout, sqlite3_column_name(st, c));
    }
    if (nc) putchar('\n');
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
      for (int c = 0; c < nc; c++) {
        if (c) putchar(',');
        if (sqlite3_column_type(st, c) != SQLITE_NULL) {
          char *s = cell_text(st, c);
          csv_field(stdout, s);
          free(s);
        }
      }
      putchar('\n');
    }
    return rc;
  }
  /* Aligned table: widths from the header and the first TABLE_BUFFER rows. */
  size_t *width = xcalloc((size_t)nc + 1, sizeof *width);
  bool *right = xcalloc((size_t)nc + 1, sizeof *right);
  strvec cells = {0};
  for (int c = 0; c < nc; c++) {
    width[c] = strlen(sqlite3_column_name(st, c));
    right[c] = true;
  }
  size_t rows = 0;
  bool flushed = false;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    for (int c = 0; c < nc; c++) {
      int ty = sqlite3_column_type(st, c);
      if (ty == SQLITE_TEXT || ty == SQLITE_BLOB) right[c] = false;
      char *s = cell_text(st, c);
      size_t l = strlen(s);
      if (!flushed && l > width[c]) width[c] = l;
      VEC_PUSH(cells, s);
    }
    rows++;
    if (rows == TABLE_BUFFER && !flushed) {
      strvec hdr = {0};
      for (int c = 0; c < nc; c++) VEC_PUSH(hdr, (char *)sqlite3_column_name(st, c));
      print_row(&hdr, 0, nc, width, right);
      VEC_FREE(hdr);
      flushed = true;
    }
    if (flushed) {
      for (size_t r = 0; r * (size_t)nc < cells.n; r++) print_row(&cells, r * (size_t)nc, nc, width, right);
      for (size_t k = 0; k < cells.n; k++) free(cells.a[k]);
      cells.n = 0;
    }
  }
  if (!flushed && nc) {
    strvec hdr = {0};
    for (int c = 0; c < nc; c++) VEC_PUSH(hdr, (char *)sqlite3_column_name(st, c));
    print_row(&hdr, 0, nc, width, right);
    VEC_FREE(hdr);
    for (size_t r = 0; r * (size_t)nc < cells.n; r++) print_row(&cells, r * (size_t)nc, nc, width, right);
  }
  for (size_t k = 0; k < cells.n; k++) free(cells.a[k]);
  VEC_FREE(cells);
  free(width);
  free(right);
  return rc;
}

int cmd_query(int argc, char **argv) {
  const char *db_path = NULL, *sql = NULL;
  int mode = OUT_TABLE;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      usage(stdout);
      return 0;
    } else if (!strcmp(a, "--json")) {
      mode = OUT_JSON;
    } else if (!strcmp(a, "--csv")) {
      mode = OUT_CSV;
    } else if (a[0] == '-' && a[1]) {
      return cli_usage("query", "unknown option '%s' (see whatif query --help)", a);
    } else if (!db_path) {
      db_path = a;
    } else if (!sql) {
      sql = a;
    } else {
      return cli_usage("query", "unexpected argument '%s' (quote the SQL as one argument)", a);
    }
  }
  if (!db_path || !sql)
    return cli_usage("query", "%s (usage: whatif query DB \"SQL\" [--json | --csv])", !db_path ? "no database given" : "no SQL given");
  sqlite3 *db = NULL;
  if (sqlite3_open_v2(db_path, &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK) {
    fprintf(stderr, "whatif: %s: cannot open: %s\n", db_path, db ? sqlite3_errmsg(db) : "out of memory");
    sqlite3_close(db);
    return EXIT_BADINPUT;
  }
  /* SQLite reads lazily: a statement that touches no table ("select 1") would succeed on any file.
   * Read the schema once so a file that is not a database fails here. */
  if (sqlite3_exec(db, "SELECT count(*) FROM sqlite_master", NULL, NULL, NULL) != SQLITE_OK) {
    fprintf(stderr, "whatif: %s: not an SQLite database: %s\n", db_path, sqlite3_errmsg(db));
    sqlite3_close(db);
    return EXIT_BADINPUT;
  }
  /* Count the statements first: JSON wraps several in an outer array. */
  int n_stmts = 0;
  for (const char *p = sql; p && *p;) {
    sqlite3_stmt *st = NULL;
    const char *tail = NULL;
    if (sqlite3_prepare_v2(db, p, -1, &st, &tail) != SQLITE_OK) break;
    if (st) n_stmts++;
    sqlite3_finalize(st);
    p = tail;
  }
  jw w;
  jw_init(&w, stdout, true);
  if (mode == OUT_JSON && n_stmts > 1) jw_arr_begin(&w);
  int status = 0;
  bool first_csv = true, first_table = true;
  for (const char *p = sql; p && *p;) {
    sqlite3_stmt *st = NULL;
    const char *tail = NULL;
    if (sqlite3_prepare_v2(db, p, -1, &st, &tail) != SQLITE_OK) {
      fprintf(stderr, "whatif: query: %s\n", sqlite3_errmsg(db));
      status = EXIT_BADINPUT;
      break;
    }
    p = tail;
    if (!st) continue; /* whitespace or a comment */
    if (mode == OUT_TABLE && !first_table && sqlite3_column_count(st)) putchar('\n');
    if (sqlite3_column_count(st)) first_table = false;
    int rc = run_stmt(st, mode, &w, &first_csv);
    if (rc != SQLITE_DONE) {
      fprintf(stderr, "whatif: query: %s\n", sqlite3_errmsg(db));
      status = EXIT_BADINPUT;
    }
    sqlite3_finalize(st);
    if (status) break;
  }
  if (mode == OUT_JSON) {
    if (n_stmts > 1) jw_arr_end(&w);
    if (!status) jw_end(&w);
  }
  sqlite3_close(db);
  return status;
}

/* rp_store.c — the sweep results store in SQLite (schema and durability in rp_store.h). */
#include "rp_store.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define RP_SCHEMA_VERSION "1"
#define RP_BATCH_ROWS 64
#define RP_BATCH_SECONDS 1.0

struct rp_store {
  sqlite3 *db;
  char *path;
  sqlite3_stmt *has, *put;
  bool in_txn;
  int pending;       /* rows since the last commit */
  int batch_rows;    /* commit after this many rows */
  double batch_s;    /* ... or this many seconds */
  double txn_start;  /* wi_now() at BEGIN */
};

static const char *k_schema =
  "PRAGMA journal_mode=WAL;"
  "PRAGMA synchronous=NORMAL;"
  "CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT);"
  "INSERT OR IGNORE INTO meta VALUES('schema_version', '" RP_SCHEMA_VERSION "');"
  "INSERT OR IGNORE INTO meta VALUES('kind', 'whatif sweep');"
  "CREATE TABLE IF NOT EXISTS run("
  "  id INTEGER PRIMARY KEY, trace_hash TEXT NOT NULL, config_hash TEXT NOT NULL,"
  "  tool_version TEXT, command TEXT, trace_path TEXT, config_name TEXT,"
  "  base_cycles INTEGER, base_insns INTEGER, base_ipc REAL, created TEXT,"
  "  UNIQUE(trace_hash, config_hash));"
  "CREATE TABLE IF NOT EXISTS replay("
  "  run_id INTEGER NOT NULL REFERENCES run(id), idx INTEGER NOT NULL, interv TEXT NOT NULL,"
  "  pc INTEGER, cycles INTEGER, insns INTEGER, ipc REAL,"
  "  delta_cycles INTEGER, delta_ipc REAL, ipc_pct REAL, mpki REAL, wp_fetched INTEGER,"
  "  start_insn INTEGER, wall_s REAL,"
  "  PRIMARY KEY(run_id, interv));"
  "CREATE INDEX IF NOT EXISTS replay_idx ON replay(run_id, idx);";

static wi_rc db_fail(rp_store *s, wi_err *err, const char *what) {
  return wi_fail(err, WI_EIO, "%s: %s: %s", s->path, what, sqlite3_errmsg(s->db));
}

static wi_rc exec(rp_store *s, const char *sql, wi_err *err) {
  char *msg = NULL;
  if (sqlite3_exec(s->db, sql, NULL, NULL, &msg) != SQLITE_OK) {
    wi_rc rc = wi_fail(err, WI_EIO, "%s: %s", s->path, msg ? msg : sqlite3_errmsg(s->db));
    sqlite3_free(msg);
    return rc;
  }
  return WI_OK;
}

/* Refuse a database that already holds tables but is not a results store (an MFIR database, a
 * foreign file): creating our schema in it would modify someone else's data. Runs before any
 * statement that writes (even PRAGMA journal_mode changes the file header). */
static wi_rc check_kind(sqlite3 *db, const char *path, wi_err *err) {
  sqlite3_stmt *st = NULL;
  int64_t n_tables = -1;
  if (sqlite3_prepare_v2(db, "SELECT count(*) FROM sqlite_master", -1, &st, NULL) == SQLITE_OK &&
      sqlite3_step(st) == SQLITE_ROW)
    n_tables = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  if (n_tables < 0) return wi_fail(err, WI_ECORRUPT, "%s: not an SQLite database: %s", path, sqlite3_errmsg(db));
  if (n_tables == 0) return WI_OK;
  bool ours = false;
  st = NULL;
  if (sqlite3_prepare_v2(db, "SELECT value FROM meta WHERE key='kind'", -1, &st, NULL) == SQLITE_OK &&
      sqlite3_step(st) == SQLITE_ROW) {
    const char *v = (const char *)sqlite3_column_text(st, 0);
    ours = v && !strcmp(v, "whatif sweep");
  }
  sqlite3_finalize(st);
  if (!ours)
    return wi_fail(err, WI_ECORRUPT, "%s: not a whatif sweep results database (an MFIR database or another "
                   "SQLite file; left unchanged)", path);
  return WI_OK;
}

rp_store *rp_store_open(const char *path, wi_err *err) {
  rp_store *s = xcalloc(1, sizeof *s);
  s->path = xstrdup(path);
  s->batch_rows = RP_BATCH_ROWS;
  s->batch_s = RP_BATCH_SECONDS;
  if (sqlite3_open_v2(path, &s->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX, NULL) !=
      SQLITE_OK) {
    wi_fail(err, WI_EIO, "%s: cannot open the results database: %s", path,
            s->db ? sqlite3_errmsg(s->db) : "out of memory");
    sqlite3_close(s->db);
    free(s->path);
    free(s);
    return NULL;
  }
  sqlite3_busy_timeout(s->db, 10000);
  wi_rc rc = check_kind(s->db, path, err);
  if (!rc) rc = exec(s, k_schema, err);
  if (!rc) {
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(s->db, "SELECT value FROM meta WHERE key='schema_version'", -1, &st, NULL) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW) {
      const char *v = (const char *)sqlite3_column_text(st, 0);
      if (!v || strcmp(v, RP_SCHEMA_VERSION))
        rc = wi_fail(err, WI_EVERSION, "%s: results database schema version %s (this whatif writes %s)", path,
                     v ? v : "?", RP_SCHEMA_VERSION);
    } else {
      rc = wi_fail(err, WI_ECORRUPT, "%s: not a whatif results database (no meta.schema_version)", path);
    }
    sqlite3_finalize(st);
  }
  if (!rc && (sqlite3_prepare_v2(s->db, "SELECT 1 FROM replay WHERE run_id=?1 AND interv=?2", -1, &s->has, NULL) ||
              sqlite3_prepare_v2(s->db,
                                 "INSERT OR REPLACE INTO replay(run_id, idx, interv, pc, cycles, insns, ipc, delta_cycles,"
                                 " delta_ipc, ipc_pct, mpki, wp_fetched, start_insn, wall_s)"
                                 " VALUES(?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?14)",
                                 -1, &s->put, NULL)))
    rc = db_fail(s, err, "prepare");
  if (rc) {
    wi_err dummy;
    rp_store_close(s, &dummy);
    return NULL;
  }
  return s;
}

void rp_store_set_batch(rp_store *s, int rows, double seconds) {
  if (rows > 0) s->batch_rows = rows;
  if (seconds > 0) s->batch_s = seconds;
}

wi_rc rp_store_flush(rp_store *s, wi_err *err) {
  if (!s->in_txn) return WI_OK;
  s->in_txn = false;
  s->pending = 0;
  return exec(s, "COMMIT", err);
}

wi_rc rp_store_close(rp_store *s, wi_err *err) {
  if (!s) return WI_OK;
  wi_rc rc = rp_store_flush(s, err);
  sqlite3_finalize(s->has);
  sqlite3_finalize(s->put);
  sqlite3_close(s->db);
  free(s->path);
  free(s);
  return rc;
}

static void hex16(char *buf, uint64_t v) { snprintf(buf, 17, "%016llx", (unsigned long long)v); }

wi_rc rp_store_run(rp_store *s, const rp_run_info *ri, int64_t *run_id, wi_err *err) {
  wi_rc rc = rp_store_flush(s, err);
  if (rc) return rc;
  char th[17], ch[17];
  hex16(th, ri->trace_hash);
  hex16(ch, ri->config_hash);
  sqlite3_stmt *st = NULL;
  if (sqlite3_prepare_v2(s->db, "SELECT id, base_cycles, base_insns FROM run WHERE trace_hash=?1 AND config_hash=?2",
                         -1, &st, NULL))
    return db_fail(s, err, "prepare");
  sqlite3_bind_text(st, 1, th, -1, SQLITE_TRANSIENT);
  sqlite3_bind_text(st, 2, ch, -1, SQLITE_TRANSIENT);
  int r = sqlite3_step(st);
  if (r == SQLITE_ROW) {
    *run_id = sqlite3_column_int64(st, 0);
    uint64_t bc = (uint64_t)sqlite3_column_int64(st, 1), bi = (uint64_t)sqlite3_column_int64(st, 2);
    sqlite3_finalize(st);
    if (bc != ri->base_cycles || bi != ri->base_insns)
      return wi_fail(err, WI_ESTATE,
                     "%s: this sweep's baseline (%llu cycles) differs from the stored one (%llu cycles) for the same "
                     "trace and configuration: the model changed; write to a new database",
                     s->path, (unsigned long long)ri->base_cycles, (unsigned long long)bc);
    /* Remember the latest command. */
    sqlite3_stmt *up = NULL;
    if (sqlite3_prepare_v2(s->db, "UPDATE run SET command=?1, tool_version=?2 WHERE id=?3", -1, &up, NULL) == SQLITE_OK) {
      sqlite3_bind_text(up, 1, ri->command ? ri->command : "", -1, SQLITE_TRANSIENT);
      sqlite3_bind_text(up, 2, ri->tool_version ? ri->tool_version : "", -1, SQLITE_TRANSIENT);
      sqlite3_bind_int64(up, 3, *run_id);
      sqlite3_step(up);
    }
    sqlite3_finalize(up);
    return WI_OK;
  }
  sqlite3_finalize(st);
  if (r != SQLITE_DONE) return db_fail(s, err, "select run");
  if (sqlite3_prepare_v2(s->db,
                         "INSERT INTO run(trace_hash, config_hash, tool_version, command, trace_path, config_name,"
                         " base_cycles, base_insns, base_ipc, created) VALUES(?1,?2,?3,?4,?5,?6,?7,?8,?9,?10)",
                         -1, &st, NULL))
    return db_fail(s, err, "prepare");
  char date[32];
  time_t now = time(NULL);
  struct tm tmv;
  gmtime_r(&now, &tmv);
  strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", &tmv);
  sqlite3_bind_text(st, 1, th, -1, SQLITE_TRANSIENT);
  sqlite3_bind_text(st, 2, ch, -1, SQLITE_TRANSIENT);
  sqlite3_bind_text(st, 3, ri->tool_version ? ri->tool_version : "", -1, SQLITE_TRANSIENT);
  sqlite3_bind_text(st, 4, ri->command ? ri->command : "", -1, SQLITE_TRANSIENT);
  sqlite3_bind_text(st, 5, ri->trace_path ? ri->trace_path : "", -1, SQLITE_TRANSIENT);
  sqlite3_bind_text(st, 6, ri->config_name ? ri->config_name : "", -1, SQLITE_TRANSIENT);
  sqlite3_bind_int64(st, 7, (sqlite3_int64)ri->base_cycles);
  sqlite3_bind_int64(st, 8, (sqlite3_int64)ri->base_insns);
  sqlite3_bind_double(st, 9, ri->base_ipc);
  sqlite3_bind_text(st, 10, date, -1, SQLITE_TRANSIENT);
  r = sqlite3_step(st);
  sqlite3_finalize(st);
  if (r != SQLITE_DONE) return db_fail(s, err, "insert run");
  *run_id = sqlite3_last_insert_rowid(s->db);
  return WI_OK;
}

bool rp_store_has(rp_store *s, int64_t run_id, const char *interv) {
  sqlite3_reset(s->has);
  sqlite3_bind_int64(s->has, 1, run_id);
  sqlite3_bind_text(s->has, 2, interv, -1, SQLITE_TRANSIENT);
  bool found = sqlite3_step(s->has) == SQLITE_ROW;
  sqlite3_reset(s->has);
  return found;
}

int64_t rp_store_count(rp_store *s, int64_t run_id) {
  sqlite3_stmt *st = NULL;
  int64_t n = 0;
  if (sqlite3_prepare_v2(s->db, "SELECT count(*) FROM replay WHERE run_id=?1", -1, &st, NULL) == SQLITE_OK) {
    sqlite3_bind_int64(st, 1, run_id);
    if (sqlite3_step(st) == SQLITE_ROW) n = sqlite3_column_int64(st, 0);
  }
  sqlite3_finalize(st);
  return n;
}

wi_rc rp_store_put(rp_store *s, int64_t run_id, const rp_row *row, wi_err *err) {
  wi_rc rc;
  if (!s->in_txn) {
    if ((rc = exec(s, "BEGIN", err))) return rc;
    s->in_txn = true;
    s->txn_start = wi_now();
  }
  sqlite3_stmt *st = s->put;
  sqlite3_reset(st);
  sqlite3_bind_int64(st, 1, run_id);
  sqlite3_bind_int64(st, 2, row->idx);
  sqlite3_bind_text(st, 3, row->interv, -1, SQLITE_TRANSIENT);
  if (row->has_pc) sqlite3_bind_int64(st, 4, (sqlite3_int64)row->pc);
  else sqlite3_bind_null(st, 4);
  sqlite3_bind_int64(st, 5, (sqlite3_int64)row->cycles);
  sqlite3_bind_int64(st, 6, (sqlite3_int64)row->insns);
  sqlite3_bind_double(st, 7, row->ipc);
  sqlite3_bind_int64(st, 8, row->delta_cycles);
  sqlite3_bind_double(st, 9, row->delta_ipc);
  sqlite3_bind_double(st, 10, row->ipc_pct);
  sqlite3_bind_double(st, 11, row->mpki);
  sqlite3_bind_int64(st, 12, (sqlite3_int64)row->wp_fetched);
  sqlite3_bind_int64(st, 13, (sqlite3_int64)row->start_insn);
  sqlite3_bind_double(st, 14, row->wall_s);
  if (sqlite3_step(st) != SQLITE_DONE) return db_fail(s, err, "insert replay row");
  sqlite3_reset(st);
  if (++s->pending >= s->batch_rows || wi_now() - s->txn_start >= s->batch_s) return rp_store_flush(s, err);
  return WI_OK;
}

wi_rc rp_store_merge(rp_store *s, const char *in_path, int64_t *rows, wi_err *err) {
  wi_rc rc = rp_store_flush(s, err);
  if (rc) return rc;
  /* Check the input is a results database of our schema before attaching it. */
  {
    /* Read-only: a missing input must not be created, a foreign one must not be modified. */
    sqlite3 *in = NULL;
    if (sqlite3_open_v2(in_path, &in, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
      rc = wi_fail(err, WI_EIO, "%s: cannot open the results database: %s", in_path,
                   in ? sqlite3_errmsg(in) : "out of memory");
      sqlite3_close(in);
      return rc;
    }
    sqlite3_busy_timeout(in, 10000);
    rc = check_kind(in, in_path, err);
    if (!rc) {
      int64_t n_tables = 0;
      sqlite3_stmt *q = NULL;
      if (sqlite3_prepare_v2(in, "SELECT count(*) FROM sqlite_master WHERE name IN ('meta','run','replay')", -1, &q,
                             NULL) == SQLITE_OK &&
          sqlite3_step(q) == SQLITE_ROW)
        n_tables = sqlite3_column_int64(q, 0);
      sqlite3_finalize(q);
      if (n_tables != 3) rc = wi_fail(err, WI_ECORRUPT, "%s: not a whatif sweep results database", in_path);
    }
    if (!rc) {
      sqlite3_stmt *q = NULL;
      const char *v = NULL;
      if (sqlite3_prepare_v2(in, "SELECT value FROM meta WHERE key='schema_version'", -1, &q, NULL) == SQLITE_OK &&
          sqlite3_step(q) == SQLITE_ROW)
        v = (const char *)sqlite3_column_text(q, 0);
      if (!v || strcmp(v, RP_SCHEMA_VERSION))
        rc = wi_fail(err, WI_EVERSION, "%s: results database schema version %s (this whatif reads %s)", in_path,
                     v ? v : "?", RP_SCHEMA_VERSION);
      sqlite3_finalize(q);
    }
    sqlite3_close(in);
    if (rc) return rc;
  }
  sqlite3_stmt *st = NULL;
  if (sqlite3_prepare_v2(s->db, "ATTACH DATABASE ?1 AS src", -1, &st, NULL)) return db_fail(s, err, "attach");
  sqlite3_bind_text(st, 1, in_path, -1, SQLITE_TRANSIENT);
  int r = sqlite3_step(st);
  sqlite3_finalize(st);
  if (r != SQLITE_DONE) return db_fail(s, err, "attach");
  int64_t before = sqlite3_total_changes64(s->db);
  rc = exec(s,
            "BEGIN;"
            "INSERT OR IGNORE INTO run(trace_hash, config_hash, tool_version, command, trace_path, config_name,"
            "  base_cycles, base_insns, base_ipc, created)"
            "  SELECT trace_hash, config_hash, tool_version, command, trace_path, config_name, base_cycles,"
            "  base_insns, base_ipc, created FROM src.run;",
            err);
  int64_t mid = sqlite3_total_changes64(s->db);
  if (!rc) {
    /* Runs of the same (trace, config) must agree on the baseline. */
    sqlite3_stmt *q = NULL;
    if (sqlite3_prepare_v2(s->db,
                           "SELECT count(*) FROM run r JOIN src.run x ON r.trace_hash=x.trace_hash AND "
                           "r.config_hash=x.config_hash WHERE r.base_cycles != x.base_cycles OR r.base_insns != x.base_insns",
                           -1, &q, NULL) == SQLITE_OK &&
        sqlite3_step(q) == SQLITE_ROW && sqlite3_column_int64(q, 0) > 0)
      rc = wi_fail(err, WI_ESTATE, "%s: a run of %s has the same trace and configuration but a different baseline "
                   "(different model versions): not merged", s->path, in_path);
    sqlite3_finalize(q);
  }
  if (!rc)
    rc = exec(s,
              "INSERT OR IGNORE INTO replay(run_id, idx, interv, pc, cycles, insns, ipc, delta_cycles, delta_ipc,"
              "  ipc_pct, mpki, wp_fetched, start_insn, wall_s)"
              "  SELECT r.id, x.idx, x.interv, x.pc, x.cycles, x.insns, x.ipc, x.delta_cycles, x.delta_ipc,"
              "  x.ipc_pct, x.mpki, x.wp_fetched, x.start_insn, x.wall_s"
              "  FROM src.replay x JOIN src.run xr ON x.run_id = xr.id"
              "  JOIN run r ON r.trace_hash = xr.trace_hash AND r.config_hash = xr.config_hash"
              "  ORDER BY r.id, x.idx;",
              err);
  int64_t after = sqlite3_total_changes64(s->db);
  if (!rc) rc = exec(s, "COMMIT", err);
  else exec(s, "ROLLBACK", NULL);
  wi_err e2;
  exec(s, "DETACH DATABASE src", &e2);
  if (rows) *rows = rc ? 0 : after - mid;
  (void)before;
  return rc;
}

/* mfir_write.c — the bulk SQLite writer of MFIR: schema, multi-row prepared INSERTs in one
 * transaction, optionally on a writer thread; indexes and views after the bulk insert. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mfir_int.h"

/* ---- schema (documented in mfir/SCHEMA.md; keep both in step) ------------------------------------ */

const mw_table mw_tables[MT_NUM] = {
  [MT_FLOW] = {"cflow", FC_NUM,
               "CREATE TABLE cflow(\n"
               "  fid INTEGER PRIMARY KEY, pc INTEGER NOT NULL,\n"
               "  fetch INTEGER, dispatch INTEGER, issue INTEGER, complete INTEGER, retire INTEGER,\n"
               "  rob INTEGER, sched INTEGER, port INTEGER, slots INTEGER, flags INTEGER NOT NULL,\n"
               "  d_kind INTEGER, d_by INTEGER, d_rid INTEGER, d_cyc INTEGER,\n"
               "  i_kind INTEGER, i_by INTEGER, i_rid INTEGER, i_cyc INTEGER,\n"
               "  c_kind INTEGER, c_by INTEGER, c_rid INTEGER, c_cyc INTEGER,\n"
               "  r_kind INTEGER, r_by INTEGER, r_rid INTEGER, r_cyc INTEGER,\n"
               "  p1 INTEGER, p2 INTEGER, p3 INTEGER)"},
  /* Wrong-path fids arrive in decreasing order (-1 - n): a descending key appends. */
  [MT_WFLOW] = {"wflow", WC_NUM,
                "CREATE TABLE wflow(\n"
                "  fid INTEGER NOT NULL, pc INTEGER NOT NULL,\n"
                "  fetch INTEGER, dispatch INTEGER, issue INTEGER, complete INTEGER, retire INTEGER,\n"
                "  rob INTEGER, sched INTEGER, port INTEGER, slots INTEGER, flags INTEGER NOT NULL,\n"
                "  d_kind INTEGER, d_by INTEGER, d_cyc INTEGER, c_kind INTEGER,\n"
                "  r_kind INTEGER, r_by INTEGER, r_cyc INTEGER,\n"
                "  PRIMARY KEY(fid DESC)) WITHOUT ROWID"},
  [MT_DEPX] = {"dep_x", 3, "CREATE TABLE dep_x(consumer INTEGER NOT NULL, producer INTEGER NOT NULL, regs INTEGER)"},
  [MT_MEMTX] = {"memtx", XC_NUM,
                "CREATE TABLE memtx(\n"
                "  id INTEGER PRIMARY KEY, fid INTEGER, kind INTEGER NOT NULL, addr INTEGER NOT NULL,\n"
                "  cycle INTEGER NOT NULL, level INTEGER NOT NULL, fill INTEGER, set_rid INTEGER,\n"
                "  mshr1 INTEGER, mshr2 INTEGER, mshr3 INTEGER, dram INTEGER, flags INTEGER NOT NULL,\n"
                "  evictor INTEGER, evict_cycle INTEGER)"},
  [MT_SQUASH] = {"squash", 7,
                 "CREATE TABLE squash(cycle INTEGER NOT NULL, by_fid INTEGER, cause INTEGER NOT NULL,\n"
                 "  wrong INTEGER NOT NULL, n INTEGER NOT NULL, first_fid INTEGER, last_fid INTEGER)"},
  [MT_FLUSH] = {"flush", 10,
                "CREATE TABLE flush(fid INTEGER NOT NULL, pc INTEGER, fetch INTEGER, dispatch INTEGER,\n"
                "  issue INTEGER, complete INTEGER, squash INTEGER NOT NULL, slots INTEGER,\n"
                "  by_fid INTEGER, cause INTEGER NOT NULL)"},
  [MT_SLOT] = {"slot", 10,
               "CREATE TABLE slot(cycle INTEGER NOT NULL, n_cycles INTEGER NOT NULL,\n"
               "  retiring INTEGER NOT NULL, bad_branch INTEGER NOT NULL, bad_clear INTEGER NOT NULL,\n"
               "  fe_latency INTEGER NOT NULL, fe_bandwidth INTEGER NOT NULL, be_memory INTEGER NOT NULL,\n"
               "  be_core INTEGER NOT NULL, filled INTEGER NOT NULL)"},
  [MT_MEMBLOCK] = {"mem_block", 5,
                   "CREATE TABLE mem_block(cycle INTEGER NOT NULL, level INTEGER NOT NULL, rid INTEGER,\n"
                   "  fid INTEGER, holder INTEGER)"},
};

static const char static_schema[] =
  "CREATE TABLE meta(key TEXT PRIMARY KEY, value) WITHOUT ROWID;\n"
  "CREATE TABLE kind(id INTEGER PRIMARY KEY, name TEXT NOT NULL, stage TEXT);\n"
  "CREATE TABLE pc(pc INTEGER PRIMARY KEY, sid INTEGER, len INTEGER, asm TEXT, class TEXT,\n"
  "  branch TEXT, function TEXT, object TEXT, file TEXT, line INTEGER, count INTEGER NOT NULL,\n"
  "  wrong_count INTEGER NOT NULL);\n"
  "CREATE TABLE resource(rid INTEGER PRIMARY KEY, name TEXT NOT NULL, type TEXT NOT NULL,\n"
  "  level INTEGER, uses INTEGER NOT NULL);\n";

const char mw_post_sql[] =
  "CREATE VIEW flow AS\n"
  "  SELECT fid, pc, fetch, dispatch, issue, complete, retire, rob, sched, port, slots, flags,\n"
  "    d_kind, d_by, d_rid, d_cyc, i_kind, i_by, i_rid, i_cyc, c_kind, c_by, c_rid, c_cyc,\n"
  "    r_kind, r_by, r_rid, r_cyc, p1, p2, p3 FROM cflow\n"
  "  UNION ALL\n"
  "  SELECT fid, pc, fetch, dispatch, issue, complete, retire, rob, sched, port, slots, flags,\n"
  "    d_kind, d_by, NULL, d_cyc, CASE WHEN issue IS NOT NULL THEN 9 END, NULL, NULL, issue - dispatch,\n"
  "    c_kind, NULL, NULL, complete - issue, r_kind, r_by, NULL, r_cyc, NULL, NULL, NULL FROM wflow;\n"
  "CREATE INDEX memtx_fid ON memtx(fid);\n"
  "CREATE INDEX dep_x_consumer ON dep_x(consumer);\n"
  "CREATE INDEX flush_fid ON flush(fid);\n"
  "CREATE INDEX squash_by ON squash(by_fid);\n"
  "CREATE VIEW dep(consumer, producer) AS\n"
  "  SELECT fid, p1 FROM cflow WHERE p1 IS NOT NULL\n"
  "  UNION ALL SELECT fid, p2 FROM cflow WHERE p2 IS NOT NULL\n"
  "  UNION ALL SELECT fid, p3 FROM cflow WHERE p3 IS NOT NULL\n"
  "  UNION ALL SELECT consumer, producer FROM dep_x;\n"
  "CREATE VIEW edge(type, stage, kind, src, dst, rid, cycles) AS\n"
  "  SELECT 'bind', 'D', d_kind, coalesce(d_by, fid), fid, d_rid, d_cyc FROM cflow WHERE d_kind IS NOT NULL\n"
  "  UNION ALL SELECT 'bind', 'I', i_kind, coalesce(i_by, fid), fid, i_rid, i_cyc FROM cflow WHERE i_kind IS NOT NULL\n"
  "  UNION ALL SELECT 'bind', 'C', c_kind, coalesce(c_by, fid), fid, c_rid, c_cyc FROM cflow WHERE c_kind IS NOT NULL\n"
  "  UNION ALL SELECT 'bind', 'R', r_kind, coalesce(r_by, fid), fid, r_rid, r_cyc FROM cflow WHERE r_kind IS NOT NULL\n"
  "  UNION ALL SELECT 'bind', 'D', d_kind, coalesce(d_by, fid), fid, NULL, d_cyc FROM wflow WHERE d_kind IS NOT NULL\n"
  "  UNION ALL SELECT 'order', 'F', 40, fid - 1, fid, NULL, NULL FROM cflow\n"
  "    WHERE fid > (SELECT min(fid) FROM cflow)\n"
  "  UNION ALL SELECT 'data', NULL, NULL, producer, consumer, NULL, NULL FROM dep\n"
  "  UNION ALL SELECT 'squash', 'R', r_kind, r_by, fid, NULL, r_cyc FROM wflow\n"
  "  UNION ALL SELECT 'squash', 'R', 43 + cause, by_fid, fid, NULL, NULL FROM flush\n"
  "  UNION ALL SELECT 'spawn', NULL, kind, fid, id, NULL, fill - cycle FROM memtx WHERE fid IS NOT NULL\n"
  "  UNION ALL SELECT 'evict', NULL, 46, evictor, id, set_rid, cycle - evict_cycle FROM memtx\n"
  "    WHERE evictor IS NOT NULL\n"
  "  UNION ALL SELECT 'contention', 'I', 14, holder, fid, rid, NULL FROM mem_block WHERE holder IS NOT NULL\n"
  "  UNION ALL SELECT 'attribution', NULL, NULL, fid, pc, NULL, NULL FROM cflow\n"
  "  UNION ALL SELECT 'attribution', NULL, NULL, fid, pc, NULL, NULL FROM wflow;\n"
  "CREATE VIEW occupancy(rid, fid, acquire, release) AS\n"
  "  SELECT rob, fid, dispatch, retire FROM flow WHERE rob IS NOT NULL\n"
  "  UNION ALL SELECT sched, fid, dispatch, coalesce(issue, retire) FROM flow WHERE sched IS NOT NULL\n"
  "  UNION ALL SELECT port, fid, issue, issue + 1 FROM flow WHERE port IS NOT NULL\n"
  "  UNION ALL SELECT mshr1, fid, cycle, fill FROM memtx WHERE mshr1 IS NOT NULL\n"
  "  UNION ALL SELECT mshr2, fid, cycle, fill FROM memtx WHERE mshr2 IS NOT NULL\n"
  "  UNION ALL SELECT mshr3, fid, cycle, fill FROM memtx WHERE mshr3 IS NOT NULL\n"
  "  UNION ALL SELECT dram, fid, cycle, fill FROM memtx WHERE dram IS NOT NULL;\n"
  "CREATE VIEW topdown(category, slots) AS\n"
  "  SELECT 'retiring', (SELECT coalesce(sum(slots), 0) FROM cflow)\n"
  "    + (SELECT coalesce(sum(retiring * n_cycles), 0) FROM slot)\n"
  "  UNION ALL SELECT 'bad_branch', (SELECT coalesce(sum(slots), 0) FROM wflow WHERE r_kind = 43)\n"
  "    + (SELECT coalesce(sum(slots), 0) FROM flush WHERE cause = 0)\n"
  "    + (SELECT coalesce(sum(bad_branch * n_cycles), 0) FROM slot)\n"
  "  UNION ALL SELECT 'bad_clear', (SELECT coalesce(sum(slots), 0) FROM wflow WHERE r_kind = 44)\n"
  "    + (SELECT coalesce(sum(slots), 0) FROM flush WHERE cause = 1)\n"
  "    + (SELECT coalesce(sum(bad_clear * n_cycles), 0) FROM slot)\n"
  "  UNION ALL SELECT 'fe_latency', (SELECT coalesce(sum(fe_latency * n_cycles), 0) FROM slot)\n"
  "  UNION ALL SELECT 'fe_bandwidth', (SELECT coalesce(sum(fe_bandwidth * n_cycles), 0) FROM slot)\n"
  "  UNION ALL SELECT 'be_memory', (SELECT coalesce(sum(be_memory * n_cycles), 0) FROM slot)\n"
  "  UNION ALL SELECT 'be_core', (SELECT coalesce(sum(be_core * n_cycles), 0) FROM slot);\n"
  "CREATE VIEW attribution(fid, pc, asm, function, object, file, line) AS\n"
  "  SELECT f.fid, f.pc, p.asm, p.function, p.object, p.file, p.line FROM flow f JOIN pc p ON p.pc = f.pc;\n";

_Static_assert(MK_FETCH_ORDER == 40 && MK_SQUASH_BRANCH == 43 && MK_SQUASH_CLEAR == 44 && MK_EVICTED == 46,
               "kind ids are spelled out in the views above");
_Static_assert(OB_MSHR == 14, "kind id spelled out in the edge view");

#define MW_BLOCK_ROWS 1024u
#define MW_QUEUE_MAX 6 /* blocks waiting for the writer thread (back-pressure beyond) */

/* ---- writing blocks ------------------------------------------------------------------------------- */


static wi_rc sql_fail(sqlite3 *db, wi_err *err, const char *what) {
  return wi_fail(err, WI_EIO, "mfir: %s: %s", what, db ? sqlite3_errmsg(db) : "cannot open");
}

/* ---- the block as a virtual table --------------------------------------------------------------
 * An eponymous table `mfir_block(c0 .. c30)` whose rows are the rows of w->vt_block; columns past
 * the block's table width read as NULL. */

typedef struct vt_tab {
  sqlite3_vtab base;
  mfir_writer *w;
} vt_tab;

typedef struct vt_cur {
  sqlite3_vtab_cursor base;
  uint32_t row;
} vt_cur;

static int vt_connect(sqlite3 *db, void *aux, int argc, const char *const *argv, sqlite3_vtab **out, char **err) {
  (void)argc;
  (void)argv;
  (void)err;
  char sql[512];
  size_t p = (size_t)snprintf(sql, sizeof sql, "CREATE TABLE x(c0");
  for (int i = 1; i < FC_NUM; i++) p += (size_t)snprintf(sql + p, sizeof sql - p, ",c%d", i);
  snprintf(sql + p, sizeof sql - p, ")");
  int rc = sqlite3_declare_vtab(db, sql);
  if (rc != SQLITE_OK) return rc;
  vt_tab *t = sqlite3_malloc(sizeof *t);
  if (!t) return SQLITE_NOMEM;
  memset(t, 0, sizeof *t);
  t->w = aux;
  *out = &t->base;
  return SQLITE_OK;
}

static int vt_best_index(sqlite3_vtab *t, sqlite3_index_info *ii) {
  (void)t;
  ii->estimatedCost = 1e6;
  ii->estimatedRows = MW_BLOCK_ROWS;
  return SQLITE_OK;
}

static int vt_disconnect(sqlite3_vtab *t) {
  sqlite3_free(t);
  return SQLITE_OK;
}

static int vt_open(sqlite3_vtab *t, sqlite3_vtab_cursor **out) {
  (void)t;
  vt_cur *c = sqlite3_malloc(sizeof *c);
  if (!c) return SQLITE_NOMEM;
  memset(c, 0, sizeof *c);
  *out = &c->base;
  return SQLITE_OK;
}

static int vt_close(sqlite3_vtab_cursor *c) {
  sqlite3_free(c);
  return SQLITE_OK;
}

static int vt_filter(sqlite3_vtab_cursor *c, int idx, const char *s, int argc, sqlite3_value **argv) {
  (void)idx;
  (void)s;
  (void)argc;
  (void)argv;
  ((vt_cur *)c)->row = 0;
  return SQLITE_OK;
}

static int vt_next(sqlite3_vtab_cursor *c) {
  ((vt_cur *)c)->row++;
  return SQLITE_OK;
}

static int vt_eof(sqlite3_vtab_cursor *c) {
  const mw_block *b = ((vt_tab *)c->pVtab)->w->vt_block;
  return !b || ((vt_cur *)c)->row >= b->n;
}

static int vt_column(sqlite3_vtab_cursor *c, sqlite3_context *ctx, int col) {
  const mw_block *b = ((vt_tab *)c->pVtab)->w->vt_block;
  int nc = mw_tables[b->table].ncols;
  int64_t v = col < nc ? b->v[(size_t)((vt_cur *)c)->row * (size_t)nc + (size_t)col] : MW_NULL;
  if (v == MW_NULL) sqlite3_result_null(ctx);
  else sqlite3_result_int64(ctx, v);
  return SQLITE_OK;
}

static int vt_rowid(sqlite3_vtab_cursor *c, sqlite3_int64 *out) {
  *out = ((vt_cur *)c)->row;
  return SQLITE_OK;
}

static const sqlite3_module vt_module = {
  .iVersion = 1,
  .xCreate = NULL, /* eponymous only: never stored in the file */
  .xConnect = vt_connect,
  .xBestIndex = vt_best_index,
  .xDisconnect = vt_disconnect,
  .xOpen = vt_open,
  .xClose = vt_close,
  .xFilter = vt_filter,
  .xNext = vt_next,
  .xEof = vt_eof,
  .xColumn = vt_column,
  .xRowid = vt_rowid,
};

static wi_rc prepare_insert(mfir_writer *w, int t, wi_err *err) {
  const mw_table *tb = &mw_tables[t];
  char sql[512];
  size_t p = (size_t)snprintf(sql, sizeof sql, "INSERT INTO %s SELECT c0", tb->name);
  for (int c = 1; c < tb->ncols; c++) p += (size_t)snprintf(sql + p, sizeof sql - p, ",c%d", c);
  snprintf(sql + p, sizeof sql - p, " FROM mfir_block");
  if (sqlite3_prepare_v3(w->db, sql, -1, SQLITE_PREPARE_PERSISTENT, &w->insert[t], NULL) != SQLITE_OK)
    return sql_fail(w->db, err, "preparing the bulk insert");
  return WI_OK;
}

/* Insert one block (writer thread or inline). Errors are kept in w->rc / w->errmsg. */
static void write_block(mfir_writer *w, const mw_block *b) {
  if (w->rc != SQLITE_OK || w->discard || !b->n) return;
  sqlite3_stmt *st = w->insert[b->table];
  w->vt_block = b;
  int rc = sqlite3_step(st);
  sqlite3_reset(st);
  w->vt_block = NULL;
  if (rc != SQLITE_DONE) {
    w->rc = rc;
    snprintf(w->errmsg, sizeof w->errmsg, "inserting into %s: %s", mw_tables[b->table].name, sqlite3_errmsg(w->db));
  }
}

static void *writer_main(void *arg) {
  mfir_writer *w = arg;
  pthread_mutex_lock(&w->mu);
  for (;;) {
    while (!w->qhead && !w->stop) pthread_cond_wait(&w->cv, &w->mu);
    mw_block *b = w->qhead;
    if (!b) break; /* stop with an empty queue */
    w->qhead = b->next;
    if (!w->qhead) w->qtail = NULL;
    pthread_mutex_unlock(&w->mu);
    write_block(w, b);
    pthread_mutex_lock(&w->mu);
    b->next = w->freel;
    w->freel = b;
    w->queued--;
    pthread_cond_broadcast(&w->cv);
  }
  pthread_mutex_unlock(&w->mu);
  return NULL;
}

static mw_block *new_block(mfir_writer *w, int table) {
  mw_block *b = NULL;
  if (w->threaded) {
    pthread_mutex_lock(&w->mu);
    /* Blocks are recycled across tables: size them for the widest table. */
    if (w->freel) {
      b = w->freel;
      w->freel = b->next;
    }
    pthread_mutex_unlock(&w->mu);
  } else if (w->freel) {
    b = w->freel;
    w->freel = b->next;
  }
  if (!b) b = xmalloc(sizeof *b + (size_t)MW_BLOCK_ROWS * FC_NUM * sizeof(int64_t));
  b->next = NULL;
  b->table = table;
  b->n = 0;
  b->cap = MW_BLOCK_ROWS;
  return b;
}

static void submit(mfir_writer *w, mw_block *b) {
  if (!w->threaded) {
    write_block(w, b);
    b->next = w->freel;
    w->freel = b;
    return;
  }
  pthread_mutex_lock(&w->mu);
  while (w->queued >= MW_QUEUE_MAX) pthread_cond_wait(&w->cv, &w->mu);
  if (w->qtail) w->qtail->next = b;
  else w->qhead = b;
  w->qtail = b;
  w->queued++;
  pthread_cond_broadcast(&w->cv);
  pthread_mutex_unlock(&w->mu);
}

int64_t *mw_row_slow(mfir_writer *w, int table) {
  if (w->cur[table]) submit(w, w->cur[table]);
  w->cur[table] = new_block(w, table);
  return mw_row(w, table);
}

wi_rc mw_exec(mfir_writer *w, const char *sql, wi_err *err) {
  char *msg = NULL;
  if (sqlite3_exec(w->db, sql, NULL, NULL, &msg) != SQLITE_OK) {
    wi_rc rc = wi_fail(err, WI_EIO, "mfir: %s", msg ? msg : sqlite3_errmsg(w->db));
    sqlite3_free(msg);
    return rc;
  }
  return WI_OK;
}

wi_rc mw_open(mfir_writer *w, const char *path, bool threaded, wi_err *err) {
  memset(w, 0, sizeof *w);
  unlink(path);
  /* One connection used by one thread at a time: no connection mutex needed. */
  if (sqlite3_open_v2(path, &w->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, NULL) !=
      SQLITE_OK) {
    wi_rc rc = wi_fail(err, WI_EIO, "mfir: cannot create %s: %s", path, w->db ? sqlite3_errmsg(w->db) : "?");
    sqlite3_close(w->db);
    w->db = NULL;
    return rc;
  }
  /* A private temporary file renamed into place when complete: no journal, no syncs. */
  if (mw_exec(w, "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; PRAGMA locking_mode=EXCLUSIVE;"
                 "PRAGMA cache_size=-65536; PRAGMA temp_store=MEMORY;", err))
    return err->rc;
  for (int t = 0; t < MT_NUM; t++)
    if (mw_exec(w, mw_tables[t].create, err)) return err->rc;
  if (mw_exec(w, static_schema, err)) return err->rc;
  if (mw_exec(w, "BEGIN", err)) return err->rc;
  if (sqlite3_create_module_v2(w->db, "mfir_block", &vt_module, w, NULL) != SQLITE_OK)
    return sql_fail(w->db, err, "registering the block table");
  for (int t = 0; t < MT_NUM; t++)
    if (prepare_insert(w, t, err)) return err->rc;
  w->threaded = threaded;
  if (threaded) {
    pthread_mutex_init(&w->mu, NULL);
    pthread_cond_init(&w->cv, NULL);
    if (pthread_create(&w->th, NULL, writer_main, w) != 0) {
      /* No thread: write inline. */
      pthread_mutex_destroy(&w->mu);
      pthread_cond_destroy(&w->cv);
      w->threaded = false;
    } else {
      w->started = true;
    }
  }
  return WI_OK;
}

wi_rc mw_drain(mfir_writer *w, wi_err *err) {
  for (int t = 0; t < MT_NUM; t++) {
    if (w->cur[t] && w->cur[t]->n) submit(w, w->cur[t]);
    else if (w->cur[t]) {
      w->cur[t]->next = w->freel;
      w->freel = w->cur[t];
    }
    w->cur[t] = NULL;
  }
  if (w->started) {
    pthread_mutex_lock(&w->mu);
    w->stop = true;
    pthread_cond_broadcast(&w->cv);
    pthread_mutex_unlock(&w->mu);
    pthread_join(w->th, NULL);
    pthread_mutex_destroy(&w->mu);
    pthread_cond_destroy(&w->cv);
    w->started = false;
    w->threaded = false;
  }
  if (w->rc != SQLITE_OK) return wi_fail(err, WI_EIO, "mfir: %s", w->errmsg);
  return WI_OK;
}

void mw_close(mfir_writer *w) {
  if (w->started) {
    wi_err e;
    mw_drain(w, &e);
  }
  for (int t = 0; t < MT_NUM; t++) {
    sqlite3_finalize(w->insert[t]);
    w->insert[t] = NULL;
    free(w->cur[t]);
    w->cur[t] = NULL;
  }
  while (w->freel) {
    mw_block *b = w->freel;
    w->freel = b->next;
    free(b);
  }
  if (w->db) sqlite3_close(w->db);
  w->db = NULL;
}

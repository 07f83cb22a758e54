/* mfir_write.c — the bulk writer of MFIR: the schema, rows gathered in blocks and encoded into the
 * bulk tables' b-tree pages (mfir_btree.c), optionally on a writer thread; then SQLite again for
 * the rows the page writer left, the static tables, indexes and views. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mfir_int.h"

/* ---- schema (documented in mfir/SCHEMA.md; keep both in step) ------------------------------------ */

const mw_table mw_tables[MT_NUM] = {
  [MT_FLOW] = {"cflow", FC_NUM, FC_FID, 1,
               "fid, pc, fetch, dispatch, issue, complete, retire, rob, sched, port, slots, flags, d_kind, d_by,"
               " d_rid, d_cyc, i_kind, i_by, i_rid, i_cyc, c_kind, c_by, c_rid, c_cyc, r_kind, r_by, r_rid, r_cyc,"
               " p1, p2, p3, f_by, f_rid",
               "CREATE TABLE cflow(\n"
               "  fid INTEGER PRIMARY KEY, pc INTEGER NOT NULL,\n"
               "  fetch INTEGER, dispatch INTEGER, issue INTEGER, complete INTEGER, retire INTEGER,\n"
               "  rob INTEGER, sched INTEGER, port INTEGER, slots INTEGER, flags INTEGER NOT NULL,\n"
               "  d_kind INTEGER, d_by INTEGER, d_rid INTEGER, d_cyc INTEGER,\n"
               "  i_kind INTEGER, i_by INTEGER, i_rid INTEGER, i_cyc INTEGER,\n"
               "  c_kind INTEGER, c_by INTEGER, c_rid INTEGER, c_cyc INTEGER,\n"
               "  r_kind INTEGER, r_by INTEGER, r_rid INTEGER, r_cyc INTEGER,\n"
               "  p1 INTEGER, p2 INTEGER, p3 INTEGER, f_by INTEGER, f_rid INTEGER)"},
  /* Wrong-path fids (-1 - n) are written in decreasing order (the capture sorts them). */
  [MT_WFLOW] = {"wflow", WC_NUM, WC_FID, -1,
                "fid, pc, fetch, retire, flags, slots, r_kind, r_by, r_cyc, dispatch, issue, complete, rob, sched,"
                " port, d_kind, d_by, d_cyc, c_kind",
                "CREATE TABLE wflow(\n"
                "  fid INTEGER PRIMARY KEY, pc INTEGER NOT NULL, fetch INTEGER, retire INTEGER,\n"
                "  flags INTEGER NOT NULL, slots INTEGER, r_kind INTEGER, r_by INTEGER, r_cyc INTEGER,\n"
                "  dispatch INTEGER, issue INTEGER, complete INTEGER, rob INTEGER, sched INTEGER, port INTEGER,\n"
                "  d_kind INTEGER, d_by INTEGER, d_cyc INTEGER, c_kind INTEGER)"},
  [MT_DEPX] = {"dep_x", 3, -1, 1, "consumer, producer, regs",
               "CREATE TABLE dep_x(consumer INTEGER NOT NULL, producer INTEGER NOT NULL, regs INTEGER)"},
  [MT_MEMTX] = {"memtx", XC_NUM, XC_ID, 1,
                "id, fid, kind, addr, cycle, level, fill, set_rid, mshr1, mshr2, mshr3, dram, flags, evictor,"
                " evict_cycle",
                "CREATE TABLE memtx(\n"
                "  id INTEGER PRIMARY KEY, fid INTEGER, kind INTEGER NOT NULL, addr INTEGER NOT NULL,\n"
                "  cycle INTEGER NOT NULL, level INTEGER NOT NULL, fill INTEGER, set_rid INTEGER,\n"
                "  mshr1 INTEGER, mshr2 INTEGER, mshr3 INTEGER, dram INTEGER, flags INTEGER NOT NULL,\n"
                "  evictor INTEGER, evict_cycle INTEGER)"},
  [MT_SQUASH] = {"squash", 7, -1, 1, "cycle, by_fid, cause, wrong, n, first_fid, last_fid",
                 "CREATE TABLE squash(cycle INTEGER NOT NULL, by_fid INTEGER, cause INTEGER NOT NULL,\n"
                 "  wrong INTEGER NOT NULL, n INTEGER NOT NULL, first_fid INTEGER, last_fid INTEGER)"},
  [MT_FLUSH] = {"flush", 10, -1, 1, "fid, pc, fetch, dispatch, issue, complete, squash, slots, by_fid, cause",
                "CREATE TABLE flush(fid INTEGER NOT NULL, pc INTEGER, fetch INTEGER, dispatch INTEGER,\n"
                "  issue INTEGER, complete INTEGER, squash INTEGER NOT NULL, slots INTEGER,\n"
                "  by_fid INTEGER, cause INTEGER NOT NULL)"},
  [MT_SLOT] = {"slot", 10, -1, 1,
               "cycle, n_cycles, retiring, bad_branch, bad_clear, fe_latency, fe_bandwidth, be_memory, be_core,"
               " filled",
               "CREATE TABLE slot(cycle INTEGER NOT NULL, n_cycles INTEGER NOT NULL,\n"
               "  retiring INTEGER NOT NULL, bad_branch INTEGER NOT NULL, bad_clear INTEGER NOT NULL,\n"
               "  fe_latency INTEGER NOT NULL, fe_bandwidth INTEGER NOT NULL, be_memory INTEGER NOT NULL,\n"
               "  be_core INTEGER NOT NULL, filled INTEGER NOT NULL)"},
  [MT_MEMBLOCK] = {"mem_block", 5, -1, 1, "cycle, level, rid, fid, holder",
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
  "  UNION ALL SELECT 'order', 'F', 40, fid - 1, fid, f_rid, NULL FROM cflow\n"
  "    WHERE fid > (SELECT min(fid) FROM cflow)\n"
  "  UNION ALL SELECT 'order', 'F', 48, f_by, fid, NULL, NULL FROM cflow WHERE f_by IS NOT NULL\n"
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

_Static_assert(MK_FETCH_ORDER == 40 && MK_SQUASH_BRANCH == 43 && MK_SQUASH_CLEAR == 44 && MK_EVICTED == 46 &&
                   MK_FETCH_SLOT == 48,
               "kind ids are spelled out in the views above");
_Static_assert(OB_MSHR == 14, "kind id spelled out in the edge view");

#define MW_BLOCK_ROWS 1024u
#define MW_QUEUE_MAX 16 /* blocks waiting for the writer thread (back-pressure beyond) */
#define MW_BATCH 6      /* blocks that wake the writer thread */
#define MW_PAGE_SIZE 8192 /* bytes; larger pages make the files' scans cheaper, not the writes */

static wi_rc sql_fail(sqlite3 *db, wi_err *err, const char *what) {
  return wi_fail(err, WI_EIO, "mfir: %s: %s", what, db ? sqlite3_errmsg(db) : "cannot open");
}

static void mw_fail(mfir_writer *w, const char *msg) {
  if (w->failed) return;
  w->failed = true;
  snprintf(w->errmsg, sizeof w->errmsg, "%s", msg);
}

/* ---- writing blocks ------------------------------------------------------------------------------- */

/* Encode one block into its table's pages (writer thread or inline); rows the page writer cannot
 * place are kept for SQLite. */
static void write_block(mfir_writer *w, const mw_block *b) {
  if (w->failed || w->discard || !b->n) return;
  const mw_table *tb = &mw_tables[b->table];
  bt_tree *t = &w->tree[b->table];
  for (uint32_t i = 0; i < b->n; i++) {
    const int64_t *v = b->v + (size_t)i * (size_t)tb->ncols;
    int64_t key = tb->key_col >= 0 ? v[tb->key_col] : (int64_t)++w->next_rowid[b->table];
    if (bt_append(t, key, v, tb->ncols, tb->key_col)) continue;
    VEC_RESERVE(w->deferred[b->table], w->deferred[b->table].n + (size_t)tb->ncols);
    memcpy(w->deferred[b->table].a + w->deferred[b->table].n, v, (size_t)tb->ncols * sizeof *v);
    w->deferred[b->table].n += (size_t)tb->ncols;
  }
  if (w->bf.failed) mw_fail(w, w->bf.errmsg);
}

/* The writer thread: sleeps until MW_BATCH blocks are queued (fewer wake-ups), takes them all,
 * writes them, gives them back; wakes the producer only when it waits for room. */
static void *writer_main(void *arg) {
  mfir_writer *w = arg;
  pthread_mutex_lock(&w->mu);
  for (;;) {
    while (w->queued < MW_BATCH && !w->stop) {
      w->sleeping = true;
      pthread_cond_wait(&w->cv, &w->mu);
      w->sleeping = false;
    }
    mw_block *list = w->qhead;
    if (!list) break; /* stop with an empty queue */
    w->qhead = w->qtail = NULL;
    pthread_mutex_unlock(&w->mu);
    mw_block *last = NULL;
    int n = 0;
    for (mw_block *b = list; b; b = b->next, n++) {
      write_block(w, b);
      last = b;
    }
    pthread_mutex_lock(&w->mu);
    last->next = w->freel;
    w->freel = list;
    w->queued -= n;
    if (w->waiting) pthread_cond_signal(&w->room);
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
  while (w->queued >= MW_QUEUE_MAX) {
    w->waiting = true;
    pthread_cond_wait(&w->room, &w->mu);
    w->waiting = false;
  }
  if (w->qtail) w->qtail->next = b;
  else w->qhead = b;
  w->qtail = b;
  w->queued++;
  if (w->sleeping && w->queued >= MW_BATCH) pthread_cond_signal(&w->cv);
  pthread_mutex_unlock(&w->mu);
}

mw_block *mw_next_block(mfir_writer *w, int table) {
  if (w->cur[table]) submit(w, w->cur[table]);
  return w->cur[table] = new_block(w, table);
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

/* Open w->path with SQLite: a private temporary renamed into place when complete, so no journal
 * and no syncs. One connection used by one thread at a time: no connection mutex. */
static wi_rc sql_open(mfir_writer *w, int flags, wi_err *err) {
  if (sqlite3_open_v2(w->path, &w->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX | flags, NULL) != SQLITE_OK) {
    wi_rc rc = wi_fail(err, WI_EIO, "mfir: cannot open %s: %s", w->path, w->db ? sqlite3_errmsg(w->db) : "?");
    sqlite3_close(w->db);
    w->db = NULL;
    return rc;
  }
  return mw_exec(w,
                 "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; PRAGMA locking_mode=EXCLUSIVE;"
                 "PRAGMA cache_size=-65536; PRAGMA temp_store=MEMORY;",
                 err);
}

wi_rc mw_open(mfir_writer *w, const char *path, bool threaded, wi_err *err) {
  memset(w, 0, sizeof *w);
  w->path = xstrdup(path);
  unlink(path);
  if (sql_open(w, SQLITE_OPEN_CREATE, err)) return err->rc;
  char pragma[96];
  snprintf(pragma, sizeof pragma, "PRAGMA page_size=%d; PRAGMA auto_vacuum=NONE;", MW_PAGE_SIZE);
  if (mw_exec(w, pragma, err)) return err->rc;
  for (int t = 0; t < MT_NUM; t++)
    if (mw_exec(w, mw_tables[t].create, err)) return err->rc;
  if (mw_exec(w, static_schema, err)) return err->rc;
  /* The root pages of the bulk tables, then SQLite lets go of the file. */
  uint32_t root[MT_NUM] = {0};
  sqlite3_stmt *st = NULL;
  if (sqlite3_prepare_v2(w->db, "SELECT rootpage FROM sqlite_schema WHERE type = 'table' AND name = ?", -1, &st,
                         NULL) != SQLITE_OK)
    return sql_fail(w->db, err, "reading the schema");
  for (int t = 0; t < MT_NUM; t++) {
    sqlite3_bind_text(st, 1, mw_tables[t].name, -1, SQLITE_STATIC);
    if (sqlite3_step(st) == SQLITE_ROW) root[t] = (uint32_t)sqlite3_column_int64(st, 0);
    sqlite3_reset(st);
    if (!root[t]) {
      sqlite3_finalize(st);
      return wi_fail(err, WI_EIO, "mfir: %s: no root page for table %s", path, mw_tables[t].name);
    }
  }
  sqlite3_finalize(st);
  if (sqlite3_close(w->db) != SQLITE_OK) return sql_fail(w->db, err, "closing after the schema");
  w->db = NULL;
  if (bt_open(&w->bf, path, err)) return err->rc;
  for (int t = 0; t < MT_NUM; t++) bt_tree_init(&w->tree[t], &w->bf, root[t], mw_tables[t].dir);
  w->trees = true;
  w->threaded = threaded;
  if (threaded) {
    pthread_mutex_init(&w->mu, NULL);
    pthread_cond_init(&w->cv, NULL);
    pthread_cond_init(&w->room, NULL);
    if (pthread_create(&w->th, NULL, writer_main, w) != 0) {
      /* No thread: write inline. */
      pthread_mutex_destroy(&w->mu);
      pthread_cond_destroy(&w->cv);
      pthread_cond_destroy(&w->room);
      w->threaded = false;
    } else {
      w->started = true;
    }
  }
  return WI_OK;
}

/* Stop the writer thread once its queue is empty. */
static void stop_thread(mfir_writer *w) {
  if (!w->started) return;
  pthread_mutex_lock(&w->mu);
  w->stop = true;
  pthread_cond_signal(&w->cv);
  pthread_mutex_unlock(&w->mu);
  pthread_join(w->th, NULL);
  pthread_mutex_destroy(&w->mu);
  pthread_cond_destroy(&w->cv);
  pthread_cond_destroy(&w->room);
  w->started = false;
  w->threaded = false;
}

/* Insert the rows the page writer left, through SQLite (w->db open, in the transaction). A table
 * without a key column gives them new rowids. */
static wi_rc insert_deferred(mfir_writer *w, wi_err *err) {
  for (int t = 0; t < MT_NUM; t++) {
    if (!w->deferred[t].n) continue;
    const mw_table *tb = &mw_tables[t];
    char sql[1024];
    size_t p = (size_t)snprintf(sql, sizeof sql, "INSERT INTO %s(%s) VALUES(?", tb->name, tb->cols);
    for (int c = 1; c < tb->ncols; c++) p += (size_t)snprintf(sql + p, sizeof sql - p, ",?");
    snprintf(sql + p, sizeof sql - p, ")");
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(w->db, sql, -1, &st, NULL) != SQLITE_OK) return sql_fail(w->db, err, "preparing an insert");
    wi_rc rc = WI_OK;
    for (size_t i = 0; i + (size_t)tb->ncols <= w->deferred[t].n && !rc; i += (size_t)tb->ncols) {
      const int64_t *v = w->deferred[t].a + i;
      for (int c = 0; c < tb->ncols; c++) {
        if (v[c] == MW_NULL) sqlite3_bind_null(st, c + 1);
        else sqlite3_bind_int64(st, c + 1, v[c]);
      }
      if (sqlite3_step(st) != SQLITE_DONE) {
        char what[64];
        snprintf(what, sizeof what, "inserting into %s", tb->name);
        rc = sql_fail(w->db, err, what);
      }
      sqlite3_reset(st);
    }
    sqlite3_finalize(st);
    if (rc) return rc;
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
  stop_thread(w);
  if (w->failed) return wi_fail(err, WI_EIO, "mfir: %s", w->errmsg);
  if (w->trees) {
    wi_rc rc = WI_OK;
    for (int t = 0; t < MT_NUM && !rc; t++) rc = bt_tree_finish(&w->tree[t]) ? WI_EIO : WI_OK;
    if (rc) rc = wi_fail(err, WI_EIO, "mfir: %s", w->bf.errmsg);
    else rc = bt_close(&w->bf, err);
    for (int t = 0; t < MT_NUM; t++) bt_tree_free(&w->tree[t]);
    w->trees = false;
    if (rc) return rc;
  }
  if (sql_open(w, 0, err) || mw_exec(w, "BEGIN", err)) return err->rc;
  return insert_deferred(w, err);
}

void mw_close(mfir_writer *w) {
  stop_thread(w);
  if (w->trees) {
    for (int t = 0; t < MT_NUM; t++) bt_tree_free(&w->tree[t]);
    bt_discard(&w->bf);
    w->trees = false;
  }
  for (int t = 0; t < MT_NUM; t++) {
    free(w->cur[t]);
    w->cur[t] = NULL;
    VEC_FREE(w->deferred[t]);
  }
  while (w->freel) {
    mw_block *b = w->freel;
    w->freel = b->next;
    free(b);
  }
  while (w->qhead) {
    mw_block *b = w->qhead;
    w->qhead = b->next;
    free(b);
  }
  if (w->db) sqlite3_close(w->db);
  w->db = NULL;
  free(w->path);
  w->path = NULL;
}

/* mfir_read.c — opening an MFIR database: meta, static PCs, scans of the bulk tables (from the
 * pages directly when possible), and the flows loaded into arrays for the walks (critical path,
 * root-cause chains). */
#include <stdlib.h>
#include <string.h>

#include "mfir_int.h"

wi_rc rd_prepare(mfir_db *d, const char *sql, sqlite3_stmt **st, wi_err *err) {
  if (sqlite3_prepare_v2(d->db, sql, -1, st, NULL) != SQLITE_OK)
    return wi_fail(err, WI_ECORRUPT, "%s: not an MFIR database (%s)", d->path, sqlite3_errmsg(d->db));
  return WI_OK;
}

/* Integer meta value; *ok false when absent or NULL. */
static int64_t meta_int(mfir_db *d, const char *key, bool *ok) {
  sqlite3_stmt *st = NULL;
  int64_t v = 0;
  *ok = false;
  if (sqlite3_prepare_v2(d->db, "SELECT value FROM meta WHERE key = ?", -1, &st, NULL) != SQLITE_OK) return 0;
  sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
  if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL) {
    v = sqlite3_column_int64(st, 0);
    *ok = true;
  }
  sqlite3_finalize(st);
  return v;
}

mfir_db *mfir_open(const char *path, wi_err *err) {
  mfir_db *d = xcalloc(1, sizeof *d);
  d->path = xstrdup(path);
  if (sqlite3_open_v2(path, &d->db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK) {
    wi_fail(err, WI_EIO, "%s: cannot open: %s", path, d->db ? sqlite3_errmsg(d->db) : "out of memory");
    mfir_close(d);
    return NULL;
  }
  bool ok = false, ok2, ok3, ok4;
  int64_t fmt = meta_int(d, "format", &ok);
  if (!ok) {
    wi_fail(err, WI_ECORRUPT, "%s: not an MFIR database (no meta.format)", path);
    mfir_close(d);
    return NULL;
  }
  if (fmt > MFIR_FORMAT) {
    wi_fail(err, WI_EVERSION, "%s: MFIR format %lld is newer than this whatif reads (%d)", path, (long long)fmt,
            MFIR_FORMAT);
    mfir_close(d);
    return NULL;
  }
  mfir_window *w = &d->win;
  w->first_fid = meta_int(d, "first_fid", &ok);
  w->last_fid = meta_int(d, "last_fid", &ok2);
  w->start_cycle = (uint64_t)meta_int(d, "start_cycle", &ok3);
  w->end_cycle = (uint64_t)meta_int(d, "end_cycle", &ok4);
  w->rename_width = (uint32_t)meta_int(d, "rename_width", &ok);
  if (!ok || !ok2 || !ok3 || !ok4 || w->last_fid < w->first_fid || w->end_cycle + 1 < w->start_cycle) {
    wi_fail(err, WI_ECORRUPT, "%s: meta table: the window (first_fid, last_fid, start_cycle, end_cycle) is missing or inconsistent",
            path);
    mfir_close(d);
    return NULL;
  }
  /* The window sizes the arrays of the walks: it must lie inside the flows actually stored (a
   * damaged meta table once asked for a 128 TB allocation). Both bounds are rowid look-ups. */
  sqlite3_stmt *st = NULL;
  wi_rc rc = rd_prepare(d, "SELECT min(fid), max(fid) FROM cflow", &st, err);
  if (!rc) {
    if (sqlite3_step(st) != SQLITE_ROW || sqlite3_column_type(st, 0) == SQLITE_NULL ||
        sqlite3_column_int64(st, 0) > w->first_fid || sqlite3_column_int64(st, 1) < w->last_fid)
      rc = wi_fail(err, WI_ECORRUPT, "%s: meta table: the window %lld..%lld is not in the cflow table", path,
                   (long long)w->first_fid, (long long)w->last_fid);
    sqlite3_finalize(st);
  }
  if (!rc && (w->rename_width < 1 || w->rename_width > 1024))
    rc = wi_fail(err, WI_ECORRUPT, "%s: meta table: rename_width %u is out of range", path, w->rename_width);
  if (rc) {
    mfir_close(d);
    return NULL;
  }
  w->total_cycles = w->end_cycle + 1 - w->start_cycle;
  w->insns = (uint64_t)(w->last_fid - w->first_fid) + 1;
  return d;
}

void mfir_close(mfir_db *d) {
  if (!d) return;
  sqlite3_finalize(d->wget);
  d->wget = NULL;
  if (d->db) sqlite3_close(d->db);
  free(d->path);
  map64_free(&d->pc_map);
  VEC_FREE(d->pcs);
  arena_free(d->strings);
  free(d->flows);
  free(d->flow_pc);
  map64_free(&d->wmap);
  VEC_FREE(d->wrecs);
  arena_free(d->warena);
  free(d);
}

void *mfir_sqlite(mfir_db *d) { return d->db; }

const mfir_window *mfir_get_window(const mfir_db *d) { return &d->win; }

/* ---- static PCs ------------------------------------------------------------------------------------ */

static const char *col_str(mfir_db *d, sqlite3_stmt *st, int i, const char *dflt) {
  const unsigned char *s = sqlite3_column_text(st, i);
  return s ? arena_strdup(d->strings, (const char *)s) : dflt;
}

static void load_pcs(mfir_db *d) {
  d->pcs_loaded = true;
  d->strings = arena_new(1 << 16);
  map64_init(&d->pc_map, 1024);
  sqlite3_stmt *st = NULL;
  if (sqlite3_prepare_v2(d->db, "SELECT pc, asm, function, file, line, count FROM pc", -1, &st, NULL) != SQLITE_OK)
    return;
  while (sqlite3_step(st) == SQLITE_ROW) {
    mfir_pcinfo p;
    p.pc = (uint64_t)sqlite3_column_int64(st, 0);
    p.asm_text = col_str(d, st, 1, "?");
    p.function = col_str(d, st, 2, "?");
    p.file = col_str(d, st, 3, "");
    p.line = (uint32_t)sqlite3_column_int64(st, 4);
    p.count = (uint64_t)sqlite3_column_int64(st, 5);
    VEC_PUSH(d->pcs, p);
    map64_put(&d->pc_map, p.pc ? p.pc : UINT64_MAX, (uint32_t)(d->pcs.n - 1));
  }
  sqlite3_finalize(st);
}

const mfir_pcinfo *mfir_pc_info(mfir_db *d, uint64_t pc) {
  if (!d->pcs_loaded) load_pcs(d);
  uint32_t *v = map64_get(&d->pc_map, pc ? pc : UINT64_MAX);
  return v ? &d->pcs.a[*v] : NULL;
}

/* ---- flows ------------------------------------------------------------------------------------------- */

static inline uint64_t col_time(sqlite3_stmt *st, int i) {
  return sqlite3_column_type(st, i) == SQLITE_NULL ? MFIR_NOTIME : (uint64_t)sqlite3_column_int64(st, i);
}
static inline int64_t col_fid(sqlite3_stmt *st, int i) {
  return sqlite3_column_type(st, i) == SQLITE_NULL ? MFIR_NOFID : sqlite3_column_int64(st, i);
}

/* ---- scans ------------------------------------------------------------------------------------------ */

wi_rc rd_scan(mfir_db *d, int table, int ncols, bt_row_fn fn, void *ctx, wi_err *err) {
  const mw_table *tb = &mw_tables[table];
  if (ncols <= 0 || ncols > tb->ncols) ncols = tb->ncols;
  sqlite3_stmt *st = NULL;
  wi_rc rc = rd_prepare(d, "SELECT rootpage, sql FROM sqlite_schema WHERE type = 'table' AND name = ?", &st, err);
  if (rc) return rc;
  sqlite3_bind_text(st, 1, tb->name, -1, SQLITE_STATIC);
  uint32_t root = 0;
  if (sqlite3_step(st) == SQLITE_ROW) {
    const char *sql = (const char *)sqlite3_column_text(st, 1);
    /* Read the pages directly only when the table is exactly as MFIR creates it. */
    if (sql && !strcmp(sql, tb->create)) root = (uint32_t)sqlite3_column_int64(st, 0);
  }
  sqlite3_finalize(st);
  if (root) {
    wi_err e;
    rc = bt_scan(d->path, root, ncols, tb->key_col, fn, ctx, &e);
    if (rc != WI_EINVAL) {
      if (rc) *err = e;
      return rc;
    }
  }
  /* Through SQLite. */
  char sql[512];
  snprintf(sql, sizeof sql, "SELECT %s FROM %s ORDER BY 1", tb->cols, tb->name);
  if ((rc = rd_prepare(d, sql, &st, err))) return rc;
  int have = sqlite3_column_count(st);
  int64_t *v = xmalloc((size_t)ncols * sizeof *v);
  int s;
  while ((s = sqlite3_step(st)) == SQLITE_ROW) {
    for (int i = 0; i < ncols; i++)
      v[i] = i >= have || sqlite3_column_type(st, i) == SQLITE_NULL ? MW_NULL : sqlite3_column_int64(st, i);
    if (fn(ctx, tb->key_col >= 0 && tb->key_col < ncols ? v[tb->key_col] : 0, v, ncols)) {
      s = SQLITE_DONE;
      break;
    }
  }
  if (s != SQLITE_DONE) rc = wi_fail(err, WI_ECORRUPT, "%s: reading %s: %s", d->path, tb->name, sqlite3_errmsg(d->db));
  sqlite3_finalize(st);
  free(v);
  return rc;
}

/* ---- flows ------------------------------------------------------------------------------------------- */

static inline uint64_t v_time(int64_t v) { return v == MW_NULL ? MFIR_NOTIME : (uint64_t)v; }

typedef struct load_ctx {
  mfir_db *d;
  wi_err *err;
  wi_rc rc;
} load_ctx;

static int load_row(void *ctx, int64_t rowid, const int64_t *v, int ncols) {
  (void)rowid;
  (void)ncols;
  load_ctx *l = ctx;
  mfir_db *d = l->d;
  int64_t fid = v[FC_FID];
  if (fid < d->win.first_fid || fid > d->win.last_fid) {
    l->rc = wi_fail(l->err, WI_ECORRUPT, "%s: flow %lld is outside the window in meta", d->path, (long long)fid);
    return 1;
  }
  size_t i = (size_t)(fid - d->win.first_fid);
  mfir_rec *r = &d->flows[i];
  d->flow_pc[i] = (uint64_t)v[FC_PC];
  d->n_flows++;
  memset(r, 0, sizeof *r);
  r->fid = fid;
  for (int k = 0; k < MFIR_NSTAGE; k++) r->t[k] = v_time(v[FC_FETCH + k]);
  r->by[MFIR_F] = v[FC_F_BY]; /* NULL (MFIR_NOFID) in files written before the column */
  r->rid[MFIR_F] = v[FC_F_RID] == MW_NULL ? OOO_RID_NONE : (uint32_t)v[FC_F_RID];
  for (int k = 0; k < 4; k++) {
    const int64_t *b = v + FC_D_KIND + 4 * k; /* kind, by, rid, cyc */
    r->kind[MFIR_D + k] = b[0] == MW_NULL ? 0 : (uint8_t)b[0];
    r->by[MFIR_D + k] = b[1]; /* MW_NULL is MFIR_NOFID */
    r->rid[MFIR_D + k] = b[2] == MW_NULL ? OOO_RID_NONE : (uint32_t)b[2];
  }
  return 0;
}
_Static_assert(MW_NULL == MFIR_NOFID, "a NULL flow id reads as MFIR_NOFID");

wi_rc rd_load_flows(mfir_db *d, wi_err *err) {
  if (d->flows_loaded) return WI_OK;
  size_t nc = (size_t)d->win.insns;
  d->flows = xcalloc(nc, sizeof *d->flows);
  d->flow_pc = xcalloc(nc, sizeof *d->flow_pc);
  for (size_t i = 0; i < nc; i++) d->flows[i].fid = MFIR_NOFID;
  load_ctx l = {d, err, WI_OK};
  wi_rc rc = rd_scan(d, MT_FLOW, FC_NUM, load_row, &l, err); /* (f_by is the last column) */
  if (!rc) rc = l.rc;
  if (!rc && d->n_flows != nc)
    rc = wi_fail(err, WI_ECORRUPT, "%s: cflow holds %zu of the window's %zu instructions", d->path, d->n_flows, nc);
  if (rc) return rc;
  /* Wrong-path flows come on demand. */
  if ((rc = rd_prepare(d,
                       "SELECT fid, pc, fetch, dispatch, issue, complete, retire, d_kind, d_by, c_kind, r_kind, r_by"
                       " FROM wflow WHERE fid = ?",
                       &d->wget, err)))
    return rc;
  map64_init(&d->wmap, 1024);
  d->warena = arena_new(1 << 16);
  bool ok;
  d->n_wflows = (uint64_t)meta_int(d, "wrong_flows", &ok);
  d->flows_loaded = true;
  return WI_OK;
}

/* A wrong-path flow by fid: from the cache, else one point query (NULL if absent). */
static const rd_wrec *wload(mfir_db *d, int64_t fid) {
  uint32_t *v = map64_get(&d->wmap, (uint64_t)(-fid));
  if (v) return *v == UINT32_MAX ? NULL : d->wrecs.a[*v];
  sqlite3_stmt *st = d->wget;
  sqlite3_bind_int64(st, 1, fid);
  rd_wrec *w = NULL;
  if (sqlite3_step(st) == SQLITE_ROW) {
    w = arena_alloc(d->warena, sizeof *w);
    mfir_rec *r = &w->r;
    r->fid = fid;
    r->wrong = true;
    w->pc = (uint64_t)sqlite3_column_int64(st, 1);
    for (int k = 0; k < MFIR_NSTAGE; k++) r->t[k] = col_time(st, 2 + k);
    for (int k = 0; k < MFIR_NSTAGE; k++) r->by[k] = MFIR_NOFID;
    r->kind[MFIR_D] = (uint8_t)sqlite3_column_int(st, 7);
    r->by[MFIR_D] = col_fid(st, 8);
    if (r->t[MFIR_I] != MFIR_NOTIME) r->kind[MFIR_I] = OB_DISPATCHED;
    r->kind[MFIR_C] = (uint8_t)sqlite3_column_int(st, 9);
    r->kind[MFIR_R] = (uint8_t)sqlite3_column_int(st, 10);
    r->by[MFIR_R] = col_fid(st, 11);
  }
  sqlite3_reset(st);
  if (w) VEC_PUSH(d->wrecs, w);
  map64_put(&d->wmap, (uint64_t)(-fid), w ? (uint32_t)(d->wrecs.n - 1) : UINT32_MAX);
  return w;
}

const mfir_rec *rd_get(void *ctx, int64_t fid) {
  mfir_db *d = ctx;
  if (fid == MFIR_NOFID) return NULL;
  if (fid >= 0) {
    if (fid < d->win.first_fid || fid > d->win.last_fid) return NULL;
    return &d->flows[fid - d->win.first_fid];
  }
  const rd_wrec *w = wload(d, fid);
  return w ? &w->r : NULL;
}

uint64_t rd_flow_pc(mfir_db *d, int64_t fid) {
  if (fid >= 0) {
    if (fid < d->win.first_fid || fid > d->win.last_fid) return 0;
    return d->flow_pc[fid - d->win.first_fid];
  }
  const rd_wrec *w = wload(d, fid);
  return w ? w->pc : 0;
}

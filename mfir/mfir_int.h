/* mfir_int.h — private layout of MFIR: SQLite b-tree pages written and read directly
 * (mfir_btree.c), the bulk writer (mfir_write.c), the capture state (mfir_capture.c) and the
 * loaded database (mfir_read.c, used by the analyses). */
#ifndef WHATIF_MFIR_INT_H
#define WHATIF_MFIR_INT_H

#include <pthread.h>
#include <sqlite3.h>

#include "decode.h"
#include "mfir.h"

/* ---- SQLite table b-trees written directly (mfir_btree.c) ----------------------------------------
 * The bulk tables are rowid tables whose rows arrive in key order (ascending, or descending for
 * the wrong-path flows), so their pages can be written once, leaves first, in SQLite's documented
 * file format: SQLite creates the file and the schema (and so the root page of every table), the
 * pages are appended after them, and each tree's top page is written into its root page at the
 * end. A row that cannot be placed this way (out of key order, or too large for one page) is left
 * to the caller, which inserts it through SQLite afterwards. */

typedef struct bt_file {
  int fd;
  uint32_t page_size, usable;  /* bytes per page; usable = page_size - reserved bytes */
  bool small_ints;             /* schema format 4: 0 and 1 are stored in the record header */
  uint32_t next_page;          /* next page number to append */
  uint32_t lock_page;          /* SQLite's lock-byte page, never used */
  uint8_t hdr[100];            /* the database header as read at open */
  uint8_t *out;                /* pages appended but not yet written */
  uint32_t out_first, out_n;   /* page number of out[0]; pages in out */
  bool failed;
  char errmsg[200];
} bt_file;

typedef struct bt_child {
  uint32_t pgno;
  int64_t lo, hi;              /* keys in the subtree */
} bt_child;
typedef VEC(bt_child) bt_kids;

typedef struct bt_tree {
  bt_file *f;
  uint32_t root;               /* root page (SQLite's, from CREATE TABLE) */
  int dir;                     /* +1 keys ascend, -1 keys descend */
  uint8_t *page;               /* leaf being filled: cells from the end of the page down */
  uint16_t *cells;             /* their offsets, in arrival order */
  uint32_t n, top;             /* cells; start of the cell content area */
  int64_t lo, hi, last;        /* keys of the leaf being filled; the last key appended */
  bool any;
  uint8_t *held;               /* the first full leaf, until a second exists (one leaf = root) */
  bt_child held_kid;
  bt_kids kids;                /* leaves written, in arrival order */
  uint64_t rows;
} bt_tree;

/* Open a database SQLite just created (and closed) for appending pages. */
wi_rc bt_open(bt_file *f, const char *path, wi_err *err);
/* Write what is pending and the header (page count, change counter) and close. */
wi_rc bt_close(bt_file *f, wi_err *err);
/* Close without finishing (the file is being removed). */
void bt_discard(bt_file *f);
void bt_tree_init(bt_tree *t, bt_file *f, uint32_t root, int dir);
void bt_tree_free(bt_tree *t);
/* Append a row (ncols int64 values, MW_NULL = NULL; column key_col, or none if -1, is the
 * INTEGER PRIMARY KEY and stored as the rowid). False (nothing written) when the key is out of
 * order or the row does not fit one page. */
bool bt_append(bt_tree *t, int64_t key, const int64_t *v, int ncols, int key_col);
/* Write the last leaf and the interior pages; the top page goes into the root page. */
wi_rc bt_tree_finish(bt_tree *t);

/* Called for each row of a scan (ncols values, MW_NULL = NULL); non-zero stops the scan. */
typedef int (*bt_row_fn)(void *ctx, int64_t rowid, const int64_t *v, int ncols);
/* Read the table b-tree at root of the database at path in key order, decoding the first ncols
 * columns (column key_col, if >= 0 and < ncols, is the rowid; later columns are not looked at).
 * Only integers and NULLs are decoded: a table holding anything else, a cell spilling into
 * overflow pages, or a database in WAL mode give WI_EINVAL (read it through SQLite instead); a
 * malformed page gives WI_ECORRUPT. */
wi_rc bt_scan(const char *path, uint32_t root, int ncols, int key_col, bt_row_fn fn, void *ctx, wi_err *err);

/* ---- bulk writer ------------------------------------------------------------------------------
 * Tables written while the model runs hold integers only. The capture appends rows of int64
 * values (MW_NULL = SQL NULL) into per-table blocks; a full block is encoded into the tables'
 * b-tree pages (mfir_btree.c), either at once or by a writer thread (blocks are queued in order,
 * so the file is the same either way). mw_drain finishes the trees and reopens the database
 * with SQLite for the rest (rows the direct writer could not place, static tables, indexes). */

#define MW_NULL INT64_MIN

enum { MT_FLOW = 0, MT_WFLOW, MT_DEPX, MT_MEMTX, MT_SQUASH, MT_FLUSH, MT_SLOT, MT_MEMBLOCK, MT_NUM };

/* Columns of the correct-path flow table (cflow), in order. */
enum {
  FC_FID = 0, FC_PC, FC_FETCH, FC_DISPATCH, FC_ISSUE, FC_COMPLETE, FC_RETIRE,
  FC_ROB, FC_SCHED, FC_PORT, FC_SLOTS, FC_FLAGS,
  FC_D_KIND, FC_D_BY, FC_D_RID, FC_D_CYC,
  FC_I_KIND, FC_I_BY, FC_I_RID, FC_I_CYC,
  FC_C_KIND, FC_C_BY, FC_C_RID, FC_C_CYC,
  FC_R_KIND, FC_R_BY, FC_R_RID, FC_R_CYC,
  FC_P1, FC_P2, FC_P3,
  FC_F_BY, FC_F_RID,
  FC_NUM
};

/* Columns of the wrong-path flow table (wflow): no issue/complete/commit bindings (derived in
 * the flow view), no producers. What every flow has comes first, what only dispatched flows have
 * last: most wrong-path flows are squashed before dispatch, and their records end early. */
enum {
  WC_FID = 0, WC_PC, WC_FETCH, WC_RETIRE, WC_FLAGS, WC_SLOTS, WC_R_KIND, WC_R_BY, WC_R_CYC,
  WC_DISPATCH, WC_ISSUE, WC_COMPLETE, WC_ROB, WC_SCHED, WC_PORT, WC_D_KIND, WC_D_BY, WC_D_CYC, WC_C_KIND,
  WC_NUM
};

/* flow.flags */
enum {
  FF_WRONG = 1, FF_MISPRED = 2, FF_REFETCHED = 4,
  FF_FIX_D = 8, /* 8, 16, 32, 64: the D / I / C / R binding was replaced by the own-stage edge */
};
/* memtx.kind */
enum { TX_LOAD = 0, TX_STORE, TX_IFETCH, TX_PREFETCH, TX_WRITEBACK, TX_NKIND };
/* memtx.flags */
enum { TXF_WRONG = 1, TXF_MERGED = 2, TXF_TLB_MISS = 4, TXF_OPEN = 8 /* no fill by the window's end */ };
/* memtx columns */
enum {
  XC_ID = 0, XC_FID, XC_KIND, XC_ADDR, XC_CYCLE, XC_LEVEL, XC_FILL, XC_SET, XC_MSHR1, XC_MSHR2,
  XC_MSHR3, XC_DRAM, XC_FLAGS, XC_EVICTOR, XC_EVICT_CYCLE, XC_NUM
};

typedef struct mw_table {
  const char *name;
  int ncols;
  int key_col;             /* the INTEGER PRIMARY KEY column (the rowid), or -1: rowids 1, 2, ... */
  int dir;                 /* key order of the rows as they arrive: +1 ascending, -1 descending */
  const char *cols;        /* column names, in order (as in the CREATE TABLE statement) */
  const char *create;      /* CREATE TABLE statement */
} mw_table;
extern const mw_table mw_tables[MT_NUM];

typedef struct mw_block {
  struct mw_block *next;   /* queue / free-list link */
  int table;
  uint32_t n, cap;         /* rows */
  int64_t v[];             /* n * ncols values */
} mw_block;

typedef struct mfir_writer {
  sqlite3 *db;             /* SQLite: open while creating the schema, closed during the bulk
                              write, open again after mw_drain */
  char *path;
  bt_file bf;
  bt_tree tree[MT_NUM];
  bool trees;              /* bf and tree[] are open */
  uint64_t next_rowid[MT_NUM]; /* rowid of the next row of a table without a key column */
  VEC(int64_t) deferred[MT_NUM]; /* rows the direct writer could not place (inserted by SQL) */
  mw_block *cur[MT_NUM];   /* being filled */
  uint64_t rows[MT_NUM];   /* appended so far */
  /* writer thread */
  bool threaded, started, stop;
  bool discard;            /* dry run: drop blocks instead of writing them */
  pthread_t th;
  pthread_mutex_t mu;
  pthread_cond_t cv;       /* the writer waits for blocks */
  pthread_cond_t room;     /* the producer waits for room in the queue */
  bool waiting;            /* the producer is waiting */
  bool sleeping;           /* the writer is waiting */
  mw_block *qhead, *qtail, *freel;
  int queued;
  bool failed;             /* first error in errmsg */
  char errmsg[256];
} mfir_writer;

/* Create path (fresh): pragmas and schema with SQLite, then open its pages for the bulk write. */
wi_rc mw_open(mfir_writer *w, const char *path, bool threaded, wi_err *err);
/* Pointer to the next row of table (ncols values, unset: the caller fills them all). */
mw_block *mw_next_block(mfir_writer *w, int table);
static inline int64_t *mw_row_raw(mfir_writer *w, int table) {
  mw_block *b = w->cur[table];
  if (!b || b->n == b->cap) b = mw_next_block(w, table);
  w->rows[table]++;
  return b->v + (size_t)b->n++ * (size_t)mw_tables[table].ncols;
}
/* Pointer to the next row of table (ncols values, all MW_NULL). */
static inline int64_t *mw_row(mfir_writer *w, int table) {
  int64_t *r = mw_row_raw(w, table);
  for (int i = 0, nc = mw_tables[table].ncols; i < nc; i++) r[i] = MW_NULL;
  return r;
}
/* Write everything appended, stop the writer thread, finish the b-trees, and reopen the database
 * with SQLite inside a transaction (w->db), with the deferred rows inserted. Returns the first
 * error. */
wi_rc mw_drain(mfir_writer *w, wi_err *err);
/* Close the database (after COMMIT or on abort). */
void mw_close(mfir_writer *w);
/* Run one SQL script on w->db (after mw_drain). */
wi_rc mw_exec(mfir_writer *w, const char *sql, wi_err *err);
/* Indexes and views created after the bulk insert. */
extern const char mw_post_sql[];

/* ---- capture ---------------------------------------------------------------------------------- */

#define CAP_RING 16384u    /* in-flight / recently finished flows kept per path (power of 2) */

/* A flow instance in flight (between fetch and commit / squash). */
typedef struct cap_pend {
  uint64_t fid;            /* model fid (OOO_FID_NONE: slot empty) */
  uint64_t pc;
  uint64_t t[4];           /* F D I C, MFIR_NOTIME if not reached */
  uint64_t d_by;           /* dispatch binding flow if the event gave one */
  uint64_t f_by;           /* flow whose rename freed the fetch-queue entry (fetch event) */
  uint32_t f_rid;          /* what held fetch back before it (fetch event: icache, bpred, fetch) */
  uint32_t sid;
  uint32_t rob, sched, port;
  uint8_t slots, d_kind, c_kind;
  uint8_t refetched;       /* an earlier attempt was flushed by a machine clear */
} cap_pend;

/* An open memory transaction (a miss or a prefetch waiting for its fill). */
typedef struct cap_tx {
  uint64_t fid;            /* requesting model fid, or UINT64_MAX */
  uint64_t line;           /* line address */
  uint64_t cycle;
  uint32_t wait_rid;       /* first-level MSHR whose fill completes it */
  uint32_t set_rid, mshr[3], dram;
  int64_t evictor;         /* database fid, or MW_NULL */
  int64_t evict_cycle;
  uint8_t kind, first_level, level, flags;
} cap_tx;

typedef struct cap_evict {
  uint64_t fid;            /* model fid whose fill evicted the line (UINT64_MAX: none known) */
  uint64_t cycle;
} cap_evict;

typedef struct cap_pcstat {
  uint64_t pc;
  uint32_t sid;
  uint64_t count, wrong;
} cap_pcstat;

struct mfir_capture {
  mfir_writer w;
  char *out_path, *tmp_path;
  const trace_t *trace;
  ooo_config cfg;
  mfir_build_opts opts;
  dec_cache *dcache;       /* disassembly of wrong-path-only PCs */
  /* window */
  uint64_t start, end;     /* correct-path fids [start, end) are written */
  bool started, done;
  uint64_t c0;             /* first cycle of the window (valid once started) */
  uint64_t r_last;         /* commit cycle of the last written instruction */
  int64_t last_fid;
  bool failed;
  wi_err err;
  /* flows */
  cap_pend *pend_c, *pend_w; /* by fid & mask, by n & mask */
  mfir_rec *done_c, *done_w; /* finished flows, for the hop rule */
  mfir_rec scratch;        /* an in-flight flow as cap_get returns it */
  int64_t *wq_rows;        /* squashed wrong-path rows waiting for older flows (by n & mask) */
  uint8_t *wq_state;       /* WQ_* by n & mask */
  uint64_t wq_next, wq_hi; /* next n to write; one past the highest n seen */
  bool wq_on;
  int64_t last_writer[RG_NUM];
  uint64_t commit_hi;      /* highest committed model fid (UINT64_MAX: none yet) */
  /* memory */
  uint32_t line_shift;
  uint64_t tlb_fid, tlb_cycle; /* last TLB miss: flags the transaction that follows it */
  VEC(cap_tx) open;
  int64_t next_tx;         /* id of the next memtx row written */
  wi_map64 evict_map;      /* (level, line) -> index into evicts */
  VEC(cap_evict) evicts;
  /* grouping */
  struct {
    bool on;
    uint64_t cycle, by;
    int64_t first, last;
    uint32_t n;
    uint8_t cause, wrong;
  } sq;
  struct {
    bool on;
    uint64_t cycle, n_cycles;
    uint8_t slots[OOO_SLOT_NUM], filled;
  } slot;
  /* static and resources */
  wi_map64 pc_map;         /* pc -> index into pcs */
  VEC(cap_pcstat) pcs;
  wi_map64 rid_map;        /* rid -> uses (resources without a direct counter) */
  uint32_t *rid_core;      /* uses of core resources by rid_core_slot() */
  uint64_t *sid_count;     /* committed / wrong-path executions by static id (2 per sid) */
  uint32_t n_static;
  /* statistics */
  uint64_t n_deps, n_slot_rows, n_written_wrong, n_flushed, n_tx;
  double t_begin;
};

/* ---- the loaded database ------------------------------------------------------------------------ */

struct mfir_db {
  sqlite3 *db;
  char *path;
  mfir_window win;
  wi_map64 pc_map;         /* pc -> index into pcs (loaded on first use) */
  VEC(mfir_pcinfo) pcs;
  wi_arena *strings;
  bool pcs_loaded;
  /* flows (loaded on first use by the walks) */
  mfir_rec *flows;         /* correct path, by fid - first_fid */
  uint64_t *flow_pc;
  size_t n_flows;
  /* wrong-path flows: loaded one by one when a walk reaches them (there can be several per
   * instruction), kept in an arena so pointers stay valid */
  wi_map64 wmap;           /* -fid -> index into wrecs */
  VEC(struct rd_wrec *) wrecs;
  wi_arena *warena;
  sqlite3_stmt *wget;      /* SELECT ... FROM wflow WHERE fid = ? */
  uint64_t n_wflows;       /* rows in wflow */
  bool flows_loaded;
};

typedef struct rd_wrec {
  mfir_rec r;
  uint64_t pc;
} rd_wrec;

/* Every row of a bulk table (MT_*) with fn, its first ncols columns (at most the table's; the
 * rest are not decoded): read from the file's pages directly when the table is as MFIR creates
 * it, else through SQLite (ordered by its first column). */
wi_rc rd_scan(mfir_db *d, int table, int ncols, bt_row_fn fn, void *ctx, wi_err *err);
/* Load every correct-path flow of the window into d->flows (wrong-path ones load on demand). */
wi_rc rd_load_flows(mfir_db *d, wi_err *err);
/* Record of a flow by database fid, or NULL (an mfir_get_fn; ctx is the mfir_db). */
const mfir_rec *rd_get(void *ctx, int64_t fid);
/* PC of a loaded flow (0 if unknown). */
uint64_t rd_flow_pc(mfir_db *d, int64_t fid);
/* Prepare sql on d (error names the statement's purpose). */
wi_rc rd_prepare(mfir_db *d, const char *sql, sqlite3_stmt **st, wi_err *err);

#endif

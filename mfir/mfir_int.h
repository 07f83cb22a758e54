/* mfir_int.h — private layout of MFIR: the bulk SQLite writer (mfir_write.c), the capture
 * state (mfir_capture.c) and the loaded database (mfir_read.c, used by the analyses). */
#ifndef WHATIF_MFIR_INT_H
#define WHATIF_MFIR_INT_H

#include <pthread.h>
#include <sqlite3.h>

#include "decode.h"
#include "mfir.h"

/* ---- bulk writer ------------------------------------------------------------------------------
 * Tables written while the model runs hold integers only. The capture appends rows of int64
 * values (MW_NULL = SQL NULL) into per-table blocks; a full block is inserted by one prepared
 * `INSERT INTO t SELECT ... FROM mfir_block` over an eponymous virtual table that reads the block
 * (no per-value bind calls), inside the one build transaction, either at once or by a writer
 * thread (blocks are queued in order, so the file is the same either way). */

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
  FC_NUM
};

/* Columns of the wrong-path flow table (wflow): no issue/complete/commit bindings (derived in
 * the flow view), no producers. */
enum {
  WC_FID = 0, WC_PC, WC_FETCH, WC_DISPATCH, WC_ISSUE, WC_COMPLETE, WC_RETIRE, WC_ROB, WC_SCHED, WC_PORT,
  WC_SLOTS, WC_FLAGS, WC_D_KIND, WC_D_BY, WC_D_CYC, WC_C_KIND, WC_R_KIND, WC_R_BY, WC_R_CYC, WC_NUM
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
  sqlite3 *db;
  sqlite3_stmt *insert[MT_NUM]; /* INSERT INTO <table> SELECT ... FROM mfir_block */
  const struct mw_block *vt_block; /* the block mfir_block shows (writer side) */
  mw_block *cur[MT_NUM];   /* being filled */
  uint64_t rows[MT_NUM];   /* appended so far */
  /* writer thread */
  bool threaded, started, stop;
  bool discard;            /* dry run: drop blocks instead of inserting them */
  pthread_t th;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  mw_block *qhead, *qtail, *freel;
  int queued;
  int rc;                  /* first SQLite error (SQLITE_OK if none) */
  char errmsg[256];
} mfir_writer;

/* Open path (created fresh) for the bulk build: pragmas, schema, BEGIN. */
wi_rc mw_open(mfir_writer *w, const char *path, bool threaded, wi_err *err);
/* Pointer to the next row of table (ncols values, all MW_NULL). */
int64_t *mw_row_slow(mfir_writer *w, int table);
static inline int64_t *mw_row(mfir_writer *w, int table) {
  mw_block *b = w->cur[table];
  if (b && b->n < b->cap) {
    int nc = mw_tables[table].ncols;
    int64_t *r = b->v + (size_t)b->n++ * (size_t)nc;
    for (int i = 0; i < nc; i++) r[i] = MW_NULL;
    w->rows[table]++;
    return r;
  }
  return mw_row_slow(w, table);
}
/* Insert everything appended and stop the writer thread; returns the first error. */
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
  uint32_t sid;
  uint32_t rob, sched, port;
  uint8_t slots, d_kind, c_kind;
  uint8_t refetched;       /* an earlier attempt was flushed by a machine clear */
} cap_pend;

/* An open memory transaction (a miss or a prefetch waiting for its fill). */
typedef struct cap_tx {
  int64_t id;
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
  int64_t last_writer[REG_NUM];
  uint64_t commit_hi;      /* highest committed model fid (UINT64_MAX: none yet) */
  /* memory */
  uint32_t line_shift;
  uint64_t tlb_fid, tlb_cycle; /* last TLB miss: flags the transaction that follows it */
  VEC(cap_tx) open;
  int64_t next_tx;
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

/* Load every correct-path flow of the window into d->flows (wrong-path ones load on demand). */
wi_rc rd_load_flows(mfir_db *d, wi_err *err);
/* Record of a flow by database fid, or NULL (an mfir_get_fn; ctx is the mfir_db). */
const mfir_rec *rd_get(void *ctx, int64_t fid);
/* PC of a loaded flow (0 if unknown). */
uint64_t rd_flow_pc(mfir_db *d, int64_t fid);
/* Prepare sql on d (error names the statement's purpose). */
wi_rc rd_prepare(mfir_db *d, const char *sql, sqlite3_stmt **st, wi_err *err);

#endif

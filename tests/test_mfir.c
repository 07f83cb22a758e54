/* test_mfir.c — MFIR: the hop rule, the capture on a hand-made event stream (every table, cycles
 * imposed, top-down, cycle stacks, critical path and root-cause chains checked by hand), and on
 * the real model over synthetic traces: a dependency chain beside independent work is exactly the
 * critical path; top-down equals the model's; stacks sum to the cycles; an injected eviction and a
 * wrong path that fills the scheduler are named as causes; a window built alone equals the same
 * range of a full build; the Kanata log parses. */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mfir.h"
#include "mfir_int.h"
#include "ooo.h"
#include "tbuild.h"
#include "testutil.h"
#include "trace.h"

#define BASE 0x401000ULL

int export_kanata(int argc, char **argv); /* scripts/export_kanata.c */

/* ---- helpers ------------------------------------------------------------------------------------ */

static sqlite3 *db_open(const char *path) {
  sqlite3 *db = NULL;
  if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) fail_msg("open %s", path);
  return db;
}

/* First column of the first row of sql as an integer (fails the test on an error or no row). */
static int64_t q1(sqlite3 *db, const char *sql) {
  sqlite3_stmt *st = NULL;
  if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) fail_msg("%s: %s", sql, sqlite3_errmsg(db));
  if (sqlite3_step(st) != SQLITE_ROW) fail_msg("%s: no row", sql);
  int64_t v = sqlite3_column_type(st, 0) == SQLITE_NULL ? INT64_MIN : sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  return v;
}

static void check_integrity(const char *path) {
  sqlite3 *db = db_open(path);
  sqlite3_stmt *st = NULL;
  assert_int_equal(sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &st, NULL), SQLITE_OK);
  assert_int_equal(sqlite3_step(st), SQLITE_ROW);
  assert_string_equal((const char *)sqlite3_column_text(st, 0), "ok");
  sqlite3_finalize(st);
  sqlite3_close(db);
}

static tbuild *build(const char *src) {
  wi_err err;
  tbuild *tb = tb_new(src, BASE, &err);
  if (!tb) fail_msg("tb_new: %s", err.msg);
  return tb;
}

static char *write_trace(tbuild *tb) {
  wi_err err;
  assert_null(tb_error(tb));
  char *path = tu_tmp_path(".wtr");
  if (tb_write(tb, path, &err)) fail_msg("tb_write: %s", err.msg);
  return path;
}

/* Build the MFIR database of a window of a trace; returns its path (caller frees and unlinks). */
static char *build_db(const char *trace, const ooo_config *cfg, uint64_t start, uint64_t count, mfir_build_stats *st) {
  wi_err err;
  trace_t *t = trace_open(trace, &err);
  if (!t) fail_msg("trace_open: %s", err.msg);
  mfir_build_opts o;
  memset(&o, 0, sizeof o);
  o.start = start;
  o.count = count;
  o.threaded = start & 1; /* both writer modes get exercised */
  o.trace_path = trace;
  char *out = tu_tmp_path(".db");
  mfir_build_stats s;
  if (mfir_build(t, cfg, &o, out, st ? st : &s, &err)) fail_msg("mfir_build: %s", err.msg);
  trace_close(t);
  check_integrity(out);
  return out;
}

static mfir_db *open_mfir(const char *path) {
  wi_err err;
  mfir_db *d = mfir_open(path, &err);
  if (!d) fail_msg("mfir_open: %s", err.msg);
  return d;
}

/* The end of a test that walked a database built from a trace: frees and removes all four. */
static void done_walk(mfir_critical *c, mfir_db *d, char *path, char *trace) {
  mfir_critical_free(c);
  mfir_close(d);
  unlink(path);
  free(path);
  unlink(trace);
  free(trace);
}

static bool chain_has(const mfir_critical *c, int kind, int64_t to) {
  for (size_t i = 0; i < c->n_chain; i++)
    if (c->chain[i].kind == kind && c->chain[i].to_fid == to) return true;
  return false;
}

/* ---- names and the hop rule ---------------------------------------------------------------------- */

static void test_kind_names(void **state) {
  (void)state;
  for (int k = 0; k < OB_NUM; k++) {
    assert_string_equal(mfir_kind_name(k), ooo_bind_name(k));
    assert_int_equal(mfir_kind_from_name(mfir_kind_name(k)), k);
  }
  for (int k = MK_FETCH_ORDER; k < MK_END; k++) {
    assert_string_not_equal(mfir_kind_name(k), "?");
    assert_int_equal(mfir_kind_from_name(mfir_kind_name(k)), k);
  }
  assert_int_equal(mfir_kind_stage(OB_ROB_FULL), MFIR_D);
  assert_int_equal(mfir_kind_stage(OB_OPERAND), MFIR_I);
  assert_int_equal(mfir_kind_stage(OB_DRAM), MFIR_C);
  assert_int_equal(mfir_kind_stage(OB_PREV_COMMIT), MFIR_R);
  assert_int_equal(mfir_kind_from_name("nonsense"), -1);
  assert_int_equal(mfir_db_fid(OOO_FID_WRONG | 4), -5);
  assert_int_equal(mfir_model_fid(-5), OOO_FID_WRONG | 4);
  assert_int_equal(mfir_db_fid(OOO_FID_NONE), MFIR_NOFID);
  char buf[64];
  assert_string_equal(mfir_rid_name(OOO_RID_ROB + 12, buf, sizeof buf), "ROB[12]");
}

typedef struct recs {
  mfir_rec r[8];
  int n;
} recs;

static const mfir_rec *recs_get(void *ctx, int64_t fid) {
  recs *s = ctx;
  for (int i = 0; i < s->n; i++)
    if (s->r[i].fid == fid) return &s->r[i];
  return NULL;
}

static mfir_rec mkrec(int64_t fid, uint64_t f, uint64_t d, uint64_t i, uint64_t c, uint64_t r) {
  mfir_rec x;
  memset(&x, 0, sizeof x);
  x.fid = fid;
  uint64_t t[5] = {f, d, i, c, r};
  for (int s = 0; s < 5; s++) {
    x.t[s] = t[s];
    x.by[s] = MFIR_NOFID;
  }
  x.kind[MFIR_D] = OB_FRONTEND;
  x.kind[MFIR_I] = OB_DISPATCHED;
  x.kind[MFIR_C] = OB_EXEC;
  x.kind[MFIR_R] = OB_COMPLETION;
  return x;
}

static void test_hop_rules(void **state) {
  (void)state;
  recs s = {.n = 4};
  s.r[0] = mkrec(10, 0, 4, 5, 9, 10);
  s.r[1] = mkrec(11, 1, 4, 9, 12, 13);
  s.r[2] = mkrec(12, 2, 20, 21, 22, 23);
  s.r[3] = mkrec(-1, 3, 6, MFIR_NOTIME, MFIR_NOTIME, 15);
  s.r[3].wrong = true;
  s.r[3].kind[MFIR_R] = MK_SQUASH_BRANCH;
  s.r[3].by[MFIR_R] = 11;
  /* operand: to the producer's completion */
  s.r[1].kind[MFIR_I] = OB_OPERAND;
  s.r[1].by[MFIR_I] = 10;
  mfir_hop_t h = mfir_hop(&s.r[1], MFIR_I, recs_get, &s);
  assert_int_equal(h.fid, 10);
  assert_int_equal(h.stage, MFIR_C);
  assert_int_equal(h.cycles, 0);
  assert_int_equal(h.kind, OB_OPERAND);
  /* a producer later than the node is not a valid target: own dispatch instead */
  s.r[1].by[MFIR_I] = 12;
  h = mfir_hop(&s.r[1], MFIR_I, recs_get, &s);
  assert_int_equal(h.fid, 11);
  assert_int_equal(h.stage, MFIR_D);
  assert_int_equal(h.cycles, 5);
  /* ROB full: the head's commit */
  s.r[2].kind[MFIR_D] = OB_ROB_FULL;
  s.r[2].by[MFIR_D] = 11;
  h = mfir_hop(&s.r[2], MFIR_D, recs_get, &s);
  assert_true(h.fid == 11 && h.stage == MFIR_R && h.cycles == 7);
  /* scheduler full by a wrong-path flow that never issued: its squash */
  s.r[2].kind[MFIR_D] = OB_SCHED_FULL;
  s.r[2].by[MFIR_D] = -1;
  h = mfir_hop(&s.r[2], MFIR_D, recs_get, &s);
  assert_true(h.fid == -1 && h.stage == MFIR_R && h.cycles == 5);
  /* the squash goes to the squashing branch's resolution; its fetch to the branch's fetch */
  h = mfir_hop(&s.r[3], MFIR_R, recs_get, &s);
  assert_true(h.fid == 11 && h.stage == MFIR_C && h.kind == MK_SQUASH_BRANCH && h.cycles == 3);
  h = mfir_hop(&s.r[3], MFIR_F, recs_get, &s);
  assert_true(h.fid == 11 && h.stage == MFIR_F && h.kind == MK_WRONG_PATH && h.cycles == 2);
  /* fetch after a redirect, and in order otherwise; the first flow ends the walk */
  s.r[2].kind[MFIR_D] = OB_FRONTEND;
  s.r[2].by[MFIR_D] = 11;
  s.r[2].t[MFIR_F] = 14;
  h = mfir_hop(&s.r[2], MFIR_F, recs_get, &s);
  assert_true(h.fid == 11 && h.stage == MFIR_C && h.kind == MK_REDIRECT && h.cycles == 2);
  s.r[2].by[MFIR_D] = MFIR_NOFID;
  h = mfir_hop(&s.r[2], MFIR_F, recs_get, &s);
  assert_true(h.fid == 11 && h.stage == MFIR_F && h.kind == MK_FETCH_ORDER && h.cycles == 13);
  h = mfir_hop(&s.r[0], MFIR_F, recs_get, &s);
  assert_int_equal(h.fid, MFIR_NOFID);
  assert_int_equal(h.kind, MK_START);
  /* commit: completion, or the previous commit when that came last */
  h = mfir_hop(&s.r[1], MFIR_R, recs_get, &s);
  assert_true(h.fid == 11 && h.stage == MFIR_C && h.cycles == 1 && !h.corrected);
  s.r[1].kind[MFIR_R] = OB_PREV_COMMIT;
  s.r[1].by[MFIR_R] = 10;
  h = mfir_hop(&s.r[1], MFIR_R, recs_get, &s);
  assert_true(h.fid == 11 && h.stage == MFIR_C && h.kind == OB_COMPLETION && h.corrected); /* 10 < 12 */
  s.r[1].t[MFIR_C] = 9;
  h = mfir_hop(&s.r[1], MFIR_R, recs_get, &s);
  assert_true(h.fid == 10 && h.stage == MFIR_R && h.cycles == 3 && h.kind == OB_PREV_COMMIT);
  /* a constraint met before the flow's own previous stage does not bind: operand ready at 9,
   * dispatch at 10 */
  s.r[1].t[MFIR_D] = 10;
  s.r[1].t[MFIR_I] = 11;
  s.r[1].t[MFIR_C] = 12;
  s.r[1].kind[MFIR_I] = OB_OPERAND;
  s.r[1].by[MFIR_I] = 10;
  h = mfir_hop(&s.r[1], MFIR_I, recs_get, &s);
  assert_true(h.fid == 11 && h.stage == MFIR_D && h.kind == OB_DISPATCHED && h.cycles == 1 && h.corrected);
  /* an unknown named flow: the own stage */
  s.r[1].by[MFIR_I] = 99;
  h = mfir_hop(&s.r[1], MFIR_I, recs_get, &s);
  assert_true(h.fid == 11 && h.stage == MFIR_D && h.corrected);
}

/* Fetch after the rename that freed its fetch-queue entry; a full store queue waits for a store's
 * write, which comes after its commit. */
static void test_hop_queues(void **state) {
  (void)state;
  recs s = {.n = 4};
  s.r[0] = mkrec(10, 0, 30, 31, 32, 33);  /* held the entry flow 13 took */
  s.r[1] = mkrec(11, 2, 35, 36, 37, 38);
  s.r[2] = mkrec(12, 20, 40, 41, 42, 43);
  s.r[3] = mkrec(13, 30, 44, 45, 46, 47);
  s.r[3].by[MFIR_F] = 10;
  /* the entry freed (rename of 10 at 30) after the previous fetch (20): back-pressure */
  mfir_hop_t h = mfir_hop(&s.r[3], MFIR_F, recs_get, &s);
  assert_true(h.fid == 10 && h.stage == MFIR_D && h.kind == MK_FETCH_SLOT && h.cycles == 0);
  /* freed in the cycle of the previous fetch: it was free for this one too (fetch bandwidth) */
  s.r[2].t[MFIR_F] = 30;
  h = mfir_hop(&s.r[3], MFIR_F, recs_get, &s);
  assert_true(h.fid == 12 && h.stage == MFIR_F && h.kind == MK_FETCH_ORDER && h.cycles == 0);
  /* freed before the previous fetch: fetch order, with the I-cache miss that held it back */
  s.r[2].t[MFIR_F] = 29;
  s.r[0].t[MFIR_D] = 25;
  s.r[3].rid[MFIR_F] = OOO_RID_ICACHE;
  h = mfir_hop(&s.r[3], MFIR_F, recs_get, &s);
  assert_true(h.fid == 12 && h.kind == MK_FETCH_ORDER && h.cycles == 1 && h.rid == OOO_RID_ICACHE);
  s.r[3].rid[MFIR_F] = OOO_RID_NONE;
  /* a redirect that came last wins */
  s.r[0].t[MFIR_D] = 30;
  s.r[3].by[MFIR_D] = 11; /* delivered after 11's redirect (resolved at 30, as the entry freed) */
  s.r[1].t[MFIR_C] = 30;
  h = mfir_hop(&s.r[3], MFIR_F, recs_get, &s);
  assert_true(h.fid == 11 && h.stage == MFIR_C && h.kind == MK_REDIRECT && h.cycles == 0);
  s.r[3].by[MFIR_D] = MFIR_NOFID;
  /* a wrong-path flow's fetch follows its branch, whatever entry it took */
  s.r[3].wrong = true;
  s.r[3].by[MFIR_R] = 11;
  s.r[3].kind[MFIR_R] = MK_SQUASH_BRANCH;
  s.r[1].t[MFIR_F] = 2;
  h = mfir_hop(&s.r[3], MFIR_F, recs_get, &s);
  assert_true(h.fid == 11 && h.kind == MK_WRONG_PATH);
  s.r[3].wrong = false;
  s.r[3].kind[MFIR_R] = OB_COMPLETION;
  s.r[3].by[MFIR_R] = MFIR_NOFID;
  /* store queue full of a store that committed (at 33) before this flow was fetched (30 < 33, so
   * fetch at 35): the store's entry is still held, the edge goes to its commit */
  s.r[3].t[MFIR_F] = 35;
  s.r[3].kind[MFIR_D] = OB_SQ_FULL;
  s.r[3].by[MFIR_D] = 10;
  h = mfir_hop(&s.r[3], MFIR_D, recs_get, &s);
  assert_true(h.fid == 10 && h.stage == MFIR_R && h.kind == OB_SQ_FULL && h.cycles == 11 && !h.corrected);
  /* a full ROB whose head committed before the flow arrived did not hold it: its own fetch */
  s.r[3].kind[MFIR_D] = OB_ROB_FULL;
  h = mfir_hop(&s.r[3], MFIR_D, recs_get, &s);
  assert_true(h.fid == 13 && h.stage == MFIR_F && h.kind == OB_FRONTEND && h.cycles == 9 && h.corrected);
}

/* ---- a hand-made event stream --------------------------------------------------------------------- */

typedef struct hm {
  mfir_capture *cap;
  const ooo_observer *ob;
} hm;

static void ev(hm *h, void (*fn)(void *, const ooo_ev *), uint64_t cycle, uint64_t fid, uint64_t pc, uint32_t rid,
               uint32_t rid2, uint8_t slots, uint32_t extra, uint64_t by) {
  ooo_ev e;
  memset(&e, 0, sizeof e);
  e.cycle = cycle;
  e.fid = fid;
  e.pc = pc;
  e.sid = UINT32_MAX;
  e.rid = rid;
  e.rid2 = rid2;
  e.wrong_path = (fid & OOO_FID_WRONG) != 0;
  e.slots = slots;
  e.extra = extra;
  e.by_fid = by;
  fn(h->cap, &e);
}

static void commit(hm *h, uint64_t fid, uint64_t pc, const uint64_t t[5], const uint8_t kind[4], const uint64_t by[4],
                   const uint32_t rid[4], bool mispred) {
  ooo_commit_ev e;
  memset(&e, 0, sizeof e);
  e.cycle = t[4];
  e.fid = fid;
  e.pc = pc;
  e.sid = UINT32_MAX;
  e.rob = OOO_RID_ROB + (uint32_t)fid;
  e.fetch_cycle = t[0];
  e.dispatch_cycle = t[1];
  e.issue_cycle = t[2];
  e.complete_cycle = t[3];
  for (int s = 0; s < 4; s++) e.bind[s] = (ooo_bind){kind[s], {0, 0, 0}, rid[s], by[s], t[s + 1]};
  e.slots = 1;
  e.mispredicted = mispred;
  h->ob->commit(h->cap, &e);
}

static void mem(hm *h, int kind, int level, uint32_t rid, uint64_t fid, uint64_t addr, uint64_t cycle, uint64_t other) {
  mem_event e = {(uint8_t)kind, (uint8_t)level, 0, 0, rid, fid, addr, cycle, other};
  h->ob->mem(h->cap, &e);
}

static void slots(hm *h, uint64_t cycle, uint64_t n, int cat, uint8_t lost, uint8_t filled) {
  ooo_slot_ev e;
  memset(&e, 0, sizeof e);
  e.cycle = cycle;
  e.n_cycles = n;
  e.slots[cat] = lost;
  e.filled = filled;
  h->ob->slots(h->cap, &e);
}

#define W0 (OOO_FID_WRONG | 0)
#define W1 (OOO_FID_WRONG | 1)
#define NONE OOO_FID_NONE
#define PORT(p) (OOO_RID_PORT + (p))

static char *handmade_db(void) {
  wi_err err;
  char *out = tu_tmp_path(".db");
  mfir_build_opts o;
  memset(&o, 0, sizeof o);
  o.count = UINT64_MAX;
  hm h = {mfir_capture_new(out, NULL, NULL, &o, &err), mfir_observer()};
  if (!h.cap) fail_msg("capture: %s", err.msg);
  const ooo_observer *ob = h.ob;
  uint32_t mshr = 1 * 1000000u + 0 * 100000u + 3, set = 1 * 1000000u + 1 * 100000u + 36;
  ev(&h, ob->fetch, 0, 0, 0x1000, OOO_RID_FETCH, 0, 0, 0, 0);
  ev(&h, ob->fetch, 0, 1, 0x1004, OOO_RID_FETCH, 0, 0, 0, 0);
  ev(&h, ob->fetch, 1, 2, 0x1008, OOO_RID_FETCH, 0, 0, 0, 0);
  ev(&h, ob->fetch, 2, W0, 0x2000, OOO_RID_FETCH, 0, 0, 0, 0);
  ev(&h, ob->fetch, 3, W1, 0x2004, OOO_RID_FETCH, 0, 0, 0, 0);
  mem(&h, MEV_EVICT, 1, set, UINT64_MAX, 0x9000, 3, 0); /* flow 0's fill evicts line 0x9000 */
  ev(&h, ob->dispatch, 5, 0, 0x1000, OOO_RID_ROB + 0, OOO_RID_SCHED + 1, 1, OB_FRONTEND, NONE);
  ev(&h, ob->dispatch, 5, 1, 0x1004, OOO_RID_ROB + 1, OOO_RID_SCHED + OOO_RID_POOL_STRIDE + 4, 1, OB_FRONTEND, NONE);
  ev(&h, ob->dispatch, 6, 2, 0x1008, OOO_RID_ROB + 2, OOO_RID_SCHED + 2, 1, OB_FRONTEND, NONE);
  ev(&h, ob->issue, 6, 0, 0x1000, PORT(0), OOO_RID_SCHED + 1, 0, 1, 0);
  ev(&h, ob->dispatch, 7, W0, 0x2000, OOO_RID_ROB + 3, OOO_RID_SCHED + 3, 1, OB_FRONTEND, NONE);
  ev(&h, ob->complete, 7, 0, 0x1000, 0, 0, 0, OB_EXEC, NONE);
  ev(&h, ob->issue, 7, 1, 0x1004, PORT(2), 0, 0, 5, 0);
  mem(&h, MEV_MISS, 1, set, 1, 0x9008, 7, UINT64_MAX);
  mem(&h, MEV_MSHR_ALLOC, 1, mshr, 1, 0x9000, 7, UINT64_MAX);
  mem(&h, MEV_HIT, 2, 2 * 1000000u + 100000u + 36, 1, 0x9000, 7, UINT64_MAX);
  ev(&h, ob->dispatch, 8, W1, 0x2004, OOO_RID_ROB + 4, OOO_RID_SCHED + 4, 1, OB_SCHED_FULL, 0);
  static const uint32_t r0[4] = {OOO_RID_FETCH, 0, PORT(0), 0};
  commit(&h, 0, 0x1000, (const uint64_t[]){0, 5, 6, 7, 8},
         (const uint8_t[]){OB_FRONTEND, OB_DISPATCHED, OB_EXEC, OB_COMPLETION}, (const uint64_t[]){NONE, NONE, 0, 0},
         r0, false);
  mem(&h, MEV_FILL, 1, mshr, 1, 0x9000, 10, UINT64_MAX);
  mem(&h, MEV_MSHR_RELEASE, 1, mshr, 1, 0x9000, 10, UINT64_MAX);
  ev(&h, ob->complete, 10, 1, 0x1004, 0, 0, 0, OB_L2, NONE);
  ev(&h, ob->issue, 11, 2, 0x1008, PORT(0), 0, 0, 1, 0);
  static const uint32_t r1[4] = {OOO_RID_FETCH, 0, PORT(2), 0};
  commit(&h, 1, 0x1004, (const uint64_t[]){0, 5, 7, 10, 11},
         (const uint8_t[]){OB_FRONTEND, OB_OPERAND, OB_L2, OB_COMPLETION}, (const uint64_t[]){NONE, 0, 1, 1}, r1, false);
  ev(&h, ob->complete, 12, 2, 0x1008, 0, 0, 0, OB_EXEC, NONE);
  ev(&h, ob->squash, 12, W1, 0x2004, OOO_RID_ROB + 4, 0, 0, 0, 2);
  ev(&h, ob->squash, 12, W0, 0x2000, OOO_RID_ROB + 3, 0, 0, 0, 2);
  commit(&h, 2, 0x1008, (const uint64_t[]){1, 6, 11, 12, 13},
         (const uint8_t[]){OB_FRONTEND, OB_OPERAND, OB_EXEC, OB_COMPLETION}, (const uint64_t[]){NONE, 1, 2, 2}, r0, true);
  ev(&h, ob->fetch, 15, 3, 0x100c, OOO_RID_FETCH, 0, 0, 0, 0);
  ev(&h, ob->dispatch, 20, 3, 0x100c, OOO_RID_ROB + 5, OOO_RID_SCHED + 5, 1, OB_FRONTEND, 2);
  ev(&h, ob->issue, 21, 3, 0x100c, PORT(1), 0, 0, 1, 0);
  ev(&h, ob->complete, 22, 3, 0x100c, 0, 0, 0, OB_EXEC, NONE);
  static const uint32_t r3[4] = {OOO_RID_FETCH, 0, PORT(1), 0};
  commit(&h, 3, 0x100c, (const uint64_t[]){15, 20, 21, 22, 23},
         (const uint8_t[]){OB_FRONTEND, OB_DISPATCHED, OB_EXEC, OB_COMPLETION}, (const uint64_t[]){2, NONE, 3, 3}, r3,
         false);
  /* slot records: 6 per cycle; dispatch cycles filled, the rest lost; cycles 13..19 as one run */
  for (uint64_t c = 0; c < 24; c++) {
    if (c >= 13 && c < 20) {
      if (c == 13) slots(&h, 13, 7, OOO_SLOT_FE_LATENCY, 6, 0);
      continue;
    }
    uint8_t filled = c == 5 ? 2 : (c == 6 || c == 7 || c == 8 || c == 20) ? 1 : 0;
    if (filled) slots(&h, c, 1, OOO_SLOT_FE_BANDWIDTH, (uint8_t)(6 - filled), filled);
    else slots(&h, c, 1, OOO_SLOT_FE_LATENCY, 6, 0);
  }
  mfir_build_stats st;
  if (mfir_capture_finish(h.cap, &st, &err)) fail_msg("finish: %s", err.msg);
  assert_int_equal(st.insns, 4);
  assert_int_equal(st.wrong, 2);
  assert_int_equal(st.cycles, 24);
  check_integrity(out);
  return out;
}

static void test_handmade_tables(void **state) {
  (void)state;
  char *path = handmade_db();
  sqlite3 *db = db_open(path);
  assert_int_equal(q1(db, "SELECT count(*) FROM cflow"), 4);
  assert_int_equal(q1(db, "SELECT count(*) FROM wflow"), 2);
  assert_int_equal(q1(db, "SELECT count(*) FROM flow"), 6);
  assert_int_equal(q1(db, "SELECT count(*) FROM flow WHERE flags & 1"), 2);
  /* cycles imposed, by the hop rule */
  assert_int_equal(q1(db, "SELECT d_cyc FROM cflow WHERE fid = 1"), 5);
  assert_int_equal(q1(db, "SELECT i_cyc FROM cflow WHERE fid = 1"), 0);
  assert_int_equal(q1(db, "SELECT c_cyc FROM cflow WHERE fid = 1"), 3);
  assert_int_equal(q1(db, "SELECT c_kind FROM cflow WHERE fid = 1"), OB_L2);
  assert_int_equal(q1(db, "SELECT i_by FROM cflow WHERE fid = 2"), 1);
  assert_int_equal(q1(db, "SELECT d_by FROM cflow WHERE fid = 3"), 2);
  assert_int_equal(q1(db, "SELECT d_cyc FROM cflow WHERE fid = 3"), 5);
  assert_int_equal(q1(db, "SELECT flags FROM cflow WHERE fid = 2"), 2);
  assert_int_equal(q1(db, "SELECT sched FROM cflow WHERE fid = 1"), OOO_RID_SCHED + OOO_RID_POOL_STRIDE + 4);
  assert_int_equal(q1(db, "SELECT port FROM cflow WHERE fid = 3"), PORT(1));
  /* wrong path: squashed by flow 2, dispatch binding carried by the event */
  assert_int_equal(q1(db, "SELECT r_by FROM wflow WHERE fid = -1"), 2);
  assert_int_equal(q1(db, "SELECT r_kind FROM wflow WHERE fid = -2"), MK_SQUASH_BRANCH);
  assert_int_equal(q1(db, "SELECT retire FROM wflow WHERE fid = -2"), 12);
  assert_int_equal(q1(db, "SELECT d_kind FROM wflow WHERE fid = -2"), OB_SCHED_FULL);
  assert_int_equal(q1(db, "SELECT d_by FROM wflow WHERE fid = -2"), 0);
  assert_int_equal(q1(db, "SELECT d_cyc FROM wflow WHERE fid = -2"), 8 - 6); /* flow 0 issued at 6 */
  assert_int_equal(q1(db, "SELECT r_cyc FROM wflow WHERE fid = -1"), 0);
  /* one squash group */
  assert_int_equal(q1(db, "SELECT count(*) FROM squash"), 1);
  assert_int_equal(q1(db, "SELECT n * 1000 + by_fid * 10 + wrong FROM squash"), 2021);
  assert_int_equal(q1(db, "SELECT first_fid * 10 + last_fid FROM squash"), -21);
  /* memory: the miss of flow 1, evicted earlier by flow 0's fill */
  assert_int_equal(q1(db, "SELECT count(*) FROM memtx"), 1);
  assert_int_equal(q1(db, "SELECT evictor FROM memtx WHERE fid = 1"), 0);
  assert_int_equal(q1(db, "SELECT fill - cycle FROM memtx WHERE fid = 1"), 3);
  assert_int_equal(q1(db, "SELECT level FROM memtx WHERE fid = 1"), 2);
  assert_int_equal(q1(db, "SELECT addr FROM memtx WHERE fid = 1"), 0x9000);
  /* slot records: merged runs, every cycle once */
  assert_int_equal(q1(db, "SELECT sum(n_cycles) FROM slot"), 24);
  assert_int_equal(q1(db, "SELECT sum((retiring + bad_branch + bad_clear + fe_latency + fe_bandwidth + be_memory"
                          " + be_core + filled) * n_cycles) FROM slot"),
                   24 * 6);
  /* views */
  assert_int_equal(q1(db, "SELECT count(*) FROM edge WHERE type = 'bind' AND kind = 10"), 2);
  assert_int_equal(q1(db, "SELECT count(*) FROM edge WHERE type = 'squash'"), 2);
  assert_int_equal(q1(db, "SELECT count(*) FROM edge WHERE type = 'evict' AND src = 0"), 1);
  assert_int_equal(q1(db, "SELECT slots FROM topdown WHERE category = 'bad_branch'"), 2);
  assert_int_equal(q1(db, "SELECT count(*) FROM resource WHERE name = 'port P0'"), 1);
  assert_int_equal(q1(db, "SELECT value FROM meta WHERE key = 'total_cycles'"), 24);
  sqlite3_close(db);

  mfir_db *d = open_mfir(path);
  const mfir_window *w = mfir_get_window(d);
  assert_int_equal(w->total_cycles, 24);
  assert_int_equal(w->insns, 4);
  /* top-down: 4 retiring, 2 wrong-path, the rest as recorded */
  mfir_tma t;
  wi_err err;
  assert_int_equal(mfir_topdown(d, &t, &err), WI_OK);
  assert_int_equal(t.slots[OOO_SLOT_RETIRING], 4);
  assert_int_equal(t.slots[OOO_SLOT_BAD_BRANCH], 2);
  assert_int_equal(t.slots[OOO_SLOT_FE_BANDWIDTH], 4 + 5 * 4);
  assert_int_equal(t.slots[OOO_SLOT_FE_LATENCY], 6 * (24 - 5));
  assert_int_equal(t.total, 24 * 6);
  /* cycle stacks, by hand */
  mfir_stacks s;
  assert_int_equal(mfir_cycle_stacks(d, &s, &err), WI_OK);
  assert_int_equal(s.total, 24);
  assert_int_equal(s.by_kind[MK_BASE], 4);
  assert_int_equal(s.by_kind[OB_FRONTEND], 5 + 6);
  assert_int_equal(s.by_kind[OB_L2], 1);
  assert_int_equal(s.n_pcs, 4);
  assert_int_equal(s.pcs[0].pc, 0x100c);
  assert_int_equal(s.pcs[0].cycles, 10);
  mfir_stacks_free(&s);
  /* the critical path, hop by hop */
  mfir_critical c;
  assert_int_equal(mfir_critical_path(d, NULL, &c, &err), WI_OK);
  assert_int_equal(c.total, 24);
  uint64_t by[MK_END] = {0};
  for (size_t i = 0; i < c.n_kind; i++) by[c.by_kind[i].key] = c.by_kind[i].cycles;
  assert_int_equal(by[OB_COMPLETION], 1);
  assert_int_equal(by[OB_EXEC], 3);
  assert_int_equal(by[OB_DISPATCHED], 2);
  assert_int_equal(by[OB_FRONTEND], 10);
  assert_int_equal(by[MK_REDIRECT], 3);
  assert_int_equal(by[OB_OPERAND], 1);
  assert_int_equal(by[OB_L2], 3);
  assert_int_equal(by[MK_START], 1);
  mfir_critical_free(&c);
  /* the longest dispatch stall (flow 3): caused by the mispredicted branch, flow 2 */
  assert_int_equal(mfir_critical_path(d, "dispatch", &c, &err), WI_OK);
  assert_int_equal(c.symptom_fid, 3);
  assert_int_equal(c.total, 12);
  assert_int_equal(c.root_fid, 2);
  assert_int_equal(c.root_kind, MK_REDIRECT);
  assert_int_equal(c.root_pc, 0x1008);
  mfir_critical_free(&c);
  /* the L1 miss of flow 1: its line was evicted by flow 0 */
  assert_int_equal(mfir_critical_path(d, "miss", &c, &err), WI_OK);
  assert_int_equal(c.symptom_fid, 1);
  assert_int_equal(c.total, 3);
  assert_int_equal(c.root_fid, 0);
  assert_int_equal(c.root_kind, MK_EVICTED);
  assert_true(chain_has(&c, MK_EVICTED, 0));
  mfir_critical_free(&c);
  /* the longest ROB-head stall (flow 3, 10 cycles): back to the window's 13 */
  assert_int_equal(mfir_critical_path(d, "rob-head", &c, &err), WI_OK);
  assert_int_equal(c.symptom_fid, 3);
  assert_int_equal(c.total, 10);
  assert_int_equal(c.root_fid, 2);
  mfir_critical_free(&c);
  assert_int_equal(mfir_critical_path(d, "fid:2:I", &c, &err), WI_OK);
  assert_int_equal(c.total, 11 - 7);
  mfir_critical_free(&c);
  assert_int_not_equal(mfir_critical_path(d, "fid:99", &c, &err), WI_OK);
  assert_int_not_equal(mfir_critical_path(d, "bogus", &c, &err), WI_OK);
  mfir_close(d);
  unlink(path);
  free(path);
}

/* Wrong-path rows reach the page writer in fid order whatever order the squashes come in; a flow
 * older than any seen (fetched before the capture) goes in out of order, through SQLite. */
static void test_wrong_path_order(void **state) {
  (void)state;
  wi_err err;
  char *out = tu_tmp_path(".db");
  mfir_build_opts o;
  memset(&o, 0, sizeof o);
  o.count = UINT64_MAX;
  hm h = {mfir_capture_new(out, NULL, NULL, &o, &err), mfir_observer()};
  if (!h.cap) fail_msg("capture: %s", err.msg);
  const ooo_observer *ob = h.ob;
  ev(&h, ob->fetch, 0, 0, 0x1000, OOO_RID_FETCH, 0, 0, 0, 0);
  for (uint64_t n = 3; n < 9; n++) ev(&h, ob->fetch, 1, OOO_FID_WRONG | n, 0x2000 + 4 * n, OOO_RID_FETCH, 0, 0, 0, 0);
  ev(&h, ob->complete, 4, 0, 0x1000, 0, 0, 0, OB_EXEC, NONE); /* the branch resolves */
  /* fetch queue first (3, 4 in order), then the ROB youngest first (8 .. 5): as the model does */
  static const uint64_t order[] = {7, 8, 6, 5, 3, 4};
  for (size_t i = 0; i < WI_ARRAY_LEN(order); i++)
    ev(&h, ob->squash, 5, OOO_FID_WRONG | order[i], 0x2000 + 4 * order[i], OOO_RID_FETCH, 0, 0, 0, 0);
  ev(&h, ob->squash, 5, OOO_FID_WRONG | 1, 0x2004, OOO_RID_FETCH, 0, 0, 0, 0); /* never seen fetched */
  static const uint32_t r0[4] = {OOO_RID_FETCH, 0, PORT(0), 0};
  commit(&h, 0, 0x1000, (const uint64_t[]){0, 2, 3, 4, 6},
         (const uint8_t[]){OB_FRONTEND, OB_DISPATCHED, OB_EXEC, OB_COMPLETION}, (const uint64_t[]){NONE, NONE, 0, 0},
         r0, true);
  mfir_build_stats st;
  if (mfir_capture_finish(h.cap, &st, &err)) fail_msg("finish: %s", err.msg);
  assert_int_equal(st.wrong, 7);
  check_integrity(out);
  sqlite3 *db = db_open(out);
  assert_int_equal(q1(db, "SELECT count(*) FROM wflow"), 7);
  assert_int_equal(q1(db, "SELECT group_concat(-1 - fid, '') FROM (SELECT fid FROM wflow ORDER BY fid DESC)"), 1345678);
  assert_int_equal(q1(db, "SELECT pc FROM wflow WHERE fid = -2"), 0x2004);
  assert_int_equal(q1(db, "SELECT count(*) FROM wflow WHERE r_by = 0 AND retire = 5 AND fetch = 1 AND r_cyc = 1"), 6);
  sqlite3_close(db);
  unlink(out);
  free(out);
}

static void test_bad_inputs(void **state) {
  (void)state;
  wi_err err;
  /* not a database, a database without MFIR tables, a missing file */
  char *p = tu_tmp_path(".db");
  FILE *f = fopen(p, "w");
  fputs("this is not sqlite\n", f);
  fclose(f);
  assert_null(mfir_open(p, &err));
  unlink(p);
  sqlite3 *db = NULL;
  sqlite3_open(p, &db);
  sqlite3_exec(db, "CREATE TABLE x(a)", NULL, NULL, NULL);
  sqlite3_close(db);
  assert_null(mfir_open(p, &err));
  assert_int_equal(err.rc, WI_ECORRUPT);
  unlink(p);
  assert_null(mfir_open("/nonexistent/dir/x.db", &err));
  /* an empty window; a capture that saw nothing */
  mfir_build_opts o;
  memset(&o, 0, sizeof o);
  assert_null(mfir_capture_new(p, NULL, NULL, &o, &err));
  o.count = 10;
  mfir_capture *c = mfir_capture_new(p, NULL, NULL, &o, &err);
  assert_non_null(c);
  assert_int_not_equal(mfir_capture_finish(c, NULL, &err), WI_OK);
  assert_int_not_equal(access(p, F_OK), 0); /* nothing left behind */
  /* a commit out of program order is an error, not a crash */
  o.count = UINT64_MAX;
  c = mfir_capture_new(p, NULL, NULL, &o, &err);
  ooo_commit_ev e;
  memset(&e, 0, sizeof e);
  e.fid = 5;
  mfir_observer()->commit(c, &e);
  assert_int_not_equal(mfir_capture_finish(c, NULL, &err), WI_OK);
  assert_non_null(strstr(err.msg, "program order"));
  free(p);
}

/* ---- the page writer ------------------------------------------------------------------------------------ */

/* Values at every width boundary of the record format, and NULL. */
static int64_t edge_value(wi_rng *r) {
  static const int64_t v[] = {0, 1, -1, 2, 127, 128, -128, -129, 32767, 32768, -32768, -32769, 8388607, 8388608,
                              -8388609, 2147483647, 2147483648LL, -2147483649LL, 140737488355327LL,
                              140737488355328LL, -140737488355329LL, INT64_MAX, INT64_MIN + 1, MW_NULL};
  return v[rng_below(r, WI_ARRAY_LEN(v))];
}

typedef struct bt_exp {
  int64_t key;
  int64_t v[64];
} bt_exp;

typedef struct bt_tab {
  const char *name;
  int ncols;          /* including the key column (0) when keyed */
  bool keyed;
  int dir;
  size_t rows;
  VEC(bt_exp) exp;    /* every row, for the comparison */
  VEC(bt_exp) later;  /* rows bt_append refused: inserted through SQLite */
} bt_tab;

static int bt_cmp_key(const void *a, const void *b) {
  int64_t x = ((const bt_exp *)a)->key, y = ((const bt_exp *)b)->key;
  return x < y ? -1 : x > y;
}

typedef struct bt_cmp_ctx {
  const bt_tab *t;
  size_t i;
  int bad;
} bt_cmp_ctx;

static int bt_count_row(void *ctx, int64_t rowid, const int64_t *v, int ncols) {
  (void)rowid;
  (void)v;
  (void)ncols;
  (*(int *)ctx)++;
  return 0;
}

static int bt_scan_check(void *ctx, int64_t rowid, const int64_t *v, int ncols) {
  bt_cmp_ctx *c = ctx;
  const bt_exp *e = &c->t->exp.a[c->i++];
  if (rowid != e->key) c->bad++;
  for (int k = 0; k < ncols; k++)
    if (v[k] != (c->t->keyed && k == 0 ? e->key : e->v[k])) c->bad++;
  return 0;
}

/* Write tables of random rows with the page writer at one page size; SQLite must find them whole
 * (integrity_check) and equal, and the reader must read back the same. */
static void bt_roundtrip(int page_size, uint64_t seed) {
  wi_rng rng;
  rng_seed(&rng, seed);
  char *path = tu_tmp_path(".db");
  bt_tab tabs[] = {
    {"asc", 8, true, 1, 6000 + rng_below(&rng, 6000), {0}, {0}},
    {"descn", 4, true, -1, 3000 + rng_below(&rng, 3000), {0}, {0}},
    {"imp", 3, false, 1, 2000, {0}, {0}},
    {"one", 2, true, 1, 1, {0}, {0}},
    {"none", 2, true, 1, 0, {0}, {0}},
    {"wide", 60, true, 1, 40, {0}, {0}},
  };
  size_t nt = WI_ARRAY_LEN(tabs);
  sqlite3 *db = NULL;
  assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
  char sql[4096];
  snprintf(sql, sizeof sql, "PRAGMA page_size=%d; PRAGMA journal_mode=OFF", page_size);
  assert_int_equal(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
  uint32_t root[8];
  for (size_t t = 0; t < nt; t++) {
    size_t p = (size_t)snprintf(sql, sizeof sql, "CREATE TABLE %s(", tabs[t].name);
    for (int k = 0; k < tabs[t].ncols; k++)
      p += (size_t)snprintf(sql + p, sizeof sql - p, "%sc%d%s", k ? ", " : "", k,
                            k == 0 && tabs[t].keyed ? " INTEGER PRIMARY KEY" : " INTEGER");
    snprintf(sql + p, sizeof sql - p, ")");
    assert_int_equal(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
    snprintf(sql, sizeof sql, "SELECT rootpage FROM sqlite_schema WHERE name = '%s'", tabs[t].name);
    root[t] = (uint32_t)q1(db, sql);
  }
  sqlite3_close(db);
  bt_file f;
  wi_err err;
  assert_int_equal(bt_open(&f, path, &err), WI_OK);
  assert_int_equal(f.page_size, (uint32_t)page_size);
  for (size_t t = 0; t < nt; t++) {
    bt_tab *tb = &tabs[t];
    bt_tree tr;
    bt_tree_init(&tr, &f, root[t], tb->dir);
    int64_t key = tb->dir > 0 ? -(int64_t)rng_below(&rng, 1000000) : -1;
    bool was_late = false;
    for (size_t i = 0; i < tb->rows; i++) {
      bt_exp e;
      memset(&e, 0, sizeof e);
      for (int k = 0; k < tb->ncols; k++) e.v[k] = edge_value(&rng);
      if (!strcmp(tb->name, "wide"))
        for (int k = 1; k < tb->ncols; k++) e.v[k] = INT64_MAX - k; /* more than a 512-byte page holds */
      if (strcmp(tb->name, "wide") && rng_below(&rng, 3) == 0) /* trailing NULLs */
        for (int k = tb->ncols / 2; k < tb->ncols; k++) e.v[k] = MW_NULL;
      /* keys: steps of 2 or more (wide now and then), so key - dir is free for an out-of-order row */
      uint64_t step = 2 + (rng_below(&rng, 50) == 0 ? rng_below(&rng, 1ULL << 40) : rng_below(&rng, 3));
      bool late = i > 0 && !was_late && rng_below(&rng, 97) == 0; /* key - dir is free once */
      was_late = late;
      if (late) e.key = key - tb->dir;
      else e.key = key = i == 0 ? key : key + tb->dir * (int64_t)step;
      if (!tb->keyed) e.key = (int64_t)i + 1;
      if (tb->keyed) e.v[0] = e.key;
      bool ok = bt_append(&tr, e.key, e.v, tb->ncols, tb->keyed ? 0 : -1);
      if (late && tb->keyed) assert_false(ok);
      if (!ok) VEC_PUSH(tb->later, e);
      VEC_PUSH(tb->exp, e);
    }
    assert_int_equal(bt_tree_finish(&tr), WI_OK);
    bt_tree_free(&tr);
    if (!strcmp(tb->name, "wide") && page_size == 512) assert_int_equal(tb->later.n, tb->rows);
  }
  assert_int_equal(bt_close(&f, &err), WI_OK);
  /* the rows the writer refused go in through SQLite, as mw_drain does */
  assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
  for (size_t t = 0; t < nt; t++) {
    bt_tab *tb = &tabs[t];
    for (size_t i = 0; i < tb->later.n; i++) {
      size_t p = (size_t)snprintf(sql, sizeof sql, "INSERT INTO %s VALUES(", tb->name);
      for (int k = 0; k < tb->ncols; k++) {
        int64_t x = tb->later.a[i].v[k];
        if (x == MW_NULL) p += (size_t)snprintf(sql + p, sizeof sql - p, "%sNULL", k ? "," : "");
        else p += (size_t)snprintf(sql + p, sizeof sql - p, "%s%lld", k ? "," : "", (long long)x);
      }
      snprintf(sql + p, sizeof sql - p, ")");
      if (sqlite3_exec(db, sql, NULL, NULL, NULL) != SQLITE_OK) fail_msg("%.300s: %s", sql, sqlite3_errmsg(db));
    }
  }
  sqlite3_close(db);
  check_integrity(path);
  db = db_open(path);
  for (size_t t = 0; t < nt; t++) {
    bt_tab *tb = &tabs[t];
    if (tb->exp.n > 1) qsort(tb->exp.a, tb->exp.n, sizeof *tb->exp.a, bt_cmp_key);
    snprintf(sql, sizeof sql, "SELECT rowid, * FROM %s ORDER BY rowid", tb->name);
    sqlite3_stmt *st = NULL;
    assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
    size_t i = 0;
    while (sqlite3_step(st) == SQLITE_ROW) {
      assert_true(i < tb->exp.n);
      const bt_exp *e = &tb->exp.a[i++];
      assert_int_equal(sqlite3_column_int64(st, 0), e->key);
      for (int k = 0; k < tb->ncols; k++) {
        if (e->v[k] == MW_NULL) assert_int_equal(sqlite3_column_type(st, k + 1), SQLITE_NULL);
        else assert_int_equal(sqlite3_column_int64(st, k + 1), e->v[k]);
      }
    }
    sqlite3_finalize(st);
    assert_int_equal(i, tb->exp.n);
    /* the reader, on the same pages (the wide rows spill into overflow pages: not for it) */
    bt_cmp_ctx c = {tb, 0, 0};
    wi_rc rc = bt_scan(path, root[t], tb->ncols, tb->keyed ? 0 : -1, bt_scan_check, &c, &err);
    if (!strcmp(tb->name, "wide") && page_size == 512) {
      assert_int_equal(rc, WI_EINVAL);
    } else {
      assert_int_equal(rc, WI_OK);
      assert_int_equal(c.i, tb->exp.n);
      assert_int_equal(c.bad, 0);
    }
    VEC_FREE(tb->exp);
    VEC_FREE(tb->later);
  }
  sqlite3_close(db);
  unlink(path);
  free(path);
}

static void test_page_writer(void **state) {
  (void)state;
  uint64_t seed = tu_seed();
  static const int sizes[] = {512, 1024, 4096, 8192, 65536};
  for (size_t i = 0; i < WI_ARRAY_LEN(sizes); i++) bt_roundtrip(sizes[i], seed + i);
  /* a corrupt page is reported, not followed */
  char *path = tu_tmp_path(".db");
  sqlite3 *db = NULL;
  assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
  sqlite3_exec(db, "PRAGMA page_size=512; CREATE TABLE t(k INTEGER PRIMARY KEY, v);", NULL, NULL, NULL);
  sqlite3_exec(db, "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 2000)"
                   " INSERT INTO t SELECT i, i * 3 FROM n", NULL, NULL, NULL);
  uint32_t root = (uint32_t)q1(db, "SELECT rootpage FROM sqlite_schema WHERE name = 't'");
  sqlite3_close(db);
  FILE *f = fopen(path, "r+b");
  assert_non_null(f);
  fseek(f, (long)(root - 1) * 512 + 8, SEEK_SET); /* the root's right-most child: past the end */
  fputc(0x7f, f);
  fclose(f);
  int n = 0;
  wi_err err;
  assert_int_equal(bt_scan(path, root, 2, 0, bt_count_row, &n, &err), WI_ECORRUPT);
  unlink(path);
  free(path);
}

/* ---- on the model: a dependency chain beside independent work ------------------------------------------ */

static const char *const chain_src =
  "loop:\n"
  "  imul rax, rax\n"
  "  add rbx, 1\n"
  "  imul rax, rax\n"
  "  add rdx, 1\n"
  "  imul rax, rax\n"
  "  add rsi, 1\n"
  "  imul rax, rax\n"
  "  add rdi, 1\n"
  "  dec rcx\n"
  "  jnz loop\n"
  "done:\n"
  "  nop\n";

static void test_chain_is_critical(void **state) {
  (void)state;
  tbuild *tb = build(chain_src);
  const int iters = 400;
  tb_loop(tb, "loop", "done", (uint64_t)iters, NULL, NULL);
  tb_exec(tb, tb_label(tb, "done"), NULL, 0);
  char *trace = write_trace(tb);
  uint64_t loop = tb_label(tb, "loop");
  uint64_t imul[4];
  uint64_t pc = loop;
  for (int k = 0; k < 4; k++) {
    imul[k] = pc;
    pc += tb_len(tb, pc);
    pc += tb_len(tb, pc);
  }
  tb_free(tb);
  char *path = build_db(trace, NULL, 0, UINT64_MAX, NULL);
  mfir_db *d = open_mfir(path);
  wi_err err;
  mfir_critical c;
  assert_int_equal(mfir_critical_path(d, "end", &c, &err), WI_OK);
  assert_int_equal(c.total, mfir_get_window(d)->total_cycles);
  /* Execution hops (complete <- issue) on the walk: exactly the imul instances. */
  size_t n_imul = (size_t)iters * 4, seen = 0, other = 0;
  uint64_t exec_cycles = 0;
  for (size_t i = 0; i < c.n_chain; i++) {
    const mfir_step *s = &c.chain[i];
    if (s->stage != MFIR_C) continue;
    bool is_imul = s->pc == imul[0] || s->pc == imul[1] || s->pc == imul[2] || s->pc == imul[3];
    if (is_imul) {
      seen++;
      exec_cycles += s->cycles;
    } else {
      other++;
    }
  }
  uint64_t imul_cycles = 0;
  for (size_t i = 0; i < c.n_pc; i++)
    for (int k = 0; k < 4; k++)
      if (c.by_pc[i].key == imul[k]) imul_cycles += c.by_pc[i].cycles;
  print_message("chain: %llu cycles; %zu of %zu imuls and %zu other completions on the path; imul PCs %.1f%%\n",
                (unsigned long long)c.total, seen, n_imul, other, 100.0 * (double)imul_cycles / (double)c.total);
  assert_int_equal(seen, n_imul);
  assert_true(other <= 2); /* the loop's tail after the last imul */
  assert_true(exec_cycles == 3 * n_imul);
  assert_true(imul_cycles * 100 >= c.total * 97);
  done_walk(&c, d, path, trace);
}

/* ---- on the model: branches and loads; top-down, stacks, window equality, Kanata ------------------------ */

static const char *const mix_src =
  "loop:\n"
  "  mov rax, [rsi]\n"
  "  add rbx, rax\n"
  "  test rdx, 1\n"
  "  jz skip\n"
  "  imul rbx, rbx\n"
  "  add rdi, 8\n"
  "skip:\n"
  "  mov [rdi], rbx\n"
  "  add rdx, rax\n"
  "  dec rcx\n"
  "  jnz loop\n"
  "done:\n"
  "  nop\n";

typedef struct mix_ctx {
  wi_rng rng;
  uint64_t load_pc;
} mix_ctx;

static void mix_mem(void *vctx, uint64_t pc, int slot, uint64_t *addr, uint32_t *size, bool *is_store) {
  (void)slot;
  (void)size;
  mix_ctx *c = vctx;
  if (pc == c->load_pc && !*is_store) *addr = 0x20000000ULL + 64 * rng_below(&c->rng, 1u << 16); /* 4 MiB */
}

static char *mix_trace(uint64_t seed, int iters) {
  tbuild *tb = build(mix_src);
  uint64_t loop = tb_label(tb, "loop"), skip = tb_label(tb, "skip"), done = tb_label(tb, "done");
  uint64_t jz = loop;
  for (int k = 0; k < 3; k++) jz += tb_len(tb, jz);
  mix_ctx ctx;
  rng_seed(&ctx.rng, seed);
  ctx.load_pc = loop;
  for (int i = 0; i < iters; i++) {
    tb_run(tb, loop, jz, mix_mem, &ctx);
    tb_exec(tb, jz, NULL, 0);
    if (rng_below(&ctx.rng, 2)) tb_run(tb, jz + tb_len(tb, jz), skip, mix_mem, &ctx);
    tb_run(tb, skip, done, mix_mem, &ctx);
  }
  tb_exec(tb, done, NULL, 0);
  char *path = write_trace(tb);
  tb_free(tb);
  return path;
}

static void test_topdown_and_stacks(void **state) {
  (void)state;
  uint64_t seed = tu_seed();
  char *trace = mix_trace(seed, 3000);
  wi_err err;
  /* the model alone */
  trace_t *t = trace_open(trace, &err);
  ooo_config cfg;
  ooo_config_default(&cfg);
  ooo_model *m = ooo_new(&cfg, t, 0, &err);
  assert_non_null(m);
  assert_int_equal(ooo_run(m, UINT64_MAX, &err), WI_OK);
  ooo_stats ms = *ooo_get_stats(m);
  ooo_topdown mtd;
  ooo_get_topdown(m, &mtd);
  ooo_free(m);
  trace_close(t);
  /* MFIR of the same run */
  mfir_build_stats bs;
  char *path = build_db(trace, &cfg, 0, UINT64_MAX, &bs);
  assert_true(bs.wrong > 0);
  sqlite3 *db = db_open(path);
  assert_int_equal(q1(db, "SELECT sum(count) FROM pc"), (int64_t)ms.insns);
  assert_int_equal(q1(db, "SELECT sum(wrong_count) FROM pc"), q1(db, "SELECT count(*) FROM wflow"));
  assert_int_equal(q1(db, "SELECT count(*) FROM pc WHERE asm IS NULL"), 0);
  assert_int_equal(q1(db, "SELECT sum(uses) FROM resource WHERE type = 'rob'"),
                   q1(db, "SELECT count(rob) FROM flow"));
  sqlite3_close(db);
  mfir_db *d = open_mfir(path);
  assert_int_equal(mfir_get_window(d)->total_cycles, ms.cycles);
  assert_int_equal(mfir_get_window(d)->insns, ms.insns);
  mfir_tma tma;
  assert_int_equal(mfir_topdown(d, &tma, &err), WI_OK);
  for (int k = 0; k < OOO_SLOT_NUM; k++) assert_int_equal(tma.slots[k], ms.slots[k]);
  assert_true(tma.td.retiring == mtd.retiring && tma.td.bad_speculation == mtd.bad_speculation &&
              tma.td.frontend_bound == mtd.frontend_bound && tma.td.backend_bound == mtd.backend_bound &&
              tma.td.memory_bound == mtd.memory_bound && tma.td.core_bound == mtd.core_bound &&
              tma.td.fe_latency == mtd.fe_latency && tma.td.fe_bandwidth == mtd.fe_bandwidth &&
              tma.td.branch_mispredicts == mtd.branch_mispredicts && tma.td.machine_clears == mtd.machine_clears);
  assert_int_equal(tma.total, ms.cycles * cfg.core.rename_width);
  mfir_stacks s;
  assert_int_equal(mfir_cycle_stacks(d, &s, &err), WI_OK);
  uint64_t sum = 0, sum_pc = 0, count = 0;
  for (int k = 0; k < MK_END; k++) sum += s.by_kind[k];
  for (size_t i = 0; i < s.n_pcs; i++) {
    sum_pc += s.pcs[i].cycles;
    count += s.pcs[i].count;
  }
  assert_int_equal(s.total, ms.cycles);
  assert_int_equal(sum, ms.cycles);
  assert_int_equal(sum_pc, ms.cycles);
  assert_int_equal(count, ms.insns);
  assert_int_equal(s.by_kind[MK_BASE] <= ms.insns, 1);
  mfir_stacks_free(&s);
  /* every walk's composition sums to its cycles */
  static const char *const symptoms[] = {NULL, "rob-head", "dispatch", "miss"};
  for (size_t k = 0; k < WI_ARRAY_LEN(symptoms); k++) {
    mfir_critical c;
    assert_int_equal(mfir_critical_path(d, symptoms[k], &c, &err), WI_OK);
    uint64_t a = 0, b = 0, e = 0;
    for (size_t i = 0; i < c.n_kind; i++) a += c.by_kind[i].cycles;
    for (size_t i = 0; i < c.n_pc; i++) b += c.by_pc[i].cycles;
    for (size_t i = 0; i < c.n_func; i++) e += c.by_func[i].cycles;
    assert_int_equal(a, c.total);
    assert_int_equal(b, c.total);
    assert_int_equal(e, c.total);
    if (!symptoms[k]) assert_int_equal(c.total, ms.cycles);
    else assert_int_equal(c.total, c.end_cycle + 1 - c.start_cycle);
    mfir_critical_free(&c);
  }
  mfir_close(d);
  unlink(path);
  free(path);
  unlink(trace);
  free(trace);
}

/* Fail with the first differing line of two row dumps. */
static void same_rows(const char *what, const char *a, const char *b) {
  if (!strcmp(a, b)) return;
  size_t line = 1;
  const char *p = a, *q = b;
  while (*p && *p == *q) {
    if (*p == '\n') line++;
    p++, q++;
  }
  while (p > a && p[-1] != '\n') p--, q--;
  fail_msg("%s differ at row %zu:\n  full:   %.200s\n  window: %.200s", what, line, p, q);
}


static void test_window_equals_full(void **state) {
  (void)state;
  uint64_t seed = tu_seed() + 1;
  char *trace = mix_trace(seed, 3000);
  char *full = build_db(trace, NULL, 0, UINT64_MAX, NULL);
  sqlite3 *fdb = db_open(full);
  int64_t n = q1(fdb, "SELECT count(*) FROM cflow");
  uint64_t s0 = (uint64_t)n / 3 + 1, cnt = (uint64_t)n / 3;
  char *win = build_db(trace, NULL, s0, cnt, NULL);
  sqlite3 *wdb = db_open(win);
  char sql[512];
  snprintf(sql, sizeof sql, "SELECT * FROM cflow WHERE fid BETWEEN %llu AND %llu ORDER BY fid", (unsigned long long)s0,
           (unsigned long long)(s0 + cnt - 1));
  char *a = tu_sql_rows(fdb, sql), *b = tu_sql_rows(wdb, "SELECT * FROM cflow ORDER BY fid");
  assert_true(strlen(b) > 1000);
  same_rows("cflow", a, b);
  free(a);
  free(b);
  int64_t c0 = q1(wdb, "SELECT value FROM meta WHERE key = 'start_cycle'");
  int64_t c1 = q1(wdb, "SELECT value FROM meta WHERE key = 'end_cycle'");
  snprintf(sql, sizeof sql, "SELECT retire + 1 FROM cflow WHERE fid = %llu", (unsigned long long)(s0 - 1));
  assert_int_equal(c0, q1(fdb, sql));
  /* wrong-path flows squashed in the window, dependences beyond three, squash groups */
  snprintf(sql, sizeof sql, "SELECT * FROM wflow WHERE retire BETWEEN %lld AND %lld ORDER BY fid DESC", (long long)c0,
           (long long)c1);
  a = tu_sql_rows(fdb, sql);
  b = tu_sql_rows(wdb, "SELECT * FROM wflow ORDER BY fid DESC");
  same_rows("wflow", a, b);
  free(a);
  free(b);
  snprintf(sql, sizeof sql, "SELECT * FROM squash WHERE cycle BETWEEN %lld AND %lld ORDER BY cycle, by_fid, wrong",
           (long long)c0, (long long)c1);
  a = tu_sql_rows(fdb, sql);
  b = tu_sql_rows(wdb, "SELECT * FROM squash ORDER BY cycle, by_fid, wrong");
  same_rows("squash", a, b);
  free(a);
  free(b);
  /* memory transactions that started in the window and finished in it (ids and evictors may differ:
   * the windowed build saw no evictions before its margin) */
  snprintf(sql, sizeof sql,
           "SELECT fid, kind, addr, cycle, level, fill, set_rid, mshr1, mshr2, mshr3, dram, flags FROM memtx"
           " WHERE cycle BETWEEN %lld AND %lld AND (fill IS NULL OR fill <= %lld) ORDER BY cycle, fid, addr, kind, level",
           (long long)c0, (long long)c1, (long long)c1);
  a = tu_sql_rows(fdb, sql);
  b = tu_sql_rows(wdb, "SELECT fid, kind, addr, cycle, level, fill, set_rid, mshr1, mshr2, mshr3, dram, flags FROM memtx"
                     " WHERE flags & 8 = 0 ORDER BY cycle, fid, addr, kind, level");
  same_rows("memtx", a, b);
  free(a);
  free(b);
  /* lost slots per category over the window's cycles (runs split exactly at its edges) */
  snprintf(sql, sizeof sql,
           "SELECT sum((min(cycle + n_cycles, %lld) - max(cycle, %lld)) * (fe_latency * 1000 + be_memory * 100 +"
           " be_core * 10 + bad_branch)) FROM slot WHERE cycle + n_cycles > %lld AND cycle < %lld",
           (long long)c1 + 1, (long long)c0, (long long)c0, (long long)c1 + 1);
  assert_int_equal(q1(fdb, sql), q1(wdb, "SELECT sum(n_cycles * (fe_latency * 1000 + be_memory * 100 + be_core * 10 +"
                                         " bad_branch)) FROM slot"));
  sqlite3_close(fdb);
  sqlite3_close(wdb);
  /* the windowed walk covers exactly the window's cycles */
  mfir_db *d = open_mfir(win);
  mfir_critical c;
  wi_err err;
  assert_int_equal(mfir_critical_path(d, NULL, &c, &err), WI_OK);
  assert_int_equal(c.total, (uint64_t)(c1 - c0 + 1));
  mfir_critical_free(&c);
  mfir_close(d);
  unlink(full);
  unlink(win);
  free(full);
  free(win);
  unlink(trace);
  free(trace);
}

/* Parse a Kanata log: header, known commands, I before anything else per id, exactly one R. */
static void check_kanata(const char *path, size_t *n_insns, size_t *n_flushed) {
  FILE *f = fopen(path, "r");
  assert_non_null(f);
  char line[1024];
  assert_non_null(fgets(line, sizeof line, f));
  assert_string_equal(line, "Kanata\t0004\n");
  size_t cap = 1024, n = 0, flushed = 0;
  uint8_t *st = calloc(cap, 1); /* 0 unseen, 1 open, 2 retired */
  while (fgets(line, sizeof line, f)) {
    char cmd[8];
    unsigned long long id = 0, a = 0, b = 0;
    if (!strncmp(line, "C=\t", 3) || !strncmp(line, "C\t", 2)) {
      assert_true(sscanf(line + 2 + (line[1] == '='), "%llu", &a) == 1);
      continue;
    }
    assert_true(sscanf(line, "%7s\t%llu", cmd, &id) == 2);
    while (id >= cap) {
      st = realloc(st, cap * 2);
      memset(st + cap, 0, cap);
      cap *= 2;
    }
    if (!strcmp(cmd, "I")) {
      assert_int_equal(st[id], 0);
      st[id] = 1;
      n++;
    } else if (!strcmp(cmd, "R")) {
      assert_int_equal(st[id], 1);
      assert_true(sscanf(line, "R\t%llu\t%llu\t%llu", &id, &a, &b) == 3);
      assert_true(b <= 1);
      flushed += b;
      st[id] = 2;
    } else if (!strcmp(cmd, "L") || !strcmp(cmd, "S") || !strcmp(cmd, "E") || !strcmp(cmd, "W")) {
      assert_int_equal(st[id], 1);
      if (!strcmp(cmd, "W")) {
        assert_true(sscanf(line, "W\t%llu\t%llu\t%llu", &id, &a, &b) == 3);
        assert_true(a < cap && st[a] != 0);
      }
    } else {
      fail_msg("unknown Kanata command in: %s", line);
    }
  }
  for (size_t i = 0; i < n; i++) assert_int_equal(st[i], 2);
  fclose(f);
  free(st);
  *n_insns = n;
  *n_flushed = flushed;
}

static void test_kanata(void **state) {
  (void)state;
  char *trace = mix_trace(tu_seed() + 2, 400);
  mfir_build_stats bs;
  char *db = build_db(trace, NULL, 0, UINT64_MAX, &bs);
  char *log = tu_tmp_path(".log");
  char *argv[] = {"export", db, "--kanata", log, NULL};
  assert_int_equal(export_kanata(4, argv), 0);
  size_t n, flushed;
  check_kanata(log, &n, &flushed);
  assert_int_equal(n, bs.insns + bs.wrong + bs.flushed);
  assert_int_equal(flushed, bs.wrong + bs.flushed);
  /* a slice */
  char *argv2[] = {"export", db, "--kanata", log, "--from", "100", "--count", "50", NULL};
  assert_int_equal(export_kanata(8, argv2), 0);
  check_kanata(log, &n, &flushed);
  assert_true(n >= 50 && n - flushed == 50);
  unlink(log);
  free(log);
  unlink(db);
  free(db);
  unlink(trace);
  free(trace);
}

/* ---- on the model: injected causes --------------------------------------------------------------------- */

/* A load of line A, twelve loads of other lines in A's L1D set (each waits for the previous, so
 * they fill in order and the last one evicts A under LRU), and a reload of A. */
typedef struct ev_ctx {
  uint64_t base, first, reload; /* A, the first conflict load, the reload */
} ev_ctx;

static void evict_mem(void *vctx, uint64_t pc, int slot, uint64_t *addr, uint32_t *size, bool *is_store) {
  (void)slot;
  (void)size;
  (void)is_store;
  ev_ctx *c = vctx;
  const uint64_t a = 0x30000000ULL;
  /* conflict load k (1..12) is 4 bytes long; 4 KiB apart = the same set (64 sets of 64 bytes) */
  *addr = pc == c->base || pc == c->reload ? a : a + 4096ULL * ((pc - c->first) / 4 + 1);
}

static void test_eviction_named(void **state) {
  (void)state;
  char src[2048] = "  mov rax, [rdi]\n";
  for (int i = 0; i < 12; i++) strcat(src, "  mov rax, [rsi + rax]\n");
  strcat(src, "reload:\n  mov rbx, [rdi + rax]\ndone:\n  nop\n");
  tbuild *tb = build(src);
  ev_ctx ctx = {tb_base(tb), tb_base(tb) + tb_len(tb, tb_base(tb)), tb_label(tb, "reload")};
  for (uint64_t pc = ctx.first; pc < ctx.reload; pc += tb_len(tb, pc))
    assert_int_equal(tb_len(tb, pc), 4); /* the address rule above relies on it */
  tb_run(tb, ctx.base, tb_label(tb, "done"), evict_mem, &ctx);
  tb_exec(tb, tb_label(tb, "done"), NULL, 0);
  char *trace = write_trace(tb);
  tb_free(tb);
  ooo_config cfg;
  ooo_config_default(&cfg);
  cfg.mem.l1d.prefetcher = PF_NONE; /* only demand fills evict */
  cfg.mem.l2.prefetcher = PF_NONE;
  cfg.mem.llc.prefetcher = PF_NONE;
  char *path = build_db(trace, &cfg, 0, UINT64_MAX, NULL);
  /* flows: 0 = A, 1..12 = conflicts, 13 = reload of A */
  sqlite3 *db = db_open(path);
  assert_int_equal(q1(db, "SELECT c_kind FROM cflow WHERE fid = 13"), OB_L2);
  assert_int_equal(q1(db, "SELECT evictor FROM memtx WHERE fid = 13 AND kind = 0"), 12);
  assert_int_equal(q1(db, "SELECT count(*) FROM memtx WHERE evictor IS NOT NULL AND kind = 0"), 1);
  sqlite3_close(db);
  mfir_db *d = open_mfir(path);
  mfir_critical c;
  wi_err err;
  assert_int_equal(mfir_critical_path(d, "fid:13:C", &c, &err), WI_OK);
  assert_true(chain_has(&c, MK_EVICTED, 12));
  assert_int_equal(c.root_fid, 12);
  assert_int_equal(c.root_kind, MK_EVICTED);
  assert_int_equal(c.root_pc, ctx.first + 11 * 4);
  done_walk(&c, d, path, trace);
}

/* A streaming loop that stores to a new line each iteration: the store queue fills with committed
 * stores waiting for their lines, rename stops on it, the fetch queue fills behind. Every fetch
 * names the rename that freed its entry, the critical path goes through the store queue, not
 * along fetch order, and its cycles go to the store's PC (not to whichever instruction rename
 * reached first after the stall: before, the store got 0.2% of them). */
static void seq_store_mem(void *vctx, uint64_t pc, int slot, uint64_t *addr, uint32_t *size, bool *is_store) {
  (void)pc;
  (void)slot;
  (void)size;
  uint64_t *n = vctx;
  if (*is_store) *addr = 0x30000000ULL + 64 * (*n)++;
}

static void test_back_pressure(void **state) {
  (void)state;
  tbuild *tb = build("loop:\n  vmovapd ymm1, [rsi]\n  vaddpd ymm1, ymm1, ymm2\n  vmovapd [rdi], ymm1\n  add rdi, 64\n  cmp rdi, rcx\n  jb loop\ndone:\n  nop\n");
  uint64_t n = 0;
  tb_loop(tb, "loop", "done", 20000, seq_store_mem, &n);
  tb_exec(tb, tb_label(tb, "done"), NULL, 0);
  char *trace = write_trace(tb);
  uint64_t store_pc = tb_label(tb, "loop") + 8;
  tb_free(tb);
  ooo_config cfg;
  ooo_config_default(&cfg);
  char *path = build_db(trace, &cfg, 0, UINT64_MAX, NULL);
  sqlite3 *db = db_open(path);
  /* the first fetch_queue fetches took fresh entries; every later one names a flow renamed no
   * later than it was fetched: fetch_queue flows earlier (a wrong-path one only after the loop's
   * exit mispredicted) */
  assert_true(q1(db, "SELECT count(*) FROM cflow WHERE f_by IS NULL") <= cfg.fe.fetch_queue);
  assert_int_equal(q1(db, "SELECT count(*) FROM cflow c JOIN cflow p ON p.fid = c.f_by WHERE p.dispatch > c.fetch"), 0);
  char sql[160];
  snprintf(sql, sizeof sql, "SELECT count(*) FROM cflow WHERE f_by >= 0 AND f_by != fid - %u", cfg.fe.fetch_queue);
  assert_int_equal(q1(db, sql), 0);
  assert_true(q1(db, "SELECT count(*) FROM cflow WHERE d_kind = 5") > 1000); /* sq_full */
  /* the first fetch waited for the cold I-cache, and says so */
  snprintf(sql, sizeof sql, "SELECT f_rid FROM cflow WHERE fid = 0");
  assert_int_equal(q1(db, sql), OOO_RID_ICACHE);
  assert_true(q1(db, "SELECT count(*) FROM cflow WHERE f_rid IS NOT NULL") < 100);
  sqlite3_close(db);
  mfir_db *d = open_mfir(path);
  mfir_critical c;
  wi_err err;
  assert_int_equal(mfir_critical_path(d, "end", &c, &err), WI_OK);
  uint64_t sq = 0, order = 0, store = 0;
  for (size_t i = 0; i < c.n_kind; i++) {
    if (c.by_kind[i].key == OB_SQ_FULL) sq = c.by_kind[i].cycles;
    if (c.by_kind[i].key == MK_FETCH_ORDER) order = c.by_kind[i].cycles;
  }
  for (size_t i = 0; i < c.n_pc; i++)
    if (c.by_pc[i].key == store_pc) store = c.by_pc[i].cycles;
  print_message("store stream: %llu cycles; sq_full %.1f%%, fetch_order %.1f%%, the store's PC %.1f%%\n",
                (unsigned long long)c.total, 100.0 * (double)sq / (double)c.total,
                100.0 * (double)order / (double)c.total, 100.0 * (double)store / (double)c.total);
  assert_true(sq * 2 > c.total);
  assert_true(order * 10 < c.total);
  assert_true(store * 10 >= sq * 9);
  done_walk(&c, d, path, trace);
}

/* A loop whose exit branch was not taken ten times; on the eleventh it is taken, but its load misses
 * to DRAM, so it resolves late: its wrong path (the loop body: 200 additions that need the load)
 * fills the scheduler and dispatch stalls until the branch resolves. */
typedef struct wp_ctx {
  uint64_t load;
  int n;
} wp_ctx;

static void wp_mem(void *vctx, uint64_t pc, int slot, uint64_t *addr, uint32_t *size, bool *is_store) {
  (void)slot;
  (void)size;
  (void)is_store;
  wp_ctx *c = vctx;
  if (pc == c->load) *addr = ++c->n <= 10 ? 0x40000000ULL : 0x48000000ULL;
}

static void test_wrong_path_fills_scheduler(void **state) {
  (void)state;
  size_t cap = 8192;
  char *src = malloc(cap);
  strcpy(src, "loop:\n  mov rax, [rsi]\n  cmp rax, 0\nbranch:\n  jne exit\n");
  for (int i = 0; i < 200; i++) strcat(src, "  add rbx, rax\n");
  strcat(src, "  dec rcx\n  jnz loop\nexit:\n  add rcx, 1\n  add rdx, 1\ndone:\n  nop\n");
  tbuild *tb = build(src);
  free(src);
  uint64_t loop = tb_label(tb, "loop"), jne = tb_label(tb, "branch"), exit_pc = tb_label(tb, "exit");
  wp_ctx ctx = {loop, 0};
  for (int i = 0; i < 10; i++) tb_run(tb, loop, exit_pc, wp_mem, &ctx); /* not taken, loop taken */
  tb_run(tb, loop, jne + tb_len(tb, jne), wp_mem, &ctx);               /* taken this time */
  tb_run(tb, exit_pc, tb_label(tb, "done"), NULL, NULL);
  tb_exec(tb, tb_label(tb, "done"), NULL, 0);
  char *trace = write_trace(tb);
  tb_free(tb);
  char *path = build_db(trace, NULL, 0, UINT64_MAX, NULL);
  const int64_t branch = 10 * 205 + 2, after = branch + 1;
  sqlite3 *db = db_open(path);
  char sql[256];
  snprintf(sql, sizeof sql, "SELECT pc FROM cflow WHERE fid = %lld", (long long)branch);
  assert_int_equal(q1(db, sql), (int64_t)jne);
  snprintf(sql, sizeof sql, "SELECT flags & 2 FROM cflow WHERE fid = %lld", (long long)branch);
  assert_int_equal(q1(db, sql), 2);
  snprintf(sql, sizeof sql, "SELECT count(*) FROM wflow WHERE r_by = %lld AND dispatch IS NOT NULL", (long long)branch);
  int64_t wrong = q1(db, sql);
  snprintf(sql, sizeof sql, "SELECT count(*) FROM wflow WHERE r_by = %lld AND d_kind = %d", (long long)branch,
           OB_SCHED_FULL);
  int64_t sched_full = q1(db, sql);
  print_message("wrong path: %lld flows dispatched before the branch resolved, %lld after waiting for the scheduler\n",
                (long long)wrong, (long long)sched_full);
  assert_true(wrong >= 97);
  assert_true(sched_full >= 1);
  sqlite3_close(db);
  mfir_db *d = open_mfir(path);
  mfir_critical c;
  wi_err err;
  /* the dispatch stall that follows: of the first instruction after the branch */
  char sym[64];
  snprintf(sym, sizeof sym, "fid:%lld:D", (long long)after);
  assert_int_equal(mfir_critical_path(d, sym, &c, &err), WI_OK);
  print_message("dispatch of flow %lld: %llu cycles since the previous dispatch, root %lld via %s\n",
                (long long)after, (unsigned long long)c.total, (long long)c.root_fid, mfir_kind_name(c.root_kind));
  assert_int_equal(c.root_fid, branch);
  assert_true(c.root_kind == MK_REDIRECT || c.root_kind == MK_SQUASH_BRANCH || c.root_kind == MK_WRONG_PATH);
  mfir_critical_free(&c);
  /* and it is the window's longest dispatch stall */
  assert_int_equal(mfir_critical_path(d, "dispatch", &c, &err), WI_OK);
  print_message("longest dispatch stall: flow %lld, %llu cycles, root %lld via %s\n", (long long)c.symptom_fid,
                (unsigned long long)c.total, (long long)c.root_fid, mfir_kind_name(c.root_kind));
  assert_int_equal(c.root_fid, branch);
  done_walk(&c, d, path, trace);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_kind_names),
    cmocka_unit_test(test_hop_rules),
    cmocka_unit_test(test_hop_queues),
    cmocka_unit_test(test_handmade_tables),
    cmocka_unit_test(test_wrong_path_order),
    cmocka_unit_test(test_bad_inputs),
    cmocka_unit_test(test_page_writer),
    cmocka_unit_test(test_chain_is_critical),
    cmocka_unit_test(test_topdown_and_stacks),
    cmocka_unit_test(test_window_equals_full),
    cmocka_unit_test(test_kanata),
    cmocka_unit_test(test_eviction_named),
    cmocka_unit_test(test_wrong_path_fills_scheduler),
    cmocka_unit_test(test_back_pressure),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

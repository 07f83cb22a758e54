/* export_kanata.c — `whatif export DB --kanata OUT.log`: an MFIR window as a Kanata 0004 pipeline
 * log for the Konata viewer. Every fetched instruction (committed, wrong path, or an attempt a
 * machine clear flushed) gets I, L (pc and disassembly; bindings on mouse-over), stage starts
 * F / Ds / Is / Cm, W (register producers) and exactly one R (0 retired, 1 flushed). */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "mfir.h"

#define KN_NOTIME UINT64_MAX

/* One instruction to show. */
typedef struct kn_ins {
  int64_t fid;
  uint64_t pc;
  uint64_t t[5];           /* fetch, dispatch, issue, complete, retire (or squash) */
  int64_t prod[3];         /* producers (correct path) */
  uint8_t kind[4];         /* bindings D I C R */
  int64_t by[4];
  uint8_t type;            /* 0 committed, 1 wrong path, 2 flushed attempt */
} kn_ins;

typedef VEC(kn_ins) kn_vec;

static inline uint64_t col_t(sqlite3_stmt *st, int i) {
  return sqlite3_column_type(st, i) == SQLITE_NULL ? KN_NOTIME : (uint64_t)sqlite3_column_int64(st, i);
}
static inline int64_t col_f(sqlite3_stmt *st, int i) {
  return sqlite3_column_type(st, i) == SQLITE_NULL ? MFIR_NOFID : sqlite3_column_int64(st, i);
}

/* The first known time of an instruction (its fetch unless that was before the capture). */
static uint64_t first_time(const kn_ins *k) {
  for (int s = 0; s < 5; s++)
    if (k->t[s] != KN_NOTIME) return k->t[s];
  return 0;
}

static int cmp_first(const void *a, const void *b) {
  uint64_t x = first_time(a), y = first_time(b);
  if (x != y) return x < y ? -1 : 1;
  const kn_ins *p = a, *q = b;
  if (p->type != q->type) return p->type < q->type ? -1 : 1;
  if (p->type == 1) return p->fid > q->fid ? -1 : p->fid < q->fid; /* wrong path: -1 - n, n ascending */
  return p->fid < q->fid ? -1 : p->fid > q->fid;
}

/* Load the instructions fetched in [lo, hi] cycles (correct path: fid in [f0, f1]). */
static wi_rc load(sqlite3 *db, int64_t f0, int64_t f1, uint64_t lo, uint64_t hi, kn_vec *v, wi_err *err) {
  static const char *const sql[3] = {
    "SELECT fid, pc, fetch, dispatch, issue, complete, retire, p1, p2, p3, d_kind, d_by, i_kind, i_by,"
    " c_kind, c_by, r_kind, r_by FROM cflow WHERE fid BETWEEN ?1 AND ?2 ORDER BY fid",
    "SELECT fid, pc, fetch, dispatch, issue, complete, retire, NULL, NULL, NULL, d_kind, d_by, NULL, NULL,"
    " c_kind, NULL, r_kind, r_by FROM wflow WHERE coalesce(fetch, dispatch, retire) BETWEEN ?3 AND ?4",
    "SELECT fid, pc, fetch, dispatch, issue, complete, squash, NULL, NULL, NULL, NULL, NULL, NULL, NULL,"
    " NULL, NULL, 43 + cause, by_fid FROM flush WHERE coalesce(fetch, dispatch, squash) BETWEEN ?3 AND ?4",
  };
  for (int q = 0; q < 3; q++) {
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, sql[q], -1, &st, NULL) != SQLITE_OK)
      return wi_fail(err, WI_ECORRUPT, "kanata: not an MFIR database (%s)", sqlite3_errmsg(db));
    sqlite3_bind_int64(st, 1, f0);
    sqlite3_bind_int64(st, 2, f1);
    sqlite3_bind_int64(st, 3, (int64_t)lo);
    sqlite3_bind_int64(st, 4, (int64_t)hi);
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
      kn_ins k;
      memset(&k, 0, sizeof k);
      k.type = (uint8_t)q;
      k.fid = sqlite3_column_int64(st, 0);
      k.pc = (uint64_t)sqlite3_column_int64(st, 1);
      for (int s = 0; s < 5; s++) k.t[s] = col_t(st, 2 + s);
      for (int p = 0; p < 3; p++) k.prod[p] = col_f(st, 7 + p);
      for (int b = 0; b < 4; b++) {
        k.kind[b] = (uint8_t)sqlite3_column_int(st, 10 + 2 * b);
        k.by[b] = col_f(st, 11 + 2 * b);
      }
      if (k.t[4] == KN_NOTIME) continue; /* never resolved: cannot be closed with R */
      VEC_PUSH(*v, k);
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) return wi_fail(err, WI_ECORRUPT, "kanata: reading flows: %s", sqlite3_errmsg(db));
  }
  if (v->n > 1) qsort(v->a, v->n, sizeof *v->a, cmp_first);
  return WI_OK;
}

/* ---- event heap: (cycle, file id, step) in increasing order ---------------------------------------- */

typedef struct kn_ev {
  uint64_t cycle;
  uint64_t id;             /* Kanata id (index into the sorted instructions) */
  uint8_t step;            /* 1..3 stage starts D I C, 4 retire */
} kn_ev;

static bool ev_less(const kn_ev *a, const kn_ev *b) {
  if (a->cycle != b->cycle) return a->cycle < b->cycle;
  if (a->id != b->id) return a->id < b->id;
  return a->step < b->step;
}

typedef VEC(kn_ev) kn_heap;

static void heap_push(kn_heap *h, kn_ev e) {
  VEC_PUSH(*h, e);
  size_t i = h->n - 1;
  while (i) {
    size_t p = (i - 1) / 2;
    if (!ev_less(&h->a[i], &h->a[p])) break;
    kn_ev t = h->a[i];
    h->a[i] = h->a[p];
    h->a[p] = t;
    i = p;
  }
}

static kn_ev heap_pop(kn_heap *h) {
  kn_ev top = h->a[0];
  h->a[0] = h->a[--h->n];
  size_t i = 0;
  for (;;) {
    size_t l = 2 * i + 1, r = l + 1, m = i;
    if (l < h->n && ev_less(&h->a[l], &h->a[m])) m = l;
    if (r < h->n && ev_less(&h->a[r], &h->a[m])) m = r;
    if (m == i) break;
    kn_ev t = h->a[i];
    h->a[i] = h->a[m];
    h->a[m] = t;
    i = m;
  }
  return top;
}

/* ---- writing ----------------------------------------------------------------------------------------- */

typedef struct kn_out {
  FILE *f;
  uint64_t now;            /* current cycle of the log */
  uint64_t retired;        /* retire ids handed out */
  wi_map64 id_of;          /* correct-path fid + 1 -> Kanata id + 1 (for W) */
  mfir_db *d;
  const kn_ins *ins;
} kn_out;

static void advance(kn_out *o, uint64_t cycle) {
  if (cycle > o->now) {
    fprintf(o->f, "C\t%llu\n", (unsigned long long)(cycle - o->now));
    o->now = cycle;
  }
}

static void emit_event(kn_out *o, const kn_ev *e) {
  static const char *const stage[] = {"F", "Ds", "Is", "Cm"};
  const kn_ins *k = &o->ins[e->id];
  advance(o, e->cycle);
  if (e->step < 4) {
    fprintf(o->f, "S\t%llu\t0\t%s\n", (unsigned long long)e->id, stage[e->step]);
    if (e->step == 1 && k->type == 0) /* wake-up arrows from producers still in the log */
      for (int p = 0; p < 3; p++) {
        if (k->prod[p] == MFIR_NOFID) continue;
        uint32_t *pid = map64_get(&o->id_of, (uint64_t)k->prod[p] + 1);
        if (pid) fprintf(o->f, "W\t%llu\t%u\t0\n", (unsigned long long)e->id, *pid - 1);
      }
  } else {
    bool flushed = k->type != 0;
    fprintf(o->f, "R\t%llu\t%llu\t%d\n", (unsigned long long)e->id, (unsigned long long)o->retired, flushed ? 1 : 0);
    if (!flushed) o->retired++;
  }
}

static void emit_start(kn_out *o, uint64_t id, kn_heap *h) {
  const kn_ins *k = &o->ins[id];
  uint64_t t0 = first_time(k);
  advance(o, t0);
  fprintf(o->f, "I\t%llu\t%lld\t0\n", (unsigned long long)id, (long long)k->fid);
  const mfir_pcinfo *pi = mfir_pc_info(o->d, k->pc);
  fprintf(o->f, "L\t%llu\t0\t%llx: %s%s\n", (unsigned long long)id, (unsigned long long)k->pc,
          pi ? pi->asm_text : "?", k->type == 1 ? "  (wrong path)" : k->type == 2 ? "  (flushed)" : "");
  fprintf(o->f, "L\t%llu\t1\tfid %lld", (unsigned long long)id, (long long)k->fid);
  const char *const st[4] = {"dispatch", "issue", "complete", k->type ? "squash" : "commit"};
  for (int b = 0; b < 4; b++) {
    if (!k->kind[b]) continue;
    fprintf(o->f, "; %s: %s", st[b], mfir_kind_name(k->kind[b]));
    if (k->by[b] != MFIR_NOFID && k->by[b] != k->fid) fprintf(o->f, " by %lld", (long long)k->by[b]);
  }
  fprintf(o->f, "\n");
  if (k->type == 0) map64_put(&o->id_of, (uint64_t)k->fid + 1, (uint32_t)id + 1);
  fprintf(o->f, "S\t%llu\t0\tF\n", (unsigned long long)id);
  /* Later stages, in order, never before the previous one. */
  uint64_t last = t0;
  for (int s = 1; s < 4; s++) {
    if (k->t[s] == KN_NOTIME || k->t[s] < t0) continue;
    uint64_t c = k->t[s] < last ? last : k->t[s];
    if (c > k->t[4]) break;
    heap_push(h, (kn_ev){c, id, (uint8_t)s});
    last = c;
  }
  heap_push(h, (kn_ev){k->t[4] < last ? last : k->t[4], id, 4});
}

static wi_rc write_log(mfir_db *d, const kn_vec *v, const char *out, wi_err *err) {
  wi_atomic_file af;
  if (atomic_open(&af, out, err)) return err->rc;
  kn_out o = {af.f, 0, 0, {0}, d, v->a};
  map64_init(&o.id_of, 1024);
  kn_heap h = {0};
  uint64_t start = v->n ? first_time(&v->a[0]) : 0;
  fprintf(o.f, "Kanata\t0004\n");
  fprintf(o.f, "C=\t%llu\n", (unsigned long long)start);
  o.now = start;
  for (size_t i = 0; i < v->n; i++) {
    kn_ev next = {first_time(&v->a[i]), i, 0};
    while (h.n && ev_less(&h.a[0], &next)) {
      kn_ev e = heap_pop(&h);
      emit_event(&o, &e);
    }
    emit_start(&o, i, &h);
  }
  while (h.n) {
    kn_ev e = heap_pop(&h);
    emit_event(&o, &e);
  }
  VEC_FREE(h);
  map64_free(&o.id_of);
  return atomic_commit(&af, err);
}

int export_kanata(int argc, char **argv);
int export_kanata(int argc, char **argv) {
  const char *in = NULL, *out = NULL;
  uint64_t from = UINT64_MAX, count = UINT64_MAX;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--kanata") || !strcmp(a, "--from") || !strcmp(a, "--count")) {
      if (i + 1 >= argc) return cli_usage("export", "%s needs a value", a);
      const char *val = argv[++i];
      if (!strcmp(a, "--kanata")) out = val;
      else if (!parse_u64(val, !strcmp(a, "--from") ? &from : &count))
        return cli_usage("export", "%s wants a number, not '%s'", a, val);
    } else if (a[0] == '-') {
      return cli_usage("export", "unknown option %s for --kanata", a);
    } else if (!in) {
      in = a;
    } else {
      return cli_usage("export", "unexpected argument '%s'", a);
    }
  }
  if (!in) return cli_usage("export", "no MFIR database given");
  wi_err err = {0};
  mfir_db *d = mfir_open(in, &err);
  if (!d) return cli_fail(&err);
  const mfir_window *w = mfir_get_window(d);
  int64_t f0 = from == UINT64_MAX ? w->first_fid : (int64_t)from;
  int64_t f1 = count == UINT64_MAX ? w->last_fid : f0 + (int64_t)count - 1;
  if (f0 < w->first_fid || f0 > w->last_fid || count == 0) {
    long long first = (long long)w->first_fid, last = (long long)w->last_fid; /* w dies with d */
    mfir_close(d);
    if (count == 0) return cli_usage("export", "--count must be at least 1");
    return cli_usage("export", "--from %lld is outside the window (%lld..%lld)", (long long)f0, first, last);
  }
  if (f1 > w->last_fid) f1 = w->last_fid;
  sqlite3 *db = mfir_sqlite(d);
  /* Cycle range: from the first instruction's fetch to the last one's commit. */
  uint64_t lo = 0, hi = UINT64_MAX;
  sqlite3_stmt *st = NULL;
  if (sqlite3_prepare_v2(db, "SELECT (SELECT fetch FROM cflow WHERE fid = ?1), (SELECT retire FROM cflow WHERE fid = ?2)",
                         -1, &st, NULL) == SQLITE_OK) {
    sqlite3_bind_int64(st, 1, f0);
    sqlite3_bind_int64(st, 2, f1);
    if (sqlite3_step(st) == SQLITE_ROW) {
      if (f0 > w->first_fid) lo = (uint64_t)sqlite3_column_int64(st, 0);
      if (f1 < w->last_fid) hi = (uint64_t)sqlite3_column_int64(st, 1);
    }
  }
  sqlite3_finalize(st);
  kn_vec v = {0};
  wi_rc rc = load(db, f0, f1, lo, hi > INT64_MAX ? INT64_MAX : hi, &v, &err);
  if (!rc) rc = write_log(d, &v, out, &err);
  size_t n = v.n;
  VEC_FREE(v);
  mfir_close(d);
  if (rc) return cli_fail(&err);
  fprintf(stderr, "whatif: %zu instructions (%lld..%lld and their wrong path) into %s\n", n, (long long)f0,
          (long long)f1, out);
  return 0;
}

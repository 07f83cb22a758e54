/* test_trace.c — the .wtr container: random round trips (raw and model mode), seeking,
 * determinism, stream copying, lookups, corruption (bit flips, truncation, versions) and the
 * saved corrupt-file corpus. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testutil.h"
#include "batch_pf.h"
#include "trace.h"
#include "util.h"

/* ==== a random program and its recorded stream ============================================== */

typedef struct g_ev {
  uint64_t pc;
  uint32_t si;      /* static index in the generator */
  uint32_t mem_off, n_mem;
  bool async;
} g_ev;

typedef struct gen {
  size_t n_st;
  uint64_t *pc;
  uint8_t *len;
  uint8_t (*bytes)[15];
  uint8_t *kind;      /* 0 other, 1 call, 2 ret */
  uint8_t *dn;        /* default access count */
  uint32_t (*dsize)[12];
  uint8_t (*dstore)[12];
  uint64_t *dbase;
  int64_t *dstride;
  uint64_t *execs;
  wi_map64 idx;       /* ~pc -> static index */
  VEC(g_ev) ev;
  VEC(trace_mem) mem;
  bool have_end;
  uint64_t end_pc;
} gen;

static const uint32_t g_sizes[] = {1, 2, 4, 8, 16, 32, 64, 126, 127, 128, 255, 256, 300, 70000};

/* Only rep-prefixed string instructions collapse (a ret returning to itself must not). */
static bool g_is_rep(const gen *g, uint32_t s) {
  return g->len[s] == 2 && g->bytes[s][0] == 0xf3 && g->bytes[s][1] == 0xa4;
}

static int g_static_of(const gen *g, uint64_t pc) {
  uint32_t *v = map64_get(&g->idx, ~pc);
  return v ? (int)*v : -1;
}

static void g_emit(gen *g, wi_rng *r, uint32_t si, bool async) {
  g_ev e = {.pc = g->pc[si], .si = si, .mem_off = (uint32_t)g->mem.n, .async = async};
  if (rng_below(r, 100) < 5) { /* exception: anything goes */
    uint32_t k = (uint32_t)rng_below(r, 13);
    for (uint32_t j = 0; j < k; j++) {
      trace_mem m = {.addr = rng_next(r) >> rng_below(r, 64), .size = g_sizes[rng_below(r, WI_ARRAY_LEN(g_sizes))],
                     .is_store = (uint8_t)rng_below(r, 2)};
      VEC_PUSH(g->mem, m);
    }
    e.n_mem = k;
  } else {
    uint64_t x = g->execs[si];
    for (uint32_t j = 0; j < g->dn[si]; j++) {
      uint64_t a = g->dbase[si] + 0x100 * j + (uint64_t)g->dstride[si] * x;
      if (rng_below(r, 100) < 3) a += rng_next(r); /* wild address */
      trace_mem m = {.addr = a, .size = g->dsize[si][j], .is_store = g->dstore[si][j]};
      VEC_PUSH(g->mem, m);
    }
    e.n_mem = g->dn[si];
  }
  g->execs[si]++;
  VEC_PUSH(g->ev, e);
}

/* Build a random program (blocks of contiguous instructions) and a stream of n instructions
 * with fall-through runs, jumps, calls/returns, async transfers and rep-like self loops. */
static void gen_make(gen *g, uint64_t seed, size_t n) {
  memset(g, 0, sizeof *g);
  wi_rng r;
  rng_seed(&r, seed);
  size_t n_blocks = 2 + rng_below(&r, 30);
  size_t cap = n_blocks * 16;
  g->pc = calloc(cap, sizeof *g->pc);
  g->len = calloc(cap, 1);
  g->bytes = calloc(cap, sizeof *g->bytes);
  g->kind = calloc(cap, 1);
  g->dn = calloc(cap, 1);
  g->dsize = calloc(cap, sizeof *g->dsize);
  g->dstore = calloc(cap, sizeof *g->dstore);
  g->dbase = calloc(cap, sizeof *g->dbase);
  g->dstride = calloc(cap, sizeof *g->dstride);
  g->execs = calloc(cap, sizeof *g->execs);
  map64_init(&g->idx, cap * 2);
  VEC(uint32_t) starts = {0};
  for (size_t b = 0; b < n_blocks; b++) {
    uint64_t pc = (b % 5 == 4 ? 0x7ffff7a00000ULL : 0x400000ULL) + b * 0x10000 + rng_below(&r, 0x100);
    size_t m = 1 + rng_below(&r, 15);
    VEC_PUSH(starts, (uint32_t)g->n_st);
    for (size_t i = 0; i < m; i++) {
      size_t s = g->n_st++;
      g->pc[s] = pc;
      uint64_t kr = rng_below(&r, 100);
      if (kr < 8) {
        g->kind[s] = 1;
        g->len[s] = 5;
        g->bytes[s][0] = 0xe8;
      } else if (kr < 16) {
        g->kind[s] = 2;
        g->len[s] = 1;
        g->bytes[s][0] = 0xc3;
      } else if (kr < 20) {
        g->len[s] = 2;
        g->bytes[s][0] = 0xf3; /* rep movsb */
        g->bytes[s][1] = 0xa4;
      } else {
        g->len[s] = (uint8_t)(1 + rng_below(&r, 15));
        g->bytes[s][0] = 0x01;
        for (int k = 1; k < g->len[s]; k++) g->bytes[s][k] = (uint8_t)rng_next(&r);
      }
      static const uint8_t dns[] = {0, 0, 0, 0, 1, 1, 1, 2, 2, 3, 5, 9, 12};
      g->dn[s] = dns[rng_below(&r, sizeof dns)];
      for (int j = 0; j < 12; j++) {
        g->dsize[s][j] = rng_below(&r, 4) ? 8 : g_sizes[rng_below(&r, WI_ARRAY_LEN(g_sizes))];
        g->dstore[s][j] = (uint8_t)(rng_below(&r, 3) == 0);
      }
      static const int64_t strides[] = {0, 1, 8, -8, 64, 4096, -123456789};
      g->dstride[s] = strides[rng_below(&r, WI_ARRAY_LEN(strides))];
      g->dbase[s] = rng_below(&r, 4) ? 0x7ffd00000000ULL + rng_below(&r, 1 << 20) * 8 : rng_next(&r);
      map64_put(&g->idx, ~pc, (uint32_t)s);
      pc += g->len[s];
    }
  }
  uint64_t stack[256];
  size_t sp = 0;
  uint32_t si = starts.a[0];
  size_t rep_left = 0;
  while (g->ev.n < n) {
    bool async = false;
    uint32_t next;
    if (rep_left) {
      rep_left--;
      g_emit(g, &r, si, false);
      continue; /* the next one is si again, unless this was the last iteration */
    }
    if (rng_below(&r, 100) < 3 && g_is_rep(g, si)) {
      rep_left = 1 + rng_below(&r, 40);
      g_emit(g, &r, si, false); /* first iteration; rep_left more follow */
      continue;
    }
    int ft = g_static_of(g, g->pc[si] + g->len[si]);
    uint64_t roll = rng_below(&r, 100);
    if (roll < 2) {
      async = true;
      next = (uint32_t)rng_below(&r, g->n_st);
    } else if (g->kind[si] == 1) {
      if (ft >= 0 && sp < 256) stack[sp++] = g->pc[ft];
      next = starts.a[rng_below(&r, starts.n)];
    } else if (g->kind[si] == 2 && sp && roll < 90) {
      next = (uint32_t)g_static_of(g, stack[--sp]);
    } else if (ft >= 0 && roll < 80) {
      next = (uint32_t)ft;
    } else {
      next = (uint32_t)rng_below(&r, g->n_st);
    }
    g_emit(g, &r, si, async);
    si = next;
  }
  g->have_end = rng_below(&r, 2);
  g->end_pc = g->have_end ? rng_next(&r) : 0;
  if (g->have_end && rng_below(&r, 4) == 0) g->end_pc = g->ev.a[g->ev.n - 1].pc; /* stops mid rep */
  VEC_FREE(starts);
}

static void gen_free(gen *g) {
  free(g->pc);
  free(g->len);
  free(g->bytes);
  free(g->kind);
  free(g->dn);
  free(g->dsize);
  free(g->dstore);
  free(g->dbase);
  free(g->dstride);
  free(g->execs);
  map64_free(&g->idx);
  VEC_FREE(g->ev);
  VEC_FREE(g->mem);
}

static uint64_t g_next(const gen *g, size_t i) {
  if (i + 1 < g->ev.n) return g->ev.a[i + 1].pc;
  const g_ev *e = &g->ev.a[i];
  return g->have_end ? g->end_pc : e->pc + g->len[e->si];
}

static void gen_write(const gen *g, const char *path, const trace_writer_opts *opts) {
  wi_err err;
  trace_writer *w = tw_open(path, opts, &err);
  if (!w) fail_msg("%s", err.msg);
  tw_meta(w, "program", "/bin/random");
  tw_meta(w, "args", "[\"x\"]");
  uint32_t *sid = malloc(g->n_st * sizeof *sid);
  for (size_t s = 0; s < g->n_st; s++) sid[s] = tw_static(w, g->pc[s], g->len[s], g->bytes[s]);
  for (size_t i = 0; i < g->ev.n; i++) {
    const g_ev *e = &g->ev.a[i];
    tw_exec(w, sid[e->si]);
    for (uint32_t j = 0; j < e->n_mem; j++) {
      const trace_mem *m = &g->mem.a[e->mem_off + j];
      tw_mem(w, m->addr, m->size, m->is_store);
    }
    if (e->async) tw_async(w);
  }
  assert_int_equal(tw_count(w), g->ev.n);
  if (g->have_end) tw_end_pc(w, g->end_pc);
  tw_object(w, "/bin/random", 0, 0x400000, 0x500000);
  tw_symbol(w, 0x400000, 0x100000, "main", "random");
  free(sid);
  if (tw_close(w, &err) != WI_OK) fail_msg("%s", err.msg);
}

/* ==== reference model-mode stream ============================================================= */

typedef struct ref {
  VEC(trace_insn) in;
  VEC(trace_mem) mem;
} ref;

static size_t ref_merge(trace_mem *m, size_t k) {
  size_t o = 0;
  for (size_t j = 0; j < k; j++) {
    if (o && m[o - 1].is_store == m[j].is_store && m[o - 1].addr + m[o - 1].size == m[j].addr &&
        (uint64_t)m[o - 1].size + m[j].size <= UINT32_MAX)
      m[o - 1].size += m[j].size;
    else
      m[o++] = m[j];
  }
  return o;
}

/* Collapse runs of self-loop iterations and merge contiguous accesses, independently of the
 * reader's implementation. */
static void ref_model(const gen *g, ref *rf) {
  memset(rf, 0, sizeof *rf);
  size_t i = 0, n = g->ev.n;
  while (i < n) {
    size_t a = i;
    while (i + 1 < n && g->ev.a[i + 1].pc == g->ev.a[i].pc && !g->ev.a[i].async && g_is_rep(g, g->ev.a[i].si))
      i++;
    size_t b = i++;
    const g_ev *e = &g->ev.a[b];
    uint64_t next = g_next(g, b), ft = e->pc + g->len[e->si];
    trace_insn o = {.pc = e->pc, .next_pc = next, .rep = (uint32_t)(b - a + 1), .len = g->len[e->si],
                    .mem_off = (uint32_t)rf->mem.n};
    o.flags = (uint8_t)((next != ft ? TI_TAKEN : 0) | (e->async ? TI_ASYNC : 0) | (b > a ? TI_REP : 0) |
                        (b + 1 == n ? TI_LAST : 0));
    size_t k = 0;
    if (b == a) {
      for (uint32_t j = 0; j < e->n_mem; j++) VEC_PUSH(rf->mem, g->mem.a[e->mem_off + j]);
      k = e->n_mem;
    } else {
      uint64_t lo[64], hi[64];
      uint8_t st[64];
      for (size_t x = a; x <= b; x++) {
        const g_ev *it = &g->ev.a[x];
        for (uint32_t j = 0; j < it->n_mem; j++) {
          const trace_mem *m = &g->mem.a[it->mem_off + j];
          if (j >= k) {
            lo[j] = m->addr;
            hi[j] = m->addr + m->size;
            st[j] = m->is_store;
            k = j + 1;
          } else {
            lo[j] = WI_MIN(lo[j], m->addr);
            hi[j] = WI_MAX(hi[j], m->addr + m->size);
          }
        }
      }
      for (size_t j = 0; j < k; j++) {
        uint64_t sz = hi[j] - lo[j];
        trace_mem m = {.addr = lo[j], .size = sz > UINT32_MAX ? UINT32_MAX : (uint32_t)sz, .is_store = st[j]};
        VEC_PUSH(rf->mem, m);
      }
    }
    size_t kk = ref_merge(rf->mem.a + o.mem_off, k);
    rf->mem.n = o.mem_off + kk;
    o.n_mem = (uint16_t)kk;
    VEC_PUSH(rf->in, o);
  }
}

/* ==== comparing ================================================================================ */

static void expect_raw(const gen *g, const trace_t *t, const trace_insn *in, const trace_mem *mems, size_t i) {
  const g_ev *e = &g->ev.a[i];
  uint64_t next = g_next(g, i), ft = e->pc + g->len[e->si];
  if (in->pc != e->pc || in->next_pc != next || in->n_mem != e->n_mem || in->rep != 1 || in->len != g->len[e->si])
    fail_msg("raw %zu: pc %llx/%llx next %llx/%llx n_mem %u/%u", i, (unsigned long long)in->pc,
             (unsigned long long)e->pc, (unsigned long long)in->next_pc, (unsigned long long)next, in->n_mem, e->n_mem);
  uint8_t fl = (uint8_t)((next != ft ? TI_TAKEN : 0) | (e->async ? TI_ASYNC : 0) | (i + 1 == g->ev.n ? TI_LAST : 0));
  if (in->flags != fl) fail_msg("raw %zu: flags %x, want %x", i, in->flags, fl);
  assert_int_equal(trace_static_at(t, in->sid)->pc, e->pc);
  for (uint32_t j = 0; j < e->n_mem; j++) {
    const trace_mem *a = &mems[in->mem_off + j], *b = &g->mem.a[e->mem_off + j];
    if (a->addr != b->addr || a->size != b->size || a->is_store != b->is_store)
      fail_msg("raw %zu access %u: %llx/%u/%u want %llx/%u/%u", i, j, (unsigned long long)a->addr, a->size,
               a->is_store, (unsigned long long)b->addr, b->size, b->is_store);
  }
}

static void expect_model(const ref *rf, const trace_insn *in, const trace_mem *mems, size_t i) {
  const trace_insn *w = &rf->in.a[i];
  if (in->pc != w->pc || in->next_pc != w->next_pc || in->rep != w->rep || in->flags != w->flags ||
      in->n_mem != w->n_mem || in->len != w->len)
    fail_msg("model %zu: pc %llx/%llx next %llx/%llx rep %u/%u flags %x/%x n_mem %u/%u", i,
             (unsigned long long)in->pc, (unsigned long long)w->pc, (unsigned long long)in->next_pc,
             (unsigned long long)w->next_pc, in->rep, w->rep, in->flags, w->flags, in->n_mem, w->n_mem);
  for (uint32_t j = 0; j < w->n_mem; j++) {
    const trace_mem *a = &mems[in->mem_off + j], *b = &rf->mem.a[w->mem_off + j];
    if (a->addr != b->addr || a->size != b->size || a->is_store != b->is_store)
      fail_msg("model %zu access %u: %llx/%u/%u want %llx/%u/%u", i, j, (unsigned long long)a->addr, a->size,
               a->is_store, (unsigned long long)b->addr, b->size, b->is_store);
  }
}

/* Iterate the whole trace in both modes and compare with the generator and the reference. */
static void check_trace(const gen *g, const ref *rf, const char *path) {
  wi_err err;
  trace_t *t = trace_open(path, &err);
  if (!t) fail_msg("%s", err.msg);
  const trace_info *info = trace_get_info(t);
  assert_int_equal(info->n_raw, g->ev.n);
  assert_int_equal(info->n_insns, rf->in.n);
  assert_int_equal(info->end_pc, g_next(g, g->ev.n - 1));
  assert_string_equal(trace_meta(t, "program"), "/bin/random");
  /* static table: exactly the executed PCs, with counts and first-seen defaults */
  size_t executed = 0;
  for (size_t s = 0; s < g->n_st; s++) executed += g->execs[s] > 0;
  assert_int_equal(info->n_static, executed);
  for (uint32_t sid = 0; sid < info->n_static; sid++) {
    const trace_static *st = trace_static_at(t, sid);
    int s = g_static_of(g, st->pc);
    assert_true(s >= 0);
    assert_int_equal(st->count, g->execs[s]);
    assert_int_equal(st->len, g->len[s]);
    assert_memory_equal(st->bytes, g->bytes[s], st->len);
    assert_int_equal(trace_sid_of(t, st->pc), sid);
  }
  /* the first execution of each PC defines its default accesses */
  bool *seen = calloc(g->n_st, 1);
  for (size_t i = 0; i < g->ev.n; i++) {
    const g_ev *e = &g->ev.a[i];
    if (seen[e->si]) continue;
    seen[e->si] = true;
    const trace_static *st = trace_static_at(t, trace_sid_of(t, e->pc));
    assert_int_equal(st->n_mem, WI_MIN(e->n_mem, 255));
    for (uint32_t j = 0; j < e->n_mem && j < 8; j++) {
      const trace_mem *m = &g->mem.a[e->mem_off + j];
      assert_int_equal(st->mem_size[j], m->size <= 255 ? m->size : 0);
      assert_int_equal((st->mem_store >> j) & 1, m->is_store);
    }
  }
  free(seen);
  for (int mode = 0; mode < 2; mode++) {
    trace_cursor *c = trace_cursor_new(t, mode ? TRACE_CUR_RAW : 0);
    trace_batch b;
    size_t k = 0;
    for (;;) {
      if (trace_cursor_next(c, &b, &err) != WI_OK) fail_msg("%s", err.msg);
      if (!b.n) break;
      assert_int_equal(b.first_index, k);
      for (size_t i = 0; i < b.n; i++, k++) {
        if (mode) expect_raw(g, t, &b.insns[i], b.mems, k);
        else expect_model(rf, &b.insns[i], b.mems, k);
      }
    }
    assert_int_equal(k, mode ? g->ev.n : rf->in.n);
    assert_int_equal(trace_cursor_next(c, &b, &err), WI_OK); /* stays at the end */
    assert_int_equal(b.n, 0);
    trace_cursor_free(c);
  }
  trace_close(t);
}

static void *read_bytes(const char *path, size_t *n) {
  char *buf;
  wi_err err;
  if (read_file(path, &buf, n, &err) != WI_OK) fail_msg("%s", err.msg);
  return buf;
}

static void write_bytes(const char *path, const void *p, size_t n) {
  FILE *f = fopen(path, "wb");
  assert_non_null(f);
  assert_int_equal(fwrite(p, 1, n, f), n);
  fclose(f);
}

/* ==== tests ====================================================================================== */

static void test_roundtrip_random(void **state) {
  (void)state;
  uint64_t seed = tu_seed();
  wi_rng r;
  rng_seed(&r, seed ^ 0x1111);
  for (int trial = 0; trial < 12; trial++) {
    uint64_t s = rng_next(&r);
    gen g;
    gen_make(&g, s, 2000 + rng_below(&r, 30000));
    ref rf;
    ref_model(&g, &rf);
    trace_writer_opts o = {.chunk_insns = (uint32_t)(1 + rng_below(&r, trial < 6 ? 64 : 5000)),
                           .zstd_level = (int)rng_below(&r, 6),
                           .threaded = rng_below(&r, 2)};
    char *p1 = tu_tmp_path(".wtr"), *p2 = tu_tmp_path(".wtr");
    gen_write(&g, p1, &o);
    check_trace(&g, &rf, p1);
    /* determinism: a second write (threaded or not) gives an identical file */
    o.threaded = !o.threaded;
    gen_write(&g, p2, &o);
    size_t n1, n2;
    char *b1 = read_bytes(p1, &n1), *b2 = read_bytes(p2, &n2);
    assert_int_equal(n1, n2);
    assert_memory_equal(b1, b2, n1);
    free(b1);
    free(b2);
    unlink(p1);
    unlink(p2);
    free(p1);
    free(p2);
    VEC_FREE(rf.in);
    VEC_FREE(rf.mem);
    gen_free(&g);
  }
}

static void test_seek(void **state) {
  (void)state;
  uint64_t seed = tu_seed();
  wi_rng r;
  rng_seed(&r, seed ^ 0x2222);
  gen g;
  gen_make(&g, rng_next(&r), 20000);
  ref rf;
  ref_model(&g, &rf);
  char *path = tu_tmp_path(".wtr");
  trace_writer_opts o = {.chunk_insns = 700};
  gen_write(&g, path, &o);
  wi_err err;
  trace_t *t = trace_open(path, &err);
  assert_non_null(t);
  assert_true(trace_get_info(t)->n_chunks > 10);
  for (int mode = 0; mode < 2; mode++) {
    trace_cursor *c = trace_cursor_new(t, mode ? TRACE_CUR_RAW : 0);
    uint64_t total = mode ? g.ev.n : rf.in.n;
    for (int trial = 0; trial < 60; trial++) {
      uint64_t k = trial == 0 ? 0 : trial == 1 ? total - 1 : rng_below(&r, total);
      if (trial == 2) k = trace_chunk_at(t, 3)->first_raw; /* exactly at a chunk start */
      if (trial == 2 && !mode) k = trace_chunk_at(t, 3)->first_insn;
      assert_int_equal(trace_cursor_seek(c, k, &err), WI_OK);
      trace_batch b;
      assert_int_equal(trace_cursor_next(c, &b, &err), WI_OK);
      assert_true(b.n > 0);
      assert_int_equal(b.first_index, k);
      for (size_t i = 0; i < b.n && i < 50; i++) {
        if (mode) expect_raw(&g, t, &b.insns[i], b.mems, k + i);
        else expect_model(&rf, &b.insns[i], b.mems, k + i);
      }
    }
    trace_batch b;
    assert_int_equal(trace_cursor_seek(c, total, &err), WI_OK);
    assert_int_equal(trace_cursor_next(c, &b, &err), WI_OK);
    assert_int_equal(b.n, 0);
    assert_int_equal(trace_cursor_seek(c, total + 1, &err), WI_EINVAL);
    assert_int_equal(trace_cursor_seek(c, 5, &err), WI_OK); /* usable again after the end */
    assert_int_equal(trace_cursor_next(c, &b, &err), WI_OK);
    assert_int_equal(b.first_index, 5);
    trace_cursor_free(c);
  }
  trace_close(t);
  unlink(path);
  free(path);
  VEC_FREE(rf.in);
  VEC_FREE(rf.mem);
  gen_free(&g);
}

/* The prefetching reader (batch_pf): the same instructions, accesses and indexes as the cursor it
 * reads, on its thread or in line, across seeks (the read-ahead is dropped) and at the end. */
typedef VEC(trace_insn) insn_vec;
typedef VEC(trace_mem) mem_vec;

static wi_rc next_plain(void *cur, trace_batch *b, wi_err *err) { return trace_cursor_next(cur, b, err); }

static void collect(batch_pf *pf, uint64_t max, insn_vec *in, mem_vec *mem, uint64_t *first) {
  wi_err err;
  trace_batch b;
  *first = UINT64_MAX;
  while (in->n < max) {
    assert_int_equal(batch_pf_next(pf, &b, &err), WI_OK);
    if (!b.n) break;
    if (*first == UINT64_MAX) *first = b.first_index;
    assert_int_equal(b.first_index, *first + in->n); /* consecutive */
    for (size_t i = 0; i < b.n; i++) {
      trace_insn x = b.insns[i];
      x.mem_off = (uint32_t)mem->n;
      for (uint32_t j = 0; j < x.n_mem; j++) VEC_PUSH(*mem, b.mems[b.insns[i].mem_off + j]);
      VEC_PUSH(*in, x);
    }
  }
}

static void test_batch_reader(void **state) {
  (void)state;
  uint64_t seed = tu_seed();
  wi_rng r;
  rng_seed(&r, seed ^ 0x3333);
  gen g;
  gen_make(&g, rng_next(&r), 30000);
  char *path = tu_tmp_path(".wtr");
  trace_writer_opts o = {.chunk_insns = 900};
  gen_write(&g, path, &o);
  wi_err err;
  trace_t *t = trace_open(path, &err);
  assert_non_null(t);
  uint64_t total = trace_get_info(t)->n_insns;
  trace_cursor *c0 = trace_cursor_new(t, 0), *c1 = trace_cursor_new(t, 0);
  batch_pf *inl = batch_pf_trace(c0, false), *thr = batch_pf_trace(c1, true);
  assert_false(batch_pf_threaded(inl));
  print_message("reader thread %s\n", batch_pf_threaded(thr) ? "running" : "not available (one CPU)");
  for (int trial = 0; trial < 12; trial++) {
    uint64_t k = trial == 0 ? 0 : trial == 1 ? total : rng_below(&r, total);
    uint64_t len = trial < 3 ? UINT64_MAX : 1 + rng_below(&r, 8000);
    if (trial) { /* the first trial reads from the start without a seek */
      assert_int_equal(batch_pf_seek(inl, k, &err), WI_OK);
      assert_int_equal(batch_pf_seek(thr, k, &err), WI_OK);
    }
    insn_vec ia = {0}, ib = {0};
    mem_vec ma = {0}, mb = {0};
    uint64_t fa, fb;
    collect(inl, len, &ia, &ma, &fa);
    collect(thr, len, &ib, &mb, &fb);
    assert_int_equal(ia.n, ib.n);
    assert_int_equal(ma.n, mb.n);
    if (ia.n) {
      assert_int_equal(fa, k);
      assert_int_equal(fb, k);
      assert_memory_equal(ia.a, ib.a, ia.n * sizeof *ia.a);
    }
    for (size_t i = 0; i < ma.n; i++) { /* field by field: the cursor leaves pad unset */
      assert_int_equal(ma.a[i].addr, mb.a[i].addr);
      assert_int_equal(ma.a[i].size, mb.a[i].size);
      assert_int_equal(ma.a[i].is_store, mb.a[i].is_store);
    }
    if (len == UINT64_MAX) assert_int_equal(ia.n, total - k); /* read to the end */
    VEC_FREE(ia);
    VEC_FREE(ib);
    VEC_FREE(ma);
    VEC_FREE(mb);
  }
  assert_int_equal(batch_pf_seek(thr, total + 1, &err), WI_EINVAL); /* the cursor's own errors */
  batch_pf_free(inl);
  batch_pf_free(thr); /* with batches read ahead and a producer possibly waiting for room */
  trace_cursor_free(c0);
  trace_cursor_free(c1);
  /* a reader over a cursor that cannot seek says so */
  trace_cursor *c2 = trace_cursor_new(t, 0);
  batch_pf *ns = batch_pf_new(c2, next_plain, NULL, true);
  assert_int_equal(batch_pf_seek(ns, 0, &err), WI_ESTATE);
  batch_pf_free(ns);
  trace_cursor_free(c2);
  trace_close(t);
  unlink(path);
  free(path);
  gen_free(&g);
}

/* Runs of self-loop iterations never straddle a chunk, and collapse in model mode. */
static void test_rep_collapse(void **state) {
  (void)state;
  char *path = tu_tmp_path(".wtr");
  wi_err err;
  trace_writer_opts o = {.chunk_insns = 4};
  trace_writer *w = tw_open(path, &o, &err);
  assert_non_null(w);
  uint8_t movsb[2] = {0xf3, 0xa4}, nop[1] = {0x90}, vmov[4] = {0xc5, 0xfe, 0x6f, 0x06};
  uint32_t a = tw_static(w, 0x1000, 1, nop), rep = tw_static(w, 0x1001, 2, movsb);
  uint32_t v = tw_static(w, 0x1003, 4, vmov);
  tw_exec(w, a);
  for (int i = 0; i < 1000; i++) { /* rep movsb backwards (DF=1) */
    tw_exec(w, rep);
    tw_mem(w, 0x5000 - (uint64_t)i, 1, false);
    tw_mem(w, 0x9000 - (uint64_t)i, 1, true);
  }
  tw_exec(w, v); /* a ymm load split into two halves by QEMU */
  tw_mem(w, 0x7000, 16, false);
  tw_mem(w, 0x7010, 16, false);
  tw_exec(w, rep); /* rcx = 0: executes once, no access (an exception) */
  tw_exec(w, v); /* contiguous but load then store; then a gap: nothing merges */
  tw_mem(w, 0x7000, 16, false);
  tw_mem(w, 0x7010, 16, true);
  tw_mem(w, 0x7030, 16, true);
  tw_exec(w, a);
  /* A ret that returns to itself (a recursion unwinding through `call f; ret`) is a self-loop
   * but not a rep run: every execution stays a model instruction. */
  uint8_t ret[1] = {0xc3};
  uint32_t rt = tw_static(w, 0x2000, 1, ret);
  for (int i = 0; i < 3; i++) {
    tw_exec(w, rt);
    tw_mem(w, 0x7ff0 + 8 * (uint64_t)i, 8, false);
  }
  assert_int_equal(tw_close(w, &err), WI_OK);
  trace_t *t = trace_open(path, &err);
  assert_non_null(t);
  const trace_info *info = trace_get_info(t);
  assert_int_equal(info->n_raw, 1008);
  assert_int_equal(info->n_insns, 9);
  assert_int_equal(trace_chunk_at(t, 0)->n_raw, 1001); /* extended over the whole run */
  trace_cursor *c = trace_cursor_new(t, 0);
  trace_batch b;
  assert_int_equal(trace_cursor_next(c, &b, &err), WI_OK);
  assert_int_equal(b.n, 2); /* a batch ends at its chunk */
  const trace_insn *r = &b.insns[1];
  assert_int_equal(r->pc, 0x1001);
  assert_int_equal(r->rep, 1000);
  assert_int_equal(r->flags, TI_REP);
  assert_int_equal(r->next_pc, 0x1003);
  assert_int_equal(r->n_mem, 2);
  assert_int_equal(b.mems[r->mem_off].addr, 0x5000 - 999);
  assert_int_equal(b.mems[r->mem_off].size, 1000);
  assert_false(b.mems[r->mem_off].is_store);
  assert_int_equal(b.mems[r->mem_off + 1].addr, 0x9000 - 999);
  assert_true(b.mems[r->mem_off + 1].is_store);
  assert_int_equal(trace_cursor_next(c, &b, &err), WI_OK);
  assert_int_equal(b.n, 4);
  assert_int_equal(b.insns[0].n_mem, 1); /* merged halves */
  assert_int_equal(b.mems[b.insns[0].mem_off].size, 32);
  assert_int_equal(b.insns[1].rep, 1);
  assert_int_equal(b.insns[1].flags, 0); /* falls through to 0x1003 */
  assert_int_equal(b.insns[1].n_mem, 0);
  assert_int_equal(b.insns[2].n_mem, 3);
  assert_int_equal(b.mems[b.insns[2].mem_off + 1].size, 16);
  assert_int_equal(b.insns[3].flags, TI_TAKEN); /* 0x1000 jumps to the ret at 0x2000 */
  assert_int_equal(trace_cursor_next(c, &b, &err), WI_OK);
  assert_int_equal(b.n, 3);
  for (int i = 0; i < 3; i++) {
    assert_int_equal(b.insns[i].pc, 0x2000);
    assert_int_equal(b.insns[i].rep, 1);
    assert_int_equal(b.insns[i].n_mem, 1);
  }
  assert_int_equal(b.insns[2].flags & TI_LAST, TI_LAST);
  trace_cursor_free(c);
  const trace_static *st = trace_static_at(t, trace_sid_of(t, 0x1001));
  assert_int_equal(st->n_mem, 2);
  assert_int_equal(st->mem_store, 2);
  assert_int_equal(st->count, 1001);
  trace_close(t);
  unlink(path);
  free(path);
}

static void test_empty_and_misuse(void **state) {
  (void)state;
  char *path = tu_tmp_path(".wtr");
  wi_err err;
  trace_writer *w = tw_open(path, NULL, &err);
  assert_non_null(w);
  assert_int_equal(tw_close(w, &err), WI_OK);
  trace_t *t = trace_open(path, &err);
  assert_non_null(t);
  assert_int_equal(trace_get_info(t)->n_raw, 0);
  assert_int_equal(trace_get_info(t)->n_chunks, 0);
  trace_cursor *c = trace_cursor_new(t, 0);
  trace_batch b;
  assert_int_equal(trace_cursor_next(c, &b, &err), WI_OK);
  assert_int_equal(b.n, 0);
  trace_cursor_free(c);
  trace_close(t);

  w = tw_open(path, NULL, &err);
  tw_mem(w, 1, 1, false); /* no instruction yet */
  assert_int_equal(tw_close(w, &err), WI_EINVAL);
  assert_int_equal(access(path, F_OK), -1); /* deleted */

  w = tw_open(path, NULL, &err);
  assert_int_equal(tw_static(w, 0x10, 16, NULL), UINT32_MAX);
  assert_int_equal(tw_close(w, &err), WI_EINVAL);
  tw_abort(NULL);
  trace_close(NULL);
  trace_cursor_free(NULL);

  assert_null(tw_open("/nonexistent-dir/x.wtr", NULL, &err));
  assert_int_equal(err.rc, WI_EIO);
  assert_null(trace_open("/nonexistent-dir/x.wtr", &err));
  assert_int_equal(err.rc, WI_EIO);
  free(path);
}

static void test_copy_stream(void **state) {
  (void)state;
  uint64_t seed = tu_seed();
  gen g;
  gen_make(&g, seed ^ 0x3333, 15000);
  ref rf;
  ref_model(&g, &rf);
  char *src = tu_tmp_path(".wtr"), *dst = tu_tmp_path(".wtr");
  trace_writer_opts o = {.chunk_insns = 1000};
  gen_write(&g, src, &o);
  wi_err err;
  trace_t *t = trace_open(src, &err);
  assert_non_null(t);
  trace_writer *w = tw_open(dst, NULL, &err);
  /* a static seen before the copy (translated, never executed) merges by PC */
  uint8_t junk[3] = {0x90, 0x90, 0x90};
  (void)tw_static(w, g.ev.a[0].pc, 3, junk);
  assert_int_equal(tw_copy_stream(w, t, &err), WI_OK);
  assert_int_equal(tw_count(w), g.ev.n);
  assert_int_equal(tw_copy_stream(w, t, &err), WI_ESTATE);
  uint8_t code[64] = {0xc3};
  tw_region(w, 0x400000, code, sizeof code, "/bin/random");
  tw_symbol(w, 0x400010, 0x10, "inner", "random");
  tw_symbol(w, 0x400000, 0x100, "outer", "random");
  tw_symbol(w, 0x400200, 0, "label", NULL);
  tw_line(w, 0x400000, "a.c", 10);
  tw_line(w, 0x400008, "b.c", 20);
  tw_line(w, 0x400020, "a.c", 0);
  assert_int_equal(tw_close(w, &err), WI_OK);
  check_trace(&g, &rf, dst);
  trace_t *u = trace_open(dst, &err);
  assert_non_null(u);
  assert_int_equal(trace_get_info(u)->n_chunks, trace_get_info(t)->n_chunks);
  assert_int_equal(trace_get_info(u)->stream_bytes, trace_get_info(t)->stream_bytes);
  assert_int_equal(trace_meta_count(u), trace_meta_count(t));
  assert_int_equal(trace_n_objects(u), 1);
  assert_string_equal(trace_object_at(u, 0)->path, "/bin/random");
  assert_int_equal(trace_verify(u, &err), WI_OK);
  /* lookups */
  assert_string_equal(trace_sym_lookup(u, 0x400012)->name, "inner");
  assert_string_equal(trace_sym_lookup(u, 0x400050)->name, "outer");
  assert_string_equal(trace_sym_lookup(u, 0x400000)->object, "random");
  assert_string_equal(trace_sym_lookup(u, 0x400200)->name, "label");
  assert_null(trace_sym_lookup(u, 0x400201));
  assert_null(trace_sym_lookup(u, 0x3fffff));
  const char *file;
  uint32_t line;
  assert_true(trace_line_lookup(u, 0x400004, &file, &line));
  assert_string_equal(file, "a.c");
  assert_int_equal(line, 10);
  assert_true(trace_line_lookup(u, 0x40001f, &file, &line));
  assert_string_equal(file, "b.c");
  assert_false(trace_line_lookup(u, 0x400020, &file, &line));
  assert_false(trace_line_lookup(u, 0x3fffff, &file, &line));
  size_t avail;
  const uint8_t *p = trace_code_at(u, 0x400001, &avail);
  assert_non_null(p);
  assert_int_equal(avail, 63);
  assert_null(trace_code_at(u, 0x300000, &avail));
  for (size_t i = 0; i < g.ev.n; i++) { /* outside every region: the executed bytes */
    const g_ev *e = &g.ev.a[i];
    if (e->pc < 0x400040) continue;
    p = trace_code_at(u, e->pc, &avail);
    assert_non_null(p);
    assert_int_equal(avail, g.len[e->si]);
    assert_memory_equal(p, g.bytes[e->si], avail);
    break;
  }
  trace_close(u);
  trace_close(t);
  unlink(src);
  unlink(dst);
  free(src);
  free(dst);
  VEC_FREE(rf.in);
  VEC_FREE(rf.mem);
  gen_free(&g);
}

/* ==== corruption ================================================================================== */

/* Open and iterate in both modes; returns the first failure code or WI_OK. */
static wi_rc open_and_iterate(const char *path, wi_err *err) {
  trace_t *t = trace_open(path, err);
  if (!t) return err->rc;
  wi_rc rc = WI_OK;
  for (int mode = 0; mode < 2 && !rc; mode++) {
    trace_cursor *c = trace_cursor_new(t, mode ? TRACE_CUR_RAW : 0);
    trace_batch b;
    do rc = trace_cursor_next(c, &b, err);
    while (!rc && b.n);
    trace_cursor_free(c);
  }
  trace_close(t);
  return rc;
}

/* A small trace with every section non-empty: n instructions in chunks of chunk. */
static char *make_small_n(uint64_t seed, gen *g, size_t n, uint32_t chunk) {
  gen_make(g, seed, n);
  char *path = tu_tmp_path(".wtr");
  wi_err err;
  trace_writer_opts o = {.chunk_insns = chunk};
  char *tmp = tu_tmp_path(".wtr");
  gen_write(g, tmp, &o);
  trace_t *t = trace_open(tmp, &err);
  trace_writer *w = tw_open(path, &o, &err);
  assert_int_equal(tw_copy_stream(w, t, &err), WI_OK);
  uint8_t code[300];
  for (size_t i = 0; i < sizeof code; i++) code[i] = (uint8_t)(i * 7);
  tw_region(w, 0x400000, code, sizeof code, "/bin/random");
  tw_symbol(w, 0x400000, 0x100, "main", "random");
  tw_symbol(w, 0x400100, 0x100, "helper", "libc.so.6");
  tw_line(w, 0x400000, "main.c", 3);
  tw_line(w, 0x400010, "main.c", 4);
  assert_int_equal(tw_close(w, &err), WI_OK);
  trace_close(t);
  unlink(tmp);
  free(tmp);
  return path;
}

static char *make_small(uint64_t seed, gen *g) { return make_small_n(seed, g, 6000, 500); }

typedef struct span {
  uint64_t off, size;
  const char *what;
} span;

/* Every region of the file: header, each chunk, each section, directory. */
static size_t file_spans(const uint8_t *f, size_t n, span *out) {
  (void)n;
  size_t k = 0;
  out[k++] = (span){0, 64, "header"};
  uint64_t dir_off, dir_size;
  memcpy(&dir_off, f + 16, 8);
  memcpy(&dir_size, f + 24, 8);
  for (uint64_t i = 0; i < dir_size / 32; i++) {
    const uint8_t *d = f + dir_off + i * 32;
    uint64_t off, size;
    memcpy(&off, d + 8, 8);
    memcpy(&size, d + 16, 8);
    out[k++] = (span){off, size, "section"};
  }
  out[k++] = (span){dir_off, dir_size, "directory"};
  return k;
}

static void test_corrupt_flips(void **state) {
  (void)state;
  uint64_t seed = tu_seed();
  wi_rng r;
  rng_seed(&r, seed ^ 0x4444);
  gen g;
  char *path = make_small(rng_next(&r), &g);
  size_t n;
  uint8_t *orig = read_bytes(path, &n);
  wi_err err;
  assert_int_equal(open_and_iterate(path, &err), WI_OK);
  trace_t *t = trace_open(path, &err);
  span sp[64];
  size_t ns = file_spans(orig, n, sp);
  for (uint32_t i = 0; i < trace_get_info(t)->n_chunks && ns < 64; i++)
    sp[ns++] = (span){trace_chunk_at(t, i)->offset, trace_chunk_at(t, i)->bytes, "chunk"};
  trace_close(t);
  char *bad = tu_tmp_path(".wtr");
  uint8_t *buf = malloc(n);
  /* targeted: bits inside each section, chunk, the header and the directory */
  for (size_t s = 0; s < ns; s++) {
    assert_true(sp[s].size > 0);
    for (int trial = 0; trial < 12; trial++) {
      memcpy(buf, orig, n);
      uint64_t at = sp[s].off + rng_below(&r, sp[s].size);
      buf[at] ^= (uint8_t)(1u << rng_below(&r, 8));
      write_bytes(bad, buf, n);
      wi_rc rc = open_and_iterate(bad, &err);
      if (rc != WI_ECORRUPT)
        fail_msg("flip in %s at byte %llu: rc %d (%s)", sp[s].what, (unsigned long long)at, rc, rc ? err.msg : "ok");
      assert_non_null(strstr(err.msg, "offset"));
    }
  }
  /* anywhere, including multi-bit damage */
  for (int trial = 0; trial < 300; trial++) {
    memcpy(buf, orig, n);
    int flips = 1 + (int)rng_below(&r, 3);
    for (int f = 0; f < flips; f++) buf[rng_below(&r, n)] ^= (uint8_t)(1u << rng_below(&r, 8));
    if (!memcmp(buf, orig, n)) continue; /* two flips cancelled */
    write_bytes(bad, buf, n);
    wi_rc rc = open_and_iterate(bad, &err);
    if (rc != WI_ECORRUPT) fail_msg("random flips (trial %d): rc %d", trial, rc);
  }
  /* every header byte */
  for (size_t at = 0; at < 64; at++) {
    memcpy(buf, orig, n);
    buf[at] ^= 0x10;
    write_bytes(bad, buf, n);
    assert_int_equal(open_and_iterate(bad, &err), WI_ECORRUPT);
  }
  unlink(bad);
  free(bad);
  free(buf);
  free(orig);
  unlink(path);
  free(path);
  gen_free(&g);
}

static void test_corrupt_truncate(void **state) {
  (void)state;
  uint64_t seed = tu_seed();
  wi_rng r;
  rng_seed(&r, seed ^ 0x5555);
  gen g;
  char *path = make_small(rng_next(&r), &g);
  size_t n;
  uint8_t *orig = read_bytes(path, &n);
  wi_err err;
  trace_t *t = trace_open(path, &err);
  span sp[64];
  size_t ns = file_spans(orig, n, sp);
  for (uint32_t i = 0; i < trace_get_info(t)->n_chunks && ns < 64; i++)
    sp[ns++] = (span){trace_chunk_at(t, i)->offset, trace_chunk_at(t, i)->bytes, "chunk"};
  trace_close(t);
  char *bad = tu_tmp_path(".wtr");
  VEC(uint64_t) cuts = {0};
  static const uint64_t fixed[] = {0, 1, 8, 63, 64, 65};
  for (size_t i = 0; i < WI_ARRAY_LEN(fixed); i++) VEC_PUSH(cuts, fixed[i]);
  VEC_PUSH(cuts, (uint64_t)n - 1);
  for (size_t s = 0; s < ns; s++) {
    VEC_PUSH(cuts, sp[s].off);
    VEC_PUSH(cuts, sp[s].off + sp[s].size - 1);
  }
  for (int i = 0; i < 100; i++) VEC_PUSH(cuts, rng_below(&r, n));
  for (size_t i = 0; i < cuts.n; i++) {
    write_bytes(bad, orig, cuts.a[i]);
    wi_rc rc = open_and_iterate(bad, &err);
    if (rc != WI_ECORRUPT) fail_msg("truncated to %llu of %zu bytes: rc %d", (unsigned long long)cuts.a[i], n, rc);
  }
  /* appended garbage is caught as well */
  uint8_t *longer = malloc(n + 5);
  memcpy(longer, orig, n);
  memset(longer + n, 0, 5);
  write_bytes(bad, longer, n + 5);
  assert_int_equal(open_and_iterate(bad, &err), WI_ECORRUPT);
  free(longer);
  VEC_FREE(cuts);
  unlink(bad);
  free(bad);
  free(orig);
  unlink(path);
  free(path);
  gen_free(&g);
}

static void test_version_and_verify(void **state) {
  (void)state;
  gen g;
  char *path = make_small(42, &g);
  size_t n;
  uint8_t *buf = read_bytes(path, &n);
  wi_err err;
  trace_t *t = trace_open(path, &err);
  assert_non_null(t);
  assert_int_equal(trace_verify(t, &err), WI_OK);
  assert_int_equal(trace_get_info(t)->version, TRACE_VERSION);
  assert_int_equal(trace_get_info(t)->file_bytes, n);
  trace_close(t);
  /* a header from a newer whatif (valid header hash) */
  uint32_t v = TRACE_VERSION + 1;
  memcpy(buf + 8, &v, 4);
  uint64_t h = wi_hash64(buf, 56, 0);
  memcpy(buf + 56, &h, 8);
  char *bad = tu_tmp_path(".wtr");
  write_bytes(bad, buf, n);
  assert_null(trace_open(bad, &err));
  assert_int_equal(err.rc, WI_EVERSION);
  assert_non_null(strstr(err.msg, "is newer than this whatif supports"));
  /* the content hash catches damage that verify alone would see: rewrite a section with a
   * fresh section hash but stale content hash */
  free(buf);
  buf = read_bytes(path, &n);
  uint64_t ch;
  memcpy(&ch, buf + 40, 8);
  ch ^= 1;
  memcpy(buf + 40, &ch, 8);
  h = wi_hash64(buf, 56, 0);
  memcpy(buf + 56, &h, 8);
  write_bytes(bad, buf, n);
  t = trace_open(bad, &err);
  assert_non_null(t);
  assert_int_equal(trace_verify(t, &err), WI_ECORRUPT);
  trace_close(t);
  /* not a trace at all */
  write_bytes(bad, "hello world, this is certainly not a trace file of any kind at all!!", 68);
  assert_null(trace_open(bad, &err));
  assert_int_equal(err.rc, WI_ECORRUPT);
  assert_non_null(strstr(err.msg, "magic"));
  unlink(bad);
  free(bad);
  free(buf);
  unlink(path);
  free(path);
  gen_free(&g);
}

/* Write the corpus into dir: a small valid trace and damaged copies of it. */
static void write_corpus(const char *dir) {
  gen g;
  char *p = make_small_n(7, &g, 400, 100);
  size_t n;
  uint8_t *b = read_bytes(p, &n);
  char *q = xasprintf("%s/ok_small.corpus", dir);
  write_bytes(q, b, n);
  free(q);
  span sp[64];
  size_t ns = file_spans(b, n, sp); /* header, sections (directory order), directory */
  static const char *const names[] = {"header", "meta", "static", "objects", "regions", "symbols", "lines",
                                      "chunkindex", "directory"};
  for (size_t i = 0; i < ns && i < WI_ARRAY_LEN(names); i++) { /* one flip in the middle of each */
    uint8_t *c = malloc(n);
    memcpy(c, b, n);
    c[sp[i].off + sp[i].size / 2] ^= 0x04;
    q = xasprintf("%s/bad_flip_%s.corpus", dir, names[i]);
    write_bytes(q, c, n);
    free(q);
    free(c);
  }
  uint8_t *c = malloc(n);
  memcpy(c, b, n);
  c[64 + 10] ^= 0x40; /* inside the first chunk */
  q = xasprintf("%s/bad_flip_chunk.corpus", dir);
  write_bytes(q, c, n);
  free(q);
  free(c);
  q = xasprintf("%s/bad_trunc_chunks.corpus", dir);
  write_bytes(q, b, 64 + 100);
  free(q);
  q = xasprintf("%s/bad_trunc_directory.corpus", dir);
  write_bytes(q, b, n - 7);
  free(q);
  uint32_t v = TRACE_VERSION + 1;
  memcpy(b + 8, &v, 4);
  uint64_t h = wi_hash64(b, 56, 0);
  memcpy(b + 56, &h, 8);
  q = xasprintf("%s/ver_newer.corpus", dir);
  write_bytes(q, b, n);
  free(q);
  free(b);
  unlink(p);
  free(p);
  gen_free(&g);
}

/* Saved inputs in $WHATIF_TESTDATA/trace_corpus: ok_* must read completely, bad_* must fail
 * with WI_ECORRUPT, ver_* with WI_EVERSION. ok_small.corpus also pins format version 1: a later
 * whatif must still read it. Set WHATIF_TRACE_CORPUS_OUT=dir to regenerate the corpus. */
static void test_corpus(void **state) {
  (void)state;
  const char *out = getenv("WHATIF_TRACE_CORPUS_OUT");
  if (out) write_corpus(out);
  const char *data = getenv("WHATIF_TESTDATA");
  if (!data) skip();
  char *dir = xasprintf("%s/trace_corpus", data);
  DIR *d = opendir(dir);
  if (!d) {
    free(dir);
    skip();
  }
  int seen = 0;
  struct dirent *de;
  while ((de = readdir(d))) {
    if (de->d_name[0] == '.') continue;
    char *p = xasprintf("%s/%s", dir, de->d_name);
    wi_err err;
    wi_rc rc = open_and_iterate(p, &err);
    wi_rc want = !strncmp(de->d_name, "ok_", 3) ? WI_OK : !strncmp(de->d_name, "ver_", 4) ? WI_EVERSION : WI_ECORRUPT;
    if (rc != want) fail_msg("%s: rc %d, want %d (%s)", de->d_name, rc, want, rc ? err.msg : "ok");
    if (!strcmp(de->d_name, "ok_small.corpus")) {
      trace_t *t = trace_open(p, &err);
      assert_non_null(t);
      assert_int_equal(trace_get_info(t)->n_raw, 400);
      assert_int_equal(trace_get_info(t)->n_chunks, 4);
      assert_int_equal(trace_n_syms(t), 2);
      assert_string_equal(trace_meta(t, "program"), "/bin/random");
      assert_int_equal(trace_verify(t, &err), WI_OK);
      trace_close(t);
    }
    free(p);
    seen++;
  }
  closedir(d);
  free(dir);
  assert_true(seen >= 10);
}

/* `whatif info` and `whatif bench read` on a small trace, and their bad-input exits. */
static void test_cli(void **state) {
  (void)state;
  const char *bin = getenv("WHATIF_BIN");
  if (!bin) skip();
  gen g;
  char *path = make_small(99, &g);
  int st;
  char *cmd = xasprintf("'%s' info '%s' --json --verify", bin, path);
  char *out = tu_run(cmd, &st);
  assert_int_equal(st, 0);
  assert_non_null(strstr(out, "\"raw_instructions\": 6000"));
  assert_non_null(strstr(out, "\"program\": \"/bin/random\""));
  assert_non_null(strstr(out, "\"top_functions\""));
  assert_non_null(strstr(out, "\"name\": \"main\""));
  assert_non_null(strstr(out, "\"bytes_per_instruction\""));
  free(out);
  free(cmd);
  cmd = xasprintf("'%s' info '%s'", bin, path);
  out = tu_run(cmd, &st);
  assert_int_equal(st, 0);
  assert_non_null(strstr(out, "top functions"));
  free(out);
  free(cmd);
  cmd = xasprintf("'%s' bench read '%s' --repeat 1 --json", bin, path);
  out = tu_run(cmd, &st);
  assert_int_equal(st, 0);
  assert_non_null(strstr(out, "\"raw_instructions\": 6000"));
  assert_non_null(strstr(out, "\"model_instructions_per_second\""));
  free(out);
  free(cmd);
  /* bad input: one line on stderr, exit 2. A flip inside a chunk is seen by --verify (and by
   * anything that reads the stream); a flip in the directory already by opening. */
  size_t n;
  uint8_t *b = read_bytes(path, &n);
  char *chunk_bad = tu_tmp_path(".wtr");
  b[64 + 5] ^= 1;
  write_bytes(chunk_bad, b, n);
  b[64 + 5] ^= 1;
  b[n - 5] ^= 1;
  write_bytes(path, b, n);
  free(b);
  cmd = xasprintf("'%s' info '%s' >/dev/null 2>&1", bin, chunk_bad);
  free(tu_run(cmd, &st));
  assert_int_equal(st, 0); /* info alone reads no chunk */
  free(cmd);
  char *verify = xasprintf("info --verify '%s'", chunk_bad), *bench = xasprintf("bench read '%s'", chunk_bad);
  const char *const bad[] = {"info '%s'", verify, bench, "info /nonexistent.wtr", "info",
                             "bench read /nonexistent.wtr", "bench frobnicate"};
  for (size_t i = 0; i < WI_ARRAY_LEN(bad); i++) {
    char *args = xasprintf(bad[i], path);
    cmd = xasprintf("'%s' %s 2>&1 >/dev/null", bin, args);
    out = tu_run(cmd, &st);
    if (st != 2) fail_msg("whatif %s: exit %d", args, st);
    assert_true(strlen(out) > 0);
    assert_null(strchr(out, '\n') == out + strlen(out) - 1 ? NULL : strchr(out, '\n')); /* one line */
    free(out);
    free(cmd);
    free(args);
  }
  free(verify);
  free(bench);
  unlink(chunk_bad);
  free(chunk_bad);
  unlink(path);
  free(path);
  gen_free(&g);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_roundtrip_random),
    cmocka_unit_test(test_seek),
    cmocka_unit_test(test_batch_reader),
    cmocka_unit_test(test_rep_collapse),
    cmocka_unit_test(test_empty_and_misuse),
    cmocka_unit_test(test_copy_stream),
    cmocka_unit_test(test_corrupt_flips),
    cmocka_unit_test(test_corrupt_truncate),
    cmocka_unit_test(test_version_and_verify),
    cmocka_unit_test(test_corpus),
    cmocka_unit_test(test_cli),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

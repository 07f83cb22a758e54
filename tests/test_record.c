/* test_record.c — the recorder's side of the trace writer: the producer appends instructions
 * and accesses in small batches that an encoder (a background thread when threaded) turns into
 * chunks. Batches are internal; the file must be exactly what one encoder fed the whole stream
 * in order would write: chunk boundaries where the chunk size and rep-run extension put them,
 * every access in place, and byte-identical files with and without the thread. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testutil.h"
#include "trace.h"
#include "util.h"

/* One scripted dynamic instruction. */
typedef struct rt_ev {
  uint32_t st;       /* index into the static table below */
  uint32_t mem_off;  /* into the access list */
  uint32_t n_mem;
  bool async;
} rt_ev;

/* A small program: straight-line instructions, a jump back, a rep movsb, a call and a ret. */
enum { RT_NOP, RT_LOAD, RT_STORE2, RT_REP, RT_JMP, RT_CALL, RT_RET, RT_N };
static const uint64_t rt_pc[RT_N] = {0x401000, 0x401001, 0x401004, 0x401008, 0x40100a, 0x40100c, 0x402000};
static const uint8_t rt_len[RT_N] = {1, 3, 4, 2, 2, 5, 1};
static const uint8_t rt_bytes[RT_N][5] = {
  {0x90}, {0x48, 0x8b, 0x07}, {0x48, 0x0f, 0xc1, 0x07}, {0xf3, 0xa4}, {0xeb, 0xf4}, {0xe8, 0xef, 0x0f, 0x00, 0x00},
  {0xc3},
};

typedef struct rt_script {
  VEC(rt_ev) ev;
  VEC(trace_mem) mem;
} rt_script;

static void rt_add(rt_script *s, uint32_t st, wi_rng *r, uint32_t n_mem) {
  rt_ev e = {.st = st, .mem_off = (uint32_t)s->mem.n, .n_mem = n_mem};
  for (uint32_t j = 0; j < n_mem; j++) {
    static const uint32_t sizes[] = {1, 2, 4, 8, 16, 32, 200, 70000};
    trace_mem m = {.addr = rng_next(r) >> rng_below(r, 64),
                   .size = sizes[rng_below(r, WI_ARRAY_LEN(sizes))],
                   .is_store = (uint8_t)rng_below(r, 2)};
    VEC_PUSH(s->mem, m);
  }
  VEC_PUSH(s->ev, e);
}

/* A random stream: mostly the loop NOP LOAD STORE2 REP.. JMP with calls and returns mixed in,
 * rep runs from 0 to 3 batches long, rare async transfers (some inside rep runs) and rare
 * instructions with more accesses than a batch holds. */
static void rt_make(rt_script *s, wi_rng *r, size_t n) {
  memset(s, 0, sizeof *s);
  while (s->ev.n < n) {
    uint64_t k = rng_below(r, 100);
    if (k < 50) {
      rt_add(s, RT_NOP, r, 0);
      rt_add(s, RT_LOAD, r, 1);
      rt_add(s, RT_STORE2, r, rng_below(r, 20) ? 2 : (uint32_t)rng_below(r, 5));
    } else if (k < 70) {
      uint64_t len = rng_below(r, 10) ? rng_below(r, 50) : rng_below(r, 3 * 4096 + 10);
      for (uint64_t i = 0; i < len; i++) {
        rt_add(s, RT_REP, r, 2);
        if (rng_below(r, 2000) == 0) s->ev.a[s->ev.n - 1].async = true;
      }
    } else if (k < 80) {
      rt_add(s, RT_CALL, r, 1);
      rt_add(s, RT_RET, r, 1);
    } else if (k < 81 && rng_below(r, 20) == 0) {
      rt_add(s, RT_LOAD, r, 9000 + (uint32_t)rng_below(r, 3000)); /* more than a batch */
    } else {
      rt_add(s, RT_JMP, r, 0);
      if (rng_below(r, 50) == 0) s->ev.a[s->ev.n - 1].async = true;
    }
  }
}

static void rt_free(rt_script *s) {
  VEC_FREE(s->ev);
  VEC_FREE(s->mem);
}

static void rt_write(const rt_script *s, const char *path, const trace_writer_opts *o) {
  wi_err err = {0};
  trace_writer *w = tw_open(path, o, &err);
  assert_non_null(w);
  uint32_t sid[RT_N];
  for (int i = 0; i < RT_N; i++) sid[i] = tw_static(w, rt_pc[i], rt_len[i], rt_bytes[i]);
  for (size_t i = 0; i < s->ev.n; i++) {
    const rt_ev *e = &s->ev.a[i];
    tw_exec(w, sid[e->st]);
    for (uint32_t j = 0; j < e->n_mem; j++) {
      const trace_mem *m = &s->mem.a[e->mem_off + j];
      tw_mem(w, m->addr, m->size, m->is_store != 0);
    }
    if (e->async) tw_async(w);
  }
  tw_end_pc(w, 0x403000);
  assert_int_equal(tw_close(w, &err), WI_OK);
}

/* Raw instructions per chunk as the format defines them: a chunk holds chunk_insns
 * instructions, extended while the next one continues a rep self-loop (same PC, rep kind,
 * not async). */
static size_t rt_chunks(const rt_script *s, uint32_t chunk_insns, uint32_t *out, size_t cap) {
  size_t n = 0;
  uint32_t cur = 0;
  for (size_t i = 0; i < s->ev.n; i++) {
    if (cur >= chunk_insns) {
      const rt_ev *p = &s->ev.a[i - 1];
      bool self = p->st == RT_REP && s->ev.a[i].st == RT_REP && !p->async;
      if (!self) {
        if (n < cap) out[n] = cur;
        n++;
        cur = 0;
      }
    }
    cur++;
  }
  if (cur) {
    if (n < cap) out[n] = cur;
    n++;
  }
  return n;
}

static char *rt_slurp(const char *path, size_t *n) {
  char *buf = NULL;
  wi_err err = {0};
  assert_int_equal(read_file(path, &buf, n, &err), WI_OK);
  return buf;
}

static void test_batches_roundtrip(void **state) {
  (void)state;
  uint64_t seed = tu_seed();
  wi_rng r;
  rng_seed(&r, seed);
  for (int round = 0; round < 4; round++) {
    rt_script s;
    rt_make(&s, &r, 20000 + rng_below(&r, 40000));
    uint32_t chunk = round == 0 ? 4096 : (uint32_t)(50 + rng_below(&r, 9000));
    char *p1 = tu_tmp_path(".wtr"), *p2 = tu_tmp_path(".wtr");
    trace_writer_opts o1 = {.chunk_insns = chunk, .threaded = false};
    trace_writer_opts o2 = {.chunk_insns = chunk, .threaded = true};
    rt_write(&s, p1, &o1);
    rt_write(&s, p2, &o2);
    size_t n1 = 0, n2 = 0;
    char *b1 = rt_slurp(p1, &n1), *b2 = rt_slurp(p2, &n2);
    assert_int_equal(n1, n2);
    assert_memory_equal(b1, b2, n1); /* the thread changes nothing */
    free(b1);
    free(b2);

    wi_err err = {0};
    trace_t *t = trace_open(p2, &err);
    assert_non_null(t);
    const trace_info *ti = trace_get_info(t);
    assert_int_equal(ti->n_raw, s.ev.n);
    uint32_t want[512];
    size_t nc = rt_chunks(&s, chunk, want, WI_ARRAY_LEN(want));
    assert_true(nc <= WI_ARRAY_LEN(want));
    assert_int_equal(ti->n_chunks, nc);
    for (size_t k = 0; k < nc; k++) assert_int_equal(trace_chunk_at(t, (uint32_t)k)->n_raw, want[k]);

    /* Every instruction and access back in place (raw mode: no collapsing, no merging). */
    trace_cursor *c = trace_cursor_new(t, TRACE_CUR_RAW);
    size_t i = 0;
    trace_batch b;
    while (trace_cursor_next(c, &b, &err) == WI_OK && b.n) {
      for (size_t j = 0; j < b.n; j++, i++) {
        assert_true(i < s.ev.n);
        const rt_ev *e = &s.ev.a[i];
        const trace_insn *in = &b.insns[j];
        assert_int_equal(in->pc, rt_pc[e->st]);
        uint64_t next = i + 1 < s.ev.n ? rt_pc[s.ev.a[i + 1].st] : 0x403000;
        assert_int_equal(in->next_pc, next);
        assert_int_equal((in->flags & TI_ASYNC) != 0, e->async);
        assert_int_equal(in->n_mem, e->n_mem);
        for (uint32_t m = 0; m < e->n_mem; m++) {
          const trace_mem *want_m = &s.mem.a[e->mem_off + m], *got = &b.mems[in->mem_off + m];
          assert_int_equal(got->addr, want_m->addr);
          assert_int_equal(got->size, want_m->size);
          assert_int_equal(got->is_store, want_m->is_store);
        }
      }
    }
    assert_int_equal(i, s.ev.n);
    trace_cursor_free(c);
    trace_close(t);
    unlink(p1);
    unlink(p2);
    free(p1);
    free(p2);
    rt_free(&s);
  }
}

/* A rep run far longer than a chunk and than a batch, ended by an async transfer inside it,
 * then resumed: each chunk extends over its part of the run and ends exactly at the async
 * mark or where the run ends. */
static void test_rep_run_across_batches(void **state) {
  (void)state;
  char *path = tu_tmp_path(".wtr");
  wi_err err = {0};
  trace_writer_opts o = {.chunk_insns = 100, .threaded = true};
  trace_writer *w = tw_open(path, &o, &err);
  assert_non_null(w);
  uint32_t nop = tw_static(w, rt_pc[RT_NOP], 1, rt_bytes[RT_NOP]);
  uint32_t rep = tw_static(w, rt_pc[RT_REP], 2, rt_bytes[RT_REP]);
  for (int i = 0; i < 150; i++) tw_exec(w, nop); /* not a run: chunk 1 ends at 100 */
  for (int i = 0; i < 20000; i++) {
    tw_exec(w, rep);
    tw_mem(w, 0x10000 + (uint64_t)i, 1, true);
    if (i == 12345) tw_async(w); /* a signal arrives: the run ends here */
  }
  tw_exec(w, nop);
  assert_int_equal(tw_close(w, &err), WI_OK);
  trace_t *t = trace_open(path, &err);
  assert_non_null(t);
  assert_int_equal(trace_get_info(t)->n_raw, 150 + 20000 + 1);
  assert_int_equal(trace_get_info(t)->n_chunks, 4);
  assert_int_equal(trace_chunk_at(t, 0)->n_raw, 100);
  assert_int_equal(trace_chunk_at(t, 1)->n_raw, 50 + 12346); /* full at 100, extended over the run */
  assert_int_equal(trace_chunk_at(t, 2)->n_raw, 20000 - 12346); /* the rest of the run */
  assert_int_equal(trace_chunk_at(t, 3)->n_raw, 1);
  trace_close(t);
  unlink(path);
  free(path);
}

/* merge_split joins an instruction's access with its previous one only when it continues it:
 * same instruction, same direction, next address. Raw mode shows exactly what was written. */
static void test_merge_split(void **state) {
  (void)state;
  for (int merge = 0; merge < 2; merge++) {
    char *path = tu_tmp_path(".wtr");
    wi_err err = {0};
    trace_writer_opts o = {.merge_split = merge != 0, .threaded = merge != 0};
    trace_writer *w = tw_open(path, &o, &err);
    assert_non_null(w);
    uint32_t ld = tw_static(w, rt_pc[RT_LOAD], 3, rt_bytes[RT_LOAD]);
    uint32_t st = tw_static(w, rt_pc[RT_STORE2], 4, rt_bytes[RT_STORE2]);
    tw_exec(w, ld); /* a 32-byte load split in four: one access when merging */
    for (int k = 0; k < 4; k++) tw_mem(w, 0x1000 + 8 * (uint64_t)k, 8, false);
    tw_exec(w, ld); /* continues the previous instruction's access: never joined across */
    tw_mem(w, 0x1020, 8, false);
    tw_exec(w, st); /* a store then a load of the next address: two directions, two accesses */
    tw_mem(w, 0x2000, 8, true);
    tw_mem(w, 0x2008, 8, false);
    tw_exec(w, st); /* a gap: two accesses */
    tw_mem(w, 0x3000, 8, false);
    tw_mem(w, 0x3010, 8, false);
    assert_int_equal(tw_close(w, &err), WI_OK);
    trace_t *t = trace_open(path, &err);
    assert_non_null(t);
    trace_cursor *c = trace_cursor_new(t, TRACE_CUR_RAW);
    trace_batch b;
    assert_int_equal(trace_cursor_next(c, &b, &err), WI_OK);
    assert_int_equal(b.n, 4);
    const uint16_t want_n[2][4] = {{4, 1, 2, 2}, {1, 1, 2, 2}};
    for (int i = 0; i < 4; i++) assert_int_equal(b.insns[i].n_mem, want_n[merge][i]);
    const trace_mem *m0 = &b.mems[b.insns[0].mem_off];
    assert_true(m0[0].addr == 0x1000 && m0[0].size == (merge ? 32u : 8u) && !m0[0].is_store);
    const trace_mem *m2 = &b.mems[b.insns[2].mem_off];
    assert_true(m2[0].is_store && !m2[1].is_store && m2[1].addr == 0x2008);
    trace_cursor_free(c);
    trace_close(t);
    unlink(path);
    free(path);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_batches_roundtrip),
    cmocka_unit_test(test_rep_run_across_batches),
    cmocka_unit_test(test_merge_split),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

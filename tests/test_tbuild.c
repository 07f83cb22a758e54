/* test_tbuild.c — the synthetic trace builder: assemble, script a loop, read it back exactly. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tbuild.h"
#include "testutil.h"
#include "trace.h"

#define BASE 0x401000ULL

static const char *const loop_src =
  "loop:\n"
  "  mov rax, [rbx + rcx*8]\n"
  "  add rdx, rax\n"
  "  mov [rsi], rdx\n"
  "  dec rcx\n"
  "  jnz loop\n"
  "done:\n"
  "  nop\n"
  "  ret\n";

typedef struct loop_ctx {
  uint64_t pc_load, pc_store;
  int iter; /* iteration of the load currently executing */
} loop_ctx;

/* Load of iteration i reads 0x20000000 + 8*i; the store writes 0x30000000 each time. */
static void loop_mem(void *vctx, uint64_t pc, int slot, uint64_t *addr, uint32_t *size, bool *is_store) {
  loop_ctx *c = vctx;
  if (pc == c->pc_load) {
    assert_int_equal(slot, 0);
    assert_false(*is_store);
    assert_int_equal(*size, 8);
    *addr = 0x20000000ULL + 8ULL * (uint64_t)c->iter++;
  } else if (pc == c->pc_store) {
    assert_true(*is_store);
    *addr = 0x30000000ULL;
  }
}

/* Reads every instruction of path in the given mode into arrays (caller frees). */
static size_t read_all(const char *path, unsigned flags, trace_insn **insns, trace_mem **mems, size_t *n_mems) {
  wi_err err;
  trace_t *t = trace_open(path, &err);
  if (!t) fail_msg("%s", err.msg);
  trace_cursor *c = trace_cursor_new(t, flags);
  size_t n = 0, nm = 0, cap = 1024, mcap = 1024;
  *insns = malloc(cap * sizeof **insns);
  *mems = malloc(mcap * sizeof **mems);
  trace_batch b;
  for (;;) {
    assert_int_equal(trace_cursor_next(c, &b, &err), WI_OK);
    if (!b.n) break;
    assert_int_equal(b.first_index, n);
    for (size_t i = 0; i < b.n; i++) {
      if (n == cap) *insns = realloc(*insns, (cap *= 2) * sizeof **insns);
      trace_insn in = b.insns[i];
      for (int j = 0; j < in.n_mem; j++) {
        if (nm == mcap) *mems = realloc(*mems, (mcap *= 2) * sizeof **mems);
        (*mems)[nm + (size_t)j] = b.mems[in.mem_off + (uint32_t)j];
      }
      in.mem_off = (uint32_t)nm;
      nm += in.n_mem;
      (*insns)[n++] = in;
    }
  }
  trace_cursor_free(c);
  trace_close(t);
  *n_mems = nm;
  return n;
}

static void test_loop_reads_back(void **state) {
  (void)state;
  wi_err err;
  tbuild *tb = tb_new(loop_src, BASE, &err);
  if (!tb) fail_msg("%s", err.msg);
  uint64_t loop = tb_label(tb, "loop"), done = tb_label(tb, "done");
  assert_int_equal(loop, BASE);
  assert_true(done > loop);
  loop_ctx lc = {.pc_load = loop, .pc_store = loop + tb_len(tb, loop) + tb_len(tb, loop + tb_len(tb, loop))};
  const int N = 37;
  tb_loop(tb, "loop", "done", N, loop_mem, &lc);
  assert_int_equal(lc.iter, N);
  tb_run(tb, done, done + tb_len(tb, done), NULL, NULL); /* nop */
  trace_mem ret_load = {.addr = 0x7ffff000, .size = 8, .is_store = 0};
  tb_exec(tb, done + tb_len(tb, done), &ret_load, 1);
  tb_end_pc(tb, 0x12345678);
  assert_null(tb_error(tb));
  assert_int_equal(tb_count(tb), (uint64_t)N * 5 + 2);
  char *path = tu_tmp_path(".wtr");
  assert_int_equal(tb_write(tb, path, &err), WI_OK);

  trace_insn *in;
  trace_mem *m;
  size_t nm;
  size_t n = read_all(path, TRACE_CUR_RAW, &in, &m, &nm);
  assert_int_equal(n, (size_t)N * 5 + 2);
  uint64_t jnz = done - tb_len(tb, done - 2); /* jnz rel8 is 2 bytes */
  assert_int_equal(tb_len(tb, jnz), 2);
  for (int it = 0; it < N; it++) {
    const trace_insn *b = &in[it * 5];
    uint64_t pc = loop;
    for (int k = 0; k < 5; k++) {
      assert_int_equal(b[k].pc, pc);
      pc += b[k].len;
    }
    assert_int_equal(b[0].n_mem, 1);
    assert_int_equal(m[b[0].mem_off].addr, 0x20000000ULL + 8ULL * (uint64_t)it);
    assert_int_equal(m[b[0].mem_off].size, 8);
    assert_int_equal(b[1].n_mem, 0);
    assert_int_equal(b[2].n_mem, 1);
    assert_int_equal(m[b[2].mem_off].addr, 0x30000000ULL);
    assert_true(m[b[2].mem_off].is_store);
    assert_int_equal(b[4].pc, jnz);
    if (it < N - 1) {
      assert_true(b[4].flags & TI_TAKEN);
      assert_int_equal(b[4].next_pc, loop);
    } else {
      assert_false(b[4].flags & TI_TAKEN);
      assert_int_equal(b[4].next_pc, done);
    }
    for (int k = 0; k < 4; k++) assert_false(b[k].flags & TI_TAKEN);
  }
  const trace_insn *ret = &in[n - 1];
  assert_int_equal(ret->pc, done + 1);
  assert_int_equal(ret->flags & (TI_LAST | TI_TAKEN), TI_LAST | TI_TAKEN);
  assert_int_equal(ret->next_pc, 0x12345678);
  assert_int_equal(m[ret->mem_off].addr, 0x7ffff000);
  free(in);
  free(m);

  /* model mode is identical here (no rep runs, no split accesses) */
  n = read_all(path, 0, &in, &m, &nm);
  assert_int_equal(n, (size_t)N * 5 + 2);
  free(in);
  free(m);

  /* code image, symbols and metadata */
  trace_t *t = trace_open(path, &err);
  assert_non_null(t);
  assert_string_equal(trace_meta(t, "program"), "<synthetic>");
  const trace_sym *s = trace_sym_lookup(t, jnz);
  assert_non_null(s);
  assert_string_equal(s->name, "loop");
  s = trace_sym_lookup(t, done + 1);
  assert_non_null(s);
  assert_string_equal(s->name, "done");
  size_t avail = 0, code_n = 0;
  const uint8_t *code = trace_code_at(t, loop, &avail);
  const uint8_t *mine = tb_code(tb, &code_n);
  assert_int_equal(avail, code_n);
  assert_memory_equal(code, mine, code_n);
  uint32_t sid = trace_sid_of(t, jnz);
  assert_int_equal(trace_static_at(t, sid)->count, (uint64_t)N);
  const dec_insn *d = trace_decoded(t, sid);
  assert_non_null(d);
  assert_int_equal(d->len, 2);
  assert_int_equal(d->br, BR_COND);
  trace_close(t);
  unlink(path);
  free(path);
  tb_free(tb);
}

static void test_async_and_explicit(void **state) {
  (void)state;
  wi_err err;
  tbuild *tb = tb_new("a: nop\nb: nop\nhandler: nop\n ret\n", BASE, &err);
  assert_non_null(tb);
  uint64_t a = tb_label(tb, "a"), h = tb_label(tb, "handler");
  tb_exec(tb, a, NULL, 0);
  tb_async(tb); /* a -> handler is a signal delivery */
  tb_exec(tb, h, NULL, 0);
  tb_exec(tb, h + 1, NULL, 0);
  tb_async(tb); /* ret -> b is sigreturn */
  tb_exec(tb, tb_label(tb, "b"), NULL, 0);
  char *path = tu_tmp_path(".wtr");
  assert_int_equal(tb_write(tb, path, &err), WI_OK);
  trace_insn *in;
  trace_mem *m;
  size_t nm;
  size_t n = read_all(path, TRACE_CUR_RAW, &in, &m, &nm);
  assert_int_equal(n, 4);
  assert_int_equal(in[0].flags, TI_TAKEN | TI_ASYNC);
  assert_int_equal(in[0].next_pc, h);
  assert_int_equal(in[1].flags, 0);
  assert_int_equal(in[2].flags, TI_TAKEN | TI_ASYNC);
  assert_int_equal(in[3].flags, TI_LAST);
  assert_int_equal(in[3].next_pc, in[3].pc + 1);
  free(in);
  free(m);
  unlink(path);
  free(path);
  tb_free(tb);
}

static void test_errors(void **state) {
  (void)state;
  wi_err err;
  assert_null(tb_new("  frobnicate rax, 1\n", BASE, &err));
  assert_int_equal(err.rc, WI_EINVAL);
  assert_non_null(strstr(err.msg, "assembling failed"));

  tbuild *tb = tb_new("x: add rax, 1\ny: nop\n", BASE, &err);
  assert_non_null(tb);
  assert_int_equal(tb_label(tb, "nosuch"), 0);
  assert_non_null(tb_error(tb));
  char *path = tu_tmp_path(".wtr");
  assert_int_equal(tb_write(tb, path, &err), WI_EINVAL);
  assert_non_null(strstr(err.msg, "nosuch"));
  tb_free(tb);

  tb = tb_new("x: add rax, 1\ny: nop\n", BASE, &err);
  tb_exec(tb, BASE + 1, NULL, 0); /* middle of an instruction */
  assert_non_null(tb_error(tb));
  tb_free(tb);

  tb = tb_new("x: add rax, 1\ny: nop\n", BASE, &err);
  tb_loop(tb, "x", "y", 3, NULL, NULL); /* add is not a branch back to x */
  assert_non_null(strstr(tb_error(tb), "not a branch"));
  tb_free(tb);
  free(path);
}

/* Read-modify-write operands give a load then a store; default addresses are per pc/slot. */
static void test_default_accesses(void **state) {
  (void)state;
  wi_err err;
  tbuild *tb = tb_new("add qword ptr [rdi], rax\nmov ecx, dword ptr [rsi]\n", BASE, &err);
  assert_non_null(tb);
  tb_run(tb, BASE, BASE + 3 + 2, NULL, NULL);
  char *path = tu_tmp_path(".wtr");
  assert_int_equal(tb_write(tb, path, &err), WI_OK);
  trace_insn *in;
  trace_mem *m;
  size_t nm;
  size_t n = read_all(path, TRACE_CUR_RAW, &in, &m, &nm);
  assert_int_equal(n, 2);
  assert_int_equal(in[0].n_mem, 2);
  assert_int_equal(m[0].addr, TB_DATA_BASE);
  assert_false(m[0].is_store);
  assert_int_equal(m[1].addr, TB_DATA_BASE + 8);
  assert_true(m[1].is_store);
  assert_int_equal(in[1].n_mem, 1);
  assert_int_equal(m[2].addr, TB_DATA_BASE + 64 * 3);
  assert_int_equal(m[2].size, 4);
  free(in);
  free(m);
  unlink(path);
  free(path);
  tb_free(tb);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_loop_reads_back),
    cmocka_unit_test(test_async_and_explicit),
    cmocka_unit_test(test_errors),
    cmocka_unit_test(test_default_accesses),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

/* test_int_champsim.c — ChampSim export: record counts, branch fields and the branch kinds
 * ChampSim infers from the registers, checked against the decoder on recorded workloads; the
 * register-id and inference rules on hand-made instructions. */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "champsim.h"
#include "trace.h"
#include "util.h"

/* Register ids: non-zero, distinct, special ids only where they belong. */
static void test_reg_ids(void **state) {
  (void)state;
  bool used[256] = {0};
  for (int f = 0; f < RG_NUM; f++) {
    uint8_t id = chs_reg_id(f);
    assert_true(id != 0);
    assert_false(used[id]);
    used[id] = true;
    if (f == RG_RSP) assert_int_equal(id, CHS_REG_SP);
    else if (f == RG_FLAGS) assert_int_equal(id, CHS_REG_FLAGS);
    else assert_true(id != CHS_REG_SP && id != CHS_REG_FLAGS && id != CHS_REG_IP && id != CHS_REG_INDIRECT);
  }
}

/* Each decoder branch kind, including awkward operands, is inferred as the right ChampSim kind. */
static void test_inference_rules(void **state) {
  (void)state;
  struct {
    int br;
    regset_t src, addr_src, dst;
  } cases[] = {
    {BR_COND, RG_BIT(RG_FLAGS), 0, 0},
    {BR_COND, RG_BIT(RG_RCX), 0, RG_BIT(RG_RCX)},          /* loop / jrcxz */
    {BR_JUMP, 0, 0, 0},
    {BR_IND_JUMP, RG_BIT(RG_RAX), 0, 0},                      /* jmp rax */
    {BR_IND_JUMP, 0, 0, 0},                                     /* jmp [rip+x] (PLT) */
    {BR_IND_JUMP, 0, RG_BIT(RG_RSP), 0},                      /* jmp [rsp+8] */
    {BR_CALL, RG_BIT(RG_RSP), 0, RG_BIT(RG_RSP)},
    {BR_IND_CALL, RG_BIT(RG_RSP), RG_BIT(RG_RBX) | RG_BIT(RG_R12), RG_BIT(RG_RSP)},
    {BR_IND_CALL, RG_BIT(RG_RSP), 0, RG_BIT(RG_RSP)},       /* call [rip+x] */
    {BR_RET, RG_BIT(RG_RSP), 0, RG_BIT(RG_RSP)},
    {BR_NONE, RG_BIT(RG_RSP) | RG_BIT(RG_RAX), 0, RG_BIT(RG_RSP)}, /* push rax */
    {BR_NONE, RG_BIT(RG_RAX) | RG_BIT(RG_FLAGS), RG_BIT(RG_RBX), RG_BIT(RG_RAX) | RG_BIT(RG_FLAGS)},
  };
  for (size_t i = 0; i < WI_ARRAY_LEN(cases); i++) {
    dec_insn d = {.pc = 0x1000, .len = 2, .br = (uint8_t)cases[i].br, .src = cases[i].src,
                  .addr_src = cases[i].addr_src, .dst = cases[i].dst};
    trace_insn ti = {.pc = 0x1000, .next_pc = 0x2000, .flags = TI_TAKEN};
    chs_instr r;
    chs_make(&d, &ti, NULL, &r);
    if (chs_infer(&r) != chs_expected(cases[i].br))
      fail_msg("case %zu: %s inferred as %s", i, branch_kind_name(cases[i].br), chs_branch_name(chs_infer(&r)));
    assert_int_equal(r.ip, 0x1000);
    assert_int_equal(r.is_branch, cases[i].br != BR_NONE);
  }
  /* A not-taken conditional keeps its outcome. */
  dec_insn d = {.pc = 0x1000, .len = 2, .br = BR_COND, .src = RG_BIT(RG_FLAGS)};
  trace_insn ti = {.pc = 0x1000, .next_pc = 0x1002};
  chs_instr r;
  chs_make(&d, &ti, NULL, &r);
  assert_int_equal(r.branch_taken, 0);
  /* Loads go to source_memory, stores to destination_memory. */
  trace_mem mems[3] = {{0x5000, 8, 0, {0}}, {0x6000, 8, 1, {0}}, {0x7000, 4, 0, {0}}};
  dec_insn m = {.pc = 0x1000, .len = 4};
  trace_insn tm = {.pc = 0x1000, .next_pc = 0x1004, .n_mem = 3};
  chs_make(&m, &tm, mems, &r);
  assert_int_equal(r.src_mem[0], 0x5000);
  assert_int_equal(r.src_mem[1], 0x7000);
  assert_int_equal(r.dst_mem[0], 0x6000);
  assert_int_equal(r.dst_mem[1], 0);
}

/* Export a recorded workload and check every record against the trace. */
static void check_export(const char *name, bool via_cli) {
  char *path = tu_trace_path(name);
  wi_err err = {0};
  trace_t *t = trace_open(path, &err);
  if (!t) fail_msg("%s: %s", path, err.msg);
  char *out = tu_tmp_path(".xz");
  if (via_cli) {
    const char *bin = getenv("WHATIF_BIN");
    if (!bin) skip();
    char *cmd = xasprintf("'%s' export '%s' --champsim '%s' 2>/dev/null", bin, path, out);
    int st = 0;
    free(tu_run(cmd, &st));
    assert_int_equal(st, 0);
    free(cmd);
    /* xz itself accepts the file, when it is installed. */
    if (access("/usr/bin/xz", X_OK) == 0) {
      cmd = xasprintf("xz -t '%s'", out);
      free(tu_run(cmd, &st));
      assert_int_equal(st, 0);
      free(cmd);
    }
  } else {
    chs_stats st;
    assert_int_equal(chs_export(t, out, 1, &st, &err), WI_OK);
    assert_int_equal(st.records, trace_get_info(t)->n_insns);
  }
  chs_reader *rd = chs_reader_open(out, &err);
  assert_non_null(rd);
  trace_cursor *c = trace_cursor_new(t, 0);
  trace_batch b;
  uint64_t n = 0, kinds[CHS_NOT_BRANCH + 1] = {0};
  while (trace_cursor_next(c, &b, &err) == WI_OK && b.n) {
    for (size_t i = 0; i < b.n; i++, n++) {
      const trace_insn *x = &b.insns[i];
      const dec_insn *d = trace_decoded(t, x->sid);
      chs_instr r;
      if (chs_reader_next(rd, &r, &err) != 1) fail_msg("%s: record %llu missing (%s)", name, (unsigned long long)n, err.msg);
      assert_int_equal(r.ip, x->pc);
      assert_int_equal(r.is_branch, d->br != BR_NONE);
      if (d->br == BR_COND) assert_int_equal(r.branch_taken, (x->flags & TI_TAKEN) != 0);
      else if (d->br != BR_NONE) assert_int_equal(r.branch_taken, 1);
      chs_branch k = chs_infer(&r);
      if (k != chs_expected(d->br))
        fail_msg("%s record %llu at %llx (%s): ChampSim would infer %s", name, (unsigned long long)n,
                 (unsigned long long)x->pc, d->text, chs_branch_name(k));
      kinds[k]++;
      /* The first load and store addresses are the recorded ones. */
      uint64_t first_load = 0, first_store = 0;
      for (unsigned j = 0; j < x->n_mem; j++) {
        const trace_mem *m = &b.mems[x->mem_off + j];
        if (m->is_store && !first_store) first_store = m->addr;
        if (!m->is_store && !first_load) first_load = m->addr;
      }
      assert_int_equal(r.src_mem[0], first_load);
      assert_int_equal(r.dst_mem[0], first_store);
    }
  }
  assert_int_equal(err.rc, WI_OK);
  chs_instr extra;
  assert_int_equal(chs_reader_next(rd, &extra, &err), 0); /* exactly one record per instruction */
  assert_int_equal(n, trace_get_info(t)->n_insns);
  /* The workloads exercise the common kinds. */
  assert_true(kinds[CHS_CONDITIONAL] > 0);
  assert_true(kinds[CHS_DIRECT_CALL] > 0);
  assert_true(kinds[CHS_RETURN] > 0);
  assert_true(kinds[CHS_INDIRECT] > 0); /* PLT stubs */
  assert_true(kinds[CHS_NOT_BRANCH] > n / 2);
  trace_cursor_free(c);
  chs_reader_close(rd);
  trace_close(t);
  unlink(out);
  free(out);
  free(path);
}

static void test_export_recursion(void **state) {
  (void)state;
  check_export("recursion", false);
}

static void test_export_branchy_cli(void **state) {
  (void)state;
  check_export("branchy", true);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_reg_ids),
    cmocka_unit_test(test_inference_rules),
    cmocka_unit_test(test_export_recursion),
    cmocka_unit_test(test_export_branchy_cli),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

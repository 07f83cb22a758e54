/* test_gus_sets.c — what the Gus step assumes of its taint sets: which of them hold the current
 * instruction n. The step takes shortcuts on it (gus_model.c: tv_next for the front end's,
 * dispatch's and retire's sets, tv_add_h without the "already holds n" test for registers and
 * ROB entries, tv_has_q_h for the dispatch set, use_res taking a chain's set as it is); the
 * self-check counts every set that breaks the assumption, and gus_check_sets reports it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "tu_gsyn.h"

#include "gus.h"
#include "gus_int.h"
#include "util.h"

static uint32_t syn_static(syn *s, int cls, regset_t src, regset_t addr, regset_t dst, int br, const char *text) {
  dec_insn d;
  memset(&d, 0, sizeof d);
  d.pc = 0x401000 + 4 * s->dec.n;
  d.len = 4;
  d.cls = (uint8_t)cls;
  d.src = src;
  d.addr_src = addr;
  d.dst = dst;
  d.br = (uint8_t)br;
  snprintf(d.text, sizeof d.text, "%s", text);
  VEC_PUSH(s->dec, d);
  return (uint32_t)(s->dec.n - 1);
}

/* Execute sid with n_mem (0..2) accesses at addr, addr + 64. */
static void syn_exec(syn *s, uint32_t sid, int n_mem, uint64_t addr, uint32_t size, bool store, bool taken) {
  trace_insn t;
  memset(&t, 0, sizeof t);
  t.pc = s->dec.a[sid].pc;
  t.next_pc = t.pc + 4;
  t.sid = sid;
  t.rep = 1;
  t.len = 4;
  t.flags = taken ? TI_TAKEN : 0;
  t.mem_off = (uint32_t)s->mem.n;
  t.n_mem = (uint16_t)n_mem;
  for (int i = 0; i < n_mem; i++) {
    trace_mem m;
    memset(&m, 0, sizeof m);
    m.addr = addr + 64 * (uint64_t)i;
    m.size = size;
    m.is_store = (uint8_t)(i ? !store : store);
    VEC_PUSH(s->mem, m);
  }
  VEC_PUSH(s->ins, t);
}

/* Random code that binds dispatch on every resource in turn: dependency chains, loads that miss,
 * stores and reloads, serializing instructions (dispatch waits for retirement), push/pop with
 * the stack engine, taken branches. */
static void random_code(syn *s, wi_rng *rng, int n_static, int n) {
  static const int classes[] = {IC_ALU, IC_ALU, IC_MOV, IC_LOAD, IC_STORE, IC_MUL, IC_FMA, IC_DIV,
                                IC_BRANCH, IC_LEA, IC_ZERO, IC_NOP, IC_FP_ADD, IC_SERIAL};
  for (int i = 0; i < n_static; i++) {
    int cls = classes[rng_below(rng, WI_ARRAY_LEN(classes))];
    if (cls == IC_SERIAL && rng_below(rng, 3)) cls = IC_ALU;
    regset_t src = 0, addr = 0, dst = RG_BIT(rng_below(rng, 12));
    for (int k = 0; k < 2; k++) src |= RG_BIT(rng_below(rng, 12));
    if (cls == IC_LOAD || cls == IC_STORE || !rng_below(rng, 4)) addr = RG_BIT(rng_below(rng, 6));
    const bool push = !rng_below(rng, 8);
    if (push) dst |= RG_BIT(RG_RSP);
    syn_static(s, cls, src, addr, dst, cls == IC_BRANCH ? BR_COND : BR_NONE, push ? "push rbx" : "op");
  }
  for (int i = 0; i < n; i++) {
    const uint32_t sid = (uint32_t)rng_below(rng, (uint64_t)n_static);
    const dec_insn *d = &s->dec.a[sid];
    const uint64_t a = 0x100000 + rng_below(rng, 1u << (rng_below(rng, 2) ? 10 : 24)) * 8;
    const bool taken = rng_below(rng, 2);
    if (d->cls == IC_LOAD || d->cls == IC_STORE) syn_exec(s, sid, 1, a, 8, d->cls == IC_STORE, taken);
    else if (d->addr_src && rng_below(rng, 2)) syn_exec(s, sid, 1 + (int)rng_below(rng, 2), a, 8, rng_below(rng, 2), taken);
    else syn_exec(s, sid, 0, 0, 0, false, taken);
  }
}

/* Run s on m with the self-check, instruction by instruction (the general step) or through
 * gus_run_source (the step's copies per shape); fails on any broken assumption. */
static void run_checked(syn *s, const gus_machine *m, uint32_t window, bool by_step, const char *what) {
  wi_err err = {0};
  gus *g = gus_create(m, window, (uint32_t)s->dec.n, true, 1, &err);
  if (!g) fail_msg("gus_create: %s", err.msg);
  gus_set_selfcheck(g, true);
  char msg[200];
  if (by_step) {
    for (size_t i = 0; i < s->ins.n; i++) {
      const trace_insn *t = &s->ins.a[i];
      gus_step(g, t->sid, &s->dec.a[t->sid], t, s->mem.a);
      if (i % 1009 == 0 && !gus_check_sets(g, msg, sizeof msg))
        fail_msg("%s, by step, after instruction %zu: %s", what, i, msg);
    }
  } else if (gus_run_source(g, syn_source(s), &err) != WI_OK) {
    fail_msg("%s: gus_run_source: %s", what, err.msg);
  }
  gus_result r;
  gus_finish(g, &r);
  if (!gus_check_sets(g, msg, sizeof msg)) fail_msg("%s, %s: %s", what, by_step ? "by step" : "by batch", msg);
  gus_result_free(&r);
  gus_free(g);
}

/* Machines that make every resource bind: ROBs of 1 and 2 (a ROB entry's set then ends at n - 1
 * or n - 2), no front-end latency (dispatch-bound from instruction 0), few fill buffers, and
 * throughputs and latencies scaled as the sensitivity runs do. */
static void test_set_assumptions(void **state) {
  (void)state;
  wi_rng rng;
  rng_seed(&rng, tu_seed() + 13);
  for (int round = 0; round < 16; round++) {
    syn s = {0};
    random_code(&s, &rng, 6 + (int)rng_below(&rng, 40), 6000);
    gus_machine m;
    gus_machine_default(&m);
    static const uint32_t robs[] = {1, 2, 3, 8, 40, 224};
    m.rob = robs[round % WI_ARRAY_LEN(robs)];
    m.fe_latency = round & 1 ? 0 : m.fe_latency;
    m.fill_buffers = 1 + (uint32_t)rng_below(&rng, 6);
    m.stack_engine = round & 2;
    const int r = (int)rng_below(&rng, GUS_R_PORT0 + (int)m.n_ports);
    m.tput[r] = rng_below(&rng, 2) ? 0.5 : 2.0;
    m.lat[r] = rng_below(&rng, 2) ? 0.0 : 2.0;
    const uint32_t window = 1 + (uint32_t)rng_below(&rng, 4);
    char what[80];
    snprintf(what, sizeof what, "round %d (rob %u, window %u)", round, m.rob, window);
    run_checked(&s, &m, window, true, what);
    run_checked(&s, &m, window, false, what);
    syn_free(&s);
  }
}

/* A dispatch-bound run far longer than the ring of positions R: the dispatch set's pending
 * interval grows by one each step (tv_next does not cap it) and must stay within R + TV_CLAMP
 * (gus_check_sets), through gus_step and through gus_run_source's batches alike. */
static void test_interval_clamp(void **state) {
  (void)state;
  syn s = {0};
  const uint32_t nop = syn_static(&s, IC_NOP, 0, 0, 0, BR_NONE, "nop");
  const uint32_t alu = syn_static(&s, IC_ALU, RG_BIT(RG_RAX), 0, RG_BIT(RG_RCX), BR_NONE, "op");
  for (int i = 0; i < 6000; i++) syn_exec(&s, i % 7 ? nop : alu, 0, 0, 0, false, false);
  gus_machine m;
  gus_machine_default(&m);
  m.rob = 40;
  for (uint32_t window = 1; window <= 2; window++) {
    char what[80];
    snprintf(what, sizeof what, "nops (rob %u, window %u)", m.rob, window);
    run_checked(&s, &m, window, true, what);
    run_checked(&s, &m, window, false, what);
  }
  syn_free(&s);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_set_assumptions),
    cmocka_unit_test(test_interval_clamp),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

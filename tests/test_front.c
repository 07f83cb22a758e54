/* test_front.c — the out-of-order model's front end: the fast paths of the trace window fill
 * (by runs, split at the window ring's end) and of wrong-path fetch (by blocks, with the
 * prediction's PC terms and the BTB set kept per block) against the instruction-by-instruction
 * paths that serve filters; fetch's early stop on a full fetch queue. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "machine.h"
#include "ooo.h"
#include "tbuild.h"
#include "testutil.h"
#include "trace.h"

#define BASE 0x401000ULL

/* A loop with a data-dependent branch (random outcomes: a misprediction about every other
 * turn, so the wrong path is fetched through blocks ending in conditional branches, taken and
 * not), loads, stores and a read-modify-write. */
static const char *const front_src =
  "loop:\n"
  "  mov rax, [rsi]\n"
  "  mov rbx, [r8]\n"
  "  test rax, rax\n"
  "br:\n"
  "  jz skip\n"
  "rmw:\n"
  "  add [rdi], rax\n"
  "  add rbx, 1\n"
  "  cmp rbx, 7\n"
  "  jb skip\n"
  "  add rbx, 2\n"
  "skip:\n"
  "  add rdx, rbx\n"
  "  imul rdi, rdi, 1\n"
  "  mov [rdi+8], rbx\n"
  "  dec rcx\n"
  "  jnz loop\n"
  "done:\n"
  "  nop\n";

static void front_addr(void *ctx, uint64_t pc, int slot, uint64_t *addr, uint32_t *size, bool *is_store) {
  uint64_t *n = ctx;
  (void)pc;
  (void)size;
  *addr = 0x20000000ULL + (*is_store ? 0 : 64 * (wi_mix64(++*n) % 512) + 8 * (uint64_t)slot);
}

static char *front_trace(uint64_t seed, int iters, uint64_t *an) {
  wi_err err;
  tbuild *tb = tb_new(front_src, BASE, &err);
  if (!tb) fail_msg("tb_new: %s", err.msg);
  uint64_t loop = tb_label(tb, "loop"), br = tb_label(tb, "br"), skip = tb_label(tb, "skip");
  uint64_t done = tb_label(tb, "done");
  wi_rng rng;
  rng_seed(&rng, seed);
  for (int i = 0; i < iters; i++) {
    tb_run(tb, loop, br, front_addr, an);
    tb_exec(tb, br, NULL, 0);
    if (rng_below(&rng, 2)) tb_run(tb, tb_label(tb, "rmw"), skip, front_addr, an);
    tb_run(tb, skip, done, front_addr, an);
  }
  return tu_tb_finish(tb, done);
}

/* A filter that changes nothing: with it the model fills the window and fetches the wrong path
 * instruction by instruction (fill_window_filtered, fetch_wrong_each). */
static void noop_filter(void *ctx, uint64_t index, const trace_insn *ti, const dec_insn *di, bool wrong,
                        ooo_mod *out) {
  (void)index;
  (void)ti;
  (void)di;
  (void)wrong;
  (void)out;
  ++*(uint64_t *)ctx;
}

/* The fast paths give the results of the instruction-by-instruction ones: the same statistics,
 * cycles, committed and fetched positions after the whole trace (its last instruction ends the
 * fill), under front ends that cut fetch blocks every way (width, bytes, queue room, the
 * wrong-path cap, taken branches, lines through the I-cache) and under the default TAGE, other
 * predictors and a BTB small enough to miss. Also without bindings (OOO_NO_BINDINGS), where
 * wrong-path fetch takes a block that fits whole without its per-instruction checks. */
static void test_fast_paths_match(void **state) {
  (void)state;
  uint64_t seed = tu_seed(), an = 0;
  char *path = front_trace(seed, 1500, &an);
  trace_t *t = tu_open_trace(path);
  wi_err err;
  for (int k = 0; k < 11; k++) {
    ooo_config c;
    if (machine_load(k == 9 ? "stress" : "golden_cove", &c, &err)) fail_msg("%s", err.msg);
    if (k == 1) c.fe.fetch_width = 3;
    if (k == 2) c.fe.fetch_bytes = 16;
    if (k == 3) c.fe.fetch_queue = 12;
    if (k == 4 || k == 10) { /* (13: whole blocks go, and the cap cuts blocks) */
      c.fe.wrong_path = WP_CAP;
      c.fe.wrong_path_cap = k == 4 ? 5 : 13;
    }
    if (k == 5) c.fe.fetch_taken = 1;
    if (k == 6) c.fe.uop_cache_lines = 0;
    if (k == 7) c.bp.btb_entries = 2, c.bp.btb_ways = 2; /* BTB misses (and the scalar search) */
    if (k == 8) c.bp.type = BP_GSHARE;
    ooo_model *a = tu_ooo_new(t, &c), *b = tu_ooo_new(t, &c);
    ooo_model *nb = ooo_new(&c, t, OOO_SID_STATS | OOO_NO_BINDINGS, &err);
    if (!nb) fail_msg("ooo_new: %s", err.msg);
    uint64_t calls = 0;
    ooo_set_filter(b, noop_filter, &calls);
    tu_ooo_run(a, UINT64_MAX);
    tu_ooo_run(b, UINT64_MAX);
    tu_ooo_run(nb, UINT64_MAX);
    tu_ooo_assert_same(a, b);
    tu_ooo_assert_same(nb, b);
    assert_int_equal(ooo_committed(a), ooo_committed(b));
    assert_int_equal(ooo_fetched_index(a), ooo_fetched_index(b));
    assert_int_equal(ooo_fetched_index(nb), ooo_fetched_index(b));
    const ooo_stats *s = ooo_get_stats(a);
    print_message("front end %d: %llu committed, %llu wrong-path fetched, %llu mispredicts, %llu filter calls\n", k,
                  (unsigned long long)s->insns, (unsigned long long)s->fetched[1],
                  (unsigned long long)s->mispredicts[BR_COND], (unsigned long long)calls);
    assert_true(s->mispredicts[BR_COND] > 300);
    assert_true(s->fetched[1] > 3 * s->mispredicts[BR_COND]); /* the wrong path was fetched */
    assert_true(calls > s->insns);                            /* both paths went through it */
    ooo_free(a);
    ooo_free(b);
    ooo_free(nb);
  }
  trace_close(t);
  unlink(path);
  free(path);
}

/* Loads of 13 to 16 scattered accesses each (gathers): the window's memory ring fills before its
 * instruction ring, fills stop short of their 64 instructions, and later fills start anywhere in
 * the instruction ring and run across its end (oo_fill_window splits a run there). The fast fill
 * must give the instruction-by-instruction one's results. */
static const char *const gather_src =
  "loop:\n"
  "  mov rax, [rsi]\n"
  "  mov rdx, [rdi]\n"
  "  mov rbx, [r8]\n"
  "  dec rcx\n"
  "  jnz loop\n"
  "done:\n"
  "  nop\n";

static void test_fill_wrap(void **state) {
  (void)state;
  wi_err err;
  tbuild *tb = tb_new(gather_src, BASE, &err);
  if (!tb) fail_msg("tb_new: %s", err.msg);
  const uint64_t loop = tb_label(tb, "loop"), done = tb_label(tb, "done");
  wi_rng rng;
  rng_seed(&rng, tu_seed());
  for (int i = 0; i < 3000; i++) {
    uint64_t pc = loop;
    for (int l = 0; l < 3; l++, pc += tb_len(tb, pc)) { /* the three loads: 13 to 16 accesses */
      trace_mem g[16];
      int n = 13 + (int)rng_below(&rng, 4);
      for (int j = 0; j < n; j++)
        g[j] = (trace_mem){.addr = 0x30000000ULL + 64 * rng_below(&rng, 4096), .size = 8, .is_store = 0};
      tb_exec(tb, pc, g, n);
    }
    tb_run(tb, pc, done, NULL, NULL);
  }
  char *path = tu_tb_finish(tb, done);
  trace_t *t = tu_open_trace(path);
  for (int k = 0; k < 2; k++) {
    ooo_config c;
    if (machine_load(k ? "stress" : "golden_cove", &c, &err)) fail_msg("%s", err.msg);
    ooo_model *a = tu_ooo_new(t, &c), *b = tu_ooo_new(t, &c);
    uint64_t calls = 0;
    ooo_set_filter(b, noop_filter, &calls);
    tu_ooo_run(a, UINT64_MAX);
    tu_ooo_run(b, UINT64_MAX);
    tu_ooo_assert_same(a, b);
    assert_int_equal(ooo_committed(a), 3000 * 5 + 1);
    assert_int_equal(ooo_committed(a), ooo_committed(b));
    ooo_free(a);
    ooo_free(b);
  }
  trace_close(t);
  unlink(path);
  free(path);
}

/* A dependency chain of multiplies: the back end takes one instruction every few cycles, the
 * fetch queue stays full, and fetch stops at once (oo_fetch's full-queue exit) with the front
 * end marked blocked, so the cycles in which nothing but the chain's next result can happen
 * are skipped. Without the mark they are simulated one by one: the same cycles, some 2% of
 * them skipped instead of over a quarter. */
static const char *const chain_src =
  "loop:\n"
  "  imul rax, rax, 3\n"
  "  imul rax, rax, 5\n"
  "  imul rax, rax, 7\n"
  "  imul rax, rax, 9\n"
  "  imul rax, rax, 11\n"
  "  imul rax, rax, 13\n"
  "  dec rcx\n"
  "  jnz loop\n"
  "done:\n"
  "  nop\n";

static void test_full_queue(void **state) {
  (void)state;
  wi_err err;
  tbuild *tb = tb_new(chain_src, BASE, &err);
  if (!tb) fail_msg("tb_new: %s", err.msg);
  tb_loop(tb, "loop", "done", 4000, NULL, NULL);
  char *path = tu_tb_finish(tb, tb_label(tb, "done"));
  trace_t *t = tu_open_trace(path);
  for (int k = 0; k < 2; k++) {
    ooo_config c;
    if (machine_load("golden_cove", &c, &err)) fail_msg("%s", err.msg);
    if (k == 1) c.fe.fetch_queue = 7; /* (not a power of two: the ring is larger than the queue) */
    ooo_model *m = tu_ooo_new(t, &c);
    tu_ooo_run(m, UINT64_MAX);
    const ooo_stats *s = ooo_get_stats(m);
    uint64_t cycles = ooo_cycles(m);
    print_message("fetch queue %u: %llu committed in %llu cycles, %llu skipped, %llu fetched\n", c.fe.fetch_queue,
                  (unsigned long long)s->insns, (unsigned long long)cycles, (unsigned long long)s->skipped_cycles,
                  (unsigned long long)s->fetched[0]);
    assert_int_equal(s->insns, 4000 * 8 + 1);
    /* six 3-cycle multiplies a turn bound the loop; rename is never short of instructions */
    assert_true(cycles >= 4000 * 18 && cycles < 4000 * 18 + 2000);
    assert_true(s->skipped_cycles * 5 > cycles);
    ooo_free(m);
  }
  trace_close(t);
  unlink(path);
  free(path);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_fast_paths_match),
    cmocka_unit_test(test_fill_wrap),
    cmocka_unit_test(test_full_queue),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

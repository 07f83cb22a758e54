/* test_mem_retry.c — loads refused by a full L1D (MEM_BLOCKED) and their retries in the core
 * (ooo_back.c oo_mem_retry): every refused load is sent again until accepted, in age order,
 * squashed ones are dropped, a refusal counts once, and a run is the same with an observer
 * (every cycle stepped) and through a checkpoint taken while loads wait. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "machine.h"
#include "ooo.h"
#include "tbuild.h"
#include "testutil.h"
#include "trace.h"

#define BASE 0x401000ULL

/* Six loads of new lines, then a random branch: its not-taken side loads too, so mispredictions
 * put wrong-path loads among the refused ones, and they are squashed while they wait. */
/* clang-format off */
static const char *const src =
  "loop:\n"
  "  mov rax, [rsi]\n"
  "  mov rbx, [rsi+64]\n"
  "  mov rdx, [rsi+128]\n"
  "  mov r8, [rsi+192]\n"
  "  mov r9, [rsi+256]\n"
  "  mov r10, [rsi+320]\n"
  "  test r11, r11\n"
  "br:\n"
  "  jz skip\n"
  "  mov r12, [rdi]\n"
  "  mov r13, [rdi+64]\n"
  "skip:\n"
  "  add rax, rbx\n"
  "  dec rcx\n"
  "  jnz loop\n"
  "done:\n"
  "  nop\n";
/* clang-format on */

typedef struct addr_ctx {
  uint64_t next; /* the next new line */
} addr_ctx;

static void new_line(void *vctx, uint64_t pc, int slot, uint64_t *addr, uint32_t *size, bool *is_store) {
  (void)pc;
  (void)slot;
  (void)size;
  (void)is_store;
  addr_ctx *c = vctx;
  *addr = c->next;
  c->next += 64;
}

static char *retry_trace(uint64_t seed, int iters) {
  wi_err err;
  tbuild *tb = tb_new(src, BASE, &err);
  if (!tb) fail_msg("tb_new: %s", err.msg);
  uint64_t loop = tb_label(tb, "loop"), br = tb_label(tb, "br"), skip = tb_label(tb, "skip"),
           done = tb_label(tb, "done");
  addr_ctx ac = {0x60000000ULL};
  wi_rng rng;
  rng_seed(&rng, seed);
  for (int i = 0; i < iters; i++) {
    tb_run(tb, loop, br, new_line, &ac);
    tb_exec(tb, br, NULL, 0);
    if (rng_below(&rng, 2)) tb_run(tb, br + tb_len(tb, br), skip, new_line, &ac);
    tb_run(tb, skip, done, NULL, NULL);
  }
  return tu_tb_finish(tb, done);
}

/* What an observer saw of refusals and L1D acceptances of correct-path demand loads. */
#define MAX_FLOWS (1u << 16)
typedef struct seen {
  uint8_t refused[MAX_FLOWS];   /* flow refused at least once (MSHR_FULL) */
  uint8_t accepted[MAX_FLOWS];  /* flow's first L1D hit / miss / merge seen */
  uint64_t last_refused_accept; /* fid of the last refused flow accepted (+1; 0 none) */
  uint64_t refusals;            /* every MSHR_FULL of a data request (retries included) */
  uint64_t refused_flows;       /* correct-path flows refused at least once */
  uint64_t order_errors;        /* refused flows accepted after a younger refused flow */
  uint64_t wrong_refusals;      /* refusals of wrong-path loads */
  uint64_t wrong_fid[1024];     /* wrong-path flows refused (the first 1024) ... */
  uint8_t wrong_acc[1024];      /* ... and whether the L1D accepted them later */
  uint32_t n_wrong;
} seen;

/* Index of wrong-path flow fid among those refused, or n_wrong. */
static uint32_t wrong_index(const seen *s, uint64_t fid) {
  uint32_t i = 0;
  while (i < s->n_wrong && s->wrong_fid[i] != fid)
    i++;
  return i;
}

static void on_mem(void *vctx, const mem_event *e) {
  seen *s = vctx;
  if (e->level == 0 || e->prefetch) return;
  if (e->kind == MEV_MSHR_FULL) { /* a data request refused (at the L1D, L2, LLC or DRAM queue) */
    s->refusals++;
    if (e->wrong_path) {
      s->wrong_refusals++;
      if (wrong_index(s, e->fid) == s->n_wrong && s->n_wrong < 1024) s->wrong_fid[s->n_wrong++] = e->fid;
      return;
    }
    assert_true(e->fid < MAX_FLOWS);
    if (!s->refused[e->fid]) s->refused_flows++;
    s->refused[e->fid] = 1;
    assert_false(s->accepted[e->fid]); /* one line per load: refused only before it is accepted */
    return;
  }
  if (e->level != 1 || (e->kind != MEV_HIT && e->kind != MEV_MISS && e->kind != MEV_MERGE)) return;
  if (e->wrong_path) {
    uint32_t i = wrong_index(s, e->fid);
    if (i < s->n_wrong) s->wrong_acc[i] = 1;
    return;
  }
  assert_true(e->fid < MAX_FLOWS);
  if (s->accepted[e->fid]) return;
  s->accepted[e->fid] = 1;
  if (!s->refused[e->fid]) return;
  /* refused loads wait in age order and retry oldest first (FIFO) */
  if (s->last_refused_accept > e->fid + 1) s->order_errors++;
  s->last_refused_accept = e->fid + 1;
}

/* Same result, the memory system's counts included. */
static void assert_same_result(const ooo_model *a, const ooo_model *b) {
  tu_ooo_assert_same(a, b);
  for (int l = 0; l < 4; l++)
    assert_memory_equal(mem_stats(ooo_get_mem(a), l), mem_stats(ooo_get_mem(b), l), sizeof(mem_level_stats));
}

static void test_refused_loads_retry_in_order(void **state) {
  (void)state;
  uint64_t seed = tu_seed();
  char *path = retry_trace(seed, 1500);
  trace_t *t = tu_open_trace(path);
  uint64_t n = trace_get_info(t)->n_insns;
  const char *machines[] = {"golden_cove", "skylake"};
  for (size_t k = 0; k < WI_ARRAY_LEN(machines); k++) {
    ooo_config c;
    wi_err err;
    if (machine_load(machines[k], &c, &err)) fail_msg("%s", err.msg);
    c.mem.l1d.mshrs = 2; /* the L1D is full most of the time: most loads are refused first */
    ooo_model *plain = tu_ooo_new(t, &c), *obs = tu_ooo_new(t, &c), *half = tu_ooo_new(t, &c);
    seen *s = calloc(1, sizeof *s);
    ooo_observer o;
    memset(&o, 0, sizeof o);
    o.mem = on_mem;
    ooo_set_observer(obs, &o, s);
    tu_ooo_run(plain, UINT64_MAX); /* a refused load that is never sent again deadlocks the model */
    tu_ooo_run(obs, UINT64_MAX);
    assert_true(ooo_finished(plain) && ooo_finished(obs));
    assert_int_equal(ooo_get_stats(plain)->insns, n);
    assert_same_result(plain, obs);
    /* a checkpoint taken mid-run (loads wait refused most of the time) continues as the
     * original */
    tu_ooo_run(half, n / 2);
    assert_false(ooo_finished(half));
    ooo_model *cp = ooo_clone(half, &err);
    if (!cp) fail_msg("ooo_clone: %s", err.msg);
    tu_ooo_run(cp, UINT64_MAX);
    assert_same_result(plain, cp);
    const mem_sys *ms = ooo_get_mem(plain);
    uint64_t counted = mem_get_dram_stats(ms)->queue_full_events;
    for (int l = 1; l < 4; l++)
      counted += mem_stats(ms, l)->mshr_full_events;
    const ooo_stats *st = ooo_get_stats(plain);
    print_message(
        "%s, 2 L1D MSHRs: %llu cycles, %llu refusals (%llu of wrong-path loads) of %llu correct-path loads, "
        "%llu counted, %llu mispredictions\n",
        machines[k], (unsigned long long)ooo_cycles(plain), (unsigned long long)s->refusals,
        (unsigned long long)s->wrong_refusals, (unsigned long long)s->refused_flows,
        (unsigned long long)counted, (unsigned long long)st->mispredicts[BR_COND]);
    /* the mechanism is exercised: many loads wait, some retries are refused again, and
     * wrong-path loads are refused and squashed while they wait (never accepted) */
    uint32_t squashed_waiting = 0;
    for (uint32_t i = 0; i < s->n_wrong; i++)
      squashed_waiting += !s->wrong_acc[i];
    print_message("  %u wrong-path loads refused, %u of them squashed before a retry accepted them\n",
                  s->n_wrong, squashed_waiting);
    assert_true(s->refused_flows > n / 20);
    assert_true(s->refusals > s->refused_flows + s->wrong_refusals);
    if (k == 0) assert_true(squashed_waiting > 0); /* (skylake stops wrong-path fetch sooner) */
    assert_true(st->mispredicts[BR_COND] > 100);
    /* oldest first */
    assert_int_equal(s->order_errors, 0);
    /* a refused request counts once, at its first refusal (retries are not counted again) */
    assert_true(counted >= s->refused_flows);
    assert_true(counted <= s->refused_flows + s->wrong_refusals);
    assert_true(counted < s->refusals);
    free(s);
    ooo_free(plain);
    ooo_free(obs);
    ooo_free(half);
    ooo_free(cp);
  }
  trace_close(t);
  unlink(path);
  free(path);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_refused_loads_retry_in_order),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

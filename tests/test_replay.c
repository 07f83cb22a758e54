/* test_replay.c — interventions (parsing, errors, configuration edits), plans and their filter,
 * exact replays on synthetic traces (checkpoint identity), sweeps and the results store. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sqlite3.h>
#include <unistd.h>

#include "interv.h"
#include "replay.h"
#include "rp_store.h"
#include "tbuild.h"
#include "testutil.h"

/* ---- helpers ------------------------------------------------------------------------------------ */

static rp_interv parse1(const char *text) {
  rp_interv iv;
  wi_err err = {0};
  if (interv_parse_one(text, "test", &iv, &err)) fail_msg("parse '%s': %s", text, err.msg);
  return iv;
}

/* Parse must fail with a message containing `want`. */
static void parse_fails(const char *text, const char *want) {
  rp_interv *v = NULL;
  size_t n = 0;
  wi_err err = {0};
  wi_rc rc = interv_parse_list(text, "test", &v, &n, &err);
  if (rc == WI_OK) fail_msg("'%s' parsed but should fail (%s)", text, want);
  if (!strstr(err.msg, want)) fail_msg("'%s': message '%s' lacks '%s'", text, err.msg, want);
  assert_null(v);
}

/* ---- parsing ------------------------------------------------------------------------------------ */

static void test_parse_canonical(void **state) {
  (void)state;
  static const char *const cases[][2] = {
    {"latency{pc=0x401a2c, add=1}", "latency{pc=0x401a2c, add=1}"},
    {"latency { add = -2, pc = 4200000 }", "latency{pc=0x401640, add=-2}"},
    {"latency{class='fma', set=3}", "latency{class=\"fma\", set=3}"},
    {"remove{pc=\"main+0x1c\"}", "remove{pc=\"main+0x1c\"}"},
    {"remove{func='f', mode='nop'}", "remove{func=\"f\", mode=\"nop\"}"},
    {"remove{index={10, 20}}", "remove{index={10, 20}}"},
    {"remove{index=7}", "remove{index=7}"},
    {"remove{range={0x1000, 0x1010}}", "remove{range={0x1000, 0x1010}}"},
    {"perfect_branch{}", "perfect_branch{}"},
    {"perfect_branch{all=true}", "perfect_branch{}"},
    {"perfect_cache{level='l1d'}", "perfect_cache{level=\"l1d\"}"},
    {"perfect_cache{pc=0x10}", "perfect_cache{pc=0x10}"},
    {"ras{repair='full'}", "ras{repair=\"full\"}"},
    {"ras{repair='tos', depth=8}", "ras{depth=8, repair=\"tos\"}"},
    {"wrong_path{policy='off'}", "wrong_path{policy=\"off\"}"},
    {"wrong_path{cap=16}", "wrong_path{cap=16}"},
    {"port{name='P5', add=1}", "port{name=\"P5\", add=1}"},
    {"port{name='P5'}", "port{name=\"P5\", add=1}"},
    {"port{classes={'shuffle', 'load'}}", "port{classes={\"load\", \"shuffle\"}, add=1}"},
    {"resize{rob=256, lq=64}", "resize{lq=64, rob=256}"},
    {"predictor{type='gshare', gshare_bits=14}", "predictor{gshare_bits=14, type=\"gshare\"}"},
    {"config{core={rob=1024}}", "config{core={rob=1024}}"},
  };
  for (size_t i = 0; i < WI_ARRAY_LEN(cases); i++) {
    rp_interv iv = parse1(cases[i][0]);
    if (strcmp(iv.text, cases[i][1])) fail_msg("'%s' -> '%s', want '%s'", cases[i][0], iv.text, cases[i][1]);
    /* the canonical text parses back to itself */
    rp_interv again = parse1(iv.text);
    assert_string_equal(again.text, iv.text);
    rp_interv_free(&again);
    rp_interv_free(&iv);
  }
  /* a list */
  rp_interv *v;
  size_t n;
  wi_err err = {0};
  assert_int_equal(interv_parse_list("ras{repair='full'}, wrong_path{policy='off'}; remove{pc=1}", "t", &v, &n, &err),
                   WI_OK);
  assert_int_equal(n, 3);
  assert_int_equal(v[0].kind, RP_RAS);
  assert_int_equal(v[1].kind, RP_WRONG_PATH);
  assert_int_equal(v[2].kind, RP_REMOVE);
  assert_true(rp_interv_is_config(&v[0]));
  assert_false(rp_interv_is_config(&v[2]));
  interv_free_list(v, n);
}

static void test_parse_errors(void **state) {
  (void)state;
  parse_fails("foo{x=1}", "unknown intervention kind 'foo'");
  parse_fails("latency{pc=0x10, add=1, x=3}", "unknown field 'x' in latency{...}");
  parse_fails("latency{pc=0x10}", "exactly one of add");
  parse_fails("latency{pc=0x10, add=1, set=2}", "exactly one of add");
  parse_fails("latency{pc=0x10, func='f', add=1}", "not both");
  parse_fails("latency{class='nosuch', add=1}", "class must be an operation class");
  parse_fails("latency{pc=-1, add=1}", "pc must be an address");
  parse_fails("latency{pc=0x10, add=1.5}", "add must be an integer");
  parse_fails("remove{pc=0x10, mode='erase'}", "mode = \"erase\" is not one of: drop, nop");
  parse_fails("remove{index={20, 10}}", "is empty");
  parse_fails("ras{}", "give depth");
  parse_fails("ras{repair='half'}", "not one of: none, tos, full");
  parse_fails("ras{depth=0}", "out of range");
  parse_fails("wrong_path{policy='off', cap=3}", "cap applies only");
  parse_fails("wrong_path{}", "give policy");
  parse_fails("port{name='P5', classes={'alu'}}", "not both");
  parse_fails("port{name='Q5'}", "name must name one port");
  parse_fails("port{classes={'warp'}}", "unknown class 'warp'");
  parse_fails("resize{robs=3}", "unknown field 'robs' in resize{...}");
  parse_fails("resize{}", "at least one size");
  parse_fails("predictor{type='perceptron'}", "type");
  parse_fails("predictor{gshare_bits=3}", "give type");
  parse_fails("predictor{type='gshare', ras_depth=3}", "unknown field 'ras_depth'");
  parse_fails("config{core={robb=3}}", "robb");
  parse_fails("perfect_cache{level='l2'}", "not supported");
  parse_fails("latency{pc=0x10, add=1", "test:");          /* Lua syntax error names the source */
  parse_fails("latency{kind='x', pc=1, add=1}", "reserved");
  parse_fails("pc = 3", "expected interventions");
  parse_fails("'ras{}'", "is a string");
}

static void test_apply_config(void **state) {
  (void)state;
  ooo_config base, c;
  ooo_config_default(&base);
  wi_err err = {0};

  /* widen P5: a new port serving exactly what P5 serves */
  rp_interv iv = parse1("port{name='P5', add=1}");
  c = base;
  assert_int_equal(rp_apply_config(&iv, 1, &c, &err), WI_OK);
  assert_int_equal(c.ports.count, base.ports.count + 1);
  uint32_t nb = 1u << base.ports.count;
  for (int k = 0; k < IC_NUM; k++)
    for (uint32_t u = 0; u < base.uops[k].n; u++)
      assert_int_equal((c.uops[k].u[u].ports & nb) != 0, (base.uops[k].u[u].ports & (1u << 5)) != 0);
  assert_int_equal(c.ports.load & nb, 0);
  rp_interv_free(&iv);

  /* a port that does not exist */
  iv = parse1("port{name='P13'}");
  c = base;
  assert_int_not_equal(rp_apply_config(&iv, 1, &c, &err), WI_OK);
  assert_non_null(strstr(err.msg, "port P13 does not exist (ports: P0..P11)"));
  rp_interv_free(&iv);

  /* a new port for shuffles and loads */
  iv = parse1("port{classes={'shuffle', 'load'}, add=2}");
  c = base;
  assert_int_equal(rp_apply_config(&iv, 1, &c, &err), WI_OK);
  assert_int_equal(c.ports.count, base.ports.count + 2);
  assert_true(c.uops[IC_SHUFFLE].u[0].ports & nb);
  assert_true(c.uops[IC_SHUFFLE].u[0].ports & (nb << 1));
  assert_true(c.ports.load & nb);
  assert_false(c.uops[IC_ALU].u[0].ports & nb);
  rp_interv_free(&iv);

  /* classes without computation micro-ops */
  iv = parse1("port{classes={'nop'}}");
  c = base;
  assert_int_not_equal(rp_apply_config(&iv, 1, &c, &err), WI_OK);
  assert_non_null(strstr(err.msg, "no computation micro-op"));
  rp_interv_free(&iv);

  /* edits through the parameter tables */
  rp_interv *v;
  size_t n;
  assert_int_equal(interv_parse_list("ras{depth=8, repair='full'}, wrong_path{policy='cap', cap=5}, "
                                     "resize{rob=200, l1d_mshrs=4, decode_width=3}, predictor{type='bimodal'}, "
                                     "latency{class='fma', set=7}, perfect_branch{}, config{core={lq=50}}",
                                     "t", &v, &n, &err),
                   WI_OK);
  c = base;
  assert_int_equal(rp_apply_config(v, n, &c, &err), WI_OK);
  assert_int_equal(c.bp.ras_depth, 8);
  assert_int_equal(c.bp.ras_repair, RAS_REPAIR_FULL);
  assert_int_equal(c.fe.wrong_path, WP_CAP);
  assert_int_equal(c.fe.wrong_path_cap, 5);
  assert_int_equal(c.core.rob, 200);
  assert_int_equal(c.mem.l1d.mshrs, 4);
  assert_int_equal(c.fe.fetch_width, 3);
  assert_int_equal(c.bp.type, BP_BIMODAL);
  assert_int_equal(c.uops[IC_FMA].u[c.uops[IC_FMA].n - 1].latency, 7);
  assert_true(c.fe.perfect_branch);
  assert_int_equal(c.core.lq, 50);
  interv_free_list(v, n);

  /* an edit that breaks a cross-field check */
  iv = parse1("resize{rename_width=64, rob=32}");
  c = base;
  assert_int_not_equal(rp_apply_config(&iv, 1, &c, &err), WI_OK);
  assert_non_null(strstr(err.msg, "becomes invalid"));
  rp_interv_free(&iv);

  /* latency by class: negative result */
  iv = parse1("latency{class='alu', add=-5}");
  c = base;
  assert_int_not_equal(rp_apply_config(&iv, 1, &c, &err), WI_OK);
  rp_interv_free(&iv);
}

/* Random interventions: text -> parse -> canonical text -> parse gives the same text. */
static void test_parse_random_roundtrip(void **state) {
  (void)state;
  wi_rng r;
  rng_seed(&r, tu_seed());
  static const char *const kinds[] = {"remove", "latency", "perfect_branch", "perfect_cache"};
  static const char *const cls[] = {"alu", "fma", "load", "shuffle", "div"};
  for (int it = 0; it < 300; it++) {
    char buf[256];
    int k = (int)rng_below(&r, 4);
    int m = (int)rng_below(&r, 4);
    char match[128];
    uint64_t a = rng_below(&r, 1ull << 40), b = a + 1 + rng_below(&r, 1000);
    if (m == 0) snprintf(match, sizeof match, "pc=0x%llx", (unsigned long long)a);
    else if (m == 1) snprintf(match, sizeof match, "range={%llu, %llu}", (unsigned long long)a, (unsigned long long)b);
    else if (m == 2) snprintf(match, sizeof match, "func='fn%llu'", (unsigned long long)(a % 100));
    else snprintf(match, sizeof match, "index={%llu, %llu}", (unsigned long long)a, (unsigned long long)b);
    if (k == 1 && rng_below(&r, 3) == 0) snprintf(match, sizeof match, "class='%s'", cls[rng_below(&r, 5)]);
    if (k == 0)
      snprintf(buf, sizeof buf, "remove{%s%s}", match, rng_below(&r, 2) ? ", mode='nop'" : "");
    else if (k == 1)
      snprintf(buf, sizeof buf, "latency{%s, %s=%d}", match, rng_below(&r, 2) ? "add" : "set", (int)rng_below(&r, 50));
    else
      snprintf(buf, sizeof buf, "%s{%s}", kinds[k], match);
    rp_interv iv = parse1(buf);
    rp_interv again = parse1(iv.text);
    if (strcmp(iv.text, again.text)) fail_msg("'%s' -> '%s' -> '%s'", buf, iv.text, again.text);
    assert_int_equal(iv.kind, again.kind);
    assert_int_equal(iv.m.kind, again.m.kind);
    assert_int_equal(iv.m.lo, again.m.lo);
    assert_int_equal(iv.m.hi, again.m.hi);
    rp_interv_free(&again);
    rp_interv_free(&iv);
  }
}

/* ---- a synthetic three-phase program --------------------------------------------------------------- */

#define BASE 0x401000ULL
#define ITERS 1500

static const char *const prog_src =
  "start:\n"
  "  mov rcx, 1500\n"
  "p1:\n"                      /* phase 1: integer chain */
  "  add rax, 1\n"
  "  add rax, rbx\n"
  "  dec rcx\n"
  "  jnz p1\n"
  "p1end:\n"
  "  mov rcx, 1500\n"
  "f2:\n"                      /* phase 2: FMA chain + an off-chain add */
  "  vfmadd231ps ymm0, ymm1, ymm2\n"
  "  add rdx, 1\n"
  "  dec rcx\n"
  "  jnz f2\n"
  "f2end:\n"
  "  mov rcx, 1500\n"
  "p3:\n"                      /* phase 3: multiply chain */
  "  imul rsi, rsi\n"
  "  dec rcx\n"
  "  jnz p3\n"
  "p3end:\n"
  "  ret\n";

typedef struct synth {
  char *path;
  trace_t *t;
  uint64_t pc_add1, pc_fma, pc_fadd, pc_imul, pc_jnz3, f2, f2end;
} synth;

static void synth_open(synth *s) {
  wi_err err = {0};
  tbuild *tb = tb_new(prog_src, BASE, &err);
  if (!tb) fail_msg("%s", err.msg);
  tb_exec(tb, tb_label(tb, "start"), NULL, 0);
  tb_loop(tb, "p1", "p1end", ITERS, NULL, NULL);
  tb_exec(tb, tb_label(tb, "p1end"), NULL, 0);
  tb_loop(tb, "f2", "f2end", ITERS, NULL, NULL);
  tb_exec(tb, tb_label(tb, "f2end"), NULL, 0);
  tb_loop(tb, "p3", "p3end", ITERS, NULL, NULL);
  tb_exec(tb, tb_label(tb, "p3end"), NULL, 0);
  s->path = tu_tmp_path(".wtr");
  if (tb_write(tb, s->path, &err)) fail_msg("%s", err.msg);
  s->pc_add1 = tb_label(tb, "p1");
  s->f2 = s->pc_fma = tb_label(tb, "f2");
  s->pc_fadd = s->pc_fma + tb_len(tb, s->pc_fma);
  s->f2end = tb_label(tb, "f2end");
  s->pc_imul = tb_label(tb, "p3");
  s->pc_jnz3 = tb_label(tb, "p3end") - 2;
  assert_int_equal(tb_len(tb, s->pc_jnz3), 2);
  tb_free(tb);
  s->t = trace_open(s->path, &err);
  if (!s->t) fail_msg("%s", err.msg);
}

static void synth_close(synth *s) {
  trace_close(s->t);
  unlink(s->path);
  free(s->path);
}

static rp_base *synth_base(synth *s, uint64_t interval, uint32_t max_snaps) {
  ooo_config cfg;
  ooo_config_default(&cfg);
  rp_base_opts o = {0};
  o.interval = interval;
  o.max_snaps = max_snaps;
  wi_err err = {0};
  rp_base *b = rp_base_new(s->t, &cfg, &o, &err);
  if (!b) fail_msg("%s", err.msg);
  if (rp_base_run(b, &err)) fail_msg("%s", err.msg);
  return b;
}

static rp_plan *plan_text(const rp_base *b, const char *text) {
  rp_interv *v;
  size_t n;
  wi_err err = {0};
  if (interv_parse_list(text, "test", &v, &n, &err)) fail_msg("%s", err.msg);
  rp_plan *p = rp_plan_new(b, v, n, &err);
  interv_free_list(v, n);
  if (!p) fail_msg("plan '%s': %s", text, err.msg);
  return p;
}

static void plan_fails(const rp_base *b, const char *text, const char *want) {
  rp_interv *v;
  size_t n;
  wi_err err = {0};
  if (interv_parse_list(text, "test", &v, &n, &err)) fail_msg("%s", err.msg);
  rp_plan *p = rp_plan_new(b, v, n, &err);
  interv_free_list(v, n);
  if (p) fail_msg("plan '%s' compiled but should fail (%s)", text, want);
  if (!strstr(err.msg, want)) fail_msg("'%s': message '%s' lacks '%s'", text, err.msg, want);
}

static rp_result replay_text(const rp_base *b, const char *text, bool ckpt) {
  rp_plan *p = plan_text(b, text);
  rp_result r;
  wi_err err = {0};
  if (rp_replay(b, p, NULL, ckpt, &r, &err)) fail_msg("replay '%s': %s", text, err.msg);
  rp_plan_free(p);
  return r;
}

static void test_plan_filter(void **state) {
  (void)state;
  synth s;
  synth_open(&s);
  ooo_config cfg;
  ooo_config_default(&cfg);
  wi_err err = {0};
  rp_base *b = rp_base_new(s.t, &cfg, NULL, &err);
  if (!b) fail_msg("%s", err.msg);
  char text[200];
  snprintf(text, sizeof text, "latency{pc=0x%llx, add=3}, remove{func='f2', mode='nop'}, remove{index={5, 7}}",
           (unsigned long long)s.pc_fma);
  rp_plan *p = plan_text(b, text);
  assert_false(rp_plan_config_changed(p));
  trace_insn ti;
  memset(&ti, 0, sizeof ti);
  ooo_mod m;
  /* the FMA: latency + nop (it is in f2) */
  ti.pc = s.pc_fma;
  ti.sid = trace_sid_of(s.t, s.pc_fma);
  m = (ooo_mod){.lat_set = -1};
  rp_plan_filter(p, 100, &ti, NULL, false, &m);
  assert_int_equal(m.lat_add, 3);
  assert_true(m.nop);
  assert_false(m.drop);
  /* wrong path, same PC: static matches apply, sid derived from the pc */
  ti.sid = UINT32_MAX;
  m = (ooo_mod){.lat_set = -1};
  rp_plan_filter(p, UINT64_MAX, &ti, NULL, true, &m);
  assert_int_equal(m.lat_add, 3);
  assert_true(m.nop);
  /* an instruction of phase 1 at index 6: only the index range */
  ti.pc = s.pc_add1;
  ti.sid = trace_sid_of(s.t, s.pc_add1);
  m = (ooo_mod){.lat_set = -1};
  rp_plan_filter(p, 6, &ti, NULL, false, &m);
  assert_true(m.drop);
  assert_int_equal(m.lat_add, 0);
  m = (ooo_mod){.lat_set = -1};
  rp_plan_filter(p, 7, &ti, NULL, false, &m);
  assert_false(m.drop);
  /* a wrong-path PC outside the static table inside f2 (an address never executed): the
   * function's range matches it */
  ti.pc = s.f2end - 1;
  ti.sid = UINT32_MAX;
  if (trace_sid_of(s.t, ti.pc) == UINT32_MAX) {
    m = (ooo_mod){.lat_set = -1};
    rp_plan_filter(p, UINT64_MAX, &ti, NULL, true, &m);
    assert_true(m.nop);
  }
  rp_plan_free(p);

  /* errors that need the trace */
  plan_fails(b, "remove{pc=0x12345}", "pc 0x12345 never executed");
  plan_fails(b, "remove{func='nosuch'}", "function 'nosuch' not found");
  plan_fails(b, "remove{pc='nosuch+4'}", "symbol 'nosuch' not found");
  plan_fails(b, "remove{range={0x10, 0x20}}", "no instruction in 0x10..0x20 ever executed");
  plan_fails(b, "remove{index={0, 100000000}}", "beyond the trace's");
  plan_fails(b, "latency{add=1}", "say which instructions");
  plan_fails(b, "port{name='P20'}", "port P20 does not exist");
  /* pc as symbol + offset */
  snprintf(text, sizeof text, "remove{pc='f2+0x%llx'}", (unsigned long long)(s.pc_fadd - s.f2));
  p = plan_text(b, text);
  ti.pc = s.pc_fadd;
  ti.sid = trace_sid_of(s.t, s.pc_fadd);
  m = (ooo_mod){.lat_set = -1};
  rp_plan_filter(p, 10, &ti, NULL, false, &m);
  assert_true(m.drop);
  rp_plan_free(p);
  rp_base_free(b);
  synth_close(&s);
}

static void test_replay_effects(void **state) {
  (void)state;
  synth s;
  synth_open(&s);
  rp_base *b = synth_base(&s, 0, 0);
  rp_result base;
  rp_result_from_model(rp_base_model(b), &base);
  char text[200];
  /* drop the FMA of the chain: about its latency per iteration faster (less the loop's own
   * floor of about one cycle per iteration: one taken branch per fetch cycle) */
  snprintf(text, sizeof text, "remove{pc=0x%llx}", (unsigned long long)s.pc_fma);
  rp_result r = replay_text(b, text, false);
  ooo_config cfg;
  ooo_config_default(&cfg);
  double lat = cfg.uops[IC_FMA].u[cfg.uops[IC_FMA].n - 1].latency;
  double saved = (double)base.cycles - (double)r.cycles;
  print_message("fma chain: baseline %llu cycles, without the FMA %llu (%.2f cycles/iteration saved, latency %.0f)\n",
                (unsigned long long)base.cycles, (unsigned long long)r.cycles, saved / ITERS, lat);
  assert_true(saved / ITERS > lat - 1.6 && saved / ITERS < lat + 0.3);
  assert_int_equal(r.insns, base.insns - ITERS);
  /* nop keeps the instruction count */
  snprintf(text, sizeof text, "remove{pc=0x%llx, mode='nop'}", (unsigned long long)s.pc_fma);
  r = replay_text(b, text, false);
  assert_int_equal(r.insns, base.insns);
  assert_true(r.cycles < base.cycles - ITERS);
  /* the off-chain add changes little */
  snprintf(text, sizeof text, "remove{pc=0x%llx}", (unsigned long long)s.pc_fadd);
  r = replay_text(b, text, false);
  assert_true(llabs((long long)r.cycles - (long long)base.cycles) < (long long)base.cycles / 50);
  /* FMA latency + 2: the chain slows by 2 cycles per iteration */
  snprintf(text, sizeof text, "latency{pc=0x%llx, add=2}", (unsigned long long)s.pc_fma);
  r = replay_text(b, text, false);
  double added = ((double)r.cycles - (double)base.cycles) / ITERS;
  assert_true(added > 1.7 && added < 2.3);
  /* the same by class (a configuration edit) */
  rp_result rc = replay_text(b, "latency{class='fma', add=2}", true);
  assert_int_equal(rc.cycles, r.cycles);
  assert_int_equal(rc.start_snap, -1);
  rp_base_free(b);
  synth_close(&s);
}

/* Checkpoint-skipped replays equal full replays, for interventions whose first occurrence is
 * early, in the middle and late; and the late ones really start from a snapshot. */
static void test_checkpoint_identity(void **state) {
  (void)state;
  synth s;
  synth_open(&s);
  rp_base *b = synth_base(&s, 1000, 64);
  assert_true(rp_base_n_snaps(b) >= 8);
  rp_result base;
  rp_result_from_model(rp_base_model(b), &base);
  char texts[8][200];
  int nt = 0;
  snprintf(texts[nt++], 200, "latency{pc=0x%llx, add=2}", (unsigned long long)s.pc_add1);      /* early */
  snprintf(texts[nt++], 200, "remove{pc=0x%llx}", (unsigned long long)s.pc_fma);               /* middle */
  snprintf(texts[nt++], 200, "latency{func='f2', add=1}");                                      /* middle */
  snprintf(texts[nt++], 200, "remove{pc=0x%llx, mode='nop'}", (unsigned long long)s.pc_imul);  /* late */
  snprintf(texts[nt++], 200, "perfect_branch{pc=0x%llx}", (unsigned long long)s.pc_jnz3);      /* late */
  snprintf(texts[nt++], 200, "remove{index={%d, %d}}", 3 * ITERS * 4 / 2 + 50, 3 * ITERS * 4 / 2 + 90);
  snprintf(texts[nt++], 200, "latency{index={%d, %d}, set=30}", 4 * ITERS * 2 + 100, 4 * ITERS * 2 + 120);
  int late = 0;
  for (int i = 0; i < nt; i++) {
    rp_result a = replay_text(b, texts[i], true), f = replay_text(b, texts[i], false);
    print_message("%-40s cycles %llu (baseline %llu), from instruction %llu\n", texts[i], (unsigned long long)a.cycles,
                  (unsigned long long)base.cycles, (unsigned long long)a.start_insn);
    if (a.cycles != f.cycles) fail_msg("%s: checkpointed %llu != full %llu", texts[i], (unsigned long long)a.cycles,
                                       (unsigned long long)f.cycles);
    assert_int_equal(a.insns, f.insns);
    assert_memory_equal(a.stats.slots, f.stats.slots, sizeof a.stats.slots);
    assert_int_equal(f.start_snap, -1);
    assert_int_not_equal(a.cycles, base.cycles); /* every one of them has an effect */
    if (a.start_snap > 0 && a.start_insn > base.insns / 2) late++;
  }
  assert_true(late >= 3);
  rp_base_free(b);
  synth_close(&s);
}

/* ---- sweeps and the store ------------------------------------------------------------------------ */

typedef struct collect {
  VEC(rp_result) r;
} collect;

static wi_rc collect_fn(void *ctx, size_t i, const rp_result *r, wi_err *err) {
  (void)err;
  collect *c = ctx;
  assert_int_equal(i, c->r.n);
  VEC_PUSH(c->r, *r);
  return WI_OK;
}

static void test_sweep_threads(void **state) {
  (void)state;
  synth s;
  synth_open(&s);
  rp_base *b = synth_base(&s, 2000, 0);
  const trace_info *ti = trace_get_info(s.t);
  size_t n = ti->n_static;
  rp_plan **plans = calloc(n, sizeof *plans);
  for (uint32_t i = 0; i < n; i++) {
    char text[100];
    snprintf(text, sizeof text, "latency{pc=0x%llx, add=1}", (unsigned long long)trace_static_at(s.t, i)->pc);
    plans[i] = plan_text(b, text);
  }
  collect one = {{0}}, two = {{0}}, full = {{0}};
  wi_err err = {0};
  rp_sweep_opts o1 = {1, false, NULL}, o2 = {2, false, NULL}, of = {2, true, NULL};
  assert_int_equal(rp_sweep(b, plans, n, &o1, collect_fn, &one, &err), WI_OK);
  assert_int_equal(rp_sweep(b, plans, n, &o2, collect_fn, &two, &err), WI_OK);
  assert_int_equal(rp_sweep(b, plans, n, &of, collect_fn, &full, &err), WI_OK);
  assert_int_equal(one.r.n, n);
  assert_int_equal(two.r.n, n);
  for (size_t i = 0; i < n; i++) {
    assert_int_equal(one.r.a[i].cycles, two.r.a[i].cycles);
    assert_int_equal(one.r.a[i].cycles, full.r.a[i].cycles);
    assert_int_equal(one.r.a[i].start_insn, two.r.a[i].start_insn);
  }
  /* many more jobs than a scheduling chunk (longest first within chunks), 3 threads: still
   * delivered in job order with the 1-thread results */
  size_t many = 150;
  rp_plan **rep = calloc(many, sizeof *rep);
  for (size_t i = 0; i < many; i++) rep[i] = plans[(i * 7) % n];
  collect three = {{0}};
  rp_sweep_opts o3 = {3, false, NULL};
  assert_int_equal(rp_sweep(b, rep, many, &o3, collect_fn, &three, &err), WI_OK);
  assert_int_equal(three.r.n, many);
  for (size_t i = 0; i < many; i++) assert_int_equal(three.r.a[i].cycles, one.r.a[(i * 7) % n].cycles);
  free(rep);
  VEC_FREE(three.r);
  VEC_FREE(one.r);
  VEC_FREE(two.r);
  VEC_FREE(full.r);
  for (size_t i = 0; i < n; i++) rp_plan_free(plans[i]);
  free(plans);
  rp_base_free(b);
  synth_close(&s);
}

/* Everything a replay reports except its wall time, compared exactly. */
static void same_result(const rp_result *a, const rp_result *b, const char *what) {
  if (a->cycles != b->cycles || a->insns != b->insns)
    fail_msg("%s: cycles %llu vs %llu, insns %llu vs %llu", what, (unsigned long long)a->cycles,
             (unsigned long long)b->cycles, (unsigned long long)a->insns, (unsigned long long)b->insns);
  assert_int_equal(a->start_insn, b->start_insn);
  assert_int_equal(a->start_snap, b->start_snap);
  assert_int_equal(a->mispredicts, b->mispredicts);
  assert_int_equal(a->wp_fetched, b->wp_fetched);
  assert_int_equal(a->wp_executed, b->wp_executed);
  assert_memory_equal(&a->td, &b->td, sizeof a->td);   /* doubles from the same counts: bitwise */
  assert_memory_equal(&a->stats, &b->stats, sizeof a->stats);
  assert_true(a->ipc == b->ipc && a->mpki == b->mpki);
}

static rp_base *opts_base(synth *s, const rp_base_opts *o) {
  ooo_config cfg;
  ooo_config_default(&cfg);
  wi_err err = {0};
  rp_base *b = rp_base_new(s->t, &cfg, o, &err);
  if (!b) fail_msg("%s", err.msg);
  if (rp_base_run(b, &err)) fail_msg("%s", err.msg);
  return b;
}

/* Whether a copy of the baseline's final model keeps the bindings observers read. */
static bool base_binds(const rp_base *b) {
  wi_err err = {0};
  ooo_model *m = ooo_clone(rp_base_model(b), &err);
  if (!m) fail_msg("ooo_clone: %s", err.msg);
  ooo_observer obs;
  memset(&obs, 0, sizeof obs);
  bool ok = ooo_attach_observer(m, &obs, NULL, &err) == WI_OK;
  ooo_free(m);
  return ok;
}

/* A baseline and its replays without bindings (the default when nothing can attach an observer)
 * give exactly the results of one that keeps them: per-PC and edited-configuration replays, from
 * snapshots and from the start, with and without per-sid statistics; and the default really
 * drops them (else the saving is gone), while stats_interval keeps them for its observer. */
static void test_sweep_no_bindings(void **state) {
  (void)state;
  synth s;
  synth_open(&s);
  const trace_info *ti = trace_get_info(s.t);
  static const char *const cfgs[] = {"port{name='P5'}", "resize{rob=64}", "wrong_path{policy='off'}",
                                     "ras{repair='full'}", "perfect_cache{level='l1d'}", "perfect_branch{}"};
  size_t nc = sizeof cfgs / sizeof cfgs[0], n = 2 * ti->n_static + nc;
  for (int sid_stats = 0; sid_stats < 2; sid_stats++) {
    rp_base_opts ok = {0}, od = {0}, os = {0};
    ok.interval = od.interval = os.interval = 2000;
    ok.ooo_flags = od.ooo_flags = os.ooo_flags = sid_stats ? OOO_SID_STATS : 0;
    ok.keep_bindings = true;
    os.stats_interval = 1500;
    rp_base *bk = opts_base(&s, &ok), *bd = opts_base(&s, &od), *bs = opts_base(&s, &os);
    assert_true(base_binds(bk));
    assert_false(base_binds(bd));
    assert_true(base_binds(bs));
    size_t nivl = 0;
    assert_non_null(rp_base_intervals(bs, &nivl));
    assert_true(nivl > 1);
    rp_result rk, rd, rs;
    rp_result_from_model(rp_base_model(bk), &rk);
    rp_result_from_model(rp_base_model(bd), &rd);
    rp_result_from_model(rp_base_model(bs), &rs);
    same_result(&rk, &rd, "baseline");
    same_result(&rk, &rs, "baseline (stats_interval)");
    if (sid_stats) {
      const ooo_sid_stats *sk = ooo_get_sid_stats(rp_base_model(bk)), *sd = ooo_get_sid_stats(rp_base_model(bd));
      assert_non_null(sk);
      assert_non_null(sd);
      assert_memory_equal(sk, sd, ti->n_static * sizeof *sk);
    }
    for (int full = 0; full < 2; full++) {
      rp_base *bases[3] = {bk, bd, bs};
      collect got[3] = {{{0}}, {{0}}, {{0}}};
      for (int k = 0; k < 3; k++) {
        rp_plan **plans = calloc(n, sizeof *plans);
        for (uint32_t i = 0; i < ti->n_static; i++) {
          char text[100];
          unsigned long long pc = (unsigned long long)trace_static_at(s.t, i)->pc;
          snprintf(text, sizeof text, "latency{pc=0x%llx, add=1}", pc);
          plans[2 * i] = plan_text(bases[k], text);
          snprintf(text, sizeof text, "remove{pc=0x%llx}", pc);
          plans[2 * i + 1] = plan_text(bases[k], text);
        }
        for (size_t i = 0; i < nc; i++) plans[2 * ti->n_static + i] = plan_text(bases[k], cfgs[i]);
        wi_err err = {0};
        rp_sweep_opts o = {2, full != 0, NULL};
        assert_int_equal(rp_sweep(bases[k], plans, n, &o, collect_fn, &got[k], &err), WI_OK);
        assert_int_equal(got[k].r.n, n);
        for (size_t i = 0; i < n; i++) rp_plan_free(plans[i]);
        free(plans);
      }
      int late = 0;
      for (size_t i = 0; i < n; i++) {
        same_result(&got[0].r.a[i], &got[1].r.a[i], "replay without bindings");
        same_result(&got[0].r.a[i], &got[2].r.a[i], "replay (stats_interval)");
        late += got[0].r.a[i].start_snap > 0;
      }
      if (!full) assert_true(late > 0); /* some replays did start from snapshots */
      for (int k = 0; k < 3; k++) VEC_FREE(got[k].r);
    }
    rp_base_free(bk);
    rp_base_free(bd);
    rp_base_free(bs);
  }
  /* OOO_NO_BINDINGS asked for together with an observer: an error, not an abort */
  ooo_config cfg;
  ooo_config_default(&cfg);
  wi_err err = {0};
  rp_base_opts bad = {0};
  bad.ooo_flags = OOO_NO_BINDINGS;
  bad.stats_interval = 1000;
  assert_null(rp_base_new(s.t, &cfg, &bad, &err));
  assert_int_equal(err.rc, WI_EINVAL);
  assert_non_null(strstr(err.msg, "stats_interval"));
  synth_close(&s);
}

/* The rows of a results database in index order, as text. */
static char *dump_rows(const char *path) {
  return tu_sql_file_rows(path, "SELECT r.trace_hash, r.config_hash, x.idx, x.interv, x.cycles, x.insns, x.delta_cycles,"
                                " x.start_insn FROM replay x JOIN run r ON x.run_id = r.id ORDER BY x.idx");
}

static void put_rows(rp_store *s, int64_t run, int from, int to, int step) {
  wi_err err = {0};
  for (int i = from; i < to; i += step) {
    char text[64];
    snprintf(text, sizeof text, "remove{index=%d}", i);
    rp_row row = {0};
    row.idx = i;
    row.interv = text;
    row.cycles = 1000u + (uint64_t)i;
    row.insns = 900;
    row.delta_cycles = i;
    if (rp_store_put(s, run, &row, &err)) fail_msg("%s", err.msg);
  }
}

static void test_store(void **state) {
  (void)state;
  char *full = tu_tmp_path(".db"), *a = tu_tmp_path(".db"), *b = tu_tmp_path(".db"), *m = tu_tmp_path(".db");
  wi_err err = {0};
  rp_run_info ri = {0x1234, 0x5678, "0.1", "test", "x.wtr", "golden_cove", 1000, 900, 0.9};
  int64_t run;
  /* the unsharded store */
  rp_store *s = rp_store_open(full, &err);
  assert_non_null(s);
  assert_int_equal(rp_store_run(s, &ri, &run, &err), WI_OK);
  put_rows(s, run, 0, 100, 1);
  assert_true(rp_store_has(s, run, "remove{index=5}"));
  assert_false(rp_store_has(s, run, "remove{index=500}"));
  assert_int_equal(rp_store_count(s, run), 100);
  assert_int_equal(rp_store_close(s, &err), WI_OK);
  /* two shards, the second written in two sessions (a resume) */
  s = rp_store_open(a, &err);
  assert_int_equal(rp_store_run(s, &ri, &run, &err), WI_OK);
  put_rows(s, run, 0, 100, 2);
  rp_store_close(s, &err);
  s = rp_store_open(b, &err);
  assert_int_equal(rp_store_run(s, &ri, &run, &err), WI_OK);
  put_rows(s, run, 1, 51, 2);
  rp_store_close(s, &err);
  s = rp_store_open(b, &err);
  int64_t run2;
  assert_int_equal(rp_store_run(s, &ri, &run2, &err), WI_OK);
  assert_int_equal(run2, run);
  assert_int_equal(rp_store_count(s, run), 25);
  put_rows(s, run, 51, 100, 2);
  rp_store_close(s, &err);
  /* a different baseline for the same trace and machine is refused */
  s = rp_store_open(b, &err);
  rp_run_info other = ri;
  other.base_cycles++;
  assert_int_equal(rp_store_run(s, &other, &run2, &err), WI_ESTATE);
  rp_store_close(s, &err);
  /* merge */
  s = rp_store_open(m, &err);
  int64_t added;
  assert_int_equal(rp_store_merge(s, a, &added, &err), WI_OK);
  assert_int_equal(added, 50);
  assert_int_equal(rp_store_merge(s, b, &added, &err), WI_OK);
  assert_int_equal(added, 50);
  assert_int_equal(rp_store_merge(s, b, &added, &err), WI_OK); /* idempotent */
  assert_int_equal(added, 0);
  rp_store_close(s, &err);
  char *x = dump_rows(full), *y = dump_rows(m);
  assert_string_equal(x, y);
  free(x);
  free(y);
  /* not a results database */
  FILE *f = fopen(a, "w");
  fputs("garbage", f);
  fclose(f);
  assert_null(rp_store_open(a, &err));
  const char *dbs[] = {full, a, b, m};
  for (int i = 0; i < 4; i++) {
    char *w = xasprintf("%s-wal", dbs[i]), *sh = xasprintf("%s-shm", dbs[i]);
    unlink(dbs[i]);
    unlink(w);
    unlink(sh);
    free(w);
    free(sh);
  }
  free(full);
  free(a);
  free(b);
  free(m);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_parse_canonical),
    cmocka_unit_test(test_parse_errors),
    cmocka_unit_test(test_apply_config),
    cmocka_unit_test(test_parse_random_roundtrip),
    cmocka_unit_test(test_plan_filter),
    cmocka_unit_test(test_replay_effects),
    cmocka_unit_test(test_checkpoint_identity),
    cmocka_unit_test(test_sweep_threads),
    cmocka_unit_test(test_sweep_no_bindings),
    cmocka_unit_test(test_store),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

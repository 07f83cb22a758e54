/* test_config.c — machine configurations: bundled files load and validate, errors name the
 * key and the file, dumps load back to the same machine, `base` chains, documentation. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "machine.h"
#include "ooo.h"
#include "testutil.h"

static char *write_lua(const char *text) {
  char *path = tu_tmp_path(".lua");
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fputs(text, f);
  fclose(f);
  return path;
}

/* Load text as a configuration file; returns the rc and leaves the message in err. */
static wi_rc load_text(const char *text, ooo_config *cfg, wi_err *err, char **path_out) {
  char *path = write_lua(text);
  wi_rc rc = machine_load(path, cfg, err);
  if (path_out) *path_out = path;
  else {
    unlink(path);
    free(path);
  }
  return rc;
}

static void test_bundled_machines(void **state) {
  (void)state;
  wi_err err = {0};
  ooo_config gc, def, sk, st;
  ooo_config_default(&def);
  if (machine_load("golden_cove", &gc, &err)) fail_msg("%s", err.msg);
  /* the file documents the built-in defaults value by value */
  assert_int_equal(ooo_config_hash(&gc), ooo_config_hash(&def));
  assert_int_equal(gc.core.rob, 512);
  assert_int_equal(gc.core.rename_width, 6);
  assert_int_equal(gc.core.commit_width, 8);
  assert_int_equal(gc.core.lq, 192);
  assert_int_equal(gc.core.sq, 114);
  assert_int_equal(gc.ports.count, 12);
  uint32_t m;
  assert_true(ooo_ports_parse("P0 P1 P5 P6 P10", &m));
  assert_int_equal(gc.uops[IC_ALU].u[0].ports, m);
  assert_true(ooo_ports_parse("P0 P1", &m));
  assert_int_equal(gc.uops[IC_FMA].u[0].ports, m);
  assert_true(ooo_ports_parse("P2 P3 P11", &m));
  assert_int_equal(gc.ports.load, m);
  assert_true(ooo_ports_parse("P7 P8", &m));
  assert_int_equal(gc.ports.sta, m);
  assert_true(ooo_ports_parse("P4 P9", &m));
  assert_int_equal(gc.ports.std, m);
  assert_true(ooo_ports_parse("P0 P6", &m));
  assert_int_equal(gc.uops[IC_BRANCH].u[0].ports, m);
  /* NULL means the default machine */
  ooo_config dflt;
  if (machine_load(NULL, &dflt, &err)) fail_msg("%s", err.msg);
  assert_int_equal(ooo_config_hash(&dflt), ooo_config_hash(&gc));

  if (machine_load("skylake", &sk, &err)) fail_msg("%s", err.msg);
  assert_string_equal(sk.name, "skylake");
  assert_int_equal(sk.core.rob, 224);
  assert_int_equal(sk.core.rename_width, 4);
  assert_int_equal(sk.ports.count, 8);
  assert_true(sk.core.unified_sched);
  assert_true(ooo_config_hash(&sk) != ooo_config_hash(&gc));

  if (machine_load("stress", &st, &err)) fail_msg("%s", err.msg);
  assert_int_equal(st.core.rob, 8);
  assert_int_equal(st.bp.ras_depth, 4);
  assert_int_equal(st.mem.l1d.size, 1024);
  assert_int_equal(ooo_config_check(&st, &err), WI_OK);

  assert_int_not_equal(machine_load("no_such_machine", &st, &err), WI_OK);
  assert_non_null(strstr(err.msg, "no_such_machine"));
}

static void test_errors_name_key_and_file(void **state) {
  (void)state;
  ooo_config c;
  wi_err err = {0};
  char *path;
  struct {
    const char *text, *want1, *want2;
  } cases[] = {
    {"return { core = { robb = 5 } }", "unknown key core.robb", NULL},
    {"return { core = { rob = \"big\" } }", "core.rob", "integer"},
    {"return { core = { rob = 3 } }", "core.rob", "out of range"},
    {"return { core = { rob = 300.5 } }", "core.rob", "integer"},
    {"return { frontend = { wrong_path = \"sometimes\" } }", "frontend.wrong_path", "normal"},
    {"return { bpred = { ras_repair = 1 } }", "bpred.ras_repair", "string"},
    {"return { uops = { alu = { {ports = \"P40\", latency = 1} } } }", "uops", "ports"},
    {"return { uops = { alux = { {ports = \"P0\", latency = 1} } } }", "uops", "alux"},
    {"return { uops = { fma = { {ports = \"P0\"} } } }", "uops", "latency"},
    {"return { uops = { fma = { {ports = \"P0\", latency = 4, occupancy = 0} } } }", "uops", "occupancy"},
    {"return { ports = { count = 4 } }", "ports.count", NULL},
    {"return { ports = { load = \"X2\" } }", "ports.load", "port"},
    {"return { mem = { l1d = { latency = 0 } } }", "mem.l1d.latency", "out of range"},
    {"return { mem = { l1d = { size = 1000 } } }", "mem.l1d", NULL},
    {"return { core = 5 }", "core", "table"},
    {"return 42", "table", NULL},
    {"return { base = \"nonexistent_base\" }", "nonexistent_base", NULL},
  };
  for (size_t i = 0; i < WI_ARRAY_LEN(cases); i++) {
    wi_err_clear(&err);
    wi_rc rc = load_text(cases[i].text, &c, &err, &path);
    if (rc == WI_OK) fail_msg("case %zu (%s) loaded without error", i, cases[i].text);
    print_message("  %s\n", err.msg);
    if (!strstr(err.msg, cases[i].want1)) fail_msg("case %zu: '%s' lacks '%s'", i, err.msg, cases[i].want1);
    if (cases[i].want2 && !strstr(err.msg, cases[i].want2))
      fail_msg("case %zu: '%s' lacks '%s'", i, err.msg, cases[i].want2);
    /* every message names the file, except those about the base it could not find */
    if (!strstr(cases[i].text, "nonexistent_base") && !strstr(err.msg, path))
      fail_msg("case %zu: '%s' does not name the file %s", i, err.msg, path);
    unlink(path);
    free(path);
  }
}

static void test_dump_roundtrip(void **state) {
  (void)state;
  const char *names[] = {"golden_cove", "skylake", "stress"};
  for (size_t i = 0; i < WI_ARRAY_LEN(names); i++) {
    wi_err err = {0};
    ooo_config a, b;
    if (machine_load(names[i], &a, &err)) fail_msg("%s", err.msg);
    char *path = tu_tmp_path(".lua");
    FILE *f = fopen(path, "w");
    ooo_config_dump_lua(&a, f);
    fclose(f);
    if (machine_load(path, &b, &err)) fail_msg("reloading the dump of %s: %s", names[i], err.msg);
    assert_string_equal(a.name, b.name);
    assert_int_equal(ooo_config_hash(&a), ooo_config_hash(&b));
    assert_memory_equal(&a.uops, &b.uops, sizeof a.uops);
    assert_memory_equal(&a.core, &b.core, sizeof a.core);
    assert_memory_equal(&a.mem, &b.mem, sizeof a.mem);
    unlink(path);
    free(path);
  }
}

static void test_base_and_overrides(void **state) {
  (void)state;
  wi_err err = {0};
  ooo_config c, sk;
  char *path;
  if (load_text("return { base = \"skylake\", name = \"sk256\", core = { rob = 256 },\n"
                "  uops = { fma = { {ports = \"P0 P1 P5\", latency = 3} } } }",
                &c, &err, &path))
    fail_msg("%s", err.msg);
  if (machine_load("skylake", &sk, &err)) fail_msg("%s", err.msg);
  assert_string_equal(c.name, "sk256");
  assert_int_equal(c.core.rob, 256);
  assert_int_equal(c.core.rename_width, sk.core.rename_width);
  assert_int_equal(c.uops[IC_FMA].u[0].latency, 3);
  assert_int_equal(c.uops[IC_FMA].n, 1);
  assert_memory_equal(&c.uops[IC_ALU], &sk.uops[IC_ALU], sizeof c.uops[IC_ALU]);
  /* a base given as a path relative to the including file */
  char *dir = xstrdup(path), *slash = strrchr(dir, '/');
  *slash = 0;
  char *child = xasprintf("%s/child_cfg_%d.lua", dir, (int)getpid());
  FILE *f = fopen(child, "w");
  fprintf(f, "return { base = \"%s\", core = { lq = 100 } }", strrchr(path, '/') + 1);
  fclose(f);
  ooo_config d;
  if (machine_load(child, &d, &err)) fail_msg("%s", err.msg);
  assert_int_equal(d.core.lq, 100);
  assert_int_equal(d.core.rob, 256);
  unlink(child);
  free(child);
  free(dir);
  unlink(path);
  free(path);
  /* overrides as an expression */
  if (machine_apply_expr(&c, "{ bpred = { ras_repair = \"full\", ras_depth = 32 }, frontend = { wrong_path = \"cap\" } }",
                         &err))
    fail_msg("%s", err.msg);
  assert_int_equal(c.bp.ras_repair, RAS_REPAIR_FULL);
  assert_int_equal(c.bp.ras_depth, 32);
  assert_int_equal(c.fe.wrong_path, WP_CAP);
  assert_int_not_equal(machine_apply_expr(&c, "{ core = { nope = 1 } }", &err), WI_OK);
  assert_non_null(strstr(err.msg, "core.nope"));
}

static void test_doc(void **state) {
  (void)state;
  char *buf = NULL;
  size_t n = 0;
  FILE *f = open_memstream(&buf, &n);
  ooo_config_doc(f);
  fclose(f);
  /* every parameter with its unit and range */
  const char *want[] = {"core.rob", "slots", "core.rename_width", "frontend.mispredict_penalty", "cycles",
                        "bpred.ras_repair", "none|tos|full", "frontend.wrong_path", "normal|off|cap|confidence",
                        "ports.load", "uops", "mem.l1d.latency", "mem.dram.t_cas", "core.lq", "entries"};
  for (size_t i = 0; i < WI_ARRAY_LEN(want); i++)
    if (!strstr(buf, want[i])) fail_msg("documentation lacks '%s'", want[i]);
  free(buf);
}

static void test_port_strings(void **state) {
  (void)state;
  uint32_t m;
  assert_true(ooo_ports_parse("P0 P1 P5 P6 P10", &m));
  assert_int_equal(m, (1u << 0) | (1u << 1) | (1u << 5) | (1u << 6) | (1u << 10));
  assert_true(ooo_ports_parse("P11,P2", &m));
  assert_int_equal(m, (1u << 11) | (1u << 2));
  assert_false(ooo_ports_parse("P", &m));
  assert_false(ooo_ports_parse("P32", &m));
  assert_false(ooo_ports_parse("Q1", &m));
  assert_false(ooo_ports_parse("P1x", &m));
  char buf[64];
  assert_string_equal(ooo_ports_format((1u << 2) | (1u << 3) | (1u << 11), buf, sizeof buf), "P2 P3 P11");
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_bundled_machines),
    cmocka_unit_test(test_errors_name_key_and_file),
    cmocka_unit_test(test_dump_roundtrip),
    cmocka_unit_test(test_base_and_overrides),
    cmocka_unit_test(test_doc),
    cmocka_unit_test(test_port_strings),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

/* test_lua.c — the `whatif` Lua module and `whatif script`: the API on a synthetic trace, error
 * reporting (file:line, exit 1), on_insn hooks, sweeps, statistics, and loading whatif.so into
 * the system lua5.4. */
#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lua_whatif.h"
#include "tbuild.h"
#include "testutil.h"

#define BASE 0x401000ULL

/* A two-phase program: an integer chain, then an FMA chain in function `f2`. */
static const char *const prog_src =
  "start:\n"
  "  mov rcx, 1000\n"
  "p1:\n"
  "  add rax, 1\n"
  "  add rax, rbx\n"
  "  dec rcx\n"
  "  jnz p1\n"
  "p1end:\n"
  "  mov rcx, 1000\n"
  "f2:\n"
  "  vfmadd231ps ymm0, ymm1, ymm2\n"
  "  add rdx, 1\n"
  "  dec rcx\n"
  "  jnz f2\n"
  "f2end:\n"
  "  ret\n";

static char *g_trace;

static int setup(void **state) {
  (void)state;
  wi_err err = {0};
  tbuild *tb = tb_new(prog_src, BASE, &err);
  if (!tb) {
    fprintf(stderr, "tb_new: %s\n", err.msg);
    return -1;
  }
  tb_exec(tb, tb_label(tb, "start"), NULL, 0);
  tb_loop(tb, "p1", "p1end", 1000, NULL, NULL);
  tb_exec(tb, tb_label(tb, "p1end"), NULL, 0);
  tb_loop(tb, "f2", "f2end", 1000, NULL, NULL);
  tb_exec(tb, tb_label(tb, "f2end"), NULL, 0);
  g_trace = tu_tmp_path(".wtr");
  wi_rc rc = tb_write(tb, g_trace, &err);
  tb_free(tb);
  if (rc) fprintf(stderr, "tb_write: %s\n", err.msg);
  return rc ? -1 : 0;
}

static int teardown(void **state) {
  (void)state;
  unlink(g_trace);
  free(g_trace);
  return 0;
}

/* Run Lua code in a fresh state with the module preloaded and TRACE set; fail with its error. */
static void run_lua(const char *code) {
  lua_State *L = luaL_newstate();
  luaL_openlibs(L);
  lua_getglobal(L, "package");
  lua_getfield(L, -1, "preload");
  lua_pushcfunction(L, luaopen_whatif);
  lua_setfield(L, -2, "whatif");
  lua_pop(L, 2);
  lua_pushstring(L, g_trace);
  lua_setglobal(L, "TRACE");
  if (luaL_loadbuffer(L, code, strlen(code), "=test") || lua_pcall(L, 0, 0, 0)) {
    char msg[1024];
    snprintf(msg, sizeof msg, "%s", lua_tostring(L, -1));
    lua_close(L);
    fail_msg("%s", msg);
  }
  lua_close(L);
}

static void test_api(void **state) {
  (void)state;
  run_lua(
    "local w = require 'whatif'\n"
    "local t = w.open(TRACE)\n"
    "local info = t:info()\n"
    "assert(info.instructions == 1 + 4000 + 1 + 4000 + 1, info.instructions)\n"
    "assert(#info.hash == 16)\n"
    "local pcs = t:pcs{top = 3}\n"
    "assert(#pcs == 3 and pcs[1].count == 1000)\n"
    "local fma\n"
    "for _, p in ipairs(t:pcs()) do if p.class == 'fma' then fma = p end end\n"
    "assert(fma and fma.name == 'f2' and fma.func == 'f2', fma and fma.name)\n"
    "assert(t:pc('f2') == fma.pc and t:sym(fma.pc) == 'f2')\n"
    "assert(t:insn(fma.pc).text:find('vfmadd'))\n"
    /* configurations */
    "local c = w.config()\n"
    "assert(c:name() == 'golden_cove')\n"
    "assert(c:get('core.rob') == 512)\n"
    "c:set('core.rob', 300)\n"
    "assert(c:get('core.rob') == 300)\n"
    "c:apply{bpred = {ras_repair = 'full'}}\n"
    "assert(c:get('bpred.ras_repair') == 'full')\n"
    "assert(c:get('uops.fma')[1].latency >= 1)\n"
    "assert(type(c:dump()) == 'string' and c:dump():find('rob = 300'))\n"
    "local ok, err = pcall(c.set, c, 'core.robb', 3)\n"
    "assert(not ok and err:find('robb'), err)\n"
    "ok, err = pcall(c.set, c, 'core.rob', 'big')\n"
    "assert(not ok, 'a string rob should fail')\n"
    "local c2 = c:copy(); c2:set('core.rob', 400); assert(c:get('core.rob') == 300)\n"
    "assert(c:hash() ~= c2:hash())\n"
    /* baseline and replays */
    "local b = w.baseline(t, w.config(), {interval = 500})\n"
    "local base = b:result()\n"
    "assert(base.insns == info.instructions and base.cycles > 0 and b:snapshots() > 4)\n"
    "local r = w.replay(b, w.remove{pc = fma.pc})\n"
    "assert(r.intervened.insns == base.insns - 1000)\n"
    "assert(r.delta.cycles < -1000, r.delta.cycles)\n"
    "assert(r.start_insn > 2000, r.start_insn)\n"
    "local r2 = w.replay(b, 'remove{func=\"f2\", mode=\"nop\"}', {checkpoint = false})\n"
    "assert(r2.start_insn == 0 and r2.intervened.insns == base.insns)\n"
    "local r3 = w.replay(b, {w.latency{pc = fma.pc, add = 2}, 'ras{repair=\"full\"}'})\n"
    "assert(r3.text:find('latency') and r3.text:find('ras'))\n"
    "assert(r3.delta.cycles > 1500)\n"
    /* the same as a hook: same cycles */
    "local calls = 0\n"
    "local rh = w.replay(b, w.on_insn(function(pc, index, wrong, class, text)\n"
    "  calls = calls + 1\n"
    "  if pc == fma.pc then return {lat_add = 2} end\n"
    "end))\n"
    "local rl = w.replay(b, w.latency{pc = fma.pc, add = 2})\n"
    "assert(rh.intervened.cycles == rl.intervened.cycles, rh.intervened.cycles .. ' vs ' .. rl.intervened.cycles)\n"
    "assert(calls >= base.insns)\n"
    "local rd = w.replay(b, w.on_insn(function(pc) if pc == fma.pc then return 'drop' end end))\n"
    "assert(rd.intervened.cycles == r.intervened.cycles)\n"
    /* sweeps: 1 and 2 threads, checkpoints or not: identical */
    "local s1 = w.sweep(b, {per_pc = 'latency{add=1}', threads = 1})\n"
    "local s2 = w.sweep(b, {per_pc = 'latency{add=1}', threads = 2, checkpoint = false})\n"
    "assert(#s1 == info.static and #s2 == #s1)\n"
    "for i = 1, #s1 do assert(s1[i].cycles == s2[i].cycles and s1[i].text == s2[i].text) end\n"
    "local s3 = w.sweep(b, {{w.remove{pc = fma.pc}}, 'latency{class=\"fma\", add=1}'}, {threads = 2})\n"
    "assert(#s3 == 2 and s3[1].cycles == r.intervened.cycles and s3[2].delta_cycles > 0)\n"
    /* a sweep into a results database resumes */
    "local db = os.tmpname()\n"
    "local d1 = w.sweep(b, {per_pc = 'remove{}', top = 4, db = db})\n"
    "assert(#d1 == 4 and d1[1].cycles and not d1[1].stored)\n"
    "local d2 = w.sweep(b, {per_pc = 'remove{}', top = 5, db = db, threads = 2})\n"
    "assert(#d2 == 5 and d2[1].stored and d2[4].stored and d2[5].cycles)\n"
    "os.remove(db); os.remove(db .. '-wal'); os.remove(db .. '-shm')\n"
    /* run with intervals */
    "local res, b2 = w.run(t, {stats_interval = 1000})\n"
    "assert(res.cycles == base.cycles and #res.intervals >= 7 and b2:snapshots() == 0)\n"
    "local sum = 0 for _, i in ipairs(res.intervals) do sum = sum + i.insns end\n"
    "assert(sum == base.insns)\n"
    /* statistics */
    "assert(math.abs(w.stats.kendall({1,2,3,4}, {1,2,3,4}) - 1) < 1e-12)\n"
    "assert(math.abs(w.stats.kendall({1,2,3,4}, {4,3,2,1}) + 1) < 1e-12)\n"
    "assert(math.abs(w.stats.spearman({1,2,3}, {10,20,30}) - 1) < 1e-12)\n"
    "local a, s = w.stats.linfit({0, 1, 2}, {1, 3, 5}); assert(math.abs(a - 1) < 1e-12 and math.abs(s - 2) < 1e-12)\n"
    "local p = w.stats.topk({5,4,3,2,1}, {5,4,3,2,1}, 2); assert(p == 1)\n"
    "local ranks = w.stats.ranks({10, 30, 20}); assert(ranks[1] == 1 and ranks[2] == 3)\n"
    "local lo, hi, kept = w.stats.bootstrap('pearson', {1,2,3,4,5,6}, {2,4,5,8,10,12}, {iters = 100})\n"
    "assert(lo <= hi and kept > 50)\n"
    /* parsing and the table helper */
    "assert(w.parse('ras{repair=\"full\"}, latency{pc=16, add=1}')[2] == 'latency{pc=0x10, add=1}')\n"
    "assert(w.table({{a = 1, b = 2.5}}, {'a', {'b', 'B', '%.1f'}}):find('2.5'))\n"
    "assert(w.iv.config{core = {rob = 100}}.kind == 'config' and w.config_edit{core = {}}.kind == 'config')\n");
}

static void test_errors(void **state) {
  (void)state;
  run_lua(
    "local w = require 'whatif'\n"
    "local t = w.open(TRACE)\n"
    "local b = w.baseline(t, {checkpoints = false})\n"
    "local function fails(f, want)\n"
    "  local ok, err = pcall(f)\n"
    "  assert(not ok, 'should fail: ' .. want)\n"
    "  assert(tostring(err):find(want, 1, true), 'message \"' .. tostring(err) .. '\" lacks \"' .. want .. '\"')\n"
    "end\n"
    "fails(function() w.open('/nonexistent.wtr') end, '/nonexistent.wtr')\n"
    "fails(function() w.replay(b, w.remove{pc = 0x12345}) end, 'pc 0x12345 never executed')\n"
    "fails(function() w.replay(b, 'foo{x=1}') end, \"unknown intervention kind 'foo'\")\n"
    "fails(function() w.replay(b, w.latency{pc = 1, add = 1, bogus = 2}) end, \"unknown field 'bogus' in latency{...}\")\n"
    "fails(function() w.replay(b, w.port{name = 'P13'}) end, 'port P13 does not exist (ports: P0..P11)')\n"
    "fails(function() w.replay(b, {pc = 3}) end, 'needs a kind')\n"
    "fails(function() w.replay(b, 42) end, 'must be a table')\n"
    "fails(function() w.replay(b, w.on_insn(function() error('boom') end)) end, 'boom')\n"
    "fails(function() w.replay(b, w.on_insn(function() return 'explode' end)) end, \"returned 'explode'\")\n"
    "fails(function() w.sweep(b, {w.on_insn(function() end)}) end, 'only in whatif.replay')\n"
    "fails(function() w.sweep(b, {per_pc = 'ras{repair=\"full\"}'}) end, 'template')\n"
    "fails(function() w.config('nosuchmachine') end, 'nosuchmachine')\n"
    "fails(function() w.stats.kendall({1, 2}, {1}) end, 'differ in length')\n"
    "t:close()\n"
    "fails(function() t:info() end, 'closed')\n");
}

/* `whatif script`: output, arguments, and errors as file:line with exit status 1. */
static void test_script_command(void **state) {
  (void)state;
  const char *bin = getenv("WHATIF_BIN");
  if (!bin) skip();
  char *script = tu_tmp_path(".lua");
  FILE *f = fopen(script, "w");
  fprintf(f, "local w = require 'whatif'\n"
             "local t = w.open(arg[1])\n"
             "print('instructions', t:info().instructions, select('#', ...))\n");
  fclose(f);
  char *cmd = xasprintf("'%s' script '%s' '%s' extra 2>&1", bin, script, g_trace);
  int st;
  char *out = tu_run(cmd, &st);
  assert_int_equal(st, 0);
  assert_non_null(strstr(out, "instructions\t8003\t2"));
  free(out);
  free(cmd);
  /* a runtime error on line 3 (raised in C: the position is the calling line) */
  f = fopen(script, "w");
  fprintf(f, "local w = require 'whatif'\n\nlocal t = w.open('/nonexistent/x.wtr')\n");
  fclose(f);
  cmd = xasprintf("'%s' script '%s' 2>&1", bin, script);
  out = tu_run(cmd, &st);
  assert_int_equal(st, 1);
  char *want = xasprintf("%s:3: ", script);
  if (!strstr(out, want)) fail_msg("output '%s' lacks '%s'", out, want);
  free(want);
  free(out);
  /* a syntax error on line 2 */
  f = fopen(script, "w");
  fprintf(f, "local x = 1\nlocal = 2\n");
  fclose(f);
  out = tu_run(cmd, &st);
  assert_int_equal(st, 1);
  want = xasprintf("%s:2: ", script);
  if (!strstr(out, want)) fail_msg("output '%s' lacks '%s'", out, want);
  free(want);
  free(out);
  /* error() with a table value */
  f = fopen(script, "w");
  fprintf(f, "error({})\n");
  fclose(f);
  out = tu_run(cmd, &st);
  assert_int_equal(st, 1);
  assert_non_null(strstr(out, "error object is a table"));
  free(out);
  free(cmd);
  /* a missing file */
  cmd = xasprintf("'%s' script /nonexistent/none.lua 2>&1", bin);
  out = tu_run(cmd, &st);
  assert_int_equal(st, 2);
  free(out);
  free(cmd);
  unlink(script);
  free(script);
}

/* The loadable module in the system interpreter. */
static void test_system_lua(void **state) {
  (void)state;
#if defined(__SANITIZE_ADDRESS__)
  skip(); /* an ASan-built module cannot load into the uninstrumented lua5.4 */
#endif
  const char *bin = getenv("WHATIF_BIN");
  if (!bin || access("/usr/bin/lua5.4", X_OK)) skip();
  char *dir = xstrdup(bin);
  char *slash = strrchr(dir, '/');
  if (slash) *slash = 0;
  char *so = xasprintf("%s/whatif.so", dir);
  if (access(so, R_OK)) {
    free(so);
    free(dir);
    skip();
  }
  char *cmd = xasprintf("LUA_CPATH='%s/?.so' lua5.4 -e \"local w = require 'whatif'; local t = w.open('%s'); "
                        "local b = w.baseline(t, {checkpoints = false}); "
                        "local r = w.replay(b, w.remove{func = 'f2'}); "
                        "print('ok', r.intervened.insns, r.delta.cycles < 0)\" 2>&1",
                        dir, g_trace);
  int st;
  char *out = tu_run(cmd, &st);
  if (st || !strstr(out, "ok\t4003\ttrue")) fail_msg("lua5.4: status %d, output '%s'", st, out);
  free(out);
  free(cmd);
  free(so);
  free(dir);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_api),
    cmocka_unit_test(test_errors),
    cmocka_unit_test(test_script_command),
    cmocka_unit_test(test_system_lua),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}

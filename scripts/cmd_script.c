/* cmd_script.c — `whatif script FILE.lua [ARGS...]`: run a Lua what-if script with the `whatif`
 * module preloaded (`local w = require "whatif"`) and the arguments in the global `arg`. A
 * script error is reported as one line "whatif script: file:line: message" and exits 1. */
#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "lua_whatif.h"

static void usage(FILE *f) {
  fprintf(f, "usage: whatif script FILE.lua [ARGS...]\n"
             "  Run a Lua what-if script. `require \"whatif\"` gives the API (traces, configurations,\n"
             "  baselines, replays, sweeps, on_insn hooks, statistics); the arguments are in `arg`\n"
             "  (arg[0] = FILE.lua). Examples: scripts/examples/*.lua; reference: scripts/examples/README.md.\n"
             "  Exit status: 0, or 1 with \"file:line: message\" when the script raises an error.\n");
}

/* Message handler: keep the message (it already names file:line); add no traceback, so the
 * error stays one line. Non-string errors are described. */
static int msgh(lua_State *L) {
  if (lua_type(L, 1) == LUA_TSTRING) return 1;
  if (luaL_callmeta(L, 1, "__tostring") && lua_type(L, -1) == LUA_TSTRING) return 1;
  lua_pushfstring(L, "(error object is a %s value)", luaL_typename(L, 1));
  return 1;
}

int cmd_script(int argc, char **argv) {
  if (argc < 2) return cli_usage("script", "no script given (usage: whatif script FILE.lua [ARGS...])");
  if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
    usage(stdout);
    return 0;
  }
  const char *file = argv[1];
  lua_State *L = luaL_newstate();
  if (!L) {
    fprintf(stderr, "whatif script: cannot create a Lua state\n");
    return EXIT_BADINPUT;
  }
  luaL_openlibs(L);
  /* package.preload.whatif = luaopen_whatif */
  lua_getglobal(L, "package");
  lua_getfield(L, -1, "preload");
  lua_pushcfunction(L, luaopen_whatif);
  lua_setfield(L, -2, "whatif");
  lua_pop(L, 2);
  /* arg = {[0] = file, ...} */
  lua_createtable(L, argc - 2, 1);
  for (int i = 1; i < argc; i++) {
    lua_pushstring(L, argv[i]);
    lua_rawseti(L, -2, i - 1);
  }
  lua_setglobal(L, "arg");
  int status = 0;
  lua_pushcfunction(L, msgh);
  int rc = luaL_loadfile(L, file);
  if (rc == LUA_ERRFILE) {
    fprintf(stderr, "whatif script: cannot read %s\n", file);
    lua_close(L);
    return EXIT_BADINPUT;
  }
  if (rc == LUA_OK) {
    for (int i = 2; i < argc; i++) lua_pushstring(L, argv[i]); /* also as `...` */
    rc = lua_pcall(L, argc - 2, 0, 1);
  }
  if (rc != LUA_OK) {
    /* One line, prefixed like every other whatif error; the message keeps its file:line. */
    const char *msg = lua_tostring(L, -1);
    fputs("whatif script: ", stderr);
    for (const char *c = msg ? msg : "script error"; *c; c++) fputc(*c == '\n' || *c == '\r' ? ' ' : *c, stderr);
    fputc('\n', stderr);
    status = EXIT_CHECK;
  }
  fflush(stdout);
  lua_close(L);
  return status;
}

/* luacfg.c — turn Lua values into cfg_val trees and back. */
#include "luacfg.h"

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static cfg_val *conv(lua_State *L, int idx, const char *path, int depth, wi_err *err) {
  idx = lua_absindex(L, idx);
  switch (lua_type(L, idx)) {
  case LUA_TNIL: return cv_new(CV_NIL);
  case LUA_TBOOLEAN: return cv_bool(lua_toboolean(L, idx));
  case LUA_TNUMBER: return cv_num(lua_tonumber(L, idx));
  case LUA_TSTRING: return cv_str(lua_tostring(L, idx));
  case LUA_TTABLE: break;
  default:
    wi_fail(err, WI_EINVAL, "%s: a %s cannot be a configuration value", *path ? path : "value",
            luaL_typename(L, idx));
    return NULL;
  }
  if (depth > 32) {
    wi_fail(err, WI_EINVAL, "%s: tables nested too deeply (or a table that contains itself)", path);
    return NULL;
  }
  /* Each level holds a key and a value on the Lua stack; a C function is only promised
   * LUA_MINSTACK slots, and overrunning them corrupts the heap (a cyclic table did). */
  if (!lua_checkstack(L, 4)) {
    wi_fail(err, WI_EINVAL, "%s: tables nested too deeply", path);
    return NULL;
  }
  cfg_val *t = cv_table();
  size_t n = lua_rawlen(L, idx);
  for (size_t i = 1; i <= n; i++) {
    lua_rawgeti(L, idx, (lua_Integer)i);
    char sub[256];
    snprintf(sub, sizeof sub, "%s[%zu]", path, i);
    cfg_val *v = conv(L, -1, sub, depth + 1, err);
    lua_pop(L, 1);
    if (!v) {
      cv_free(t);
      return NULL;
    }
    cv_push(t, v);
  }
  lua_pushnil(L);
  while (lua_next(L, idx)) {
    if (lua_type(L, -2) == LUA_TNUMBER) {
      lua_Number k = lua_tonumber(L, -2);
      if (k >= 1 && k <= (lua_Number)n && k == floor(k)) {
        lua_pop(L, 1);
        continue;
      }
      wi_fail(err, WI_EINVAL, "%s: numeric key %g outside the list part", *path ? path : "table", k);
      lua_pop(L, 2);
      cv_free(t);
      return NULL;
    }
    if (lua_type(L, -2) != LUA_TSTRING) {
      wi_fail(err, WI_EINVAL, "%s: table keys must be names", *path ? path : "table");
      lua_pop(L, 2);
      cv_free(t);
      return NULL;
    }
    const char *key = lua_tostring(L, -2);
    char sub[256];
    snprintf(sub, sizeof sub, "%s%s%s", path, *path ? "." : "", key);
    cfg_val *v = conv(L, -1, sub, depth + 1, err);
    if (!v) {
      lua_pop(L, 2);
      cv_free(t);
      return NULL;
    }
    cv_set(t, key, v);
    lua_pop(L, 1);
  }
  cv_sort(t);
  return t;
}

cfg_val *luacfg_from_stack(lua_State *L, int idx, wi_err *err) { return conv(L, idx, "", 0, err); }

/* A configuration is data: one that runs for more than ~100 M Lua instructions is stuck (an
 * infinite loop), and is an error rather than a hang. */
enum { LUACFG_STEP = 1000000, LUACFG_MAX_STEPS = 100 };

static void budget_hook(lua_State *L, lua_Debug *ar) {
  lua_getfield(L, LUA_REGISTRYINDEX, "whatif.cfg_steps");
  lua_Integer n = lua_tointeger(L, -1) + 1;
  lua_pop(L, 1);
  lua_pushinteger(L, n);
  lua_setfield(L, LUA_REGISTRYINDEX, "whatif.cfg_steps");
  if (n <= LUACFG_MAX_STEPS) return;
  if (lua_getinfo(L, "Sl", ar) && ar->currentline > 0)
    luaL_error(L, "%s:%d: configuration still running after %d M Lua instructions (an endless loop?)", ar->short_src,
               ar->currentline, LUACFG_MAX_STEPS);
  luaL_error(L, "configuration still running after %d M Lua instructions (an endless loop?)", LUACFG_MAX_STEPS);
}

static lua_State *new_state(void) {
  lua_State *L = luaL_newstate();
  if (!L) wi_die(2, "cannot create a Lua state");
  lua_sethook(L, budget_hook, LUA_MASKCOUNT, LUACFG_STEP);
  luaL_requiref(L, "_G", luaopen_base, 1);
  luaL_requiref(L, LUA_STRLIBNAME, luaopen_string, 1);
  luaL_requiref(L, LUA_MATHLIBNAME, luaopen_math, 1);
  luaL_requiref(L, LUA_TABLIBNAME, luaopen_table, 1);
  lua_pop(L, 4);
  return L;
}

static cfg_val *finish(lua_State *L, int rc, const char *what, wi_err *err) {
  cfg_val *v = NULL;
  if (rc != LUA_OK) {
    wi_fail(err, WI_EINVAL, "%s", lua_tostring(L, -1));
  } else if (!lua_istable(L, -1)) {
    wi_fail(err, WI_EINVAL, "%s: must return a table (got %s)", what, luaL_typename(L, -1));
  } else {
    wi_err e = {0};
    v = conv(L, -1, "", 0, &e);
    if (!v) wi_fail(err, WI_EINVAL, "%s: %s", what, e.msg);
  }
  lua_close(L);
  return v;
}

cfg_val *luacfg_load_file(const char *path, wi_err *err) {
  lua_State *L = new_state();
  int rc = luaL_loadfile(L, path);
  if (rc == LUA_ERRFILE) {
    lua_close(L);
    wi_fail(err, WI_EIO, "cannot read configuration %s", path);
    return NULL;
  }
  if (rc == LUA_OK) rc = lua_pcall(L, 0, 1, 0);
  return finish(L, rc, path, err);
}

cfg_val *luacfg_eval(const char *src, const char *chunkname, wi_err *err) {
  lua_State *L = new_state();
  char *code = xasprintf("return %s", src);
  int rc = luaL_loadbuffer(L, code, strlen(code), chunkname);
  free(code);
  if (rc == LUA_OK) rc = lua_pcall(L, 0, 1, 0);
  return finish(L, rc, chunkname, err);
}

void luacfg_push(lua_State *L, const cfg_val *v) {
  switch (v ? v->kind : CV_NIL) {
  case CV_NIL: lua_pushnil(L); return;
  case CV_BOOL: lua_pushboolean(L, v->b); return;
  case CV_NUM:
    if (v->num == floor(v->num) && fabs(v->num) < 9e15) lua_pushinteger(L, (lua_Integer)v->num);
    else lua_pushnumber(L, v->num);
    return;
  case CV_STR: lua_pushstring(L, v->str); return;
  case CV_TABLE:
    luaL_checkstack(L, 3, "configuration nested too deeply");
    lua_createtable(L, (int)cv_len(v), (int)v->n);
    for (size_t i = 0; i < v->n; i++) {
      luacfg_push(L, v->entries[i].val);
      if (v->entries[i].key) lua_setfield(L, -2, v->entries[i].key);
      else lua_rawseti(L, -2, (lua_Integer)v->entries[i].index);
    }
    return;
  }
}

/* interv.c — parse the textual form of interventions through Lua (interv.h). */
#include "interv.h"

#include <lauxlib.h>
#include <lua.h>
#include <stdlib.h>
#include <string.h>

#include "luacfg.h"

/* A constructor: upvalue 1 is the kind's name; tags the table argument with it. */
static int ctor(lua_State *L) {
  const char *name = lua_tostring(L, lua_upvalueindex(1));
  if (lua_gettop(L) == 0) lua_newtable(L); /* ras() is ras{} */
  if (!lua_istable(L, 1))
    return luaL_error(L, "%s: expected a table, as in %s{field = value}, not a %s", name, name, luaL_typename(L, 1));
  if (lua_getfield(L, 1, "kind") != LUA_TNIL)
    return luaL_error(L, "%s{...}: the field name 'kind' is reserved", name);
  lua_pop(L, 1);
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_setfield(L, 1, "kind");
  lua_settop(L, 1);
  return 1;
}

/* env.__index(t, name): a constructor for any name (replay/ rejects unknown kinds with a list). */
static int env_index(lua_State *L) {
  if (lua_type(L, 2) != LUA_TSTRING) return 0;
  lua_pushvalue(L, 2);
  lua_pushcclosure(L, ctor, 1);
  return 1;
}

void interv_push_constructors(lua_State *L, int idx) {
  idx = lua_absindex(L, idx);
  for (int k = 0; k < RP_KIND_NUM; k++) {
    lua_pushstring(L, rp_kind_name(k));
    lua_pushcclosure(L, ctor, 1);
    lua_setfield(L, idx, rp_kind_name(k));
  }
}

wi_rc interv_from_lua(lua_State *L, int idx, rp_interv *out, wi_err *err) {
  idx = lua_absindex(L, idx);
  if (lua_type(L, idx) == LUA_TSTRING) return interv_parse_one(lua_tostring(L, idx), "intervention", out, err);
  if (!lua_istable(L, idx))
    return wi_fail(err, WI_EINVAL, "an intervention must be a table such as whatif.ras{repair=\"full\"} or a string, not a %s",
                   luaL_typename(L, idx));
  wi_err e = {0};
  cfg_val *v = luacfg_from_stack(L, idx, &e);
  if (!v) return wi_fail(err, WI_EINVAL, "intervention: %s", e.msg);
  wi_rc rc = rp_interv_parse(v, out, err);
  cv_free(v);
  return rc;
}

/* Evaluate "return {<text>}" with the constructor environment; leaves the list on the stack. */
static int eval_list(lua_State *L) {
  const char *text = lua_tostring(L, 1);
  const char *where = lua_tostring(L, 2);
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  luaL_addstring(&b, "return {");
  luaL_addstring(&b, text);
  luaL_addstring(&b, " }"); /* same line: errors point at the text's own line */
  luaL_pushresult(&b);
  size_t len;
  const char *code = lua_tolstring(L, -1, &len);
  lua_pushfstring(L, "=%s", where);
  if (luaL_loadbufferx(L, code, len, lua_tostring(L, -1), "t") != LUA_OK) return lua_error(L);
  /* _ENV = setmetatable({}, {__index = env_index}) */
  lua_newtable(L);
  lua_newtable(L);
  lua_pushcfunction(L, env_index);
  lua_setfield(L, -2, "__index");
  lua_setmetatable(L, -2);
  if (!lua_setupvalue(L, -2, 1)) lua_pop(L, 1);
  lua_call(L, 0, 1);
  return 1;
}

wi_rc interv_parse_list(const char *text, const char *where, rp_interv **out, size_t *n, wi_err *err) {
  *out = NULL;
  *n = 0;
  lua_State *L = luaL_newstate();
  if (!L) wi_die(2, "cannot create a Lua state");
  lua_pushcfunction(L, eval_list);
  lua_pushstring(L, text);
  lua_pushstring(L, where ? where : "intervention");
  if (lua_pcall(L, 2, 1, 0) != LUA_OK) {
    wi_rc rc = wi_fail(err, WI_EINVAL, "%s", lua_tostring(L, -1));
    lua_close(L);
    return rc;
  }
  size_t cnt = lua_rawlen(L, -1);
  /* Anything but a plain list (e.g. `pc = 1` at the top level) is a mistake. */
  lua_pushnil(L);
  size_t keys = 0;
  while (lua_next(L, -2)) {
    keys++;
    lua_pop(L, 1);
  }
  if (keys != cnt || cnt == 0) {
    lua_close(L);
    return wi_fail(err, WI_EINVAL, "%s: expected interventions such as latency{pc=0x401a2c, add=1}, got '%s'",
                   where ? where : "intervention", text);
  }
  rp_interv *v = xcalloc(cnt, sizeof *v);
  wi_rc rc = WI_OK;
  for (size_t i = 0; i < cnt && !rc; i++) {
    lua_rawgeti(L, -1, (lua_Integer)(i + 1));
    wi_err e = {0};
    if (lua_type(L, -1) == LUA_TSTRING) {
      rc = wi_fail(err, WI_EINVAL, "%s: item %zu is a string; write the intervention itself, e.g. ras{repair=\"full\"}",
                   where ? where : "intervention", i + 1);
    } else if ((rc = interv_from_lua(L, -1, &v[i], &e))) {
      wi_fail(err, rc, "%s: %s", where ? where : "intervention", e.msg);
    }
    lua_pop(L, 1);
    if (rc) {
      interv_free_list(v, i);
      v = NULL;
    }
  }
  lua_close(L);
  if (rc) return rc;
  *out = v;
  *n = cnt;
  return WI_OK;
}

wi_rc interv_parse_one(const char *text, const char *where, rp_interv *out, wi_err *err) {
  rp_interv *v;
  size_t n;
  memset(out, 0, sizeof *out);
  wi_rc rc = interv_parse_list(text, where, &v, &n, err);
  if (rc) return rc;
  if (n != 1) {
    interv_free_list(v, n);
    return wi_fail(err, WI_EINVAL, "%s: expected one intervention, got %zu in '%s'", where ? where : "intervention", n,
                   text);
  }
  *out = v[0];
  free(v);
  return WI_OK;
}

void interv_free_list(rp_interv *v, size_t n) {
  if (!v) return;
  for (size_t i = 0; i < n; i++) rp_interv_free(&v[i]);
  free(v);
}

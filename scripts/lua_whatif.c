/* lua_whatif.c — the `whatif` Lua module (lua_whatif.h): traces, configurations, baselines,
 * replays, sweeps, on_insn hooks and statistics.
 *
 * Error discipline: Lua errors longjmp. Every C resource lives in a userdata with __gc (and
 * __close), and every temporary allocation of a call goes into a "box" userdata whose __gc
 * frees it, so an error raised at any point leaks nothing. */
#include "lua_whatif.h"

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "interv.h"
#include "luacfg.h"
#include "machine.h"
#include "replay.h"
#include "rp_cli.h"
#include "rp_store.h"
#include "stats.h"
#include "trace.h"

#define LW_TRACE "whatif.trace"
#define LW_CONFIG "whatif.config"
#define LW_BASE "whatif.baseline"
#define LW_HOOK "whatif.hook"
#define LW_BOX "whatif.box"

#ifndef WHATIF_SOURCE_DIR
#define WHATIF_SOURCE_DIR "."
#endif

/* ---- boxes: temporary C allocations freed even when an error unwinds ------------------------------ */

typedef struct lw_box {
  void (*fn)(void *);
  void *p;
} lw_box;

static int box_gc(lua_State *L) {
  lw_box *b = luaL_checkudata(L, 1, LW_BOX);
  if (b->fn) b->fn(b->p);
  b->fn = NULL;
  b->p = NULL;
  return 0;
}

/* Push a box owning p (freed with fn). */
static lw_box *box_new(lua_State *L, void (*fn)(void *), void *p) {
  lw_box *b = lua_newuserdatauv(L, sizeof *b, 0);
  b->fn = NULL;
  b->p = NULL;
  luaL_setmetatable(L, LW_BOX);
  b->fn = fn;
  b->p = p;
  return b;
}

/* Free the box's contents now. */
static void box_release(lw_box *b) {
  if (b->fn) b->fn(b->p);
  b->fn = NULL;
  b->p = NULL;
}

/* ---- small helpers ------------------------------------------------------------------------------- */

static void set_int(lua_State *L, const char *k, uint64_t v) {
  lua_pushinteger(L, (lua_Integer)v);
  lua_setfield(L, -2, k);
}

static void set_num(lua_State *L, const char *k, double v) {
  lua_pushnumber(L, v);
  lua_setfield(L, -2, k);
}

static void set_str(lua_State *L, const char *k, const char *v) {
  lua_pushstring(L, v);
  lua_setfield(L, -2, k);
}

static void set_bool(lua_State *L, const char *k, bool v) {
  lua_pushboolean(L, v);
  lua_setfield(L, -2, k);
}

/* An optional field of the options table at idx. */
static bool opt_field(lua_State *L, int idx, const char *k) {
  if (idx == 0 || lua_isnoneornil(L, idx)) return false;
  lua_getfield(L, idx, k);
  if (lua_isnil(L, -1)) {
    lua_pop(L, 1);
    return false;
  }
  return true; /* value on the stack */
}

static uint64_t opt_uint(lua_State *L, int idx, const char *k, uint64_t dflt) {
  if (!opt_field(L, idx, k)) return dflt;
  lua_Integer v = 0;
  int isint = 0;
  v = lua_tointegerx(L, -1, &isint);
  if (!isint || v < 0) luaL_error(L, "option %s must be a non-negative integer", k);
  lua_pop(L, 1);
  return (uint64_t)v;
}

static bool opt_bool(lua_State *L, int idx, const char *k, bool dflt) {
  if (!opt_field(L, idx, k)) return dflt;
  bool v = lua_toboolean(L, -1);
  lua_pop(L, 1);
  return v;
}

static const char *opt_str(lua_State *L, int idx, const char *k) {
  if (!opt_field(L, idx, k)) return NULL;
  const char *s = lua_tostring(L, -1);
  if (!s) luaL_error(L, "option %s must be a string", k);
  lua_pop(L, 1); /* the string stays alive: it is referenced by the options table */
  return s;
}

static void push_topdown(lua_State *L, const ooo_topdown *td) {
  lua_createtable(L, 0, 10);
  set_num(L, "retiring", td->retiring);
  set_num(L, "bad_speculation", td->bad_speculation);
  set_num(L, "frontend_bound", td->frontend_bound);
  set_num(L, "backend_bound", td->backend_bound);
  set_num(L, "branch_mispredicts", td->branch_mispredicts);
  set_num(L, "machine_clears", td->machine_clears);
  set_num(L, "fe_latency", td->fe_latency);
  set_num(L, "fe_bandwidth", td->fe_bandwidth);
  set_num(L, "memory_bound", td->memory_bound);
  set_num(L, "core_bound", td->core_bound);
}

static void push_result(lua_State *L, const rp_result *r) {
  lua_createtable(L, 0, 20);
  set_int(L, "cycles", r->cycles);
  set_int(L, "insns", r->insns);
  set_num(L, "ipc", r->ipc);
  set_num(L, "mpki", r->mpki);
  set_num(L, "cond_mpki", r->cond_mpki);
  set_num(L, "indirect_mpki", r->ind_mpki);
  set_num(L, "return_mpki", r->ret_mpki);
  set_int(L, "mispredicts", r->mispredicts);
  set_int(L, "return_mispredicts", r->ret_mispredicts);
  set_int(L, "wp_fetched", r->wp_fetched);
  set_int(L, "wp_executed", r->wp_executed);
  set_int(L, "wp_dispatched", r->stats.dispatched[1]);
  set_int(L, "machine_clears", r->stats.machine_clears);
  set_int(L, "start_insn", r->start_insn);
  set_num(L, "seconds", r->wall_s);
  push_topdown(L, &r->td);
  lua_setfield(L, -2, "topdown");
}

static void push_delta(lua_State *L, const rp_result *a, const rp_result *b) {
  lua_createtable(L, 0, 8);
  lua_pushinteger(L, (lua_Integer)b->cycles - (lua_Integer)a->cycles);
  lua_setfield(L, -2, "cycles");
  set_num(L, "ipc", b->ipc - a->ipc);
  set_num(L, "ipc_pct", a->ipc > 0 ? 100.0 * (b->ipc - a->ipc) / a->ipc : 0.0);
  set_num(L, "cycles_pct", a->cycles ? 100.0 * ((double)b->cycles - (double)a->cycles) / (double)a->cycles : 0.0);
  set_num(L, "mpki", b->mpki - a->mpki);
  lua_pushinteger(L, (lua_Integer)b->ret_mispredicts - (lua_Integer)a->ret_mispredicts);
  lua_setfield(L, -2, "return_mispredicts");
  lua_pushinteger(L, (lua_Integer)b->wp_fetched - (lua_Integer)a->wp_fetched);
  lua_setfield(L, -2, "wp_fetched");
  ooo_topdown d;
  d.retiring = b->td.retiring - a->td.retiring;
  d.bad_speculation = b->td.bad_speculation - a->td.bad_speculation;
  d.frontend_bound = b->td.frontend_bound - a->td.frontend_bound;
  d.backend_bound = b->td.backend_bound - a->td.backend_bound;
  d.branch_mispredicts = b->td.branch_mispredicts - a->td.branch_mispredicts;
  d.machine_clears = b->td.machine_clears - a->td.machine_clears;
  d.fe_latency = b->td.fe_latency - a->td.fe_latency;
  d.fe_bandwidth = b->td.fe_bandwidth - a->td.fe_bandwidth;
  d.memory_bound = b->td.memory_bound - a->td.memory_bound;
  d.core_bound = b->td.core_bound - a->td.core_bound;
  push_topdown(L, &d);
  lua_setfield(L, -2, "topdown");
}

/* ---- traces ------------------------------------------------------------------------------------------ */

typedef struct lw_trace {
  trace_t *t;
} lw_trace;

static lw_trace *check_trace(lua_State *L, int idx) {
  lw_trace *u = luaL_checkudata(L, idx, LW_TRACE);
  if (!u->t) luaL_error(L, "the trace was closed");
  return u;
}

static int trace_gc(lua_State *L) {
  lw_trace *u = luaL_checkudata(L, 1, LW_TRACE);
  trace_close(u->t);
  u->t = NULL;
  return 0;
}

/* whatif.open(path) -> trace */
static int lw_open(lua_State *L) {
  const char *path = luaL_checkstring(L, 1);
  lw_trace *u = lua_newuserdatauv(L, sizeof *u, 1);
  u->t = NULL;
  luaL_setmetatable(L, LW_TRACE);
  lua_pushvalue(L, 1);
  lua_setiuservalue(L, -2, 1);
  wi_err err = {0};
  u->t = trace_open(path, &err);
  if (!u->t) return luaL_error(L, "%s", err.msg);
  return 1;
}

static int trace_info_l(lua_State *L) {
  lw_trace *u = check_trace(L, 1);
  const trace_info *ti = trace_get_info(u->t);
  lua_createtable(L, 0, 10);
  lua_getiuservalue(L, 1, 1);
  lua_setfield(L, -2, "path");
  set_int(L, "instructions", ti->n_insns);
  set_int(L, "raw", ti->n_raw);
  set_int(L, "static", ti->n_static);
  set_int(L, "chunks", ti->n_chunks);
  char hx[32];
  snprintf(hx, sizeof hx, "%016llx", (unsigned long long)ti->content_hash);
  set_str(L, "hash", hx);
  const char *prog = trace_meta(u->t, "program");
  if (prog) set_str(L, "program", prog);
  return 1;
}

static void push_pc_row(lua_State *L, const trace_t *t, uint32_t sid) {
  const trace_static *s = trace_static_at(t, sid);
  const dec_insn *di = trace_decoded(t, sid);
  char buf[300];
  lua_createtable(L, 0, 8);
  set_int(L, "pc", s->pc);
  set_int(L, "count", s->count);
  set_int(L, "sid", sid);
  set_str(L, "text", di->text);
  set_str(L, "class", insn_class_name(di->cls));
  set_str(L, "branch", branch_kind_name(di->br));
  set_str(L, "name", rpc_pc_name(t, s->pc, buf, sizeof buf));
  const trace_sym *sym = trace_sym_lookup(t, s->pc);
  if (sym && sym->name) set_str(L, "func", sym->name);
}

/* t:pcs{min_count = 1, top = K} -> the static instructions, most executed first */
static int trace_pcs(lua_State *L) {
  lw_trace *u = check_trace(L, 1);
  uint64_t min_count = opt_uint(L, 2, "min_count", 1), top = opt_uint(L, 2, "top", UINT64_MAX);
  rp_interv tmpl;
  memset(&tmpl, 0, sizeof tmpl);
  tmpl.kind = RP_REMOVE;
  lw_box *box = box_new(L, free, NULL);
  rp_interv *v = NULL;
  size_t n = rpc_per_pc(u->t, &tmpl, min_count, top, &v);
  uint64_t *pcs = xmalloc((n ? n : 1) * sizeof *pcs);
  for (size_t i = 0; i < n; i++) pcs[i] = v[i].m.lo;
  interv_free_list(v, n); /* nothing can raise between rpc_per_pc and here */
  box->p = pcs;
  lua_createtable(L, (int)n, 0);
  for (size_t i = 0; i < n; i++) {
    push_pc_row(L, u->t, trace_sid_of(u->t, pcs[i]));
    lua_rawseti(L, -2, (lua_Integer)(i + 1));
  }
  box_release(box);
  return 1;
}

/* t:sym(pc) -> "func+0x1c" */
static int trace_sym_l(lua_State *L) {
  lw_trace *u = check_trace(L, 1);
  uint64_t pc = (uint64_t)luaL_checkinteger(L, 2);
  char buf[300];
  lua_pushstring(L, rpc_pc_name(u->t, pc, buf, sizeof buf));
  return 1;
}

/* t:pc("func+0x1c") -> integer (error if unknown) */
static int trace_pc_l(lua_State *L) {
  lw_trace *u = check_trace(L, 1);
  const char *name = luaL_checkstring(L, 2);
  const char *plus = strchr(name, '+');
  size_t nl = plus ? (size_t)(plus - name) : strlen(name);
  uint64_t off = 0;
  if (plus) {
    char *end;
    off = strtoull(plus + 1, &end, 0);
    if (*end) return luaL_error(L, "'%s': bad offset", name);
  }
  for (size_t i = 0; i < trace_n_syms(u->t); i++) {
    const trace_sym *s = trace_sym_at(u->t, i);
    if (s->name && strlen(s->name) == nl && !strncmp(s->name, name, nl)) {
      lua_pushinteger(L, (lua_Integer)(s->addr + off));
      return 1;
    }
  }
  return luaL_error(L, "symbol '%.*s' not found in the trace", (int)nl, name);
}

/* t:insn(pc) -> {pc, count, text, class, ...} or nil */
static int trace_insn_l(lua_State *L) {
  lw_trace *u = check_trace(L, 1);
  uint32_t sid = trace_sid_of(u->t, (uint64_t)luaL_checkinteger(L, 2));
  if (sid == UINT32_MAX) return 0;
  push_pc_row(L, u->t, sid);
  return 1;
}

/* ---- configurations ------------------------------------------------------------------------------------ */

typedef struct lw_config {
  ooo_config cfg;
} lw_config;

static lw_config *check_config(lua_State *L, int idx) { return luaL_checkudata(L, idx, LW_CONFIG); }

static lw_config *push_config(lua_State *L, const ooo_config *c) {
  lw_config *u = lua_newuserdatauv(L, sizeof *u, 0);
  u->cfg = *c;
  luaL_setmetatable(L, LW_CONFIG);
  return u;
}

/* Apply the Lua table at idx onto cfg (checked); raises on error. */
static void config_apply_lua(lua_State *L, int idx, ooo_config *cfg) {
  wi_err err = {0};
  cfg_val *v = luacfg_from_stack(L, idx, &err);
  if (!v) luaL_error(L, "configuration: %s", err.msg);
  ooo_config c = *cfg;
  wi_rc rc = ooo_config_apply(&c, v, "configuration", &err);
  cv_free(v);
  if (!rc) rc = ooo_config_check(&c, &err);
  if (rc) luaL_error(L, "%s", err.msg);
  *cfg = c;
}

/* whatif.config([name | path | table]) -> configuration */
static int lw_config_new(lua_State *L) {
  ooo_config c;
  wi_err err = {0};
  if (lua_istable(L, 1)) {
    const char *base = NULL;
    lua_getfield(L, 1, "base");
    if (lua_isstring(L, -1)) base = lua_tostring(L, -1);
    if (machine_load(base, &c, &err)) return luaL_error(L, "%s", err.msg);
    lua_pop(L, 1);
    config_apply_lua(L, 1, &c);
  } else if (lua_isnoneornil(L, 1)) {
    if (machine_load(NULL, &c, &err)) return luaL_error(L, "%s", err.msg);
  } else if (luaL_testudata(L, 1, LW_CONFIG)) {
    c = check_config(L, 1)->cfg;
  } else {
    if (machine_load(luaL_checkstring(L, 1), &c, &err)) return luaL_error(L, "%s", err.msg);
  }
  push_config(L, &c);
  return 1;
}

/* The parameter descriptor for a dotted path, and the address of its field. */
static const param_desc *param_find(const char *path, ooo_config *c, void **field) {
  const param_table *t = &ooo_param_table;
  char *base = (char *)c;
  const char *p = path;
  for (;;) {
    const char *dot = strchr(p, '.');
    size_t n = dot ? (size_t)(dot - p) : strlen(p);
    const param_desc *d = NULL;
    for (size_t i = 0; i < t->n; i++)
      if (strlen(t->params[i].name) == n && !strncmp(t->params[i].name, p, n)) d = &t->params[i];
    if (!d) return NULL;
    if (d->type == P_TABLE && dot) {
      base += d->offset;
      t = d->sub;
      p = dot + 1;
      continue;
    }
    if (dot) return NULL;
    *field = base + d->offset;
    return d;
  }
}

static void push_uops(lua_State *L, const ooo_class_spec *s) {
  char buf[160];
  lua_createtable(L, (int)s->n, 0);
  for (uint32_t k = 0; k < s->n; k++) {
    lua_createtable(L, 0, 3);
    set_str(L, "ports", ooo_ports_format(s->u[k].ports, buf, sizeof buf));
    set_int(L, "latency", s->u[k].latency);
    set_int(L, "occupancy", s->u[k].occupancy);
    lua_rawseti(L, -2, (lua_Integer)(k + 1));
  }
}

/* c:get("core.rob") -> value */
static int config_get(lua_State *L) {
  lw_config *u = check_config(L, 1);
  const char *path = luaL_checkstring(L, 2);
  char buf[160];
  if (!strcmp(path, "name")) {
    lua_pushstring(L, u->cfg.name);
    return 1;
  }
  if (!strncmp(path, "uops", 4)) {
    if (!path[4]) {
      lua_createtable(L, 0, IC_NUM);
      for (int k = 0; k < IC_NUM; k++) {
        push_uops(L, &u->cfg.uops[k]);
        lua_setfield(L, -2, insn_class_name(k));
      }
      return 1;
    }
    int cls = path[4] == '.' ? insn_class_from_name(path + 5) : -1;
    if (cls < 0) return luaL_error(L, "config:get: unknown key %s", path);
    push_uops(L, &u->cfg.uops[cls]);
    return 1;
  }
  void *f = NULL;
  const param_desc *d = param_find(path, &u->cfg, &f);
  if (!d) return luaL_error(L, "config:get: unknown key %s", path);
  switch (d->type) {
  case P_U32: lua_pushinteger(L, *(uint32_t *)f); break;
  case P_U64: lua_pushinteger(L, (lua_Integer) * (uint64_t *)f); break;
  case P_I32: lua_pushinteger(L, *(int32_t *)f); break;
  case P_DBL: lua_pushnumber(L, *(double *)f); break;
  case P_BOOL: lua_pushboolean(L, *(bool *)f); break;
  case P_ENUM: lua_pushstring(L, d->choices[*(int32_t *)f]); break;
  case P_CUSTOM:
    if (strstr(path, "ports.") == path) lua_pushstring(L, ooo_ports_format(*(uint32_t *)f, buf, sizeof buf));
    else lua_pushnil(L);
    break;
  case P_TABLE: return luaL_error(L, "config:get: %s is a section; ask for one of its keys", path);
  }
  return 1;
}

/* c:set("core.rob", 256) -> c (checked; raises on a bad key or value) */
static int config_set(lua_State *L) {
  lw_config *u = check_config(L, 1);
  const char *path = luaL_checkstring(L, 2);
  luaL_checkany(L, 3);
  /* build {a = {b = {c = value}}} as a Lua table and apply it */
  lua_newtable(L);
  int top = lua_gettop(L);
  lua_pushvalue(L, top);
  const char *p = path;
  for (;;) {
    const char *dot = strchr(p, '.');
    size_t n = dot ? (size_t)(dot - p) : strlen(p);
    if (!n) return luaL_error(L, "config:set: bad key %s", path);
    lua_pushlstring(L, p, n);
    if (!dot) {
      lua_pushvalue(L, 3);
      lua_settable(L, -3);
      break;
    }
    lua_newtable(L);
    lua_pushvalue(L, -1);
    lua_insert(L, -3);  /* t, sub, key, sub */
    lua_settable(L, -4); /* t[key] = sub */
    lua_remove(L, -2);
    p = dot + 1;
  }
  lua_settop(L, top);
  config_apply_lua(L, top, &u->cfg);
  lua_settop(L, 1);
  return 1;
}

/* c:apply{core = {rob = 256}} -> c */
static int config_apply(lua_State *L) {
  lw_config *u = check_config(L, 1);
  luaL_checktype(L, 2, LUA_TTABLE);
  config_apply_lua(L, 2, &u->cfg);
  lua_settop(L, 1);
  return 1;
}

static int config_copy(lua_State *L) {
  push_config(L, &check_config(L, 1)->cfg);
  return 1;
}

static int config_dump(lua_State *L) {
  lw_config *u = check_config(L, 1);
  lw_box *box = box_new(L, free, NULL);
  char *buf = NULL;
  size_t n = 0;
  FILE *f = open_memstream(&buf, &n);
  if (!f) return luaL_error(L, "out of memory");
  ooo_config_dump_lua(&u->cfg, f);
  fclose(f);
  box->p = buf;
  lua_pushlstring(L, buf, n);
  box_release(box);
  return 1;
}

static int config_hash(lua_State *L) {
  char hx[32];
  snprintf(hx, sizeof hx, "%016llx", (unsigned long long)ooo_config_hash(&check_config(L, 1)->cfg));
  lua_pushstring(L, hx);
  return 1;
}

static int config_name(lua_State *L) {
  lua_pushstring(L, check_config(L, 1)->cfg.name);
  return 1;
}

/* ---- intervention lists from Lua ----------------------------------------------------------------------- */

typedef struct lw_hook {
  int dummy; /* the function is the userdata's user value */
} lw_hook;

/* whatif.on_insn(function(pc, index, wrong_path, class, text) ... end) -> hook intervention */
static int lw_on_insn(lua_State *L) {
  luaL_checktype(L, 1, LUA_TFUNCTION);
  lw_hook *h = lua_newuserdatauv(L, sizeof *h, 1);
  h->dummy = 0;
  luaL_setmetatable(L, LW_HOOK);
  lua_pushvalue(L, 1);
  lua_setiuservalue(L, -2, 1);
  return 1;
}

/* Everything one replay call allocates (freed through a box). */
typedef struct lw_job {
  VEC(rp_interv) ivs;
  int hook_idx;           /* stack index of the hook function, 0 if none */
  rp_plan *plan;
} lw_job;

static void job_clear(lw_job *j) {
  for (size_t i = 0; i < j->ivs.n; i++) rp_interv_free(&j->ivs.a[i]);
  VEC_FREE(j->ivs);
  rp_plan_free(j->plan);
  j->plan = NULL;
}

static void job_free(void *p) {
  lw_job *j = p;
  if (!j) return;
  job_clear(j);
  free(j);
}

/* Add the interventions of the Lua value at idx to j. A hook's function is pushed on the stack
 * (its index kept in j). Returns false with err filled on a bad intervention. */
static bool job_add(lua_State *L, int idx, lw_job *j, wi_err *err) {
  idx = lua_absindex(L, idx);
  if (luaL_testudata(L, idx, LW_HOOK)) {
    if (j->hook_idx) {
      wi_fail(err, WI_EINVAL, "at most one on_insn hook per replay");
      return false;
    }
    lua_getiuservalue(L, idx, 1);
    j->hook_idx = lua_gettop(L);
    return true;
  }
  if (lua_type(L, idx) == LUA_TSTRING) {
    rp_interv *v;
    size_t n;
    if (interv_parse_list(lua_tostring(L, idx), "intervention", &v, &n, err)) return false;
    for (size_t i = 0; i < n; i++) VEC_PUSH(j->ivs, v[i]);
    free(v);
    return true;
  }
  if (!lua_istable(L, idx)) {
    wi_fail(err, WI_EINVAL, "an intervention must be a table like whatif.ras{repair=\"full\"}, a string, or "
            "whatif.on_insn(fn), not a %s", luaL_typename(L, idx));
    return false;
  }
  lua_getfield(L, idx, "kind");
  bool tagged = !lua_isnil(L, -1);
  lua_pop(L, 1);
  if (tagged) {
    rp_interv iv;
    if (interv_from_lua(L, idx, &iv, err)) return false;
    VEC_PUSH(j->ivs, iv);
    return true;
  }
  size_t n = lua_rawlen(L, idx);
  if (!n) {
    lua_pushnil(L);
    bool any = lua_next(L, idx) != 0;
    if (any) lua_pop(L, 2);
    if (any) {
      wi_fail(err, WI_EINVAL, "an intervention table needs a kind: build it with whatif.latency{...}, whatif.ras{...}, ...");
      return false;
    }
  }
  for (size_t i = 1; i <= n; i++) {
    lua_rawgeti(L, idx, (lua_Integer)i);
    int top = lua_gettop(L);
    bool ok = job_add(L, top, j, err);
    if (j->hook_idx == top + 1) { /* keep the hook function; drop the list item under it */
      lua_remove(L, top);
      j->hook_idx = top;
    } else {
      lua_pop(L, 1);
    }
    if (!ok) return false;
  }
  return true;
}

/* The hook's context during a replay. */
typedef struct lw_hook_ctx {
  lua_State *L;
  int fn;                 /* stack index of the function */
  bool failed;
  char msg[512];
} lw_hook_ctx;

static bool rawbool(lua_State *L, int t, const char *k) {
  lua_pushstring(L, k);
  lua_rawget(L, t);
  bool v = lua_toboolean(L, -1);
  lua_pop(L, 1);
  return v;
}

static bool rawint(lua_State *L, int t, const char *k, lua_Integer *out) {
  lua_pushstring(L, k);
  lua_rawget(L, t);
  int ok = 0;
  lua_Integer v = lua_tointegerx(L, -1, &ok);
  lua_pop(L, 1);
  if (ok) *out = v;
  return ok;
}

static void hook_fn(void *ctx, uint64_t index, const trace_insn *ti, const dec_insn *di, bool wrong_path,
                    ooo_mod *out) {
  lw_hook_ctx *h = ctx;
  if (h->failed) return;
  lua_State *L = h->L;
  if (!lua_checkstack(L, 8)) {
    h->failed = true;
    snprintf(h->msg, sizeof h->msg, "on_insn: Lua stack overflow");
    return;
  }
  lua_pushvalue(L, h->fn);
  lua_pushinteger(L, (lua_Integer)ti->pc);
  if (wrong_path) lua_pushnil(L);
  else lua_pushinteger(L, (lua_Integer)index);
  lua_pushboolean(L, wrong_path);
  lua_pushstring(L, di ? insn_class_name(di->cls) : "other");
  lua_pushstring(L, di ? di->text : "");
  if (lua_pcall(L, 5, 1, 0) != LUA_OK) {
    h->failed = true;
    snprintf(h->msg, sizeof h->msg, "%s", lua_tostring(L, -1) ? lua_tostring(L, -1) : "on_insn failed");
    lua_pop(L, 1);
    return;
  }
  int r = lua_gettop(L);
  if (lua_type(L, r) == LUA_TSTRING) {
    const char *s = lua_tostring(L, r);
    if (!strcmp(s, "drop")) out->drop = true;
    else if (!strcmp(s, "nop")) out->nop = true;
    else if (!strcmp(s, "perfect_branch")) out->perfect_branch = true;
    else if (!strcmp(s, "perfect_mem")) out->perfect_mem = true;
    else {
      h->failed = true;
      snprintf(h->msg, sizeof h->msg, "on_insn returned '%s' (expected nil, \"drop\", \"nop\", "
               "\"perfect_branch\", \"perfect_mem\" or a table)", s);
    }
  } else if (lua_type(L, r) == LUA_TTABLE) {
    out->drop |= rawbool(L, r, "drop");
    out->nop |= rawbool(L, r, "nop");
    out->perfect_branch |= rawbool(L, r, "perfect_branch");
    out->perfect_mem |= rawbool(L, r, "perfect_mem");
    lua_Integer v;
    if (rawint(L, r, "lat_add", &v)) out->lat_add += (int32_t)v;
    if (rawint(L, r, "lat_set", &v)) out->lat_set = (int32_t)v;
  } else if (!lua_isnil(L, r) && !(lua_isboolean(L, r) && !lua_toboolean(L, r))) {
    h->failed = true;
    snprintf(h->msg, sizeof h->msg, "on_insn returned a %s (expected nil, a string or a table)", luaL_typename(L, r));
  }
  lua_settop(L, r - 1);
}

/* ---- baselines ------------------------------------------------------------------------------------------- */

typedef struct lw_base {
  rp_base *b;
} lw_base;

static lw_base *check_base(lua_State *L, int idx) {
  lw_base *u = luaL_checkudata(L, idx, LW_BASE);
  if (!u->b) luaL_error(L, "the baseline was closed");
  return u;
}

static int base_gc(lua_State *L) {
  lw_base *u = luaL_checkudata(L, 1, LW_BASE);
  rp_base_free(u->b);
  u->b = NULL;
  return 0;
}

/* Create and run a baseline of the trace at ti with the configuration at ci (0: default) and
 * options at oi (0: none); pushes the baseline userdata. */
static lw_base *baseline_new(lua_State *L, int ti, int ci, int oi, bool dflt_ckpt) {
  lw_trace *t = check_trace(L, ti);
  ooo_config cfg;
  if (ci) {
    cfg = check_config(L, ci)->cfg;
  } else {
    wi_err err = {0};
    if (machine_load(NULL, &cfg, &err)) luaL_error(L, "%s", err.msg);
  }
  rp_base_opts o = {0};
  o.interval = opt_uint(L, oi, "interval", 0);
  o.max_snaps = (uint32_t)opt_uint(L, oi, "snapshots", 0);
  o.no_snapshots = !opt_bool(L, oi, "checkpoints", dflt_ckpt);
  o.stats_interval = opt_uint(L, oi, "stats_interval", 0);
  o.ooo_flags = opt_bool(L, oi, "sid_stats", false) ? OOO_SID_STATS : 0;
  lw_base *u = lua_newuserdatauv(L, sizeof *u, 1);
  u->b = NULL;
  luaL_setmetatable(L, LW_BASE);
  lua_pushvalue(L, ti); /* keeps the trace alive */
  lua_setiuservalue(L, -2, 1);
  wi_err err = {0};
  if (!(u->b = rp_base_new(t->t, &cfg, &o, &err))) luaL_error(L, "%s", err.msg);
  if (rp_base_run(u->b, &err)) luaL_error(L, "%s", err.msg);
  return u;
}

/* Argument positions of (trace [, config] [, opts]). */
static void run_args(lua_State *L, int *ci, int *oi) {
  *ci = luaL_testudata(L, 2, LW_CONFIG) ? 2 : 0;
  int o = *ci ? 3 : 2;
  if (lua_isnoneornil(L, o)) *oi = 0;
  else {
    luaL_checktype(L, o, LUA_TTABLE);
    *oi = o;
  }
  if (!*ci && !lua_isnoneornil(L, 2) && !lua_istable(L, 2))
    luaL_error(L, "argument 2 must be a configuration (whatif.config(...)) or an options table");
}

/* whatif.baseline(trace [, config] [, opts]) -> baseline (already run)
 * opts: interval, snapshots, checkpoints (false: none), stats_interval, sid_stats */
static int lw_baseline(lua_State *L) {
  int ci, oi;
  run_args(L, &ci, &oi);
  baseline_new(L, 1, ci, oi, true);
  return 1;
}

static int base_result(lua_State *L) {
  lw_base *u = check_base(L, 1);
  rp_result r;
  rp_result_from_model(rp_base_model(u->b), &r);
  r.wall_s = rp_base_seconds(u->b);
  push_result(L, &r);
  return 1;
}

static int base_intervals(lua_State *L) {
  lw_base *u = check_base(L, 1);
  size_t n;
  const rp_interval *iv = rp_base_intervals(u->b, &n);
  lua_createtable(L, (int)n, 0);
  for (size_t i = 0; i < n; i++) {
    const rp_interval *x = &iv[i];
    lua_createtable(L, 0, 12);
    set_int(L, "first_insn", x->first_insn);
    set_int(L, "insns", x->insns);
    set_int(L, "cycles", x->cycles);
    set_num(L, "ipc", x->cycles ? (double)x->insns / (double)x->cycles : 0.0);
    set_int(L, "wp_fetched", x->wp_fetched);
    set_int(L, "wp_dispatched", x->wp_dispatched);
    set_int(L, "wp_sched_cycles", x->wp_sched_cycles);
    set_num(L, "wp_sched_occupancy", x->cycles ? (double)x->wp_sched_cycles / (double)x->cycles : 0.0);
    set_int(L, "mispredicts", x->mispredicts);
    set_num(L, "backend_bound", x->slots ? (double)x->backend_slots / (double)x->slots : 0.0);
    lua_rawseti(L, -2, (lua_Integer)(i + 1));
  }
  return 1;
}

static int base_snapshots(lua_State *L) {
  lua_pushinteger(L, (lua_Integer)rp_base_n_snaps(check_base(L, 1)->b));
  return 1;
}

static int base_config(lua_State *L) {
  push_config(L, rp_base_config(check_base(L, 1)->b));
  return 1;
}

static int base_trace(lua_State *L) {
  check_base(L, 1);
  lua_getiuservalue(L, 1, 1);
  return 1;
}

/* b:sid_stats() -> per static instruction {pc, count, head_cycles, mispredicts, l1d_misses, ...}
 * (needs the baseline option sid_stats = true) */
static int base_sid_stats(lua_State *L) {
  lw_base *u = check_base(L, 1);
  const ooo_sid_stats *ss = ooo_get_sid_stats(rp_base_model(u->b));
  if (!ss) return luaL_error(L, "sid statistics were not collected (whatif.baseline(t, c, {sid_stats = true}))");
  const trace_t *t = rp_base_trace(u->b);
  uint32_t n = trace_get_info(t)->n_static;
  lua_createtable(L, (int)n, 0);
  for (uint32_t i = 0; i < n; i++) {
    push_pc_row(L, t, i);
    set_int(L, "committed", ss[i].count);
    set_int(L, "head_cycles", ss[i].head_cycles);
    set_int(L, "mispredicts", ss[i].mispredicts);
    set_int(L, "l1d_misses", ss[i].l1d_misses);
    set_int(L, "l2_misses", ss[i].l2_misses);
    set_int(L, "llc_misses", ss[i].llc_misses);
    lua_rawseti(L, -2, (lua_Integer)(i + 1));
  }
  return 1;
}

/* whatif.run(trace [, config] [, opts]) -> result, baseline (no snapshots unless opts.checkpoints);
 * with opts.stats_interval the result has .intervals */
static int lw_run(lua_State *L) {
  int ci, oi;
  run_args(L, &ci, &oi);
  baseline_new(L, 1, ci, oi, false);
  int bi = lua_gettop(L);
  lua_pushcfunction(L, base_result);
  lua_pushvalue(L, bi);
  lua_call(L, 1, 1);
  if (opt_uint(L, oi, "stats_interval", 0)) {
    lua_pushcfunction(L, base_intervals);
    lua_pushvalue(L, bi);
    lua_call(L, 1, 1);
    lua_setfield(L, -2, "intervals");
  }
  lua_pushvalue(L, bi);
  return 2;
}

/* ---- replays ---------------------------------------------------------------------------------------------- */

/* whatif.replay(baseline, interventions [, opts]) -> {baseline, intervened, delta, text, start_insn, seconds}
 * interventions: an intervention table, a string, whatif.on_insn(fn), or a list of them.
 * opts: checkpoint = true */
static int lw_replay(lua_State *L) {
  lw_base *u = check_base(L, 1);
  luaL_checkany(L, 2);
  bool ckpt = opt_bool(L, 3, "checkpoint", true);
  lw_job *j = xcalloc(1, sizeof *j);
  lw_box *box = box_new(L, job_free, j);
  wi_err err = {0};
  if (!job_add(L, 2, j, &err)) return luaL_error(L, "%s", err.msg);
  if (!j->ivs.n && !j->hook_idx) return luaL_error(L, "replay: no intervention given");
  if (!(j->plan = rp_plan_new(u->b, j->ivs.a, j->ivs.n, &err))) return luaL_error(L, "%s", err.msg);
  lw_hook_ctx hc = {L, j->hook_idx, false, ""};
  if (j->hook_idx) rp_plan_set_hook(j->plan, hook_fn, &hc);
  rp_result r;
  if (rp_replay(u->b, j->plan, NULL, ckpt, &r, &err)) return luaL_error(L, "%s", err.msg);
  if (hc.failed) { /* the message already names the hook's file:line */
    lua_pushstring(L, hc.msg);
    return lua_error(L);
  }
  rp_result base;
  rp_result_from_model(rp_base_model(u->b), &base);
  base.wall_s = rp_base_seconds(u->b);
  lua_createtable(L, 0, 6);
  lua_pushfstring(L, "%s%s%s", rp_plan_text(j->plan), j->hook_idx && j->ivs.n ? ", " : "",
                  j->hook_idx ? "on_insn(...)" : "");
  lua_setfield(L, -2, "text");
  push_result(L, &base);
  lua_setfield(L, -2, "baseline");
  push_result(L, &r);
  lua_setfield(L, -2, "intervened");
  push_delta(L, &base, &r);
  lua_setfield(L, -2, "delta");
  set_int(L, "start_insn", r.start_insn);
  set_num(L, "seconds", r.wall_s);
  box_release(box);
  return 1;
}

/* ---- sweeps ---------------------------------------------------------------------------------------------------- */

typedef struct lw_sweep {
  VEC(lw_job *) jobs;
  rp_plan **plans;       /* per job to run */
  size_t *run_idx;       /* job index of each plan */
  size_t n_run;
  rp_result *res;        /* per job */
  bool *done;            /* per job: has a result */
  bool *stored;          /* per job: already in the database */
  rp_store *st;
  int64_t run_id;
  const rp_result *base;
  wi_err store_err;
} lw_sweep;

static void sweep_free(void *p) {
  lw_sweep *s = p;
  if (!s) return;
  for (size_t i = 0; i < s->jobs.n; i++) job_free(s->jobs.a[i]);
  VEC_FREE(s->jobs);
  free(s->plans);
  free(s->run_idx);
  free(s->res);
  free(s->done);
  free(s->stored);
  if (s->st) {
    wi_err e;
    rp_store_close(s->st, &e);
  }
  free(s);
}

static wi_rc sweep_cb(void *ctx, size_t i, const rp_result *r, wi_err *err) {
  lw_sweep *s = ctx;
  size_t j = s->run_idx[i];
  s->res[j] = *r;
  s->done[j] = true;
  if (s->st) {
    rp_row row;
    memset(&row, 0, sizeof row);
    row.idx = (int64_t)j;
    row.interv = rp_plan_text(s->plans[i]);
    const lw_job *jb = s->jobs.a[j];
    if (jb->ivs.n == 1 && jb->ivs.a[0].m.kind == RPM_PC && !jb->ivs.a[0].m.sym) {
      row.has_pc = true;
      row.pc = jb->ivs.a[0].m.lo;
    }
    row.cycles = r->cycles;
    row.insns = r->insns;
    row.ipc = r->ipc;
    row.delta_cycles = (int64_t)r->cycles - (int64_t)s->base->cycles;
    row.delta_ipc = r->ipc - s->base->ipc;
    row.ipc_pct = s->base->ipc > 0 ? 100.0 * row.delta_ipc / s->base->ipc : 0.0;
    row.mpki = r->mpki;
    row.wp_fetched = r->wp_fetched;
    row.start_insn = r->start_insn;
    row.wall_s = r->wall_s;
    return rp_store_put(s->st, s->run_id, &row, err);
  }
  return WI_OK;
}

/* whatif.sweep(baseline, jobs [, opts]) or whatif.sweep(baseline, {per_pc = "latency{add=1}", ...})
 *   jobs: a list; each job is what whatif.replay takes (no on_insn hooks)
 *   opts: threads (1), checkpoint (true), per_pc, top, min_count (1), db (a results database: rows
 *         are stored, jobs already stored are skipped and come back with stored = true)
 * -> list of {index, text, pc, cycles, insns, ipc, delta_cycles, delta_ipc, ipc_pct, mpki,
 *             wp_fetched, start_insn, seconds} in job order */
static int lw_sweep_l(lua_State *L) {
  lw_base *u = check_base(L, 1);
  luaL_checktype(L, 2, LUA_TTABLE);
  int oi = lua_istable(L, 3) ? 3 : 2;
  const char *per_pc = opt_str(L, oi, "per_pc");
  unsigned threads = (unsigned)opt_uint(L, oi, "threads", 1);
  bool ckpt = opt_bool(L, oi, "checkpoint", true);
  uint64_t top = opt_uint(L, oi, "top", UINT64_MAX), min_count = opt_uint(L, oi, "min_count", 1);
  const char *db = opt_str(L, oi, "db");
  if (threads < 1 || threads > 256) return luaL_error(L, "sweep: threads must be in 1..256");
  lw_sweep *s = xcalloc(1, sizeof *s);
  lw_box *box = box_new(L, sweep_free, s);
  wi_err err = {0};
  const rp_base *b = u->b;
  const trace_t *t = rp_base_trace(b);
  if (per_pc) {
    rp_interv tmpl;
    if (interv_parse_one(per_pc, "per_pc", &tmpl, &err)) return luaL_error(L, "%s", err.msg);
    if (!rp_interv_is_template(&tmpl)) {
      rp_interv_free(&tmpl);
      return luaL_error(L, "sweep: per_pc wants a template such as \"latency{add=1}\"");
    }
    rp_interv *v;
    size_t n = rpc_per_pc(t, &tmpl, min_count, top, &v);
    rp_interv_free(&tmpl);
    for (size_t i = 0; i < n; i++) {
      lw_job *j = xcalloc(1, sizeof *j);
      VEC_PUSH(j->ivs, v[i]);
      VEC_PUSH(s->jobs, j);
    }
    free(v);
  } else {
    size_t n = lua_rawlen(L, 2);
    for (size_t i = 1; i <= n; i++) {
      lw_job *j = xcalloc(1, sizeof *j);
      VEC_PUSH(s->jobs, j);
      lua_rawgeti(L, 2, (lua_Integer)i);
      int top_before = lua_gettop(L);
      if (!job_add(L, -1, j, &err)) return luaL_error(L, "sweep job %d: %s", (int)i, err.msg);
      if (j->hook_idx) return luaL_error(L, "sweep job %d: on_insn hooks run only in whatif.replay", (int)i);
      lua_settop(L, top_before - 1);
    }
  }
  size_t n = s->jobs.n;
  s->plans = xcalloc(n ? n : 1, sizeof *s->plans);
  s->run_idx = xcalloc(n ? n : 1, sizeof *s->run_idx);
  s->res = xcalloc(n ? n : 1, sizeof *s->res);
  s->done = xcalloc(n ? n : 1, sizeof *s->done);
  s->stored = xcalloc(n ? n : 1, sizeof *s->stored);
  for (size_t i = 0; i < n; i++) {
    lw_job *j = s->jobs.a[i];
    if (!(j->plan = rp_plan_new(b, j->ivs.a, j->ivs.n, &err)))
      return luaL_error(L, "sweep job %d: %s", (int)(i + 1), err.msg);
  }
  rp_result base;
  rp_result_from_model(rp_base_model(b), &base);
  s->base = &base;
  if (db) {
    if (!(s->st = rp_store_open(db, &err))) return luaL_error(L, "%s", err.msg);
    const ooo_config *cfg = rp_base_config(b);
    rp_run_info ri = {trace_get_info(t)->content_hash, ooo_config_hash(cfg), WHATIF_VERSION, "lua whatif.sweep",
                      "", cfg->name, base.cycles, base.insns, base.ipc};
    if (rp_store_run(s->st, &ri, &s->run_id, &err)) return luaL_error(L, "%s", err.msg);
  }
  for (size_t i = 0; i < n; i++) {
    if (s->st && rp_store_has(s->st, s->run_id, rp_plan_text(s->jobs.a[i]->plan))) {
      s->stored[i] = true;
      continue;
    }
    s->plans[s->n_run] = s->jobs.a[i]->plan;
    s->run_idx[s->n_run++] = i;
  }
  rp_sweep_opts so = {threads, !ckpt, "sweep"};
  if (rp_sweep(b, s->plans, s->n_run, &so, sweep_cb, s, &err)) return luaL_error(L, "%s", err.msg);
  if (s->st && rp_store_flush(s->st, &err)) return luaL_error(L, "%s", err.msg);
  lua_createtable(L, (int)n, 0);
  for (size_t i = 0; i < n; i++) {
    const lw_job *j = s->jobs.a[i];
    lua_createtable(L, 0, 14);
    set_int(L, "index", i + 1);
    set_str(L, "text", rp_plan_text(j->plan));
    if (j->ivs.n == 1 && j->ivs.a[0].m.kind == RPM_PC && !j->ivs.a[0].m.sym) set_int(L, "pc", j->ivs.a[0].m.lo);
    if (s->stored[i]) {
      set_bool(L, "stored", true);
    } else if (s->done[i]) {
      const rp_result *r = &s->res[i];
      set_int(L, "cycles", r->cycles);
      set_int(L, "insns", r->insns);
      set_num(L, "ipc", r->ipc);
      lua_pushinteger(L, (lua_Integer)r->cycles - (lua_Integer)base.cycles);
      lua_setfield(L, -2, "delta_cycles");
      set_num(L, "delta_ipc", r->ipc - base.ipc);
      set_num(L, "ipc_pct", base.ipc > 0 ? 100.0 * (r->ipc - base.ipc) / base.ipc : 0.0);
      set_num(L, "mpki", r->mpki);
      set_int(L, "wp_fetched", r->wp_fetched);
      set_int(L, "return_mispredicts", r->ret_mispredicts);
      set_int(L, "start_insn", r->start_insn);
      set_num(L, "seconds", r->wall_s);
    }
    lua_rawseti(L, -2, (lua_Integer)(i + 1));
  }
  box_release(box);
  return 1;
}

/* ---- statistics (validate/stats.h) ------------------------------------------------------------------------------- */

/* Two equally long numeric arrays from the tables at ix, iy, in GC-managed buffers. */
static size_t get_xy(lua_State *L, int ix, int iy, double **x, double **y) {
  luaL_checktype(L, ix, LUA_TTABLE);
  size_t n = lua_rawlen(L, ix);
  if (iy) {
    luaL_checktype(L, iy, LUA_TTABLE);
    if (lua_rawlen(L, iy) != n) luaL_error(L, "x and y differ in length (%d and %d)", (int)n, (int)lua_rawlen(L, iy));
  }
  *x = lua_newuserdatauv(L, (n ? n : 1) * sizeof(double), 0);
  if (iy) *y = lua_newuserdatauv(L, (n ? n : 1) * sizeof(double), 0);
  for (size_t i = 0; i < n; i++) {
    lua_rawgeti(L, ix, (lua_Integer)(i + 1));
    int ok;
    (*x)[i] = lua_tonumberx(L, -1, &ok);
    if (!ok) luaL_error(L, "x[%d] is not a number", (int)(i + 1));
    lua_pop(L, 1);
    if (iy) {
      lua_rawgeti(L, iy, (lua_Integer)(i + 1));
      (*y)[i] = lua_tonumberx(L, -1, &ok);
      if (!ok) luaL_error(L, "y[%d] is not a number", (int)(i + 1));
      lua_pop(L, 1);
    }
  }
  return n;
}

static int st_kendall(lua_State *L) {
  double *x, *y;
  size_t n = get_xy(L, 1, 2, &x, &y);
  lua_pushnumber(L, val_kendall_tau_b(x, y, n));
  return 1;
}

static int st_spearman(lua_State *L) {
  double *x, *y;
  size_t n = get_xy(L, 1, 2, &x, &y);
  lua_pushnumber(L, val_spearman(x, y, n));
  return 1;
}

static int st_pearson(lua_State *L) {
  double *x, *y;
  size_t n = get_xy(L, 1, 2, &x, &y);
  lua_pushnumber(L, val_pearson(x, y, n));
  return 1;
}

static int st_ranks(lua_State *L) {
  double *x, *y = NULL;
  size_t n = get_xy(L, 1, 0, &x, &y);
  double *r = lua_newuserdatauv(L, (n ? n : 1) * sizeof *r, 0);
  val_ranks(x, n, r);
  lua_createtable(L, (int)n, 0);
  for (size_t i = 0; i < n; i++) {
    lua_pushnumber(L, r[i]);
    lua_rawseti(L, -2, (lua_Integer)(i + 1));
  }
  return 1;
}

static int st_topk(lua_State *L) {
  double *x, *y;
  size_t n = get_xy(L, 1, 2, &x, &y);
  lua_Integer k = luaL_checkinteger(L, 3);
  if (k < 0) return luaL_error(L, "topk: k must be non-negative");
  double p, r;
  val_topk(x, y, n, (size_t)k, &p, &r);
  lua_pushnumber(L, p);
  lua_pushnumber(L, r);
  return 2;
}

/* linear least squares y = a + b x -> a, b, r2 (for regression-style projections) */
static int st_linfit(lua_State *L) {
  double *x, *y;
  size_t n = get_xy(L, 1, 2, &x, &y);
  if (n < 2) return luaL_error(L, "linfit needs at least 2 points");
  double mx = 0, my = 0;
  for (size_t i = 0; i < n; i++) {
    mx += x[i];
    my += y[i];
  }
  mx /= (double)n;
  my /= (double)n;
  double sxx = 0, sxy = 0, syy = 0;
  for (size_t i = 0; i < n; i++) {
    sxx += (x[i] - mx) * (x[i] - mx);
    sxy += (x[i] - mx) * (y[i] - my);
    syy += (y[i] - my) * (y[i] - my);
  }
  double b = sxx > 0 ? sxy / sxx : 0.0, a = my - b * mx;
  lua_pushnumber(L, a);
  lua_pushnumber(L, b);
  lua_pushnumber(L, sxx > 0 && syy > 0 ? sxy * sxy / (sxx * syy) : NAN);
  return 3;
}

/* bootstrap("kendall"|"spearman"|"pearson", x, y [, {iters = 1000, alpha = 0.05, seed = 1}]) -> lo, hi, kept */
static int st_bootstrap(lua_State *L) {
  const char *name = luaL_checkstring(L, 1);
  val_stat_fn fn = !strcmp(name, "kendall")    ? val_kendall_tau_b
                   : !strcmp(name, "spearman") ? val_spearman
                   : !strcmp(name, "pearson")  ? val_pearson
                                               : NULL;
  if (!fn) return luaL_error(L, "bootstrap: unknown statistic '%s' (kendall, spearman, pearson)", name);
  double *x, *y;
  size_t n = get_xy(L, 2, 3, &x, &y);
  uint64_t iters = opt_uint(L, 4, "iters", 1000), seed = opt_uint(L, 4, "seed", 1);
  double alpha = 0.05;
  if (opt_field(L, 4, "alpha")) {
    alpha = lua_tonumber(L, -1);
    lua_pop(L, 1);
  }
  double lo, hi;
  size_t kept = val_bootstrap_ci(fn, x, y, n, (size_t)iters, alpha, seed, &lo, &hi);
  lua_pushnumber(L, lo);
  lua_pushnumber(L, hi);
  lua_pushinteger(L, (lua_Integer)kept);
  return 3;
}

/* ---- odds and ends ------------------------------------------------------------------------------------------------ */

typedef struct lw_list {
  rp_interv *v;
  size_t n;
} lw_list;

static void list_free(void *p) {
  lw_list *l = p;
  if (!l) return;
  interv_free_list(l->v, l->n);
  free(l);
}

/* whatif.parse(text) -> list of canonical intervention texts (raises on a bad one) */
static int lw_parse(lua_State *L) {
  const char *text = luaL_checkstring(L, 1);
  lw_list *l = xcalloc(1, sizeof *l);
  lw_box *box = box_new(L, list_free, l);
  wi_err err = {0};
  if (interv_parse_list(text, "intervention", &l->v, &l->n, &err)) return luaL_error(L, "%s", err.msg);
  lua_createtable(L, (int)l->n, 0);
  for (size_t i = 0; i < l->n; i++) {
    lua_pushstring(L, l->v[i].text);
    lua_rawseti(L, -2, (lua_Integer)(i + 1));
  }
  box_release(box);
  return 1;
}

/* whatif.trace_path(name) -> path of a bundled workload's recorded trace, or nil and a message.
 * Looks in $WHATIF_TRACES, then the build trees next to the executable and the source. */
static int lw_trace_path(lua_State *L) {
  const char *name = luaL_checkstring(L, 1);
  const char *env = getenv("WHATIF_TRACES");
  char cand[4][4096];
  int nc = 0;
  if (env) snprintf(cand[nc++], sizeof cand[0], "%s/%s.wtr", env, name);
  snprintf(cand[nc++], sizeof cand[0], "%s/traces/%s.wtr", cli_exe_dir(), name);
  snprintf(cand[nc++], sizeof cand[0], "%s/build/traces/%s.wtr", WHATIF_SOURCE_DIR, name);
  snprintf(cand[nc++], sizeof cand[0], "traces/%s.wtr", name);
  for (int i = 0; i < nc; i++)
    if (access(cand[i], R_OK) == 0) {
      lua_pushstring(L, cand[i]);
      return 1;
    }
  lua_pushnil(L);
  lua_pushfstring(L, "no recorded trace of workload '%s' (set WHATIF_TRACES to the directory of the .wtr files, "
                     "e.g. build/traces after `ctest -R record_workloads`)", name);
  return 2;
}

/* Helpers written in Lua: table printing for the examples. */
static const char *const k_lua_helpers =
  "local M = ...\n"
  "local function cell(v, fmt)\n"
  "  if fmt and v ~= nil then return string.format(fmt, v) end\n"
  "  if math.type(v) == 'integer' then return tostring(v) end\n"
  "  if type(v) == 'number' then return string.format('%.4g', v) end\n"
  "  return tostring(v == nil and '' or v)\n"
  "end\n"
  "-- whatif.table(rows, columns): columns = { {key, title, fmt}, ... } or {'key', ...}; returns text\n"
  "function M.table(rows, cols)\n"
  "  local c = {}\n"
  "  for i, col in ipairs(cols) do\n"
  "    if type(col) == 'string' then col = {col} end\n"
  "    c[i] = {key = col[1], title = col[2] or col[1], fmt = col[3]}\n"
  "  end\n"
  "  local cells, w = {}, {}\n"
  "  for i, col in ipairs(c) do w[i] = #col.title end\n"
  "  for r, row in ipairs(rows) do\n"
  "    cells[r] = {}\n"
  "    for i, col in ipairs(c) do\n"
  "      local s = cell(row[col.key], col.fmt)\n"
  "      cells[r][i] = s\n"
  "      if #s > w[i] then w[i] = #s end\n"
  "    end\n"
  "  end\n"
  "  local out = {}\n"
  "  local function line(vals, left)\n"
  "    local parts = {}\n"
  "    for i, s in ipairs(vals) do\n"
  "      local pad = string.rep(' ', w[i] - #s)\n"
  "      parts[i] = (i == 1 and left) and (s .. pad) or (pad .. s)\n"
  "    end\n"
  "    out[#out + 1] = table.concat(parts, '  ')\n"
  "  end\n"
  "  local titles = {}\n"
  "  for i, col in ipairs(c) do titles[i] = col.title end\n"
  "  line(titles, true)\n"
  "  local rule = {}\n"
  "  for i = 1, #c do rule[i] = string.rep('-', w[i]) end\n"
  "  out[#out + 1] = table.concat(rule, '  ')\n"
  "  for r = 1, #cells do line(cells[r], true) end\n"
  "  return table.concat(out, '\\n')\n"
  "end\n"
  "function M.print_table(rows, cols) print(M.table(rows, cols)) end\n";

static const luaL_Reg k_trace_methods[] = {
  {"info", trace_info_l}, {"pcs", trace_pcs}, {"sym", trace_sym_l}, {"pc", trace_pc_l},
  {"insn", trace_insn_l}, {"close", trace_gc}, {NULL, NULL},
};

static const luaL_Reg k_config_methods[] = {
  {"get", config_get}, {"set", config_set}, {"apply", config_apply}, {"copy", config_copy},
  {"dump", config_dump}, {"hash", config_hash}, {"name", config_name}, {NULL, NULL},
};

static const luaL_Reg k_base_methods[] = {
  {"result", base_result}, {"intervals", base_intervals}, {"snapshots", base_snapshots},
  {"config", base_config}, {"trace", base_trace}, {"sid_stats", base_sid_stats},
  {"close", base_gc}, {NULL, NULL},
};

static const luaL_Reg k_funcs[] = {
  {"open", lw_open}, {"config", lw_config_new}, {"baseline", lw_baseline}, {"run", lw_run},
  {"replay", lw_replay}, {"sweep", lw_sweep_l}, {"on_insn", lw_on_insn}, {"parse", lw_parse},
  {"trace_path", lw_trace_path}, {NULL, NULL},
};

static const luaL_Reg k_stats[] = {
  {"kendall", st_kendall}, {"spearman", st_spearman}, {"pearson", st_pearson}, {"ranks", st_ranks},
  {"topk", st_topk}, {"bootstrap", st_bootstrap}, {"linfit", st_linfit}, {NULL, NULL},
};

static int tostring_trace(lua_State *L) {
  lw_trace *u = luaL_checkudata(L, 1, LW_TRACE);
  lua_getiuservalue(L, 1, 1);
  lua_pushfstring(L, "whatif.trace(%s%s)", lua_tostring(L, -1), u->t ? "" : ", closed");
  return 1;
}

static int tostring_config(lua_State *L) {
  lua_pushfstring(L, "whatif.config(%s)", check_config(L, 1)->cfg.name);
  return 1;
}

static void new_class(lua_State *L, const char *name, const luaL_Reg *methods, lua_CFunction gc,
                      lua_CFunction tostr) {
  luaL_newmetatable(L, name);
  lua_newtable(L);
  if (methods) luaL_setfuncs(L, methods, 0);
  lua_setfield(L, -2, "__index");
  if (gc) {
    lua_pushcfunction(L, gc);
    lua_setfield(L, -2, "__gc");
    lua_pushcfunction(L, gc);
    lua_setfield(L, -2, "__close");
  }
  if (tostr) {
    lua_pushcfunction(L, tostr);
    lua_setfield(L, -2, "__tostring");
  }
  lua_pop(L, 1);
}

int luaopen_whatif(lua_State *L) {
  new_class(L, LW_TRACE, k_trace_methods, trace_gc, tostring_trace);
  new_class(L, LW_CONFIG, k_config_methods, NULL, tostring_config);
  new_class(L, LW_BASE, k_base_methods, base_gc, NULL);
  new_class(L, LW_HOOK, NULL, NULL, NULL);
  new_class(L, LW_BOX, NULL, box_gc, NULL);
  luaL_newlib(L, k_funcs);
  luaL_newlib(L, k_stats);
  lua_setfield(L, -2, "stats");
  /* Intervention constructors: all under whatif.iv, and directly on the module except
   * `config`, whose name the configuration loader whatif.config has (whatif.config_edit). */
  lua_newtable(L);
  interv_push_constructors(L, -1);
  lua_getfield(L, -1, "config");
  lua_setfield(L, -3, "config_edit");
  lua_setfield(L, -2, "iv");
  lua_getfield(L, -1, "config");
  interv_push_constructors(L, -2);
  lua_setfield(L, -2, "config");
  lua_pushstring(L, WHATIF_VERSION);
  lua_setfield(L, -2, "version");
  if (luaL_loadbufferx(L, k_lua_helpers, strlen(k_lua_helpers), "=whatif", "t") != LUA_OK) return lua_error(L);
  lua_pushvalue(L, -2);
  lua_call(L, 1, 0);
  return 1;
}

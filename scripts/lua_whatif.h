/* lua_whatif.h — the `whatif` Lua module: traces, machine configurations, baselines, replays
 * under interventions, sweeps, custom per-instruction hooks and statistics, as Lua values.
 *
 * Loaded by `whatif script FILE.lua` (preloaded) and by the system lua5.4 as a C module
 * (`require "whatif"` finds whatif.so on package.cpath). The reference is
 * scripts/examples/README.md; in short:
 *   local w = require "whatif"
 *   local t = w.open("ports.wtr")                     -- a trace
 *   local c = w.config("golden_cove")                 -- a configuration (c:get/c:set/c:apply)
 *   local b = w.baseline(t, c)                        -- the baseline run, with snapshots
 *   local r = w.replay(b, {w.port{name = "P5", add = 1}})   -- exact deltas
 *   local rows = w.sweep(b, {per_pc = "latency{add=1}", top = 20, threads = 2})
 * C resources live in userdata with __gc and __close; no malloc'd memory is held across a Lua
 * error. */
#ifndef WHATIF_LUA_WHATIF_H
#define WHATIF_LUA_WHATIF_H

struct lua_State;

/* The module's entry point (also what `require "whatif"` calls in whatif.so). */
int luaopen_whatif(struct lua_State *L);

#endif

-- wp_throttle.lua — throttle wrong-path fetch after a misprediction.
--
-- Wrong-path instructions occupy fetch, rename and scheduler slots and pollute the RAS and
-- caches, but also prefetch. Policies: normal (fetch down the predicted path), off (stall at a
-- mispredicted branch until it resolves), cap N (at most N wrong-path instructions), confidence
-- (a JRS confidence estimator stops fetch after low-confidence branches).
--
-- usage: whatif script wp_throttle.lua [TRACE]   (default: the bundled recursion trace)
local w = require "whatif"

local path = arg[1] or assert(w.trace_path("recursion"))
local t = w.open(path)
local b = w.baseline(t, w.config())
local base = b:result()

local rows = {{what = "baseline", wp = base.wp_fetched, wpx = base.wp_executed, mpki = base.mpki,
  ret = base.return_mispredicts, cycles = base.cycles, ipc = base.ipc, ipc_pct = 0,
  bad = base.topdown.bad_speculation}}
for _, iv in ipairs{
  w.wrong_path{policy = "off"}, w.wrong_path{cap = 4}, w.wrong_path{cap = 16}, w.wrong_path{cap = 64},
  w.wrong_path{policy = "confidence"}, w.wrong_path{policy = "confidence", conf_threshold = 4},
} do
  local r = w.replay(b, iv)
  local x = r.intervened
  rows[#rows + 1] = {what = r.text, wp = x.wp_fetched, wpx = x.wp_executed, mpki = x.mpki,
    ret = x.return_mispredicts, cycles = x.cycles, ipc = x.ipc, ipc_pct = r.delta.ipc_pct,
    bad = x.topdown.bad_speculation}
end

print(string.format("trace %s: %d instructions\n", path, base.insns))
w.print_table(rows, {
  {"what", "wrong path"}, {"wp", "wp fetched"}, {"wpx", "wp executed"}, {"mpki", "branch MPKI", "%.2f"},
  {"ret", "return mispred"}, {"cycles"}, {"ipc", "IPC", "%.4f"}, {"ipc_pct", "IPC change", "%+.2f%%"},
  {"bad", "bad speculation", "%.3f"},
})

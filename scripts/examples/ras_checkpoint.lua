-- ras_checkpoint.lua — checkpoint the return-address stack: repair policies and depths.
--
-- On recursion (deep, data-dependent recursion), wrong-path calls and returns corrupt the RAS; the
-- corrupted entries then mispredict returns on the correct path, which cause more wrong paths (a
-- self-reinforcing cascade). Repair "full" checkpoints the whole stack at every branch and
-- restores it on a squash; "tos" restores the top pointer and entry; "none" restores nothing.
--
-- usage: whatif script ras_checkpoint.lua [TRACE]   (default: the bundled recursion trace)
local w = require "whatif"

local path = arg[1] or assert(w.trace_path("recursion"))
local t = w.open(path)
local c = w.config()
local b = w.baseline(t, c)
local base = b:result()

local rows = {{what = "baseline (" .. c:get("bpred.ras_repair") .. ", depth " .. c:get("bpred.ras_depth") .. ")",
  ret = base.return_mispredicts, ret_mpki = base.return_mpki, wp = base.wp_fetched,
  cycles = base.cycles, ipc = base.ipc, ipc_pct = 0}}
for _, iv in ipairs{
  w.ras{repair = "none"}, w.ras{repair = "tos"}, w.ras{repair = "full"},
  w.ras{repair = "full", depth = 64}, w.ras{repair = "none", depth = 64},
} do
  local r = w.replay(b, iv)
  rows[#rows + 1] = {what = r.text, ret = r.intervened.return_mispredicts, ret_mpki = r.intervened.return_mpki,
    wp = r.intervened.wp_fetched, cycles = r.intervened.cycles, ipc = r.intervened.ipc, ipc_pct = r.delta.ipc_pct}
end

print(string.format("trace %s: %d instructions\n", path, base.insns))
w.print_table(rows, {
  {"what", "RAS"}, {"ret", "return mispredicts"}, {"ret_mpki", "return MPKI", "%.3f"},
  {"wp", "wrong-path fetched"}, {"cycles"}, {"ipc", "IPC", "%.4f"}, {"ipc_pct", "IPC change", "%+.2f%%"},
})

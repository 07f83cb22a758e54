-- validate_fix.lua — check a trace-only projection against a replay.
--
-- A trace-only analysis projects the benefit of a fix by regression: over intervals of the
-- baseline it fits IPC against the occupancy of the scheduler by wrong-path instructions, and
-- reads the IPC the fit predicts at zero occupancy as the gain of removing wrong-path work. Here
-- the same fix is replayed exactly (wrong_path{policy="off"}: fetch stalls at a mispredicted
-- branch, so no wrong-path instruction ever occupies the scheduler), and the two gains compared.
--
-- usage: whatif script validate_fix.lua [TRACE [INTERVAL]]   (default: recursion, 50000)
local w = require "whatif"

local path = arg[1] or assert(w.trace_path("recursion"))
local interval = tonumber(arg[2] or 50000)
local t = w.open(path)
local b = w.baseline(t, w.config(), {stats_interval = interval})
local base = b:result()

-- The regression a trace-only analysis would make.
local x, y, insns = {}, {}, 0
local iv = b:intervals()
for _, i in ipairs(iv) do
  if i.insns >= interval / 2 then -- skip the short tail
    x[#x + 1], y[#y + 1] = i.wp_sched_occupancy, i.ipc
    insns = insns + i.insns
  end
end
local a, slope, r2 = w.stats.linfit(x, y)
local cycles_pred = 0
for _, i in ipairs(iv) do
  if i.insns >= interval / 2 then cycles_pred = cycles_pred + i.insns / a end
end
local cycles_fit = 0
for k, i in ipairs(iv) do if i.insns >= interval / 2 then cycles_fit = cycles_fit + i.cycles end end
local predicted = 100 * (cycles_fit / cycles_pred - 1)

-- The replay.
local r = w.replay(b, w.wrong_path{policy = "off"})
local replayed = r.delta.ipc_pct

print(string.format("trace %s: %d instructions in %d intervals of %d\n", path, base.insns, #iv, interval))
local show = {}
for k = 1, math.min(#iv, 8) do
  local i = iv[k]
  show[k] = {n = k, first = i.first_insn, ipc = i.ipc, occ = i.wp_sched_occupancy, wpd = i.wp_dispatched,
    mp = i.mispredicts}
end
w.print_table(show, {{"n", "interval"}, {"first", "first insn"}, {"ipc", "IPC", "%.3f"},
  {"occ", "wp scheduler occupancy", "%.2f"}, {"wpd", "wp dispatched"}, {"mp", "mispredicts"}})
if #iv > 8 then print(string.format("... %d more intervals", #iv - 8)) end
print(string.format("\nfit: IPC = %.4f %+.4f x occupancy   (r^2 = %.3f over %d intervals)", a, slope, r2, #x))
print("")
w.print_table({
  {what = "regression projection (occupancy -> 0)", gain = predicted},
  {what = "replayed: wrong_path{policy=\"off\"}", gain = replayed},
}, {{"what", "estimate of the fix"}, {"gain", "IPC gain", "%+.2f%%"}})
print(string.format("\nthe projection is off by %+.2f points of IPC gain (%s)", predicted - replayed,
  math.abs(predicted - replayed) < 1 and "agrees" or (predicted > replayed and "overestimates" or "underestimates")))

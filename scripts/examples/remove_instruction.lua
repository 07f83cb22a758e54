-- remove_instruction.lua — what if an instruction were not there?
--
-- On fma_chain, the loop's critical path is a chain of FMAs through one accumulator. Removing the
-- FMA (mode "drop": as if it never existed, its consumers read the previous producer) should save
-- about the FMA latency per iteration; "nop" keeps its front-end slot but does no work. Removing
-- an instruction off the chain (one of the independent loads or the loop counter) changes little.
--
-- usage: whatif script remove_instruction.lua [TRACE]   (default: the bundled fma_chain trace)
local w = require "whatif"

local path = arg[1] or assert(w.trace_path("fma_chain"))
local t = w.open(path)
local b = w.baseline(t, w.config())
local base = b:result()

-- The hottest instructions of the hottest function: the FMA and its neighbours.
local pcs = t:pcs{top = 40}
local fma, others = nil, {}
for _, p in ipairs(pcs) do
  if p.class == "fma" and not fma then fma = p end
end
assert(fma, "no FMA among the hottest instructions of " .. path)
for _, p in ipairs(pcs) do
  if p.func == fma.func and p.pc ~= fma.pc and #others < 3 then others[#others + 1] = p end
end

local rows = {}
local function try(p, mode)
  local r = w.replay(b, w.remove{pc = p.pc, mode = mode})
  rows[#rows + 1] = {
    what = p.name, text = p.text, mode = mode, count = p.count,
    cycles = r.intervened.cycles, delta = r.delta.cycles,
    per_exec = r.delta.cycles / p.count, ipc_pct = r.delta.ipc_pct,
  }
end
try(fma, "drop")
try(fma, "nop")
for _, p in ipairs(others) do try(p, "drop") end

print(string.format("trace %s: %d instructions, %d cycles, IPC %.3f; FMA latency %d cycles\n", path,
  base.insns, base.cycles, base.ipc, b:config():get("uops.fma")[1].latency))
w.print_table(rows, {
  {"what", "instruction"}, {"text", "disassembly"}, {"mode"}, {"count", "executions"},
  {"cycles"}, {"delta", "delta cycles"}, {"per_exec", "cycles/execution", "%+.2f"},
  {"ipc_pct", "IPC change", "%+.2f%%"},
})

-- widen_port.lua — add an execution unit to a port (or a new port for a class).
--
-- On ports, the loop's cross-lane permutes (vpermd, class permute) can only use port 5; the other
-- work fits elsewhere. Widening the pressured port — a copy of it serving the same micro-ops — or
-- adding a port for permutes should help there, and change nothing on fma_chain, whose critical
-- path is FMA latency.
--
-- usage: whatif script widen_port.lua [TRACE [OTHER_TRACE]]   (default: ports and fma_chain)
local w = require "whatif"

local path = arg[1] or assert(w.trace_path("ports"))
local other = arg[2] or w.trace_path("fma_chain")
local c = w.config()

-- Which ports do the hot classes of the trace use?
local t = w.open(path)
local classes, ports, seen = {}, {}, {}
for _, p in ipairs(t:pcs{top = 24}) do
  if not seen[p.class] then
    seen[p.class] = true
    local u = c:get("uops." .. p.class)
    if #u > 0 then
      classes[#classes + 1] = p.class
      for port in u[1].ports:gmatch("P%d+") do ports[port] = true end
    end
  end
end
local plist = {}
for port in pairs(ports) do plist[#plist + 1] = port end
table.sort(plist, function(a, b) return tonumber(a:sub(2)) < tonumber(b:sub(2)) end)

local ivs = {}
for _, port in ipairs(plist) do ivs[#ivs + 1] = w.port{name = port, add = 1} end
ivs[#ivs + 1] = w.port{classes = {"permute"}}

local rows = {}
local function run(trace_path, list)
  local b = w.baseline(w.open(trace_path), c, {checkpoints = false})
  for _, iv in ipairs(list) do
    local r = w.replay(b, iv)
    rows[#rows + 1] = {trace = trace_path:match("([^/]+)%.wtr$") or trace_path, what = r.text,
      base = r.baseline.cycles, cycles = r.intervened.cycles, delta = r.delta.cycles, ipc_pct = r.delta.ipc_pct,
      core = r.intervened.topdown.core_bound}
  end
end
run(path, ivs)
if other then run(other, {ivs[#ivs], w.port{name = "P5", add = 1}}) end

print("hot classes of " .. path .. ": " .. table.concat(classes, ", ") .. " (ports " .. table.concat(plist, " ") .. ")\n")
w.print_table(rows, {
  {"trace"}, {"what", "intervention"}, {"base", "baseline cycles"}, {"cycles"}, {"delta", "delta cycles"},
  {"ipc_pct", "IPC change", "%+.2f%%"}, {"core", "core bound", "%.3f"},
})

-- golden_cove.lua — Intel Golden Cove core (Alder Lake P-core, Sapphire Rapids), the default
-- machine. Units: cycles at the core clock, entries, bytes. Sources, cited per value:
--   [OPT]  Intel 64 and IA-32 Architectures Optimization Reference Manual (Golden Cove chapter)
--   [AD21] Intel Architecture Day 2021 (Golden Cove disclosures)
--   [CC]   Chips and Cheese, "Popping the Hood on Golden Cove" (2021) and
--          "Sapphire Rapids: Golden Cove Hits Servers" (2023) — measured values
--   [MCA]  llvm-mca 19, -mcpu=sapphirerapids scheduling model
--   [UOPS] uops.info, Alder Lake-P measurements
--   [EST]  an estimate where no source publishes the value (stated as such)
-- `whatif config golden_cove --doc` documents every key; `whatif config golden_cove` prints the
-- resolved table. Every value here equals the built-in default (ooo_config_default).
return {
  name = "golden_cove",
  frontend = {
    fetch_width = 8,            -- uop cache delivers 8 uops/cycle; legacy decode 6 [AD21]
    fetch_bytes = 64,           -- uop-cache line per cycle; legacy decode reads 32 B [OPT]
    fetch_taken = 1,            -- one taken branch per fetch cycle [EST, CC: zero-bubble BTB
                                -- covers small loops only]
    fetch_queue = 144,          -- instruction decode queue (IDQ) 144 uops per thread [AD21]
    fetch_to_rename = 9,        -- fetch -> allocate depth with a uop-cache hit [EST]
    mispredict_penalty = 7,     -- resolution -> refetch; with fetch_to_rename and the issue
                                -- stage gives the ~17-cycle penalty measured by [CC]
    machine_clear_penalty = 10, -- memory-ordering nuke: refetch after the flush [EST]
    btb_miss_penalty = 6,       -- decoder redirect of a taken branch missing the BTB [EST]
    branch_checkpoints = 128,   -- branch order buffer entries [EST]
    uop_cache_lines = 256,      -- decoded uop cache: 4 K uops ~ 256 64-byte lines [AD21]
    wrong_path = "normal",      -- fetch follows the prediction
    wrong_path_cap = 64,        -- only with wrong_path = "cap"
    perfect_branch = false,
  },
  bpred = {
    type = "tage",              -- Intel does not publish its predictor; TAGE-class is the
                                -- accepted model for Golden Cove-era cores [CC]
    bimodal_bits = 14,          -- 16 K-entry base table [EST]
    gshare_bits = 16, gshare_hist = 16,      -- only with type = "gshare"
    tage_tables = 12, tage_bits = 11, tage_tag_bits = 12, -- ~64 KiB of tagged state [EST]
    tage_min_hist = 4, tage_max_hist = 640,  -- geometric history lengths [EST]
    tage_u_reset = 18,
    btb_entries = 12288, btb_ways = 12,      -- 12 K-entry L2 BTB [AD21, CC]
    ind_bits = 12, ind_hist = 16,            -- indirect target array [EST]
    ras_depth = 16,             -- return stack buffer [OPT: 16 entries on earlier cores]
    ras_repair = "tos",         -- top-of-stack pointer + entry checkpoint [EST]
    conf_bits = 12, conf_max = 15, conf_threshold = 15, -- JRS confidence (wrong_path = "confidence")
    conf_gate = 5,              -- pipeline gating threshold N (Manne et al., ISCA 1998): fetch
                                -- stops while more than 5 low-confidence branches are unresolved
                                -- [EST: 1-2.5% IPC for about half the wrong-path work]
  },
  core = {
    rename_width = 6,           -- 6-wide allocate/rename [AD21]
    commit_width = 8,           -- 8-wide retire [AD21]
    commit_latency = 1,
    rob = 512,                  -- reorder buffer [AD21]
    sched_math = 97,            -- unified integer/FP scheduler [AD21, CC]
    sched_load = 70,            -- load scheduler [EST, CC measured ~70]
    sched_store = 38,           -- store-address/store-data scheduler [EST]
    unified_sched = false,
    lq = 192,                   -- load buffer [AD21]
    sq = 114,                   -- store buffer [AD21]
    int_prf = 280,              -- integer register file [CC]
    vec_prf = 332,              -- vector register file [CC]
    move_elim = true,           -- move elimination [OPT]
    zero_idiom = true,          -- zero idioms [OPT]
    stack_engine = true,        -- stack pointer tracker [OPT]
    agu_latency = 1, std_latency = 1,
    stlf_latency = 5,           -- store-to-load forwarding ~5 cycles [CC]
    stlf_fail_penalty = 12,     -- failed forwarding ~12+ cycles [OPT, EST]
    store_drain_width = 2,      -- two stores per cycle to L1 [AD21]
    mem_dep = "predict",        -- memory disambiguation predictor [OPT]
    mdp_bits = 10, mdp_reset = 32768,       -- load-wait table, cleared periodically [EST]
    rep_bytes_per_cycle = 32,   -- fast-string copy bandwidth (ERMSB) [OPT: 32-64 B/cycle]
    rep_startup = 24,           -- rep movs/stos startup [OPT: ~20-35 cycles]
  },
  ports = {
    count = 12,                 -- ports 0-11 [AD21]
    load = "P2 P3 P11",         -- three load AGUs [AD21]
    sta = "P7 P8",              -- two store-address AGUs [AD21]
    std = "P4 P9",              -- two store-data ports [AD21]
  },
  -- Micro-ops of each operation class: a dependent chain; latency in cycles from issue to
  -- result; occupancy > 1 = unpipelined unit. Memory operands add load / store micro-ops.
  uops = {
    nop = {},                                                         -- eliminated
    zero = { {ports = "P0 P1 P5 P6 P10", latency = 1} },              -- only if core.zero_idiom = false
    mov = { {ports = "P0 P1 P5 P6 P10", latency = 1} },               -- only if not eliminated
    load = {},                                                        -- the load micro-op only
    store = {},                                                       -- store-address + store-data only
    alu = { {ports = "P0 P1 P5 P6 P10", latency = 1} },               -- add/sub/logic: 5 ALUs [AD21, MCA]
    shift = { {ports = "P0 P6", latency = 1} },                       -- [MCA, UOPS]
    bitcnt = { {ports = "P1", latency = 3} },                         -- popcnt/lzcnt/tzcnt [MCA]
    mul = { {ports = "P1", latency = 3} },                            -- imul r64 [MCA, UOPS]
    div = { {ports = "P1", latency = 14, occupancy = 6} },            -- div r64 14-18 cycles [UOPS, MCA 18]
    lea = { {ports = "P0 P1 P5 P6 P10", latency = 1} },               -- simple LEA on all ALUs [AD21]
    branch = { {ports = "P0 P6", latency = 1} },                      -- two branch units [AD21]
    vec_alu = { {ports = "P0 P1 P5", latency = 1} },                  -- [MCA]
    vec_mul = { {ports = "P0 P1", latency = 5} },                     -- vpmullw/vpmaddwd [MCA]
    fp_add = { {ports = "P1 P5", latency = 2} },                      -- fast FADD units [CC]
    fp_mul = { {ports = "P0 P1", latency = 4} },                      -- [MCA]
    fma = { {ports = "P0 P1", latency = 4} },                         -- FMA ymm 4 cycles [MCA]
    fp_div = { {ports = "P0", latency = 13, occupancy = 8} },         -- vdivps ymm [UOPS]
    shuffle = { {ports = "P1 P5", latency = 1} },                     -- in-lane: vpshufb, punpck [MCA, UOPS]
    permute = { {ports = "P5", latency = 3} },                        -- cross-lane: vpermd, vperm2i128,
                                                                      -- vinserti128, ymm broadcast [MCA, UOPS]
    convert = { {ports = "P0 P1", latency = 4} },                     -- cvt* [MCA]
    string = { {ports = "P0 P1 P5 P6 P10", latency = 1} },            -- + rep_startup for rep runs
    gather = { {ports = "P0 P5", latency = 1}, {ports = "P0 P5", latency = 1} }, -- + element loads
    atomic = { {ports = "P0 P1 P5 P6 P10", latency = 18} },           -- lock add/xchg ~18 cycles [UOPS]
    serial = { {ports = "P0 P1 P5 P6 P10", latency = 20} },           -- cpuid/syscall/fences [EST]
    x87 = { {ports = "P0 P1 P5", latency = 4} },                      -- [MCA]
    other = { {ports = "P0 P1 P5 P6 P10", latency = 2} },             -- microcoded, rare [EST]
  },
  -- The memory hierarchy: the defaults of uarch/memsys.c (sources there).
  mem = {
    l1i = { size = 32768, ways = 8, line = 64, latency = 4, mshrs = 16, bandwidth = 1,
            replacement = "lru", prefetcher = "next_line", pf_degree = 2, inclusive = false },
    l1d = { size = 49152, ways = 12, line = 64, latency = 5, mshrs = 16, bandwidth = 5,
            replacement = "lru", prefetcher = "ip_stride", pf_degree = 2, inclusive = false },
    l2 = { size = 2097152, ways = 16, line = 64, latency = 16, mshrs = 48, bandwidth = 1,
           replacement = "lru", prefetcher = "stream", pf_degree = 8, inclusive = false },
    llc = { size = 1966080, ways = 15, line = 64, latency = 100, mshrs = 64, bandwidth = 1,
            replacement = "lru", prefetcher = "none", pf_degree = 0, inclusive = false },
    itlb = { entries = 256, ways = 8, latency = 0 },
    dtlb = { entries = 96, ways = 6, latency = 0 },
    stlb = { entries = 2048, ways = 16, latency = 7 },
    page_bytes = 4096,
    walk_latency = 30,
    dram = { channels = 4, banks = 32, row_bytes = 4096, t_cas = 50, t_rcd = 49, t_rp = 49,
             t_burst = 10, queue = 32, base_latency = 120 },
  },
}

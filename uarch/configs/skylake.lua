-- skylake.lua — Intel Skylake client core (Skylake-S, 2015), 4-wide. Cycles at a 4.0 GHz clock.
-- Sources, cited per value:
--   [OPT]  Intel 64 and IA-32 Architectures Optimization Reference Manual (Skylake chapter)
--   [WC]   WikiChip, "Skylake (client) - Microarchitectures - Intel"
--   [7CPU] 7-cpu.com, Intel Skylake measurements
--   [UOPS] uops.info, Skylake measurements
--   [MCA]  llvm-mca 19, -mcpu=skylake scheduling model
--   [EST]  an estimate where no source publishes the value
-- Keys not given here keep the Golden Cove values (base), which is harmless only for keys
-- that do not differ; every sizing and timing key of the core is set below.
return {
  base = "golden_cove",
  name = "skylake",
  frontend = {
    fetch_width = 6,            -- DSB delivers 6 uops/cycle; legacy decode 4 [OPT]
    fetch_bytes = 32,           -- DSB 32 B window; legacy decode 16 B/cycle [OPT]
    fetch_taken = 1,
    fetch_queue = 64,           -- IDQ 64 uops per thread [OPT]
    fetch_to_rename = 8,        -- [EST]
    mispredict_penalty = 7,     -- ~16-17 cycles in total [7CPU]
    machine_clear_penalty = 10, -- [EST]
    btb_miss_penalty = 6,       -- [EST]
    branch_checkpoints = 48,    -- branch order buffer 48 entries [WC]
    uop_cache_lines = 128,      -- DSB 1.5 K uops ~ 128 lines [OPT]
  },
  bpred = {
    type = "tage",
    bimodal_bits = 13,
    tage_tables = 8, tage_bits = 10, tage_tag_bits = 11, -- smaller than Golden Cove [EST]
    tage_min_hist = 4, tage_max_hist = 300,
    btb_entries = 4096, btb_ways = 8,        -- ~4 K-entry BTB [WC]
    ind_bits = 10,
    ras_depth = 16,             -- 16-entry return stack buffer [OPT]
    ras_repair = "tos",
  },
  core = {
    rename_width = 4,           -- 4-wide allocate [OPT]
    commit_width = 4,           -- 4-wide retire [OPT]
    rob = 224,                  -- [OPT]
    sched_math = 97,            -- unified reservation station, 97 entries [OPT]
    unified_sched = true,       -- loads and stores share it
    lq = 72,                    -- load buffer [OPT]
    sq = 56,                    -- store buffer [OPT]
    int_prf = 180,              -- [WC]
    vec_prf = 168,              -- [WC]
    stlf_latency = 5,           -- [7CPU: 4-5 cycles]
    stlf_fail_penalty = 11,     -- [OPT]
    store_drain_width = 1,      -- one store per cycle to L1 [OPT]
    rep_bytes_per_cycle = 32,   -- [OPT]
    rep_startup = 30,           -- [OPT: ~25-35 cycles]
  },
  ports = {
    count = 8,                  -- ports 0-7 [OPT]
    load = "P2 P3",             -- two load AGUs [OPT]
    sta = "P2 P3 P7",           -- store address on P2/P3 and the simple AGU on P7 [OPT]
    std = "P4",                 -- one store-data port [OPT]
  },
  uops = {
    zero = { {ports = "P0 P1 P5 P6", latency = 1} },
    mov = { {ports = "P0 P1 P5 P6", latency = 1} },
    alu = { {ports = "P0 P1 P5 P6", latency = 1} },                   -- 4 integer ALUs [OPT]
    shift = { {ports = "P0 P6", latency = 1} },                       -- [UOPS]
    bitcnt = { {ports = "P1", latency = 3} },                         -- [UOPS]
    mul = { {ports = "P1", latency = 3} },                            -- imul r64 [UOPS]
    div = { {ports = "P0", latency = 42, occupancy = 24} },           -- div r64 42-95 cycles [UOPS]
    lea = { {ports = "P1 P5", latency = 1} },                         -- simple LEA [OPT]
    branch = { {ports = "P0 P6", latency = 1} },                      -- [OPT]
    vec_alu = { {ports = "P0 P1 P5", latency = 1} },                  -- [UOPS]
    vec_mul = { {ports = "P0 P1", latency = 5} },                     -- [UOPS]
    fp_add = { {ports = "P0 P1", latency = 4} },                      -- FP add on the FMA units [OPT]
    fp_mul = { {ports = "P0 P1", latency = 4} },                      -- [OPT]
    fma = { {ports = "P0 P1", latency = 4} },                         -- [OPT]
    fp_div = { {ports = "P0", latency = 11, occupancy = 5} },         -- vdivps ymm [UOPS]
    shuffle = { {ports = "P5", latency = 1} },                        -- one shuffle port [OPT]
    permute = { {ports = "P5", latency = 3} },                        -- vpermd, vperm2i128 ymm [UOPS]
    convert = { {ports = "P0 P1", latency = 4} },                     -- [UOPS]
    string = { {ports = "P0 P1 P5 P6", latency = 1} },
    gather = { {ports = "P0 P5", latency = 1}, {ports = "P0 P5", latency = 1} },
    atomic = { {ports = "P0 P1 P5 P6", latency = 18} },               -- [UOPS]
    serial = { {ports = "P0 P1 P5 P6", latency = 20} },               -- [EST]
    x87 = { {ports = "P0 P1 P5", latency = 4} },                      -- [MCA]
    other = { {ports = "P0 P1 P5 P6", latency = 2} },                 -- [EST]
  },
  mem = {
    l1i = { size = 32768, ways = 8, latency = 4, mshrs = 16, bandwidth = 1 }, -- [OPT]
    l1d = { size = 32768, ways = 8, latency = 5, mshrs = 10, bandwidth = 3 }, -- 4-5 cycles, 10 fill
                                                                              -- buffers, 2 loads + 1 store [OPT]
    l2 = { size = 262144, ways = 4, latency = 12, mshrs = 32, bandwidth = 1 },-- 256 KiB 4-way [OPT, 7CPU]
    llc = { size = 2097152, ways = 16, latency = 42, mshrs = 32, bandwidth = 1, -- 2 MiB slice, ~42
            replacement = "srrip", inclusive = true },                          -- cycles, inclusive [7CPU]
    itlb = { entries = 128, ways = 8, latency = 0 },  -- [OPT]
    dtlb = { entries = 64, ways = 4, latency = 0 },   -- [OPT]
    stlb = { entries = 1536, ways = 12, latency = 9 }, -- [OPT, 7CPU]
    walk_latency = 30,                                 -- [EST]
    dram = { channels = 2, banks = 16, row_bytes = 8192, -- dual-channel DDR4-2666 [EST]
             t_cas = 57, t_rcd = 57, t_rp = 57,       -- CL19-19-19 (14.25 ns) at 4 GHz
             t_burst = 12,                            -- 64 B on a 64-bit channel: 3 ns
             queue = 32, base_latency = 120 },        -- idle load ~70-80 ns [7CPU]
  },
}

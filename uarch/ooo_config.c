/* ooo_config.c — the machine configuration of the out-of-order model: parameter tables,
 * Golden Cove defaults, validation, Lua dump, documentation and hash. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "ooo_int.h"

/* ---- port sets ----------------------------------------------------------------------------------- */

bool ooo_ports_parse(const char *s, uint32_t *mask) {
  uint32_t m = 0;
  const char *p = s;
  for (;;) {
    while (*p == ' ' || *p == ',' || *p == '\t') p++;
    if (!*p) break;
    if (*p != 'P' && *p != 'p') return false;
    p++;
    if (*p < '0' || *p > '9') return false;
    unsigned v = 0;
    while (*p >= '0' && *p <= '9') {
      v = v * 10 + (unsigned)(*p - '0');
      if (v >= OOO_MAX_PORTS) return false;
      p++;
    }
    if (*p && *p != ' ' && *p != ',' && *p != '\t') return false;
    m |= 1u << v;
  }
  *mask = m;
  return true;
}

const char *ooo_ports_format(uint32_t mask, char *buf, size_t n) {
  size_t k = 0;
  buf[0] = 0;
  for (unsigned p = 0; p < OOO_MAX_PORTS; p++) {
    if (!(mask & (1u << p))) continue;
    int w = snprintf(buf + k, n - k, "%sP%u", k ? " " : "", p);
    if (w < 0 || (size_t)w >= n - k) break;
    k += (size_t)w;
  }
  return buf;
}

/* ---- custom parsers ---------------------------------------------------------------------------- */

static wi_rc parse_portset(const cfg_val *v, void *field, void *base, wi_err *err) {
  (void)base;
  if (v->kind != CV_STR)
    return wi_fail(err, WI_EINVAL, "must be a port list string like \"P2 P3\", not a %s", cv_kind_name(v->kind));
  uint32_t m;
  if (!ooo_ports_parse(v->str, &m) || !m)
    return wi_fail(err, WI_EINVAL, "\"%s\" is not a port list (names P0..P%d separated by spaces)", v->str,
                   OOO_MAX_PORTS - 1);
  *(uint32_t *)field = m;
  return WI_OK;
}

static wi_rc parse_name(const cfg_val *v, void *field, void *base, wi_err *err) {
  (void)base;
  if (v->kind != CV_STR) return wi_fail(err, WI_EINVAL, "must be a string, not a %s", cv_kind_name(v->kind));
  char *dst = field;
  snprintf(dst, 64, "%s", v->str);
  return WI_OK;
}

static wi_rc parse_ignored_string(const cfg_val *v, void *field, void *base, wi_err *err) {
  (void)field;
  (void)base;
  if (v->kind != CV_STR) return wi_fail(err, WI_EINVAL, "must be a string, not a %s", cv_kind_name(v->kind));
  return WI_OK;
}

static const char *const uop_keys[] = {"ports", "latency", "occupancy"};

static wi_rc parse_one_uop(const cfg_val *u, ooo_uop_spec *s, const char *cls, size_t i, wi_err *err) {
  if (u->kind != CV_TABLE)
    return wi_fail(err, WI_EINVAL, "%s[%zu] must be a table {ports = \"P0 P1\", latency = N}", cls, i);
  for (size_t k = 0; k < u->n; k++) {
    const cfg_entry *e = &u->entries[k];
    bool known = false;
    for (size_t j = 0; j < WI_ARRAY_LEN(uop_keys); j++)
      if (e->key && !strcmp(e->key, uop_keys[j])) known = true;
    if (!known)
      return wi_fail(err, WI_EINVAL, "%s[%zu]: unknown key %s (expected ports, latency, occupancy)", cls, i,
                     e->key ? e->key : "(positional)");
  }
  const cfg_val *p = cv_get(u, "ports"), *l = cv_get(u, "latency"), *o = cv_get(u, "occupancy");
  if (!p || p->kind != CV_STR || !ooo_ports_parse(p->str, &s->ports) || !s->ports)
    return wi_fail(err, WI_EINVAL, "%s[%zu].ports must be a port list string like \"P0 P1\"", cls, i);
  if (!l || l->kind != CV_NUM || l->num < 0 || l->num > 10000 || l->num != (double)(uint32_t)l->num)
    return wi_fail(err, WI_EINVAL, "%s[%zu].latency must be an integer in [0, 10000] cycles", cls, i);
  s->latency = (uint32_t)l->num;
  s->occupancy = 1;
  if (o) {
    if (o->kind != CV_NUM || o->num < 1 || o->num > 10000 || o->num != (double)(uint32_t)o->num)
      return wi_fail(err, WI_EINVAL, "%s[%zu].occupancy must be an integer in [1, 10000] cycles", cls, i);
    s->occupancy = (uint32_t)o->num;
  }
  return WI_OK;
}

static wi_rc parse_uops(const cfg_val *v, void *field, void *base, wi_err *err) {
  (void)base;
  ooo_class_spec *tab = field;
  if (v->kind != CV_TABLE) return wi_fail(err, WI_EINVAL, "must be a table of operation classes");
  for (size_t k = 0; k < v->n; k++) {
    const cfg_entry *e = &v->entries[k];
    if (!e->key) return wi_fail(err, WI_EINVAL, "positional item #%zu: expected class = { ... }", e->index);
    int cls = insn_class_from_name(e->key);
    if (cls < 0) return wi_fail(err, WI_EINVAL, "unknown operation class %s", e->key);
    const cfg_val *list = e->val;
    if (list->kind != CV_TABLE)
      return wi_fail(err, WI_EINVAL, "%s must be a list of micro-ops { {ports = ..., latency = ...}, ... }", e->key);
    for (size_t j = 0; j < list->n; j++)
      if (list->entries[j].key)
        return wi_fail(err, WI_EINVAL, "%s: unknown key %s (expected a list of micro-ops)", e->key,
                       list->entries[j].key);
    size_t n = cv_len(list);
    if (n > OOO_MAX_CLASS_UOPS)
      return wi_fail(err, WI_EINVAL, "%s has %zu micro-ops; at most %d", e->key, n, OOO_MAX_CLASS_UOPS);
    ooo_class_spec spec;
    memset(&spec, 0, sizeof spec);
    for (size_t j = 1; j <= n; j++) {
      wi_rc rc = parse_one_uop(cv_item(list, j), &spec.u[j - 1], e->key, j, err);
      if (rc) return rc;
    }
    spec.n = (uint32_t)n;
    tab[cls] = spec;
  }
  return WI_OK;
}

/* ---- parameter tables ------------------------------------------------------------------------------ */

static const char *const wp_names[] = {"normal", "off", "cap", "confidence", NULL};
static const char *const mdp_names[] = {"predict", "speculate", "conservative", NULL};

#define FEO(f) offsetof(ooo_fe_config, f)
static const param_desc fe_params[] = {
  {"fetch_width", P_U32, FEO(fetch_width), 1, 64, "instructions/cycle", "instructions fetched per cycle", NULL, NULL, NULL},
  {"fetch_bytes", P_U32, FEO(fetch_bytes), 1, 1024, "bytes/cycle", "instruction bytes fetched per cycle", NULL, NULL, NULL},
  {"fetch_taken", P_U32, FEO(fetch_taken), 1, 16, "branches/cycle", "predicted-taken branches per fetch cycle", NULL, NULL, NULL},
  {"fetch_queue", P_U32, FEO(fetch_queue), 1, 4096, "instructions", "capacity between fetch and rename (decode pipe + instruction queue)", NULL, NULL, NULL},
  {"fetch_to_rename", P_U32, FEO(fetch_to_rename), 1, 100, "cycles", "pipeline depth from fetch to the earliest rename", NULL, NULL, NULL},
  {"mispredict_penalty", P_U32, FEO(mispredict_penalty), 0, 1000, "cycles", "from branch resolution to fetch on the correct path", NULL, NULL, NULL},
  {"machine_clear_penalty", P_U32, FEO(machine_clear_penalty), 0, 1000, "cycles", "from a memory-ordering machine clear to the refetch", NULL, NULL, NULL},
  {"btb_miss_penalty", P_U32, FEO(btb_miss_penalty), 0, 100, "cycles", "fetch bubble when a taken direct branch misses the BTB", NULL, NULL, NULL},
  {"branch_checkpoints", P_U32, FEO(branch_checkpoints), 1, 4096, "branches", "correct-path branches in flight; fetch stalls beyond", NULL, NULL, NULL},
  {"uop_cache_lines", P_U32, FEO(uop_cache_lines), 0, 65536, "lines", "decoded-line (uop) cache, direct mapped: a hit skips the L1I access; 0 = off (power of two)", NULL, NULL, NULL},
  {"wrong_path", P_ENUM, FEO(wrong_path), 0, 0, NULL, "after a misprediction: normal (fetch the predicted path), off (stall until resolved), cap (at most wrong_path_cap), confidence (JRS gating)", wp_names, NULL, NULL},
  {"wrong_path_cap", P_U32, FEO(wrong_path_cap), 0, 100000, "instructions", "wrong-path instructions fetched per misprediction (wrong_path = \"cap\")", NULL, NULL, NULL},
  {"perfect_branch", P_BOOL, FEO(perfect_branch), 0, 0, NULL, "predict every branch correctly", NULL, NULL, NULL},
};
static const param_table fe_table = PARAM_TABLE("frontend", fe_params);

#define COO(f) offsetof(ooo_core_config, f)
static const param_desc core_params[] = {
  {"rename_width", P_U32, COO(rename_width), 1, 64, "slots/cycle", "rename/dispatch width (top-down slots per cycle)", NULL, NULL, NULL},
  {"commit_width", P_U32, COO(commit_width), 1, 64, "instructions/cycle", "in-order commit (retire) width", NULL, NULL, NULL},
  {"commit_latency", P_U32, COO(commit_latency), 0, 100, "cycles", "from completion to the earliest commit", NULL, NULL, NULL},
  {"rob", P_U32, COO(rob), 8, 2000, "slots", "reorder-buffer capacity", NULL, NULL, NULL},
  {"sched_math", P_U32, COO(sched_math), 4, 65536, "entries", "scheduler entries for computation micro-ops (all micro-ops when unified_sched)", NULL, NULL, NULL},
  {"sched_load", P_U32, COO(sched_load), 1, 65536, "entries", "scheduler entries for load micro-ops", NULL, NULL, NULL},
  {"sched_store", P_U32, COO(sched_store), 2, 65536, "entries", "scheduler entries for store-address and store-data micro-ops", NULL, NULL, NULL},
  {"unified_sched", P_BOOL, COO(unified_sched), 0, 0, NULL, "one scheduler (sched_math entries) for every micro-op", NULL, NULL, NULL},
  {"lq", P_U32, COO(lq), 1, 65536, "entries", "load-queue entries", NULL, NULL, NULL},
  {"sq", P_U32, COO(sq), 1, 65536, "entries", "store-queue entries (including committed stores not yet written)", NULL, NULL, NULL},
  {"int_prf", P_U32, COO(int_prf), 17, 65536, "registers", "integer physical registers (16 hold architectural state)", NULL, NULL, NULL},
  {"vec_prf", P_U32, COO(vec_prf), 17, 65536, "registers", "vector/FP physical registers (16 hold architectural state)", NULL, NULL, NULL},
  {"move_elim", P_BOOL, COO(move_elim), 0, 0, NULL, "eliminate register moves at rename", NULL, NULL, NULL},
  {"zero_idiom", P_BOOL, COO(zero_idiom), 0, 0, NULL, "eliminate zero idioms at rename", NULL, NULL, NULL},
  {"stack_engine", P_BOOL, COO(stack_engine), 0, 0, NULL, "push/pop/call/ret update rsp at decode (no dependence through rsp)", NULL, NULL, NULL},
  {"agu_latency", P_U32, COO(agu_latency), 1, 100, "cycles", "store-address micro-op latency", NULL, NULL, NULL},
  {"std_latency", P_U32, COO(std_latency), 1, 100, "cycles", "store-data micro-op latency", NULL, NULL, NULL},
  {"stlf_latency", P_U32, COO(stlf_latency), 0, 100, "cycles", "load-to-use latency of store-to-load forwarding", NULL, NULL, NULL},
  {"stlf_fail_penalty", P_U32, COO(stlf_fail_penalty), 0, 1000, "cycles", "extra cycles when an older store covers a load only partly", NULL, NULL, NULL},
  {"store_drain_width", P_U32, COO(store_drain_width), 1, 16, "lines/cycle", "committed store lines written to L1 per cycle", NULL, NULL, NULL},
  {"mem_dep", P_ENUM, COO(mem_dep), 0, 0, NULL, "memory-dependence policy: predict (load-wait table), speculate (never wait), conservative (every load waits for older store addresses)", mdp_names, NULL, NULL},
  {"mdp_bits", P_U32, COO(mdp_bits), 4, 20, "log2 entries", "load-wait table size", NULL, NULL, NULL},
  {"mdp_reset", P_U32, COO(mdp_reset), 1, 1u << 30, "cycles", "period of load-wait table clears", NULL, NULL, NULL},
  {"rep_bytes_per_cycle", P_U32, COO(rep_bytes_per_cycle), 1, 4096, "bytes/cycle", "fast-string (rep movs/stos) bandwidth", NULL, NULL, NULL},
  {"rep_startup", P_U32, COO(rep_startup), 0, 10000, "cycles", "microcode startup of a rep-string run (added to its first micro-op)", NULL, NULL, NULL},
};
static const param_table core_table = PARAM_TABLE("core", core_params);

#define POO(f) offsetof(ooo_port_config, f)
static const param_desc port_params[] = {
  {"count", P_U32, POO(count), 1, OOO_MAX_PORTS, "ports", "execution ports P0 .. P<count-1>", NULL, NULL, NULL},
  {"load", P_CUSTOM, POO(load), 0, 0, "ports", "ports that execute load micro-ops, e.g. \"P2 P3 P11\"", NULL, NULL, parse_portset},
  {"sta", P_CUSTOM, POO(sta), 0, 0, "ports", "ports that execute store-address micro-ops", NULL, NULL, parse_portset},
  {"std", P_CUSTOM, POO(std), 0, 0, "ports", "ports that execute store-data micro-ops", NULL, NULL, parse_portset},
};
static const param_table port_table = PARAM_TABLE("ports", port_params);

#define OO(f) offsetof(ooo_config, f)
static const param_desc top_params[] = {
  {"name", P_CUSTOM, OO(name), 0, 0, NULL, "machine name", NULL, NULL, parse_name},
  {"description", P_CUSTOM, 0, 0, 0, NULL, "free text", NULL, NULL, parse_ignored_string},
  {"base", P_CUSTOM, 0, 0, 0, NULL, "configuration this one modifies (name or file; resolved by the loader)", NULL, NULL, parse_ignored_string},
  {"frontend", P_TABLE, OO(fe), 0, 0, NULL, "fetch, branch resolution and wrong-path policy", NULL, &fe_table, NULL},
  {"bpred", P_TABLE, OO(bp), 0, 0, NULL, "branch predictors: direction, BTB, indirect, RAS, confidence", NULL, &bp_param_table, NULL},
  {"core", P_TABLE, OO(core), 0, 0, NULL, "rename, window, schedulers, queues, commit", NULL, &core_table, NULL},
  {"ports", P_TABLE, OO(ports), 0, 0, NULL, "execution ports and the memory micro-ops' port sets", NULL, &port_table, NULL},
  {"uops", P_CUSTOM, OO(uops), 0, 0, NULL, "per operation class: list of {ports = \"P0 P1\", latency = cycles, occupancy = cycles}", NULL, NULL, parse_uops},
  {"mem", P_TABLE, OO(mem), 0, 0, NULL, "memory hierarchy (see memsys.h)", NULL, &mem_param_table, NULL},
};
const param_table ooo_param_table = PARAM_TABLE("machine", top_params);

/* ---- defaults: Golden Cove (Alder Lake P-core / Sapphire Rapids) ------------------------------- */

static void spec1(ooo_class_spec *s, const char *ports, uint32_t lat, uint32_t occ) {
  memset(s, 0, sizeof *s);
  s->n = 1;
  ooo_ports_parse(ports, &s->u[0].ports);
  s->u[0].latency = lat;
  s->u[0].occupancy = occ;
}

void ooo_config_default(ooo_config *c) {
  memset(c, 0, sizeof *c);
  snprintf(c->name, sizeof c->name, "golden_cove");
  /* Front-end: 6-wide decode, 8 uops/cycle from the uop cache, one taken branch per cycle;
   * ~17-cycle misprediction penalty (7 to refetch + 9 to rename + 1 to issue). */
  c->fe.fetch_width = 8;
  c->fe.fetch_bytes = 64;
  c->fe.fetch_taken = 1;
  c->fe.fetch_queue = 144;
  c->fe.fetch_to_rename = 9;
  c->fe.mispredict_penalty = 7;
  c->fe.machine_clear_penalty = 10;
  c->fe.btb_miss_penalty = 6;
  c->fe.branch_checkpoints = 128;
  c->fe.uop_cache_lines = 256;
  c->fe.wrong_path = WP_NORMAL;
  c->fe.wrong_path_cap = 64;
  c->fe.perfect_branch = false;
  bp_config_default(&c->bp);
  c->bp.btb_entries = 12288;
  c->bp.btb_ways = 12;
  /* Back-end. */
  c->core.rename_width = 6;
  c->core.commit_width = 8;
  c->core.commit_latency = 1;
  c->core.rob = 512;
  c->core.sched_math = 97;
  c->core.sched_load = 70;
  c->core.sched_store = 38;
  c->core.unified_sched = false;
  c->core.lq = 192;
  c->core.sq = 114;
  c->core.int_prf = 280;
  c->core.vec_prf = 332;
  c->core.move_elim = true;
  c->core.zero_idiom = true;
  c->core.stack_engine = true;
  c->core.agu_latency = 1;
  c->core.std_latency = 1;
  c->core.stlf_latency = 5;
  c->core.stlf_fail_penalty = 12;
  c->core.store_drain_width = 2;
  c->core.mem_dep = MDP_PREDICT;
  c->core.mdp_bits = 10;
  c->core.mdp_reset = 32768;
  c->core.rep_bytes_per_cycle = 32;
  c->core.rep_startup = 24;
  /* Ports. */
  c->ports.count = 12;
  ooo_ports_parse("P2 P3 P11", &c->ports.load);
  ooo_ports_parse("P7 P8", &c->ports.sta);
  ooo_ports_parse("P4 P9", &c->ports.std);
  /* Micro-ops (llvm-mca sapphirerapids model, uops.info Alder Lake-P, Intel optimization
   * manual; see uarch/configs/golden_cove.lua for the per-class notes). */
  const char *alu = "P0 P1 P5 P6 P10";
  ooo_class_spec *u = c->uops;
  memset(&u[IC_NOP], 0, sizeof u[IC_NOP]);
  spec1(&u[IC_ZERO], alu, 1, 1);   /* used only when core.zero_idiom is off */
  spec1(&u[IC_MOV], alu, 1, 1);    /* used only when the move is not eliminated */
  memset(&u[IC_LOAD], 0, sizeof u[IC_LOAD]);
  memset(&u[IC_STORE], 0, sizeof u[IC_STORE]);
  spec1(&u[IC_ALU], alu, 1, 1);
  spec1(&u[IC_SHIFT], "P0 P6", 1, 1);
  spec1(&u[IC_BITCNT], "P1", 3, 1);
  spec1(&u[IC_MUL], "P1", 3, 1);
  spec1(&u[IC_DIV], "P1", 14, 6);
  spec1(&u[IC_LEA], alu, 1, 1);
  spec1(&u[IC_BRANCH], "P0 P6", 1, 1);
  spec1(&u[IC_VEC_ALU], "P0 P1 P5", 1, 1);
  spec1(&u[IC_VEC_MUL], "P0 P1", 5, 1);
  spec1(&u[IC_FP_ADD], "P1 P5", 2, 1);
  spec1(&u[IC_FP_MUL], "P0 P1", 4, 1);
  spec1(&u[IC_FMA], "P0 P1", 4, 1);
  spec1(&u[IC_FP_DIV], "P0", 13, 8);
  spec1(&u[IC_SHUFFLE], "P1 P5", 1, 1);  /* in-lane */
  spec1(&u[IC_PERMUTE], "P5", 3, 1);     /* cross-lane: port 5 only */
  spec1(&u[IC_CONVERT], "P0 P1", 4, 1);
  spec1(&u[IC_STRING], alu, 1, 1);
  u[IC_GATHER].n = 2;
  ooo_ports_parse("P0 P5", &u[IC_GATHER].u[0].ports), u[IC_GATHER].u[0].latency = 1, u[IC_GATHER].u[0].occupancy = 1;
  ooo_ports_parse("P0 P5", &u[IC_GATHER].u[1].ports), u[IC_GATHER].u[1].latency = 1, u[IC_GATHER].u[1].occupancy = 1;
  spec1(&u[IC_ATOMIC], alu, 18, 1);
  spec1(&u[IC_SERIAL], alu, 20, 1);
  spec1(&u[IC_X87], "P0 P1 P5", 4, 1);
  spec1(&u[IC_OTHER], alu, 2, 1);
  mem_config_default(&c->mem);
}

/* ---- apply / check ----------------------------------------------------------------------------- */

wi_rc ooo_config_apply(ooo_config *c, const cfg_val *v, const char *file, wi_err *err) {
  return param_apply(&ooo_param_table, c, v, file ? file : "", "", err);
}

wi_rc ooo_config_check(const ooo_config *c, wi_err *err) {
  const char *nm = c->name[0] ? c->name : "configuration";
  uint32_t all = c->ports.count >= 32 ? UINT32_MAX : (1u << c->ports.count) - 1;
  char buf[160];
  struct { const char *k; uint32_t m; } ps[] = {{"load", c->ports.load}, {"sta", c->ports.sta}, {"std", c->ports.std}};
  for (size_t i = 0; i < 3; i++) {
    if (!ps[i].m) return wi_fail(err, WI_EINVAL, "%s: ports.%s is empty", nm, ps[i].k);
    if (ps[i].m & ~all)
      return wi_fail(err, WI_EINVAL, "%s: ports.%s = \"%s\" names a port beyond ports.count = %u", nm, ps[i].k,
                     ooo_ports_format(ps[i].m, buf, sizeof buf), c->ports.count);
  }
  for (int cls = 0; cls < IC_NUM; cls++) {
    const ooo_class_spec *s = &c->uops[cls];
    if (s->n > OOO_MAX_CLASS_UOPS) return wi_fail(err, WI_EINVAL, "%s: uops.%s: too many micro-ops", nm, insn_class_name(cls));
    for (uint32_t k = 0; k < s->n; k++) {
      if (!s->u[k].ports)
        return wi_fail(err, WI_EINVAL, "%s: uops.%s[%u].ports is empty", nm, insn_class_name(cls), k + 1);
      if (s->u[k].ports & ~all)
        return wi_fail(err, WI_EINVAL, "%s: uops.%s[%u].ports = \"%s\" names a port beyond ports.count = %u", nm,
                       insn_class_name(cls), k + 1, ooo_ports_format(s->u[k].ports, buf, sizeof buf), c->ports.count);
      if (s->u[k].occupancy < 1)
        return wi_fail(err, WI_EINVAL, "%s: uops.%s[%u].occupancy must be at least 1", nm, insn_class_name(cls), k + 1);
    }
  }
  if (c->uops[IC_BRANCH].n < 1)
    return wi_fail(err, WI_EINVAL, "%s: uops.branch needs at least one micro-op (branches resolve when it executes)", nm);
  if (c->core.unified_sched && c->core.sched_math < 8)
    return wi_fail(err, WI_EINVAL, "%s: core.sched_math must be at least 8 with unified_sched", nm);
  if (c->core.rename_width > c->core.rob)
    return wi_fail(err, WI_EINVAL, "%s: core.rename_width (%u) exceeds core.rob (%u)", nm, c->core.rename_width,
                   c->core.rob);
  if (c->fe.uop_cache_lines & (c->fe.uop_cache_lines - 1))
    return wi_fail(err, WI_EINVAL, "%s: frontend.uop_cache_lines = %u is not a power of two", nm, c->fe.uop_cache_lines);
  if (c->fe.wrong_path == WP_CAP && c->fe.wrong_path_cap == 0)
    return wi_fail(err, WI_EINVAL, "%s: frontend.wrong_path_cap must be positive with wrong_path = \"cap\"", nm);
  wi_rc rc = bp_config_check(&c->bp, err);
  if (rc) return rc;
  return mem_config_check(&c->mem, err);
}

/* ---- dump / doc / hash --------------------------------------------------------------------------- */

void ooo_config_dump_lua(const ooo_config *c, FILE *f) {
  char buf[160];
  fprintf(f, "return {\n  name = \"%s\",\n", c->name);
  fputs("  frontend = ", f);
  param_dump_lua(&fe_table, &c->fe, 1, f);
  fputs(",\n  bpred = ", f);
  param_dump_lua(&bp_param_table, &c->bp, 1, f);
  fputs(",\n  core = ", f);
  param_dump_lua(&core_table, &c->core, 1, f);
  fprintf(f, ",\n  ports = {\n    count = %u,\n", c->ports.count);
  fprintf(f, "    load = \"%s\",\n", ooo_ports_format(c->ports.load, buf, sizeof buf));
  fprintf(f, "    sta = \"%s\",\n", ooo_ports_format(c->ports.sta, buf, sizeof buf));
  fprintf(f, "    std = \"%s\",\n  },\n  uops = {\n", ooo_ports_format(c->ports.std, buf, sizeof buf));
  for (int cls = 0; cls < IC_NUM; cls++) {
    const ooo_class_spec *s = &c->uops[cls];
    fprintf(f, "    %s = {", insn_class_name(cls));
    for (uint32_t k = 0; k < s->n; k++)
      fprintf(f, "%s{ports = \"%s\", latency = %u, occupancy = %u}", k ? ", " : " ",
              ooo_ports_format(s->u[k].ports, buf, sizeof buf), s->u[k].latency, s->u[k].occupancy);
    fputs(s->n ? " },\n" : "},\n", f);
  }
  fputs("  },\n  mem = ", f);
  param_dump_lua(&mem_param_table, &c->mem, 1, f);
  fputs(",\n}\n", f);
}

void ooo_config_doc(FILE *f) {
  fputs("Machine configuration parameters (path, type, unit, range, meaning).\n"
        "A configuration file is a Lua chunk returning a table with these keys; absent keys keep the\n"
        "values of `base` (default: golden_cove).\n\n",
        f);
  param_doc(&ooo_param_table, "", f);
  fputs("\nuops.<class> = { {ports = \"P0 P1\", latency = cycles, occupancy = cycles}, ... }\n"
        "  The computation micro-ops of an operation class, executed as a dependent chain; the\n"
        "  instruction's sources feed the first. Memory operands add micro-ops: a load per read\n"
        "  (ports.load, latency from the memory system), a store-address (ports.sta, core.agu_latency)\n"
        "  and a store-data (ports.std, core.std_latency) per write. occupancy > 1 makes the unit\n"
        "  unpipelined (a divider): its next micro-op starts `occupancy` cycles later. An empty list\n"
        "  means no computation micro-op.\n  classes:",
        f);
  for (int cls = 0; cls < IC_NUM; cls++) fprintf(f, " %s", insn_class_name(cls));
  fputc('\n', f);
}

uint64_t ooo_config_hash(const ooo_config *c) {
  char *buf = NULL;
  size_t n = 0;
  FILE *f = open_memstream(&buf, &n);
  if (!f) return 0;
  ooo_config_dump_lua(c, f);
  fclose(f);
  uint64_t h = wi_hash64(buf, n, 0x6f6f6f);
  free(buf);
  return h;
}

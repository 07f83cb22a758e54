/* gus_ooo.c — the Gus machine from the detailed model's configuration (same widths, ports, port
 * groups, micro-ops, latencies and cache geometry). */
#include "gus.h"

#include <stdio.h>
#include <string.h>

#include "ooo.h"

static gus_uop from_spec(const ooo_uop_spec *u) {
  gus_uop g = {u->ports, (uint16_t)(u->latency > UINT16_MAX ? UINT16_MAX : u->latency),
               (uint16_t)(u->occupancy > UINT16_MAX ? UINT16_MAX : u->occupancy)};
  return g;
}

static gus_cache from_cache(const cache_config *c) {
  gus_cache g = {c->size, c->ways, c->latency};
  return g;
}

wi_rc gus_machine_from_ooo(gus_machine *m, const struct ooo_config *cfg, wi_err *err) {
  memset(m, 0, sizeof *m);
  if (cfg->ports.count < 1 || cfg->ports.count > GUS_MAX_PORTS)
    return wi_fail(err, WI_EINVAL, "gus: machine %s has %u ports; Gus models 1 to %d", cfg->name,
                   cfg->ports.count, GUS_MAX_PORTS);
  m->fe_width = cfg->fe.fetch_width;
  m->fe_taken = cfg->fe.fetch_taken;
  m->fe_latency = cfg->fe.fetch_to_rename;
  m->fe_queue = cfg->fe.fetch_queue;
  m->dispatch_width = cfg->core.rename_width;
  m->retire_width = cfg->core.commit_width;
  m->retire_latency = cfg->core.commit_latency;
  m->rob = cfg->core.rob;
  m->n_ports = cfg->ports.count;
  for (uint32_t p = 0; p < m->n_ports; p++) snprintf(m->port_name[p], sizeof m->port_name[p], "P%u", p);
  for (int c = 0; c < IC_NUM; c++) {
    const ooo_class_spec *s = &cfg->uops[c];
    uint32_t n = s->n < GUS_MAX_UOPS ? s->n : GUS_MAX_UOPS;
    m->cls[c].n = (uint8_t)n;
    for (uint32_t k = 0; k < n; k++) m->cls[c].uop[k] = from_spec(&s->u[k]);
  }
  /* eliminated at rename: no micro-op, the result is the inputs (moves) or nothing (zeroing) */
  if (cfg->core.move_elim) m->cls[IC_MOV].n = 0;
  if (cfg->core.zero_idiom) m->cls[IC_ZERO].n = 0;
  const mem_config *mc = &cfg->mem;
  m->load = (gus_uop){cfg->ports.load, (uint16_t)mc->l1d.latency, 1};
  m->sta = (gus_uop){cfg->ports.sta, (uint16_t)cfg->core.agu_latency, 1};
  m->std = (gus_uop){cfg->ports.std, (uint16_t)cfg->core.std_latency, 1};
  m->line = mc->l1d.line;
  m->l1d = from_cache(&mc->l1d);
  m->l2 = from_cache(&mc->l2);
  m->llc = from_cache(&mc->llc);
  /* a row hit: the LLC lookup, column access, one burst, the fixed return path */
  m->dram_latency = mc->llc.latency + mc->dram.base_latency + mc->dram.t_cas + mc->dram.t_burst;
  m->dram_channels = mc->dram.channels ? mc->dram.channels : 1;
  m->dram_banks = mc->dram.banks ? mc->dram.banks : 1;
  m->dram_row = mc->dram.row_bytes;
  m->dram_t_rcd = mc->dram.t_rcd;
  m->dram_t_rp = mc->dram.t_rp;
  m->page = mc->page_bytes;
  m->dtlb_entries = mc->dtlb.entries;
  m->dtlb_ways = mc->dtlb.ways;
  m->stlb_entries = mc->stlb.entries;
  m->stlb_ways = mc->stlb.ways;
  m->stlb_latency = mc->stlb.latency;
  m->walk_latency = mc->walk_latency;
  m->l2_bw = mc->l2.bandwidth ? mc->l2.bandwidth : 1;
  m->llc_bw = mc->llc.bandwidth ? mc->llc.bandwidth : 1;
  m->dram_bw = mc->dram.t_burst ? (double)(mc->dram.channels ? mc->dram.channels : 1) / mc->dram.t_burst : 1;
  m->fill_buffers = mc->l1d.mshrs ? mc->l1d.mshrs : 1;
  m->stlf_latency = cfg->core.stlf_latency;
  m->stack_engine = cfg->core.stack_engine;
  for (int r = 0; r < GUS_R_MAX; r++) m->tput[r] = m->lat[r] = 1.0;
  return gus_machine_check(m, err);
}

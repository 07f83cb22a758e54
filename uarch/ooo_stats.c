/* ooo_stats.c — names of binding kinds, slot categories and resources, and the run report of
 * the out-of-order model (JSON and text). */
#include <string.h>

#include "ooo_int.h"

static const char *const bind_names[OB_NUM] = {
  "none", "frontend", "rob_full", "sched_full", "lq_full", "sq_full", "prf_full", "width", "serialize",
  "dispatched", "operand", "port", "unit", "mem_order", "mshr",
  "exec", "l1", "l2", "llc", "dram", "forward",
  "completion", "commit_width", "prev_commit",
};

const char *ooo_bind_name(int kind) { return kind >= 0 && kind < OB_NUM ? bind_names[kind] : "?"; }

static const char *const slot_names[OOO_SLOT_NUM] = {
  "retiring", "bad_branch", "bad_clear", "fe_latency", "fe_bandwidth", "be_memory", "be_core",
};

const char *ooo_slot_name(int cat) { return cat >= 0 && cat < OOO_SLOT_NUM ? slot_names[cat] : "?"; }

const char *ooo_rid_name(uint32_t rid, char *buf, size_t n) {
  static const char *const pools[OOO_NPOOL] = {"math", "load", "store"};
  if (rid == OOO_RID_NONE) snprintf(buf, n, "-");
  else if (rid < OOO_RID_BASE) mem_rid_name(rid, buf, n);
  else if (rid < OOO_RID_SCHED) snprintf(buf, n, "ROB[%u]", rid - OOO_RID_ROB);
  else if (rid < OOO_RID_LQ) {
    uint32_t x = rid - OOO_RID_SCHED, pool = x / OOO_RID_POOL_STRIDE;
    snprintf(buf, n, "sched.%s[%u]", pool < OOO_NPOOL ? pools[pool] : "?", x % OOO_RID_POOL_STRIDE);
  } else if (rid < OOO_RID_SQ) snprintf(buf, n, "LQ[%u]", rid - OOO_RID_LQ);
  else if (rid < OOO_RID_PORT) snprintf(buf, n, "SQ[%u]", rid - OOO_RID_SQ);
  else if (rid < OOO_RID_UNIT) snprintf(buf, n, "port P%u", rid - OOO_RID_PORT);
  else if (rid < OOO_RID_FETCH) snprintf(buf, n, "unit P%u", rid - OOO_RID_UNIT);
  else {
    static const char *const single[] = {"fetch", "rename", "commit", "PRF.int", "PRF.vec", "icache", "bpred"};
    uint32_t k = rid - OOO_RID_FETCH;
    snprintf(buf, n, "%s", k < WI_ARRAY_LEN(single) ? single[k] : "?");
  }
  return buf;
}

/* ---- report ------------------------------------------------------------------------------------ */

typedef struct mpki {
  double all, cond, ind, ret;
  uint64_t n_all, n_cond, n_ind, n_ret;
} mpki;

static void get_mpki(const ooo_stats *s, mpki *k) {
  double ki = s->insns ? (double)s->insns / 1000.0 : 1.0;
  k->n_cond = s->mispredicts[BR_COND];
  k->n_ind = s->mispredicts[BR_IND_JUMP] + s->mispredicts[BR_IND_CALL];
  k->n_ret = s->mispredicts[BR_RET];
  k->n_all = 0;
  for (int b = 0; b < BR_NUM; b++) k->n_all += s->mispredicts[b];
  k->all = (double)k->n_all / ki;
  k->cond = (double)k->n_cond / ki;
  k->ind = (double)k->n_ind / ki;
  k->ret = (double)k->n_ret / ki;
}

/* Indices of dispatch-stall reasons sorted by cycles, descending. */
static int top_stalls(const ooo_stats *s, int *idx) {
  int n = 0;
  for (int k = 1; k < OB_NUM; k++)
    if (s->dispatch_stall[k]) idx[n++] = k;
  for (int i = 1; i < n; i++)
    for (int j = i; j > 0 && s->dispatch_stall[idx[j]] > s->dispatch_stall[idx[j - 1]]; j--) {
      int t = idx[j];
      idx[j] = idx[j - 1];
      idx[j - 1] = t;
    }
  return n;
}

static const char *stall_label(int k) {
  switch (k) {
  case OB_FRONTEND: return "frontend (nothing to rename)";
  case OB_ROB_FULL: return "ROB full";
  case OB_SCHED_FULL: return "scheduler full";
  case OB_LQ_FULL: return "load queue full";
  case OB_SQ_FULL: return "store queue full";
  case OB_PRF_FULL: return "physical registers full";
  case OB_WIDTH: return "rename width";
  case OB_SERIAL: return "serializing instruction";
  default: return ooo_bind_name(k);
  }
}

void ooo_stats_json(const ooo_model *m, double seconds, jw *w) {
  const ooo_stats *s = &m->st->stats;
  ooo_topdown td;
  ooo_get_topdown(m, &td);
  mpki k;
  get_mpki(s, &k);
  jw_kstr(w, "machine", m->cfg.name);
  jw_kuint(w, "instructions", s->insns);
  jw_kuint(w, "cycles", s->cycles);
  jw_knum(w, "ipc", s->cycles ? (double)s->insns / (double)s->cycles : 0.0);
  jw_kuint(w, "uops", s->uops);
  jw_key(w, "topdown");
  jw_obj_begin(w);
  jw_knum(w, "retiring", td.retiring);
  jw_knum(w, "bad_speculation", td.bad_speculation);
  jw_knum(w, "frontend_bound", td.frontend_bound);
  jw_knum(w, "backend_bound", td.backend_bound);
  jw_knum(w, "branch_mispredicts", td.branch_mispredicts);
  jw_knum(w, "machine_clears", td.machine_clears);
  jw_knum(w, "fe_latency", td.fe_latency);
  jw_knum(w, "fe_bandwidth", td.fe_bandwidth);
  jw_knum(w, "memory_bound", td.memory_bound);
  jw_knum(w, "core_bound", td.core_bound);
  jw_key(w, "slots");
  jw_obj_begin(w);
  for (int i = 0; i < OOO_SLOT_NUM; i++) jw_kuint(w, ooo_slot_name(i), s->slots[i]);
  jw_obj_end(w);
  jw_obj_end(w);
  jw_key(w, "branch");
  jw_obj_begin(w);
  uint64_t nb = 0;
  for (int b = 0; b < BR_NUM; b++) nb += s->branches[b];
  jw_kuint(w, "branches", nb);
  jw_kuint(w, "mispredicts", k.n_all);
  jw_knum(w, "mpki", k.all);
  jw_knum(w, "cond_mpki", k.cond);
  jw_knum(w, "indirect_mpki", k.ind);
  jw_knum(w, "return_mpki", k.ret);
  jw_kuint(w, "cond", s->branches[BR_COND]);
  jw_kuint(w, "cond_mispredicts", k.n_cond);
  jw_kuint(w, "indirect", s->branches[BR_IND_JUMP] + s->branches[BR_IND_CALL]);
  jw_kuint(w, "indirect_mispredicts", k.n_ind);
  jw_kuint(w, "returns", s->branches[BR_RET]);
  jw_kuint(w, "return_mispredicts", k.n_ret);
  jw_kuint(w, "btb_bubbles", s->btb_bubbles);
  jw_obj_end(w);
  jw_key(w, "wrong_path");
  jw_obj_begin(w);
  jw_kuint(w, "fetched", s->fetched[1]);
  jw_kuint(w, "dispatched", s->dispatched[1]);
  jw_kuint(w, "executed", s->executed[1]);
  jw_obj_end(w);
  jw_key(w, "memory_order");
  jw_obj_begin(w);
  jw_kuint(w, "machine_clears", s->machine_clears);
  jw_kuint(w, "forwarded", s->forwarded);
  jw_kuint(w, "forward_fail", s->forward_fail);
  jw_kuint(w, "load_waits", s->mdp_waits);
  jw_obj_end(w);
  jw_key(w, "loads");
  jw_obj_begin(w);
  jw_kuint(w, "count", s->loads);
  jw_kuint(w, "l1", s->load_level[0]);
  jw_kuint(w, "l2", s->load_level[1]);
  jw_kuint(w, "llc", s->load_level[2]);
  jw_kuint(w, "dram", s->load_level[3]);
  jw_obj_end(w);
  jw_kuint(w, "stores", s->stores);
  jw_key(w, "stalls");
  jw_arr_begin(w);
  int idx[OB_NUM];
  int n = top_stalls(s, idx);
  for (int i = 0; i < n; i++) {
    jw_obj_begin(w);
    jw_kstr(w, "reason", ooo_bind_name(idx[i]));
    jw_kuint(w, "cycles", s->dispatch_stall[idx[i]]);
    jw_knum(w, "fraction", s->cycles ? (double)s->dispatch_stall[idx[i]] / (double)s->cycles : 0.0);
    jw_obj_end(w);
  }
  jw_arr_end(w);
  jw_knum(w, "rob_occupancy", s->cycles ? (double)s->rob_occupancy / (double)s->cycles : 0.0);
  jw_kuint(w, "skipped_cycles", s->skipped_cycles);
  jw_key(w, "memory");
  jw_obj_begin(w);
  mem_stats_json(m->memsys, s->cycles, s->insns, w);
  jw_obj_end(w);
  jw_knum(w, "seconds", seconds);
  jw_knum(w, "sim_mips", seconds > 0 ? (double)s->insns / seconds / 1e6 : 0.0);
  jw_kuint(w, "state_bytes", m->blk_bytes);
}

void ooo_stats_print(const ooo_model *m, double seconds, FILE *f) {
  const ooo_stats *s = &m->st->stats;
  ooo_topdown td;
  ooo_get_topdown(m, &td);
  mpki k;
  get_mpki(s, &k);
  char b1[32], b2[32];
  fprintf(f, "machine            %s\n", m->cfg.name);
  fprintf(f, "instructions       %llu\n", (unsigned long long)s->insns);
  fprintf(f, "cycles             %llu\n", (unsigned long long)s->cycles);
  fprintf(f, "IPC                %.3f\n", s->cycles ? (double)s->insns / (double)s->cycles : 0.0);
  fprintf(f, "\ntop-down (rename slots)\n");
  fprintf(f, "  retiring         %5.1f%%\n", 100 * td.retiring);
  fprintf(f, "  bad speculation  %5.1f%%   (branch mispredicts %.1f%%, machine clears %.1f%%)\n",
          100 * td.bad_speculation, 100 * td.branch_mispredicts, 100 * td.machine_clears);
  fprintf(f, "  frontend bound   %5.1f%%   (latency %.1f%%, bandwidth %.1f%%)\n", 100 * td.frontend_bound,
          100 * td.fe_latency, 100 * td.fe_bandwidth);
  fprintf(f, "  backend bound    %5.1f%%   (memory %.1f%%, core %.1f%%)\n", 100 * td.backend_bound,
          100 * td.memory_bound, 100 * td.core_bound);
  fprintf(f, "\nbranches           MPKI %.2f (conditional %.2f, indirect %.2f, return %.2f)\n", k.all, k.cond,
          k.ind, k.ret);
  fprintf(f, "  mispredicted     %llu of %llu conditional, %llu of %llu indirect, %llu of %llu returns\n",
          (unsigned long long)k.n_cond, (unsigned long long)s->branches[BR_COND], (unsigned long long)k.n_ind,
          (unsigned long long)(s->branches[BR_IND_JUMP] + s->branches[BR_IND_CALL]), (unsigned long long)k.n_ret,
          (unsigned long long)s->branches[BR_RET]);
  fprintf(f, "  BTB-miss bubbles %llu\n", (unsigned long long)s->btb_bubbles);
  fprintf(f, "wrong path         %llu fetched, %llu executed\n", (unsigned long long)s->fetched[1],
          (unsigned long long)s->executed[1]);
  fprintf(f, "memory order       %llu machine clears, %llu loads forwarded, %llu partial-forward stalls\n",
          (unsigned long long)s->machine_clears, (unsigned long long)s->forwarded,
          (unsigned long long)s->forward_fail);
  fprintf(f, "loads              %llu (L1 %llu, L2 %llu, LLC %llu, DRAM %llu), stores %llu\n",
          (unsigned long long)s->loads, (unsigned long long)s->load_level[0], (unsigned long long)s->load_level[1],
          (unsigned long long)s->load_level[2], (unsigned long long)s->load_level[3],
          (unsigned long long)s->stores);
  fprintf(f, "\ntop stall reasons at rename (cycles in which rename stopped early)\n");
  int idx[OB_NUM];
  int n = top_stalls(s, idx);
  for (int i = 0; i < n && i < 6; i++)
    fprintf(f, "  %-30s %12llu cycles  %5.1f%%\n", stall_label(idx[i]), (unsigned long long)s->dispatch_stall[idx[i]],
            s->cycles ? 100.0 * (double)s->dispatch_stall[idx[i]] / (double)s->cycles : 0.0);
  fprintf(f, "mean ROB occupancy %.1f slots\n", s->cycles ? (double)s->rob_occupancy / (double)s->cycles : 0.0);
  fputc('\n', f);
  mem_stats_print(m->memsys, s->cycles, s->insns, f);
  fprintf(f, "\nsimulation         %.3f s, %s instructions/s (%s cycles/s, %.0f%% of cycles skipped)\n", seconds,
          fmt_si(b1, sizeof b1, seconds > 0 ? (double)s->insns / seconds : 0),
          fmt_si(b2, sizeof b2, seconds > 0 ? (double)s->cycles / seconds : 0),
          s->cycles ? 100.0 * (double)s->skipped_cycles / (double)s->cycles : 0.0);
}

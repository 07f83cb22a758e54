/* rp_cli.c — helpers shared by the replay commands and the Lua module (rp_cli.h). */
#include "rp_cli.h"

#include <stdlib.h>
#include <string.h>

#include "machine.h"

wi_rc rpc_machine(const char *uarch, const char *const *sets, size_t n, ooo_config *cfg, wi_err *err) {
  wi_rc rc = machine_load(uarch, cfg, err);
  for (size_t i = 0; i < n && !rc; i++) rc = machine_apply_expr(cfg, sets[i], err);
  return rc;
}

char *rpc_command_line(const char *prog, int argc, char **argv) {
  size_t len = strlen(prog) + 1;
  for (int i = 0; i < argc; i++) len += 3 + 2 * strlen(argv[i]);
  char *s = xmalloc(len + 1), *p = s;
  p += sprintf(p, "%s", prog);
  for (int i = 0; i < argc; i++) {
    const char *a = argv[i];
    bool plain = *a != 0;
    for (const char *c = a; *c; c++)
      if (!(strchr("-_./=:,+@%", *c) || (*c >= '0' && *c <= '9') || (*c >= 'a' && *c <= 'z') ||
            (*c >= 'A' && *c <= 'Z')))
        plain = false;
    *p++ = ' ';
    if (plain) {
      p += sprintf(p, "%s", a);
      continue;
    }
    *p++ = '\'';
    for (const char *c = a; *c; c++) {
      if (*c == '\'') {
        memcpy(p, "'\\''", 4); /* close, escaped quote, reopen */
        p += 4;
        continue;
      }
      *p++ = *c;
    }
    *p++ = '\'';
  }
  *p = 0;
  return s;
}

typedef struct pc_count {
  uint64_t pc, count;
} pc_count;

static int pc_count_cmp(const void *a, const void *b) {
  const pc_count *x = a, *y = b;
  if (x->count != y->count) return x->count < y->count ? 1 : -1;
  return x->pc < y->pc ? -1 : x->pc > y->pc;
}

size_t rpc_per_pc(const trace_t *t, const rp_interv *tmpl, uint64_t min_count, uint64_t top, rp_interv **out) {
  const trace_info *ti = trace_get_info(t);
  pc_count *pcs = xmalloc((ti->n_static ? ti->n_static : 1) * sizeof *pcs);
  size_t np = 0;
  for (uint32_t sid = 0; sid < ti->n_static; sid++) {
    const trace_static *s = trace_static_at(t, sid);
    const dec_insn *di = trace_decoded(t, sid);
    if (s->count < min_count) continue;
    if (tmpl->kind == RP_PERFECT_BRANCH && di->br == BR_NONE) continue; /* no effect elsewhere */
    if (tmpl->kind == RP_PERFECT_CACHE && !s->n_mem && !di->n_mem) continue;
    pcs[np++] = (pc_count){s->pc, s->count};
  }
  qsort(pcs, np, sizeof *pcs, pc_count_cmp);
  if (np > top) np = (size_t)top;
  rp_interv *v = xcalloc(np ? np : 1, sizeof *v);
  for (size_t i = 0; i < np; i++) {
    rp_interv_copy(&v[i], tmpl);
    rp_interv_set_pc(&v[i], pcs[i].pc);
  }
  free(pcs);
  *out = v;
  return np;
}

const char *rpc_pc_name(const trace_t *t, uint64_t pc, char *buf, size_t n) {
  const trace_sym *s = trace_sym_lookup(t, pc);
  if (s && s->name && pc == s->addr)
    snprintf(buf, n, "%s", s->name);
  else if (s && s->name && pc > s->addr)
    snprintf(buf, n, "%s+0x%llx", s->name, (unsigned long long)(pc - s->addr));
  else
    snprintf(buf, n, "0x%llx", (unsigned long long)pc);
  return buf;
}

static void row_u(FILE *f, const char *name, uint64_t a, uint64_t b) {
  long long d = (long long)b - (long long)a;
  fprintf(f, "  %-22s %14llu %14llu %+14lld", name, (unsigned long long)a, (unsigned long long)b, d);
  if (a) fprintf(f, "  (%+.2f%%)", 100.0 * (double)d / (double)a);
  fputc('\n', f);
}

static void row_d(FILE *f, const char *name, double a, double b, bool pct) {
  fprintf(f, "  %-22s %14.4f %14.4f %+14.4f", name, a, b, b - a);
  if (pct && a != 0) fprintf(f, "  (%+.2f%%)", 100.0 * (b - a) / a);
  fputc('\n', f);
}

static void row_frac(FILE *f, const char *name, double a, double b) {
  fprintf(f, "  %-22s %13.2f%% %13.2f%% %+11.2f pt\n", name, 100 * a, 100 * b, 100 * (b - a));
}

void rpc_print_compare(FILE *f, const rp_result *a, const rp_result *b) {
  fprintf(f, "  %-22s %14s %14s %14s\n", "", "baseline", "intervened", "delta");
  row_u(f, "cycles", a->cycles, b->cycles);
  row_u(f, "instructions", a->insns, b->insns);
  row_d(f, "IPC", a->ipc, b->ipc, true);
  row_d(f, "branch MPKI", a->mpki, b->mpki, false);
  row_d(f, "  conditional", a->cond_mpki, b->cond_mpki, false);
  row_d(f, "  indirect", a->ind_mpki, b->ind_mpki, false);
  row_d(f, "  return", a->ret_mpki, b->ret_mpki, false);
  row_u(f, "wrong-path fetched", a->wp_fetched, b->wp_fetched);
  row_u(f, "wrong-path executed", a->wp_executed, b->wp_executed);
  fputs("  top-down\n", f);
  row_frac(f, "  retiring", a->td.retiring, b->td.retiring);
  row_frac(f, "  bad speculation", a->td.bad_speculation, b->td.bad_speculation);
  row_frac(f, "    branch mispredicts", a->td.branch_mispredicts, b->td.branch_mispredicts);
  row_frac(f, "    machine clears", a->td.machine_clears, b->td.machine_clears);
  row_frac(f, "  frontend bound", a->td.frontend_bound, b->td.frontend_bound);
  row_frac(f, "  backend bound", a->td.backend_bound, b->td.backend_bound);
  row_frac(f, "    memory bound", a->td.memory_bound, b->td.memory_bound);
  row_frac(f, "    core bound", a->td.core_bound, b->td.core_bound);
}

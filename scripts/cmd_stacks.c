/* cmd_stacks.c — `whatif stacks DB [--top N] [--json]`: per-instruction cycle stacks at commit:
 * every cycle of the window attributed to one instruction and one cause, summing to the total. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "mfir.h"

static void usage(FILE *f) {
  fprintf(f,
          "usage: whatif stacks DB [--top N] [--json]\n"
          "  Cycle stacks of the window in an MFIR database, the time-proportional way: each cycle goes\n"
          "  to the instruction that commits next and to what it waited for in that cycle (its dispatch,\n"
          "  issue, completion or commit binding; `base` is the commit cycle). Static instructions by\n"
          "  cycles, top N (default 20; 0 = all); the columns sum to the window's cycles.\n");
}

/* Kinds in a stable display order (those with cycles). */
static size_t used_kinds(const uint64_t *by, int *out) {
  size_t n = 0;
  for (int k = 0; k < MK_END; k++)
    if (by[k]) out[n++] = k;
  return n;
}

int cmd_stacks(int argc, char **argv) {
  const char *path = NULL;
  bool json = false;
  uint64_t top = 20;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
      usage(stdout);
      return 0;
    } else if (!strcmp(argv[i], "--json")) {
      json = true;
    } else if (!strcmp(argv[i], "--top")) {
      if (i + 1 >= argc || !parse_u64(argv[i + 1], &top)) return cli_usage("stacks", "--top wants a count");
      i++;
    } else if (argv[i][0] == '-') {
      return cli_usage("stacks", "unknown option '%s' (see whatif stacks --help)", argv[i]);
    } else if (!path) {
      path = argv[i];
    } else {
      return cli_usage("stacks", "more than one database given ('%s')", argv[i]);
    }
  }
  if (!path) return cli_usage("stacks", "no MFIR database given (usage: whatif stacks DB [--top N] [--json])");
  wi_err err = {0};
  mfir_db *d = mfir_open(path, &err);
  if (!d) return cli_fail(&err);
  mfir_stacks s;
  if (mfir_cycle_stacks(d, &s, &err)) {
    mfir_close(d);
    return cli_fail(&err);
  }
  size_t n = top && top < s.n_pcs ? (size_t)top : s.n_pcs;
  int kinds[MK_END];
  size_t nk = used_kinds(s.by_kind, kinds);
  double tot = s.total ? (double)s.total : 1.0;
  if (json) {
    jw w;
    jw_init(&w, stdout, true);
    jw_obj_begin(&w);
    jw_kstr(&w, "database", path);
    jw_kuint(&w, "instructions", mfir_get_window(d)->insns);
    jw_kuint(&w, "total_cycles", s.total);
    jw_key(&w, "by_cause");
    jw_obj_begin(&w);
    for (size_t k = 0; k < nk; k++) jw_kuint(&w, mfir_kind_name(kinds[k]), s.by_kind[kinds[k]]);
    jw_obj_end(&w);
    jw_key(&w, "by_pc");
    jw_arr_begin(&w);
    for (size_t i = 0; i < n; i++) {
      const mfir_stack_pc *p = &s.pcs[i];
      const mfir_pcinfo *pi = mfir_pc_info(d, p->pc);
      jw_obj_begin(&w);
      jw_kuint(&w, "pc", p->pc);
      jw_kstr(&w, "asm", pi ? pi->asm_text : NULL);
      jw_kstr(&w, "function", pi ? pi->function : NULL);
      jw_kuint(&w, "count", p->count);
      jw_kuint(&w, "cycles", p->cycles);
      jw_knum(&w, "share", (double)p->cycles / tot);
      jw_key(&w, "causes");
      jw_obj_begin(&w);
      for (int k = 0; k < MK_END; k++)
        if (p->by_kind[k]) jw_kuint(&w, mfir_kind_name(k), p->by_kind[k]);
      jw_obj_end(&w);
      jw_obj_end(&w);
    }
    jw_arr_end(&w);
    jw_obj_end(&w);
    jw_end(&w);
  } else {
    printf("window  %llu instructions, %llu cycles (stacks sum to them)\n",
           (unsigned long long)mfir_get_window(d)->insns, (unsigned long long)s.total);
    printf("causes ");
    for (size_t k = 0; k < nk; k++)
      printf(" %s %.1f%%", mfir_kind_name(kinds[k]), 100.0 * (double)s.by_kind[kinds[k]] / tot);
    printf("\n\n%-14s %-30s %10s %12s %6s  %s\n", "pc", "instruction", "count", "cycles", "share", "top causes");
    for (size_t i = 0; i < n; i++) {
      const mfir_stack_pc *p = &s.pcs[i];
      const mfir_pcinfo *pi = mfir_pc_info(d, p->pc);
      printf("0x%-12llx %-30.30s %10llu %12llu %5.1f%% ", (unsigned long long)p->pc, pi ? pi->asm_text : "?",
             (unsigned long long)p->count, (unsigned long long)p->cycles, 100.0 * (double)p->cycles / tot);
      /* the three largest causes of this instruction */
      bool shown[MK_END] = {false};
      for (int r = 0; r < 3; r++) {
        int best = -1;
        for (int k = 0; k < MK_END; k++)
          if (!shown[k] && p->by_kind[k] && (best < 0 || p->by_kind[k] > p->by_kind[best])) best = k;
        if (best < 0) break;
        shown[best] = true;
        printf(" %s %llu", mfir_kind_name(best), (unsigned long long)p->by_kind[best]);
      }
      printf("   %s\n", pi ? pi->function : "?");
    }
  }
  mfir_stacks_free(&s);
  mfir_close(d);
  return 0;
}

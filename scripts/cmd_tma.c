/* cmd_tma.c — `whatif tma DB [--json]`: exact top-down level 1 and 2 of an MFIR window, from the
 * slot records and the fates of dispatched flows (the same accounting as `whatif run`). */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "mfir.h"

static void usage(FILE *f) {
  fprintf(f,
          "usage: whatif tma DB [--json]\n"
          "  Top-down (level 1 and 2) of the window in an MFIR database, from rename-slot accounting:\n"
          "  filled slots by the fate of the instruction that took them, unfilled slots by the\n"
          "  category of the cycle they were lost in. Equal to `whatif run` over the same range.\n");
}

int cmd_tma(int argc, char **argv) {
  const char *path = NULL;
  bool json = false;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
      usage(stdout);
      return 0;
    } else if (!strcmp(argv[i], "--json")) {
      json = true;
    } else if (argv[i][0] == '-') {
      return cli_usage("tma", "unknown option '%s' (see whatif tma --help)", argv[i]);
    } else if (!path) {
      path = argv[i];
    } else {
      return cli_usage("tma", "more than one database given ('%s')", argv[i]);
    }
  }
  if (!path) return cli_usage("tma", "no MFIR database given (usage: whatif tma DB [--json])");
  wi_err err = {0};
  mfir_db *d = mfir_open(path, &err);
  if (!d) return cli_fail(&err);
  mfir_tma t;
  if (mfir_topdown(d, &t, &err)) {
    mfir_close(d);
    return cli_fail(&err);
  }
  const mfir_window *w = mfir_get_window(d);
  const ooo_topdown *td = &t.td;
  if (json) {
    jw j;
    jw_init(&j, stdout, true);
    jw_obj_begin(&j);
    jw_kstr(&j, "database", path);
    jw_kuint(&j, "instructions", w->insns);
    jw_kuint(&j, "cycles", w->total_cycles);
    jw_kuint(&j, "slots_total", t.total);
    jw_key(&j, "topdown");
    jw_obj_begin(&j);
    jw_knum(&j, "retiring", td->retiring);
    jw_knum(&j, "bad_speculation", td->bad_speculation);
    jw_knum(&j, "frontend_bound", td->frontend_bound);
    jw_knum(&j, "backend_bound", td->backend_bound);
    jw_knum(&j, "branch_mispredicts", td->branch_mispredicts);
    jw_knum(&j, "machine_clears", td->machine_clears);
    jw_knum(&j, "fe_latency", td->fe_latency);
    jw_knum(&j, "fe_bandwidth", td->fe_bandwidth);
    jw_knum(&j, "memory_bound", td->memory_bound);
    jw_knum(&j, "core_bound", td->core_bound);
    jw_key(&j, "slots");
    jw_obj_begin(&j);
    for (int k = 0; k < OOO_SLOT_NUM; k++) jw_kuint(&j, ooo_slot_name(k), t.slots[k]);
    jw_obj_end(&j);
    jw_obj_end(&j);
    jw_obj_end(&j);
    jw_end(&j);
  } else {
    printf("window             %llu instructions, %llu cycles, %llu slots (%u per cycle)\n",
           (unsigned long long)w->insns, (unsigned long long)w->total_cycles, (unsigned long long)t.total,
           w->rename_width);
    printf("top-down (rename slots)\n");
    printf("  retiring         %5.1f%%\n", 100 * td->retiring);
    printf("  bad speculation  %5.1f%%   (branch mispredicts %.1f%%, machine clears %.1f%%)\n",
           100 * td->bad_speculation, 100 * td->branch_mispredicts, 100 * td->machine_clears);
    printf("  frontend bound   %5.1f%%   (latency %.1f%%, bandwidth %.1f%%)\n", 100 * td->frontend_bound,
           100 * td->fe_latency, 100 * td->fe_bandwidth);
    printf("  backend bound    %5.1f%%   (memory %.1f%%, core %.1f%%)\n", 100 * td->backend_bound,
           100 * td->memory_bound, 100 * td->core_bound);
    printf("slots             ");
    for (int k = 0; k < OOO_SLOT_NUM; k++) printf(" %s %llu", ooo_slot_name(k), (unsigned long long)t.slots[k]);
    printf("\n");
  }
  mfir_close(d);
  return 0;
}

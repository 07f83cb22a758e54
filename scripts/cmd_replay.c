/* cmd_replay.c — `whatif replay TRACE [--uarch M] [--set LUA] --do 'INTERVENTION' ... [--json]`:
 * the baseline and the intervened run side by side, with exact deltas. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "interv.h"
#include "replay.h"
#include "rp_cli.h"
#include "trace.h"

static void usage(FILE *f) {
  fprintf(f,
          "usage: whatif replay TRACE --do 'INTERVENTION' [--do ...] [--uarch NAME|FILE] [--set LUA-TABLE]\n"
          "                     [--no-ckpt] [--json]\n"
          "  Run TRACE once as is (the baseline) and once under the interventions; print both with exact\n"
          "  deltas of cycles, IPC, branch MPKI, wrong-path work and top-down.\n"
          "  --do       an intervention (or several separated by commas), e.g.\n"
          "               remove{pc=0x401a2c}            remove{func=\"f\", mode=\"nop\"}   remove{index={100, 200}}\n"
          "               latency{pc=0x401a2c, add=1}    latency{class=\"fma\", set=3}\n"
          "               perfect_branch{pc=0x401a30}    perfect_branch{}   (all branches)\n"
          "               perfect_cache{pc=0x401a2c}     perfect_cache{level=\"l1d\"}\n"
          "               ras{depth=32, repair=\"full\"}   wrong_path{policy=\"off\"}   wrong_path{policy=\"cap\", cap=16}\n"
          "               wrong_path{policy=\"confidence\", conf_threshold=12}\n"
          "               port{name=\"P5\", add=1}        port{classes={\"shuffle\"}}\n"
          "               resize{rob=256, lq=96}         predictor{type=\"gshare\"}   config{core={rob=1024}}\n"
          "             pc may also be \"function+0x1c\"; ranges are {lo, hi} with hi excluded.\n"
          "  --uarch    machine configuration (default golden_cove); --set applies overrides to both runs\n"
          "  --no-ckpt  replay from the start (default: from the last baseline snapshot before the\n"
          "             interventions first matter; results are identical)\n"
          "  --json     machine-readable output\n");
}

int cmd_replay(int argc, char **argv) {
  const char *path = NULL, *uarch = NULL;
  VEC(const char *) sets = {0};
  VEC(const char *) dos = {0};
  bool json = false, ckpt = true;
  int status = EXIT_BADINPUT;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      usage(stdout);
      status = 0;
      goto out_args;
    } else if (!strcmp(a, "--json")) {
      json = true;
    } else if (!strcmp(a, "--no-ckpt")) {
      ckpt = false;
    } else if (!strcmp(a, "--uarch") || !strcmp(a, "--set") || !strcmp(a, "--do")) {
      if (i + 1 >= argc) {
        cli_usage("replay", "%s needs a value", a);
        goto out_args;
      }
      const char *v = argv[++i];
      if (!strcmp(a, "--uarch")) uarch = v;
      else if (!strcmp(a, "--set")) VEC_PUSH(sets, v);
      else VEC_PUSH(dos, v);
    } else if (a[0] == '-') {
      cli_usage("replay", "unknown option '%s' (see whatif replay --help)", a);
      goto out_args;
    } else if (!path) {
      path = a;
    } else {
      cli_usage("replay", "more than one trace given ('%s' and '%s')", path, a);
      goto out_args;
    }
  }
  if (!path || !dos.n) {
    if (!path) cli_usage("replay", "no trace given (usage: whatif replay TRACE --do 'INTERVENTION' ...; see whatif replay --help)");
    else cli_usage("replay", "no intervention given (--do 'ras{repair=\"full\"}'; see whatif replay --help)");
    goto out_args;
  }

  wi_err err = {0};
  ooo_config cfg;
  trace_t *t = NULL;
  rp_base *b = NULL;
  rp_plan *p = NULL;
  VEC(rp_interv) ivs = {0};
  if (rpc_machine(uarch, sets.a, sets.n, &cfg, &err)) goto fail;
  for (size_t i = 0; i < dos.n; i++) {
    rp_interv *v;
    size_t n;
    if (interv_parse_list(dos.a[i], "--do", &v, &n, &err)) goto fail;
    for (size_t k = 0; k < n; k++) VEC_PUSH(ivs, v[k]);
    free(v);
  }
  if (!(t = trace_open(path, &err))) goto fail;
  rp_base_opts bo = {0};
  bo.progress = true;
  bo.no_snapshots = !ckpt;
  if (!(b = rp_base_new(t, &cfg, &bo, &err))) goto fail;
  if (!(p = rp_plan_new(b, ivs.a, ivs.n, &err))) goto fail; /* validate before the long run */
  if (rp_base_run(b, &err)) goto fail;
  rp_result base, r;
  rp_result_from_model(rp_base_model(b), &base);
  if (rp_replay(b, p, NULL, ckpt, &r, &err)) goto fail;

  if (json) {
    jw w;
    jw_init(&w, stdout, true);
    jw_obj_begin(&w);
    jw_kstr(&w, "trace", path);
    char hx[32];
    snprintf(hx, sizeof hx, "%016llx", (unsigned long long)trace_get_info(t)->content_hash);
    jw_kstr(&w, "trace_hash", hx);
    jw_kstr(&w, "machine", cfg.name);
    snprintf(hx, sizeof hx, "%016llx", (unsigned long long)ooo_config_hash(&cfg));
    jw_kstr(&w, "config_hash", hx);
    jw_key(&w, "interventions");
    jw_arr_begin(&w);
    for (size_t i = 0; i < ivs.n; i++) jw_str(&w, ivs.a[i].text);
    jw_arr_end(&w);
    jw_key(&w, "baseline");
    jw_obj_begin(&w);
    rp_result_json(&base, &w);
    jw_obj_end(&w);
    jw_key(&w, "intervened");
    jw_obj_begin(&w);
    rp_result_json(&r, &w);
    jw_obj_end(&w);
    jw_key(&w, "delta");
    jw_obj_begin(&w);
    rp_delta_json(&base, &r, &w);
    jw_obj_end(&w);
    jw_kuint(&w, "start_insn", r.start_insn);
    jw_knum(&w, "baseline_seconds", rp_base_seconds(b));
    jw_knum(&w, "replay_seconds", r.wall_s);
    jw_obj_end(&w);
    jw_end(&w);
  } else {
    printf("trace    %s (%llu instructions)\nmachine  %s\n", path, (unsigned long long)base.insns, cfg.name);
    for (size_t i = 0; i < ivs.n; i++) printf("%s %s\n", i ? "        " : "do      ", ivs.a[i].text);
    putchar('\n');
    rpc_print_compare(stdout, &base, &r);
    putchar('\n');
    if (r.start_snap >= 0)
      printf("replay started from the baseline snapshot at instruction %llu (%d of %zu); %.2f s (baseline %.2f s)\n",
             (unsigned long long)r.start_insn, r.start_snap + 1, rp_base_n_snaps(b), r.wall_s, rp_base_seconds(b));
    else
      printf("replay ran from the start; %.2f s (baseline %.2f s)\n", r.wall_s, rp_base_seconds(b));
  }
  status = 0;
  goto done;
fail:
  status = cli_fail(&err);
done:
  rp_plan_free(p);
  rp_base_free(b);
  trace_close(t);
  for (size_t i = 0; i < ivs.n; i++) rp_interv_free(&ivs.a[i]);
  VEC_FREE(ivs);
out_args:
  VEC_FREE(sets);
  VEC_FREE(dos);
  return status;
}

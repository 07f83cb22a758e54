/* cmd_critical.c — `whatif critical DB [--symptom S] [--top N] [--json]`: the critical path of an
 * MFIR window (a backward walk along binding edges from the last commit) by edge kind, resource,
 * static PC and function; with a symptom, the root-cause chain of that stall. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "mfir.h"

static void usage(FILE *f) {
  fprintf(f,
          "usage: whatif critical DB [--symptom S] [--top N] [--json]\n"
          "  Walk back along binding edges (what each stage of each instruction waited for last) and\n"
          "  report where the cycles went: by edge kind, resource, static PC and function. The parts\n"
          "  sum to the walk's cycles (the window's cycles without a symptom).\n"
          "  --symptom  rob-head (longest ROB-head stall), dispatch (longest dispatch stall), miss\n"
          "             (slowest L1-missing load), fid:N[:F|D|I|C|R] (a given flow and stage), or end (the\n"
          "             whole path, hop by hop): prints the chain of hops inside the stall and its root\n"
          "             cause (a mispredicted branch, an evicting access, ...)\n"
          "  --top N    rows per table (default 15; 0 = all)\n");
}

static void json_shares(jw *w, const char *key, const mfir_share *s, size_t n, uint64_t total, size_t top,
                        bool rid) {
  jw_key(w, key);
  jw_arr_begin(w);
  for (size_t i = 0; i < n && (!top || i < top); i++) {
    jw_obj_begin(w);
    if (rid) jw_kuint(w, "rid", s[i].key);
    jw_kstr(w, rid ? "name" : "function", s[i].name);
    jw_kuint(w, "cycles", s[i].cycles);
    jw_knum(w, "share", total ? (double)s[i].cycles / (double)total : 0.0);
    jw_obj_end(w);
  }
  jw_arr_end(w);
}

static void step_json(jw *w, mfir_db *d, const mfir_step *s) {
  const mfir_pcinfo *pi = mfir_pc_info(d, s->pc);
  char buf[64];
  jw_obj_begin(w);
  jw_kint(w, "fid", s->fid);
  jw_kstr(w, "stage", mfir_stage_name(s->stage));
  jw_kuint(w, "cycle", s->cycle);
  jw_kuint(w, "pc", s->pc);
  jw_kstr(w, "asm", pi ? pi->asm_text : NULL);
  jw_kstr(w, "function", pi ? pi->function : NULL);
  jw_kstr(w, "kind", mfir_kind_name(s->kind));
  if (s->rid) jw_kstr(w, "resource", mfir_rid_name(s->rid, buf, sizeof buf));
  else jw_kstr(w, "resource", NULL);
  if (s->to_fid != MFIR_NOFID) {
    jw_kint(w, "to_fid", s->to_fid);
    jw_kstr(w, "to_stage", mfir_stage_name(s->to_stage));
  } else {
    jw_key(w, "to_fid");
    jw_null(w);
  }
  jw_kuint(w, "cycles", s->cycles);
  jw_obj_end(w);
}

static void step_text(mfir_db *d, const mfir_step *s) {
  const mfir_pcinfo *pi = mfir_pc_info(d, s->pc);
  char buf[64];
  printf("  %8llu  %6lld.%s  0x%-10llx %-28.28s %-14s %-16s", (unsigned long long)s->cycles, (long long)s->fid,
         mfir_stage_name(s->stage), (unsigned long long)s->pc, pi ? pi->asm_text : "?", mfir_kind_name(s->kind),
         s->rid ? mfir_rid_name(s->rid, buf, sizeof buf) : "");
  if (s->to_fid != MFIR_NOFID) printf(" <- %lld.%s", (long long)s->to_fid, mfir_stage_name(s->to_stage));
  printf("\n");
}

int cmd_critical(int argc, char **argv) {
  const char *path = NULL, *symptom = NULL;
  bool json = false;
  uint64_t top = 15;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      usage(stdout);
      return 0;
    } else if (!strcmp(a, "--json")) {
      json = true;
    } else if (!strcmp(a, "--symptom") || !strcmp(a, "--top")) {
      if (i + 1 >= argc) return cli_usage("critical", "%s needs a value", a);
      if (!strcmp(a, "--symptom")) symptom = argv[++i];
      else if (!parse_u64(argv[++i], &top)) return cli_usage("critical", "--top wants a count");
    } else if (a[0] == '-') {
      return cli_usage("critical", "unknown option '%s' (see whatif critical --help)", a);
    } else if (!path) {
      path = a;
    } else {
      return cli_usage("critical", "more than one database given ('%s')", a);
    }
  }
  if (!path) return cli_usage("critical", "no MFIR database given (usage: whatif critical DB [--symptom S] [--top N] [--json])");
  wi_err err = {0};
  mfir_db *d = mfir_open(path, &err);
  if (!d) return cli_fail(&err);
  double t0 = wi_now();
  mfir_critical c;
  if (mfir_critical_path(d, symptom, &c, &err)) {
    mfir_close(d);
    return cli_fail(&err);
  }
  double secs = wi_now() - t0;
  size_t ntop = (size_t)top;
  bool chain = c.chain != NULL || (symptom && strcmp(symptom, "end"));
  if (json) {
    jw w;
    jw_init(&w, stdout, true);
    jw_obj_begin(&w);
    jw_kstr(&w, "database", path);
    jw_kstr(&w, "symptom", c.symptom);
    jw_kuint(&w, "total_cycles", c.total);
    jw_kuint(&w, "start_cycle", c.start_cycle);
    jw_kuint(&w, "end_cycle", c.end_cycle);
    jw_kuint(&w, "hops", c.n_hops);
    jw_key(&w, "by_kind");
    jw_obj_begin(&w);
    for (size_t i = 0; i < c.n_kind; i++) jw_kuint(&w, c.by_kind[i].name, c.by_kind[i].cycles);
    jw_obj_end(&w);
    json_shares(&w, "by_resource", c.by_rid, c.n_rid, c.total, ntop, true);
    jw_key(&w, "by_pc");
    jw_arr_begin(&w);
    for (size_t i = 0; i < c.n_pc && (!ntop || i < ntop); i++) {
      const mfir_pcinfo *pi = mfir_pc_info(d, c.by_pc[i].key);
      jw_obj_begin(&w);
      jw_kuint(&w, "pc", c.by_pc[i].key);
      jw_kstr(&w, "asm", pi ? pi->asm_text : NULL);
      jw_kstr(&w, "function", pi ? pi->function : NULL);
      jw_kuint(&w, "cycles", c.by_pc[i].cycles);
      jw_knum(&w, "share", c.total ? (double)c.by_pc[i].cycles / (double)c.total : 0.0);
      jw_obj_end(&w);
    }
    jw_arr_end(&w);
    json_shares(&w, "by_function", c.by_func, c.n_func, c.total, ntop, false);
    if (chain) {
      jw_key(&w, "chain");
      jw_arr_begin(&w);
      for (size_t i = 0; i < c.n_chain; i++) step_json(&w, d, &c.chain[i]);
      jw_arr_end(&w);
      jw_key(&w, "root");
      if (c.root_fid != MFIR_NOFID) {
        uint64_t pc = c.root_pc;
        const mfir_pcinfo *pi = NULL;
        jw_obj_begin(&w);
        jw_kint(&w, "fid", c.root_fid);
        jw_kstr(&w, "via", mfir_kind_name(c.root_kind));
        if (pc) {
          pi = mfir_pc_info(d, pc);
          jw_kuint(&w, "pc", pc);
          jw_kstr(&w, "asm", pi ? pi->asm_text : NULL);
          jw_kstr(&w, "function", pi ? pi->function : NULL);
        }
        jw_obj_end(&w);
      } else {
        jw_null(&w);
      }
    }
    jw_knum(&w, "seconds", secs);
    jw_obj_end(&w);
    jw_end(&w);
  } else {
    const mfir_window *win = mfir_get_window(d);
    printf("walk        %s: %llu cycles (%llu..%llu), %zu hops; window %llu instructions, %llu cycles\n", c.symptom,
           (unsigned long long)c.total, (unsigned long long)c.start_cycle, (unsigned long long)c.end_cycle, c.n_hops,
           (unsigned long long)win->insns, (unsigned long long)win->total_cycles);
    double tot = c.total ? (double)c.total : 1.0;
    printf("\nby edge kind\n");
    for (size_t i = 0; i < c.n_kind && (!ntop || i < ntop); i++)
      printf("  %-16s %12llu  %5.1f%%\n", c.by_kind[i].name, (unsigned long long)c.by_kind[i].cycles,
             100.0 * (double)c.by_kind[i].cycles / tot);
    printf("\nby resource\n");
    for (size_t i = 0; i < c.n_rid && (!ntop || i < ntop); i++)
      printf("  %-16s %12llu  %5.1f%%\n", c.by_rid[i].name, (unsigned long long)c.by_rid[i].cycles,
             100.0 * (double)c.by_rid[i].cycles / tot);
    printf("\nby static instruction\n");
    for (size_t i = 0; i < c.n_pc && (!ntop || i < ntop); i++) {
      const mfir_pcinfo *pi = mfir_pc_info(d, c.by_pc[i].key);
      printf("  0x%-12llx %-32.32s %12llu  %5.1f%%  %s\n", (unsigned long long)c.by_pc[i].key,
             pi ? pi->asm_text : "?", (unsigned long long)c.by_pc[i].cycles,
             100.0 * (double)c.by_pc[i].cycles / tot, pi ? pi->function : "?");
    }
    printf("\nby function\n");
    for (size_t i = 0; i < c.n_func && (!ntop || i < ntop); i++)
      printf("  %-32s %12llu  %5.1f%%\n", c.by_func[i].name, (unsigned long long)c.by_func[i].cycles,
             100.0 * (double)c.by_func[i].cycles / tot);
    if (chain) {
      printf("\nchain (symptom first): cycles  flow.stage  pc  instruction  edge  resource  <- waited for\n");
      for (size_t i = 0; i < c.n_chain && (!ntop || i < 4 * ntop); i++) step_text(d, &c.chain[i]);
      if (ntop && c.n_chain > 4 * ntop) printf("  ... %zu more hops\n", c.n_chain - 4 * ntop);
      if (c.root_fid != MFIR_NOFID) {
        const mfir_pcinfo *pi = mfir_pc_info(d, c.root_pc);
        printf("\nroot cause  flow %lld at 0x%llx %s in %s (via %s)\n", (long long)c.root_fid,
               (unsigned long long)c.root_pc, pi ? pi->asm_text : "?", pi ? pi->function : "?",
               mfir_kind_name(c.root_kind));
      }
    }
  }
  mfir_critical_free(&c);
  mfir_close(d);
  return 0;
}

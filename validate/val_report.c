/* val_report.c — the validation results as JSON (for programs) and as a text summary (for
 * people). */
#include <math.h>
#include <string.h>

#include "val.h"
#include "val_int.h"

/* ---- JSON ------------------------------------------------------------------------------------ */

static void j_pc(jw *w, const val_pc *p) {
  jw_obj_begin(w);
  jw_kuint(w, "pc", p->pc);
  jw_kstr(w, "asm", p->text);
  jw_kstr(w, "where", p->where);
  jw_obj_end(w);
}

static void j_cmp_stats(jw *w, const val_cmp *c, const char *topname) {
  jw_kuint(w, "n", c->n);
  jw_knum(w, "kendall_tau_b", c->tau);
  jw_knum(w, "ci_low", c->ci_lo);
  jw_knum(w, "ci_high", c->ci_hi);
  jw_kuint(w, "bootstrap_kept", c->boot_kept);
  jw_knum(w, "spearman", c->spearman);
  jw_knum(w, topname, c->top10);
}

void val_json(val_result *const *rs, size_t n, bool timings, FILE *f) {
  jw w;
  jw_init(&w, f, true);
  jw_obj_begin(&w);
  jw_kstr(&w, "tool", "whatif validate");
  jw_kstr(&w, "version", WHATIF_VERSION);

  jw_key(&w, "settings");
  jw_obj_begin(&w);
  if (n) {
    jw_kuint(&w, "min_count", rs[0]->min_count);
    jw_kuint(&w, "top", rs[0]->top);
    jw_kuint(&w, "bootstrap_iters", rs[0]->boot_iters);
    jw_kuint(&w, "seed", rs[0]->seed);
    jw_knum(&w, "ci_level", 0.95);
  }
  jw_key(&w, "ground_truths");
  jw_arr_begin(&w);
  for (int g = 0; g < VAL_GT_NUM; g++) {
    jw_obj_begin(&w);
    jw_kstr(&w, "name", val_gt_name(g));
    jw_kstr(&w, "intervention", val_gt_template(g));
    jw_kstr(&w, "importance", g == VAL_GT_REMOVE ? "baseline - intervened cycles (cycles saved)"
                                                 : "intervened - baseline cycles (cycles added)");
    jw_obj_end(&w);
  }
  jw_arr_end(&w);
  jw_key(&w, "ranking_docs");
  jw_obj_begin(&w);
  for (int k = 0; k < VAL_RK_NUM; k++) jw_kstr(&w, val_rk_name(k), val_rk_doc(k));
  jw_obj_end(&w);
  jw_obj_end(&w);

  jw_key(&w, "rankings");
  jw_arr_begin(&w);
  for (size_t t = 0; t < n; t++)
    for (int k = 0; k < VAL_RK_NUM; k++) {
      if (!rs[t]->has_rk[k]) continue;
      for (int g = 0; g < VAL_GT_NUM; g++) {
        const val_cmp *c = &rs[t]->cmp[k][g];
        jw_obj_begin(&w);
        jw_kstr(&w, "workload", rs[t]->workload);
        jw_kstr(&w, "name", val_rk_name(k));
        jw_kstr(&w, "ground_truth", val_gt_name(g));
        j_cmp_stats(&w, c, "top10_precision");
        jw_obj_end(&w);
      }
    }
  jw_arr_end(&w);

  jw_key(&w, "stability");
  jw_arr_begin(&w);
  for (size_t t = 0; t < n; t++)
    for (int p = 0; p < 3; p++) {
      const val_cmp *c = &rs[t]->stab[p];
      if (!rs[t]->has_rk[c->rk] || !rs[t]->has_rk[c->rk2]) continue;
      jw_obj_begin(&w);
      jw_kstr(&w, "workload", rs[t]->workload);
      jw_kstr(&w, "a", val_rk_name(c->rk));
      jw_kstr(&w, "b", val_rk_name(c->rk2));
      j_cmp_stats(&w, c, "top10_overlap");
      jw_obj_end(&w);
    }
  jw_arr_end(&w);

  jw_key(&w, "injected");
  jw_arr_begin(&w);
  for (size_t t = 0; t < n; t++) {
    const val_result *r = rs[t];
    if (!r->has_check) continue;
    const val_check *ch = &r->check;
    jw_obj_begin(&w);
    jw_kstr(&w, "workload", r->workload);
    jw_kstr(&w, "cause", ch->cause->cause);
    jw_kstr(&w, "ground_truth", val_gt_name(ch->cause->gt));
    jw_kstr(&w, "why", ch->cause->why);
    jw_key(&w, "expected");
    jw_arr_begin(&w);
    for (size_t i = 0; i < r->n_pcs; i++)
      if (r->pcs[i].expected) j_pc(&w, &r->pcs[i]);
    jw_arr_end(&w);
    jw_key(&w, "top_by_perturbation");
    if (ch->top_truth == SIZE_MAX) {
      jw_null(&w);
    } else {
      const val_pc *p = &r->pcs[ch->top_truth];
      jw_obj_begin(&w);
      jw_kuint(&w, "pc", p->pc);
      jw_kstr(&w, "asm", p->text);
      jw_kstr(&w, "where", p->where);
      jw_kint(&w, "delta_cycles", p->delta[ch->cause->gt]);
      jw_kbool(&w, "in_expected", p->expected);
      jw_obj_end(&w);
    }
    jw_key(&w, "top_by_ranking");
    jw_obj_begin(&w);
    for (int k = 0; k < VAL_RK_NUM; k++) {
      if (!r->has_rk[k]) continue;
      jw_key(&w, val_rk_name(k));
      if (ch->top_rank[k] == SIZE_MAX) {
        jw_null(&w);
        continue;
      }
      const val_pc *p = &r->pcs[ch->top_rank[k]];
      jw_obj_begin(&w);
      jw_kuint(&w, "pc", p->pc);
      jw_kstr(&w, "asm", p->text);
      jw_kstr(&w, "where", p->where);
      jw_kbool(&w, "in_expected", p->expected);
      jw_obj_end(&w);
    }
    jw_obj_end(&w);
    jw_key(&w, "rankings_agreeing");
    jw_arr_begin(&w);
    for (int k = 0; k < VAL_RK_NUM; k++)
      if (r->has_rk[k] && ch->top_rank[k] != SIZE_MAX && r->pcs[ch->top_rank[k]].expected) jw_str(&w, val_rk_name(k));
    jw_arr_end(&w);
    jw_kbool(&w, "pass", ch->pass);
    jw_kstr(&w, "note", ch->note);
    jw_obj_end(&w);
  }
  jw_arr_end(&w);

  jw_key(&w, "traces");
  jw_arr_begin(&w);
  for (size_t t = 0; t < n; t++) {
    const val_result *r = rs[t];
    jw_obj_begin(&w);
    jw_kstr(&w, "path", r->trace_path);
    jw_kstr(&w, "workload", r->workload);
    jw_kstr(&w, "machine", r->machine);
    jw_kuint(&w, "insns", r->insns);
    jw_kuint(&w, "cycles", r->cycles);
    jw_knum(&w, "ipc", r->ipc);
    jw_kuint(&w, "n_static", r->n_static);
    jw_kuint(&w, "n_pcs", r->n_pcs);
    jw_kuint(&w, "replays", r->n_replays);
    jw_key(&w, "mfir");
    jw_obj_begin(&w);
    jw_kbool(&w, "present", r->has_rk[VAL_RK_MFIR]);
    jw_kuint(&w, "window_start", r->mfir_start);
    jw_kuint(&w, "window_insns", r->mfir_count);
    jw_kstr(&w, "note", r->mfir_note);
    jw_obj_end(&w);
    jw_key(&w, "pcs");
    jw_arr_begin(&w);
    for (size_t i = 0; i < r->n_pcs; i++) {
      const val_pc *p = &r->pcs[i];
      jw_obj_begin(&w);
      jw_kuint(&w, "pc", p->pc);
      jw_kstr(&w, "asm", p->text);
      jw_kstr(&w, "where", p->where);
      jw_kstr(&w, "line", p->line);
      jw_kuint(&w, "count", p->count);
      jw_kbool(&w, "expected", p->expected);
      jw_key(&w, "delta_cycles");
      jw_obj_begin(&w);
      for (int g = 0; g < VAL_GT_NUM; g++) jw_kint(&w, val_gt_name(g), p->delta[g]);
      jw_obj_end(&w);
      jw_key(&w, "scores");
      jw_obj_begin(&w);
      for (int k = 0; k < VAL_RK_NUM; k++)
        if (r->has_rk[k]) jw_knum(&w, val_rk_name(k), p->score[k]);
      jw_obj_end(&w);
      jw_obj_end(&w);
    }
    jw_arr_end(&w);
    jw_obj_end(&w);
  }
  jw_arr_end(&w);

  if (timings) {
    jw_key(&w, "timings");
    jw_arr_begin(&w);
    for (size_t t = 0; t < n; t++) {
      const val_result *r = rs[t];
      jw_obj_begin(&w);
      jw_kstr(&w, "workload", r->workload);
      jw_knum(&w, "baseline_s", r->baseline_s);
      jw_knum(&w, "gus_s", r->gus_s);
      jw_knum(&w, "mfir_s", r->mfir_s);
      jw_knum(&w, "sweep_s", r->sweep_s);
      jw_knum(&w, "stats_s", r->stats_s);
      jw_knum(&w, "total_s", r->total_s);
      jw_obj_end(&w);
    }
    jw_arr_end(&w);
  }
  jw_obj_end(&w);
  jw_end(&w);
}

/* ---- text -------------------------------------------------------------------------------------- */

static void t_num(FILE *f, double v, int width, int prec) {
  if (isnan(v)) fprintf(f, "%*s", width, "-");
  else fprintf(f, "%*.*f", width, prec, v);
}

static void t_ci(FILE *f, const val_cmp *c) {
  if (isnan(c->ci_lo)) fprintf(f, "  %-17s", "[undefined]");
  else fprintf(f, "  [%6.3f, %6.3f] ", c->ci_lo, c->ci_hi);
}

size_t val_count_checks(val_result *const *rs, size_t n, size_t *passed) {
  size_t checks = 0;
  *passed = 0;
  for (size_t t = 0; t < n; t++)
    if (rs[t]->has_check) {
      checks++;
      *passed += rs[t]->check.pass;
    }
  return checks;
}

/* The injected-cause checks of several traces as one table. */
static void checks_table(val_result *const *rs, size_t n, FILE *f) {
  size_t passed = 0, checks = val_count_checks(rs, n, &passed);
  if (checks) {
    fprintf(f, "\ninjected-cause checks: %zu of %zu pass\n", passed, checks);
    fprintf(f, "  %-10s %-5s %-46s %s\n", "workload", "", "#1 by perturbation", "rankings agreeing");
    for (size_t t = 0; t < n; t++) {
      const val_result *r = rs[t];
      if (!r->has_check) continue;
      const val_check *ch = &r->check;
      char top[160] = "-";
      if (ch->top_truth != SIZE_MAX)
        snprintf(top, sizeof top, "%s %s", r->pcs[ch->top_truth].where, r->pcs[ch->top_truth].text);
      fprintf(f, "  %-10s %-5s %-46.46s", r->workload, ch->pass ? "PASS" : "FAIL", top);
      int any = 0;
      for (int k = 0; k < VAL_RK_NUM; k++)
        if (r->has_rk[k] && ch->top_rank[k] != SIZE_MAX && r->pcs[ch->top_rank[k]].expected) {
          fprintf(f, "%s%s", any ? ", " : " ", val_rk_name(k));
          any = 1;
        }
      fprintf(f, "%s\n", any ? "" : " none");
    }
  }
}

void val_text(val_result *const *rs, size_t n, FILE *f) {
  for (size_t t = 0; t < n; t++) {
    const val_result *r = rs[t];
    if (t) fputc('\n', f);
    fprintf(f, "validate  %s  (%s on %s: %llu instructions, %llu cycles, IPC %.3f)\n", r->trace_path,
            r->workload[0] ? r->workload : "?", r->machine, (unsigned long long)r->insns,
            (unsigned long long)r->cycles, r->ipc);
    fprintf(f, "PC set    %zu static instructions (executed >= %llu times", r->n_pcs, (unsigned long long)r->min_count);
    if (r->top) fprintf(f, ", at most the %llu most executed", (unsigned long long)r->top);
    if (r->has_check) fprintf(f, ", plus the injected cause's");
    fprintf(f, "); %zu replays\n", r->n_replays);
    fprintf(f, "MFIR      %s\n", r->mfir_note);
    fprintf(f, "\n  %-20s %-10s %7s  %-17s %8s %7s\n", "ranking", "truth", "tau-b", "95% CI", "Spearman", "top-10");
    for (int k = 0; k < VAL_RK_NUM; k++) {
      if (!r->has_rk[k]) continue;
      for (int g = 0; g < VAL_GT_NUM; g++) {
        const val_cmp *c = &r->cmp[k][g];
        fprintf(f, "  %-20s %-10s ", g ? "" : val_rk_name(k), val_gt_name(g));
        t_num(f, c->tau, 7, 3);
        t_ci(f, c);
        t_num(f, c->spearman, 8, 3);
        t_num(f, c->top10, 7, 2);
        fputc('\n', f);
      }
    }
    fprintf(f, "  Gus stability (tau-b between windows):");
    for (int p = 0; p < 3; p++) {
      const val_cmp *c = &r->stab[p];
      fprintf(f, "%s %s~%s ", p ? "," : "", val_rk_name(c->rk) + 10, val_rk_name(c->rk2) + 10);
      t_num(f, c->tau, 0, 3);
    }
    fputc('\n', f);
    if (r->has_check) {
      const val_check *ch = &r->check;
      fprintf(f, "\ninjected  %s\n          by %s (%s): %s", ch->cause->cause, val_gt_name(ch->cause->gt),
              ch->cause->why, ch->pass ? "PASS" : "FAIL");
      if (ch->top_truth != SIZE_MAX) {
        const val_pc *p = &r->pcs[ch->top_truth];
        fprintf(f, ", #1 is %s  %s  (%+lld cycles)", p->where, p->text, (long long)p->delta[ch->cause->gt]);
      }
      fputc('\n', f);
      if (ch->note[0]) fprintf(f, "          %s\n", ch->note);
      fprintf(f, "          rankings whose #1 is in the expected set (%zu PCs):", ch->n_exp);
      int any = 0;
      for (int k = 0; k < VAL_RK_NUM; k++)
        if (r->has_rk[k] && ch->top_rank[k] != SIZE_MAX && r->pcs[ch->top_rank[k]].expected) {
          fprintf(f, "%s %s", any ? "," : "", val_rk_name(k));
          any = 1;
        }
      fprintf(f, "%s\n", any ? "" : " none");
    }
  }
  if (n > 1) checks_table(rs, n, f);
}

void val_summary(val_result *const *rs, size_t n, FILE *f) {
  fprintf(f, "rankings against per-PC perturbation: Kendall tau-b (* = its 95%% bootstrap interval excludes 0)\n");
  fprintf(f, "  %-20s %-10s", "ranking", "truth");
  for (size_t t = 0; t < n; t++) fprintf(f, " %10.10s", rs[t]->workload);
  fputc('\n', f);
  for (int k = 0; k < VAL_RK_NUM; k++) {
    bool any = false;
    for (size_t t = 0; t < n; t++) any |= rs[t]->has_rk[k];
    if (!any) continue;
    for (int g = 0; g < VAL_GT_NUM; g++) {
      fprintf(f, "  %-20s %-10s", g ? "" : val_rk_name(k), val_gt_name(g));
      for (size_t t = 0; t < n; t++) {
        const val_cmp *c = &rs[t]->cmp[k][g];
        if (!rs[t]->has_rk[k] || isnan(c->tau)) {
          fprintf(f, " %10s", "-");
          continue;
        }
        bool sig = !isnan(c->ci_lo) && (c->ci_lo > 0 || c->ci_hi < 0);
        fprintf(f, " %9.3f%c", c->tau, sig ? '*' : ' ');
      }
      fputc('\n', f);
    }
  }
  fprintf(f, "  %-31s", "Gus stability 2x~4x");
  for (size_t t = 0; t < n; t++) {
    const val_cmp *c = &rs[t]->stab[1];
    if (isnan(c->tau)) fprintf(f, " %10s", "-");
    else fprintf(f, " %9.3f ", c->tau);
  }
  fputc('\n', f);
  fprintf(f, "  %-31s", "PCs compared");
  for (size_t t = 0; t < n; t++) fprintf(f, " %9zu ", rs[t]->n_pcs);
  fputc('\n', f);
  checks_table(rs, n, f);
}

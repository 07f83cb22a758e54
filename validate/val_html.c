/* val_html.c — the validation report as one self-contained HTML file: inline CSS and SVG
 * (tau bars with bootstrap intervals, scatter of each ranking's score against the true delta),
 * no scripts, no external resources. */
#include <math.h>
#include <string.h>

#include "val.h"
#include "val_int.h"

/* ---- helpers ------------------------------------------------------------------------------------ */

static void esc(FILE *f, const char *s) {
  for (; s && *s; s++) {
    switch (*s) {
    case '&': fputs("&amp;", f); break;
    case '<': fputs("&lt;", f); break;
    case '>': fputs("&gt;", f); break;
    case '"': fputs("&quot;", f); break;
    case '\'': fputs("&#39;", f); break;
    default: fputc(*s, f);
    }
  }
}

static void num(FILE *f, double v, int prec) {
  if (isnan(v)) fputs("&ndash;", f);
  else fprintf(f, "%.*f", prec, v);
}

/* Signed log scale: keeps zero, sign and orders of magnitude readable on one axis. */
static double symlog(double v) { return v < 0 ? -log10(1.0 - v) : log10(1.0 + v); }

/* Shortest readable form of a count for axis labels ("1.2e+05" beyond 6 digits). */
static void short_num(char *buf, size_t n, double v) {
  if (fabs(v) < 0.5) snprintf(buf, n, "0");
  else if (fabs(v) < 1e6) snprintf(buf, n, "%.0f", v);
  else snprintf(buf, n, "%.2g", v);
}

/* A colour for tau in [-1, 1]: red (disagree) through grey to green (agree). */
static void tau_colour(FILE *f, double tau) {
  if (isnan(tau)) {
    fputs("#eee", f);
    return;
  }
  double a = fabs(tau);
  int base = 255 - (int)(a * 110.0);
  if (tau >= 0) fprintf(f, "rgb(%d,255,%d)", base, base);
  else fprintf(f, "rgb(255,%d,%d)", base, base);
}

static const char *const k_gt_colour[VAL_GT_NUM] = {"#3b6fb6", "#d9822b"};

/* ---- bars: tau-b per ranking and ground truth, with the bootstrap interval ---------------------- */

static void svg_bars(FILE *f, const val_result *r) {
  const int left = 150, width = 360, row = 15, top = 28;
  int nrk = 0;
  for (int k = 0; k < VAL_RK_NUM; k++) nrk += r->has_rk[k];
  int height = top + nrk * (VAL_GT_NUM * row + 8) + 24;
  fprintf(f, "<svg xmlns='http://www.w3.org/2000/svg' width='%d' height='%d' role='img' "
             "aria-label='Kendall tau-b per ranking'>\n", left + width + 30, height);
  double x0 = left + width / 2.0; /* tau = 0 */
  for (int i = -2; i <= 2; i++) {
    double x = x0 + i * width / 4.0;
    fprintf(f, "<line x1='%.1f' y1='%d' x2='%.1f' y2='%d' stroke='%s'/>\n", x, top - 6, x, height - 20,
            i ? "#ddd" : "#888");
    fprintf(f, "<text x='%.1f' y='%d' font-size='11' text-anchor='middle'>%.1f</text>\n", x, height - 6, i / 2.0);
  }
  for (int g = 0; g < VAL_GT_NUM; g++) {
    fprintf(f, "<rect x='%d' y='6' width='10' height='10' fill='%s'/>", left + g * 150, k_gt_colour[g]);
    fprintf(f, "<text x='%d' y='15' font-size='11'>vs %s</text>\n", left + 14 + g * 150, val_gt_name(g));
  }
  int y = top;
  for (int k = 0; k < VAL_RK_NUM; k++) {
    if (!r->has_rk[k]) continue;
    fprintf(f, "<text x='%d' y='%d' font-size='12' text-anchor='end'>%s</text>\n", left - 6, y + row + 3,
            val_rk_name(k));
    for (int g = 0; g < VAL_GT_NUM; g++) {
      const val_cmp *c = &r->cmp[k][g];
      int yy = y + g * row;
      if (!isnan(c->tau)) {
        double xt = x0 + c->tau * width / 2.0;
        double xa = xt < x0 ? xt : x0, w = fabs(xt - x0);
        fprintf(f, "<rect x='%.1f' y='%d' width='%.1f' height='%d' fill='%s'><title>%s vs %s: tau-b %.3f", xa,
                yy + 2, w < 1 ? 1 : w, row - 4, k_gt_colour[g], val_rk_name(k), val_gt_name(g), c->tau);
        if (!isnan(c->ci_lo)) fprintf(f, " [%.3f, %.3f]", c->ci_lo, c->ci_hi);
        fprintf(f, "</title></rect>\n");
        if (!isnan(c->ci_lo)) {
          double xl = x0 + c->ci_lo * width / 2.0, xh = x0 + c->ci_hi * width / 2.0, ym = yy + row / 2.0;
          fprintf(f, "<line x1='%.1f' y1='%.1f' x2='%.1f' y2='%.1f' stroke='#222'/>", xl, ym, xh, ym);
          fprintf(f, "<line x1='%.1f' y1='%.1f' x2='%.1f' y2='%.1f' stroke='#222'/>", xl, ym - 3, xl, ym + 3);
          fprintf(f, "<line x1='%.1f' y1='%.1f' x2='%.1f' y2='%.1f' stroke='#222'/>\n", xh, ym - 3, xh, ym + 3);
        }
      } else {
        fprintf(f, "<text x='%.1f' y='%d' font-size='10' fill='#888'>undefined</text>\n", x0 + 4, yy + row - 3);
      }
    }
    y += VAL_GT_NUM * row + 8;
  }
  fputs("</svg>\n", f);
}

/* ---- scatter: one ranking's score against one ground truth's importance ------------------------- */

static void svg_scatter(FILE *f, const val_result *r, int k, int g) {
  const int W = 270, H = 230, ml = 46, mr = 8, mt = 22, mb = 34;
  const int pw = W - ml - mr, ph = H - mt - mb;
  double xmin = INFINITY, xmax = -INFINITY, ymin = INFINITY, ymax = -INFINITY;
  double rxmin = 0, rxmax = 0, rymin = 0, rymax = 0;
  for (size_t i = 0; i < r->n_pcs; i++) {
    double xv = r->pcs[i].score[k], yv = val_importance(&r->pcs[i], g);
    double x = symlog(xv), yy = symlog(yv);
    if (x < xmin) xmin = x, rxmin = xv;
    if (x > xmax) xmax = x, rxmax = xv;
    if (yy < ymin) ymin = yy, rymin = yv;
    if (yy > ymax) ymax = yy, rymax = yv;
  }
  if (!(xmax > xmin)) xmin -= 1, xmax += 1;
  if (!(ymax > ymin)) ymin -= 1, ymax += 1;
  fprintf(f, "<svg xmlns='http://www.w3.org/2000/svg' width='%d' height='%d' role='img' aria-label='%s against %s'>\n",
          W, H, val_rk_name(k), val_gt_name(g));
  const val_cmp *c = &r->cmp[k][g];
  fprintf(f, "<text x='%d' y='14' font-size='11'>%s &#8596; %s, &#964;=", ml, val_rk_name(k), val_gt_name(g));
  num(f, c->tau, 2);
  fputs("</text>\n", f);
  fprintf(f, "<rect x='%d' y='%d' width='%d' height='%d' fill='#fafafa' stroke='#bbb'/>\n", ml, mt, pw, ph);
#define SX(v) (ml + ((v) - xmin) / (xmax - xmin) * pw)
#define SY(v) (mt + ph - ((v) - ymin) / (ymax - ymin) * ph)
  if (xmin < 0 && xmax > 0)
    fprintf(f, "<line x1='%.1f' y1='%d' x2='%.1f' y2='%d' stroke='#ccc'/>\n", SX(0.0), mt, SX(0.0), mt + ph);
  if (ymin < 0 && ymax > 0)
    fprintf(f, "<line x1='%d' y1='%.1f' x2='%d' y2='%.1f' stroke='#ccc'/>\n", ml, SY(0.0), ml + pw, SY(0.0));
  char b1[32], b2[32];
  short_num(b1, sizeof b1, rxmin);
  short_num(b2, sizeof b2, rxmax);
  fprintf(f, "<text x='%d' y='%d' font-size='10'>%s</text>", ml, mt + ph + 12, b1);
  fprintf(f, "<text x='%d' y='%d' font-size='10' text-anchor='end'>%s</text>\n", ml + pw, mt + ph + 12, b2);
  fprintf(f, "<text x='%.1f' y='%d' font-size='10' text-anchor='middle'>score (signed log)</text>\n", ml + pw / 2.0,
          mt + ph + 26);
  short_num(b1, sizeof b1, rymin);
  short_num(b2, sizeof b2, rymax);
  fprintf(f, "<text x='%d' y='%d' font-size='10' text-anchor='end'>%s</text>", ml - 3, mt + ph, b1);
  fprintf(f, "<text x='%d' y='%d' font-size='10' text-anchor='end'>%s</text>\n", ml - 3, mt + 9, b2);
  fprintf(f, "<text x='10' y='%.1f' font-size='10' text-anchor='middle' transform='rotate(-90 10 %.1f)'>"
             "%s cycles (signed log)</text>\n",
          mt + ph / 2.0, mt + ph / 2.0, g == VAL_GT_REMOVE ? "saved" : "added");
  for (int pass = 0; pass < 2; pass++) /* expected PCs last, on top */
    for (size_t i = 0; i < r->n_pcs; i++) {
      const val_pc *p = &r->pcs[i];
      if (p->expected != (pass == 1)) continue;
      double x = SX(symlog(p->score[k])), yy = SY(symlog(val_importance(p, g)));
      fprintf(f, "<circle cx='%.1f' cy='%.1f' r='%s' fill='%s' fill-opacity='0.75'><title>", x, yy,
              p->expected ? "4" : "3", p->expected ? "#c0392b" : k_gt_colour[g]);
      esc(f, p->where);
      fputs("  ", f);
      esc(f, p->text);
      fprintf(f, "\nscore %.6g, delta %+lld cycles%s</title></circle>\n", p->score[k], (long long)p->delta[g],
              p->expected ? " (expected cause)" : "");
    }
#undef SX
#undef SY
  fputs("</svg>\n", f);
}

/* ---- the page -------------------------------------------------------------------------------------- */

static void pc_cell(FILE *f, const val_pc *p) {
  fputs("<td class='l'><code>", f);
  esc(f, p->where);
  fputs("</code></td><td class='l'><code>", f);
  esc(f, p->text);
  fputs("</code></td>", f);
}

static void section(FILE *f, const val_result *r, size_t idx) {
  fprintf(f, "<h2 id='t%zu'>", idx);
  esc(f, r->workload[0] ? r->workload : "trace");
  fputs("</h2>\n<p><code>", f);
  esc(f, r->trace_path);
  fprintf(f, "</code> on ");
  esc(f, r->machine);
  fprintf(f, ": %llu instructions, %llu cycles, IPC %.3f. PC set: %zu static instructions (executed at least %llu "
             "times",
          (unsigned long long)r->insns, (unsigned long long)r->cycles, r->ipc, r->n_pcs,
          (unsigned long long)r->min_count);
  if (r->top) fprintf(f, ", at most the %llu most executed", (unsigned long long)r->top);
  fprintf(f, "%s), %zu exact replays. MFIR: ", r->has_check ? ", plus the injected cause's" : "", r->n_replays);
  esc(f, r->mfir_note);
  fputs(".</p>\n", f);

  /* the agreement table */
  fputs("<table><tr><th class='l'>ranking</th>", f);
  for (int g = 0; g < VAL_GT_NUM; g++)
    fprintf(f, "<th>&#964;<sub>b</sub> vs %s</th><th>95%% CI</th><th>Spearman</th><th>top-10</th>", val_gt_name(g));
  fputs("</tr>\n", f);
  for (int k = 0; k < VAL_RK_NUM; k++) {
    if (!r->has_rk[k]) continue;
    fprintf(f, "<tr><td class='l' title='");
    esc(f, val_rk_doc(k));
    fprintf(f, "'>%s</td>", val_rk_name(k));
    for (int g = 0; g < VAL_GT_NUM; g++) {
      const val_cmp *c = &r->cmp[k][g];
      fputs("<td style='background:", f);
      tau_colour(f, c->tau);
      fputs("'>", f);
      num(f, c->tau, 3);
      fputs("</td><td>", f);
      if (isnan(c->ci_lo)) fputs("&ndash;", f);
      else fprintf(f, "[%.3f, %.3f]", c->ci_lo, c->ci_hi);
      fputs("</td><td>", f);
      num(f, c->spearman, 3);
      fputs("</td><td>", f);
      num(f, c->top10, 2);
      fputs("</td>", f);
    }
    fputs("</tr>\n", f);
  }
  fputs("</table>\n<p>Stability of the Gus ranking across taint windows (&#964;<sub>b</sub> [95% CI], top-10 "
        "overlap): ",
        f);
  for (int p = 0; p < 3; p++) {
    const val_cmp *c = &r->stab[p];
    fprintf(f, "%s%s &#8596; %s ", p ? "; " : "", val_rk_name(c->rk), val_rk_name(c->rk2));
    num(f, c->tau, 3);
    if (!isnan(c->ci_lo)) fprintf(f, " [%.3f, %.3f]", c->ci_lo, c->ci_hi);
    fputs(", ", f);
    num(f, c->top10, 2);
  }
  fputs(".</p>\n", f);

  if (r->has_check) {
    const val_check *ch = &r->check;
    fprintf(f, "<div class='check'><b>Injected cause:</b> ");
    esc(f, ch->cause->cause);
    fprintf(f, ". Ground truth: %s (", val_gt_name(ch->cause->gt));
    esc(f, ch->cause->why);
    fprintf(f, "). <span class='%s'>%s</span>", ch->pass ? "pass" : "fail", ch->pass ? "PASS" : "FAIL");
    if (ch->top_truth != SIZE_MAX) {
      const val_pc *p = &r->pcs[ch->top_truth];
      fputs(": #1 by perturbation is <code>", f);
      esc(f, p->where);
      fputs("  ", f);
      esc(f, p->text);
      fprintf(f, "</code> (%+lld cycles)", (long long)p->delta[ch->cause->gt]);
    }
    fputs(".", f);
    if (ch->note[0]) {
      fputs(" ", f);
      esc(f, ch->note);
      fputs(".", f);
    }
    fputs("<table><tr><th class='l'>ranking</th><th class='l'>its #1</th><th class='l'>asm</th><th>in the expected "
          "set</th></tr>\n",
          f);
    for (int k = 0; k < VAL_RK_NUM; k++) {
      if (!r->has_rk[k]) continue;
      fprintf(f, "<tr><td class='l'>%s</td>", val_rk_name(k));
      if (ch->top_rank[k] == SIZE_MAX) {
        fputs("<td class='l' colspan='2'>(no information: all scores equal)</td><td>no</td></tr>\n", f);
        continue;
      }
      const val_pc *p = &r->pcs[ch->top_rank[k]];
      pc_cell(f, p);
      fprintf(f, "<td class='%s'>%s</td></tr>\n", p->expected ? "pass" : "fail", p->expected ? "yes" : "no");
    }
    fputs("</table></div>\n", f);
  }

  fputs("<h3>Agreement</h3>\n", f);
  svg_bars(f, r);
  fputs("<h3>Score against true delta</h3>\n<p class='small'>Each point is one static instruction; red points are "
        "the injected cause's. Both axes are signed-log scaled; hover for the instruction.</p>\n<div class='grid'>\n",
        f);
  for (int k = 0; k < VAL_RK_NUM; k++)
    if (r->has_rk[k])
      for (int g = 0; g < VAL_GT_NUM; g++) svg_scatter(f, r, k, g);
  fputs("</div>\n", f);

  /* every PC */
  fputs("<details><summary>Per-instruction data</summary>\n<table><tr><th>pc</th><th class='l'>where</th>"
        "<th class='l'>asm</th><th class='l'>line</th><th>count</th>",
        f);
  for (int g = 0; g < VAL_GT_NUM; g++) fprintf(f, "<th>&#916; cycles %s</th>", val_gt_name(g));
  for (int k = 0; k < VAL_RK_NUM; k++)
    if (r->has_rk[k]) fprintf(f, "<th>%s</th>", val_rk_name(k));
  fputs("</tr>\n", f);
  for (size_t i = 0; i < r->n_pcs; i++) {
    const val_pc *p = &r->pcs[i];
    fprintf(f, "<tr%s><td><code>0x%llx</code></td>", p->expected ? " class='exp'" : "", (unsigned long long)p->pc);
    pc_cell(f, p);
    fputs("<td class='l'>", f);
    esc(f, p->line);
    fprintf(f, "</td><td>%llu</td>", (unsigned long long)p->count);
    for (int g = 0; g < VAL_GT_NUM; g++) fprintf(f, "<td>%+lld</td>", (long long)p->delta[g]);
    for (int k = 0; k < VAL_RK_NUM; k++)
      if (r->has_rk[k]) fprintf(f, "<td>%.0f</td>", p->score[k]);
    fputs("</tr>\n", f);
  }
  fputs("</table></details>\n", f);
}

static const char k_css[] =
  "body{font:14px/1.45 system-ui,-apple-system,'Segoe UI',sans-serif;margin:24px auto;max-width:1180px;"
  "color:#222;padding:0 16px}\n"
  "h1{font-size:22px}h2{font-size:18px;border-top:2px solid #ddd;padding-top:12px;margin-top:28px}"
  "h3{font-size:15px}\n"
  "table{border-collapse:collapse;margin:8px 0;font-size:13px}td,th{border:1px solid #ccc;padding:2px 7px;"
  "text-align:right;vertical-align:top}th{background:#f2f2f2}.l{text-align:left}\n"
  "code{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:12px}\n"
  ".pass{color:#11772d;font-weight:600}.fail{color:#b3261e;font-weight:600}\n"
  ".grid{display:flex;flex-wrap:wrap;gap:6px}.small{font-size:12px;color:#555}\n"
  ".check{background:#f7f7fb;border:1px solid #dde;padding:8px 12px;margin:10px 0}\n"
  "tr.exp td{background:#fdecea}details{margin:12px 0}summary{cursor:pointer}\n";

wi_rc val_html(val_result *const *rs, size_t n, const char *path, wi_err *err) {
  wi_atomic_file af;
  wi_rc rc = atomic_open(&af, path, err);
  if (rc) return rc;
  FILE *f = af.f;
  fprintf(f, "<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'>\n<title>whatif validate</title>\n"
             "<style>\n%s</style></head><body>\n",
          k_css);
  fprintf(f, "<h1>whatif validate: attributions against perturbation</h1>\n");
  fprintf(f, "<p>Ground truth per static instruction, by exact replays of the detailed model: <b>latency+1</b> "
             "(<code>latency{pc=X, add=1}</code>; importance = cycles added) and <b>removal</b> "
             "(<code>remove{pc=X}</code>; importance = cycles saved). Each ranking is compared with each ground "
             "truth by Kendall &#964;<sub>b</sub> (95%% percentile bootstrap interval, %u resamples, seed %llu), "
             "Spearman's &#961; and top-10 precision.</p>\n",
          n ? rs[0]->boot_iters : 0, n ? (unsigned long long)rs[0]->seed : 0ULL);
  fputs("<ul class='small'>", f);
  for (int k = 0; k < VAL_RK_NUM; k++) {
    fprintf(f, "<li><b>%s</b>: ", val_rk_name(k));
    esc(f, val_rk_doc(k));
    fputs("</li>", f);
  }
  fputs("</ul>\n", f);

  size_t passed = 0, checks = val_count_checks(rs, n, &passed);
  if (checks) {
    fprintf(f, "<h2>Injected-cause checks: %zu of %zu pass</h2>\n<table><tr><th class='l'>workload</th>"
               "<th class='l'>known cause</th><th class='l'>truth</th><th class='l'>#1 by perturbation</th>"
               "<th>&#916; cycles</th><th></th><th class='l'>rankings whose #1 is the cause</th></tr>\n",
            passed, checks);
    for (size_t t = 0; t < n; t++) {
      const val_result *r = rs[t];
      if (!r->has_check) continue;
      const val_check *ch = &r->check;
      fprintf(f, "<tr><td class='l'><a href='#t%zu'>", t);
      esc(f, r->workload);
      fputs("</a></td><td class='l'>", f);
      esc(f, ch->cause->cause);
      fprintf(f, "</td><td class='l'>%s</td><td class='l'>", val_gt_name(ch->cause->gt));
      if (ch->top_truth != SIZE_MAX) {
        const val_pc *p = &r->pcs[ch->top_truth];
        fputs("<code>", f);
        esc(f, p->where);
        fputs("  ", f);
        esc(f, p->text);
        fprintf(f, "</code></td><td>%+lld</td>", (long long)p->delta[ch->cause->gt]);
      } else {
        fputs("&ndash;</td><td></td>", f);
      }
      fprintf(f, "<td class='%s'>%s</td><td class='l'>", ch->pass ? "pass" : "fail", ch->pass ? "PASS" : "FAIL");
      int any = 0;
      for (int k = 0; k < VAL_RK_NUM; k++)
        if (r->has_rk[k] && ch->top_rank[k] != SIZE_MAX && r->pcs[ch->top_rank[k]].expected) {
          fprintf(f, "%s%s", any ? ", " : "", val_rk_name(k));
          any = 1;
        }
      fprintf(f, "%s</td></tr>\n", any ? "" : "none");
    }
    fputs("</table>\n", f);
  }
  for (size_t t = 0; t < n; t++) section(f, rs[t], t);
  fprintf(f, "<p class='small'>whatif %s</p>\n</body></html>\n", WHATIF_VERSION);
  return atomic_commit(&af, err);
}

/* val_cause.c — the injected-cause table: which instructions of each bundled workload are its
 * known bottleneck (from the workload's own `KEY` source markers), and which ground truth
 * checks it. */
#include <stdlib.h>
#include <string.h>

#include "symbols.h"
#include "val.h"
#include "val_int.h"

/* One table for every check. Ground truth per check:
 * - chains (fma_chain, ptrchase): latency+1. A link of a loop-carried dependency chain costs
 *   one cycle per iteration when its latency grows by one; no other instruction does. Removal
 *   is a poor probe for a chain: dropping a link also drops the work and lets the chain's
 *   consumers read an older producer (ptrchase's loads would all hit one line).
 * - branches and returns (branchy, recursion): removal. A dropped branch cannot mispredict, so
 *   the delta is what its mispredictions (and the wrong paths they fetch) cost. latency+1 only
 *   moves the resolution of each misprediction by a cycle. On recursion a dropped trigger
 *   (one of walk's four rare checks) also drops the wrong paths that corrupt the RAS, so it
 *   saves its share of the cascade too; the cascade's return mispredictions all hit walk's one
 *   `ret`, which therefore saves more (measured on the test recording: 19% of the cycles for
 *   the ret, 4% to 5% for each check; perfect_branch{pc} per PC, not a ground truth here,
 *   agrees: 16% against 4% to 6%).
 * - port pressure (ports): removal. The permutes' own chains have slack (3 cycles of latency
 *   against 6 cycles per iteration of port 5), so latency+1 costs next to nothing; removing
 *   one permute frees one port-5 cycle per iteration. */
static const val_cause k_causes[] = {
  {"fma_chain", "FMA latency: the loop-carried vfmadd231ps chain (KEY line, class fma)", NULL, IC_FMA, -1, false,
   VAL_GT_LAT, "a dependency chain: one more cycle per link costs one cycle per iteration"},
  {"ptrchase", "load latency: the chasing load p = p->next (KEY line, a memory read)", NULL, -1, -1, true, VAL_GT_LAT,
   "a chain of dependent misses: one more cycle per link costs one cycle per step"},
  {"branchy", "branch mispredictions: the data-dependent conditional branch (KEY line)", NULL, -1, BR_COND, false,
   VAL_GT_REMOVE, "a dropped branch cannot mispredict"},
  {"ports", "port pressure: the cross-lane permutes vpermd, port 5 only (KEY lines, class permute)", NULL,
   IC_PERMUTE, -1, false, VAL_GT_REMOVE,
   "removing a permute frees a port-5 cycle per iteration; its chain has slack for latency+1"},
  {"recursion", "return mispredictions from RAS corruption: the returns of walk() (KEY function)", "walk", -1, BR_RET,
   false, VAL_GT_REMOVE,
   "a dropped return cannot mispredict; the cascade's return mispredictions all hit walk's ret, while the "
   "mispredictions that start it are spread over four rare checks"},
};

const val_cause *val_cause_find(const char *workload) {
  if (!workload) return NULL;
  for (size_t i = 0; i < WI_ARRAY_LEN(k_causes); i++)
    if (!strcmp(k_causes[i].workload, workload)) return &k_causes[i];
  return NULL;
}

const val_cause *val_cause_at(size_t i, size_t *n) {
  if (n) *n = WI_ARRAY_LEN(k_causes);
  return i < WI_ARRAY_LEN(k_causes) ? &k_causes[i] : NULL;
}

static const char *base_name(const char *p) {
  const char *s = strrchr(p, '/');
  return s ? s + 1 : p;
}

/* ---- source lines -------------------------------------------------------------------------- */

struct val_lines {
  const trace_t *t;
  size_t n;
  sym_file **sf;  /* per trace object, opened on first use (NULL: not opened or failed) */
  bool *tried;
};

val_lines *val_lines_new(const trace_t *t) {
  val_lines *l = xcalloc(1, sizeof *l);
  l->t = t;
  l->n = trace_n_objects(t);
  l->sf = xcalloc(l->n ? l->n : 1, sizeof *l->sf);
  l->tried = xcalloc(l->n ? l->n : 1, sizeof *l->tried);
  return l;
}

void val_lines_free(val_lines *l) {
  if (!l) return;
  for (size_t i = 0; i < l->n; i++) sym_close(l->sf[i]);
  free(l->sf);
  free(l->tried);
  free(l);
}

bool val_line(val_lines *l, uint64_t pc, const char **file, uint32_t *line) {
  for (size_t i = 0; i < l->n; i++) {
    const trace_object *o = trace_object_at(l->t, i);
    if (pc < o->lo || pc >= o->hi) continue;
    if (!l->tried[i]) {
      l->tried[i] = true;
      wi_err e = {0};
      l->sf[i] = sym_open(o->path, o->bias, &e); /* the binary may be gone: then the trace's lines */
    }
    if (l->sf[i] && sym_stmt_line_at(l->sf[i], pc, file, line)) return true;
    break;
  }
  return trace_line_lookup(l->t, pc, file, line);
}

/* Line numbers (1-based) of the source text that carry a KEY marker comment ("/" "* KEY").
 * The header comments mention "the line marked KEY" without the comment opener, so they do
 * not count (no code maps to them anyway). Returns a malloc'd bitmap of *n_lines + 1 bytes. */
static uint8_t *key_lines(const char *text, size_t len, uint32_t *n_lines) {
  uint32_t lines = 1;
  for (size_t i = 0; i < len; i++)
    if (text[i] == '\n') lines++;
  uint8_t *mark = xcalloc((size_t)lines + 1, 1);
  uint32_t ln = 1;
  const char *p = text, *end = text + len;
  while (p < end) {
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    const char *le = nl ? nl : end;
    for (const char *q = p; q + 6 <= le; q++)
      if (!memcmp(q, "/* KEY", 6)) {
        mark[ln] = 1;
        break;
      }
    ln++;
    p = nl ? nl + 1 : end;
  }
  *n_lines = lines;
  return mark;
}

static bool reads_memory(const trace_t *t, uint32_t sid) {
  const trace_static *s = trace_static_at(t, sid);
  for (unsigned i = 0; i < s->n_mem && i < 8; i++)
    if (!(s->mem_store & (1u << i))) return true;
  const dec_insn *d = trace_decoded(t, sid);
  if (s->n_mem == 0)
    for (unsigned i = 0; i < d->n_mem && i < DEC_MAX_MEM; i++)
      if (d->mem_dir[i] & MEM_R) return true;
  return false;
}

static bool filters_pass(const val_cause *c, const trace_t *t, uint32_t sid) {
  const dec_insn *d = trace_decoded(t, sid);
  if (c->cls >= 0 && d->cls != c->cls) return false;
  if (c->br >= 0 && d->br != c->br) return false;
  if (c->load && !reads_memory(t, sid)) return false;
  return true;
}

wi_rc val_cause_pcs(const val_cause *c, const trace_t *t, const char *src_dir, uint32_t **out, size_t *n,
                    wi_err *err) {
  const trace_info *ti = trace_get_info(t);
  VEC(uint32_t) v = {0};
  *out = NULL;
  *n = 0;
  if (c->func) {
    for (uint32_t sid = 0; sid < ti->n_static; sid++) {
      const trace_static *s = trace_static_at(t, sid);
      const trace_sym *sym = trace_sym_lookup(t, s->pc);
      if (!sym || !sym->name || strcmp(sym->name, c->func)) continue;
      if (sym->object && strcmp(base_name(sym->object), c->workload)) continue; /* the workload's own */
      if (filters_pass(c, t, sid)) VEC_PUSH(v, sid);
    }
    *out = v.a;
    *n = v.n;
    return WI_OK;
  }

  /* KEY lines of <workload>.c: read the source once, from where the debug info says it was
   * compiled or from src_dir. */
  char want[128];
  snprintf(want, sizeof want, "%s.c", c->workload);
  char *text = NULL, *tried = NULL;
  size_t len = 0;
  uint8_t *mark = NULL;
  uint32_t n_lines = 0;
  wi_rc rc = WI_OK;
  val_lines *vl = val_lines_new(t);
  for (uint32_t sid = 0; sid < ti->n_static; sid++) {
    const trace_static *s = trace_static_at(t, sid);
    const char *file;
    uint32_t line;
    if (!val_line(vl, s->pc, &file, &line) || strcmp(base_name(file), want)) continue;
    if (!mark) {
      wi_err e2 = {0};
      const char *cands[2] = {file, NULL};
      char *alt = src_dir ? xasprintf("%s/%s", src_dir, want) : NULL;
      cands[1] = alt;
      for (int k = 0; k < 2 && !text; k++) {
        if (!cands[k]) continue;
        if (read_file(cands[k], &text, &len, &e2) == WI_OK) break;
        char *tn = xasprintf("%s%s%s", tried ? tried : "", tried ? ", " : "", cands[k]);
        free(tried);
        tried = tn;
        text = NULL;
      }
      free(alt);
      if (!text) {
        rc = wi_fail(err, WI_EIO, "%s: cannot read the source of the KEY lines (tried %s)", c->workload,
                     tried ? tried : want);
        break;
      }
      mark = key_lines(text, len, &n_lines);
    }
    if (line <= n_lines && mark[line] && filters_pass(c, t, sid)) VEC_PUSH(v, sid);
  }
  val_lines_free(vl);
  free(text);
  free(tried);
  free(mark);
  if (rc) {
    VEC_FREE(v);
    return rc;
  }
  *out = v.a;
  *n = v.n;
  return WI_OK;
}

/* rp_plan.c — compiling interventions into a replay plan: the edited configuration and one
 * filter (a per-sid lookup, PC ranges for wrong-path PCs, index ranges), and the snapshot a
 * replay may start from. */
#include <stdlib.h>
#include <string.h>

#include "rp_int.h"

/* ---- building --------------------------------------------------------------------------------- */

typedef struct sid_mod {
  uint32_t sid;
  uint32_t order; /* intervention order (later set latencies win) */
  ooo_mod mod;
} sid_mod;

typedef VEC(sid_mod) sid_mod_vec;
typedef VEC(rp_range_mod) range_vec;

static int sid_mod_cmp(const void *a, const void *b) {
  const sid_mod *x = a, *y = b;
  if (x->sid != y->sid) return x->sid < y->sid ? -1 : 1;
  return x->order < y->order ? -1 : x->order > y->order;
}

/* First index i in the sorted pc array with spc[i] >= pc. */
static size_t pc_lower(const rp_base *b, uint64_t pc) {
  size_t lo = 0, hi = b->n_static;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (b->spc[mid] < pc) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/* Add every sid with lo <= pc < hi; returns how many. */
static size_t add_range_sids(const rp_base *b, uint64_t lo, uint64_t hi, const ooo_mod *mod, uint32_t order,
                             sid_mod_vec *v) {
  size_t n = 0;
  for (size_t i = pc_lower(b, lo); i < b->n_static && b->spc[i] < hi; i++, n++) {
    sid_mod s = {b->ssid[i], order, *mod};
    VEC_PUSH(*v, s);
  }
  return n;
}

/* The address of function `name` (the first symbol with that name; prefer one that executed). */
static const trace_sym *find_sym(const trace_t *t, const char *name) {
  const trace_sym *best = NULL;
  for (size_t i = 0; i < trace_n_syms(t); i++) {
    const trace_sym *s = trace_sym_at(t, i);
    if (!s->name || strcmp(s->name, name)) continue;
    if (!best) best = s;
  }
  return best;
}

static void mod_of(const rp_interv *iv, ooo_mod *m) {
  rp_mod_none(m);
  switch (iv->kind) {
  case RP_REMOVE:
    if (iv->mode == RP_NOP) m->nop = true;
    else m->drop = true;
    break;
  case RP_LATENCY:
    if (iv->has_add) m->lat_add = iv->lat;
    else m->lat_set = iv->lat;
    break;
  case RP_PERFECT_BRANCH: m->perfect_branch = true; break;
  case RP_PERFECT_CACHE: m->perfect_mem = true; break;
  default: break;
  }
}

static wi_rc add_stream(const rp_base *b, const rp_interv *iv, uint32_t order, sid_mod_vec *sv, range_vec *pr,
                        range_vec *ir, wi_err *err) {
  const trace_t *t = b->t;
  ooo_mod mod;
  mod_of(iv, &mod);
  const rp_match *m = &iv->m;
  switch (m->kind) {
  case RPM_PC: {
    uint64_t pc = m->lo;
    if (m->sym) {
      const trace_sym *s = find_sym(t, m->sym);
      if (!s) return wi_fail(err, WI_EINVAL, "%s: symbol '%s' not found in the trace's symbols", iv->text, m->sym);
      pc = s->addr + m->lo;
    }
    uint32_t sid = trace_sid_of(t, pc);
    if (sid == UINT32_MAX)
      return wi_fail(err, WI_EINVAL, "%s: pc 0x%llx never executed (not an instruction of the trace)", iv->text,
                     (unsigned long long)pc);
    sid_mod s = {sid, order, mod};
    VEC_PUSH(*sv, s);
    return WI_OK;
  }
  case RPM_RANGE: {
    if (!add_range_sids(b, m->lo, m->hi, &mod, order, sv))
      return wi_fail(err, WI_EINVAL, "%s: no instruction in 0x%llx..0x%llx ever executed", iv->text,
                     (unsigned long long)m->lo, (unsigned long long)m->hi);
    rp_range_mod r = {m->lo, m->hi, mod};
    VEC_PUSH(*pr, r);
    return WI_OK;
  }
  case RPM_FUNC: {
    size_t found = 0, executed = 0;
    for (size_t i = 0; i < trace_n_syms(t); i++) {
      const trace_sym *s = trace_sym_at(t, i);
      if (!s->name || strcmp(s->name, m->sym)) continue;
      found++;
      uint64_t hi = s->addr + (s->size ? s->size : 1);
      executed += add_range_sids(b, s->addr, hi, &mod, order, sv);
      rp_range_mod r = {s->addr, hi, mod};
      VEC_PUSH(*pr, r);
    }
    if (!found) return wi_fail(err, WI_EINVAL, "%s: function '%s' not found in the trace's symbols", iv->text, m->sym);
    if (!executed) return wi_fail(err, WI_EINVAL, "%s: function '%s' never executed", iv->text, m->sym);
    return WI_OK;
  }
  case RPM_INDEX: {
    if (m->hi > b->n_insns)
      return wi_fail(err, WI_EINVAL, "%s: index %llu is beyond the trace's %llu instructions", iv->text,
                     (unsigned long long)(m->hi - 1), (unsigned long long)b->n_insns);
    rp_range_mod r = {m->lo, m->hi, mod};
    VEC_PUSH(*ir, r);
    return WI_OK;
  }
  default:
    return wi_fail(err, WI_EINVAL, "%s: say which instructions: pc, range, func or index%s", iv->text,
                   iv->kind == RP_LATENCY ? " (or class)" : iv->kind == RP_PERFECT_CACHE ? " (or level)" : "");
  }
}

rp_plan *rp_plan_new(const rp_base *b, const rp_interv *ivs, size_t n, wi_err *err) {
  rp_plan *p = xcalloc(1, sizeof *p);
  p->b = b;
  p->cfg = b->cfg;
  sid_mod_vec sv = {0};
  range_vec pr = {0}, ir = {0};
  wi_rc rc = WI_OK;
  /* text */
  {
    size_t len = 1;
    for (size_t i = 0; i < n; i++) len += strlen(ivs[i].text ? ivs[i].text : "?") + 2;
    p->text = xmalloc(len);
    p->text[0] = 0;
    for (size_t i = 0; i < n; i++) {
      if (i) strcat(p->text, ", ");
      strcat(p->text, ivs[i].text ? ivs[i].text : "?");
    }
  }
  for (size_t i = 0; i < n && !rc; i++) {
    const rp_interv *iv = &ivs[i];
    if (rp_interv_is_config(iv)) {
      if (iv->kind == RP_PERFECT_CACHE) p->perfect |= iv->level;
      else p->cfg_changed = true;
      continue;
    }
    rc = add_stream(b, iv, (uint32_t)i, &sv, &pr, &ir, err);
  }
  if (!rc && p->cfg_changed) rc = rp_apply_config(ivs, n, &p->cfg, err);
  if (rc) {
    VEC_FREE(sv);
    VEC_FREE(pr);
    VEC_FREE(ir);
    rp_plan_free(p);
    return NULL;
  }
  /* per-sid table: merge duplicates in intervention order */
  if (sv.n) {
    qsort(sv.a, sv.n, sizeof *sv.a, sid_mod_cmp);
    size_t words = (b->n_static + 63) / 64;
    p->sid_bits = xcalloc(words ? words : 1, sizeof *p->sid_bits);
    p->msid = xmalloc(sv.n * sizeof *p->msid);
    p->mmod = xmalloc(sv.n * sizeof *p->mmod);
    for (size_t i = 0; i < sv.n; i++) {
      if (p->nm && p->msid[p->nm - 1] == sv.a[i].sid) {
        rp_mod_merge(&p->mmod[p->nm - 1], &sv.a[i].mod);
        continue;
      }
      p->msid[p->nm] = sv.a[i].sid;
      p->mmod[p->nm] = sv.a[i].mod;
      p->nm++;
      p->sid_bits[sv.a[i].sid / 64] |= 1ULL << (sv.a[i].sid % 64);
    }
  }
  VEC_FREE(sv);
  p->pr = pr.a;
  p->npr = pr.n;
  p->ir = ir.a;
  p->nir = ir.n;
  p->has_stream = p->nm || p->npr || p->nir;
  return p;
}

void rp_plan_free(rp_plan *p) {
  if (!p) return;
  free(p->sid_bits);
  free(p->msid);
  free(p->mmod);
  free(p->pr);
  free(p->ir);
  free(p->text);
  free(p);
}

void rp_plan_set_hook(rp_plan *p, rp_hook_fn fn, void *ctx) {
  p->hook = fn;
  p->hook_ctx = ctx;
}

bool rp_plan_config_changed(const rp_plan *p) { return p->cfg_changed; }
const ooo_config *rp_plan_config(const rp_plan *p) { return &p->cfg; }
const char *rp_plan_text(const rp_plan *p) { return p->text; }

/* ---- the filter ------------------------------------------------------------------------------------ */

void rp_plan_filter(const rp_plan *p, uint64_t index, const trace_insn *ti, const dec_insn *di, bool wrong_path,
                    ooo_mod *out) {
  const rp_base *b = p->b;
  if (p->nm || p->npr) {
    uint32_t sid = rp_sid_of(b->t, b->n_static, ti);
    if (sid < b->n_static) {
      if (p->nm && (p->sid_bits[sid / 64] >> (sid % 64) & 1)) {
        size_t lo = 0, hi = p->nm;
        while (lo < hi) {
          size_t mid = lo + (hi - lo) / 2;
          if (p->msid[mid] < sid) lo = mid + 1;
          else hi = mid;
        }
        rp_mod_merge(out, &p->mmod[lo]);
      }
    } else {
      for (size_t i = 0; i < p->npr; i++)
        if (ti->pc >= p->pr[i].lo && ti->pc < p->pr[i].hi) rp_mod_merge(out, &p->pr[i].mod);
    }
  }
  if (!wrong_path)
    for (size_t i = 0; i < p->nir; i++)
      if (index >= p->ir[i].lo && index < p->ir[i].hi) rp_mod_merge(out, &p->ir[i].mod);
  if (p->hook) p->hook(p->hook_ctx, index, ti, di, wrong_path, out);
}

/* ---- where a replay may start ------------------------------------------------------------------- */

int rp_plan_start_snap(const rp_plan *p, const rp_base *b) {
  if (!b->ran || !b->n_snap || p->cfg_changed || p->perfect || p->hook) return -1;
  uint32_t first = RP_NEVER;
  for (size_t i = 0; i < p->nm; i++) first = WI_MIN(first, b->first_sid[p->msid[i]]);
  for (size_t i = 0; i < p->npr; i++) { /* wrong-path-only PCs in the range */
    size_t lo = 0, hi = b->n_wp;
    while (lo < hi) {
      size_t mid = lo + (hi - lo) / 2;
      if (b->wp_pc[mid] < p->pr[i].lo) lo = mid + 1;
      else hi = mid;
    }
    for (size_t k = lo; k < b->n_wp && b->wp_pc[k] < p->pr[i].hi; k++) first = WI_MIN(first, b->wp_first[k]);
  }
  for (size_t i = 0; i < p->nir; i++) { /* snapshots taken before instruction lo entered */
    uint32_t c = 0;
    while (c < b->n_snap && b->snap_entered[c] <= p->ir[i].lo) c++;
    first = WI_MIN(first, c);
  }
  if (first == RP_NEVER) return (int)b->n_snap - 1; /* matches nothing that ever entered: no effect */
  return (int)first - 1;
}

/* rp_interv.c — the intervention catalogue: validation of intervention tables, canonical text,
 * and configuration-level application. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "replay.h"

/* ---- kinds and their fields ------------------------------------------------------------------ */

static const char *const k_kind_names[RP_KIND_NUM] = {
  [RP_REMOVE] = "remove",       [RP_LATENCY] = "latency",       [RP_PERFECT_BRANCH] = "perfect_branch",
  [RP_PERFECT_CACHE] = "perfect_cache", [RP_RAS] = "ras",        [RP_WRONG_PATH] = "wrong_path",
  [RP_PORT] = "port",           [RP_RESIZE] = "resize",         [RP_PREDICTOR] = "predictor",
  [RP_CONFIG] = "config",
};

const char *rp_kind_name(int kind) { return kind >= 0 && kind < RP_KIND_NUM ? k_kind_names[kind] : "?"; }

int rp_kind_from_name(const char *name) {
  if (!name) return -1;
  for (int i = 0; i < RP_KIND_NUM; i++)
    if (!strcmp(k_kind_names[i], name)) return i;
  return -1;
}

const char *rp_kind_list(void) {
  return "remove, latency, perfect_branch, perfect_cache, ras, wrong_path, port, resize, predictor, config";
}

/* Named fields of each kind (NULL-terminated). `kind` itself is the tag. */
static const char *const f_remove[] = {"pc", "range", "func", "index", "mode", NULL};
static const char *const f_latency[] = {"pc", "range", "func", "index", "class", "add", "set", NULL};
static const char *const f_pbranch[] = {"pc", "range", "func", "index", "all", NULL};
static const char *const f_pcache[] = {"pc", "range", "func", "index", "level", NULL};
static const char *const f_ras[] = {"depth", "repair", NULL};
static const char *const f_wpath[] = {"policy", "cap", "conf_bits", "conf_max", "conf_threshold", "conf_gate", NULL};
static const char *const f_port[] = {"name", "add", "classes", NULL};

/* resize fields: name -> configuration path (section, key). */
typedef struct rs_field {
  const char *name, *section, *sub, *key;
  double min; /* smallest value (the configuration's own range check applies too) */
} rs_field;
static const rs_field k_resize[] = {
  {"rob", "core", NULL, "rob", 1},
  {"sched_math", "core", NULL, "sched_math", 1},
  {"sched_load", "core", NULL, "sched_load", 1},
  {"sched_store", "core", NULL, "sched_store", 1},
  {"lq", "core", NULL, "lq", 1},
  {"sq", "core", NULL, "sq", 1},
  {"int_prf", "core", NULL, "int_prf", 1},
  {"vec_prf", "core", NULL, "vec_prf", 1},
  {"rename_width", "core", NULL, "rename_width", 1},
  {"commit_width", "core", NULL, "commit_width", 1},
  {"retire_width", "core", NULL, "commit_width", 1},
  {"fetch_width", "frontend", NULL, "fetch_width", 1},
  {"decode_width", "frontend", NULL, "fetch_width", 1}, /* the model fetches and decodes at one width */
  {"fetch_queue", "frontend", NULL, "fetch_queue", 1},
  {"branch_checkpoints", "frontend", NULL, "branch_checkpoints", 1},
  {"uop_cache_lines", "frontend", NULL, "uop_cache_lines", 0},
  {"l1i_mshrs", "mem", "l1i", "mshrs", 1},
  {"l1d_mshrs", "mem", "l1d", "mshrs", 1},
  {"l2_mshrs", "mem", "l2", "mshrs", 1},
  {"llc_mshrs", "mem", "llc", "mshrs", 1},
  {"dram_queue", "mem", "dram", "queue", 1},
};

static const char *const k_match_fields[] = {"pc", "range", "func", "index", "class"};

/* ---- small helpers ------------------------------------------------------------------------------- */

/* A growable string built with open_memstream. */
typedef struct sbuf {
  FILE *f;
  char *p;
  size_t n;
} sbuf;

static void sb_open(sbuf *b) {
  b->p = NULL;
  b->n = 0;
  b->f = open_memstream(&b->p, &b->n);
  if (!b->f) wi_die(1, "out of memory (open_memstream)");
}

static char *sb_take(sbuf *b) {
  fclose(b->f);
  return b->p;
}

static bool in_list(const char *const *list, const char *k) {
  for (size_t i = 0; list[i]; i++)
    if (!strcmp(list[i], k)) return true;
  return false;
}

static void list_join(char *buf, size_t n, const char *const *list) {
  buf[0] = 0;
  for (size_t i = 0; list[i]; i++) {
    size_t k = strlen(buf);
    snprintf(buf + k, n - k, "%s%s", i ? ", " : "", list[i]);
  }
}

/* An integer-valued number in [lo, hi]. */
static wi_rc get_int(const cfg_val *v, const char *kind, const char *field, double lo, double hi, int64_t *out,
                     wi_err *err) {
  if (!v || v->kind != CV_NUM || v->num != floor(v->num))
    return wi_fail(err, WI_EINVAL, "%s{...}: %s must be an integer", kind, field);
  if (v->num < lo || v->num > hi)
    return wi_fail(err, WI_EINVAL, "%s{...}: %s = %.0f is out of range [%.0f, %.0f]", kind, field, v->num, lo, hi);
  *out = (int64_t)v->num;
  return WI_OK;
}

static bool parse_addr_str(const char *s, uint64_t *out) {
  if (!*s) return false;
  char *end = NULL;
  unsigned long long v = strtoull(s, &end, 0);
  if (!end || *end) return false;
  *out = v;
  return true;
}

/* An address: a non-negative integer or a string "0x401a2c". */
static wi_rc get_addr(const cfg_val *v, const char *kind, const char *field, uint64_t *out, wi_err *err) {
  if (v && v->kind == CV_NUM && v->num >= 0 && v->num == floor(v->num) && v->num < 18446744073709551616.0) {
    *out = (uint64_t)v->num;
    return WI_OK;
  }
  if (v && v->kind == CV_STR && parse_addr_str(v->str, out)) return WI_OK;
  return wi_fail(err, WI_EINVAL, "%s{...}: %s must be an address (an integer such as 0x401a2c)", kind, field);
}

/* A pair {lo, hi} with lo < hi. */
static wi_rc get_pair(const cfg_val *v, const char *kind, const char *field, uint64_t *lo, uint64_t *hi,
                      wi_err *err) {
  if (!v || v->kind != CV_TABLE || cv_len(v) != 2 || v->n != 2)
    return wi_fail(err, WI_EINVAL, "%s{...}: %s must be a pair {lo, hi} (hi excluded)", kind, field);
  wi_rc rc = get_addr(cv_item(v, 1), kind, field, lo, err);
  if (!rc) rc = get_addr(cv_item(v, 2), kind, field, hi, err);
  if (rc) return rc;
  if (*lo >= *hi)
    return wi_fail(err, WI_EINVAL, "%s{...}: %s = {%llu, %llu} is empty (lo must be below hi)", kind, field,
                   (unsigned long long)*lo, (unsigned long long)*hi);
  return WI_OK;
}

static wi_rc get_choice(const cfg_val *v, const char *kind, const char *field, const char *const *choices,
                        int *out, wi_err *err) {
  char buf[160];
  list_join(buf, sizeof buf, choices);
  if (!v || v->kind != CV_STR) return wi_fail(err, WI_EINVAL, "%s{...}: %s must be one of: %s", kind, field, buf);
  for (int i = 0; choices[i]; i++)
    if (!strcmp(choices[i], v->str)) {
      *out = i;
      return WI_OK;
    }
  return wi_fail(err, WI_EINVAL, "%s{...}: %s = \"%s\" is not one of: %s", kind, field, v->str, buf);
}

/* ---- canonical text -------------------------------------------------------------------------------- */

static void fmt_str(FILE *f, const char *s) {
  fputc('"', f);
  for (const char *p = s; *p; p++) {
    if (*p == '"' || *p == '\\') fputc('\\', f);
    if (*p == '\n') {
      fputs("\\n", f);
      continue;
    }
    fputc(*p, f);
  }
  fputc('"', f);
}

static void fmt_num(FILE *f, double x) {
  if (x == floor(x) && fabs(x) < 9.007199254740992e15)
    fprintf(f, "%lld", (long long)x);
  else
    fprintf(f, "%.17g", x);
}

/* A cfg_val as Lua text, keys sorted (the caller sorted the table). */
static void fmt_val(FILE *f, const cfg_val *v) {
  switch (v->kind) {
  case CV_NIL: fputs("nil", f); break;
  case CV_BOOL: fputs(v->b ? "true" : "false", f); break;
  case CV_NUM: fmt_num(f, v->num); break;
  case CV_STR: fmt_str(f, v->str); break;
  case CV_TABLE: {
    fputc('{', f);
    bool first = true;
    for (size_t i = 0; i < v->n; i++) { /* positional items first, then keys */
      if (v->entries[i].key) continue;
      fprintf(f, "%s", first ? "" : ", ");
      fmt_val(f, v->entries[i].val);
      first = false;
    }
    for (size_t i = 0; i < v->n; i++) {
      if (!v->entries[i].key) continue;
      fprintf(f, "%s%s=", first ? "" : ", ", v->entries[i].key);
      fmt_val(f, v->entries[i].val);
      first = false;
    }
    fputc('}', f);
    break;
  }
  }
}

static void fmt_match(FILE *f, const rp_match *m, bool *first) {
  const char *sep = *first ? "" : ", ";
  switch (m->kind) {
  case RPM_ALL: return;
  case RPM_PC:
    if (m->sym) {
      fprintf(f, "%spc=", sep);
      char buf[300];
      if (m->lo)
        snprintf(buf, sizeof buf, "%s+0x%llx", m->sym, (unsigned long long)m->lo);
      else
        snprintf(buf, sizeof buf, "%s", m->sym);
      fmt_str(f, buf);
    } else {
      fprintf(f, "%spc=0x%llx", sep, (unsigned long long)m->lo);
    }
    break;
  case RPM_RANGE:
    fprintf(f, "%srange={0x%llx, 0x%llx}", sep, (unsigned long long)m->lo, (unsigned long long)m->hi);
    break;
  case RPM_FUNC:
    fprintf(f, "%sfunc=", sep);
    fmt_str(f, m->sym);
    break;
  case RPM_INDEX:
    if (m->hi == m->lo + 1)
      fprintf(f, "%sindex=%llu", sep, (unsigned long long)m->lo);
    else
      fprintf(f, "%sindex={%llu, %llu}", sep, (unsigned long long)m->lo, (unsigned long long)m->hi);
    break;
  case RPM_CLASS:
    fprintf(f, "%sclass=\"%s\"", sep, insn_class_name(m->cls));
    break;
  }
  *first = false;
}

void rp_interv_format(rp_interv *iv) {
  sbuf b;
  sb_open(&b);
  FILE *f = b.f;
  fprintf(f, "%s{", rp_kind_name(iv->kind));
  bool first = true;
  switch (iv->kind) {
  case RP_REMOVE:
    fmt_match(f, &iv->m, &first);
    if (iv->mode == RP_NOP) fprintf(f, "%smode=\"nop\"", first ? "" : ", ");
    break;
  case RP_LATENCY:
    fmt_match(f, &iv->m, &first);
    fprintf(f, "%s%s=%d", first ? "" : ", ", iv->has_add ? "add" : "set", iv->lat);
    break;
  case RP_PERFECT_BRANCH: fmt_match(f, &iv->m, &first); break;
  case RP_PERFECT_CACHE:
    fmt_match(f, &iv->m, &first);
    if (iv->m.kind == RPM_ALL && iv->level)
      fprintf(f, "level=\"%s\"", iv->level == RP_LVL_L1D ? "l1d" : iv->level == RP_LVL_L1I ? "l1i" : "all");
    break;
  case RP_PORT:
    if (iv->port >= 0) {
      fprintf(f, "name=\"P%d\"", iv->port);
    } else {
      fputs("classes={", f);
      bool f2 = true;
      const char *mem[3] = {"load", "sta", "std"};
      for (int i = 0; i < 3; i++)
        if (iv->mem_ports & (1u << i)) {
          fprintf(f, "%s\"%s\"", f2 ? "" : ", ", mem[i]);
          f2 = false;
        }
      for (int c = 0; c < IC_NUM; c++)
        if (iv->classes & (1u << c)) {
          fprintf(f, "%s\"%s\"", f2 ? "" : ", ", insn_class_name(c));
          f2 = false;
        }
      fputc('}', f);
    }
    fprintf(f, ", add=%u", iv->add);
    break;
  default: /* edit kinds: the fields as given (sorted) */
    if (iv->fields)
      for (size_t i = 0; i < iv->fields->n; i++) {
        const cfg_entry *e = &iv->fields->entries[i];
        if (!e->key) continue;
        fprintf(f, "%s%s=", first ? "" : ", ", e->key);
        fmt_val(f, e->val);
        first = false;
      }
    break;
  }
  fputc('}', f);
  free(iv->text);
  iv->text = sb_take(&b);
}

/* ---- parsing --------------------------------------------------------------------------------------- */

static wi_rc parse_match(const cfg_val *v, const char *kind, bool allow_class, rp_match *m, wi_err *err) {
  const char *given = NULL;
  for (size_t i = 0; i < WI_ARRAY_LEN(k_match_fields); i++) {
    const char *k = k_match_fields[i];
    if (!cv_get(v, k)) continue;
    if (!allow_class && !strcmp(k, "class")) continue;
    if (given)
      return wi_fail(err, WI_EINVAL, "%s{...}: give one of pc, range, func, index%s, not both %s and %s", kind,
                     allow_class ? ", class" : "", given, k);
    given = k;
  }
  memset(m, 0, sizeof *m);
  m->kind = RPM_ALL;
  if (!given) return WI_OK;
  const cfg_val *x = cv_get(v, given);
  wi_rc rc = WI_OK;
  if (!strcmp(given, "pc")) {
    m->kind = RPM_PC;
    if (x->kind == CV_STR && x->str[0] && !(x->str[0] >= '0' && x->str[0] <= '9')) {
      /* "sym" or "sym+offset" */
      const char *plus = strchr(x->str, '+');
      size_t nl = plus ? (size_t)(plus - x->str) : strlen(x->str);
      if (!nl) return wi_fail(err, WI_EINVAL, "%s{...}: pc = \"%s\" has no symbol before '+'", kind, x->str);
      m->sym = xmalloc(nl + 1);
      memcpy(m->sym, x->str, nl);
      m->sym[nl] = 0;
      if (plus && !parse_addr_str(plus + 1, &m->lo)) {
        free(m->sym);
        m->sym = NULL;
        return wi_fail(err, WI_EINVAL, "%s{...}: pc = \"%s\": the offset after '+' is not a number", kind, x->str);
      }
      return WI_OK;
    }
    rc = get_addr(x, kind, "pc", &m->lo, err);
    m->hi = m->lo + 1;
  } else if (!strcmp(given, "range")) {
    m->kind = RPM_RANGE;
    rc = get_pair(x, kind, "range", &m->lo, &m->hi, err);
  } else if (!strcmp(given, "func")) {
    m->kind = RPM_FUNC;
    if (x->kind != CV_STR || !x->str[0])
      return wi_fail(err, WI_EINVAL, "%s{...}: func must be a function name (a string)", kind);
    m->sym = xstrdup(x->str);
  } else if (!strcmp(given, "index")) {
    m->kind = RPM_INDEX;
    if (x->kind == CV_NUM) {
      int64_t i = 0;
      rc = get_int(x, kind, "index", 0, 9.0e15, &i, err);
      m->lo = (uint64_t)i;
      m->hi = m->lo + 1;
    } else {
      rc = get_pair(x, kind, "index", &m->lo, &m->hi, err);
    }
  } else { /* class */
    m->kind = RPM_CLASS;
    if (x->kind != CV_STR || (m->cls = insn_class_from_name(x->str)) < 0) {
      char buf[400] = "";
      for (int c = 0; c < IC_NUM; c++) {
        size_t k = strlen(buf);
        snprintf(buf + k, sizeof buf - k, "%s%s", c ? ", " : "", insn_class_name(c));
      }
      return wi_fail(err, WI_EINVAL, "%s{...}: class must be an operation class (%s)", kind, buf);
    }
  }
  return rc;
}

/* Check that every key of v is a known field. */
static wi_rc check_fields(const cfg_val *v, const char *kind, const char *const *fields, wi_err *err) {
  for (size_t i = 0; i < v->n; i++) {
    const cfg_entry *e = &v->entries[i];
    if (!e->key)
      return wi_fail(err, WI_EINVAL, "%s{...}: positional value #%zu: fields are named (%s{field = value})", kind,
                     e->index, kind);
    if (!strcmp(e->key, "kind")) continue;
    if (fields && !in_list(fields, e->key)) {
      char buf[300];
      list_join(buf, sizeof buf, fields);
      return wi_fail(err, WI_EINVAL, "unknown field '%s' in %s{...} (fields: %s)", e->key, kind, buf);
    }
  }
  return WI_OK;
}

/* A copy of v without `kind`, sorted: the intervention's own fields, for the text. */
static cfg_val *own_fields(const cfg_val *v) {
  cfg_val *t = cv_table();
  for (size_t i = 0; i < v->n; i++) {
    const cfg_entry *e = &v->entries[i];
    if (e->key && strcmp(e->key, "kind")) cv_set(t, e->key, cv_clone(e->val));
  }
  cv_sort(t);
  return t;
}

/* A fresh configuration edit for iv; also keeps the intervention's own fields for the text. */
static cfg_val *edit_new(rp_interv *iv, const cfg_val *v) {
  iv->fields = own_fields(v);
  return cv_table();
}

static cfg_val *edit_section(cfg_val *e, const char *section) {
  cfg_val *s = cv_get(e, section);
  if (!s) {
    s = cv_table();
    cv_set(e, section, s);
  }
  return s;
}

/* Validate an edit against a scratch default configuration (early errors). */
static wi_rc edit_check(const rp_interv *iv, const char *kind, wi_err *err) {
  ooo_config c;
  ooo_config_default(&c);
  wi_err e = {0};
  wi_rc rc = ooo_config_apply(&c, iv->edit, kind, &e);
  if (rc) return wi_fail(err, rc, "%s{...}: %s", kind, e.msg);
  return WI_OK;
}

static wi_rc parse_ras(const cfg_val *v, rp_interv *iv, wi_err *err) {
  if (!cv_get(v, "depth") && !cv_get(v, "repair"))
    return wi_fail(err, WI_EINVAL, "ras{...}: give depth = N and/or repair = \"none\"|\"tos\"|\"full\"");
  iv->edit = edit_new(iv, v);
  cfg_val *bp = edit_section(iv->edit, "bpred");
  const cfg_val *d = cv_get(v, "depth"), *r = cv_get(v, "repair");
  if (d) {
    int64_t n = 0;
    wi_rc rc = get_int(d, "ras", "depth", 1, 1024, &n, err);
    if (rc) return rc;
    cv_set(bp, "ras_depth", cv_num((double)n));
  }
  if (r) {
    static const char *const pol[] = {"none", "tos", "full", NULL};
    int p;
    wi_rc rc = get_choice(r, "ras", "repair", pol, &p, err);
    if (rc) return rc;
    cv_set(bp, "ras_repair", cv_str(pol[p]));
  }
  return WI_OK;
}

static wi_rc parse_wrong_path(const cfg_val *v, rp_interv *iv, wi_err *err) {
  static const char *const pol[] = {"normal", "off", "cap", "confidence", NULL};
  const cfg_val *p = cv_get(v, "policy"), *cap = cv_get(v, "cap");
  bool conf = cv_get(v, "conf_bits") || cv_get(v, "conf_max") || cv_get(v, "conf_threshold") ||
              cv_get(v, "conf_gate");
  int policy = -1;
  if (p) {
    wi_rc rc = get_choice(p, "wrong_path", "policy", pol, &policy, err);
    if (rc) return rc;
  } else if (cap) {
    policy = WP_CAP;
  } else if (conf) {
    policy = WP_CONFIDENCE;
  } else {
    return wi_fail(err, WI_EINVAL, "wrong_path{...}: give policy = \"normal\"|\"off\"|\"cap\"|\"confidence\"");
  }
  if (cap && policy != WP_CAP)
    return wi_fail(err, WI_EINVAL, "wrong_path{...}: cap applies only with policy = \"cap\"");
  if (conf && policy != WP_CONFIDENCE)
    return wi_fail(err, WI_EINVAL, "wrong_path{...}: conf_bits/conf_max/conf_threshold/conf_gate apply only with policy = \"confidence\"");
  iv->edit = edit_new(iv, v);
  cfg_val *fe = edit_section(iv->edit, "frontend");
  cv_set(fe, "wrong_path", cv_str(pol[policy]));
  if (cap) {
    int64_t n = 0;
    wi_rc rc = get_int(cap, "wrong_path", "cap", 1, 100000, &n, err);
    if (rc) return rc;
    cv_set(fe, "wrong_path_cap", cv_num((double)n));
  }
  /* ranges as in bp_param_table; the configuration check has the last word */
  static const char *const ck[] = {"conf_bits", "conf_max", "conf_threshold", "conf_gate"};
  static const double cmax[] = {16, 255, 255, 4096};
  static const double cmin[] = {4, 1, 0, 1};
  for (int i = 0; i < 4; i++) {
    const cfg_val *x = cv_get(v, ck[i]);
    if (!x) continue;
    int64_t n = 0;
    wi_rc rc = get_int(x, "wrong_path", ck[i], cmin[i], cmax[i], &n, err);
    if (rc) return rc;
    cv_set(edit_section(iv->edit, "bpred"), ck[i], cv_num((double)n));
  }
  return WI_OK;
}

static wi_rc parse_port(const cfg_val *v, rp_interv *iv, wi_err *err) {
  const cfg_val *name = cv_get(v, "name"), *add = cv_get(v, "add"), *cls = cv_get(v, "classes");
  iv->port = -1;
  iv->add = 1;
  if (add) {
    int64_t n = 0;
    wi_rc rc = get_int(add, "port", "add", 1, OOO_MAX_PORTS - 1, &n, err);
    if (rc) return rc;
    iv->add = (uint32_t)n;
  }
  if (name && cls) return wi_fail(err, WI_EINVAL, "port{...}: give name (widen a port) or classes (a new port), not both");
  if (name) {
    uint32_t mask;
    if (name->kind != CV_STR || !ooo_ports_parse(name->str, &mask) || !mask || (mask & (mask - 1)))
      return wi_fail(err, WI_EINVAL, "port{...}: name must name one port, like \"P5\"");
    int p = 0;
    while (!(mask & (1u << p))) p++;
    iv->port = p;
    return WI_OK;
  }
  if (!cls) return wi_fail(err, WI_EINVAL, "port{...}: give name = \"P5\" (add units to a port) or classes = {...} (add a port)");
  const cfg_val *list = cls;
  cfg_val *one = NULL;
  if (cls->kind == CV_STR) { /* classes = "shuffle" */
    one = cv_table();
    cv_push(one, cv_str(cls->str));
    list = one;
  }
  wi_rc rc = WI_OK;
  if (list->kind != CV_TABLE || !cv_len(list) || cv_len(list) != list->n) {
    rc = wi_fail(err, WI_EINVAL, "port{...}: classes must be a list of operation classes, e.g. {\"shuffle\"}");
    goto out;
  }
  for (size_t i = 1; i <= cv_len(list); i++) {
    const cfg_val *c = cv_item(list, i);
    if (c->kind != CV_STR) {
      rc = wi_fail(err, WI_EINVAL, "port{...}: classes[%zu] must be a class name", i);
      goto out;
    }
    if (!strcmp(c->str, "load")) iv->mem_ports |= 1u;
    else if (!strcmp(c->str, "sta")) iv->mem_ports |= 2u;
    else if (!strcmp(c->str, "std")) iv->mem_ports |= 4u;
    else if (!strcmp(c->str, "store")) iv->mem_ports |= 6u;
    else {
      int k = insn_class_from_name(c->str);
      if (k < 0) {
        rc = wi_fail(err, WI_EINVAL, "port{...}: unknown class '%s' (operation classes, or load, sta, std, store)", c->str);
        goto out;
      }
      iv->classes |= 1u << k;
    }
  }
out:
  cv_free(one);
  return rc;
}

static wi_rc parse_resize(const cfg_val *v, rp_interv *iv, wi_err *err) {
  const char *names[WI_ARRAY_LEN(k_resize) + 1];
  for (size_t i = 0; i < WI_ARRAY_LEN(k_resize); i++) names[i] = k_resize[i].name;
  names[WI_ARRAY_LEN(k_resize)] = NULL;
  wi_rc rc = check_fields(v, "resize", names, err);
  if (rc) return rc;
  iv->edit = edit_new(iv, v);
  size_t given = 0;
  for (size_t i = 0; i < WI_ARRAY_LEN(k_resize); i++) {
    const rs_field *r = &k_resize[i];
    const cfg_val *x = cv_get(v, r->name);
    if (!x) continue;
    int64_t n = 0;
    if ((rc = get_int(x, "resize", r->name, r->min, 1 << 30, &n, err))) return rc;
    cfg_val *s = edit_section(iv->edit, r->section);
    if (r->sub) s = edit_section(s, r->sub);
    cv_set(s, r->key, cv_num((double)n));
    given++;
  }
  if (!given) return wi_fail(err, WI_EINVAL, "resize{...}: give at least one size, e.g. resize{rob = 256}");
  return WI_OK;
}

static wi_rc parse_predictor(const cfg_val *v, rp_interv *iv, wi_err *err) {
  const char *names[64];
  size_t k = 0;
  for (size_t i = 0; i < bp_param_table.n && k < 63; i++) {
    const char *nm = bp_param_table.params[i].name;
    if (strncmp(nm, "ras_", 4) && strncmp(nm, "conf_", 5)) names[k++] = nm; /* those belong to ras / wrong_path */
  }
  names[k] = NULL;
  wi_rc rc = check_fields(v, "predictor", names, err);
  if (rc) return rc;
  if (!cv_get(v, "type"))
    return wi_fail(err, WI_EINVAL, "predictor{...}: give type = \"tage\"|\"gshare\"|\"bimodal\" (and optionally its sizes)");
  iv->edit = edit_new(iv, v);
  cfg_val *bp = edit_section(iv->edit, "bpred");
  for (size_t i = 0; i < v->n; i++) {
    const cfg_entry *e = &v->entries[i];
    if (e->key && strcmp(e->key, "kind")) cv_set(bp, e->key, cv_clone(e->val));
  }
  return edit_check(iv, "predictor", err);
}

static wi_rc parse_config(const cfg_val *v, rp_interv *iv, wi_err *err) {
  iv->edit = edit_new(iv, v);
  size_t given = 0;
  for (size_t i = 0; i < v->n; i++) {
    const cfg_entry *e = &v->entries[i];
    if (!e->key)
      return wi_fail(err, WI_EINVAL, "config{...}: positional value #%zu: give configuration sections, e.g. config{core = {rob = 256}}", e->index);
    if (!strcmp(e->key, "kind")) continue;
    if (!strcmp(e->key, "name") || !strcmp(e->key, "base") || !strcmp(e->key, "description"))
      return wi_fail(err, WI_EINVAL, "config{...}: %s cannot be changed by an intervention", e->key);
    cv_set(iv->edit, e->key, cv_clone(e->val));
    given++;
  }
  if (!given) return wi_fail(err, WI_EINVAL, "config{...}: give at least one configuration section");
  return edit_check(iv, "config", err);
}

wi_rc rp_interv_parse(const cfg_val *v, rp_interv *out, wi_err *err) {
  memset(out, 0, sizeof *out);
  if (!v || v->kind != CV_TABLE)
    return wi_fail(err, WI_EINVAL, "an intervention must be a table such as latency{pc=0x401a2c, add=1}");
  const cfg_val *kv = cv_get(v, "kind");
  if (!kv || kv->kind != CV_STR)
    return wi_fail(err, WI_EINVAL, "an intervention needs a kind (%s), e.g. ras{repair=\"full\"}", rp_kind_list());
  int kind = rp_kind_from_name(kv->str);
  if (kind < 0)
    return wi_fail(err, WI_EINVAL, "unknown intervention kind '%s' (kinds: %s)", kv->str, rp_kind_list());
  const char *kn = rp_kind_name(kind);
  out->kind = (rp_kind)kind;
  out->port = -1;
  wi_rc rc = WI_OK;
  switch (kind) {
  case RP_REMOVE: {
    if ((rc = check_fields(v, kn, f_remove, err))) break;
    if ((rc = parse_match(v, kn, false, &out->m, err))) break; /* remove{} is a sweep template */
    const cfg_val *mode = cv_get(v, "mode");
    if (mode) {
      static const char *const modes[] = {"drop", "nop", NULL};
      rc = get_choice(mode, kn, "mode", modes, &out->mode, err);
    }
    break;
  }
  case RP_LATENCY: {
    if ((rc = check_fields(v, kn, f_latency, err))) break;
    if ((rc = parse_match(v, kn, true, &out->m, err))) break;
    const cfg_val *add = cv_get(v, "add"), *set = cv_get(v, "set");
    if (!!add == !!set) {
      rc = wi_fail(err, WI_EINVAL, "latency{...}: give exactly one of add = cycles or set = cycles");
      break;
    }
    int64_t n = 0;
    if (add) rc = get_int(add, kn, "add", -10000, 10000, &n, err);
    else rc = get_int(set, kn, "set", 0, 10000, &n, err);
    if (rc) break;
    out->has_add = add != NULL;
    out->lat = (int32_t)n;
    break;
  }
  case RP_PERFECT_BRANCH: {
    if ((rc = check_fields(v, kn, f_pbranch, err))) break;
    if ((rc = parse_match(v, kn, false, &out->m, err))) break;
    const cfg_val *all = cv_get(v, "all");
    if (all && (all->kind != CV_BOOL || !all->b)) {
      rc = wi_fail(err, WI_EINVAL, "perfect_branch{...}: all must be true (or leave it out)");
      break;
    }
    if (all && out->m.kind != RPM_ALL)
      rc = wi_fail(err, WI_EINVAL, "perfect_branch{...}: all = true and a match exclude each other");
    break;
  }
  case RP_PERFECT_CACHE: {
    if ((rc = check_fields(v, kn, f_pcache, err))) break;
    if ((rc = parse_match(v, kn, false, &out->m, err))) break;
    const cfg_val *lvl = cv_get(v, "level");
    if (lvl && out->m.kind != RPM_ALL) {
      rc = wi_fail(err, WI_EINVAL, "perfect_cache{...}: level applies to every access; with a match leave it out");
      break;
    }
    if (out->m.kind == RPM_ALL && lvl) { /* perfect_cache{} is a sweep template */
      if (lvl->kind == CV_STR && (!strcmp(lvl->str, "l2") || !strcmp(lvl->str, "llc"))) {
        rc = wi_fail(err, WI_EINVAL,
                     "perfect_cache{...}: level \"%s\" is not supported: the memory system can make every access of a "
                     "type hit L1 (levels: l1d, l1i, all)", lvl->str);
        break;
      }
      static const char *const lv[] = {"l1d", "l1i", "all", NULL};
      int k;
      if ((rc = get_choice(lvl, kn, "level", lv, &k, err))) break;
      out->level = k == 0 ? RP_LVL_L1D : k == 1 ? RP_LVL_L1I : RP_LVL_ALL;
    }
    break;
  }
  case RP_RAS:
    if (!(rc = check_fields(v, kn, f_ras, err))) rc = parse_ras(v, out, err);
    break;
  case RP_WRONG_PATH:
    if (!(rc = check_fields(v, kn, f_wpath, err))) rc = parse_wrong_path(v, out, err);
    break;
  case RP_PORT:
    if (!(rc = check_fields(v, kn, f_port, err))) rc = parse_port(v, out, err);
    break;
  case RP_RESIZE: rc = parse_resize(v, out, err); break;
  case RP_PREDICTOR: rc = parse_predictor(v, out, err); break;
  case RP_CONFIG: rc = parse_config(v, out, err); break;
  }
  if (rc) {
    rp_interv_free(out);
    return rc;
  }
  rp_interv_format(out);
  return WI_OK;
}

void rp_interv_free(rp_interv *iv) {
  if (!iv) return;
  free(iv->m.sym);
  cv_free(iv->edit);
  cv_free(iv->fields);
  free(iv->text);
  memset(iv, 0, sizeof *iv);
}

void rp_interv_copy(rp_interv *dst, const rp_interv *src) {
  *dst = *src;
  dst->m.sym = src->m.sym ? xstrdup(src->m.sym) : NULL;
  dst->edit = src->edit ? cv_clone(src->edit) : NULL;
  dst->fields = src->fields ? cv_clone(src->fields) : NULL;
  dst->text = src->text ? xstrdup(src->text) : NULL;
}

bool rp_interv_is_config(const rp_interv *iv) {
  switch (iv->kind) {
  case RP_REMOVE: return false;
  case RP_LATENCY: return iv->m.kind == RPM_CLASS;
  case RP_PERFECT_BRANCH: return iv->m.kind == RPM_ALL;
  case RP_PERFECT_CACHE: return iv->m.kind == RPM_ALL && iv->level;
  default: return true;
  }
}

bool rp_interv_is_template(const rp_interv *iv) {
  switch (iv->kind) {
  case RP_REMOVE:
  case RP_LATENCY:
  case RP_PERFECT_BRANCH: return iv->m.kind == RPM_ALL;
  case RP_PERFECT_CACHE: return iv->m.kind == RPM_ALL && !iv->level;
  default: return false;
  }
}

void rp_interv_set_pc(rp_interv *iv, uint64_t pc) {
  free(iv->m.sym);
  memset(&iv->m, 0, sizeof iv->m);
  iv->m.kind = RPM_PC;
  iv->m.lo = pc;
  iv->m.hi = pc + 1;
  rp_interv_format(iv);
}

/* ---- configuration-level application ------------------------------------------------------------ */

static wi_rc apply_port(const rp_interv *iv, ooo_config *c, wi_err *err) {
  if (iv->port >= 0 && (uint32_t)iv->port >= c->ports.count)
    return wi_fail(err, WI_EINVAL, "%s: port P%d does not exist (ports: P0..P%u)", iv->text, iv->port,
                   c->ports.count - 1);
  if (c->ports.count + iv->add > OOO_MAX_PORTS)
    return wi_fail(err, WI_EINVAL, "%s: %u + %u ports exceed the model's limit of %d", iv->text, c->ports.count,
                   iv->add, OOO_MAX_PORTS);
  if (iv->port < 0)
    for (int k = 0; k < IC_NUM; k++)
      if ((iv->classes & (1u << k)) && !c->uops[k].n)
        return wi_fail(err, WI_EINVAL, "%s: class '%s' has no computation micro-op in %s (memory micro-ops: use "
                       "load, sta, std)", iv->text, insn_class_name(k), c->name);
  for (uint32_t a = 0; a < iv->add; a++) {
    uint32_t q = c->ports.count++;
    uint32_t nb = 1u << q;
    if (iv->port >= 0) { /* a copy of the port: it serves whatever the port serves */
      uint32_t pb = 1u << iv->port;
      for (int k = 0; k < IC_NUM; k++)
        for (uint32_t u = 0; u < c->uops[k].n; u++)
          if (c->uops[k].u[u].ports & pb) c->uops[k].u[u].ports |= nb;
      if (c->ports.load & pb) c->ports.load |= nb;
      if (c->ports.sta & pb) c->ports.sta |= nb;
      if (c->ports.std & pb) c->ports.std |= nb;
    } else {
      for (int k = 0; k < IC_NUM; k++)
        if (iv->classes & (1u << k))
          for (uint32_t u = 0; u < c->uops[k].n; u++) c->uops[k].u[u].ports |= nb;
      if (iv->mem_ports & 1u) c->ports.load |= nb;
      if (iv->mem_ports & 2u) c->ports.sta |= nb;
      if (iv->mem_ports & 4u) c->ports.std |= nb;
    }
  }
  return WI_OK;
}

static wi_rc apply_latency_class(const rp_interv *iv, ooo_config *c, wi_err *err) {
  if (iv->m.kind == RPM_ALL)
    return wi_fail(err, WI_EINVAL, "%s: say what gets the latency: pc, range, func, index or class", iv->text);
  ooo_class_spec *s = &c->uops[iv->m.cls];
  if (!s->n)
    return wi_fail(err, WI_EINVAL, "%s: class '%s' has no computation micro-op in %s (its latency comes from the "
                   "memory system: resize or config{mem = ...})", iv->text, insn_class_name(iv->m.cls), c->name);
  ooo_uop_spec *u = &s->u[s->n - 1]; /* like the stream form: the last micro-op's execution */
  int64_t lat = iv->has_add ? (int64_t)u->latency + iv->lat : iv->lat;
  if (lat < 0 || lat > 10000)
    return wi_fail(err, WI_EINVAL, "%s: the latency of '%s' would be %lld cycles", iv->text,
                   insn_class_name(iv->m.cls), (long long)lat);
  u->latency = (uint32_t)lat;
  return WI_OK;
}

wi_rc rp_apply_config(const rp_interv *ivs, size_t n, ooo_config *cfg, wi_err *err) {
  for (size_t i = 0; i < n; i++) {
    const rp_interv *iv = &ivs[i];
    if (!rp_interv_is_config(iv)) continue;
    wi_rc rc = WI_OK;
    switch (iv->kind) {
    case RP_LATENCY: rc = apply_latency_class(iv, cfg, err); break;
    case RP_PERFECT_BRANCH: cfg->fe.perfect_branch = true; break;
    case RP_PERFECT_CACHE: break; /* a memory-system setting, applied to the model (rp_plan) */
    case RP_PORT: rc = apply_port(iv, cfg, err); break;
    default: {
      if (!iv->edit) break;
      wi_err e = {0};
      rc = ooo_config_apply(cfg, iv->edit, iv->text, &e);
      if (rc) rc = wi_fail(err, rc, "%s", e.msg);
      break;
    }
    }
    if (rc) return rc;
  }
  wi_err e = {0};
  if (ooo_config_check(cfg, &e)) {
    char all[600] = "";
    for (size_t i = 0; i < n; i++) {
      if (!rp_interv_is_config(&ivs[i])) continue;
      size_t k = strlen(all);
      snprintf(all + k, sizeof all - k, "%s%s", k ? ", " : "", ivs[i].text);
    }
    return wi_fail(err, WI_EINVAL, "%s: the configuration becomes invalid: %s", all, e.msg);
  }
  return WI_OK;
}

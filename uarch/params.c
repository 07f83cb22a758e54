/* params.c — table-driven configuration parameters: apply, document, dump. */
#include "params.h"

#include <math.h>
#include <stdbool.h>
#include <string.h>

static const param_desc *find(const param_table *t, const char *key) {
  for (size_t i = 0; i < t->n; i++)
    if (!strcmp(t->params[i].name, key)) return &t->params[i];
  return NULL;
}

static const char *type_name(const param_desc *d) {
  switch (d->type) {
  case P_U32: case P_U64: case P_I32: return "integer";
  case P_DBL: return "number";
  case P_BOOL: return "boolean";
  case P_ENUM: return "string";
  case P_TABLE: return "table";
  case P_CUSTOM: return "value";
  }
  return "?";
}

static wi_rc apply_one(const param_desc *d, void *base, const cfg_val *v, const char *file,
                       const char *full, wi_err *err) {
  void *field = (char *)base + d->offset;
  switch (d->type) {
  case P_U32: case P_U64: case P_I32: case P_DBL: {
    if (v->kind != CV_NUM)
      return wi_fail(err, WI_EINVAL, "%s: %s must be a %s, not a %s", file, full, type_name(d), cv_kind_name(v->kind));
    double x = v->num;
    if (d->type != P_DBL && x != floor(x))
      return wi_fail(err, WI_EINVAL, "%s: %s must be an integer (got %g)", file, full, x);
    if (x < d->min || x > d->max)
      return wi_fail(err, WI_EINVAL, "%s: %s = %g is out of range [%g, %g]%s%s", file, full, x, d->min,
                     d->max, d->unit ? " " : "", d->unit ? d->unit : "");
    if (d->type == P_U32) *(uint32_t *)field = (uint32_t)x;
    else if (d->type == P_U64) *(uint64_t *)field = (uint64_t)x;
    else if (d->type == P_I32) *(int32_t *)field = (int32_t)x;
    else *(double *)field = x;
    return WI_OK;
  }
  case P_BOOL:
    if (v->kind != CV_BOOL)
      return wi_fail(err, WI_EINVAL, "%s: %s must be a boolean, not a %s", file, full, cv_kind_name(v->kind));
    *(bool *)field = v->b;
    return WI_OK;
  case P_ENUM: {
    if (v->kind != CV_STR)
      return wi_fail(err, WI_EINVAL, "%s: %s must be a string, not a %s", file, full, cv_kind_name(v->kind));
    for (int i = 0; d->choices[i]; i++)
      if (!strcmp(d->choices[i], v->str)) {
        *(int32_t *)field = i;
        return WI_OK;
      }
    char opts[256] = "";
    for (int i = 0; d->choices[i]; i++) {
      if (i) strncat(opts, ", ", sizeof opts - strlen(opts) - 1);
      strncat(opts, d->choices[i], sizeof opts - strlen(opts) - 1);
    }
    return wi_fail(err, WI_EINVAL, "%s: %s = \"%s\" is not one of: %s", file, full, v->str, opts);
  }
  case P_TABLE:
    if (v->kind != CV_TABLE)
      return wi_fail(err, WI_EINVAL, "%s: %s must be a table, not a %s", file, full, cv_kind_name(v->kind));
    return param_apply(d->sub, field, v, file, full, err);
  case P_CUSTOM: {
    wi_err e = {0};
    if (d->parse(v, field, base, &e) != WI_OK)
      return wi_fail(err, e.rc ? e.rc : WI_EINVAL, "%s: %s: %s", file, full, e.msg);
    return WI_OK;
  }
  }
  return wi_fail(err, WI_EINVAL, "%s: %s: bad descriptor", file, full);
}

wi_rc param_apply(const param_table *t, void *base, const cfg_val *v, const char *file,
                  const char *path, wi_err *err) {
  if (!file) file = "";
  if (!path) path = "";
  if (!v || v->kind != CV_TABLE)
    return wi_fail(err, WI_EINVAL, "%s: %s must be a table", file, *path ? path : "configuration");
  for (size_t i = 0; i < v->n; i++) {
    const cfg_entry *e = &v->entries[i];
    if (!e->key)
      return wi_fail(err, WI_EINVAL, "%s: %s has a positional item #%zu where only named keys are allowed",
                     file, *path ? path : "configuration", e->index);
    char full[256];
    snprintf(full, sizeof full, "%s%s%s", path, *path ? "." : "", e->key);
    const param_desc *d = find(t, e->key);
    if (!d) return wi_fail(err, WI_EINVAL, "%s: unknown key %s", file, full);
    wi_rc rc = apply_one(d, base, e->val, file, full, err);
    if (rc) return rc;
  }
  return WI_OK;
}

void param_doc(const param_table *t, const char *path, FILE *f) {
  for (size_t i = 0; i < t->n; i++) {
    const param_desc *d = &t->params[i];
    char full[256];
    snprintf(full, sizeof full, "%s%s%s", path, *path ? "." : "", d->name);
    if (d->type == P_TABLE) {
      fprintf(f, "%-36s %-8s %s\n", full, "table", d->doc ? d->doc : "");
      param_doc(d->sub, full, f);
      continue;
    }
    char range[64] = "";
    if (d->type == P_U32 || d->type == P_U64 || d->type == P_I32 || d->type == P_DBL)
      snprintf(range, sizeof range, "[%g, %g]", d->min, d->max);
    else if (d->type == P_ENUM) {
      for (int k = 0; d->choices[k]; k++) {
        if (k) strncat(range, "|", sizeof range - strlen(range) - 1);
        strncat(range, d->choices[k], sizeof range - strlen(range) - 1);
      }
    }
    fprintf(f, "%-36s %-8s %-12s %-18s %s\n", full, type_name(d), d->unit ? d->unit : "-", range,
            d->doc ? d->doc : "");
  }
}

static void pad(int n, FILE *f) {
  for (int i = 0; i < n; i++) fputs("  ", f);
}

void param_dump_lua(const param_table *t, const void *base, int indent, FILE *f) {
  fputs("{\n", f);
  for (size_t i = 0; i < t->n; i++) {
    const param_desc *d = &t->params[i];
    const void *field = (const char *)base + d->offset;
    if (d->type == P_CUSTOM) continue;
    pad(indent + 1, f);
    fprintf(f, "%s = ", d->name);
    switch (d->type) {
    case P_U32: fprintf(f, "%u", *(const uint32_t *)field); break;
    case P_U64: fprintf(f, "%llu", (unsigned long long)*(const uint64_t *)field); break;
    case P_I32: fprintf(f, "%d", *(const int32_t *)field); break;
    case P_DBL: fprintf(f, "%.17g", *(const double *)field); break;
    case P_BOOL: fputs(*(const bool *)field ? "true" : "false", f); break;
    case P_ENUM: fprintf(f, "\"%s\"", d->choices[*(const int32_t *)field]); break;
    case P_TABLE: param_dump_lua(d->sub, field, indent + 1, f); break;
    case P_CUSTOM: break;
    }
    fputs(",\n", f);
  }
  pad(indent, f);
  fputs("}", f);
}

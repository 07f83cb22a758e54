/* cfgtree.c — a plain-C tree of configuration values. */
#include "cfgtree.h"

#include <stdlib.h>
#include <string.h>

#include "util.h"

cfg_val *cv_new(cv_kind kind) {
  cfg_val *v = xcalloc(1, sizeof *v);
  v->kind = kind;
  return v;
}

cfg_val *cv_num(double x) {
  cfg_val *v = cv_new(CV_NUM);
  v->num = x;
  return v;
}

cfg_val *cv_str(const char *s) {
  cfg_val *v = cv_new(CV_STR);
  v->str = xstrdup(s);
  return v;
}

cfg_val *cv_bool(bool b) {
  cfg_val *v = cv_new(CV_BOOL);
  v->b = b;
  return v;
}

cfg_val *cv_table(void) { return cv_new(CV_TABLE); }

static void cv_append(cfg_val *t, char *key, size_t index, cfg_val *val) {
  t->entries = xrealloc(t->entries, (t->n + 1) * sizeof *t->entries);
  t->entries[t->n++] = (cfg_entry){key, index, val};
}

void cv_set(cfg_val *t, const char *key, cfg_val *val) {
  for (size_t i = 0; i < t->n; i++)
    if (t->entries[i].key && !strcmp(t->entries[i].key, key)) {
      cv_free(t->entries[i].val);
      t->entries[i].val = val;
      return;
    }
  cv_append(t, xstrdup(key), 0, val);
}

void cv_push(cfg_val *t, cfg_val *val) { cv_append(t, NULL, cv_len(t) + 1, val); }

static int entry_cmp(const void *a, const void *b) {
  const cfg_entry *x = a, *y = b;
  if (x->key && y->key) return strcmp(x->key, y->key);
  if (x->key) return -1;
  if (y->key) return 1;
  return x->index < y->index ? -1 : x->index > y->index;
}

void cv_sort(cfg_val *t) {
  if (t->kind != CV_TABLE || !t->n) return; /* qsort(NULL, 0, ...) is undefined behaviour */
  qsort(t->entries, t->n, sizeof *t->entries, entry_cmp);
  for (size_t i = 0; i < t->n; i++) cv_sort(t->entries[i].val);
}

cfg_val *cv_get(const cfg_val *t, const char *key) {
  if (!t || t->kind != CV_TABLE) return NULL;
  for (size_t i = 0; i < t->n; i++)
    if (t->entries[i].key && !strcmp(t->entries[i].key, key)) return t->entries[i].val;
  return NULL;
}

size_t cv_len(const cfg_val *t) {
  size_t n = 0;
  if (t && t->kind == CV_TABLE)
    for (size_t i = 0; i < t->n; i++) n += !t->entries[i].key;
  return n;
}

cfg_val *cv_item(const cfg_val *t, size_t idx) {
  if (!t || t->kind != CV_TABLE) return NULL;
  for (size_t i = 0; i < t->n; i++)
    if (!t->entries[i].key && t->entries[i].index == idx) return t->entries[i].val;
  return NULL;
}

cfg_val *cv_clone(const cfg_val *v) {
  if (!v) return NULL;
  cfg_val *c = cv_new(v->kind);
  c->b = v->b;
  c->num = v->num;
  if (v->str) c->str = xstrdup(v->str);
  for (size_t i = 0; i < v->n; i++)
    cv_append(c, v->entries[i].key ? xstrdup(v->entries[i].key) : NULL, v->entries[i].index,
              cv_clone(v->entries[i].val));
  return c;
}

void cv_free(cfg_val *v) {
  if (!v) return;
  for (size_t i = 0; i < v->n; i++) {
    free(v->entries[i].key);
    cv_free(v->entries[i].val);
  }
  free(v->entries);
  free(v->str);
  free(v);
}

const char *cv_kind_name(cv_kind k) {
  switch (k) {
  case CV_NIL: return "nil";
  case CV_BOOL: return "boolean";
  case CV_NUM: return "number";
  case CV_STR: return "string";
  case CV_TABLE: return "table";
  }
  return "?";
}

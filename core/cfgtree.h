/* cfgtree.h — a plain-C tree of configuration values (nil, bool, number, string, table).
 * scripts/ turns Lua tables into this tree; uarch/ and replay/ read and validate it without
 * knowing Lua exists. */
#ifndef WHATIF_CFGTREE_H
#define WHATIF_CFGTREE_H

#include <stdbool.h>
#include <stddef.h>

typedef enum cv_kind { CV_NIL = 0, CV_BOOL, CV_NUM, CV_STR, CV_TABLE } cv_kind;

typedef struct cfg_val cfg_val;

/* One entry of a table: a string key, or (key == NULL) the positional item `index` (1-based). */
typedef struct cfg_entry {
  char *key;
  size_t index;
  cfg_val *val;
} cfg_entry;

struct cfg_val {
  cv_kind kind;
  bool b;
  double num;
  char *str;
  cfg_entry *entries; /* CV_TABLE: string keys sorted by name, then positional items in order */
  size_t n;
};

cfg_val *cv_new(cv_kind kind);
cfg_val *cv_num(double v);
cfg_val *cv_str(const char *s);
cfg_val *cv_bool(bool b);
cfg_val *cv_table(void);
/* Add a keyed entry (replacing an existing one) or a positional item; the table takes val. */
void cv_set(cfg_val *t, const char *key, cfg_val *val);
void cv_push(cfg_val *t, cfg_val *val);
/* Sort keyed entries by name (call once after building, for deterministic iteration). */
void cv_sort(cfg_val *t);
/* Keyed lookup, or NULL. */
cfg_val *cv_get(const cfg_val *t, const char *key);
/* Number of positional items. */
size_t cv_len(const cfg_val *t);
/* Positional item i (1-based), or NULL. */
cfg_val *cv_item(const cfg_val *t, size_t i);
/* Deep copy. */
cfg_val *cv_clone(const cfg_val *v);
void cv_free(cfg_val *v); /* accepts NULL */
const char *cv_kind_name(cv_kind k);

#endif

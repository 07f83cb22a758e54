/* params.h — table-driven configuration parameters. Each machine parameter is described once
 * (name, type, place in its C struct, range, unit, documentation); applying a cfg_val tree,
 * validating, and printing documentation all walk these tables. */
#ifndef WHATIF_PARAMS_H
#define WHATIF_PARAMS_H

#include <stddef.h>
#include <stdint.h>

#include "cfgtree.h"
#include "util.h"

typedef enum param_type {
  P_U32,    /* uint32_t */
  P_U64,    /* uint64_t */
  P_I32,    /* int32_t */
  P_DBL,    /* double */
  P_BOOL,   /* bool */
  P_ENUM,   /* int32_t holding an index into choices[] (given as a string) */
  P_TABLE,  /* nested struct described by sub */
  P_CUSTOM, /* parsed by parse(): for lists, port sets, micro-op tables */
} param_type;

typedef struct param_desc param_desc;
typedef struct param_table param_table;

/* A custom parser: read v into the field at `field`; on error fill err (the message should
 * not repeat `path`, which the caller prefixes). */
typedef wi_rc (*param_parse_fn)(const cfg_val *v, void *field, void *base, wi_err *err);

struct param_desc {
  const char *name;
  param_type type;
  size_t offset;             /* byte offset of the field within its struct */
  double min, max;           /* inclusive range for numbers */
  const char *unit;          /* "cycles", "entries", "bytes", "instructions/cycle", ... */
  const char *doc;           /* one line */
  const char *const *choices;/* P_ENUM: NULL-terminated names */
  const param_table *sub;    /* P_TABLE */
  param_parse_fn parse;      /* P_CUSTOM */
};

struct param_table {
  const char *name;          /* section name, for documentation */
  const param_desc *params;
  size_t n;
};

#define PARAM_TABLE(name, arr) {name, arr, sizeof(arr) / sizeof(arr[0])}

/* Apply the keyed entries of table v onto the struct at base. Unknown keys, wrong types and
 * out-of-range values are errors naming "<file>: <path>.<key>"; file and path may be "".
 * Keys absent from v keep their current values. Positional items are errors. */
wi_rc param_apply(const param_table *t, void *base, const cfg_val *v, const char *file,
                  const char *path, wi_err *err);

/* Write documentation of every parameter of t (recursively) as "path  type  unit  range  doc"
 * lines to f. */
void param_doc(const param_table *t, const char *path, FILE *f);

/* Write the current values of the struct at base as a Lua table (deterministic). */
void param_dump_lua(const param_table *t, const void *base, int indent, FILE *f);

#endif

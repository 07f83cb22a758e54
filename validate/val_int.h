/* val_int.h — private helpers shared by the validate/ files. */
#ifndef WHATIF_VAL_INT_H
#define WHATIF_VAL_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "trace.h"
#include "val.h"

/* Source lines of a trace's PCs as a programmer wrote them: the statement line in the enclosing
 * function (through the call sites of inlined code, from the object's DWARF when the object
 * file is still there: sym_stmt_line_at), else the trace's own line table (trace_line_lookup,
 * which names the innermost inlined line, e.g. an intrinsic's header). Objects are opened on
 * first use. Free with val_lines_free. */
typedef struct val_lines val_lines;
val_lines *val_lines_new(const trace_t *t);
void val_lines_free(val_lines *l); /* accepts NULL */
/* File (as compiled; valid until val_lines_free) and line of pc; false without line info. */
bool val_line(val_lines *l, uint64_t pc, const char **file, uint32_t *line);

/* Traces among rs[0..n) that have an injected-cause check; *passed gets how many pass. */
size_t val_count_checks(val_result *const *rs, size_t n, size_t *passed);

#endif

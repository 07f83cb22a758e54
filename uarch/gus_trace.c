/* gus_trace.c — a Gus instruction source over a .wtr trace (model instructions: rep runs
 * collapsed, split accesses merged). */
#include "gus.h"

#include <string.h>

static const dec_insn *tr_decoded(void *ctx, uint32_t sid) { return trace_decoded(ctx, sid); }

static void *tr_open(void *ctx, wi_err *err) {
  (void)err;
  return trace_cursor_new(ctx, 0);
}

static wi_rc tr_next(void *cursor, trace_batch *b, wi_err *err) { return trace_cursor_next(cursor, b, err); }

static void tr_close(void *cursor) { trace_cursor_free(cursor); }

void gus_source_trace(gus_source *src, const trace_t *t) {
  memset(src, 0, sizeof *src);
  const trace_info *ti = trace_get_info(t);
  src->ctx = (void *)t;
  src->n_static = ti->n_static;
  src->n_insns = ti->n_insns;
  src->decoded = tr_decoded;
  src->open = tr_open;
  src->next = tr_next;
  src->close = tr_close;
}

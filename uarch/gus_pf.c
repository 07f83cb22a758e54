/* gus_pf.c — a prefetching cursor over a Gus instruction source: the source's cursor read
 * through core's batch_pf (a second thread decodes batches ahead). The batches and their order
 * are exactly the source's: results cannot differ. */
#include "gus.h"
#include "gus_int.h"

#include <stdlib.h>

#include "batch_pf.h"

struct gus_pf {
  const gus_source *src;
  void *cur; /* the source's cursor */
  batch_pf *rd;
};

gus_pf *gus_pf_open(const gus_source *src, bool threaded, wi_err *err) {
  void *cur = src->open(src->ctx, err);
  if (!cur) return NULL;
  gus_pf *pf = xcalloc(1, sizeof *pf);
  pf->src = src;
  pf->cur = cur;
  pf->rd = batch_pf_new(cur, src->next, NULL, threaded);
  return pf;
}

wi_rc gus_pf_next(gus_pf *pf, trace_batch *b, wi_err *err) { return batch_pf_next(pf->rd, b, err); }

void gus_pf_close(gus_pf *pf) {
  if (!pf) return;
  batch_pf_free(pf->rd); /* stops the reader before the cursor goes */
  pf->src->close(pf->cur);
  free(pf);
}

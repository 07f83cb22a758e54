/* batch_pf.h — a prefetching reader of instruction batches: a second thread reads (decompresses
 * and decodes) batches ahead into a small ring of copies, so a model never waits for the trace.
 * The batches and their order are exactly the underlying cursor's, so results cannot differ;
 * without a second CPU, or when the thread cannot start, every call reads in line. */
#ifndef WHATIF_BATCH_PF_H
#define WHATIF_BATCH_PF_H

#include <stdbool.h>
#include <stdint.h>

#include "trace.h"
#include "util.h"

typedef wi_rc (*bpf_next_fn)(void *cur, trace_batch *b, wi_err *err);
typedef wi_rc (*bpf_seek_fn)(void *cur, uint64_t k, wi_err *err);

typedef struct batch_pf batch_pf;

/* A reader over cursor cur (not owned: the caller closes it after batch_pf_free). seek may be
 * NULL (then batch_pf_seek fails). threaded: read ahead on a second thread when this process
 * may run on two CPUs or more. */
batch_pf *batch_pf_new(void *cur, bpf_next_fn next, bpf_seek_fn seek, bool threaded);
/* Next batch, as cursor next: b->n == 0 at the end; the pointers stay valid until the next call. */
wi_rc batch_pf_next(batch_pf *pf, trace_batch *b, wi_err *err);
/* Position the cursor (the read-ahead is dropped); the previous batch's pointers become invalid. */
wi_rc batch_pf_seek(batch_pf *pf, uint64_t k, wi_err *err);
bool batch_pf_threaded(const batch_pf *pf);
void batch_pf_free(batch_pf *pf); /* accepts NULL */

/* The same over a trace cursor (batch_pf_free does not free it). */
batch_pf *batch_pf_trace(trace_cursor *c, bool threaded);

#endif

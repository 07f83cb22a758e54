/* gus_int.h — internals of the Gus model shared by uarch/gus*.c and its tests (not an API). */
#ifndef WHATIF_GUS_INT_H
#define WHATIF_GUS_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gus.h"

/* A model instance. taint_on = false skips all taint bookkeeping (sensitivity runs, which only
 * need cycles). ring_mult (a power of two, 1 in production) enlarges the taint ring: results
 * must not depend on it, which the tests use to catch stale-bit aliasing. */
gus *gus_create(const gus_machine *m, uint32_t window, uint32_t n_static, bool taint_on,
                uint32_t ring_mult, wi_err *err);

/* Step every instruction of src through g (opens and closes its own cursor). */
wi_rc gus_run_source(gus *g, const gus_source *src, wi_err *err);

/* Whether gus_run_source reads the source on a second thread (gus_pf; default off for
 * gus_create, on for gus_new and gus_run). Results do not depend on it. */
void gus_set_prefetch(gus *g, bool on);

/* A prefetching cursor over src: with threaded, a second thread reads batches ahead into a ring
 * of copies (mem_off rebased to the copied accesses); without it (or when the process may run on
 * one CPU only, or the thread cannot be started) it is the source's own cursor. Batches stay
 * valid until the next call. Defined in gus_pf.c. */
typedef struct gus_pf gus_pf;
gus_pf *gus_pf_open(const gus_source *src, bool threaded, wi_err *err); /* NULL on failure */
wi_rc gus_pf_next(gus_pf *pf, trace_batch *b, wi_err *err);
void gus_pf_close(gus_pf *pf); /* accepts NULL */

/* Retire time of the last instruction so far, in ticks. */
uint64_t gus_now_ticks(const gus *g);

/* Self-check mode (tests): every taint-queue membership test (and those of gus_finish's flush) is
 * also answered by walking the set's whole chain, without the paths of earlier tests, and
 * disagreements are counted. */
void gus_set_selfcheck(gus *g, bool on);
/* Nodes the taint-queue tests have walked so far beyond their sets' heads (tests: it stays a small
 * multiple of the instructions when sets alternate between a few chains). */
uint64_t gus_walk_steps(const gus *g);
/* Tests: keep only n (1..16) paths for the taint-queue tests, so that paths are reset often and
 * paths resting on them must be found unsound (results do not depend on it). Before any step. */
void gus_set_paths(gus *g, uint32_t n);
/* Check the taint-set structures (chains strictly decreasing; the tests' paths chains with every
 * node marked with its path and index), that the fill buffers are taken in turn in the order they
 * free, and the self-check count. Returns true when consistent; otherwise describes the first problem in msg. */
bool gus_check_sets(const gus *g, char *msg, size_t n);

#endif

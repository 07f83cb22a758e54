/* batch_pf.c — a prefetching reader of instruction batches (see batch_pf.h): one producer thread
 * fills a ring of batch copies; the consumer holds at most one slot at a time. */
#include "batch_pf.h"

#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#define PF_SLOTS 8 /* batches in the ring (~2 ms of model work): rides out the reader being descheduled */
#define PF_WAKE 4  /* a full reader is woken once this few batches are left unread (fewer wake-ups) */

typedef struct pf_slot {
  trace_insn *insns;
  trace_mem *mems;
  size_t icap, mcap; /* capacities (entries) */
  size_t n;
  uint64_t first_index;
} pf_slot;

struct batch_pf {
  void *cur;       /* the cursor: only the producer thread touches it while the thread runs */
  bpf_next_fn next;
  bpf_seek_fn seek;
  bool threaded;   /* a producer thread may run (two CPUs); false: every call reads in line */
  bool running;    /* the producer thread is started */
  bool sync;       /* mu and the condition variables are initialised */
  pthread_t th;
  pthread_mutex_t mu;
  pthread_cond_t cv_data, cv_room;
  pf_slot slot[PF_SLOTS];
  uint64_t head, tail; /* batches taken by the consumer / filled by the producer */
  bool held;           /* the consumer holds slot[head % PF_SLOTS] (returned, not yet released) */
  bool done, stop, cons_wait, prod_wait;
  wi_rc rc;            /* the producer's end: WI_OK at the end of the cursor, else its error */
  wi_err err;
};

/* Copy batch b into slot s; mem_off is rebased to the copied accesses. */
static void pf_copy(pf_slot *s, const trace_batch *b) {
  uint64_t lo = UINT64_MAX, hi = 0;
  for (size_t i = 0; i < b->n; i++) {
    const trace_insn *t = &b->insns[i];
    if (!t->n_mem) continue;
    if (t->mem_off < lo) lo = t->mem_off;
    if ((uint64_t)t->mem_off + t->n_mem > hi) hi = (uint64_t)t->mem_off + t->n_mem;
  }
  if (lo > hi) lo = hi = 0;
  if (b->n > s->icap) {
    s->icap = b->n;
    free(s->insns);
    s->insns = xmalloc(s->icap * sizeof *s->insns);
  }
  size_t nm = (size_t)(hi - lo);
  if (nm > s->mcap || !s->mems) {
    s->mcap = nm ? nm : 1; /* never NULL: the model forms mems + mem_off */
    free(s->mems);
    s->mems = xmalloc(s->mcap * sizeof *s->mems);
  }
  if (b->n) memcpy(s->insns, b->insns, b->n * sizeof *s->insns);
  if (nm) memcpy(s->mems, b->mems + lo, nm * sizeof *s->mems);
  if (lo)
    for (size_t i = 0; i < b->n; i++) s->insns[i].mem_off -= (uint32_t)lo;
  s->n = b->n;
  s->first_index = b->first_index;
}

static void *pf_main(void *arg) {
  batch_pf *pf = arg;
  for (;;) {
    pthread_mutex_lock(&pf->mu);
    while (pf->tail - pf->head >= PF_SLOTS && !pf->stop) {
      pf->prod_wait = true;
      pthread_cond_wait(&pf->cv_room, &pf->mu);
    }
    pf->prod_wait = false;
    bool stop = pf->stop;
    pf_slot *s = &pf->slot[pf->tail % PF_SLOTS]; /* free: the consumer is at most PF_SLOTS - 1 behind */
    pthread_mutex_unlock(&pf->mu);
    if (stop) return NULL;
    trace_batch b;
    wi_err err = {0};
    wi_rc rc = pf->next(pf->cur, &b, &err);
    if (rc == WI_OK && b.n) pf_copy(s, &b);
    pthread_mutex_lock(&pf->mu);
    if (rc != WI_OK || !b.n) {
      pf->done = true;
      pf->rc = rc;
      pf->err = err;
    } else {
      pf->tail++;
    }
    if (pf->cons_wait) pthread_cond_signal(&pf->cv_data);
    bool end = pf->done;
    pthread_mutex_unlock(&pf->mu);
    if (end) return NULL;
  }
}

/* Whether this process may run on two CPUs or more: with one, a reader thread only takes turns
 * with the model (and costs the copies and the switches). */
static bool two_cpus(void) {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) != 0) return true;
  return CPU_COUNT(&set) >= 2;
}

/* Start the producer from the cursor's current position with an empty ring. */
static void pf_start(batch_pf *pf) {
  pf->head = pf->tail = 0;
  pf->held = pf->done = pf->stop = pf->cons_wait = pf->prod_wait = false;
  pf->rc = WI_OK;
  pf->running = pthread_create(&pf->th, NULL, pf_main, pf) == 0;
  if (!pf->running) pf->threaded = false; /* no thread (resource limits): read in line, same batches */
}

static void pf_stop(batch_pf *pf) {
  if (!pf->running) return;
  pthread_mutex_lock(&pf->mu);
  pf->stop = true;
  pthread_cond_signal(&pf->cv_room);
  pthread_mutex_unlock(&pf->mu);
  pthread_join(pf->th, NULL);
  pf->running = false;
}

batch_pf *batch_pf_new(void *cur, bpf_next_fn next, bpf_seek_fn seek, bool threaded) {
  batch_pf *pf = xcalloc(1, sizeof *pf);
  pf->cur = cur;
  pf->next = next;
  pf->seek = seek;
  pf->threaded = threaded && two_cpus();
  if (pf->threaded) {
    pthread_mutex_init(&pf->mu, NULL);
    pthread_cond_init(&pf->cv_data, NULL);
    pthread_cond_init(&pf->cv_room, NULL);
    pf->sync = true;
    pf_start(pf);
  }
  return pf;
}

bool batch_pf_threaded(const batch_pf *pf) { return pf->threaded; }

wi_rc batch_pf_next(batch_pf *pf, trace_batch *b, wi_err *err) {
  if (!pf->threaded) return pf->next(pf->cur, b, err);
  pthread_mutex_lock(&pf->mu);
  if (pf->held) {
    pf->head++;
    pf->held = false;
    if (pf->prod_wait && pf->tail - pf->head <= PF_WAKE) pthread_cond_signal(&pf->cv_room);
  }
  while (pf->head == pf->tail && !pf->done) {
    pf->cons_wait = true;
    pthread_cond_wait(&pf->cv_data, &pf->mu);
  }
  pf->cons_wait = false;
  wi_rc rc = WI_OK;
  memset(b, 0, sizeof *b);
  if (pf->head != pf->tail) {
    const pf_slot *s = &pf->slot[pf->head % PF_SLOTS];
    b->insns = s->insns;
    b->mems = s->mems;
    b->n = s->n;
    b->first_index = s->first_index;
    pf->held = true;
  } else if (pf->rc != WI_OK) {
    rc = pf->rc;
    if (err) *err = pf->err;
  }
  pthread_mutex_unlock(&pf->mu);
  return rc;
}

wi_rc batch_pf_seek(batch_pf *pf, uint64_t k, wi_err *err) {
  if (!pf->seek) return wi_fail(err, WI_ESTATE, "batch reader: this cursor cannot seek");
  if (!pf->threaded) return pf->seek(pf->cur, k, err);
  pf_stop(pf); /* the cursor is the producer's while it runs */
  wi_rc rc = pf->seek(pf->cur, k, err);
  pf_start(pf);
  return rc;
}

void batch_pf_free(batch_pf *pf) {
  if (!pf) return;
  pf_stop(pf);
  if (pf->sync) {
    pthread_cond_destroy(&pf->cv_room);
    pthread_cond_destroy(&pf->cv_data);
    pthread_mutex_destroy(&pf->mu);
  }
  for (int i = 0; i < PF_SLOTS; i++) {
    free(pf->slot[i].insns);
    free(pf->slot[i].mems);
  }
  free(pf);
}

static wi_rc trace_next_fn(void *cur, trace_batch *b, wi_err *err) { return trace_cursor_next(cur, b, err); }
static wi_rc trace_seek_fn(void *cur, uint64_t k, wi_err *err) { return trace_cursor_seek(cur, k, err); }

batch_pf *batch_pf_trace(trace_cursor *c, bool threaded) {
  return batch_pf_new(c, trace_next_fn, trace_seek_fn, threaded);
}

/* rp_sweep.c — many replays on a thread pool, results delivered in job order on the caller's
 * thread (so a 1-thread and an N-thread sweep produce identical output).
 *
 * Scheduling. Jobs are cut into chunks of `chunk` consecutive jobs; within a chunk they run
 * longest first (estimated length: the instructions from the snapshot the replay starts at to
 * the end), so a short job, not a long one, is last on the pool (the tail of the sweep). At
 * most two chunks are in flight: the one being delivered and the next, which bounds the
 * results waiting for delivery to 2 x chunk. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "rp_int.h"

typedef struct sw_slot {
  bool done;
  wi_rc rc;
  wi_err err;
  rp_result r;
} sw_slot;

typedef struct sw_ctx {
  const rp_base *b;
  rp_plan *const *plans;
  size_t n;
  bool ckpt;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  size_t next;        /* next position in `order` to hand out */
  size_t delivered;   /* jobs delivered to the callback */
  size_t chunk;       /* jobs per scheduling chunk */
  size_t window;      /* 2 x chunk: slots */
  size_t *order;      /* job indices: chunk by chunk, longest first within a chunk */
  bool stop;
  sw_slot *slots;     /* job j in slots[j % window] */
} sw_ctx;

typedef struct sw_cost {
  size_t job;
  uint64_t len; /* estimated instructions to replay */
} sw_cost;

static int sw_cost_cmp(const void *a, const void *b) {
  const sw_cost *x = a, *y = b;
  if (x->len != y->len) return x->len < y->len ? 1 : -1;
  return x->job < y->job ? -1 : x->job > y->job;
}

/* The execution order (see the file comment). */
static void sw_order(sw_ctx *c) {
  sw_cost *v = xmalloc((c->n ? c->n : 1) * sizeof *v);
  for (size_t j = 0; j < c->n; j++) {
    int s = c->ckpt ? rp_plan_start_snap(c->plans[j], c->b) : -1;
    uint64_t from = s >= 0 ? c->b->snap_commit[s] : 0;
    v[j] = (sw_cost){j, c->b->n_insns > from ? c->b->n_insns - from : 0};
  }
  for (size_t k = 0; k < c->n; k += c->chunk) qsort(v + k, WI_MIN(c->chunk, c->n - k), sizeof *v, sw_cost_cmp);
  for (size_t j = 0; j < c->n; j++) c->order[j] = v[j].job;
  free(v);
}

static void *sw_worker(void *arg) {
  sw_ctx *c = arg;
  rp_worker *w = rp_worker_new(c->b);
  pthread_mutex_lock(&c->mu);
  for (;;) {
    /* the next job's chunk may start once the chunk before it is being delivered */
    while (!c->stop && c->next < c->n && c->next / c->chunk > c->delivered / c->chunk + 1)
      pthread_cond_wait(&c->cv, &c->mu);
    if (c->stop || c->next >= c->n) break;
    size_t j = c->order[c->next++];
    pthread_mutex_unlock(&c->mu);
    rp_result r;
    wi_err e = {0};
    wi_rc rc = rp_replay(c->b, c->plans[j], w, c->ckpt, &r, &e);
    pthread_mutex_lock(&c->mu);
    sw_slot *s = &c->slots[j % c->window];
    s->rc = rc;
    s->err = e;
    if (!rc) s->r = r;
    s->done = true;
    pthread_cond_broadcast(&c->cv);
  }
  pthread_mutex_unlock(&c->mu);
  rp_worker_free(w);
  return NULL;
}

wi_rc rp_sweep(const rp_base *b, rp_plan *const *plans, size_t n, const rp_sweep_opts *o, rp_sweep_fn fn,
               void *ctx, wi_err *err) {
  unsigned threads = o && o->threads ? o->threads : 1;
  if (threads > 256) threads = 256;
  if (threads > n && n) threads = (unsigned)n;
  sw_ctx c;
  memset(&c, 0, sizeof c);
  c.b = b;
  c.plans = plans;
  c.n = n;
  c.ckpt = !(o && o->no_ckpt);
  c.chunk = 16 + 8 * (size_t)threads;
  c.window = 2 * c.chunk;
  c.slots = xcalloc(c.window, sizeof *c.slots);
  c.order = xcalloc(n ? n : 1, sizeof *c.order);
  sw_order(&c);
  pthread_mutex_init(&c.mu, NULL);
  pthread_cond_init(&c.cv, NULL);
  pthread_t *tid = xcalloc(threads ? threads : 1, sizeof *tid);
  unsigned started = 0;
  wi_rc rc = WI_OK;
  for (unsigned i = 0; i < threads && n; i++) {
    if (pthread_create(&tid[i], NULL, sw_worker, &c)) break;
    started++;
  }
  if (n && !started) rc = wi_fail(err, WI_ESTATE, "sweep: could not start a worker thread");
  wi_progress pg;
  progress_begin(&pg, o && o->what ? o->what : "sweep", n);
  rp_result r;
  for (size_t i = 0; i < n && !rc; i++) {
    pthread_mutex_lock(&c.mu);
    sw_slot *s = &c.slots[i % c.window];
    while (!s->done) pthread_cond_wait(&c.cv, &c.mu);
    wi_rc jr = s->rc;
    wi_err je = s->err;
    if (!jr) r = s->r;
    s->done = false;
    c.delivered = i + 1;
    pthread_cond_broadcast(&c.cv);
    pthread_mutex_unlock(&c.mu);
    if (jr) {
      rc = wi_fail(err, jr, "replay %zu (%s): %s", i, rp_plan_text(plans[i]), je.msg);
      break;
    }
    rc = fn(ctx, i, &r, err);
    progress_update(&pg, i + 1);
  }
  pthread_mutex_lock(&c.mu);
  c.stop = true;
  pthread_cond_broadcast(&c.cv);
  pthread_mutex_unlock(&c.mu);
  for (unsigned i = 0; i < started; i++) pthread_join(tid[i], NULL);
  progress_end(&pg);
  pthread_cond_destroy(&c.cv);
  pthread_mutex_destroy(&c.mu);
  free(tid);
  free(c.slots);
  free(c.order);
  return rc;
}

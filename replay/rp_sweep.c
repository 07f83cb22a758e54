/* rp_sweep.c — many replays on a thread pool, results delivered in job order on the caller's
 * thread (so a 1-thread and an N-thread sweep produce identical output). */
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
  size_t next;        /* next job to hand out */
  size_t delivered;   /* jobs delivered to the callback */
  size_t window;      /* jobs in flight or waiting for delivery, at most */
  bool stop;
  sw_slot *slots;     /* window entries, job j in slots[j % window] */
} sw_ctx;

static void *sw_worker(void *arg) {
  sw_ctx *c = arg;
  rp_worker *w = rp_worker_new(c->b);
  pthread_mutex_lock(&c->mu);
  for (;;) {
    while (!c->stop && c->next < c->n && c->next >= c->delivered + c->window) pthread_cond_wait(&c->cv, &c->mu);
    if (c->stop || c->next >= c->n) break;
    size_t j = c->next++;
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
  c.window = 16 + 8 * (size_t)threads;
  c.slots = xcalloc(c.window, sizeof *c.slots);
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
  return rc;
}

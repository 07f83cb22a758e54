/* gus.c — the Gus model's machine description, whole runs over a source, sensitivity analysis
 * (parallel runs with one resource scaled) and the in-memory source. The model itself is in
 * gus_model.c. */
#include "gus.h"
#include "gus_int.h"
#include "ooo.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ======================================================================================
 * Machine description
 * ====================================================================================== */

void gus_machine_default(gus_machine *m) {
  ooo_config c;
  ooo_config_default(&c);
  if (gus_machine_from_ooo(m, &c, NULL) != WI_OK) wi_die(70, "gus: the default machine does not convert");
}

static bool pow2(uint64_t x) { return x && !(x & (x - 1)); }

static wi_rc check_cache(const char *name, const gus_cache *c, uint32_t line, wi_err *err) {
  if (!c->ways || !c->size || c->size % (c->ways * line))
    return wi_fail(err, WI_EINVAL, "gus machine: %s: size %u is not a multiple of ways %u x line %u",
                   name, c->size, c->ways, line);
  if (!pow2(c->size / (c->ways * line)))
    return wi_fail(err, WI_EINVAL, "gus machine: %s: %u sets is not a power of two", name,
                   c->size / (c->ways * line));
  if (c->ways > 64) return wi_fail(err, WI_EINVAL, "gus machine: %s: ways %u > 64", name, c->ways);
  return WI_OK;
}

wi_rc gus_machine_check(const gus_machine *m, wi_err *err) {
  if (!m->fe_width || !m->dispatch_width || !m->retire_width)
    return wi_fail(err, WI_EINVAL, "gus machine: fe_width, dispatch_width and retire_width must be >= 1");
  if (m->rob < 1 || m->rob > (1u << 16))
    return wi_fail(err, WI_EINVAL, "gus machine: rob = %u is out of range [1, 65536]", m->rob);
  if (m->n_ports < 1 || m->n_ports > GUS_MAX_PORTS)
    return wi_fail(err, WI_EINVAL, "gus machine: n_ports = %u is out of range [1, %d]", m->n_ports,
                   GUS_MAX_PORTS);
  const uint32_t valid = m->n_ports >= 32 ? UINT32_MAX : (1u << m->n_ports) - 1;
  for (int c = 0; c < IC_NUM; c++) {
    const gus_class_uops *cu = &m->cls[c];
    if (cu->n > GUS_MAX_UOPS)
      return wi_fail(err, WI_EINVAL, "gus machine: class %s: %u micro-ops > %d", insn_class_name(c),
                     cu->n, GUS_MAX_UOPS);
    for (int k = 0; k < cu->n; k++) {
      if (!cu->uop[k].ports || (cu->uop[k].ports & ~valid))
        return wi_fail(err, WI_EINVAL, "gus machine: class %s uop %d: port set 0x%x not within %u ports",
                       insn_class_name(c), k, cu->uop[k].ports, m->n_ports);
      if (!cu->uop[k].occupancy)
        return wi_fail(err, WI_EINVAL, "gus machine: class %s uop %d: occupancy must be >= 1", insn_class_name(c), k);
    }
  }
  const gus_uop *mu[3] = {&m->load, &m->sta, &m->std};
  const char *mn[3] = {"load", "sta", "std"};
  for (int k = 0; k < 3; k++)
    if (!mu[k]->ports || (mu[k]->ports & ~valid) || !mu[k]->occupancy)
      return wi_fail(err, WI_EINVAL, "gus machine: %s uop: port set 0x%x not within %u ports (or occupancy 0)",
                     mn[k], mu[k]->ports, m->n_ports);
  if (!pow2(m->line) || m->line < 8)
    return wi_fail(err, WI_EINVAL, "gus machine: line = %u is not a power of two >= 8", m->line);
  wi_rc rc;
  if ((rc = check_cache("l1d", &m->l1d, m->line, err)) || (rc = check_cache("l2", &m->l2, m->line, err)) ||
      (rc = check_cache("llc", &m->llc, m->line, err)))
    return rc;
  if (!(m->l2_bw > 0) || !(m->llc_bw > 0) || !(m->dram_bw > 0))
    return wi_fail(err, WI_EINVAL, "gus machine: l2_bw, llc_bw and dram_bw must be > 0 lines/cycle");
  if (!m->fill_buffers) return wi_fail(err, WI_EINVAL, "gus machine: fill_buffers must be >= 1");
  if (!m->dram_channels || !m->dram_banks || m->dram_channels * m->dram_banks > 65536 || m->dram_row < m->line ||
      m->dram_row % m->line)
    return wi_fail(err, WI_EINVAL, "gus machine: dram: %u channels x %u banks, row %u bytes (a multiple of the line)",
                   m->dram_channels, m->dram_banks, m->dram_row);
  if (!pow2(m->page) || m->page < 256)
    return wi_fail(err, WI_EINVAL, "gus machine: page = %u is not a power of two >= 256", m->page);
  if (!m->dtlb_ways || m->dtlb_entries % m->dtlb_ways || !pow2(m->dtlb_entries / m->dtlb_ways) ||
      !m->stlb_ways || m->stlb_entries % m->stlb_ways || !pow2(m->stlb_entries / m->stlb_ways))
    return wi_fail(err, WI_EINVAL, "gus machine: dtlb %u/%u or stlb %u/%u entries/ways: sets must be a power of two",
                   m->dtlb_entries, m->dtlb_ways, m->stlb_entries, m->stlb_ways);
  for (int r = 0; r < GUS_R_MAX; r++)
    if (!(m->tput[r] > 0 && m->tput[r] < 1e6) || !(m->lat[r] >= 0 && m->lat[r] < 1e6))
      return wi_fail(err, WI_EINVAL, "gus machine: scale of resource %d out of range (tput %g, lat %g)", r,
                     m->tput[r], m->lat[r]);
  return WI_OK;
}

int gus_res_count(const gus_machine *m) { return GUS_R_PORT0 + (int)m->n_ports; }

const char *gus_res_name(const gus_machine *m, int r, char *buf, size_t n) {
  static const char *const names[GUS_R_PORT0] = {"frontend", "dispatch", "rob",  "retire", "fillbuf",
                                                 "l2",       "llc",      "dram", "tlb"};
  if (r >= 0 && r < GUS_R_PORT0) snprintf(buf, n, "%s", names[r]);
  else if (r >= GUS_R_PORT0 && r < GUS_R_MAX) {
    int p = r - GUS_R_PORT0;
    if (m && m->port_name[p][0]) snprintf(buf, n, "%.*s", (int)sizeof m->port_name[p], m->port_name[p]);
    else snprintf(buf, n, "p%d", p);
  } else snprintf(buf, n, "?%d", r);
  return buf;
}

const char *gus_bind_name(const gus_machine *m, int b, char *buf, size_t n) {
  if (b == GUS_B_DATA) snprintf(buf, n, "data");
  else if (b == GUS_B_MEMDEP) snprintf(buf, n, "memdep");
  else gus_res_name(m, b, buf, n);
  return buf;
}

bool gus_res_has_latency(int r) {
  return r == GUS_R_FRONTEND || r == GUS_R_L2 || r == GUS_R_LLC || r == GUS_R_DRAM || r == GUS_R_TLB ||
         (r >= GUS_R_PORT0 && r < GUS_R_MAX);
}

/* ======================================================================================
 * Runs and sensitivity
 * ====================================================================================== */

void gus_result_free(gus_result *r) {
  if (!r) return;
  free(r->taint);
  free(r->count);
  r->taint = r->count = NULL;
}

wi_rc gus_run(const gus_machine *m, uint32_t window, const gus_source *src, gus_result *r, wi_err *err) {
  memset(r, 0, sizeof *r);
  gus *g = gus_new(m, window, src->n_static, err);
  if (!g) return err && err->rc ? err->rc : WI_EINVAL;
  wi_rc rc = gus_run_source(g, src, err);
  if (rc == WI_OK) gus_finish(g, r);
  gus_free(g);
  return rc;
}

typedef struct sens_job {
  gus_machine m;
  int res;    /* resource */
  int kind;   /* 0 x2 throughput, 1 half latency, 2 factor */
  uint64_t ticks;
  wi_rc rc;
  wi_err err;
} sens_job;

typedef struct sens_pool {
  sens_job *jobs;
  size_t n, next;
  uint32_t window;
  const gus_source *src;
  bool prefetch; /* read each run's source on a second thread (when the runs are not parallel) */
  pthread_mutex_t mu;
} sens_pool;

static void run_job(sens_pool *sp, sens_job *j) {
  gus *g = gus_create(&j->m, sp->window, sp->src->n_static, false, 1, &j->err);
  if (!g) {
    j->rc = j->err.rc ? j->err.rc : WI_EINVAL;
    return;
  }
  gus_set_prefetch(g, sp->prefetch);
  j->rc = gus_run_source(g, sp->src, &j->err);
  j->ticks = gus_now_ticks(g);
  gus_free(g);
}

static void *sens_worker(void *arg) {
  sens_pool *sp = arg;
  for (;;) {
    pthread_mutex_lock(&sp->mu);
    size_t i = sp->next < sp->n ? sp->next++ : SIZE_MAX;
    pthread_mutex_unlock(&sp->mu);
    if (i == SIZE_MAX) return NULL;
    run_job(sp, &sp->jobs[i]);
  }
}

wi_rc gus_sensitivity(const gus_machine *m, uint32_t window, const gus_source *src, double factor,
                      unsigned threads, gus_sens_row *rows, gus_result *base, wi_err *err) {
  if (!(factor > 0) || factor > 1e6)
    return wi_fail(err, WI_EINVAL, "gus: sensitivity factor %g must be > 0", factor);
  gus_result b;
  wi_rc rc = gus_run(m, window, src, &b, err);
  if (rc) return rc;
  int nr = gus_res_count(m);
  sens_pool sp = {.jobs = xcalloc((size_t)nr * 3, sizeof(sens_job)), .window = window, .src = src};
  for (int r = 0; r < nr; r++) {
    rows[r] = (gus_sens_row){r, 1.0, gus_res_has_latency(r) ? 1.0 : 0.0, 1.0};
    if (!b.res[r].uses) continue; /* never used: scaling it changes nothing */
    for (int kind = 0; kind < 3; kind++) {
      if (kind == 1 && !gus_res_has_latency(r)) continue;
      sens_job *j = &sp.jobs[sp.n++];
      j->m = *m;
      j->res = r;
      j->kind = kind;
      if (kind == 0) j->m.tput[r] *= 2;
      else if (kind == 1) j->m.lat[r] *= 0.5;
      else {
        j->m.tput[r] *= factor;
        if (gus_res_has_latency(r)) j->m.lat[r] /= factor;
      }
    }
  }
  if (threads < 1) threads = 1;
  if (threads > 64) threads = 64;
  sp.prefetch = threads == 1;
  pthread_mutex_init(&sp.mu, NULL);
  pthread_t tid[64];
  unsigned started = 0;
  for (unsigned t = 1; t < threads && t < sp.n; t++)
    if (pthread_create(&tid[started], NULL, sens_worker, &sp) == 0) started++;
  sens_worker(&sp);
  for (unsigned t = 0; t < started; t++) pthread_join(tid[t], NULL);
  pthread_mutex_destroy(&sp.mu);
  for (size_t i = 0; i < sp.n && rc == WI_OK; i++) {
    sens_job *j = &sp.jobs[i];
    if (j->rc) {
      rc = j->rc;
      if (err) *err = j->err;
      break;
    }
    double s = j->ticks ? (double)b.ticks / (double)j->ticks : 1.0;
    if (j->kind == 0) rows[j->res].speedup_x2 = s;
    else if (j->kind == 1) rows[j->res].speedup_half_latency = s;
    else rows[j->res].speedup_factor = s;
  }
  free(sp.jobs);
  if (base && rc == WI_OK) *base = b;
  else gus_result_free(&b);
  return rc;
}

/* ======================================================================================
 * In-memory source
 * ====================================================================================== */

typedef struct mem_cursor {
  const gus_mem_stream *s;
  size_t pos;
} mem_cursor;

static const dec_insn *mem_decoded(void *ctx, uint32_t sid) {
  const gus_mem_stream *s = ctx;
  return sid < s->n_static ? &s->dec[sid] : NULL;
}

static void *mem_open(void *ctx, wi_err *err) {
  (void)err;
  mem_cursor *c = xcalloc(1, sizeof *c);
  c->s = ctx;
  return c;
}

static wi_rc mem_next(void *cursor, trace_batch *b, wi_err *err) {
  mem_cursor *c = cursor;
  const size_t batch = 4096;
  (void)err;
  size_t k = c->s->n - c->pos < batch ? c->s->n - c->pos : batch;
  b->insns = c->s->insns + c->pos;
  b->mems = c->s->mems;
  b->n = k;
  b->first_index = c->pos;
  c->pos += k;
  return WI_OK;
}

static void mem_close(void *cursor) { free(cursor); }

void gus_source_mem(gus_source *src, const gus_mem_stream *s) {
  memset(src, 0, sizeof *src);
  src->ctx = (void *)s;
  src->n_static = s->n_static;
  src->n_insns = s->n;
  src->decoded = mem_decoded;
  src->open = mem_open;
  src->next = mem_next;
  src->close = mem_close;
}

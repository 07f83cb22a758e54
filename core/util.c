/* util.c — shared utilities: errors, allocation, arenas, hashing, files, JSON, progress. */
#include "util.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* ---- errors ---------------------------------------------------------------- */

wi_rc wi_fail(wi_err *err, wi_rc rc, const char *fmt, ...) {
  if (err) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
    err->rc = rc;
  }
  return rc;
}

void wi_err_clear(wi_err *err) {
  if (!err) return;
  err->rc = WI_OK;
  err->msg[0] = 0;
}

void wi_perror(const wi_err *err) {
  fprintf(stderr, "whatif: %s\n", err && err->msg[0] ? err->msg : "unknown error");
}

_Noreturn void wi_die(int status, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fputs("whatif: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  exit(status);
}

/* ---- allocation ------------------------------------------------------------- */

static _Noreturn void oom(size_t n) {
  fprintf(stderr, "whatif: out of memory allocating %zu bytes\n", n);
  abort();
}

void *xmalloc(size_t n) {
  void *p = malloc(n ? n : 1);
  if (!p) oom(n);
  return p;
}

void *xcalloc(size_t count, size_t size) {
  void *p = calloc(count ? count : 1, size ? size : 1);
  if (!p) oom(count * size);
  return p;
}

void *xrealloc(void *p, size_t n) {
  void *q = realloc(p, n ? n : 1);
  if (!q) oom(n);
  return q;
}

char *xstrdup(const char *s) {
  size_t n = strlen(s) + 1;
  char *d = xmalloc(n);
  memcpy(d, s, n);
  return d;
}

char *xasprintf(const char *fmt, ...) {
  va_list ap, ap2;
  va_start(ap, fmt);
  va_copy(ap2, ap);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (n < 0) n = 0;
  char *s = xmalloc((size_t)n + 1);
  vsnprintf(s, (size_t)n + 1, fmt, ap2);
  va_end(ap2);
  return s;
}

typedef struct arena_block {
  struct arena_block *next;
  size_t used, cap;
  _Alignas(16) unsigned char data[];
} arena_block;

struct wi_arena {
  arena_block *head;
  size_t block_bytes, total;
};

wi_arena *arena_new(size_t block_bytes) {
  wi_arena *a = xcalloc(1, sizeof *a);
  a->block_bytes = block_bytes ? block_bytes : 65536;
  return a;
}

void *arena_alloc(wi_arena *a, size_t n) {
  n = (n + 15) & ~(size_t)15;
  arena_block *b = a->head;
  if (!b || b->used + n > b->cap) {
    size_t cap = n > a->block_bytes ? n : a->block_bytes;
    b = xmalloc(sizeof *b + cap);
    b->used = 0;
    b->cap = cap;
    b->next = a->head;
    a->head = b;
  }
  void *p = b->data + b->used;
  b->used += n;
  a->total += n;
  memset(p, 0, n);
  return p;
}

char *arena_strdup(wi_arena *a, const char *s) {
  size_t n = strlen(s) + 1;
  char *d = arena_alloc(a, n);
  memcpy(d, s, n);
  return d;
}

size_t arena_used(const wi_arena *a) { return a->total; }

void arena_free(wi_arena *a) {
  if (!a) return;
  for (arena_block *b = a->head, *nb; b; b = nb) {
    nb = b->next;
    free(b);
  }
  free(a);
}

/* ---- hashing (xxh64) ---------------------------------------------------------- */

#define P1 0x9E3779B185EBCA87ULL
#define P2 0xC2B2AE3D27D4EB4FULL
#define P3 0x165667B19E3779F9ULL
#define P4 0x85EBCA77C2B2AE63ULL
#define P5 0x27D4EB2F165667C5ULL

static inline uint64_t rotl64(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }
static inline uint64_t rd64(const uint8_t *p) {
  uint64_t v;
  memcpy(&v, p, 8);
  return v;
}
static inline uint32_t rd32(const uint8_t *p) {
  uint32_t v;
  memcpy(&v, p, 4);
  return v;
}
static inline uint64_t xround(uint64_t acc, uint64_t in) {
  acc += in * P2;
  acc = rotl64(acc, 31);
  return acc * P1;
}
static inline uint64_t xmerge(uint64_t acc, uint64_t v) {
  acc ^= xround(0, v);
  return acc * P1 + P4;
}

void wi_hasher_init(wi_hasher *h, uint64_t seed) {
  memset(h, 0, sizeof *h);
  h->seed = seed;
  h->v[0] = seed + P1 + P2;
  h->v[1] = seed + P2;
  h->v[2] = seed;
  h->v[3] = seed - P1;
}

void wi_hasher_update(wi_hasher *h, const void *data, size_t n) {
  const uint8_t *p = data, *end = p + n;
  h->total += n;
  if (h->nbuf + n < 32) {
    memcpy(h->buf + h->nbuf, p, n);
    h->nbuf += n;
    return;
  }
  if (h->nbuf) {
    size_t fill = 32 - h->nbuf;
    memcpy(h->buf + h->nbuf, p, fill);
    p += fill;
    for (int i = 0; i < 4; i++) h->v[i] = xround(h->v[i], rd64(h->buf + 8 * i));
    h->nbuf = 0;
  }
  while (p + 32 <= end) {
    for (int i = 0; i < 4; i++) h->v[i] = xround(h->v[i], rd64(p + 8 * i));
    p += 32;
  }
  h->nbuf = (size_t)(end - p);
  memcpy(h->buf, p, h->nbuf);
}

uint64_t wi_hasher_digest(const wi_hasher *h) {
  uint64_t acc;
  if (h->total >= 32) {
    acc = rotl64(h->v[0], 1) + rotl64(h->v[1], 7) + rotl64(h->v[2], 12) + rotl64(h->v[3], 18);
    for (int i = 0; i < 4; i++) acc = xmerge(acc, h->v[i]);
  } else {
    acc = h->seed + P5;
  }
  acc += h->total;
  const uint8_t *p = h->buf, *end = p + h->nbuf;
  while (p + 8 <= end) {
    acc ^= xround(0, rd64(p));
    acc = rotl64(acc, 27) * P1 + P4;
    p += 8;
  }
  if (p + 4 <= end) {
    acc ^= (uint64_t)rd32(p) * P1;
    acc = rotl64(acc, 23) * P2 + P3;
    p += 4;
  }
  while (p < end) {
    acc ^= (*p++) * P5;
    acc = rotl64(acc, 11) * P1;
  }
  acc ^= acc >> 33;
  acc *= P2;
  acc ^= acc >> 29;
  acc *= P3;
  acc ^= acc >> 32;
  return acc;
}

uint64_t wi_hash64(const void *data, size_t n, uint64_t seed) {
  wi_hasher h;
  wi_hasher_init(&h, seed);
  wi_hasher_update(&h, data, n);
  return wi_hasher_digest(&h);
}

/* ---- map64 ----------------------------------------------------------------------- */

void map64_init(wi_map64 *m, size_t expect) {
  size_t cap = 16;
  while (cap < expect * 2) cap *= 2;
  m->keys = xcalloc(cap, sizeof *m->keys);
  m->vals = xcalloc(cap, sizeof *m->vals);
  m->cap = cap;
  m->n = 0;
}

void map64_free(wi_map64 *m) {
  free(m->keys);
  free(m->vals);
  memset(m, 0, sizeof *m);
}

static void map64_grow(wi_map64 *m) {
  wi_map64 n;
  map64_init(&n, m->cap);
  for (size_t i = 0; i < m->cap; i++)
    if (m->keys[i]) map64_put(&n, m->keys[i], m->vals[i]);
  map64_free(m);
  *m = n;
}

uint32_t *map64_put(wi_map64 *m, uint64_t key, uint32_t val) {
  if (!m->cap) map64_init(m, 16);
  if ((m->n + 1) * 4 > m->cap * 3) map64_grow(m);
  size_t mask = m->cap - 1, i = (size_t)wi_mix64(key) & mask;
  while (m->keys[i] && m->keys[i] != key) i = (i + 1) & mask;
  if (!m->keys[i]) {
    m->keys[i] = key;
    m->n++;
  }
  m->vals[i] = val;
  return &m->vals[i];
}

/* ---- rng --------------------------------------------------------------------------- */

void rng_seed(wi_rng *r, uint64_t seed) {
  for (int i = 0; i < 4; i++) {
    seed += 0x9e3779b97f4a7c15ULL;
    uint64_t z = seed;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    r->s[i] = z ^ (z >> 31);
  }
}

uint64_t rng_next(wi_rng *r) {
  uint64_t *s = r->s;
  uint64_t result = rotl64(s[1] * 5, 7) * 9, t = s[1] << 17;
  s[2] ^= s[0];
  s[3] ^= s[1];
  s[1] ^= s[2];
  s[0] ^= s[3];
  s[2] ^= t;
  s[3] = rotl64(s[3], 45);
  return result;
}

uint64_t rng_below(wi_rng *r, uint64_t n) { return n ? rng_next(r) % n : 0; }
double rng_unit(wi_rng *r) { return (double)(rng_next(r) >> 11) * 0x1.0p-53; }

/* ---- files ------------------------------------------------------------------------- */

/* Temporaries alive in this process, so that a SIGINT/SIGTERM/SIGHUP can remove them before the
 * process dies (see wi_tmp_cleanup_on_signals). Process-wide by nature, so a static table: the
 * models never touch it. A ring of copies in fixed buffers (the handler may only read memory that
 * stays valid); a slot is cleared while being rewritten. Paths already renamed or unlinked are
 * harmless to keep: unlinking them again fails with ENOENT (the name carries the pid). */
enum { TMP_SLOTS = 64, TMP_PATH_MAX = 4096 };
static struct {
  _Atomic int live;
  char path[TMP_PATH_MAX];
} g_tmp[TMP_SLOTS];
static _Atomic unsigned g_tmp_next;

void wi_tmp_track(const char *path) {
  size_t n = strlen(path);
  if (n >= TMP_PATH_MAX) return;
  unsigned i = atomic_fetch_add(&g_tmp_next, 1u) % TMP_SLOTS;
  atomic_store(&g_tmp[i].live, 0);
  memcpy(g_tmp[i].path, path, n + 1);
  atomic_store(&g_tmp[i].live, 1);
}

static void tmp_forget(const char *path) {
  for (unsigned i = 0; i < TMP_SLOTS; i++)
    if (atomic_load(&g_tmp[i].live) && !strcmp(g_tmp[i].path, path)) atomic_store(&g_tmp[i].live, 0);
}

static void tmp_on_signal(int sig) {
  for (unsigned i = 0; i < TMP_SLOTS; i++)
    if (atomic_load(&g_tmp[i].live)) unlink(g_tmp[i].path); /* async-signal-safe */
  signal(sig, SIG_DFL);
  raise(sig); /* die of the signal, as the caller expects */
}

void wi_tmp_cleanup_on_signals(void) {
  static const int sigs[] = {SIGINT, SIGTERM, SIGHUP};
  for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = tmp_on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(sigs[i], &sa, NULL);
  }
}

char *atomic_tmp_path(const char *path) {
  char *tmp = xasprintf("%s.tmp.%ld", path, (long)getpid());
  wi_tmp_track(tmp);
  return tmp;
}

wi_rc atomic_open(wi_atomic_file *af, const char *path, wi_err *err) {
  memset(af, 0, sizeof *af);
  af->path = xstrdup(path);
  af->tmp = atomic_tmp_path(path);
  af->f = fopen(af->tmp, "wb");
  if (!af->f) {
    wi_rc rc = wi_fail(err, WI_EIO, "cannot write %s: %s", path, strerror(errno));
    free(af->path);
    free(af->tmp);
    memset(af, 0, sizeof *af);
    return rc;
  }
  return WI_OK;
}

wi_rc atomic_commit(wi_atomic_file *af, wi_err *err) {
  wi_rc rc = WI_OK;
  if (fflush(af->f) != 0 || ferror(af->f)) rc = wi_fail(err, WI_EIO, "cannot write %s: %s", af->path, strerror(errno));
  if (fclose(af->f) != 0 && rc == WI_OK) rc = wi_fail(err, WI_EIO, "cannot write %s: %s", af->path, strerror(errno));
  af->f = NULL;
  if (rc == WI_OK && rename(af->tmp, af->path) != 0)
    rc = wi_fail(err, WI_EIO, "cannot rename to %s: %s", af->path, strerror(errno));
  if (rc != WI_OK) unlink(af->tmp);
  tmp_forget(af->tmp);
  free(af->path);
  free(af->tmp);
  af->path = af->tmp = NULL;
  return rc;
}

void atomic_abort(wi_atomic_file *af) {
  if (af->f) fclose(af->f);
  if (af->tmp) {
    unlink(af->tmp);
    tmp_forget(af->tmp);
  }
  free(af->path);
  free(af->tmp);
  memset(af, 0, sizeof *af);
}

wi_rc read_file(const char *path, char **out, size_t *n, wi_err *err) {
  FILE *f = fopen(path, "rb");
  if (!f) return wi_fail(err, WI_EIO, "cannot open %s: %s", path, strerror(errno));
  size_t cap = 4096, len = 0;
  char *buf = xmalloc(cap);
  for (;;) {
    if (len + 4096 > cap) buf = xrealloc(buf, cap *= 2);
    size_t r = fread(buf + len, 1, cap - len - 1, f);
    len += r;
    if (r == 0) break;
  }
  bool bad = ferror(f);
  fclose(f);
  if (bad) {
    free(buf);
    return wi_fail(err, WI_EIO, "cannot read %s", path);
  }
  buf[len] = 0;
  *out = buf;
  if (n) *n = len;
  return WI_OK;
}

double wi_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ---- JSON ----------------------------------------------------------------------------- */

void json_escape(FILE *f, const char *s) {
  fputc('"', f);
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    switch (*p) {
    case '"': fputs("\\\"", f); break;
    case '\\': fputs("\\\\", f); break;
    case '\n': fputs("\\n", f); break;
    case '\r': fputs("\\r", f); break;
    case '\t': fputs("\\t", f); break;
    default:
      if (*p < 0x20) fprintf(f, "\\u%04x", *p);
      else fputc(*p, f);
    }
  }
  fputc('"', f);
}

void jw_init(jw *w, FILE *f, bool pretty) {
  memset(w, 0, sizeof *w);
  w->f = f;
  w->pretty = pretty;
  w->first[0] = true;
}

static void jw_indent(jw *w) {
  if (!w->pretty) return;
  fputc('\n', w->f);
  for (int i = 0; i < w->depth; i++) fputs("  ", w->f);
}

static void jw_pre(jw *w) {
  if (w->after_key) {
    w->after_key = false;
    return;
  }
  if (!w->first[w->depth]) fputc(',', w->f);
  w->first[w->depth] = false;
  if (w->depth > 0) jw_indent(w);
}

static void jw_open(jw *w, char c) {
  jw_pre(w);
  fputc(c, w->f);
  if (w->depth < 63) w->depth++;
  w->first[w->depth] = true;
}

static void jw_close(jw *w, char c) {
  bool empty = w->first[w->depth];
  if (w->depth > 0) w->depth--;
  if (!empty) jw_indent(w);
  fputc(c, w->f);
}

void jw_obj_begin(jw *w) { jw_open(w, '{'); }
void jw_obj_end(jw *w) { jw_close(w, '}'); }
void jw_arr_begin(jw *w) { jw_open(w, '['); }
void jw_arr_end(jw *w) { jw_close(w, ']'); }

void jw_key(jw *w, const char *k) {
  jw_pre(w);
  json_escape(w->f, k);
  fputs(w->pretty ? ": " : ":", w->f);
  w->after_key = true;
}

void jw_str(jw *w, const char *s) {
  jw_pre(w);
  if (s) json_escape(w->f, s);
  else fputs("null", w->f);
}
void jw_int(jw *w, int64_t v) {
  jw_pre(w);
  fprintf(w->f, "%lld", (long long)v);
}
void jw_uint(jw *w, uint64_t v) {
  jw_pre(w);
  fprintf(w->f, "%llu", (unsigned long long)v);
}
void jw_num(jw *w, double v) {
  jw_pre(w);
  if (!isfinite(v)) fputs("null", w->f);
  else if (v == (double)(long long)v && fabs(v) < 1e15) fprintf(w->f, "%lld", (long long)v);
  else fprintf(w->f, "%.10g", v);
}
void jw_bool(jw *w, bool v) {
  jw_pre(w);
  fputs(v ? "true" : "false", w->f);
}
void jw_null(jw *w) {
  jw_pre(w);
  fputs("null", w->f);
}
void jw_kstr(jw *w, const char *k, const char *s) { jw_key(w, k); jw_str(w, s); }
void jw_kint(jw *w, const char *k, int64_t v) { jw_key(w, k); jw_int(w, v); }
void jw_kuint(jw *w, const char *k, uint64_t v) { jw_key(w, k); jw_uint(w, v); }
void jw_knum(jw *w, const char *k, double v) { jw_key(w, k); jw_num(w, v); }
void jw_kbool(jw *w, const char *k, bool v) { jw_key(w, k); jw_bool(w, v); }
void jw_end(jw *w) { fputc('\n', w->f); }

/* ---- progress ---------------------------------------------------------------------------- */

void progress_begin(wi_progress *p, const char *what, uint64_t total) {
  memset(p, 0, sizeof *p);
  p->what = what;
  p->total = total;
  p->tty = isatty(2);
  p->start = p->last = wi_now();
}

void progress_update(wi_progress *p, uint64_t done) {
  p->done = done;
  if (!p->tty) return;
  double t = wi_now();
  if (t - p->last < 0.1) return;
  p->last = t;
  if (p->total)
    fprintf(stderr, "\r%s: %llu/%llu (%.0f%%) %.1fs ", p->what, (unsigned long long)done,
            (unsigned long long)p->total, 100.0 * (double)done / (double)p->total, t - p->start);
  else
    fprintf(stderr, "\r%s: %llu %.1fs ", p->what, (unsigned long long)done, t - p->start);
}

void progress_end(wi_progress *p) {
  if (p->tty) fprintf(stderr, "\r\033[K");
}

/* ---- small helpers -------------------------------------------------------------------------- */

bool parse_u64(const char *s, uint64_t *out) {
  if (!s || !*s) return false;
  char *end;
  errno = 0;
  unsigned long long v = strtoull(s, &end, 0);
  if (errno || end == s) return false;
  uint64_t mul = 1;
  if (*end == 'K' || *end == 'k') mul = 1000, end++;
  else if (*end == 'M' || *end == 'm') mul = 1000000, end++;
  else if (*end == 'G' || *end == 'g') mul = 1000000000, end++;
  if (*end) return false;
  if (s[0] == '-') return false;
  *out = (uint64_t)v * mul;
  return true;
}

const char *fmt_si(char *buf, size_t n, double v) {
  const char *suf[] = {"", " K", " M", " G", " T"};
  int i = 0;
  while (fabs(v) >= 1000 && i < 4) v /= 1000, i++;
  snprintf(buf, n, i ? "%.3g%s" : "%.4g%s", v, suf[i]);
  return buf;
}

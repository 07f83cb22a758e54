/* util.h — shared utilities: errors, allocation, arenas, vectors, hashing, varints, JSON, progress. */
#ifndef WHATIF_UTIL_H
#define WHATIF_UTIL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* ---- errors ------------------------------------------------------------ */

/* Error codes shared by every module. WI_OK is zero; everything else is a failure. */
typedef enum wi_rc {
  WI_OK = 0,
  WI_EINVAL,   /* bad argument, bad configuration key, bad intervention */
  WI_EIO,      /* file could not be opened, read or written */
  WI_ECORRUPT, /* a file is corrupt or truncated (message names section and offset) */
  WI_EVERSION, /* a file is from an unsupported (newer) format version */
  WI_ENOMEM,   /* a size limit was exceeded (never returned for malloc failure: that aborts) */
  WI_ECHILD,   /* a child process (qemu) failed */
  WI_ESTATE,   /* an API was used in the wrong order */
} wi_rc;

/* An error: a code plus a one-line message. Embed one in each context object or pass one
 * down by pointer; functions that fail fill it and return the code. */
typedef struct wi_err {
  wi_rc rc;
  char msg[512];
} wi_err;

/* Set err (which may be NULL) to rc with a printf-style message; returns rc. */
wi_rc wi_fail(wi_err *err, wi_rc rc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Clear err to WI_OK. */
void wi_err_clear(wi_err *err);
/* Print "whatif: <msg>" to stderr. */
void wi_perror(const wi_err *err);
/* Print "whatif: <fmt...>" to stderr and exit(status). */
_Noreturn void wi_die(int status, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ---- allocation --------------------------------------------------------- */

/* malloc/calloc/realloc/strdup that abort with a message on failure; never return NULL. */
void *xmalloc(size_t n);
void *xcalloc(size_t count, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
/* asprintf into a freshly allocated string (free with free()). */
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* A bump allocator for long-lived objects of one owner; freed all at once. */
typedef struct wi_arena wi_arena;
wi_arena *arena_new(size_t block_bytes);
/* Allocate n zeroed bytes aligned to 16; valid until arena_free. */
void *arena_alloc(wi_arena *a, size_t n);
char *arena_strdup(wi_arena *a, const char *s);
/* Total bytes handed out so far. */
size_t arena_used(const wi_arena *a);
void arena_free(wi_arena *a); /* accepts NULL */

/* Growable array: declare `VEC(T) v = {0};`, push with VEC_PUSH, free with VEC_FREE. */
#define VEC(T) struct { T *a; size_t n, cap; }
#define VEC_RESERVE(v, want)                                                   \
  do {                                                                         \
    if ((want) > (v).cap) {                                                    \
      size_t nc_ = (v).cap ? (v).cap * 2 : 16;                                 \
      while (nc_ < (want)) nc_ *= 2;                                           \
      (v).a = xrealloc((v).a, nc_ * sizeof(*(v).a));                           \
      (v).cap = nc_;                                                           \
    }                                                                          \
  } while (0)
#define VEC_PUSH(v, x)                                                         \
  do {                                                                         \
    VEC_RESERVE(v, (v).n + 1);                                                 \
    (v).a[(v).n++] = (x);                                                      \
  } while (0)
#define VEC_FREE(v)                                                            \
  do {                                                                         \
    free((v).a);                                                               \
    (v).a = NULL;                                                              \
    (v).n = (v).cap = 0;                                                       \
  } while (0)

/* ---- hashing ------------------------------------------------------------ */

/* 64-bit non-cryptographic hash of a buffer (xxh64 algorithm), seeded. */
uint64_t wi_hash64(const void *data, size_t n, uint64_t seed);
/* Streaming form of wi_hash64: init, update any number of times, digest. */
typedef struct wi_hasher {
  uint64_t v[4], total;
  uint8_t buf[32];
  size_t nbuf;
  uint64_t seed;
} wi_hasher;
void wi_hasher_init(wi_hasher *h, uint64_t seed);
void wi_hasher_update(wi_hasher *h, const void *data, size_t n);
uint64_t wi_hasher_digest(const wi_hasher *h);
/* Mix a 64-bit integer into a well-distributed 64-bit value (for hash tables). */
static inline uint64_t wi_mix64(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ULL;
  x ^= x >> 33;
  return x;
}

/* Open-addressing map from a non-zero 64-bit key to a 32-bit value. */
typedef struct wi_map64 {
  uint64_t *keys; /* 0 = empty */
  uint32_t *vals;
  size_t cap, n;  /* cap is a power of two */
} wi_map64;
void map64_init(wi_map64 *m, size_t expect);
void map64_free(wi_map64 *m);
/* Return a pointer to the value for key, or NULL. key must be non-zero. */
static inline uint32_t *map64_get(const wi_map64 *m, uint64_t key) {
  if (!m->cap || key == 0) return NULL; /* 0 marks empty slots: never a key */
  size_t mask = m->cap - 1, i = (size_t)wi_mix64(key) & mask;
  for (;;) {
    uint64_t k = m->keys[i];
    if (k == key) return &m->vals[i];
    if (k == 0) return NULL;
    i = (i + 1) & mask;
  }
}
/* Insert or overwrite; returns a pointer to the stored value. key must be non-zero. */
uint32_t *map64_put(wi_map64 *m, uint64_t key, uint32_t val);

/* Deterministic PRNG (splitmix64 seeding a xoshiro256**). */
typedef struct wi_rng { uint64_t s[4]; } wi_rng;
void rng_seed(wi_rng *r, uint64_t seed);
uint64_t rng_next(wi_rng *r);
/* Uniform in [0, n). */
uint64_t rng_below(wi_rng *r, uint64_t n);
double rng_unit(wi_rng *r); /* uniform in [0, 1) */

/* ---- varints ------------------------------------------------------------ */

static inline uint64_t zigzag_enc(int64_t v) { return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63); }
static inline int64_t zigzag_dec(uint64_t v) { return (int64_t)(v >> 1) ^ -(int64_t)(v & 1); }
/* Append an unsigned LEB128 varint at p (room for 10 bytes); returns the new end. */
static inline uint8_t *varint_put(uint8_t *p, uint64_t v) {
  while (v >= 0x80) {
    *p++ = (uint8_t)(v | 0x80);
    v >>= 7;
  }
  *p++ = (uint8_t)v;
  return p;
}
/* Read a varint from [*pp, end); returns false if truncated or overlong. */
static inline bool varint_get(const uint8_t **pp, const uint8_t *end, uint64_t *out) {
  const uint8_t *p = *pp;
  uint64_t v = 0;
  for (unsigned shift = 0; shift < 64; shift += 7) {
    if (p >= end) return false;
    uint8_t b = *p++;
    v |= (uint64_t)(b & 0x7f) << shift;
    if (!(b & 0x80)) {
      *pp = p;
      *out = v;
      return true;
    }
  }
  return false;
}

/* ---- files ---------------------------------------------------------------- */

/* Write-to-temporary-then-rename. atomic_open creates "<path>.tmp.<pid>" (beside path, so
 * rename is atomic); atomic_commit flushes, closes and renames it over path; atomic_abort
 * closes and unlinks it. */
typedef struct wi_atomic_file {
  FILE *f;
  char *path, *tmp;
} wi_atomic_file;
wi_rc atomic_open(wi_atomic_file *af, const char *path, wi_err *err);
wi_rc atomic_commit(wi_atomic_file *af, wi_err *err);
void atomic_abort(wi_atomic_file *af);
/* A temporary path next to path for tools that write files themselves (caller frees). Every
 * temporary made here is remembered for wi_tmp_cleanup_on_signals. */
char *atomic_tmp_path(const char *path);
/* Install SIGINT/SIGTERM/SIGHUP handlers that unlink this process's temporaries (those of
 * atomic_tmp_path/atomic_open not yet committed) and then die of the signal: a killed whatif
 * leaves no half-written file behind. Called once by the command-line front end. */
void wi_tmp_cleanup_on_signals(void);
/* Remember another temporary (named by the caller) for wi_tmp_cleanup_on_signals. */
void wi_tmp_track(const char *path);

/* Read a whole file into a malloc'd buffer (NUL-terminated; *n excludes the NUL). */
wi_rc read_file(const char *path, char **out, size_t *n, wi_err *err);

/* Monotonic wall time in seconds. */
double wi_now(void);

/* ---- JSON writer ---------------------------------------------------------- */

/* A small streaming JSON writer with automatic commas. Keys are given with jw_key or
 * combined with values by the jw_k* helpers. Output is deterministic. */
typedef struct jw {
  FILE *f;
  int depth;
  bool first[64];
  bool after_key;
  bool pretty;
} jw;
void jw_init(jw *w, FILE *f, bool pretty);
void jw_obj_begin(jw *w);
void jw_obj_end(jw *w);
void jw_arr_begin(jw *w);
void jw_arr_end(jw *w);
void jw_key(jw *w, const char *k);
void jw_str(jw *w, const char *s); /* NULL writes null */
void jw_int(jw *w, int64_t v);
void jw_uint(jw *w, uint64_t v);
void jw_num(jw *w, double v); /* non-finite writes null */
void jw_bool(jw *w, bool v);
void jw_null(jw *w);
void jw_kstr(jw *w, const char *k, const char *s);
void jw_kint(jw *w, const char *k, int64_t v);
void jw_kuint(jw *w, const char *k, uint64_t v);
void jw_knum(jw *w, const char *k, double v);
void jw_kbool(jw *w, const char *k, bool v);
void jw_end(jw *w); /* writes the final newline */
/* Write s as a JSON string literal (quoted, escaped) to f. */
void json_escape(FILE *f, const char *s);

/* ---- progress ------------------------------------------------------------- */

/* Progress on stderr, only when stderr is a terminal; at most ~10 updates/s. */
typedef struct wi_progress {
  const char *what;
  uint64_t total, done;
  double last, start;
  bool tty;
} wi_progress;
void progress_begin(wi_progress *p, const char *what, uint64_t total);
void progress_update(wi_progress *p, uint64_t done);
void progress_end(wi_progress *p);

/* ---- small helpers --------------------------------------------------------- */

#define WI_MIN(a, b) ((a) < (b) ? (a) : (b))
#define WI_MAX(a, b) ((a) > (b) ? (a) : (b))
#define WI_ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))
/* Parse an unsigned integer with optional 0x prefix and K/M/G suffix (powers of 1000). */
bool parse_u64(const char *s, uint64_t *out);
/* Format n with a metric suffix (e.g. "12.3 M") into buf. */
const char *fmt_si(char *buf, size_t n, double v);

#endif

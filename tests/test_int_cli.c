/* test_int_cli.c — bad input never crashes: every command against missing, empty, truncated,
 * corrupt and foreign inputs, bad options and numbers, broken configurations, scripts and
 * interventions, and unwritable outputs. Each case must exit 2 (1 for a script error) with
 * exactly one stderr line that starts with "whatif" and names the problem, and must leave no
 * output file (nor a temporary) behind and foreign databases unchanged. */
#include <dirent.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <zstd.h>

#include "testutil.h"

#include "util.h"

typedef struct cli_case {
  const char *args;      /* shell words; @T good trace, @D fixture dir, @O output dir (must stay empty) */
  int status;            /* expected exit status */
  const char *err_sub;   /* substring the stderr line must contain */
  const char *unchanged; /* a fixture (relative to @D) that must be byte-identical afterwards, or NULL */
} cli_case;

/* The fixtures (created once by setup) and where the binary is. */
typedef struct fixture {
  const char *bin;
  char *trace; /* a good recorded trace */
  char *dir;   /* fixture dir */
  char *out;   /* output dir: every failing case must leave it empty */
} fixture;

static fixture g_fx;

/* ---- helpers ---------------------------------------------------------------------------- */

static void write_bytes(const char *path, const void *p, size_t n) {
  FILE *f = fopen(path, "wb");
  assert_non_null(f);
  if (n) assert_int_equal(fwrite(p, 1, n, f), n);
  assert_int_equal(fclose(f), 0);
}

static void write_text(const char *dir, const char *name, const char *text) {
  char *p = xasprintf("%s/%s", dir, name);
  write_bytes(p, text, strlen(text));
  free(p);
}

static char *slurp(const char *path, size_t *n) {
  char *buf = NULL;
  wi_err err = {0};
  if (read_file(path, &buf, n, &err)) {
    *n = 0;
    return NULL;
  }
  return buf;
}

/* wi_hash64 of a file's bytes (0 when unreadable). */
static uint64_t file_hash(const char *path) {
  size_t n = 0;
  char *b = slurp(path, &n);
  uint64_t h = b ? wi_hash64(b, n, 0) : 0;
  free(b);
  return h;
}

static uint64_t le64(const uint8_t *p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; i--) v = v << 8 | p[i];
  return v;
}

static void put_le64(uint8_t *p, uint64_t v) {
  for (int i = 0; i < 8; i++, v >>= 8) p[i] = (uint8_t)v;
}

/* Corrupt bytes inside one section of a .wtr image (kind: directory kind, 0 = any; rnd: state
 * of an xorshift generator) and recompute the section, directory, content and header hashes,
 * so the damage gets past every checksum and reaches the section parsers. Layout: core/trace.c. */
static uint64_t xorshift(uint64_t *s) {
  *s ^= *s << 13;
  *s ^= *s >> 7;
  *s ^= *s << 17;
  return *s;
}

static uint64_t leb(const uint8_t **p) {
  uint64_t v = 0;
  for (int sh = 0; sh < 64; sh += 7) {
    uint8_t c = *(*p)++;
    v |= (uint64_t)(c & 0x7f) << sh;
    if (!(c & 0x80)) break;
  }
  return v;
}

/* Recompute the hash of directory entry d and those of the directory, content and header. */
static void rehash(uint8_t *b, size_t n, uint8_t *d) {
  uint64_t doff = le64(b + 16), dsz = le64(b + 24);
  put_le64(d + 24, wi_hash64(b + le64(d + 8), (size_t)le64(d + 16), 0));
  put_le64(b + 32, wi_hash64(b + doff, (size_t)dsz, 0));
  put_le64(b + 40, wi_hash64(b + 64, n - 64, 0));
  put_le64(b + 56, wi_hash64(b, 56, 0));
}

/* One deterministic, certainly invalid damage behind valid hashes (layout: core/trace.c):
 * kind 2 the first static instruction's length becomes 0; kind 4 the first code region's zstd
 * frame loses its magic; kind 7 the first chunk's offset points past the file. */
static void damage_section(uint8_t *b, size_t n, uint32_t kind) {
  uint64_t doff = le64(b + 16), dsz = le64(b + 24);
  uint8_t *d = NULL;
  for (size_t e = 0; e < dsz / 32; e++)
    if ((uint32_t)le64(b + doff + e * 32) == kind) d = b + doff + e * 32;
  assert_non_null(d);
  uint8_t *sec = b + le64(d + 8);
  const uint8_t *p = sec;
  if (kind == 2) {
    leb(&p);  /* n */
    p += 8;   /* pc */
    leb(&p);  /* count */
    sec[p - sec] = 0;
  } else if (kind == 4) {
    leb(&p);                /* n */
    p += 16;                /* base, size */
    p += leb(&p);           /* name */
    leb(&p);                /* clen */
    sec[p - sec] ^= 0xff;   /* zstd magic */
  } else {
    put_le64(sec + 32, (uint64_t)n * 4);
  }
  rehash(b, n, d);
}

static void corrupt_section(uint8_t *b, size_t n, uint32_t kind, uint64_t *rnd) {
#define XS() xorshift(rnd)
  uint64_t doff = le64(b + 16), dsz = le64(b + 24);
  assert_true(doff + dsz <= n && dsz >= 32);
  size_t ne = (size_t)(dsz / 32), e = (size_t)(XS() % ne);
  for (size_t k = 0; k < ne && kind; k++, e = (e + 1) % ne)
    if ((uint32_t)le64(b + doff + e * 32) == kind) break;
  uint8_t *d = b + doff + e * 32;
  uint64_t off = le64(d + 8), sz = le64(d + 16);
  assert_true(off + sz <= n && sz > 0);
  int nflip = 1 + (int)(XS() % 3);
  for (int k = 0; k < nflip; k++) {
    /* half the flips in the first 64 bytes, where the counts and lengths are */
    uint64_t span = XS() % 2 && sz > 64 ? 64 : sz;
    uint64_t at = off + XS() % span;
    switch (XS() % 3) {
    case 0: b[at] ^= (uint8_t)(1u << (XS() % 8)); break;
    case 1: b[at] = 0xff; break;
    default: b[at] = (uint8_t)XS(); break;
    }
  }
  rehash(b, n, d);
#undef XS
}

/* Damage the decompressed payload of one chunk and recompress it: the frame changes size, so
 * the image is laid out again (chunk index offsets, directory offsets, file size) and every
 * hash recomputed; the stream decoder then meets the damage. Returns the new image (malloc'd)
 * and its size in *nn, or NULL when the chunk does not decompress. */
static uint8_t *corrupt_chunk(const uint8_t *b, size_t n, uint64_t *rnd, size_t *nn) {
  uint64_t doff = le64(b + 16), dsz = le64(b + 24);
  size_t ne = (size_t)(dsz / 32), cie = ne;
  for (size_t e = 0; e < ne; e++)
    if ((uint32_t)le64(b + doff + e * 32) == 7) cie = e;
  if (cie == ne) return NULL;
  const uint8_t *ci = b + le64(b + doff + cie * 32 + 8);
  uint64_t nch = le64(ci + 24);
  if (!nch) return NULL;
  size_t k = (size_t)(xorshift(rnd) % nch);
  const uint8_t *ent = ci + 32 + k * 64;
  uint64_t coff = le64(ent), cby = le64(ent + 8), pby = le64(ent + 40);
  uint8_t *pl = xmalloc(pby ? pby : 1);
  size_t r = ZSTD_decompress(pl, pby, b + coff, cby);
  if (ZSTD_isError(r) || r != pby || !pby) {
    free(pl);
    return NULL;
  }
  int nflip = 1 + (int)(xorshift(rnd) % 4);
  for (int i = 0; i < nflip; i++) {
    /* half the flips in the first 48 bytes: the counts and stream lengths */
    uint64_t span = xorshift(rnd) % 2 && pby > 48 ? 48 : pby;
    uint64_t at = xorshift(rnd) % span;
    switch (xorshift(rnd) % 3) {
    case 0: pl[at] ^= (uint8_t)(1u << (xorshift(rnd) % 8)); break;
    case 1: pl[at] = 0xff; break;
    default: pl[at] = (uint8_t)xorshift(rnd); break;
    }
  }
  size_t cap = ZSTD_compressBound(pby);
  uint8_t *z = xmalloc(cap);
  ZSTD_CCtx *cc = ZSTD_createCCtx();
  ZSTD_CCtx_setParameter(cc, ZSTD_c_checksumFlag, 1);
  ZSTD_CCtx_setParameter(cc, ZSTD_c_contentSizeFlag, 1);
  size_t zn = ZSTD_compress2(cc, z, cap, pl, pby);
  ZSTD_freeCCtx(cc);
  free(pl);
  assert_false(ZSTD_isError(zn));
  *nn = n - cby + zn;
  uint8_t *o = xmalloc(*nn);
  memcpy(o, b, coff);
  memcpy(o + coff, z, zn);
  memcpy(o + coff + zn, b + coff + cby, n - coff - cby);
  uint64_t shift = (uint64_t)zn - cby; /* mod 2^64: adding it moves offsets either way */
  uint64_t ndoff = doff + shift;
  uint8_t *dir = o + ndoff;
  for (size_t e = 0; e < ne; e++) {
    uint64_t of = le64(dir + e * 32 + 8);
    if (of > coff) put_le64(dir + e * 32 + 8, of + shift);
  }
  uint8_t *nci = o + le64(dir + cie * 32 + 8);
  for (uint64_t j = 0; j < nch; j++) {
    uint64_t of = le64(nci + 32 + j * 64);
    if (of > coff) put_le64(nci + 32 + j * 64, of + shift);
  }
  put_le64(nci + 32 + k * 64 + 8, zn);
  put_le64(nci + 32 + k * 64 + 48, wi_hash64(z, zn, 0));
  free(z);
  for (size_t e = 0; e < ne; e++)
    put_le64(dir + e * 32 + 24, wi_hash64(o + le64(dir + e * 32 + 8), (size_t)le64(dir + e * 32 + 16), 0));
  put_le64(o + 16, ndoff);
  put_le64(o + 32, wi_hash64(dir, (size_t)dsz, 0));
  put_le64(o + 48, *nn);
  put_le64(o + 40, wi_hash64(o + 64, *nn - 64, 0));
  put_le64(o + 56, wi_hash64(o, 56, 0));
  return o;
}

static void sql(const char *path, const char *stmts) {
  sqlite3 *db = NULL;
  assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
  assert_int_equal(sqlite3_exec(db, stmts, NULL, NULL, NULL), SQLITE_OK);
  sqlite3_close(db);
}

/* Replace @T, @D and @O in args. */
static char *expand(const char *args) {
  size_t cap = strlen(args) * 2 + 4096, n = 0;
  char *s = xmalloc(cap);
  for (const char *p = args; *p; p++) {
    const char *rep = NULL;
    if (p[0] == '@' && p[1] == 'T') rep = g_fx.trace;
    else if (p[0] == '@' && p[1] == 'D') rep = g_fx.dir;
    else if (p[0] == '@' && p[1] == 'O') rep = g_fx.out;
    if (rep) {
      size_t l = strlen(rep);
      if (n + l + 2 > cap) s = xrealloc(s, cap = (n + l) * 2 + 64);
      memcpy(s + n, rep, l);
      n += l;
      p++;
    } else {
      if (n + 2 > cap) s = xrealloc(s, cap *= 2);
      s[n++] = *p;
    }
  }
  s[n] = 0;
  return s;
}

/* Names left in the output dir (space-separated; "" when empty); also empties it. */
static char *drain_out(void) {
  char *left = xstrdup("");
  DIR *d = opendir(g_fx.out);
  assert_non_null(d);
  struct dirent *e;
  while ((e = readdir(d))) {
    if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
    char *l2 = xasprintf("%s%s ", left, e->d_name);
    free(left);
    left = l2;
  }
  closedir(d);
  if (left[0]) {
    char *rm = xasprintf("rm -rf '%s'/* '%s'/.[!.]*", g_fx.out, g_fx.out);
    int rs = system(rm);
    (void)rs;
    free(rm);
  }
  return left;
}

/* Run one case; returns a malloc'd description of what went wrong, or NULL. */
static char *run_case(const cli_case *c) {
  char *args = expand(c->args);
  char *err_log = xasprintf("%s/stderr.log", g_fx.dir);
  uint64_t before = 0;
  char *keep = c->unchanged ? xasprintf("%s/%s", g_fx.dir, c->unchanged) : NULL;
  if (keep) before = file_hash(keep);
  /* timeout: a hang is a failure (status 124), not a stuck test run */
  char *cmd = xasprintf("cd '%s' && timeout 120 '%s' %s </dev/null >/dev/null 2>'%s'", g_fx.dir, g_fx.bin, args,
                        err_log);
  int st = -1;
  free(tu_run(cmd, &st));
  size_t n = 0;
  char *e = slurp(err_log, &n);
  if (!e) e = xstrdup("");
  char *why = NULL;
  size_t lines = 0;
  for (size_t i = 0; i < n; i++) lines += e[i] == '\n';
  char *left = drain_out();
  if (st != c->status) why = xasprintf("exit status %d, want %d", st, c->status);
  else if (strstr(e, "Sanitizer") || strstr(e, "runtime error:")) why = xasprintf("sanitizer report");
  else if (lines != 1 || n == 0 || e[n - 1] != '\n') why = xasprintf("%zu stderr lines, want exactly 1", lines);
  else if (strncmp(e, "whatif", 6)) why = xasprintf("stderr does not start with 'whatif'");
  else if (c->err_sub && !strstr(e, c->err_sub)) why = xasprintf("stderr lacks '%s'", c->err_sub);
  else if (left[0]) why = xasprintf("left behind in the output dir: %s", left);
  else if (keep && file_hash(keep) != before) why = xasprintf("%s was modified", c->unchanged);
  char *msg = why ? xasprintf("whatif %s\n    %s\n    stderr: %s", args, why, e) : NULL;
  free(why);
  free(left);
  free(e);
  free(cmd);
  free(keep);
  free(err_log);
  free(args);
  return msg;
}

static void run_table(const cli_case *cases, size_t n) {
  size_t bad = 0;
  for (size_t i = 0; i < n; i++) {
    char *msg = run_case(&cases[i]);
    if (msg) {
      fprintf(stderr, "case %zu: %s\n", i, msg);
      bad++;
    }
    free(msg);
  }
  if (bad) fail_msg("%zu of %zu bad-input cases misbehaved (listed above)", bad, n);
}

/* ---- fixtures --------------------------------------------------------------------------- */

static int setup(void **state) {
  (void)state;
  memset(&g_fx, 0, sizeof g_fx);
  g_fx.bin = getenv("WHATIF_BIN");
  const char *traces = getenv("WHATIF_TRACES");
  if (!g_fx.bin || !traces) return 0; /* the tests skip */
  g_fx.trace = xasprintf("%s/fma_chain.wtr", traces);
  if (access(g_fx.trace, R_OK)) {
    free(g_fx.trace);
    g_fx.trace = NULL;
    return 0;
  }
  g_fx.dir = tu_tmp_path("-cli");
  g_fx.out = xasprintf("%s/out", g_fx.dir);
  if (mkdir(g_fx.dir, 0755) || mkdir(g_fx.out, 0755)) return -1;
  const char *d = g_fx.dir;
  char *p;
#define FX(name) (free(p), p = xasprintf("%s/%s", d, name))
  p = NULL;
  /* traces: empty, a directory, header only, truncated, bit flips in header/chunk/directory */
  size_t n = 0;
  uint8_t *t = (uint8_t *)slurp(g_fx.trace, &n);
  if (!t || n < 4096) return -1;
  write_bytes(FX("empty.wtr"), "", 0);
  if (mkdir(FX("adir.wtr"), 0755)) return -1;
  write_bytes(FX("hdr.wtr"), t, 100);
  write_bytes(FX("trunc.wtr"), t, n / 2);
  static const struct {
    const char *name;
    size_t off; /* 0: the last directory bytes */
  } flips[] = {{"flip_hdr.wtr", 20}, {"flip_chunk.wtr", 64 + 200}, {"flip_dir.wtr", 0}};
  for (size_t i = 0; i < 3; i++) {
    size_t off = flips[i].off ? flips[i].off : n - 40;
    t[off] ^= 0x10;
    write_bytes(FX(flips[i].name), t, n);
    t[off] ^= 0x10;
  }
  /* a format version from the future (header hash fixed) */
  uint8_t hdr[64];
  memcpy(hdr, t, 64);
  t[8] = 99;
  put_le64(t + 56, wi_hash64(t, 56, 0));
  write_bytes(FX("future.wtr"), t, n);
  memcpy(t, hdr, 64);
  /* sections damaged behind valid hashes (kinds: 2 static table, 4 code regions, 7 chunk index) */
  static const uint32_t kinds[] = {2, 4, 7};
  for (size_t i = 0; i < 3; i++) {
    uint8_t *c = xmalloc(n);
    memcpy(c, t, n);
    damage_section(c, n, kinds[i]);
    char name[32];
    snprintf(name, sizeof name, "sect%u.wtr", kinds[i]);
    write_bytes(FX(name), c, n);
    free(c);
  }
  free(t);
  /* databases: empty, not SQLite, a foreign schema, an MFIR database, a sweep database */
  write_bytes(FX("empty.db"), "", 0);
  write_text(d, "notsql.db", "this is not an SQLite database\n");
  if (mkdir(FX("adir.db"), 0755)) return -1;
  sql(FX("foreign.db"), "CREATE TABLE foo(x); INSERT INTO foo VALUES(1);");
  write_text(d, "one.list", "remove{index={0, 1}}\n");
  write_text(d, "bad.list", "# comment\nremove{index={0, 1}}\nbogus{x=1}\n");
  int st;
  char *cmd = xasprintf("cd '%s' && '%s' mfir '%s' -o mfir.db --window 0:1000 >/dev/null 2>&1 && "
                        "'%s' sweep '%s' --list one.list -o sweep.db --quiet >/dev/null 2>&1",
                        d, g_fx.bin, g_fx.trace, g_fx.bin, g_fx.trace);
  free(tu_run(cmd, &st));
  free(cmd);
  if (st) {
    fprintf(stderr, "setup: building the MFIR and sweep databases failed (%d)\n", st);
    return -1;
  }
  /* MFIR databases with a damaged meta table: a window beyond the stored flows (the walks once
   * tried to allocate 128 TB for it), a zero rename width, no flow table at all */
  {
    size_t mn = 0;
    char *m = slurp(FX("mfir.db"), &mn);
    if (!m) return -1;
    write_bytes(FX("badwin.db"), m, mn);
    sql(p, "UPDATE meta SET value = '999999999999' WHERE key = 'last_fid'");
    write_bytes(FX("badwidth.db"), m, mn);
    sql(p, "UPDATE meta SET value = '0' WHERE key = 'rename_width'");
    free(m);
    sql(FX("metaonly.db"), "CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT); INSERT INTO meta VALUES"
                           "('format', '1'), ('first_fid', '0'), ('last_fid', '100'), ('start_cycle', '0'),"
                           "('end_cycle', '10'), ('rename_width', '6');");
  }
  /* machine configurations and scripts with errors */
  write_text(d, "cfg_unknown.lua", "return { base = \"golden_cove\", core = { robb = 256 } }\n");
  write_text(d, "cfg_type.lua", "return { base = \"golden_cove\", core = { rob = \"big\" } }\n");
  write_text(d, "cfg_range.lua", "return { base = \"golden_cove\", core = { rob = -5 } }\n");
  write_text(d, "cfg_syntax.lua", "return { base = \"golden_cove\",\n  core = { rob = 256\n");
  write_text(d, "cfg_runtime.lua", "local x = nil\nreturn { core = { rob = x.y } }\n");
  write_text(d, "cfg_number.lua", "return 42\n");
  write_text(d, "cfg_cycle.lua", "local x = {}\nx.core = x\nreturn x\n");
  write_text(d, "cfg_loop.lua", "local n = 0\nwhile true do n = n + 1 end\n");
  write_text(d, "s_syntax.lua", "local w = require \"whatif\"\nprint(\"hi\"\n");
  write_text(d, "s_runtime.lua", "local w = require \"whatif\"\nlocal t = nil\nprint(t.x)\n");
  write_text(d, "s_multiline.lua", "error(\"first line\\nsecond line\", 0)\n");
  write_text(d, "s_badtrace.lua", "local w = require \"whatif\"\n\nlocal t = w.open(\"trunc.wtr\")\n");
  free(p);
#undef FX
  return 0;
}

static int teardown(void **state) {
  (void)state;
  if (g_fx.dir && !getenv("WHATIF_KEEP")) {
    char *rm = xasprintf("rm -rf '%s'", g_fx.dir);
    int rs = system(rm);
    (void)rs;
    free(rm);
  }
  free(g_fx.trace);
  free(g_fx.dir);
  free(g_fx.out);
  return 0;
}

#define NEED_FIXTURES()            \
  do {                             \
    if (!g_fx.dir) skip();         \
  } while (0)

/* ---- the cases -------------------------------------------------------------------------- */

/* Every trace-reading command against every kind of bad trace. */
static void test_bad_traces(void **state) {
  (void)state;
  NEED_FIXTURES();
  static const char *const cmds[] = {
    "info %s",
    "info %s --verify",
    "run %s --max 20000",
    "replay %s --do 'remove{index={0, 1}}'",
    "sweep %s --list one.list -o @O/x.db --quiet",
    "mfir %s -o @O/x.db --window 0:1000",
    "gus %s --top 3",
    "validate %s --top 1 --no-mfir --boot 10 -o @O/r.html",
    "export %s --champsim @O/x.xz",
    "bench read %s",
  };
  static const struct {
    const char *file, *sub;
  } bad[] = {
    {"missing.wtr", "cannot open"},   {"adir.wtr", "not a regular file"}, {"empty.wtr", "header"},
    {"hdr.wtr", "truncated"},         {"trunc.wtr", "truncated"},        {"flip_hdr.wtr", "hash mismatch"},
    {"flip_dir.wtr", "hash mismatch"}, {"mfir.db", "not a whatif trace"},
  };
  VEC(cli_case) cases = {0};
  VEC(char *) bufs = {0};
  for (size_t i = 0; i < WI_ARRAY_LEN(cmds); i++)
    for (size_t j = 0; j < WI_ARRAY_LEN(bad); j++) {
      if (!strncmp(cmds[i], "bench", 5) && j > 2) continue; /* same reader; keep the run short */
      char *a = xasprintf(cmds[i], bad[j].file);
      VEC_PUSH(bufs, a);
      cli_case c = {a, 2, bad[j].sub, NULL};
      VEC_PUSH(cases, c);
    }
  /* damage found only when the stream is decoded (a chunk) or behind valid hashes (sections) */
  static const cli_case more[] = {
    {"run flip_chunk.wtr", 2, "chunk 0 at offset 64: chunk hash mismatch", NULL},
    {"sweep flip_chunk.wtr --list one.list -o @O/x.db --quiet", 2, "chunk hash mismatch", NULL},
    {"mfir flip_chunk.wtr -o @O/x.db", 2, "chunk hash mismatch", NULL},
    {"export flip_chunk.wtr --champsim @O/x.xz", 2, "chunk hash mismatch", NULL},
    {"info flip_chunk.wtr --verify", 2, "content hash mismatch", NULL},
    {"info future.wtr", 2, "format version 99 is newer", NULL},
    {"run future.wtr", 2, "format version 99 is newer", NULL},
    {"run sect2.wtr", 2, "static table at offset", NULL},
    {"run sect4.wtr", 2, "code regions at offset", NULL},
    {"run sect7.wtr", 2, "chunk index at offset", NULL},
  };
  for (size_t i = 0; i < WI_ARRAY_LEN(more); i++) VEC_PUSH(cases, more[i]);
  run_table(cases.a, cases.n);
  for (size_t i = 0; i < bufs.n; i++) free(bufs.a[i]);
  VEC_FREE(bufs);
  VEC_FREE(cases);
}

/* Databases: missing, a directory, empty, not SQLite, a foreign schema, and an MFIR database
 * where a sweep database is expected and vice versa. Foreign databases stay unchanged. */
static void test_bad_databases(void **state) {
  (void)state;
  NEED_FIXTURES();
  static const cli_case cases[] = {
    {"tma missing.db", 2, "cannot open", NULL},
    {"tma adir.db", 2, "cannot open", NULL},
    {"tma empty.db", 2, "not an MFIR database", NULL},
    {"tma notsql.db", 2, "not an MFIR database", "notsql.db"},
    {"tma foreign.db", 2, "not an MFIR database", "foreign.db"},
    {"tma sweep.db", 2, "not an MFIR database", "sweep.db"},
    {"stacks notsql.db", 2, "not an MFIR database", NULL},
    {"stacks sweep.db", 2, "not an MFIR database", NULL},
    {"critical foreign.db", 2, "not an MFIR database", NULL},
    {"critical sweep.db", 2, "not an MFIR database", NULL},
    {"export sweep.db --kanata @O/k.log", 2, "not an MFIR database", NULL},
    {"export notsql.db --kanata @O/k.log", 2, "not an MFIR database", NULL},
    {"export missing.db --kanata @O/k.log", 2, "cannot open", NULL},
    {"export @T --kanata @O/k.log", 2, "not an MFIR database", NULL},
    {"critical badwin.db", 2, "the window 0..999999999999 is not in the cflow table", NULL},
    {"stacks badwin.db", 2, "is not in the cflow table", NULL},
    {"export badwin.db --kanata @O/k.log", 2, "is not in the cflow table", NULL},
    {"tma badwidth.db", 2, "rename_width 0 is out of range", NULL},
    {"tma metaonly.db", 2, "no such table: cflow", NULL},
    {"export mfir.db --champsim @O/x.xz", 2, "not a whatif trace", NULL},
    {"query missing.db 'select 1'", 2, "cannot open", NULL},
    {"query adir.db 'select 1'", 2, "cannot open", NULL},
    {"query notsql.db 'select 1'", 2, "not an SQLite database", NULL},
    {"query mfir.db 'select * from no_such_table'", 2, "no such table", NULL},
    {"query mfir.db 'selec garbage'", 2, "syntax error", NULL},
    {"query mfir.db 'select 1; select * from nope'", 2, "no such table", NULL},
    {"query mfir.db 'create table z(x)'", 2, "readonly", "mfir.db"},
    {"query sweep.db 'select * from flows'", 2, "no such table", NULL},
    /* merge: bad inputs, foreign outputs; a created output is removed on failure */
    {"merge @O/m.db missing.db", 2, "cannot open", NULL},
    {"merge @O/m.db adir.db", 2, "cannot open", NULL},
    {"merge @O/m.db empty.db", 2, "not a whatif sweep results database", "empty.db"},
    {"merge @O/m.db notsql.db", 2, "not an SQLite database", "notsql.db"},
    {"merge @O/m.db foreign.db", 2, "not a whatif sweep results database", "foreign.db"},
    {"merge @O/m.db mfir.db", 2, "not a whatif sweep results database", "mfir.db"},
    {"merge @O/m.db sweep.db mfir.db", 2, "not a whatif sweep results database", "sweep.db"},
    {"merge mfir.db sweep.db", 2, "not a whatif sweep results database", "mfir.db"},
    {"merge foreign.db sweep.db", 2, "not a whatif sweep results database", "foreign.db"},
    {"merge notsql.db sweep.db", 2, "not an SQLite database", "notsql.db"},
    {"merge adir.db sweep.db", 2, "cannot open", NULL},
    {"merge /nonexistent-dir/m.db sweep.db", 2, "cannot open", NULL},
    {"merge sweep.db sweep.db", 2, "is the output", "sweep.db"},
    {"merge @O/m.db", 2, "usage", NULL},
    /* sweep output: a foreign database is refused before it is touched */
    {"sweep @T --list one.list -o mfir.db --quiet", 2, "not a whatif sweep results database", "mfir.db"},
    {"sweep @T --list one.list -o foreign.db --quiet", 2, "not a whatif sweep results database", "foreign.db"},
    {"sweep @T --list one.list -o notsql.db --quiet", 2, "not an SQLite database", "notsql.db"},
  };
  run_table(cases, WI_ARRAY_LEN(cases));
  char *m = xasprintf("%s/missing.db", g_fx.dir);
  assert_int_equal(access(m, F_OK), -1);
  free(m); /* a merge input that does not exist is not created */
}

/* Usage: no arguments, unknown options, missing values, bad numbers. */
static void test_bad_usage(void **state) {
  (void)state;
  NEED_FIXTURES();
  static const cli_case cases[] = {
    {"", 2, "no command", NULL},
    {"frobnicate", 2, "unknown command", NULL},
    {"info", 2, "no trace", NULL},
    {"run", 2, "no trace", NULL},
    {"replay", 2, "no trace", NULL},
    {"replay @T", 2, "no intervention", NULL},
    {"sweep", 2, "no trace", NULL},
    {"sweep @T --list one.list", 2, "-o OUT.db", NULL},
    {"sweep @T -o @O/x.db", 2, "--per-pc", NULL},
    {"mfir", 2, "no trace", NULL},
    {"mfir @T", 2, "-o", NULL},
    {"gus", 2, "no trace", NULL},
    {"validate", 2, "no trace", NULL},
    {"export", 2, "no output format", NULL},
    {"export @T", 2, "no output format", NULL},
    {"query", 2, "no database", NULL},
    {"query mfir.db", 2, "no SQL", NULL},
    {"tma", 2, "no MFIR database", NULL},
    {"stacks", 2, "no MFIR database", NULL},
    {"critical", 2, "no MFIR database", NULL},
    {"bench", 2, "no benchmark", NULL},
    {"bench frob", 2, "unknown benchmark", NULL},
    {"script", 2, "no script", NULL},
    {"record", 2, "no program", NULL},
    {"merge", 2, "usage", NULL},
    /* unknown options */
    {"info @T --bogus", 2, "unknown option '--bogus'", NULL},
    {"run @T --bogus", 2, "unknown option '--bogus'", NULL},
    {"replay @T --bogus", 2, "unknown option '--bogus'", NULL},
    {"sweep @T --bogus", 2, "unknown option '--bogus'", NULL},
    {"mfir @T --bogus", 2, "unknown option '--bogus'", NULL},
    {"gus @T --bogus", 2, "unknown option '--bogus'", NULL},
    {"validate @T --bogus", 2, "unknown option '--bogus'", NULL},
    {"tma mfir.db --bogus", 2, "unknown option '--bogus'", NULL},
    {"stacks mfir.db --bogus", 2, "unknown option '--bogus'", NULL},
    {"critical mfir.db --bogus", 2, "unknown option '--bogus'", NULL},
    {"merge @O/m.db sweep.db --bogus", 2, "unknown option '--bogus'", NULL},
    {"config --bogus", 2, "unknown option '--bogus'", NULL},
    {"demo --bogus", 2, "unknown argument '--bogus'", NULL},
    {"bench run --bogus", 2, "unknown option '--bogus'", NULL},
    {"record --bogus -- /bin/true", 2, "--bogus", NULL},
    /* missing values */
    {"run @T --max", 2, "--max needs a value", NULL},
    {"replay @T --do", 2, "--do needs a value", NULL},
    {"sweep @T --list one.list -o", 2, "-o needs a value", NULL},
    {"mfir @T -o", 2, "-o needs a value", NULL},
    {"gus @T --window", 2, "--window needs a value", NULL},
    {"export @T --champsim", 2, "--champsim", NULL},
    {"export mfir.db --kanata", 2, "--kanata needs a value", NULL},
    {"stacks mfir.db --top", 2, "--top", NULL},
    {"config --set", 2, "--set needs", NULL},
    {"record -o", 2, "-o needs a value", NULL},
    /* bad numbers */
    {"mfir @T -o @O/x.db --window 5:x", 2, "--window wants START:COUNT", NULL},
    {"mfir @T -o @O/x.db --window 5", 2, "--window wants START:COUNT", NULL},
    {"mfir @T -o @O/x.db --window 0:0", 2, "--window wants START:COUNT", NULL},
    {"mfir @T -o @O/x.db --window 99999999999:10", 2, "beyond the trace", NULL},
    {"mfir @T -o @O/x.db --margin -3", 2, "--margin", NULL},
    {"sweep @T --list one.list -o @O/x.db -j 0", 2, "bad value '0' for -j", NULL},
    {"sweep @T --list one.list -o @O/x.db --shard 3/2", 2, "bad value '3/2' for --shard", NULL},
    {"sweep @T --list one.list -o @O/x.db --shard 1/0", 2, "--shard", NULL},
    {"sweep @T --list one.list -o @O/x.db --shard x", 2, "--shard", NULL},
    {"sweep @T --per-pc 'latency{add=1}' -o @O/x.db --top -1", 2, "bad value '-1' for --top", NULL},
    {"sweep @T --per-pc 'latency{add=1}' -o @O/x.db --min-count 99999999999", 2, "no static instruction", NULL},
    {"stacks mfir.db --top -1", 2, "--top", NULL},
    {"critical mfir.db --top -1", 2, "--top", NULL},
    {"critical mfir.db --symptom bogus", 2, "unknown symptom", NULL},
    {"critical mfir.db --symptom fid:x", 2, "fid:N", NULL},
    {"critical mfir.db --symptom fid:999999999", 2, "not in the window", NULL},
    {"gus @T --top -1", 2, "--top", NULL},
    {"gus @T --window 0", 2, "--window", NULL},
    {"gus @T --factor x", 2, "--factor", NULL},
    {"gus @T --threads 0", 2, "--threads", NULL},
    {"run @T --max x", 2, "--max", NULL},
    {"run @T --hot -1", 2, "--hot", NULL},
    {"validate @T --top -1", 2, "--top", NULL},
    {"validate @T -j 0", 2, "-j", NULL},
    {"validate @T --boot x", 2, "--boot", NULL},
    {"validate @T --workload fma_chian", 2, "--workload 'fma_chian' has no injected-cause check", NULL},
    {"export @T --champsim @O/x.xz --xz-level 99", 2, "--xz-level", NULL},
    {"export mfir.db --kanata @O/k.log --count x", 2, "--count", NULL},
    {"export mfir.db --kanata @O/k.log --from 99999999", 2, "outside the window", NULL}, /* was a use after free */
    {"export mfir.db --kanata @O/k.log --count 0", 2, "--count", NULL},
    {"demo -j 0", 2, "-j", NULL},
    {"record -o @O/x.wtr --max x -- /bin/true", 2, "--max", NULL},
    {"record -o @O/x.wtr --level 99 -- /bin/true", 2, "--level", NULL},
    {"record -o @O/x.wtr --chunk 0 -- /bin/true", 2, "--chunk", NULL},
    {"record -o @O/x.wtr --roi bogus -- /bin/true", 2, "--roi", NULL},
    /* a missing or unrunnable program */
    {"record -o @O/x.wtr -- /nonexistent/prog", 2, "/nonexistent/prog", NULL},
    {"record -o @O/x.wtr -- no_such_program_xyz", 2, "not found in PATH", NULL},
    {"record -o @O/x.wtr -- ./adir.wtr", 2, "not a regular file", NULL},
    {"record -o @O/x.wtr -- ./one.list", 2, "not executable", NULL},
    {"demo --workloads /nonexistent-dir --dir @O/demo", 2, "workload binary", NULL},
  };
  run_table(cases, WI_ARRAY_LEN(cases));
}

/* Machine configurations (--uarch files and --set), Lua scripts, interventions. */
static void test_bad_lua(void **state) {
  (void)state;
  NEED_FIXTURES();
  static const cli_case cases[] = {
    {"config cfg_unknown.lua", 2, "cfg_unknown.lua: unknown key core.robb", NULL},
    {"config cfg_type.lua", 2, "cfg_type.lua: core.rob must be", NULL},
    {"config cfg_range.lua", 2, "cfg_range.lua: core.rob = -5 is out of range", NULL},
    {"config cfg_syntax.lua", 2, "cfg_syntax.lua:3:", NULL},
    {"config cfg_runtime.lua", 2, "cfg_runtime.lua:2:", NULL},
    {"config cfg_number.lua", 2, "must return a table", NULL},
    {"config missing.lua", 2, "missing.lua", NULL},
    {"config adir.wtr", 2, "adir.wtr", NULL},
    {"config no_such_machine", 2, "unknown machine 'no_such_machine'", NULL},
    {"run @T --uarch cfg_unknown.lua", 2, "cfg_unknown.lua: unknown key core.robb", NULL},
    {"run @T --uarch cfg_syntax.lua", 2, "cfg_syntax.lua:3:", NULL},
    {"replay @T --uarch cfg_range.lua --do 'remove{index={0, 1}}'", 2, "cfg_range.lua: core.rob", NULL},
    {"sweep @T --uarch cfg_runtime.lua --list one.list -o @O/x.db", 2, "cfg_runtime.lua:2:", NULL},
    {"mfir @T --uarch cfg_type.lua -o @O/x.db", 2, "cfg_type.lua: core.rob", NULL},
    {"gus @T --uarch cfg_unknown.lua", 2, "cfg_unknown.lua: unknown key", NULL},
    {"validate @T --uarch cfg_unknown.lua -o @O/r.html", 2, "cfg_unknown.lua: unknown key", NULL},
    {"demo --uarch cfg_unknown.lua --dir @O/demo", 2, "cfg_unknown.lua", NULL},
    {"run @T --uarch no_such_machine", 2, "unknown machine", NULL},
    {"run @T --set '{core = {rob = 0}}'", 2, "core.rob = 0 is out of range", NULL},
    {"run @T --set '{core = {robb = 1}}'", 2, "unknown key core.robb", NULL},
    {"run @T --set '{core = '", 2, "override\"]:1:", NULL},
    {"config --set 'error(\"boom\")'", 2, "boom", NULL},
    /* a table that contains itself: the converter once overran the Lua stack (heap corruption) */
    {"config --set '(function() local x = {}; x.core = x; return x end)()'", 2, "nested too deeply", NULL},
    {"run @T --uarch cfg_cycle.lua", 2, "cfg_cycle.lua: core.core.core", NULL},
    /* an endless loop in a configuration is an error, not a hang */
    {"run @T --uarch cfg_loop.lua", 2, "cfg_loop.lua:2: configuration still running", NULL},
    /* scripts: file:line, status 1 */
    {"script s_syntax.lua", 1, "whatif script: s_syntax.lua:3:", NULL},
    {"script s_runtime.lua", 1, "whatif script: s_runtime.lua:3: attempt to index a nil value", NULL},
    {"script s_multiline.lua", 1, "first line second line", NULL},
    {"script s_badtrace.lua", 1, "s_badtrace.lua:3: trace trunc.wtr", NULL},
    {"script missing.lua", 2, "cannot read missing.lua", NULL},
    {"script adir.wtr", 2, "cannot read adir.wtr", NULL},
    /* interventions: unknown kind, field, value, port; a PC, symbol or index never executed */
    {"replay @T --do 'bogus{pc=0x401000}'", 2, "unknown intervention kind 'bogus'", NULL},
    {"replay @T --do 'remove{pcc=0x401000}'", 2, "unknown field 'pcc'", NULL},
    {"replay @T --do 'remove{pc=0x1234}'", 2, "pc 0x1234 never executed", NULL},
    {"replay @T --do 'remove{pc=\"no_such_func+0x4\"}'", 2, "symbol 'no_such_func' not found", NULL},
    {"replay @T --do 'remove{func=\"no_such_func\"}'", 2, "function 'no_such_func' not found", NULL},
    {"replay @T --do 'remove{index={99999999999, 99999999999 + 5}}'", 2, "beyond the trace", NULL},
    {"replay @T --do 'remove{index={200, 100}}'", 2, "lo must be below hi", NULL},
    {"replay @T --do 'remove{}'", 2, "say which instructions", NULL},
    {"replay @T --do 'latency{pc=0x401000, add=\"x\"}'", 2, "add must be an integer", NULL},
    {"replay @T --do 'latency{class=\"no_such_class\", set=3}'", 2, "class must be an operation class", NULL},
    {"replay @T --do 'port{name=\"P99\", add=1}'", 2, "name must name one port", NULL},
    {"replay @T --do 'port{classes={\"nosuch\"}}'", 2, "unknown class 'nosuch'", NULL},
    {"replay @T --do 'ras{repair=\"bogus\"}'", 2, "repair = \"bogus\" is not one of", NULL},
    {"replay @T --do 'wrong_path{policy=\"bogus\"}'", 2, "policy = \"bogus\" is not one of", NULL},
    {"replay @T --do 'resize{rob=0}'", 2, "rob = 0 is out of range", NULL},
    {"replay @T --do 'predictor{type=\"nosuch\"}'", 2, "is not one of", NULL},
    {"replay @T --do 'config{core={robb=1}}'", 2, "unknown key core.robb", NULL},
    {"replay @T --do 'remove{pc=0x401000'", 2, "--do:1:", NULL},
    {"replay @T --do 'os.exit(3)'", 2, "--do:1:", NULL},
    {"replay @T --do ''", 2, "expected interventions", NULL},
    {"sweep @T --per-pc 'bogus{add=1}' -o @O/x.db", 2, "unknown intervention kind", NULL},
    {"sweep @T --per-pc 'remove{pc=0x401000}' -o @O/x.db", 2, "not a per-PC template", NULL},
    {"sweep @T --list bad.list -o @O/x.db", 2, "bad.list:3: unknown intervention kind 'bogus'", NULL},
    {"sweep @T --list missing.list -o @O/x.db", 2, "missing.list", NULL},
    {"sweep @T --list empty.wtr -o @O/x.db", 2, "no interventions in the list", NULL},
  };
  run_table(cases, WI_ARRAY_LEN(cases));
}

/* Unwritable outputs: a missing directory, a directory in the way, a path under a regular
 * file. Nothing (and no temporary) may be left behind. (Tests run as root here, so permission
 * bits would not stop a write.) */
static void test_bad_outputs(void **state) {
  (void)state;
  NEED_FIXTURES();
  static const cli_case cases[] = {
    {"mfir @T -o /nonexistent-dir/x.db --window 0:1000", 2, "/nonexistent-dir/x.db", NULL},
    {"mfir @T -o one.list/x.db --window 0:1000", 2, "one.list/x.db", NULL},
    {"mfir @T -o @O --window 0:1000", 2, "cannot rename", NULL},
    {"sweep @T --list one.list -o /nonexistent-dir/x.db --quiet", 2, "cannot open the results database", NULL},
    {"sweep @T --list one.list -o @O --quiet", 2, "cannot open the results database", NULL},
    {"export @T --champsim /nonexistent-dir/x.xz", 2, "/nonexistent-dir/x.xz", NULL},
    {"export @T --champsim @O", 2, "cannot rename", NULL},
    {"export mfir.db --kanata /nonexistent-dir/k.log", 2, "/nonexistent-dir/k.log", NULL},
    {"export mfir.db --kanata @O", 2, "cannot rename", NULL},
    {"validate @T --top 1 --no-mfir --boot 10 -o /nonexistent-dir/r.html", 2, "/nonexistent-dir/r.html", NULL},
    {"validate @T -o @O", 2, "it is a directory", NULL}, /* refused before the replays */
    {"validate @T -o one.list/r.html", 2, "directory one.list does not exist", NULL},
    {"demo -o /nonexistent-dir/r.html --dir @O/demo", 2, "/nonexistent-dir/r.html", NULL},
    {"record -o /nonexistent-dir/x.wtr -- /bin/true", 2, "/nonexistent-dir/x.wtr", NULL},
    {"record -o @O -- /bin/true", 2, "directory", NULL},
  };
  run_table(cases, WI_ARRAY_LEN(cases));
  /* temporaries beside the fixtures (outputs aimed at @O itself put them in the fixture dir) */
  DIR *d = opendir(g_fx.dir);
  assert_non_null(d);
  struct dirent *e;
  while ((e = readdir(d)))
    if (strstr(e->d_name, ".tmp")) fail_msg("temporary %s/%s left behind", g_fx.dir, e->d_name);
  closedir(d);
}

/* Does dir hold an entry whose name contains sub? */
static bool dir_has(const char *dir, const char *sub) {
  DIR *d = opendir(dir);
  assert_non_null(d);
  struct dirent *e;
  bool found = false;
  while ((e = readdir(d)))
    if (e->d_name[0] != '.' && strstr(e->d_name, sub)) found = true;
  closedir(d);
  return found;
}

/* Start `whatif ARGV...` writing into the output dir, wait until a temporary named with `tmp`
 * appears there, kill whatif with sig: it must die of that signal and leave nothing behind. */
static void kill_midway(int sig, const char *tmp, char *const argv[]) {
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    if (!freopen("/dev/null", "w", stdout) || !freopen("/dev/null", "w", stderr)) _exit(126);
    execv(g_fx.bin, argv);
    _exit(127);
  }
  bool seen = false;
  for (int i = 0; i < 20000 && !seen; i++) { /* up to 20 s */
    seen = dir_has(g_fx.out, tmp);
    if (!seen) nanosleep(&(struct timespec){0, 1000000}, NULL);
  }
  kill(pid, sig);
  int st = 0;
  assert_int_equal(waitpid(pid, &st, 0), pid);
  if (!seen) fail_msg("%s: no temporary '%s' appeared in %s", argv[1], tmp, g_fx.out);
  if (!WIFSIGNALED(st) || WTERMSIG(st) != sig) fail_msg("%s: status %d, not killed by signal %d", argv[1], st, sig);
  if (dir_has(g_fx.out, "")) fail_msg("%s killed by signal %d left a file in %s", argv[1], sig, g_fx.out);
}

/* A whatif killed while it writes (Ctrl-C, kill) removes its temporaries: the recorder's raw
 * trace (and QEMU goes with it), an MFIR database being built. */
static void test_killed_leaves_nothing(void **state) {
  (void)state;
  NEED_FIXTURES();
  char *out = xasprintf("%s/r.wtr", g_fx.out);
  char *rec[] = {"whatif", "record", "-o", out, "--", "/bin/sleep", "30", NULL};
  kill_midway(SIGTERM, ".raw.", rec);
  free(out);
  out = xasprintf("%s/m.db", g_fx.out);
  char *mf[] = {"whatif", "mfir", g_fx.trace, "-o", out, NULL};
  kill_midway(SIGINT, ".tmp.", mf);
  free(out);
}

/* Run `whatif ARGS` on a damaged trace: exit 0 (a harmless variant) or 2 with one "whatif" line,
 * no crash, no sanitizer report, no hang. Returns false (and says why) otherwise. */
static bool refused_cleanly(const char *args, const char *what, int iter, uint64_t seed) {
  char *err_log = xasprintf("%s/fuzz.stderr", g_fx.dir);
  char *cmd = xasprintf("timeout 60 '%s' %s >/dev/null 2>'%s'", g_fx.bin, args, err_log);
  int st = -1;
  free(tu_run(cmd, &st));
  size_t en = 0;
  char *e = slurp(err_log, &en);
  size_t lines = 0;
  for (size_t j = 0; j < en; j++) lines += e[j] == '\n';
  bool ok = (st == 0 || st == 2) && lines <= 1 && !(st == 2 && (!e || strncmp(e, "whatif", 6))) &&
            !(e && strstr(e, "Sanitizer"));
  if (!ok)
    fprintf(stderr, "%s, iteration %d (seed %llu): whatif %s: exit %d, stderr: %s\n", what, iter,
            (unsigned long long)seed, args, st, e ? e : "");
  free(e);
  free(cmd);
  free(err_log);
  return ok;
}

/* Randomized: bytes damaged behind recomputed hashes, in the sections (parsed at open) and in
 * chunk payloads (the stream decoder). The reader must refuse them or read a harmless variant.
 * Chunks are read with `bench read` (decoder only): the timing model is not what this guards. */
static void test_fuzz_damaged_traces(void **state) {
  (void)state;
  NEED_FIXTURES();
  uint64_t seed = tu_seed();
  size_t n = 0;
  uint8_t *t = (uint8_t *)slurp(g_fx.trace, &n);
  assert_non_null(t);
  uint8_t *c = xmalloc(n);
  char *path = xasprintf("%s/fuzz.wtr", g_fx.dir);
  char *a_info = xasprintf("info '%s'", path), *a_run = xasprintf("run '%s' --max 3000", path);
  char *a_read = xasprintf("bench read '%s' --repeat 1", path);
  size_t bad = 0;
  for (int i = 0; i < 8; i++) {
    memcpy(c, t, n);
    uint64_t rnd = (seed + (uint64_t)i) * 0x9E3779B97F4A7C15ull | 1;
    corrupt_section(c, n, 0, &rnd);
    write_bytes(path, c, n);
    bad += !refused_cleanly(a_info, "damaged section", i, seed);
    bad += !refused_cleanly(a_run, "damaged section", i, seed);
  }
  for (int i = 0; i < 8; i++) {
    uint64_t rnd = (seed + 1000 + (uint64_t)i) * 0x9E3779B97F4A7C15ull | 1;
    size_t cn = 0;
    uint8_t *d = corrupt_chunk(t, n, &rnd, &cn);
    if (!d) continue;
    write_bytes(path, d, cn);
    free(d);
    bad += !refused_cleanly(a_read, "damaged chunk", i, seed);
  }
  free(a_read);
  free(a_run);
  free(a_info);
  free(path);
  free(c);
  free(t);
  if (bad) fail_msg("%zu damaged traces were not refused cleanly", bad);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_bad_traces),   cmocka_unit_test(test_bad_databases), cmocka_unit_test(test_bad_usage),
    cmocka_unit_test(test_bad_lua),      cmocka_unit_test(test_bad_outputs),   cmocka_unit_test(test_fuzz_damaged_traces),
    cmocka_unit_test(test_killed_leaves_nothing),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}

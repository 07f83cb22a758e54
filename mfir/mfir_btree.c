/* mfir_btree.c — table b-trees of an SQLite database file written directly, page by page, in the
 * documented file format (https://www.sqlite.org/fileformat2.html), for MFIR's bulk tables: rows
 * arrive in key order, so leaves are filled and written once and the interior levels are built
 * at the end. A fraction of the cost of inserting the same rows through SQLite. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mfir_int.h"

/* Byte offset of SQLite's lock-byte page (PENDING_BYTE): the page holding it is never used. */
#define BT_PENDING_BYTE 0x40000000u
#define BT_OUT_PAGES 256u /* pages gathered for one write() */
#define BT_MAX_PAGE 2147483646u /* the largest page number of the format */

/* ---- encoding ------------------------------------------------------------------------------------- */

/* Bytes of an SQLite varint (big-endian groups of 7 bits; a 9th byte carries 8). */
static inline int sv_len(uint64_t v) {
  int n = 1;
  while (n < 9 && v > 0x7f) {
    v >>= 7;
    n++;
  }
  return n;
}

/* Write v as an SQLite varint at p; returns its length (as sqlite3PutVarint). */
static int sv_put(uint8_t *p, uint64_t v) {
  if (v <= 0x7f) {
    p[0] = (uint8_t)v;
    return 1;
  }
  if (v <= 0x3fff) {
    p[0] = (uint8_t)((v >> 7) | 0x80);
    p[1] = (uint8_t)(v & 0x7f);
    return 2;
  }
  if (v & (0xff000000ULL << 32)) {
    p[8] = (uint8_t)v;
    v >>= 8;
    for (int i = 7; i >= 0; i--) {
      p[i] = (uint8_t)((v & 0x7f) | 0x80);
      v >>= 7;
    }
    return 9;
  }
  uint8_t buf[10];
  int n = 0;
  do {
    buf[n++] = (uint8_t)((v & 0x7f) | 0x80);
    v >>= 7;
  } while (v);
  buf[0] &= 0x7f;
  for (int i = 0, j = n - 1; j >= 0; j--, i++) p[i] = buf[j];
  return n;
}

static inline void put_u16(uint8_t *p, uint32_t v) {
  p[0] = (uint8_t)(v >> 8);
  p[1] = (uint8_t)v;
}
static inline void put_u32(uint8_t *p, uint32_t v) {
  p[0] = (uint8_t)(v >> 24);
  p[1] = (uint8_t)(v >> 16);
  p[2] = (uint8_t)(v >> 8);
  p[3] = (uint8_t)v;
}
static inline uint32_t get_u16(const uint8_t *p) { return (uint32_t)p[0] << 8 | p[1]; }
static inline uint32_t get_u32(const uint8_t *p) {
  return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* Serial type of an integer (record format: 1..6 are 1, 2, 3, 4, 6, 8 bytes, big-endian; 8 and 9
 * the constants 0 and 1 with no bytes, schema format 4) and its length in bytes. */
static const uint8_t st_bytes[10] = {0, 1, 2, 3, 4, 6, 8, 8, 0, 0};
/* serial type by significant bits (sign included) */
static const uint8_t st_by_bits[66] = {
  1, 1, 1, 1, 1, 1, 1, 1, 1,                          /* 0..8 */
  2, 2, 2, 2, 2, 2, 2, 2,                             /* 9..16 */
  3, 3, 3, 3, 3, 3, 3, 3,                             /* 17..24 */
  4, 4, 4, 4, 4, 4, 4, 4,                             /* 25..32 */
  5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5,     /* 33..48 */
  6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6  /* 49..65 */
};
static inline uint8_t int_type(int64_t v, bool small) {
  if (small && (uint64_t)v <= 1) return (uint8_t)(8 + v);
  uint64_t u = (uint64_t)(v ^ (v >> 63)); /* magnitude bits of v (or ~v when negative) */
  int bits = u ? 65 - __builtin_clzll(u) : 1;
  return st_by_bits[bits];
}

/* ---- the file --------------------------------------------------------------------------------------- */

static wi_rc bt_ioerr(bt_file *f, const char *what) {
  if (!f->failed) {
    f->failed = true;
    snprintf(f->errmsg, sizeof f->errmsg, "%s: %s", what, strerror(errno));
  }
  return WI_EIO;
}

/* Write the gathered pages with one write at their offset (after an error they are dropped: the
 * file is abandoned). */
static wi_rc out_flush(bt_file *f) {
  size_t n = (size_t)f->out_n * f->page_size;
  off_t off = (off_t)(f->out_first - 1) * (off_t)f->page_size;
  const uint8_t *p = f->out;
  while (n && !f->failed) {
    ssize_t k = pwrite(f->fd, p, n, off);
    if (k <= 0) {
      if (k < 0 && errno == EINTR) continue;
      if (k == 0) errno = ENOSPC;
      bt_ioerr(f, "writing pages");
      break;
    }
    p += k;
    n -= (size_t)k;
    off += k;
  }
  f->out_first += f->out_n;
  f->out_n = 0;
  return f->failed ? WI_EIO : WI_OK;
}

/* Append a page at the end of the file; returns its number. */
static uint32_t page_append(bt_file *f, const uint8_t *page) {
  if (f->next_page >= BT_MAX_PAGE) { /* the format's limit: give up on the file */
    if (!f->failed) {
      f->failed = true;
      snprintf(f->errmsg, sizeof f->errmsg, "the database would exceed %u pages", BT_MAX_PAGE);
    }
    return BT_MAX_PAGE;
  }
  if (f->next_page == f->lock_page) { /* never used by SQLite: left as zeros */
    if (f->out_n == BT_OUT_PAGES) out_flush(f);
    memset(f->out + (size_t)f->out_n * f->page_size, 0, f->page_size);
    f->out_n++;
    f->next_page++;
  }
  if (f->out_n == BT_OUT_PAGES) out_flush(f);
  memcpy(f->out + (size_t)f->out_n * f->page_size, page, f->page_size);
  f->out_n++;
  return f->next_page++;
}

/* Overwrite an existing page (a root page SQLite allocated). */
static wi_rc page_put(bt_file *f, uint32_t pgno, const uint8_t *page) {
  if (f->failed) return WI_EIO;
  off_t off = (off_t)(pgno - 1) * (off_t)f->page_size;
  size_t n = f->page_size;
  while (n) {
    ssize_t k = pwrite(f->fd, page + (f->page_size - n), n, off);
    if (k <= 0) {
      if (k < 0 && errno == EINTR) continue;
      if (k == 0) errno = ENOSPC;
      return bt_ioerr(f, "writing a root page");
    }
    n -= (size_t)k;
    off += k;
  }
  return WI_OK;
}

wi_rc bt_open(bt_file *f, const char *path, wi_err *err) {
  memset(f, 0, sizeof *f);
  f->fd = open(path, O_RDWR);
  if (f->fd < 0) return wi_fail(err, WI_EIO, "mfir: cannot open %s: %s", path, strerror(errno));
  uint8_t *h = f->hdr;
  if (pread(f->fd, h, 100, 0) != 100 || memcmp(h, "SQLite format 3", 16) != 0) {
    close(f->fd);
    f->fd = -1;
    return wi_fail(err, WI_ECORRUPT, "mfir: %s: not an SQLite database after creating the schema", path);
  }
  uint32_t ps = get_u16(h + 16);
  f->page_size = ps == 1 ? 65536u : ps;
  f->usable = f->page_size - h[20];
  f->small_ints = get_u32(h + 44) >= 4;
  uint32_t n = get_u32(h + 28);
  off_t size = lseek(f->fd, 0, SEEK_END);
  /* The in-header size is valid when the change counter equals version-valid-for. */
  if (!n || get_u32(h + 24) != get_u32(h + 92)) n = (uint32_t)(size / f->page_size);
  /* A fresh rollback-journal file: no free pages, no auto-vacuum (pointer-map pages). */
  if (f->page_size < 512 || (f->page_size & (f->page_size - 1)) || f->usable < 480 ||
      (off_t)n * f->page_size != size || get_u32(h + 32) || get_u32(h + 52) || h[18] != 1 || h[19] != 1) {
    close(f->fd);
    f->fd = -1;
    return wi_fail(err, WI_ECORRUPT, "mfir: %s: unexpected database layout after creating the schema", path);
  }
  f->next_page = n + 1;
  f->lock_page = BT_PENDING_BYTE / f->page_size + 1;
  f->out = xmalloc((size_t)BT_OUT_PAGES * f->page_size);
  f->out_first = f->next_page;
  return WI_OK;
}

wi_rc bt_close(bt_file *f, wi_err *err) {
  if (f->fd < 0) return WI_OK;
  wi_rc rc = out_flush(f);
  if (!rc) {
    /* Pages, change counter and version-valid-for (so the page count is believed). */
    uint32_t change = get_u32(f->hdr + 24) + 1;
    put_u32(f->hdr + 24, change);
    put_u32(f->hdr + 28, f->next_page - 1);
    put_u32(f->hdr + 92, change);
    if (pwrite(f->fd, f->hdr, 100, 0) != 100) rc = bt_ioerr(f, "writing the database header");
  }
  if (close(f->fd) != 0 && !rc) rc = bt_ioerr(f, "closing the database");
  f->fd = -1;
  free(f->out);
  f->out = NULL;
  if (rc || f->failed) return wi_fail(err, WI_EIO, "mfir: %s", f->errmsg);
  return WI_OK;
}

void bt_discard(bt_file *f) {
  if (f->fd >= 0) close(f->fd);
  f->fd = -1;
  free(f->out);
  f->out = NULL;
}

/* ---- one table ---------------------------------------------------------------------------------------- */

void bt_tree_init(bt_tree *t, bt_file *f, uint32_t root, int dir) {
  memset(t, 0, sizeof *t);
  t->f = f;
  t->root = root;
  t->dir = dir < 0 ? -1 : 1;
  t->page = xcalloc(1, f->page_size);
  t->cells = xmalloc(f->page_size / 2 * sizeof *t->cells);
  t->top = f->usable;
}

void bt_tree_free(bt_tree *t) {
  free(t->page);
  free(t->cells);
  free(t->held);
  VEC_FREE(t->kids);
  memset(t, 0, sizeof *t);
}

/* Finish the leaf being filled: page header and cell pointers in ascending key order. */
static void leaf_seal(bt_tree *t, uint8_t *page) {
  memset(page, 0, 8);
  page[0] = 0x0d; /* table b-tree leaf */
  put_u16(page + 3, t->n);
  put_u16(page + 5, t->top == 65536 ? 0 : t->top);
  for (uint32_t i = 0; i < t->n; i++) {
    uint32_t k = t->dir > 0 ? i : t->n - 1 - i;
    put_u16(page + 8 + 2 * i, t->cells[k]);
  }
  memset(page + 8 + 2 * t->n, 0, t->top - (8 + 2 * t->n));
}

/* Write the full leaf out (the first leaf stays in memory until a second one exists: a table of
 * one leaf lives in its root page). */
static void leaf_flush(bt_tree *t) {
  if (!t->n) return;
  bt_file *f = t->f;
  leaf_seal(t, t->page);
  bt_child k = {0, t->lo, t->hi};
  if (!t->kids.n && !t->held) {
    t->held = xmalloc(f->page_size);
    memcpy(t->held, t->page, f->page_size);
    t->held_kid = k;
  } else {
    if (t->held) {
      t->held_kid.pgno = page_append(f, t->held);
      VEC_PUSH(t->kids, t->held_kid);
      free(t->held);
      t->held = NULL;
    }
    k.pgno = page_append(f, t->page);
    VEC_PUSH(t->kids, k);
  }
  t->n = 0;
  t->top = f->usable;
}

#define BT_MAX_COLS 64

bool bt_append(bt_tree *t, int64_t key, const int64_t *v, int ncols, int key_col) {
  bt_file *f = t->f;
  if (t->any && (t->dir > 0 ? key <= t->last : key >= t->last)) return false; /* out of order */
  if (ncols > BT_MAX_COLS) return false;
  /* The record: header (its size, then a serial type per column) and body. Trailing NULLs are
   * left out (they read as NULL); the key column, an INTEGER PRIMARY KEY, is the rowid and is
   * stored as NULL. */
  int n = ncols;
  while (n > 1 && (v[n - 1] == MW_NULL || n - 1 == key_col)) n--;
  uint8_t rec[1 + BT_MAX_COLS + BT_MAX_COLS * 8 + 8]; /* + slack for whole-word stores */
  rec[0] = (uint8_t)(n + 1);                           /* every serial type here is < 128 */
  uint8_t *h = rec + 1, *b = rec + 1 + n;
  for (int i = 0; i < n; i++) {
    int64_t x = v[i];
    if (x == MW_NULL || i == key_col) {
      h[i] = 0;
      continue;
    }
    uint8_t ty = int_type(x, f->small_ints);
    h[i] = ty;
    unsigned len = st_bytes[ty];
    if (!len) continue;
    uint64_t be = __builtin_bswap64((uint64_t)x << (64 - 8 * len)); /* len bytes, big-endian */
    memcpy(b, &be, 8);
    b += len;
  }
  size_t plen = (size_t)(b - rec);
  if (plen > f->usable - 35) return false; /* would need overflow pages */
  size_t cell = (size_t)sv_len(plen) + (size_t)sv_len((uint64_t)key) + plen;
  if (8 + 2 * (size_t)(t->n + 1) + cell > t->top) leaf_flush(t);
  uint32_t at = t->top - (uint32_t)cell;
  uint8_t *p = t->page + at;
  p += sv_put(p, plen);
  p += sv_put(p, (uint64_t)key);
  memcpy(p, rec, plen);
  t->top = at;
  if (!t->n) t->lo = t->hi = key;
  if (key < t->lo) t->lo = key;
  if (key > t->hi) t->hi = key;
  t->cells[t->n++] = (uint16_t)at;
  t->last = key;
  t->any = true;
  t->rows++;
  return true;
}

/* The interior level over kids (in ascending key order): its pages are appended to the file and
 * listed in up, or, when one page holds every child, that page is written into the root page
 * (up stays empty). */
static void build_level(bt_tree *t, const bt_child *kids, size_t n, bt_kids *up) {
  bt_file *f = t->f;
  uint8_t *page = xmalloc(f->page_size);
  size_t i = 0;
  /* group boundaries: as many children as fit (n - 1 cells of 4 + varint key, 2-byte pointers) */
  VEC(size_t) ends = {0};
  while (i < n) {
    size_t room = f->usable - 12, j = i;
    while (j < n) {
      size_t need = j + 1 < n ? 6 + (size_t)sv_len((uint64_t)kids[j].hi) : 0;
      if (j > i && need > room) break;
      room -= need;
      j++;
      if (need == 0) break;
    }
    /* j: one past the last child of this page (kids[j - 1] is its right-most pointer) */
    VEC_PUSH(ends, j);
    i = j;
  }
  /* a page of one child is not a useful interior page: borrow one from the page before */
  if (ends.n > 1 && ends.a[ends.n - 1] - ends.a[ends.n - 2] == 1) ends.a[ends.n - 2]--;
  size_t start = 0;
  for (size_t g = 0; g < ends.n; g++) {
    size_t end = ends.a[g], nc = end - start - 1;
    memset(page, 0, f->page_size);
    page[0] = 0x05; /* table b-tree interior */
    put_u16(page + 3, (uint32_t)nc);
    put_u32(page + 8, kids[end - 1].pgno);
    uint32_t top = f->usable;
    for (size_t c = 0; c < nc; c++) {
      uint8_t cell[13];
      put_u32(cell, kids[start + c].pgno);
      int len = 4 + sv_put(cell + 4, (uint64_t)kids[start + c].hi); /* keys <= this go left */
      top -= (uint32_t)len;
      memcpy(page + top, cell, (size_t)len);
      put_u16(page + 12 + 2 * c, top);
    }
    put_u16(page + 5, top == 65536 ? 0 : top);
    bt_child k = {0, kids[start].lo, kids[end - 1].hi};
    if (ends.n == 1) page_put(f, t->root, page);
    else {
      k.pgno = page_append(f, page);
      VEC_PUSH(*up, k);
    }
    start = end;
  }
  VEC_FREE(ends);
  free(page);
}

wi_rc bt_tree_finish(bt_tree *t) {
  bt_file *f = t->f;
  leaf_flush(t);
  if (t->held) { /* one leaf: it is the root */
    page_put(f, t->root, t->held);
    free(t->held);
    t->held = NULL;
  } else if (t->kids.n) {
    if (t->dir < 0) /* leaves were written right to left */
      for (size_t i = 0, j = t->kids.n - 1; i < j; i++, j--) {
        bt_child x = t->kids.a[i];
        t->kids.a[i] = t->kids.a[j];
        t->kids.a[j] = x;
      }
    bt_kids level = t->kids;
    memset(&t->kids, 0, sizeof t->kids);
    while (level.n) {
      bt_kids up = {0};
      build_level(t, level.a, level.n, &up);
      VEC_FREE(level);
      level = up;
    }
  }
  return f->failed ? WI_EIO : out_flush(f);
}

/* ---- reading a table back ---------------------------------------------------------------------------- */

/* Read an SQLite varint from [p, end); 0 when truncated. */
static int sv_get(const uint8_t *p, const uint8_t *end, uint64_t *out) {
  uint64_t v = 0;
  for (int i = 0; i < 8; i++) {
    if (p + i >= end) return 0;
    v = (v << 7) | (p[i] & 0x7f);
    if (!(p[i] & 0x80)) {
      *out = v;
      return i + 1;
    }
  }
  if (p + 8 >= end) return 0;
  *out = (v << 8) | p[8];
  return 9;
}

#define BT_MAX_DEPTH 24

typedef struct bt_reader {
  int fd;
  uint8_t *buf[BT_MAX_DEPTH]; /* one page per level of the descent */
  uint32_t page_size, usable, n_pages;
  int ncols, key_col;
  bt_row_fn fn;
  void *ctx;
  int64_t *vals;
  bool unsupported, corrupt, stopped;
  uint32_t bad_page;
} bt_reader;

/* Decode one leaf cell's record into r->vals. */
static bool decode_row(bt_reader *r, const uint8_t *p, const uint8_t *end, int64_t rowid) {
  uint64_t hs;
  int k = sv_get(p, end, &hs);
  if (!k || hs > (uint64_t)(end - p) || hs < (uint64_t)k) return false;
  const uint8_t *h = p + k, *hend = p + hs, *b = hend;
  for (int i = 0; i < r->ncols; i++) r->vals[i] = MW_NULL;
  for (int i = 0; h < hend && i < r->ncols; i++) { /* columns past ncols are not decoded */
    uint64_t ty;
    int n = sv_get(h, hend, &ty);
    if (!n) return false;
    h += n;
    int len;
    if (ty <= 6) len = st_bytes[ty];
    else if (ty == 8 || ty == 9) len = 0;
    else { /* a real, text or blob: not for this reader */
      r->unsupported = true;
      return false;
    }
    if (b + len > end) return false;
    if (ty == 0) r->vals[i] = MW_NULL;
    else if (ty >= 8) r->vals[i] = (int64_t)(ty - 8);
    else {
      uint64_t u = (b[0] & 0x80) ? UINT64_MAX : 0; /* sign-extended big-endian */
      for (int j = 0; j < len; j++) u = (u << 8) | b[j];
      r->vals[i] = (int64_t)u;
    }
    b += len;
  }
  if (r->key_col >= 0 && r->key_col < r->ncols) r->vals[r->key_col] = rowid;
  return true;
}

static void scan_page(bt_reader *r, uint32_t pgno, int depth) {
  if (r->unsupported || r->corrupt || r->stopped) return;
  if (!pgno || pgno > r->n_pages || depth >= BT_MAX_DEPTH) {
    r->corrupt = true;
    r->bad_page = pgno;
    return;
  }
  if (!r->buf[depth]) r->buf[depth] = xmalloc(r->page_size);
  uint8_t *page = r->buf[depth];
  off_t at = (off_t)(pgno - 1) * (off_t)r->page_size;
  if (pread(r->fd, page, r->page_size, at) != (ssize_t)r->page_size) goto bad;
  const uint8_t *end = page + r->usable;
  const uint8_t *ph = page + (pgno == 1 ? 100 : 0);
  uint32_t ncell = get_u16(ph + 3);
  if (ph[0] == 0x05) { /* interior: children in order, then the right-most */
    if (12 + 2 * (size_t)ncell > r->usable) goto bad;
    for (uint32_t i = 0; i < ncell && !r->unsupported && !r->corrupt && !r->stopped; i++) {
      uint32_t off = get_u16(ph + 12 + 2 * i);
      if (off + 4 > r->usable) goto bad;
      scan_page(r, get_u32(page + off), depth + 1);
    }
    scan_page(r, get_u32(ph + 8), depth + 1);
    return;
  }
  if (ph[0] != 0x0d) goto bad;
  if (8 + 2 * (size_t)ncell > r->usable) goto bad;
  for (uint32_t i = 0; i < ncell; i++) {
    uint32_t off = get_u16(ph + 8 + 2 * i);
    const uint8_t *p = page + off;
    uint64_t plen, rowid;
    int a, b2;
    if (off >= r->usable || !(a = sv_get(p, end, &plen)) || !(b2 = sv_get(p + a, end, &rowid))) goto bad;
    if (plen > r->usable - 35) { /* spills into overflow pages */
      r->unsupported = true;
      return;
    }
    p += a + b2;
    if (p + plen > end) goto bad;
    if (!decode_row(r, p, p + plen, (int64_t)rowid)) {
      if (!r->unsupported) goto bad;
      return;
    }
    if (r->fn(r->ctx, (int64_t)rowid, r->vals, r->ncols)) {
      r->stopped = true;
      return;
    }
  }
  return;
bad:
  r->corrupt = true;
  r->bad_page = pgno;
}

wi_rc bt_scan(const char *path, uint32_t root, int ncols, int key_col, bt_row_fn fn, void *ctx, wi_err *err) {
  int fd = open(path, O_RDONLY);
  if (fd < 0) return wi_fail(err, WI_EIO, "%s: cannot open: %s", path, strerror(errno));
  off_t size = lseek(fd, 0, SEEK_END);
  uint8_t h[100];
  if (size < 512 || pread(fd, h, 100, 0) != 100 || memcmp(h, "SQLite format 3", 16) != 0) {
    close(fd);
    return wi_fail(err, WI_ECORRUPT, "%s: not an SQLite database", path);
  }
  bt_reader r;
  memset(&r, 0, sizeof r);
  uint32_t ps = get_u16(h + 16);
  r.page_size = ps == 1 ? 65536u : ps;
  r.usable = r.page_size - h[20];
  /* Only a plain rollback-journal file is read here (in WAL mode pages may live in the log). */
  if (r.page_size < 512 || (r.page_size & (r.page_size - 1)) || r.usable < 480 || h[18] != 1 || h[19] != 1) {
    close(fd);
    return wi_fail(err, WI_EINVAL, "%s: database layout not read directly", path);
  }
  r.n_pages = (uint32_t)(size / r.page_size);
  r.fd = fd;
  r.ncols = ncols;
  r.key_col = key_col;
  r.fn = fn;
  r.ctx = ctx;
  r.vals = xmalloc((size_t)(ncols > 0 ? ncols : 1) * sizeof *r.vals);
  scan_page(&r, root, 0);
  free(r.vals);
  for (int i = 0; i < BT_MAX_DEPTH; i++) free(r.buf[i]);
  close(fd);
  if (r.unsupported) return wi_fail(err, WI_EINVAL, "%s: table holds values not read directly", path);
  if (r.corrupt) return wi_fail(err, WI_ECORRUPT, "%s: b-tree page %u is corrupt", path, r.bad_page);
  return WI_OK;
}

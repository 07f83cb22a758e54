/* trace.c — the .wtr trace container: writer (chunk encoder, optional compression thread),
 * reader (validation, sections, lookups) and cursors (chunk decoder, rep collapsing).
 *
 * ==== File format, version 1 ===============================================================
 * All fixed-width integers are little-endian. "varint" is unsigned LEB128 (util.h), "zz" a
 * zigzag-encoded signed varint, "str" a varint byte length followed by the bytes (no NUL).
 *
 * Header: 64 bytes at offset 0. Its layout is frozen across format versions, so any later
 * whatif can at least name the version of a file it cannot read.
 *    0  magic "WHATIFTR"             8  u32 format version      12  u32 flags (0)
 *   16  u64 directory offset        24  u64 directory size (bytes)
 *   32  u64 directory hash          40  u64 content hash = wi_hash64(bytes [64, end), 0)
 *   48  u64 file size (bytes)       56  u64 header hash  = wi_hash64(bytes [0, 56), 0)
 * After the header come the chunks (stream order, back to back), then the sections, then
 * the directory. Every byte after the header belongs to exactly one chunk, section or the
 * directory, and each of those has a hash that is checked (sections and directory at open,
 * chunks when loaded), so no bit flip anywhere goes unnoticed.
 *
 * Directory: 32-byte entries {u32 kind, u32 0, u64 offset, u64 size, u64 wi_hash64(bytes,0)}.
 * Unknown kinds are skipped (room for additive sections within a version). Sections:
 *   1 metadata      varint n; n x {str key, str value}
 *   2 static table  varint n; n x {u64 pc, varint count, u8 len, len bytes, u8 n_mem,
 *                   u8 mem_store, min(n_mem, 8) x u8 size}     (sid = position)
 *   3 objects       varint n; n x {str path, u64 bias, u64 lo, u64 hi}
 *   4 code regions  varint n; n x {u64 base, u64 size, str name, varint clen, clen bytes:
 *                   one zstd frame holding the `size` code bytes}; sorted by base
 *   5 symbols       varint n_obj; n_obj x str object; varint n; n x {u64 addr, varint size,
 *                   str name, varint object (0 = none, else index + 1)}; sorted by address
 *   6 source lines  varint n_file; n_file x str file; varint n; n x {varint address delta
 *                   from the previous entry, varint file index, varint line}; sorted
 *   7 chunk index   u64 n_raw, u64 n_insns, u64 end_pc, u64 n_chunks; n_chunks x 64 bytes
 *                   {u64 offset, bytes, first_raw, first_insn, first_pc, payload bytes,
 *                   frame hash (wi_hash64 of the compressed frame), u32 n_raw, u32 n_insns}
 *
 * Chunks: each one zstd frame (content checksum on, content size set) holding a payload:
 *   varint n_raw, varint n_insns, varint first_pc, 4 x varint stream length, then the
 *   control-run, control-target, memory and exception streams back to back.
 * Everything below restarts at each chunk, so each chunk decodes on its own. For raw
 * instruction i with fall-through ft = pc + len (len from the static table) and successor
 * pc next (the first instruction of the next chunk, or the end PC, for the last one):
 *   control    when next != ft or the transfer is asynchronous (a discontinuity): in the
 *              run stream varint(r << 1 | async), r = instructions strictly between it and
 *              the previous discontinuity (or the chunk start); in the target stream
 *              zz(next - base). base = ft, except for a non-async return (opcode C3/C2 after
 *              prefixes), which pops a 64-entry shadow stack of fall-throughs pushed by
 *              non-async calls (E8, FF /2, FF /3) at their own discontinuities. The reader
 *              walks fall-through instructions with a per-sid successor link and needs the
 *              PC->sid map only at discontinuity targets.
 *   memory     per access j: zz(addr - base), base = the previous address of slot j of this
 *              static instruction in this chunk (0 at chunk start) for j < 4, the previous
 *              access of this instruction for j >= 4.
 *   exception  when the accesses differ from the static default (count, size or direction
 *              of any): varint gap (instructions since the previous exception - 1), varint
 *              count, count x descriptor (bit 7 store, bits 0-6 size; 127 = varint size
 *              follows). The default is the first execution's accesses: n_mem, mem_store and
 *              mem_size of the static entry; access j >= 8 defaults to entry 7.
 * A chunk holds at least the configured number of instructions but is extended so that it
 * never ends inside a run of self-loop iterations of a rep-prefixed string instruction
 * (next == pc, not async), so model mode can collapse every run inside one chunk (only a run longer than
 * 2^28 iterations, or 2^30 accesses, is force-split). A model instruction is a raw
 * instruction that is not a self-loop iteration, or the last of its chunk.
 * The static table is keyed by PC (first sight wins: if code at a PC changes, later
 * executions keep the first length and bytes; the PC stream stays exact because every
 * deviation from the stored fall-through is recorded as a discontinuity). PCs translated
 * but never executed are dropped at close; chunks name PCs, never sids.
 * =========================================================================================== */
#include "trace.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include "decode.h"

#define TR_HDR_BYTES 64
#define TR_DIRENT_BYTES 32
#define TR_CIDX_HEAD 32
#define TR_CIDX_BYTES 64
#define TR_BATCH 4096                 /* model/raw instructions per cursor batch */
#define TR_STACK 64                   /* shadow return stack depth (entries) */
#define TR_HARD_CAP (1u << 28)        /* raw instructions per chunk before a forced split */
#define TR_MEM_CAP (1u << 30)         /* accesses per chunk before a forced split */
#define TR_MAX_PAYLOAD ((uint64_t)1 << 34) /* bytes of one decompressed chunk payload */
#define TR_MAX_ACCESSES 65535u        /* accesses of one instruction (trace_insn.n_mem) */
#define TR_NONE UINT32_MAX

enum { SEC_META = 1, SEC_STATIC, SEC_OBJECTS, SEC_REGIONS, SEC_SYMBOLS, SEC_LINES, SEC_CHUNKS, SEC_NUM };
static const char *const sec_name[SEC_NUM] = {
  "?", "metadata", "static table", "objects", "code regions", "symbols", "source lines", "chunk index",
};

/* Control-transfer kind of a static instruction, from its bytes (shadow return stack). */
enum { TK_OTHER = 0, TK_CALL = 1, TK_RET = 2, TK_REP = 3 }; /* TK_REP: rep-prefixed string op */

/* ==== small helpers ======================================================================== */

static void put_u32(uint8_t *p, uint32_t v) {
  for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i));
}
static void put_u64(uint8_t *p, uint64_t v) {
  for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (8 * i));
}
static uint32_t get_u32(const uint8_t *p) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; i--) v = v << 8 | p[i];
  return v;
}
static uint64_t get_u64(const uint8_t *p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; i--) v = v << 8 | p[i];
  return v;
}
/* Map key for a PC (map64 keys must be non-zero; ~pc is zero only for an impossible PC). */
static inline uint64_t pc_key(uint64_t pc) { return ~pc; }

/* Call/return classification from instruction bytes (legacy prefixes and REX skipped). The
 * writer and the reader both apply it to the stored bytes, so they always agree. */
static uint8_t tr_kind(const uint8_t *b, unsigned len) {
  unsigned i = 0;
  bool rep = false;
  while (i < len && (b[i] == 0x66 || b[i] == 0x67 || b[i] == 0xf2 || b[i] == 0xf3 || b[i] == 0xf0 ||
                     b[i] == 0x2e || b[i] == 0x3e || b[i] == 0x26 || b[i] == 0x36 || b[i] == 0x64 ||
                     b[i] == 0x65)) {
    rep |= b[i] == 0xf2 || b[i] == 0xf3;
    i++;
  }
  if (i < len && (b[i] & 0xf0) == 0x40) i++;
  if (i >= len) return TK_OTHER;
  /* ins/outs/movs/cmps/stos/lods/scas: only these repeat at one PC as rep iterations (a ret
   * returning to itself while a recursion unwinds is a self-loop too, and is not collapsed). */
  if (rep && ((b[i] >= 0x6c && b[i] <= 0x6f) || (b[i] >= 0xa4 && b[i] <= 0xa7) || (b[i] >= 0xaa && b[i] <= 0xaf)))
    return TK_REP;
  if (b[i] == 0xe8) return TK_CALL;
  if (b[i] == 0xc3 || b[i] == 0xc2) return TK_RET;
  if (b[i] == 0xff && i + 1 < len) {
    unsigned reg = (b[i + 1] >> 3) & 7;
    if (reg == 2 || reg == 3) return TK_CALL;
  }
  return TK_OTHER;
}

/* Growable byte buffer. */
typedef struct tr_buf {
  uint8_t *a;
  size_t n, cap;
} tr_buf;

static void buf_reserve(tr_buf *b, size_t extra) {
  if (b->n + extra <= b->cap) return;
  size_t nc = b->cap ? b->cap * 2 : 256;
  while (nc < b->n + extra) nc *= 2;
  b->a = xrealloc(b->a, nc);
  b->cap = nc;
}
static inline void buf_varint(tr_buf *b, uint64_t v) {
  buf_reserve(b, 10);
  b->n = (size_t)(varint_put(b->a + b->n, v) - b->a);
}
static void buf_bytes(tr_buf *b, const void *p, size_t n) {
  buf_reserve(b, n);
  if (n) memcpy(b->a + b->n, p, n);
  b->n += n;
}
static void buf_u8(tr_buf *b, uint8_t v) { buf_bytes(b, &v, 1); }
static void buf_u32(tr_buf *b, uint32_t v) {
  uint8_t t[4];
  put_u32(t, v);
  buf_bytes(b, t, 4);
}
static void buf_u64(tr_buf *b, uint64_t v) {
  uint8_t t[8];
  put_u64(t, v);
  buf_bytes(b, t, 8);
}
static void buf_str(tr_buf *b, const char *s) {
  size_t n = s ? strlen(s) : 0;
  buf_varint(b, n);
  buf_bytes(b, s, n);
}
static void buf_free(tr_buf *b) {
  free(b->a);
  b->a = NULL;
  b->n = b->cap = 0;
}

/* ==== writer ================================================================================ */

/* The producer (tw_exec/tw_mem, called once per instruction and access by the recorder) only
 * appends compact words to a small batch; the encoder works batch by batch, on a background
 * thread when threaded, and cuts chunks itself where the producer marked their ends. The
 * producer stores 8 bytes per instruction and 12 per access (40 and 16 in whole-chunk buffers
 * before), and the batches cycle through about 1 MB instead of streaming tens of MB per chunk
 * pair through the caches the traced program also needs. The encoder needs nothing of the
 * producer's static table: each batch carries the statics created since the previous one. */

#define TW_BATCH_INSNS 4096u  /* instructions per batch (a batch may end earlier, at a chunk end) */
#define TW_BATCH_MEMS 8192u   /* accesses per batch before it is handed over (grows if needed) */
#define TW_NBATCH 8           /* batches in flight (threaded): the producer waits when all are full */
/* The worker is woken once this many batches wait (it then encodes all of them): waking a
 * sleeping thread costs ~10 us of kernel time here (a KVM guest), too much per batch. */
#define TW_WAKE_AT 4
#define TW_ASYNC (1u << 31)   /* in a batch's sid word: the transfer after it is asynchronous */
#define TW_STORE (1u << 31)   /* in a batch's access info word: a store (the rest is the size) */
#define TW_MAX_SID (TW_ASYNC - 1)

/* Static facts the encoder needs per sid (its own copy: the producer's table grows freely). */
typedef struct tw_est {
  uint64_t pc;
  uint32_t meta; /* REC_META(len, kind) */
} tw_est;
#define REC_META(len, kind) ((uint32_t)(len) | (uint32_t)(kind) << 8)
#define est_len(s) ((s)->meta & 0xff)
#define est_kind(s) (((s)->meta >> 8) & 0xff)

/* Consecutive raw dynamic instructions and their accesses, in compact parallel arrays. */
typedef struct tw_batch {
  uint32_t *sid;     /* per instruction: sid | TW_ASYNC; sid[n] = the encoder's sentinel id */
  uint32_t *mstart;  /* per instruction: index of its first access in maddr/minfo; mstart[n] = n_mem */
  size_t n;          /* instructions */
  uint64_t *maddr;   /* per access: address */
  uint32_t *minfo;   /* per access: size in bytes | TW_STORE */
  size_t n_mem, cap_mem;
  uint64_t next_pc;  /* successor of the last instruction */
  bool chunk_end;    /* the chunk ends with this batch */
  VEC(tw_est) new_st; /* statics created since the previous batch, in sid order */
  struct tw_batch *link; /* in the writer's full or free list */
} tw_batch;

/* Static default accesses as first executed. */
typedef struct tw_def {
  uint8_t set, n_mem, store, pad;
  uint8_t size[8];
} tw_def;

/* Internal chunk index entry. */
typedef struct tr_cidx {
  trace_chunk pub;
  uint64_t ubytes; /* payload bytes after decompression */
  uint64_t hash;   /* wi_hash64 of the compressed frame */
} tr_cidx;

/* Encoder state: owned by whichever thread encodes batches (one at a time, in order). */
typedef struct tw_enc {
  FILE *f;
  const char *path;
  wi_hasher hasher; /* content hash of everything after the header */
  uint64_t off;     /* file offset of the next byte written */
  int level;
  ZSTD_CCtx *cctx;
  VEC(tw_est) st;   /* static facts by sid */
  tw_def *def;      /* per sid */
  uint64_t *count;  /* per sid: raw executions */
  uint64_t *last;   /* per sid x 4 slots: previous address in this chunk */
  size_t n_sid;     /* capacity of the per-sid arrays */
  uint64_t stack[TR_STACK];
  unsigned sp_top, sp_n;
  /* the chunk being encoded: instructions so far, index of the previous discontinuity and
   * exception (UINT64_MAX: none yet), model instructions, first PC */
  uint64_t ci, prev_disc, prev_exc, c_insns, c_first_pc;
  tr_buf s_run, s_tgt, s_mem, s_exc, payload, frame;
  VEC(tr_cidx) chunks;
  uint64_t n_raw, n_insns;
  wi_err err;
} tw_enc;

typedef struct tw_static_ent {
  uint64_t pc;
  uint32_t meta; /* REC_META(len, kind) */
  uint8_t len, kind;
  uint8_t bytes[15];
} tw_static_ent;

typedef struct tw_kv {
  char *k, *v;
} tw_kv;
typedef struct tw_obj {
  char *path;
  uint64_t bias, lo, hi;
} tw_obj;
typedef struct tw_reg {
  uint64_t base, size;
  uint8_t *bytes;
  char *name;
} tw_reg;
typedef struct tw_sym {
  uint64_t addr, size;
  char *name, *object;
} tw_sym;
typedef struct tw_lineent {
  uint64_t addr;
  char *file;
  uint32_t line;
} tw_lineent;

struct trace_writer {
  char *path;
  uint32_t chunk_insns;
  wi_err err; /* first API misuse (reported by tw_close) */
  /* producer: the batch being filled and when its fast paths must stop */
  tw_batch *cur;
  size_t flush_at;  /* tw_exec takes its slow path once cur has this many instructions */
  /* tw_exec's fast path takes sid when (sid ^ fast_x) < fast_lim: normally fast_x = 0 and
   * fast_lim = the number of statics; in a self-loop run past the end of a full chunk
   * (in_run: a rep string instruction iterating, millions of times for a large memset) only
   * the run's sid (fast_x, fast_lim = 1), as any other instruction ends the chunk. */
  uint32_t fast_x, fast_lim;
  bool in_run;
  size_t mem_at;    /* tw_mem takes its slow path once cur has this many accesses */
  uint64_t chunk_base, chunk_mem_base; /* instructions/accesses of the chunk before cur */
  size_t st_sent;   /* statics already passed to the encoder */
  VEC(tw_static_ent) st;
  wi_map64 pcmap;
  uint64_t n_exec;  /* raw instructions appended */
  bool have_end, copied;
  uint64_t end_pc;
  VEC(tw_kv) meta;
  VEC(tw_obj) objs;
  VEC(tw_reg) regs;
  VEC(tw_sym) syms;
  VEC(tw_lineent) lines;
  tw_enc enc;
  tw_batch *batches; /* TW_NBATCH of them (1 when not threaded) */
  unsigned n_batches;
  /* background compression: full batches in order (head first), free batches */
  bool threaded;
  bool merge_split; /* opts.merge_split */
  pthread_t th;
  pthread_mutex_t mu;
  pthread_cond_t cv_work; /* the worker waits here for batches */
  pthread_cond_t cv_free; /* the producer waits here for a free batch or an idle worker */
  tw_batch *full_head, *full_tail, *free_list;
  unsigned n_full;   /* batches in the full list */
  bool busy;         /* the worker is encoding a batch */
  bool sleeping;     /* the worker waits on cv_work */
  bool waiting;      /* the producer waits on cv_free */
  bool quit;
};

static void tw_misuse(trace_writer *w, const char *msg) {
  if (!w->err.rc) wi_fail(&w->err, WI_EINVAL, "trace %s: %s", w->path, msg);
}

/* Append bytes to the file, hashing them. Errors stick in e->err. */
static void enc_write(tw_enc *e, const void *p, size_t n) {
  if (e->err.rc) return;
  if (n && fwrite(p, 1, n, e->f) != n) {
    wi_fail(&e->err, WI_EIO, "trace %s: write failed: %s", e->path, strerror(errno));
    return;
  }
  wi_hasher_update(&e->hasher, p, n);
  e->off += n;
}

static void enc_grow(tw_enc *e, size_t need) {
  if (need <= e->n_sid) return;
  size_t nc = e->n_sid ? e->n_sid : 1024;
  while (nc < need) nc *= 2;
  e->def = xrealloc(e->def, nc * sizeof *e->def);
  e->count = xrealloc(e->count, nc * sizeof *e->count);
  e->last = xrealloc(e->last, nc * 4 * sizeof *e->last);
  memset(e->def + e->n_sid, 0, (nc - e->n_sid) * sizeof *e->def);
  memset(e->count + e->n_sid, 0, (nc - e->n_sid) * sizeof *e->count);
  memset(e->last + e->n_sid * 4, 0, (nc - e->n_sid) * 4 * sizeof *e->last);
  e->n_sid = nc;
}

static inline uint32_t minfo_size(uint32_t info) { return info & ~TW_STORE; }
static inline uint8_t minfo_store(uint32_t info) { return (uint8_t)(info >> 31); }

static bool def_match(const tw_def *d, const uint32_t *mi, size_t k) {
  if (k != d->n_mem) return false;
  for (size_t j = 0; j < k; j++) {
    size_t s = j < 8 ? j : 7;
    if (minfo_size(mi[j]) != d->size[s] || minfo_store(mi[j]) != ((d->store >> s) & 1)) return false;
  }
  return true;
}

static void def_set(tw_def *d, const uint32_t *mi, size_t k) {
  d->set = 1;
  d->n_mem = (uint8_t)WI_MIN(k, 255);
  d->store = 0;
  for (size_t j = 0; j < k && j < 8; j++) {
    uint32_t size = minfo_size(mi[j]);
    d->size[j] = size <= 255 ? (uint8_t)size : 0;
    if (minfo_store(mi[j])) d->store |= (uint8_t)(1u << j);
  }
}

/* Compress and write the chunk whose streams are complete; records its index entry. */
static void enc_finish_chunk(tw_enc *e) {
  uint64_t n = e->ci;
  e->ci = 0;
  if (e->err.rc || !n) return;
  tr_buf *pl = &e->payload;
  pl->n = 0;
  buf_varint(pl, n);
  buf_varint(pl, e->c_insns);
  buf_varint(pl, e->c_first_pc);
  buf_varint(pl, e->s_run.n);
  buf_varint(pl, e->s_tgt.n);
  buf_varint(pl, e->s_mem.n);
  buf_varint(pl, e->s_exc.n);
  buf_bytes(pl, e->s_run.a, e->s_run.n);
  buf_bytes(pl, e->s_tgt.a, e->s_tgt.n);
  buf_bytes(pl, e->s_mem.a, e->s_mem.n);
  buf_bytes(pl, e->s_exc.a, e->s_exc.n);

  size_t bound = ZSTD_compressBound(pl->n);
  e->frame.n = 0;
  buf_reserve(&e->frame, bound);
  size_t zn = ZSTD_compress2(e->cctx, e->frame.a, bound, pl->a, pl->n);
  if (ZSTD_isError(zn)) {
    wi_fail(&e->err, WI_EIO, "trace %s: chunk compression failed: %s", e->path, ZSTD_getErrorName(zn));
    return;
  }
  tr_cidx ci = {.pub = {.offset = e->off,
                        .bytes = zn,
                        .first_raw = e->n_raw,
                        .first_insn = e->n_insns,
                        .n_raw = (uint32_t)n,
                        .n_insns = (uint32_t)e->c_insns,
                        .first_pc = e->c_first_pc},
                .ubytes = pl->n,
                .hash = wi_hash64(e->frame.a, zn, 0)};
  enc_write(e, e->frame.a, zn);
  VEC_PUSH(e->chunks, ci);
  e->n_raw += n;
  e->n_insns += e->c_insns;
}

/* The accesses of instruction ci differ from its static default: write an exception. Returns
 * false (error set) on too many accesses. */
static __attribute__((noinline)) bool enc_exception(tw_enc *e, uint64_t ci, uint64_t *prev_exc, const uint32_t *mi,
                                                    size_t k, uint64_t pc) {
  if (k > TR_MAX_ACCESSES) {
    wi_fail(&e->err, WI_EINVAL, "trace %s: more than %u accesses in one instruction (pc 0x%llx)", e->path,
            TR_MAX_ACCESSES, (unsigned long long)pc);
    return false;
  }
  buf_varint(&e->s_exc, ci - *prev_exc - 1); /* UINT64_MAX + 1 wraps to 0 */
  buf_varint(&e->s_exc, k);
  for (size_t j = 0; j < k; j++) {
    uint32_t size = minfo_size(mi[j]);
    uint8_t stb = minfo_store(mi[j]) ? 0x80 : 0;
    if (size < 127) {
      buf_u8(&e->s_exc, (uint8_t)(stb | size));
    } else {
      buf_u8(&e->s_exc, (uint8_t)(stb | 127));
      buf_varint(&e->s_exc, size);
    }
  }
  *prev_exc = ci;
  return true;
}

/* Encode one batch into the current chunk's streams; finishes the chunk at its end. */
static void enc_batch(tw_enc *e, const tw_batch *b) {
  for (size_t i = 0; i < b->new_st.n; i++) VEC_PUSH(e->st, b->new_st.a[i]);
  if (e->err.rc || !b->n) return;
  tw_est sentinel = {.pc = b->next_pc}; /* at index st.n, the batch's sid[n] */
  VEC_PUSH(e->st, sentinel);
  e->st.n--;
  enc_grow(e, e->st.n);
  if (e->ci == 0) { /* a new chunk: everything restarts */
    memset(e->last, 0, e->n_sid * 4 * sizeof *e->last);
    e->sp_top = e->sp_n = 0;
    e->s_run.n = e->s_tgt.n = e->s_mem.n = e->s_exc.n = 0;
    e->prev_disc = e->prev_exc = UINT64_MAX;
    e->c_insns = 0;
    e->c_first_pc = e->st.a[b->sid[0] & TW_MAX_SID].pc;
  }
  /* worst case 10 bytes per varint: reserve once, then write through local pointers */
  buf_reserve(&e->s_run, b->n * 10);
  buf_reserve(&e->s_tgt, b->n * 10);
  buf_reserve(&e->s_mem, b->n_mem * 10);
  uint8_t *o_run = e->s_run.a + e->s_run.n, *o_tgt = e->s_tgt.a + e->s_tgt.n, *o_mem = e->s_mem.a + e->s_mem.n;
  uint64_t *lastv = e->last, *count = e->count;
  tw_def *defs = e->def;
  const tw_est *st = e->st.a;
  uint64_t prev_disc = e->prev_disc, prev_exc = e->prev_exc, n_insns = e->c_insns, ci = e->ci;
  size_t n = b->n;

  const uint32_t *sids = b->sid, *mstart = b->mstart;
  uint32_t word = sids[0];
  const tw_est *s = &st[word & TW_MAX_SID];
  size_t m0 = mstart[0];
  for (size_t i = 0; i < n; i++, ci++) {
    /* the successor's entry (the sentinel after the last) is the next iteration's own */
    uint32_t sid = word & TW_MAX_SID, nword = sids[i + 1];
    const tw_est *ns = &st[nword & TW_MAX_SID];
    uint64_t next = ns->pc;
    size_t mend = mstart[i + 1];
    const uint64_t *ma = b->maddr + m0;
    const uint32_t *mi = b->minfo + m0;
    size_t k = mend - m0;
    tw_def *d = &defs[sid];
    count[sid]++;
    if (__builtin_expect(!(k == d->n_mem && k <= 1 && d->set &&
                           (!k || (minfo_size(mi[0]) == d->size[0] && minfo_store(mi[0]) == (d->store & 1)))),
                         0)) {
      /* not the plain default: the general check */
      if (!d->set) {
        if (k > TR_MAX_ACCESSES) {
          enc_exception(e, ci, &prev_exc, mi, k, s->pc);
          return;
        }
        def_set(d, mi, k);
      }
      if (!def_match(d, mi, k) && !enc_exception(e, ci, &prev_exc, mi, k, s->pc)) return;
    }
    if (k) {
      uint64_t *last = lastv + (size_t)sid * 4, prev = 0;
      for (size_t j = 0; j < k; j++) {
        uint64_t base = j < 4 ? last[j] : prev;
        o_mem = varint_put(o_mem, zigzag_enc((int64_t)(ma[j] - base)));
        if (j < 4) last[j] = ma[j];
        prev = ma[j];
      }
    }
    uint64_t ft = s->pc + est_len(s);
    unsigned async = word >> 31;
    unsigned kind = est_kind(s);
    if (next != ft || async) {
      o_run = varint_put(o_run, (ci - prev_disc - 1) << 1 | async);
      uint64_t base = ft;
      if (!async && kind == TK_RET && e->sp_n) {
        e->sp_n--;
        e->sp_top = (e->sp_top - 1) & (TR_STACK - 1);
        base = e->stack[e->sp_top];
      }
      o_tgt = varint_put(o_tgt, zigzag_enc((int64_t)(next - base)));
      if (!async && kind == TK_CALL) {
        e->stack[e->sp_top] = ft;
        e->sp_top = (e->sp_top + 1) & (TR_STACK - 1);
        if (e->sp_n < TR_STACK) e->sp_n++;
      }
      prev_disc = ci;
    }
    bool self = next == s->pc && !async && kind == TK_REP;
    if (!self || (i + 1 == n && b->chunk_end)) n_insns++;
    word = nword;
    s = ns;
    m0 = mend;
  }
  e->s_run.n = (size_t)(o_run - e->s_run.a);
  e->s_tgt.n = (size_t)(o_tgt - e->s_tgt.a);
  e->s_mem.n = (size_t)(o_mem - e->s_mem.a);
  e->prev_disc = prev_disc;
  e->prev_exc = prev_exc;
  e->c_insns = n_insns;
  e->ci = ci;
  if (b->chunk_end) enc_finish_chunk(e);
}

static void *tw_worker(void *arg) {
  trace_writer *w = arg;
  pthread_mutex_lock(&w->mu);
  for (;;) {
    while (!w->full_head && !w->quit) {
      w->sleeping = true;
      pthread_cond_wait(&w->cv_work, &w->mu);
      w->sleeping = false;
    }
    tw_batch *b = w->full_head;
    if (!b) break;
    w->full_head = b->link;
    if (!w->full_head) w->full_tail = NULL;
    w->n_full--;
    w->busy = true;
    pthread_mutex_unlock(&w->mu);
    enc_batch(&w->enc, b);
    pthread_mutex_lock(&w->mu);
    w->busy = false;
    b->link = w->free_list;
    w->free_list = b;
    if (w->waiting) pthread_cond_signal(&w->cv_free);
  }
  pthread_mutex_unlock(&w->mu);
  return NULL;
}

/* With w->mu held: wake the worker if it sleeps and has work. */
static void tw_kick(trace_writer *w) {
  if (w->sleeping && (w->full_head || w->quit)) pthread_cond_signal(&w->cv_work);
}

/* Wait until the worker has encoded every batch handed over (threaded mode). */
static void tw_wait_idle(trace_writer *w) {
  if (!w->threaded) return;
  pthread_mutex_lock(&w->mu);
  while (w->full_head || w->busy) {
    tw_kick(w);
    w->waiting = true;
    pthread_cond_wait(&w->cv_free, &w->mu);
    w->waiting = false;
  }
  pthread_mutex_unlock(&w->mu);
}

/* Where the fast paths of tw_exec/tw_mem must next stop for the batch cur. */
static void tw_limits(trace_writer *w) {
  tw_batch *b = w->cur;
  size_t at = TW_BATCH_INSNS;
  uint64_t cn = w->chunk_base + b->n;
  w->in_run = false;
  if (cn >= w->chunk_insns) {
    /* The chunk is full: it ends before the next instruction unless that one continues a
     * self-loop run of the last one (tw_exec_slow decides; the fast path lets only the
     * run's sid through). */
    uint32_t lw = b->n ? b->sid[b->n - 1] : TW_ASYNC;
    if (!(lw & TW_ASYNC) && w->st.a[lw & TW_MAX_SID].kind == TK_REP && cn < TR_HARD_CAP) {
      w->in_run = true;
      w->fast_x = lw & TW_MAX_SID;
      w->fast_lim = 1;
      if (TR_HARD_CAP - w->chunk_base < at) at = (size_t)(TR_HARD_CAP - w->chunk_base);
    } else {
      at = b->n;
    }
  } else if (w->chunk_insns - w->chunk_base < at) {
    at = (size_t)(w->chunk_insns - w->chunk_base);
  }
  if (!w->in_run) {
    w->fast_x = 0;
    w->fast_lim = (uint32_t)w->st.n;
  }
  w->flush_at = w->copied ? 0 : at;
  size_t mat = WI_MIN(b->cap_mem, (size_t)TW_BATCH_MEMS);
  /* the forced split after TR_MEM_CAP accesses in one chunk is decided at the next tw_exec */
  if (w->chunk_mem_base + mat > TR_MEM_CAP)
    mat = w->chunk_mem_base >= TR_MEM_CAP ? 0 : (size_t)(TR_MEM_CAP - w->chunk_mem_base);
  if (b->n_mem >= mat) w->flush_at = 0;
  w->mem_at = WI_MAX(mat, b->n_mem);
  if (w->mem_at > b->cap_mem || b->n_mem >= w->mem_at) w->mem_at = b->cap_mem;
}

/* Hand the batch being filled (successor next_pc; chunk_end: the chunk ends with it) to the
 * encoder and start an empty one. */
static void tw_handoff(trace_writer *w, uint64_t next_pc, bool chunk_end) {
  tw_batch *b = w->cur;
  b->next_pc = next_pc;
  b->chunk_end = chunk_end;
  b->new_st.n = 0;
  for (size_t i = w->st_sent; i < w->st.n; i++) {
    tw_est s = {w->st.a[i].pc, w->st.a[i].meta};
    VEC_PUSH(b->new_st, s);
  }
  w->st_sent = w->st.n;
  /* Sentinels after the last instruction: its successor is the encoder's static slot just
   * past the table (which enc_batch fills with next_pc), its accesses end at n_mem. */
  b->sid[b->n] = (uint32_t)w->st_sent;
  b->mstart[b->n] = (uint32_t)b->n_mem;
  if (chunk_end) {
    w->chunk_base = w->chunk_mem_base = 0;
  } else {
    w->chunk_base += b->n;
    w->chunk_mem_base += b->n_mem;
  }
  if (w->threaded) {
    pthread_mutex_lock(&w->mu);
    b->link = NULL;
    if (w->full_tail) w->full_tail->link = b;
    else w->full_head = b;
    w->full_tail = b;
    w->n_full++;
    if (w->n_full >= TW_WAKE_AT) tw_kick(w);
    while (!w->free_list) {
      tw_kick(w);
      w->waiting = true;
      pthread_cond_wait(&w->cv_free, &w->mu);
      w->waiting = false;
    }
    b = w->free_list;
    w->free_list = b->link;
    pthread_mutex_unlock(&w->mu);
  } else {
    enc_batch(&w->enc, b);
  }
  b->n = 0;
  b->n_mem = 0;
  w->cur = b;
  tw_limits(w);
}

trace_writer *tw_open(const char *path, const trace_writer_opts *opts, wi_err *err) {
  FILE *f = fopen(path, "wb");
  if (!f) {
    wi_fail(err, WI_EIO, "trace %s: cannot create: %s", path, strerror(errno));
    return NULL;
  }
  trace_writer *w = xcalloc(1, sizeof *w);
  w->path = xstrdup(path);
  w->chunk_insns = opts && opts->chunk_insns ? opts->chunk_insns : TRACE_DEFAULT_CHUNK;
  if (w->chunk_insns > TR_HARD_CAP) w->chunk_insns = TR_HARD_CAP;
  map64_init(&w->pcmap, 1024);
  tw_enc *e = &w->enc;
  e->f = f;
  e->path = w->path;
  e->level = opts && opts->zstd_level ? opts->zstd_level : 3;
  e->cctx = ZSTD_createCCtx();
  ZSTD_CCtx_setParameter(e->cctx, ZSTD_c_compressionLevel, e->level);
  ZSTD_CCtx_setParameter(e->cctx, ZSTD_c_checksumFlag, 1);
  ZSTD_CCtx_setParameter(e->cctx, ZSTD_c_contentSizeFlag, 1);
  wi_hasher_init(&e->hasher, 0);
  uint8_t zero[TR_HDR_BYTES] = {0};
  if (fwrite(zero, 1, sizeof zero, f) != sizeof zero)
    wi_fail(&e->err, WI_EIO, "trace %s: write failed: %s", path, strerror(errno));
  e->off = TR_HDR_BYTES;
  w->merge_split = opts && opts->merge_split;
  if (opts && opts->threaded) {
    pthread_mutex_init(&w->mu, NULL);
    pthread_cond_init(&w->cv_work, NULL);
    pthread_cond_init(&w->cv_free, NULL);
    w->threaded = true;
  }
  w->n_batches = w->threaded ? TW_NBATCH : 1;
  w->batches = xcalloc(w->n_batches, sizeof *w->batches);
  for (unsigned i = 0; i < w->n_batches; i++) {
    /* room for a full batch up front: tw_exec never reallocates */
    tw_batch *b = &w->batches[i];
    b->sid = xmalloc((TW_BATCH_INSNS + 1) * sizeof *b->sid);
    b->mstart = xmalloc((TW_BATCH_INSNS + 1) * sizeof *b->mstart);
    b->cap_mem = TW_BATCH_MEMS;
    b->maddr = xmalloc(b->cap_mem * sizeof *b->maddr);
    b->minfo = xmalloc(b->cap_mem * sizeof *b->minfo);
    if (i) {
      b->link = w->free_list;
      w->free_list = b;
    }
  }
  w->cur = &w->batches[0];
  if (w->threaded && pthread_create(&w->th, NULL, tw_worker, w) != 0) {
    /* no thread: encode inline (the other batches stay unused) */
    pthread_mutex_destroy(&w->mu);
    pthread_cond_destroy(&w->cv_work);
    pthread_cond_destroy(&w->cv_free);
    w->threaded = false;
  }
  tw_limits(w);
  return w;
}

uint32_t tw_static(trace_writer *w, uint64_t pc, uint8_t len, const uint8_t *bytes) {
  uint32_t *v = map64_get(&w->pcmap, pc_key(pc));
  if (v) return *v;
  if (len == 0 || len > 15) {
    tw_misuse(w, "tw_static: instruction length must be 1..15 bytes");
    return TR_NONE;
  }
  if (w->st.n >= TW_MAX_SID) {
    tw_misuse(w, "tw_static: too many distinct instructions");
    return TR_NONE;
  }
  tw_static_ent s = {.pc = pc, .len = len};
  if (bytes) memcpy(s.bytes, bytes, len);
  s.kind = tr_kind(s.bytes, len);
  s.meta = REC_META(len, s.kind);
  uint32_t sid = (uint32_t)w->st.n;
  VEC_PUSH(w->st, s);
  map64_put(&w->pcmap, pc_key(pc), sid);
  if (!w->in_run) w->fast_lim = (uint32_t)w->st.n;
  return sid;
}

/* The rare cases of tw_exec: misuse, the end of a batch or of a chunk (a chunk ends once it
 * is full, unless inside a self-loop run, or at a hard cap). Appends unless misused. */
static __attribute__((noinline)) void tw_exec_slow(trace_writer *w, uint32_t sid) {
  if (sid >= w->st.n || w->copied) {
    tw_misuse(w, w->copied ? "tw_exec after tw_copy_stream" : "tw_exec: unknown static id");
    return;
  }
  const tw_static_ent *s = &w->st.a[sid];
  tw_batch *b = w->cur;
  if (b->n) {
    uint32_t lw = b->sid[b->n - 1];
    const tw_static_ent *ls = &w->st.a[lw & TW_MAX_SID];
    bool self = ls->pc == s->pc && !(lw & TW_ASYNC) && ls->kind == TK_REP;
    uint64_t cn = w->chunk_base + b->n, cm = w->chunk_mem_base + b->n_mem;
    if ((cn >= w->chunk_insns && !self) || cn >= TR_HARD_CAP || cm >= TR_MEM_CAP)
      tw_handoff(w, s->pc, true);
    else if (b->n >= TW_BATCH_INSNS || b->n_mem >= TW_BATCH_MEMS)
      tw_handoff(w, s->pc, false);
    b = w->cur;
  }
  b->sid[b->n] = sid;
  b->mstart[b->n] = (uint32_t)b->n_mem;
  b->n++;
  w->n_exec++;
  tw_limits(w);
}

void tw_exec(trace_writer *w, uint32_t sid) {
  tw_batch *b = w->cur;
  size_t n = b->n;
  if (__builtin_expect((sid ^ w->fast_x) >= w->fast_lim || n >= w->flush_at, 0)) {
    tw_exec_slow(w, sid);
    return;
  }
  /* The batch's lines were last read by the encoder on another core: ask for them ahead
   * (prefetch for writing), or each new line stalls the store. */
  __builtin_prefetch(&b->sid[n + 64], 1);
  __builtin_prefetch(&b->mstart[n + 64], 1);
  b->sid[n] = sid;
  b->mstart[n] = (uint32_t)b->n_mem;
  b->n = n + 1;
  w->n_exec++;
}

static __attribute__((noinline)) void tw_mem_slow(trace_writer *w, uint64_t addr, uint32_t size, bool is_store) {
  tw_batch *b = w->cur;
  if (!b->n) {
    tw_misuse(w, "tw_mem before any tw_exec");
    return;
  }
  if (size & TW_STORE) {
    tw_misuse(w, "tw_mem: access size of 2 GiB or more");
    return;
  }
  if (b->n_mem == b->cap_mem) { /* one instruction with very many accesses: the batch grows */
    b->cap_mem *= 2;
    b->maddr = xrealloc(b->maddr, b->cap_mem * sizeof *b->maddr);
    b->minfo = xrealloc(b->minfo, b->cap_mem * sizeof *b->minfo);
  }
  b->maddr[b->n_mem] = addr;
  b->minfo[b->n_mem] = size | (is_store ? TW_STORE : 0);
  b->n_mem++;
  tw_limits(w); /* full of accesses: the next tw_exec hands the batch over */
}

void tw_mem(trace_writer *w, uint64_t addr, uint32_t size, bool is_store) {
  tw_batch *b = w->cur;
  size_t n = b->n_mem;
  if (__builtin_expect(n >= w->mem_at || !b->n || (size & TW_STORE), 0)) {
    tw_mem_slow(w, addr, size, is_store);
    return;
  }
  if (w->merge_split && n > b->mstart[b->n - 1]) { /* continues this instruction's last access? */
    uint32_t prev = b->minfo[n - 1];
    uint32_t psize = prev & ~(uint32_t)TW_STORE;
    if (b->maddr[n - 1] + psize == addr && ((prev & TW_STORE) != 0) == is_store && psize + size < TW_STORE) {
      b->minfo[n - 1] = prev + size;
      return;
    }
  }
  __builtin_prefetch(&b->maddr[n + 32], 1);
  __builtin_prefetch(&b->minfo[n + 64], 1);
  b->maddr[n] = addr;
  b->minfo[n] = size | (is_store ? TW_STORE : 0);
  b->n_mem = n + 1;
}

void tw_async(trace_writer *w) {
  tw_batch *b = w->cur;
  if (!b->n) {
    tw_misuse(w, "tw_async before any tw_exec");
    return;
  }
  b->sid[b->n - 1] |= TW_ASYNC;
  if (w->in_run) w->fast_lim = 0; /* an async transfer ends the run: decide in the slow path */
}

void tw_end_pc(trace_writer *w, uint64_t pc) {
  if (w->copied) {
    tw_misuse(w, "tw_end_pc after tw_copy_stream");
    return;
  }
  w->have_end = true;
  w->end_pc = pc;
}

void tw_meta(trace_writer *w, const char *key, const char *value) {
  for (size_t i = 0; i < w->meta.n; i++)
    if (!strcmp(w->meta.a[i].k, key)) {
      free(w->meta.a[i].v);
      w->meta.a[i].v = xstrdup(value ? value : "");
      return;
    }
  tw_kv kv = {xstrdup(key), xstrdup(value ? value : "")};
  VEC_PUSH(w->meta, kv);
}

void tw_object(trace_writer *w, const char *path, uint64_t bias, uint64_t lo, uint64_t hi) {
  tw_obj o = {xstrdup(path ? path : ""), bias, lo, hi};
  VEC_PUSH(w->objs, o);
}

void tw_region(trace_writer *w, uint64_t base, const uint8_t *bytes, uint64_t n, const char *name) {
  tw_reg r = {.base = base, .size = n, .bytes = xmalloc(n ? n : 1), .name = xstrdup(name ? name : "")};
  if (n) memcpy(r.bytes, bytes, n);
  VEC_PUSH(w->regs, r);
}

void tw_symbol(trace_writer *w, uint64_t addr, uint64_t size, const char *name, const char *object) {
  tw_sym s = {addr, size, xstrdup(name ? name : ""), object ? xstrdup(object) : NULL};
  VEC_PUSH(w->syms, s);
}

void tw_line(trace_writer *w, uint64_t addr, const char *file, uint32_t line) {
  tw_lineent l = {addr, xstrdup(file ? file : ""), line};
  VEC_PUSH(w->lines, l);
}

uint64_t tw_count(const trace_writer *w) { return w->n_exec; }

static void tw_free(trace_writer *w) {
  if (w->threaded) {
    pthread_mutex_lock(&w->mu); /* the worker drains the batches handed over, then quits */
    w->quit = true;
    pthread_cond_signal(&w->cv_work);
    pthread_mutex_unlock(&w->mu);
    pthread_join(w->th, NULL);
    pthread_mutex_destroy(&w->mu);
    pthread_cond_destroy(&w->cv_work);
    pthread_cond_destroy(&w->cv_free);
    w->threaded = false;
  }
  tw_enc *e = &w->enc;
  if (e->f) fclose(e->f);
  ZSTD_freeCCtx(e->cctx);
  free(e->def);
  free(e->count);
  free(e->last);
  buf_free(&e->s_run);
  buf_free(&e->s_tgt);
  buf_free(&e->s_mem);
  buf_free(&e->s_exc);
  buf_free(&e->payload);
  buf_free(&e->frame);
  VEC_FREE(e->chunks);
  VEC_FREE(e->st);
  for (unsigned i = 0; i < w->n_batches; i++) {
    tw_batch *bt = &w->batches[i];
    free(bt->sid);
    free(bt->mstart);
    free(bt->maddr);
    free(bt->minfo);
    VEC_FREE(bt->new_st);
  }
  free(w->batches);
  VEC_FREE(w->st);
  map64_free(&w->pcmap);
  for (size_t i = 0; i < w->meta.n; i++) {
    free(w->meta.a[i].k);
    free(w->meta.a[i].v);
  }
  VEC_FREE(w->meta);
  for (size_t i = 0; i < w->objs.n; i++) free(w->objs.a[i].path);
  VEC_FREE(w->objs);
  for (size_t i = 0; i < w->regs.n; i++) {
    free(w->regs.a[i].bytes);
    free(w->regs.a[i].name);
  }
  VEC_FREE(w->regs);
  for (size_t i = 0; i < w->syms.n; i++) {
    free(w->syms.a[i].name);
    free(w->syms.a[i].object);
  }
  VEC_FREE(w->syms);
  for (size_t i = 0; i < w->lines.n; i++) free(w->lines.a[i].file);
  VEC_FREE(w->lines);
  free(w->path);
  free(w);
}

void tw_abort(trace_writer *w) {
  if (!w) return;
  char *path = xstrdup(w->path);
  tw_free(w);
  unlink(path);
  free(path);
}

static int sym_cmp(const void *a, const void *b) {
  const tw_sym *x = a, *y = b;
  if (x->addr != y->addr) return x->addr < y->addr ? -1 : 1;
  if (x->size != y->size) return x->size > y->size ? -1 : 1; /* enclosing symbol first */
  int c = strcmp(x->name, y->name);
  if (c) return c;
  return strcmp(x->object ? x->object : "", y->object ? y->object : "");
}

static int line_cmp(const void *a, const void *b) {
  const tw_lineent *x = a, *y = b;
  if (x->addr != y->addr) return x->addr < y->addr ? -1 : 1;
  if (x->line != y->line) return x->line < y->line ? -1 : 1;
  return strcmp(x->file, y->file);
}

static int reg_cmp(const void *a, const void *b) {
  const tw_reg *x = a, *y = b;
  if (x->base != y->base) return x->base < y->base ? -1 : 1;
  return x->size < y->size ? -1 : x->size > y->size;
}

typedef VEC(const char *) strvec;

/* Index of s in a string table (deduplicated through map, keyed by a hash). */
static uint64_t strtab_index(strvec *tab, wi_map64 *map, const char *s) {
  uint64_t key = wi_hash64(s, strlen(s), 0) | 1;
  uint32_t *v = map64_get(map, key);
  if (v && !strcmp(tab->a[*v], s)) return *v;
  uint32_t i = (uint32_t)tab->n;
  VEC_PUSH(*tab, s);
  if (!v) map64_put(map, key, i); /* on a (rare) hash collision the name is just stored twice */
  return i;
}

static void sec_symbols(trace_writer *w, tr_buf *b) {
  if (w->syms.n) qsort(w->syms.a, w->syms.n, sizeof *w->syms.a, sym_cmp);
  strvec tab = {0};
  wi_map64 map;
  map64_init(&map, 64);
  VEC(uint64_t) oidx = {0};
  size_t n = 0;
  for (size_t i = 0; i < w->syms.n; i++) {
    if (i && !sym_cmp(&w->syms.a[i], &w->syms.a[i - 1])) continue; /* exact duplicate */
    uint64_t o = w->syms.a[i].object ? strtab_index(&tab, &map, w->syms.a[i].object) + 1 : 0;
    VEC_PUSH(oidx, o);
    n++;
  }
  buf_varint(b, tab.n);
  for (size_t i = 0; i < tab.n; i++) buf_str(b, tab.a[i]);
  buf_varint(b, n);
  size_t k = 0;
  for (size_t i = 0; i < w->syms.n; i++) {
    if (i && !sym_cmp(&w->syms.a[i], &w->syms.a[i - 1])) continue;
    buf_u64(b, w->syms.a[i].addr);
    buf_varint(b, w->syms.a[i].size);
    buf_str(b, w->syms.a[i].name);
    buf_varint(b, oidx.a[k++]);
  }
  VEC_FREE(oidx);
  VEC_FREE(tab);
  map64_free(&map);
}

static void sec_lines(trace_writer *w, tr_buf *b) {
  if (w->lines.n) qsort(w->lines.a, w->lines.n, sizeof *w->lines.a, line_cmp);
  strvec tab = {0};
  wi_map64 map;
  map64_init(&map, 64);
  VEC(uint64_t) fidx = {0};
  for (size_t i = 0; i < w->lines.n; i++) {
    uint64_t fi = strtab_index(&tab, &map, w->lines.a[i].file);
    VEC_PUSH(fidx, fi);
  }
  buf_varint(b, tab.n);
  for (size_t i = 0; i < tab.n; i++) buf_str(b, tab.a[i]);
  buf_varint(b, w->lines.n);
  uint64_t prev = 0;
  for (size_t i = 0; i < w->lines.n; i++) {
    buf_varint(b, w->lines.a[i].addr - prev);
    prev = w->lines.a[i].addr;
    buf_varint(b, fidx.a[i]);
    buf_varint(b, w->lines.a[i].line);
  }
  VEC_FREE(fidx);
  VEC_FREE(tab);
  map64_free(&map);
}

/* Build section `kind` into b; false with w->enc.err set on failure. */
static bool tw_build_section(trace_writer *w, int kind, tr_buf *b) {
  tw_enc *e = &w->enc;
  switch (kind) {
  case SEC_META:
    buf_varint(b, w->meta.n);
    for (size_t i = 0; i < w->meta.n; i++) {
      buf_str(b, w->meta.a[i].k);
      buf_str(b, w->meta.a[i].v);
    }
    break;
  case SEC_STATIC: {
    /* statics translated but never executed are dropped: chunks refer to PCs, not sids */
    size_t n = 0;
    for (size_t i = 0; i < w->st.n; i++) n += i < e->n_sid && e->count[i] > 0;
    buf_varint(b, n);
    for (size_t i = 0; i < w->st.n; i++) {
      if (i >= e->n_sid || !e->count[i]) continue;
      const tw_static_ent *s = &w->st.a[i];
      const tw_def *d = &e->def[i];
      buf_u64(b, s->pc);
      buf_varint(b, e->count[i]);
      buf_u8(b, s->len);
      buf_bytes(b, s->bytes, s->len);
      buf_u8(b, d->n_mem);
      buf_u8(b, d->store);
      buf_bytes(b, d->size, WI_MIN(d->n_mem, 8));
    }
    break;
  }
  case SEC_OBJECTS:
    buf_varint(b, w->objs.n);
    for (size_t i = 0; i < w->objs.n; i++) {
      buf_str(b, w->objs.a[i].path);
      buf_u64(b, w->objs.a[i].bias);
      buf_u64(b, w->objs.a[i].lo);
      buf_u64(b, w->objs.a[i].hi);
    }
    break;
  case SEC_REGIONS:
    if (w->regs.n) qsort(w->regs.a, w->regs.n, sizeof *w->regs.a, reg_cmp);
    buf_varint(b, w->regs.n);
    for (size_t i = 0; i < w->regs.n; i++) {
      const tw_reg *r = &w->regs.a[i];
      buf_u64(b, r->base);
      buf_u64(b, r->size);
      buf_str(b, r->name);
      size_t bound = ZSTD_compressBound(r->size);
      uint8_t *z = xmalloc(bound);
      size_t zn = ZSTD_compress(z, bound, r->bytes, r->size, e->level);
      if (ZSTD_isError(zn)) {
        free(z);
        wi_fail(&e->err, WI_EIO, "trace %s: region compression failed: %s", w->path, ZSTD_getErrorName(zn));
        return false;
      }
      buf_varint(b, zn);
      buf_bytes(b, z, zn);
      free(z);
    }
    break;
  case SEC_SYMBOLS: sec_symbols(w, b); break;
  case SEC_LINES: sec_lines(w, b); break;
  case SEC_CHUNKS:
    buf_u64(b, e->n_raw);
    buf_u64(b, e->n_insns);
    buf_u64(b, w->end_pc);
    buf_u64(b, e->chunks.n);
    for (size_t i = 0; i < e->chunks.n; i++) {
      const tr_cidx *c = &e->chunks.a[i];
      buf_u64(b, c->pub.offset);
      buf_u64(b, c->pub.bytes);
      buf_u64(b, c->pub.first_raw);
      buf_u64(b, c->pub.first_insn);
      buf_u64(b, c->pub.first_pc);
      buf_u64(b, c->ubytes);
      buf_u64(b, c->hash);
      buf_u32(b, c->pub.n_raw);
      buf_u32(b, c->pub.n_insns);
    }
    break;
  default: break;
  }
  return true;
}

wi_rc tw_close(trace_writer *w, wi_err *err) {
  if (!w) return wi_fail(err, WI_EINVAL, "tw_close: no writer");
  tw_enc *e = &w->enc;
  if (!w->copied && w->cur->n) {
    if (!w->have_end) {
      const tw_static_ent *ls = &w->st.a[w->cur->sid[w->cur->n - 1] & TW_MAX_SID];
      w->end_pc = ls->pc + ls->len;
    }
    tw_handoff(w, w->end_pc, true);
  }
  tw_wait_idle(w);
  wi_rc rc = WI_OK;
  if (w->err.rc) {
    *err = w->err;
    rc = w->err.rc;
    goto fail;
  }
  uint8_t dir[TR_DIRENT_BYTES * (SEC_NUM - 1)];
  tr_buf b = {0};
  for (int k = 1; k < SEC_NUM; k++) {
    b.n = 0;
    if (!tw_build_section(w, k, &b)) break;
    uint8_t *d = dir + TR_DIRENT_BYTES * (k - 1);
    put_u32(d, (uint32_t)k);
    put_u32(d + 4, 0);
    put_u64(d + 8, e->off);
    put_u64(d + 16, b.n);
    put_u64(d + 24, wi_hash64(b.a, b.n, 0));
    enc_write(e, b.a, b.n);
  }
  buf_free(&b);
  uint64_t dir_off = e->off;
  enc_write(e, dir, sizeof dir);
  if (e->err.rc) {
    *err = e->err;
    rc = e->err.rc;
    goto fail;
  }
  uint8_t h[TR_HDR_BYTES] = {0};
  memcpy(h, TRACE_MAGIC, 8);
  put_u32(h + 8, TRACE_VERSION);
  put_u32(h + 12, 0);
  put_u64(h + 16, dir_off);
  put_u64(h + 24, sizeof dir);
  put_u64(h + 32, wi_hash64(dir, sizeof dir, 0));
  put_u64(h + 40, wi_hasher_digest(&e->hasher));
  put_u64(h + 48, e->off);
  put_u64(h + 56, wi_hash64(h, 56, 0));
  if (fseek(e->f, 0, SEEK_SET) != 0 || fwrite(h, 1, sizeof h, e->f) != sizeof h || fflush(e->f) != 0) {
    rc = wi_fail(err, WI_EIO, "trace %s: write failed: %s", w->path, strerror(errno));
    goto fail;
  }
  int fc = fclose(e->f);
  e->f = NULL;
  if (fc != 0) {
    rc = wi_fail(err, WI_EIO, "trace %s: close failed: %s", w->path, strerror(errno));
    goto fail;
  }
  tw_free(w);
  return WI_OK;
fail:
  tw_abort(w);
  return rc;
}

/* ==== reader ================================================================================ */

/* Per-sid record for the cursor's hot loop. */
typedef struct tr_sfast {
  trace_insn tmpl;   /* the record of a plain fall-through execution (rep 1, no flags,
                        default access count), copied whole by the fast path */
  uint64_t mword[4]; /* bytes 8..15 of the default trace_mem of slots 0..3 (size, is_store) */
  uint64_t pc;
  uint32_t next_seq; /* sid of pc + len, TR_NONE if that PC never executed */
  uint8_t len, kind, n_mem, mem_store;
  uint8_t mem_size[8];
  const struct tr_sfast *next; /* &sf[next_seq], NULL if none: the fast path chases it */
} tr_sfast;                    /* 96 bytes */

/* Bytes 8..15 of a trace_mem (size, is_store, zero padding) as one little-endian word. */
static inline uint64_t mem_word(uint32_t size, unsigned is_store) { return size | (uint64_t)(is_store & 1) << 32; }

typedef struct tr_kv {
  const char *k, *v;
} tr_kv;

struct trace {
  char *path;
  const uint8_t *map;
  size_t size;
  trace_info info;
  wi_arena *arena;
  tr_kv *meta;
  size_t n_meta;
  trace_static *st;
  tr_sfast *sf;
  dec_insn *dec;
  wi_map64 pcmap;
  trace_object *objs;
  size_t n_objs;
  trace_region *regs;
  size_t n_regs;
  trace_sym *syms;
  uint64_t *sym_maxend; /* max(addr + size) over syms[0..i] */
  size_t n_syms;
  uint64_t *line_addr;
  uint32_t *line_file, *line_no;
  const char **files;
  size_t n_lines, n_files;
  tr_cidx *chunks;
};

/* Bounds-checked section reader. */
typedef struct tr_rd {
  const uint8_t *base, *p, *end;
  uint64_t off0; /* file offset of base */
  const char *sec, *path;
  wi_err *err;
  bool bad;
} tr_rd;

static bool rd_fail(tr_rd *r, const char *what) {
  if (!r->bad)
    wi_fail(r->err, WI_ECORRUPT, "trace %s: %s at offset %llu: %s", r->path, r->sec,
            (unsigned long long)(r->off0 + (uint64_t)(r->p - r->base)), what);
  r->bad = true;
  r->p = r->end;
  return false;
}
static uint64_t rd_varint(tr_rd *r) {
  uint64_t v = 0;
  if (!r->bad && !varint_get(&r->p, r->end, &v)) rd_fail(r, "truncated or overlong varint");
  return v;
}
static const uint8_t *rd_bytes(tr_rd *r, uint64_t n) {
  if (r->bad) return NULL;
  if (n > (uint64_t)(r->end - r->p)) {
    rd_fail(r, "field runs past the end of the section");
    return NULL;
  }
  const uint8_t *p = r->p;
  r->p += n;
  return p;
}
static uint64_t rd_u64(tr_rd *r) {
  const uint8_t *p = rd_bytes(r, 8);
  return p ? get_u64(p) : 0;
}
static uint32_t rd_u32(tr_rd *r) {
  const uint8_t *p = rd_bytes(r, 4);
  return p ? get_u32(p) : 0;
}
static uint8_t rd_u8(tr_rd *r) {
  const uint8_t *p = rd_bytes(r, 1);
  return p ? *p : 0;
}
static const char *rd_str(tr_rd *r, wi_arena *a) {
  uint64_t n = rd_varint(r);
  const uint8_t *p = rd_bytes(r, n);
  if (!p) return "";
  char *s = arena_alloc(a, (size_t)n + 1);
  memcpy(s, p, (size_t)n);
  return s;
}
/* An entry count; entries take at least min_bytes each, which bounds it by the section. */
static size_t rd_count(tr_rd *r, size_t min_bytes) {
  uint64_t n = rd_varint(r);
  if (!r->bad && n > (uint64_t)(r->end - r->p) / min_bytes) {
    rd_fail(r, "entry count exceeds the section size");
    return 0;
  }
  return (size_t)n;
}
static bool rd_done(tr_rd *r) {
  if (!r->bad && r->p != r->end) rd_fail(r, "trailing bytes after the last entry");
  return !r->bad;
}

static wi_rc tr_corrupt(wi_err *err, const trace_t *t, const char *sec, uint64_t off, const char *what) {
  return wi_fail(err, WI_ECORRUPT, "trace %s: %s at offset %llu: %s", t->path, sec, (unsigned long long)off, what);
}

static bool parse_meta(trace_t *t, tr_rd *r) {
  t->n_meta = rd_count(r, 2);
  t->meta = arena_alloc(t->arena, (t->n_meta + 1) * sizeof *t->meta);
  for (size_t i = 0; i < t->n_meta && !r->bad; i++) {
    t->meta[i].k = rd_str(r, t->arena);
    t->meta[i].v = rd_str(r, t->arena);
  }
  return rd_done(r);
}

static bool parse_static(trace_t *t, tr_rd *r) {
  size_t n = rd_count(r, 12);
  if (n >= TR_NONE) return rd_fail(r, "too many static entries");
  t->info.n_static = (uint32_t)n;
  t->st = xcalloc(n + 1, sizeof *t->st);
  t->sf = xcalloc(n + 1, sizeof *t->sf);
  map64_init(&t->pcmap, n * 2 + 16);
  for (size_t i = 0; i < n && !r->bad; i++) {
    trace_static *s = &t->st[i];
    const uint8_t *at = r->p;
    s->pc = rd_u64(r);
    s->count = rd_varint(r);
    s->len = rd_u8(r);
    if (!r->bad && (s->len == 0 || s->len > 15)) return rd_fail(r, "instruction length not in 1..15");
    const uint8_t *bytes = rd_bytes(r, s->len);
    if (bytes) memcpy(s->bytes, bytes, s->len);
    s->n_mem = rd_u8(r);
    s->mem_store = rd_u8(r);
    const uint8_t *sz = rd_bytes(r, WI_MIN(s->n_mem, 8));
    if (sz) memcpy(s->mem_size, sz, WI_MIN(s->n_mem, 8));
    if (r->bad) break;
    if (!s->count) {
      r->p = at;
      return rd_fail(r, "static entry with zero executions");
    }
    if (map64_get(&t->pcmap, pc_key(s->pc))) {
      r->p = at;
      return rd_fail(r, "duplicate static PC");
    }
    map64_put(&t->pcmap, pc_key(s->pc), (uint32_t)i);
    tr_sfast *f = &t->sf[i];
    f->pc = s->pc;
    f->len = s->len;
    f->kind = tr_kind(s->bytes, s->len);
    f->n_mem = s->n_mem;
    f->mem_store = s->mem_store;
    memcpy(f->mem_size, s->mem_size, 8);
    for (unsigned j = 0; j < 4; j++) f->mword[j] = mem_word(s->mem_size[j], s->mem_store >> j);
    f->tmpl = (trace_insn){.pc = s->pc, .next_pc = s->pc + s->len, .sid = (uint32_t)i, .rep = 1,
                           .n_mem = s->n_mem, .len = s->len};
  }
  if (!rd_done(r)) return false;
  for (size_t i = 0; i < n; i++) {
    uint32_t *v = map64_get(&t->pcmap, pc_key(t->sf[i].pc + t->sf[i].len));
    t->sf[i].next_seq = v ? *v : TR_NONE;
    t->sf[i].next = v ? &t->sf[*v] : NULL;
  }
  return true;
}

static bool parse_objects(trace_t *t, tr_rd *r) {
  t->n_objs = rd_count(r, 25);
  t->objs = arena_alloc(t->arena, (t->n_objs + 1) * sizeof *t->objs);
  for (size_t i = 0; i < t->n_objs && !r->bad; i++) {
    t->objs[i].path = rd_str(r, t->arena);
    t->objs[i].bias = rd_u64(r);
    t->objs[i].lo = rd_u64(r);
    t->objs[i].hi = rd_u64(r);
  }
  return rd_done(r);
}

static bool parse_regions(trace_t *t, tr_rd *r) {
  t->n_regs = rd_count(r, 19);
  t->regs = xcalloc(t->n_regs + 1, sizeof *t->regs);
  for (size_t i = 0; i < t->n_regs && !r->bad; i++) {
    trace_region *g = &t->regs[i];
    const uint8_t *at = r->p;
    g->base = rd_u64(r);
    g->size = rd_u64(r);
    g->name = rd_str(r, t->arena);
    uint64_t zn = rd_varint(r);
    const uint8_t *z = rd_bytes(r, zn);
    if (!z) break;
    unsigned long long fs = ZSTD_getFrameContentSize(z, (size_t)zn);
    if (fs != g->size || g->size > ((uint64_t)1 << 32) || g->base + g->size < g->base) {
      r->p = at;
      return rd_fail(r, "region size does not match its compressed bytes");
    }
    if (i && g->base < t->regs[i - 1].base) {
      r->p = at;
      return rd_fail(r, "regions not sorted by address");
    }
    uint8_t *bytes = xmalloc(g->size ? (size_t)g->size : 1);
    size_t got = ZSTD_decompress(bytes, (size_t)g->size, z, (size_t)zn);
    g->bytes = bytes;
    if (ZSTD_isError(got) || got != g->size) {
      r->p = at;
      return rd_fail(r, "region bytes do not decompress");
    }
  }
  return rd_done(r);
}

static bool parse_symbols(trace_t *t, tr_rd *r) {
  size_t n_obj = rd_count(r, 1);
  const char **objs = xcalloc(n_obj + 1, sizeof *objs);
  for (size_t i = 0; i < n_obj && !r->bad; i++) objs[i] = rd_str(r, t->arena);
  t->n_syms = rd_count(r, 11);
  t->syms = xcalloc(t->n_syms + 1, sizeof *t->syms);
  t->sym_maxend = xcalloc(t->n_syms + 1, sizeof *t->sym_maxend);
  for (size_t i = 0; i < t->n_syms && !r->bad; i++) {
    trace_sym *s = &t->syms[i];
    const uint8_t *at = r->p;
    s->addr = rd_u64(r);
    s->size = rd_varint(r);
    s->name = rd_str(r, t->arena);
    uint64_t o = rd_varint(r);
    if (r->bad) break;
    if (o > n_obj || (i && s->addr < t->syms[i - 1].addr)) {
      r->p = at;
      free(objs);
      return rd_fail(r, o > n_obj ? "symbol object index out of range" : "symbols not sorted by address");
    }
    s->object = o ? objs[o - 1] : NULL;
    uint64_t end = s->addr + s->size < s->addr ? UINT64_MAX : s->addr + s->size;
    t->sym_maxend[i] = i ? WI_MAX(t->sym_maxend[i - 1], end) : end;
  }
  free(objs);
  return rd_done(r);
}

static bool parse_lines(trace_t *t, tr_rd *r) {
  t->n_files = rd_count(r, 1);
  t->files = arena_alloc(t->arena, (t->n_files + 1) * sizeof *t->files);
  for (size_t i = 0; i < t->n_files && !r->bad; i++) t->files[i] = rd_str(r, t->arena);
  t->n_lines = rd_count(r, 3);
  t->line_addr = xmalloc((t->n_lines + 1) * sizeof *t->line_addr);
  t->line_file = xmalloc((t->n_lines + 1) * sizeof *t->line_file);
  t->line_no = xmalloc((t->n_lines + 1) * sizeof *t->line_no);
  uint64_t addr = 0;
  for (size_t i = 0; i < t->n_lines && !r->bad; i++) {
    const uint8_t *at = r->p;
    uint64_t d = rd_varint(r), f = rd_varint(r), l = rd_varint(r);
    if (r->bad) break;
    if (f >= t->n_files || l > UINT32_MAX || addr + d < addr) {
      r->p = at;
      return rd_fail(r, "bad line entry");
    }
    addr += d;
    t->line_addr[i] = addr;
    t->line_file[i] = (uint32_t)f;
    t->line_no[i] = (uint32_t)l;
  }
  return rd_done(r);
}

static bool parse_chunks(trace_t *t, tr_rd *r, uint64_t data_end) {
  if ((uint64_t)(r->end - r->p) < TR_CIDX_HEAD) return rd_fail(r, "chunk index shorter than its header");
  t->info.n_raw = rd_u64(r);
  t->info.n_insns = rd_u64(r);
  t->info.end_pc = rd_u64(r);
  uint64_t n = rd_u64(r);
  if (n != (uint64_t)(r->end - r->p) / TR_CIDX_BYTES || (uint64_t)(r->end - r->p) % TR_CIDX_BYTES) {
    r->p -= 8;
    return rd_fail(r, "chunk count does not match the section size");
  }
  t->info.n_chunks = (uint32_t)n;
  t->chunks = xcalloc(n + 1, sizeof *t->chunks);
  uint64_t off = TR_HDR_BYTES, raw = 0, ins = 0;
  for (uint64_t i = 0; i < n; i++) {
    tr_cidx *c = &t->chunks[i];
    const uint8_t *at = r->p;
    c->pub.offset = rd_u64(r);
    c->pub.bytes = rd_u64(r);
    c->pub.first_raw = rd_u64(r);
    c->pub.first_insn = rd_u64(r);
    c->pub.first_pc = rd_u64(r);
    c->ubytes = rd_u64(r);
    c->hash = rd_u64(r);
    c->pub.n_raw = rd_u32(r);
    c->pub.n_insns = rd_u32(r);
    const char *what = NULL;
    if (c->pub.offset != off) what = "chunk offset does not follow the previous chunk";
    else if (c->pub.bytes == 0 || c->pub.bytes > data_end - off) what = "chunk extends past the chunk area";
    else if (c->pub.first_raw != raw || c->pub.first_insn != ins) what = "chunk start index inconsistent";
    else if (c->pub.n_raw == 0 || c->pub.n_insns == 0 || c->pub.n_insns > c->pub.n_raw) what = "bad chunk counts";
    else if (c->ubytes > TR_MAX_PAYLOAD) what = "chunk payload size implausible";
    if (what) {
      r->p = at;
      return rd_fail(r, what);
    }
    off += c->pub.bytes;
    raw += c->pub.n_raw;
    ins += c->pub.n_insns;
    t->info.stream_bytes += c->pub.bytes;
  }
  if (raw != t->info.n_raw || ins != t->info.n_insns) {
    r->p = r->base;
    return rd_fail(r, "instruction totals do not match the chunks");
  }
  if (off != data_end) {
    r->p = r->base;
    return rd_fail(r, "chunks do not fill the chunk area");
  }
  return rd_done(r);
}

void trace_close(trace_t *t) {
  if (!t) return;
  if (t->map) munmap((void *)t->map, t->size);
  for (size_t i = 0; t->regs && i < t->n_regs; i++) free((void *)t->regs[i].bytes);
  free(t->regs);
  free(t->st);
  free(t->sf);
  free(t->dec);
  map64_free(&t->pcmap);
  free(t->syms);
  free(t->sym_maxend);
  free(t->line_addr);
  free(t->line_file);
  free(t->line_no);
  free(t->chunks);
  arena_free(t->arena);
  free(t->path);
  free(t);
}

trace_t *trace_open(const char *path, wi_err *err) {
  trace_t *t = xcalloc(1, sizeof *t);
  t->path = xstrdup(path);
  t->arena = arena_new(1 << 16);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    wi_fail(err, WI_EIO, "trace %s: cannot open: %s", path, strerror(errno));
    goto fail;
  }
  struct stat sb;
  if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
    wi_fail(err, WI_EIO, "trace %s: not a regular file", path);
    close(fd);
    goto fail;
  }
  t->size = (size_t)sb.st_size;
  if (t->size < TR_HDR_BYTES) {
    close(fd);
    wi_fail(err, WI_ECORRUPT, "trace %s: header at offset 0: file is %zu bytes, shorter than the %d-byte header",
            path, t->size, TR_HDR_BYTES);
    goto fail;
  }
  void *m = mmap(NULL, t->size, PROT_READ, MAP_PRIVATE, fd, 0);
  close(fd);
  if (m == MAP_FAILED) {
    wi_fail(err, WI_EIO, "trace %s: cannot map: %s", path, strerror(errno));
    goto fail;
  }
  t->map = m;
  const uint8_t *h = t->map;
  if (memcmp(h, TRACE_MAGIC, 8) != 0) {
    tr_corrupt(err, t, "header", 0, "bad magic (not a whatif trace)");
    goto fail;
  }
  if (get_u64(h + 56) != wi_hash64(h, 56, 0)) {
    tr_corrupt(err, t, "header", 56, "header hash mismatch");
    goto fail;
  }
  t->info.version = get_u32(h + 8);
  if (t->info.version > TRACE_VERSION) {
    wi_fail(err, WI_EVERSION, "trace %s: trace format version %u is newer than this whatif supports (%u)", path,
            t->info.version, TRACE_VERSION);
    goto fail;
  }
  if (t->info.version == 0) {
    tr_corrupt(err, t, "header", 8, "format version 0");
    goto fail;
  }
  uint64_t fsize = get_u64(h + 48), dir_off = get_u64(h + 16), dir_size = get_u64(h + 24);
  if (fsize != t->size) {
    char what[128];
    snprintf(what, sizeof what, "file is %zu bytes, header says %llu (truncated?)", t->size, (unsigned long long)fsize);
    tr_corrupt(err, t, "header", 48, what);
    goto fail;
  }
  if (dir_off < TR_HDR_BYTES || dir_off > fsize || dir_size > fsize - dir_off || dir_size % TR_DIRENT_BYTES) {
    tr_corrupt(err, t, "header", 16, "directory out of bounds");
    goto fail;
  }
  if (wi_hash64(h + dir_off, (size_t)dir_size, 0) != get_u64(h + 32)) {
    tr_corrupt(err, t, "directory", dir_off, "directory hash mismatch");
    goto fail;
  }
  t->info.file_bytes = fsize;
  t->info.content_hash = get_u64(h + 40);

  uint64_t sec_off[SEC_NUM] = {0}, sec_size[SEC_NUM] = {0};
  bool have[SEC_NUM] = {false};
  uint64_t data_end = dir_off; /* the chunk area ends at the first section */
  for (uint64_t i = 0; i < dir_size / TR_DIRENT_BYTES; i++) {
    const uint8_t *d = h + dir_off + i * TR_DIRENT_BYTES;
    uint64_t at = dir_off + i * TR_DIRENT_BYTES;
    uint32_t kind = get_u32(d);
    uint64_t off = get_u64(d + 8), size = get_u64(d + 16);
    if (off < TR_HDR_BYTES || off > dir_off || size > dir_off - off) {
      tr_corrupt(err, t, "directory", at, "section out of bounds");
      goto fail;
    }
    if (kind == 0 || kind >= SEC_NUM) continue;
    if (have[kind]) {
      tr_corrupt(err, t, "directory", at, "duplicate section");
      goto fail;
    }
    have[kind] = true;
    sec_off[kind] = off;
    sec_size[kind] = size;
    data_end = WI_MIN(data_end, off);
    if (wi_hash64(h + off, (size_t)size, 0) != get_u64(d + 24)) {
      tr_corrupt(err, t, sec_name[kind], off, "section hash mismatch");
      goto fail;
    }
  }
  for (int k = 1; k < SEC_NUM; k++)
    if (!have[k]) {
      tr_corrupt(err, t, "directory", dir_off, "a required section is missing");
      goto fail;
    }
  typedef bool (*parse_fn)(trace_t *, tr_rd *);
  static const parse_fn parsers[SEC_NUM] = {NULL,          parse_meta,    parse_static, parse_objects,
                                            parse_regions, parse_symbols, parse_lines,  NULL};
  for (int k = 1; k < SEC_NUM; k++) {
    tr_rd r = {.base = h + sec_off[k], .p = h + sec_off[k], .end = h + sec_off[k] + sec_size[k],
               .off0 = sec_off[k], .sec = sec_name[k], .path = path, .err = err};
    bool ok = k == SEC_CHUNKS ? parse_chunks(t, &r, data_end) : parsers[k](t, &r);
    if (!ok) goto fail;
  }
  if (t->info.n_chunks && t->info.n_static == 0) {
    tr_corrupt(err, t, "static table", sec_off[SEC_STATIC], "empty, but the trace has instructions");
    goto fail;
  }
  dec_ctx *dc = dec_new();
  if (!dc) {
    wi_fail(err, WI_EINVAL, "trace %s: cannot create the instruction decoder", path);
    goto fail;
  }
  t->dec = xcalloc(t->info.n_static + 1, sizeof *t->dec);
  for (uint32_t i = 0; i < t->info.n_static; i++)
    dec_decode(dc, t->st[i].bytes, t->st[i].len, t->st[i].pc, &t->dec[i]);
  dec_free(dc);
  return t;
fail:
  trace_close(t);
  return NULL;
}

const trace_info *trace_get_info(const trace_t *t) { return &t->info; }

const char *trace_meta(const trace_t *t, const char *key) {
  for (size_t i = 0; i < t->n_meta; i++)
    if (!strcmp(t->meta[i].k, key)) return t->meta[i].v;
  return NULL;
}
size_t trace_meta_count(const trace_t *t) { return t->n_meta; }
void trace_meta_at(const trace_t *t, size_t i, const char **key, const char **value) {
  *key = i < t->n_meta ? t->meta[i].k : NULL;
  *value = i < t->n_meta ? t->meta[i].v : NULL;
}

const trace_static *trace_static_at(const trace_t *t, uint32_t sid) {
  return sid < t->info.n_static ? &t->st[sid] : NULL;
}
const dec_insn *trace_decoded(const trace_t *t, uint32_t sid) {
  return sid < t->info.n_static ? &t->dec[sid] : NULL;
}
uint32_t trace_sid_of(const trace_t *t, uint64_t pc) {
  uint32_t *v = map64_get(&t->pcmap, pc_key(pc));
  return v ? *v : TR_NONE;
}

size_t trace_n_objects(const trace_t *t) { return t->n_objs; }
const trace_object *trace_object_at(const trace_t *t, size_t i) { return i < t->n_objs ? &t->objs[i] : NULL; }
size_t trace_n_regions(const trace_t *t) { return t->n_regs; }
const trace_region *trace_region_at(const trace_t *t, size_t i) { return i < t->n_regs ? &t->regs[i] : NULL; }

const uint8_t *trace_code_at(const trace_t *t, uint64_t pc, size_t *avail) {
  size_t lo = 0, hi = t->n_regs;
  while (lo < hi) { /* first region with base > pc */
    size_t mid = (lo + hi) / 2;
    if (t->regs[mid].base <= pc) lo = mid + 1;
    else hi = mid;
  }
  for (size_t i = lo; i-- > 0;) { /* regions may overlap; a few steps back at most */
    const trace_region *g = &t->regs[i];
    if (pc - g->base < g->size) {
      *avail = (size_t)(g->size - (pc - g->base));
      return g->bytes + (pc - g->base);
    }
    if (lo - i > 8) break;
  }
  uint32_t sid = trace_sid_of(t, pc);
  if (sid != TR_NONE) {
    *avail = t->st[sid].len;
    return t->st[sid].bytes;
  }
  *avail = 0;
  return NULL;
}

size_t trace_n_syms(const trace_t *t) { return t->n_syms; }
const trace_sym *trace_sym_at(const trace_t *t, size_t i) { return i < t->n_syms ? &t->syms[i] : NULL; }

const trace_sym *trace_sym_lookup(const trace_t *t, uint64_t pc) {
  size_t lo = 0, hi = t->n_syms;
  while (lo < hi) { /* first symbol with addr > pc */
    size_t mid = (lo + hi) / 2;
    if (t->syms[mid].addr <= pc) lo = mid + 1;
    else hi = mid;
  }
  /* innermost (highest-addressed) sized symbol containing pc, else a zero-size label exactly
   * at pc; stop once no earlier symbol reaches pc (bounded scan for pathological overlap) */
  const trace_sym *label = NULL;
  for (size_t i = lo, steps = 0; i-- > 0 && steps < 256; steps++) {
    const trace_sym *s = &t->syms[i];
    if (s->size == 0 && s->addr == pc) {
      if (!label) label = s;
      continue;
    }
    if (t->sym_maxend[i] <= pc) break;
    if (pc - s->addr < s->size) return s;
  }
  return label;
}

bool trace_line_lookup(const trace_t *t, uint64_t pc, const char **file, uint32_t *line) {
  size_t lo = 0, hi = t->n_lines;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (t->line_addr[mid] <= pc) lo = mid + 1;
    else hi = mid;
  }
  if (!lo || t->line_no[lo - 1] == 0) return false; /* line 0: no information past here */
  *file = t->files[t->line_file[lo - 1]];
  *line = t->line_no[lo - 1];
  return true;
}

const trace_chunk *trace_chunk_at(const trace_t *t, uint32_t i) {
  return i < t->info.n_chunks ? &t->chunks[i].pub : NULL;
}

wi_rc trace_verify(const trace_t *t, wi_err *err) {
  if (wi_hash64(t->map + TR_HDR_BYTES, t->size - TR_HDR_BYTES, 0) != t->info.content_hash)
    return tr_corrupt(err, t, "header", 40, "content hash mismatch (file modified or damaged)");
  return WI_OK;
}

/* ==== cursor ================================================================================ */

/* A taken transfer's target: key ~PC (0: none yet; the PC map never holds PC UINT64_MAX, so no
 * real target has key 0) and its static record (NULL: not in the static table). A function of
 * the trace alone, so never invalidated. */
typedef struct tr_tgt {
  uint64_t key;
  const struct tr_sfast *s;
} tr_tgt;

struct trace_cursor {
  const trace_t *t;
  bool raw;
  wi_err err;          /* sticky decode error */
  trace_insn *insns;   /* TR_BATCH */
  trace_mem *mems;
  size_t mcap;
  ZSTD_DCtx *dctx;
  uint8_t *ubuf;
  size_t ucap;
  uint64_t *last;      /* n_static x 4 previous addresses */
  tr_tgt *tgt;         /* n_static: the last taken-transfer target of each sid (fast path) */
  uint64_t stack[TR_STACK];
  unsigned sp_top, sp_n;
  /* position */
  uint32_t next_chunk; /* chunk to load when the current one is exhausted */
  uint32_t chunk;      /* loaded chunk */
  bool loaded;
  uint64_t index;      /* index of the next instruction returned */
  uint64_t ri, rn;     /* raw position within the loaded chunk, raw count */
  uint64_t pc;         /* PC of raw instruction ri */
  uint32_t sid;
  uint64_t chunk_model; /* model instructions ended so far in this chunk */
  uint64_t expect_pc;  /* successor of the previous chunk's last instruction */
  const uint8_t *pr, *er, *pt, *et, *pm, *em, *pe, *ee;
  uint64_t disc_at;    /* chunk-relative raw index of the next discontinuity */
  bool disc_async;
  uint64_t exc_at;     /* chunk-relative raw index of the next exception */
  uint32_t *xsize;     /* sizes and directions of the pending exception's accesses */
  uint8_t *xstore;
  size_t xcap;
  /* rep-run aggregation (model mode) */
  uint64_t *agg_lo, *agg_hi;
  uint8_t *agg_st;
  size_t agg_n, agg_cap;
  uint32_t rep_n;
};

trace_cursor *trace_cursor_new(const trace_t *t, unsigned flags) {
  trace_cursor *c = xcalloc(1, sizeof *c);
  c->t = t;
  c->raw = (flags & TRACE_CUR_RAW) != 0;
  c->insns = xmalloc(TR_BATCH * sizeof *c->insns);
  c->mcap = 4 * TR_BATCH;
  c->mems = xmalloc(c->mcap * sizeof *c->mems);
  c->dctx = ZSTD_createDCtx();
  c->last = xcalloc((size_t)t->info.n_static * 4 + 4, sizeof *c->last);
  c->tgt = xcalloc((size_t)t->info.n_static + 1, sizeof *c->tgt);
  c->xcap = 64;
  c->xsize = xmalloc(c->xcap * sizeof *c->xsize);
  c->xstore = xmalloc(c->xcap);
  c->agg_cap = 8;
  c->agg_lo = xmalloc(c->agg_cap * sizeof *c->agg_lo);
  c->agg_hi = xmalloc(c->agg_cap * sizeof *c->agg_hi);
  c->agg_st = xmalloc(c->agg_cap);
  c->expect_pc = t->info.n_chunks ? t->chunks[0].pub.first_pc : 0;
  return c;
}

void trace_cursor_free(trace_cursor *c) {
  if (!c) return;
  free(c->insns);
  free(c->mems);
  ZSTD_freeDCtx(c->dctx);
  free(c->ubuf);
  free(c->last);
  free(c->tgt);
  free(c->xsize);
  free(c->xstore);
  free(c->agg_lo);
  free(c->agg_hi);
  free(c->agg_st);
  free(c);
}

/* Fail the cursor (sticky) with a chunk-level corruption message. */
static wi_rc cur_bad(trace_cursor *c, wi_err *err, const char *what) {
  const tr_cidx *ci = &c->t->chunks[c->chunk];
  if (!c->err.rc) {
    char sec[48];
    snprintf(sec, sizeof sec, "chunk %u", c->chunk);
    tr_corrupt(&c->err, c->t, sec, ci->pub.offset, what);
  }
  if (err) *err = c->err;
  return c->err.rc;
}

/* Read the next discontinuity header: sets disc_at (UINT64_MAX when there is none). */
static inline bool cur_next_disc(trace_cursor *c, uint64_t after) {
  if (c->pr == c->er) {
    c->disc_at = UINT64_MAX;
    return true;
  }
  uint64_t v;
  if (!varint_get(&c->pr, c->er, &v) || (v >> 1) >= c->rn) return false;
  c->disc_at = after + (v >> 1);
  c->disc_async = v & 1;
  return true;
}

/* Read the next exception's gap: sets exc_at (UINT64_MAX when there is none). */
static inline bool cur_next_exc(trace_cursor *c, uint64_t after) {
  if (c->pe == c->ee) {
    c->exc_at = UINT64_MAX;
    return true;
  }
  uint64_t v;
  if (!varint_get(&c->pe, c->ee, &v) || v >= c->rn) return false;
  c->exc_at = after + v;
  return true;
}

static wi_rc cur_load(trace_cursor *c, uint32_t k, wi_err *err) {
  const trace_t *t = c->t;
  const tr_cidx *ci = &t->chunks[k];
  c->chunk = k;
  c->loaded = false;
  const uint8_t *z = t->map + ci->pub.offset;
  size_t zn = (size_t)ci->pub.bytes;
  if (wi_hash64(z, zn, 0) != ci->hash) return cur_bad(c, err, "chunk hash mismatch");
  if (ZSTD_findFrameCompressedSize(z, zn) != zn) return cur_bad(c, err, "not a single zstd frame");
  if (ZSTD_getFrameContentSize(z, zn) != ci->ubytes) return cur_bad(c, err, "payload size mismatch");
  if (ci->ubytes > c->ucap) {
    free(c->ubuf);
    c->ucap = (size_t)ci->ubytes;
    c->ubuf = xmalloc(c->ucap);
  }
  size_t got = ZSTD_decompressDCtx(c->dctx, c->ubuf, c->ucap, z, zn);
  if (ZSTD_isError(got) || got != ci->ubytes) return cur_bad(c, err, "zstd frame does not decompress");
  const uint8_t *p = c->ubuf, *end = c->ubuf + got;
  uint64_t h[7];
  for (int i = 0; i < 7; i++)
    if (!varint_get(&p, end, &h[i])) return cur_bad(c, err, "payload header truncated");
  if (h[0] != ci->pub.n_raw || h[1] != ci->pub.n_insns || h[2] != ci->pub.first_pc)
    return cur_bad(c, err, "payload header disagrees with the chunk index");
  uint64_t left = (uint64_t)(end - p);
  if (h[3] > left || h[4] > left - h[3] || h[5] > left - h[3] - h[4] || h[6] != left - h[3] - h[4] - h[5])
    return cur_bad(c, err, "stream lengths do not match the payload");
  c->pr = p;
  c->er = c->pt = p + h[3];
  c->et = c->pm = c->pt + h[4];
  c->em = c->pe = c->pm + h[5];
  c->ee = end;
  if (ci->pub.first_pc != c->expect_pc) return cur_bad(c, err, "first PC does not continue the previous chunk");
  c->ri = 0;
  c->rn = ci->pub.n_raw;
  c->chunk_model = 0;
  c->rep_n = 0;
  c->pc = ci->pub.first_pc;
  c->sid = trace_sid_of(t, c->pc);
  if (c->sid == TR_NONE) return cur_bad(c, err, "first PC not in the static table");
  memset(c->last, 0, (size_t)t->info.n_static * 4 * sizeof *c->last);
  c->sp_top = c->sp_n = 0;
  if (!cur_next_disc(c, 0)) return cur_bad(c, err, "control stream corrupt");
  if (!cur_next_exc(c, 0)) return cur_bad(c, err, "exception stream corrupt");
  c->next_chunk = k + 1;
  c->loaded = true;
  return WI_OK;
}

static void cur_grow_mems(trace_cursor *c, size_t need) {
  size_t nc = c->mcap;
  while (nc < need) nc *= 2;
  c->mems = xrealloc(c->mems, nc * sizeof *c->mems);
  c->mcap = nc;
}

/* Merge contiguous same-direction accesses m[0..k) in place; returns the new count. */
static inline size_t merge_accesses(trace_mem *m, size_t k) {
  size_t o = 0;
  for (size_t j = 0; j < k; j++) {
    if (o && m[o - 1].is_store == m[j].is_store && m[o - 1].addr + m[o - 1].size == m[j].addr &&
        (uint64_t)m[o - 1].size + m[j].size <= UINT32_MAX) {
      m[o - 1].size += m[j].size;
    } else {
      m[o++] = m[j];
    }
  }
  return o;
}

/* Default accesses of static s into m[0..k) from the memory stream; false if it runs out. */
static inline __attribute__((always_inline)) bool cur_default_mems(const tr_sfast *s, size_t k, trace_mem *m,
                                                                   uint64_t *last, const uint8_t **pm_io,
                                                                   const uint8_t *em) {
  const uint8_t *pm = *pm_io;
  uint64_t a = 0;
  size_t k4 = k < 4 ? k : 4;
  for (size_t j = 0; j < k4; j++) { /* slots 0..3: delta from this slot's last address */
    uint64_t v;
    if (__builtin_expect(pm < em && *pm < 0x80, 1)) v = *pm++;
    else if (!varint_get(&pm, em, &v)) return false;
    a = last[j] + (uint64_t)zigzag_dec(v);
    last[j] = a;
    m[j].addr = a;
    memcpy((uint8_t *)&m[j] + 8, &s->mword[j], 8);
  }
  for (size_t j = 4; j < k; j++) { /* further slots: delta from the previous access */
    uint64_t v;
    if (!varint_get(&pm, em, &v)) return false;
    a += (uint64_t)zigzag_dec(v);
    unsigned sl = j < 8 ? (unsigned)j : 7;
    m[j] = (trace_mem){.addr = a, .size = s->mem_size[sl], .is_store = (uint8_t)((s->mem_store >> sl) & 1)};
  }
  *pm_io = pm;
  return true;
}

/* A varint with the one-byte case inline (most deltas and gaps are small). */
static inline __attribute__((always_inline)) bool varint_get1(const uint8_t **pp, const uint8_t *end, uint64_t *v) {
  const uint8_t *p = *pp;
  if (__builtin_expect(p < end && *p < 0x80, 1)) {
    *v = *p;
    *pp = p + 1;
    return true;
  }
  return varint_get(pp, end, v);
}

/* The accesses of an instruction with default accesses: one (most) inline, more through
 * cur_default_mems and the merge (model mode); returns the count written at m (0: the memory
 * stream ran out, *bad set). */
static inline __attribute__((always_inline)) size_t cur_plain_mems(const tr_sfast *s, size_t k, trace_insn *o,
                                                                   trace_mem *m, uint64_t *lastv,
                                                                   const uint8_t **pm_io, const uint8_t *em,
                                                                   const bool raw) {
  uint64_t *last = lastv + (size_t)s->tmpl.sid * 4;
  if (k == 1) {
    uint64_t v;
    if (!varint_get1(pm_io, em, &v)) return 0;
    const uint64_t a = last[0] + (uint64_t)zigzag_dec(v);
    last[0] = a;
    m->addr = a;
    memcpy((uint8_t *)m + 8, &s->mword[0], 8);
    return 1;
  }
  if (!cur_default_mems(s, k, m, last, pm_io, em)) return 0;
  if (!raw) o->n_mem = (uint16_t)(k = merge_accesses(m, k));
  return k;
}

/* The fast path of cur_decode: up to count instructions starting at chunk-relative raw index
 * ri0, none of which has an exception or is the chunk's last, written at insns[n]. Handles
 * fall-through and discontinuities; stops early (nothing consumed for that instruction) at a
 * self-loop iteration in model mode, which the general path collapses. Updates *nm, *pm, *pc,
 * *sid and the control-stream state; returns the instructions written (*bad set on a corrupt
 * stream). A plain fall-through instruction is its static record's template (tr_sfast.tmpl)
 * plus its accesses, the next record found by chasing tr_sfast.next; raw and model mode are
 * compiled separately. The control-stream state lives in locals (stores into the batch could
 * alias the cursor's fields and would make the compiler reload them), written back at the end;
 * a taken transfer finds its target's static record in the cursor's per-sid cache of the last
 * target (a loop's branch, a call site, a return: nearly always the same) before the PC map. */
#define TR_FAR ((uint64_t)1 << 62) /* "no discontinuity left in this chunk" */
static inline __attribute__((always_inline)) size_t cur_fast_impl(trace_cursor *c, size_t n, size_t count,
                                                                  uint64_t ri0, size_t *nm_io,
                                                                  const uint8_t **pm_io, const uint8_t *em,
                                                                  uint64_t *pc_io, uint32_t *sid_io,
                                                                  const char **bad, const bool raw) {
  const trace_t *t = c->t;
  trace_insn *o = c->insns + n, *const o0 = o, *const o_end = o + count;
  size_t nm = *nm_io;
  const uint8_t *pm = *pm_io;
  const tr_sfast *s = &t->sf[*sid_io];
  uint64_t pc = *pc_io;
  uint64_t to_disc = c->disc_at == UINT64_MAX ? TR_FAR : c->disc_at - ri0; /* instructions before it */
  const uint8_t *pr = c->pr, *const er = c->er, *pt = c->pt, *const et = c->et;
  bool disc_async = c->disc_async;
  unsigned sp_top = c->sp_top, sp_n = c->sp_n;
  const uint64_t rn = c->rn;
  tr_tgt *const tgt = c->tgt;
  uint64_t *const lastv = c->last;
  trace_mem *mems = c->mems;
  size_t mcap = c->mcap;
  size_t selfs = 0;
  /* One loop, instruction by instruction: a run of plain instructions between two transfers is
   * short (a few instructions in call-heavy code), too short to pay for a loop of its own. */
  while (o < o_end) {
    if (__builtin_expect(to_disc != 0, 1)) {
      /* a plain instruction: fall-through, default accesses, no flags */
      size_t k = s->n_mem;
      if (__builtin_expect(nm + k > mcap, 0)) {
        cur_grow_mems(c, nm + k);
        mems = c->mems;
        mcap = c->mcap;
      }
      to_disc--;
      *o = s->tmpl;
      o->mem_off = (uint32_t)nm;
      if (k) {
        k = cur_plain_mems(s, k, o, mems + nm, lastv, &pm, em, raw);
        if (__builtin_expect(!k, 0)) {
          *bad = "memory stream truncated";
          break;
        }
      }
      nm += k;
      o++;
      s = s->next;
      if (__builtin_expect(!s, 0)) {
        *bad = "transfer to a PC not in the static table";
        break;
      }
      continue;
    }
    /* a discontinuity (to_disc == 0) */
    const uint64_t ft = s->tmpl.next_pc;
    const unsigned kind = s->kind;
    const bool async = disc_async, pop = !async && kind == TK_RET && sp_n;
    const uint64_t base = pop ? c->stack[(sp_top - 1) & (TR_STACK - 1)] : ft;
    uint64_t next, v;
    const uint8_t *pt2 = pt;
    if (!varint_get1(&pt2, et, &v)) {
      *bad = "control target stream truncated";
      break;
    }
    next = base + (uint64_t)zigzag_dec(v);
    if (next == s->tmpl.pc && !async && kind == TK_REP) {
      if (!raw) break; /* a rep run: the general path collapses it (nothing consumed) */
      selfs++;         /* raw mode: emitted, but it ends no model instruction */
    }
    pt = pt2;
    if (pop) {
      sp_n--;
      sp_top = (sp_top - 1) & (TR_STACK - 1);
    }
    if (!async && kind == TK_CALL) {
      c->stack[sp_top] = ft;
      sp_top = (sp_top + 1) & (TR_STACK - 1);
      if (sp_n < TR_STACK) sp_n++;
    }
    if (pr == er) {
      to_disc = TR_FAR;
    } else {
      if (!varint_get1(&pr, er, &v) || (v >> 1) >= rn) {
        *bad = "control stream corrupt";
        break;
      }
      to_disc = v >> 1;
      disc_async = v & 1;
    }
    size_t k = s->n_mem;
    if (nm + k > mcap) {
      cur_grow_mems(c, nm + k);
      mems = c->mems;
      mcap = c->mcap;
    }
    *o = s->tmpl;
    o->mem_off = (uint32_t)nm;
    o->next_pc = next;
    o->flags = (uint8_t)((next != ft ? TI_TAKEN : 0) | (async ? TI_ASYNC : 0));
    if (k) {
      k = cur_plain_mems(s, k, o, mems + nm, lastv, &pm, em, raw);
      if (!k) {
        *bad = "memory stream truncated";
        break;
      }
    }
    nm += k;
    o++;
    pc = next;
    if (next == ft) {
      s = s->next;
    } else {
      tr_tgt *e = &tgt[s->tmpl.sid];
      if (__builtin_expect(e->key == ~next, 1)) {
        s = e->s;
      } else {
        const uint32_t *sv = map64_get(&t->pcmap, pc_key(next));
        const tr_sfast *ns = sv ? &t->sf[*sv] : NULL;
        e->key = ~next;
        e->s = ns;
        s = ns;
      }
    }
    if (!s) {
      *bad = "transfer to a PC not in the static table";
      break;
    }
  }
  c->pr = pr;
  c->pt = pt;
  c->disc_async = disc_async;
  c->sp_top = sp_top;
  c->sp_n = sp_n;
  *nm_io = nm;
  *pm_io = pm;
  *pc_io = s ? s->tmpl.pc : pc; /* (pc: the transfer target not in the static table) */
  *sid_io = s ? s->tmpl.sid : TR_NONE;
  size_t done = (size_t)(o - o0);
  c->disc_at = to_disc >= TR_FAR / 2 ? UINT64_MAX : ri0 + done + to_disc;
  c->chunk_model += done - selfs;
  return done;
}

static __attribute__((noinline)) size_t cur_fast_raw(trace_cursor *c, size_t n, size_t count, uint64_t ri0,
                                                     size_t *nm, const uint8_t **pm, const uint8_t *em,
                                                     uint64_t *pc, uint32_t *sid, const char **bad) {
  return cur_fast_impl(c, n, count, ri0, nm, pm, em, pc, sid, bad, true);
}

static __attribute__((noinline)) size_t cur_fast_model(trace_cursor *c, size_t n, size_t count, uint64_t ri0,
                                                       size_t *nm, const uint8_t **pm, const uint8_t *em,
                                                       uint64_t *pc, uint32_t *sid, const char **bad) {
  return cur_fast_impl(c, n, count, ri0, nm, pm, em, pc, sid, bad, false);
}

/* Decode up to max instructions (model or raw per mode) of the loaded chunk into the batch
 * arrays; *n_out and *nm_out receive the counts. Stops at the chunk end. */
static wi_rc cur_decode(trace_cursor *c, size_t max, size_t *n_out, wi_err *err) {
  const trace_t *t = c->t;
  const tr_sfast *sf = t->sf;
  const bool raw = c->raw;
  const bool last_chunk = c->chunk + 1 == t->info.n_chunks;
  uint64_t ri = c->ri, rn = c->rn, pc = c->pc;
  uint32_t sid = c->sid;
  const uint8_t *pm = c->pm, *em = c->em;
  size_t n = 0, nm = 0;
  const char *bad = NULL;
  while (n < max && ri < rn) {
    if (!c->rep_n) {
      /* fast path up to the next exception or the last instruction of the chunk */
      uint64_t stop = c->exc_at;
      if (stop > rn - 1) stop = rn - 1;
      if (stop - ri > max - n) stop = ri + (max - n);
      if (stop > ri) {
        size_t done = (raw ? cur_fast_raw : cur_fast_model)(c, n, (size_t)(stop - ri), ri, &nm, &pm, em, &pc,
                                                            &sid, &bad);
        n += done;
        ri += done;
      }
      if (bad || n >= max) break;
    }
    const tr_sfast *s = &sf[sid];
    size_t k;
    bool exc = ri == c->exc_at;
    if (__builtin_expect(exc, 0)) {
      uint64_t cnt;
      if (!varint_get(&c->pe, c->ee, &cnt) || cnt > TR_MAX_ACCESSES) {
        bad = "exception stream corrupt";
        break;
      }
      k = (size_t)cnt;
      if (k > c->xcap) {
        c->xcap = k;
        c->xsize = xrealloc(c->xsize, k * sizeof *c->xsize);
        c->xstore = xrealloc(c->xstore, k);
      }
      for (size_t j = 0; j < k && !bad; j++) {
        if (c->pe == c->ee) {
          bad = "exception stream truncated";
          break;
        }
        uint8_t d = *c->pe++;
        uint64_t sz = d & 0x7f;
        if (sz == 127 && (!varint_get(&c->pe, c->ee, &sz) || sz > UINT32_MAX)) bad = "exception size corrupt";
        c->xsize[j] = (uint32_t)sz;
        c->xstore[j] = (uint8_t)(d >> 7);
      }
      if (bad) break;
      if (!cur_next_exc(c, ri + 1)) {
        bad = "exception stream corrupt";
        break;
      }
    } else {
      k = s->n_mem;
    }
    if (__builtin_expect(nm + k + c->agg_n > c->mcap, 0)) cur_grow_mems(c, nm + k + c->agg_n);
    trace_mem *m = c->mems + nm;
    if (k) {
      uint64_t *last = c->last + (size_t)sid * 4, prev = 0;
      for (size_t j = 0; j < k; j++) {
        uint64_t v;
        if (pm < em && *pm < 0x80) {
          v = *pm++;
        } else if (!varint_get(&pm, em, &v)) {
          bad = "memory stream truncated";
          break;
        }
        uint64_t base = j < 4 ? last[j] : prev;
        uint64_t a = base + (uint64_t)zigzag_dec(v);
        if (j < 4) last[j] = a;
        prev = a;
        m[j].addr = a;
        if (exc) {
          m[j].size = c->xsize[j];
          m[j].is_store = c->xstore[j];
        } else {
          unsigned sl = j < 8 ? (unsigned)j : 7;
          m[j].size = s->mem_size[sl];
          m[j].is_store = (uint8_t)((s->mem_store >> sl) & 1);
        }
      }
      if (bad) break;
    }
    uint64_t ft = pc + s->len, next = ft;
    uint8_t fl = 0;
    if (__builtin_expect(ri == c->disc_at, 0)) {
      bool async = c->disc_async;
      uint64_t base = ft, v;
      if (!async && s->kind == TK_RET && c->sp_n) {
        c->sp_n--;
        c->sp_top = (c->sp_top - 1) & (TR_STACK - 1);
        base = c->stack[c->sp_top];
      }
      if (!varint_get(&c->pt, c->et, &v)) {
        bad = "control target stream truncated";
        break;
      }
      next = base + (uint64_t)zigzag_dec(v);
      if (!async && s->kind == TK_CALL) {
        c->stack[c->sp_top] = ft;
        c->sp_top = (c->sp_top + 1) & (TR_STACK - 1);
        if (c->sp_n < TR_STACK) c->sp_n++;
      }
      if (async) fl |= TI_ASYNC;
      if (!cur_next_disc(c, ri + 1)) {
        bad = "control stream corrupt";
        break;
      }
    }
    if (next != ft) fl |= TI_TAKEN;
    bool chunk_end = ri + 1 == rn;
    bool self = next == pc && !(fl & TI_ASYNC) && !chunk_end && s->kind == TK_REP;
    if (!self) c->chunk_model++;
    if (chunk_end && last_chunk) fl |= TI_LAST;
    if (raw) {
      trace_insn *o = &c->insns[n++];
      o->pc = pc;
      o->next_pc = next;
      o->sid = sid;
      o->rep = 1;
      o->mem_off = (uint32_t)nm;
      o->n_mem = (uint16_t)k;
      o->flags = fl;
      o->len = s->len;
      nm += k;
    } else if (self || c->rep_n) {
      /* a rep-string run: fold this iteration's accesses into per-slot ranges */
      if (k > c->agg_cap) {
        c->agg_cap = k * 2;
        c->agg_lo = xrealloc(c->agg_lo, c->agg_cap * sizeof *c->agg_lo);
        c->agg_hi = xrealloc(c->agg_hi, c->agg_cap * sizeof *c->agg_hi);
        c->agg_st = xrealloc(c->agg_st, c->agg_cap);
      }
      if (!c->rep_n) c->agg_n = 0;
      for (size_t j = 0; j < k; j++) {
        uint64_t lo = m[j].addr, hi = m[j].addr + m[j].size;
        if (j >= c->agg_n) {
          c->agg_lo[j] = lo;
          c->agg_hi[j] = hi;
          c->agg_st[j] = m[j].is_store;
        } else {
          if (lo < c->agg_lo[j]) c->agg_lo[j] = lo;
          if (hi > c->agg_hi[j]) c->agg_hi[j] = hi;
        }
      }
      if (k > c->agg_n) c->agg_n = k;
      c->rep_n++;
      if (!self) {
        if (nm + c->agg_n > c->mcap) {
          cur_grow_mems(c, nm + c->agg_n);
          m = c->mems + nm;
        }
        for (size_t j = 0; j < c->agg_n; j++) {
          uint64_t sz = c->agg_hi[j] - c->agg_lo[j];
          m[j] = (trace_mem){.addr = c->agg_lo[j], .size = sz > UINT32_MAX ? UINT32_MAX : (uint32_t)sz,
                             .is_store = c->agg_st[j]};
        }
        size_t kk = merge_accesses(m, c->agg_n);
        trace_insn *o = &c->insns[n++];
        o->pc = pc;
        o->next_pc = next;
        o->sid = sid;
        o->rep = c->rep_n;
        o->mem_off = (uint32_t)nm;
        o->n_mem = (uint16_t)kk;
        o->flags = (uint8_t)(fl | (c->rep_n > 1 ? TI_REP : 0));
        o->len = s->len;
        nm += kk;
        c->rep_n = 0;
        c->agg_n = 0;
      }
    } else {
      size_t kk = k > 1 ? merge_accesses(m, k) : k;
      trace_insn *o = &c->insns[n++];
      o->pc = pc;
      o->next_pc = next;
      o->sid = sid;
      o->rep = 1;
      o->mem_off = (uint32_t)nm;
      o->n_mem = (uint16_t)kk;
      o->flags = fl;
      o->len = s->len;
      nm += kk;
    }
    ri++;
    pc = next;
    if (!chunk_end) {
      if (next == ft) {
        sid = s->next_seq;
      } else {
        uint32_t *v = map64_get(&t->pcmap, pc_key(next));
        sid = v ? *v : TR_NONE;
      }
      if (sid == TR_NONE) {
        bad = "transfer to a PC not in the static table";
        break;
      }
    }
    if (c->rep_n && !chunk_end) {
      /* Inside a rep-string run (model mode): fold further iterations here, each a self-loop
       * discontinuity with the static accesses, until one is not (it ends the run, or is the
       * chunk's last instruction, an exception or asynchronous): that one takes the path above.
       * Same streams, same checks; nothing of an iteration is consumed before it qualifies. A
       * 16 KiB `rep movsb` is 16 K iterations: the general path cost ~250 instructions each. */
      const size_t rk = s->n_mem;
      const uint64_t rft = pc + s->len;
      uint64_t *last = c->last + (size_t)sid * 4;
      trace_mem *tmp = c->mems + nm; /* rk entries of scratch: the general path reserved them */
      while (ri + 1 < rn && ri == c->disc_at && ri != c->exc_at && !c->disc_async && rk <= c->agg_n) {
        const uint8_t *pt = c->pt;
        uint64_t v;
        if (!varint_get(&pt, c->et, &v) || rft + (uint64_t)zigzag_dec(v) != pc) break;
        const uint8_t *pm2 = pm;
        uint64_t a = 0, prev = 0;
        size_t j = 0;
        for (; j < rk; j++) {
          if (pm2 < em && *pm2 < 0x80) {
            v = *pm2++;
          } else if (!varint_get(&pm2, em, &v)) {
            break;
          }
          a = (j < 4 ? last[j] : prev) + (uint64_t)zigzag_dec(v);
          prev = a;
          tmp[j].addr = a;
        }
        if (j < rk) break; /* truncated: the general path reports it */
        for (j = 0; j < rk; j++) {
          unsigned sl = j < 8 ? (unsigned)j : 7;
          uint64_t lo = tmp[j].addr, hi = lo + s->mem_size[sl];
          if (j < 4) last[j] = lo;
          if (lo < c->agg_lo[j]) c->agg_lo[j] = lo;
          if (hi > c->agg_hi[j]) c->agg_hi[j] = hi;
        }
        pm = pm2;
        c->pt = pt;
        if (!cur_next_disc(c, ri + 1)) {
          bad = "control stream corrupt";
          break;
        }
        c->rep_n++;
        ri++;
      }
      if (bad) break;
    }
  }
  c->ri = ri;
  c->pc = pc;
  c->sid = sid;
  c->pm = pm;
  if (bad) return cur_bad(c, err, bad);
  if (ri == rn) {
    /* chunk fully consumed: every stream must be exhausted and the counts must agree */
    if (c->pm != c->em) return cur_bad(c, err, "memory stream has trailing bytes");
    if (c->pt != c->et || c->pr != c->er || c->disc_at != UINT64_MAX) return cur_bad(c, err, "control stream has trailing bytes");
    if (c->pe != c->ee || c->exc_at != UINT64_MAX) return cur_bad(c, err, "exception stream has trailing bytes");
    if (c->chunk_model != t->chunks[c->chunk].pub.n_insns) return cur_bad(c, err, "model instruction count mismatch");
    if (last_chunk && pc != t->info.end_pc) return cur_bad(c, err, "end PC does not match the chunk index");
    c->expect_pc = pc;
    c->loaded = false;
  }
  *n_out = n;
  return WI_OK;
}

/* Fill the batch arrays with up to max instructions; *n = 0 at the end of the trace. */
static wi_rc cur_fill(trace_cursor *c, size_t max, size_t *n, wi_err *err) {
  *n = 0;
  if (c->err.rc) {
    if (err) *err = c->err;
    return c->err.rc;
  }
  if (!c->loaded) {
    if (c->next_chunk >= c->t->info.n_chunks) return WI_OK;
    wi_rc rc = cur_load(c, c->next_chunk, err);
    if (rc) return rc;
  }
  wi_rc rc = cur_decode(c, max, n, err);
  if (rc) return rc;
  c->index += *n;
  return WI_OK;
}

wi_rc trace_cursor_next(trace_cursor *c, trace_batch *b, wi_err *err) {
  uint64_t first = c->index;
  size_t n = 0;
  wi_rc rc = cur_fill(c, TR_BATCH, &n, err);
  b->insns = c->insns;
  b->mems = c->mems;
  b->n = rc ? 0 : n;
  b->first_index = first;
  return rc;
}

wi_rc trace_cursor_seek(trace_cursor *c, uint64_t k, wi_err *err) {
  const trace_t *t = c->t;
  if (c->err.rc) {
    if (err) *err = c->err;
    return c->err.rc;
  }
  uint64_t total = c->raw ? t->info.n_raw : t->info.n_insns;
  if (k > total)
    return wi_fail(err, WI_EINVAL, "trace %s: seek to instruction %llu past the end (%llu)", t->path,
                   (unsigned long long)k, (unsigned long long)total);
  c->loaded = false;
  c->rep_n = 0;
  if (k == total) { /* at the end */
    c->next_chunk = t->info.n_chunks;
    c->index = k;
    return WI_OK;
  }
  uint32_t lo = 0, hi = t->info.n_chunks; /* last chunk whose first index <= k */
  while (hi - lo > 1) {
    uint32_t mid = lo + (hi - lo) / 2;
    uint64_t f = c->raw ? t->chunks[mid].pub.first_raw : t->chunks[mid].pub.first_insn;
    if (f <= k) lo = mid;
    else hi = mid;
  }
  const trace_chunk *ch = &t->chunks[lo].pub;
  c->expect_pc = ch->first_pc;
  wi_rc rc = cur_load(c, lo, err);
  if (rc) return rc;
  c->index = c->raw ? ch->first_raw : ch->first_insn;
  while (c->index < k) {
    size_t n;
    rc = cur_fill(c, (size_t)WI_MIN(k - c->index, TR_BATCH), &n, err);
    if (rc) return rc;
    if (!n) return cur_bad(c, err, "chunk ends before its instruction count");
  }
  return WI_OK;
}

/* ==== copying a stream ====================================================================== */

wi_rc tw_copy_stream(trace_writer *w, const trace_t *src, wi_err *err) {
  if (w->n_exec || w->copied || w->enc.chunks.n)
    return wi_fail(err, WI_ESTATE, "trace %s: tw_copy_stream into a writer that already has instructions", w->path);
  tw_enc *e = &w->enc;
  for (size_t i = 0; i < src->n_meta; i++) tw_meta(w, src->meta[i].k, src->meta[i].v);
  for (size_t i = 0; i < src->n_objs; i++)
    tw_object(w, src->objs[i].path, src->objs[i].bias, src->objs[i].lo, src->objs[i].hi);
  /* statics merge by PC: chunks name PCs, never sids, so any numbering decodes the same */
  for (uint32_t i = 0; i < src->info.n_static; i++) {
    const trace_static *s = &src->st[i];
    uint32_t sid = tw_static(w, s->pc, s->len, s->bytes);
    if (sid == TR_NONE) return wi_fail(err, WI_EINVAL, "trace %s: bad static entry in the source", w->path);
    tw_static_ent *ws = &w->st.a[sid];
    ws->len = s->len;
    memcpy(ws->bytes, s->bytes, sizeof ws->bytes);
    ws->kind = tr_kind(ws->bytes, ws->len);
    ws->meta = REC_META(ws->len, ws->kind);
    enc_grow(e, (size_t)sid + 1);
    tw_def *d = &e->def[sid];
    d->set = 1;
    d->n_mem = s->n_mem;
    d->store = s->mem_store;
    memcpy(d->size, s->mem_size, 8);
    e->count[sid] = s->count;
  }
  for (uint32_t i = 0; i < src->info.n_chunks; i++) {
    tr_cidx ci = src->chunks[i];
    const uint8_t *z = src->map + ci.pub.offset;
    if (wi_hash64(z, (size_t)ci.pub.bytes, 0) != ci.hash)
      return tr_corrupt(err, src, "chunk", ci.pub.offset, "chunk hash mismatch");
    ci.pub.offset = e->off;
    enc_write(e, z, (size_t)ci.pub.bytes);
    VEC_PUSH(e->chunks, ci);
  }
  if (e->err.rc) {
    *err = e->err;
    return e->err.rc;
  }
  e->n_raw = src->info.n_raw;
  e->n_insns = src->info.n_insns;
  w->end_pc = src->info.end_pc;
  w->have_end = true;
  w->n_exec = src->info.n_raw;
  w->copied = true;
  w->flush_at = 0; /* every tw_exec now takes the slow path, which reports the misuse */
  return WI_OK;
}

/* trace.h — the .wtr trace container: writer, reader (trace_t) and cursors.
 *
 * A .wtr file holds one recorded execution of one thread:
 *   header     magic "WHATIFTR", format version, section directory offset, content hash
 *   chunks     the dynamic stream in independently decompressible zstd frames, each holding a
 *              fixed number of instructions (a chunk never splits a run of rep iterations)
 *   sections   metadata (key/value), static table (one entry per distinct PC: length, bytes,
 *              default memory accesses, execution count), objects (mapped files and their
 *              load bias), code regions (bytes of executable mappings), symbols, source lines,
 *              chunk index
 *   directory  (kind, offset, size, hash) per section, at the end
 * Only what cannot be derived is stored: control flow where it leaves fall-through, memory
 * addresses as deltas from the previous address of the same static instruction and slot,
 * access counts and sizes only where they differ from the static default.
 *
 * Every read is bounds-checked; corruption is reported as WI_ECORRUPT with a message naming
 * the section and byte offset. A trace_t is immutable after trace_open and may be shared by
 * threads; each thread iterates with its own trace_cursor. */
#ifndef WHATIF_TRACE_H
#define WHATIF_TRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "insn.h"
#include "util.h"

#define TRACE_MAGIC "WHATIFTR"
#define TRACE_VERSION 1u
#define TRACE_DEFAULT_CHUNK (1u << 18) /* instructions per chunk */

typedef struct trace trace_t;
typedef struct trace_cursor trace_cursor;
typedef struct trace_writer trace_writer;

/* ---- reading ---------------------------------------------------------------------------- */

/* Summary of an opened trace. */
typedef struct trace_info {
  uint64_t n_raw;         /* recorded dynamic instructions (each rep iteration counts) */
  uint64_t n_insns;       /* model instructions: rep-iteration runs collapsed into one */
  uint64_t stream_bytes;  /* compressed bytes of the dynamic stream (all chunks) */
  uint64_t file_bytes;
  uint64_t content_hash;  /* hash of everything after the header: the trace's identity */
  uint64_t end_pc;        /* where execution stopped after the last instruction */
  uint32_t n_chunks;
  uint32_t n_static;      /* distinct PCs executed */
  uint32_t version;
} trace_info;

/* One distinct executed PC. */
typedef struct trace_static {
  uint64_t pc;
  uint64_t count;         /* dynamic executions (raw) */
  uint8_t len;            /* bytes */
  uint8_t bytes[15];      /* the instruction's bytes as executed */
  uint8_t n_mem;          /* default number of accesses per execution (as first seen) */
  uint8_t mem_store;      /* bit i: default access i is a store (i < 8) */
  uint8_t mem_size[8];    /* default access sizes in bytes (i < 8) */
} trace_static;

/* A mapped object (main binary, dynamic loader, shared library). */
typedef struct trace_object {
  const char *path;
  uint64_t bias;          /* load bias: runtime address = ELF vaddr + bias */
  uint64_t lo, hi;        /* runtime address range of its executable segments */
} trace_object;

/* Bytes of an executable mapping at its runtime address. */
typedef struct trace_region {
  uint64_t base, size;
  const char *name;       /* object path */
  const uint8_t *bytes;
} trace_region;

/* A function symbol at its runtime address. */
typedef struct trace_sym {
  uint64_t addr, size;
  const char *name;
  const char *object;     /* basename of the object that defines it */
} trace_sym;

/* Open and validate a trace (header, directory, every non-chunk section, chunk index;
 * chunk payloads are checked when decompressed). Decodes every static PC with Capstone.
 * On failure returns NULL and fills err (WI_EIO, WI_ECORRUPT, WI_EVERSION).
 * Free with trace_close. */
trace_t *trace_open(const char *path, wi_err *err);
void trace_close(trace_t *t); /* accepts NULL */

const trace_info *trace_get_info(const trace_t *t);
/* Metadata value for key, or NULL. Keys include: program, args (JSON array), recorder,
 * qemu, date, threads, exit, roi, stop (why recording ended: exit, max, exec, ...) and, when the
 * program rewrote code it had run, rewritten. */
const char *trace_meta(const trace_t *t, const char *key);
size_t trace_meta_count(const trace_t *t);
void trace_meta_at(const trace_t *t, size_t i, const char **key, const char **value);

/* Static table: sid in [0, n_static). */
const trace_static *trace_static_at(const trace_t *t, uint32_t sid);
/* Decoded form of static instruction sid (decoded once at open). */
const dec_insn *trace_decoded(const trace_t *t, uint32_t sid);
/* Static id for a PC, or UINT32_MAX if that PC never executed. */
uint32_t trace_sid_of(const trace_t *t, uint64_t pc);

size_t trace_n_objects(const trace_t *t);
const trace_object *trace_object_at(const trace_t *t, size_t i);
size_t trace_n_regions(const trace_t *t);
const trace_region *trace_region_at(const trace_t *t, size_t i);
/* Code bytes at pc from the code regions (falling back to executed instruction bytes);
 * *avail = bytes readable from the returned pointer. NULL if pc is not in any region. */
const uint8_t *trace_code_at(const trace_t *t, uint64_t pc, size_t *avail);

size_t trace_n_syms(const trace_t *t);
const trace_sym *trace_sym_at(const trace_t *t, size_t i); /* sorted by address */
/* The function containing pc, or NULL. */
const trace_sym *trace_sym_lookup(const trace_t *t, uint64_t pc);
/* Source file and line for pc where debug info existed; false otherwise. */
bool trace_line_lookup(const trace_t *t, uint64_t pc, const char **file, uint32_t *line);

/* Chunk index entry i. */
typedef struct trace_chunk {
  uint64_t offset, bytes;  /* compressed frame in the file */
  uint64_t first_raw;      /* raw index of its first instruction */
  uint64_t first_insn;     /* model (collapsed) index of its first instruction */
  uint32_t n_raw;          /* raw instructions in it */
  uint32_t n_insns;        /* model instructions in it */
  uint64_t first_pc;
} trace_chunk;
const trace_chunk *trace_chunk_at(const trace_t *t, uint32_t i);

/* Verify the content hash over the whole file (reads everything). */
wi_rc trace_verify(const trace_t *t, wi_err *err);

/* ---- iterating ------------------------------------------------------------------------------ */

enum {
  TRACE_CUR_RAW = 1 << 0, /* no rep collapsing and no merging of split accesses: exactly the
                             recorded events (for tests and exporters that want them) */
};

/* A batch of consecutive dynamic instructions. Pointers stay valid until the next call on
 * the same cursor. insns[i].mem_off indexes mems. */
typedef struct trace_batch {
  const trace_insn *insns;
  const trace_mem *mems;
  size_t n;
  uint64_t first_index;   /* index of insns[0] (model index, or raw index in RAW mode) */
} trace_batch;

/* A cursor positioned at the first instruction. Free with trace_cursor_free. */
trace_cursor *trace_cursor_new(const trace_t *t, unsigned flags);
void trace_cursor_free(trace_cursor *c); /* accepts NULL */
/* Next batch (at most a few thousand instructions); b->n == 0 at the end of the trace.
 * Returns WI_ECORRUPT (with section/offset) if a chunk fails to decode. */
wi_rc trace_cursor_next(trace_cursor *c, trace_batch *b, wi_err *err);
/* Position so that the next instruction returned has index k (model or raw per mode). */
wi_rc trace_cursor_seek(trace_cursor *c, uint64_t k, wi_err *err);

/* ---- writing -------------------------------------------------------------------------------- */

typedef struct trace_writer_opts {
  uint32_t chunk_insns;   /* instructions per chunk (0 = TRACE_DEFAULT_CHUNK) */
  int zstd_level;         /* 0 = 3 */
  bool threaded;          /* compress chunks on a background thread */
  bool merge_split;       /* join an instruction's access with its previous one when it continues it
                             (same direction, next address): QEMU splits 16- and 32-byte vector
                             accesses into 8-byte pieces, the instruction made one access */
} trace_writer_opts;

/* Create a trace at path (the caller writes to a temporary and renames). opts may be NULL.
 * Returns NULL and fills err on failure. All tw_* calls are cheap appends to memory except
 * at chunk boundaries. */
trace_writer *tw_open(const char *path, const trace_writer_opts *opts, wi_err *err);
/* Static id for (pc, len, bytes), creating it on first sight. bytes may be NULL (len only). */
uint32_t tw_static(trace_writer *w, uint64_t pc, uint8_t len, const uint8_t *bytes);
/* Begin the next dynamic instruction. */
void tw_exec(trace_writer *w, uint32_t sid);
/* A memory access by the current instruction (in program order). */
void tw_mem(trace_writer *w, uint64_t addr, uint32_t size, bool is_store);
/* Mark the transfer from the current instruction to the next one as asynchronous. */
void tw_async(trace_writer *w);
/* Where execution stopped after the last instruction (default: its fall-through). */
void tw_end_pc(trace_writer *w, uint64_t pc);
void tw_meta(trace_writer *w, const char *key, const char *value);
void tw_object(trace_writer *w, const char *path, uint64_t bias, uint64_t lo, uint64_t hi);
void tw_region(trace_writer *w, uint64_t base, const uint8_t *bytes, uint64_t n, const char *name);
void tw_symbol(trace_writer *w, uint64_t addr, uint64_t size, const char *name, const char *object);
void tw_line(trace_writer *w, uint64_t addr, const char *file, uint32_t line);
/* Copy src's metadata, static table, objects and dynamic stream (chunks copied compressed,
 * not re-encoded) into w, which must have no instructions yet. Regions, symbols and lines
 * are not copied (the caller adds them). */
wi_rc tw_copy_stream(trace_writer *w, const trace_t *src, wi_err *err);
/* Instructions written so far (raw). */
uint64_t tw_count(const trace_writer *w);
/* Flush the last chunk, write sections, directory and header; free w. */
wi_rc tw_close(trace_writer *w, wi_err *err);
/* Discard w and delete its file. Accepts NULL. */
void tw_abort(trace_writer *w);

#endif

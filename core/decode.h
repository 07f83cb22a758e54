/* decode.h — x86-64 decoder (Capstone, detail on) into the ISA-neutral dec_insn record, and a
 * per-PC decode cache for wrong-path fetch from a trace's code image. */
#ifndef WHATIF_DECODE_H
#define WHATIF_DECODE_H

#include <stddef.h>
#include <stdint.h>

#include "insn.h"

typedef struct dec_ctx dec_ctx;
typedef struct trace trace_t;

/* A decoder (owns a Capstone handle; not thread-safe: one per thread). Free with dec_free. */
dec_ctx *dec_new(void);
void dec_free(dec_ctx *d); /* accepts NULL */

/* Decode the instruction at bytes[0..n) located at pc into *out. Returns false when the bytes
 * do not decode; *out is then an IC_OTHER record with DF_INVALID and len 1. */
bool dec_decode(dec_ctx *d, const uint8_t *bytes, size_t n, uint64_t pc, dec_insn *out);

/* A cache from PC to decoded record over one trace's code image: correct-path PCs come from
 * the trace's static table; other PCs (wrong path) are decoded on first use. Not thread-safe;
 * one per model instance. Results do not depend on what was cached before (it is not model
 * state and need not be checkpointed). Free with dec_cache_free. */
typedef struct dec_cache dec_cache;
dec_cache *dec_cache_new(const trace_t *t);
void dec_cache_free(dec_cache *c); /* accepts NULL */
/* The record for pc, or NULL when the trace has no code bytes at pc. */
const dec_insn *dec_cache_get(dec_cache *c, uint64_t pc);

#endif

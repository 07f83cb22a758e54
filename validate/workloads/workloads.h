/* workloads.h — shared helpers of the bundled workloads: SSC region-of-interest marks, size
 * arguments, a deterministic PRNG and a checksum printer. Header-only: each workload is one
 * .c file plus this header. */
#ifndef WHATIF_WORKLOADS_H
#define WHATIF_WORKLOADS_H

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* SSC marks (the Intel SDE / Sniper convention): `mov ebx, 111` followed by the 3-byte no-op
 * `64 67 90` starts the region of interest, `mov ebx, 222` + `64 67 90` ends it. The recorder
 * recognises the byte pattern at translation time (`whatif record --roi ssc`). ebx is
 * declared clobbered so the compiler keeps nothing live in it across a mark; the memory
 * clobber keeps the region's loads and stores from being moved across the mark. */
#define WL_ROI_BEGIN() \
  __asm__ __volatile__("movl $111, %%ebx\n\t.byte 0x64, 0x67, 0x90" ::: "rbx", "memory")
#define WL_ROI_END() \
  __asm__ __volatile__("movl $222, %%ebx\n\t.byte 0x64, 0x67, 0x90" ::: "rbx", "memory")

/* Positive integer argument i of argv, or dflt when absent. Exits with status 2 on garbage. */
static inline uint64_t wl_arg(int argc, char **argv, int i, uint64_t dflt) {
  if (argc <= i) return dflt;
  char *end = NULL;
  unsigned long long v = strtoull(argv[i], &end, 0);
  if (!end || *end || v == 0) {
    fprintf(stderr, "%s: argument %d must be a positive integer, got '%s'\n", argv[0], i, argv[i]);
    exit(2);
  }
  return (uint64_t)v;
}

/* A tiny deterministic PRNG (xorshift64*): the same seed gives the same data on every run, so
 * recordings are reproducible. */
typedef struct wl_rng { uint64_t s; } wl_rng;
static inline void wl_seed(wl_rng *r, uint64_t seed) { r->s = seed * 0x9e3779b97f4a7c15ULL + 1; }
static inline uint64_t wl_next(wl_rng *r) {
  r->s ^= r->s >> 12;
  r->s ^= r->s << 25;
  r->s ^= r->s >> 27;
  return r->s * 0x2545f4914f6cdd1dULL;
}
/* Uniform in [0, n) (n > 0; the modulo bias is irrelevant here). */
static inline uint64_t wl_below(wl_rng *r, uint64_t n) { return wl_next(r) % n; }

/* Print the workload's checksum: a value that depends on all of the work, so the compiler keeps
 * it, and that the tests compare between runs. */
static inline void wl_print(const char *name, uint64_t checksum) {
  printf("%s checksum %016" PRIx64 "\n", name, checksum);
}

#endif

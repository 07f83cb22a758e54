/* recursion.c — a recursive walk whose returns mispredict after wrong paths corrupt the RAS.
 *
 * Known bottleneck: return mispredictions at walk()'s `ret` (the function marked KEY). walk()
 * descends DEPTH = 12 levels of a layered random graph with one call per level: within a
 * 16-entry RAS, so its returns predict perfectly while the RAS is intact. At the bottom, 4
 * rare checks (each true for 1 query in 16, unpredictable) wait for two slow chains, the
 * pointer chase (a 5-cycle load per level) and a per-level imul hash. When one mispredicts,
 * the wrong path returns up all 12 levels into main and descends its 12-stage call pipeline
 * before the check resolves: those calls overwrite walk's RAS entries below the top. A
 * top-of-stack repair restores only the top entry, so walk's next returns mispredict one
 * after the other: about 9 return mispredictions per rare-check misprediction, all at one
 * `ret`. ras{repair="full"} removes them all. The graph (13 x WIDTH x 24 B, 20 KiB at the
 * default width) stays in L1.
 *
 * usage: recursion [QUERIES] [WIDTH] — defaults 50000 queries, 64 nodes per level (a power of 2).
 * The region of interest (SSC marks) is the query loop; building the graph is outside it. */
#include "workloads.h"

enum { DEPTH = 12 }; /* walk levels; with main's frames they fit a 16-entry RAS */

typedef struct node {
  const struct node *child[2];
  uint64_t key;
} node;

static __attribute__((noinline)) uint64_t rare(uint64_t s, uint64_t k);

/* KEY: the walk. One recursive call per level, so every level returns through the same `ret`;
 * sibling-call optimisation is off so the call stays a call (the combining step after it
 * would otherwise allow a jump). */
static __attribute__((noinline, optimize("no-optimize-sibling-calls"))) uint64_t
walk(const node *t, uint64_t path, uint64_t h, int depth) {
  if (depth == 0) { /* four rare, unpredictable checks: the mispredictions that start it all */
    uint64_t s = t->key, x = s ^ h, m = (x >> 48) & (x >> 52) & (x >> 56) & (x >> 60);
    if (m & 1) s = rare(s, 1);
    if (m & 2) s = rare(s, 2);
    if (m & 4) s = rare(s, 3);
    if (m & 8) s = rare(s, 4);
    return s;
  }
  uint64_t s = walk(t->child[path & 1], path >> 1, h * 0x9e3779b97f4a7c15ULL + 1, depth - 1);
  return ((s << 7) | (s >> 57)) ^ t->key;
}

static __attribute__((noinline)) uint64_t rare(uint64_t s, uint64_t k) { return (s ^ (s >> 7)) * (2 * k + 1); }

/* A pipeline of 12 nested stages (stage1 calls stage2 ... stage12), with no branch but the
 * calls: on a wrong path, its calls overwrite walk's RAS entries with other return addresses. */
static __attribute__((noinline)) uint64_t stage12(uint64_t x) { return x * 5 + 1; }
#define STAGE(k, next)                                                                    \
  static __attribute__((noinline, optimize("no-optimize-sibling-calls"))) uint64_t        \
  stage##k(uint64_t x) { return (next(x + k) ^ k) + 1; }
STAGE(11, stage12) STAGE(10, stage11) STAGE(9, stage10) STAGE(8, stage9) STAGE(7, stage8)
STAGE(6, stage7) STAGE(5, stage6) STAGE(4, stage5) STAGE(3, stage4) STAGE(2, stage3) STAGE(1, stage2)

int main(int argc, char **argv) {
  uint64_t queries = wl_arg(argc, argv, 1, 50000);
  uint64_t width = wl_arg(argc, argv, 2, 64);
  if (width & (width - 1)) {
    fprintf(stderr, "recursion: WIDTH must be a power of 2, got %llu\n", (unsigned long long)width);
    return 2;
  }
  node *nodes = calloc((DEPTH + 1) * width, sizeof *nodes);
  if (!nodes) {
    fprintf(stderr, "recursion: out of memory\n");
    return 1;
  }
  wl_rng r;
  wl_seed(&r, 3);
  for (uint64_t lv = 0; lv <= DEPTH; lv++) /* level lv's children are random nodes of level lv+1 */
    for (uint64_t i = 0; i < width; i++) {
      node *x = &nodes[lv * width + i];
      x->key = wl_next(&r);
      if (lv < DEPTH) {
        x->child[0] = &nodes[(lv + 1) * width + wl_below(&r, width)];
        x->child[1] = &nodes[(lv + 1) * width + wl_below(&r, width)];
      }
    }
  uint64_t sum = 0;
  WL_ROI_BEGIN();
  for (uint64_t q = 0; q < queries; q++) {
    uint64_t path = wl_next(&r); /* low bits: the start node; the rest: the path and the hash */
    uint64_t s = walk(&nodes[path & (width - 1)], path >> 6, path, DEPTH);
    sum += stage1(s);
    sum ^= stage1(sum >> 3);
  }
  WL_ROI_END();
  wl_print("recursion", sum);
  free(nodes);
  return 0;
}

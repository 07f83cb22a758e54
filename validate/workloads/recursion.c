/* recursion.c — deep recursive search: range queries over a random binary search tree.
 *
 * Known bottleneck: branch and return prediction. walk() (the function marked KEY) recurses
 * into the left and/or right subtree depending on comparisons of random keys with the query
 * bounds: data-dependent branches that mispredict often. Every visited node is a call and a
 * return; the tree is 33 levels deep at the default size, deeper than a return-
 * address stack, and wrong-path calls and returns after a misprediction corrupt the RAS, so
 * correct-path returns then mispredict too (the RAS corruption cascade). The tree (16384
 * nodes x 32 B = 512 KiB) stays in L2, so memory is not the bottleneck.
 *
 * usage: recursion [QUERIES] [NODES] — defaults 50000 queries, 16384 nodes.
 * The region of interest (SSC marks) is the query loop; building the tree is outside it. */
#include "workloads.h"

typedef struct tnode {
  struct tnode *l, *r;
  uint32_t key;
  uint32_t w;
  uint64_t pad;
} tnode;

static inline uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

/* KEY: the recursive walk. Sibling-call optimisation is off so every visit is a real call and
 * return (the combining step after each call would otherwise allow turning one into a jump). */
static __attribute__((noinline, optimize("no-optimize-sibling-calls"))) uint64_t
walk(const tnode *t, uint32_t lo, uint32_t hi) {
  if (!t) return 0;
  uint64_t s = 0;
  if (t->key >= lo) s = walk(t->l, lo, hi);              /* data-dependent */
  if (t->key <= hi) s = rotl(s, 7) ^ walk(t->r, lo, hi); /* data-dependent */
  if (t->key >= lo && t->key <= hi) s += t->w;
  return s;
}

int main(int argc, char **argv) {
  uint64_t queries = wl_arg(argc, argv, 1, 50000);
  uint64_t n = wl_arg(argc, argv, 2, 16384);
  tnode *nodes = calloc(n, sizeof *nodes);
  if (!nodes) {
    fprintf(stderr, "recursion: out of memory\n");
    return 1;
  }
  wl_rng r;
  wl_seed(&r, 3);
  tnode *root = NULL;
  for (uint64_t i = 0; i < n; i++) { /* random insertion order: a random BST */
    tnode *x = &nodes[i];
    x->key = (uint32_t)wl_next(&r);
    x->w = (uint32_t)wl_below(&r, 1000);
    tnode **pp = &root;
    while (*pp) pp = x->key < (*pp)->key ? &(*pp)->l : &(*pp)->r;
    *pp = x;
  }
  uint64_t sum = 0;
  WL_ROI_BEGIN();
  for (uint64_t q = 0; q < queries; q++) {
    uint32_t lo = (uint32_t)wl_next(&r);
    uint32_t span = (uint32_t)(wl_next(&r) >> 40); /* narrow ranges: a path plus a few subtrees */
    uint32_t hi = lo > UINT32_MAX - span ? UINT32_MAX : lo + span;
    sum = rotl(sum, 3) ^ walk(root, lo, hi);
  }
  WL_ROI_END();
  wl_print("recursion", sum);
  free(nodes);
  return 0;
}

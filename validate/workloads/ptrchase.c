/* ptrchase.c — pointer chasing through a linked list larger than L2.
 *
 * Known bottleneck: load latency to DRAM / LLC. The list's nodes (one 64-byte line each) are
 * linked in a random cyclic permutation (Sattolo's algorithm), so every `p = p->next` (the
 * line marked KEY) misses the caches and depends on the previous miss: no memory-level
 * parallelism, one miss in flight. The little work per node (an add and a xor) is off the
 * critical path. Default footprint: 65536 nodes x 64 B = 4 MiB (> 2 MiB L2).
 *
 * usage: ptrchase [NODES] [STEPS] — defaults 65536 nodes, 2000000 steps.
 * The region of interest (SSC marks) is the walk; building the list is outside it. */
#include "workloads.h"

typedef struct node {
  struct node *next;
  uint64_t val;
  uint64_t pad[6]; /* one node per 64-byte cache line */
} node;

int main(int argc, char **argv) {
  uint64_t n = wl_arg(argc, argv, 1, 65536);
  uint64_t steps = wl_arg(argc, argv, 2, 2000000);
  node *nodes = aligned_alloc(64, n * sizeof(node));
  uint32_t *perm = malloc(n * sizeof *perm);
  if (!nodes || !perm) {
    fprintf(stderr, "ptrchase: out of memory\n");
    return 1;
  }
  wl_rng r;
  wl_seed(&r, 2);
  for (uint64_t i = 0; i < n; i++) perm[i] = (uint32_t)i;
  /* Sattolo: a single cycle through all nodes, so the walk visits every node. */
  for (uint64_t i = n - 1; i > 0; i--) {
    uint64_t j = wl_below(&r, i);
    uint32_t t = perm[i];
    perm[i] = perm[j];
    perm[j] = t;
  }
  for (uint64_t i = 0; i < n; i++) {
    nodes[perm[i]].next = &nodes[perm[(i + 1) % n]];
    nodes[perm[i]].val = wl_next(&r);
  }
  free(perm);

  node *p = &nodes[0];
  uint64_t sum = 0;
  WL_ROI_BEGIN();
  for (uint64_t s = 0; s < steps; s++) {
    sum += p->val ^ s; /* a little work per node, independent of the next miss */
    p = p->next;       /* KEY: the serial chain of cache misses */
  }
  WL_ROI_END();
  wl_print("ptrchase", sum ^ (uint64_t)(p - nodes));
  free(nodes);
  return 0;
}

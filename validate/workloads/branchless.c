/* branchless.c — the same filter as branchy.c computed without a branch.
 *
 * Known bottleneck: none dominant; throughput-bound on the integer ALU ports (load, compare,
 * mask, and, add per element). The selection on `v >= THRESHOLD` is done with a mask (the
 * line marked KEY) instead of a branch, so nothing mispredicts except the loop exit. Same
 * data, same result as branchy.c.
 *
 * usage: branchless [REPS] [N] — REPS passes over N random bytes (defaults 200, 65536).
 * The region of interest (SSC marks) is the filter loop; generating the data is outside it. */
#include "workloads.h"

#define THRESHOLD 128

int main(int argc, char **argv) {
  uint64_t reps = wl_arg(argc, argv, 1, 200);
  uint64_t n = wl_arg(argc, argv, 2, 65536);
  uint8_t *data = malloc(n);
  if (!data) {
    fprintf(stderr, "branchless: out of memory\n");
    return 1;
  }
  wl_rng r;
  wl_seed(&r, 4);
  for (uint64_t i = 0; i < n; i++) data[i] = (uint8_t)(wl_next(&r) >> 56);
  uint64_t sum = 0, cnt = 0;
  WL_ROI_BEGIN();
  for (uint64_t k = 0; k < reps; k++) {
    for (uint64_t i = 0; i < n; i++) {
      uint64_t v = data[i];
      uint64_t take = (uint64_t)(v >= THRESHOLD); /* KEY: setcc instead of a branch */
      uint64_t mask = -take;
      /* The empty asm hides the mask from the vectoriser so the loop stays scalar like
       * branchy.c (one element per iteration); it emits no instruction. */
      __asm__("" : "+r"(mask));
      sum += v & mask;
      cnt += take;
    }
  }
  WL_ROI_END();
  wl_print("filter", sum * 1000003u + cnt);
  free(data);
  return 0;
}

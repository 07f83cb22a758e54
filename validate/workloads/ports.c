/* ports.c — pressure on one execution port: cross-lane permutes next to work that fits elsewhere.
 *
 * Known bottleneck: port 5. Each iteration runs 6 vpermd on ymm registers (the lines marked
 * KEY), one in each of 6 independent chains. vpermd moves data across the 128-bit lanes; on
 * Golden Cove only port 5 has a cross-lane unit (class permute: port 5, 3 cycles), so the
 * loop needs 6 cycles per iteration on port 5 while each chain's latency needs only 3. The
 * other 5 instructions per iteration (2 scalar ops, the loop counter, compare and branch)
 * fit on ports 0/1/6/10. Everything stays in registers: 6 chains + the index vector are 7 of
 * the 16 ymm registers, so the compiled loop has no memory operand and no spill (check with
 * objdump -d). A second port-5 unit halves the port-5 time, down to the chains' 3-cycle
 * latency: about 2x faster, the fix a what-if should find.
 *
 * usage: ports [ITERS] — default 1000000 iterations.
 * The region of interest (SSC marks) is the loop. */
#include <immintrin.h>

#include "workloads.h"

int main(int argc, char **argv) {
  uint64_t iters = wl_arg(argc, argv, 1, 1000000);
  const __m256i idx = _mm256_setr_epi32(3, 0, 7, 2, 5, 1, 6, 4);
  __m256i p0 = _mm256_setr_epi32(1, 2, 3, 4, 5, 6, 7, 8);
  __m256i p1 = _mm256_add_epi32(p0, p0), p2 = _mm256_add_epi32(p1, p0);
  __m256i p3 = _mm256_add_epi32(p2, p0), p4 = _mm256_add_epi32(p3, p0);
  __m256i p5 = _mm256_add_epi32(p4, p0);
  uint64_t x0 = 1, x1 = 2;
  WL_ROI_BEGIN();
  for (uint64_t i = 0; i < iters; i++) {
    p0 = _mm256_permutevar8x32_epi32(p0, idx); /* KEY: vpermd (port 5 only) */
    p1 = _mm256_permutevar8x32_epi32(p1, idx); /* KEY */
    p2 = _mm256_permutevar8x32_epi32(p2, idx); /* KEY */
    p3 = _mm256_permutevar8x32_epi32(p3, idx); /* KEY */
    p4 = _mm256_permutevar8x32_epi32(p4, idx); /* KEY */
    p5 = _mm256_permutevar8x32_epi32(p5, idx); /* KEY */
    /* Independent scalar work (ports 0/1/5/6/10). The empty asm keeps the compiler from
     * folding it into a closed form and each vector chain in one register (no copies). */
    x0 += i;
    x1 ^= x0;
    __asm__("" : "+r"(x0), "+r"(x1), "+x"(p0), "+x"(p1), "+x"(p2), "+x"(p3), "+x"(p4), "+x"(p5));
  }
  WL_ROI_END();
  /* Fold everything into the checksum so no chain is dead. */
  __m256i all = _mm256_xor_si256(_mm256_xor_si256(p0, p1), _mm256_xor_si256(p2, p3));
  all = _mm256_xor_si256(all, _mm256_xor_si256(p4, p5));
  uint32_t lanes[8];
  _mm256_storeu_si256((__m256i *)lanes, all);
  uint64_t sum = x0 ^ (x1 << 1);
  for (int i = 0; i < 8; i++) sum = sum * 31 + lanes[i];
  wl_print("ports", sum);
  return 0;
}

/* ports.c — pressure on one execution port: shuffles next to work that fits elsewhere.
 *
 * Known bottleneck: the shuffle port. Each iteration runs 4 vpermd and 4 vpshufb on ymm
 * registers (the lines marked KEY) in 8 independent chains; on Golden Cove both go to port 5
 * only, so the loop needs at least 8 cycles per iteration for port 5 while the chains' own
 * latency needs only 3 + 1. The other work — vpaddd on 4 more chains (ports 0/1/5) and
 * scalar adds and the loop counter (ports 0/1/5/6/10) — fits on the other ports. Widening
 * port 5 (or adding a second shuffle port) is the fix a what-if should find.
 *
 * usage: ports [ITERS] — default 1000000 iterations.
 * The region of interest (SSC marks) is the loop; everything is in registers. */
#include <immintrin.h>

#include "workloads.h"

int main(int argc, char **argv) {
  uint64_t iters = wl_arg(argc, argv, 1, 1000000);
  const __m256i idx = _mm256_setr_epi32(3, 0, 7, 2, 5, 1, 6, 4);
  const __m256i shuf = _mm256_setr_epi8(1, 2, 3, 0, 5, 6, 7, 4, 9, 10, 11, 8, 13, 14, 15, 12,
                                        2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, 13);
  const __m256i one = _mm256_set1_epi32(1);
  __m256i p0 = _mm256_setr_epi32(1, 2, 3, 4, 5, 6, 7, 8), p1 = _mm256_add_epi32(p0, p0);
  __m256i p2 = _mm256_add_epi32(p1, p0), p3 = _mm256_add_epi32(p2, p0);
  __m256i s0 = p3, s1 = p2, s2 = p1, s3 = p0;
  __m256i v0 = p0, v1 = p1, v2 = p2, v3 = p3;
  uint64_t x0 = 1, x1 = 2, x2 = 3, x3 = 4;
  WL_ROI_BEGIN();
  for (uint64_t i = 0; i < iters; i++) {
    p0 = _mm256_permutevar8x32_epi32(p0, idx); /* KEY: vpermd (port 5) */
    p1 = _mm256_permutevar8x32_epi32(p1, idx); /* KEY */
    p2 = _mm256_permutevar8x32_epi32(p2, idx); /* KEY */
    p3 = _mm256_permutevar8x32_epi32(p3, idx); /* KEY */
    s0 = _mm256_shuffle_epi8(s0, shuf);        /* KEY: vpshufb ymm (port 5) */
    s1 = _mm256_shuffle_epi8(s1, shuf);        /* KEY */
    s2 = _mm256_shuffle_epi8(s2, shuf);        /* KEY */
    s3 = _mm256_shuffle_epi8(s3, shuf);        /* KEY */
    v0 = _mm256_add_epi32(v0, one);            /* fits on ports 0/1 */
    v1 = _mm256_add_epi32(v1, v0);
    v2 = _mm256_add_epi32(v2, one);
    v3 = _mm256_add_epi32(v3, v2);
    x0 += i;                                   /* scalar work: ports 0/1/5/6/10 */
    x1 ^= x0;
    x2 += x1;
    x3 ^= x2;
    /* Keep the scalar chains from being folded into closed forms. */
    __asm__("" : "+r"(x0), "+r"(x1), "+r"(x2), "+r"(x3));
  }
  WL_ROI_END();
  __m256i all = _mm256_xor_si256(_mm256_xor_si256(_mm256_xor_si256(p0, p1), _mm256_xor_si256(p2, p3)),
                                 _mm256_xor_si256(_mm256_xor_si256(s0, s1), _mm256_xor_si256(s2, s3)));
  all = _mm256_xor_si256(all, _mm256_xor_si256(_mm256_xor_si256(v0, v1), _mm256_xor_si256(v2, v3)));
  uint32_t lanes[8];
  _mm256_storeu_si256((__m256i *)lanes, all);
  uint64_t sum = x0 ^ x1 ^ x2 ^ x3;
  for (int i = 0; i < 8; i++) sum = sum * 31 + lanes[i];
  wl_print("ports", sum);
  return 0;
}

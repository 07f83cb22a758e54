/* test_stats.c — tests of validate/stats.c against scipy reference vectors, naive algorithms and closed forms. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "util.h"
#include "stats.h"
#include "data/stats_ref/ref.h"

#define TOL 1e-12

/* cmocka 1.1.5 (Debian 12) has no assert_double_equal. */
#define assert_near(got, want, tol)                                                         \
  do {                                                                                      \
    double g_ = (got), w_ = (want);                                                         \
    if (!(fabs(g_ - w_) <= (tol))) fail_msg("%s = %.17g, want %.17g", #got, g_, w_);       \
  } while (0)

/* Equal within TOL, or both NaN. */
static void check_close(const char *what, const char *name, double want, double got) {
  if (isnan(want) && isnan(got)) return;
  if (isnan(want) != isnan(got) || !(fabs(want - got) <= TOL)) {
    fail_msg("%s %s: want %.17g got %.17g", what, name, want, got);
  }
}

/* ---- reference vectors (scipy 1.10.1, see tests/data/stats_ref/gen.py) ------------------ */

static void test_ref_corr(void **state) {
  (void)state;
  for (size_t c = 0; c < WI_ARRAY_LEN(stats_ref_cases); c++) {
    const stats_ref_case *r = &stats_ref_cases[c];
    check_close("tau_b", r->name, r->tau_b, val_kendall_tau_b(r->x, r->y, r->n));
    check_close("spearman", r->name, r->spearman, val_spearman(r->x, r->y, r->n));
    /* Both are symmetric in x and y. */
    check_close("tau_b(y,x)", r->name, r->tau_b, val_kendall_tau_b(r->y, r->x, r->n));
    check_close("spearman(y,x)", r->name, r->spearman, val_spearman(r->y, r->x, r->n));
  }
}

/* scipy reports NaN for data holding both +inf and -inf (its NaN check sums the data), so
 * that case is checked against "mixed_finite", whose finite extremes rank the same. */
static void test_ref_infinities(void **state) {
  (void)state;
  const stats_ref_case *r = NULL;
  for (size_t c = 0; c < WI_ARRAY_LEN(stats_ref_cases); c++)
    if (!strcmp(stats_ref_cases[c].name, "mixed_finite")) r = &stats_ref_cases[c];
  assert_non_null(r);
  double x[32], y[32];
  assert_true(r->n <= 32);
  int ninf = 0;
  for (size_t i = 0; i < r->n; i++) {
    x[i] = r->x[i] == 1e9 ? INFINITY : r->x[i] == -1e9 ? -INFINITY : r->x[i];
    y[i] = r->y[i] == 9.0 ? INFINITY : r->y[i] == -9.0 ? -INFINITY : r->y[i];
    ninf += (isinf(x[i]) != 0) + (isinf(y[i]) != 0); /* glibc isinf(-inf) is -1 */
  }
  assert_int_equal(ninf, 4);
  check_close("tau_b", "mixed_inf", r->tau_b, val_kendall_tau_b(x, y, r->n));
  check_close("spearman", "mixed_inf", r->spearman, val_spearman(x, y, r->n));
}

static void test_ref_ranks(void **state) {
  (void)state;
  for (size_t c = 0; c < WI_ARRAY_LEN(stats_ref_rank_cases); c++) {
    const stats_ref_ranks *r = &stats_ref_rank_cases[c];
    double *out = xmalloc(r->n * sizeof *out);
    val_ranks(r->x, r->n, out);
    for (size_t i = 0; i < r->n; i++) check_close("rank", r->name, r->ranks[i], out[i]);
    free(out);
  }
}

static void test_ref_topk(void **state) {
  (void)state;
  for (size_t c = 0; c < WI_ARRAY_LEN(stats_ref_topk_cases); c++) {
    const stats_ref_topk *r = &stats_ref_topk_cases[c];
    double p = 0, rc = 0;
    if (isnan(r->thresh)) val_topk(r->x, r->y, r->n, r->k, &p, &rc);
    else val_topk_thresh(r->x, r->y, r->n, r->k, r->thresh, &p, &rc);
    check_close("precision", r->name, r->precision, p);
    check_close("recall", r->name, r->recall, rc);
  }
}

/* ---- against a naive O(n^2) tau-b on random small inputs --------------------------------- */

static int sgn(double d) { return (d > 0) - (d < 0); }

/* Straight from the definition: every pair once. */
static double naive_tau_b(const double *x, const double *y, size_t n) {
  double s = 0, n0 = 0, n1 = 0, n2 = 0;
  for (size_t i = 0; i < n; i++) {
    for (size_t j = i + 1; j < n; j++) {
      n0 += 1;
      if (x[i] == x[j]) n1 += 1;
      if (y[i] == y[j]) n2 += 1;
      s += sgn(x[i] - x[j]) * sgn(y[i] - y[j]);
    }
  }
  if (n0 == n1 || n0 == n2) return NAN;
  return s / sqrt((n0 - n1) * (n0 - n2));
}

/* Random data in several shapes: heavy ties, few ties, correlated, anti-correlated. */
static void gen_pairs(wi_rng *r, double *x, double *y, size_t n) {
  uint64_t range = 1 + rng_below(r, n + 3);
  unsigned shape = (unsigned)rng_below(r, 4);
  for (size_t i = 0; i < n; i++) {
    x[i] = shape == 3 ? rng_unit(r) : (double)rng_below(r, range);
    double noise = (double)rng_below(r, range);
    y[i] = shape == 0 ? noise : shape == 1 ? x[i] + noise : shape == 2 ? -x[i] + 0.5 * noise
                                                                      : rng_unit(r);
  }
}

static void test_tau_vs_naive(void **state) {
  (void)state;
  wi_rng r;
  rng_seed(&r, tu_seed());
  double x[64], y[64];
  int defined = 0;
  for (int t = 0; t < 3000; t++) {
    size_t n = 2 + (size_t)rng_below(&r, 63);
    gen_pairs(&r, x, y, n);
    double want = naive_tau_b(x, y, n), got = val_kendall_tau_b(x, y, n);
    check_close("tau_b vs naive", "random", want, got);
    defined += !isnan(want);
  }
  assert_true(defined > 2500); /* the comparison mostly ran on defined values */
}

/* ---- invariances -------------------------------------------------------------------------- */

static void test_invariances(void **state) {
  (void)state;
  wi_rng r;
  rng_seed(&r, tu_seed() + 1);
  enum { N = 300 };
  double x[N], y[N], a[N], b[N];
  for (int t = 0; t < 50; t++) {
    gen_pairs(&r, x, y, N);
    double tau = val_kendall_tau_b(x, y, N), rho = val_spearman(x, y, N);
    /* Reversing one variable negates both. */
    for (size_t i = 0; i < N; i++) b[i] = -y[i];
    check_close("tau_b(x,-y)", "random", -tau, val_kendall_tau_b(x, b, N));
    check_close("spearman(x,-y)", "random", -rho, val_spearman(x, b, N));
    /* A strictly increasing transform changes neither. */
    for (size_t i = 0; i < N; i++) a[i] = exp(x[i] / 8.0) - 3.0;
    check_close("tau_b(f(x),y)", "random", tau, val_kendall_tau_b(a, y, N));
    check_close("spearman(f(x),y)", "random", rho, val_spearman(a, y, N));
    /* Item order does not matter: shuffle the pairs. */
    memcpy(a, x, sizeof a);
    memcpy(b, y, sizeof b);
    for (size_t i = N - 1; i > 0; i--) {
      size_t j = (size_t)rng_below(&r, i + 1);
      double t0 = a[i], t1 = b[i];
      a[i] = a[j], b[i] = b[j];
      a[j] = t0, b[j] = t1;
    }
    check_close("tau_b shuffled", "random", tau, val_kendall_tau_b(a, b, N));
    check_close("spearman shuffled", "random", rho, val_spearman(a, b, N));
    double p1, p2, q1, q2;
    val_topk(x, y, N, 17, &p1, &q1);
    val_topk(a, b, N, 17, &p2, &q2);
    check_close("topk shuffled", "random", p1, p2);
    val_topk_thresh(x, y, N, 17, y[0], &p1, &q1);
    val_topk_thresh(a, b, N, 17, y[0], &p2, &q2);
    check_close("topk_thresh shuffled", "random", p1, p2);
    check_close("topk_thresh shuffled", "random", q1, q2);
  }
}

/* ---- large n: O(n log n) and exact 64-bit pair counts --------------------------------------- */

/* Closed forms at n = 200k. A quadratic implementation would need 2e10 pair visits per
 * call here (tens of seconds); this test is not timed, see the report for measurements. */
static void test_large_closed_form(void **state) {
  (void)state;
  enum { N = 200000, B = 7 };
  double *x = xmalloc(N * sizeof *x), *y = xmalloc(N * sizeof *y);
  double n0 = (double)N * (N - 1) / 2;

  /* y ties in groups of 3, no discordant pairs: tau_b = sqrt((n0 - n2) / n0). */
  for (size_t i = 0; i < N; i++) x[i] = (double)i, y[i] = (double)(i / 3);
  double groups = N / 3, rest = N % 3;
  double n2 = groups * 3 + (rest == 2 ? 1 : 0);
  check_close("tau_b ties/3", "n=200k", sqrt((n0 - n2) / n0), val_kendall_tau_b(x, y, N));

  /* Blocks of B reversed in place: B(B-1)/2 discordant pairs per full block, no ties. */
  size_t full = N / B;
  for (size_t i = 0; i < N; i++) {
    size_t blk = i / B, j = i % B;
    y[i] = blk < full ? (double)(blk * B + (B - 1 - j)) : (double)i;
  }
  double disc = (double)full * B * (B - 1) / 2;
  check_close("tau_b block-reversed", "n=200k", (n0 - 2 * disc) / n0, val_kendall_tau_b(x, y, N));
  /* Spearman without ties: 1 - 6 sum d^2 / (n (n^2 - 1)), sum d^2 = B(B^2-1)/3 per block. */
  double d2 = (double)full * B * (B * B - 1) / 3.0;
  double nn = N;
  check_close("spearman block-reversed", "n=200k", 1 - 6 * d2 / (nn * (nn * nn - 1)),
              val_spearman(x, y, N));

  /* Fully reversed: every pair discordant. */
  for (size_t i = 0; i < N; i++) y[i] = -(double)i;
  check_close("tau_b reversed", "n=200k", -1.0, val_kendall_tau_b(x, y, N));
  free(x);
  free(y);
}

/* ---- undefined cases ---------------------------------------------------------------------- */

static void test_undefined(void **state) {
  (void)state;
  double x[4] = {1, 2, 3, 4}, y[4] = {4, 3, 2, 1}, c[4] = {2, 2, 2, 2};
  double nanv[4] = {1, NAN, 3, 4}, out[4], p = 0, r = 0;
  assert_true(isnan(val_kendall_tau_b(x, y, 0)));
  assert_true(isnan(val_kendall_tau_b(x, y, 1)));
  assert_true(isnan(val_spearman(x, y, 1)));
  assert_true(isnan(val_pearson(x, y, 1)));
  assert_true(isnan(val_kendall_tau_b(c, y, 4)));
  assert_true(isnan(val_kendall_tau_b(x, c, 4)));
  assert_true(isnan(val_spearman(c, y, 4)));
  assert_true(isnan(val_pearson(x, c, 4)));
  assert_true(isnan(val_kendall_tau_b(nanv, y, 4)));
  assert_true(isnan(val_kendall_tau_b(x, nanv, 4)));
  assert_true(isnan(val_spearman(nanv, y, 4)));
  val_ranks(nanv, 4, out);
  for (int i = 0; i < 4; i++) assert_true(isnan(out[i]));
  val_ranks(x, 0, out); /* no-op, no crash */
  assert_near(val_kendall_tau_b(x, y, 4), -1.0, 0.0);
  assert_near(val_pearson(x, y, 4), -1.0, 1e-15);
  /* Infinities: fine for rank statistics, undefined for Pearson. */
  double xi[4] = {1, 2, 3, INFINITY};
  assert_true(isnan(val_pearson(xi, y, 4)));
  assert_near(val_spearman(xi, y, 4), -1.0, 0.0);
  assert_near(val_kendall_tau_b(xi, y, 4), -1.0, 0.0);

  val_topk(x, y, 4, 0, &p, &r);
  assert_true(isnan(p) && isnan(r));
  val_topk(x, y, 0, 2, &p, &r);
  assert_true(isnan(p) && isnan(r));
  val_topk(nanv, y, 4, 2, &p, &r);
  assert_true(isnan(p) && isnan(r));
  val_topk_thresh(x, y, 4, 2, NAN, &p, &r);
  assert_true(isnan(p) && isnan(r));
  val_topk_thresh(x, nanv, 4, 2, 0.0, &p, &r);
  assert_true(isnan(p) && isnan(r));
  val_topk(x, y, 4, 2, NULL, NULL); /* NULL outputs allowed */
  val_topk(x, x, 4, 2, &p, NULL);
  assert_near(p, 1.0, 0.0);

  double w[4];
  val_topk_weights(c, 4, 3, w); /* all tied: each chosen with probability 3/4 */
  for (int i = 0; i < 4; i++) assert_near(w[i], 0.75, 0.0);
  val_topk_weights(x, 4, 0, w);
  for (int i = 0; i < 4; i++) assert_near(w[i], 0.0, 0.0);
  val_topk_weights(x, 4, 99, w);
  for (int i = 0; i < 4; i++) assert_near(w[i], 1.0, 0.0);
}

/* ---- top-k against enumeration of every tie-break ---------------------------------------- */

/* Next permutation in lexicographic order; false after the last. */
static bool next_perm(int *a, int n) {
  int i = n - 2;
  while (i >= 0 && a[i] >= a[i + 1]) i--;
  if (i < 0) return false;
  int j = n - 1;
  while (a[j] <= a[i]) j--;
  int t = a[i];
  a[i] = a[j], a[j] = t;
  for (int l = i + 1, r = n - 1; l < r; l++, r--) t = a[l], a[l] = a[r], a[r] = t;
  return true;
}

/* Bitmask of the top-k of v when ties are broken by the permutation rank pr[]. */
static unsigned topk_mask(const double *v, const int *pr, int n, int k) {
  unsigned m = 0;
  for (int i = 0; i < n; i++) {
    int better = 0; /* items ranked above i */
    for (int j = 0; j < n; j++)
      if (v[j] > v[i] || (v[j] == v[i] && pr[j] < pr[i])) better++;
    if (better < k) m |= 1u << i;
  }
  return m;
}

static void test_topk_enumerated(void **state) {
  (void)state;
  wi_rng r;
  rng_seed(&r, tu_seed() + 2);
  enum { MAXN = 5 };
  static unsigned mx[120], my[120]; /* 5! tie-break orders */
  for (int t = 0; t < 200; t++) {
    int n = 1 + (int)rng_below(&r, MAXN), k = 1 + (int)rng_below(&r, (uint64_t)n);
    double x[MAXN], y[MAXN];
    for (int i = 0; i < n; i++) {
      x[i] = (double)rng_below(&r, 3);
      y[i] = (double)rng_below(&r, 3);
    }
    double th = (double)rng_below(&r, 4);
    int perm[MAXN], np = 0;
    for (int i = 0; i < n; i++) perm[i] = i;
    do {
      mx[np] = topk_mask(x, perm, n, k);
      my[np] = topk_mask(y, perm, n, k);
      np++;
    } while (next_perm(perm, n));
    unsigned imp = 0;
    for (int i = 0; i < n; i++)
      if (y[i] >= th) imp |= 1u << i;
    double both = 0, hit = 0;
    for (int a = 0; a < np; a++) {
      hit += __builtin_popcount(mx[a] & imp);
      for (int b = 0; b < np; b++) both += __builtin_popcount(mx[a] & my[b]);
    }
    double ov = both / ((double)np * np), ovt = hit / np;
    double p, rc;
    val_topk(x, y, (size_t)n, (size_t)k, &p, &rc);
    check_close("topk precision vs enumeration", "random", ov / k, p);
    check_close("topk recall vs enumeration", "random", ov / k, rc);
    val_topk_thresh(x, y, (size_t)n, (size_t)k, th, &p, &rc);
    int nimp = __builtin_popcount(imp);
    check_close("thresh precision vs enumeration", "random", ovt / k, p);
    check_close("thresh recall vs enumeration", "random", nimp ? ovt / nimp : NAN, rc);
  }
}

/* ---- bootstrap ---------------------------------------------------------------------------- */

/* Correlated data with ties from a fixed seed (so the sanity bounds below are not flaky). */
static void fixed_data(double *x, double *y, size_t n, uint64_t seed) {
  wi_rng r;
  rng_seed(&r, seed);
  for (size_t i = 0; i < n; i++) {
    x[i] = (double)rng_below(&r, 50);
    y[i] = x[i] + (double)rng_below(&r, 40);
  }
}

static double topk_ctx(void *ctx, const double *x, const double *y, size_t n) {
  double p;
  val_topk(x, y, n, *(size_t *)ctx, &p, NULL);
  return p;
}

static void test_bootstrap_deterministic(void **state) {
  (void)state;
  enum { N = 500 };
  double x[N], y[N], lo1, hi1, lo2, hi2, lo3, hi3;
  fixed_data(x, y, N, 7);
  size_t k1 = val_bootstrap_ci(val_kendall_tau_b, x, y, N, 300, 0.05, 42, &lo1, &hi1);
  size_t k2 = val_bootstrap_ci(val_kendall_tau_b, x, y, N, 300, 0.05, 42, &lo2, &hi2);
  assert_int_equal(k1, 300);
  assert_int_equal(k2, 300);
  assert_memory_equal(&lo1, &lo2, sizeof lo1); /* bit-identical */
  assert_memory_equal(&hi1, &hi2, sizeof hi1);
  val_bootstrap_ci(val_kendall_tau_b, x, y, N, 300, 0.05, 43, &lo3, &hi3);
  assert_true(lo3 != lo1 || hi3 != hi1); /* the seed is used */
  /* A wider level gives a wider interval from the same replicates. */
  double lo4, hi4;
  val_bootstrap_ci(val_kendall_tau_b, x, y, N, 300, 0.01, 42, &lo4, &hi4);
  assert_true(lo4 <= lo1 && hi4 >= hi1);
  /* The context form draws the same indices. */
  size_t k = 40;
  double a1, b1, a2, b2;
  val_bootstrap_ci_ctx(topk_ctx, &k, x, y, N, 200, 0.1, 9, &a1, &b1);
  val_bootstrap_ci_ctx(topk_ctx, &k, x, y, N, 200, 0.1, 9, &a2, &b2);
  assert_memory_equal(&a1, &a2, sizeof a1);
  assert_memory_equal(&b1, &b2, sizeof b1);
  assert_true(a1 <= b1 && a1 >= 0 && b1 <= 1);
}

static void test_bootstrap_coverage(void **state) {
  (void)state;
  enum { N = 4000 };
  double *x = xmalloc(N * sizeof *x), *y = xmalloc(N * sizeof *y), lo, hi;
  fixed_data(x, y, N, 11);
  double tau = val_kendall_tau_b(x, y, N), rho = val_spearman(x, y, N);
  assert_true(tau > 0.3);
  assert_int_equal(val_bootstrap_ci(val_kendall_tau_b, x, y, N, 200, 0.05, 1, &lo, &hi), 200);
  assert_true(lo < tau && tau < hi);
  assert_true(hi - lo < 0.1); /* large sample: a narrow interval */
  assert_int_equal(val_bootstrap_ci(val_spearman, x, y, N, 200, 0.05, 2, &lo, &hi), 200);
  assert_true(lo < rho && rho < hi);
  assert_true(hi - lo < 0.1);
  free(x);
  free(y);
}

/* Pairs must be resampled together: with y = x every resample has tau-b exactly 1
 * (duplicates are joint ties), which independent resampling of x and y would not give. */
static void test_bootstrap_pairs(void **state) {
  (void)state;
  enum { N = 200 };
  double x[N], y[N], lo, hi;
  for (size_t i = 0; i < N; i++) x[i] = (double)((i * 37) % N), y[i] = -x[i];
  assert_int_equal(val_bootstrap_ci(val_kendall_tau_b, x, x, N, 100, 0.05, 3, &lo, &hi), 100);
  assert_near(lo, 1.0, 0.0);
  assert_near(hi, 1.0, 0.0);
  val_bootstrap_ci(val_spearman, x, y, N, 100, 0.05, 3, &lo, &hi);
  assert_near(lo, -1.0, 1e-15);
  assert_near(hi, -1.0, 1e-15);
}

/* A statistic that returns its call number (NaN on every third call): checks the
 * percentile interpolation and the dropping of non-finite replicates. */
static double counter_stat(void *ctx, const double *x, const double *y, size_t n) {
  (void)x, (void)y, (void)n;
  int c = (*(int *)ctx)++;
  return c % 3 == 2 ? NAN : (double)c;
}

static void test_bootstrap_quantiles(void **state) {
  (void)state;
  double x[3] = {1, 2, 3}, lo, hi;
  int calls = 0;
  /* 150 calls keep 100 values: 0,1,3,4,...,148,... i.e. c with c % 3 != 2. */
  size_t kept = val_bootstrap_ci_ctx(counter_stat, &calls, x, x, 3, 150, 0.1, 5, &lo, &hi);
  assert_int_equal(calls, 150);
  assert_int_equal(kept, 100);
  /* Kept sorted values v[i] = i + i/2 (integer division). h = 99*0.05 = 4.95 lies between
   * v[4] = 6 and v[5] = 7; h = 99*0.95 = 94.05 between v[94] = 141 and v[95] = 142. */
  assert_near(lo, 6.95, 1e-12);
  assert_near(hi, 141.05, 1e-12);

  /* Degenerate resamples are dropped and counted: n = 3 resamples often have all x tied. */
  kept = val_bootstrap_ci(val_kendall_tau_b, x, x, 3, 1000, 0.05, 5, &lo, &hi);
  assert_true(kept > 0 && kept < 1000);
  assert_near(lo, 1.0, 0.0);
  /* Bad arguments: NaN interval, nothing kept. */
  assert_int_equal(val_bootstrap_ci(val_spearman, x, x, 3, 0, 0.05, 5, &lo, &hi), 0);
  assert_true(isnan(lo) && isnan(hi));
  assert_int_equal(val_bootstrap_ci(val_spearman, x, x, 3, 10, 1.0, 5, &lo, &hi), 0);
  assert_int_equal(val_bootstrap_ci(val_spearman, x, x, 0, 10, 0.05, 5, &lo, &hi), 0);
  assert_int_equal(val_bootstrap_ci(NULL, x, x, 3, 10, 0.05, 5, &lo, &hi), 0);
  double c[3] = {1, 1, 1};
  assert_int_equal(val_bootstrap_ci(val_spearman, c, x, 3, 10, 0.05, 5, &lo, &hi), 0);
  assert_true(isnan(lo) && isnan(hi));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_ref_corr),
      cmocka_unit_test(test_ref_infinities),
      cmocka_unit_test(test_ref_ranks),
      cmocka_unit_test(test_ref_topk),
      cmocka_unit_test(test_tau_vs_naive),
      cmocka_unit_test(test_invariances),
      cmocka_unit_test(test_large_closed_form),
      cmocka_unit_test(test_undefined),
      cmocka_unit_test(test_topk_enumerated),
      cmocka_unit_test(test_bootstrap_deterministic),
      cmocka_unit_test(test_bootstrap_coverage),
      cmocka_unit_test(test_bootstrap_pairs),
      cmocka_unit_test(test_bootstrap_quantiles),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

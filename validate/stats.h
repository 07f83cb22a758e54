/* stats.h — rank statistics for validating attributions: Kendall tau-b, Spearman, top-k, bootstrap CIs. */
#ifndef WHATIF_STATS_H
#define WHATIF_STATS_H

#include <stddef.h>
#include <stdint.h>

/* Conventions shared by every function here.
 *
 * - Inputs are parallel arrays of n doubles: x[i] is one method's score for item i (e.g.
 *   Gus taint of a static instruction), y[i] the other's (e.g. the exact IPC delta of a
 *   perturbation replay). Larger means "more important" wherever direction matters (top-k).
 * - Ties are exact floating-point equality (so -0.0 ties with 0.0). Infinities are ordinary
 *   values. A NaN anywhere in x or y makes the result NaN (scipy's nan_policy="propagate").
 * - A statistic that is undefined (too few items, a constant input, k = 0) is NaN, never an
 *   error and never a crash. Callers test with isnan().
 * - Functions are reentrant and thread-safe (no globals). Those that need scratch memory
 *   take O(n) from xmalloc and free it before returning; nothing is handed to the caller.
 * - Counts are 64-bit: n up to about 6e9 items (pair counts n(n-1)/2 must fit in 64 bits).
 */

/* Kendall tau-b with ties, by Knight's O(n log n) algorithm (sort pairs by x then y, count
 * ties in x, joint ties, merge-sort y counting swaps, count ties in y):
 *   tau_b = (n0 - n1 - n2 + n3 - 2*swaps) / sqrt((n0 - n1) * (n0 - n2))
 * with n0 = n(n-1)/2, n1/n2 the pairs tied in x/y, n3 the pairs tied in both. Equals
 * scipy.stats.kendalltau(x, y, variant="b").statistic. Result clamped to [-1, 1].
 * NaN when n < 2, when all of x or all of y are tied, or when any input is NaN. */
double val_kendall_tau_b(const double *x, const double *y, size_t n);

/* Spearman's rho: the Pearson correlation of the average ranks (val_ranks) of x and y.
 * Equals scipy.stats.spearmanr(x, y).statistic. NaN when n < 2, when x or y is constant,
 * or when any input is NaN. */
double val_spearman(const double *x, const double *y, size_t n);

/* Pearson's correlation coefficient of x and y (two-pass: means, then centred sums).
 * Clamped to [-1, 1]. NaN when n < 2, when x or y is constant, or when any input is NaN
 * or infinite (the one function here that is not rank-based, so infinities do matter). */
double val_pearson(const double *x, const double *y, size_t n);

/* Average ranks, 1-based, as scipy.stats.rankdata(x, "average"): the smallest value gets
 * rank 1, and each group of tied values gets the mean of the ranks it spans (three values
 * tied for places 2..4 all get 3). Writes n ranks to out (out must not alias x). If any
 * x is NaN, every out[i] is NaN. */
void val_ranks(const double *x, size_t n, double *out);

/* Top-k membership weights with ties at the boundary resolved by their expectation.
 * The top-k by x are the k items with the largest x. When the k-th largest value v is
 * shared by g items of which only m fit (a items are strictly greater, m = k - a), a
 * fixed rule (e.g. lower index first) would make the answer depend on item order; instead
 * each of the g tied items gets weight m/g, its probability of being chosen under a
 * uniformly random tie-break. Items above v get weight 1, items below get 0; the weights
 * always sum to k. Writes n weights to w. k is clamped to n; k = 0 gives all zeros.
 * If any x is NaN, every w[i] is NaN. */
void val_topk_weights(const double *x, size_t n, size_t k, double *w);

/* Top-k precision and recall of x (predicted ranking) against y (truth): the predicted
 * set is the top-k by x, the "truly important" set the top-k by y, each with boundary
 * ties resolved as in val_topk_weights, independently for x and y. The overlap is the
 * expected |P & T| under independent uniformly random tie-breaks, sum_i wx[i]*wy[i];
 * precision = overlap/|P| and recall = overlap/|T|. Both sets have k members, so the two
 * are equal here (use val_topk_thresh for a truth set of its own size). k is clamped to
 * n. Both outputs are NaN when n = 0, k = 0 or any input is NaN. Either pointer may be
 * NULL. */
void val_topk(const double *x, const double *y, size_t n, size_t k, double *precision,
              double *recall);

/* Like val_topk, but the truly important items are those with y[i] >= thresh (a crisp
 * set T of any size). precision = E|P & T| / k, recall = E|P & T| / |T|, with P the top-k
 * by x (boundary ties as in val_topk_weights). recall is NaN when T is empty (precision
 * is then 0). Both outputs are NaN when n = 0, k = 0, thresh is NaN or any input is NaN.
 * Either pointer may be NULL. */
void val_topk_thresh(const double *x, const double *y, size_t n, size_t k, double thresh,
                     double *precision, double *recall);

/* A paired statistic, e.g. val_kendall_tau_b or val_spearman. */
typedef double (*val_stat_fn)(const double *x, const double *y, size_t n);
/* A paired statistic with caller context (e.g. top-k precision with its k). */
typedef double (*val_stat_ctx_fn)(void *ctx, const double *x, const double *y, size_t n);

/* Percentile bootstrap confidence interval of stat_fn(x, y, n) at level 1 - alpha.
 * Each of iters replicates resamples n (x[j], y[j]) pairs with replacement, drawing
 * indices from the project's deterministic RNG (rng_seed(seed), rng_below(n)); the same
 * seed and inputs give bit-identical results on every machine and thread. *lo and *hi are
 * the alpha/2 and 1 - alpha/2 quantiles of the replicate statistics, interpolated linearly
 * between order statistics (numpy's default "linear" quantile). Replicates whose
 * statistic is not finite (e.g. a resample in which all x tie, so tau-b is NaN) are
 * dropped; the return value is the number kept, so callers can refuse an interval built
 * from too few (e.g. fewer than 0.9 * iters). *lo = *hi = NaN and 0 is returned when
 * n = 0, iters = 0, alpha is outside (0, 1), stat_fn is NULL or no replicate is finite.
 * Scratch: 2n + iters doubles, freed before returning. stat_fn must not keep pointers to
 * the arrays it is given. */
size_t val_bootstrap_ci(val_stat_fn stat_fn, const double *x, const double *y, size_t n,
                        size_t iters, double alpha, uint64_t seed, double *lo, double *hi);

/* val_bootstrap_ci for a statistic that takes a context pointer (passed through as ctx).
 * With the same seed it resamples exactly the same indices as val_bootstrap_ci. */
size_t val_bootstrap_ci_ctx(val_stat_ctx_fn stat_fn, void *ctx, const double *x,
                            const double *y, size_t n, size_t iters, double alpha,
                            uint64_t seed, double *lo, double *hi);

#endif

/* Order statistics for the bench harness: percentiles by nearest rank and a
 * distribution-free 95% confidence interval of the median.
 *
 * CI of the median: with n samples the number B of them below the true median
 * is Binomial(n, 1/2).  [x_(j), x_(n-j+1)] (1-based order statistics) covers
 * the median with probability 1 - 2 P(B <= j-1); we take the largest j that
 * keeps that at or above 95%.  Exact binomial sums up to n = 1000, the normal
 * approximation beyond.  Below n = 6 no j reaches 95%: the interval is
 * [min, max] (coverage 1 - 2^(1-n)), which the report shows as is. */
#include <math.h>
#include <stdlib.h>
#include "bench/harness.h"

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* Nearest-rank percentile of sorted v (p in 0..100). */
static double pct(const double *v, size_t n, double p)
{
	size_t r = (size_t)ceil(p / 100.0 * (double)n);
	if (r < 1)
		r = 1;
	if (r > n)
		r = n;
	return v[r - 1];
}

/* Largest j (1-based) with 1 - 2 P(B <= j-1) >= 0.95, or 1. */
size_t bench_median_ci_rank(size_t n)
{
	if (n > 1000) {
		double half = 1.959964 * sqrt((double)n) / 2.0;
		double j = floor((double)n / 2.0 - half);
		return j < 1 ? 1 : (size_t)j;
	}
	/* cumulative P(B <= i) for B ~ Bin(n, 1/2), in logs to stay finite */
	double cum = 0;
	size_t j = 1;
	for (size_t i = 0; i < n; i++) {
		double lp = lgamma((double)n + 1) - lgamma((double)i + 1) -
			    lgamma((double)(n - i) + 1) - (double)n * log(2.0);
		cum += exp(lp);
		if (1.0 - 2.0 * cum < 0.95)
			break;
		j = i + 1;   /* j - 1 = i still keeps coverage >= 95% */
	}
	return j;
}

void bench_summarize(double *v, size_t n, struct bench_summary *out)
{
	*out = (struct bench_summary){ .n = n };
	if (!n)
		return;
	qsort(v, n, sizeof *v, cmp_double);
	double sum = 0;
	for (size_t i = 0; i < n; i++)
		sum += v[i];
	out->mean = sum / (double)n;
	out->min = v[0];
	out->max = v[n - 1];
	out->median = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2.0;
	out->p5 = pct(v, n, 5);
	out->p95 = pct(v, n, 95);
	out->p99 = pct(v, n, 99);
	size_t j = bench_median_ci_rank(n);
	if (j > (n + 1) / 2)
		j = (n + 1) / 2;
	out->ci_lo = v[j - 1];
	out->ci_hi = v[n - j];
}

/* OpenMP lock / critical / barrier microbenchmark for the shim (not a test).
 * usage: omp_bench lock|critical|barrier MILLISECONDS
 * Prints: mode, total operations per second, and fairness (per-thread
 * operation counts: min/max and Jain's index), since a fair lock pays a
 * hand-off that libgomp's lock (the releaser may retake it) does not. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double now(void) { return omp_get_wtime(); }

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: omp_bench lock|critical|barrier MS\n");
		return 2;
	}
	const char *mode = argv[1];
	double secs = atof(argv[2]) / 1000.0;
	int m = !strcmp(mode, "lock") ? 0 : !strcmp(mode, "critical") ? 1 : 2;
	long counts[256] = { 0 };
	volatile long shared = 0;
	int nt = 1;
	omp_lock_t l;
	omp_init_lock(&l);
	double t0 = 0, t1 = 0;
#pragma omp parallel
	{
		int me = omp_get_thread_num();
		long n = 0;
#pragma omp single
		{
			nt = omp_get_num_threads();
			t0 = now();
		}
		if (m == 2) {
			/* barriers: fixed count decided by thread 0's clock, agreed via
			 * the barrier itself */
			int stop = 0;
			while (!stop) {
				for (int i = 0; i < 100; i++) {
#pragma omp barrier
					n++;
				}
#pragma omp barrier
#pragma omp single
				shared = now() - t0 > secs;
				stop = (int)shared;
			}
		} else {
			while (1) {
				for (int i = 0; i < 64; i++) {
					if (m == 0) {
						omp_set_lock(&l);
						shared++;
						omp_unset_lock(&l);
					} else {
#pragma omp critical
						shared++;
					}
				}
				n += 64;
				if (now() - t0 > secs)
					break;
			}
		}
		counts[me] = n;
#pragma omp barrier
#pragma omp single
		t1 = now();
	}
	omp_destroy_lock(&l);
	long tot = 0, mn = counts[0], mx = counts[0];
	double sq = 0;
	for (int i = 0; i < nt; i++) {
		tot += counts[i];
		mn = counts[i] < mn ? counts[i] : mn;
		mx = counts[i] > mx ? counts[i] : mx;
		sq += (double)counts[i] * counts[i];
	}
	double ops = m == 2 ? (double)counts[0] : (double)tot;
	printf("%s threads=%d ops_per_s=%.0f min_over_max=%.3f jain=%.3f\n", mode, nt,
	       ops / (t1 - t0), mx ? (double)mn / mx : 0,
	       sq > 0 ? (double)tot * tot / (nt * sq) : 0);
	return 0;
}

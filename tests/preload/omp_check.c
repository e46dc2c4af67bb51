/* OpenMP locks, nest locks, critical sections (unnamed and named), explicit
 * barriers, and tasks before a barrier: every result is checked here and
 * printed, so test_preload.sh can also compare against the native run. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#define ITERS 20000
#define ROUNDS 200

int main(void)
{
	omp_lock_t lock;
	omp_nest_lock_t nest;
	long by_lock = 0, by_nest = 0, by_crit = 0, by_named = 0, tasks_done = 0;
	int nthreads = 0, bad_rounds = 0;
	int *phase;

	omp_init_lock(&lock);
	omp_init_nest_lock(&nest);
	phase = calloc(64, sizeof *phase);
#pragma omp parallel num_threads(4)
	{
		int me = omp_get_thread_num(), n = omp_get_num_threads();
#pragma omp single
		nthreads = n;
		for (int i = 0; i < ITERS; i++) {
			omp_set_lock(&lock);
			by_lock++;
			omp_unset_lock(&lock);
			omp_set_nest_lock(&nest);
			omp_set_nest_lock(&nest);
			by_nest++;
			omp_unset_nest_lock(&nest);
			omp_unset_nest_lock(&nest);
#pragma omp critical
			by_crit++;
#pragma omp critical(named_one)
			by_named++;
			if (omp_test_lock(&lock)) {
				by_lock++;
				omp_unset_lock(&lock);
			}
		}
		/* barriers: nobody may see a neighbour in an older round */
		for (int r = 0; r < ROUNDS; r++) {
			phase[me] = r;
#pragma omp barrier
			for (int j = 0; j < n; j++)
				if (phase[j] < r) {
#pragma omp atomic
					bad_rounds++;
				}
#pragma omp barrier
		}
		/* tasks created before a barrier must be done after it */
#pragma omp single nowait
		for (int t = 0; t < 100; t++) {
#pragma omp task
			{
#pragma omp atomic
				tasks_done++;
			}
		}
#pragma omp barrier
		if (tasks_done != 100) {
#pragma omp atomic
			bad_rounds++;
		}
	}
	omp_destroy_lock(&lock);
	omp_destroy_nest_lock(&nest);
	free(phase);
	long want = (long)nthreads * ITERS;
	printf("threads %d\nlock %s\nnest %ld\ncritical %ld\nnamed critical %ld\n"
	       "barrier violations %d\ntasks done %ld\n", nthreads,
	       by_lock >= want ? "ok" : "LOST", by_nest, by_crit, by_named, bad_rounds,
	       tasks_done);
	return by_lock >= want && by_nest == want && by_crit == want && by_named == want &&
			       bad_rounds == 0 && tasks_done == 100 ? 0 : 1;
}

/* A hybrid MPI + OpenMP program (test_mpi.sh): each rank runs an OpenMP team
 * that takes a dynamic loop, a critical section, an OpenMP lock and barriers;
 * the master thread alone calls MPI (MPI_THREAD_FUNNELED).  Every round's
 * partial sums are combined with MPI_Allreduce and checked against the
 * closed form; rank 0 prints one line per round and the total. */
#include <mpi.h>
#include <omp.h>
#include <stdio.h>

#define ROUNDS 20
#define N 4000

int main(int argc, char **argv)
{
	int provided, rank, size, bad = 0;
	long total = 0;
	if (MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS)
		return 2;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (provided < MPI_THREAD_FUNNELED) {
		if (!rank)
			fprintf(stderr, "mpi_hybrid: MPI_THREAD_FUNNELED not provided\n");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	omp_lock_t lock;
	omp_init_lock(&lock);
	for (int r = 0; r < ROUNDS; r++) {
		long by_loop = 0, by_crit = 0, by_lock = 0, seen = 0;
		int nthreads = 1;
		static long slot[64];
#pragma omp parallel reduction(+ : by_loop)
		{
			int me = omp_get_thread_num();
#pragma omp single
			nthreads = omp_get_num_threads();
#pragma omp for schedule(dynamic, 16)
			for (int i = rank; i < N; i += size)
				by_loop += (long)i * (r + 1);
#pragma omp critical
			by_crit += me + 1;
			omp_set_lock(&lock);
			by_lock++;
			omp_unset_lock(&lock);
			slot[me & 63] = r + 1;
#pragma omp barrier
#pragma omp master
			for (int t = 0; t < nthreads && t < 64; t++)
				seen += slot[t] == r + 1;
		}
		long mine[3] = { by_loop, by_crit == (long)nthreads * (nthreads + 1) / 2 &&
				 by_lock == nthreads && seen == (nthreads < 64 ? nthreads : 64),
				 1 }, all[3];
		MPI_Allreduce(mine, all, 3, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
		long want = (long)(r + 1) * ((long)N * (N - 1) / 2);
		if (all[0] != want || all[1] != size)
			bad++;
		total += all[0];
		if (!rank)
			printf("round %d: sum %ld (want %ld), ranks ok %ld of %d\n", r, all[0], want,
			       all[1], size);
	}
	omp_destroy_lock(&lock);
	if (!rank)
		printf("total %ld, bad rounds %d\n", total, bad);
	MPI_Finalize();
	return bad ? 1 : 0;
}

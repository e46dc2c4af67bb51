/* A module that uses OpenMP, for omp_local.c: loaded with dlopen and
 * RTLD_LOCAL, so its libgomp is not in the program's global scope (as a
 * Python extension's OpenBLAS is). */
#include <omp.h>

int omp_local_run(int rounds);

/* Parallel regions with a barrier and a critical section in each; the number
 * of critical sections entered (rounds x threads). */
int omp_local_run(int rounds)
{
	int total = 0;
	for (int r = 0; r < rounds; r++) {
#pragma omp parallel num_threads(2)
		{
#pragma omp barrier
#pragma omp critical
			total++;
		}
	}
	return total;
}

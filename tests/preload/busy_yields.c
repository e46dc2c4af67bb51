/* A busy machine for the auto lock's yields before a park: twice as many
 * threads burning CPU as there are CPUs, and three threads that each take one
 * mutex HOLDS times and keep it 1 ms (running, not yielding), so that the
 * others wait on a machine with more runnable threads than CPUs.  With
 * "yielding" the burners call sched_yield in their loop, which the shim notes.
 * Prints the acquisitions; under HWSYNC_STATS=1 the shim's summary says how
 * many waits yielded.
 * Usage: busy_yields HOLDS [yielding] */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define WORKERS 3

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static atomic_int stop;
static int holds, yielding;
static long taken;   /* under m */

static long long now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

static void *burn(void *arg)
{
	(void)arg;
	volatile unsigned long x = 0;
	while (!atomic_load(&stop)) {
		for (int i = 0; i < 10000; i++)
			x = x + 1;
		if (yielding)
			sched_yield();
	}
	return NULL;
}

static void *work(void *arg)
{
	(void)arg;
	for (int i = 0; i < holds; i++) {
		pthread_mutex_lock(&m);
		long long end = now_ns() + 1000000;
		while (now_ns() < end)
			;
		taken++;
		pthread_mutex_unlock(&m);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc < 2 || (holds = atoi(argv[1])) <= 0) {
		fprintf(stderr, "usage: busy_yields HOLDS [yielding]\n");
		return 2;
	}
	yielding = argc > 2 && !strcmp(argv[2], "yielding");
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	int nburn = (int)(cpus > 0 ? 2 * cpus : 2);
	pthread_t *b = calloc((size_t)nburn, sizeof *b), w[WORKERS];
	if (!b)
		return 1;
	for (int i = 0; i < nburn; i++)
		if (pthread_create(&b[i], NULL, burn, NULL))
			return 1;
	for (int i = 0; i < WORKERS; i++)
		if (pthread_create(&w[i], NULL, work, NULL))
			return 1;
	for (int i = 0; i < WORKERS; i++)
		pthread_join(w[i], NULL);
	atomic_store(&stop, 1);
	for (int i = 0; i < nburn; i++)
		pthread_join(b[i], NULL);
	printf("acquisitions %ld\n", taken);
	free(b);
	return 0;
}

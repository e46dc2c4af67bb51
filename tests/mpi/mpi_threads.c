/* An MPI program with MPI_THREAD_MULTIPLE and pthreads (test_mpi.sh): in each
 * rank, THREADS threads exchange messages with the same thread of the next
 * rank (tag = thread number) while they share a mutex-protected counter, a
 * condition variable and a pthread barrier; every thread also takes part in
 * a collective on its own communicator.  Rank 0 prints the checked totals. */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>

#define THREADS 4
#define ROUNDS 200

static int rank, size;
static MPI_Comm comms[THREADS];
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t c = PTHREAD_COND_INITIALIZER;
static pthread_barrier_t bar;
static long counter, received_sum;
static int arrived;

static void *worker(void *arg)
{
	int t = (int)(long)arg, next = (rank + 1) % size, prev = (rank + size - 1) % size;
	long got_sum = 0;
	for (int r = 0; r < ROUNDS; r++) {
		long out = (long)rank * 1000000 + t * 1000 + r, in = -1;
		MPI_Sendrecv(&out, 1, MPI_LONG, next, t, &in, 1, MPI_LONG, prev, t, MPI_COMM_WORLD,
			     MPI_STATUS_IGNORE);
		if (in != (long)prev * 1000000 + t * 1000 + r)
			got_sum -= 1000000000L;   /* a wrong message spoils the total */
		got_sum += in;
		pthread_mutex_lock(&m);
		counter++;
		pthread_mutex_unlock(&m);
		if (r % 50 == 49)
			pthread_barrier_wait(&bar);
	}
	long one = 1, ranks = 0;
	MPI_Allreduce(&one, &ranks, 1, MPI_LONG, MPI_SUM, comms[t]);
	pthread_mutex_lock(&m);
	received_sum += got_sum;
	if (ranks != size)
		received_sum = -1;
	if (++arrived == THREADS)
		pthread_cond_broadcast(&c);
	pthread_mutex_unlock(&m);
	return NULL;
}

int main(int argc, char **argv)
{
	int provided;
	pthread_t th[THREADS];
	if (MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided) != MPI_SUCCESS)
		return 2;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (provided < MPI_THREAD_MULTIPLE) {
		if (!rank)
			fprintf(stderr, "mpi_threads: MPI_THREAD_MULTIPLE not provided (%d)\n",
				provided);
		MPI_Finalize();
		return 77;
	}
	for (int t = 0; t < THREADS; t++)
		MPI_Comm_dup(MPI_COMM_WORLD, &comms[t]);
	pthread_barrier_init(&bar, NULL, THREADS);
	for (int t = 0; t < THREADS; t++)
		if (pthread_create(&th[t], NULL, worker, (void *)(long)t))
			MPI_Abort(MPI_COMM_WORLD, 2);
	pthread_mutex_lock(&m);
	while (arrived < THREADS)
		pthread_cond_wait(&c, &m);
	pthread_mutex_unlock(&m);
	for (int t = 0; t < THREADS; t++)
		pthread_join(th[t], NULL);
	long mine[2] = { counter, received_sum }, all[2];
	MPI_Reduce(mine, all, 2, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
	/* what every rank received: the previous rank's messages */
	long want = 0;
	for (int p = 0; p < size; p++)
		for (int t = 0; t < THREADS; t++)
			for (int r = 0; r < ROUNDS; r++)
				want += (long)p * 1000000 + t * 1000 + r;
	int bad = 0;
	if (!rank) {
		bad = all[0] != (long)size * THREADS * ROUNDS || all[1] != want;
		printf("ranks %d, threads %d: counter %ld (want %ld), received %ld (want %ld)\n",
		       size, THREADS, all[0], (long)size * THREADS * ROUNDS, all[1], want);
	}
	MPI_Bcast(&bad, 1, MPI_INT, 0, MPI_COMM_WORLD);
	for (int t = 0; t < THREADS; t++)
		MPI_Comm_free(&comms[t]);
	pthread_barrier_destroy(&bar);
	MPI_Finalize();
	return bad ? 1 : 0;
}

/* Memory exhaustion: lock calls that glibc cannot fail must not fail under
 * the shim either, and mutual exclusion must hold, while every allocation
 * fails.  Usage: nomem MODE N
 *   interpose  the allocator of failalloc.c is preloaded too: after the
 *              threads exist, N more allocations succeed, then all fail
 *   rlimit     RLIMIT_AS is set to the current size and the heap filled
 *              (run with MALLOC_ARENA_MAX=1, so that every thread allocates
 *              from the one filled arena)
 * Four threads, started before allocations fail and touching no lock until
 * then, each lock 300 default mutexes at once, in order (lock, trylock or a
 * timed lock), around a counter each, and wait on a condition variable with
 * a short timeout; every return value must be one glibc gives (0, EBUSY
 * from trylock, ETIMEDOUT from the timed calls), and no two threads may be
 * inside one mutex.  A mutex initialised and used while allocations fail
 * must be destroyable (0).  Prints "ok" and the counts; stderr gets how
 * many allocations were refused. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#define NT 4
#define NM 300
#define ITER 40

static pthread_mutex_t m[NM];
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static _Atomic int inside[NM];
static unsigned long count[NM];
static _Atomic int gate;

#define EXPECT(call, ok1, ok2) do {                                                   \
	int rc_ = (call);                                                              \
	if (rc_ != (ok1) && rc_ != (ok2)) {                                            \
		fprintf(stderr, "nomem: %s returned %d (%s)\n", #call, rc_, strerror(rc_)); \
		exit(1);                                                               \
	}                                                                              \
} while (0)

static void enter(int i)
{
	if (atomic_exchange(&inside[i], 1)) {
		fprintf(stderr, "nomem: two threads inside mutex %d\n", i);
		exit(1);
	}
}

static void leave(int i)
{
	atomic_store(&inside[i], 0);
}

static struct timespec in_us(int us)
{
	struct timespec t;
	clock_gettime(CLOCK_REALTIME, &t);
	t.tv_nsec += us * 1000L;
	if (t.tv_nsec >= 1000000000L)
		t.tv_sec++, t.tv_nsec -= 1000000000L;
	return t;
}

static void take(int i, unsigned how)
{
	struct timespec t;
	int rc;

	switch (how % 3) {
	case 0:
		EXPECT(pthread_mutex_lock(&m[i]), 0, 0);
		break;
	case 1:
		if ((rc = pthread_mutex_trylock(&m[i])) == EBUSY)
			rc = pthread_mutex_lock(&m[i]);
		EXPECT(rc, 0, 0);
		break;
	default:
		t = in_us(20);
		if ((rc = pthread_mutex_timedlock(&m[i], &t)) == ETIMEDOUT)
			rc = pthread_mutex_lock(&m[i]);
		EXPECT(rc, 0, 0);
	}
	enter(i);
}

static void *worker(void *p)
{
	unsigned id = (unsigned)(uintptr_t)p;
	struct timespec t;

	while (!atomic_load(&gate))
		sched_yield();
	for (unsigned it = 0; it < ITER; it++) {
		for (int i = 0; i < NM; i++)
			take(i, it + id + (unsigned)i);
		for (int i = 0; i < NM; i++)
			count[i]++;
		sched_yield();   /* let the others queue behind us */
		for (int i = NM; i-- > 0;) {
			leave(i);
			EXPECT(pthread_mutex_unlock(&m[i]), 0, 0);
		}
		take(0, it);
		leave(0);
		t = in_us(50);
		EXPECT(pthread_cond_timedwait(&cv, &m[0], &t), 0, ETIMEDOUT);
		enter(0);
		leave(0);
		EXPECT(pthread_mutex_unlock(&m[0]), 0, 0);
	}
	return NULL;
}

static void *filled;   /* rlimit: the blocks that fill the heap */

static void fill(void)
{
	static const size_t sizes[] = { 1 << 20, 1 << 16, 1 << 12, 1 << 8, 32 };
	for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++)
		for (void *b; (b = malloc(sizes[k]));) {
			*(void **)b = filled;
			filled = b;
		}
}

int main(int argc, char **argv)
{
	pthread_t t[NT];
	struct rlimit old;
	void (*after)(long) = NULL;
	long (*refused)(void) = NULL;

	if (argc != 3 || (strcmp(argv[1], "interpose") && strcmp(argv[1], "rlimit"))) {
		fprintf(stderr, "usage: %s interpose|rlimit N\n", argv[0]);
		return 2;
	}
	int rlim = !strcmp(argv[1], "rlimit");
	if (!rlim) {
		after = (void (*)(long))dlsym(RTLD_DEFAULT, "hws_failalloc_after");
		refused = (long (*)(void))dlsym(RTLD_DEFAULT, "hws_failalloc_refused");
		if (!after || !refused) {
			fprintf(stderr, "nomem: failalloc is not preloaded\n");
			return 2;
		}
	}
	for (int i = 0; i < NM; i++)
		pthread_mutex_init(&m[i], NULL);
	printf("nomem %s\n", argv[1]);
	fflush(stdout);
	for (unsigned i = 0; i < NT; i++)
		if (pthread_create(&t[i], NULL, worker, (void *)(uintptr_t)i)) {
			fprintf(stderr, "nomem: pthread_create failed\n");
			return 1;
		}

	if (rlim) {
		unsigned long pages = 0;
		FILE *f = fopen("/proc/self/statm", "r");
		if (!f || fscanf(f, "%lu", &pages) != 1)
			return fprintf(stderr, "nomem: cannot read /proc/self/statm\n"), 1;
		fclose(f);
		getrlimit(RLIMIT_AS, &old);
		struct rlimit now = { pages * (unsigned long)sysconf(_SC_PAGESIZE), old.rlim_max };
		if (setrlimit(RLIMIT_AS, &now))
			return perror("nomem: setrlimit"), 1;
		fill();
	} else {
		after(atol(argv[2]));
	}

	/* A mutex made and used while allocations fail. */
	pthread_mutex_t x;
	EXPECT(pthread_mutex_init(&x, NULL), 0, 0);
	EXPECT(pthread_mutex_lock(&x), 0, 0);
	EXPECT(pthread_mutex_unlock(&x), 0, 0);
	EXPECT(pthread_mutex_trylock(&x), 0, 0);
	EXPECT(pthread_mutex_unlock(&x), 0, 0);
	EXPECT(pthread_mutex_destroy(&x), 0, 0);

	atomic_store(&gate, 1);
	for (unsigned i = 0; i < NT; i++)
		pthread_join(t[i], NULL);

	long n = -1;
	if (rlim) {
		int k = 0;
		for (void *b = filled, *nx; b; b = nx, k++) {
			nx = *(void **)b;
			free(b);
		}
		setrlimit(RLIMIT_AS, &old);
		fprintf(stderr, "nomem: %d blocks filled the heap\n", k);
	} else {
		n = refused();
		after(LONG_MAX);   /* the exit summary may allocate again */
		fprintf(stderr, "nomem: %ld allocations refused\n", n);
	}
	for (int i = 0; i < NM; i++)
		if (count[i] != (unsigned long)NT * ITER) {
			printf("mutex %d: count %lu, not %d\n", i, count[i], NT * ITER);
			return 1;
		}
	for (int i = 0; i < NM; i++)
		EXPECT(pthread_mutex_destroy(&m[i]), 0, 0);
	printf("ok: %d threads x %d rounds x %d mutexes\n", NT, ITER, NM);
	return 0;
}

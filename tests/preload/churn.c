/* Object churn: create, use and abandon (free without destroy, as many
 * programs do) a million objects of one interposed type.  Run natively and
 * under the shim, its peak RSS must stay flat: the shim may keep no state
 * outside the object.  Objects live in a malloc'd batch that is freed whole,
 * so the native run needs only one batch of memory.
 *
 * usage: churn TYPE [COUNT]   TYPE: mutex mutex-static cond barrier sem spin rwlock
 *                                   omp-lock omp-nest (OpenMP build only) all
 * Prints one line per type with the number of calls that returned something
 * other than what POSIX/OpenMP specify; exit status 1 if any did. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#define BATCH 4096

static long errors;
#define CHECK(expr) ((expr) ? (void)0 : (void)errors++)

static void use_mutex(void *p, long i)
{
	pthread_mutex_t *m = p;
	CHECK(pthread_mutex_init(m, NULL) == 0);
	CHECK(pthread_mutex_lock(m) == 0);
	CHECK(pthread_mutex_trylock(m) == EBUSY);
	CHECK(pthread_mutex_unlock(m) == 0);
	if (i % 64 == 0) {   /* the timed path as well, now and then */
		struct timespec d;
		clock_gettime(CLOCK_REALTIME, &d);
		d.tv_sec++;
		CHECK(pthread_mutex_timedlock(m, &d) == 0);
		CHECK(pthread_mutex_unlock(m) == 0);
	}
}

static void use_mutex_static(void *p, long i)
{
	static const pthread_mutex_t init = PTHREAD_MUTEX_INITIALIZER;
	pthread_mutex_t *m = p;
	(void)i;
	memcpy(m, &init, sizeof init);
	CHECK(pthread_mutex_lock(m) == 0);
	CHECK(pthread_mutex_unlock(m) == 0);
	CHECK(pthread_mutex_trylock(m) == 0);
	CHECK(pthread_mutex_unlock(m) == 0);
}

static void use_cond(void *p, long i)
{
	static const pthread_cond_t init = PTHREAD_COND_INITIALIZER;
	static pthread_mutex_t mx = PTHREAD_MUTEX_INITIALIZER;
	pthread_cond_t *c = p;
	if (i & 1)
		memcpy(c, &init, sizeof init);
	else
		CHECK(pthread_cond_init(c, NULL) == 0);
	CHECK(pthread_cond_signal(c) == 0);
	CHECK(pthread_cond_broadcast(c) == 0);
	if (i % 256 == 0) {   /* a wait whose deadline has passed */
		struct timespec d = { 0, 0 };
		CHECK(pthread_mutex_lock(&mx) == 0);
		CHECK(pthread_cond_timedwait(c, &mx, &d) == ETIMEDOUT);
		CHECK(pthread_mutex_unlock(&mx) == 0);
	}
}

static void use_barrier(void *p, long i)
{
	pthread_barrier_t *b = p;
	(void)i;
	CHECK(pthread_barrier_init(b, NULL, 1) == 0);
	CHECK(pthread_barrier_wait(b) == PTHREAD_BARRIER_SERIAL_THREAD);
	CHECK(pthread_barrier_wait(b) == PTHREAD_BARRIER_SERIAL_THREAD);
}

static void use_sem(void *p, long i)
{
	sem_t *s = p;
	int v = -1;
	(void)i;
	CHECK(sem_init(s, 0, 0) == 0);
	CHECK(sem_post(s) == 0);
	CHECK(sem_getvalue(s, &v) == 0 && v == 1);
	CHECK(sem_wait(s) == 0);
	CHECK(sem_trywait(s) == -1 && errno == EAGAIN);
}

static void use_spin(void *p, long i)
{
	pthread_spinlock_t *l = p;
	(void)i;
	CHECK(pthread_spin_init(l, PTHREAD_PROCESS_PRIVATE) == 0);
	CHECK(pthread_spin_lock(l) == 0);
	CHECK(pthread_spin_trylock(l) == EBUSY);
	CHECK(pthread_spin_unlock(l) == 0);
}

static void use_rwlock(void *p, long i)
{
	static const pthread_rwlock_t init = PTHREAD_RWLOCK_INITIALIZER;
	static const pthread_rwlock_t winit = PTHREAD_RWLOCK_WRITER_NONRECURSIVE_INITIALIZER_NP;
	pthread_rwlock_t *rw = p;
	if (i % 3 == 0)
		CHECK(pthread_rwlock_init(rw, NULL) == 0);
	else
		memcpy(rw, i % 3 == 1 ? &init : &winit, sizeof init);
	CHECK(pthread_rwlock_rdlock(rw) == 0);
	CHECK(pthread_rwlock_trywrlock(rw) == EBUSY);
	CHECK(pthread_rwlock_unlock(rw) == 0);
	CHECK(pthread_rwlock_wrlock(rw) == 0);
	CHECK(pthread_rwlock_tryrdlock(rw) == EBUSY);
	CHECK(pthread_rwlock_unlock(rw) == 0);
}

#ifdef _OPENMP
static void use_omp_lock(void *p, long i)
{
	omp_lock_t *l = p;
	(void)i;
	omp_init_lock(l);
	omp_set_lock(l);
	CHECK(omp_test_lock(l) == 0);
	omp_unset_lock(l);
	CHECK(omp_test_lock(l) != 0);
	omp_unset_lock(l);
}

static void use_omp_nest(void *p, long i)
{
	omp_nest_lock_t *l = p;
	(void)i;
	omp_init_nest_lock(l);
	omp_set_nest_lock(l);
	omp_set_nest_lock(l);
	CHECK(omp_test_nest_lock(l) == 3);
	omp_unset_nest_lock(l);
	omp_unset_nest_lock(l);
	omp_unset_nest_lock(l);
}
#endif

static const struct {
	const char *name;
	size_t size;
	void (*use)(void *, long);
} types[] = {
	{ "mutex", sizeof(pthread_mutex_t), use_mutex },
	{ "mutex-static", sizeof(pthread_mutex_t), use_mutex_static },
	{ "cond", sizeof(pthread_cond_t), use_cond },
	{ "barrier", sizeof(pthread_barrier_t), use_barrier },
	{ "sem", sizeof(sem_t), use_sem },
	{ "spin", sizeof(pthread_spinlock_t), use_spin },
	{ "rwlock", sizeof(pthread_rwlock_t), use_rwlock },
#ifdef _OPENMP
	{ "omp-lock", sizeof(omp_lock_t), use_omp_lock },
	{ "omp-nest", sizeof(omp_nest_lock_t), use_omp_nest },
#endif
};
#define NTYPES (sizeof types / sizeof types[0])

static void churn(size_t t, long count)
{
	long before = errors;
	for (long done = 0; done < count; done += BATCH) {
		/* A fresh batch each round: the allocator hands back the same
		 * addresses, as it does in a real program. */
		char *batch = malloc(BATCH * types[t].size);
		if (!batch) {
			perror("churn: malloc");
			exit(2);
		}
		long n = count - done < BATCH ? count - done : BATCH;
		for (long i = 0; i < n; i++)
			types[t].use(batch + i * types[t].size, done + i);
		free(batch);   /* no destroy: abandoned */
	}
	printf("%s: %ld objects, %ld unexpected results\n", types[t].name, count,
	       errors - before);
}

int main(int argc, char **argv)
{
	const char *which = argc > 1 ? argv[1] : "all";
	long count = argc > 2 ? atol(argv[2]) : 1000000;
	int found = 0;
	if (!strcmp(which, "list")) {
		for (size_t t = 0; t < NTYPES; t++)
			printf("%s\n", types[t].name);
		return 0;
	}
	for (size_t t = 0; t < NTYPES; t++)
		if (!strcmp(which, "all") || !strcmp(which, types[t].name)) {
			churn(t, count);
			found = 1;
		}
	if (!found) {
		fprintf(stderr, "churn: unknown type '%s' (churn list)\n", which);
		return 2;
	}
	return errors ? 1 : 0;
}

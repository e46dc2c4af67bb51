/* A program whose hot spots are known, for the contention profile
 * (HWSYNC_PROFILE): one hot mutex among 1000 cold ones, a hot condition
 * variable beside a few cold ones, a hot named OpenMP critical section beside
 * a cold one, a hot rwlock, a semaphore, a spin lock, and a semaphore waited
 * on by a thread with the smallest stack glibc allows (the call-site
 * unwinder must fit in it).  It prints what the profile must find, one line a family:
 *
 *   expect FAMILY ADDRESS FUNCTION ACQUISITIONS|min:N
 *   cold FAMILY FIRST STRIDE COUNT ACQUISITIONS
 *   ended FAMILY FIRST STRIDE COUNT ACQUISITIONS   (destroyed, then freed)
 *   count FAMILY ADDRESS ACQUISITIONS
 *   countany FAMILY ACQUISITIONS                   (an object the program cannot name)
 *
 * and check_profile.py compares that with the JSON and the table on stderr.
 * Every hot object is taken from a function of its own that the program
 * exports (linked with -rdynamic), so that dladdr can name it.  No timing
 * decides anything: the counts are exact by construction, except a
 * condvar's waits, which depend on timing (at least one is required). */
#define _GNU_SOURCE
#include <limits.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#if HAVE_OPENMP
#include <omp.h>
#endif

#define THREADS 4
#define HOT_ITERS 20000
#define COLD 1000
#define COLD_ITERS 3
#define PINGS 2000

static pthread_mutex_t hot = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t cold[COLD];
static volatile unsigned long counter;

__attribute__((noinline)) void *hot_mutex_worker(void *arg)
{
	(void)arg;
	for (int i = 0; i < HOT_ITERS; i++) {
		pthread_mutex_lock(&hot);
		counter++;
		if (i % 100 == 0)
			usleep(200);   /* held across a sleep now and then: the others wait
					* (often enough to outweigh the condvar's mutex,
					* which a loaded machine can make wait too) */
		pthread_mutex_unlock(&hot);
	}
	return NULL;
}

/* ---- a condvar that one thread waits on, PINGS times over ---- */
static pthread_mutex_t cm = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t hot_cond = PTHREAD_COND_INITIALIZER;
static int ready;

__attribute__((noinline)) void hot_cond_waiter(void)
{
	for (int i = 0; i < PINGS; i++) {
		pthread_mutex_lock(&cm);
		while (!__atomic_load_n(&ready, __ATOMIC_RELAXED))
			pthread_cond_wait(&hot_cond, &cm);
		__atomic_store_n(&ready, 0, __ATOMIC_RELEASE);
		pthread_mutex_unlock(&cm);
	}
}

/* Hands out PINGS turns, each after the last was taken and a pause, so
 * that the waiter mostly finds none ready and waits. */
static void *cond_signaller(void *arg)
{
	(void)arg;
	for (int i = 0; i < PINGS; i++) {
		/* without the mutex: it stays a cold one */
		while (__atomic_load_n(&ready, __ATOMIC_ACQUIRE))
			sched_yield();
		usleep(20);
		pthread_mutex_lock(&cm);
		__atomic_store_n(&ready, 1, __ATOMIC_RELAXED);
		pthread_cond_signal(&hot_cond);
		pthread_mutex_unlock(&cm);
	}
	return NULL;
}

/* A few condvars that wait once each, briefly, and time out. */
static pthread_cond_t cold_cond[3];

static void cold_conds(void)
{
	pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
	for (int i = 0; i < 3; i++) {
		struct timespec ts;
		pthread_cond_init(&cold_cond[i], NULL);
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 10000;
		if (ts.tv_nsec >= 1000000000) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000;
		}
		pthread_mutex_lock(&m);
		pthread_cond_timedwait(&cold_cond[i], &m, &ts);
		pthread_mutex_unlock(&m);
	}
}

/* ---- a wait on a 16 KiB stack: the call-site unwinder must fit ---- */
static sem_t gate;

static void *small_stack_worker(void *arg)
{
	(void)arg;
	sem_wait(&gate);   /* nothing posted yet: this waits (most likely) */
	return NULL;
}

static void small_stack(void)
{
	pthread_attr_t a;
	pthread_t t;
	sem_init(&gate, 0, 0);
	pthread_attr_init(&a);
	pthread_attr_setstacksize(&a, PTHREAD_STACK_MIN);
	if (pthread_create(&t, &a, small_stack_worker, NULL)) {
		perror("pthread_create (small stack)");
		exit(1);
	}
	usleep(20000);
	sem_post(&gate);
	pthread_join(t, NULL);
	pthread_attr_destroy(&a);
}

/* ---- semaphore and spin lock, each taken a known number of times ---- */
#define SEM_OPS 1000
#define SPIN_OPS 5000

static void sem_and_spin(sem_t *s, pthread_spinlock_t *sp)
{
	sem_init(s, 0, 0);
	for (int i = 0; i < SEM_OPS; i++) {
		sem_post(s);
		sem_wait(s);
	}
	pthread_spin_init(sp, PTHREAD_PROCESS_PRIVATE);
	for (int i = 0; i < SPIN_OPS; i++) {
		pthread_spin_lock(sp);
		counter++;
		pthread_spin_unlock(sp);
	}
}

/* ---- a hot rwlock: readers, and writers that sleep now and then ---- */
#define RW_ITERS 4000
static pthread_rwlock_t hot_rw = PTHREAD_RWLOCK_INITIALIZER;
static unsigned long rw_reads;

__attribute__((noinline)) void *hot_rwlock_worker(void *arg)
{
	(void)arg;
	for (int i = 0; i < RW_ITERS; i++) {
		if (i % 8 == 0) {
			pthread_rwlock_wrlock(&hot_rw);
			counter++;
			if (i % 400 == 0)
				usleep(200);   /* everyone else waits */
		} else {
			pthread_rwlock_rdlock(&hot_rw);
			__atomic_fetch_add(&rw_reads, 1, __ATOMIC_RELAXED);
		}
		pthread_rwlock_unlock(&hot_rw);
	}
	return NULL;
}

/* ---- mutexes that live and die: each ends with its count exact ---- */
#define SHORT 50
#define SHORT_ITERS 300   /* past the profile's in-place fold (256) */

static void short_lived(void)
{
	pthread_mutex_t *v = calloc(SHORT, sizeof *v);
	if (!v) {
		perror("calloc");
		exit(1);
	}
	for (int i = 0; i < SHORT; i++) {
		pthread_mutex_init(&v[i], NULL);
		for (int r = 0; r < SHORT_ITERS; r++) {
			pthread_mutex_lock(&v[i]);
			counter++;
			pthread_mutex_unlock(&v[i]);
		}
		pthread_mutex_destroy(&v[i]);
	}
	printf("ended pthread_mutex %p %zu %d %d\n", (void *)&v[0], sizeof v[0], SHORT,
	       SHORT_ITERS);
	free(v);
}

#if HAVE_OPENMP
/* An orphaned critical construct: GOMP_critical_name_start is called from
 * this function itself, not from an outlined region. */
__attribute__((noinline)) void hot_critical_body(void)
{
	for (int i = 0; i < HOT_ITERS; i++) {
#pragma omp critical(hot_spot)
		{
			counter++;
			if (i % 64 == 0)
				sched_yield();
		}
	}
}

#define UNNAMED_ITERS 333   /* past the profile's in-place fold (256) */

static void cold_critical(void)
{
	for (int i = 0; i < 10; i++) {
#pragma omp critical(cold_spot)
		counter++;
	}
	/* counter is one variable under two different critical sections: no
	 * thread may still be in the first loop while another runs the second */
#pragma omp barrier
	for (int i = 0; i < UNNAMED_ITERS; i++) {
#pragma omp critical
		counter++;
	}
}
#endif

int main(void)
{
	pthread_t t[THREADS];
	static sem_t sem;
	static pthread_spinlock_t spin;

	for (int i = 0; i < COLD; i++)
		pthread_mutex_init(&cold[i], NULL);
	for (int r = 0; r < COLD_ITERS; r++)
		for (int i = 0; i < COLD; i++) {
			pthread_mutex_lock(&cold[i]);
			counter++;
			pthread_mutex_unlock(&cold[i]);
		}
	for (int i = 0; i < THREADS; i++)
		if (pthread_create(&t[i], NULL, hot_mutex_worker, NULL)) {
			perror("pthread_create");
			return 1;
		}
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);

	cold_conds();
	pthread_t sig;
	pthread_create(&sig, NULL, cond_signaller, NULL);
	hot_cond_waiter();
	pthread_join(sig, NULL);

	small_stack();
	sem_and_spin(&sem, &spin);
	short_lived();
	for (int i = 0; i < THREADS; i++)
		if (pthread_create(&t[i], NULL, hot_rwlock_worker, NULL)) {
			perror("pthread_create");
			return 1;
		}
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	printf("expect pthread_rwlock %p hot_rwlock_worker %d\n", (void *)&hot_rw,
	       THREADS * RW_ITERS);

	printf("expect pthread_mutex %p hot_mutex_worker %d\n", (void *)&hot,
	       THREADS * HOT_ITERS);
	printf("expect pthread_cond %p hot_cond_waiter min:1\n", (void *)&hot_cond);
	printf("cold pthread_mutex %p %zu %d %d\n", (void *)&cold[0], sizeof cold[0], COLD,
	       COLD_ITERS);
	printf("count sem %p %d\n", (void *)&sem, SEM_OPS);
	printf("count pthread_spin %p %d\n", (void *)&spin, SPIN_OPS);
#if HAVE_OPENMP
	/* The address of the named critical's variable is libgomp's business;
	 * the check finds it as the object whose call site is the body. */
#pragma omp parallel num_threads(THREADS)
	hot_critical_body();
#pragma omp parallel num_threads(2)
	cold_critical();
	printf("expect omp_critical - hot_critical_body %d\n", THREADS * HOT_ITERS);
	printf("countany omp_critical %d\n", 2 * UNNAMED_ITERS);   /* the unnamed one */
#endif
	return counter == (unsigned long)COLD * COLD_ITERS + THREADS * HOT_ITERS +
			SPIN_OPS + SHORT * SHORT_ITERS + THREADS * (RW_ITERS / 8)
#if HAVE_OPENMP
		+ THREADS * HOT_ITERS + 20 + 2 * UNNAMED_ITERS
#endif
		? 0 : 3;
}

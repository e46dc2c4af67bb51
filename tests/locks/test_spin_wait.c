/* The LD_PRELOAD shim's spin lock waiter (shim/spin_wait.c), built into this
 * program without the shim so that ThreadSanitizer sees it:
 *   - mutual exclusion: four threads on one word, with the built-in backoff
 *     and with configured policies, as if 1, 2 or 64 CPUs were usable; with
 *     one CPU every wait must yield;
 *   - a waiter on a lock held for 20 ms yields (the long-spin rule) even with
 *     CPUs to spare, and takes the lock only once it is free, also when the
 *     word reads below 0 meanwhile (on x86, glibc's waiters decrement it). */
#include <stdatomic.h>
#include "tests/locks/lock_test.h"
#include "shim/spin_wait.h"

#define THREADS 4

static _Atomic uint32_t word = HWS_SPIN_FREE;
static long counter;                 /* under word */
static const hws_wait_t *policy;
static unsigned ncpus;
static unsigned iters;

struct tally {
	unsigned waits, yields;
};

static void lock(struct tally *t)
{
	if (hws_spin_try(&word))
		return;
	t->waits++;
	t->yields += hws_spin_wait_acquire(&word, policy, ncpus);
}

static void unlock(void)
{
	/* release: pairs with the acquire exchange in hws_spin_try. */
	atomic_store_explicit(&word, HWS_SPIN_FREE, memory_order_release);
}

static _Atomic unsigned started;

static void *worker(void *p)
{
	struct tally *t = p;
	/* start together, so that the threads really contend */
	atomic_fetch_add(&started, 1);
	while (atomic_load(&started) < THREADS)
		sched_yield();
	for (unsigned i = 0; i < iters; i++) {
		lock(t);
		long v = counter;
		for (volatile int k = 0; k < 20; k++)
			;
		counter = v + 1;
		unlock();
		for (volatile int k = 0; k < 20; k++)
			;
	}
	return NULL;
}

static unsigned all_waits;

static void exclusion(const char *spec, unsigned cpus)
{
	hws_wait_t w;
	struct tally t[THREADS] = { { 0, 0 } };
	if (spec)
		CHECK_EQ(hws_wait_init(&w, spec), 0);
	policy = spec ? &w : NULL;
	ncpus = cpus;
	counter = 0;
	atomic_store(&started, 0);
	test_run_threads(THREADS, worker, t, sizeof t[0]);
	CHECK_EQ(counter, (long)THREADS * iters);
	unsigned waits = 0, yields = 0;
	for (int i = 0; i < THREADS; i++)
		waits += t[i].waits, yields += t[i].yields;
	printf("%-14s %2u CPUs: %u acquisitions, %u waited, %u yields\n", spec ? spec : "backoff",
	       cpus, THREADS * iters, waits, yields);
	if (cpus == 1)
		CHECK(yields >= waits);   /* with one CPU, every wait yields at once */
	all_waits += waits;
}

static _Atomic int waiting, acquired;

static void *long_waiter(void *p)
{
	struct tally *t = p;
	atomic_store(&waiting, 1);
	lock(t);
	atomic_store(&acquired, 1);
	unlock();
	return NULL;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { 0, ms * 1000000 };
	nanosleep(&ts, NULL);
}

/* The lock held for 20 ms, the word set to `held` halfway (what glibc's
 * waiters may leave in it), with one waiter that must not take it early. */
static struct tally held_for_20ms(uint32_t held)
{
	struct tally t = { 0, 0 };
	pthread_t th;
	policy = NULL;
	ncpus = 64;
	CHECK(hws_spin_try(&word));
	atomic_store(&waiting, 0);
	atomic_store(&acquired, 0);
	CHECK_EQ(pthread_create(&th, NULL, long_waiter, &t), 0);
	while (!atomic_load(&waiting))
		sched_yield();
	sleep_ms(10);
	atomic_store(&word, held);
	sleep_ms(10);
	CHECK_EQ(atomic_load(&acquired), 0);
	unlock();
	CHECK_EQ(pthread_join(th, NULL), 0);
	CHECK_EQ(atomic_load(&acquired), 1);
	CHECK(hws_spin_is_free(atomic_load(&word)));
	return t;
}

int main(void)
{
	static const char *const specs[] = { NULL, "delay-div", "yield", "backoff:max=64" };
	static const unsigned cpus[] = { 1, 2, 64 };
	iters = 2500 * lock_test_scale(8);
	/* The waiting path must have run.  On a loaded machine each thread may
	 * get through all its iterations inside one time slice of its own, so
	 * a round without a single wait is run again, a few times at most. */
	for (int round = 0; round < 5 && !all_waits; round++)
		for (unsigned s = 0; s < sizeof specs / sizeof specs[0]; s++)
			for (unsigned c = 0; c < sizeof cpus / sizeof cpus[0]; c++)
				exclusion(specs[s], cpus[c]);
	if (!all_waits) {
		printf("skipped: no thread ever found the lock held in 5 rounds (a loaded "
		       "machine ran the threads one after the other)\n");
		return HWS_TEST_SKIP;
	}

	struct tally t = held_for_20ms(HWS_SPIN_HELD);
	printf("held 20 ms: %u waited, %u yields\n", t.waits, t.yields);
	CHECK(t.waits == 0 || t.yields > 0);
#if defined(__x86_64__) || defined(__i386__)
	t = held_for_20ms((uint32_t)-2);   /* two of glibc's waiters counted */
	printf("held 20 ms at -2: %u waited, %u yields\n", t.waits, t.yields);
	CHECK(t.waits == 0 || t.yields > 0);
#endif
	printf("ok\n");
	return 0;
}

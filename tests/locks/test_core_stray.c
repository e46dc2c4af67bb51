/* Stray releases of an in-place core (argv[1] names the kind; argv[2]
 * "unit" or "race"): glibc's default mutex tolerates an unlock of a mutex
 * nobody holds (it returns 0 and the mutex keeps working), and programs
 * depend on it, so every kind's release must leave a free lock free.
 *
 * unit: under pause, futex and adaptive: a release of a zeroed core, a
 *   double release, then try, acquire and timed by this thread and by
 *   another; a release by a thread that does not hold the lock frees it.
 *   For the queue kinds the releasing thread's node cache must stay intact:
 *   after stray releases, 64 cores held at once must all name different
 *   nodes (a node put back twice would be handed out twice).
 * race: rounds of a release that races a stray one: thread A holds the lock,
 *   the others (but S) queue on it; A leaves and releases while S releases
 *   too.  One of the two releases frees A's hold, the other finds the lock
 *   free or frees one waiter's hold early (as with glibc), so at most two
 *   threads are ever inside at once, and the lock must stay consistent: a
 *   strict phase follows each round, every thread locking it in turn with
 *   exactly one inside and an exact count.  A release that could advance a
 *   ticket lock's owner past its next ticket, or corrupt a word, hangs or
 *   breaks the strict phase; ctest's timeout catches a hang. */
#include "tests/locks/core_test.h"

#define NTHREADS 4
#define NHELD 64

static const struct core_kind *K;
static const hws_wait_t *W;
static struct { unsigned char bytes[16]; } HWS_ALIGNED_LINE obj, held[NHELD];

/* ---- unit ---- */
static void *other_thread(void *p)
{
	int what = (int)(intptr_t)p;

	if (what == 0) {           /* the lock is held by main: busy, then release it */
		CHECK_EQ(K->try_(&obj), EBUSY);
		CHECK_EQ(K->timed(&obj, W, test_now_ns() + 1000000), ETIMEDOUT);
		CHECK_EQ(K->release(&obj, W), 0);   /* a non-holder's release frees it */
	} else {                   /* the lock is free: stray, then use it */
		CHECK_EQ(K->release(&obj, W), 0);
		CHECK_EQ(K->acquire(&obj, W), 0);
		CHECK_EQ(K->release(&obj, W), 0);
		CHECK_EQ(K->release(&obj, W), 0);
		CHECK_EQ(K->timed(&obj, W, test_now_ns() + 1000000), 0);
		CHECK_EQ(K->release(&obj, W), 0);
	}
	return NULL;
}

static void on_other_thread(int what)
{
	pthread_t t;
	CHECK(pthread_create(&t, NULL, other_thread, (void *)(intptr_t)what) == 0);
	CHECK(pthread_join(t, NULL) == 0);
}

static void unit(void)
{
	memset(&obj, 0, sizeof obj);
	CHECK_EQ(K->release(&obj, W), 0);          /* never used */
	core_check_free(K, &obj, W);
	CHECK_EQ(K->acquire(&obj, W), 0);
	CHECK_EQ(K->release(&obj, W), 0);
	CHECK_EQ(K->release(&obj, W), 0);          /* double release */
	CHECK_EQ(K->release(&obj, W), 0);
	core_check_free(K, &obj, W);
	on_other_thread(1);
	core_check_free(K, &obj, W);

	CHECK_EQ(K->acquire(&obj, W), 0);          /* released by another thread */
	on_other_thread(0);
	CHECK_EQ(K->release(&obj, W), 0);          /* now a stray one */
	core_check_free(K, &obj, W);
	CHECK_EQ(K->timed(&obj, W, test_now_ns() + 1000000), 0);
	CHECK_EQ(K->release(&obj, W), 0);

	/* This thread's state: strays after real releases, then many cores
	 * held at once; a queue kind's cores must name distinct nodes. */
	for (int i = 0; i < 3 * NHELD; i++) {
		CHECK_EQ(K->try_(&obj), 0);
		CHECK_EQ(K->release(&obj, W), 0);
		CHECK_EQ(K->release(&obj, W), 0);
	}
	memset(held, 0, sizeof held);
	for (int i = 0; i < NHELD; i++) {
		CHECK_EQ(i % 2 ? K->try_(&held[i]) : K->acquire(&held[i], W), 0);
		for (int j = 0; K->tail(&held[i]) && j < i; j++)
			CHECK(K->tail(&held[j]) != K->tail(&held[i]));
	}
	for (int i = 0; i < NHELD; i++) {
		CHECK_EQ(K->release(&held[i], W), 0);
		CHECK_EQ(K->release(&held[i], W), 0);
		core_check_free(K, &held[i], W);
	}
}

/* ---- race ---- */
static pthread_barrier_t bar;
static _Atomic int inside, go, most;
static unsigned long count;          /* under the lock, strict phase */
static unsigned rounds, strict_ops;

static void enter(int limit)
{
	int n = atomic_fetch_add(&inside, 1) + 1;
	if (n > limit) {
		fprintf(stderr, "%s: %d threads inside at once (at most %d allowed)\n", K->name, n,
			limit);
		exit(1);
	}
	if (n > atomic_load(&most))
		atomic_store(&most, n);
}

static void *racer(void *p)
{
	unsigned id = (unsigned)(uintptr_t)p;

	for (unsigned r = 0; r < rounds; r++) {
		unsigned a = r % NTHREADS, s = (r + 1 + r / NTHREADS) % NTHREADS;
		if (s == a)
			s = (s + 1) % NTHREADS;
		pthread_barrier_wait(&bar);   /* the last round's checks are done */
		if (id == a) {
			CHECK_EQ(K->acquire(&obj, W), 0);
			enter(1);
		}
		pthread_barrier_wait(&bar);
		if (id == a) {
			atomic_fetch_sub(&inside, 1);
			atomic_store(&go, 1);
			CHECK_EQ(K->release(&obj, W), 0);
		} else if (id == s) {
			while (!atomic_load(&go))
				sched_yield();
			CHECK_EQ(K->release(&obj, W), 0);   /* races A's release */
		} else {
			CHECK_EQ(K->acquire(&obj, W), 0);
			enter(2);
			sched_yield();
			atomic_fetch_sub(&inside, 1);
			CHECK_EQ(K->release(&obj, W), 0);
		}
		pthread_barrier_wait(&bar);
		if (id == 0) {
			atomic_store(&go, 0);
			CHECK_EQ(K->tail(&obj), 0);
			CHECK_EQ(K->try_(&obj), 0);        /* free again */
			CHECK_EQ(K->release(&obj, W), 0);
		}
		pthread_barrier_wait(&bar);
		for (unsigned i = 0; i < strict_ops; i++) {
			uint32_t how = i + id;
			if (how % 3 == 0)
				CHECK_EQ(K->acquire(&obj, W), 0);
			else if (how % 3 == 1 && K->timed(&obj, W, test_now_ns() + 20000) == 0)
				;
			else if (K->try_(&obj) != 0)
				CHECK_EQ(K->acquire(&obj, W), 0);
			enter(1);
			count++;
			atomic_fetch_sub(&inside, 1);
			CHECK_EQ(K->release(&obj, W), 0);
		}
		pthread_barrier_wait(&bar);
		if (id == 0) {
			CHECK_EQ(count, (unsigned long)(r + 1) * strict_ops * NTHREADS);
			CHECK_EQ(K->tail(&obj), 0);
		}
	}
	return NULL;
}

static void race(void)
{
	pthread_t t[NTHREADS];

	memset(&obj, 0, sizeof obj);
	count = 0;
	atomic_store(&most, 0);
	CHECK(pthread_barrier_init(&bar, NULL, NTHREADS) == 0);
	for (unsigned i = 0; i < NTHREADS; i++)
		CHECK(pthread_create(&t[i], NULL, racer, (void *)(uintptr_t)i) == 0);
	for (unsigned i = 0; i < NTHREADS; i++)
		CHECK(pthread_join(t[i], NULL) == 0);
	pthread_barrier_destroy(&bar);
	core_check_free(K, &obj, W);
	printf("  %u rounds, at most %d inside during the races\n", rounds, atomic_load(&most));
}

int main(int argc, char **argv)
{
	if (argc != 3 || (strcmp(argv[2], "unit") && strcmp(argv[2], "race"))) {
		fprintf(stderr, "usage: %s KIND unit|race\n", argv[0]);
		return 2;
	}
	K = core_kind_find(argv[1]);
	rounds = lock_test_scale(200);
	strict_ops = 20;
	for (unsigned p = 0; p < NCORE_POLICIES; p++) {
		hws_wait_t w = core_policy(core_policies[p]);
		W = &w;
		printf("%s %s under %s\n", K->name, argv[2], core_policies[p]);
		if (!strcmp(argv[2], "unit"))
			unit();
		else
			race();
	}
	printf("ok\n");
	return 0;
}

/* Condition variable over hwsync locks: test_condvar unit|stress.
 *   unit:   bad arguments; a timed wait expires with ETIMEDOUT and returns
 *           with the lock held; signal releases a waiter; broadcast releases
 *           all of M waiters; for several lock kinds and policies.
 *   stress: no lost wake-up: a ping-pong of 100000 rounds (scaled) with the
 *           predicate under the lock, random delays, signal and broadcast
 *           alternating; a lost wake-up fails a long timed wait. */
#include "sync/sync_test.h"
#include "common/with_policy.h"
#include <hwsync/condvar.h>

#define LONG_NS 10000000000ull

static hws_lock_t *lk;
static hws_condvar_t *cv;

static void must(int rc, const char *what)
{
	if (rc) {
		fprintf(stderr, "%s: %d (%s)\n", what, rc, hws_last_error());
		exit(1);
	}
}

/* Wait under the lock until *v == want; fails on a lost wake-up. */
static void wait_for(_Atomic unsigned *v, unsigned want)
{
	while (atomic_load_explicit(v, memory_order_relaxed) != want) {
		struct timespec dl = test_deadline_ts(LONG_NS);
		int rc = hws_condvar_timed(cv, lk, &dl);
		if (rc) {
			fprintf(stderr, "lost wake-up waiting for %u (rc %d)\n", want, rc);
			exit(1);
		}
	}
}

/* ---- unit ---------------------------------------------------------------- */
enum { M = 3 };
static _Atomic unsigned go, inside, released;

static void *waiter(void *arg)
{
	(void)arg;
	must(hws_lock_acquire(lk), "acquire");
	atomic_fetch_add(&inside, 1);
	wait_for(&go, 1);
	atomic_fetch_add(&released, 1);
	must(hws_lock_release(lk), "release");
	return NULL;
}

static void unit(const char *kind, const char *policy)
{
	pthread_t t[M];
	CHECK_EQ(hws_condvar_create(NULL, policy), EINVAL);
	CHECK_EQ(hws_condvar_create(&cv, "nosuch"), EINVAL);
	CHECK(strstr(hws_last_error(), "condvar:"));
	must(hws_lock_create(&lk, kind, policy), "lock create");
	must(hws_condvar_create(&cv, policy), "condvar create");
	CHECK_EQ(hws_condvar_wait(cv, NULL), EINVAL);
	CHECK(strstr(hws_last_error(), "NULL lock"));
	CHECK_EQ(hws_condvar_signal(NULL), EINVAL);

	/* Timed wait expires and comes back holding the lock. */
	must(hws_lock_acquire(lk), "acquire");
	uint64_t t0 = test_now_ns();
	struct timespec dl = test_deadline_ts(20000000ull);
	CHECK_EQ(hws_condvar_timed(cv, lk, &dl), ETIMEDOUT);
	CHECK(test_now_ns() - t0 >= 20000000ull);
	CHECK_EQ(hws_lock_try(lk), EBUSY);
	struct timespec bad = { 0, -1 };
	CHECK_EQ(hws_condvar_timed(cv, lk, &bad), EINVAL);
	must(hws_lock_release(lk), "release");

	/* Broadcast releases all. */
	atomic_store(&go, 0), atomic_store(&inside, 0), atomic_store(&released, 0);
	for (int i = 0; i < M; i++)
		CHECK(pthread_create(&t[i], NULL, waiter, NULL) == 0);
	while (atomic_load(&inside) != M)
		sched_yield();
	must(hws_lock_acquire(lk), "acquire");
	atomic_store(&go, 1);
	must(hws_lock_release(lk), "release");
	CHECK_EQ(hws_condvar_broadcast(cv), 0);
	for (int i = 0; i < M; i++)
		pthread_join(t[i], NULL);
	CHECK_EQ(atomic_load(&released), M);

	/* Signal releases one waiter. */
	atomic_store(&go, 0), atomic_store(&inside, 0), atomic_store(&released, 0);
	CHECK(pthread_create(&t[0], NULL, waiter, NULL) == 0);
	while (atomic_load(&inside) != 1)
		sched_yield();
	must(hws_lock_acquire(lk), "acquire");
	atomic_store(&go, 1);
	CHECK_EQ(hws_condvar_signal(cv), 0);
	must(hws_lock_release(lk), "release");
	pthread_join(t[0], NULL);
	CHECK_EQ(atomic_load(&released), 1);

	hws_condvar_destroy(cv);
	hws_lock_destroy(lk);
}

/* ---- stress: ping-pong under the lock --------------------------------------- */
static _Atomic unsigned ball;
static unsigned rounds;

static void *player(void *arg)
{
	unsigned me = (unsigned)(uintptr_t)arg;
	uint64_t seed = 4242 + me;
	for (unsigned i = 0; i < rounds; i++) {
		must(hws_lock_acquire(lk), "acquire");
		wait_for(&ball, 2 * i + me);
		atomic_store_explicit(&ball, 2 * i + me + 1, memory_order_relaxed);
		if (i & 1)
			hws_condvar_signal(cv);   /* inside the lock */
		must(hws_lock_release(lk), "release");
		if (!(i & 1))
			hws_condvar_broadcast(cv);  /* after the unlock */
		if ((i & 7) == 0)
			sync_random_delay(&seed);
	}
	return NULL;
}

static void stress(const char *kind, const char *policy)
{
	uint64_t t0 = test_now_ns();
	must(hws_lock_create(&lk, kind, policy), "lock create");
	must(hws_condvar_create(&cv, policy), "condvar create");
	rounds = sync_scale(100000);
	sync_pingpong(player, &ball, rounds);
	hws_condvar_destroy(cv);
	hws_lock_destroy(lk);
	fprintf(stderr, "  condvar %-6s %-8s %u rounds %.2f s\n", kind, policy, rounds,
		(double)(test_now_ns() - t0) / 1e9);
}

/* expire: a timed wait under a free lock of policy pause (the lock's
 * policy is not used while it is free). */
static hws_lock_t *with_lock;
static int condvar_make(void **obj, const hws_wait_t *w)
{
	return hws_condvar_create_with((hws_condvar_t **)obj, w);
}
static int condvar_expire(void *obj)
{
	struct timespec dl = test_deadline_ts(2000000ull);
	CHECK_EQ(hws_lock_acquire(with_lock), 0);
	int rc = hws_condvar_timed(obj, with_lock, &dl);
	CHECK_EQ(hws_lock_release(with_lock), 0);
	return rc;
}
static void condvar_destroy(void *obj) { hws_condvar_destroy(obj); }

/* hws_condvar_create_with: the errors, and the policy given is the one a
 * wait uses. */
static void create_with(void)
{
	static const struct test_with_ops ops = { condvar_make, condvar_expire,
						  condvar_destroy };
	hws_wait_t w = test_policy("pause");

	test_with_errors(&ops, "hws_condvar_create_with");
	CHECK_EQ(hws_condvar_create_with(NULL, &w), EINVAL);
	CHECK_EQ(hws_lock_create_with(&with_lock, "mutex", &w), 0);
	test_with_uses_policy(&ops);
	hws_lock_destroy(with_lock);
}

int main(int argc, char **argv)
{
	static const char *const kinds[] = { "mutex", "ticket", "mcs" };
	static const char *const pols[] = { "pause", "futex", "adaptive" };
	if (argc != 2 || (strcmp(argv[1], "unit") && strcmp(argv[1], "stress"))) {
		fprintf(stderr, "usage: test_condvar unit|stress\n");
		return 2;
	}
	if (!strcmp(argv[1], "unit"))
		create_with();
	for (unsigned k = 0; k < 3; k++)
		for (unsigned p = 0; p < 3; p++) {
			if (!strcmp(argv[1], "unit"))
				unit(kinds[k], pols[p]);
			else
				stress(kinds[k], pols[p]);
		}
	return 0;
}

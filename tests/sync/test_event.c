/* Event: test_event unit|stress.
 *   unit:   bad arguments, stale epoch, timed waits expire with ETIMEDOUT,
 *           notify with nobody waiting makes no system call, notify_one wakes
 *           exactly one of several registered waiters, notify_all wakes all.
 *   stress: no lost wake-up: a two-event ping-pong of 100000 rounds and a
 *           notify_one work queue with 3 consumers, random delays (scaled).
 * Waits that should end use a generous deadline so that a lost wake-up fails
 * the test instead of hanging it. */
#include "sync/sync_test.h"
#include "common/with_policy.h"
#include <hwsync/event.h>
#include "wait/internal.h"

#define LONG_NS 10000000000ull   /* "forever" for a wake that must come */

static const char *const policies[] = { "pause", "futex", "adaptive" };

static void wait_until_eq(_Atomic unsigned *v, unsigned want)
{
	uint64_t end = test_now_ns() + LONG_NS;
	while (atomic_load(v) != want) {
		CHECK(test_now_ns() < end);
		sched_yield();
	}
}

/* ---- unit ---------------------------------------------------------------- */
static void bad_arguments(void)
{
	hws_event_t *ev;
	CHECK_EQ(hws_event_create(NULL, "pause"), EINVAL);
	CHECK(strstr(hws_last_error(), "NULL"));
	CHECK_EQ(hws_event_create(&ev, "nosuch"), EINVAL);
	CHECK(strstr(hws_last_error(), "event:"));
	CHECK_EQ(hws_event_wait(NULL, 0), EINVAL);
	CHECK_EQ(hws_event_notify_one(NULL), EINVAL);
	CHECK_EQ(hws_event_notify_all(NULL), EINVAL);
	CHECK_EQ(hws_event_create(&ev, "pause"), 0);
	struct timespec bad = { 0, 1000000000L };
	CHECK_EQ(hws_event_timed(ev, hws_event_epoch(ev), &bad), EINVAL);
	CHECK(strstr(hws_last_error(), "bad deadline"));
	hws_event_destroy(ev);
	hws_event_destroy(NULL);
}

static void timed_and_stale(const char *policy)
{
	hws_event_t *ev;
	CHECK_EQ(hws_event_create(&ev, policy), 0);
	uint32_t e = hws_event_epoch(ev);
	uint64_t t0 = test_now_ns();
	struct timespec dl = test_deadline_ts(20000000ull);
	CHECK_EQ(hws_event_timed(ev, e, &dl), ETIMEDOUT);
	CHECK(test_now_ns() - t0 >= 20000000ull);
	/* A deadline in the past expires at once; a stale epoch returns at once. */
	struct timespec past = { 0, 1 };
	CHECK_EQ(hws_event_timed(ev, e, &past), ETIMEDOUT);
	CHECK_EQ(hws_event_notify_one(ev), 0);
	CHECK(hws_event_epoch(ev) != e);
	CHECK_EQ(hws_event_timed(ev, e, &past), 0);
	CHECK_EQ(hws_event_wait(ev, e), 0);
	/* Nobody waiting: no system call. */
	uint64_t sc = hws_wait_tls.syscalls;
	for (int i = 0; i < 1000; i++) {
		hws_event_notify_one(ev);
		hws_event_notify_all(ev);
	}
	CHECK_EQ(hws_wait_tls.syscalls, sc);
	hws_event_destroy(ev);
}

/* notify_one / notify_all with M registered waiters (typed form, so that the
 * test can see the registrations). */
enum { M = 4 };
static struct hws_event_s tev;
static uint32_t tev_epoch;
static _Atomic unsigned returned;

static void *typed_waiter(void *arg)
{
	(void)arg;
	CHECK_EQ(hws_event_s_wait(&tev, tev_epoch, hws_deadline_after_ns(LONG_NS)), 0);
	atomic_fetch_add(&returned, 1);
	return NULL;
}

static void start_waiters(pthread_t *t)
{
	atomic_store(&returned, 0);
	tev_epoch = hws_event_s_epoch(&tev);
	for (int i = 0; i < M; i++)
		CHECK(pthread_create(&t[i], NULL, typed_waiter, NULL) == 0);
	/* All registered: past the point where they could return on their own. */
	uint64_t end = test_now_ns() + LONG_NS;
	while (atomic_load(&tev.waiters) != M) {
		CHECK(test_now_ns() < end);
		sched_yield();
	}
}

static void one_and_all(const char *policy)
{
	hws_wait_t w;
	pthread_t t[M];
	CHECK_EQ(hws_wait_init(&w, policy), 0);
	hws_event_s_init(&tev, &w);

	start_waiters(t);
	for (unsigned k = 1; k <= 2; k++) {
		hws_event_s_notify_one(&tev);
		wait_until_eq(&returned, k);
		usleep(30000);          /* no one else may leave */
		CHECK_EQ(atomic_load(&returned), k);
	}
	hws_event_s_notify_all(&tev);
	wait_until_eq(&returned, M);
	for (int i = 0; i < M; i++)
		pthread_join(t[i], NULL);
	CHECK_EQ(atomic_load(&tev.waiters), 0);

	start_waiters(t);
	hws_event_s_notify_all(&tev);
	wait_until_eq(&returned, M);
	for (int i = 0; i < M; i++)
		pthread_join(t[i], NULL);
	CHECK_EQ(atomic_load(&tev.waiters), 0);
	CHECK_EQ(tev.tokens, 0);
}

/* ---- stress: ping-pong ------------------------------------------------------ */
static hws_event_t *to_b, *to_a;
static _Atomic uint32_t ball;
static unsigned rounds;

/* Wait, event-style, until ball == want. */
static void await_ball(hws_event_t *ev, uint32_t want)
{
	for (;;) {
		uint32_t e = hws_event_epoch(ev);
		if (atomic_load_explicit(&ball, memory_order_acquire) == want)
			return;
		struct timespec dl = test_deadline_ts(LONG_NS);
		int rc = hws_event_timed(ev, e, &dl);
		if (rc) {
			fprintf(stderr, "lost wake-up waiting for ball %u (rc %d)\n", want, rc);
			exit(1);
		}
	}
}

static void *player(void *arg)
{
	unsigned me = (unsigned)(uintptr_t)arg;
	uint64_t seed = 12345 + me;
	hws_event_t *mine = me ? to_b : to_a, *other = me ? to_a : to_b;
	for (uint32_t i = 0; i < rounds; i++) {
		await_ball(mine, 2 * i + me);
		if ((i & 7) == 0)
			sync_random_delay(&seed);
		atomic_store_explicit(&ball, 2 * i + me + 1, memory_order_release);
		if (i & 1)
			hws_event_notify_one(other);
		else
			hws_event_notify_all(other);
	}
	return NULL;
}

static void pingpong(const char *policy)
{
	uint64_t t0 = test_now_ns();
	CHECK_EQ(hws_event_create(&to_a, policy), 0);
	CHECK_EQ(hws_event_create(&to_b, policy), 0);
	rounds = sync_scale(100000);
	sync_pingpong(player, &ball, rounds);
	hws_event_destroy(to_a);
	hws_event_destroy(to_b);
	fprintf(stderr, "  pingpong %-8s %u rounds %.2f s\n", policy, rounds,
		(double)(test_now_ns() - t0) / 1e9);
}

/* ---- stress: notify_one work queue ------------------------------------------ */
enum { CONSUMERS = 3 };
static hws_event_t *items_ev;
static _Atomic uint32_t items, taken, done;
static unsigned nitems;

static void *consumer(void *arg)
{
	uint64_t seed = 777 + (uintptr_t)arg;
	for (;;) {
		uint32_t e = hws_event_epoch(items_ev);
		uint32_t v = atomic_load(&items);
		if (v > 0) {
			if (atomic_compare_exchange_weak(&items, &v, v - 1)) {
				atomic_fetch_add(&taken, 1);
				if ((test_rand(&seed) & 15) == 0)
					sync_random_delay(&seed);
			}
			continue;
		}
		if (atomic_load(&done))
			return NULL;
		struct timespec dl = test_deadline_ts(LONG_NS);
		if (hws_event_timed(items_ev, e, &dl)) {
			fprintf(stderr, "lost wake-up: %u items left\n", atomic_load(&items));
			exit(1);
		}
	}
}

static void workqueue(const char *policy)
{
	pthread_t c[CONSUMERS];
	uint64_t seed = 99, t0 = test_now_ns();
	CHECK_EQ(hws_event_create(&items_ev, policy), 0);
	nitems = sync_scale(50000);
	atomic_store(&items, 0), atomic_store(&taken, 0), atomic_store(&done, 0);
	for (uintptr_t i = 0; i < CONSUMERS; i++)
		CHECK(pthread_create(&c[i], NULL, consumer, (void *)i) == 0);
	for (unsigned i = 0; i < nitems; i++) {
		atomic_fetch_add(&items, 1);
		hws_event_notify_one(items_ev);
		if ((test_rand(&seed) & 31) == 0)
			sync_random_delay(&seed);
	}
	wait_until_eq(&taken, nitems);
	atomic_store(&done, 1);
	hws_event_notify_all(items_ev);
	for (int i = 0; i < CONSUMERS; i++)
		pthread_join(c[i], NULL);
	CHECK_EQ(atomic_load(&items), 0);
	hws_event_destroy(items_ev);
	fprintf(stderr, "  workqueue %-8s %u items %.2f s\n", policy, nitems,
		(double)(test_now_ns() - t0) / 1e9);
}

static int event_make(void **obj, const hws_wait_t *w)
{
	return hws_event_create_with((hws_event_t **)obj, w);
}
static int event_expire(void *obj)
{
	struct timespec dl = test_deadline_ts(2000000ull);
	return hws_event_timed(obj, hws_event_epoch(obj), &dl);
}
static void event_destroy(void *obj) { hws_event_destroy(obj); }

/* hws_event_create_with: the errors, and the policy given is the one a wait
 * uses. */
static void create_with(void)
{
	static const struct test_with_ops ops = { event_make, event_expire, event_destroy };
	hws_wait_t w = test_policy("pause");

	test_with_errors(&ops, "hws_event_create_with");
	CHECK_EQ(hws_event_create_with(NULL, &w), EINVAL);
	test_with_uses_policy(&ops);
}

int main(int argc, char **argv)
{
	if (argc != 2 || (strcmp(argv[1], "unit") && strcmp(argv[1], "stress"))) {
		fprintf(stderr, "usage: test_event unit|stress\n");
		return 2;
	}
	if (!strcmp(argv[1], "unit"))
		create_with();
	for (unsigned p = 0; p < sizeof policies / sizeof policies[0]; p++) {
		if (!strcmp(argv[1], "unit")) {
			bad_arguments();
			timed_and_stale(policies[p]);
			one_and_all(policies[p]);
		} else {
			pingpong(policies[p]);
			workqueue(policies[p]);
		}
	}
	return 0;
}

/* Lock API: kinds, errors and their messages, try on a held lock (EBUSY),
 * timed acquire that expires (ETIMEDOUT, not before the deadline) or
 * succeeds, and the per-lock counters; for every kind. */
#include "tests/locks/lock_test.h"
#include "common/with_policy.h"

static hws_lock_t *lock;
static _Atomic int phase;

static uint64_t ts_ns(const struct timespec *ts)
{
	return (uint64_t)ts->tv_sec * 1000000000ull + (uint64_t)ts->tv_nsec;
}

/* Run fn in another thread and return its result. */
static int in_thread(void *(*fn)(void *))
{
	pthread_t t;
	void *r;
	CHECK(pthread_create(&t, NULL, fn, NULL) == 0);
	CHECK(pthread_join(t, &r) == 0);
	return (int)(intptr_t)r;
}

static void *try_once(void *u) { (void)u; return (void *)(intptr_t)hws_lock_try(lock); }

static void *timed_30ms(void *u)
{
	(void)u;
	struct timespec d = test_deadline_ts(30000000ull);
	int rc = hws_lock_timed(lock, &d);
	uint64_t now = test_now_ns();
	if (rc == ETIMEDOUT) {
		CHECK(now >= ts_ns(&d));                  /* never before the deadline */
		CHECK(now < ts_ns(&d) + 3000000000ull);   /* and bounded */
	}
	return (void *)(intptr_t)rc;
}

/* Holds the lock until phase 2, then releases 20 ms later. */
static void *holder(void *u)
{
	(void)u;
	CHECK_EQ(hws_lock_acquire(lock), 0);
	atomic_store(&phase, 1);
	while (atomic_load(&phase) != 2)
		sched_yield();
	test_spin_ns(20000000ull);
	CHECK_EQ(hws_lock_release(lock), 0);
	return NULL;
}

static void with_holder(void (*fn)(void))
{
	pthread_t t;
	atomic_store(&phase, 0);
	CHECK(pthread_create(&t, NULL, holder, NULL) == 0);
	while (atomic_load(&phase) != 1)
		sched_yield();
	fn();
	CHECK(pthread_join(t, NULL) == 0);
}

static void timed_gets_it(void)
{
	struct timespec d = test_deadline_ts(5000000000ull);
	atomic_store(&phase, 2);
	CHECK_EQ(hws_lock_timed(lock, &d), 0);
	CHECK_EQ(hws_lock_release(lock), 0);
}

static void acquire_waits(void)
{
	atomic_store(&phase, 2);
	CHECK_EQ(hws_lock_acquire(lock), 0);
	CHECK_EQ(hws_lock_release(lock), 0);
}

static void check_sum(const struct hws_lock_stats *s)
{
	CHECK_EQ(s->acquisitions, s->first_try + s->after_spin + s->after_sleep);
}

static void api_for(const char *kind)
{
	struct timespec bad = { 0, 1000000000L };
	struct hws_lock_stats s;

	CHECK_EQ(hws_lock_create(&lock, kind, NULL), 0);
	CHECK(kind_known(hws_lock_kind(lock)));
	CHECK(!strcmp(hws_lock_kind(lock), kind));

	/* try: free -> 0; held (by us, seen from another thread) -> EBUSY */
	CHECK_EQ(hws_lock_try(lock), 0);
	CHECK_EQ(in_thread(try_once), EBUSY);
	CHECK_EQ(in_thread(try_once), EBUSY);
	/* timed on a held lock expires */
	CHECK_EQ(in_thread(timed_30ms), ETIMEDOUT);
	CHECK_EQ(hws_lock_release(lock), 0);
	/* ... and after the give-ups the lock still works from both sides */
	CHECK_EQ(in_thread(try_once), 0);
	CHECK_EQ(in_thread(try_once), EBUSY);
	CHECK_EQ(hws_lock_try(lock), EBUSY);
	/* (released by another thread: allowed for every kind here) */
	CHECK_EQ(hws_lock_release(lock), 0);
	CHECK_EQ(hws_lock_acquire(lock), 0);
	CHECK_EQ(hws_lock_release(lock), 0);
	/* timed: free -> 0; a holder that releases within the deadline -> 0 */
	CHECK_EQ(in_thread(timed_30ms), 0);
	CHECK_EQ(hws_lock_release(lock), 0);
	with_holder(timed_gets_it);
	CHECK_EQ(hws_lock_timed(lock, &bad), EINVAL);
	CHECK_EQ(hws_lock_timed(lock, NULL), EINVAL);
	hws_lock_destroy(lock);

	/* counters: futex policy, so a contended waiter sleeps until woken */
	CHECK_EQ(hws_lock_create(&lock, kind, "futex"), 0);
	CHECK_EQ(hws_lock_stats_get(lock, &s), 0);
	CHECK_EQ(s.acquisitions, 0);
	CHECK_EQ(hws_lock_stats_enable(lock, 1), 0);
	for (int i = 0; i < 100; i++) {
		CHECK_EQ(hws_lock_acquire(lock), 0);
		CHECK_EQ(hws_lock_release(lock), 0);
	}
	CHECK_EQ(hws_lock_stats_get(lock, &s), 0);
	CHECK_EQ(s.acquisitions, 100);
	CHECK_EQ(s.first_try, 100);
	with_holder(acquire_waits);
	CHECK_EQ(hws_lock_stats_get(lock, &s), 0);
	check_sum(&s);
	CHECK_EQ(s.acquisitions, 102);
	CHECK_EQ(s.first_try, 101);
	CHECK(s.wait_ns >= 10000000ull);
	if (strcmp(hws_lock_kind(lock), "tas")) {   /* tas re-polls on a timer instead */
		CHECK_EQ(s.after_sleep, 1);
		CHECK(s.syscalls >= 2);               /* the FUTEX_WAIT and the FUTEX_WAKE */
	}
	/* turning counting off stops it */
	CHECK_EQ(hws_lock_stats_enable(lock, 0), 0);
	CHECK_EQ(hws_lock_acquire(lock), 0);
	CHECK_EQ(hws_lock_release(lock), 0);
	struct hws_lock_stats s2;
	CHECK_EQ(hws_lock_stats_get(lock, &s2), 0);
	CHECK_EQ(s2.acquisitions, s.acquisitions);
	hws_lock_destroy(lock);

	/* spin policy: the contended acquisition is a spin with polls */
	CHECK_EQ(hws_lock_stats_enable(NULL, 1), 0);     /* default on for new locks */
	CHECK_EQ(hws_lock_create(&lock, kind, "pause"), 0);
	CHECK_EQ(hws_lock_stats_enable(NULL, 0), 0);
	with_holder(acquire_waits);
	CHECK_EQ(hws_lock_stats_get(lock, &s), 0);
	check_sum(&s);
	CHECK_EQ(s.acquisitions, 2);
	CHECK_EQ(s.after_spin, 1);
	CHECK_EQ(s.after_sleep, 0);
	CHECK(s.max_spins > 0);
	hws_lock_destroy(lock);
	printf("%-9s ok\n", kind);
}

static void errors(void)
{
	const char *const *k = hws_lock_kinds();
	const char *why;
	int n = 0;

	for (; *k; k++)
		n++;
	CHECK_EQ(n, 8);
	lock = (hws_lock_t *)&n;
	CHECK_EQ(hws_lock_create(&lock, "foo", NULL), EINVAL);
	CHECK(lock == NULL);
	CHECK(strstr(hws_last_error(), "'foo'"));
	CHECK(strstr(hws_last_error(), "known:"));
	CHECK(strstr(hws_last_error(), "1spinner"));
	CHECK_EQ(hws_lock_create(&lock, "ticket", "nosuch"), EINVAL);
	CHECK(strstr(hws_last_error(), "nosuch"));
	CHECK_EQ(hws_lock_create(&lock, "auto", "backoff:min=9,max=2"), EINVAL);
	CHECK(strstr(hws_last_error(), "min"));
	CHECK_EQ(hws_lock_create(NULL, "ticket", NULL), EINVAL);
	if (hws_wait_available(HWS_WAIT_UMWAIT, &why) == ENOTSUP) {
		CHECK_EQ(hws_lock_create(&lock, "mcs", "umwait"), ENOTSUP);
		CHECK(strstr(hws_last_error(), "umwait"));
	}
	CHECK_EQ(hws_lock_stats_get(NULL, NULL), EINVAL);
	printf("errors    ok\n");
}

/* hws_lock_create_with on with_kind; expire: a timed acquire of the lock
 * this thread holds. */
static const char *with_kind;
static int lock_make(void **obj, const hws_wait_t *w)
{
	return hws_lock_create_with((hws_lock_t **)obj, with_kind, w);
}
static int lock_expire(void *obj)
{
	struct timespec d = test_deadline_ts(2000000ull);
	CHECK_EQ(hws_lock_acquire(obj), 0);
	int rc = hws_lock_timed(obj, &d);
	CHECK_EQ(hws_lock_release(obj), 0);
	return rc;
}
static void lock_destroy(void *obj) { hws_lock_destroy(obj); }

/* The errors, and the policy given is the one a wait uses.  auto spins by
 * its own rules first and uses the policy where it would sleep: a policy
 * that never sleeps makes no system call, a sleeping one does. */
static void create_with(void)
{
	static const char *const kinds[] = { "mutex", "tas", "ticket", "mcs" };
	static const struct test_with_ops ops = { lock_make, lock_expire, lock_destroy };
	hws_wait_t w = test_policy("pause");
	hws_lock_t *l = (hws_lock_t *)&w;

	with_kind = "mutex";
	test_with_errors(&ops, "hws_lock_create_with");
	CHECK_EQ(hws_lock_create_with(&l, "foo", &w), EINVAL);
	CHECK(l == NULL);
	CHECK(strstr(hws_last_error(), "known: tas, ttas"));
	CHECK_EQ(hws_lock_create_with(NULL, "mutex", &w), EINVAL);
	for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
		with_kind = kinds[k];
		test_with_uses_policy(&ops);
	}
	with_kind = "auto";
	for (int i = 0; i < 2; i++) {
		hws_wait_t p = test_policy(i ? "futex" : "spin");
		void *obj;
		CHECK_EQ(lock_make(&obj, &p), 0);
		struct hws_wait_counters c0 = hws_wait_tls;
		CHECK_EQ(lock_expire(obj), ETIMEDOUT);
		CHECK(i ? hws_wait_tls.syscalls > c0.syscalls : hws_wait_tls.syscalls == c0.syscalls);
		lock_destroy(obj);
	}
	printf("create_with ok\n");
}

int main(void)
{
	/* The checks below expect an idle machine's waits (auto: spin, then
	 * sleep with the policy given).  On a busy one auto yields its CPU
	 * before it sleeps, and a loaded test machine can spend a whole short
	 * deadline or hold in those yields; the busy machine's rules have
	 * their own test (test_auto_rules). */
	hws_cpus_busy_force(0);
	errors();
	create_with();
	for (const char *const *k = hws_lock_kinds(); *k; k++)
		api_for(*k);
	return 0;
}

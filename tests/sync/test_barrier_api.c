/* Barrier API: the kind list, bad arguments (EINVAL with a message), n = 1,
 * one thread too many for the slot-based kinds, the episode count, and many
 * barriers used by one thread (more than its slot cache holds). */
#include "sync/sync_test.h"
#include "common/with_policy.h"
#include <hwsync/barrier.h>

static void expect_einval(const char *kind, unsigned n, const char *policy, const char *needle)
{
	hws_barrier_t *b = NULL;
	int rc = hws_barrier_create(&b, kind, n, policy);
	if (rc != EINVAL || !strstr(hws_last_error(), needle)) {
		fprintf(stderr, "create(%s, %u, %s): rc %d, message '%s', expected EINVAL and '%s'\n",
			kind, n, policy ? policy : "NULL", rc, hws_last_error(), needle);
		exit(1);
	}
	CHECK(b == NULL);
}

static hws_barrier_t *shared;
static _Atomic int too_many_rc, extra_done;

/* Stays alive until the extra thread is done: a thread that exits may have
 * its storage (and so its slot) reused by the next thread. */
static void *one_wait(void *arg)
{
	(void)arg;
	int rc = hws_barrier_wait(shared);
	CHECK(rc == 0 || rc == HWS_BARRIER_LAST);
	while (!atomic_load(&extra_done))
		sched_yield();
	return NULL;
}

static void *extra_wait(void *arg)
{
	(void)arg;
	int rc = hws_barrier_wait(shared);
	/* hws_last_error is per thread: check the message here. */
	if (rc == EINVAL)
		CHECK(strstr(hws_last_error(), "one thread too many"));
	atomic_store(&too_many_rc, rc);
	return NULL;
}

static int barrier_make(void **obj, const hws_wait_t *w)
{
	return hws_barrier_create_with((hws_barrier_t **)obj, "central", 1, w);
}

struct counted {
	int rc;
	struct hws_wait_counters before, after;
};
static _Atomic int arriving;

static void *counted_wait(void *arg)
{
	struct counted *r = arg;
	r->before = hws_wait_tls;
	atomic_store(&arriving, 1);
	r->rc = hws_barrier_wait(shared);
	r->after = hws_wait_tls;
	return NULL;
}

/* hws_barrier_create_with: the errors, and a waiter uses the policy given.
 * A wait that polled (spin) made no system call; one that slept (futex) never
 * polled.  Whether a given wait polled or slept at all depends on when the
 * other thread arrives, so up to 50 tries until one did. */
static void create_with(void)
{
	static const char *const specs[] = { "spin", "futex" };
	static const struct test_with_ops ops = { barrier_make, NULL, NULL };
	hws_wait_t w = test_policy("pause");
	hws_barrier_t *b = NULL;

	test_with_errors(&ops, "hws_barrier_create_with");
	CHECK_EQ(hws_barrier_create_with(NULL, "central", 2, &w), EINVAL);
	CHECK_EQ(hws_barrier_create_with(&b, "foo", 2, &w), EINVAL);
	CHECK(strstr(hws_last_error(), "known: central, pair"));
	for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++) {
		int tries = 0, seen = 0;
		w = test_policy(specs[i]);
		CHECK_EQ(hws_barrier_create_with(&shared, "central", 2, &w), 0);
		w.kind = HWS_WAIT_NKINDS;   /* the barrier keeps its own copy */
		while (!seen && tries++ < 50) {
			struct counted r;
			pthread_t t;
			atomic_store(&arriving, 0);
			CHECK(pthread_create(&t, NULL, counted_wait, &r) == 0);
			while (!atomic_load(&arriving))
				sched_yield();
			usleep(2000);
			CHECK(hws_barrier_wait(shared) != EINVAL);
			CHECK(pthread_join(t, NULL) == 0);
			CHECK(r.rc == 0 || r.rc == HWS_BARRIER_LAST);
			if (i == 0 && r.after.polls != r.before.polls) {
				CHECK_EQ(r.after.syscalls, r.before.syscalls);
				seen = 1;
			}
			if (i == 1 && r.after.syscalls != r.before.syscalls) {
				CHECK_EQ(r.after.polls, r.before.polls);
				seen = 1;
			}
		}
		CHECK(seen);
		hws_barrier_destroy(shared);
	}
}

int main(void)
{
	create_with();
	const char *const *kinds = hws_barrier_kinds();
	const char *want[] = { "central", "pair", "hier", "dissemination", "tree" };
	unsigned nk = 0;
	while (kinds[nk])
		nk++;
	CHECK_EQ(nk, 5);
	for (unsigned i = 0; i < 5; i++)
		CHECK(!strcmp(kinds[i], want[i]));

	expect_einval("foo", 2, "pause", "unknown barrier kind 'foo'");
	expect_einval("foo", 2, "pause", "known: central, pair, hier, dissemination, tree");
	for (unsigned i = 0; i < nk; i++)
		expect_einval(kinds[i], 0, "pause", kinds[i]);
	expect_einval("pair", 3, "pause", "exactly 2 threads");
	expect_einval("pair", 1, "pause", "exactly 2 threads");
	expect_einval("central", 100000, "pause", "nthreads must be in");
	expect_einval("central", 2, "nosuchpolicy", "barrier:");
	CHECK_EQ(hws_barrier_create(NULL, "central", 2, "pause"), EINVAL);
	CHECK_EQ(hws_barrier_wait(NULL), EINVAL);
	CHECK(strstr(hws_last_error(), "NULL barrier"));
	CHECK_EQ(hws_barrier_episodes(NULL), 0);
	hws_barrier_destroy(NULL);

	/* NULL kind: central.  n = 1: every wait is the last. */
	hws_barrier_t *b;
	CHECK_EQ(hws_barrier_create(&b, NULL, 1, NULL), 0);
	CHECK(!strcmp(hws_barrier_kind(b), "central"));
	hws_barrier_destroy(b);
	for (unsigned i = 0; i < nk; i++) {
		if (!strcmp(kinds[i], "pair"))
			continue;
		CHECK_EQ(hws_barrier_create(&b, kinds[i], 1, "pause"), 0);
		for (int k = 0; k < 5; k++)
			CHECK_EQ(hws_barrier_wait(b), HWS_BARRIER_LAST);
		CHECK_EQ(hws_barrier_episodes(b), 5);
		hws_barrier_destroy(b);
	}

	/* A third thread on a 2-thread slot-based barrier gets EINVAL. */
	const char *slotted[] = { "hier", "dissemination", "tree" };
	for (unsigned i = 0; i < 3; i++) {
		pthread_t t[2], x;
		CHECK_EQ(hws_barrier_create(&shared, slotted[i], 2, "futex"), 0);
		for (int j = 0; j < 2; j++)
			CHECK(pthread_create(&t[j], NULL, one_wait, NULL) == 0);
		while (hws_barrier_episodes(shared) != 1)
			sched_yield();
		atomic_store(&extra_done, 0);
		CHECK(pthread_create(&x, NULL, extra_wait, NULL) == 0);
		pthread_join(x, NULL);
		atomic_store(&extra_done, 1);
		for (int j = 0; j < 2; j++)
			pthread_join(t[j], NULL);
		CHECK_EQ(atomic_load(&too_many_rc), EINVAL);
		hws_barrier_destroy(shared);
	}

	/* One thread, more single-thread barriers than its slot cache holds,
	 * used round-robin: slots are found again by scanning. */
	enum { NB = 20 };
	hws_barrier_t *many[NB];
	for (unsigned i = 0; i < NB; i++)
		CHECK_EQ(hws_barrier_create(&many[i], slotted[i % 3], 1, "pause"), 0);
	for (int r = 0; r < 3; r++)
		for (unsigned i = 0; i < NB; i++)
			CHECK_EQ(hws_barrier_wait(many[i]), HWS_BARRIER_LAST);
	for (unsigned i = 0; i < NB; i++) {
		CHECK_EQ(hws_barrier_episodes(many[i]), 3);
		hws_barrier_destroy(many[i]);
	}
	return 0;
}

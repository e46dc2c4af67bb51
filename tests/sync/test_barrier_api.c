/* Barrier API: the kind list, bad arguments (EINVAL with a message), n = 1,
 * one thread too many for the slot-based kinds, the episode count, and many
 * barriers used by one thread (more than its slot cache holds). */
#include "sync/sync_test.h"
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

int main(void)
{
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

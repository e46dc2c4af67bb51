/* FIFO order of ticket, mcs, clh and 1spinner (typed API).  The main thread
 * holds the lock and starts waiters one at a time, each only after the
 * previous one is visibly queued (the ticket counter or the tail moved); then
 * it releases.  The order in which the waiters get the lock must be the order
 * in which they queued.  A second round adds a timed waiter between every two
 * queued ones, whose deadline passes while the lock is held: timed waiters
 * never queue, so the ones that stay must still be served in order, and the
 * ones that left must not get the lock.  A lock that is not FIFO, or that
 * loses or reorders waiters when a timed one gives up, fails this test
 * (checked by hand with ttas-style barging). */
#include "tests/locks/lock_test.h"
#include <hwsync/lock_1spinner.h>
#include <hwsync/lock_clh.h>
#include <hwsync/lock_mcs.h>
#include <hwsync/lock_ticket.h>

#define NWAITERS 6

struct kind {
	const char *name;
	int (*acquire)(void *), (*release)(void *), (*timed)(void *, uint64_t);
	uint32_t (*position)(void *);   /* changes when a waiter queues */
};

#define KIND(k, pos)                                                              \
	static int f_##k##_acq(void *l) { return hws_##k##_acquire(l); }              \
	static int f_##k##_rel(void *l) { return hws_##k##_release(l); }              \
	static int f_##k##_tim(void *l, uint64_t d) { return hws_##k##_timed_ns(l, d); } \
	static uint32_t f_##k##_pos(void *l) { return pos; }
KIND(ticket, atomic_load(&((hws_ticket_t *)l)->core.next))
KIND(mcs, hws_mcs_core_tail(&((hws_mcs_t *)l)->core))
KIND(clh, hws_clh_core_tail(&((hws_clh_t *)l)->core))
KIND(1spinner, hws_1spinner_core_tail(&((hws_1spinner_t *)l)->core))

static const struct kind kinds[] = {
	{ "ticket", f_ticket_acq, f_ticket_rel, f_ticket_tim, f_ticket_pos },
	{ "mcs", f_mcs_acq, f_mcs_rel, f_mcs_tim, f_mcs_pos },
	{ "clh", f_clh_acq, f_clh_rel, f_clh_tim, f_clh_pos },
	{ "1spinner", f_1spinner_acq, f_1spinner_rel, f_1spinner_tim, f_1spinner_pos },
};

static union { hws_ticket_t t; hws_mcs_t m; hws_clh_t c; hws_1spinner_t s; } lk;
static const struct kind *K;
static int order[NWAITERS], norder;
static _Atomic int gave_up;

struct waiter { int id; int leaves; uint64_t deadline; int rc; _Atomic int finished; };

static void *waiter(void *p)
{
	struct waiter *w = p;
	w->rc = w->leaves ? K->timed(&lk, w->deadline) : K->acquire(&lk);
	if (w->rc == 0) {
		order[norder++] = w->id;
		CHECK_EQ(K->release(&lk), 0);
	} else {
		atomic_fetch_add(&gave_up, 1);
	}
	atomic_store(&w->finished, 1);
	return NULL;
}

/* One round; leavers (timed waiters) give up leave_ns from their start. */
static void round_(const struct kind *k, const char *policy, int with_leavers, uint64_t leave_ns)
{
	hws_wait_t w;
	pthread_t t[NWAITERS];
	struct waiter ws[NWAITERS];

	CHECK_EQ(hws_wait_init(&w, policy), 0);
	K = k;
	memset(&lk, 0, sizeof lk);
	/* the *_init functions all take (lock, policy) */
	if (!strcmp(k->name, "ticket")) hws_ticket_init(&lk.t, &w);
	else if (!strcmp(k->name, "mcs")) hws_mcs_init(&lk.m, &w);
	else if (!strcmp(k->name, "clh")) hws_clh_init(&lk.c, &w);
	else hws_1spinner_init(&lk.s, &w);
	norder = 0;
	atomic_store(&gave_up, 0);

	CHECK_EQ(k->acquire(&lk), 0);
	for (int i = 0; i < NWAITERS; i++) {
		uint32_t before = k->position(&lk);
		uint64_t give_up = test_now_ns() + 5000000000ull;
		ws[i] = (struct waiter){ .id = i, .leaves = with_leavers && (i & 1),
					 .deadline = test_now_ns() + leave_ns };
		CHECK(pthread_create(&t[i], NULL, waiter, &ws[i]) == 0);
		if (ws[i].leaves)
			continue;   /* never queues: nothing to watch */
		while (k->position(&lk) == before) {
			CHECK(test_now_ns() < give_up);
			sched_yield();
		}
	}
	/* the leavers give up while we still hold the lock */
	while (atomic_load(&gave_up) != (with_leavers ? NWAITERS / 2 : 0))
		sched_yield();
	CHECK_EQ(k->release(&lk), 0);
	for (int i = 0; i < NWAITERS; i++)
		CHECK(pthread_join(t[i], NULL) == 0);
	int expect = 0;
	for (int i = 0; i < NWAITERS; i++) {
		if (ws[i].leaves) {
			CHECK_EQ(ws[i].rc, ETIMEDOUT);
			continue;
		}
		CHECK_EQ(ws[i].rc, 0);
		CHECK_EQ(order[expect], i);
		expect++;
	}
	CHECK_EQ(norder, expect);
	/* the lock is free again and takes a new waiter */
	CHECK_EQ(k->acquire(&lk), 0);
	CHECK_EQ(k->release(&lk), 0);
	CHECK_EQ(k->position(&lk), !strcmp(k->name, "ticket") ? k->position(&lk) : 0u);
}

int main(void)
{
	static const char *const policies[] = { "futex", "adaptive", "pause" };
	unsigned rounds = lock_test_scale(8);

	for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++)
		for (int p = 0; p < 3; p++) {
			for (unsigned r = 0; r < rounds; r++)
				round_(&kinds[k], policies[p], 0, 0);
			for (unsigned r = 0; r < rounds; r++)
				round_(&kinds[k], policies[p], 1, 20000000ull);
			printf("%-9s %-9s FIFO ok, also with timed waiters giving up (%u rounds)\n",
			       kinds[k].name, policies[p], rounds);
		}
	return 0;
}

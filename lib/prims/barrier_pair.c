/* pair: the barrier of [AK08] (Listing 2), for exactly two threads.
 *
 * An arriving thread takes the barrier's lock and counts itself.  The first
 * one reads the notify word, releases the lock and waits for the word to
 * change.  The second (last) one changes the notify word and keeps the lock.
 * Both then count their departure; the last to depart releases the lock.  A
 * thread that comes back for the next episode before its partner has left
 * therefore waits on the lock, which makes the barrier reusable in a loop.
 * Every wait (lock and notify word) goes through the barrier's policy. */
#include "prims/barrier_internal.h"

struct pair {
	struct hws_barrier h;
	_Atomic uint32_t lock HWS_ALIGNED_LINE;  /* 0 free, 1 held */
	_Atomic uint32_t gathered;               /* arrived and not yet departed */
	_Atomic uint64_t episodes;               /* written under the lock */
	_Atomic uint32_t notify HWS_ALIGNED_LINE;
};

static int pair_create(hws_barrier_t **out, unsigned n, const hws_wait_t *w)
{
	struct pair *p = hws_alloc_lines(sizeof *p);
	if (!p)
		return hws_fail(ENOMEM, "pair barrier: out of memory");
	hws_barrier_init_common(&p->h, &hws_barrier_pair, n, w, &p->episodes, 0);
	*out = &p->h;
	return 0;
}

static void pair_lock(struct pair *p)
{
	/* acquire: pairs with the release in pair_unlock: we see the partner's
	 * writes from before it released. */
	while (atomic_exchange_explicit(&p->lock, 1, memory_order_acquire) != 0)
		hws_barrier_await(&p->h, &p->lock, 1);
}

static void pair_unlock(struct pair *p)
{
	/* release: pairs with the acquire exchange in pair_lock. */
	atomic_store_explicit(&p->lock, 0, memory_order_release);
	hws_wake32(&p->lock, 1);
}

static int pair_wait(hws_barrier_t *b)
{
	struct pair *p = (struct pair *)b;
	int rc = 0;

	pair_lock(p);
	/* relaxed: under the lock (arrivals) or after both arrived (departures). */
	if (atomic_fetch_add_explicit(&p->gathered, 1, memory_order_relaxed) == 1) {
		hws_barrier_count_episode(b);
		/* relaxed: notify is written only under the lock. */
		uint32_t seq = atomic_load_explicit(&p->notify, memory_order_relaxed);
		/* release: pairs with the waiter's acquire load in the wait layer. */
		atomic_store_explicit(&p->notify, seq + 1, memory_order_release);
		hws_wake32(&p->notify, HWS_WAKE_ALL);
		rc = HWS_BARRIER_LAST;
	} else {
		/* relaxed: read under the lock; only the last arrival changes it,
		 * and it needs the lock we are about to release. */
		uint32_t seq = atomic_load_explicit(&p->notify, memory_order_relaxed);
		pair_unlock(p);
		hws_barrier_await(b, &p->notify, seq);
	}
	/* acq_rel: the second departure must see the first one's decrement (and
	 * unlocks on behalf of both). */
	if (atomic_fetch_sub_explicit(&p->gathered, 1, memory_order_acq_rel) == 1)
		pair_unlock(p);
	return rc;
}

const struct hws_barrier_kind hws_barrier_pair = {
	.name = "pair", .min_threads = 2, .max_threads = 2,
	.create = pair_create, .wait = pair_wait,
};

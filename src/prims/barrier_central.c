/* central: one arrival counter and one release word for all threads.
 *
 * The release word is the episode number; its low bit is the classic
 * "sense" of a sense-reversing barrier, and the full number lets a waiter
 * wait for "changed from the value I read" through the wait layer.  A thread
 * reads the release word before arriving: the episode cannot complete without
 * its own arrival, and it already saw the previous release, so the value read
 * is exactly the current episode.  The last arrival resets the counter (no one
 * can arrive again before the release) and publishes the next episode. */
#include "prims/barrier_internal.h"

struct central {
	struct hws_barrier h;
	_Atomic uint32_t count HWS_ALIGNED_LINE; /* arrivals this episode */
	_Atomic uint64_t episodes;               /* written by the last arrival, who owns this line */
	_Atomic uint32_t release HWS_ALIGNED_LINE;
};

static int central_create(hws_barrier_t **out, unsigned n, const hws_wait_t *w)
{
	struct central *c = hws_alloc_lines(sizeof *c);
	if (!c)
		return hws_fail(ENOMEM, "central barrier: out of memory");
	hws_barrier_init_common(&c->h, &hws_barrier_central, n, w, &c->episodes, 0);
	*out = &c->h;
	return 0;
}

static int central_wait(hws_barrier_t *b)
{
	struct central *c = (struct central *)b;
	/* relaxed: coherence alone gives the current episode (see top). */
	uint32_t gen = atomic_load_explicit(&c->release, memory_order_relaxed);

	/* acq_rel: the arrivals form one release sequence, so the last arrival
	 * acquires everything the others wrote before arriving. */
	if (atomic_fetch_add_explicit(&c->count, 1, memory_order_acq_rel) == b->n - 1) {
		/* relaxed: published by the release store below. */
		atomic_store_explicit(&c->count, 0, memory_order_relaxed);
		hws_barrier_count_episode(b);
		/* release: pairs with the waiters' acquire load in the wait layer. */
		atomic_store_explicit(&c->release, gen + 1, memory_order_release);
		hws_wake32(&c->release, HWS_WAKE_ALL);
		return HWS_BARRIER_LAST;
	}
	hws_barrier_await(b, &c->release, gen);
	return 0;
}

const struct hws_barrier_kind hws_barrier_central = {
	.name = "central", .min_threads = 1, .max_threads = HWS_BARRIER_MAX_THREADS,
	.create = central_create, .wait = central_wait,
};

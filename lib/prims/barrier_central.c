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

/* One arrival on (count, release) of an n-thread barrier: the algorithm
 * shared by the heap form and the in-place core.  `episodes`, when given,
 * counts completed episodes (written by the last arrival only). */
static int arrive(_Atomic uint32_t *count, _Atomic uint32_t *release, uint32_t n,
		  const hws_wait_t *w, _Atomic uint64_t *episodes)
{
	/* relaxed: coherence alone gives the current episode (see top). */
	uint32_t gen = atomic_load_explicit(release, memory_order_relaxed);

	/* acq_rel: the arrivals form one release sequence, so the last arrival
	 * acquires everything the others wrote before arriving. */
	if (atomic_fetch_add_explicit(count, 1, memory_order_acq_rel) == n - 1) {
		/* relaxed: published by the release store below. */
		atomic_store_explicit(count, 0, memory_order_relaxed);
		if (episodes) {
			/* relaxed: a statistic; the release below publishes it. */
			uint64_t e = atomic_load_explicit(episodes, memory_order_relaxed);
			atomic_store_explicit(episodes, e + 1, memory_order_relaxed);
		}
		/* release: pairs with the waiters' acquire load in the wait layer. */
		atomic_store_explicit(release, gen + 1, memory_order_release);
		hws_wake32(release, HWS_WAKE_ALL);
		return HWS_BARRIER_LAST;
	}
	hws_wait_while_eq32(release, gen, w, HWS_FOREVER);
	return 0;
}

static int central_wait(hws_barrier_t *b)
{
	struct central *c = (struct central *)b;
	return arrive(&c->count, &c->release, b->n, &b->wait, b->episodes);
}

int hws_barrier_central_core_wait(hws_barrier_central_core_t *c, const hws_wait_t *w)
{
	return arrive(&c->count, &c->release, c->n, w, NULL);
}

const struct hws_barrier_kind hws_barrier_central = {
	.name = "central", .min_threads = 1, .max_threads = HWS_BARRIER_MAX_THREADS,
	.create = central_create, .wait = central_wait,
};

/* dissemination ([HFM88]): ceil(log2 n) rounds; in round r
 * thread i signals thread (i + 2^r) mod n and waits for the signal of thread
 * (i - 2^r) mod n.  After the last round every thread has heard, directly or
 * through a chain of release/acquire pairs, from every other thread.
 *
 * Flags are monotonic counters rather than alternating senses: in episode e a
 * thread writes e + 1 into its partner's flag and waits while its own flag is
 * still e.  Each flag has a single writer, which can run at most one episode
 * ahead (its next episode needs our arrival), so a flag read is e, e + 1 or
 * e + 2, and "not e" means "signalled".  Slot 0 returns HWS_BARRIER_LAST. */
#include "prims/barrier_internal.h"

struct flag {
	_Atomic uint32_t v HWS_ALIGNED_LINE;
};

struct dthread {
	_Atomic uint32_t episode HWS_ALIGNED_LINE; /* owned by the slot's thread */
	_Atomic uint64_t episodes;                 /* slot 0 only */
};

struct dissemination {
	struct hws_barrier h;
	unsigned rounds;
	struct dthread *t;      /* [n] */
	struct flag *flags;     /* [n * rounds]: flags[i * rounds + r] */
};

static int diss_create(hws_barrier_t **out, unsigned n, const hws_wait_t *w)
{
	unsigned rounds = 0;
	while ((1u << rounds) < n)
		rounds++;
	size_t head = (sizeof(struct dissemination) + HWS_CACHELINE - 1) / HWS_CACHELINE *
		      HWS_CACHELINE;
	struct dissemination *d = hws_alloc_lines(head + n * sizeof(struct dthread) +
						  (size_t)n * rounds * sizeof(struct flag));
	if (!d)
		return hws_fail(ENOMEM, "dissemination barrier: out of memory");
	d->rounds = rounds;
	d->t = (struct dthread *)((char *)d + head);
	d->flags = (struct flag *)(d->t + n);
	if (hws_barrier_init_common(&d->h, &hws_barrier_dissemination, n, w,
				    &d->t[0].episodes, 1)) {
		free(d);
		return ENOMEM;
	}
	*out = &d->h;
	return 0;
}

static int diss_wait(hws_barrier_t *b)
{
	struct dissemination *d = (struct dissemination *)b;
	unsigned i;
	int fresh, rc = hws_barrier_slot(b, &i, &fresh);
	if (rc)
		return rc;
	/* relaxed: only this slot's thread touches its episode. */
	uint32_t e = atomic_load_explicit(&d->t[i].episode, memory_order_relaxed);

	for (unsigned r = 0; r < d->rounds; r++) {
		unsigned to = (i + (1u << r)) % b->n;
		_Atomic uint32_t *out = &d->flags[to * d->rounds + r].v;
		/* release: pairs with the partner's acquire load in the wait layer;
		 * carries everything we learned in earlier rounds. */
		atomic_store_explicit(out, e + 1, memory_order_release);
		hws_wake32(out, 1);
		hws_barrier_await(b, &d->flags[i * d->rounds + r].v, e);
	}
	atomic_store_explicit(&d->t[i].episode, e + 1, memory_order_relaxed);
	if (i == 0) {
		hws_barrier_count_episode(b);
		return HWS_BARRIER_LAST;
	}
	return 0;
}

const struct hws_barrier_kind hws_barrier_dissemination = {
	.name = "dissemination", .min_threads = 1, .max_threads = HWS_BARRIER_MAX_THREADS,
	.create = diss_create, .wait = diss_wait,
};

/* tree: a static combining tree with fan-in 4 for arrival and one global
 * release word (as [MCS91]'s tree barrier with a central wake-up flag).
 *
 * Slot i's children are 4i+1 .. 4i+4.  A thread waits until each child has
 * arrived, then marks its own arrival for its parent; the root (slot 0) then
 * publishes the next episode on the release word, which every other thread
 * waits on.  Arrival words are monotonic counters like the dissemination
 * flags: in episode e a child writes e + 1 and the parent waits while it is
 * still e; a child cannot get further ahead without the release, which needs
 * the parent.  The root returns HWS_BARRIER_LAST. */
#include "prims/barrier_internal.h"

#define FANIN 4

struct tnode {
	_Atomic uint32_t arrived HWS_ALIGNED_LINE; /* written by this slot, read by its parent */
	_Atomic uint64_t episodes;                 /* root only */
};

struct tree {
	struct hws_barrier h;
	struct tnode *node;                        /* [n] */
	_Atomic uint32_t release HWS_ALIGNED_LINE;
};

static int tree_create(hws_barrier_t **out, unsigned n, const hws_wait_t *w)
{
	struct tree *t = hws_alloc_lines(sizeof *t + n * sizeof(struct tnode));
	if (!t)
		return hws_fail(ENOMEM, "tree barrier: out of memory");
	t->node = (struct tnode *)(t + 1);   /* sizeof *t is a multiple of the line */
	if (hws_barrier_init_common(&t->h, &hws_barrier_tree, n, w, &t->node[0].episodes, 1)) {
		free(t);
		return ENOMEM;
	}
	*out = &t->h;
	return 0;
}

static int tree_wait(hws_barrier_t *b)
{
	struct tree *t = (struct tree *)b;
	unsigned i;
	int fresh, rc = hws_barrier_slot(b, &i, &fresh);
	if (rc)
		return rc;
	struct tnode *me = &t->node[i];
	/* relaxed: coherence gives the current episode: we saw (or made) the
	 * last release, and the next one needs our arrival. */
	uint32_t e = atomic_load_explicit(&t->release, memory_order_relaxed);

	for (unsigned c = FANIN * i + 1; c <= FANIN * i + FANIN && c < b->n; c++)
		hws_barrier_await(b, &t->node[c].arrived, e);
	if (i == 0) {
		hws_barrier_count_episode(b);
		/* release: pairs with every waiter's acquire load in the wait layer;
		 * the root acquired all arrivals through the tree. */
		atomic_store_explicit(&t->release, e + 1, memory_order_release);
		hws_wake32(&t->release, HWS_WAKE_ALL);
		return HWS_BARRIER_LAST;
	}
	/* release: pairs with the parent's acquire load; carries our subtree. */
	atomic_store_explicit(&me->arrived, e + 1, memory_order_release);
	hws_wake32(&me->arrived, 1);
	hws_barrier_await(b, &t->release, e);
	return 0;
}

const struct hws_barrier_kind hws_barrier_tree = {
	.name = "tree", .min_threads = 1, .max_threads = HWS_BARRIER_MAX_THREADS,
	.create = tree_create, .wait = tree_wait,
};

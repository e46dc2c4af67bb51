/* hier: the two-level barrier of [AKKAN13].  One arrival counter per group
 * and one global release word.  A thread arrives at its group's counter; the
 * last of the group arrives at the global counter; the last group's last
 * thread publishes the next episode on the release word.  Every other thread
 * waits on that one word, so with a hardware or futex wait the release is a
 * single store, while the contended atomics are spread over the groups.
 *
 * Groups.  With a topology of more than one group (NUMA node, else LLC, else
 * package: hws_topo_group_of/hws_topo_ngroups), there is one barrier group
 * per topology group; otherwise groups of at most 4 threads, so that the
 * structure is exercised and no counter sees more than 4 writers.  Group
 * sizes are fixed at creation (n split evenly).  A thread gets its group once,
 * on its first wait, from a per-thread slot: it takes a seat in the group of
 * the CPU it runs on then if that group has room, else in the first group with
 * room.  It keeps that group afterwards even if the scheduler moves it: a
 * thread's group must not change between episodes, or counts would not add
 * up; pin threads to make the grouping match the hardware. */
#define _GNU_SOURCE
#include <sched.h>
#include <hwsync/topo.h>
#include "prims/barrier_internal.h"

#define ARRIVAL_GROUP 4

struct hgroup {
	_Atomic uint32_t count HWS_ALIGNED_LINE; /* arrivals this episode */
	uint32_t size;                            /* threads in this group */
	_Atomic uint32_t seats;                   /* seats taken (first waits) */
};

struct hier {
	struct hws_barrier h;
	unsigned ngroups;
	int by_topology;
	struct hgroup *group;    /* [ngroups] */
	uint32_t *group_of_slot; /* [n]: written and read by the slot's thread */
	_Atomic uint32_t gcount HWS_ALIGNED_LINE; /* groups arrived this episode */
	_Atomic uint64_t episodes;                /* written by the last arrival */
	_Atomic uint32_t release HWS_ALIGNED_LINE;
};

static unsigned topo_groups(void)
{
	const hws_topo_t *t;
	if (!(t = hws_topo_this()))
		return 1;
	return hws_topo_ngroups(t);
}

static int hier_create(hws_barrier_t **out, unsigned n, const hws_wait_t *w)
{
	unsigned tg = topo_groups();
	unsigned g = tg > 1 ? (tg < n ? tg : n) : (n + ARRIVAL_GROUP - 1) / ARRIVAL_GROUP;
	size_t head = (sizeof(struct hier) + HWS_CACHELINE - 1) / HWS_CACHELINE * HWS_CACHELINE;
	struct hier *h = hws_alloc_lines(head + g * sizeof(struct hgroup) + n * sizeof(uint32_t));
	if (!h)
		return hws_fail(ENOMEM, "hier barrier: out of memory");
	h->ngroups = g;
	h->by_topology = tg > 1;
	h->group = (struct hgroup *)((char *)h + head);
	h->group_of_slot = (uint32_t *)(h->group + g);
	for (unsigned i = 0; i < g; i++)
		h->group[i].size = n / g + (i < n % g);
	if (hws_barrier_init_common(&h->h, &hws_barrier_hier, n, w, &h->episodes, 1)) {
		free(h);
		return ENOMEM;
	}
	*out = &h->h;
	return 0;
}

static int take_seat(struct hgroup *g)
{
	/* relaxed: seats only count; nothing is published through them. */
	uint32_t s = atomic_load_explicit(&g->seats, memory_order_relaxed);
	while (s < g->size)
		if (atomic_compare_exchange_weak_explicit(&g->seats, &s, s + 1,
							  memory_order_relaxed, memory_order_relaxed))
			return 1;
	return 0;
}

static unsigned choose_group(struct hier *h)
{
	if (h->by_topology) {
		int cpu = sched_getcpu();
		int pref = cpu >= 0 ? hws_topo_group_of(hws_topo_this(), cpu) : -1;
		if (pref >= 0 && (unsigned)pref < h->ngroups && take_seat(&h->group[pref]))
			return (unsigned)pref;
	}
	/* Seats add up to n and at most n slots exist: one is always free. */
	for (unsigned i = 0;; i++)
		if (take_seat(&h->group[i % h->ngroups]))
			return i % h->ngroups;
}

static int hier_wait(hws_barrier_t *b)
{
	struct hier *h = (struct hier *)b;
	unsigned slot;
	int fresh, rc = hws_barrier_slot(b, &slot, &fresh);
	if (rc)
		return rc;
	if (fresh)
		h->group_of_slot[slot] = choose_group(h);
	struct hgroup *g = &h->group[h->group_of_slot[slot]];
	/* relaxed: coherence gives the current episode (see barrier_central.c). */
	uint32_t gen = atomic_load_explicit(&h->release, memory_order_relaxed);

	/* acq_rel (both counters): each is one release sequence, so the last
	 * arrival of a group acquires its group's writes, and the last group's
	 * last arrival acquires every group's. */
	if (atomic_fetch_add_explicit(&g->count, 1, memory_order_acq_rel) == g->size - 1) {
		/* relaxed: published by the release store of the release word. */
		atomic_store_explicit(&g->count, 0, memory_order_relaxed);
		if (atomic_fetch_add_explicit(&h->gcount, 1, memory_order_acq_rel) ==
		    h->ngroups - 1) {
			atomic_store_explicit(&h->gcount, 0, memory_order_relaxed);
			hws_barrier_count_episode(b);
			/* release: pairs with the waiters' acquire load in the wait layer. */
			atomic_store_explicit(&h->release, gen + 1, memory_order_release);
			hws_wake32(&h->release, HWS_WAKE_ALL);
			return HWS_BARRIER_LAST;
		}
	}
	hws_barrier_await(b, &h->release, gen);
	return 0;
}

const struct hws_barrier_kind hws_barrier_hier = {
	.name = "hier", .min_threads = 1, .max_threads = HWS_BARRIER_MAX_THREADS,
	.create = hier_create, .wait = hier_wait,
};

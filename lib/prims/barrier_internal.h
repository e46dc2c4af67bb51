/* Barrier internals: the generic header every kind embeds first, the kind
 * table, and per-thread slots for the kinds that need a thread index. */
#ifndef HWS_BARRIER_INTERNAL_H
#define HWS_BARRIER_INTERNAL_H

#include <hwsync/barrier.h>
#include "prims/prims_internal.h"

struct hws_barrier_kind {
	const char *name;
	/* nthreads >= 1 (and the kind's own limits) already checked by the caller
	 * when min/max say so; create allocates the whole object. */
	unsigned min_threads, max_threads;
	int (*create)(hws_barrier_t **b, unsigned nthreads, const hws_wait_t *w);
	int (*wait)(hws_barrier_t *b);
};

/* Every kind's object starts with this. */
struct hws_barrier {
	const struct hws_barrier_kind *kind;
	unsigned n;
	hws_wait_t wait;
	uint64_t id;                   /* unique per barrier: key of the slot cache */
	_Atomic unsigned nslots;       /* slots claimed so far */
	_Atomic uintptr_t *owners;     /* [n]: thread key of each slot, 0 = free */
	/* Episodes completed.  Written by the one thread that completes an episode
	 * (plain load + store, no RMW) on a line it writes anyway or owns;
	 * read only by hws_barrier_episodes. */
	_Atomic uint64_t *episodes;
};

/* Initialise the common header of a freshly allocated (zeroed) barrier.
 * episodes points into the kind's object; owners is allocated when
 * with_slots.  Returns 0 or ENOMEM. */
int hws_barrier_init_common(hws_barrier_t *b, const struct hws_barrier_kind *k, unsigned n,
			    const hws_wait_t *w, _Atomic uint64_t *episodes, int with_slots);

/* Count one completed episode (called by exactly one thread per episode). */
static inline void hws_barrier_count_episode(hws_barrier_t *b)
{
	/* relaxed: a statistic; the barrier's own release publishes it. */
	uint64_t e = atomic_load_explicit(b->episodes, memory_order_relaxed);
	atomic_store_explicit(b->episodes, e + 1, memory_order_relaxed);
}

#define HWS_BARRIER_MAX_THREADS 4096

/* This thread's slot in b (0..n-1): assigned on the thread's first wait,
 * then found in a small thread-local cache keyed by the barrier's id (a
 * miss, e.g. after using more barriers than the cache holds, scans b's owner
 * table).  *fresh is set when the slot was claimed by this call.  EINVAL when
 * n threads already own slots. */
int hws_barrier_slot_slow(hws_barrier_t *b, unsigned *slot, int *fresh);

#define HWS_SLOT_CACHE 8
struct hws_slot_cache_entry {
	uint64_t id;
	unsigned slot;
};
extern _Thread_local struct hws_slot_cache_entry hws_slot_cache[HWS_SLOT_CACHE];

static inline int hws_barrier_slot(hws_barrier_t *b, unsigned *slot, int *fresh)
{
	struct hws_slot_cache_entry *e = &hws_slot_cache[b->id % HWS_SLOT_CACHE];
	if (e->id == b->id) {
		*slot = e->slot;
		*fresh = 0;
		return 0;
	}
	return hws_barrier_slot_slow(b, slot, fresh);
}

/* The kinds (one file each, defining hws_barrier_<k>), in the order
 * hws_barrier_kinds() names them: the table, the names and the messages of
 * barrier.c are made from this list. */
#define HWS_BARRIER_KINDS(X) X(central) X(pair) X(hier) X(dissemination) X(tree)

#define HWS_BK_EXTERN_(k) extern const struct hws_barrier_kind hws_barrier_##k;
HWS_BARRIER_KINDS(HWS_BK_EXTERN_)
#undef HWS_BK_EXTERN_

/* Wait until *word != old (the wait layer loops on spurious returns itself). */
static inline void hws_barrier_await(hws_barrier_t *b, _Atomic uint32_t *word, uint32_t old)
{
	hws_wait_while_eq32(word, old, &b->wait, HWS_FOREVER);
}

#endif

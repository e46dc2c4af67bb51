/* MCS queue lock ([MCS91]).
 *
 * Waiters form a linked queue of per-thread nodes; each waits on a word of
 * its own node, and the releaser hands the lock to its successor by writing
 * that word (and waking it).  Nodes come from the library's node pool and are
 * managed per acquisition: callers never pass one.
 *
 * try is the classic CAS of an empty tail.  timed does not enqueue (an MCS
 * node cannot leave the queue cheaply): it retries try and waits on the tail
 * word between attempts; a release that empties the queue wakes those
 * waiters.  A free lock references no node (the word is 0).  So a timed
 * waiter only gets the lock when the queue drains: correct and bounded by
 * its deadline, but not FIFO with respect to acquire.
 * The word names the holder's node beside the tail, so a release takes the
 * lock from its holder with one CAS: releasing a free lock (a stray unlock)
 * is a no-op, and any thread may release a held lock.  When no node can be
 * allocated, acquire waits as timed does and holds the lock without a node:
 * no call fails for memory.  The policy must outlive the lock.
 */
#ifndef HWSYNC_LOCK_MCS_H
#define HWSYNC_LOCK_MCS_H

#include <hwsync/lock_common.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The lock's words alone (in-place form: the caller passes the policy).
 * All zero is a free lock, and a free lock references no node. */
typedef struct hws_mcs_core {
	_Atomic uint64_t word;     /* low half: tail (node index of the last waiter, 0 = free);
				    * high half: the holder's node (0 while free
				    * or being handed over) */
} hws_mcs_core_t;

/* The typed form: the words and the policy they wait with. */
typedef struct hws_mcs {
	hws_mcs_core_t core;
	const hws_wait_t *wait;
} hws_mcs_t;

int hws_mcs_core_acquire(hws_mcs_core_t *c, const hws_wait_t *w);
int hws_mcs_core_try(hws_mcs_core_t *c);
int hws_mcs_core_timed_ns(hws_mcs_core_t *c, const hws_wait_t *w, uint64_t deadline_ns);
int hws_mcs_core_release(hws_mcs_core_t *c, const hws_wait_t *w);

int hws_mcs_init(hws_mcs_t *l, const hws_wait_t *w);
static inline int hws_mcs_acquire(hws_mcs_t *l) { return hws_mcs_core_acquire(&l->core, l->wait); }
static inline int hws_mcs_try(hws_mcs_t *l) { return hws_mcs_core_try(&l->core); }
static inline int hws_mcs_timed_ns(hws_mcs_t *l, uint64_t deadline_ns)
{
	return hws_mcs_core_timed_ns(&l->core, l->wait, deadline_ns);
}
static inline int hws_mcs_release(hws_mcs_t *l) { return hws_mcs_core_release(&l->core, l->wait); }
void hws_mcs_destroy(hws_mcs_t *l);
HWS_LOCK_TIMED_WRAPPER(mcs)

/* The tail half (0 when nobody holds or waits): for tests and tools. */
static inline uint32_t hws_mcs_core_tail(hws_mcs_core_t *c)
{
	/* relaxed: a snapshot for observers. */
	return (uint32_t)atomic_load_explicit(&c->word, memory_order_relaxed);
}

#ifdef __cplusplus
}
#endif
#endif

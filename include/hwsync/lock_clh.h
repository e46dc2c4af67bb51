/* CLH queue lock ([CLH]), idle-empty variant.
 *
 * A waiter swaps its node into the tail and waits on its predecessor's node
 * until that one is released; the node passed over becomes the acquirer's
 * spare (CLH node recycling), so no node is reused while someone may read it.
 * Release first tries to swing the word from its own node back to 0: if
 * nobody queued behind, the node goes back to the pool at once, so a free
 * lock references no node and an object abandoned without destroy strands
 * nothing.  Otherwise it marks its node released for the successor.
 *
 * try is a CAS of an empty tail; timed does not enqueue (a queued CLH node
 * cannot leave without leaving a trace in the queue): it retries try and
 * waits on the tail word between attempts, and the release that empties the
 * queue wakes it.  So a timed waiter gets the lock when the queue drains: it
 * is bounded by its deadline but not FIFO with respect to acquire.  Nodes
 * come from the library's node pool; callers never pass one.  The word
 * names the holder's node beside the tail, so a release takes the lock from
 * its holder with one CAS: releasing a free lock (a stray unlock) is a
 * no-op, and any thread may release a held lock.  When no node can be
 * allocated, acquire waits as timed does and holds the lock without a node:
 * no call fails for memory.  The policy must outlive the lock.
 */
#ifndef HWSYNC_LOCK_CLH_H
#define HWSYNC_LOCK_CLH_H

#include <hwsync/lock_common.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The lock's words alone (in-place form: the caller passes the policy).
 * All zero is a free lock, and a free lock references no node. */
typedef struct hws_clh_core {
	_Atomic uint64_t word;     /* low half: tail (node index of the last arrival, 0 = free);
				    * high half: the holder's node (0 while free
				    * or being handed over) */
} hws_clh_core_t;

/* The typed form: the words and the policy they wait with. */
typedef struct hws_clh {
	hws_clh_core_t core;
	const hws_wait_t *wait;
} hws_clh_t;

int hws_clh_core_acquire(hws_clh_core_t *c, const hws_wait_t *w);
int hws_clh_core_try(hws_clh_core_t *c);
int hws_clh_core_timed_ns(hws_clh_core_t *c, const hws_wait_t *w, uint64_t deadline_ns);
int hws_clh_core_release(hws_clh_core_t *c, const hws_wait_t *w);

int hws_clh_init(hws_clh_t *l, const hws_wait_t *w);
static inline int hws_clh_acquire(hws_clh_t *l) { return hws_clh_core_acquire(&l->core, l->wait); }
static inline int hws_clh_try(hws_clh_t *l) { return hws_clh_core_try(&l->core); }
static inline int hws_clh_timed_ns(hws_clh_t *l, uint64_t deadline_ns)
{
	return hws_clh_core_timed_ns(&l->core, l->wait, deadline_ns);
}
static inline int hws_clh_release(hws_clh_t *l) { return hws_clh_core_release(&l->core, l->wait); }
void hws_clh_destroy(hws_clh_t *l);
HWS_LOCK_TIMED_WRAPPER(clh)

/* The tail half (0 when nobody holds or waits): for tests and tools. */
static inline uint32_t hws_clh_core_tail(hws_clh_core_t *c)
{
	/* relaxed: a snapshot for observers. */
	return (uint32_t)atomic_load_explicit(&c->word, memory_order_relaxed);
}

#ifdef __cplusplus
}
#endif
#endif

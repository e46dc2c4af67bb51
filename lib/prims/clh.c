/* CLH queue lock, idle-empty variant (see include/hwsync/lock_clh.h).
 *
 * Node life cycle: an acquirer takes a fresh node (WAITING) and swaps it into
 * the tail.  When its predecessor's node reads DONE it holds the lock and
 * adopts that node (nobody else reads it again).  Release either swings the
 * tail from the holder's node back to 0 (nobody queued: the node returns to
 * the pool) or stores DONE into it for the successor, who adopts it.  A node
 * that is still the tail is never DONE, so no one can find a released node
 * through the tail, and the release CAS has no ABA: only the holder can put
 * its own node into this tail.
 *
 * Memory order: the tail exchange is acq_rel (publishes our WAITING node,
 * reads the predecessor's index); the release store of DONE pairs with the
 * successor's acquire load, and the release CAS of the tail to 0 with the
 * acquire of the next exchange or try, which orders the critical sections.
 */
#include "prims/lock_ops.h"
#include "prims/qnode.h"
#include "wait/internal.h"
#include <hwsync/lock_clh.h>

int hws_clh_init(hws_clh_t *l, const hws_wait_t *w)
{
	atomic_init(&l->core.tail, 0);
	l->core.holder = 0;
	l->wait = w;
	return 0;
}

int hws_clh_core_acquire(hws_clh_core_t *c, const hws_wait_t *w)
{
	uint32_t me = hws_qnode_fresh();

	if (!me)
		return hws_fail(ENOMEM, "clh: out of memory for a queue node");
	hws_qnode_enqueue_await(&c->tail, me, w);
	c->holder = me;
	return 0;
}

int hws_clh_core_try(hws_clh_core_t *c)
{
	return hws_qtail_try(&c->tail, &c->holder, "clh");
}

int hws_clh_core_timed_ns(hws_clh_core_t *c, const hws_wait_t *w, uint64_t deadline_ns)
{
	return hws_qtail_timed(&c->tail, &c->holder, w, deadline_ns, "clh");
}

int hws_clh_core_release(hws_clh_core_t *c, const hws_wait_t *w)
{
	uint32_t me = c->holder, expect = me;
	struct hws_qnode *n = hws_qnode(me);

	(void)w;   /* release never waits */
	/* release: pairs with the acquire of the next exchange or try. */
	if (atomic_compare_exchange_strong_explicit(&c->tail, &expect, 0, memory_order_release,
						    memory_order_relaxed)) {
		hws_wake32(&c->tail, HWS_WAKE_ALL);    /* timed waiters */
		hws_qnode_put(me);
		return 0;
	}
	/* release: pairs with the successor's acquire load of our state. */
	atomic_store_explicit(&n->state, HWS_QN_DONE, memory_order_release);
	hws_wake32(&n->state, HWS_WAKE_ALL);
	return 0;
}

void hws_clh_destroy(hws_clh_t *l)
{
	(void)l;   /* a free CLH lock references no node */
}

HWS_LOCK_OPS_OUTLINE(clh)

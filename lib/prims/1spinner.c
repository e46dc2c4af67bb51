/* 1spinner lock over any wait policy (see include/hwsync/lock_1spinner.h).
 *
 * Stage 1: wait on the predecessor's node until it reads DONE (the
 *          predecessor holds the lock now); then adopt that node, which
 *          nobody reads again.
 * Stage 2: the one queued thread that passed stage 1 waits on `head` until
 *          a CAS takes it from free to held (try and timed callers may CAS
 *          it too; they never queue).
 * Then:    swing the tail from our node back to 0 if nobody queued behind us
 *          (the node returns to the pool), else store DONE into our node so
 *          that the successor moves to stage 2.  A node that is still the
 *          tail is never DONE, and only its owner puts it into this tail, so
 *          the CAS has no ABA.
 * Release: one release store of "free" into head, and a wake.  A release of
 *          a free lock (a stray unlock) stores "free" over "free": no-op.
 * No node: a thread that gets none (memory exhausted) waits as timed does,
 *          on head without queueing, so acquire never fails for memory.
 *
 * Memory order: the tail exchange is acq_rel (publishes our WAITING node);
 * the acquire CAS on head pairs with the holder's release store of "free",
 * ordering the critical sections; the release store of DONE pairs with the
 * successor's stage-1 acquire load.
 */
#include "prims/lock_ops.h"
#include "prims/qnode.h"
#include "wait/internal.h"
#include <hwsync/lock_1spinner.h>

enum { HEAD_FREE = 0, HEAD_HELD = 1 };

int hws_1spinner_init(hws_1spinner_t *l, const hws_wait_t *w)
{
	atomic_init(&l->core.head, HEAD_FREE);
	atomic_init(&l->core.tail, 0);
	l->wait = w;
	return 0;
}

int hws_1spinner_core_try(hws_1spinner_core_t *c)
{
	uint32_t v = HEAD_FREE;
	/* acquire: pairs with the holder's release store of HEAD_FREE. */
	return atomic_compare_exchange_strong_explicit(&c->head, &v, HEAD_HELD,
						       memory_order_acquire,
						       memory_order_relaxed) ? 0 : EBUSY;
}

int hws_1spinner_core_acquire(hws_1spinner_core_t *c, const hws_wait_t *w)
{
	uint32_t me = hws_qnode_fresh(), expect;
	struct hws_qnode *n;

	if (__builtin_expect(!me, 0))   /* memory exhausted: wait on head alone */
		return hws_1spinner_core_timed_ns(c, w, HWS_FOREVER);
	n = hws_qnode(me);
	/* Stage 1: until the predecessor has acquired. */
	hws_qnode_enqueue_await(&c->tail, me, w);

	/* Stage 2: the single queued spinner on the lock word. */
	while (hws_1spinner_core_try(c))
		hws_wait_while_eq32(&c->head, HEAD_HELD, w, HWS_FOREVER);

	expect = me;
	/* relaxed: success means nobody queued behind us, so nobody reads our
	 * node; the lock itself is ordered by head. */
	if (atomic_compare_exchange_strong_explicit(&c->tail, &expect, 0, memory_order_relaxed,
						    memory_order_relaxed)) {
		hws_qnode_put(me);
		return 0;
	}
	/* release: pairs with the successor's stage-1 acquire load. */
	atomic_store_explicit(&n->state, HWS_QN_DONE, memory_order_release);
	hws_wake32(&n->state, HWS_WAKE_ALL);
	return 0;
}

int hws_1spinner_core_timed_ns(hws_1spinner_core_t *c, const hws_wait_t *w,
			       uint64_t deadline_ns)
{
	while (hws_1spinner_core_try(c))
		if (hws_wait_while_eq32(&c->head, HEAD_HELD, w, deadline_ns) == ETIMEDOUT)
			return hws_1spinner_core_try(c) ? ETIMEDOUT : 0;
	return 0;
}

int hws_1spinner_core_release(hws_1spinner_core_t *c)
{
	/* release: pairs with the acquire CAS of the next holder. */
	atomic_store_explicit(&c->head, HEAD_FREE, memory_order_release);
	hws_wake32(&c->head, 1);
	return 0;
}

void hws_1spinner_destroy(hws_1spinner_t *l)
{
	(void)l;   /* a free 1spinner lock references no node */
}

HWS_LOCK_OPS_OUTLINE(1spinner)

/* MCS queue lock over any wait policy (see include/hwsync/lock_mcs.h).
 *
 * Memory order: the tail exchange is acq_rel (it publishes our initialised
 * node and reads the predecessor's); the link store to pred->next is release
 * (pairs with the releaser's acquire load of next); the grant store to our
 * state is release (pairs with our acquire load, so the critical section of
 * the releaser happens before ours); the releasing CAS of the tail to 0 is
 * release (pairs with try's acquire CAS and the next exchange).
 */
#include "prims/lock_ops.h"
#include "prims/qnode.h"
#include "wait/internal.h"
#include <hwsync/lock_mcs.h>

int hws_mcs_init(hws_mcs_t *l, const hws_wait_t *w)
{
	atomic_init(&l->core.tail, 0);
	l->core.holder = 0;
	l->wait = w;
	return 0;
}

int hws_mcs_core_acquire(hws_mcs_core_t *c, const hws_wait_t *w)
{
	uint32_t me = hws_qnode_fresh(), pred;

	if (!me)
		return hws_fail(ENOMEM, "mcs: out of memory for a queue node");
	pred = atomic_exchange_explicit(&c->tail, me, memory_order_acq_rel);
	if (pred) {
		struct hws_qnode *p = hws_qnode(pred), *n = hws_qnode(me);
		/* release: pairs with the releaser's acquire load of next. */
		atomic_store_explicit(&p->next, me, memory_order_release);
		hws_wake32(&p->next, HWS_WAKE_ALL);
		/* acquire: pairs with the release grant in hws_mcs_core_release. */
		while (atomic_load_explicit(&n->state, memory_order_acquire) == HWS_QN_WAITING)
			hws_wait_while_eq32(&n->state, HWS_QN_WAITING, w, HWS_FOREVER);
	}
	c->holder = me;
	return 0;
}

int hws_mcs_core_try(hws_mcs_core_t *c)
{
	return hws_qtail_try(&c->tail, &c->holder, "mcs");
}

int hws_mcs_core_timed_ns(hws_mcs_core_t *c, const hws_wait_t *w, uint64_t deadline_ns)
{
	return hws_qtail_timed(&c->tail, &c->holder, w, deadline_ns, "mcs");
}

int hws_mcs_core_release(hws_mcs_core_t *c, const hws_wait_t *w)
{
	uint32_t me = c->holder, nx;
	struct hws_qnode *n = hws_qnode(me);

	/* acquire: pairs with the successor's release store of the link. */
	nx = atomic_load_explicit(&n->next, memory_order_acquire);
	if (!nx) {
		uint32_t expect = me;
		/* release: pairs with the acquire of the next try/exchange. */
		if (atomic_compare_exchange_strong_explicit(&c->tail, &expect, 0, memory_order_release,
							    memory_order_relaxed)) {
			hws_wake32(&c->tail, HWS_WAKE_ALL);    /* timed waiters */
			hws_qnode_put(me);
			return 0;
		}
		/* A successor swapped itself in but has not linked yet. */
		while (!(nx = atomic_load_explicit(&n->next, memory_order_acquire)))
			hws_wait_while_eq32(&n->next, 0, w, HWS_FOREVER);
	}
	struct hws_qnode *s = hws_qnode(nx);
	/* release: pairs with the successor's acquire load of its state. */
	atomic_store_explicit(&s->state, HWS_QN_DONE, memory_order_release);
	hws_wake32(&s->state, HWS_WAKE_ALL);
	hws_qnode_put(me);
	return 0;
}

void hws_mcs_destroy(hws_mcs_t *l)
{
	(void)l;   /* a free MCS lock references no node */
}

HWS_LOCK_OPS_OUTLINE(mcs)

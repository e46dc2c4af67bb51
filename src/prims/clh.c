/* CLH queue lock with CLH-try abandonment (see include/hwsync/lock_clh.h).
 *
 * Node life cycle: a waiter takes a fresh node (WAITING) and swaps it into
 * the tail.  When its predecessor's node reads DONE (released) it holds the
 * lock and adopts that node as a spare: nobody else will read it.  Release
 * stores DONE into the holder's node.  An abandoned predecessor's node reads
 * ABANDONED with a redirect; the successor adopts it and waits on the redirect.
 *
 * Memory order: the tail exchange is acq_rel (publishes our WAITING node,
 * reads the predecessor's index); the release store of DONE pairs with the
 * successor's acquire load, which orders the critical sections.
 */
#include "prims/lock_ops.h"
#include "prims/qnode.h"
#include "wait/internal.h"
#include <hwsync/lock_clh.h>

int hws_clh_init(hws_clh_t *l, const hws_wait_t *w)
{
	atomic_init(&l->tail, 0);
	l->holder = 0;
	l->wait = w;
	return 0;
}

/* Enqueue and wait until the predecessor released.  give_up: 0 = never,
 * else at deadline_ns (try passes a deadline of 0: give up at once). */
static int clh_enter(hws_clh_t *l, uint64_t deadline_ns, int give_up)
{
	uint32_t me = hws_qnode_get(), pred;

	if (!me)
		return hws_fail(ENOMEM, "clh: out of memory for a queue node");
	/* relaxed: published by the acq_rel exchange below. */
	atomic_store_explicit(&hws_qnode(me)->state, HWS_QN_WAITING, memory_order_relaxed);
	pred = atomic_exchange_explicit(&l->tail, me, memory_order_acq_rel);
	while (pred) {
		struct hws_qnode *p = hws_qnode(pred);
		/* acquire: pairs with the release of DONE / ABANDONED. */
		uint32_t s = atomic_load_explicit(&p->state, memory_order_acquire);
		if (s == HWS_QN_DONE) {
			hws_qnode_put(pred);
			break;
		}
		if (s == HWS_QN_ABANDONED) {
			/* relaxed: ordered by the acquire load of the state. */
			uint32_t pp = atomic_load_explicit(&p->redirect, memory_order_relaxed);
			hws_qnode_put(pred);
			pred = pp;
			continue;
		}
		if (!give_up) {
			hws_wait_while_eq32(&p->state, HWS_QN_WAITING, l->wait, HWS_FOREVER);
			continue;
		}
		if (deadline_ns == 0 ||
		    hws_wait_while_eq32(&p->state, HWS_QN_WAITING, l->wait, deadline_ns) == ETIMEDOUT) {
			hws_qnode_abandon(&l->tail, me, pred);
			return deadline_ns == 0 ? EBUSY : ETIMEDOUT;
		}
	}
	l->holder = me;
	return 0;
}

int hws_clh_acquire(hws_clh_t *l) { return clh_enter(l, HWS_FOREVER, 0); }
int hws_clh_try(hws_clh_t *l) { return clh_enter(l, 0, 1); }

int hws_clh_timed_ns(hws_clh_t *l, uint64_t deadline_ns)
{
	return clh_enter(l, deadline_ns ? deadline_ns : 1, 1);
}

int hws_clh_release(hws_clh_t *l)
{
	struct hws_qnode *n = hws_qnode(l->holder);
	/* release: pairs with the successor's acquire load of our state. */
	atomic_store_explicit(&n->state, HWS_QN_DONE, memory_order_release);
	hws_wake32(&n->state, HWS_WAKE_ALL);
	return 0;
}

void hws_clh_destroy(hws_clh_t *l)
{
	/* relaxed: the lock is idle; the caller ordered its last use before this. */
	hws_qnode_free_tail(atomic_load_explicit(&l->tail, memory_order_relaxed));
	atomic_store_explicit(&l->tail, 0, memory_order_relaxed);
}

static int acquire(void *l) { return hws_clh_acquire(l); }
static int try_(void *l) { return hws_clh_try(l); }
static int timed(void *l, uint64_t dl) { return hws_clh_timed_ns(l, dl); }
static int release(void *l) { return hws_clh_release(l); }
static void destroy(void *l) { hws_clh_destroy(l); }
static int init(void *l, const hws_wait_t *w) { return hws_clh_init(l, w); }

const struct hws_lock_ops hws_lock_ops_clh = {
	"clh", init, acquire, try_, timed, release, destroy,
};

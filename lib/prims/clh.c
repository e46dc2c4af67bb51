/* CLH queue lock, idle-empty variant (see include/hwsync/lock_clh.h).
 *
 * Node life cycle: an acquirer takes a fresh node (WAITING) and swaps it into
 * the tail half of the word (lib/prims/qnode.h).  When its predecessor's
 * node reads DONE it holds the lock, adopts that node (nobody else reads it
 * again) and writes its own node into the holder half.  Release either
 * swings the word from {holder, holder} back to 0 (nobody queued: the node
 * returns to the pool) or claims the hand-over (holder half to 0) and stores
 * DONE into the holder's node for the successor, who adopts it.  A release
 * that finds no holder (a stray unlock) does nothing.  A node that is still
 * the tail is never DONE, so no one can find a released node through the
 * tail, and the release CAS has no ABA: only the holder can put its own node
 * into this tail.  A thread that gets no node (memory exhausted) waits
 * without queueing and holds the lock as ANON.
 *
 * Memory order: the arrival's CAS is acq_rel (publishes our WAITING node,
 * reads the predecessor's index); the release store of DONE pairs with the
 * successor's acquire load, and the seq_cst CAS of the word to 0 (a release)
 * with the acquire of the next arrival or try, which orders the critical
 * sections.
 */
#include "prims/lock_ops.h"
#include "prims/qnode.h"
#include "wait/internal.h"
#include <hwsync/lock_clh.h>

int hws_clh_init(hws_clh_t *l, const hws_wait_t *w)
{
	atomic_init(&l->core.word, 0);
	l->wait = w;
	return 0;
}

/* The lock was not free: swap into the tail and wait until the predecessor
 * released.  Out of line, so that the free path saves no registers. */
static __attribute__((noinline)) int queue(_Atomic uint64_t *word, uint32_t me, uint64_t v,
					   const hws_wait_t *w)
{
	uint32_t pred = hws_qw_enqueue(word, me, v, w);

	if (!pred)
		return 0;
	struct hws_qnode *p = hws_qnode(pred);
	/* acquire: pairs with the predecessor's release store of DONE. */
	while (atomic_load_explicit(&p->state, memory_order_acquire) == HWS_QN_WAITING)
		hws_wait_while_eq32(&p->state, HWS_QN_WAITING, w, HWS_FOREVER);
	hws_qnode_put(pred);   /* adopted: nobody reads it again */
	hws_qw_set_holder(word, me);
	return 0;
}

HWS_QW_CORE_OPS(clh, queue)

/* The hand-over, once hws_qw_release claimed it: mark the holder's node
 * released for the successor, who adopts it. */
static __attribute__((noinline)) void hand_over(uint32_t me)
{
	struct hws_qnode *n = hws_qnode(me);

	/* release: pairs with the successor's acquire load of our state. */
	atomic_store_explicit(&n->state, HWS_QN_DONE, memory_order_release);
	hws_wake32(&n->state, HWS_WAKE_ALL);
}

int hws_clh_core_release(hws_clh_core_t *c, const hws_wait_t *w)
{
	uint32_t me;

	(void)w;   /* release never waits */
	if (__builtin_expect(hws_qw_release(&c->word, &me), 0))
		hand_over(me);
	return 0;
}

void hws_clh_destroy(hws_clh_t *l)
{
	(void)l;   /* a free CLH lock references no node */
}

HWS_LOCK_OPS_OUTLINE(clh)

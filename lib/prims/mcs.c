/* MCS queue lock over any wait policy (see include/hwsync/lock_mcs.h).
 *
 * The word holds the tail and the holder's node (lib/prims/qnode.h): an
 * arrival swaps its node into the tail half by CAS, a release frees the word
 * or claims the hand-over by CAS, so a release that finds no holder (a stray
 * unlock) does nothing.  A thread that gets no node (memory exhausted)
 * waits without queueing and holds the lock as ANON.
 *
 * Memory order: the arrival's CAS is acq_rel (it publishes our initialised
 * node and reads the predecessor's); the link store to pred->next is release
 * (pairs with the releaser's acquire load of next); the grant store to our
 * state is release (pairs with our acquire load, so the critical section of
 * the releaser happens before ours); the releasing CAS of the word to 0 is
 * seq_cst (a release for try's acquire CAS and the next arrival's, and what
 * the fence-free wake of timed waiters relies on).
 */
#include "prims/lock_ops.h"
#include "prims/qnode.h"
#include "wait/internal.h"
#include <hwsync/lock_mcs.h>

int hws_mcs_init(hws_mcs_t *l, const hws_wait_t *w)
{
	atomic_init(&l->core.word, 0);
	l->wait = w;
	return 0;
}

/* The lock was not free: queue behind the tail, link into the predecessor's
 * node and wait for the grant.  Out of line, so that the free path saves no
 * registers. */
static __attribute__((noinline)) int queue(_Atomic uint64_t *word, uint32_t me, uint64_t v,
					   const hws_wait_t *w)
{
	uint32_t pred = hws_qw_enqueue(word, me, v, w);

	if (!pred)
		return 0;
	struct hws_qnode *p = hws_qnode(pred), *n = hws_qnode(me);
	/* release: pairs with the releaser's acquire load of next. */
	atomic_store_explicit(&p->next, me, memory_order_release);
	hws_wake32(&p->next, HWS_WAKE_ALL);
	/* acquire: pairs with the release grant in hand_over. */
	while (atomic_load_explicit(&n->state, memory_order_acquire) == HWS_QN_WAITING)
		hws_wait_while_eq32(&n->state, HWS_QN_WAITING, w, HWS_FOREVER);
	hws_qw_set_holder(word, me);
	return 0;
}

HWS_QW_CORE_OPS(mcs, queue)

/* The hand-over, once hws_qw_release claimed it: a successor swapped itself
 * in; wait until it has linked, then grant it the lock. */
static __attribute__((noinline)) void hand_over(uint32_t me, const hws_wait_t *w)
{
	struct hws_qnode *n = hws_qnode(me), *s;
	uint32_t nx;

	/* acquire: pairs with the successor's release store of the link. */
	while (!(nx = atomic_load_explicit(&n->next, memory_order_acquire)))
		hws_wait_while_eq32(&n->next, 0, w, HWS_FOREVER);
	s = hws_qnode(nx);
	/* release: pairs with the successor's acquire load of its state. */
	atomic_store_explicit(&s->state, HWS_QN_DONE, memory_order_release);
	hws_wake32(&s->state, HWS_WAKE_ALL);
	hws_qnode_put(me);
}

int hws_mcs_core_release(hws_mcs_core_t *c, const hws_wait_t *w)
{
	uint32_t me;

	if (__builtin_expect(hws_qw_release(&c->word, &me), 0))
		hand_over(me, w);
	return 0;
}

void hws_mcs_destroy(hws_mcs_t *l)
{
	(void)l;   /* a free MCS lock references no node */
}

HWS_LOCK_OPS_OUTLINE(mcs)

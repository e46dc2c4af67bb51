/* 1spinner lock over any wait policy (see include/hwsync/lock_1spinner.h).
 *
 * Stage 1: wait on the predecessor's node until it reads DONE (the
 *          predecessor holds the lock now) or ABANDONED (follow its redirect).
 * Stage 2: the one thread that passed stage 1 waits on `head` until it reads
 *          free.  Only the predecessor can hold the lock at that point, and
 *          after its release only we may take it, so a plain store of "held"
 *          acquires.  Then DONE goes into our node (our successor moves to
 *          stage 2) and we adopt the predecessor's node: nobody reads it again.
 * Release: one release store of "free" into head, and a wake.
 *
 * Memory order: the tail exchange is acq_rel (publishes our WAITING node);
 * the acquire load that sees head == free pairs with the holder's release
 * store, ordering the critical sections; our store of "held" is relaxed since
 * nobody else may write head now and the release store of DONE that follows
 * publishes it to the successor (who must see "held" before it polls head).
 */
#include "prims/lock_ops.h"
#include "prims/qnode.h"
#include "wait/internal.h"
#include <hwsync/lock_1spinner.h>

enum { HEAD_FREE = 0, HEAD_HELD = 1 };

int hws_1spinner_init(hws_1spinner_t *l, const hws_wait_t *w)
{
	atomic_init(&l->head, HEAD_FREE);
	atomic_init(&l->tail, 0);
	l->wait = w;
	return 0;
}

/* Wait while *word == old.  mode 0: forever; else give up at deadline_ns
 * (0 = at once, for try).  Returns 0 or ETIMEDOUT. */
static int wait_on(hws_1spinner_t *l, _Atomic uint32_t *word, uint32_t old, int give_up,
		   uint64_t deadline_ns)
{
	if (!give_up)
		return hws_wait_while_eq32(word, old, l->wait, HWS_FOREVER);
	if (deadline_ns == 0)
		return ETIMEDOUT;
	return hws_wait_while_eq32(word, old, l->wait, deadline_ns);
}

static int enter(hws_1spinner_t *l, uint64_t deadline_ns, int give_up)
{
	uint32_t me = hws_qnode_get(), pred;
	struct hws_qnode *n;

	if (!me)
		return hws_fail(ENOMEM, "1spinner: out of memory for a queue node");
	n = hws_qnode(me);
	/* relaxed: published by the acq_rel exchange below. */
	atomic_store_explicit(&n->state, HWS_QN_WAITING, memory_order_relaxed);
	pred = atomic_exchange_explicit(&l->tail, me, memory_order_acq_rel);

	/* Stage 1: until the predecessor has acquired. */
	while (pred) {
		struct hws_qnode *p = hws_qnode(pred);
		/* acquire: pairs with the release of DONE / ABANDONED. */
		uint32_t s = atomic_load_explicit(&p->state, memory_order_acquire);
		if (s == HWS_QN_DONE)
			break;
		if (s == HWS_QN_ABANDONED) {
			/* relaxed: ordered by the acquire load of the state. */
			uint32_t pp = atomic_load_explicit(&p->redirect, memory_order_relaxed);
			hws_qnode_put(pred);
			pred = pp;
			continue;
		}
		if (wait_on(l, &p->state, HWS_QN_WAITING, give_up, deadline_ns) == ETIMEDOUT)
			goto abandon;
	}

	/* Stage 2: the single spinner on the lock word. */
	/* acquire: pairs with the holder's release store of HEAD_FREE. */
	while (atomic_load_explicit(&l->head, memory_order_acquire) != HEAD_FREE)
		if (wait_on(l, &l->head, HEAD_HELD, give_up, deadline_ns) == ETIMEDOUT)
			goto abandon;

	/* relaxed: only we may write head now; published by the release below. */
	atomic_store_explicit(&l->head, HEAD_HELD, memory_order_relaxed);
	/* release: pairs with the successor's stage-1 acquire load. */
	atomic_store_explicit(&n->state, HWS_QN_DONE, memory_order_release);
	hws_wake32(&n->state, HWS_WAKE_ALL);
	if (pred)
		hws_qnode_put(pred);
	return 0;

abandon:
	hws_qnode_abandon(&l->tail, me, pred);
	return deadline_ns == 0 ? EBUSY : ETIMEDOUT;
}

int hws_1spinner_acquire(hws_1spinner_t *l) { return enter(l, HWS_FOREVER, 0); }
int hws_1spinner_try(hws_1spinner_t *l) { return enter(l, 0, 1); }

int hws_1spinner_timed_ns(hws_1spinner_t *l, uint64_t deadline_ns)
{
	return enter(l, deadline_ns ? deadline_ns : 1, 1);
}

int hws_1spinner_release(hws_1spinner_t *l)
{
	/* release: pairs with the stage-2 acquire load of the successor. */
	atomic_store_explicit(&l->head, HEAD_FREE, memory_order_release);
	hws_wake32(&l->head, 1);
	return 0;
}

void hws_1spinner_destroy(hws_1spinner_t *l)
{
	/* relaxed: the lock is idle; the caller ordered its last use before this. */
	hws_qnode_free_tail(atomic_load_explicit(&l->tail, memory_order_relaxed));
	atomic_store_explicit(&l->tail, 0, memory_order_relaxed);
}

static int acquire(void *l) { return hws_1spinner_acquire(l); }
static int try_(void *l) { return hws_1spinner_try(l); }
static int timed(void *l, uint64_t dl) { return hws_1spinner_timed_ns(l, dl); }
static int release(void *l) { return hws_1spinner_release(l); }
static void destroy(void *l) { hws_1spinner_destroy(l); }
static int init(void *l, const hws_wait_t *w) { return hws_1spinner_init(l, w); }

const struct hws_lock_ops hws_lock_ops_1spinner = {
	"1spinner", init, acquire, try_, timed, release, destroy,
};

/* Queue-lock nodes: a pool of cache-line nodes named by 32-bit indices.
 *
 * MCS, CLH and 1spinner keep 32-bit node indices in their lock words (so the
 * locks stay small) and take nodes from here; callers never see a node.
 * Memory is never returned to the system, so a stale index still points at a
 * node: late readers (a wake after a hand-over) are harmless.  Index 0 is
 * "none".  Each thread keeps a small cache of free nodes; a thread's cache
 * goes back to the shared list when it exits.  A thread needs one node for
 * each queue lock it holds or waits on at once, and a free lock holds none,
 * so the pool's size follows the threads, not the number of locks.  The
 * shared list is fork-safe: fork waits until no thread is inside it.
 */
#ifndef HWS_PRIMS_QNODE_H
#define HWS_PRIMS_QNODE_H

#include <stdatomic.h>
#include <stdint.h>
#include <hwsync/arch.h>
#include <hwsync/wait.h>

enum {
	HWS_QN_WAITING = 0,     /* owner queued, its milestone not reached */
	HWS_QN_DONE = 1,        /* milestone reached (CLH: released; 1spinner: acquired;
				   MCS: lock granted to this node) */
};

struct hws_qnode {
	_Atomic uint32_t state;     /* HWS_QN_*; the word a successor waits on */
	_Atomic uint32_t next;      /* MCS: successor's index, 0 = not linked yet */
	uint32_t free_link;         /* shared free list (under the pool's lock) */
} HWS_ALIGNED_LINE;

#define HWS_QN_CHUNK_SHIFT 10
#define HWS_QN_CHUNK (1u << HWS_QN_CHUNK_SHIFT)
#define HWS_QN_MAX_CHUNKS 4096      /* 4 Mi nodes */

extern struct hws_qnode *_Atomic hws_qnode_chunks[HWS_QN_MAX_CHUNKS];

static inline struct hws_qnode *hws_qnode(uint32_t idx)
{
	/* acquire: pairs with the release that published the chunk. */
	return atomic_load_explicit(&hws_qnode_chunks[idx >> HWS_QN_CHUNK_SHIFT],
				    memory_order_acquire) + (idx & (HWS_QN_CHUNK - 1));
}

/* A free node for this thread, or 0 when memory is exhausted. */
uint32_t hws_qnode_get(void);
/* Give a node nobody references any more back to this thread's cache. */
void hws_qnode_put(uint32_t idx);

/* A free node set up for queueing (WAITING, no successor), or 0. */
static inline uint32_t hws_qnode_fresh(void)
{
	uint32_t me = hws_qnode_get();
	if (me) {
		struct hws_qnode *n = hws_qnode(me);
		/* relaxed: published by the acq_rel exchange/CAS of a tail. */
		atomic_store_explicit(&n->next, 0, memory_order_relaxed);
		atomic_store_explicit(&n->state, HWS_QN_WAITING, memory_order_relaxed);
	}
	return me;
}

/* Swap node `me` into `tail`; if there was a predecessor, wait until its
 * node reads DONE and adopt it (nobody reads it again).  The CLH-style
 * arrival that CLH and 1spinner share. */
static inline void hws_qnode_enqueue_await(_Atomic uint32_t *tail, uint32_t me,
					   const hws_wait_t *w)
{
	/* acq_rel: publishes our initialised node, reads the predecessor's. */
	uint32_t pred = atomic_exchange_explicit(tail, me, memory_order_acq_rel);
	if (pred) {
		struct hws_qnode *p = hws_qnode(pred);
		/* acquire: pairs with the predecessor's release store of DONE. */
		while (atomic_load_explicit(&p->state, memory_order_acquire) == HWS_QN_WAITING)
			hws_wait_while_eq32(&p->state, HWS_QN_WAITING, w, HWS_FOREVER);
		hws_qnode_put(pred);
	}
}

/* try and timed of the queue locks whose free state is an empty tail (MCS,
 * CLH): take the lock with a CAS of the tail from 0 to a fresh node, which
 * becomes *holder; timed retries and waits on the tail word in between (the
 * release that empties the queue wakes it), so neither ever queues.  0,
 * EBUSY / ETIMEDOUT, or ENOMEM (with `who` in the message). */
int hws_qtail_try(_Atomic uint32_t *tail, uint32_t *holder, const char *who);
int hws_qtail_timed(_Atomic uint32_t *tail, uint32_t *holder, const hws_wait_t *w,
		    uint64_t deadline_ns, const char *who);

#endif

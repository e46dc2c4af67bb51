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
#include <stdbool.h>
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

/* The word of the queue locks that name their holder (MCS, CLH): the tail
 * (index of the last arrival's node) in the low half and the holder's node
 * in the high half, one 64-bit atomic, so that one CAS both tells who holds
 * the lock and frees it:
 *   0                 free
 *   {t, h}, h != 0    held by node h; t == h when nobody waits
 *   {t, 0}, t != 0    being handed over: the releaser claimed it (CAS of the
 *                     holder half to 0) and the grantee has not yet written
 *                     its node there
 *   {ANON, ANON}      held by a thread that got no node (memory exhausted);
 *                     arrivals do not queue behind it but wait on the tail
 * A release finds the holder in the word and swings it to 0 (or claims the
 * hand-over) by CAS, so a release of a free lock, or of one being handed
 * over, finds no holder and does nothing, and of two racing releases only
 * one frees (or hands over) the lock and returns the node to a cache.
 * Waiters that do not queue (try, timed, node-less) wait on the tail half,
 * a 32-bit view of the word: both targets are little-endian and give
 * naturally aligned accesses of either size single-copy atomicity, and the
 * kernel's futex compares those four bytes. */
#define HWS_QN_ANON UINT32_MAX   /* above every node index (22 bits) */
#define HWS_QW(tail, holder) ((uint64_t)(holder) << 32 | (uint32_t)(tail))
#define HWS_QW_TAIL(v) ((uint32_t)(v))
#define HWS_QW_HOLDER(v) ((uint32_t)((v) >> 32))
_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "the tail is the word's low half");

static inline _Atomic uint32_t *hws_qw_tail32(_Atomic uint64_t *word)
{
	return (_Atomic uint32_t *)(void *)word;
}

/* The queue kinds' arrival with a fresh node `me`: true when the lock was
 * free and is now ours (the word names us as tail and holder); else false
 * with *seen the word, for the kind's queueing path. */
static inline bool hws_qw_arrive(_Atomic uint64_t *word, uint32_t me, uint64_t *seen)
{
	*seen = 0;
	/* acq_rel: acquire pairs with the release CAS that freed the word;
	 * release publishes our initialised node to the next arrival. */
	return __builtin_expect(atomic_compare_exchange_strong_explicit(word, seen, HWS_QW(me, me),
									memory_order_acq_rel,
									memory_order_relaxed), 1);
}

/* Enter the queue of `word` with node `me`, given v, a recent value of the
 * word: returns the predecessor's node, or 0 when the lock was free and is
 * now ours (the word then names us as holder too).  An arrival never queues
 * behind a node-less holder: it waits for the word to change. */
uint32_t hws_qw_enqueue(_Atomic uint64_t *word, uint32_t me, uint64_t v, const hws_wait_t *w);

/* Write our node into the holder half once the lock was handed to us
 * (the releaser left it 0). */
static inline void hws_qw_set_holder(_Atomic uint64_t *word, uint32_t me)
{
	/* relaxed: only the grantee writes the holder half now (a releaser
	 * cleared it before the grant we acquired), and a later release reads
	 * it by a read-modify-write of the same word. */
	atomic_fetch_add_explicit(word, (uint64_t)me << 32, memory_order_relaxed);
}

/* Release: 0 from a held lock, or when there is nothing to release.  Frees
 * the lock if nobody waits (the holder's node back to the cache, timed
 * waiters woken) and returns 0 with *node untouched; else claims the
 * hand-over and returns 1 with the holder's node in *node, for the kind to
 * hand the lock to its successor. */
static inline int hws_qw_release(_Atomic uint64_t *word, uint32_t *node)
{
	/* relaxed: only a guess for the CAS, which decides. */
	uint64_t v = atomic_load_explicit(word, memory_order_relaxed);

	for (;;) {
		uint32_t h = HWS_QW_HOLDER(v);
		if (__builtin_expect(!h, 0))
			return 0;   /* not held, or being handed over: a stray release */
		if (__builtin_expect(HWS_QW_TAIL(v) == h, 1)) {
			/* seq_cst: a release for the acquire of the next arrival,
			 * try or timed, and the read-modify-write
			 * hws_wake32_after_rmw relies on. */
			if (atomic_compare_exchange_weak_explicit(word, &v, 0, memory_order_seq_cst,
								  memory_order_relaxed)) {
				hws_wake32_after_rmw(hws_qw_tail32(word), HWS_WAKE_ALL);
				if (h != HWS_QN_ANON)
					hws_qnode_put(h);
				return 0;
			}
		} else {
			/* relaxed: the claim (holder half to 0) orders nothing;
			 * the kind's grant, a release store to a node, publishes
			 * the critical section to the successor. */
			if (atomic_compare_exchange_weak_explicit(word, &v, v & 0xffffffffu,
								  memory_order_relaxed,
								  memory_order_relaxed)) {
				*node = h;
				return 1;
			}
		}
	}
}

/* try and timed of MCS and CLH: take a free lock with one CAS of the word
 * from 0 to {node, node}, or to {ANON, ANON} when no node can be had, so
 * neither ever fails for memory; timed retries and waits on the tail half
 * in between (the release that empties the queue wakes it), so neither
 * ever queues.  0 or EBUSY / ETIMEDOUT. */
int hws_qw_try(_Atomic uint64_t *word);
int hws_qw_timed(_Atomic uint64_t *word, const hws_wait_t *w, uint64_t deadline_ns);

/* acquire, try and timed of queue kind k (hwsync/lock_<k>.h: MCS, CLH),
 * given its `queue`, the path when the lock was not free:
 *   int queue(_Atomic uint64_t *word, uint32_t me, uint64_t v, const hws_wait_t *w)
 * enters the queue with node `me`, given v, the word hws_qw_arrive saw, and
 * waits for the lock.  acquire takes a free lock with a fresh node and one
 * CAS; without a node (memory exhausted) it waits as timed does, so it never
 * fails for memory.  A macro, not an inline function taking `queue`: the
 * compiler predicts branches before it inlines, and an indirect call there
 * would change the layout of the free path. */
#define HWS_QW_CORE_OPS(k, queue)                                                  \
	int hws_##k##_core_acquire(hws_##k##_core_t *c, const hws_wait_t *w)       \
	{                                                                          \
		uint32_t me = hws_qnode_fresh();                                   \
		uint64_t v;                                                        \
		if (__builtin_expect(!me, 0))   /* no node: wait without one */    \
			return hws_qw_timed(&c->word, w, HWS_FOREVER);             \
		if (hws_qw_arrive(&c->word, me, &v))                               \
			return 0;                                                  \
		return queue(&c->word, me, v, w);                                  \
	}                                                                          \
	int hws_##k##_core_try(hws_##k##_core_t *c) { return hws_qw_try(&c->word); } \
	int hws_##k##_core_timed_ns(hws_##k##_core_t *c, const hws_wait_t *w,      \
				    uint64_t deadline_ns)                          \
	{                                                                          \
		return hws_qw_timed(&c->word, w, deadline_ns);                     \
	}

#endif

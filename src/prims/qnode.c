/* Queue-lock node pool and the abandonment shared by CLH and 1spinner. */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "prims/qnode.h"
#include "wait/internal.h"

struct hws_qnode *_Atomic hws_qnode_chunks[HWS_QN_MAX_CHUNKS];

static pthread_mutex_t pool_mu = PTHREAD_MUTEX_INITIALIZER;
static uint32_t nchunks;        /* under pool_mu */
static uint32_t free_head;      /* shared free list, linked by free_link; under pool_mu */

#define CACHE_MAX 32
#define CACHE_MOVE 16
static _Thread_local struct {
	uint32_t n;
	uint32_t idx[CACHE_MAX];
	int registered;
} cache;

static pthread_key_t exit_key;
static pthread_once_t exit_once = PTHREAD_ONCE_INIT;

/* Push n cached nodes back to the shared list. */
static void flush(uint32_t n)
{
	pthread_mutex_lock(&pool_mu);
	while (n-- && cache.n) {
		uint32_t i = cache.idx[--cache.n];
		hws_qnode(i)->free_link = free_head;
		free_head = i;
	}
	pthread_mutex_unlock(&pool_mu);
}

static void thread_exit(void *unused)
{
	(void)unused;
	flush(CACHE_MAX);
}

static void make_key(void)
{
	pthread_key_create(&exit_key, thread_exit);
}

/* Move up to CACHE_MOVE nodes from the shared list (growing it) to the cache. */
static int refill(void)
{
	if (!cache.registered) {
		pthread_once(&exit_once, make_key);
		pthread_setspecific(exit_key, &cache);   /* any non-NULL value: run thread_exit */
		cache.registered = 1;
	}
	pthread_mutex_lock(&pool_mu);
	if (!free_head && nchunks < HWS_QN_MAX_CHUNKS) {
		struct hws_qnode *c = aligned_alloc(HWS_CACHELINE, HWS_QN_CHUNK * sizeof *c);
		if (c) {
			memset(c, 0, HWS_QN_CHUNK * sizeof *c);
			/* release: pairs with the acquire in hws_qnode(). */
			atomic_store_explicit(&hws_qnode_chunks[nchunks], c, memory_order_release);
			for (uint32_t k = HWS_QN_CHUNK; k-- > 0;) {
				uint32_t i = nchunks << HWS_QN_CHUNK_SHIFT | k;
				if (i == 0)
					continue;   /* index 0 means "none" */
				c[k].free_link = free_head;
				free_head = i;
			}
			nchunks++;
		}
	}
	while (free_head && cache.n < CACHE_MOVE) {
		cache.idx[cache.n++] = free_head;
		free_head = hws_qnode(free_head)->free_link;
	}
	pthread_mutex_unlock(&pool_mu);
	return cache.n ? 0 : ENOMEM;
}

uint32_t hws_qnode_get(void)
{
	if (__builtin_expect(cache.n == 0, 0) && refill())
		return 0;
	return cache.idx[--cache.n];
}

void hws_qnode_put(uint32_t idx)
{
	if (__builtin_expect(cache.n == CACHE_MAX, 0))
		flush(CACHE_MOVE);
	cache.idx[cache.n++] = idx;
}

/* If nobody queued behind ME, swing the tail back to PRED and keep ME.
 * Otherwise publish "abandoned, wait on PRED" in ME; the successor follows the
 * redirect and then owns ME (it puts it back in the pool).  The tail cannot
 * read ME again unless ME is re-enqueued, and only its owner (us) can do
 * that, so the CAS has no ABA. */
void hws_qnode_abandon(_Atomic uint32_t *tail, uint32_t me, uint32_t pred)
{
	struct hws_qnode *n = hws_qnode(me);
	uint32_t expect = me;

	/* acq_rel: the tail is the queue's publication point (as the exchange). */
	if (atomic_compare_exchange_strong_explicit(tail, &expect, pred, memory_order_acq_rel,
						    memory_order_relaxed)) {
		hws_qnode_put(me);
		return;
	}
	/* relaxed: published by the release store of the state below. */
	atomic_store_explicit(&n->redirect, pred, memory_order_relaxed);
	/* release: pairs with the successor's acquire load of our state. */
	atomic_store_explicit(&n->state, HWS_QN_ABANDONED, memory_order_release);
	hws_wake32(&n->state, HWS_WAKE_ALL);
}

void hws_qnode_free_tail(uint32_t tail)
{
	while (tail) {
		struct hws_qnode *n = hws_qnode(tail);
		/* acquire: pairs with the release that set the state (no thread is
		 * queued when a lock is destroyed; this only frees memory). */
		uint32_t s = atomic_load_explicit(&n->state, memory_order_acquire);
		uint32_t next = s == HWS_QN_ABANDONED
			? atomic_load_explicit(&n->redirect, memory_order_relaxed) : 0;
		if (s == HWS_QN_WAITING)
			return;     /* still owned by a (misbehaving) waiter: leave it */
		hws_qnode_put(tail);
		tail = next;
	}
}

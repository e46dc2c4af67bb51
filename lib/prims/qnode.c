/* Queue-lock node pool: chunks of cache-line nodes, a shared free list and a
 * small free-node cache per thread; and the word operations that MCS and CLH
 * share (see qnode.h). */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include "prims/qnode.h"
#include "wait/internal.h"

struct hws_qnode *_Atomic hws_qnode_chunks[HWS_QN_MAX_CHUNKS];

/* The shared list's lock: a flag, so that the pool never calls into the
 * pthread functions an LD_PRELOAD shim built on this library interposes, and
 * so that fork can hold it (see pool_prepare). */
static _Atomic int pool_busy;
static uint32_t nchunks;        /* under pool_busy */
static uint32_t free_head;      /* shared free list, linked by free_link; under pool_busy */

static void pool_lock(void)
{
	/* acquire: pairs with the release in pool_unlock. */
	while (atomic_exchange_explicit(&pool_busy, 1, memory_order_acquire))
		hws_yield();
}

static void pool_unlock(void)
{
	/* release: publishes the list to the next holder. */
	atomic_store_explicit(&pool_busy, 0, memory_order_release);
}

/* fork: the child gets a consistent list (no thread is inside it when the
 * address space is copied); the nodes other threads cached are lost to it. */
static void pool_prepare(void) { pool_lock(); }
static void pool_after(void) { pool_unlock(); }

#define CACHE_MAX 32
#define CACHE_MOVE 16
static _Thread_local struct {
	uint32_t n;
	uint32_t idx[CACHE_MAX];
	int registered;
} cache;

static pthread_key_t exit_key;
static pthread_once_t setup_once = PTHREAD_ONCE_INIT;

/* Push n cached nodes back to the shared list. */
static void flush(uint32_t n)
{
	pool_lock();
	while (n-- && cache.n) {
		uint32_t i = cache.idx[--cache.n];
		hws_qnode(i)->free_link = free_head;
		free_head = i;
	}
	pool_unlock();
}

static void thread_exit(void *unused)
{
	(void)unused;
	flush(CACHE_MAX);
	/* A later destructor that releases a lock puts a node again and
	 * registers again, so that pthread runs this once more. */
	cache.registered = 0;
}

static void setup(void)
{
	pthread_key_create(&exit_key, thread_exit);
	pthread_atfork(pool_prepare, pool_after, pool_after);
}

/* Have this thread's exit return its cache to the shared list. */
static void register_thread(void)
{
	hws_once(&setup_once, setup);
	pthread_setspecific(exit_key, &cache);   /* any non-NULL value: run thread_exit */
	cache.registered = 1;
}

/* Add a chunk to the shared list (under pool_busy). */
static void grow(void)
{
	struct hws_qnode *c = aligned_alloc(HWS_CACHELINE, HWS_QN_CHUNK * sizeof *c);

	if (!c)
		return;
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

/* Move up to CACHE_MOVE nodes from the shared list (growing it) to the cache. */
static int refill(void)
{
	if (!cache.registered)
		register_thread();
	pool_lock();
	if (!free_head && nchunks < HWS_QN_MAX_CHUNKS)
		grow();
	while (free_head && cache.n < CACHE_MOVE) {
		cache.idx[cache.n++] = free_head;
		free_head = hws_qnode(free_head)->free_link;
	}
	pool_unlock();
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
	/* A thread that only releases (locks another thread took) gets nodes
	 * without ever refilling: it must give them back at exit too. */
	if (__builtin_expect(!cache.registered, 0))
		register_thread();
	if (__builtin_expect(cache.n == CACHE_MAX, 0))
		flush(CACHE_MOVE);
	cache.idx[cache.n++] = idx;
}

int hws_qw_try(_Atomic uint64_t *word)
{
	uint64_t expect = 0;
	uint32_t me;

	/* relaxed: a held lock needs no node; the CAS below decides. */
	if (atomic_load_explicit(word, memory_order_relaxed))
		return EBUSY;
	if (!(me = hws_qnode_fresh()))
		me = HWS_QN_ANON;   /* memory exhausted: hold it without a node */
	/* acq_rel: acquire pairs with the release CAS that freed the word;
	 * release publishes our initialised node to the next arrival. */
	if (atomic_compare_exchange_strong_explicit(word, &expect, HWS_QW(me, me),
						    memory_order_acq_rel, memory_order_relaxed))
		return 0;
	if (me != HWS_QN_ANON)
		hws_qnode_put(me);
	return EBUSY;
}

int hws_qw_timed(_Atomic uint64_t *word, const hws_wait_t *w, uint64_t deadline_ns)
{
	for (;;) {
		if (hws_qw_try(word) == 0)
			return 0;
		/* relaxed: only names the value to wait on; try re-checks. */
		uint32_t t = HWS_QW_TAIL(atomic_load_explicit(word, memory_order_relaxed));
		if (t && hws_wait_while_eq32(hws_qw_tail32(word), t, w, deadline_ns) == ETIMEDOUT)
			return hws_qw_try(word) == 0 ? 0 : ETIMEDOUT;
	}
}

uint32_t hws_qw_enqueue(_Atomic uint64_t *word, uint32_t me, uint64_t v, const hws_wait_t *w)
{
	for (;;) {
		uint32_t t = HWS_QW_TAIL(v);
		if (__builtin_expect(t == HWS_QN_ANON, 0)) {
			/* No node to queue behind: wait until its holder frees
			 * the word (its release wakes the tail half). */
			hws_wait_while_eq32(hws_qw_tail32(word), t, w, HWS_FOREVER);
			/* relaxed: a guess for the CAS. */
			v = atomic_load_explicit(word, memory_order_relaxed);
			continue;
		}
		/* acq_rel: publishes our initialised node to whoever reads the
		 * tail next; acquires the predecessor's node (or, from a free
		 * word, the last holder's critical section). */
		if (atomic_compare_exchange_weak_explicit(word, &v,
							  t ? (v & ~(uint64_t)0xffffffffu) | me
							    : HWS_QW(me, me),
							  memory_order_acq_rel, memory_order_relaxed))
			return t;
	}
}

/* 1spinner lock ([AKKAN13], Alg. 2): only one waiter polls the lock word.
 *
 * The lock is a head word (free/held) and a tail (last arrival).  A waiter
 * swaps its node into the tail, waits on its predecessor's node until the
 * predecessor has *acquired* the lock, and only then waits on `head` for the
 * release.  So at most one queued thread ever waits on the lock word, the
 * others each on a different node, and release is a single store to `head`.
 *
 * Departures from the published algorithm:
 * - It names the predecessor by (cpu id, 8-bit generation of a per-cpu
 *   word), which can wrap while a successor is descheduled.  Here a thread's
 *   "monitor" is a pool node handed over CLH-style: the successor adopts its
 *   predecessor's node once it has moved past it, so no generation is needed.
 * - The new holder swings the tail from its node back to 0 when nobody queued
 *   behind it, so a free lock references no node (an object abandoned
 *   without destroy strands nothing).
 * - The head is taken with a CAS, so try is one CAS on a free head that
 *   leaves no trace, and timed is try plus waiting on the head: neither
 *   enqueues, and both may barge ahead of queued waiters.  An acquire that
 *   gets no node (memory exhausted) waits as timed does.
 * Release stores "free" into head, so releasing a free lock is a no-op.
 * State: two 32-bit words (8 bytes).  The policy must outlive the lock.
 */
#ifndef HWSYNC_LOCK_1SPINNER_H
#define HWSYNC_LOCK_1SPINNER_H

#include <hwsync/lock_common.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The lock's words alone (in-place form: the caller passes the policy).
 * All zero is a free lock, and a free lock references no node. */
typedef struct hws_1spinner_core {
	_Atomic uint32_t head;     /* 0 free, 1 held */
	_Atomic uint32_t tail;     /* node index of the last arrival, 0 = nobody queued */
} hws_1spinner_core_t;

/* The typed form: the words and the policy they wait with. */
typedef struct hws_1spinner {
	hws_1spinner_core_t core;
	const hws_wait_t *wait;
} hws_1spinner_t;

int hws_1spinner_core_acquire(hws_1spinner_core_t *c, const hws_wait_t *w);
int hws_1spinner_core_try(hws_1spinner_core_t *c);
int hws_1spinner_core_timed_ns(hws_1spinner_core_t *c, const hws_wait_t *w, uint64_t deadline_ns);
int hws_1spinner_core_release(hws_1spinner_core_t *c);

int hws_1spinner_init(hws_1spinner_t *l, const hws_wait_t *w);
static inline int hws_1spinner_acquire(hws_1spinner_t *l) { return hws_1spinner_core_acquire(&l->core, l->wait); }
static inline int hws_1spinner_try(hws_1spinner_t *l) { return hws_1spinner_core_try(&l->core); }
static inline int hws_1spinner_timed_ns(hws_1spinner_t *l, uint64_t deadline_ns)
{
	return hws_1spinner_core_timed_ns(&l->core, l->wait, deadline_ns);
}
static inline int hws_1spinner_release(hws_1spinner_t *l) { return hws_1spinner_core_release(&l->core); }
void hws_1spinner_destroy(hws_1spinner_t *l);
HWS_LOCK_TIMED_WRAPPER(1spinner)

/* The tail (0 when nobody queues): for tests and tools. */
static inline uint32_t hws_1spinner_core_tail(hws_1spinner_core_t *c)
{
	/* relaxed: a snapshot for observers. */
	return atomic_load_explicit(&c->tail, memory_order_relaxed);
}

#ifdef __cplusplus
}
#endif
#endif

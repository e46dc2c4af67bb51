/* hwsync condition variable: works with any hwsync lock. Deadlines are
 * absolute CLOCK_MONOTONIC. Spurious wake-ups are allowed, as with POSIX. */
#ifndef HWSYNC_CONDVAR_H
#define HWSYNC_CONDVAR_H

#include <time.h>
#include <hwsync/lock.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct hws_condvar hws_condvar_t;

/* In-place form: the words alone (all zero is a fresh condvar), for objects
 * that hold their whole state, such as a pthread_cond_t under the shim.  The
 * caller releases and re-acquires its own lock around the wait:
 *
 *   seq = hws_condvar_core_enter(&cv);         // holding the lock
 *   unlock(m);
 *   rc = hws_condvar_core_block(&cv, seq, &policy, deadline_ns);
 *   hws_condvar_core_leave(&cv);
 *   lock(m);
 *
 * A signal advances `seq` only when a waiter is announced, so signalling a
 * condvar nobody waits on costs one load.  A signaller that changed the
 * predicate under the lock after a waiter's unlock sees that waiter's
 * announcement (the lock orders them), so no wake-up is lost.  Spurious
 * wake-ups are allowed: a polling waiter sees every advance, so a signal may
 * release more than one waiter. */
typedef struct hws_condvar_core {
	_Atomic uint32_t seq;       /* advanced by each signal or broadcast that has waiters */
	_Atomic uint32_t waiters;   /* threads between enter and leave */
} hws_condvar_core_t;

static inline uint32_t hws_condvar_core_enter(hws_condvar_core_t *cv)
{
	/* seq_cst: a signaller's load of waiters must see this increment. */
	atomic_fetch_add_explicit(&cv->waiters, 1, memory_order_seq_cst);
	/* relaxed: read under the caller's lock; any later signal changes it. */
	return atomic_load_explicit(&cv->seq, memory_order_relaxed);
}

/* 0 once seq moved on, ETIMEDOUT at the deadline (CLOCK_MONOTONIC ns). */
static inline int hws_condvar_core_block(hws_condvar_core_t *cv, uint32_t seq,
					 const hws_wait_t *w, uint64_t deadline_ns)
{
	return hws_wait_while_eq32(&cv->seq, seq, w, deadline_ns);
}

static inline void hws_condvar_core_leave(hws_condvar_core_t *cv)
{
	/* release: pairs with the acquire load in hws_condvar_core_busy (the
	 * waiter is done with the object). */
	atomic_fetch_sub_explicit(&cv->waiters, 1, memory_order_release);
}

/* Wake up to n waiters (HWS_WAKE_ALL for broadcast). */
static inline void hws_condvar_core_wake(hws_condvar_core_t *cv, uint32_t n)
{
	/* seq_cst: pairs with the seq_cst increment in hws_condvar_core_enter. */
	if (atomic_load_explicit(&cv->waiters, memory_order_seq_cst) == 0)
		return;
	/* seq_cst: a waiter that sees the new seq sees what was written before
	 * (release), and the increment orders itself before the read of the
	 * sleeper counter (the wait layer's Dekker pattern), so the wake needs
	 * no fence of its own. */
	atomic_fetch_add_explicit(&cv->seq, 1, memory_order_seq_cst);
	hws_wake32_after_rmw(&cv->seq, n);
}

/* Non-zero while some waiter has not left yet (destroy waits for 0). */
static inline int hws_condvar_core_busy(hws_condvar_core_t *cv)
{
	/* acquire: pairs with the release decrement in hws_condvar_core_leave. */
	return atomic_load_explicit(&cv->waiters, memory_order_acquire) != 0;
}

int hws_condvar_create(hws_condvar_t **cv, const char *wait_policy);
/* The same with a policy parsed once (hws_wait_init); the condvar keeps a
 * copy.  A NULL policy is EINVAL. */
int hws_condvar_create_with(hws_condvar_t **cv, const hws_wait_t *wait_policy);
int hws_condvar_wait(hws_condvar_t *cv, hws_lock_t *l);
int hws_condvar_timed(hws_condvar_t *cv, hws_lock_t *l, const struct timespec *abs_deadline);
int hws_condvar_signal(hws_condvar_t *cv);
int hws_condvar_broadcast(hws_condvar_t *cv);
void hws_condvar_destroy(hws_condvar_t *cv);

#ifdef __cplusplus
}
#endif
#endif

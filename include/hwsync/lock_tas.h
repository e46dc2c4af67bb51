/* Test-and-set lock: every attempt is an atomic exchange.
 *
 * Unlike ttas, a waiter does not wait for the word to read "free" before its
 * next exchange: it waits through the policy for at most a retry slice (1 us,
 * doubling up to 1 ms) and exchanges again, so it keeps issuing read-for-
 * ownership traffic on a held lock.  That is the baseline the papers measure.
 * The doubling lets blocking policies (futex, adaptive) reach their sleep.
 * State: one 32-bit word, 0 free, 1 held.  The policy must outlive the lock.
 */
#ifndef HWSYNC_LOCK_TAS_H
#define HWSYNC_LOCK_TAS_H

#include <hwsync/lock_common.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The lock's words alone (in-place form: the caller passes the policy). */
typedef struct hws_tas_core {
	_Atomic uint32_t word;     /* 0 free, 1 held */
} hws_tas_core_t;

/* The typed form: the words and the policy they wait with. */
typedef struct hws_tas {
	hws_tas_core_t core;
	const hws_wait_t *wait;
} hws_tas_t;

#define HWS_TAS_RETRY_MIN_NS 1000u
#define HWS_TAS_RETRY_MAX_NS 1000000u

static inline int hws_tas_core_try(hws_tas_core_t *c)
{
	/* acquire: pairs with the release store in hws_tas_core_release. */
	return atomic_exchange_explicit(&c->word, 1, memory_order_acquire) ? EBUSY : 0;
}

/* Slow path (out of line): retry until acquired or deadline_ns passed. */
int hws_tas_core_timed_ns(hws_tas_core_t *c, const hws_wait_t *w, uint64_t deadline_ns);

static inline int hws_tas_core_acquire(hws_tas_core_t *c, const hws_wait_t *w)
{
	if (__builtin_expect(hws_tas_core_try(c) == 0, 1))
		return 0;
	return hws_tas_core_timed_ns(c, w, HWS_FOREVER);
}

static inline int hws_tas_core_release(hws_tas_core_t *c)
{
	/* release: pairs with the acquire exchange of the next holder. */
	atomic_store_explicit(&c->word, 0, memory_order_release);
	hws_wake32(&c->word, 1);
	return 0;
}

static inline int hws_tas_init(hws_tas_t *l, const hws_wait_t *w)
{
	atomic_init(&l->core.word, 0);
	l->wait = w;
	return 0;
}

static inline int hws_tas_try(hws_tas_t *l) { return hws_tas_core_try(&l->core); }
static inline int hws_tas_timed_ns(hws_tas_t *l, uint64_t deadline_ns)
{
	return hws_tas_core_timed_ns(&l->core, l->wait, deadline_ns);
}
static inline int hws_tas_acquire(hws_tas_t *l) { return hws_tas_core_acquire(&l->core, l->wait); }
static inline int hws_tas_release(hws_tas_t *l) { return hws_tas_core_release(&l->core); }

HWS_LOCK_TIMED_WRAPPER(tas)

#ifdef __cplusplus
}
#endif
#endif

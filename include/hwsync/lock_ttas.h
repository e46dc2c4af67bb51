/* Test-and-test-and-set lock ([TTAS]): the Linux spin-lock loop of [T2SPIN].
 *
 * One exchange; if the lock was held, wait (through the policy) while the
 * word reads "held", then exchange again.  Waiters only read the line while
 * it is held, so the holder's release is the only invalidation they see.
 * State: one 32-bit word, 0 free, 1 held.  The policy must outlive the lock.
 */
#ifndef HWSYNC_LOCK_TTAS_H
#define HWSYNC_LOCK_TTAS_H

#include <hwsync/lock_common.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The lock's words alone (in-place form: the caller passes the policy). */
typedef struct hws_ttas_core {
	_Atomic uint32_t word;     /* 0 free, 1 held */
} hws_ttas_core_t;

/* The typed form: the words and the policy they wait with. */
typedef struct hws_ttas {
	hws_ttas_core_t core;
	const hws_wait_t *wait;
} hws_ttas_t;

static inline int hws_ttas_core_try(hws_ttas_core_t *c)
{
	/* acquire: pairs with the release store in hws_ttas_core_release. */
	return atomic_exchange_explicit(&c->word, 1, memory_order_acquire) ? EBUSY : 0;
}

static inline int hws_ttas_core_timed_ns(hws_ttas_core_t *c, const hws_wait_t *w,
					 uint64_t deadline_ns)
{
	while (hws_ttas_core_try(c)) {
		/* spin on read: the wait returns once the word reads 0 (acquire) */
		if (hws_wait_while_eq32(&c->word, 1, w, deadline_ns) == ETIMEDOUT)
			return hws_ttas_core_try(c) ? ETIMEDOUT : 0;
	}
	return 0;
}

static inline int hws_ttas_core_acquire(hws_ttas_core_t *c, const hws_wait_t *w)
{
	return hws_ttas_core_timed_ns(c, w, HWS_FOREVER);
}

static inline int hws_ttas_core_release(hws_ttas_core_t *c)
{
	/* release: pairs with the acquire exchange of the next holder. */
	atomic_store_explicit(&c->word, 0, memory_order_release);
	hws_wake32(&c->word, 1);
	return 0;
}

static inline int hws_ttas_init(hws_ttas_t *l, const hws_wait_t *w)
{
	atomic_init(&l->core.word, 0);
	l->wait = w;
	return 0;
}

static inline int hws_ttas_try(hws_ttas_t *l) { return hws_ttas_core_try(&l->core); }
static inline int hws_ttas_timed_ns(hws_ttas_t *l, uint64_t deadline_ns)
{
	return hws_ttas_core_timed_ns(&l->core, l->wait, deadline_ns);
}
static inline int hws_ttas_acquire(hws_ttas_t *l) { return hws_ttas_core_acquire(&l->core, l->wait); }
static inline int hws_ttas_release(hws_ttas_t *l) { return hws_ttas_core_release(&l->core); }

HWS_LOCK_TIMED_WRAPPER(ttas)

#ifdef __cplusplus
}
#endif
#endif

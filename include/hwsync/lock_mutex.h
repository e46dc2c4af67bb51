/* Three-state mutex ([DREPPER] mutex 2, in [MUSL]'s form).
 *
 * word: 0 unlocked, 1 locked, 2 locked and maybe waiters.  A waiter swaps in
 * 2 before it waits, so the release knows whether a wake may be needed:
 * releasing from 1 is one atomic and no wake call at all.  Waiting goes
 * through the wait layer with the lock's policy (futex gives the classic
 * mutex, adaptive spins first).  Not FIFO: a running thread may barge.
 * State: one 32-bit word.  The policy must outlive the lock.
 */
#ifndef HWSYNC_LOCK_MUTEX_H
#define HWSYNC_LOCK_MUTEX_H

#include <hwsync/lock_common.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The lock's word alone (in-place form: the caller passes the policy). */
typedef struct hws_mutex_core {
	_Atomic uint32_t word;     /* 0 unlocked, 1 locked, 2 locked + waiters */
} hws_mutex_core_t;

/* The typed form: the word and the policy it waits with. */
typedef struct hws_mutex {
	hws_mutex_core_t core;
	const hws_wait_t *wait;
} hws_mutex_t;

static inline int hws_mutex_core_try(hws_mutex_core_t *c)
{
	uint32_t v = 0;
	/* acquire: pairs with the release in hws_mutex_core_release. */
	return atomic_compare_exchange_strong_explicit(&c->word, &v, 1, memory_order_acquire,
						       memory_order_relaxed) ? 0 : EBUSY;
}

static inline int hws_mutex_core_timed_ns(hws_mutex_core_t *c, const hws_wait_t *w,
					  uint64_t deadline_ns)
{
	if (hws_mutex_core_try(c) == 0)
		return 0;
	/* acquire: as above; swapping in 2 announces a (possible) waiter. */
	while (atomic_exchange_explicit(&c->word, 2, memory_order_acquire) != 0)
		if (hws_wait_while_eq32(&c->word, 2, w, deadline_ns) == ETIMEDOUT)
			return atomic_exchange_explicit(&c->word, 2, memory_order_acquire)
				? ETIMEDOUT : 0;
	return 0;
}

static inline int hws_mutex_core_acquire(hws_mutex_core_t *c, const hws_wait_t *w)
{
	return hws_mutex_core_timed_ns(c, w, HWS_FOREVER);
}

/* A release of a free lock (a stray unlock, which glibc's default mutex
 * tolerates) is harmless: the decrement from 0 reads 0, not 1, so the word
 * is stored back to 0 and waiters woken.  Meanwhile it reads -1, which no
 * acquirer takes (they only take 0), so the store of 0 frees nobody's hold;
 * a racing acquirer at worst waits for that wake-up. */
static inline int hws_mutex_core_release(hws_mutex_core_t *c)
{
	/* release: pairs with the acquire CAS/exchange of the next holder. */
	if (atomic_fetch_sub_explicit(&c->word, 1, memory_order_release) != 1) {
		/* release: as above (the word was 2: someone may wait). */
		atomic_store_explicit(&c->word, 0, memory_order_release);
		hws_wake32(&c->word, 1);
	}
	return 0;
}

static inline int hws_mutex_init(hws_mutex_t *l, const hws_wait_t *w)
{
	atomic_init(&l->core.word, 0);
	l->wait = w;
	return 0;
}

static inline int hws_mutex_try(hws_mutex_t *l) { return hws_mutex_core_try(&l->core); }
static inline int hws_mutex_timed_ns(hws_mutex_t *l, uint64_t deadline_ns)
{
	return hws_mutex_core_timed_ns(&l->core, l->wait, deadline_ns);
}
static inline int hws_mutex_acquire(hws_mutex_t *l)
{
	return hws_mutex_core_acquire(&l->core, l->wait);
}
static inline int hws_mutex_release(hws_mutex_t *l) { return hws_mutex_core_release(&l->core); }

HWS_LOCK_TIMED_WRAPPER(mutex)

#ifdef __cplusplus
}
#endif
#endif

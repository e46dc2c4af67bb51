/* Ticket lock (paper 004, Alg. 1): FIFO.
 *
 * A thread takes a ticket with fetch-and-add on `next` and waits until
 * `owner` equals it; release increments `owner`.  All waiters wait on the
 * one `owner` word, so a release wakes all sleepers (only the right ticket
 * proceeds, the others sleep again): correct under any policy, but a
 * thundering herd under futex.  A ticket cannot be given back, so try and
 * timed never take one: they succeed only when the lock is free and nobody
 * queues (next == owner), waiting for `owner` to change in between.
 * State: two 32-bit words (8 bytes).  The policy must outlive the lock.
 */
#ifndef HWSYNC_LOCK_TICKET_H
#define HWSYNC_LOCK_TICKET_H

#include <hwsync/lock_common.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct hws_ticket {
	_Atomic uint32_t next;     /* next ticket to hand out */
	_Atomic uint32_t owner;    /* ticket now allowed to hold the lock */
	const hws_wait_t *wait;
} hws_ticket_t;

static inline int hws_ticket_init(hws_ticket_t *l, const hws_wait_t *w)
{
	atomic_init(&l->next, 0);
	atomic_init(&l->owner, 0);
	l->wait = w;
	return 0;
}

static inline int hws_ticket_acquire(hws_ticket_t *l)
{
	/* relaxed: the ticket only orders us among waiters; the acquire below
	 * on `owner` is what pairs with the previous holder's release. */
	uint32_t t = atomic_fetch_add_explicit(&l->next, 1, memory_order_relaxed), o;

	/* acquire: pairs with the release increment of `owner`. */
	while ((o = atomic_load_explicit(&l->owner, memory_order_acquire)) != t)
		hws_wait_while_eq32(&l->owner, o, l->wait, HWS_FOREVER);
	return 0;
}

static inline int hws_ticket_try(hws_ticket_t *l)
{
	/* acquire: pairs with the release that made owner == o.  If next is
	 * still o at the CAS, owner (<= next, monotonic) is exactly o: free. */
	uint32_t o = atomic_load_explicit(&l->owner, memory_order_acquire);
	/* relaxed: the acquire load above already ordered us after the release. */
	return atomic_compare_exchange_strong_explicit(&l->next, &o, o + 1, memory_order_relaxed,
						       memory_order_relaxed) ? 0 : EBUSY;
}

static inline int hws_ticket_timed_ns(hws_ticket_t *l, uint64_t deadline_ns)
{
	for (;;) {
		/* relaxed: only a hint of what to wait on; try re-reads with acquire. */
		uint32_t o = atomic_load_explicit(&l->owner, memory_order_relaxed);
		if (hws_ticket_try(l) == 0)
			return 0;
		if (hws_wait_while_eq32(&l->owner, o, l->wait, deadline_ns) == ETIMEDOUT)
			return hws_ticket_try(l) ? ETIMEDOUT : 0;
	}
}

HWS_LOCK_TIMED_WRAPPER(ticket)

static inline int hws_ticket_release(hws_ticket_t *l)
{
	/* relaxed: only the holder writes owner. */
	uint32_t o = atomic_load_explicit(&l->owner, memory_order_relaxed);
	/* release: pairs with the waiters' acquire loads of owner. */
	atomic_store_explicit(&l->owner, o + 1, memory_order_release);
	hws_wake32(&l->owner, HWS_WAKE_ALL);
	return 0;
}

#ifdef __cplusplus
}
#endif
#endif

/* Ticket lock ([AKKAN13], Alg. 1): FIFO.
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

/* The lock's words alone (in-place form: the caller passes the policy). */
typedef struct hws_ticket_core {
	_Atomic uint32_t next;     /* next ticket to hand out */
	_Atomic uint32_t owner;    /* ticket now allowed to hold the lock */
} hws_ticket_core_t;

/* The typed form: the words and the policy they wait with. */
typedef struct hws_ticket {
	hws_ticket_core_t core;
	const hws_wait_t *wait;
} hws_ticket_t;

static inline int hws_ticket_core_acquire(hws_ticket_core_t *c, const hws_wait_t *w)
{
	/* relaxed: the ticket only orders us among waiters; the acquire below
	 * on `owner` is what pairs with the previous holder's release. */
	uint32_t t = atomic_fetch_add_explicit(&c->next, 1, memory_order_relaxed), o;

	/* acquire: pairs with the release increment of `owner`.  Our turn
	 * has come when owner reached t or passed it: a stray release (see
	 * hws_ticket_core_release) may free a hold before its holder saw it. */
	while ((int32_t)((o = atomic_load_explicit(&c->owner, memory_order_acquire)) - t) < 0)
		hws_wait_while_eq32(&c->owner, o, w, HWS_FOREVER);
	return 0;
}

static inline int hws_ticket_core_try(hws_ticket_core_t *c)
{
	/* acquire: pairs with the release that made owner == o.  If next is
	 * still o at the CAS, owner (<= next, monotonic) is exactly o: free. */
	uint32_t o = atomic_load_explicit(&c->owner, memory_order_acquire);
	/* relaxed: the acquire load above already ordered us after the release. */
	return atomic_compare_exchange_strong_explicit(&c->next, &o, o + 1, memory_order_relaxed,
						       memory_order_relaxed) ? 0 : EBUSY;
}

static inline int hws_ticket_core_timed_ns(hws_ticket_core_t *c, const hws_wait_t *w,
					   uint64_t deadline_ns)
{
	for (;;) {
		/* relaxed: only a hint of what to wait on; try re-reads with acquire. */
		uint32_t o = atomic_load_explicit(&c->owner, memory_order_relaxed);
		if (hws_ticket_core_try(c) == 0)
			return 0;
		if (hws_wait_while_eq32(&c->owner, o, w, deadline_ns) == ETIMEDOUT)
			return hws_ticket_core_try(c) ? ETIMEDOUT : 0;
	}
}

/* Release: advance `owner`, but only while the lock is held (next != owner),
 * by CAS, so that a release of a free lock (glibc's default mutex tolerates
 * an unlock nobody holds) changes nothing, and of two releases that race
 * (the holder's and a stray one) only one advances `owner`: it never passes
 * `next`, which would skip a ticket and stop the lock for good.  The holder
 * (or a thread ordered after its acquisition) always reads next > owner: its
 * own ticket is below next.  A stray release that frees a hold its holder
 * has not seen yet (owner passed the holder's ticket) does not lose that
 * holder: a waiter's turn is owner reaching its ticket or passing it. */
static inline int hws_ticket_core_release(hws_ticket_core_t *c)
{
	/* relaxed: only names the value for the CAS, which decides. */
	uint32_t o = atomic_load_explicit(&c->owner, memory_order_relaxed);

	do {
		/* relaxed: next only grows and owner <= next, so next == o read
		 * after o means the lock was free in between: nothing to do. */
		if (__builtin_expect(atomic_load_explicit(&c->next, memory_order_relaxed) == o, 0))
			return 0;
		/* seq_cst: a release for the waiters' acquire loads of owner,
		 * and the read-modify-write hws_wake32_after_rmw relies on. */
	} while (!atomic_compare_exchange_weak_explicit(&c->owner, &o, o + 1, memory_order_seq_cst,
							memory_order_relaxed));
	hws_wake32_after_rmw(&c->owner, HWS_WAKE_ALL);
	return 0;
}

/* The same algorithm in one 32-bit word, for objects of 4 bytes (an OpenMP
 * lock): `next` in the high half, `owner` in the low half, 65535 waiters at
 * most.  Arrivals add to the high half (a carry out of bit 31 is lost, which
 * is the wrap we want); only the holder changes the low half, by CAS, so an
 * owner wrap never carries into `next`.  Waiters wait on the whole word:
 * an arrival changing `next` only costs them a re-check. */
typedef struct hws_ticket16_core {
	_Atomic uint32_t word;     /* next << 16 | owner */
} hws_ticket16_core_t;

static inline int hws_ticket16_core_acquire(hws_ticket16_core_t *c, const hws_wait_t *w)
{
	/* acquire: if the lock was free, this pairs with the last release. */
	uint32_t v = atomic_fetch_add_explicit(&c->word, 1u << 16, memory_order_acquire);
	uint32_t t = v >> 16;

	v += 1u << 16;     /* the word as our arrival left it */

	/* Until owner reached t or passed it (a stray release, as above). */
	while ((int16_t)(uint16_t)((v & 0xffffu) - t) < 0) {
		hws_wait_while_eq32(&c->word, v, w, HWS_FOREVER);
		/* acquire: pairs with the release CAS that made owner == t. */
		v = atomic_load_explicit(&c->word, memory_order_acquire);
	}
	return 0;
}

static inline int hws_ticket16_core_try(hws_ticket16_core_t *c)
{
	/* relaxed: the CAS below decides and orders. */
	uint32_t v = atomic_load_explicit(&c->word, memory_order_relaxed);
	if ((v >> 16) != (v & 0xffffu))
		return EBUSY;
	/* acquire: pairs with the release CAS of the last holder. */
	return atomic_compare_exchange_strong_explicit(&c->word, &v, v + (1u << 16),
						       memory_order_acquire,
						       memory_order_relaxed) ? 0 : EBUSY;
}

static inline int hws_ticket16_core_timed_ns(hws_ticket16_core_t *c, const hws_wait_t *w,
					     uint64_t deadline_ns)
{
	for (;;) {
		/* relaxed: only names the value to wait on; try re-reads. */
		uint32_t v = atomic_load_explicit(&c->word, memory_order_relaxed);
		if (hws_ticket16_core_try(c) == 0)
			return 0;
		if (hws_wait_while_eq32(&c->word, v, w, deadline_ns) == ETIMEDOUT)
			return hws_ticket16_core_try(c) ? ETIMEDOUT : 0;
	}
}

/* As hws_ticket_core_release: only a held lock (next != owner) advances, so
 * a stray release of a free lock is a no-op and two racing releases advance
 * owner once. */
static inline int hws_ticket16_core_release(hws_ticket16_core_t *c)
{
	/* relaxed: the CAS below decides. */
	uint32_t v = atomic_load_explicit(&c->word, memory_order_relaxed), n;
	do {
		if (__builtin_expect((v >> 16) == (v & 0xffffu), 0))
			return 0;   /* free: nothing to release */
		n = (v & 0xffff0000u) | ((v + 1) & 0xffffu);
		/* seq_cst: a release for the acquire of the next holder, and the
		 * read-modify-write hws_wake32_after_rmw relies on. */
	} while (!atomic_compare_exchange_weak_explicit(&c->word, &v, n, memory_order_seq_cst,
							memory_order_relaxed));
	hws_wake32_after_rmw(&c->word, HWS_WAKE_ALL);
	return 0;
}

static inline int hws_ticket_init(hws_ticket_t *l, const hws_wait_t *w)
{
	atomic_init(&l->core.next, 0);
	atomic_init(&l->core.owner, 0);
	l->wait = w;
	return 0;
}

static inline int hws_ticket_try(hws_ticket_t *l) { return hws_ticket_core_try(&l->core); }
static inline int hws_ticket_timed_ns(hws_ticket_t *l, uint64_t deadline_ns)
{
	return hws_ticket_core_timed_ns(&l->core, l->wait, deadline_ns);
}
static inline int hws_ticket_acquire(hws_ticket_t *l)
{
	return hws_ticket_core_acquire(&l->core, l->wait);
}
static inline int hws_ticket_release(hws_ticket_t *l) { return hws_ticket_core_release(&l->core); }

HWS_LOCK_TIMED_WRAPPER(ticket)

#ifdef __cplusplus
}
#endif
#endif

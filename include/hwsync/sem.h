/* hwsync counting semaphore, generic over the wait policy.  Deadlines are
 * absolute CLOCK_MONOTONIC.  hws_sem_try returns EAGAIN when the count is zero
 * (as sem_trywait); timed returns ETIMEDOUT; post returns EOVERFLOW at
 * HWS_SEM_VALUE_MAX; create returns EINVAL for an initial value above it. */
#ifndef HWSYNC_SEM_H
#define HWSYNC_SEM_H

#include <errno.h>
#include <time.h>
#include <hwsync/wait.h>

#ifdef __cplusplus
extern "C" {
#endif

#define HWS_SEM_VALUE_MAX 0x7fffffffu

typedef struct hws_sem hws_sem_t;

/* In-place form: the words alone (all zero is a semaphore of value 0), for
 * objects that hold their whole state, such as a sem_t under the shim.
 *
 * `value` is the word waiters wait on.  A waiter that finds it zero first
 * announces itself in `waiters`, then re-checks and waits; post adds a unit
 * and calls the wake only when a waiter is announced.  Both sides write
 * their word before reading the other's (all seq_cst), so at least one sees
 * the other: the waiter finds the unit, or the poster finds the waiter.  An
 * uncontended post is therefore one CAS and one load. */
typedef struct hws_sem_core {
	_Atomic uint32_t value;     /* units available */
	_Atomic uint32_t waiters;   /* threads announced in hws_sem_core_announce */
} hws_sem_core_t;

/* Take a unit if there is one: 1 taken, 0 not. */
static inline int hws_sem_core_take(hws_sem_core_t *s)
{
	/* seq_cst: the waiter's side of the announce/post handshake (see top). */
	uint32_t v = atomic_load_explicit(&s->value, memory_order_seq_cst);
	while (v > 0)
		/* acquire: pairs with the release CAS in hws_sem_core_post. */
		if (atomic_compare_exchange_weak_explicit(&s->value, &v, v - 1,
							  memory_order_acquire,
							  memory_order_relaxed))
			return 1;
	return 0;
}

static inline void hws_sem_core_announce(hws_sem_core_t *s)
{
	/* seq_cst: the poster's load of waiters must see this (see top). */
	atomic_fetch_add_explicit(&s->waiters, 1, memory_order_seq_cst);
}

static inline void hws_sem_core_retire(hws_sem_core_t *s)
{
	/* relaxed: only decides whether posts call the wake; a stale count
	 * costs one needless wake call. */
	atomic_fetch_sub_explicit(&s->waiters, 1, memory_order_relaxed);
}

/* Announced waiter: wait while the value is 0; 0, ETIMEDOUT, or with
 * `interruptible` EINTR when a signal handler interrupted a kernel sleep. */
static inline int hws_sem_core_block(hws_sem_core_t *s, const hws_wait_t *w,
				     uint64_t deadline_ns, int interruptible)
{
	if (interruptible)
		return hws_wait_while_eq32_intr(&s->value, 0, w, deadline_ns);
	return hws_wait_while_eq32(&s->value, 0, w, deadline_ns);
}

/* 0, or EOVERFLOW at HWS_SEM_VALUE_MAX. */
static inline int hws_sem_core_post(hws_sem_core_t *s)
{
	/* relaxed: a guess for the CAS below. */
	uint32_t v = atomic_load_explicit(&s->value, memory_order_relaxed);
	do {
		if (v >= HWS_SEM_VALUE_MAX)
			return EOVERFLOW;
		/* seq_cst: releases the unit to its taker and is the poster's
		 * side of the announce/post handshake (see top). */
	} while (!atomic_compare_exchange_weak_explicit(&s->value, &v, v + 1,
							memory_order_seq_cst,
							memory_order_relaxed));
	/* seq_cst: see top. */
	if (atomic_load_explicit(&s->waiters, memory_order_seq_cst))
		hws_wake32(&s->value, 1);
	return 0;
}

/* Take a unit, waiting until the deadline: 0 or ETIMEDOUT. */
static inline int hws_sem_core_wait(hws_sem_core_t *s, const hws_wait_t *w,
				    uint64_t deadline_ns)
{
	int rc = 0;

	if (hws_sem_core_take(s))
		return 0;
	hws_sem_core_announce(s);
	while (!hws_sem_core_take(s)) {
		if (hws_sem_core_block(s, w, deadline_ns, 0) == ETIMEDOUT) {
			rc = hws_sem_core_take(s) ? 0 : ETIMEDOUT;
			break;
		}
	}
	hws_sem_core_retire(s);
	return rc;
}

int hws_sem_create(hws_sem_t **s, unsigned initial, const char *wait_policy);
/* The same with a policy parsed once (hws_wait_init); the semaphore keeps a
 * copy.  A NULL policy is EINVAL. */
int hws_sem_create_with(hws_sem_t **s, unsigned initial, const hws_wait_t *wait_policy);
int hws_sem_wait(hws_sem_t *s);
int hws_sem_try(hws_sem_t *s);
int hws_sem_timed(hws_sem_t *s, const struct timespec *abs_deadline);
int hws_sem_post(hws_sem_t *s);
unsigned hws_sem_value(const hws_sem_t *s);
void hws_sem_destroy(hws_sem_t *s);

#ifdef __cplusplus
}
#endif
#endif

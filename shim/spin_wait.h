/* The waiting side of the shim's pthread spin lock (spin_wait.c): what a
 * thread does after its first exchange found the lock held.  It uses only
 * the arch and wait layers, so that a unit test can run it under
 * ThreadSanitizer without the shim. */
#ifndef HWS_PRELOAD_SPIN_WAIT_H
#define HWS_PRELOAD_SPIN_WAIT_H

#include <stdatomic.h>
#include <stdint.h>
#include <hwsync/wait.h>

/* glibc's lock word, kept so that a process-shared spin lock works between a
 * process under the shim and one without it: on x86 1 is free and 0 or less
 * held (glibc's lock decrements it, its unlock stores 1); elsewhere 0 is free
 * and 1 held. */
#if defined(__x86_64__) || defined(__i386__)
#define HWS_SPIN_FREE 1u
#define HWS_SPIN_HELD 0u
static inline int hws_spin_is_free(uint32_t v) { return (int32_t)v > 0; }
#else
#define HWS_SPIN_FREE 0u
#define HWS_SPIN_HELD 1u
static inline int hws_spin_is_free(uint32_t v) { return v == 0; }
#endif

/* One attempt: 1 when this thread took the lock.  Exchanging "held" into a
 * held word changes nothing that matters (an x86 word below 0 only counts
 * glibc's waiters, which wait for any value above 0 all the same). */
static inline int hws_spin_try(_Atomic uint32_t *word)
{
	/* acquire: pairs with the release store of the unlock (ours or glibc's). */
	return hws_spin_is_free(atomic_exchange_explicit(word, HWS_SPIN_HELD,
							 memory_order_acquire));
}

/* Take the lock word and return once this thread holds it, never sleeping
 * in the kernel; called when hws_spin_try failed.  policy NULL: the built-in
 * bounded exponential backoff between read-only polls; else the waiter waits
 * with that (non-sleeping) policy between attempts instead.  Either way it
 * yields the CPU between polls when ncpus is 1, when as many waiters as
 * ncpus have spun up to the backoff's cap, or after a long fruitless spin.
 * Returns how many times it yielded. */
unsigned hws_spin_wait_acquire(_Atomic uint32_t *word, const hws_wait_t *policy,
			       unsigned ncpus);

/* In a child after fork: no thread of the parent is waiting here any more. */
void hws_spin_wait_atfork_child(void);

#endif

/* Giving the CPU away, and noting when the program last did so by its own
 * choice.  A lock waiter on a busy machine may poll with sched_yield before
 * it sleeps (lib/prims/lock_auto_sleep.c): that hands its CPU to a runnable
 * thread queued there, perhaps a preempted holder.  But where the program's
 * own threads call sched_yield, perhaps while they hold the lock, a polling
 * waiter stays runnable and lengthens each yielder's way back to its CPU.
 * An interposed sched_yield calls hws_yield_noted(); the library's own
 * polling calls hws_yield(), which is not noted.
 *
 * The note is a flag that a noted call sets where it is clear, and that the
 * waiters' reads turn over every TURN_NS, keeping the last turn's value: a
 * load and a predicted branch on each call, with a store about twice a turn,
 * and no clock.  A counter of the threads inside the call, tried first, was
 * passed between the CPUs on every call and cost two threads that hold eight
 * mutexes across sched_yield a third of their throughput; a time noted on
 * each call, 6% (docs/locks.md, "A few yields before the park"). */
#define _GNU_SOURCE
#include <stdatomic.h>
#include <sys/syscall.h>
#include <hwsync/arch.h>
#include "arch/internal.h"

/* A turn: longer than a scheduler time slice, so that a program whose
 * threads yield is seen as one between its calls. */
#define TURN_NS 4000000ull

static _Atomic int yielded_now;      /* a noted call since the last turn */
static _Atomic int yielded_before;   /* one in the turn before that */
static _Atomic uint64_t turned_at;   /* hws_now_ns() of the last turn */

int hws_yield(void)
{
	/* The system call itself: glibc's sched_yield may be the interposed one. */
	return (int)hws_syscall6(SYS_sched_yield, 0, 0, 0, 0, 0, 0);
}

int hws_yield_noted(void)
{
	/* relaxed: a hint read by waiters; nothing is published through it. */
	if (!atomic_load_explicit(&yielded_now, memory_order_relaxed))
		atomic_store_explicit(&yielded_now, 1, memory_order_relaxed);
	return hws_yield();
}

bool hws_program_yielded(uint64_t now_ns)
{
	/* relaxed throughout: see hws_yield_noted; the CAS only elects the
	 * one reader that turns the flags over. */
	uint64_t t = atomic_load_explicit(&turned_at, memory_order_relaxed);
	if (now_ns > t && now_ns - t >= TURN_NS &&
	    atomic_compare_exchange_strong_explicit(&turned_at, &t, now_ns, memory_order_relaxed,
						    memory_order_relaxed))
		atomic_store_explicit(&yielded_before,
				      atomic_exchange_explicit(&yielded_now, 0, memory_order_relaxed),
				      memory_order_relaxed);
	return atomic_load_explicit(&yielded_now, memory_order_relaxed) ||
	       atomic_load_explicit(&yielded_before, memory_order_relaxed);
}

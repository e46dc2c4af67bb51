/* Giving the CPU away, and counting the threads that did so by their own
 * choice.  A lock waiter on a busy machine may poll with sched_yield before
 * it sleeps (lib/prims/lock_auto_sleep.c): that hands its CPU to a runnable
 * thread queued there, perhaps a preempted holder.  But where the program's
 * own threads call sched_yield, perhaps while they hold the lock, a polling
 * waiter stays runnable and lengthens each yielder's way back to its CPU.
 * The shim's sched_yield counts its callers while the call runs; the
 * library's own polling calls hws_yield(), which is not counted.
 *
 * The count is one process-wide word: two atomic additions per counted call,
 * against the system call's few hundred nanoseconds. */
#define _GNU_SOURCE
#include <stdatomic.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <hwsync/arch.h>

_Atomic unsigned hws_yielders_now;

void hws_yield(void)
{
	/* The system call itself: glibc's sched_yield may be the shim's. */
	syscall(SYS_sched_yield);
}

int hws_yield_counted(void)
{
	/* relaxed: a hint read by waiters; nothing is published through it. */
	atomic_fetch_add_explicit(&hws_yielders_now, 1, memory_order_relaxed);
	long r = syscall(SYS_sched_yield);
	atomic_fetch_sub_explicit(&hws_yielders_now, 1, memory_order_relaxed);
	return (int)r;
}

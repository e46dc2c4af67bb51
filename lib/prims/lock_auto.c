/* "auto": the lock kind for this machine (measurements: docs/results/locks.md).
 *
 * Rule: the three-state mutex.  With more than one CPU its default policy is
 * adaptive (spin for the calibrated budget, then sleep); with one CPU a
 * spinning waiter only delays the holder, so the default policy is futex.
 * A policy the caller names explicitly is used as given.
 *
 * Why the mutex: on the reference machine (2 vCPU EPYC KVM guest) it was the
 * fastest kind both for two threads handing the lock back and forth
 * (mutex:adaptive 47 ns/acquisition vs ttas:adaptive 56, glibc 119) and for
 * 8 threads on 2 CPUs (80 ns vs glibc 89; ttas:adaptive 175; FIFO queue
 * locks collapse there, 10+ us, because every hand-off may go to a preempted
 * waiter).  Re-measured after adaptive's budget became twice the futex
 * hand-off (hwsync bench suite --quick, docs/results/bench-2026-11-23.md):
 * 8.53 Macq/s vs glibc 4.70 with 2 threads, 7.72 vs 4.59 with 8 on 2 CPUs.  Barging keeps the lock with a running thread; the state word lets
 * an uncontended release skip the wake entirely.
 */
#include <unistd.h>
#include "prims/lock_ops.h"

const struct hws_lock_ops *hws_lock_auto_choice(const char **default_policy)
{
	*default_policy = sysconf(_SC_NPROCESSORS_ONLN) > 1 ? "adaptive" : "futex";
	return &hws_lock_ops_mutex;
}

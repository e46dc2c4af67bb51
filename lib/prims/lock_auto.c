/* "auto": the lock kind for this machine.
 *
 * Rule: the three-state mutex.  With more than one CPU its default policy is
 * adaptive (spin for the calibrated budget, then sleep); with one CPU a
 * spinning waiter only delays the holder, so the default policy is futex.
 * A policy the caller names explicitly is used as given.
 *
 * Why the mutex: it barges (a running thread may take the lock while a
 * waiter is still waking up), so a hand-over never waits for a preempted
 * waiter, which is what makes the FIFO kinds collapse when threads
 * outnumber CPUs; and its state word lets an uncontended release skip the
 * wake entirely.  Measured with `hwsync bench locks` (2 threads, and 8
 * threads on 2 CPUs): as fast as the fastest kind with two threads; with
 * eight it keeps most of that throughput and stays fair, where the FIFO
 * kinds collapse and tas gives up fairness; ahead of glibc's mutex in both.
 * The numbers for each machine: docs/results/README.md.
 */
#include <unistd.h>
#include "prims/lock_ops.h"

const struct hws_lock_ops *hws_lock_auto_choice(const char **default_policy)
{
	*default_policy = sysconf(_SC_NPROCESSORS_ONLN) > 1 ? "adaptive" : "futex";
	return &hws_lock_ops_mutex;
}

/* The registry of objects passed to the native implementation
 * (HWSYNC_VERBOSE names each kind once; the stats summary lists them). */
#include "shim/config.h"
#include "shim/passthrough.h"
#include "shim/say.h"

static const char *const pass_name[HWS_PASS_NKINDS] = {
	[HWS_PASS_MUTEX_RECURSIVE] = "recursive pthread mutexes",
	[HWS_PASS_MUTEX_ERRORCHECK] = "error-checking pthread mutexes",
	[HWS_PASS_MUTEX_ROBUST] = "robust pthread mutexes",
	[HWS_PASS_MUTEX_PI] = "priority-inheritance pthread mutexes",
	[HWS_PASS_MUTEX_PP] = "priority-protect pthread mutexes",
	[HWS_PASS_MUTEX_PSHARED] = "process-shared pthread mutexes",
	[HWS_PASS_MUTEX_OTHER] = "pthread mutexes of other types",
	[HWS_PASS_COND_PSHARED] = "process-shared condition variables",
	[HWS_PASS_BARRIER_PSHARED] = "process-shared pthread barriers",
	[HWS_PASS_SEM_PSHARED] = "process-shared unnamed semaphores",
	[HWS_PASS_SEM_NAMED] = "named semaphores (sem_open)",
	[HWS_PASS_STARTUP] = "objects first used while the shim was starting",
	[HWS_PASS_GOMP_TEAM] = "OpenMP barriers of teams the shim does not track (GOMP_parallel_start, or a region whose first 16 runs met no barrier) or of no team",
	[HWS_PASS_GOMP_TASKS] = "OpenMP barriers after tasks were created (libgomp runs the tasks)",
	[HWS_PASS_BARRIER_UNFIT] = "OpenMP team barriers the HWSYNC_BARRIER kind cannot serve",
	[HWS_PASS_RWLOCK_PSHARED] = "process-shared pthread rwlocks",
	[HWS_PASS_RWLOCK_OTHER] = "pthread rwlocks of other kinds",
};
static _Atomic int pass_seen[HWS_PASS_NKINDS];

void hws_pass(enum hws_pass what)
{
	/* relaxed: a once-per-kind flag for a message; nothing else rides on it. */
	if (!atomic_load_explicit(&pass_seen[what], memory_order_relaxed) &&
	    !atomic_exchange_explicit(&pass_seen[what], 1, memory_order_relaxed) &&
	    hws_cfg.verbose)
		hws_shim_say("passing %s to the native implementation", pass_name[what]);
}

int hws_pass_seen(enum hws_pass what)
{
	/* relaxed: read once at exit. */
	return atomic_load_explicit(&pass_seen[what], memory_order_relaxed);
}

const char *hws_pass_name(enum hws_pass what)
{
	return pass_name[what];
}

/* Unnamed process-private semaphores (sem_init with pshared 0): the library's
 * in-place semaphore (hws_sem_core_t, hwsync/sem.h) in the first 8 bytes.
 * Everything else -- sem_open'ed and process-shared semaphores -- stays with
 * glibc.
 *
 * Owner record: glibc keeps its futex flag in the int after the 64-bit value
 * word (0 private, 128 shared, also for sem_open); the shim writes SEM_MAGIC
 * there, so a semaphore that reaches sem_wait/sem_post is recognised as ours
 * or passed to glibc unchanged.  Nothing is allocated.
 *
 * sem_wait, sem_timedwait and sem_clockwait are cancellation points: a
 * pending cancel acts at entry, and while blocked the thread waits with
 * asynchronous cancellation enabled.  The count is only changed by a CAS
 * outside that window, so a cancelled waiter never takes a token.  A signal
 * handler that interrupts a sleeping waiter ends the wait with EINTR exactly
 * when glibc's would (see block()).
 */
#include <errno.h>
#include <limits.h>
#include <hwsync/sem.h>
#include "shim/common.h"
#include "shim/config.h"
#include "shim/family.h"
#include "shim/natives.h"
#include "shim/passthrough.h"
#include "shim/profile.h"
#include "shim/shim_lock.h"
#include "shim/startup.h"
#include "shim/stats.h"
#include "shim/time.h"

#define SEM_MAGIC 0x48575353   /* "HWSS" */
#define CORE(s) ((hws_sem_core_t *)(void *)(s))
#define MAGIC(s) ((_Atomic int *)((char *)(void *)(s) + 8))

_Static_assert(sizeof(sem_t) >= 16 && sizeof(hws_sem_core_t) == 8, "sem_t layout");

static inline int ours(sem_t *s)
{
	/* relaxed: written at init only. */
	return atomic_load_explicit(MAGIC(s), memory_order_relaxed) == SEM_MAGIC;
}

static inline int fail(int err)
{
	errno = err;
	return -1;
}

#define COUNT(field) \
	do { \
		if (hws_cfg.stats) \
			HWS_COUNT(HWS_FAM_SEM, field, 1); \
	} while (0)

HWS_EXPORT int sem_init(sem_t *s, int pshared, unsigned value)
{
	if (pshared || !hws_shim_on()) {
		if (pshared)
			hws_pass(HWS_PASS_SEM_PSHARED);
		return hws_native.sem_init ? hws_native.sem_init(s, pshared, value) : fail(ENOSYS);
	}
	if (value > SEM_VALUE_MAX)
		return fail(EINVAL);
	if (unlikely(hws_cfg.profile))
		hws_prof_end(s);
	/* relaxed: init is not concurrent with use. */
	atomic_store_explicit(&CORE(s)->value, value, memory_order_relaxed);
	atomic_store_explicit(&CORE(s)->waiters, 0, memory_order_relaxed);
	atomic_store_explicit(MAGIC(s), SEM_MAGIC, memory_order_relaxed);
	return 0;
}

HWS_EXPORT int sem_destroy(sem_t *s)
{
	if (!ours(s))
		return hws_native.sem_destroy ? hws_native.sem_destroy(s) : 0;
	if (unlikely(hws_cfg.profile))
		hws_prof_end(s);
	/* relaxed: destroy is not concurrent with use. */
	atomic_store_explicit(MAGIC(s), 0, memory_order_relaxed);
	return 0;
}

static int take(sem_t *s)
{
	return hws_sem_core_take(CORE(s));
}

/* A unit taken without waiting: 0, counted by the profile. */
static inline int taken(sem_t *s)
{
	if (unlikely(hws_cfg.profile))
		hws_prof_acquired(s, HWS_FAM_SEM);
	return 0;
}

static void retire(void *s)
{
	hws_sem_core_retire(CORE(s));
}

/* Block until a unit is taken or the deadline passes: 0, ETIMEDOUT, or
 * EINTR when a signal handler interrupted the sleep (as glibc's futex wait
 * reports it: always for a timed wait, without SA_RESTART for an untimed
 * one; the kernel decides, for both implementations alike).  The
 * count changes only by a CAS outside the window in which asynchronous
 * cancellation is enabled, so a cancelled waiter never takes a unit; its
 * cleanup handler withdraws its announcement. */
static int block(sem_t *s, uint64_t deadline_ns)
{
	int rc = 0, oldtype;
	uint64_t p0 = hws_cfg.profile ? hws_prof_wait_begin(s, HWS_FAM_SEM) : 0;
	COUNT(contended);
	hws_sem_core_announce(CORE(s));
	pthread_cleanup_push(retire, s);
	while (!take(s)) {
		pthread_setcanceltype(PTHREAD_CANCEL_ASYNCHRONOUS, &oldtype);
		rc = hws_sem_core_block(CORE(s), &hws_cfg.wait, deadline_ns, 1);
		pthread_setcanceltype(oldtype, NULL);
		if (rc) {
			rc = take(s) ? 0 : rc;
			break;
		}
	}
	pthread_cleanup_pop(1);
	if (hws_cfg.profile)
		hws_prof_wait_end(s, HWS_FAM_SEM, p0, rc, 0);
	if (rc == ETIMEDOUT)
		COUNT(timeouts);
	return rc;
}

HWS_EXPORT int sem_wait(sem_t *s)
{
	if (!ours(s)) {
		hws_pass(HWS_PASS_SEM_NAMED);
		return hws_native.sem_wait ? hws_native.sem_wait(s) : fail(ENOSYS);
	}
	hws_testcancel();
	COUNT(ops);
	if (take(s))
		return taken(s);
	int rc = block(s, HWS_FOREVER);
	return rc ? fail(rc) : 0;
}

HWS_EXPORT int sem_trywait(sem_t *s)
{
	if (!ours(s)) {
		hws_pass(HWS_PASS_SEM_NAMED);
		return hws_native.sem_trywait ? hws_native.sem_trywait(s) : fail(ENOSYS);
	}
	COUNT(ops);
	return take(s) ? taken(s) : fail(EAGAIN);
}

static int timed(sem_t *s, clockid_t clock, const struct timespec *abs)
{
	uint64_t dl;
	int rc;
	/* Checked first, as glibc does (POSIX also allows checking it only when
	 * the call would block). */
	if ((rc = hws_shim_deadline_ns(clock, abs, &dl)))
		return fail(rc);
	hws_testcancel();
	COUNT(ops);
	if (take(s))
		return taken(s);
	if ((rc = block(s, dl)))
		return fail(rc);
	return 0;
}

HWS_EXPORT int sem_timedwait(sem_t *s, const struct timespec *abs)
{
	if (!ours(s)) {
		hws_pass(HWS_PASS_SEM_NAMED);
		return hws_native.sem_timedwait ? hws_native.sem_timedwait(s, abs) : fail(ENOSYS);
	}
	return timed(s, CLOCK_REALTIME, abs);
}

HWS_EXPORT int sem_clockwait(sem_t *s, clockid_t clock, const struct timespec *abs)
{
	if (!ours(s)) {
		hws_pass(HWS_PASS_SEM_NAMED);
		return hws_native.sem_clockwait ? hws_native.sem_clockwait(s, clock, abs)
						: fail(ENOSYS);
	}
	if (clock != CLOCK_REALTIME && clock != CLOCK_MONOTONIC)
		return fail(EINVAL);
	return timed(s, clock, abs);
}

HWS_EXPORT int sem_post(sem_t *s)
{
	if (!ours(s)) {
		hws_pass(HWS_PASS_SEM_NAMED);
		return hws_native.sem_post ? hws_native.sem_post(s) : fail(ENOSYS);
	}
	if (hws_sem_core_post(CORE(s)))
		return fail(EOVERFLOW);
	COUNT(signals);
	return 0;
}

HWS_EXPORT int sem_getvalue(sem_t *s, int *sval)
{
	if (!ours(s))
		return hws_native.sem_getvalue ? hws_native.sem_getvalue(s, sval) : fail(ENOSYS);
	/* relaxed: a snapshot, as POSIX allows. */
	*sval = (int)atomic_load_explicit(&CORE(s)->value, memory_order_relaxed);
	return 0;
}

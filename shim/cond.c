/* pthread_cond_*: a sequence-count condition variable on the wait layer.
 *
 * Any condvar that is not process-shared belongs to the shim, whatever mutex
 * it is used with: the shim unlocks and re-locks the mutex through the same
 * dispatch as pthread_mutex_*, so shim-owned mutexes never reach glibc's
 * condvar (which would use glibc's internal mutex functions on them) and
 * glibc-owned mutexes (recursive, error-checking, ...) work too.  Process-
 * shared condvars stay with glibc; used with a shim-owned mutex they are
 * bridged (see native_wait).
 *
 * Layout in pthread_cond_t (glibc 2.25+):
 *   words 0-1  the library's in-place condvar (hws_condvar_core_t: sequence
 *              and announced waiters; the algorithm is in hwsync/condvar.h)
 *   __wrefs    bit 0: process-shared (glibc's; set only by glibc), bit 1: the
 *              clock is CLOCK_MONOTONIC (same meaning as glibc's bit)
 * PTHREAD_COND_INITIALIZER (all zero) is a valid shim condvar as it stands,
 * and nothing is allocated, so an abandoned condvar leaks nothing.
 *
 * Cancellation: pthread_cond_wait/timedwait/clockwait are cancellation
 * points.  A pending cancel acts at entry (pthread_testcancel); while blocked
 * the thread waits with asynchronous cancellation enabled, and the cleanup
 * handler pushed around it leaves the waiter count and re-acquires the mutex
 * before the caller's handlers run.  The wait layer keeps no state in the
 * object, so a cancel inside it can at worst leave a sleeper counter of the
 * wait layer's hash table raised (extra FUTEX_WAKE calls, never a lost one).
 */
#include <errno.h>
#include <sched.h>
#include <string.h>
#include <hwsync/condvar.h>
#include "shim/common.h"
#include "shim/config.h"
#include "shim/family.h"
#include "shim/mutex.h"
#include "shim/natives.h"
#include "shim/passthrough.h"
#include "shim/profile.h"
#include "shim/shim_lock.h"
#include "shim/startup.h"
#include "shim/stats.h"
#include "shim/time.h"

#define CORE(c) ((hws_condvar_core_t *)(void *)(c))
#define WREFS(c) ((_Atomic unsigned *)&(c)->__data.__wrefs)
#define F_PSHARED 1u
#define F_MONOTONIC 2u

static inline int is_native(pthread_cond_t *c)
{
	/* relaxed: the flag is written at init only. */
	return (atomic_load_explicit(WREFS(c), memory_order_relaxed) & F_PSHARED) ||
	       !hws_shim_on();
}

static inline clockid_t cond_clock(pthread_cond_t *c)
{
	/* relaxed: written at init only. */
	return atomic_load_explicit(WREFS(c), memory_order_relaxed) & F_MONOTONIC ?
		       CLOCK_MONOTONIC : CLOCK_REALTIME;
}

struct waiting {
	pthread_cond_t *c;
	pthread_mutex_t *m;
};

static void cancelled(void *arg)
{
	struct waiting *w = arg;
	hws_condvar_core_leave(CORE(w->c));
	hws_shim_mutex_lock_any(w->m);
}

static int shim_wait(pthread_cond_t *c, pthread_mutex_t *m, uint64_t deadline_ns)
{
	struct waiting w = { c, m };
	int rc, oldtype;
	uint64_t t0 = hws_cfg.stats ? hws_now_ns() : 0;

	hws_testcancel();
	/* the profile's wait: from the unlock to the wake-up (the mutex's
	 * re-acquisition is the mutex's) */
	uint64_t p0 = hws_cfg.profile ? hws_prof_wait_begin(c, HWS_FAM_COND) : 0;
	uint32_t seq = hws_condvar_core_enter(CORE(c));
	if ((rc = hws_shim_mutex_unlock_any(m))) {
		hws_condvar_core_leave(CORE(c));
		return rc;
	}
	pthread_cleanup_push(cancelled, &w);
	pthread_setcanceltype(PTHREAD_CANCEL_ASYNCHRONOUS, &oldtype);
	rc = hws_condvar_core_block(CORE(c), seq, &hws_cfg.wait, deadline_ns);
	pthread_setcanceltype(oldtype, NULL);
	pthread_cleanup_pop(0);
	hws_condvar_core_leave(CORE(c));
	if (hws_cfg.profile)
		hws_prof_wait_end(c, HWS_FAM_COND, p0, rc, 0);
	int lrc = hws_shim_mutex_lock_any(m);
	if (hws_cfg.stats) {
		HWS_COUNT(HWS_FAM_COND, ops, 1);
		HWS_COUNT(HWS_FAM_COND, wait_ns, hws_now_ns() - t0);
		if (rc == ETIMEDOUT)
			HWS_COUNT(HWS_FAM_COND, timeouts, 1);
	}
	if (lrc)
		return lrc;
	return rc == ETIMEDOUT ? ETIMEDOUT : 0;
}

/* A process-shared (glibc) condvar with a shim-owned mutex: glibc must not
 * see our mutex, so it waits on a glibc mutex taken from a small table keyed
 * by the condvar's address; signallers on such condvars take the same one,
 * so a signal cannot fall between our unlock and glibc's wait. */
#define BRIDGES 64
static pthread_mutex_t bridge[BRIDGES] = {
	[0 ... BRIDGES - 1] = { .__data = { .__kind = KIND_NATIVE_NORMAL } },
};

static pthread_mutex_t *bridge_of(pthread_cond_t *c)
{
	return &bridge[((uintptr_t)c >> 6) % BRIDGES];
}

struct bridged {
	pthread_mutex_t *b, *m;
};

static void bridge_cancelled(void *arg)
{
	struct bridged *x = arg;
	hws_shim_native_mutex_unlock(x->b);
	hws_shim_mutex_lock_any(x->m);
}

enum { W_PLAIN, W_TIMED, W_CLOCK };

static int call_native(pthread_cond_t *c, pthread_mutex_t *m, int how, clockid_t clock,
		       const struct timespec *abs)
{
	if (how == W_PLAIN)
		return hws_native.cond_wait ? hws_native.cond_wait(c, m) : ENOSYS;
	if (how == W_TIMED)
		return hws_native.cond_timedwait ? hws_native.cond_timedwait(c, m, abs) : ENOSYS;
	return hws_native.cond_clockwait ? hws_native.cond_clockwait(c, m, clock, abs) : ENOSYS;
}

static int native_wait(pthread_cond_t *c, pthread_mutex_t *m, int how, clockid_t clock,
		       const struct timespec *abs)
{
	/* A glibc-owned mutex goes to glibc's condvar as it is (the caller holds
	 * m, so a default mutex has been claimed already). */
	/* relaxed: the kind of a held mutex does not change. */
	if (!hws_shim_on() || atomic_load_explicit((_Atomic int *)&m->__data.__kind,
						   memory_order_relaxed) != KIND_SHIM)
		return call_native(c, m, how, clock, abs);
	struct bridged x = { bridge_of(c), m };
	int rc;
	hws_shim_native_mutex_lock(x.b);
	if ((rc = hws_shim_mutex_unlock_any(m))) {
		hws_shim_native_mutex_unlock(x.b);
		return rc;
	}
	pthread_cleanup_push(bridge_cancelled, &x);
	rc = call_native(c, x.b, how, clock, abs);
	pthread_cleanup_pop(0);
	hws_shim_native_mutex_unlock(x.b);
	int lrc = hws_shim_mutex_lock_any(m);
	return lrc ? lrc : rc;
}

static int native_wake(pthread_cond_t *c, int all)
{
	pthread_mutex_t *b = bridge_of(c);
	int rc;
	if (!hws_shim_on())
		return all ? hws_native.cond_broadcast(c) : hws_native.cond_signal(c);
	hws_shim_native_mutex_lock(b);
	rc = all ? hws_native.cond_broadcast(c) : hws_native.cond_signal(c);
	hws_shim_native_mutex_unlock(b);
	return rc;
}

HWS_EXPORT int pthread_cond_init(pthread_cond_t *c, const pthread_condattr_t *a)
{
	int pshared = PTHREAD_PROCESS_PRIVATE;
	clockid_t clock = CLOCK_REALTIME;
	if (a) {
		pthread_condattr_getpshared(a, &pshared);
		pthread_condattr_getclock(a, &clock);
	}
	if (pshared != PTHREAD_PROCESS_PRIVATE || !hws_shim_on()) {
		if (pshared != PTHREAD_PROCESS_PRIVATE)
			hws_pass(HWS_PASS_COND_PSHARED);
		return hws_native.cond_init ? hws_native.cond_init(c, a) : ENOSYS;
	}
	if (unlikely(hws_cfg.profile))
		hws_prof_end(c);
	memset(c, 0, sizeof *c);
	/* relaxed: init is not concurrent with use. */
	atomic_store_explicit(WREFS(c), clock == CLOCK_MONOTONIC ? F_MONOTONIC : 0,
			      memory_order_relaxed);
	return 0;
}

HWS_EXPORT int pthread_cond_destroy(pthread_cond_t *c)
{
	if (is_native(c))
		return hws_native.cond_destroy ? hws_native.cond_destroy(c) : 0;
	/* Woken waiters may still be on their way out: wait for them, as glibc
	 * does (destroying a condvar with blocked waiters is undefined). */
	while (hws_condvar_core_busy(CORE(c)))
		hws_yield();
	if (unlikely(hws_cfg.profile))
		hws_prof_end(c);
	return 0;
}

HWS_EXPORT int pthread_cond_wait(pthread_cond_t *c, pthread_mutex_t *m)
{
	if (is_native(c))
		return native_wait(c, m, W_PLAIN, CLOCK_REALTIME, NULL);
	return shim_wait(c, m, HWS_FOREVER);
}

static int timed(pthread_cond_t *c, pthread_mutex_t *m, int how, clockid_t clock,
		 const struct timespec *abs)
{
	uint64_t dl;
	int rc;
	if (is_native(c))
		return native_wait(c, m, how, clock, abs);
	if ((rc = hws_shim_deadline_ns(clock, abs, &dl)))
		return rc;
	return shim_wait(c, m, dl);
}

HWS_EXPORT int pthread_cond_timedwait(pthread_cond_t *c, pthread_mutex_t *m,
				      const struct timespec *abs)
{
	return timed(c, m, W_TIMED, cond_clock(c), abs);
}

HWS_EXPORT int pthread_cond_clockwait(pthread_cond_t *c, pthread_mutex_t *m, clockid_t clock,
				      const struct timespec *abs)
{
	if (clock != CLOCK_REALTIME && clock != CLOCK_MONOTONIC)
		return EINVAL;
	return timed(c, m, W_CLOCK, clock, abs);
}

static int wake(pthread_cond_t *c, int all)
{
	if (is_native(c))
		return native_wake(c, all);
	if (hws_cfg.stats) {
		if (all)
			HWS_COUNT(HWS_FAM_COND, broadcasts, 1);
		else
			HWS_COUNT(HWS_FAM_COND, signals, 1);
	}
	hws_condvar_core_wake(CORE(c), all ? HWS_WAKE_ALL : 1);
	return 0;
}

HWS_EXPORT int pthread_cond_signal(pthread_cond_t *c)
{
	return wake(c, 0);
}

HWS_EXPORT int pthread_cond_broadcast(pthread_cond_t *c)
{
	return wake(c, 1);
}

/* pthread_mutex_*: default-type mutexes go to an hwsync lock, every other
 * kind stays with glibc.
 *
 * The owner is recorded in glibc's own __kind word, which glibc only writes
 * at init and destroy:
 *   0              PTHREAD_MUTEX_INITIALIZER or zeroed memory: unclaimed; the
 *                  first call claims it with a CAS (0 -> CLAIMING -> SHIM)
 *   KIND_SHIM      ours: __list.__prev holds the struct hws_shim_lock *
 *   KIND_CLAIMING  another thread is creating the lock: wait for it
 *   anything else  glibc's: recursive, error-checking, robust, PI, PP,
 *                  process-shared, or KIND_NATIVE_NORMAL
 * The two shim values set bits 2 and 3, which no glibc kind uses (glibc uses
 * bits 0-1 type, 4-7 robust/PI/PP/pshared, 8-9 elision, 19-31 ceiling).
 * KIND_NATIVE_NORMAL is glibc's PTHREAD_MUTEX_NO_ELISION_NP: a normal mutex
 * that glibc locks exactly like kind 0, used to pin a default mutex to glibc
 * when the shim cannot take it (start-up re-entry, allocation failure).
 */
#include <errno.h>
#include <sched.h>
#include <string.h>
#include "preload/shim.h"


_Static_assert(sizeof(((pthread_mutex_t *)0)->__data.__kind) == 4, "glibc mutex layout");
_Static_assert(sizeof(((pthread_mutex_t *)0)->__data.__list.__prev) == sizeof(void *),
	       "glibc mutex layout");

#define KIND(m) ((_Atomic int *)&(m)->__data.__kind)
#define SLOT(m) ((_Atomic(struct hws_shim_lock *) *)&(m)->__data.__list.__prev)

static _Thread_local pthread_mutex_t *claiming;

static void pin_native(pthread_mutex_t *m, int from)
{
	/* relaxed: the kind word alone decides; the mutex holds no shim data. */
	atomic_compare_exchange_strong_explicit(KIND(m), &from, KIND_NATIVE_NORMAL,
						memory_order_relaxed, memory_order_relaxed);
}

static struct hws_shim_lock *claim_slow(pthread_mutex_t *m)
{
	for (;;) {
		/* acquire: pairs with the release CAS that publishes SLOT. */
		int v = atomic_load_explicit(KIND(m), memory_order_acquire);
		if (v == KIND_SHIM)
			/* relaxed: ordered by the acquire load of the kind. */
			return atomic_load_explicit(SLOT(m), memory_order_relaxed);
		if (v == KIND_CLAIMING) {
			if (claiming == m)   /* our own allocation re-entered: glibc's */
				pin_native(m, KIND_CLAIMING);
			else
				sched_yield();
			continue;
		}
		if (v != 0)
			return NULL;
		if (!hws_shim_on() || claiming) {
			/* acquire: pairs with the release publishing the state. */
			if (atomic_load_explicit(&hws_shim_state, memory_order_acquire) ==
			    HWS_SHIM_OFF)
				return NULL;
			pin_native(m, 0);
			hws_pass(HWS_PASS_STARTUP);
			continue;
		}
		/* relaxed: CLAIMING publishes nothing; waiters re-read. */
		if (!atomic_compare_exchange_strong_explicit(KIND(m), &v, KIND_CLAIMING,
							     memory_order_relaxed,
							     memory_order_relaxed))
			continue;
		claiming = m;
		struct hws_shim_lock *s = hws_shim_lock_new(HWS_FAM_MUTEX);
		claiming = NULL;
		if (!s) {
			pin_native(m, KIND_CLAIMING);
			hws_pass(HWS_PASS_CREATE_FAILED);
			return NULL;
		}
		/* relaxed: published by the release CAS below. */
		atomic_store_explicit(SLOT(m), s, memory_order_relaxed);
		v = KIND_CLAIMING;
		/* release: publishes SLOT with the kind. */
		if (atomic_compare_exchange_strong_explicit(KIND(m), &v, KIND_SHIM,
							    memory_order_release,
							    memory_order_relaxed))
			return s;
		/* Re-entry pinned it to glibc meanwhile: give ours back. */
		atomic_store_explicit(SLOT(m), NULL, memory_order_relaxed);
		hws_shim_lock_free(s);
		return NULL;
	}
}

/* The shim lock of m, or NULL when glibc owns m. */
static inline struct hws_shim_lock *owned(pthread_mutex_t *m)
{
	/* acquire: pairs with the release CAS that publishes SLOT. */
	int v = atomic_load_explicit(KIND(m), memory_order_acquire);
	if (likely(v == KIND_SHIM))
		/* relaxed: ordered by the acquire load of the kind. */
		return atomic_load_explicit(SLOT(m), memory_order_relaxed);
	if (v != 0 && v != KIND_CLAIMING)
		return NULL;
	return claim_slow(m);
}

/* Which mutexes the shim takes: NORMAL/DEFAULT and glibc's ADAPTIVE_NP, not
 * process-shared, not robust, no priority protocol. */
static int shim_can_take(const pthread_mutexattr_t *a)
{
	int type = PTHREAD_MUTEX_NORMAL, pshared = PTHREAD_PROCESS_PRIVATE;
	int robust = PTHREAD_MUTEX_STALLED, proto = PTHREAD_PRIO_NONE;
	if (!a)
		return 1;
	pthread_mutexattr_gettype(a, &type);
	pthread_mutexattr_getpshared(a, &pshared);
	pthread_mutexattr_getrobust(a, &robust);
	pthread_mutexattr_getprotocol(a, &proto);
	if (pshared != PTHREAD_PROCESS_PRIVATE)
		return hws_pass(HWS_PASS_MUTEX_PSHARED), 0;
	if (robust != PTHREAD_MUTEX_STALLED)
		return hws_pass(HWS_PASS_MUTEX_ROBUST), 0;
	if (proto == PTHREAD_PRIO_INHERIT)
		return hws_pass(HWS_PASS_MUTEX_PI), 0;
	if (proto == PTHREAD_PRIO_PROTECT)
		return hws_pass(HWS_PASS_MUTEX_PP), 0;
	if (type == PTHREAD_MUTEX_RECURSIVE)
		return hws_pass(HWS_PASS_MUTEX_RECURSIVE), 0;
	if (type == PTHREAD_MUTEX_ERRORCHECK)
		return hws_pass(HWS_PASS_MUTEX_ERRORCHECK), 0;
	if (type != PTHREAD_MUTEX_NORMAL && type != PTHREAD_MUTEX_ADAPTIVE_NP)
		return hws_pass(HWS_PASS_MUTEX_OTHER), 0;
	return 1;
}

HWS_EXPORT int pthread_mutex_init(pthread_mutex_t *m, const pthread_mutexattr_t *a)
{
	int on = hws_shim_on();
	if (!on || !shim_can_take(a)) {
		int rc = hws_native.mutex_init ? hws_native.mutex_init(m, a) : ENOSYS;
		/* relaxed: init is not concurrent with use. */
		if (rc == 0 && !on && atomic_load_explicit(&hws_shim_state,
							   memory_order_relaxed) != HWS_SHIM_OFF) {
			pin_native(m, 0);
			hws_pass(HWS_PASS_STARTUP);
		}
		return rc;
	}
	struct hws_shim_lock *s = hws_shim_lock_new(HWS_FAM_MUTEX);
	if (!s) {
		hws_pass(HWS_PASS_CREATE_FAILED);
		int rc = hws_native.mutex_init(m, a);
		if (rc == 0)
			pin_native(m, 0);
		return rc;
	}
	memset(m, 0, sizeof *m);
	/* relaxed: published by the release store of the kind. */
	atomic_store_explicit(SLOT(m), s, memory_order_relaxed);
	/* release: publishes SLOT to the threads that later use m. */
	atomic_store_explicit(KIND(m), KIND_SHIM, memory_order_release);
	return 0;
}

HWS_EXPORT int pthread_mutex_destroy(pthread_mutex_t *m)
{
	/* acquire: pairs with the release that published SLOT. */
	int v = atomic_load_explicit(KIND(m), memory_order_acquire);
	if (v != KIND_SHIM)
		return hws_native.mutex_destroy ? hws_native.mutex_destroy(m) : 0;
	struct hws_shim_lock *s = atomic_load_explicit(SLOT(m), memory_order_relaxed);
	if (hws_lock_try(s->lock) != 0)
		return EBUSY;
	hws_lock_release(s->lock);
	hws_shim_lock_free(s);
	/* relaxed: destroy is not concurrent with use; back to an initializer. */
	atomic_store_explicit(SLOT(m), NULL, memory_order_relaxed);
	atomic_store_explicit(KIND(m), 0, memory_order_relaxed);
	return 0;
}

HWS_EXPORT int pthread_mutex_lock(pthread_mutex_t *m)
{
	struct hws_shim_lock *s = owned(m);
	if (likely(s != NULL))
		return hws_shim_lock_acquire(s, m);
	return hws_shim_native_mutex_lock(m);
}

HWS_EXPORT int pthread_mutex_trylock(pthread_mutex_t *m)
{
	struct hws_shim_lock *s = owned(m);
	if (likely(s != NULL))
		return hws_shim_lock_try(s, m);
	return hws_shim_native_mutex_trylock(m);
}

HWS_EXPORT int pthread_mutex_unlock(pthread_mutex_t *m)
{
	struct hws_shim_lock *s = owned(m);
	if (likely(s != NULL))
		return hws_shim_lock_release(s, m);
	return hws_shim_native_mutex_unlock(m);
}

static int shim_timed(struct hws_shim_lock *s, pthread_mutex_t *m, clockid_t clock,
		      const struct timespec *abs)
{
	struct timespec mono;
	int rc = hws_shim_lock_try(s, m);
	if (rc != EBUSY)
		return rc;
	/* POSIX: a bad timeout is only reported when the call would block. */
	if ((rc = hws_shim_to_mono(clock, abs, &mono)))
		return rc;
	return hws_shim_lock_timed(s, m, &mono);
}

HWS_EXPORT int pthread_mutex_timedlock(pthread_mutex_t *m, const struct timespec *abs)
{
	struct hws_shim_lock *s = owned(m);
	if (s)
		return shim_timed(s, m, CLOCK_REALTIME, abs);
	return hws_native.mutex_timedlock(m, abs);
}

HWS_EXPORT int pthread_mutex_clocklock(pthread_mutex_t *m, clockid_t clock,
				       const struct timespec *abs)
{
	struct hws_shim_lock *s = owned(m);
	if (s) {
		if (clock != CLOCK_REALTIME && clock != CLOCK_MONOTONIC)
			return EINVAL;
		return shim_timed(s, m, clock, abs);
	}
	return hws_native.mutex_clocklock(m, clock, abs);
}

/* For the condvar: the same dispatch without going through the PLT. */
int hws_shim_mutex_lock_any(pthread_mutex_t *m)
{
	struct hws_shim_lock *s = owned(m);
	return s ? hws_shim_lock_acquire(s, m) : hws_shim_native_mutex_lock(m);
}

int hws_shim_mutex_unlock_any(pthread_mutex_t *m)
{
	struct hws_shim_lock *s = owned(m);
	return s ? hws_shim_lock_release(s, m) : hws_shim_native_mutex_unlock(m);
}

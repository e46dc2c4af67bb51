/* pthread_mutex_*: default-type mutexes run the shim's lock in place, every
 * other kind stays with glibc.
 *
 * The owner is recorded in glibc's own __kind word, which glibc only writes
 * at init and destroy:
 *   0              PTHREAD_MUTEX_INITIALIZER or zeroed memory: unclaimed; the
 *                  first call claims it with a CAS (0 -> SHIM)
 *   KIND_SHIM      ours: the lock's words are the first 8 bytes (glibc's
 *                  __lock and __count), all zero when free
 *   KIND_DESTROYED destroyed (glibc's own mark): glibc answers EINVAL
 *   anything else  glibc's: recursive, error-checking, robust, PI, PP,
 *                  process-shared, or KIND_NATIVE_NORMAL
 * KIND_SHIM sets bits 2 and 3, which no glibc kind uses (glibc uses bits 0-1
 * type, 4-7 robust/PI/PP/pshared, 8-9 elision, 19-31 ceiling).
 * KIND_NATIVE_NORMAL is glibc's PTHREAD_MUTEX_NO_ELISION_NP: a normal mutex
 * that glibc locks exactly like kind 0, used to pin a default mutex to glibc
 * when the shim cannot take it (first used while the shim was starting).
 * Nothing is allocated, so a mutex freed without pthread_mutex_destroy (as
 * std::mutex always is) leaks nothing.
 */
#include <errno.h>
#include <sched.h>
#include <string.h>
#include <sys/single_threaded.h>
#include <sys/uio.h>
#include <unistd.h>
#include "shim/common.h"
#include "shim/config.h"
#include "shim/family.h"
#include "shim/lock_words.h"
#include "shim/mutex.h"
#include "shim/natives.h"
#include "shim/passthrough.h"
#include "shim/profile.h"
#include "shim/shim_lock.h"
#include "shim/startup.h"
#include "shim/time.h"


_Static_assert(sizeof(((pthread_mutex_t *)0)->__data.__kind) == 4, "glibc mutex layout");
_Static_assert(sizeof(((pthread_mutex_t *)0)->__data.__list.__prev) == sizeof(void *),
	       "glibc mutex layout");

#define KIND(m) ((_Atomic int *)&(m)->__data.__kind)
#define WORDS(m) ((struct hws_words8 *)(void *)(m))
#define AUTO(m) (&WORDS(m)->u.autow.core)
/* auto's release hint (hws_auto_core_release_hinted) in glibc's __owner,
 * which only glibc's own kinds use; zero in an initializer. */
#define HINT(m) ((_Atomic uint32_t *)(void *)&(m)->__data.__owner)
/* The profile counts a shim mutex's acquisitions in glibc's robust-list
 * words, which only robust mutexes (never the shim's) use; zero in an
 * initializer, like everything else. */
#define PLACE(m) ((struct hws_prof_place *)(void *)&(m)->__data.__list)
#define PLACE_OFF __builtin_offsetof(pthread_mutex_t, __data.__list)
_Static_assert(sizeof(((pthread_mutex_t *)0)->__data.__list) >= sizeof(struct hws_prof_place) &&
	       PLACE_OFF >= __builtin_offsetof(pthread_mutex_t, __data.__kind) + sizeof(int) &&
	       PLACE_OFF % 8 == 0, "the profile's words fit glibc's robust list");

_Static_assert(sizeof(pthread_mutex_t) >= 24 &&
	       __builtin_offsetof(pthread_mutex_t, __data.__kind) >= sizeof(struct hws_words8),
	       "the lock's words sit before glibc's __kind");

static void pin_native(pthread_mutex_t *m, int from)
{
	/* relaxed: the kind word alone decides; the mutex holds no shim data. */
	atomic_compare_exchange_strong_explicit(KIND(m), &from, KIND_NATIVE_NORMAL,
						memory_order_relaxed, memory_order_relaxed);
}

static struct hws_words8 *claim_slow(pthread_mutex_t *m)
{
	for (;;) {
		/* relaxed: the words of a claimed mutex are all zero (a free lock)
		 * or were written through the lock's own acquire/release. */
		int v = atomic_load_explicit(KIND(m), memory_order_relaxed);
		if (v == KIND_SHIM)
			return WORDS(m);
		if (v != 0)
			return NULL;
		if (!hws_shim_on()) {
			/* acquire: pairs with the release publishing the state. */
			if (atomic_load_explicit(&hws_shim_state, memory_order_acquire) ==
			    HWS_SHIM_OFF)
				return NULL;
			pin_native(m, 0);   /* first used by the shim's own start-up */
			hws_pass(HWS_PASS_STARTUP);
			continue;
		}
		/* relaxed: claiming publishes nothing (the words stay zero). */
		if (atomic_compare_exchange_strong_explicit(KIND(m), &v, KIND_SHIM,
							    memory_order_relaxed,
							    memory_order_relaxed))
			return WORDS(m);
	}
}

/* The lock words of m, or NULL when glibc owns m. */
static inline struct hws_words8 *owned(pthread_mutex_t *m)
{
	/* relaxed: see claim_slow. */
	int v = atomic_load_explicit(KIND(m), memory_order_relaxed);
	if (likely(v == KIND_SHIM))
		return WORDS(m);
	if (v != 0)
		return NULL;
	return claim_slow(m);
}

/* A process that has only ever had one thread: glibc's own mutex then takes
 * and releases with a plain load and store each, no atomic operation (its
 * __libc_single_threaded test, glibc 2.32 on), and so does the shim's, or a
 * program that never starts a thread would pay several times glibc's price
 * for each mutex it takes (on processors whose atomic operations cost tens of
 * cycles).  glibc clears the flag in the first pthread_create, before the
 * new thread exists, and never sets it again while other threads may run;
 * a lock taken alone and released after that is released atomically. */
static inline bool alone(void)
{
	return __libc_single_threaded && hws_shim_plain();
}

/* The release of a shim mutex, by pthread_mutex_unlock and the condvar's. */
static inline int shim_release(pthread_mutex_t *m)
{
	if (likely(hws_shim_plain())) {
		if (__libc_single_threaded && hws_auto_core_release_alone(AUTO(m)))
			return 0;
		return hws_auto_core_release_hinted(AUTO(m), HINT(m));
	}
	return hws_shim_release8(WORDS(m), HWS_FAM_MUTEX, m, PLACE(m));
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
	/* relaxed: init is not concurrent with use. */
	if (unlikely(hws_cfg.profile)) {   /* a new life, even at an address used before */
		if (atomic_load_explicit(KIND(m), memory_order_relaxed) == KIND_SHIM)
			hws_prof_end_place(m, PLACE(m));
		else
			hws_prof_end(m);
	}
	memset(m, 0, sizeof *m);
	/* relaxed: init is not concurrent with use; the words are zero. */
	atomic_store_explicit(KIND(m), KIND_SHIM, memory_order_relaxed);
	return 0;
}

HWS_EXPORT int pthread_mutex_destroy(pthread_mutex_t *m)
{
	/* relaxed: destroy is not concurrent with use. */
	if (atomic_load_explicit(KIND(m), memory_order_relaxed) != KIND_SHIM)
		return hws_native.mutex_destroy ? hws_native.mutex_destroy(m) : 0;
	if (hws_words8_try(WORDS(m)) != 0)
		return EBUSY;
	hws_words8_release(WORDS(m));
	if (unlikely(hws_cfg.profile))
		hws_prof_end_place(m, PLACE(m));
	/* Marked destroyed as glibc 2.34+ marks it (kind -1): until the next
	 * pthread_mutex_init, every call goes to glibc, which returns EINVAL,
	 * as it would for a mutex it destroyed itself. */
	memset(m, 0, sizeof *m);
	/* relaxed: destroy is not concurrent with use. */
	atomic_store_explicit(KIND(m), KIND_DESTROYED, memory_order_relaxed);
	return 0;
}

/* A mutex not yet marked the shim's: claim it, or leave it to glibc. */
HWS_OUTLINE int lock_unmarked(pthread_mutex_t *m)
{
	struct hws_words8 *w = owned(m);
	if (likely(w != NULL))
		return hws_shim_acquire8(w, HWS_FAM_MUTEX, m, PLACE(m));
	return hws_shim_native_mutex_lock(m);
}

HWS_OUTLINE int unlock_unmarked(pthread_mutex_t *m)
{
	return owned(m) ? shim_release(m) : hws_shim_native_mutex_unlock(m);
}

HWS_EXPORT HWS_FETCH_ALIGNED int pthread_mutex_lock(pthread_mutex_t *m)
{
	/* The mark and the lock word share the object's line: ask for it
	 * writable before the mark's read fetches it shared (see
	 * hws_prefetch_write). */
	hws_prefetch_write(m);
	/* relaxed: see claim_slow. */
	if (likely(atomic_load_explicit(KIND(m), memory_order_relaxed) == KIND_SHIM)) {
		if (alone() && hws_auto_core_take_alone(AUTO(m)))
			return 0;
		return hws_shim_acquire8(WORDS(m), HWS_FAM_MUTEX, m, PLACE(m));
	}
	return lock_unmarked(m);
}

HWS_EXPORT int pthread_mutex_trylock(pthread_mutex_t *m)
{
	struct hws_words8 *w = owned(m);
	if (likely(w != NULL))
		return hws_shim_try8(w, HWS_FAM_MUTEX, m, PLACE(m));
	return hws_shim_native_mutex_trylock(m);
}

HWS_EXPORT HWS_FETCH_ALIGNED int pthread_mutex_unlock(pthread_mutex_t *m)
{
	hws_prefetch_write(m);   /* as in pthread_mutex_lock */
	/* relaxed: see claim_slow. */
	if (likely(atomic_load_explicit(KIND(m), memory_order_relaxed) == KIND_SHIM))
		return shim_release(m);
	return unlock_unmarked(m);
}

static int shim_timed(struct hws_words8 *w, pthread_mutex_t *m, clockid_t clock,
		      const struct timespec *abs)
{
	uint64_t dl;
	int rc = hws_shim_try8(w, HWS_FAM_MUTEX, m, PLACE(m));
	if (rc != EBUSY)
		return rc;
	/* POSIX: a bad timeout is only reported when the call would block. */
	if ((rc = hws_shim_deadline_ns(clock, abs, &dl)))
		return rc;
	return hws_shim_timed8(w, HWS_FAM_MUTEX, m, dl, PLACE(m));
}

HWS_EXPORT int pthread_mutex_timedlock(pthread_mutex_t *m, const struct timespec *abs)
{
	struct hws_words8 *w = owned(m);
	if (w)
		return shim_timed(w, m, CLOCK_REALTIME, abs);
	return hws_native.mutex_timedlock(m, abs);
}

HWS_EXPORT int pthread_mutex_clocklock(pthread_mutex_t *m, clockid_t clock,
				       const struct timespec *abs)
{
	struct hws_words8 *w = owned(m);
	if (w) {
		if (clock != CLOCK_REALTIME && clock != CLOCK_MONOTONIC)
			return EINVAL;
		return shim_timed(w, m, clock, abs);
	}
	return hws_native.mutex_clocklock(m, clock, abs);
}

/* For the condvar: the same dispatch without going through the PLT. */
int hws_shim_mutex_lock_any(pthread_mutex_t *m)
{
	struct hws_words8 *w = owned(m);
	return w ? hws_shim_acquire8(w, HWS_FAM_MUTEX, m, PLACE(m)) : hws_shim_native_mutex_lock(m);
}

int hws_shim_mutex_unlock_any(pthread_mutex_t *m)
{
	return owned(m) ? shim_release(m) : hws_shim_native_mutex_unlock(m);
}

/* The profile at exit: the in-place count of a mutex it saw alive, read
 * through process_vm_readv so that memory the program has unmapped since
 * is an error rather than a fault; -1 unless the words still hold a shim
 * mutex. */
static long long read_place(uintptr_t obj)
{
	unsigned char buf[sizeof(pthread_mutex_t)];
	struct iovec local = { buf, sizeof buf }, remote = { (void *)obj, sizeof buf };
	int kind;
	uint64_t count;
	if (process_vm_readv(getpid(), &local, 1, &remote, 1, 0) != (ssize_t)sizeof buf)
		return -1;
	memcpy(&kind, buf + __builtin_offsetof(pthread_mutex_t, __data.__kind), sizeof kind);
	memcpy(&count, buf + PLACE_OFF, sizeof count);   /* struct hws_prof_place.count */
	return kind == KIND_SHIM ? (long long)count : -1;
}

__attribute__((constructor)) static void register_place_reader(void)
{
	hws_prof_read_places_with(HWS_FAM_MUTEX, read_place);
}

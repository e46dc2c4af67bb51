/* The shim's lock paths beyond the inline fast path (shim_lock.h): the
 * blocking wait after a failed try, its cancellation-safe form, and the
 * instrumented paths for HWSYNC_PROFILE (profile.h), HWSYNC_STATS (stages
 * counted into this thread's block) and HWSYNC_TRACE (spans: wait = entry to
 * acquired, hold = acquired to release).  Every wait goes through block_on()
 * below into the kind's waiting path (hws_words8_wait, hws_words4_wait).
 */
#include <errno.h>
#include "shim/common.h"
#include "shim/config.h"
#include "shim/family.h"
#include "shim/lock_words.h"
#include "shim/natives.h"
#include "shim/profile.h"
#include "shim/shim_lock.h"
#include "shim/stats.h"
#include "shim/trace.h"
#include "wait/internal.h"

_Thread_local int hws_async_cancel;

/* A thread with asynchronous cancellation may die at any instruction.  A
 * queueing kind's waiter holds a ticket or a node, which would then stay in
 * the lock for ever, so such a thread acquires in short timed attempts (try,
 * then wait on the lock word: no place in a queue) with cancellation
 * deferred, and acts on a pending cancel between attempts.  pthread_testcancel
 * is the place to act: glibc 2.36 leaves the thread's result NULL instead of
 * PTHREAD_CANCELED when re-enabling asynchronous cancellation acts on it. */
#define CANCEL_SLICE_NS 2000000ull

static int acquire_cancel_safe(struct hws_words8 *w)
{
	int oldtype, rc;
	pthread_setcanceltype(PTHREAD_CANCEL_DEFERRED, &oldtype);
	while ((rc = hws_words8_timed(w, hws_deadline_after_ns(CANCEL_SLICE_NS))) == ETIMEDOUT)
		pthread_testcancel();
	pthread_setcanceltype(oldtype, NULL);
	return rc;
}

/* The wait after a failed try: exactly one of w8, w4; a deadline only for a
 * timed acquire of w8. */
static inline int block_on(struct hws_words8 *w8, struct hws_words4 *w4, uint64_t deadline_ns)
{
	if (w4)
		return hws_words4_wait(w4);
	if (unlikely(hws_async_cancel) && deadline_ns == HWS_FOREVER &&
	    hws_lock_kind_marks_waiters())
		return acquire_cancel_safe(w8);
	return hws_words8_wait(w8, deadline_ns);
}

int hws_shim_wait8(struct hws_words8 *w)
{
	/* The plain path's waits too: hws_slice_hold is then one test. */
	return hws_slice_held(block_on(w, NULL, HWS_FOREVER));
}

int hws_shim_wait_profiled(struct hws_words8 *w8, struct hws_words4 *w4, unsigned family,
			   const void *obj, uint64_t deadline_ns, unsigned prof_flags)
{
	uint64_t t0 = hws_prof_wait_begin(obj, family);
	int rc = block_on(w8, w4, deadline_ns);
	hws_prof_wait_end(obj, family, t0, rc, prof_flags);
	return rc;
}

/* A glibc function the shim also exports, found on first use (dlsym, kept:
 * a racing first call finds the same address); NULL if missing. */
static void *native_of(_Atomic(void *) *cache, const char *name)
{
	/* relaxed: idempotent cache of a dlsym result. */
	void *f = atomic_load_explicit(cache, memory_order_relaxed);
	if (unlikely(!f)) {
		f = hws_native_gomp(name, NULL);
		atomic_store_explicit(cache, f, memory_order_relaxed);
	}
	return f;
}

/* The GNU name is versioned; the shim exports an unversioned definition. */
HWS_EXPORT int pthread_setcanceltype(int type, int *oldtype)
{
	static _Atomic(void *) native;
	int (*f)(int, int *) = (int (*)(int, int *))native_of(&native, "pthread_setcanceltype");
	if (!f)
		return ENOSYS;
	int rc = f(type, oldtype);
	if (rc == 0)
		hws_async_cancel = type == PTHREAD_CANCEL_ASYNCHRONOUS;
	return rc;
}

/* Whether any thread of the process has been asked to cancel.  Until one
 * has, no cancel can be pending, and the shim's cancellation points skip the
 * call to pthread_testcancel (hws_testcancel in shim_lock.h): through the
 * PLT it was a fifth of an uncontended sem_wait, where glibc makes an
 * internal call.  Set before the request is made, never cleared. */
_Atomic int hws_cancel_asked;

HWS_EXPORT int pthread_cancel(pthread_t th)
{
	static _Atomic(void *) native;
	int (*f)(pthread_t) = (int (*)(pthread_t))native_of(&native, "pthread_cancel");
	if (!f)
		return ENOSYS;
	/* relaxed: a thread that must act on this request at a cancellation
	 * point entered after it is ordered after the request by whatever
	 * ordered the two calls, and so after this store (sequenced before
	 * the request); one that is already waiting is reached by the
	 * request's signal. */
	atomic_store_explicit(&hws_cancel_asked, 1, memory_order_relaxed);
	return f(th);
}

/* ---- instrumented paths ---- */
static const char *const wait_name[HWS_FAM_NLOCKS] = {
	"mutex wait", "omp_lock wait", "omp_nest_lock wait", "critical wait",
};
static const char *const hold_name[HWS_FAM_NLOCKS] = {
	"mutex held", "omp_lock held", "omp_nest_lock held", "critical held",
};

/* Trace: when this thread acquired the locks it holds, for the hold spans.
 * A lock released by another thread, or held beyond the table, gets none. */
#define HELD_MAX 16
static _Thread_local struct {
	const void *obj;
	uint64_t since;
} held[HELD_MAX];
static _Thread_local unsigned nheld;

static void held_push(const void *obj, uint64_t t)
{
	if (nheld < HELD_MAX) {
		held[nheld].obj = obj;
		held[nheld++].since = t;
	}
}

static int held_pop(const void *obj, uint64_t *since)
{
	for (unsigned i = nheld; i-- > 0;)
		if (held[i].obj == obj) {
			*since = held[i].since;
			held[i] = held[--nheld];
			return 1;
		}
	return 0;
}

int hws_shim_lock_counted(struct hws_words8 *w8, struct hws_words4 *w4, enum hws_lock_op op,
			  unsigned family, const void *obj, uint64_t deadline_ns)
{
	struct hws_thread_stats *ts = hws_cfg.stats ? hws_my_stats() : NULL;
	struct hws_lock_tally *t = ts ? &ts->lock[family] : NULL;
	struct hws_wait_counters c0 = hws_wait_tls;
	uint64_t t0 = hws_now_ns();
	int rc = w8 ? hws_words8_try(w8) : hws_words4_try(w4), first = rc == 0;

	if (rc == EBUSY && op != HWS_OP_TRY)
		rc = hws_cfg.profile ? hws_shim_wait_profiled(w8, w4, family, obj, deadline_ns, 0)
				     : block_on(w8, w4, deadline_ns);
	else if (rc == 0 && hws_cfg.profile)
		hws_prof_acquired(obj, family);
	uint64_t t1 = first ? t0 : hws_now_ns();
	if (t) {
		hws_tally(&t->syscalls, hws_wait_tls.syscalls - c0.syscalls);
		hws_tally(&t->yields, hws_wait_tls.yields - c0.yields);
		if (rc == 0) {
			uint64_t polls = hws_wait_tls.polls - c0.polls;
			hws_tally(&t->acquisitions, 1);
			hws_tally(first ? &t->first_try : hws_wait_tls.sleeps != c0.sleeps
				  ? &t->after_sleep : &t->after_spin, 1);
			if (!first)
				hws_tally(&t->wait_ns, t1 - t0);
			if (hws_wait_tls.handoffs != c0.handoffs)
				hws_tally(&t->handoffs, 1);
			/* relaxed: only this thread writes its block. */
			if (polls > atomic_load_explicit(&t->max_spins, memory_order_relaxed))
				atomic_store_explicit(&t->max_spins, polls, memory_order_relaxed);
			/* relaxed: as above. */
			if (t1 - t0 > atomic_load_explicit(&t->max_wait_ns, memory_order_relaxed))
				atomic_store_explicit(&t->max_wait_ns, t1 - t0, memory_order_relaxed);
		}
	}
	if (hws_cfg.trace && (rc == 0 || op != HWS_OP_TRY)) {
		hws_trace_span(wait_name[family], obj, t0, t1);
		if (rc == 0)
			held_push(obj, t1);
	}
	return rc;
}

int hws_shim_unlock_counted(struct hws_words8 *w8, struct hws_words4 *w4, unsigned family,
			    const void *obj)
{
	uint64_t since, s0 = hws_wait_tls.syscalls;
	if (hws_cfg.profile)
		hws_prof_released(obj);
	if (hws_cfg.trace && held_pop(obj, &since))
		hws_trace_span(hold_name[family], obj, since, hws_now_ns());
	int rc = w8 ? hws_words8_release(w8) : hws_words4_release(w4);
	struct hws_thread_stats *ts = hws_cfg.stats ? hws_my_stats() : NULL;
	if (ts && hws_wait_tls.syscalls != s0)
		hws_tally(&ts->lock[family].syscalls, hws_wait_tls.syscalls - s0);
	return rc;
}

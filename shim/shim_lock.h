/* The lock paths of the shim's locks (shim_lock.c), and the check for a
 * pending cancel that its cancellation points make.
 *
 * An interposed call goes from its entry point (mutex.c,
 * omp_lock.c) to the inline functions below, which try the lock once in
 * place; a thread that must wait makes one out-of-line call into
 * shim_lock.c, which goes straight to the kind's waiting path
 * (hws_words8_wait, lock_words.h: the library core).  Instrumentation adds
 * no step when it is off (one predicted branch on hws_cfg.instrument).
 * With the profile alone, an acquisition that does not wait is counted
 * inline (profile.h) and reads no clock. */
#ifndef HWS_PRELOAD_SHIM_LOCK_H
#define HWS_PRELOAD_SHIM_LOCK_H

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include "shim/common.h"
#include "shim/config.h"
#include "shim/lock_words.h"
#include "shim/profile.h"
#include "shim/startup.h"

/* This thread asked for asynchronous cancellation (pthread_setcanceltype). */
extern _Thread_local int hws_async_cancel;

/* A cancellation point's check for a pending cancel: none can be pending
 * before any thread has been asked to cancel (shim_lock.c). */
extern _Atomic int hws_cancel_asked;
static inline void hws_testcancel(void)
{
	/* relaxed: see pthread_cancel in shim_lock.c. */
	if (unlikely(atomic_load_explicit(&hws_cancel_asked, memory_order_relaxed)))
		pthread_testcancel();
}

/* Out of line, so that the entry points' plain path keeps its frame: a
 * release on the general path, and its end of a time-slice request (arch.h,
 * hws_slice_let_go; where hws_cfg.slice is set the plain paths are off, and
 * the general and instrumented paths ask around every hold). */
HWS_OUTLINE int hws_shim_release8_general(struct hws_words8 *w)
{
	return hws_slice_let_go(hws_words8_release(w));
}

/* Out of line: blocking acquire of a lock whose try failed, without
 * instrumentation (with asynchronous cancellation on, by a path that leaves
 * no trace in the lock if the thread is cancelled while waiting). */
int hws_shim_wait8(struct hws_words8 *w);

/* Out of line: the instrumented paths.  Exactly one of w8, w4 is given;
 * deadline_ns only for HWS_OP_TIMED.  hws_shim_wait_profiled: a wait after
 * a failed try, with the profile on (and neither stats nor trace);
 * hws_shim_lock_counted and hws_shim_unlock_counted: HWSYNC_STATS and
 * HWSYNC_TRACE, with the profile or without. */
enum hws_lock_op { HWS_OP_ACQUIRE, HWS_OP_TRY, HWS_OP_TIMED };
int hws_shim_wait_profiled(struct hws_words8 *w8, struct hws_words4 *w4, unsigned family,
			   const void *obj, uint64_t deadline_ns, unsigned prof_flags);
int hws_shim_lock_counted(struct hws_words8 *w8, struct hws_words4 *w4, enum hws_lock_op op,
			  unsigned family, const void *obj, uint64_t deadline_ns);
int hws_shim_unlock_counted(struct hws_words8 *w8, struct hws_words4 *w4, unsigned family,
			    const void *obj);

/* Instrumented acquisition: the profile alone counts without a further call,
 * stats and trace go to hws_shim_lock_counted.  Never inlined into the entry
 * points, so that their plain path stays as it is without instrumentation
 * (a tail call, no extra register to save). */
HWS_OUTLINE int hws_shim_instr8(struct hws_words8 *w, enum hws_lock_op op, unsigned family,
			       const void *obj, uint64_t deadline_ns,
			       struct hws_prof_place *place)
{
	int rc;
	if (hws_cfg.instrument == HWS_INSTR_PROFILE) {
		rc = hws_words8_try(w);
		if (rc != 0) {
			if (op == HWS_OP_TRY)
				return EBUSY;
			rc = hws_shim_wait_profiled(w, NULL, family, obj, deadline_ns,
						    place ? HWS_PROF_COUNTED : 0);
			if (rc == 0 && place)
				hws_prof_place_count(obj, family, place);
		} else if (place) {
			hws_prof_place_count(obj, family, place);
		} else {
			hws_prof_acquired(obj, family);
		}
	} else {
		rc = hws_shim_lock_counted(w, NULL, op, family, obj, deadline_ns);
	}
	return hws_slice_held(rc);
}

HWS_OUTLINE int hws_shim_instr4(struct hws_words4 *w, enum hws_lock_op op, unsigned family,
			       const void *obj)
{
	int rc;
	if (hws_cfg.instrument == HWS_INSTR_PROFILE) {
		rc = hws_words4_try(w);
		if (likely(rc == 0))
			hws_prof_acquired(obj, family);
		else if (op == HWS_OP_TRY)
			return EBUSY;
		else
			rc = hws_shim_wait_profiled(NULL, w, family, obj, HWS_FOREVER, 0);
	} else {
		rc = hws_shim_lock_counted(NULL, w, op, family, obj, HWS_FOREVER);
	}
	return hws_slice_held(rc);
}

/* Another kind, a time-slice request or counting: out of line, so that the
 * plain path below stays a few instructions in the entry point. */
HWS_OUTLINE int hws_shim_acquire8_general(struct hws_words8 *w, unsigned family,
					  const void *obj, struct hws_prof_place *place)
{
	if (likely(!hws_cfg.instrument)) {
		if (likely(hws_words8_try(w) == 0)) {
			hws_slice_hold();
			return 0;
		}
		return hws_shim_wait8(w);
	}
	return hws_shim_instr8(w, HWS_OP_ACQUIRE, family, obj, HWS_FOREVER, place);
}

/* place: the object's spare words for the profile's in-place count
 * (profile.h), or NULL (then each thread counts in its cache). */
static inline int hws_shim_acquire8(struct hws_words8 *w, unsigned family, const void *obj,
				    struct hws_prof_place *place)
{
	if (likely(hws_shim_plain())) {
		if (likely(hws_auto_core_take(&w->u.autow.core)))
			return 0;
		return hws_shim_wait8(w);
	}
	return hws_shim_acquire8_general(w, family, obj, place);
}

static inline int hws_shim_try8(struct hws_words8 *w, unsigned family, const void *obj,
				struct hws_prof_place *place)
{
	if (likely(!hws_cfg.instrument))
		return hws_slice_held(hws_words8_try(w));
	return hws_shim_instr8(w, HWS_OP_TRY, family, obj, 0, place);
}

static inline int hws_shim_timed8(struct hws_words8 *w, unsigned family, const void *obj,
				  uint64_t deadline_ns, struct hws_prof_place *place)
{
	if (likely(!hws_cfg.instrument))
		return hws_slice_held(hws_words8_timed(w, deadline_ns));
	return hws_shim_instr8(w, HWS_OP_TIMED, family, obj, deadline_ns, place);
}

static inline int hws_shim_release8(struct hws_words8 *w, unsigned family, const void *obj,
				    struct hws_prof_place *place)
{
	if (likely(hws_shim_plain()))
		return hws_auto_core_release(&w->u.autow.core);
	if (likely(!hws_cfg.instrument))
		return hws_shim_release8_general(w);
	if (hws_cfg.instrument == HWS_INSTR_PROFILE) {
		if (place)
			hws_prof_place_release(obj, place);
		else
			hws_prof_released(obj);
		return hws_slice_let_go(hws_words8_release(w));
	}
	return hws_slice_let_go(hws_shim_unlock_counted(w, NULL, family, obj));
}

static inline int hws_shim_acquire4(struct hws_words4 *w, unsigned family, const void *obj)
{
	if (likely(!hws_cfg.instrument))
		return hws_slice_held(hws_words4_acquire(w));
	return hws_shim_instr4(w, HWS_OP_ACQUIRE, family, obj);
}

static inline int hws_shim_try4(struct hws_words4 *w, unsigned family, const void *obj)
{
	if (likely(!hws_cfg.instrument))
		return hws_slice_held(hws_words4_try(w));
	return hws_shim_instr4(w, HWS_OP_TRY, family, obj);
}

static inline int hws_shim_release4(struct hws_words4 *w, unsigned family, const void *obj)
{
	if (likely(!hws_cfg.instrument))
		return hws_slice_let_go(hws_words4_release(w));
	if (hws_cfg.instrument == HWS_INSTR_PROFILE) {
		hws_prof_released(obj);
		return hws_slice_let_go(hws_words4_release(w));
	}
	return hws_slice_let_go(hws_shim_unlock_counted(NULL, w, family, obj));
}

#endif

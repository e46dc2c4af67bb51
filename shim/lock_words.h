/* The shim's locks in place: the words of the process-wide lock kind, kept
 * inside the caller's object, and one switch over that kind per operation.
 *
 * Two sizes:
 *   struct hws_words8  8 bytes: pthread_mutex_t, omp_nest_lock_t, the
 *                      pointer of a named critical section.  Every kind fits;
 *                      auto keeps its learning word beside its state.
 *   struct hws_words4  4 bytes: omp_lock_t.  tas, ttas, mutex and auto fit
 *                      (auto learns in the table hashed by address); the FIFO
 *                      kinds (ticket, mcs, clh, 1spinner) use the 4-byte
 *                      ticket lock instead, the FIFO kind that fits.
 * All-zero words are a free lock for every kind, so a statically initialised
 * or zeroed object needs no set-up, and a free lock owns nothing (queue kinds
 * hold a node only while held or waited for), so an object abandoned without
 * destroy leaks nothing.  The kind and the policy are chosen once at start-up
 * (hws_cfg.kind, hws_cfg.wait); the switch below is over a value that never
 * changes afterwards, so it is predicted perfectly.
 */
#ifndef HWS_PRELOAD_LOCK_WORDS_H
#define HWS_PRELOAD_LOCK_WORDS_H

#include <hwsync/lock_1spinner.h>
#include <hwsync/lock_auto.h>
#include <hwsync/lock_clh.h>
#include <hwsync/lock_mcs.h>
#include <hwsync/lock_mutex.h>
#include <hwsync/lock_tas.h>
#include <hwsync/lock_ticket.h>
#include <hwsync/lock_ttas.h>
#include "prims/lock_ops.h"
#include "shim/common.h"


struct hws_words8 {
	union {
		hws_tas_core_t tas;
		hws_ttas_core_t ttas;
		hws_ticket_core_t ticket;
		hws_mcs_core_t mcs;
		hws_clh_core_t clh;
		hws_1spinner_core_t s1;
		hws_mutex_core_t mutex;
		struct {
			hws_auto_core_t core;
			_Atomic uint32_t learn;
		} autow;
	} u;
};
_Static_assert(sizeof(struct hws_words8) == 8, "every kind fits 8 bytes");

struct hws_words4 {
	union {
		hws_tas_core_t tas;
		hws_ttas_core_t ttas;
		hws_mutex_core_t mutex;
		hws_auto_core_t autow;
		hws_ticket16_core_t ticket16;
	} u;
};
_Static_assert(sizeof(struct hws_words4) == 4, "4-byte kinds");

/* The process-wide lock kind, the library's kind that HWSYNC_LOCK names,
 * and the policy (both defined in config.c).  Read once per operation;
 * written only before the shim is published.  Each switch below lists every
 * kind, so a kind added to the library without its case here does not
 * compile. */
extern enum hws_lock_kind_id hws_lock_kind8;
extern const hws_wait_t *hws_lock_wait;

/* The default kind (auto) is tested first, inline in the caller: a compare
 * and a direct branch to the fast path.  The other kinds go through one
 * out-of-line switch each (HWS_OTHER_*), so that the callers stay small.
 * AUTO8/AUTO4 pass auto's learning word where the operation takes one. */
#define HWS_AUTO8_try(w)
#define HWS_AUTO8_acquire(w) , &(w)->u.autow.learn
#define HWS_AUTO8_timed_ns(w) , &(w)->u.autow.learn
#define HWS_AUTO8_release(w)
#define HWS_AUTO4_try(w)
#define HWS_AUTO4_acquire(w) , NULL
#define HWS_AUTO4_release(w)
#define HWS_INLINE static inline __attribute__((always_inline))

#define HWS_OTHER8(w, op, ...)                                                         \
	switch (hws_lock_kind8) {                                                      \
	case HWS_LK_AUTO:                                                              \
		return hws_auto_core_##op(&(w)->u.autow.core HWS_AUTO8_##op(w), ##__VA_ARGS__); \
	case HWS_LK_MUTEX: return hws_mutex_core_##op(&(w)->u.mutex, ##__VA_ARGS__);   \
	case HWS_LK_TAS: return hws_tas_core_##op(&(w)->u.tas, ##__VA_ARGS__);         \
	case HWS_LK_TTAS: return hws_ttas_core_##op(&(w)->u.ttas, ##__VA_ARGS__);      \
	case HWS_LK_TICKET: return hws_ticket_core_##op(&(w)->u.ticket, ##__VA_ARGS__); \
	case HWS_LK_MCS: return hws_mcs_core_##op(&(w)->u.mcs, ##__VA_ARGS__);         \
	case HWS_LK_CLH: return hws_clh_core_##op(&(w)->u.clh, ##__VA_ARGS__);         \
	case HWS_LK_1SPINNER: return hws_1spinner_core_##op(&(w)->u.s1, ##__VA_ARGS__); \
	case HWS_LK_NKINDS: break;                                                     \
	}                                                                              \
	return EINVAL

HWS_OUTLINE int hws_words8_try_other(struct hws_words8 *w) { HWS_OTHER8(w, try); }
HWS_OUTLINE int hws_words8_acquire_other(struct hws_words8 *w)
{
	HWS_OTHER8(w, acquire, hws_lock_wait);
}
HWS_OUTLINE int hws_words8_timed_other(struct hws_words8 *w, uint64_t deadline_ns)
{
	HWS_OTHER8(w, timed_ns, hws_lock_wait, deadline_ns);
}
HWS_OUTLINE int hws_words8_release_other(struct hws_words8 *w)
{
	switch (hws_lock_kind8) {
	case HWS_LK_AUTO: return hws_auto_core_release(&w->u.autow.core);
	case HWS_LK_MUTEX: return hws_mutex_core_release(&w->u.mutex);
	case HWS_LK_TAS: return hws_tas_core_release(&w->u.tas);
	case HWS_LK_TTAS: return hws_ttas_core_release(&w->u.ttas);
	case HWS_LK_TICKET: return hws_ticket_core_release(&w->u.ticket);
	case HWS_LK_MCS: return hws_mcs_core_release(&w->u.mcs, hws_lock_wait);
	case HWS_LK_CLH: return hws_clh_core_release(&w->u.clh, hws_lock_wait);
	case HWS_LK_1SPINNER: return hws_1spinner_core_release(&w->u.s1);
	case HWS_LK_NKINDS: break;
	}
	return EINVAL;
}

#define HWS_AUTO_FIRST(w, words, op, ...)                                              \
	if (__builtin_expect(hws_lock_kind8 == HWS_LK_AUTO, 1))                        \
		return hws_auto_core_##op(&(w)->u.autow.core HWS_AUTO8_##op(w), ##__VA_ARGS__); \
	return hws_##words##_##op##_other

HWS_INLINE int hws_words8_try(struct hws_words8 *w) { HWS_AUTO_FIRST(w, words8, try)(w); }
HWS_INLINE int hws_words8_acquire(struct hws_words8 *w)
{
	HWS_AUTO_FIRST(w, words8, acquire, hws_lock_wait)(w);
}
HWS_INLINE int hws_words8_timed(struct hws_words8 *w, uint64_t deadline_ns)
{
	if (__builtin_expect(hws_lock_kind8 == HWS_LK_AUTO, 1))
		return hws_auto_core_timed_ns(&w->u.autow.core, &w->u.autow.learn, hws_lock_wait,
					      deadline_ns);
	return hws_words8_timed_other(w, deadline_ns);
}
HWS_INLINE int hws_words8_release(struct hws_words8 *w) { HWS_AUTO_FIRST(w, words8, release)(w); }

/* The wait after a failed try, straight into the kind's waiting path: auto's
 * slow path without a second try; the other kinds' acquire (forever) or
 * timed acquire. */
HWS_INLINE int hws_words8_wait(struct hws_words8 *w, uint64_t deadline_ns)
{
	if (__builtin_expect(hws_lock_kind8 == HWS_LK_AUTO, 1))
		return hws_auto_core_lock_slow(&w->u.autow.core, &w->u.autow.learn, hws_lock_wait,
					       deadline_ns);
	if (deadline_ns == HWS_FOREVER)
		return hws_words8_acquire_other(w);
	return hws_words8_timed_other(w, deadline_ns);
}

/* The 4-byte kinds: the FIFO kinds map to ticket16. */
#define HWS_OTHER4(w, op, ...)                                                         \
	switch (hws_lock_kind8) {                                                      \
	case HWS_LK_AUTO:                                                              \
		return hws_auto_core_##op(&(w)->u.autow HWS_AUTO4_##op(w), ##__VA_ARGS__); \
	case HWS_LK_MUTEX: return hws_mutex_core_##op(&(w)->u.mutex, ##__VA_ARGS__);   \
	case HWS_LK_TAS: return hws_tas_core_##op(&(w)->u.tas, ##__VA_ARGS__);         \
	case HWS_LK_TTAS: return hws_ttas_core_##op(&(w)->u.ttas, ##__VA_ARGS__);      \
	default: return hws_ticket16_core_##op(&(w)->u.ticket16, ##__VA_ARGS__);       \
	}

HWS_OUTLINE int hws_words4_try_other(struct hws_words4 *w) { HWS_OTHER4(w, try); }
HWS_OUTLINE int hws_words4_acquire_other(struct hws_words4 *w)
{
	HWS_OTHER4(w, acquire, hws_lock_wait);
}
HWS_OUTLINE int hws_words4_release_other(struct hws_words4 *w) { HWS_OTHER4(w, release); }

#define HWS_AUTO_FIRST4(w, op, ...)                                                    \
	if (__builtin_expect(hws_lock_kind8 == HWS_LK_AUTO, 1))                        \
		return hws_auto_core_##op(&(w)->u.autow HWS_AUTO4_##op(w), ##__VA_ARGS__); \
	return hws_words4_##op##_other(w)

HWS_INLINE int hws_words4_try(struct hws_words4 *w) { HWS_AUTO_FIRST4(w, try); }
HWS_INLINE int hws_words4_acquire(struct hws_words4 *w) { HWS_AUTO_FIRST4(w, acquire, hws_lock_wait); }
HWS_INLINE int hws_words4_release(struct hws_words4 *w) { HWS_AUTO_FIRST4(w, release); }

/* The wait after a failed try (auto learns in the table hashed by address). */
HWS_INLINE int hws_words4_wait(struct hws_words4 *w)
{
	if (__builtin_expect(hws_lock_kind8 == HWS_LK_AUTO, 1))
		return hws_auto_core_lock_slow(&w->u.autow, NULL, hws_lock_wait, HWS_FOREVER);
	return hws_words4_acquire_other(w);
}

/* Kinds whose blocked waiter leaves a mark in the lock: a place in a queue
 * (a ticket or a node), or auto's spinner count and fairness claim.  A thread
 * that dies while waiting (asynchronous cancellation) would leave the mark
 * there for ever. */
static inline int hws_lock_kind_marks_waiters(void)
{
	return hws_lock_kind8 == HWS_LK_TICKET || hws_lock_kind8 == HWS_LK_MCS ||
	       hws_lock_kind8 == HWS_LK_CLH || hws_lock_kind8 == HWS_LK_1SPINNER ||
	       hws_lock_kind8 == HWS_LK_AUTO;
}

#endif

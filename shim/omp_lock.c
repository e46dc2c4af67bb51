/* GNU OpenMP locks and critical sections on the shim's locks, in place.
 *
 * omp_lock_t is 4 bytes in libgomp: it holds a 4-byte lock (struct
 * hws_words4: tas, ttas and mutex as configured, the FIFO kinds as the 4-byte
 * ticket lock).  omp_nest_lock_t is 16 bytes: the 8-byte lock words, the
 * owner's thread number and the depth.  Critical sections: the unnamed one is
 * one process-wide lock; a named one keeps its lock words in the pointer-sized
 * variable the compiler emits for each name (as libgomp itself does).  All
 * of them are zero when free, so nothing needs setting up and nothing is
 * allocated.
 *
 * These objects are too small to record an owner, so the decision is made
 * once per process: every OpenMP lock and critical section is the shim's when
 * the shim is on, and libgomp's when it is off (the shim's state is decided
 * once at start-up and never changes).  A lock libgomp initialised (zero, as
 * omp_init_lock_with_hint leaves it) is a free lock for the shim too.
 *
 * Nest locks are owned by the thread that set them (libgomp: by the task;
 * they differ only for tasks that hold a nest lock across a task switch).
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include "shim/common.h"
#include "shim/config.h"
#include "shim/family.h"
#include "shim/gomp.h"
#include "shim/lock_words.h"
#include "shim/profile.h"
#include "shim/shim_lock.h"
#include "shim/startup.h"

/* ---- native libgomp functions, resolved on first use ---- */
typedef void (*lock_fn)(void *);
typedef int (*test_fn)(void *);
typedef void (*crit_fn)(void);
typedef void (*name_fn)(void **);
GOMP_FN(n_init, lock_fn, "omp_init_lock", "OMP_3.0")
GOMP_FN(n_destroy, lock_fn, "omp_destroy_lock", "OMP_3.0")
GOMP_FN(n_set, lock_fn, "omp_set_lock", "OMP_3.0")
GOMP_FN(n_unset, lock_fn, "omp_unset_lock", "OMP_3.0")
GOMP_FN(n_test, test_fn, "omp_test_lock", "OMP_3.0")
GOMP_FN(n_init_nest, lock_fn, "omp_init_nest_lock", "OMP_3.0")
GOMP_FN(n_destroy_nest, lock_fn, "omp_destroy_nest_lock", "OMP_3.0")
GOMP_FN(n_set_nest, lock_fn, "omp_set_nest_lock", "OMP_3.0")
GOMP_FN(n_unset_nest, lock_fn, "omp_unset_nest_lock", "OMP_3.0")
GOMP_FN(n_test_nest, test_fn, "omp_test_nest_lock", "OMP_3.0")
GOMP_FN(n_crit_start, crit_fn, "GOMP_critical_start", "GOMP_1.0")
GOMP_FN(n_crit_end, crit_fn, "GOMP_critical_end", "GOMP_1.0")
GOMP_FN(n_crit_name_start, name_fn, "GOMP_critical_name_start", "GOMP_1.0")
GOMP_FN(n_crit_name_end, name_fn, "GOMP_critical_name_end", "GOMP_1.0")

/* ---- simple locks ---- */
#define W4(l) ((struct hws_words4 *)(l))

HWS_EXPORT void omp_init_lock(void *l)
{
	if (hws_shim_on()) {
		if (unlikely(hws_cfg.profile))
			hws_prof_end(l);
		memset(l, 0, sizeof(struct hws_words4));
	} else {
		n_init()(l);
	}
}

HWS_EXPORT void omp_destroy_lock(void *l)
{
	if (!hws_shim_on())
		n_destroy()(l);
	else if (unlikely(hws_cfg.profile))
		hws_prof_end(l);
}

/* The general paths: another kind, counting, start-up, or the shim off. */
HWS_OUTLINE void set_lock(void *l)
{
	if (likely(hws_shim_on()))
		hws_shim_acquire4(W4(l), HWS_FAM_OMP_LOCK, l);
	else
		n_set()(l);
}

HWS_OUTLINE void unset_lock(void *l)
{
	if (likely(hws_shim_on()))
		hws_shim_release4(W4(l), HWS_FAM_OMP_LOCK, l);
	else
		n_unset()(l);
}

HWS_EXPORT HWS_FETCH_ALIGNED void omp_set_lock(void *l)
{
	if (likely(hws_shim_plain()))
		hws_auto_core_acquire(&W4(l)->u.autow, NULL, hws_lock_wait);
	else
		set_lock(l);
}

HWS_EXPORT HWS_FETCH_ALIGNED void omp_unset_lock(void *l)
{
	if (likely(hws_shim_plain()))
		hws_auto_core_release(&W4(l)->u.autow);
	else
		unset_lock(l);
}

HWS_EXPORT int omp_test_lock(void *l)
{
	if (likely(hws_shim_on()))
		return hws_shim_try4(W4(l), HWS_FAM_OMP_LOCK, l) == 0;
	return n_test()(l);
}

/* ---- nestable locks ---- */
struct nest {
	struct hws_words8 w;
	_Atomic uint32_t owner;   /* thread number of the holder, 0 = none */
	uint32_t depth;           /* written by the holder only */
};
_Static_assert(sizeof(struct nest) == 16, "omp_nest_lock_t is 16 bytes in libgomp");
#define NEST(l) ((struct nest *)(l))

/* A number for this thread, never 0 (threads are numbered as they first
 * use a nest lock; 2^32 threads would be needed to wrap). */
static uint32_t self(void)
{
	static _Atomic uint32_t next = 1;
	static _Thread_local uint32_t me;
	if (unlikely(!me))
		/* relaxed: only uniqueness matters. */
		me = atomic_fetch_add_explicit(&next, 1, memory_order_relaxed);
	return me;
}

HWS_EXPORT void omp_init_nest_lock(void *l)
{
	if (hws_shim_on()) {
		if (unlikely(hws_cfg.profile))
			hws_prof_end(l);
		memset(l, 0, sizeof(struct nest));
	} else {
		n_init_nest()(l);
	}
}

HWS_EXPORT void omp_destroy_nest_lock(void *l)
{
	if (!hws_shim_on())
		n_destroy_nest()(l);
	else if (unlikely(hws_cfg.profile))
		hws_prof_end(l);
}

/* owner/depth are written only by the holder; another thread reading owner
 * sees either another thread's number or 0, never its own, so it takes the
 * lock. */
HWS_EXPORT void omp_set_nest_lock(void *l)
{
	struct nest *n = NEST(l);
	if (!hws_shim_on()) {
		n_set_nest()(l);
		return;
	}
	/* relaxed: only this thread can have stored its own number. */
	if (atomic_load_explicit(&n->owner, memory_order_relaxed) == self()) {
		n->depth++;
		return;
	}
	hws_shim_acquire8(&n->w, HWS_FAM_OMP_NEST, l, NULL);
	/* relaxed: ordered for the next holder by the lock's release. */
	atomic_store_explicit(&n->owner, self(), memory_order_relaxed);
	n->depth = 1;
}

HWS_EXPORT void omp_unset_nest_lock(void *l)
{
	struct nest *n = NEST(l);
	if (!hws_shim_on()) {
		n_unset_nest()(l);
		return;
	}
	if (--n->depth == 0) {
		/* relaxed: the lock release orders it for the next holder. */
		atomic_store_explicit(&n->owner, 0, memory_order_relaxed);
		hws_shim_release8(&n->w, HWS_FAM_OMP_NEST, l, NULL);
	}
}

HWS_EXPORT int omp_test_nest_lock(void *l)
{
	struct nest *n = NEST(l);
	if (!hws_shim_on())
		return n_test_nest()(l);
	/* relaxed: as in omp_set_nest_lock. */
	if (atomic_load_explicit(&n->owner, memory_order_relaxed) == self())
		return (int)++n->depth;
	if (hws_shim_try8(&n->w, HWS_FAM_OMP_NEST, l, NULL) != 0)
		return 0;
	atomic_store_explicit(&n->owner, self(), memory_order_relaxed);
	n->depth = 1;
	return 1;
}

/* ---- critical sections ---- */
/* The unnamed one is the shim's own: the profile counts in place beside it
 * (profile.h), on the same line. */
static struct {
	struct hws_words8 w;
	struct hws_prof_place place;
} crit HWS_ALIGNED_LINE;

HWS_EXPORT void GOMP_critical_start(void)
{
	if (likely(hws_shim_on()))
		hws_shim_acquire8(&crit.w, HWS_FAM_OMP_CRITICAL, &crit, &crit.place);
	else
		n_crit_start()();
}

HWS_EXPORT void GOMP_critical_end(void)
{
	if (likely(hws_shim_on()))
		hws_shim_release8(&crit.w, HWS_FAM_OMP_CRITICAL, &crit, &crit.place);
	else
		n_crit_end()();
}

_Static_assert(sizeof(void *) >= sizeof(struct hws_words8), "named critical: words in place");

HWS_EXPORT void GOMP_critical_name_start(void **pptr)
{
	if (likely(hws_shim_on()))
		hws_shim_acquire8((struct hws_words8 *)pptr, HWS_FAM_OMP_CRITICAL, pptr, NULL);
	else
		n_crit_name_start()(pptr);
}

HWS_EXPORT void GOMP_critical_name_end(void **pptr)
{
	if (likely(hws_shim_on()))
		hws_shim_release8((struct hws_words8 *)pptr, HWS_FAM_OMP_CRITICAL, pptr, NULL);
	else
		n_crit_name_end()(pptr);
}

/* The profile at exit: the unnamed critical section's in-place count; -2
 * for any other address (a named critical section has no room: its thread
 * caches counted it). */
static long long read_crit_place(uintptr_t obj)
{
	if (obj != (uintptr_t)&crit)
		return -2;
	/* relaxed: a snapshot at exit. */
	return (long long)atomic_load_explicit(&crit.place.count, memory_order_relaxed);
}

__attribute__((constructor)) static void register_place_reader(void)
{
	hws_prof_read_places_with(HWS_FAM_OMP_CRITICAL, read_crit_place);
}

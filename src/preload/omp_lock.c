/* GNU OpenMP locks and critical sections on hwsync locks.
 *
 * omp_lock_t is 4 bytes and omp_nest_lock_t 16 in libgomp: too small for
 * the shim's state, so a side table keyed by the lock's address maps it to a
 * struct hws_shim_lock.  omp_init_*lock decides the owner: a lock in the
 * table is the shim's, any other (initialised natively while the shim was
 * off or starting, or once the table is full) is libgomp's, unchanged.
 * The table is open addressing with lock-free lookups; a destroyed lock
 * leaves its address in place (only the same address reuses the slot).
 *
 * Nest locks are owned by the thread that set them (libgomp: by the task;
 * they differ only for tasks that hold a nest lock across a task switch).
 *
 * Critical sections: GOMP_critical_start/end use one process-wide shim lock;
 * GOMP_critical_name_start/end keep a shim lock pointer in the pointer-sized
 * variable the compiler emits for each name, claimed with a CAS.
 */
#include <errno.h>
#include <stdint.h>
#include "preload/shim.h"

#define TABLE_BITS 16
#define TABLE_SIZE (1u << TABLE_BITS)
#define MAX_PROBE 256

static struct {
	_Atomic uintptr_t key;
	_Atomic(struct hws_shim_lock *) val;
} table[TABLE_SIZE];

static inline uint32_t slot_of(const void *p)
{
	uint64_t x = (uintptr_t)p;
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	return (uint32_t)x & (TABLE_SIZE - 1);
}

static int table_put(const void *p, struct hws_shim_lock *s)
{
	uintptr_t key = (uintptr_t)p;
	uint32_t h = slot_of(p);
	for (uint32_t i = 0; i < MAX_PROBE; i++) {
		uint32_t j = (h + i) & (TABLE_SIZE - 1);
		/* relaxed: the key alone is compared; val is published below. */
		uintptr_t k = atomic_load_explicit(&table[j].key, memory_order_relaxed);
		if (k == 0 && atomic_compare_exchange_strong_explicit(
				      &table[j].key, &k, key, memory_order_relaxed,
				      memory_order_relaxed))
			k = key;
		if (k == key) {
			/* release: pairs with the acquire in table_get (s is set up). */
			atomic_store_explicit(&table[j].val, s, memory_order_release);
			return 0;
		}
	}
	return ENOSPC;
}

static _Atomic(struct hws_shim_lock *) *table_find(const void *p)
{
	uintptr_t key = (uintptr_t)p;
	uint32_t h = slot_of(p);
	for (uint32_t i = 0; i < MAX_PROBE; i++) {
		uint32_t j = (h + i) & (TABLE_SIZE - 1);
		/* relaxed: keys are only ever set once. */
		uintptr_t k = atomic_load_explicit(&table[j].key, memory_order_relaxed);
		if (k == key)
			return &table[j].val;
		if (k == 0)
			return NULL;
	}
	return NULL;
}

static inline struct hws_shim_lock *table_get(const void *p)
{
	_Atomic(struct hws_shim_lock *) *v = table_find(p);
	/* acquire: pairs with the release store in table_put. */
	return v ? atomic_load_explicit(v, memory_order_acquire) : NULL;
}

/* ---- native libgomp functions, resolved on first use ---- */
#define GOMP_FN(var, type, name, ver) \
	static type var(void) \
	{ \
		static _Atomic(type) fn; \
		/* relaxed: idempotent cache of a dlsym result. */ \
		type f = atomic_load_explicit(&fn, memory_order_relaxed); \
		if (!f) { \
			f = (type)hws_native_gomp(name, ver); \
			atomic_store_explicit(&fn, f, memory_order_relaxed); \
		} \
		return f; \
	}
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
static void init_as(void *l, unsigned family, lock_fn native)
{
	if (hws_shim_on()) {
		struct hws_shim_lock *s = hws_shim_lock_new(family);
		if (s && table_put(l, s) == 0)
			return;
		if (s) {
			hws_shim_lock_free(s);
			hws_pass(HWS_PASS_OMP_TABLE_FULL);
		} else {
			hws_pass(HWS_PASS_CREATE_FAILED);
		}
	}
	native(l);
}

static void destroy_as(void *l, lock_fn native)
{
	_Atomic(struct hws_shim_lock *) *v = table_find(l);
	/* acquire: pairs with the release store in table_put. */
	struct hws_shim_lock *s = v ? atomic_load_explicit(v, memory_order_acquire) : NULL;
	if (!s) {
		native(l);
		return;
	}
	/* relaxed: destroy is not concurrent with use of this lock. */
	atomic_store_explicit(v, NULL, memory_order_relaxed);
	hws_shim_lock_free(s);
}

HWS_EXPORT void omp_init_lock(void *l) { init_as(l, HWS_FAM_OMP_LOCK, n_init()); }
HWS_EXPORT void omp_destroy_lock(void *l) { destroy_as(l, n_destroy()); }

HWS_EXPORT void omp_set_lock(void *l)
{
	struct hws_shim_lock *s = table_get(l);
	if (s)
		hws_shim_lock_acquire(s, l);
	else
		n_set()(l);
}

HWS_EXPORT void omp_unset_lock(void *l)
{
	struct hws_shim_lock *s = table_get(l);
	if (s)
		hws_shim_lock_release(s, l);
	else
		n_unset()(l);
}

HWS_EXPORT int omp_test_lock(void *l)
{
	struct hws_shim_lock *s = table_get(l);
	if (s)
		return hws_shim_lock_try(s, l) == 0;
	return n_test()(l);
}

/* ---- nestable locks ---- */
static _Thread_local char self_token;
#define SELF ((const void *)&self_token)

HWS_EXPORT void omp_init_nest_lock(void *l) { init_as(l, HWS_FAM_OMP_NEST, n_init_nest()); }
HWS_EXPORT void omp_destroy_nest_lock(void *l) { destroy_as(l, n_destroy_nest()); }

/* owner/count are written only by the holder; another thread reading owner
 * sees either a stale other owner or NULL, never SELF, so it takes the lock. */
#define OWNER(s) ((_Atomic(const void *) *)&(s)->owner)

HWS_EXPORT void omp_set_nest_lock(void *l)
{
	struct hws_shim_lock *s = table_get(l);
	if (!s) {
		n_set_nest()(l);
		return;
	}
	/* relaxed: only this thread can have stored SELF. */
	if (atomic_load_explicit(OWNER(s), memory_order_relaxed) == SELF) {
		s->count++;
		return;
	}
	hws_shim_lock_acquire(s, l);
	atomic_store_explicit(OWNER(s), SELF, memory_order_relaxed);
	s->count = 1;
}

HWS_EXPORT void omp_unset_nest_lock(void *l)
{
	struct hws_shim_lock *s = table_get(l);
	if (!s) {
		n_unset_nest()(l);
		return;
	}
	if (--s->count == 0) {
		/* relaxed: the lock release orders it for the next holder. */
		atomic_store_explicit(OWNER(s), NULL, memory_order_relaxed);
		hws_shim_lock_release(s, l);
	}
}

HWS_EXPORT int omp_test_nest_lock(void *l)
{
	struct hws_shim_lock *s = table_get(l);
	if (!s)
		return n_test_nest()(l);
	/* relaxed: as in omp_set_nest_lock. */
	if (atomic_load_explicit(OWNER(s), memory_order_relaxed) == SELF)
		return (int)++s->count;
	if (hws_shim_lock_try(s, l) != 0)
		return 0;
	atomic_store_explicit(OWNER(s), SELF, memory_order_relaxed);
	s->count = 1;
	return 1;
}

/* ---- critical sections ---- */
static _Atomic(struct hws_shim_lock *) crit;
static struct hws_shim_lock crit_native_marker;
#define CRIT_NATIVE (&crit_native_marker)

/* The unnamed critical lock: created once; NATIVE when it cannot be. */
static struct hws_shim_lock *crit_lock(void)
{
	/* acquire: pairs with the release CAS below. */
	struct hws_shim_lock *s = atomic_load_explicit(&crit, memory_order_acquire);
	if (likely(s != NULL))
		return s;
	struct hws_shim_lock *n = hws_shim_on() ? hws_shim_lock_new(HWS_FAM_OMP_CRITICAL) : NULL;
	if (!n)
		n = CRIT_NATIVE;
	/* release: publishes the new lock; acquire: sees the winner's. */
	if (atomic_compare_exchange_strong_explicit(&crit, &s, n, memory_order_acq_rel,
						    memory_order_acquire))
		return n;
	if (n != CRIT_NATIVE)
		hws_shim_lock_free(n);
	return s;
}

HWS_EXPORT void GOMP_critical_start(void)
{
	struct hws_shim_lock *s = crit_lock();
	if (s != CRIT_NATIVE)
		hws_shim_lock_acquire(s, &crit);
	else
		n_crit_start()();
}

HWS_EXPORT void GOMP_critical_end(void)
{
	/* acquire: pairs with the release CAS in crit_lock. */
	struct hws_shim_lock *s = atomic_load_explicit(&crit, memory_order_acquire);
	if (s != CRIT_NATIVE)
		hws_shim_lock_release(s, &crit);
	else
		n_crit_end()();
}

/* A named critical section is the shim's exactly when the unnamed one is,
 * so the decision is made once for all of them. */
HWS_EXPORT void GOMP_critical_name_start(void **pptr)
{
	if (crit_lock() == CRIT_NATIVE) {
		n_crit_name_start()(pptr);
		return;
	}
	_Atomic(struct hws_shim_lock *) *p = (_Atomic(struct hws_shim_lock *) *)pptr;
	/* acquire: pairs with the release CAS below. */
	struct hws_shim_lock *s = atomic_load_explicit(p, memory_order_acquire);
	if (unlikely(!s)) {
		struct hws_shim_lock *n = hws_shim_lock_new(HWS_FAM_OMP_CRITICAL);
		if (!n)   /* out of memory: share the unnamed section's lock */
			n = crit_lock();
		/* release: publishes n; acquire: sees the winner's. */
		if (atomic_compare_exchange_strong_explicit(p, &s, n, memory_order_acq_rel,
							    memory_order_acquire))
			s = n;
		else if (n != crit_lock())
			hws_shim_lock_free(n);
	}
	hws_shim_lock_acquire(s, pptr);
}

HWS_EXPORT void GOMP_critical_name_end(void **pptr)
{
	/* acquire: pairs with the release CAS in GOMP_critical_name_start. */
	struct hws_shim_lock *s = atomic_load_explicit((_Atomic(struct hws_shim_lock *) *)pptr,
						       memory_order_acquire);
	if (crit_lock() == CRIT_NATIVE)
		n_crit_name_end()(pptr);
	else
		hws_shim_lock_release(s, pptr);
}

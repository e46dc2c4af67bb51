/* pthread_spin_*: test-and-test-and-set on the lock word itself.  Taking a
 * free lock is one exchange and releasing it one store; a thread that finds
 * it held waits in spin_wait.c (bounded backoff, yielding the CPU when the
 * holder may need it).  The word keeps glibc's encoding (spin_wait.h) and
 * nothing waits in the kernel, so a spin lock needs no owner record and a
 * process-shared spin lock works between processes with and without the
 * shim. */
#include <errno.h>
#include "shim/common.h"
#include "shim/config.h"
#include "shim/family.h"
#include "shim/natives.h"
#include "shim/profile.h"
#include "shim/spin_wait.h"
#include "shim/startup.h"
#include "shim/stats.h"

#define WORD(l) ((_Atomic uint32_t *)(void *)(l))
#define OBJ(l) ((const void *)(uintptr_t)(l))   /* the profile's key */

HWS_EXPORT int pthread_spin_init(pthread_spinlock_t *l, int pshared)
{
	if (!hws_shim_on())
		return hws_native.spin_init ? hws_native.spin_init(l, pshared) : ENOSYS;
	if (unlikely(hws_cfg.profile))
		hws_prof_end(OBJ(l));
	/* relaxed: init is not concurrent with use. */
	atomic_store_explicit(WORD(l), HWS_SPIN_FREE, memory_order_relaxed);
	/* Read the usable CPUs (files, once per process) now rather than on the
	 * first contended lock, where it would add file I/O to a waiter. */
	hws_usable_cpus();
	return 0;
}

HWS_EXPORT int pthread_spin_destroy(pthread_spinlock_t *l)
{
	if (unlikely(hws_cfg.profile) && hws_shim_on())
		hws_prof_end(OBJ(l));
	return 0;
}

/* Out of line: the uncontended path stays an exchange and a test. */
HWS_OUTLINE int lock_contended(pthread_spinlock_t *l)
{
	/* pause (also what a policy that may sleep becomes) and spin mean the
	 * backoff's own delays; a policy that does more between two reads
	 * replaces them (docs/preload.md). */
	const hws_wait_t *w = &hws_cfg.spin_wait;
	uint64_t t0 = hws_cfg.profile ? hws_prof_wait_begin(OBJ(l), HWS_FAM_SPIN) : 0;
	hws_spin_wait_acquire(WORD(l), w->kind == HWS_WAIT_PAUSE || w->kind == HWS_WAIT_SPIN ?
			      NULL : w, hws_usable_cpus());
	hws_slice_hold();
	if (hws_cfg.profile)
		hws_prof_wait_end(OBJ(l), HWS_FAM_SPIN, t0, 0, 0);
	if (hws_cfg.stats) {
		HWS_COUNT(HWS_FAM_SPIN, ops, 1);
		HWS_COUNT(HWS_FAM_SPIN, contended, 1);
	}
	return 0;
}

/* Out of line: an acquisition that did not wait, counted, or asking for the
 * kernel's time-slice extension.  Hold times are not sampled for spin
 * locks: their unlock stays one store and one test. */
HWS_OUTLINE int lock_counted(pthread_spinlock_t *l)
{
	hws_slice_hold();
	if (hws_cfg.profile)
		hws_prof_acquired(OBJ(l), HWS_FAM_SPIN);
	if (hws_cfg.stats)
		HWS_COUNT(HWS_FAM_SPIN, ops, 1);
	return 0;
}

/* Out of line: start-up not done, the shim off, or something watching. */
HWS_OUTLINE int lock_general(pthread_spinlock_t *l)
{
	if (!hws_shim_on())
		return hws_native.spin_lock ? hws_native.spin_lock(l) : ENOSYS;
	if (unlikely(!hws_spin_try(WORD(l))))
		return lock_contended(l);
	if (unlikely(hws_cfg.instrument | hws_cfg.slice))
		return lock_counted(l);
	return 0;
}

HWS_EXPORT HWS_FETCH_ALIGNED int pthread_spin_lock(pthread_spinlock_t *l)
{
	if (likely(hws_shim_spin_plain())) {
		if (likely(hws_spin_try(WORD(l))))
			return 0;
		return lock_contended(l);
	}
	return lock_general(l);
}

HWS_EXPORT int pthread_spin_trylock(pthread_spinlock_t *l)
{
	if (!hws_shim_on())
		return hws_native.spin_trylock ? hws_native.spin_trylock(l) : ENOSYS;
	/* relaxed: a look that keeps a held line shared; hws_spin_try acquires. */
	if (!hws_spin_is_free(atomic_load_explicit(WORD(l), memory_order_relaxed)) ||
	    !hws_spin_try(WORD(l)))
		return EBUSY;
	hws_slice_hold();
	if (unlikely(hws_cfg.profile))
		hws_prof_acquired(OBJ(l), HWS_FAM_SPIN);
	return 0;
}

/* Out of line: as lock_general. */
HWS_OUTLINE int unlock_general(pthread_spinlock_t *l)
{
	if (!hws_shim_on())
		return hws_native.spin_unlock ? hws_native.spin_unlock(l) : ENOSYS;
	/* release: pairs with the acquire exchange of the next owner.  Nothing
	 * sleeps on a spin lock, so no wake-up is needed. */
	atomic_store_explicit(WORD(l), HWS_SPIN_FREE, memory_order_release);
	/* The configuration's copy of the verdict, not hws_slice_unhold's own
	 * test: as cheap, and gcc then keeps the return inline. */
	if (unlikely(hws_cfg.slice))
		hws_slice_unhold();
	return 0;
}

HWS_EXPORT HWS_FETCH_ALIGNED int pthread_spin_unlock(pthread_spinlock_t *l)
{
	if (likely(hws_shim_spin_plain())) {
		/* release: pairs with the acquire exchange of the next owner. */
		atomic_store_explicit(WORD(l), HWS_SPIN_FREE, memory_order_release);
		return 0;
	}
	return unlock_general(l);
}

/* pthread_spin_*: test-and-test-and-set on the lock word itself, waiting
 * with the configured policy when that policy never sleeps and with pause
 * otherwise (a spin lock's waiter is meant to spin).  The word keeps glibc's
 * encoding (0 free, 1 held) and nothing waits in the kernel, so a spin lock
 * needs no owner record and process-shared spin locks keep working. */
#include <errno.h>
#include "shim/shim.h"

#define WORD(l) ((_Atomic uint32_t *)(void *)(l))

HWS_EXPORT int pthread_spin_init(pthread_spinlock_t *l, int pshared)
{
	if (!hws_shim_on())
		return hws_native.spin_init ? hws_native.spin_init(l, pshared) : ENOSYS;
	/* relaxed: init is not concurrent with use. */
	atomic_store_explicit(WORD(l), 0, memory_order_relaxed);
	return 0;
}

HWS_EXPORT int pthread_spin_destroy(pthread_spinlock_t *l)
{
	(void)l;
	return 0;
}

HWS_EXPORT int pthread_spin_lock(pthread_spinlock_t *l)
{
	if (!hws_shim_on())
		return hws_native.spin_lock ? hws_native.spin_lock(l) : ENOSYS;
	/* acquire: pairs with the release store in pthread_spin_unlock. */
	if (likely(!atomic_exchange_explicit(WORD(l), 1, memory_order_acquire))) {
		if (hws_cfg.stats)
			HWS_COUNT(HWS_FAM_SPIN, ops, 1);
		return 0;
	}
	do
		hws_wait_while_eq32(WORD(l), 1, &hws_cfg.spin_wait, HWS_FOREVER);
	/* acquire: as above. */
	while (atomic_exchange_explicit(WORD(l), 1, memory_order_acquire));
	if (hws_cfg.stats) {
		HWS_COUNT(HWS_FAM_SPIN, ops, 1);
		HWS_COUNT(HWS_FAM_SPIN, contended, 1);
	}
	return 0;
}

HWS_EXPORT int pthread_spin_trylock(pthread_spinlock_t *l)
{
	if (!hws_shim_on())
		return hws_native.spin_trylock ? hws_native.spin_trylock(l) : ENOSYS;
	/* relaxed pre-check keeps a busy line shared; acquire pairs with unlock. */
	if (atomic_load_explicit(WORD(l), memory_order_relaxed) ||
	    atomic_exchange_explicit(WORD(l), 1, memory_order_acquire))
		return EBUSY;
	return 0;
}

HWS_EXPORT int pthread_spin_unlock(pthread_spinlock_t *l)
{
	if (!hws_shim_on())
		return hws_native.spin_unlock ? hws_native.spin_unlock(l) : ENOSYS;
	/* release: pairs with the acquire exchange of the next owner.  The spin
	 * policy never sleeps, so no wake-up is needed. */
	atomic_store_explicit(WORD(l), 0, memory_order_release);
	return 0;
}

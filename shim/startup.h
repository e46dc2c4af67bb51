/* The shim's state (startup.c): whether objects go to hwsync (READY) or stay
 * native (OFF), decided once, and whether the lock paths may take auto's
 * fast path at once. */
#ifndef HWS_PRELOAD_STARTUP_H
#define HWS_PRELOAD_STARTUP_H

#include <stdatomic.h>
#include "shim/common.h"

enum { HWS_SHIM_UNINIT, HWS_SHIM_BUSY, HWS_SHIM_READY, HWS_SHIM_OFF };
extern _Atomic int hws_shim_state;
int hws_shim_on_slow(void);

/* 1 when objects may be given to the shim now; 0 means native (shim off,
 * or a call made by the shim's own start-up on this thread). */
static inline int hws_shim_on(void)
{
	/* acquire: pairs with the release store that publishes the configuration. */
	int s = atomic_load_explicit(&hws_shim_state, memory_order_acquire);
	if (likely(s == HWS_SHIM_READY))
		return 1;
	if (s == HWS_SHIM_OFF)
		return 0;
	return hws_shim_on_slow();
}

/* 1 once the shim is on with the default set-up: every lock is auto,
 * nothing is counted (no stats, trace or profile) and the kernel offers no
 * time-slice extension to ask for (hws_cfg.slice).  The lock paths test this
 * one word and go straight to auto's fast path (OpenMP locks before anything
 * else, the 8-byte words in hws_shim_acquire8/release8); anything else
 * (start-up not done, another kind, counting) takes the general path.  Set
 * once at start-up, before the state says READY. */
extern _Atomic int hws_shim_plain_auto;
static inline int hws_shim_plain(void)
{
	/* acquire: pairs with the release store at start-up, after which the
	 * lock kind and the wait policy the fast path uses are set. */
	return atomic_load_explicit(&hws_shim_plain_auto, memory_order_acquire);
}

/* 1 once the shim is on and nothing watches its spin locks: no stats, trace
 * or profile, and no time-slice extension to ask for.  pthread_spin_lock and
 * pthread_spin_unlock test this one word and go straight to the exchange or
 * the store; anything else takes their general paths.  Set with
 * hws_shim_plain_auto. */
extern _Atomic int hws_shim_plain_spin;
static inline int hws_shim_spin_plain(void)
{
	/* acquire: pairs with the release store at start-up, after which the
	 * native functions and the configuration are set. */
	return atomic_load_explicit(&hws_shim_plain_spin, memory_order_acquire);
}

#endif

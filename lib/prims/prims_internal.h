/* Helpers shared by the primitives (not installed). */
#ifndef HWS_PRIMS_INTERNAL_H
#define HWS_PRIMS_INTERNAL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "wait/internal.h"

/* Absolute CLOCK_MONOTONIC timespec -> deadline in ns for the wait layer.
 * NULL means no deadline; a malformed timespec gives EINVAL with a message. */
static inline int hws_deadline_from_ts(const struct timespec *ts, uint64_t *ns, const char *who)
{
	if (!ts) {
		*ns = HWS_FOREVER;
		return 0;
	}
	if (ts->tv_sec < 0 || ts->tv_nsec < 0 || ts->tv_nsec >= 1000000000L)
		return hws_fail(EINVAL, "%s: bad deadline {%lld s, %ld ns} (tv_nsec must be in "
				"[0, 1e9), tv_sec >= 0)", who, (long long)ts->tv_sec, ts->tv_nsec);
	*ns = (uint64_t)ts->tv_sec * 1000000000ull + (uint64_t)ts->tv_nsec;
	return 0;
}

/* Resolve a wait-policy spec for a primitive, prefixing the error with who. */
static inline int hws_prims_policy(hws_wait_t *w, const char *spec, const char *who)
{
	int rc = hws_wait_init(w, spec);
	if (rc) {
		char msg[256];
		snprintf(msg, sizeof msg, "%s", hws_last_error());
		return hws_fail(rc, "%s: %s", who, msg);
	}
	return 0;
}

/* A tiny internal lock for the rare slow paths (event tokens): exchange, and
 * wait through the object's policy when held.  Critical sections are a few
 * loads and stores. */
static inline void hws_tiny_lock(_Atomic uint32_t *l, const hws_wait_t *w)
{
	/* acquire: pairs with the release store in hws_tiny_unlock. */
	while (atomic_exchange_explicit(l, 1, memory_order_acquire) != 0)
		hws_wait_while_eq32(l, 1, w, HWS_FOREVER);
}

static inline void hws_tiny_unlock(_Atomic uint32_t *l)
{
	/* release: pairs with the acquire exchange in hws_tiny_lock. */
	atomic_store_explicit(l, 0, memory_order_release);
	hws_wake32(l, 1);
}

/* Cache-line aligned zeroed allocation (shared hot words on their own line). */
static inline void *hws_alloc_lines(size_t size)
{
	size_t sz = (size + HWS_CACHELINE - 1) / HWS_CACHELINE * HWS_CACHELINE;
	void *p = aligned_alloc(HWS_CACHELINE, sz);
	if (p)
		memset(p, 0, sz);
	return p;
}

#endif

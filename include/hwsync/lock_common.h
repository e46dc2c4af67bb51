/* Helpers shared by the typed lock headers (lock_<kind>.h). */
#ifndef HWSYNC_LOCK_COMMON_H
#define HWSYNC_LOCK_COMMON_H

#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>
#include <hwsync/wait.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Absolute CLOCK_MONOTONIC timespec -> ns for the wait layer; EINVAL when
 * the timespec is malformed (negative, or tv_nsec out of range). */
static inline int hws_timespec_to_ns(const struct timespec *ts, uint64_t *ns)
{
	if (!ts || ts->tv_sec < 0 || ts->tv_nsec < 0 || ts->tv_nsec >= 1000000000L)
		return EINVAL;
	*ns = (uint64_t)ts->tv_sec * 1000000000ull + (uint64_t)ts->tv_nsec;
	return 0;
}

/* Declares hws_<k>_timed(l, abs) on top of hws_<k>_timed_ns(l, deadline_ns). */
#define HWS_LOCK_TIMED_WRAPPER(k)                                                  \
	static inline int hws_##k##_timed(hws_##k##_t *l, const struct timespec *abs) \
	{                                                                          \
		uint64_t ns;                                                       \
		if (hws_timespec_to_ns(abs, &ns))                                  \
			return EINVAL;                                             \
		return hws_##k##_timed_ns(l, ns);                                  \
	}

#ifdef __cplusplus
}
#endif
#endif

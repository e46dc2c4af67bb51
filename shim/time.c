/* Deadline conversion: an absolute time on the caller's clock (REALTIME or
 * MONOTONIC) to the wait layer's CLOCK_MONOTONIC deadline. */
#include <errno.h>
#include <hwsync/wait.h>
#include "shim/time.h"

int hws_shim_to_mono(clockid_t clock, const struct timespec *abs, struct timespec *mono)
{
	struct timespec now_c, now_m;
	if (!abs || abs->tv_nsec < 0 || abs->tv_nsec >= 1000000000L)
		return EINVAL;
	if (clock != CLOCK_REALTIME && clock != CLOCK_MONOTONIC)
		return EINVAL;
	if (clock == CLOCK_MONOTONIC) {
		*mono = *abs;
	} else {
		clock_gettime(CLOCK_REALTIME, &now_c);
		clock_gettime(CLOCK_MONOTONIC, &now_m);
		int64_t d = (int64_t)(abs->tv_sec - now_c.tv_sec) * 1000000000LL +
			    (abs->tv_nsec - now_c.tv_nsec);
		int64_t m = (int64_t)now_m.tv_sec * 1000000000LL + now_m.tv_nsec + d;
		if (m < 0)
			m = 0;
		mono->tv_sec = (time_t)(m / 1000000000LL);
		mono->tv_nsec = (long)(m % 1000000000LL);
	}
	if (mono->tv_sec < 0)
		mono->tv_sec = 0, mono->tv_nsec = 0;
	return 0;
}

int hws_shim_deadline_ns(clockid_t clock, const struct timespec *abs, uint64_t *ns)
{
	struct timespec m;
	int rc = hws_shim_to_mono(clock, abs, &m);
	if (rc)
		return rc;
	if ((uint64_t)m.tv_sec >= (HWS_FOREVER - 1000000000ull) / 1000000000ull)
		*ns = HWS_FOREVER;
	else
		*ns = (uint64_t)m.tv_sec * 1000000000ull + (uint64_t)m.tv_nsec;
	return 0;
}

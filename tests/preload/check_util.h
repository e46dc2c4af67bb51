/* Helpers of the shim's black-box check programs (conform.c, corners.c):
 * unbuffered output, errno names, and deadlines a number of ms from now. */
#ifndef HWS_TESTS_PRELOAD_CHECK_UTIL_H
#define HWS_TESTS_PRELOAD_CHECK_UTIL_H

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#define OUT(...) (printf(__VA_ARGS__), fflush(stdout))

static inline const char *en(int e)
{
	switch (e) {
	case 0: return "0";
	case EBUSY: return "EBUSY";
	case ETIMEDOUT: return "ETIMEDOUT";
	case EINVAL: return "EINVAL";
	case EAGAIN: return "EAGAIN";
	case EPERM: return "EPERM";
	case EDEADLK: return "EDEADLK";
	case EINTR: return "EINTR";
	case EOVERFLOW: return "EOVERFLOW";
	case ENOMEM: return "ENOMEM";
	default: return strerror(e);
	}
}

static inline struct timespec in_ms(clockid_t c, long ms)
{
	struct timespec t;
	clock_gettime(c, &t);
	t.tv_sec += ms / 1000;
	t.tv_nsec += (ms % 1000) * 1000000L;
	if (t.tv_nsec >= 1000000000L)
		t.tv_sec++, t.tv_nsec -= 1000000000L;
	return t;
}

#endif

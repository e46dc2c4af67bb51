/* Helpers for the lock tests. */
#ifndef HWS_LOCK_TEST_H
#define HWS_LOCK_TEST_H

#include "common/test.h"
#include <hwsync/lock.h>
#include <hwsync/wait.h>

/* Work per test shrinks under ThreadSanitizer and on arm64 (run under
 * qemu-user in CI), on top of HWS_TEST_SCALE. */
static inline unsigned lock_test_scale(unsigned n)
{
	n = test_scale(n);
#if defined(HWS_TSAN) || defined(__aarch64__)
	n = n / 8 ? n / 8 : 1;
#endif
	return n;
}

static inline unsigned test_ncpus(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	return n > 0 ? (unsigned)n : 1;
}

/* The policies to exercise: every kind available here, default parameters. */
static inline int policy_usable(enum hws_wait_kind k)
{
	return hws_wait_available(k, NULL) == 0;
}

/* A kind name is known to hws_lock_create. */
static inline int kind_known(const char *kind)
{
	for (const char *const *k = hws_lock_kinds(); *k; k++)
		if (!strcmp(*k, kind))
			return 1;
	return 0;
}

#endif

/* Minimal test helpers shared by all hwsync tests (header-only).
 * A test is a program: exit 0 = pass, 77 = skipped (ctest SKIP_RETURN_CODE),
 * anything else = fail.  CHECK prints the failing expression and exits. */
#ifndef HWS_TEST_H
#define HWS_TEST_H

#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define HWS_TEST_SKIP 77

#define CHECK(cond) do { \
	if (!(cond)) { \
		fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
		exit(1); \
	} \
} while (0)

#define CHECK_EQ(a, b) do { \
	long long _a = (long long)(a), _b = (long long)(b); \
	if (_a != _b) { \
		fprintf(stderr, "%s:%d: CHECK_EQ failed: %s == %lld, %s == %lld\n", \
			__FILE__, __LINE__, #a, _a, #b, _b); \
		exit(1); \
	} \
} while (0)

static inline uint64_t test_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Absolute CLOCK_MONOTONIC timespec `ns` from now. */
static inline struct timespec test_deadline_ts(uint64_t ns)
{
	uint64_t t = test_now_ns() + ns;
	struct timespec ts = { (time_t)(t / 1000000000ull), (long)(t % 1000000000ull) };
	return ts;
}

/* Tiny per-thread PRNG (xorshift) for random delays. */
static inline uint32_t test_rand(uint64_t *s)
{
	*s ^= *s << 13, *s ^= *s >> 7, *s ^= *s << 17;
	return (uint32_t)*s;
}

static inline void test_spin_ns(uint64_t ns)
{
	uint64_t end = test_now_ns() + ns;
	while (test_now_ns() < end)
		;
}

/* Start n threads running fn(arg_i), arg_i = (char *)args + i * size; join all. */
static inline void test_run_threads(unsigned n, void *(*fn)(void *), void *args, size_t size)
{
	pthread_t *t = calloc(n, sizeof *t);
	CHECK(t);
	for (unsigned i = 0; i < n; i++)
		CHECK(pthread_create(&t[i], NULL, fn, (char *)args + i * size) == 0);
	for (unsigned i = 0; i < n; i++)
		CHECK(pthread_join(t[i], NULL) == 0);
	free(t);
}

/* Seconds a stress test may run, scaled down under ThreadSanitizer/qemu via
 * HWS_TEST_SCALE (percent, default 100). */
static inline unsigned test_scale(unsigned n)
{
	const char *s = getenv("HWS_TEST_SCALE");
	unsigned pct = s ? (unsigned)atoi(s) : 100;
	unsigned r = (unsigned)((unsigned long long)n * (pct ? pct : 100) / 100);
	return r ? r : 1;
}

#endif

/* The clocks of hwsync-shim-patterns (shim_patterns.c and the paired
 * patterns): CLOCK_MONOTONIC and the process's CPU time, in ns. */
#ifndef HWS_BENCH_SHIM_CLOCK_H
#define HWS_BENCH_SHIM_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* CPU time of all threads of the process so far. */
static inline uint64_t cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

#endif

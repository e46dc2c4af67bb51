/* Long-latency delay operations of [T2SPIN]: each takes tens to hundreds of
 * cycles while issuing a single instruction, so a waiter that runs one between
 * two reads of the lock word leaves the core's fetch and issue bandwidth to the
 * thread beside it.  The operands come through volatile or thread-local state
 * so the compiler can neither fold nor hoist them. */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <hwsync/arch.h>
#include "arch/internal.h"

uint64_t hws_delay_div(uint64_t x)
{
	volatile uint64_t divisor = 7;
	return (x | 0x8000000000000000ull) / divisor;
}

double hws_delay_fdiv(double x)
{
	volatile double divisor = 3.0;
	return (x + 1.0) / divisor;
}

/* A CAS on a line owned by this thread only: no coherence traffic, but the
 * locked read-modify-write drains the store buffer and takes ~20 cycles. */
static _Thread_local _Atomic uint64_t private_line[HWS_CACHELINE / 8] HWS_ALIGNED_LINE;

uint64_t hws_delay_cas(void)
{
	uint64_t expected = __atomic_load_n((uint64_t *)&private_line[0], __ATOMIC_RELAXED);
	/* relaxed: the line is private; only the latency matters. */
	__atomic_compare_exchange_n((uint64_t *)&private_line[0], &expected, expected + 1, 0,
				    __ATOMIC_RELAXED, __ATOMIC_RELAXED);
	return expected;
}

/* A pointer chase over a buffer twice the size of a large LLC, in a random
 * cyclic order, so that each load misses every cache level.  One read-only
 * buffer per process (64 MiB, built on first use); each thread keeps its own
 * cursor into the cycle. */
#define MISS_BYTES (64u << 20)
#define MISS_SLOTS (MISS_BYTES / HWS_CACHELINE)
static char *miss_buf;
static pthread_once_t miss_once = PTHREAD_ONCE_INIT;
static _Thread_local void **miss_cursor;

static void build_chase(void)
{
	char *buf = aligned_alloc(HWS_CACHELINE, MISS_BYTES);
	unsigned *order = malloc(MISS_SLOTS * sizeof *order);
	unsigned long long seed = 0x9e3779b97f4a7c15ull;

	if (!buf || !order) {
		free(buf);
		free(order);
		return;
	}
	for (unsigned i = 0; i < MISS_SLOTS; i++)
		order[i] = i;
	for (unsigned i = MISS_SLOTS - 1; i > 0; i--) {    /* Fisher-Yates */
		seed ^= seed << 13, seed ^= seed >> 7, seed ^= seed << 17;
		unsigned j = (unsigned)(seed % (i + 1)), t = order[i];
		order[i] = order[j], order[j] = t;
	}
	for (unsigned i = 0; i < MISS_SLOTS; i++)
		*(void **)(buf + (size_t)order[i] * HWS_CACHELINE) =
			buf + (size_t)order[(i + 1) % MISS_SLOTS] * HWS_CACHELINE;
	free(order);
	miss_buf = buf;
}

int hws_delay_miss_prepare(void)
{
	hws_once(&miss_once, build_chase);
	return miss_buf ? 0 : ENOMEM;
}

uint64_t hws_delay_miss(void)
{
	if (!miss_cursor) {
		/* The policy called hws_delay_miss_prepare() at init; a thread
		 * starts at an address-dependent point of the cycle. */
		if (hws_delay_miss_prepare())
			return hws_delay_div((uint64_t)(uintptr_t)&miss_cursor);
		miss_cursor = (void **)(miss_buf +
			((uintptr_t)&miss_cursor / 64 % MISS_SLOTS) * HWS_CACHELINE);
	}
	miss_cursor = *(void *volatile *)miss_cursor;
	return (uint64_t)(uintptr_t)miss_cursor;
}

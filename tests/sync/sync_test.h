/* Helpers for the sync-primitive tests. */
#ifndef HWS_SYNC_TEST_H
#define HWS_SYNC_TEST_H

#include "common/test.h"
#include <stdatomic.h>

/* Loop counts: test_scale, and a further tenth under ThreadSanitizer, which
 * slows atomics and context switches by an order of magnitude. */
static inline unsigned sync_scale(unsigned n)
{
	unsigned r = test_scale(n);
#ifdef HWS_TSAN
	r /= 10;
#endif
	return r ? r : 1;
}

static inline unsigned sync_ncpus(void)
{
	cpu_set_t set;
	if (sched_getaffinity(0, sizeof set, &set) != 0)
		return 1;
	int n = CPU_COUNT(&set);
	return n > 0 ? (unsigned)n : 1;
}

/* Restrict the calling thread to the first `k` CPUs it may run on. */
static inline void sync_pin_first(unsigned k)
{
	cpu_set_t set, mine;
	if (sched_getaffinity(0, sizeof set, &set) != 0)
		return;
	CPU_ZERO(&mine);
	for (int c = 0; c < CPU_SETSIZE && k; c++)
		if (CPU_ISSET(c, &set)) {
			CPU_SET(c, &mine);
			k--;
		}
	sched_setaffinity(0, sizeof mine, &mine);
}

/* A random delay: mostly a short spin (0..3 us), sometimes a yield. */
static inline void sync_random_delay(uint64_t *seed)
{
	uint32_t r = test_rand(seed);
	if ((r & 63) == 0)
		sched_yield();
	else if (r & 1)
		test_spin_ns((r >> 8) % 3000);
}


/* A ping-pong of two threads: player((void *)0) moves the ball from 2i to
 * 2i + 1, player((void *)1) from 2i + 1 to 2i + 2, for i below rounds.  A
 * lost wake-up hangs the game (the ctest timeout ends it) or, with a timed
 * wait, fails in the player; the ball must end at 2 * rounds. */
static inline void sync_pingpong(void *(*player)(void *), _Atomic unsigned *ball,
				 unsigned rounds)
{
	pthread_t a, b;

	atomic_store(ball, 0);
	CHECK(pthread_create(&a, NULL, player, (void *)0) == 0);
	CHECK(pthread_create(&b, NULL, player, (void *)1) == 0);
	CHECK(pthread_join(a, NULL) == 0);
	CHECK(pthread_join(b, NULL) == 0);
	CHECK_EQ(atomic_load(ball), 2 * rounds);
}

#endif

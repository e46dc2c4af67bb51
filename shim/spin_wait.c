/* The shim's pthread spin lock after its first exchange failed: a
 * test-and-test-and-set waiter that stays a spin lock (it never sleeps in the
 * kernel) but keeps off the lock's cache line while it is held.
 *
 * Backoff ([ANDERSON90], [CKEB]): between two read-only polls the waiter
 * pauses, 25 ns at first, twice as long after every poll or lost exchange
 * that finds the lock held, up to 1 us, less a random quarter so that
 * waiters do not poll in lock step.  A waiter that has seen the lock taken
 * again and again keeps away from the line, so the releasing thread usually
 * retakes it from its own cache instead of every release becoming a
 * cross-core transfer; the cap bounds how late a waiter notices a free lock,
 * and the short first delays how late it notices one released soon (a
 * first delay of 100 ns made the 99th-percentile wait 1.5x glibc's; see
 * docs/preload.md, "Spin locks").
 *
 * Yielding ([QSPIN]'s test-and-set fallback for guests and its paravirtual
 * spin-then-halt): the lock stays unfair, which lets any running thread take
 * it while a preempted one cannot, and the waiter polls with sched_yield
 * between reads instead of pausing when the holder may be the one waiting
 * for a CPU: at once with one usable CPU; when waiters that reached the cap
 * (a process-wide count) are as many as the usable CPUs; and after 50 us of
 * fruitless waiting, far longer than a spin lock is meant to be held. */
#include <sched.h>
#include <stdbool.h>
#include "arch/internal.h"
#include "shim/spin_wait.h"

#define FIRST_NS 25
#define CAP_NS 1000
#define LONG_NS 50000
#define SLICE_NS 10000   /* a configured policy waits at most this long at a time */

/* Waiters of this process that reached the cap, on a line of their own. */
static struct {
	_Atomic unsigned n;
} HWS_ALIGNED_LINE spinners;

static _Thread_local uint32_t seed;

/* The cycle counter where there is one (rdtsc, cntvct), else the clock. */
static inline uint64_t ticks(void)
{
#if defined(__x86_64__) || defined(__aarch64__)
	return hws_tsc();
#else
	return hws_now_ns();
#endif
}

/* Ticks per us: the counter's rate once it is known without waiting (on
 * CPUs whose CPUID does not give it, 20 ms after the first query), an
 * assumed 3 GHz until then: a wrong guess only scales the delays. */
static uint64_t ticks_per_us(void)
{
#if defined(__x86_64__) || defined(__aarch64__)
	static _Atomic uint64_t rate;
	/* relaxed: a self-contained value; racing stores write the same. */
	uint64_t r = atomic_load_explicit(&rate, memory_order_relaxed);
	if (!r) {
		r = hws_counter_hz_ready() / 1000000;
		if (!r)
			return 3000;
		atomic_store_explicit(&rate, r, memory_order_relaxed);
	}
	return r;
#else
	return 1000;
#endif
}

/* xorshift32, per thread, seeded from the counter and the thread's address. */
static uint32_t rnd(void)
{
	uint32_t x = seed;
	if (!x)
		x = ((uint32_t)ticks() ^ (uint32_t)(uintptr_t)&seed) | 1;
	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	return seed = x;
}

static void pause_ticks(uint64_t n)
{
	uint64_t start = ticks();
	do
		hws_cpu_relax();
	while (ticks() - start < n);
}

unsigned hws_spin_wait_acquire(_Atomic uint32_t *word, const hws_wait_t *policy,
			       unsigned ncpus)
{
	const uint64_t tpu = ticks_per_us(), cap = tpu * CAP_NS / 1000;
	const uint64_t start = ticks(), long_wait = tpu * LONG_NS / 1000;
	uint64_t delay = tpu * FIRST_NS / 1000 + 1;
	bool counted = false, yield = ncpus <= 1;
	unsigned yields = 0;
	uint32_t seen = HWS_SPIN_HELD;   /* what the last look found */

	for (;;) {
		if (yield) {
			hws_yield();
			yields++;
		} else if (policy) {
			hws_wait_while_eq32(word, seen, policy, hws_deadline_after_ns(SLICE_NS));
		} else {
			pause_ticks(delay - rnd() % (delay / 4 + 1));
		}
		/* relaxed: a read-only look that keeps the line shared while it is
		 * held; hws_spin_try is the acquire. */
		seen = atomic_load_explicit(word, memory_order_relaxed);
		if (hws_spin_is_free(seen)) {
			if (hws_spin_try(word))
				break;
			seen = HWS_SPIN_HELD;   /* taken by someone else first */
		}
		if (delay < cap) {
			delay = 2 * delay < cap ? 2 * delay : cap;
			continue;
		}
		if (!counted) {
			counted = true;
			/* relaxed: a count for a heuristic; it orders nothing. */
			atomic_fetch_add_explicit(&spinners.n, 1, memory_order_relaxed);
		}
		/* relaxed: as above. */
		yield = ncpus <= 1 || ticks() - start >= long_wait ||
			atomic_load_explicit(&spinners.n, memory_order_relaxed) >= ncpus;
	}
	if (counted)
		/* relaxed: as above. */
		atomic_fetch_sub_explicit(&spinners.n, 1, memory_order_relaxed);
	return yields;
}

void hws_spin_wait_atfork_child(void)
{
	/* relaxed: the child has one thread, and it is here. */
	atomic_store_explicit(&spinners.n, 0, memory_order_relaxed);
}

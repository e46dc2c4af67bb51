/* Barrier correctness for one kind: test_barrier <kind> unit|stress.
 *
 * Each thread publishes "I entered episode k" (arrived[t] = k + 1) before the
 * barrier and, after it, checks that every thread has entered episode k and
 * none is past episode k + 1.  The caller that gets HWS_BARRIER_LAST counts
 * it for the episode; at the end every episode must have exactly one, and
 * hws_barrier_episodes must equal the number of episodes.
 *   unit:   1, 2 and 3 threads, pause/futex/adaptive, a few thousand episodes.
 *   stress: 1..8 threads, spin/pause (up to the CPU count), yield, futex and
 *           adaptive, 10000 episodes, with and without random delays, and 8
 *           threads pinned to 2 CPUs under futex and adaptive. */
#include "sync/sync_test.h"
#include <hwsync/barrier.h>

#define MAXT 8

static hws_barrier_t *bar;
static unsigned nthr, episodes, pin_cpus;
static int delays;
static _Atomic uint32_t arrived[MAXT];
static _Atomic uint32_t *last;

static void *worker(void *arg)
{
	unsigned me = (unsigned)(uintptr_t)arg;
	uint64_t seed = 0x9e3779b97f4a7c15ull * (me + 1);

	if (pin_cpus)
		sync_pin_first(pin_cpus);
	for (unsigned k = 0; k < episodes; k++) {
		if (delays)
			sync_random_delay(&seed);
		/* relaxed: the barrier must order it; the check below is the test. */
		atomic_store_explicit(&arrived[me], k + 1, memory_order_relaxed);
		int rc = hws_barrier_wait(bar);
		if (rc != 0 && rc != HWS_BARRIER_LAST) {
			fprintf(stderr, "barrier wait: %d (%s)\n", rc, hws_last_error());
			exit(1);
		}
		if (rc == HWS_BARRIER_LAST)
			atomic_fetch_add_explicit(&last[k], 1, memory_order_relaxed);
		for (unsigned j = 0; j < nthr; j++) {
			uint32_t v = atomic_load_explicit(&arrived[j], memory_order_relaxed);
			if (v != k + 1 && v != k + 2) {
				fprintf(stderr, "thread %u after episode %u: thread %u at %u\n",
					me, k, j, v);
				exit(1);
			}
		}
	}
	return NULL;
}

static void run(const char *kind, const char *policy, unsigned n, unsigned eps, int with_delays,
		unsigned pin)
{
	pthread_t t[MAXT];
	uint64_t t0 = test_now_ns();
	int rc = hws_barrier_create(&bar, kind, n, policy);
	if (rc == ENOTSUP) {
		fprintf(stderr, "  %s/%s: skipped: %s\n", kind, policy, hws_last_error());
		return;
	}
	if (rc) {
		fprintf(stderr, "create %s n=%u %s: %s\n", kind, n, policy, hws_last_error());
		exit(1);
	}
	CHECK(!strcmp(hws_barrier_kind(bar), kind));
	nthr = n, episodes = eps, delays = with_delays, pin_cpus = pin;
	last = calloc(eps, sizeof *last);
	CHECK(last);
	for (unsigned i = 0; i < MAXT; i++)
		atomic_store(&arrived[i], 0);
	for (unsigned i = 0; i < n; i++)
		CHECK(pthread_create(&t[i], NULL, worker, (void *)(uintptr_t)i) == 0);
	for (unsigned i = 0; i < n; i++)
		CHECK(pthread_join(t[i], NULL) == 0);
	for (unsigned k = 0; k < eps; k++)
		if (atomic_load(&last[k]) != 1) {
			fprintf(stderr, "%s/%s n=%u: episode %u had %u LAST callers\n", kind, policy,
				n, k, atomic_load(&last[k]));
			exit(1);
		}
	CHECK_EQ(hws_barrier_episodes(bar), eps);
	free(last);
	hws_barrier_destroy(bar);
	fprintf(stderr, "  %-13s %-8s n=%u eps=%-5u delays=%d pin=%u  %.2f s\n", kind, policy, n,
		eps, with_delays, pin, (double)(test_now_ns() - t0) / 1e9);
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: test_barrier <kind> unit|stress\n");
		return 2;
	}
	const char *kind = argv[1];
	int pair = !strcmp(kind, "pair");
	unsigned ncpu = sync_ncpus();

	if (!strcmp(argv[2], "unit")) {
		unsigned eps = sync_scale(3000);
		if (!pair)
			run(kind, "pause", 1, eps, 0, 0);
		run(kind, "pause", 2, eps, 0, 0);
		run(kind, "futex", 2, eps, 1, 0);
		run(kind, "adaptive", 2, eps, 0, 0);
		if (!pair)
			run(kind, "futex", 3, eps, 0, 0);
		if (!pair)
			run(kind, "futex", 6, eps, 1, 0);
		return 0;
	}
	unsigned eps = sync_scale(10000), deps = sync_scale(2000);
	static const char *const spinning[] = { "spin", "pause" };
	static const char *const blocking[] = { "futex", "adaptive" };
	static const unsigned counts[] = { 2, 3, 4, 5, 8 };

	for (unsigned p = 0; p < 2; p++)
		for (unsigned n = pair ? 2 : 1; n <= (pair ? 2 : ncpu < MAXT ? ncpu : MAXT); n++) {
			run(kind, spinning[p], n, eps, 0, 0);
			run(kind, spinning[p], n, deps, 1, 0);
		}
	for (unsigned p = 0; p < 2; p++)
		for (unsigned c = 0; c < sizeof counts / sizeof counts[0]; c++) {
			unsigned n = counts[c];
			if (pair && n != 2)
				continue;
			run(kind, blocking[p], n, eps, 0, 0);
			run(kind, blocking[p], n, deps, 1, 0);
		}
	if (!pair) {
		run(kind, "yield", 4, deps, 1, 0);
		/* Oversubscribed: 8 threads on 2 CPUs. */
		run(kind, "futex", 8, eps, 0, 2);
		run(kind, "adaptive", 8, eps, 1, 2);
	}
	return 0;
}

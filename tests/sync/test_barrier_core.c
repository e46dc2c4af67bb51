/* The in-place central barrier core, as a pthread_barrier_t under the shim:
 * 1..8 threads, many episodes, under pause, futex and adaptive.  In each
 * step every thread writes the step number into its own slot (plain
 * memory), passes the barrier, checks that every slot holds this step (no
 * thread is a phase ahead or behind, and the barrier published the writes),
 * and passes the barrier again before the next write.  Exactly one caller
 * of each episode gets HWS_BARRIER_LAST.  One run starts with the episode
 * word just below its wrap. */
#include "sync/sync_test.h"
#include "tests/locks/core_test.h"
#include <hwsync/barrier.h>

#define MAXT 8

static hws_barrier_central_core_t bar;
static const hws_wait_t *W;
static unsigned nthreads, steps;
static unsigned slot[MAXT];              /* each written by its thread only */
static _Atomic unsigned char *lasts;     /* per episode: HWS_BARRIER_LAST count */

static void *runner(void *p)
{
	unsigned me = *(unsigned *)p;

	for (unsigned s = 1; s <= steps; s++) {
		slot[me] = s;
		int rc = hws_barrier_central_core_wait(&bar, W);
		CHECK(rc == 0 || rc == HWS_BARRIER_LAST);
		if (rc)
			atomic_fetch_add(&lasts[2 * (s - 1)], 1);
		for (unsigned t = 0; t < nthreads; t++)
			CHECK_EQ(slot[t], s);
		rc = hws_barrier_central_core_wait(&bar, W);
		CHECK(rc == 0 || rc == HWS_BARRIER_LAST);
		if (rc)
			atomic_fetch_add(&lasts[2 * (s - 1) + 1], 1);
	}
	return NULL;
}

static void run(const char *policy, unsigned n, unsigned nsteps, uint32_t first_episode)
{
	hws_wait_t w = core_policy(policy);
	unsigned ids[MAXT];

	W = &w, nthreads = n, steps = nsteps;
	memset(&bar, 0, sizeof bar);
	bar.n = n;
	atomic_store(&bar.release, first_episode);
	CHECK(lasts = calloc(2 * nsteps, 1));
	memset(slot, 0, sizeof slot);
	for (unsigned t = 0; t < n; t++)
		ids[t] = t;
	test_run_threads(n, runner, ids, sizeof ids[0]);
	for (unsigned e = 0; e < 2 * nsteps; e++)
		CHECK_EQ(lasts[e], 1);
	CHECK_EQ(atomic_load(&bar.count), 0);
	CHECK_EQ(atomic_load(&bar.release), first_episode + 2 * nsteps);
	free(lasts);
}

int main(void)
{
	unsigned ncpus = sync_ncpus(), many = lock_test_scale(4000);

	for (int p = 0; p < NCORE_POLICIES; p++) {
		uint64_t t0 = test_now_ns();
		for (unsigned n = 1; n <= MAXT; n++) {
			/* polling waiters on a busy machine, the more so when
			 * more than CPUs: an episode may wait for time slices */
			unsigned k = many / n;
			if (!strcmp(core_policies[p], "pause"))
				k = n > ncpus ? 5 : k / 4;
			run(core_policies[p], n, k, 0);
		}
		printf("%-8s 1..%u threads, phases never mixed, one LAST per episode (%.0f ms)\n",
		       core_policies[p], MAXT, (test_now_ns() - t0) / 1e6);
	}
	run("futex", 3, 100, UINT32_MAX - 50);
	printf("futex    3 threads across the wrap of the episode word\n");
	return 0;
}

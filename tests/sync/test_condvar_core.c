/* The in-place condvar core with an in-place lock core, as a pthread_cond_t
 * and its mutex under the shim; under pause, futex and adaptive, each with
 * another lock kind.
 *  - Ping-pong: two threads pass a turn back and forth, 100000 rounds in
 *    all (scaled; fewer for pause), each waiting for its turn with a long
 *    deadline; the wake-up is a signal or a broadcast, under the lock or
 *    just after it.  A lost wake-up leaves both threads waiting until that
 *    deadline, which fails the test.
 *  - Rotation: three threads pass the turn round with broadcasts, waiting
 *    with short deadlines (some already past) mixed with plain waits; a
 *    timed-out waiter re-checks its turn, as callers must.
 * Afterwards no waiter is left announced (hws_condvar_core_busy is 0). */
#include "sync/sync_test.h"
#include "tests/locks/core_test.h"
#include <hwsync/condvar.h>

#define LONG_NS 20000000000ull     /* a plain wait that times out lost a wake-up */

static hws_condvar_core_t cv;
static unsigned char lockmem[40];       /* the mutex core, in place */
static const struct core_kind *LK;
static const hws_wait_t *W;
static unsigned nthreads, rounds, timed_mix;
static unsigned turn;                   /* under the lock */
static unsigned long passes;            /* under the lock */

/* Wait on cv with the lock held, as pthread_cond_timedwait does. */
static int cv_wait(uint64_t deadline_ns)
{
	uint32_t seq = hws_condvar_core_enter(&cv);
	CHECK_EQ(LK->release(lockmem, W), 0);
	int rc = hws_condvar_core_block(&cv, seq, W, deadline_ns);
	hws_condvar_core_leave(&cv);
	CHECK_EQ(LK->acquire(lockmem, W), 0);
	return rc;
}

struct arg { unsigned id; uint64_t seed; unsigned long timeouts; };

static void *player(void *p)
{
	struct arg *a = p;

	for (unsigned r = 0; r < rounds; r++) {
		uint32_t x = test_rand(&a->seed);
		CHECK_EQ(LK->acquire(lockmem, W), 0);
		while (turn != a->id) {
			uint64_t dl = test_now_ns() + LONG_NS;
			int plain = 1;
			if (timed_mix && x % 4 == 0)
				dl = test_now_ns() + (x >> 4) % 50000, plain = 0;
			else if (timed_mix && x % 4 == 1)
				dl = test_now_ns() - 1, plain = 0;     /* already past */
			int rc = cv_wait(dl);
			CHECK(rc == 0 || rc == ETIMEDOUT);
			if (rc == ETIMEDOUT && plain) {
				fprintf(stderr, "thread %u: no wake-up in %llu s\n", a->id,
					LONG_NS / 1000000000ull);
				exit(1);
			}
			a->timeouts += rc == ETIMEDOUT;
			x = test_rand(&a->seed);
		}
		turn = (turn + 1) % nthreads;
		passes++;
		/* 3 threads need a broadcast: a signal may wake the one whose turn
		 * it is not.  2 threads: a signal, under the lock or after it. */
		int bcast = nthreads > 2 || (x & 16), after = nthreads == 2 && (x & 32);
		if (!after)
			hws_condvar_core_wake(&cv, bcast ? HWS_WAKE_ALL : 1);
		CHECK_EQ(LK->release(lockmem, W), 0);
		if (after)
			hws_condvar_core_wake(&cv, bcast ? HWS_WAKE_ALL : 1);
	}
	return NULL;
}

static void play(const char *policy, const char *lock, unsigned n, unsigned total, int mix)
{
	hws_wait_t w = core_policy(policy);
	struct arg args[3];
	unsigned long timeouts = 0;

	W = &w;
	LK = core_kind_find(lock);
	memset(lockmem, 0, sizeof lockmem);
	memset(&cv, 0, sizeof cv);
	nthreads = n, rounds = total / n, timed_mix = mix;
	turn = 0, passes = 0;
	for (unsigned t = 0; t < n; t++)
		args[t] = (struct arg){ .id = t, .seed = 0x9e3779b97f4a7c15ull * (t + 1) + total };
	uint64_t t0 = test_now_ns();
	test_run_threads(n, player, args, sizeof args[0]);
	for (unsigned t = 0; t < n; t++)
		timeouts += args[t].timeouts;
	CHECK_EQ(passes, rounds * n);
	CHECK_EQ(hws_condvar_core_busy(&cv), 0);
	CHECK_EQ(atomic_load(&cv.waiters), 0);
	printf("%-8s %-8s %u threads: %lu turns, %lu timed out (%.0f ms)\n", policy, lock, n,
	       passes, timeouts, (test_now_ns() - t0) / 1e6);
}

int main(void)
{
	static const char *const locks[NCORE_POLICIES] = { "mutex", "ticket16", "mcs" };
	unsigned total = lock_test_scale(100000) / NCORE_POLICIES;

	for (int p = 0; p < NCORE_POLICIES; p++) {
		/* Polling waiters on a busy machine: every turn may wait for a
		 * time slice of the thread whose turn it is; fewer turns. */
		int polling = !strcmp(core_policies[p], "pause");
		play(core_policies[p], locks[p], 2, polling ? total / 10 : total, 0);
		play(core_policies[p], locks[p], 3, polling ? total / 100 : total / 4, 1);
	}
	return 0;
}

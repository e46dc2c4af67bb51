/* auto: mutual exclusion and progress in every mode it can be in, with the
 * mode switched while threads hold, spin, sleep and claim.
 *
 * 2x-CPUs threads (at least 4) take the lock by acquire, try and timed
 * attempts, sometimes holding it across a short sleep so that waiters park
 * and claims form; a switcher thread changes the mode every ~0.5 ms.  Both
 * forms run: the typed lock with its learning word and the 4-byte core that
 * learns in the hashed table.  The counter, written without atomics inside
 * the lock, must equal the acquisitions (ThreadSanitizer also checks it), and
 * every thread must have acquired. */
#include "tests/locks/lock_test.h"
#include "prims/lock_auto_internal.h"
#include <hwsync/lock_auto.h>

static hws_auto_t typed;
static hws_auto_core_t core4;
static int use_core;
static hws_wait_t policy;
static unsigned long counter;
static _Atomic int stop;

struct arg { uint64_t seed; unsigned long done; };

static int acq(void)
{
	return use_core ? hws_auto_core_acquire(&core4, NULL, &policy) : hws_auto_acquire(&typed);
}
static int try_(void) { return use_core ? hws_auto_core_try(&core4) : hws_auto_try(&typed); }
static int timed(uint64_t dl)
{
	return use_core ? hws_auto_core_timed_ns(&core4, NULL, &policy, dl)
			: hws_auto_timed_ns(&typed, dl);
}
static void rel(void)
{
	CHECK_EQ(use_core ? hws_auto_core_release(&core4) : hws_auto_release(&typed), 0);
}

static void *worker(void *p)
{
	struct arg *a = p;
	/* relaxed: only a stop flag. */
	while (!atomic_load_explicit(&stop, memory_order_relaxed) || a->done == 0) {
		uint32_t r = test_rand(&a->seed);
		int rc;
		if (r % 8 == 0)
			rc = try_();
		else if (r % 8 == 1)
			rc = timed(test_now_ns() + r % 300000);
		else
			rc = acq();
		if (rc) {
			CHECK(rc == EBUSY || rc == ETIMEDOUT);
			continue;
		}
		unsigned long c = counter;
		if (r % 64 == 2)
			usleep(50 + r % 200);   /* hold long: waiters park and claim */
		else
			test_spin_ns(r % 300);
		counter = c + 1;
		rel();
		a->done++;
		test_spin_ns(r % 200);   /* work outside the lock */
	}
	return NULL;
}

static void *switcher(void *p)
{
	uint64_t seed = 42, *switches = p;
	/* relaxed: only a stop flag. */
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		/* relaxed: the mode is a hint each wait reads on its own. */
		atomic_store_explicit(&hws_auto_test_mode, (int)(test_rand(&seed) % HWS_AUTO_NMODES),
				      memory_order_relaxed);
		(*switches)++;
		usleep(500);
	}
	return NULL;
}

int main(void)
{
	unsigned n = 2 * test_ncpus() < 4 ? 4 : 2 * test_ncpus();
	uint64_t run_ns = lock_test_scale(600) * 1000000ull;
	struct arg *args = calloc(n, sizeof *args);
	CHECK(args);
	CHECK_EQ(hws_wait_init(&policy, "futex"), 0);
	for (use_core = 0; use_core < 2; use_core++) {
		pthread_t sw, *th = calloc(n, sizeof *th);
		uint64_t switches = 0;
		CHECK(th);
		hws_auto_init(&typed, &policy);
		atomic_store(&core4.state, 0);
		counter = 0;
		atomic_store(&stop, 0);
		CHECK_EQ(pthread_create(&sw, NULL, switcher, &switches), 0);
		for (unsigned t = 0; t < n; t++) {
			args[t] = (struct arg){ .seed = 0x9e3779b97f4a7c15ull * (t + 1) + (uint64_t)use_core };
			CHECK_EQ(pthread_create(&th[t], NULL, worker, &args[t]), 0);
		}
		usleep((useconds_t)(run_ns / 1000));
		atomic_store(&stop, 1);
		unsigned long total = 0;
		for (unsigned t = 0; t < n; t++) {
			CHECK_EQ(pthread_join(th[t], NULL), 0);
			CHECK(args[t].done > 0);
			total += args[t].done;
		}
		CHECK_EQ(pthread_join(sw, NULL), 0);
		CHECK_EQ(counter, total);
		uint32_t s = use_core ? atomic_load(&core4.state) : atomic_load(&typed.core.state);
		CHECK_EQ(s & (HWS_AUTO_LOCKED | HWS_AUTO_STARVING | HWS_AUTO_SPIN_MASK), 0);
		printf("%s: %u threads, %lu acquisitions, %llu mode switches ok\n",
		       use_core ? "4-byte core" : "typed lock", n, total, (unsigned long long)switches);
		free(th);
	}
	atomic_store(&hws_auto_test_mode, HWS_AUTO_ADAPT);
	free(args);
	return 0;
}

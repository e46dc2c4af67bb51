/* Mutual exclusion of one lock kind (argv[1]) under every wait policy
 * available here: threads increment a plain (non-atomic) counter inside the
 * lock; the total must be exact.  Each thread mixes acquire, try (retried
 * until it succeeds) and timed acquire with short deadlines (retried), so the
 * give-up paths of the queue locks (abandoned nodes) run under contention. */
#include "tests/locks/lock_test.h"

static hws_lock_t *lock;
static unsigned long counter;      /* protected by lock, deliberately plain */
static struct lock_run R;

struct arg { uint64_t seed; unsigned long done, timeouts, busy; };

static void *worker(void *p)
{
	struct arg *a = p;
	lock_run_start(&R);
	for (unsigned i = 0; lock_run_more(&R, i); i++) {
		unsigned how = test_rand(&a->seed) % 8;
		int rc;
		if (how == 0) {
			while ((rc = hws_lock_try(lock)) == EBUSY)
				a->busy++, sched_yield();
		} else if (how == 1) {
			for (;;) {
				struct timespec d = test_deadline_ts(test_rand(&a->seed) % 20000);
				if ((rc = hws_lock_timed(lock, &d)) != ETIMEDOUT)
					break;
				a->timeouts++;
			}
		} else {
			rc = hws_lock_acquire(lock);
		}
		CHECK_EQ(rc, 0);
		unsigned long c = counter;
		if ((i & 63) == 0)
			sched_yield();     /* widen the window a broken lock would show */
		counter = c + 1;
		CHECK_EQ(hws_lock_release(lock), 0);
		a->done++;
		test_spin_ns(test_rand(&a->seed) % 300);   /* work outside the lock */
	}
	return NULL;
}

int main(int argc, char **argv)
{
	const char *kind = argc > 1 ? argv[1] : "auto";
	unsigned nthreads = test_ncpus() < 2 ? 2 : test_ncpus() > 4 ? 4 : test_ncpus();
	struct arg args[4];
	unsigned long timeouts = 0, busy = 0;

	CHECK(kind_known(kind));
	for (int k = 0; k < HWS_WAIT_NKINDS; k++) {
		const char *name = hws_wait_kind_name((enum hws_wait_kind)k);
		if (!policy_usable((enum hws_wait_kind)k)) {
			printf("%-10s %-10s skipped: not available here\n", kind, name);
			continue;
		}
		/* Pure polling waiters on a queue lock convoy when a waiter is
		 * preempted; keep their share of the budget small. */
		int polling = k != HWS_WAIT_FUTEX && k != HWS_WAIT_ADAPTIVE && k != HWS_WAIT_YIELD;
		uint64_t run_ns = lock_test_scale(polling ? 100 : 200) * 1000000ull;
		CHECK_EQ(hws_lock_create(&lock, kind, name), 0);
		counter = 0;
		lock_run_reset(&R, nthreads, run_ns);
		for (unsigned t = 0; t < nthreads; t++)
			args[t] = (struct arg){ .seed = 0x9e3779b97f4a7c15ull * (t + 1) + (uint64_t)k };
		uint64_t t0 = test_now_ns();
		test_run_threads(nthreads, worker, args, sizeof args[0]);
		unsigned long total = 0;
		for (unsigned t = 0; t < nthreads; t++) {
			total += args[t].done;
			timeouts += args[t].timeouts, busy += args[t].busy;
		}
		CHECK_EQ(counter, total);
		CHECK(total > 0);
		printf("%-10s %-10s %u threads: %lu ok (%.0f ms)\n", hws_lock_kind(lock), name,
		       nthreads, total, (test_now_ns() - t0) / 1e6);
		hws_lock_destroy(lock);
	}
	printf("give-ups exercised: %lu timed out, %lu busy tries\n", timeouts, busy);
	return 0;
}

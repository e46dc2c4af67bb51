/* Oversubscription: 4x more threads than CPUs contend for one lock of the
 * kind argv[1], under the blocking policies (adaptive, futex).  Preempted
 * holders and preempted queue waiters must not stall the others for long;
 * ctest's timeout bounds the run.  The count must be exact. */
#include "tests/locks/lock_test.h"

static hws_lock_t *lock;
static unsigned long counter;
static struct lock_run R;

struct arg { uint64_t seed; unsigned long done; };

static void *worker(void *p)
{
	struct arg *a = p;
	lock_run_start(&R);
	for (unsigned i = 0; lock_run_more(&R, i); i++) {
		CHECK_EQ(hws_lock_acquire(lock), 0);
		counter++;
		CHECK_EQ(hws_lock_release(lock), 0);
		a->done++;
		test_spin_ns(test_rand(&a->seed) % 500);   /* work outside the lock */
	}
	return NULL;
}

int main(int argc, char **argv)
{
	static const char *const policies[] = { "adaptive", "futex" };
	const char *kind = argc > 1 ? argv[1] : "auto";
	unsigned nthreads = 4 * test_ncpus();

	CHECK(kind_known(kind));
	uint64_t run_ns = lock_test_scale(400) * 1000000ull;
	struct arg *args = calloc(nthreads, sizeof *args);
	CHECK(args);
	for (int p = 0; p < 2; p++) {
		uint64_t t0 = test_now_ns();
		CHECK_EQ(hws_lock_create(&lock, kind, policies[p]), 0);
		CHECK_EQ(hws_lock_stats_enable(lock, 1), 0);
		counter = 0;
		lock_run_reset(&R, nthreads, run_ns);
		for (unsigned t = 0; t < nthreads; t++)
			args[t] = (struct arg){ .seed = 0x9e3779b97f4a7c15ull * (t + 1) };
		test_run_threads(nthreads, worker, args, sizeof *args);
		unsigned long total = 0;
		for (unsigned t = 0; t < nthreads; t++)
			total += args[t].done;
		CHECK_EQ(counter, total);
		struct hws_lock_stats st;
		CHECK_EQ(hws_lock_stats_get(lock, &st), 0);
		CHECK_EQ(st.acquisitions, counter);
		printf("%-10s %-9s %u threads: %lu ok (%.0f ms; first try %llu, after spin %llu, "
		       "after sleep %llu, syscalls %llu)\n", hws_lock_kind(lock), policies[p],
		       nthreads, total, (test_now_ns() - t0) / 1e6,
		       (unsigned long long)st.first_try, (unsigned long long)st.after_spin,
		       (unsigned long long)st.after_sleep, (unsigned long long)st.syscalls);
		hws_lock_destroy(lock);
	}
	free(args);
	return 0;
}

/* Helpers for the lock tests. */
#ifndef HWS_LOCK_TEST_H
#define HWS_LOCK_TEST_H

#include "common/test.h"
#include <hwsync/lock.h>
#include <hwsync/wait.h>
#include <stdatomic.h>

/* Work per test shrinks under ThreadSanitizer and on arm64 (run under
 * qemu-user in CI), on top of HWS_TEST_SCALE. */
static inline unsigned lock_test_scale(unsigned n)
{
	n = test_scale(n);
#if defined(HWS_TSAN) || defined(__aarch64__)
	n = n / 8 ? n / 8 : 1;
#endif
	return n;
}

static inline unsigned test_ncpus(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	return n > 0 ? (unsigned)n : 1;
}

/* The policies to exercise: every kind available here, default parameters. */
static inline int policy_usable(enum hws_wait_kind k)
{
	return hws_wait_available(k, NULL) == 0;
}

/* A kind name is known to hws_lock_create. */
static inline int kind_known(const char *kind)
{
	for (const char *const *k = hws_lock_kinds(); *k; k++)
		if (!strcmp(*k, kind))
			return 1;
	return 0;
}

/* A contended run of a fixed length: it starts when the last of its threads
 * arrives, so that the threads really contend rather than the first one
 * running alone while the others are created, and lasts run_ns from then.
 * Set up with lock_run_reset before the threads start; each thread calls
 * lock_run_start, then loops while lock_run_more. */
struct lock_run {
	uint64_t run_ns;
	unsigned nthreads;
	_Atomic unsigned started;
	_Atomic uint64_t end_ns;   /* 0 until the last thread arrives */
};

static inline void lock_run_reset(struct lock_run *r, unsigned nthreads, uint64_t run_ns)
{
	r->run_ns = run_ns;
	r->nthreads = nthreads;
	atomic_store(&r->started, 0);
	atomic_store(&r->end_ns, 0);
}

static inline void lock_run_start(struct lock_run *r)
{
	if (atomic_fetch_add(&r->started, 1) + 1 == r->nthreads)
		atomic_store(&r->end_ns, test_now_ns() + r->run_ns);
	while (!atomic_load(&r->end_ns))
		sched_yield();
}

/* Whether round i runs: at least one round each, then until end_ns
 * (relaxed: end_ns is only a time bound, and lock_run_start saw it set). */
static inline int lock_run_more(struct lock_run *r, unsigned i)
{
	return i == 0 || test_now_ns() < atomic_load_explicit(&r->end_ns, memory_order_relaxed);
}

#endif

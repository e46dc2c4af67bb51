/* pthread_barrier_*: process-private barriers go to an hwsync barrier of the
 * HWSYNC_BARRIER kind; process-shared ones, and counts the kind cannot serve
 * (e.g. "pair" for other than two threads), stay with glibc.
 *
 * Layout in pthread_barrier_t (glibc keeps its futex flag, 0 or 128, in the
 * int at offset 12): BAR_MAGIC there, the hws_barrier_t * at offset 16, and at
 * offset 24 the number of threads inside pthread_barrier_wait, so that
 * destroy waits for the last ones to leave (as glibc does) before freeing.
 * pthread_barrier_wait is not a cancellation point.
 */
#include <errno.h>
#include <sched.h>
#include "preload/shim.h"

#define BAR_MAGIC 0x48575342   /* "HWSB" */
#define MAGIC(b) ((_Atomic int *)((char *)(void *)(b) + 12))
#define PTR(b) ((hws_barrier_t **)((char *)(void *)(b) + 16))
#define INSIDE(b) ((_Atomic uint32_t *)((char *)(void *)(b) + 24))

_Static_assert(sizeof(pthread_barrier_t) >= 32, "pthread_barrier_t layout");

static inline int ours(pthread_barrier_t *b)
{
	/* acquire: pairs with the release store in init (PTR is published). */
	return atomic_load_explicit(MAGIC(b), memory_order_acquire) == BAR_MAGIC;
}

HWS_EXPORT int pthread_barrier_init(pthread_barrier_t *b, const pthread_barrierattr_t *a,
				    unsigned count)
{
	int pshared = PTHREAD_PROCESS_PRIVATE;
	hws_barrier_t *hb;
	if (a)
		pthread_barrierattr_getpshared(a, &pshared);
	if (count == 0)
		return EINVAL;
	if (pshared != PTHREAD_PROCESS_PRIVATE || !hws_shim_on()) {
		if (pshared != PTHREAD_PROCESS_PRIVATE)
			hws_pass(HWS_PASS_BARRIER_PSHARED);
		return hws_native.barrier_init ? hws_native.barrier_init(b, a, count) : ENOSYS;
	}
	if (!hws_cfg.barriers) {
		hws_pass(HWS_PASS_NO_BARRIERS);
		return hws_native.barrier_init(b, a, count);
	}
	if (hws_barrier_create(&hb, hws_cfg.barrier_kind, count, hws_cfg.wait_spec)) {
		hws_pass(HWS_PASS_BARRIER_UNFIT);
		return hws_native.barrier_init(b, a, count);
	}
	*PTR(b) = hb;
	/* relaxed: init is not concurrent with use. */
	atomic_store_explicit(INSIDE(b), 0, memory_order_relaxed);
	/* release: publishes PTR. */
	atomic_store_explicit(MAGIC(b), BAR_MAGIC, memory_order_release);
	return 0;
}

HWS_EXPORT int pthread_barrier_destroy(pthread_barrier_t *b)
{
	if (!ours(b))
		return hws_native.barrier_destroy ? hws_native.barrier_destroy(b) : 0;
	/* acquire: pairs with the release decrement in pthread_barrier_wait. */
	while (atomic_load_explicit(INSIDE(b), memory_order_acquire))
		sched_yield();
	hws_barrier_destroy(*PTR(b));
	/* relaxed: destroy is not concurrent with use. */
	atomic_store_explicit(MAGIC(b), 0, memory_order_relaxed);
	return 0;
}

HWS_EXPORT int pthread_barrier_wait(pthread_barrier_t *b)
{
	if (!ours(b))
		return hws_native.barrier_wait ? hws_native.barrier_wait(b) : ENOSYS;
	uint64_t t0 = hws_cfg.stats || hws_cfg.trace ? hws_now_ns() : 0;
	/* relaxed: only destroy reads it, after the release below. */
	atomic_fetch_add_explicit(INSIDE(b), 1, memory_order_relaxed);
	int rc = hws_barrier_wait(*PTR(b));
	if (hws_cfg.stats || hws_cfg.trace) {
		uint64_t t1 = hws_now_ns();
		if (hws_cfg.stats)
			hws_stats_count_barrier(HWS_FAM_BARRIER, rc == HWS_BARRIER_LAST, t1 - t0);
		if (hws_cfg.trace)
			hws_trace_span("pthread_barrier wait", b, t0, t1);
	}
	/* release: pairs with the acquire load in destroy (we are done with b). */
	atomic_fetch_sub_explicit(INSIDE(b), 1, memory_order_release);
	return rc == HWS_BARRIER_LAST ? PTHREAD_BARRIER_SERIAL_THREAD : rc;
}

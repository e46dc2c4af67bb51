/* pthread_barrier_*: process-private barriers run the library's in-place
 * central barrier (hws_barrier_central_core_t, hwsync/barrier.h) inside the
 * pthread_barrier_t; process-shared ones stay with glibc.
 *
 * Only "central" fits: the other kinds need per-thread slots, flags or a
 * topology that 32 bytes cannot hold, so HWSYNC_BARRIER applies to OpenMP
 * team barriers (one per team, made by the shim) and pthread barriers are
 * always central.  Nothing is allocated, so an abandoned barrier leaks
 * nothing.
 *
 * Layout in pthread_barrier_t (glibc keeps its futex flag, 0 or 128, in the
 * int at offset 12): the core in bytes 0-11, BAR_MAGIC at offset 12, and at
 * offset 16 the number of threads inside pthread_barrier_wait, so that
 * destroy waits for the last ones to leave (as glibc does).
 * pthread_barrier_wait is not a cancellation point.
 */
#include <errno.h>
#include <sched.h>
#include <string.h>
#include <hwsync/barrier.h>
#include "shim/common.h"
#include "shim/config.h"
#include "shim/family.h"
#include "shim/natives.h"
#include "shim/passthrough.h"
#include "shim/startup.h"
#include "shim/stats.h"
#include "shim/trace.h"

#define BAR_MAGIC 0x48575342   /* "HWSB" */
#define CORE(b) ((hws_barrier_central_core_t *)(void *)(b))
#define MAGIC(b) ((_Atomic int *)((char *)(void *)(b) + 12))
#define INSIDE(b) ((_Atomic uint32_t *)((char *)(void *)(b) + 16))

_Static_assert(sizeof(pthread_barrier_t) >= 20 && sizeof(hws_barrier_central_core_t) <= 12,
	       "pthread_barrier_t layout");

static inline int ours(pthread_barrier_t *b)
{
	/* relaxed: written at init, which is not concurrent with use. */
	return atomic_load_explicit(MAGIC(b), memory_order_relaxed) == BAR_MAGIC;
}

HWS_EXPORT int pthread_barrier_init(pthread_barrier_t *b, const pthread_barrierattr_t *a,
				    unsigned count)
{
	int pshared = PTHREAD_PROCESS_PRIVATE;
	if (a)
		pthread_barrierattr_getpshared(a, &pshared);
	if (count == 0)
		return EINVAL;
	if (pshared != PTHREAD_PROCESS_PRIVATE || !hws_shim_on()) {
		if (pshared != PTHREAD_PROCESS_PRIVATE)
			hws_pass(HWS_PASS_BARRIER_PSHARED);
		return hws_native.barrier_init ? hws_native.barrier_init(b, a, count) : ENOSYS;
	}
	memset(b, 0, sizeof *b);
	CORE(b)->n = count;
	/* relaxed: init is not concurrent with use. */
	atomic_store_explicit(MAGIC(b), BAR_MAGIC, memory_order_relaxed);
	return 0;
}

HWS_EXPORT int pthread_barrier_destroy(pthread_barrier_t *b)
{
	if (!ours(b))
		return hws_native.barrier_destroy ? hws_native.barrier_destroy(b) : 0;
	/* acquire: pairs with the release decrement in pthread_barrier_wait. */
	while (atomic_load_explicit(INSIDE(b), memory_order_acquire))
		hws_yield();
	/* relaxed: destroy is not concurrent with use. */
	atomic_store_explicit(MAGIC(b), 0, memory_order_relaxed);
	return 0;
}

HWS_EXPORT int pthread_barrier_wait(pthread_barrier_t *b)
{
	if (!ours(b))
		return hws_native.barrier_wait ? hws_native.barrier_wait(b) : ENOSYS;
	uint64_t t0 = hws_cfg.instrument & HWS_INSTR_COUNT ? hws_now_ns() : 0;
	/* relaxed: only destroy reads it, after the release below. */
	atomic_fetch_add_explicit(INSIDE(b), 1, memory_order_relaxed);
	int rc = hws_barrier_central_core_wait(CORE(b), &hws_cfg.wait);
	if (hws_cfg.instrument & HWS_INSTR_COUNT) {
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

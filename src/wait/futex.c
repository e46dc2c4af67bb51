/* futex policy: sleep in the kernel (FUTEX_WAIT_BITSET, private, absolute
 * CLOCK_MONOTONIC deadline) and the waker side with sleeper accounting, so
 * that a wake with nobody asleep costs no system call (see wait.h). */
#include <errno.h>
#include <linux/futex.h>
#include <time.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "wait/internal.h"

_Thread_local struct hws_wait_counters hws_wait_tls;
_Thread_local int hws_wait_intr;

/* Sleeper counters, one cache line each, indexed by a hash of the address. */
#define SLEEPER_BUCKETS 256
static struct {
	_Atomic uint32_t n;
	char pad[HWS_CACHELINE - sizeof(uint32_t)];
} sleepers[SLEEPER_BUCKETS] HWS_ALIGNED_LINE;

static inline _Atomic uint32_t *sleepers_of(const void *addr)
{
	uintptr_t x = (uintptr_t)addr >> 2;
	x ^= x >> 17;
	x *= 0x9e3779b97f4a7c15ull;
	return &sleepers[(x >> 40) % SLEEPER_BUCKETS].n;
}

int hws_futex_sleep(const _Atomic uint32_t *a, uint32_t old, uint64_t deadline_ns)
{
	_Atomic uint32_t *n = sleepers_of(a);
	struct timespec ts, *tsp = NULL;
	int rc = 0;

	/* seq_cst increment, then seq_cst re-read: with the waker's store +
	 * seq_cst fence + counter read this is the Dekker pattern: one of the two
	 * sides sees the other's write, so no wake is lost. */
	atomic_fetch_add_explicit(n, 1, memory_order_seq_cst);
	if (atomic_load_explicit(a, memory_order_seq_cst) == old) {
		if (deadline_ns != HWS_FOREVER) {
			ts.tv_sec = (time_t)(deadline_ns / 1000000000ull);
			ts.tv_nsec = (long)(deadline_ns % 1000000000ull);
			tsp = &ts;
		}
		hws_wait_tls.syscalls++;
		/* The kernel re-checks *a == old under its hash-bucket lock. */
		if (syscall(SYS_futex, a, FUTEX_WAIT_BITSET | FUTEX_PRIVATE_FLAG, old, tsp,
			    NULL, FUTEX_BITSET_MATCH_ANY) == 0)
			hws_wait_tls.sleeps++;
		else if (errno == ETIMEDOUT)
			rc = ETIMEDOUT;
		else if (errno == EINTR && hws_wait_intr)
			rc = EINTR;
		/* EAGAIN (changed before sleeping), other EINTR: caller re-checks. */
	}
	/* release: nothing depends on it; the waker only needs "maybe nonzero". */
	atomic_fetch_sub_explicit(n, 1, memory_order_release);
	return rc;
}

int hws_wait_futex(const _Atomic uint32_t *a, uint32_t old, const hws_wait_t *w, uint64_t dl)
{
	(void)w;
	/* acquire: pairs with the store that changed the word. */
	while (atomic_load_explicit(a, memory_order_acquire) == old) {
		int rc = hws_futex_sleep(a, old, dl);
		if (rc && atomic_load_explicit(a, memory_order_acquire) == old)
			return rc;   /* ETIMEDOUT, or EINTR when asked for */
	}
	return 0;
}

int hws_wake32(_Atomic uint32_t *addr, uint32_t n)
{
	/* seq_cst fence: orders the caller's earlier store to *addr before the
	 * read of the sleeper counter (the other half of the Dekker pattern). */
	atomic_thread_fence(memory_order_seq_cst);
	if (atomic_load_explicit(sleepers_of(addr), memory_order_relaxed) == 0)
		return 0;
	hws_wait_tls.syscalls++;
	syscall(SYS_futex, addr, FUTEX_WAKE | FUTEX_PRIVATE_FLAG,
		n > (uint32_t)INT32_MAX ? INT32_MAX : (int)n, NULL, NULL, 0);
	return 1;
}

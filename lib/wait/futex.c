/* futex policy: sleep in the kernel (FUTEX_WAIT_BITSET, private, absolute
 * CLOCK_MONOTONIC deadline) and the waker side with sleeper accounting, so
 * that a wake with nobody asleep costs no system call (see wait.h).
 *
 * Both sides also time the hand-off for the adaptive policy (adaptive_learn.c):
 * a FUTEX_WAKE that woke someone stores its start time, tagged with the
 * address, in the bucket's `woke` slot; the first sleeper of that address to
 * take it reports how long after the wake it ran again.  Only the slow paths
 * (system calls) pay for it, and the woken thread not before it needs to:
 * taking the stamp reads and clears a line the waker just wrote (on the
 * waker's CPU) and feeds the learning window, work that would stand between
 * its wake-up and what it waited for.  It notes the time it ran again and
 * takes the stamp when it sleeps again or when the adaptive policy asks
 * (hws_futex_woken_sample).  For the same reason the waker, not the woken
 * thread, takes a woken sleeper off the bucket's count (wake_call).
 *
 * Marked sleepers (hws_futex_sleep_bits, hws_futex_wake_bits): a caller
 * that marks its sleepers in the word itself (the auto lock's PARKED bit)
 * and wakes only when the mark says so has no use for the counter, so
 * neither side touches it; and only one sleep in MARKED_TIMED_EVERY per
 * thread is timed, none where the caller says its wake-up would measure
 * something else (the auto lock on a busy machine: a run queue), the waker
 * stamping every wake.  Such callers sleep
 * and wake many times a second when a lock's holders yield or are
 * preempted, and the hand-off window keeps only the last 16 samples; the
 * counter, the sleeper's two clock reads and its taking of the stamp cost
 * those patterns about 3% of their throughput (docs/locks.md, "Marked
 * sleepers").  An address is slept on in one form only. */
#include <errno.h>
#include <linux/futex.h>
#include <time.h>
#include <sys/syscall.h>
#include "wait/internal.h"

_Thread_local struct hws_wait_counters hws_wait_tls;
_Thread_local int hws_wait_intr;
_Thread_local struct hws_futex_woken hws_futex_woken;

/* Sleeper counters, one cache line each, indexed by a hash of the address
 * (the table and the hash are in wait.h, for the inline test of
 * hws_wake32_after_rmw). */
#define bucket hws_wait_bucket
struct hws_wait_bucket hws_wait_buckets[HWS_WAIT_BUCKETS];

/* One marked sleep in this many, per thread, is timed (the first one of a
 * thread included). */
#define MARKED_TIMED_EVERY 8u
static _Thread_local unsigned marked_sleeps;

static inline uint64_t addr_hash(const void *addr)
{
	return hws_wait_addr_hash(addr);
}

static inline struct bucket *bucket_of(const void *addr)
{
	return hws_wait_bucket_of(addr);
}

/* Hash bits the bucket index does not use: tell addresses of one bucket
 * apart (a collision of both costs one bogus sample, which the median of
 * the window absorbs). */
static inline uint64_t addr_tag(const void *addr)
{
	return (addr_hash(addr) >> 48) & 0xff;
}

/* We slept on addr from `slept` and ran again at `now`: take the waker's
 * time stamp if it is for this address and from a wake that started while
 * we slept (an older one was left by a wake whose sleeper ran before the
 * stamp was stored; a newer one, by a wake after ours, belongs to another
 * sleeper and stays).  Times are compared modulo 2^56.  Returns the
 * hand-off, 0 without a stamp. */
static uint64_t take_sample(struct bucket *b, const void *addr, uint64_t slept, uint64_t now)
{
	/* relaxed: the stamp is self-contained; stale ones are rejected below. */
	uint64_t v = atomic_load_explicit(&b->woke, memory_order_relaxed), d;

	if (!v || (v & 0xff) != addr_tag(addr))
		return 0;
	d = ((now << 8) - (v & ~(uint64_t)0xff)) >> 8;
	if (d > now - slept ||
	    !atomic_compare_exchange_strong_explicit(&b->woke, &v, 0, memory_order_relaxed,
						     memory_order_relaxed))
		return 0;
	hws_adaptive_learn(d);
	return d;
}

/* Take the sample of this thread's last woken sleep if it is still due. */
static void settle(void)
{
	struct hws_futex_woken *w = &hws_futex_woken;

	if (w->addr) {
		w->sample_ns = take_sample(bucket_of(w->addr), w->addr, w->slept, w->at);
		w->addr = NULL;
	}
}

uint64_t hws_futex_woken_sample(uint64_t seq)
{
	if (seq != hws_futex_woken.seq)
		return 0;
	settle();
	return hws_futex_woken.sample_ns;
}

/* One FUTEX_WAIT_BITSET: counted in the address's bucket, or marked (the
 * caller's word says it sleeps; see the top of the file). */
static int sleep_call(const _Atomic uint32_t *a, uint32_t old, uint64_t deadline_ns,
		      uint32_t bits, bool marked, bool may_time)
{
	_Atomic uint32_t *n = &bucket_of(a)->n;
	struct timespec ts, *tsp = NULL;
	uint64_t slept = 0;
	bool timed = !marked || (may_time && marked_sleeps++ % MARKED_TIMED_EVERY == 0);
	int rc = 0;

	settle();
	/* seq_cst increment, then seq_cst re-read: with the waker's store +
	 * seq_cst fence + counter read this is the Dekker pattern: one of the two
	 * sides sees the other's write, so no wake is lost.  A marked sleeper's
	 * caller made the same argument with its mark (the kernel re-checks the
	 * word, mark included). */
	if (!marked)
		atomic_fetch_add_explicit(n, 1, memory_order_seq_cst);
	if (atomic_load_explicit(a, memory_order_seq_cst) == old) {
		if (deadline_ns != HWS_FOREVER) {
			ts.tv_sec = (time_t)(deadline_ns / 1000000000ull);
			ts.tv_nsec = (long)(deadline_ns % 1000000000ull);
			tsp = &ts;
		}
		hws_wait_tls.syscalls++;
		if (timed)
			slept = hws_now_ns();
		/* The kernel re-checks *a == old under its hash-bucket lock. */
		long r = hws_syscall6(SYS_futex, (long)a, FUTEX_WAIT_BITSET | FUTEX_PRIVATE_FLAG,
				      old, (long)tsp, 0, bits);
		if (r == 0) {
			struct hws_futex_woken *w = &hws_futex_woken;
			hws_wait_tls.sleeps++;
			if (!timed)
				return 0;
			w->at = hws_now_ns();
			w->addr = a;
			w->slept = slept;
			w->sample_ns = 0;
			w->seq++;
			/* The waker took us off the count (wake_call). */
			return 0;
		}
		if (r == -ETIMEDOUT)
			rc = ETIMEDOUT;
		else if (r == -EINTR && hws_wait_intr)
			rc = EINTR;
		/* EAGAIN (changed before sleeping), other EINTR: caller re-checks. */
	}
	/* release: nothing depends on it; the waker only needs "maybe nonzero". */
	if (!marked)
		atomic_fetch_sub_explicit(n, 1, memory_order_release);
	return rc;
}

int hws_futex_sleep_bits(const _Atomic uint32_t *a, uint32_t old, uint64_t deadline_ns,
			 uint32_t bits, bool may_time)
{
	return sleep_call(a, old, deadline_ns, bits, true, may_time);
}

void hws_nap_until(uint64_t deadline_ns)
{
	struct timespec ts = { (time_t)(deadline_ns / 1000000000ull),
			       (long)(deadline_ns % 1000000000ull) };
	hws_wait_tls.syscalls++;
	hws_wait_tls.naps++;
	if (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == 0)
		hws_wait_tls.sleeps++;
}

int hws_futex_sleep(const _Atomic uint32_t *a, uint32_t old, uint64_t deadline_ns)
{
	return sleep_call(a, old, deadline_ns, FUTEX_BITSET_MATCH_ANY, false, true);
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

/* One FUTEX_WAKE_BITSET, timed for the adaptive policy's hand-off; for
 * marked sleepers (hws_futex_wake_bits) the bucket's count is left alone. */
static int wake_call(_Atomic uint32_t *addr, struct bucket *b, uint32_t n, uint32_t bits,
		     bool marked)
{
	hws_wait_tls.syscalls++;
	uint64_t t0 = hws_now_ns();
	long woke = hws_syscall6(SYS_futex, (long)addr, FUTEX_WAKE_BITSET | FUTEX_PRIVATE_FLAG,
				 n > (uint32_t)INT32_MAX ? INT32_MAX : (long)n, 0, 0, bits);
	if (woke <= 0)
		return 0;
	/* The sleepers we woke return 0 from FUTEX_WAIT (it returns 0 only to
	 * a sleeper a wake took off the kernel's queue) and leave the count to
	 * us: the line is the one we stamp next, while on the woken thread's
	 * way back it was one more transfer between cores.  Until this
	 * subtraction the count is too high, which costs at most a wake call
	 * that finds nobody, never a lost wake-up.
	 * release: as the sleeper's own decrement (nothing depends on it). */
	if (!marked)
		atomic_fetch_sub_explicit(&b->n, (uint32_t)woke, memory_order_release);
	/* relaxed: see take_sample. */
	atomic_store_explicit(&b->woke, t0 << 8 | addr_tag(addr), memory_order_relaxed);
	return (int)woke;
}

int hws_futex_wake_bits(_Atomic uint32_t *addr, uint32_t n, uint32_t bits)
{
	return wake_call(addr, bucket_of(addr), n, bits, true);
}

int hws_wake32(_Atomic uint32_t *addr, uint32_t n)
{
	struct bucket *b = bucket_of(addr);

	/* seq_cst fence: orders the caller's earlier store to *addr before the
	 * read of the sleeper counter (the other half of the Dekker pattern). */
	atomic_thread_fence(memory_order_seq_cst);
	/* relaxed: ordered by the fence above. */
	if (atomic_load_explicit(&b->n, memory_order_relaxed) == 0)
		return 0;
	wake_call(addr, b, n, FUTEX_BITSET_MATCH_ANY, false);
	return 1;
}

int hws_wake32_call(_Atomic uint32_t *addr, uint32_t n)
{
	wake_call(addr, bucket_of(addr), n, FUTEX_BITSET_MATCH_ANY, false);
	return 1;
}

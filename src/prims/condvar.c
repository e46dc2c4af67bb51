/* Condition variable over any hwsync lock and any wait policy.
 *
 * A 32-bit sequence word: wait reads it while holding the lock, releases the
 * lock, waits while the word still holds that value, then re-acquires the
 * lock.  signal and broadcast advance the word and wake one or all sleepers.
 * No lost wake-up: a signaller that changed the predicate under the lock after
 * our unlock advances seq after our read, so the wait sees a new value.
 * Spurious wake-ups (allowed by the contract): with polling policies every
 * waiter sees the change, so signal may release more than one waiter; with
 * futex it wakes one sleeper.  An ABA needs 2^32 signals between our read and
 * our wait, which we accept (as glibc did before 2.25). */
#include <hwsync/condvar.h>
#include "prims/prims_internal.h"

struct hws_condvar {
	_Atomic uint32_t seq HWS_ALIGNED_LINE;
	hws_wait_t wait;
};

int hws_condvar_create(hws_condvar_t **out, const char *wait_policy)
{
	hws_wait_t w;
	hws_condvar_t *cv;
	int rc;

	if (!out)
		return hws_fail(EINVAL, "hws_condvar_create: NULL result pointer");
	if ((rc = hws_prims_policy(&w, wait_policy, "condvar")))
		return rc;
	if (!(cv = hws_alloc_lines(sizeof *cv)))
		return hws_fail(ENOMEM, "condvar: out of memory");
	atomic_init(&cv->seq, 0);
	cv->wait = w;
	*out = cv;
	return 0;
}

static int cv_wait_until(hws_condvar_t *cv, hws_lock_t *l, uint64_t deadline_ns)
{
	/* relaxed: read under the lock; a signaller that runs after our unlock
	 * increments after this read (lock order + coherence). */
	uint32_t s = atomic_load_explicit(&cv->seq, memory_order_relaxed);
	int rc = hws_lock_release(l);
	if (rc)
		return rc;
	int wrc = hws_wait_while_eq32(&cv->seq, s, &cv->wait, deadline_ns);
	rc = hws_lock_acquire(l);
	return rc ? rc : wrc;
}

int hws_condvar_wait(hws_condvar_t *cv, hws_lock_t *l)
{
	if (!cv || !l)
		return hws_fail(EINVAL, "hws_condvar_wait: NULL %s", cv ? "lock" : "condvar");
	return cv_wait_until(cv, l, HWS_FOREVER);
}

int hws_condvar_timed(hws_condvar_t *cv, hws_lock_t *l, const struct timespec *abs_deadline)
{
	uint64_t dl = HWS_FOREVER;
	int rc;

	if (!cv || !l)
		return hws_fail(EINVAL, "hws_condvar_timed: NULL %s", cv ? "lock" : "condvar");
	if ((rc = hws_deadline_from_ts(abs_deadline, &dl, "hws_condvar_timed")))
		return rc;
	return cv_wait_until(cv, l, dl);
}

static int cv_advance(hws_condvar_t *cv, uint32_t n)
{
	/* release: pairs with the waiter's acquire load in the wait layer. */
	atomic_fetch_add_explicit(&cv->seq, 1, memory_order_release);
	hws_wake32(&cv->seq, n);
	return 0;
}

int hws_condvar_signal(hws_condvar_t *cv)
{
	if (!cv)
		return hws_fail(EINVAL, "hws_condvar_signal: NULL condvar");
	return cv_advance(cv, 1);
}

int hws_condvar_broadcast(hws_condvar_t *cv)
{
	if (!cv)
		return hws_fail(EINVAL, "hws_condvar_broadcast: NULL condvar");
	return cv_advance(cv, HWS_WAKE_ALL);
}

void hws_condvar_destroy(hws_condvar_t *cv)
{
	free(cv);
}

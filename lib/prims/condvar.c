/* Condition variable over any hwsync lock and any wait policy: the in-place
 * core of include/hwsync/condvar.h with its policy, on a line of its own.
 * An ABA of the sequence word needs 2^32 signals between a waiter's read and
 * its wait, which we accept (as glibc did before 2.25). */
#include <hwsync/condvar.h>
#include "prims/prims_internal.h"

struct hws_condvar {
	hws_condvar_core_t core HWS_ALIGNED_LINE;
	hws_wait_t wait;
};

int hws_condvar_create_with(hws_condvar_t **out, const hws_wait_t *policy)
{
	hws_condvar_t *cv;
	int rc;

	if (!out)
		return hws_fail(EINVAL, "hws_condvar_create_with: NULL result pointer");
	if ((rc = hws_wait_check(policy, "hws_condvar_create_with")))
		return rc;
	if (!(cv = hws_alloc_lines(sizeof *cv)))
		return hws_fail(ENOMEM, "condvar: out of memory");
	atomic_init(&cv->core.seq, 0);
	atomic_init(&cv->core.waiters, 0);
	cv->wait = *policy;
	*out = cv;
	return 0;
}

int hws_condvar_create(hws_condvar_t **out, const char *wait_policy)
{
	hws_wait_t w;
	int rc;

	if (!out)
		return hws_fail(EINVAL, "hws_condvar_create: NULL result pointer");
	if ((rc = hws_prims_policy(&w, wait_policy, "condvar")))
		return rc;
	return hws_condvar_create_with(out, &w);
}

static int cv_wait_until(hws_condvar_t *cv, hws_lock_t *l, uint64_t deadline_ns)
{
	uint32_t seq = hws_condvar_core_enter(&cv->core);
	int rc = hws_lock_release(l);
	if (rc) {
		hws_condvar_core_leave(&cv->core);
		return rc;
	}
	int wrc = hws_condvar_core_block(&cv->core, seq, &cv->wait, deadline_ns);
	hws_condvar_core_leave(&cv->core);
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

int hws_condvar_signal(hws_condvar_t *cv)
{
	if (!cv)
		return hws_fail(EINVAL, "hws_condvar_signal: NULL condvar");
	hws_condvar_core_wake(&cv->core, 1);
	return 0;
}

int hws_condvar_broadcast(hws_condvar_t *cv)
{
	if (!cv)
		return hws_fail(EINVAL, "hws_condvar_broadcast: NULL condvar");
	hws_condvar_core_wake(&cv->core, HWS_WAKE_ALL);
	return 0;
}

void hws_condvar_destroy(hws_condvar_t *cv)
{
	free(cv);
}

/* event: condition wait / notify over any wait policy ([AK08], generalised).
 *
 * State (struct hws_event_s in event.h):
 *   seq      the epoch, advanced by every notify; waiters wait while it equals
 *            the value they hold.
 *   waiters  threads registered in a wait (between register and leave).
 *   tokens   wake-ups owed to registered waiters; guarded by lock.
 *
 * notify:  seq++ (seq_cst), then read waiters (seq_cst).  Zero: done -- that
 *          is the whole cost of a notify nobody listens to.  Otherwise grant:
 *          under the lock, one token (notify_one, at most one per registered
 *          waiter) or one per registered waiter (notify_all), then seq++ again
 *          and wake.  The second increment matters: a waiter may have seen the
 *          first one, found no token yet and gone back to waiting on the new
 *          seq; the second change brings it back to find the token.
 * wait:    register (waiters++, seq_cst) and re-read seq (seq_cst).  If it
 *          moved past the caller's epoch, a notify came after the epoch was
 *          read: return.  Otherwise wait for seq to change; each time it does,
 *          take a token under the lock and return, or hold the new seq and
 *          wait again.  Only a token lets a registered waiter leave, so
 *          notify_one releases one waiter even when every waiter polls seq.
 * Dekker:  the notifier's (seq++, load waiters) against the waiter's
 *          (waiters++, load seq), all seq_cst: at least one sees the other, so
 *          either the waiter returns at once or the notifier grants it a token.
 */
#include <hwsync/event.h>
#include "prims/prims_internal.h"

struct hws_event {
	struct hws_event_s s;
};

/* Leave the registered set: under the lock.  Tokens never exceed waiters, so
 * a token owed to a waiter that timed out goes to another waiter or away. */
static void leave_locked(struct hws_event_s *ev)
{
	uint32_t w = atomic_load_explicit(&ev->waiters, memory_order_relaxed) - 1;
	/* seq_cst: a notifier reading 0 must not miss a registration; a
	 * deregistration seen late only costs it an unneeded grant. */
	atomic_store_explicit(&ev->waiters, w, memory_order_seq_cst);
	if (ev->tokens > w)
		ev->tokens = w;
}

void hws_event_s_grant(struct hws_event_s *ev, int all)
{
	uint32_t w;

	hws_tiny_lock(&ev->lock, &ev->wait);
	/* relaxed: registration changes only under the lock we hold. */
	w = atomic_load_explicit(&ev->waiters, memory_order_relaxed);
	if (ev->tokens >= w) {          /* every registered waiter already owed one */
		hws_tiny_unlock(&ev->lock);
		return;
	}
	ev->tokens = all ? w : ev->tokens + 1;
	/* release: pairs with the waiter's acquire load in the wait layer, which
	 * then takes the lock and finds the token. */
	atomic_fetch_add_explicit(&ev->seq, 1, memory_order_release);
	hws_tiny_unlock(&ev->lock);
	hws_wake32(&ev->seq, all ? HWS_WAKE_ALL : 1);
}

int hws_event_s_wait(struct hws_event_s *ev, uint32_t epoch, uint64_t deadline_ns)
{
	uint32_t cur = epoch;
	int rc;

	/* acquire: pairs with the notifier's increment (fast return). */
	if (atomic_load_explicit(&ev->seq, memory_order_acquire) != epoch)
		return 0;
	hws_tiny_lock(&ev->lock, &ev->wait);
	atomic_fetch_add_explicit(&ev->waiters, 1, memory_order_seq_cst);
	if (atomic_load_explicit(&ev->seq, memory_order_seq_cst) != epoch) {
		leave_locked(ev);       /* notified before we registered */
		hws_tiny_unlock(&ev->lock);
		return 0;
	}
	hws_tiny_unlock(&ev->lock);
	for (;;) {
		rc = hws_wait_while_eq32(&ev->seq, cur, &ev->wait, deadline_ns);
		hws_tiny_lock(&ev->lock, &ev->wait);
		if (ev->tokens > 0) {
			ev->tokens--;
			leave_locked(ev);
			hws_tiny_unlock(&ev->lock);
			return 0;
		}
		if (rc) {               /* ETIMEDOUT (or EINVAL from the wait layer) */
			leave_locked(ev);
			hws_tiny_unlock(&ev->lock);
			return rc;
		}
		/* relaxed: grants advance seq under this lock; a fast-path increment
		 * we miss here just brings us back once more. */
		cur = atomic_load_explicit(&ev->seq, memory_order_relaxed);
		hws_tiny_unlock(&ev->lock);
	}
}

int hws_event_create_with(hws_event_t **out, const hws_wait_t *policy)
{
	hws_event_t *ev;
	int rc;

	if (!out)
		return hws_fail(EINVAL, "hws_event_create_with: NULL result pointer");
	if ((rc = hws_wait_check(policy, "hws_event_create_with")))
		return rc;
	if (!(ev = hws_alloc_lines(sizeof *ev)))
		return hws_fail(ENOMEM, "event: out of memory");
	hws_event_s_init(&ev->s, policy);
	*out = ev;
	return 0;
}

int hws_event_create(hws_event_t **out, const char *wait_policy)
{
	hws_wait_t w;
	int rc;

	if (!out)
		return hws_fail(EINVAL, "hws_event_create: NULL result pointer");
	if ((rc = hws_prims_policy(&w, wait_policy, "event")))
		return rc;
	return hws_event_create_with(out, &w);
}

uint32_t hws_event_epoch(const hws_event_t *ev)
{
	return hws_event_s_epoch(&ev->s);
}

int hws_event_wait(hws_event_t *ev, uint32_t epoch)
{
	if (!ev)
		return hws_fail(EINVAL, "hws_event_wait: NULL event");
	return hws_event_s_wait(&ev->s, epoch, HWS_FOREVER);
}

int hws_event_timed(hws_event_t *ev, uint32_t epoch, const struct timespec *abs_deadline)
{
	uint64_t dl = HWS_FOREVER;
	int rc;

	if (!ev)
		return hws_fail(EINVAL, "hws_event_timed: NULL event");
	if ((rc = hws_deadline_from_ts(abs_deadline, &dl, "hws_event_timed")))
		return rc;
	return hws_event_s_wait(&ev->s, epoch, dl);
}

int hws_event_notify_one(hws_event_t *ev)
{
	if (!ev)
		return hws_fail(EINVAL, "hws_event_notify_one: NULL event");
	hws_event_s_notify_one(&ev->s);
	return 0;
}

int hws_event_notify_all(hws_event_t *ev)
{
	if (!ev)
		return hws_fail(EINVAL, "hws_event_notify_all: NULL event");
	hws_event_s_notify_all(&ev->s);
	return 0;
}

void hws_event_destroy(hws_event_t *ev)
{
	free(ev);
}

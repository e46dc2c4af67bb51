/* Counting semaphore over any wait policy.
 *
 * The count is the word waiters wait on: a waiter takes a unit with a CAS
 * when the count is positive and otherwise waits while it is zero.  post adds
 * a unit and always calls hws_wake32 (no system call unless someone sleeps):
 * skipping the wake when the count was already positive would strand a
 * sleeper when two posts race with one wake-up.  No lost wake-up: a sleeper
 * sleeps only if the kernel still sees 0 (futex re-check), and a spinner
 * re-reads the count. */
#include <hwsync/sem.h>
#include "prims/prims_internal.h"

struct hws_sem {
	_Atomic uint32_t count HWS_ALIGNED_LINE;
	hws_wait_t wait;
};

int hws_sem_create(hws_sem_t **out, unsigned initial, const char *wait_policy)
{
	hws_wait_t w;
	hws_sem_t *s;
	int rc;

	if (!out)
		return hws_fail(EINVAL, "hws_sem_create: NULL result pointer");
	if (initial > HWS_SEM_VALUE_MAX)
		return hws_fail(EINVAL, "semaphore: initial value %u exceeds HWS_SEM_VALUE_MAX (%u)",
				initial, (unsigned)HWS_SEM_VALUE_MAX);
	if ((rc = hws_prims_policy(&w, wait_policy, "semaphore")))
		return rc;
	if (!(s = hws_alloc_lines(sizeof *s)))
		return hws_fail(ENOMEM, "semaphore: out of memory");
	atomic_init(&s->count, initial);
	s->wait = w;
	*out = s;
	return 0;
}

/* One attempt: 0 with a unit taken, EAGAIN when the count is zero. */
static int take(hws_sem_t *s)
{
	/* relaxed: only a guess for the CAS below. */
	uint32_t c = atomic_load_explicit(&s->count, memory_order_relaxed);
	while (c > 0) {
		/* acquire: pairs with the release in post, so what the poster wrote
		 * before posting is visible to the taker. */
		if (atomic_compare_exchange_weak_explicit(&s->count, &c, c - 1,
							  memory_order_acquire, memory_order_relaxed))
			return 0;
	}
	return EAGAIN;
}

static int sem_wait_until(hws_sem_t *s, uint64_t deadline_ns)
{
	for (;;) {
		if (take(s) == 0)
			return 0;
		int rc = hws_wait_while_eq32(&s->count, 0, &s->wait, deadline_ns);
		if (rc == ETIMEDOUT)
			return take(s) == 0 ? 0 : ETIMEDOUT;
		if (rc)
			return rc;
	}
}

int hws_sem_wait(hws_sem_t *s)
{
	if (!s)
		return hws_fail(EINVAL, "hws_sem_wait: NULL semaphore");
	return sem_wait_until(s, HWS_FOREVER);
}

int hws_sem_try(hws_sem_t *s)
{
	if (!s)
		return hws_fail(EINVAL, "hws_sem_try: NULL semaphore");
	return take(s);
}

int hws_sem_timed(hws_sem_t *s, const struct timespec *abs_deadline)
{
	uint64_t dl = HWS_FOREVER;
	int rc;

	if (!s)
		return hws_fail(EINVAL, "hws_sem_timed: NULL semaphore");
	if ((rc = hws_deadline_from_ts(abs_deadline, &dl, "hws_sem_timed")))
		return rc;
	return sem_wait_until(s, dl);
}

int hws_sem_post(hws_sem_t *s)
{
	if (!s)
		return hws_fail(EINVAL, "hws_sem_post: NULL semaphore");
	/* relaxed: only a guess for the CAS below. */
	uint32_t c = atomic_load_explicit(&s->count, memory_order_relaxed);
	do {
		if (c >= HWS_SEM_VALUE_MAX)
			return hws_fail(EOVERFLOW, "semaphore: post would exceed HWS_SEM_VALUE_MAX");
		/* release: pairs with the acquire CAS in take (and the wait layer's
		 * acquire load). */
	} while (!atomic_compare_exchange_weak_explicit(&s->count, &c, c + 1,
						       memory_order_release, memory_order_relaxed));
	hws_wake32(&s->count, 1);
	return 0;
}

unsigned hws_sem_value(const hws_sem_t *s)
{
	/* relaxed: a snapshot; it may be stale by the time the caller reads it. */
	return s ? atomic_load_explicit(&s->count, memory_order_relaxed) : 0;
}

void hws_sem_destroy(hws_sem_t *s)
{
	free(s);
}

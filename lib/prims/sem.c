/* Counting semaphore over any wait policy: the in-place core of
 * include/hwsync/sem.h with its policy, on a line of its own. */
#include <hwsync/sem.h>
#include "prims/prims_internal.h"

struct hws_sem {
	hws_sem_core_t core HWS_ALIGNED_LINE;
	hws_wait_t wait;
};

static int check_initial(unsigned initial)
{
	if (initial > HWS_SEM_VALUE_MAX)
		return hws_fail(EINVAL, "semaphore: initial value %u exceeds HWS_SEM_VALUE_MAX (%u)",
				initial, (unsigned)HWS_SEM_VALUE_MAX);
	return 0;
}

int hws_sem_create_with(hws_sem_t **out, unsigned initial, const hws_wait_t *policy)
{
	hws_sem_t *s;
	int rc;

	if (!out)
		return hws_fail(EINVAL, "hws_sem_create_with: NULL result pointer");
	if ((rc = check_initial(initial)) || (rc = hws_wait_check(policy, "hws_sem_create_with")))
		return rc;
	if (!(s = hws_alloc_lines(sizeof *s)))
		return hws_fail(ENOMEM, "semaphore: out of memory");
	atomic_init(&s->core.value, initial);
	atomic_init(&s->core.waiters, 0);
	s->wait = *policy;
	*out = s;
	return 0;
}

int hws_sem_create(hws_sem_t **out, unsigned initial, const char *wait_policy)
{
	hws_wait_t w;
	int rc;

	if (!out)
		return hws_fail(EINVAL, "hws_sem_create: NULL result pointer");
	if ((rc = check_initial(initial)) || (rc = hws_prims_policy(&w, wait_policy, "semaphore")))
		return rc;
	return hws_sem_create_with(out, initial, &w);
}

int hws_sem_wait(hws_sem_t *s)
{
	if (!s)
		return hws_fail(EINVAL, "hws_sem_wait: NULL semaphore");
	return hws_sem_core_wait(&s->core, &s->wait, HWS_FOREVER);
}

int hws_sem_try(hws_sem_t *s)
{
	if (!s)
		return hws_fail(EINVAL, "hws_sem_try: NULL semaphore");
	return hws_sem_core_take(&s->core) ? 0 : EAGAIN;
}

int hws_sem_timed(hws_sem_t *s, const struct timespec *abs_deadline)
{
	uint64_t dl = HWS_FOREVER;
	int rc;

	if (!s)
		return hws_fail(EINVAL, "hws_sem_timed: NULL semaphore");
	if ((rc = hws_deadline_from_ts(abs_deadline, &dl, "hws_sem_timed")))
		return rc;
	return hws_sem_core_wait(&s->core, &s->wait, dl);
}

int hws_sem_post(hws_sem_t *s)
{
	if (!s)
		return hws_fail(EINVAL, "hws_sem_post: NULL semaphore");
	if (hws_sem_core_post(&s->core))
		return hws_fail(EOVERFLOW, "semaphore: post would exceed HWS_SEM_VALUE_MAX");
	return 0;
}

unsigned hws_sem_value(const hws_sem_t *s)
{
	/* relaxed: a snapshot; it may be stale by the time the caller reads it. */
	return s ? atomic_load_explicit(&s->core.value, memory_order_relaxed) : 0;
}

void hws_sem_destroy(hws_sem_t *s)
{
	free(s);
}

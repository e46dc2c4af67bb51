/* The reader-preferring rwlock's waiting paths (hwsync/rwlock_reader.h). */
#include <hwsync/rwlock_reader.h>

int hws_rw_reader_core_rdlock_refused(hws_rw_reader_core_t *c, uint32_t v,
				      const hws_wait_t *w, uint64_t deadline_ns)
{
	int rc = hws_rw_reader_refused(&c->state, v);
	return rc == EBUSY ? hws_rw_reader_core_rdlock_slow(c, w, deadline_ns) : rc;
}

int hws_rw_reader_core_rdlock_slow(hws_rw_reader_core_t *c, const hws_wait_t *w,
				   uint64_t deadline_ns)
{
	for (;;) {
		/* relaxed: names the value to wait on; entries re-read it. */
		uint32_t v = atomic_load_explicit(&c->state, memory_order_relaxed);
		int rc;

		if (!(v & HWS_RW_W)) {
			if ((rc = hws_rw_reader_enter(&c->state)) != EBUSY)
				return rc;
			continue;
		}
		/* relaxed: only this thread ever stores its own id there. */
		if (atomic_load_explicit(&c->owner, memory_order_relaxed) == hws_rw_self())
			return EDEADLK;
		if (hws_wait_while_eq32(&c->state, v, w, deadline_ns) == ETIMEDOUT) {
			rc = hws_rw_reader_enter(&c->state);
			return rc == EBUSY ? ETIMEDOUT : rc;
		}
	}
}

int hws_rw_reader_core_wrlock_slow(hws_rw_reader_core_t *c, const hws_wait_t *w,
				   uint64_t deadline_ns)
{
	for (;;) {
		/* relaxed: a guess for the CAS, and the value to wait on. */
		uint32_t v = atomic_load_explicit(&c->state, memory_order_relaxed);

		if (!(v & (HWS_RW_W | HWS_RW_COUNT))) {
			/* acquire: pairs with the release of the last reader
			 * (a release sequence of their decrements) or writer. */
			if (atomic_compare_exchange_weak_explicit(&c->state, &v, HWS_RW_W,
								  memory_order_acquire,
								  memory_order_relaxed)) {
				/* relaxed: see hws_rw_reader_core_trywrlock. */
				atomic_store_explicit(&c->owner, hws_rw_self(),
						      memory_order_relaxed);
				return 0;
			}
			continue;
		}
		/* relaxed: only this thread ever stores its own id there. */
		if ((v & HWS_RW_W) &&
		    atomic_load_explicit(&c->owner, memory_order_relaxed) == hws_rw_self())
			return EDEADLK;
		if (!(v & (HWS_RW_W | HWS_RW_WB))) {
			/* Readers inside: ask the last one out to wake us.
			 * relaxed: WB orders nothing; the wait compares the word. */
			if (!atomic_compare_exchange_weak_explicit(&c->state, &v, v | HWS_RW_WB,
								   memory_order_relaxed,
								   memory_order_relaxed))
				continue;
			v |= HWS_RW_WB;
		}
		if (hws_wait_while_eq32(&c->state, v, w, deadline_ns) == ETIMEDOUT)
			return hws_rw_reader_core_trywrlock(c) ? ETIMEDOUT : 0;
	}
}

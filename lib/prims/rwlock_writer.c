/* The writer-preferring rwlock's waiting paths (hwsync/rwlock_writer.h). */
#include <hwsync/rwlock_writer.h>

int hws_rw_writer_core_rdlock_slow(hws_rw_writer_core_t *c, const hws_wait_t *w,
				   uint64_t deadline_ns)
{
	for (;;) {
		/* relaxed: names the value to wait on; entries re-read it. */
		uint32_t v = atomic_load_explicit(&c->state, memory_order_relaxed), ww;
		_Atomic uint32_t *on = &c->state;
		int rc;

		if (v & HWS_RW_W) {
			/* relaxed: only this thread ever stores its own id there. */
			if (atomic_load_explicit(&c->owner, memory_order_relaxed) ==
			    hws_rw_self())
				return EDEADLK;
			/* relaxed: a preference only; exclusion is the state's. */
		} else if ((ww = atomic_load_explicit(&c->wwait, memory_order_relaxed))) {
			on = &c->wwait;   /* writers are about to set W: stand back */
			v = ww;
		} else {
			if ((rc = hws_rw_reader_enter(&c->state)) != EBUSY)
				return rc;
			continue;
		}
		if (hws_wait_while_eq32(on, v, w, deadline_ns) == ETIMEDOUT) {
			rc = hws_rw_writer_core_tryrdlock(c);
			return rc == EBUSY ? ETIMEDOUT : rc;
		}
	}
}

static void unwait(hws_rw_writer_core_t *c)
{
	/* relaxed: a preference count; the wake tells the readers to look. */
	atomic_fetch_sub_explicit(&c->wwait, 1, memory_order_relaxed);
	hws_wake32(&c->wwait, HWS_WAKE_ALL);
}

int hws_rw_writer_core_wrlock_slow(hws_rw_writer_core_t *c, const hws_wait_t *w,
				   uint64_t deadline_ns)
{
	uint32_t v;

	/* relaxed: only this thread ever stores its own id there. */
	if ((atomic_load_explicit(&c->state, memory_order_relaxed) & HWS_RW_W) &&
	    atomic_load_explicit(&c->owner, memory_order_relaxed) == hws_rw_self())
		return EDEADLK;
	/* relaxed: a preference count for readers; exclusion is the state's. */
	atomic_fetch_add_explicit(&c->wwait, 1, memory_order_relaxed);
	for (;;) {
		/* relaxed: a guess for the CAS, and the value to wait on. */
		v = atomic_load_explicit(&c->state, memory_order_relaxed);
		if (!(v & HWS_RW_W)) {
			/* Claim W with readers still inside: no new ones enter.
			 * relaxed: what we must see of the readers comes with
			 * the acquire loads that see them gone (below), and of
			 * the last writer with the acquire load there too (its
			 * release RMW heads the sequence our CAS extends). */
			if (atomic_compare_exchange_weak_explicit(&c->state, &v, v | HWS_RW_W,
								  memory_order_relaxed,
								  memory_order_relaxed))
				break;
			continue;
		}
		if (hws_wait_while_eq32(&c->state, v, w, deadline_ns) == ETIMEDOUT) {
			unwait(c);
			return ETIMEDOUT;
		}
	}
	unwait(c);
	/* acquire: pairs with the readers' release decrements and the last
	 * writer's release, all RMWs of this word. */
	while ((v = atomic_load_explicit(&c->state, memory_order_acquire)) & HWS_RW_COUNT) {
		if (hws_wait_while_eq32(&c->state, v, w, deadline_ns) != ETIMEDOUT)
			continue;
		/* acquire: as above. */
		if (!(atomic_load_explicit(&c->state, memory_order_acquire) & HWS_RW_COUNT))
			break;
		/* Give W back; readers that waited for it may enter.
		 * release: nothing of ours to publish, but keeps the word's
		 * release sequence for the next writer. */
		atomic_fetch_and_explicit(&c->state, ~HWS_RW_W, memory_order_release);
		hws_wake32(&c->state, HWS_WAKE_ALL);
		return ETIMEDOUT;
	}
	/* relaxed: see hws_rw_writer_core_trywrlock. */
	atomic_store_explicit(&c->owner, hws_rw_self(), memory_order_relaxed);
	return 0;
}

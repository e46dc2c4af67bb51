/* BRAVO's slot table and its slow paths (hwsync/rwlock_bravo.h): the
 * reader that goes through the underlying lock (and turns the bias back
 * on), and the writer's revocation. */
#include <sched.h>
#include <hwsync/rwlock_bravo.h>
#include "wait/internal.h"   /* hws_nap_until */

/* 16-byte slots, 16 KiB.  Zero: every slot free. */
struct hws_rw_bravo_slot hws_rw_bravo_slots[HWS_RW_BRAVO_SLOTS] HWS_ALIGNED_LINE;

int hws_rw_bravo_core_rdlock_slow(hws_rw_bravo_core_t *c, const hws_wait_t *w,
				  uint64_t deadline_ns, int try_only)
{
	int rc = try_only ? hws_rw_reader_core_tryrdlock(&c->rw)
			  : hws_rw_reader_core_rdlock(&c->rw, w, deadline_ns);
	/* relaxed: both are changed only under the underlying write lock
	 * (and rbias by readers like us, with the same value). */
	if (rc == 0 && !atomic_load_explicit(&c->rbias, memory_order_relaxed) &&
	    hws_tsc() >= atomic_load_explicit(&c->inhibit_until, memory_order_relaxed))
		/* release: a fast reader that reads 1 acquires everything the
		 * last writer did (we hold the read lock, so it has left). */
		atomic_store_explicit(&c->rbias, 1, memory_order_release);
	return rc;
}

/* Unlock through the underlying lock: out of line, so that the slot's
 * unlock stays small enough to inline. */
int hws_rw_bravo_core_unlock_slow(hws_rw_bravo_core_t *c)
{
	return hws_rw_reader_core_unlock(&c->rw);
}

/* How a writer waits for a slot (readers leave without a wake): pauses
 * that double up to PAUSE_MAX for SPIN_NS, then, under a policy that
 * sleeps, naps that double from NAP_MIN_NS to NAP_MAX_NS; a policy that
 * does not sleep keeps pausing (or yielding). */
#define SPIN_NS 4000u
#define PAUSE_MAX 64u
#define NAP_MIN_NS 2000u
#define NAP_MAX_NS 128000u

/* Poll until s no longer names the lock me: 0 or ETIMEDOUT. */
static int wait_slot(const struct hws_rw_bravo_slot *s, uintptr_t me, const hws_wait_t *w,
		     uint64_t deadline_ns)
{
	int naps = w->kind == HWS_WAIT_FUTEX || w->kind == HWS_WAIT_ADAPTIVE;
	uint64_t start = hws_now_ns(), nap = NAP_MIN_NS;
	uint32_t pauses = 1;

	/* acquire: pairs with the reader's release emptying the slot. */
	while (atomic_load_explicit(&s->lock, memory_order_acquire) == me) {
		uint64_t now = hws_now_ns();
		if (now >= deadline_ns)
			return ETIMEDOUT;
		if (naps && now - start >= SPIN_NS) {
			hws_nap_until(deadline_ns - now > nap ? now + nap : deadline_ns);
			nap = nap < NAP_MAX_NS / 2 ? nap * 2 : NAP_MAX_NS;
		} else if (w->kind == HWS_WAIT_YIELD) {
			hws_yield();
		} else {
			for (uint32_t i = 0; i < pauses; i++)
				hws_cpu_relax();
			pauses = pauses < PAUSE_MAX ? pauses * 2 : PAUSE_MAX;
		}
	}
	return 0;
}

/* Wait until no slot names the lock: 0 or ETIMEDOUT. */
static int drain(hws_rw_bravo_core_t *c, const hws_wait_t *w, uint64_t deadline_ns)
{
	uintptr_t me = (uintptr_t)c;

	for (unsigned i = 0; i < HWS_RW_BRAVO_SLOTS; i++) {
		struct hws_rw_bravo_slot *s = &hws_rw_bravo_slots[i];
		/* seq_cst: the writer's half of the publish/revoke handshake
		 * (the header); also acquires the reader's section. */
		if (atomic_load_explicit(&s->lock, memory_order_seq_cst) != me)
			continue;
		if (!w || wait_slot(s, me, w, deadline_ns))
			return ETIMEDOUT;   /* a try never waits */
	}
	return 0;
}

/* Under the underlying write lock: revoke the bias if it is on. */
static int revoke(hws_rw_bravo_core_t *c, const hws_wait_t *w, uint64_t deadline_ns)
{
	/* relaxed: only changed under the write lock, which we hold. */
	if (!atomic_load_explicit(&c->rbias, memory_order_relaxed))
		return 0;
	/* seq_cst: see the header's handshake. */
	atomic_store_explicit(&c->rbias, 0, memory_order_seq_cst);
	uint64_t t0 = hws_tsc();   /* a cheap clock: readers look at it too */
	int rc = drain(c, w, deadline_ns);
	uint64_t t1 = hws_tsc();
	if (rc) {
		/* Readers are still in their slots: the bias goes back on,
		 * or the next writer, finding it off, would not wait for
		 * them.  release: as a reader's re-enable (we hold W). */
		atomic_store_explicit(&c->rbias, 1, memory_order_release);
		return rc;
	}
	/* relaxed: read by readers that hold the read lock, after our release
	 * of the write lock. */
	atomic_store_explicit(&c->inhibit_until, t1 + (t1 - t0) * HWS_RW_BRAVO_INHIBIT,
			      memory_order_relaxed);
	return 0;
}

int hws_rw_bravo_core_wrlock(hws_rw_bravo_core_t *c, const hws_wait_t *w, uint64_t deadline_ns)
{
	int rc = hws_rw_reader_core_wrlock(&c->rw, w, deadline_ns);
	if (rc)
		return rc;
	if (revoke(c, w, deadline_ns)) {
		hws_rw_reader_core_wrunlock(&c->rw);
		return ETIMEDOUT;
	}
	return 0;
}

int hws_rw_bravo_core_trywrlock(hws_rw_bravo_core_t *c)
{
	if (hws_rw_reader_core_trywrlock(&c->rw))
		return EBUSY;
	if (revoke(c, NULL, 0)) {
		hws_rw_reader_core_wrunlock(&c->rw);
		return EBUSY;
	}
	return 0;
}

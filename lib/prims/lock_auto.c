/* auto: the adaptive lock's contended paths: the waiter's loop and the
 * release's wake-up (the word and the fast paths are in hwsync/lock_auto.h;
 * the stages in lock_auto_spin.c, lock_auto_sleep.c and lock_auto_learn.c;
 * the reasoning and sources in docs/locks.md).
 *
 * A waiter goes round one loop until it holds the lock or its deadline passes:
 *   take   the lock is free (a claimant: it was handed to us): CAS, after
 *          the releaser's grace (see spin) unless we just parked: a
 *          release most likely paid a wake-up for us, and leaving the lock
 *          to the releaser would waste it and make the next release pay
 *          another.
 *   spin   if a spinner slot is free (at most usable CPUs - 1) and this lock's
 *          spins have been paying: poll read-only with a growing backoff, for
 *          the lock's learned budget.  A free lock is left to its releaser
 *          for a short grace, unless this lock's graces are mostly wasted.
 *          Past the fairness bound the spinner claims the next hand-off
 *          (STARVING): the holder's release passes the lock to it.
 *   nap    the lock keeps changing hands among others (short holds): sleep
 *          for a while without asking for a wake, so that the threads using
 *          the lock pay no system call for us.
 *   park   the lock is held and not moving (a long hold): set PARKED and
 *          sleep in the kernel until the release wakes us.
 * Sleeps end early enough to spin up to the fairness bound; a waiter that
 * finds no spinner slot (more waiters than CPUs) doubles its bound.  While
 * the machine has more runnable threads than CPUs nobody spins past the
 * first look (a spinner would keep a runnable thread, perhaps the holder,
 * off a CPU): a waiter yields its CPU a few times, unless the program's
 * threads call sched_yield, then parks, as glibc's mutex does, or naps
 * while the lock changes hands at least once a microsecond, and its bound is
 * the longest.
 * The holder that took the lock after a wait updates the lock's learning
 * word; only a holder writes it, so the lock itself orders those writes.
 */
#include "prims/lock_ops.h"
#include "prims/lock_auto_waiter.h"

HWS_LOCK_OPS_INLINE(auto)

static int won(struct waiter *me)
{
	if (me->claimant)
		hws_wait_tls.handoffs++;
	hws_auto_learned(me);
	return 0;
}

static bool sleeping_claims(void)
{
	enum hws_auto_mode m = mode();
	return max_spinners() == 0 || m == HWS_AUTO_FORCE_PARK || m == HWS_AUTO_FORCE_NAP;
}

int hws_auto_core_lock_slow(hws_auto_core_t *c, _Atomic uint32_t *learn, const hws_wait_t *w,
			    uint64_t deadline_ns)
{
	struct waiter me = {
		.c = c, .learn = learn ? learn : hws_learn_slot(c), .w = w,
		.deadline = deadline_ns, .realtime = -1,
		/* relaxed: only compared with later readings. */
		.gen0 = atomic_load_explicit(&c->state, memory_order_relaxed),
	};
	if (mode() == HWS_AUTO_ADAPT && max_spinners() && !hws_auto_crowded(&me) &&
	    hws_auto_spin_budget(&me, me.gen0) && hws_auto_prespin(&me))
		return won(&me);
	uint64_t now = hws_now_ns(), fair = fair_ns();
	me.arrived = now;
	me.fair_at = fair >= HWS_FOREVER - now ? HWS_FOREVER : now + fair;

	bool now_fresh = true;   /* `now` was read just before the first look */
	for (;;) {
		/* relaxed: take() carries the acquire. */
		uint32_t v = atomic_load_explicit(&c->state, memory_order_relaxed);
		bool after_park = me.after_park;
		me.after_park = false;
		if (can_take(&me, v)) {
			if ((me.claimant || after_park || hws_auto_after_grace(&me, &v)) &&
			    take(&me, &v, false))
				return won(&me);
			continue;
		}
		if (!now_fresh)
			now = hws_now_ns();
		now_fresh = false;
		if (now >= me.deadline)
			return hws_auto_give_up(&me) ? ETIMEDOUT : won(&me);
		if (!me.claimant && now >= me.fair_at && sleeping_claims()) {
			if (!hws_auto_claim(&me))
				me.fair_at = now + FAIR_NS / 4;   /* another claim stands */
			continue;
		}
		if (!me.claimant && hws_auto_cpus_busy(&me, now)) {
			hws_auto_busy_sleep(&me, v, now);
			continue;
		}
		/* Near the bound a waiter with a spinner slot stays awake: it
		 * spins up to the bound and claims there (hws_auto_spin()). */
		uint64_t budget = hws_auto_spin_budget(&me, v);
		bool gentle = false;
		if (mode() == HWS_AUTO_ADAPT && realtime(&me))
			budget = budget < REALTIME_SPIN_NS ? budget : REALTIME_SPIN_NS;
		else if (!sleeping_claims() && mode() != HWS_AUTO_FORCE_SPIN && !me.claimant &&
		    me.fair_at != HWS_FOREVER && now + hws_auto_awake_margin() >= me.fair_at) {
			uint64_t to_bound = me.fair_at > now ? me.fair_at - now : 0;
			gentle = budget < to_bound;
			budget = budget > to_bound ? budget : to_bound + 1;
		}
		int spun = budget && !me.claimant ? hws_auto_spin(&me, budget, gentle) : -1;
		if (spun == 1)
			return won(&me);
		if (spun < 0 && budget && me.crowd < CROWD_MAX && me.fair_at != HWS_FOREVER) {
			/* More waiters than CPUs to spin on: a claim would hand the
			 * lock round a crowd of sleepers.  Bound this wait later
			 * (Malthusian: the surplus stays passive longer). */
			me.crowd++;
			me.fair_at = me.arrived + (fair_ns() << me.crowd);
		}
		/* relaxed: as above. */
		uint32_t v1 = atomic_load_explicit(&c->state, memory_order_relaxed);
		if (can_take(&me, v1))
			continue;
		if (spun < 0 && !me.parked && !me.naps)
			v1 = hws_auto_watch(&me, v1);
		hws_auto_sleep_a_while(&me, v1, me.claimant || me.fair_at > me.deadline ? me.deadline
										: me.fair_at);
	}
}

void hws_auto_core_release_slow(hws_auto_core_t *c)
{
	/* Clear PARKED and wake one sleeper of any class (a claimant class
	 * sleeper too: its claim may have been given up and re-made); the one
	 * woken sets PARKED again when it sleeps again or takes the lock.
	 * Clearing it after other threads took and released the lock is still
	 * right: every clearing comes with a wake. */
	/* relaxed: PARKED orders nothing; the kernel's check of the word
	 * under its lock closes the race with a sleeper. */
	atomic_fetch_and_explicit(&c->state, ~HWS_AUTO_PARKED, memory_order_relaxed);
	hws_futex_wake_bits(&c->state, 1, CLASS_NORMAL | CLASS_CLAIM);
}

/* The release of a lock with a claim on it: LOCKED stays set and STARVING
 * goes, with one more generation, which tells the claimant the lock is now
 * its (handed()); a parked claimant is woken, apart from the other sleepers
 * (PARKED stays set for them).  A claim withdrawn meanwhile leaves a plain
 * release. */
int hws_auto_core_hand_off(hws_auto_core_t *c)
{
	/* relaxed: the CAS decides. */
	uint32_t v = atomic_load_explicit(&c->state, memory_order_relaxed), n;
	do {
		if (!(v & HWS_AUTO_LOCKED))
			return 0;
		n = v + HWS_AUTO_GEN_ONE -
		    (v & HWS_AUTO_STARVING ? HWS_AUTO_STARVING : HWS_AUTO_LOCKED);
		/* release: pairs with the acquire CAS of the claimant (take()) or
		 * of the next holder. */
	} while (!atomic_compare_exchange_weak_explicit(&c->state, &v, n, memory_order_release,
							memory_order_relaxed));
	if (v & HWS_AUTO_STARVING) {
		if (v & HWS_AUTO_PARKED)
			hws_futex_wake_bits(&c->state, 1, CLASS_CLAIM);
	} else if (v & HWS_AUTO_PARKED) {
		hws_auto_core_release_slow(c);
	}
	return 0;
}

/* auto: sleeping (docs/locks.md, "The auto lock"): parking until a release
 * wakes the waiter, napping while others keep taking the lock, the margin
 * that keeps a sleeper's fairness bound, and the busy-machine rule. */
#include "prims/lock_auto_waiter.h"

/* Sleep until the word changes, a release wakes us, or `until`. */
static void park(struct waiter *me, uint64_t until)
{
	_Atomic uint32_t *s = &me->c->state;
	/* relaxed: re-checked by the CAS and by the kernel. */
	uint32_t v = atomic_load_explicit(s, memory_order_relaxed);

	if (!sleeping_policy(me->w)) {
		/* A policy that never sleeps needs no wake: wait through it. */
		if (!can_take(me, v))
			hws_wait_while_eq32(s, v, me->w, until);
		return;
	}
	do {
		if (can_take(me, v))
			return;
		/* relaxed: PARKED only asks the next release for a wake; the
		 * kernel's re-check of the word under its lock closes the race
		 * with that release. */
	} while (!(v & HWS_AUTO_PARKED) &&
		 !atomic_compare_exchange_weak_explicit(s, &v, v | HWS_AUTO_PARKED,
							memory_order_relaxed, memory_order_relaxed));
	me->parked = true;
	hws_futex_sleep_bits(s, v | HWS_AUTO_PARKED, until,
			     me->claimant ? CLASS_CLAIM : CLASS_NORMAL, !me->busy);
	me->after_park = true;
}

/* Leaving without the lock at the deadline: give back a claim, and pass on
 * a wake-up we may have consumed (the release that woke us cleared PARKED
 * and counts on us).  False when the lock was handed to us first: it is
 * then ours, taken. */
bool hws_auto_give_up(struct waiter *me)
{
	_Atomic uint32_t *s = &me->c->state;
	/* relaxed: the CASes below re-check. */
	uint32_t v = atomic_load_explicit(s, memory_order_relaxed), n;
	do {
		if (me->claimant && handed(me, v)) {
			while (!take(me, &v, false))
				;
			return false;
		}
		n = me->claimant ? v & ~HWS_AUTO_STARVING : v;
		if (me->parked && (v & HWS_AUTO_LOCKED))
			n |= HWS_AUTO_PARKED;
		/* relaxed: nothing is published; a woken sleeper re-reads. */
	} while (n != v && !atomic_compare_exchange_weak_explicit(s, &v, n, memory_order_relaxed,
								 memory_order_relaxed));
	if (me->parked && !(v & HWS_AUTO_LOCKED))
		hws_futex_wake_bits(s, 1, CLASS_NORMAL | CLASS_CLAIM);
	return true;
}

/* A waiter that was woken may have taken the wake-up that cleared PARKED:
 * before it naps (where no wake reaches it) it sets PARKED again if the lock
 * is held, so that the other sleepers still get the next release's wake.
 * False when the lock is free (no nap then: the loop tries to take it). */
static bool keep_parked(struct waiter *me)
{
	_Atomic uint32_t *s = &me->c->state;
	/* relaxed: see park(). */
	uint32_t v = atomic_load_explicit(s, memory_order_relaxed);
	if (!me->parked)
		return v & HWS_AUTO_LOCKED;
	while ((v & (HWS_AUTO_LOCKED | HWS_AUTO_PARKED)) == HWS_AUTO_LOCKED &&
	       !atomic_compare_exchange_weak_explicit(s, &v, v | HWS_AUTO_PARKED,
						      memory_order_relaxed, memory_order_relaxed))
		;
	if (!(v & HWS_AUTO_LOCKED))
		return false;
	me->parked = false;   /* the wake we may have taken is passed on */
	return true;
}

/* Nap rather than park: not claiming, a policy that sleeps, and the lock
 * changed hands at least twice since we arrived (others keep taking it: a
 * release is not the event we wait for). */
static bool wants_nap(struct waiter *me, uint32_t v)
{
	enum hws_auto_mode m = mode();
	if (me->claimant || !sleeping_policy(me->w) || m == HWS_AUTO_FORCE_PARK)
		return false;
	if (m == HWS_AUTO_FORCE_NAP)
		return true;
	/* A real-time waiter's timed wake-ups preempt a holder of lower
	 * priority on its CPU: it parks, and the release wakes it. */
	if (realtime(me))
		return false;
	return moved(me->gen0, v) >= 2;
}

/* How long the next nap lasts: the first twice the adaptive policy's spin
 * budget (about four futex hand-offs: long against the system call it saves
 * the lock's users, short against the fairness bound), then doubling, so a
 * waiter wakes a few times per fairness bound, not hundreds. */
static uint64_t nap_ns(struct waiter *me)
{
	uint64_t spin_ns, pause_ns;
	hws_adaptive_budget(&spin_ns, &pause_ns);
	return 2 * spin_ns << (me->naps < 6 ? me->naps++ : 6);
}

/* How late sleeps end here (timer slack, a halted virtual CPU, a busy run
 * queue): a decaying maximum over this process's timed sleeps. */
static _Atomic uint64_t oversleep_ns;

static void slept_until(uint64_t end)
{
	uint64_t now = hws_now_ns(), late = now > end ? now - end : 0;
	/* relaxed: a self-contained estimate; a lost update only delays it. */
	uint64_t old = atomic_load_explicit(&oversleep_ns, memory_order_relaxed);
	atomic_store_explicit(&oversleep_ns, late > old ? late : old - old / 16,
			      memory_order_relaxed);
}

/* A waiter stops sleeping this long before its fairness bound and spins
 * instead, so that a late wake-up does not stretch its wait past the bound:
 * twice the lateness seen, plus the usual timer slack, at most half the
 * bound. */
uint64_t hws_auto_awake_margin(void)
{
	/* relaxed: see slept_until. */
	uint64_t m = 100000 + 2 * atomic_load_explicit(&oversleep_ns, memory_order_relaxed);
	return m < FAIR_NS / 2 ? m : FAIR_NS / 2;
}

/* Sleep until `until` or, for a waiter that may still claim, until it should
 * be awake: a nap when others keep taking the lock, else a park.  A waiter
 * past its bound whose claim did not get it the lock (a long hold) parks
 * until the release wakes it, then spins and claims again. */
void hws_auto_sleep_a_while(struct waiter *me, uint32_t v, uint64_t until)
{
	uint64_t now = hws_now_ns(), end = until;
	if (!me->claimant && me->fair_at <= now) {
		park(me, me->deadline);
		return;
	}
	/* Wake early enough to spin up to the bound, unless that moment has
	 * passed: the loop then found no spinner slot (or may not claim by
	 * spinning), and cutting the sleep would only make it a loop of
	 * system calls that time out at once, on the CPU the holder needs. */
	uint64_t early = me->fair_at - hws_auto_awake_margin();
	if (!me->claimant && me->fair_at != HWS_FOREVER && early < end && early > now)
		end = early;
	if (wants_nap(me, v)) {
		uint64_t nap_end = now + nap_ns(me);
		if (!keep_parked(me))
			return;
		hws_nap_until(nap_end < end ? nap_end : end);
		slept_until(nap_end < end ? nap_end : end);
	} else {
		park(me, end);
		if (end != HWS_FOREVER && hws_now_ns() >= end)
			slept_until(end);
	}
}

/* The machine has more runnable threads than CPUs (hws_cpus_busy): a waiter
 * whose policy sleeps then sleeps at once (see busy_nap), and a claim
 * of the next hand-off waits for the longest bound, since waits are then
 * mostly the time the holder is kept off a CPU.  Claims are made asleep
 * (the claimant is woken by the release that owes it the lock). */
bool hws_auto_cpus_busy(struct waiter *me, uint64_t now)
{
	if (mode() != HWS_AUTO_ADAPT || !sleeping_policy(me->w) || !hws_cpus_busy(now))
		return false;
	me->busy = true;
	if (me->crowd < CROWD_MAX && me->fair_at != HWS_FOREVER) {
		me->crowd = CROWD_MAX;
		me->fair_at = me->arrived + (fair_ns() << CROWD_MAX);
	}
	if (now < me->fair_at)
		return true;
	if (!hws_auto_claim(me))
		me->fair_at = now + FAIR_NS / 4;   /* another claim stands */
	return !me->claimant;
}

/* On a busy machine a waiter naps only while the lock changes hands at
 * least once per BUSY_NAP_HANDOFF_NS of its wait: releases are then so
 * frequent that a wake-up system call on each would be a good part of every
 * hold, and a napper that wakes finds the lock moving.  Rarer hand-offs mean
 * long holds, often with the holder off its CPU (it yields, or it was
 * preempted): a napper would wake for nothing onto a CPU that others need,
 * so it parks and the release wakes it.  A real-time waiter never naps. */
#define BUSY_NAP_HANDOFF_NS 1000u

bool hws_auto_busy_nap_pays(uint32_t handoffs, uint64_t waited_ns)
{
	return handoffs >= 2 && (uint64_t)handoffs * BUSY_NAP_HANDOFF_NS >= waited_ns;
}

static bool busy_nap(struct waiter *me, uint32_t v, uint64_t now)
{
	return hws_auto_busy_nap_pays(moved(me->gen0, v), now - me->arrived) && !realtime(me);
}

/* Before it parks, a busy machine's waiter gives its CPU away a few times
 * (HWS_AUTO_BUSY_YIELDS in a wait): a runnable thread queued on this CPU
 * (perhaps the preempted holder) runs at once, and the waiter looks again
 * without a park's two system calls.  Not where the program's threads call
 * sched_yield (hws_program_yielded): a holder that yields would find the
 * waiter queued before it on its way back, once per yield.  Not for a
 * real-time waiter: its yield passes the CPU only to threads of its own
 * priority. */
static bool busy_yield(struct waiter *me, uint64_t now)
{
	if (me->busy_yields >= HWS_AUTO_BUSY_YIELDS || hws_program_yielded(now) || realtime(me))
		return false;
	me->busy_yields++;
	hws_wait_tls.yields++;
	hws_yield();
	return true;
}

/* A busy machine's wait (hws_auto_cpus_busy): nap while the lock changes
 * hands often, else park until a release wakes us.  No timer for the
 * fairness bound: the loop checks it whenever the waiter wakes, and each
 * release of a lock with sleepers wakes one (arming and cancelling the timer
 * cost the yielding patterns about 4%). */
void hws_auto_busy_sleep(struct waiter *me, uint32_t v, uint64_t now)
{
	if (!busy_nap(me, v, now)) {
		if (busy_yield(me, now))
			return;
		park(me, me->deadline);
	} else if (keep_parked(me)) {
		uint64_t nap_end = now + nap_ns(me);
		hws_nap_until(nap_end < me->deadline ? nap_end : me->deadline);
	}
}

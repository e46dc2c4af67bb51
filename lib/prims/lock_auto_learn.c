/* auto: the lock's learning word (layout in prims/lock_auto_waiter.h):
 * the spin budget it allows, how a holder folds its wait into it, and
 * whether the lock is crowded. */
#include "prims/lock_auto_waiter.h"

/* The test switch (prims/lock_auto_internal.h), read by every stage through
 * mode(); defined here, in the stage that calls no other. */
_Atomic int hws_auto_test_mode;

/* The spin budget this lock's record allows (0: park at once). */
uint64_t hws_auto_spin_budget(const struct waiter *me, uint32_t v)
{
	uint64_t cap, pause;
	/* relaxed: advice only; written by holders (see hws_auto_learned()). */
	uint32_t rec = atomic_load_explicit(me->learn, memory_order_relaxed);
	hws_adaptive_budget(&cap, &pause);
	if (mode() == HWS_AUTO_FORCE_SPIN)
		return FAIR_NS;
	if (mode() == HWS_AUTO_FORCE_PARK || mode() == HWS_AUTO_FORCE_NAP)
		return 0;
	uint64_t avg = (rec & AVG_MASK) * AVG_UNIT_NS;
	if (avg >= cap - cap / 8 && (v / HWS_AUTO_GEN_ONE) % PROBE_EVERY)
		return 0;
	/* At least one futex hand-off (cap is two): spinning that long is
	 * never worse than twice the better choice in hindsight ([KARLIN91]);
	 * longer when this lock's waits are longer, up to the cap. */
	uint64_t b = cap / 2 + 2 * avg;
	return b < cap ? b : cap;
}

/* How often graces were wasted lately (0-255), after a wait that kept and
 * wasted these many: a kept one takes a quarter off, a wasted one adds an
 * eighth of what is left, and enough wasted ones in a row reach 255. */
uint32_t hws_auto_waste_update(uint32_t waste, uint32_t kept, uint32_t wasted)
{
	for (uint32_t i = 0; i < kept && waste; i++)
		waste -= waste / 4 + (waste < 4);
	for (uint32_t i = 0; i < wasted && waste < 255; i++)
		waste += (255 - waste) / 8 + (waste > 247);
	return waste;
}

/* Holder only: fold this acquisition's wait into the lock's record. */
void hws_auto_learned(const struct waiter *me)
{
	/* relaxed: only holders write the record, and the lock orders them;
	 * waiters read it as advice. */
	uint32_t rec = atomic_load_explicit(me->learn, memory_order_relaxed);
	uint32_t avg = rec & AVG_MASK, waste = rec >> WASTE_SHIFT, crowd = rec >> CROWD_SHIFT & 0xff;
	if (me->crowd)
		crowd += (255 - crowd) / 4 + (crowd > 251 && crowd < 255);
	else
		crowd -= crowd / 8 + (crowd > 0 && crowd < 8);
	waste = hws_auto_waste_update(waste, me->graces_kept, me->graces_wasted);
	/* How long this wait took, capped at the spin budget's cap (a wait
	 * that ended in the first look counts as 0): as glibc's adaptive mutex
	 * averages the spins a wait took, failed ones too, so that a budget
	 * that was too short grows. */
	uint64_t x = 0;
	if (me->busy) {
		/* A busy machine's wait never spun: its length is how long the
		 * holder and the waiter queued for CPUs, not how long a spin
		 * would have needed.  It leaves the average as it was. */
		x = avg;
	} else if (me->arrived) {
		uint64_t cap, pause, waited = hws_now_ns() - me->arrived;
		hws_adaptive_budget(&cap, &pause);
		x = (waited < cap ? waited : cap) / AVG_UNIT_NS;
		x = x < AVG_MASK ? x : AVG_MASK;
	}
	avg = (uint32_t)((int64_t)avg + ((int64_t)x - (int64_t)avg) / 8);
	uint32_t now = avg | crowd << CROWD_SHIFT | waste << WASTE_SHIFT;
	/* relaxed: as the load above; no store, no traffic on the line, when
	 * nothing changed. */
	if (now != rec)
		atomic_store_explicit(me->learn, now, memory_order_relaxed);
}

/* More waiters than CPUs lately: a holder is then often preempted, and a
 * spinner that only pauses keeps it from the CPU it needs ([MALTHUS]; the
 * adaptive policy yields for the same reason). */
bool hws_auto_crowded(const struct waiter *me)
{
	/* relaxed: advice, see hws_auto_learned(). */
	return me->crowd ||
	       (atomic_load_explicit(me->learn, memory_order_relaxed) >> CROWD_SHIFT & 0xff) >
		       CROWD_YIELD;
}

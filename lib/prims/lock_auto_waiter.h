/* One waiter of the auto lock (lib/prims/lock_auto*.c, not installed):
 * what its stages share.  lock_auto.c runs the loop; lock_auto_spin.c the
 * first look and the spinning stage; lock_auto_sleep.c parking, napping and
 * the busy-machine rule; lock_auto_learn.c the lock's learning word. */
#ifndef HWS_PRIMS_LOCK_AUTO_WAITER_H
#define HWS_PRIMS_LOCK_AUTO_WAITER_H

#include <sched.h>
#include "prims/lock_auto_internal.h"
#include "wait/internal.h"
#include <hwsync/lock_auto.h>

#define HWS_AUTO_HIDDEN __attribute__((visibility("hidden")))

/* The fairness bound: a waiter that has waited this long claims the next
 * hand-off.  A latency promise, not a tuning: hundreds of futex hand-offs,
 * so claims are rare and barging keeps its throughput, and well below the
 * scheduler's time slices; Go's mutex switches to hand-offs at the same
 * bound.  What it gives: docs/results (worst_wait of `hwsync bench locks`). */
#define FAIR_NS 1000000ull

/* A waiter that finds every spinner slot taken doubles its bound, at most
 * this many times (8 ms): with more threads than CPUs, what bounds a wait is
 * mostly how long the holder and the others are preempted. */
#define CROWD_MAX 3

/* Sleeper classes of the futex bitset: a claimant sleeps apart so that the
 * release that owes it the lock wakes it and nobody else. */
#define CLASS_NORMAL 1u
#define CLASS_CLAIM 2u

/* Learning word: bits 0-15 the moving average of how long waits took (at
 * most the spin budget's cap), in units of 64 ns; bits 16-23 how often
 * waiters lately found every spinner slot taken (more waiters than CPUs;
 * 0-255); bits 24-31 how often a spinner's grace was wasted lately (the lock
 * stayed free through it; 0-255).  Waits whose average reaches 7/8 of the cap
 * mostly outlast any spin: waiters then sleep without spinning, but for one
 * contended acquisition in PROBE_EVERY, whose spin keeps the average honest. */
#define AVG_UNIT_NS 64u
#define AVG_MASK 0xffffu
#define PROBE_EVERY 16u
#define CROWD_SHIFT 16
#define CROWD_YIELD 128u   /* above this spinners yield the CPU between polls */
#define WASTE_SHIFT 24
#define WASTE_SKIP 160u    /* above this spinners take a free lock at once */

/* A real-time waiter (SCHED_FIFO, SCHED_RR) spins at most this long, then
 * parks.  While it spins, a holder of lower priority on the same CPU cannot
 * run to release the lock, so a longer spin only delays the release it
 * waits for (WebKit measured waits of over a millisecond so); a few
 * microseconds still catch the hand-offs between running threads. */
#define REALTIME_SPIN_NS 3000u

struct waiter {
	hws_auto_core_t *c;
	_Atomic uint32_t *learn;
	const hws_wait_t *w;
	uint64_t deadline, fair_at;
	uint64_t arrived;
	uint32_t gen0;       /* the word when we arrived: how often it changed hands since */
	uint32_t claim_gen;  /* claimant: the generation its claim was made in */
	unsigned crowd;      /* times no spinner slot was free: the bound doubled */
	unsigned naps;       /* naps so far: each one twice as long as the last */
	unsigned busy_yields;   /* yields before a park on a busy machine */
	uint32_t graces_kept, graces_wasted;   /* the releaser came back / did not */
	bool parked, claimant;
	bool busy;           /* took the busy machine's path (hws_auto_cpus_busy) this wait */
	bool after_park;     /* back from a park (woken or timed out) since the loop's last look */
	int8_t realtime;     /* SCHED_FIFO or SCHED_RR: 1, 0, -1 = not asked yet */
};

static inline enum hws_auto_mode mode(void)
{
	/* relaxed: a test switch; any value read is a valid mode. */
	return (enum hws_auto_mode)atomic_load_explicit(&hws_auto_test_mode, memory_order_relaxed);
}

static inline uint64_t fair_ns(void)
{
	enum hws_auto_mode m = mode();
	return m == HWS_AUTO_FORCE_HANDOFF ? 0 : m == HWS_AUTO_FORCE_BARGE ? HWS_FOREVER : FAIR_NS;
}

static inline unsigned max_spinners(void)
{
	unsigned n = hws_usable_cpus() - 1;   /* the holder needs one CPU */
	return n < 31 ? n : 31;
}

/* Whether this thread runs under a real-time policy.  Asked once a wait
 * needs to know (before it spins or naps), never cached across waits: a
 * thread becomes real-time in ways the lock cannot see (pthread_setschedparam,
 * chrt, sched_setattr from another process). */
static inline bool realtime(struct waiter *me)
{
	if (me->realtime < 0) {
		int p = sched_getscheduler(0);
		me->realtime = p == SCHED_FIFO || p == SCHED_RR;
	}
	return me->realtime;
}

/* A claimant's lock was handed to it: while a claim stands every release
 * is a hand-off to the claimant, so the first release since the claim (the
 * generation moved) made it the holder.  LOCKED stays set for it, and
 * STARVING may already be another waiter's next claim. */
static inline bool handed(const struct waiter *me, uint32_t v)
{
	return v / HWS_AUTO_GEN_ONE != me->claim_gen;
}

/* Whether v lets us take the lock: free (a free lock carries no claim), or,
 * for a claimant, handed to it. */
static inline bool can_take(const struct waiter *me, uint32_t v)
{
	return me->claimant ? handed(me, v) : !(v & HWS_AUTO_LOCKED);
}

/* The word after we take the lock from v (for a claimant: after it was
 * handed to us, only our own marks change). */
static inline uint32_t taken(const struct waiter *me, uint32_t v, bool spinning)
{
	uint32_t n = v | HWS_AUTO_LOCKED | (me->parked ? HWS_AUTO_PARKED : 0);
	return spinning ? n - HWS_AUTO_SPIN_ONE : n;
}

/* Try to take the lock from v (which allows it); false when the CAS lost
 * (a claimant's only to another change of the word: the lock stays its). */
static inline bool take(struct waiter *me, uint32_t *v, bool spinning)
{
	/* acquire: pairs with the release CAS of hws_auto_core_release, or of
	 * hws_auto_core_hand_off for a claimant. */
	return atomic_compare_exchange_weak_explicit(&me->c->state, v, taken(me, *v, spinning),
						     memory_order_acquire, memory_order_relaxed);
}

/* Claim the next hand-off; false when another claim stands.  Where waiters
 * can spin, only a spinner claims (in hws_auto_spin()): the lock is then
 * handed to a thread that is running, never to one that must first be woken
 * (with more threads than CPUs that would be a convoy).  On one CPU, and when spinning
 * is switched off, a waiter claims and sleeps in the claimant class. */
static inline bool hws_auto_claim(struct waiter *me)
{
	_Atomic uint32_t *s = &me->c->state;
	/* relaxed: the CAS re-checks. */
	uint32_t v = atomic_load_explicit(s, memory_order_relaxed);
	do {
		if (v & HWS_AUTO_STARVING)
			return false;
		if (!(v & HWS_AUTO_LOCKED))
			return true;   /* free: take it in the loop, no claim needed */
		/* relaxed: the claim publishes nothing; the holder's release
		 * reads it with its CAS. */
	} while (!atomic_compare_exchange_weak_explicit(s, &v, v | HWS_AUTO_STARVING,
							memory_order_relaxed, memory_order_relaxed));
	me->claimant = true;
	me->claim_gen = v / HWS_AUTO_GEN_ONE;
	return true;
}

/* Generations between two readings of the word (it wraps at 2^24). */
static inline uint32_t moved(uint32_t from, uint32_t to)
{
	return (to / HWS_AUTO_GEN_ONE - from / HWS_AUTO_GEN_ONE) & 0xffffffu;
}

static inline bool sleeping_policy(const hws_wait_t *w)
{
	return w->kind == HWS_WAIT_FUTEX || w->kind == HWS_WAIT_ADAPTIVE;
}

/* lock_auto_learn.c */
HWS_AUTO_HIDDEN uint64_t hws_auto_spin_budget(const struct waiter *me, uint32_t v);
HWS_AUTO_HIDDEN void hws_auto_learned(const struct waiter *me);
HWS_AUTO_HIDDEN bool hws_auto_crowded(const struct waiter *me);
/* lock_auto_spin.c */
HWS_AUTO_HIDDEN int hws_auto_prespin(struct waiter *me);
HWS_AUTO_HIDDEN bool hws_auto_after_grace(struct waiter *me, uint32_t *v);
HWS_AUTO_HIDDEN int hws_auto_spin(struct waiter *me, uint64_t budget, bool gentle);
HWS_AUTO_HIDDEN uint32_t hws_auto_watch(struct waiter *me, uint32_t v);
/* lock_auto_sleep.c */
HWS_AUTO_HIDDEN bool hws_auto_give_up(struct waiter *me);
HWS_AUTO_HIDDEN void hws_auto_sleep_a_while(struct waiter *me, uint32_t v, uint64_t until);
HWS_AUTO_HIDDEN uint64_t hws_auto_awake_margin(void);
HWS_AUTO_HIDDEN bool hws_auto_cpus_busy(struct waiter *me, uint64_t now);
HWS_AUTO_HIDDEN void hws_auto_busy_sleep(struct waiter *me, uint32_t v, uint64_t now);

#endif

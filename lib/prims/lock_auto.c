/* auto: the adaptive lock's contended paths (the word and the fast paths are
 * in hwsync/lock_auto.h; the reasoning and sources in docs/locks.md).
 *
 * A waiter goes round one loop until it holds the lock or its deadline passes:
 *   take   the lock is free and no claim stands (or the claim is ours): CAS.
 *   spin   if a spinner slot is free (at most usable CPUs - 1) and this lock's
 *          spins have been paying: poll read-only with a growing backoff, for
 *          the lock's learned budget.  A free lock is left to its releaser
 *          for a short grace, unless this lock's graces are mostly wasted.
 *          Past the fairness bound the spinner claims the next hand-off
 *          (STARVING): from then on nobody else takes the free lock.
 *   nap    the lock keeps changing hands among others (short holds): sleep
 *          for a while without asking for a wake, so that the threads using
 *          the lock pay no system call for us.
 *   park   the lock is held and not moving (a long hold): set PARKED and
 *          sleep in the kernel until the release wakes us.
 * Sleeps end early enough to spin up to the fairness bound; a waiter that
 * finds no spinner slot (more waiters than CPUs) doubles its bound.  While
 * the machine has more runnable threads than CPUs nobody spins past the
 * first look (a spinner would keep a runnable thread, perhaps the holder,
 * off a CPU): a waiter parks, as glibc's mutex does, or naps while the lock
 * changes hands at least once a microsecond, and its bound is the longest.
 * The holder that took the lock after a wait updates the lock's learning
 * word; only a holder writes it, so the lock itself orders those writes.
 */
#include <sched.h>
#include "prims/lock_ops.h"
#include "prims/lock_auto_internal.h"
#include "wait/internal.h"
#include <hwsync/lock_auto.h>

HWS_LOCK_OPS_INLINE(auto)

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

/* Backoff between two polls of a spinner, in relax instructions: doubled
 * each time the lock went to another thread, reset when a spin starts. */
#define BACKOFF_MAX 128u
/* A crowded spinner pauses while the backoff is short, then yields. */
#define YIELD_AFTER 16u

/* The first look, before a waiter takes a spinner slot or reads the clock:
 * polls 1 to 8 relax instructions apart, for 0.4-2 us (where a slot, a
 * clock read and the write of the slot would cost more than they save). */
#define PRESPIN_MIN_NS 400u
#define PRESPIN_MAX_NS 2000u
#define PRESPIN_DELAY_MAX 8u

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

_Atomic int hws_auto_test_mode;

struct waiter {
	hws_auto_core_t *c;
	_Atomic uint32_t *learn;
	const hws_wait_t *w;
	uint64_t deadline, fair_at;
	uint64_t arrived;
	uint32_t gen0;       /* the word when we arrived: how often it changed hands since */
	unsigned crowd;      /* times no spinner slot was free: the bound doubled */
	unsigned naps;       /* naps so far: each one twice as long as the last */
	uint32_t graces_kept, graces_wasted;   /* the releaser came back / did not */
	bool parked, claimant;
	int8_t realtime;     /* SCHED_FIFO or SCHED_RR: 1, 0, -1 = not asked yet */
};

static enum hws_auto_mode mode(void)
{
	/* relaxed: a test switch; any value read is a valid mode. */
	return (enum hws_auto_mode)atomic_load_explicit(&hws_auto_test_mode, memory_order_relaxed);
}

static uint64_t fair_ns(void)
{
	enum hws_auto_mode m = mode();
	return m == HWS_AUTO_FORCE_HANDOFF ? 0 : m == HWS_AUTO_FORCE_BARGE ? HWS_FOREVER : FAIR_NS;
}

static unsigned max_spinners(void)
{
	unsigned n = hws_usable_cpus() - 1;   /* the holder needs one CPU */
	return n < 31 ? n : 31;
}

/* Spinning waiters of all auto locks of the process.  The limit of
 * max_spinners() holds for the process, not only for each lock: with many
 * contended locks (eight mutexes, each with its spinner) per-lock limits
 * would let more threads spin than there are CPUs, and a CPU that runs a
 * spinner, even one that yields, is not idle, so the scheduler does not
 * move a runnable holder queued elsewhere onto it ([MALTHUS]'s concurrency
 * restriction, applied to the process).  The counter is touched only when a
 * spin starts and ends, after the first look. */
static _Atomic uint32_t spinners_now;

static bool spinner_enter(void)
{
	/* relaxed: a count that only limits how many spin; it orders nothing. */
	if (atomic_fetch_add_explicit(&spinners_now, 1, memory_order_relaxed) < max_spinners())
		return true;
	/* relaxed: as above. */
	atomic_fetch_sub_explicit(&spinners_now, 1, memory_order_relaxed);
	return false;
}

static void spinner_leave(void)
{
	/* relaxed: as in spinner_enter. */
	atomic_fetch_sub_explicit(&spinners_now, 1, memory_order_relaxed);
}

unsigned hws_auto_spinners(void)
{
	/* relaxed: a snapshot for tests. */
	return atomic_load_explicit(&spinners_now, memory_order_relaxed);
}

unsigned hws_auto_max_spinners(void)
{
	return max_spinners();
}

/* Whether this thread runs under a real-time policy.  Asked once a wait
 * needs to know (before it spins or naps), never cached across waits: a
 * thread becomes real-time in ways the lock cannot see (pthread_setschedparam,
 * chrt, sched_setattr from another process). */
static bool realtime(struct waiter *me)
{
	if (me->realtime < 0) {
		int p = sched_getscheduler(0);
		me->realtime = p == SCHED_FIFO || p == SCHED_RR;
	}
	return me->realtime;
}

static bool can_take(uint32_t v, bool claimant)
{
	return !(v & HWS_AUTO_LOCKED) && (claimant || !(v & HWS_AUTO_STARVING));
}

/* The word after we take the lock from v. */
static uint32_t taken(const struct waiter *me, uint32_t v, bool spinning)
{
	uint32_t n = v | HWS_AUTO_LOCKED | (me->parked ? HWS_AUTO_PARKED : 0);
	if (me->claimant)
		n &= ~HWS_AUTO_STARVING;
	return spinning ? n - HWS_AUTO_SPIN_ONE : n;
}

/* The spin budget this lock's record allows (0: park at once). */
static uint64_t spin_budget(const struct waiter *me, uint32_t v)
{
	uint64_t cap, pause;
	/* relaxed: advice only; written by holders (see learned()). */
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

/* Holder only: fold this acquisition's wait into the lock's record. */
static void learned(const struct waiter *me)
{
	/* relaxed: only holders write the record, and the lock orders them;
	 * waiters read it as advice. */
	uint32_t rec = atomic_load_explicit(me->learn, memory_order_relaxed);
	uint32_t avg = rec & AVG_MASK, waste = rec >> WASTE_SHIFT, crowd = rec >> CROWD_SHIFT & 0xff;
	if (me->crowd)
		crowd += (255 - crowd) / 4 + (crowd > 251 && crowd < 255);
	else
		crowd -= crowd / 8 + (crowd > 0 && crowd < 8);
	for (uint32_t i = 0; i < me->graces_kept && waste; i++)
		waste -= waste / 4 + (waste < 4);
	for (uint32_t i = 0; i < me->graces_wasted && waste < 255; i++)
		waste += (255 - waste) / 8 + (waste > 247);
	/* How long this wait took, capped at the spin budget's cap (a wait
	 * that ended in the first look counts as 0): as glibc's adaptive mutex
	 * averages the spins a wait took, failed ones too, so that a budget
	 * that was too short grows. */
	uint64_t x = 0;
	if (me->arrived) {
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

static int won(struct waiter *me)
{
	if (me->claimant)
		hws_wait_tls.handoffs++;
	learned(me);
	return 0;
}

/* Try to take the lock from v (which allows it); false when the CAS lost. */
static bool take(struct waiter *me, uint32_t *v, bool spinning)
{
	/* acquire: pairs with the release CAS of hws_auto_core_release. */
	return atomic_compare_exchange_weak_explicit(&me->c->state, v, taken(me, *v, spinning),
						     memory_order_acquire, memory_order_relaxed);
}

/* Claim the next hand-off; false when another claim stands.  Where waiters
 * can spin, only a spinner claims (in spin()): the lock is then handed to a
 * thread that is running, never to one that must first be woken (with more
 * threads than CPUs that would be a convoy).  On one CPU, and when spinning
 * is switched off, a waiter claims and sleeps in the claimant class. */
static bool claim(struct waiter *me)
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
	return true;
}

/* A spinning claimant that stops spinning withdraws its claim: a claim
 * must not keep the lock from others while its claimant sleeps. */
static void withdraw(struct waiter *me)
{
	/* relaxed: as for the claim. */
	atomic_fetch_and_explicit(&me->c->state, ~HWS_AUTO_STARVING, memory_order_relaxed);
	me->claimant = false;
}

static bool sleeping_claims(void)
{
	enum hws_auto_mode m = mode();
	return max_spinners() == 0 || m == HWS_AUTO_FORCE_PARK || m == HWS_AUTO_FORCE_NAP;
}

/* How long a spinner leaves a lock it has just seen free to the thread that
 * released it, so that a thread coming straight back (a tight loop, a short
 * section after a short section) keeps the lock and its cache line instead
 * of handing both to another core.  The way from a release to the next
 * acquire in such a loop is tens of ns; the grace is a few times that, and
 * short against any work done between two critical sections that makes
 * handing the lock over pay.  In relax instructions, measured once, since
 * what a pause costs differs several-fold between processors. */
#define GRACE_NS 200u

static uint32_t grace_relaxes(void)
{
	static _Atomic uint32_t per_grace;
	/* relaxed: a self-contained number; racing first callers store
	 * similar values. */
	uint32_t g = atomic_load_explicit(&per_grace, memory_order_relaxed);
	if (g)
		return g;
	uint64_t t0 = hws_now_ns();
	for (unsigned i = 0; i < 256; i++)
		hws_cpu_relax();
	uint64_t ns = hws_now_ns() - t0;
	uint64_t n = GRACE_NS * 256ull / (ns ? ns : 1);
	g = n < 1 ? 1 : n > 4096 ? 4096 : (uint32_t)n;
	/* relaxed: as the load above. */
	atomic_store_explicit(&per_grace, g, memory_order_relaxed);
	return g;
}

/* We saw the lock free in *v: wait the grace and look again.  True when it
 * is still free and nobody took it meanwhile (*v is the new reading).  A lock
 * whose graces keep being wasted (its threads do not come straight back:
 * handing it over pays) gets none, but for a probe now and then. */
static bool after_grace(struct waiter *me, uint32_t *v)
{
	/* relaxed: advice, see learned(). */
	uint32_t waste = atomic_load_explicit(me->learn, memory_order_relaxed) >> WASTE_SHIFT;
	if (waste > WASTE_SKIP && (*v / HWS_AUTO_GEN_ONE) % 8)
		return true;
	for (uint32_t i = grace_relaxes(); i > 0; i--)
		hws_cpu_relax();
	/* relaxed: a look; take() re-checks with an acquire CAS. */
	uint32_t again = atomic_load_explicit(&me->c->state, memory_order_relaxed);
	bool same = can_take(again, false) && again / HWS_AUTO_GEN_ONE == *v / HWS_AUTO_GEN_ONE;
	*v = again;
	if (same)
		me->graces_wasted++;
	else
		me->graces_kept++;
	return same;
}

/* More waiters than CPUs lately: a holder is then often preempted, and a
 * spinner that only pauses keeps it from the CPU it needs ([MALTHUS]; the
 * adaptive policy yields for the same reason). */
static bool crowded(const struct waiter *me)
{
	/* relaxed: advice, see learned(). */
	return me->crowd ||
	       (atomic_load_explicit(me->learn, memory_order_relaxed) >> CROWD_SHIFT & 0xff) >
		       CROWD_YIELD;
}

/* The spinning stage: 1 = we hold the lock, 0 = the budget ran out, -1 =
 * no spinner slot was free.  `gentle`: the waiter only stays awake for the
 * bound, so it polls at the longest backoff from the start (the holder's
 * line is left alone between polls). */
static int spin(struct waiter *me, uint64_t budget, bool gentle)
{
	_Atomic uint32_t *s = &me->c->state;
	bool forced = mode() == HWS_AUTO_FORCE_SPIN;
	/* relaxed: the word is re-read with acquire before it is relied on. */
	uint32_t v = atomic_load_explicit(s, memory_order_relaxed);

	if (!forced && !spinner_enter())
		return -1;
	do {
		if ((v & HWS_AUTO_SPIN_MASK) / HWS_AUTO_SPIN_ONE >= (forced ? 31 : max_spinners())) {
			if (!forced)
				spinner_leave();
			return -1;
		}
		/* relaxed: the spinner count orders nothing; it only limits how
		 * many waiters spin. */
	} while (!atomic_compare_exchange_weak_explicit(s, &v, v + HWS_AUTO_SPIN_ONE,
							memory_order_relaxed, memory_order_relaxed));

	uint64_t t0 = hws_now_ns(), now = t0, polls = 0, blocked_since = 0;
	uint32_t delay = gentle ? BACKOFF_MAX : 1, gen = v / HWS_AUTO_GEN_ONE;
	/* A spin past the lock's budget (staying awake up to the fairness
	 * bound, or a claimant waiting for its hand-off) waits for a hold far
	 * longer than this lock's usual ones: its holder may well be off its
	 * CPU (preempted, or yielding with the lock held), so such a spinner
	 * yields between polls, which costs a system call when nothing else
	 * wants the CPU and gives it to the holder when it does. */
	bool yielding = forced || crowded(me) || gentle;
	for (;;) {
		/* relaxed: a poll; take() re-checks with an acquire CAS. */
		v = atomic_load_explicit(s, memory_order_relaxed);
		polls++;
		if (can_take(v, me->claimant) && !me->claimant && !after_grace(me, &v)) {
			/* The releaser came back for it: it keeps the lock and
			 * its cache line, and we poll less often. */
			gen = v / HWS_AUTO_GEN_ONE;
			delay = delay < BACKOFF_MAX ? delay * 2 : delay;
		} else if (can_take(v, me->claimant)) {
			if (take(me, &v, true)) {
				hws_wait_tls.polls += polls;
				hws_wait_tls.spin_ns += now - t0;
				if (!forced)
					spinner_leave();
				return 1;
			}
			delay = delay < BACKOFF_MAX ? delay * 2 : delay;
		} else if (v / HWS_AUTO_GEN_ONE != gen) {
			/* It went to somebody else: be more polite. */
			gen = v / HWS_AUTO_GEN_ONE;
			delay = delay < BACKOFF_MAX ? delay * 2 : delay;
		}
		if (yielding && delay >= YIELD_AFTER)
			sched_yield();   /* the holder may be waiting for this CPU */
		else
			for (uint32_t i = 0; i < delay; i++)
				hws_cpu_relax();
		if (polls % 16 && delay < 16)
			continue;
		now = hws_now_ns();
		/* A free lock held back by a claim whose claimant does not come
		 * (preempted, or slow to wake): after a budget, take it anyway.
		 * The claim stays (taken() keeps STARVING for a non-claimant), so
		 * our release goes to the claimant. */
		if ((v & (HWS_AUTO_LOCKED | HWS_AUTO_STARVING)) == HWS_AUTO_STARVING &&
		    !me->claimant) {
			if (!blocked_since)
				blocked_since = now;
			else if (now - blocked_since >= budget && take(me, &v, true)) {
				hws_wait_tls.polls += polls;
				hws_wait_tls.spin_ns += now - t0;
				if (!forced)
					spinner_leave();
				return 1;
			}
		} else {
			blocked_since = 0;
		}
		if (!me->claimant && now >= me->fair_at) {
			uint64_t cap, pause;
			if (claim(me) && me->claimant) {
				/* the holder owes us its next release: wait for
				 * it as long as a spin budget (a real-time
				 * claimant as long as it may spin, then it parks
				 * in the claimant class) */
				hws_adaptive_budget(&cap, &pause);
				budget = now - t0 + (realtime(me) ? REALTIME_SPIN_NS : cap);
				yielding = true;
				/* tests: the claim stays until the hand-off, however
				 * late the holder sees it */
				if (mode() == HWS_AUTO_FORCE_HANDOFF)
					budget = HWS_FOREVER;
			} else if (!me->claimant) {
				me->fair_at = now + FAIR_NS / 4;   /* another claim stands */
			}
		}
		if (now - t0 >= budget || now >= me->deadline)
			break;
	}
	hws_wait_tls.polls += polls;
	hws_wait_tls.spin_ns += now - t0;
	if (me->claimant)
		withdraw(me);
	/* relaxed: as for the increment. */
	atomic_fetch_sub_explicit(s, HWS_AUTO_SPIN_ONE, memory_order_relaxed);
	if (!forced)
		spinner_leave();
	return 0;
}

/* Generations between two readings of the word (it wraps at 2^24). */
static uint32_t moved(uint32_t from, uint32_t to)
{
	return (to / HWS_AUTO_GEN_ONE - from / HWS_AUTO_GEN_ONE) & 0xffffffu;
}

/* A waiter that neither spun nor waited before looks at the lock for about
 * as long as a few cache misses, to tell short holds (the word moves) from a
 * long one; the word it saw last. */
static uint32_t watch(struct waiter *me, uint32_t v)
{
	for (unsigned i = 0; i < 16 && !can_take(v, me->claimant); i++) {
		for (unsigned k = 0; k < 4; k++)
			hws_cpu_relax();
		/* relaxed: a look; taking re-reads with a CAS. */
		v = atomic_load_explicit(&me->c->state, memory_order_relaxed);
		hws_wait_tls.polls++;
	}
	return v;
}

static bool sleeping_policy(const hws_wait_t *w)
{
	return w->kind == HWS_WAIT_FUTEX || w->kind == HWS_WAIT_ADAPTIVE;
}

/* Sleep until the word changes, a release wakes us, or `until`. */
static void park(struct waiter *me, uint64_t until)
{
	_Atomic uint32_t *s = &me->c->state;
	/* relaxed: re-checked by the CAS and by the kernel. */
	uint32_t v = atomic_load_explicit(s, memory_order_relaxed);

	if (!sleeping_policy(me->w)) {
		/* A policy that never sleeps needs no wake: wait through it. */
		if (!can_take(v, me->claimant))
			hws_wait_while_eq32(s, v, me->w, until);
		return;
	}
	do {
		if (can_take(v, me->claimant))
			return;
		/* relaxed: PARKED only asks the next release for a wake; the
		 * kernel's re-check of the word under its lock closes the race
		 * with that release. */
	} while (!(v & HWS_AUTO_PARKED) &&
		 !atomic_compare_exchange_weak_explicit(s, &v, v | HWS_AUTO_PARKED,
							memory_order_relaxed, memory_order_relaxed));
	me->parked = true;
	hws_futex_sleep_bits(s, v | HWS_AUTO_PARKED, until,
			     me->claimant ? CLASS_CLAIM : CLASS_NORMAL);
}

/* Leaving without the lock: give back a claim, and pass on a wake-up we may
 * have consumed (the release that woke us cleared PARKED and counts on us). */
static int give_up(struct waiter *me)
{
	_Atomic uint32_t *s = &me->c->state;
	/* relaxed: the CASes below re-check. */
	uint32_t v = atomic_load_explicit(s, memory_order_relaxed), n;
	do {
		n = me->claimant ? v & ~HWS_AUTO_STARVING : v;
		if (me->parked && (v & HWS_AUTO_LOCKED))
			n |= HWS_AUTO_PARKED;
		/* relaxed: nothing is published; a woken sleeper re-reads. */
	} while (n != v && !atomic_compare_exchange_weak_explicit(s, &v, n, memory_order_relaxed,
								 memory_order_relaxed));
	if (me->parked && !(v & HWS_AUTO_LOCKED))
		hws_futex_wake_bits(s, 1, CLASS_NORMAL | CLASS_CLAIM);
	return ETIMEDOUT;
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
static uint64_t awake_margin(void)
{
	/* relaxed: see slept_until. */
	uint64_t m = 100000 + 2 * atomic_load_explicit(&oversleep_ns, memory_order_relaxed);
	return m < FAIR_NS / 2 ? m : FAIR_NS / 2;
}

/* Sleep until `until` or, for a waiter that may still claim, until it should
 * be awake: a nap when others keep taking the lock, else a park.  A waiter
 * past its bound whose claim did not get it the lock (a long hold) parks
 * until the release wakes it, then spins and claims again. */
static void sleep_a_while(struct waiter *me, uint32_t v, uint64_t until)
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
	uint64_t early = me->fair_at - awake_margin();
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

/* Most contended acquisitions end within one critical section: wait that
 * out first, reading the word only (no clock, no spinner slot, no write):
 * for about twice this lock's average wait, between PRESPIN_MIN_NS and
 * PRESPIN_MAX_NS, counted in relax instructions, with a backoff that grows
 * while the lock goes to others.  1 = we hold the lock. */
static int prespin(struct waiter *me)
{
	/* relaxed: advice, see learned(). */
	uint64_t avg = (atomic_load_explicit(me->learn, memory_order_relaxed) & AVG_MASK) *
		       AVG_UNIT_NS, want = 2 * avg;
	want = want < PRESPIN_MIN_NS ? PRESPIN_MIN_NS : want > PRESPIN_MAX_NS ? PRESPIN_MAX_NS : want;
	uint64_t relaxes = want * grace_relaxes() / GRACE_NS, spent = 0, polls = 0;
	/* relaxed: polls; take() re-checks with an acquire CAS. */
	uint32_t v = atomic_load_explicit(&me->c->state, memory_order_relaxed), delay = 1;
	while (spent < relaxes) {
		for (uint32_t i = 0; i < delay; i++)
			hws_cpu_relax();
		spent += delay;
		polls++;
		/* relaxed: as above. */
		uint32_t n = atomic_load_explicit(&me->c->state, memory_order_relaxed);
		if (can_take(n, false) && after_grace(me, &n) && take(me, &n, false)) {
			hws_wait_tls.polls += polls;
			return 1;
		}
		if ((n ^ v) / HWS_AUTO_GEN_ONE && delay < PRESPIN_DELAY_MAX)
			delay *= 2;   /* it went to somebody else */
		v = n;
	}
	hws_wait_tls.polls += polls;
	return 0;
}

/* The machine has more runnable threads than CPUs (hws_cpus_busy): a waiter
 * whose policy sleeps then sleeps at once (see busy_nap), and a claim
 * of the next hand-off waits for the longest bound, since waits are then
 * mostly the time the holder is kept off a CPU.  Claims are made asleep
 * (the claimant is woken by the release that owes it the lock). */
static bool cpus_busy(struct waiter *me, uint64_t now)
{
	if (mode() != HWS_AUTO_ADAPT || !sleeping_policy(me->w) || !hws_cpus_busy(now))
		return false;
	if (me->crowd < CROWD_MAX && me->fair_at != HWS_FOREVER) {
		me->crowd = CROWD_MAX;
		me->fair_at = me->arrived + (fair_ns() << CROWD_MAX);
	}
	if (now < me->fair_at)
		return true;
	if (!claim(me))
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

int hws_auto_core_lock_slow(hws_auto_core_t *c, _Atomic uint32_t *learn, const hws_wait_t *w,
			    uint64_t deadline_ns)
{
	struct waiter me = {
		.c = c, .learn = learn ? learn : hws_learn_slot(c), .w = w,
		.deadline = deadline_ns, .realtime = -1,
		/* relaxed: only compared with later readings. */
		.gen0 = atomic_load_explicit(&c->state, memory_order_relaxed),
	};
	if (mode() == HWS_AUTO_ADAPT && max_spinners() && !crowded(&me) &&
	    spin_budget(&me, me.gen0) && prespin(&me))
		return won(&me);
	uint64_t now = hws_now_ns(), fair = fair_ns();
	me.arrived = now;
	me.fair_at = fair >= HWS_FOREVER - now ? HWS_FOREVER : now + fair;

	for (;;) {
		/* relaxed: take() carries the acquire. */
		uint32_t v = atomic_load_explicit(&c->state, memory_order_relaxed);
		if (can_take(v, me.claimant)) {
			if (take(&me, &v, false))
				return won(&me);
			continue;
		}
		now = hws_now_ns();
		if (now >= me.deadline)
			return give_up(&me);
		if (!me.claimant && now >= me.fair_at && sleeping_claims()) {
			if (!claim(&me))
				me.fair_at = now + FAIR_NS / 4;   /* another claim stands */
			continue;
		}
		if (!me.claimant && cpus_busy(&me, now)) {
			/* No timer for the fairness bound: the loop checks it
			 * whenever the waiter wakes, and each release of a
			 * lock with sleepers wakes one (arming and cancelling
			 * the timer cost the yielding patterns about 4%). */
			if (!busy_nap(&me, v, now)) {
				park(&me, me.deadline);
			} else if (keep_parked(&me)) {
				uint64_t nap_end = now + nap_ns(&me);
				hws_nap_until(nap_end < me.deadline ? nap_end : me.deadline);
			}
			continue;
		}
		/* Near the bound a waiter with a spinner slot stays awake: it
		 * spins up to the bound and claims there (spin()). */
		uint64_t budget = spin_budget(&me, v);
		bool gentle = false;
		if (mode() == HWS_AUTO_ADAPT && realtime(&me))
			budget = budget < REALTIME_SPIN_NS ? budget : REALTIME_SPIN_NS;
		else if (!sleeping_claims() && mode() != HWS_AUTO_FORCE_SPIN && !me.claimant &&
		    me.fair_at != HWS_FOREVER && now + awake_margin() >= me.fair_at) {
			uint64_t to_bound = me.fair_at > now ? me.fair_at - now : 0;
			gentle = budget < to_bound;
			budget = budget > to_bound ? budget : to_bound + 1;
		}
		int spun = budget && !me.claimant ? spin(&me, budget, gentle) : -1;
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
		if (can_take(v1, me.claimant))
			continue;
		if (spun < 0 && !me.parked && !me.naps)
			v1 = watch(&me, v1);
		sleep_a_while(&me, v1, me.claimant || me.fair_at > me.deadline ? me.deadline
										: me.fair_at);
	}
}

void hws_auto_core_release_slow(hws_auto_core_t *c, uint32_t was)
{
	/* A claim stands: the wake is the claimant's, and PARKED stays set for
	 * the other sleepers.  Else clear PARKED and wake one sleeper of any
	 * class (a claimant class sleeper too: its claim may have been given up
	 * and re-made); the one woken sets PARKED again when it sleeps again or
	 * takes the lock.  Clearing it after other threads took and released
	 * the lock is still right: every clearing comes with a wake. */
	if (was & HWS_AUTO_STARVING) {
		hws_futex_wake_bits(&c->state, 1, CLASS_CLAIM);
		return;
	}
	/* relaxed: PARKED orders nothing; the kernel's check of the word
	 * under its lock closes the race with a sleeper. */
	atomic_fetch_and_explicit(&c->state, ~HWS_AUTO_PARKED, memory_order_relaxed);
	hws_futex_wake_bits(&c->state, 1, CLASS_NORMAL | CLASS_CLAIM);
}

/* auto: the first look and the spinning stage (docs/locks.md, "The auto
 * lock"): spinner slots, the releaser's grace, and polls with a backoff. */
#include <pthread.h>
#include "prims/lock_auto_waiter.h"

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

/* Spinning waiters of all auto locks of the process.  The limit of
 * max_spinners() holds for the process, not only for each lock: with many
 * contended locks (eight mutexes, each with its spinner) per-lock limits
 * would let more threads spin than there are CPUs, and a CPU that runs a
 * spinner, even one that yields, is not idle, so the scheduler does not
 * move a runnable holder queued elsewhere onto it ([MALTHUS]'s concurrency
 * restriction, applied to the process).  The counter is touched only when a
 * spin starts and ends, after the first look. */
static _Atomic uint32_t spinners_now;

/* A forked child runs only the thread that forked, which was not spinning:
 * the parent's spinners would keep their places in the count for good, and
 * on two CPUs nobody would ever spin in the child. */
static void spinners_after_fork(void)
{
	/* relaxed: the child has one thread, and it is here. */
	atomic_store_explicit(&spinners_now, 0, memory_order_relaxed);
}

/* Registered when the library is loaded, before any thread can spin, so
 * that starting a spin costs no check of whether it was. */
__attribute__((constructor)) static void watch_forks(void)
{
	pthread_atfork(NULL, NULL, spinners_after_fork);
}

/* A CAS, not an increment undone when over the limit: the count never
 * exceeds the limit, not even for a moment (tests read it). */
static bool spinner_enter(void)
{
	/* relaxed: a count that only limits how many spin; it orders nothing. */
	uint32_t n = atomic_load_explicit(&spinners_now, memory_order_relaxed);
	do
		if (n >= max_spinners())
			return false;
	/* relaxed: as above. */
	while (!atomic_compare_exchange_weak_explicit(&spinners_now, &n, n + 1,
						      memory_order_relaxed, memory_order_relaxed));
	return true;
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

/* A spinning claimant that stops spinning withdraws its claim: a claim
 * must not keep the lock from others while its claimant sleeps.  False when
 * the lock was handed to it first (it is then the claimant's to take). */
static bool withdraw(struct waiter *me)
{
	/* relaxed: the CAS re-checks. */
	uint32_t v = atomic_load_explicit(&me->c->state, memory_order_relaxed);
	do
		if (handed(me, v))
			return false;
	/* relaxed: as for the claim. */
	while (!atomic_compare_exchange_weak_explicit(&me->c->state, &v, v & ~HWS_AUTO_STARVING,
						      memory_order_relaxed, memory_order_relaxed));
	me->claimant = false;
	return true;
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
/* A lock that stopped granting graces still grants one on every GRACE_PROBE-th
 * hand-off, and on every GRACE_PROBE_SETTLED-th once every recent grace was
 * wasted (the waste count is at its top). */
#define GRACE_PROBE 8u
#define GRACE_PROBE_SETTLED 64u

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

/* Whether the lock's learning word grants a grace at generation gen: always
 * while graces pay; for a lock whose graces keep being wasted (its threads
 * do not come straight back: handing it over pays), only a probe now and
 * then. */
bool hws_auto_grace_granted(uint32_t learn, uint32_t gen)
{
	uint32_t waste = learn >> WASTE_SHIFT;
	return waste <= WASTE_SKIP ||
	       gen % (waste == 255 ? GRACE_PROBE_SETTLED : GRACE_PROBE) == 0;
}

/* We saw the lock free in *v: wait the grace, if the lock grants one, and
 * look again.  True when it is still free and nobody took it meanwhile (*v
 * is the new reading). */
bool hws_auto_after_grace(struct waiter *me, uint32_t *v)
{
	/* relaxed: advice, see hws_auto_learned(). */
	if (!hws_auto_grace_granted(atomic_load_explicit(me->learn, memory_order_relaxed),
				    *v / HWS_AUTO_GEN_ONE))
		return true;
	for (uint32_t i = grace_relaxes(); i > 0; i--)
		hws_cpu_relax();
	/* relaxed: a look; take() re-checks with an acquire CAS. */
	uint32_t again = atomic_load_explicit(&me->c->state, memory_order_relaxed);
	bool same = can_take(me, again) && again / HWS_AUTO_GEN_ONE == *v / HWS_AUTO_GEN_ONE;
	*v = again;
	if (same)
		me->graces_wasted++;
	else
		me->graces_kept++;
	return same;
}

/* The spinning stage: 1 = we hold the lock, 0 = the budget ran out, -1 =
 * no spinner slot was free.  `gentle`: the waiter only stays awake for the
 * bound, so it polls at the longest backoff from the start (the holder's
 * line is left alone between polls). */
int hws_auto_spin(struct waiter *me, uint64_t budget, bool gentle)
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

	uint64_t t0 = hws_now_ns(), now = t0, polls = 0;
	uint32_t delay = gentle ? BACKOFF_MAX : 1, gen = v / HWS_AUTO_GEN_ONE;
	/* A spin past the lock's budget (staying awake up to the fairness
	 * bound, or a claimant waiting for its hand-off) waits for a hold far
	 * longer than this lock's usual ones: its holder may well be off its
	 * CPU (preempted, or yielding with the lock held), so such a spinner
	 * yields between polls, which costs a system call when nothing else
	 * wants the CPU and gives it to the holder when it does. */
	bool yielding = forced || hws_auto_crowded(me) || gentle;
	for (;;) {
		/* relaxed: a poll; take() re-checks with an acquire CAS. */
		v = atomic_load_explicit(s, memory_order_relaxed);
		polls++;
		if (can_take(me, v) && !me->claimant && !hws_auto_after_grace(me, &v)) {
			/* The releaser came back for it: it keeps the lock and
			 * its cache line, and we poll less often. */
			gen = v / HWS_AUTO_GEN_ONE;
			delay = delay < BACKOFF_MAX ? delay * 2 : delay;
		} else if (can_take(me, v)) {
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
			hws_yield();   /* the holder may be waiting for this CPU */
		else
			for (uint32_t i = 0; i < delay; i++)
				hws_cpu_relax();
		if (polls % 16 && delay < 16)
			continue;
		now = hws_now_ns();
		if (!me->claimant && now >= me->fair_at) {
			uint64_t cap, pause;
			if (hws_auto_claim(me) && me->claimant) {
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
	if (me->claimant && !withdraw(me)) {
		/* The hand-off came first: the lock is ours.  relaxed: take()
		 * re-reads with its acquire CAS. */
		v = atomic_load_explicit(s, memory_order_relaxed);
		while (!take(me, &v, true))
			;
		if (!forced)
			spinner_leave();
		return 1;
	}
	/* relaxed: as for the increment. */
	atomic_fetch_sub_explicit(s, HWS_AUTO_SPIN_ONE, memory_order_relaxed);
	if (!forced)
		spinner_leave();
	return 0;
}

/* A waiter that neither spun nor waited before looks at the lock for about
 * as long as a few cache misses, to tell short holds (the word moves) from a
 * long one; the word it saw last. */
uint32_t hws_auto_watch(struct waiter *me, uint32_t v)
{
	for (unsigned i = 0; i < 16 && !can_take(me, v); i++) {
		for (unsigned k = 0; k < 4; k++)
			hws_cpu_relax();
		/* relaxed: a look; taking re-reads with a CAS. */
		v = atomic_load_explicit(&me->c->state, memory_order_relaxed);
		hws_wait_tls.polls++;
	}
	return v;
}

/* Most contended acquisitions end within one critical section: wait that
 * out first, reading the word only (no clock, no spinner slot, no write):
 * for about twice this lock's average wait, between PRESPIN_MIN_NS and
 * PRESPIN_MAX_NS, counted in relax instructions, with a backoff that grows
 * while the lock goes to others.  1 = we hold the lock. */
int hws_auto_prespin(struct waiter *me)
{
	/* relaxed: advice, see hws_auto_learned(). */
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
		if (can_take(me, n) && hws_auto_after_grace(me, &n) && take(me, &n, false)) {
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

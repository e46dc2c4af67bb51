/* The adaptive policy's budget, process-wide, and where it comes from.
 *
 * Sources, best first:
 *   measured  hws_adaptive_calibration() ran in this process: a tool asked
 *             for the helper-thread measurement (adaptive_measure.c);
 *   cache     the per-machine cache (hwsync info --calibrate) matches this
 *             CPU, kernel and hypervisor (adaptive_cache.c);
 *   learned   the median of the last 16 hand-offs measured on this process's
 *             own futex wake-ups, or of its first 5 until there are 16
 *             (adaptive_learn.c);
 *   default   none of these yet.
 * One rule turns any of them into the budget:
 *     spin  = 2 * hand-off, clamped to [1us, 100us]
 *     pause = 2 * sched_yield (at least 500ns), at most spin
 * The default spins for the longest budget the rule allows (100us), as if the
 * hand-off were 50us.  A budget that is too short makes a waiter sleep when it
 * should not, and a waiter that the partner must wake costs that partner a
 * whole hand-off: this convoy is the expensive mistake (docs/wait-policies.md).
 * One that is too long only burns up to 100us of polling (yielding after
 * the PAUSE part) on a wait that then sleeps anyway, and exactly those waits
 * produce the wake-ups the estimate is learned from.  Where sched_yield was
 * not measured (learned, default) it is taken as 1us: the pause share only
 * decides when polling starts to yield, and a wrong guess costs at most that
 * much of PAUSE polling or one early sched_yield.
 *
 * A waiter reads the budget at each wait (hws_adaptive_budget): one relaxed
 * load of a packed spin/pause word, so a policy initialised before anything
 * was known picks up the learned or measured numbers later.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include "wait/internal.h"

#define SPIN_MIN_NS 1000ull
#define SPIN_MAX_NS 100000ull
#define PAUSE_MIN_NS 500ull
#define UNMEASURED_YIELD_NS 1000ull

/* spin << 32 | pause.  fixed: from the measurement or the cache; learned:
 * from wake-ups; 0 = none.  Each is one word so that a waiter never sees the
 * spin of one source with the pause of another. */
static _Atomic uint64_t fixed_budget, learned_budget;
static _Atomic uint64_t learned_handoff, learned_samples;

enum { HAVE_MEASURED = 1, HAVE_CACHE = 2 };
static _Atomic unsigned have;
static struct hws_adaptive_calibration measured, cached;

static pthread_once_t cache_once = PTHREAD_ONCE_INIT;
static char cache_state[HWS_CACHE_STATE_MAX];

static pthread_once_t hw_once = PTHREAD_ONCE_INIT;
static enum hws_wait_kind hw_stage;

static void choose_hw(void)
{
	static const enum hws_wait_kind order[] = {
		HWS_WAIT_UMWAIT, HWS_WAIT_MWAITX, HWS_WAIT_WFE, HWS_WAIT_KMWAIT,
	};
	const char *why;

	hw_stage = HWS_WAIT_NKINDS;
	for (size_t i = 0; i < sizeof order / sizeof order[0]; i++)
		if (hws_wait_available(order[i], &why) == 0) {
			hw_stage = order[i];
			break;
		}
}

enum hws_wait_kind hws_adaptive_hw(void)
{
	hws_once(&hw_once, choose_hw);
	return hw_stage;
}

static uint64_t pack(uint64_t spin, uint64_t pause)
{
	return spin << 32 | pause;
}

/* The rule, arithmetic only. */
static void budget_of(const struct hws_adaptive_calibration *c, uint64_t *spin, uint64_t *pause)
{
	uint64_t yield = c->yield_ns ? c->yield_ns : UNMEASURED_YIELD_NS, s;

	if (c->handoff_ns)
		s = 2 * c->handoff_ns;
	else if (c->source == HWS_ADAPTIVE_MEASURED)   /* no helper thread */
		s = 2 * (c->futex_wait_ns + c->futex_wake_ns + 2 * c->yield_ns);
	else
		s = SPIN_MAX_NS;
	*spin = s < SPIN_MIN_NS ? SPIN_MIN_NS : s > SPIN_MAX_NS ? SPIN_MAX_NS : s;
	*pause = 2 * yield < PAUSE_MIN_NS ? PAUSE_MIN_NS : 2 * yield;
	if (*pause > *spin)
		*pause = *spin;
}

void hws_adaptive_rule(struct hws_adaptive_calibration *c)
{
	static const char *const from[] = {
		[HWS_ADAPTIVE_DEFAULT] = "",
		[HWS_ADAPTIVE_LEARNED] = "",
		[HWS_ADAPTIVE_CACHE] = " (from the per-machine calibration cache)",
		[HWS_ADAPTIVE_MEASURED] = "",
	};
	/* the first estimate until 16 wake-ups were timed (adaptive_learn.c) */
	static const char *const learned[] = {
		" (median of the first 5 futex wake-ups in this process)",
		" (median of the last 16 futex wake-ups in this process)",
	};
	char hw[64];

	budget_of(c, &c->spin_ns, &c->pause_ns);
	c->hw = hws_adaptive_hw();
	snprintf(hw, sizeof hw, "%s", c->hw < HWS_WAIT_NKINDS ? hws_wait_kind_name(c->hw)
							    : "no hardware wait (none here)");
	if (c->source == HWS_ADAPTIVE_DEFAULT)
		snprintf(c->rule, sizeof c->rule,
			 "spin = 100us (the longest the rule allows) until 5 futex wake-ups in "
			 "this process were timed, PAUSE for the first 2*1us then yield; then %s; "
			 "then futex", hw);
	else
		snprintf(c->rule, sizeof c->rule,
			 "spin = 2 * %s%s, clamped to [1us, 100us], PAUSE for the first %s then "
			 "yield; then %s; then futex",
			 c->handoff_ns ? "futex hand-off (wake to running)"
				       : "(futex_wait + futex_wake + 2*yield) (no helper thread)",
			 c->source == HWS_ADAPTIVE_LEARNED ? learned[c->samples >= 16] : from[c->source],
			 c->yield_ns ? "2*yield" : "2*1us (yield not measured)", hw);
}

void hws_adaptive_use(const struct hws_adaptive_calibration *c)
{
	measured = *c;
	/* relaxed: a self-contained word (see the top); a later measurement
	 * replaces a cached budget. */
	atomic_store_explicit(&fixed_budget, pack(c->spin_ns, c->pause_ns), memory_order_relaxed);
	/* release: publishes `measured` to hws_adaptive_current's acquire. */
	atomic_fetch_or_explicit(&have, HAVE_MEASURED, memory_order_release);
}

static void load_cache(void)
{
	uint64_t expected = 0;

	if (hws_adaptive_cache_read(&cached, cache_state, sizeof cache_state))
		return;
	cached.source = HWS_ADAPTIVE_CACHE;
	hws_adaptive_rule(&cached);
	/* relaxed: as in hws_adaptive_use; the CAS keeps a measurement that
	 * came first. */
	atomic_compare_exchange_strong_explicit(&fixed_budget, &expected,
						pack(cached.spin_ns, cached.pause_ns),
						memory_order_relaxed, memory_order_relaxed);
	/* release: publishes `cached` to hws_adaptive_current's acquire. */
	atomic_fetch_or_explicit(&have, HAVE_CACHE, memory_order_release);
}

void hws_adaptive_prepare(void)
{
	hws_once(&cache_once, load_cache);
	hws_adaptive_hw();
}

const char *hws_adaptive_cache_state(void)
{
	hws_once(&cache_once, load_cache);
	return cache_state;
}

void hws_adaptive_set_learned(uint64_t handoff_ns, uint64_t samples)
{
	struct hws_adaptive_calibration c = { .handoff_ns = handoff_ns,
					      .source = HWS_ADAPTIVE_LEARNED };
	uint64_t spin, pause;

	budget_of(&c, &spin, &pause);
	/* relaxed: self-contained words, read for reporting or by waiters
	 * (learned_budget; see the top). */
	atomic_store_explicit(&learned_handoff, handoff_ns, memory_order_relaxed);
	atomic_store_explicit(&learned_samples, samples, memory_order_relaxed);
	atomic_store_explicit(&learned_budget, pack(spin, pause), memory_order_relaxed);
}

void hws_adaptive_budget(uint64_t *spin_ns, uint64_t *pause_ns)
{
	/* relaxed: each word is a complete budget (see the top). */
	uint64_t b = atomic_load_explicit(&fixed_budget, memory_order_relaxed);
	if (!b)
		b = atomic_load_explicit(&learned_budget, memory_order_relaxed);
	if (!b) {
		const struct hws_adaptive_calibration none = { .source = HWS_ADAPTIVE_DEFAULT };
		budget_of(&none, spin_ns, pause_ns);
		return;
	}
	*spin_ns = b >> 32;
	*pause_ns = b & 0xffffffffu;
}

void hws_adaptive_current(struct hws_adaptive_calibration *out)
{
	unsigned h;
	uint64_t samples;

	hws_adaptive_prepare();
	/* acquire: pairs with the release in hws_adaptive_use / load_cache. */
	h = atomic_load_explicit(&have, memory_order_acquire);
	/* relaxed: reporting only. */
	samples = atomic_load_explicit(&learned_samples, memory_order_relaxed);
	if (h & HAVE_MEASURED) {
		*out = measured;
	} else if (h & HAVE_CACHE) {
		*out = cached;
	} else {
		memset(out, 0, sizeof *out);
		/* relaxed: reporting only. */
		out->handoff_ns = atomic_load_explicit(&learned_handoff, memory_order_relaxed);
		out->samples = samples;   /* the rule's text says how many */
		out->source = out->handoff_ns ? HWS_ADAPTIVE_LEARNED : HWS_ADAPTIVE_DEFAULT;
		hws_adaptive_rule(out);
	}
	out->samples = samples;
}

const char *hws_adaptive_source_name(enum hws_adaptive_source s)
{
	switch (s) {
	case HWS_ADAPTIVE_DEFAULT: return "default";
	case HWS_ADAPTIVE_LEARNED: return "learned";
	case HWS_ADAPTIVE_CACHE: return "cache";
	case HWS_ADAPTIVE_MEASURED: return "measured";
	}
	return "unknown";
}

/* adaptive policy: spin, then the best hardware wait, then futex.
 *
 * The rule (competitive spinning, [KARLIN91]): spinning for as long
 * as blocking would cost is never worse than twice the better of the two
 * choices made in hindsight.  What blocking costs a waiter is the time from
 * the waker's FUTEX_WAKE until the sleeper runs again (the futex hand-off):
 * a system call on each side, an inter-processor interrupt and the other
 * CPU's way out of idle (on a VM also a VM exit and entry).  Then
 *     spin = 2 * hand-off, clamped to [1us, 100us],
 * polling with PAUSE for the first 2 * sched_yield of it (at least 500ns) and
 * with sched_yield for the rest.  Why twice: when the thread we wait for was
 * itself asleep, it needs one hand-off to run again before it can release
 * us.  A budget of exactly one hand-off then expires just before it arrives,
 * we sleep too, and it must wake us: a convoy in which every episode of a
 * barrier or every hand-over of a lock sleeps (measured: 9 of 20 runs of a
 * 2-thread OpenMP barrier loop under the shim fell into it at 1x, 0 of 20 at
 * ~2x).  Spinning twice as long keeps the worst case within 3x of the best
 * choice in hindsight.
 * Where the hand-off comes from (a measurement a tool asked for, the
 * per-machine cache, this process's own wake-ups, or a default until then)
 * is adaptive_budget.c's business: this file reads the budget at each wait,
 * so nothing is measured when a program starts.
 * A hardware wait (umwait C0.1 > mwaitx > wfe > kmwait, the first available)
 * then waits without burning issue slots for hw_ns (200us by default), and
 * only then does the waiter sleep in the kernel.  The waker must call
 * hws_wake32(), which costs no system call unless someone reached the futex
 * stage.
 * Each waited-on word also learns from its own waits whether spinning pays
 * (below), and with one usable CPU nothing polls with PAUSE: the thread we
 * wait for needs this CPU, so the budget is spent in sched_yield and the
 * hardware stage is skipped.
 */
#include <sched.h>
#include <stdbool.h>
#include "wait/internal.h"

/* ---- per object: does spinning pay on this word? -------------------------
 *
 * The budget is right for a wait of unknown length.  Many objects are not
 * unknown: a condvar signalled every 200us, a semaphore fed by a slow
 * producer, a lock held across I/O.  Every one of their waits spins the whole
 * budget in vain and then sleeps anyway.  So each waited-on word keeps a
 * score in a learning slot (learn.c), as glibc's adaptive mutex keeps a moving
 * average of its spins in each mutex [NPTL-ADAPT] (there to size the spin,
 * here to decide whether to spin at all).  A wait's length d is counted from
 * the end of the first poll loop (from its start when there is none), and
 * the wait scores
 *     short   ended in the first poll loop, or d <= spin
 *             (caught by the spin, or would have been)       score - 4
 *     long    d > 2 * spin: a spin twice as long would
 *             have failed too                                score + 1
 *     between                                                score - 1
 * A wait that slept and whose waker timed its FUTEX_WAKE (futex.c: the
 * hand-off sample) is judged by what a spin would have needed, d less its
 * own wake-up: short within the budget, else long, with no band between.
 * (0..15).  From score 4 on (four long waits in a row from nothing, and in
 * the long run only while more than 4 of 5 waits are long) a wait goes to
 * sleep at once: no poll loop, no spin, no hardware stage; libomp's block
 * time of 0 [LIBOMP], chosen per object from its own waits rather than
 * set for a whole program.  [KARLIN91]'s rule bounds the loss on a wait whose
 * length is unknown; on a wait known to be long, any polling only loses (even
 * the 64 PAUSEs of the first loop cost a few us, as much as the sleep's own
 * system calls).  The "between" band keeps convoys out: two threads that
 * wake each other through the kernel wait about two hand-offs, one budget,
 * each; calling that long would make the convoy permanent.  Where the
 * wake-up was timed, such a wait less its own wake-up is the partner's
 * wake-up and work, about half a budget: short.  A condvar signalled every
 * 200 us whose consumer runs 50 us after each signal waits the whole period
 * each time, no more than twice a budget of 100 us: judged by d alone it
 * sat in the band and kept spinning.
 * Probes: a skipping word polls and spins as usual on every 16th wait; a
 * probe that fails doubles the interval (up to 1024 waits), one that does
 * not makes the next wait a probe too.  The sleeping waits see most changes
 * back to short waits themselves: one judged by its timed wake-up sees
 * exactly what a spin would have needed, an untimed one a wait shorter than
 * a hand-off.  What only a probe sees is a word changed long before its
 * FUTEX_WAKE (a waker preempted between the two, or one that defers its
 * wake): asleep such a wait is long, to a spinner short.  A probe spins one
 * budget, and every wait it stands in for outlasted a budget (that is what
 * long means), so probing every N waits spins at most 1/N of the time the
 * word is waited on: 1.6% at 64, 0.1% at 1024.  Every threshold is a ratio
 * to the budget, which is this machine's (adaptive_budget.c): nothing here
 * is a measured constant.
 * Every wait reads its slot once; one that ends in the first poll loop
 * writes it only when it holds something, so busy locks pay one load. */

/* A slot: score (bits 0-3), probe interval 16 << level waits (bits 4-6),
 * waits left until the next probe (bits 8-18).  Zero is "nothing learned";
 * any other value (also another user's, on a collision) is a valid state. */
#define SCORE(s) ((s) & 15u)
#define LEVEL(s) ((s) >> 4 & 7u)
#define UNTIL(s) ((s) >> 8 & 2047u)
#define PACK(score, level, until) ((score) | (level) << 4 | (until) << 8)
#define SKIP_AT 4
#define LEVEL_MAX 6
#define FIRST_PROBE 16

enum outcome { SHORT, BETWEEN, LONG };

static uint32_t next_state(uint32_t s, enum outcome o, bool probe)
{
	unsigned score = SCORE(s), level = LEVEL(s), until = UNTIL(s);
	bool skipping = score >= SKIP_AT;

	if (o == SHORT)
		score = score > 4 ? score - 4 : 0;
	else if (o == BETWEEN)
		score = score ? score - 1 : 0;
	else if (score < 15)
		score++;
	if (score < SKIP_AT)
		return score;
	if (!skipping)
		return PACK(score, 0u, (unsigned)FIRST_PROBE);
	if (probe && o == LONG) {
		level = level < LEVEL_MAX ? level + 1 : LEVEL_MAX;
		until = FIRST_PROBE << level;
	} else if (probe) {
		level = 0;
		until = 0;
	} else if (until) {
		until--;
	}
	return PACK(score, level, until);
}

static void learn(_Atomic uint32_t *slot, enum outcome o, bool probe)
{
	/* relaxed: the slot is a hint that publishes nothing else; a waiter
	 * that updates it between our load and CAS makes the CAS fail, and one
	 * observation is dropped, never a wait delayed. */
	uint32_t s = atomic_load_explicit(slot, memory_order_relaxed), n = next_state(s, o, probe);
	if (n != s)
		atomic_compare_exchange_strong_explicit(slot, &s, n, memory_order_relaxed,
							memory_order_relaxed);
}

/* A wait of length d (woke: its own timed wake-up, 0 if none) against the
 * spin budget.  A timed wake-up tells when the waker called FUTEX_WAKE,
 * right after it changed the word: what a spin would have had to last is d
 * less the wake-up itself, and it is short or long by that alone.  Without
 * one the wake-up is somewhere in d, hence the band. */
static enum outcome judge(uint64_t d, uint64_t woke, uint64_t spin_ns)
{
	if (woke && woke < d)
		return d - woke <= spin_ns ? SHORT : LONG;
	return d <= spin_ns ? SHORT : d > 2 * spin_ns ? LONG : BETWEEN;
}

/* This thread's last wait that a futex wake-up ended, judged when the
 * thread next waits: the judgement needs the wake-up's sample, whose taking
 * (futex.c) would delay the thread's return to what it waited for.  At the
 * next wait's start the thread is not needed elsewhere, and that wait, like
 * any, reads the slot with every verdict in it. */
static _Thread_local struct {
	_Atomic uint32_t *slot;   /* NULL: nothing to judge */
	uint64_t d, spin_ns, sleep;
	bool probe;
} unjudged;

static void judge_last_sleep(void)
{
	if (unjudged.slot) {
		uint64_t woke = hws_futex_woken_sample(unjudged.sleep);
		learn(unjudged.slot, judge(unjudged.d, woke, unjudged.spin_ns), unjudged.probe);
		unjudged.slot = NULL;
	}
}

/* The word's slot, keyed by its second byte: the word's own address is the
 * key of whatever owns the word (the auto lock keeps its learning there). */
static _Atomic uint32_t *slot_of(const void *word)
{
	return hws_learn_slot((const char *)word + 1);
}

int hws_adaptive_skips(const void *addr)
{
	/* relaxed: a hint, as in learn(). */
	uint32_t s = atomic_load_explicit(slot_of(addr), memory_order_relaxed);
	return SCORE(s) >= SKIP_AT;
}

/* The hardware stages that count in TSC cycles need the counter frequency;
 * until it is known without measuring (20 ms into the process where CPUID
 * does not give it), a wait skips the stage and goes on to futex. */
static bool hw_stage_ready(enum hws_wait_kind hw)
{
	if (hw == HWS_WAIT_UMWAIT || hw == HWS_WAIT_TPAUSE || hw == HWS_WAIT_MWAITX)
		return hws_counter_hz_ready() != 0;
	return hw < HWS_WAIT_NKINDS;
}

int hws_wait_adaptive(const _Atomic uint32_t *a, uint32_t old, const hws_wait_t *w, uint64_t dl)
{
	uint64_t start, now, polls = 0, spin_ns, pause_ns, d, sleeps;
	bool one_cpu = hws_usable_cpus() == 1, yielding = w->pause_ns == 0 || one_cpu;
	_Atomic uint32_t *slot = slot_of(a);
	judge_last_sleep();
	/* relaxed: a hint, as in learn(). */
	uint32_t seen = atomic_load_explicit(slot, memory_order_relaxed);
	bool skip = SCORE(seen) >= SKIP_AT, probe = skip && !UNTIL(seen), in_spin = false;
	enum outcome o;
	hws_wait_t hw;
	int rc;

	skip = skip && !probe;
	/* Most waits of a busy lock or barrier end within a few hundred ns:
	 * poll once round the clock-check interval before paying for a clock
	 * read (clock_gettime costs ~20-50 ns under a hypervisor). */
	for (; polls < HWS_POLLS_PER_CLOCK && !yielding && !skip; polls++) {
		/* acquire: pairs with the store that changed the word. */
		if (atomic_load_explicit(a, memory_order_acquire) != old) {
			hws_wait_tls.polls += polls;
			if (seen)
				learn(slot, SHORT, probe);
			return 0;
		}
		hws_cpu_relax();
	}
	start = hws_now_ns();
	/* spin=auto, pause=auto: the process's budget now (adaptive_budget.c). */
	hws_adaptive_budget(&spin_ns, &pause_ns);
	if (w->spin_ns)
		spin_ns = w->spin_ns;
	if (w->pause_ns != UINT64_MAX)
		pause_ns = w->pause_ns;
	else if (pause_ns > spin_ns)
		pause_ns = spin_ns;
	if (skip)
		goto sleep;

	/* Stage 1: poll for the spin budget: with PAUSE for the first pause_ns,
	 * then with sched_yield between reads, so that a preempted lock holder
	 * or barrier partner queued on this CPU gets to run (oversubscription);
	 * on an idle CPU the yield returns at once and only adds its own cost
	 * (~0.6 us here) to the wake-up latency. */
	/* acquire: pairs with the store that changed the word. */
	while (atomic_load_explicit(a, memory_order_acquire) == old) {
		if (yielding)
			hws_yield();
		else
			hws_cpu_relax();
		if (++polls % HWS_POLLS_PER_CLOCK && !yielding)
			continue;
		now = hws_now_ns();
		if (now >= dl) {
			hws_wait_tls.polls += polls;
			return ETIMEDOUT;
		}
		if (now - start >= spin_ns)
			break;
		yielding = one_cpu || now - start >= pause_ns;
	}
	hws_wait_tls.polls += polls;
	/* acquire: pairs with the store that changed the word. */
	rc = 0;
	if (atomic_load_explicit(a, memory_order_acquire) != old) {
		in_spin = true;
		goto done;
	}

	/* Stage 2: the hardware wait, bounded by hw_ns (none on one CPU: it
	 * would hold the CPU the thread we wait for needs). */
	if (!one_cpu && hw_stage_ready(w->hw)) {
		uint64_t hw_end = hws_deadline_after_ns(w->hw_ns);
		hw = *w;
		hw.kind = w->hw;
		hw.state = 1;
		hw.max_ns = w->hw_ns;
		rc = hws_wait_while_eq32(a, old, &hw, hw_end < dl ? hw_end : dl);
		if (rc != ETIMEDOUT || hw_end >= dl)
			goto done;
	}

	/* Stage 3: sleep in the kernel. */
sleep:
	sleeps = hws_futex_woken.seq;
	rc = hws_wait_futex(a, old, w, dl);
	if (rc == 0 && hws_futex_woken.seq != sleeps) {
		/* a wake-up ended it: judged with its sample at the next wait */
		unjudged.slot = slot;
		unjudged.d = hws_futex_woken.at - start;
		unjudged.spin_ns = spin_ns;
		unjudged.sleep = hws_futex_woken.seq;
		unjudged.probe = probe;
		return 0;
	}
done:
	d = hws_now_ns() - start;
	o = judge(d, 0, spin_ns);
	/* A wait cut short by its deadline or a signal says only that it was
	 * at least this long.  One that ended in the spin but long after it
	 * should have ended was not running meanwhile (a sched_yield that gave
	 * the CPU away, a preemption): when the word changed is unknown, and
	 * the spin cost little CPU. */
	if (o == LONG ? !in_spin : rc == 0)
		learn(slot, o, probe);
	return rc;
}

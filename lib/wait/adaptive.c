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
 */
#include <sched.h>
#include "wait/internal.h"

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
	uint64_t start, now, polls = 0, spin_ns, pause_ns;
	bool yielding = w->pause_ns == 0;
	hws_wait_t hw;
	int rc;

	/* Most waits of a busy lock or barrier end within a few hundred ns:
	 * poll once round the clock-check interval before paying for a clock
	 * read (clock_gettime costs ~20-50 ns under a hypervisor). */
	for (; polls < HWS_POLLS_PER_CLOCK && !yielding; polls++) {
		/* acquire: pairs with the store that changed the word. */
		if (atomic_load_explicit(a, memory_order_acquire) != old) {
			hws_wait_tls.polls += polls;
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

	/* Stage 1: poll for the spin budget: with PAUSE for the first pause_ns,
	 * then with sched_yield between reads, so that a preempted lock holder
	 * or barrier partner queued on this CPU gets to run (oversubscription);
	 * on an idle CPU the yield returns at once and only adds its own cost
	 * (~0.6 us here) to the wake-up latency. */
	/* acquire: pairs with the store that changed the word. */
	while (atomic_load_explicit(a, memory_order_acquire) == old) {
		if (yielding)
			sched_yield();
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
		yielding = now - start >= pause_ns;
	}
	hws_wait_tls.polls += polls;
	if (atomic_load_explicit(a, memory_order_acquire) != old)
		return 0;

	/* Stage 2: the hardware wait, bounded by hw_ns. */
	if (hw_stage_ready(w->hw)) {
		uint64_t hw_end = hws_deadline_after_ns(w->hw_ns);
		hw = *w;
		hw.kind = w->hw;
		hw.state = 1;
		hw.max_ns = w->hw_ns;
		rc = hws_wait_while_eq32(a, old, &hw, hw_end < dl ? hw_end : dl);
		if (rc != ETIMEDOUT || hw_end >= dl)
			return rc;
	}

	/* Stage 3: sleep in the kernel. */
	return hws_wait_futex(a, old, w, dl);
}

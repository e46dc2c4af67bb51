/* adaptive policy: spin, then the best hardware wait, then futex.
 *
 * The rule (competitive spinning, Karlin et al. 1991): spinning for as long
 * as blocking would cost is never worse than twice the better of the two
 * choices made in hindsight.  What blocking costs a waiter is the time from
 * the waker's FUTEX_WAKE until the sleeper runs again: a system call on each
 * side, an inter-processor interrupt and the other CPU's way out of idle (on
 * a VM also a VM exit and entry).  We measure it once per process: a helper
 * thread and the caller hand a token back and forth 16 times, each side
 * asleep in FUTEX_WAIT until the other wakes it (~1 ms in all), and take the
 * median one-way hand-off.  Then
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
 * If the helper thread cannot be created, the single-threaded estimate
 * futex_wait + futex_wake + 2 * sched_yield stands in (and the rule says so).
 * A hardware wait (umwait C0.1 > mwaitx > wfe > kmwait, the first available)
 * then waits without burning issue slots for hw_ns (200us by default), and
 * only then does the waiter sleep in the kernel.  The waker must call
 * hws_wake32(), which costs no system call unless someone reached the futex
 * stage.
 */
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "wait/internal.h"

static struct hws_adaptive_calibration cal;
static pthread_once_t cal_once = PTHREAD_ONCE_INIT;

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

enum probe { PROBE_WAKE, PROBE_WAIT, PROBE_YIELD };

/* Median cost of one operation over 101 tries. */
static uint64_t median_cost(enum probe what)
{
	enum { N = 101 };
	uint64_t t[N];
	uint32_t word = 0;

	for (int i = 0; i < N; i++) {
		uint64_t t0 = hws_now_ns();
		switch (what) {
		case PROBE_WAKE:   /* nobody sleeps: the bare system call */
			syscall(SYS_futex, &word, FUTEX_WAKE | FUTEX_PRIVATE_FLAG, 1, NULL, NULL, 0);
			break;
		case PROBE_WAIT:   /* value differs: enters the kernel, returns EAGAIN */
			syscall(SYS_futex, &word, FUTEX_WAIT | FUTEX_PRIVATE_FLAG, 1, NULL, NULL, 0);
			break;
		case PROBE_YIELD:
			sched_yield();
			break;
		}
		t[i] = hws_now_ns() - t0;
	}
	qsort(t, N, sizeof t[0], cmp_u64);
	return t[N / 2];
}

/* One-way futex hand-off: the partner sleeps until woken, then wakes us. */
enum { HANDOFFS = 16 };
static _Atomic uint32_t token;

static void futex_wait_while(_Atomic uint32_t *w, uint32_t v)
{
	/* acquire: pairs with the release store of the other side. */
	while (atomic_load_explicit(w, memory_order_acquire) == v)
		syscall(SYS_futex, w, FUTEX_WAIT | FUTEX_PRIVATE_FLAG, v, NULL, NULL, 0);
}

static void pass_token(uint32_t v)
{
	/* release: pairs with the acquire load in futex_wait_while. */
	atomic_store_explicit(&token, v, memory_order_release);
	syscall(SYS_futex, &token, FUTEX_WAKE | FUTEX_PRIVATE_FLAG, 1, NULL, NULL, 0);
}

static void *handoff_partner(void *arg)
{
	(void)arg;
	for (uint32_t i = 0; i < HANDOFFS; i++) {
		futex_wait_while(&token, 2 * i);   /* odd values are ours */
		pass_token(2 * i + 2);
	}
	return NULL;
}

/* Median one-way hand-off in ns, or 0 when no thread could be started. */
static uint64_t median_handoff(void)
{
	uint64_t t[HANDOFFS];
	pthread_t th;

	atomic_store_explicit(&token, 0, memory_order_relaxed);   /* before the thread exists */
	if (pthread_create(&th, NULL, handoff_partner, NULL))
		return 0;
	for (uint32_t i = 0; i < HANDOFFS; i++) {
		/* Let the partner fall asleep so the wake is a real one. */
		uint64_t t0 = hws_now_ns();
		while (hws_now_ns() - t0 < 20000)
			hws_cpu_relax();
		t0 = hws_now_ns();
		pass_token(2 * i + 1);
		futex_wait_while(&token, 2 * i + 1);
		t[i] = (hws_now_ns() - t0) / 2;
	}
	pthread_join(th, NULL);
	qsort(t, HANDOFFS, sizeof t[0], cmp_u64);
	return t[HANDOFFS / 2];
}

static void calibrate(void)
{
	static const enum hws_wait_kind hw_order[] = {
		HWS_WAIT_UMWAIT, HWS_WAIT_MWAITX, HWS_WAIT_WFE, HWS_WAIT_KMWAIT,
	};
	const char *why;
	uint64_t spin;

	cal.futex_wake_ns = median_cost(PROBE_WAKE);
	cal.futex_wait_ns = median_cost(PROBE_WAIT);
	cal.yield_ns = median_cost(PROBE_YIELD);
	cal.handoff_ns = median_handoff();
	spin = cal.handoff_ns ? 2 * cal.handoff_ns
			      : 2 * (cal.futex_wait_ns + cal.futex_wake_ns + 2 * cal.yield_ns);
	cal.spin_ns = spin < 1000 ? 1000 : spin > 100000 ? 100000 : spin;
	cal.pause_ns = 2 * cal.yield_ns < 500 ? 500 : 2 * cal.yield_ns;
	if (cal.pause_ns > cal.spin_ns)
		cal.pause_ns = cal.spin_ns;
	cal.hw = HWS_WAIT_NKINDS;
	for (size_t i = 0; i < sizeof hw_order / sizeof hw_order[0]; i++)
		if (hws_wait_available(hw_order[i], &why) == 0) {
			cal.hw = hw_order[i];
			break;
		}
	snprintf(cal.rule, sizeof cal.rule,
		 "spin = 2 * %s, clamped to [1us, 100us], PAUSE for the first "
		 "2*yield then yield; then %s; then futex",
		 cal.handoff_ns ? "futex hand-off (wake to running)"
				: "(futex_wait + futex_wake + 2*yield) (no helper thread)",
		 cal.hw < HWS_WAIT_NKINDS ? hws_wait_kind_name(cal.hw) : "no hardware wait (none here)");
}

const struct hws_adaptive_calibration *hws_adaptive_calibration(void)
{
	pthread_once(&cal_once, calibrate);
	return &cal;
}

int hws_wait_adaptive(const _Atomic uint32_t *a, uint32_t old, const hws_wait_t *w, uint64_t dl)
{
	uint64_t start, now, polls = 0;
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
		if (now - start >= w->spin_ns)
			break;
		yielding = now - start >= w->pause_ns;
	}
	hws_wait_tls.polls += polls;
	if (atomic_load_explicit(a, memory_order_acquire) != old)
		return 0;

	/* Stage 2: the hardware wait, bounded by hw_ns. */
	if (w->hw < HWS_WAIT_NKINDS) {
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

/* adaptive policy: spin, then the best hardware wait, then futex.
 *
 * The rule (competitive spinning, Karlin et al. 1991): spinning for as long
 * as blocking would cost is never worse than twice the better of the two
 * choices made in hindsight.  Blocking costs the waiter a FUTEX_WAIT entry and
 * a context switch out and back, and the waker a FUTEX_WAKE; we measure these
 * on this machine once per process (single-threaded, ~1 ms) and spin for
 *     spin = futex_wait + futex_wake + 2 * sched_yield,  clamped to [1us, 50us].
 * A hardware wait (umwait C0.1 > mwaitx > wfe > kmwait, the first available)
 * then waits without burning issue slots for hw_ns (200us by default), and
 * only then does the waiter sleep in the kernel.  The waker must call
 * hws_wake32(), which costs no system call unless someone reached the futex
 * stage. */
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
	spin = cal.futex_wait_ns + cal.futex_wake_ns + 2 * cal.yield_ns;
	cal.spin_ns = spin < 1000 ? 1000 : spin > 50000 ? 50000 : spin;
	cal.hw = HWS_WAIT_NKINDS;
	for (size_t i = 0; i < sizeof hw_order / sizeof hw_order[0]; i++)
		if (hws_wait_available(hw_order[i], &why) == 0) {
			cal.hw = hw_order[i];
			break;
		}
	snprintf(cal.rule, sizeof cal.rule,
		 "spin = futex_wait + futex_wake + 2*yield, clamped to [1us, 50us]; "
		 "then %s; then futex",
		 cal.hw < HWS_WAIT_NKINDS ? hws_wait_kind_name(cal.hw) : "no hardware wait (none here)");
}

const struct hws_adaptive_calibration *hws_adaptive_calibration(void)
{
	pthread_once(&cal_once, calibrate);
	return &cal;
}

int hws_wait_adaptive(const _Atomic uint32_t *a, uint32_t old, const hws_wait_t *w, uint64_t dl)
{
	uint64_t start = hws_now_ns(), now, polls = 0;
	hws_wait_t hw;
	int rc;

	/* Stage 1: spin with PAUSE for the calibrated budget. */
	/* acquire: pairs with the store that changed the word. */
	while (atomic_load_explicit(a, memory_order_acquire) == old) {
		hws_cpu_relax();
		if (++polls % HWS_POLLS_PER_CLOCK)
			continue;
		now = hws_now_ns();
		if (now >= dl) {
			hws_wait_tls.polls += polls;
			return ETIMEDOUT;
		}
		if (now - start >= w->spin_ns)
			break;
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

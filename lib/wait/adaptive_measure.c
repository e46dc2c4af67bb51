/* The adaptive policy's measurement with a helper thread, for tools
 * (hwsync info, hwsync bench, hwsync info --calibrate which stores it in the
 * per-machine cache).  A program that merely uses the adaptive policy never
 * runs this: it starts from the cache or a default and learns from its own
 * wake-ups (adaptive_budget.c).
 *
 * A helper thread and the caller hand a token back and forth 16 times, each
 * side asleep in FUTEX_WAIT until the other wakes it (~1 ms in all); the
 * median one-way hand-off is what blocking costs a waiter.  The single-thread
 * costs of a futex wake, a futex wait that returns at once and sched_yield
 * are measured too (medians of 101).  If the helper thread cannot be created,
 * futex_wait + futex_wake + 2 * sched_yield stands in for the hand-off (and
 * the rule says so).
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
			hws_yield();
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

static void measure(void)
{
	cal.futex_wake_ns = median_cost(PROBE_WAKE);
	cal.futex_wait_ns = median_cost(PROBE_WAIT);
	cal.yield_ns = median_cost(PROBE_YIELD);
	cal.handoff_ns = median_handoff();
	cal.source = HWS_ADAPTIVE_MEASURED;
	hws_adaptive_rule(&cal);
	hws_adaptive_use(&cal);
}

const struct hws_adaptive_calibration *hws_adaptive_calibration(void)
{
	hws_once(&cal_once, measure);
	return &cal;
}

/* auto's rules about threads and CPUs (docs/locks.md), each checked with a
 * waiter behind a long hold, and each beside a control that shows the check
 * can fail: the same waiter without the rule's condition spins for most of
 * the hold.  The test fixes the adaptive spin budget at 50 ms, so that a
 * spin that ignored a rule lasts far longer than any scheduling noise.
 *   realtime  a SCHED_FIFO waiter spins at most a few microseconds, then
 *             parks (skipped where SCHED_FIFO is refused);
 *   busy      while the machine has more runnable threads than CPUs, a
 *             waiter does not spin at all (the verdict forced): it yields
 *             its CPU HWS_AUTO_BUSY_YIELDS times, then parks; beside a
 *             thread that keeps calling sched_yield (as the shim notes
 *             it), or as a SCHED_FIFO thread, it parks without yielding,
 *             and the note lapses within two turns once that thread stops;
 *   limit     at most usable CPUs - 1 waiters spin at once in the process,
 *             each on its own lock; a child forked while some spin counts
 *             none of them;
 *   busy naps on a busy machine a waiter naps only while the lock changes
 *             hands at least once a microsecond: behind two threads that
 *             pass the lock every 20 us it sleeps, and never naps (it
 *             parks), beside the same waiter made to nap (the test mode),
 *             which shows its sleeps would be seen as naps;
 *   busy learning  a busy machine's wait leaves the lock's average wait as
 *             it was and does not time its sleep for the adaptive policy,
 *             beside a parking waiter on an idle machine, which moves the
 *             average and times its first sleep;
 *   sampler   /proc/loadavg's runnable count is parsed, and runnable hogs
 *             make the machine busy;
 *   grace     a spinner grants the releaser its grace until the lock's
 *             graces are mostly wasted, then on one hand-off in 8, and on
 *             one in 64 once the waste count is at its top; wasted graces
 *             in a row reach that top, and one kept grace leaves it;
 *   top grace a waiter that finds the lock free at the top of its loop
 *             after a nap grants the grace there too (the lock counts it
 *             wasted: nobody came back), and one woken from a park takes
 *             the lock at once (no grace counted).
 * Needs two usable CPUs (else nobody may spin, and it is skipped). */
#include <sched.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "tests/locks/lock_test.h"
#include <hwsync/arch.h>
#include <hwsync/lock_auto.h>
#include "prims/lock_auto_internal.h"
#include "wait/internal.h"

#define HOLD_NS 30000000ull       /* each long hold */
#define BUDGET_NS 50000000ull     /* the fixed spin budget */
#define SPUN_LONG_NS 10000000ull  /* a control spins at least this long */
#define SPUN_SHORT_NS 5000000ull  /* a rule's waiter spins at most this (3 us + noise) */

static hws_wait_t policy;

struct waiter_arg {
	hws_auto_t *lock;
	int fifo;               /* make the waiter SCHED_FIFO first */
	_Atomic int started;
	uint64_t spin_ns;       /* out: its time in the spinning stage */
	uint64_t sleeps;        /* out: its kernel sleeps */
	uint64_t yields;        /* out: its busy-machine yields */
	uint64_t timed;         /* out: its sleeps timed for the adaptive policy */
	_Atomic uint64_t asked_at;  /* out: when it asked for the lock */
};

static void *waiter(void *p)
{
	struct waiter_arg *a = p;
	if (a->fifo) {
		struct sched_param sp = { .sched_priority = 1 };
		CHECK_EQ(pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp), 0);
	}
	uint64_t s0 = hws_wait_tls.spin_ns, z0 = hws_wait_tls.sleeps, y0 = hws_wait_tls.yields;
	uint64_t t0 = hws_futex_woken.seq;
	atomic_store(&a->started, 1);
	atomic_store(&a->asked_at, test_now_ns());
	CHECK_EQ(hws_auto_acquire(a->lock), 0);
	a->spin_ns = hws_wait_tls.spin_ns - s0;
	a->sleeps = hws_wait_tls.sleeps - z0;
	a->yields = hws_wait_tls.yields - y0;
	a->timed = hws_futex_woken.seq - t0;
	CHECK_EQ(hws_auto_release(a->lock), 0);
	return NULL;
}

/* One waiter behind a hold of hold_ns; its spin time and sleeps.  The
 * lock's learning word starts as `learn` and is left in *learned (if not
 * NULL). */
static struct waiter_arg behind_hold_learning(int fifo, uint64_t hold_ns, uint32_t learn,
					      uint32_t *learned)
{
	static hws_auto_t lock;
	struct waiter_arg a = { .lock = &lock, .fifo = fifo };
	pthread_t th;
	hws_auto_init(&lock, &policy);
	atomic_store(&lock.learn, learn);
	CHECK_EQ(hws_auto_acquire(&lock), 0);
	CHECK_EQ(pthread_create(&th, NULL, waiter, &a), 0);
	while (!atomic_load(&a.started))
		usleep(100);
	usleep(hold_ns / 1000);
	CHECK_EQ(hws_auto_release(&lock), 0);
	CHECK_EQ(pthread_join(th, NULL), 0);
	if (learned)
		*learned = atomic_load(&lock.learn);
	return a;
}

static struct waiter_arg behind_hold(int fifo)
{
	return behind_hold_learning(fifo, HOLD_NS, 0, NULL);
}

static bool fifo_permitted(void)
{
	struct sched_param fifo = { .sched_priority = 1 }, other = { .sched_priority = 0 };
	if (pthread_setschedparam(pthread_self(), SCHED_FIFO, &fifo))
		return false;
	CHECK_EQ(pthread_setschedparam(pthread_self(), SCHED_OTHER, &other), 0);
	return true;
}

/* A thread of the program that calls sched_yield now and then. */
static _Atomic int noting;
static void *noter(void *p)
{
	while (atomic_load(&noting)) {
		hws_yield_noted();
		usleep(200);
	}
	return p;
}

static void realtime_and_busy(void)
{
	/* Nothing here has noted a yield (the test calls no sched_yield of
	 * the shim), so the first busy waiter below may yield. */
	CHECK(!hws_program_yielded(hws_now_ns()));
	hws_cpus_busy_force(0);
	struct waiter_arg ctl = behind_hold(0);
	printf("control: a waiter spun %.3f ms of a %.0f ms hold\n", ctl.spin_ns / 1e6,
	       HOLD_NS / 1e6);
	CHECK(ctl.spin_ns >= SPUN_LONG_NS);

	if (fifo_permitted()) {
		struct waiter_arg rt = behind_hold(1);
		printf("realtime: the SCHED_FIFO waiter spun %.3f ms, slept %llu times\n",
		       rt.spin_ns / 1e6, (unsigned long long)rt.sleeps);
		CHECK(rt.spin_ns <= SPUN_SHORT_NS);
		CHECK(rt.sleeps >= 1);
	} else {
		printf("realtime: skipped: SCHED_FIFO is not permitted here\n");
	}

	hws_cpus_busy_force(1);
	struct waiter_arg busy = behind_hold(0);
	printf("busy: the waiter spun %.3f ms, yielded %llu times, slept %llu times\n",
	       busy.spin_ns / 1e6, (unsigned long long)busy.yields,
	       (unsigned long long)busy.sleeps);
	CHECK_EQ(busy.spin_ns, 0);
	CHECK_EQ(busy.yields, HWS_AUTO_BUSY_YIELDS);
	CHECK(busy.sleeps >= 1);

	/* Beside a thread that keeps calling sched_yield as the shim's does. */
	pthread_t nt;
	atomic_store(&noting, 1);
	CHECK_EQ(pthread_create(&nt, NULL, noter, NULL), 0);
	while (!hws_program_yielded(hws_now_ns()))
		usleep(100);
	struct waiter_arg beside = behind_hold(0);
	atomic_store(&noting, 0);
	CHECK_EQ(pthread_join(nt, NULL), 0);
	printf("busy, a thread yielding: the waiter spun %.3f ms, yielded %llu times, "
	       "slept %llu times\n", beside.spin_ns / 1e6, (unsigned long long)beside.yields,
	       (unsigned long long)beside.sleeps);
	CHECK_EQ(beside.spin_ns, 0);
	CHECK_EQ(beside.yields, 0);
	CHECK(beside.sleeps >= 1);
	/* The note lapses within two turns of 4 ms. */
	usleep(10000);
	(void)hws_program_yielded(hws_now_ns());
	usleep(10000);
	CHECK(!hws_program_yielded(hws_now_ns()));
	if (fifo_permitted()) {
		struct waiter_arg rt = behind_hold(1);
		printf("busy, realtime: the SCHED_FIFO waiter yielded %llu times, slept %llu "
		       "times\n", (unsigned long long)rt.yields, (unsigned long long)rt.sleeps);
		CHECK_EQ(rt.yields, 0);
		CHECK(rt.sleeps >= 1);
	}
	hws_cpus_busy_force(0);
}

/* Waiters on as many locks, each held: never more than the limit spin. */
static void spinner_limit(void)
{
	enum { MAXW = 33 };
	static hws_auto_t locks[MAXW];
	static struct waiter_arg args[MAXW];
	pthread_t th[MAXW];
	unsigned limit = hws_auto_max_spinners(), n = limit + 2 < MAXW ? limit + 2 : MAXW;
	unsigned most = 0;

	hws_cpus_busy_force(0);
	for (unsigned i = 0; i < n; i++) {
		hws_auto_init(&locks[i], &policy);
		CHECK_EQ(hws_auto_acquire(&locks[i]), 0);
		args[i] = (struct waiter_arg){ .lock = &locks[i] };
		CHECK_EQ(pthread_create(&th[i], NULL, waiter, &args[i]), 0);
	}
	unsigned at_fork = 0;
	int child = -1;
	for (uint64_t end = test_now_ns() + HOLD_NS; test_now_ns() < end;) {
		unsigned s = hws_auto_spinners();
		most = s > most ? s : most;
		if (s && !at_fork) {
			/* A child has none of the parent's spinners. */
			at_fork = s;
			pid_t pid = fork();
			CHECK(pid >= 0);
			if (pid == 0)
				_exit(hws_auto_spinners() == 0 ? 0 : 1);
			int st;
			CHECK_EQ(waitpid(pid, &st, 0), pid);
			child = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
		}
		usleep(50);
	}
	for (unsigned i = 0; i < n; i++)
		CHECK_EQ(hws_auto_release(&locks[i]), 0);
	for (unsigned i = 0; i < n; i++)
		CHECK_EQ(pthread_join(th[i], NULL), 0);
	printf("limit: %u waiters on %u locks, at most %u spun at once (limit %u)\n", n, n, most,
	       limit);
	printf("fork: %u spinning in the parent, the child counted %s\n", at_fork,
	       child == 0 ? "none" : "some (or failed)");
	CHECK(most <= limit);
	CHECK(most >= 1);   /* control: they do spin */
	CHECK_EQ(child, 0);
}

/* Two threads pass the lock back and forth, each holding it PASS_US; a
 * waiter joins and takes it ROUNDS times.  Returns the waiter's naps. */
#define PASS_US 20
static hws_auto_t passed;
static _Atomic int passing;

static void *passer(void *p)
{
	(void)p;
	while (atomic_load(&passing)) {
		CHECK_EQ(hws_auto_acquire(&passed), 0);
		usleep(PASS_US);
		CHECK_EQ(hws_auto_release(&passed), 0);
		sched_yield();
	}
	return NULL;
}

static uint64_t naps_behind_passers(int busy, unsigned rounds, uint64_t *sleeps)
{
	pthread_t th[2];
	hws_cpus_busy_force(busy);
	hws_auto_init(&passed, &policy);
	atomic_store(&passing, 1);
	for (int i = 0; i < 2; i++)
		CHECK_EQ(pthread_create(&th[i], NULL, passer, NULL), 0);
	usleep(2000);
	uint64_t n0 = hws_wait_tls.naps, z0 = hws_wait_tls.sleeps;
	for (unsigned i = 0; i < rounds; i++) {
		CHECK_EQ(hws_auto_acquire(&passed), 0);
		CHECK_EQ(hws_auto_release(&passed), 0);
		usleep(PASS_US);
	}
	uint64_t naps = hws_wait_tls.naps - n0;
	*sleeps = hws_wait_tls.sleeps - z0;
	atomic_store(&passing, 0);
	for (int i = 0; i < 2; i++)
		CHECK_EQ(pthread_join(th[i], NULL), 0);
	hws_cpus_busy_force(0);
	return naps;
}

static void busy_naps(void)
{
	unsigned rounds = 200;
	uint64_t busy_sleeps, nap_sleeps;
	uint64_t busy = naps_behind_passers(1, rounds, &busy_sleeps);
	atomic_store(&hws_auto_test_mode, HWS_AUTO_FORCE_NAP);
	uint64_t napping = naps_behind_passers(0, rounds, &nap_sleeps);
	atomic_store(&hws_auto_test_mode, HWS_AUTO_ADAPT);
	printf("busy naps: behind a lock passed every %d us, %u acquisitions: on a busy machine "
	       "%llu sleeps, %llu of them naps; made to nap: %llu naps\n", PASS_US, rounds,
	       (unsigned long long)busy_sleeps, (unsigned long long)busy,
	       (unsigned long long)napping);
	CHECK(busy_sleeps >= 1);
	CHECK_EQ(busy, 0);
	/* The rule's arithmetic: at least two hand-offs, one per microsecond. */
	CHECK(hws_auto_busy_nap_pays(2, 1000));
	CHECK(hws_auto_busy_nap_pays(100, 50000));
	CHECK(!hws_auto_busy_nap_pays(2, 2001));
	CHECK(!hws_auto_busy_nap_pays(1, 10));
	CHECK(!hws_auto_busy_nap_pays(3, 200000));
	CHECK(napping >= 1);   /* control: these waits do reach the sleep, and naps count */
}

static unsigned granted_of_512(uint32_t waste)
{
	unsigned n = 0;
	for (uint32_t gen = 1000; gen < 1000 + 512; gen++)
		n += hws_auto_grace_granted(waste << 24 | 0x123456u, gen);
	return n;
}

static void grace_rules(void)
{
	CHECK_EQ(granted_of_512(0), 512u);
	CHECK_EQ(granted_of_512(160), 512u);
	CHECK_EQ(granted_of_512(161), 64u);
	CHECK_EQ(granted_of_512(254), 64u);
	CHECK_EQ(granted_of_512(255), 8u);
	uint32_t waste = 0;
	unsigned steps = 0;
	while (waste < 255 && steps < 1000)
		waste = hws_auto_waste_update(waste, 0, 1), steps++;
	printf("grace: %u wasted graces in a row reach the top\n", steps);
	CHECK_EQ(waste, 255u);
	CHECK(steps < 64);
	CHECK(hws_auto_waste_update(255, 1, 0) < 255);
	CHECK(hws_auto_waste_update(255, 1, 0) > 160);   /* one kept grace: probes every 8th */
	CHECK_EQ(hws_auto_waste_update(255, 0, 3), 255u);
	CHECK(hws_auto_waste_update(200, 8, 0) <= 160);  /* a run of kept ones: graces again */
}

/* A waiter sleeps (mode m) behind a hold of TOP_HOLD_US that nobody takes
 * again after its release: the waste count its grace left in the lock's
 * learning word.  A trial counts where the waiter slept and the lock was
 * released well inside its fairness bound (a claimant grants no grace). */
#define TOP_HOLD_US 300
static uint32_t waste_after_sleep(enum hws_auto_mode m, const char *name)
{
	static hws_auto_t lock;
	for (unsigned trial = 0; trial < 50; trial++) {
		struct waiter_arg a = { .lock = &lock };
		pthread_t th;
		hws_auto_init(&lock, &policy);
		atomic_store(&hws_auto_test_mode, m);
		CHECK_EQ(hws_auto_acquire(&lock), 0);
		CHECK_EQ(pthread_create(&th, NULL, waiter, &a), 0);
		while (!atomic_load(&a.started))
			usleep(10);
		usleep(TOP_HOLD_US);
		uint64_t released_at = test_now_ns();
		CHECK_EQ(hws_auto_release(&lock), 0);
		CHECK_EQ(pthread_join(th, NULL), 0);
		atomic_store(&hws_auto_test_mode, HWS_AUTO_ADAPT);
		uint32_t waste = atomic_load(&lock.learn) >> 24;
		uint64_t held = released_at - atomic_load(&a.asked_at);
		if (a.sleeps >= 1 && held < 800000) {
			printf("top grace: %s: released %.0f us after the waiter asked, it slept %llu "
			       "times, waste count %u\n", name, held / 1e3, (unsigned long long)a.sleeps,
			       waste);
			return waste;
		}
	}
	printf("skipped: top grace: no waiter slept inside the fairness bound in 50 trials\n");
	exit(HWS_TEST_SKIP);
}

static void top_grace(void)
{
	CHECK(waste_after_sleep(HWS_AUTO_FORCE_NAP, "after a nap") > 0);
	CHECK_EQ(waste_after_sleep(HWS_AUTO_FORCE_PARK, "woken from a park"), 0u);
}

/* The average wait is the learning word's low 16 bits (lock_auto_waiter.h);
 * it starts well away from both 0 and what a wait of LEARN_HOLD_US moves it
 * to.  The hold ends before the fairness bound, so that the waiter's first
 * sleep is the one the release ends (a thread times its first sleep).  A
 * trial counts where the waiter slept: it may still be starting when the
 * hold ends. */
#define AVG_START 100u
#define LEARN_HOLD_US 300
static struct waiter_arg slept_behind_short_hold(enum hws_auto_mode m, int busy,
						 uint32_t *learned)
{
	for (unsigned trial = 0; trial < 50; trial++) {
		atomic_store(&hws_auto_test_mode, m);
		hws_cpus_busy_force(busy);
		struct waiter_arg a = behind_hold_learning(0, LEARN_HOLD_US * 1000ull, AVG_START,
							   learned);
		hws_cpus_busy_force(0);
		atomic_store(&hws_auto_test_mode, HWS_AUTO_ADAPT);
		if (a.sleeps >= 1)
			return a;
	}
	printf("skipped: busy learning: no waiter slept behind a %d us hold in 50 trials\n",
	       LEARN_HOLD_US);
	exit(HWS_TEST_SKIP);
}

static void busy_learning(void)
{
	uint32_t learned;
	struct waiter_arg ctl = slept_behind_short_hold(HWS_AUTO_FORCE_PARK, 0, &learned);
	printf("busy learning: control: a parking waiter slept %llu times, %llu timed, average "
	       "%u -> %u\n", (unsigned long long)ctl.sleeps, (unsigned long long)ctl.timed,
	       AVG_START, learned & 0xffff);
	CHECK(ctl.timed >= 1);
	CHECK((learned & 0xffff) != AVG_START);

	struct waiter_arg busy = slept_behind_short_hold(HWS_AUTO_ADAPT, 1, &learned);
	printf("busy learning: busy: the waiter slept %llu times, %llu timed, average %u -> %u\n",
	       (unsigned long long)busy.sleeps, (unsigned long long)busy.timed, AVG_START,
	       learned & 0xffff);
	CHECK_EQ(busy.timed, 0);
	CHECK_EQ(learned & 0xffff, AVG_START);
}

static void *hog(void *p)
{
	_Atomic int *stop = p;
	while (!atomic_load_explicit(stop, memory_order_relaxed))
		;
	return NULL;
}

static void sampler(void)
{
	CHECK_EQ(hws_loadavg_runnable("0.00 0.01 0.05 3/150 1234\n"), 3);
	CHECK_EQ(hws_loadavg_runnable("12.50 9.00 7.25 117/2048 99"), 117);
	CHECK_EQ(hws_loadavg_runnable("0.00 0.01 0.05 3 150"), 0);
	CHECK_EQ(hws_loadavg_runnable(""), 0);
	CHECK_EQ(hws_loadavg_runnable("0.00 0.01"), 0);

	hws_cpus_busy_force(-1);
	unsigned n = 2 * test_ncpus() + 2;
	pthread_t th[2 * 256 + 2];
	_Atomic int stop = 0;
	if (n > sizeof th / sizeof th[0])
		n = sizeof th / sizeof th[0];
	for (unsigned i = 0; i < n; i++)
		CHECK_EQ(pthread_create(&th[i], NULL, hog, &stop), 0);
	bool busy = false;
	/* A sample is taken at most once a millisecond: ask for a while. */
	for (unsigned i = 0; i < 200 && !busy; i++) {
		usleep(2000);
		busy = hws_cpus_busy(hws_now_ns());
	}
	atomic_store(&stop, 1);
	for (unsigned i = 0; i < n; i++)
		CHECK_EQ(pthread_join(th[i], NULL), 0);
	printf("sampler: %u spinning threads on %u CPUs: busy %s\n", n, test_ncpus(),
	       busy ? "yes" : "no");
	CHECK(busy);
}

int main(void)
{
	sampler();
	grace_rules();
	if (hws_auto_max_spinners() == 0) {
		printf("skipped: one usable CPU, so no auto waiter spins\n");
		return HWS_TEST_SKIP;
	}
	CHECK_EQ(hws_wait_init(&policy, "adaptive"), 0);
	top_grace();
	struct hws_adaptive_calibration fixed = { .spin_ns = BUDGET_NS, .pause_ns = BUDGET_NS };
	hws_adaptive_use(&fixed);
	atomic_store(&hws_auto_test_mode, HWS_AUTO_ADAPT);
	realtime_and_busy();
	spinner_limit();
	busy_naps();
	busy_learning();
	return 0;
}

/* The adaptive policy's per-object learning (lib/wait/adaptive.c): a word
 * whose waits outlast the spin budget many times over is soon waited on
 * without polling at all; probes, backed off while they fail, notice when
 * spinning pays again; a word whose waits are often short keeps spinning;
 * with one usable CPU the waiter yields instead of polling with PAUSE; a
 * pinned thread does not make the process count one CPU; a wait that slept
 * and was woken by a timed wake-up is judged without that wake-up.
 *
 * Whether a wait polled is read from the waiting thread's poll counter: a
 * wait that sleeps at once reads the word in no polling loop (0 polls), one
 * that spins counts every read of its loops (at least one).  The waits are
 * made long (4 ms against a 200us budget: 10x the 400us from which a wait
 * counts as long) or short (answered at once) so that a loaded machine does
 * not blur them; what is checked is how waits were made, never how long
 * they took.  A step the machine's load disturbed anyway (a short one that
 * took long, a long one whose waiter saw the change while polling because
 * another program had its CPU until then, a waker that stored late) makes
 * the test run that part again on a fresh word; five disturbed attempts in
 * a row make it skip, saying so. */
#include "common/test.h"
#include <hwsync/wait.h>
#include "wait/internal.h"

#define SPIN_NS 200000ull       /* the spin budget of SPEC */
#define LONG_NS 4000000ull      /* a long wait: 10x what counts as long */
/* PAUSE for all of the spin: the threads have a CPU each, and a spin that
 * yielded could hand the CPU to another program until after the change (a
 * wait the policy then cannot judge); on one CPU it yields all the same */
#define SPEC "adaptive:spin=200us,pause=200us"
/* on one CPU the spin is all sched_yield: a long step there outlasts the
 * time slices of anything else that may run on that CPU meanwhile */
#define ONE_CPU_LONG_NS 40000000ull

enum step { LONG_WAKE, SHORT_WAKE, LATE_WAKE, YIELD_WAKE, ONE_CPU_LONG_WAKE, PERIOD_WAKE };
/* PERIOD_WAKE: the word changes and its sleeper is woken this long after
 * the waker runs (timed by spinning: a nap would overshoot): a budget and a
 * quarter, so that a wait, which also holds the waker's own wake-up and the
 * waiter's, stays under twice the budget unless the two take longer than
 * three quarters of a budget */
#define PERIOD_NS (SPIN_NS * 5 / 4)

/* A thread that changes the word once per step the main thread asks for
 * (go), in the way the step says, then reports it done. */
static struct {
	pthread_t th;
	hws_wait_t go_pol;
	_Atomic uint32_t *word;
	_Atomic uint32_t go, done;
	_Atomic int step;
	_Atomic bool late;      /* the waker stored later than a step allows */
	_Atomic uint64_t go_ns; /* when the main thread asked for the step */
	int cpu;                /* where the waker runs, -1: where it is started */
	_Atomic bool ready;     /* the waker runs there */
	uint32_t n;             /* main thread: steps so far */
} wk;
static bool disturbed;          /* main thread: a step this part cannot judge */
static hws_wait_t pol, yield_pol, futex_pol;   /* the waits measured; the others */

static void nap_ns(uint64_t ns)
{
	struct timespec ts = { (time_t)(ns / 1000000000ull), (long)(ns % 1000000000ull) };
	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static void change(uint32_t i)
{
	/* release: pairs with the waiter's acquire load of the word. */
	atomic_store_explicit(wk.word, i, memory_order_release);
}

static void *waker(void *arg)
{
	(void)arg;
	if (wk.cpu >= 0) {
		cpu_set_t one;
		CPU_ZERO(&one);
		CPU_SET(wk.cpu, &one);
		CHECK_EQ(sched_setaffinity(0, sizeof one, &one), 0);
	}
	atomic_store(&wk.ready, true);
	for (uint32_t i = 1;; i++) {
		/* acquire: pairs with the release store of go; step is read after. */
		while (atomic_load_explicit(&wk.go, memory_order_acquire) != i) {
			/* relaxed: stop_waker's store; nothing is read after it. */
			if (atomic_load_explicit(&wk.go, memory_order_relaxed) == UINT32_MAX)
				return NULL;
			/* relaxed: the previous step's kind, a hint for how to
			 * wait; this step's is read after go's acquire below. */
			if (atomic_load_explicit(&wk.step, memory_order_relaxed) == YIELD_WAKE)
				sched_yield();   /* runnable all along, on the waiter's CPU */
			else
				hws_wait_while_eq32(&wk.go, i - 1, &wk.go_pol, HWS_FOREVER);
		}
		/* relaxed: written before go, whose acquire load ordered it. */
		switch (atomic_load_explicit(&wk.step, memory_order_relaxed)) {
		case LONG_WAKE:
		case ONE_CPU_LONG_WAKE:
			nap_ns(atomic_load_explicit(&wk.step, memory_order_relaxed) == LONG_WAKE ?
			       LONG_NS : ONE_CPU_LONG_NS);
			change(i);
			hws_wake32(wk.word, HWS_WAKE_ALL);
			break;
		case PERIOD_WAKE:
			test_spin_ns(PERIOD_NS);
			change(i);
			hws_wake32(wk.word, HWS_WAKE_ALL);
			break;
		case SHORT_WAKE:
		case YIELD_WAKE:
			change(i);
			hws_wake32(wk.word, HWS_WAKE_ALL);
			break;
		case LATE_WAKE: {
			/* The word changes 60us in, but a sleeper is woken only 4 ms
			 * later: short for a waiter that polls, long for one that
			 * went to sleep at once.  Not sooner: the main thread's own
			 * wake-up of this thread can take it 20us and more on a
			 * virtual machine, and a waiter that comes after the change
			 * has not waited (a disturbed step). */
			test_spin_ns(60000);
			atomic_store(&wk.late, test_now_ns() - atomic_load(&wk.go_ns) > SPIN_NS * 3 / 4);
			change(i);
			nap_ns(LONG_NS);
			hws_wake32(wk.word, HWS_WAKE_ALL);
			break;
		}
		}
		/* release: pairs with the main thread's acquire load of done. */
		atomic_store_explicit(&wk.done, i, memory_order_release);
		hws_wake32(&wk.done, HWS_WAKE_ALL);
	}
}

/* The waker answers a step soon: on two CPUs each thread has its own, so
 * that neither waits for the other to be scheduled, and the waker sleeps
 * for the next step (a woken sleeper is run at once even on a loaded CPU,
 * and the hand-off is well within the spin); on one CPU it polls, yielding
 * between reads. */
static int main_cpu = -1, waker_cpu = -1;

static void start_waker(_Atomic uint32_t *word)
{
	wk.cpu = waker_cpu;
	CHECK_EQ(hws_wait_init(&wk.go_pol, waker_cpu >= 0 ? "futex" : "yield"), 0);
	wk.word = word;
	atomic_store(word, 0);
	atomic_store(&wk.go, 0);
	atomic_store(&wk.done, 0);
	atomic_store(&wk.late, false);
	wk.n = 0;
	disturbed = false;
	atomic_store(&wk.ready, false);
	CHECK_EQ(pthread_create(&wk.th, NULL, waker, NULL), 0);
	while (!atomic_load(&wk.ready))
		sched_yield();
}

static void stop_waker(void)
{
	atomic_store(&wk.go, UINT32_MAX);
	hws_wake32(&wk.go, HWS_WAKE_ALL);
	CHECK_EQ(pthread_join(wk.th, NULL), 0);
}

/* One step: returns the polls of this thread's wait for the word. */
static uint64_t step(enum step s)
{
	uint32_t i = ++wk.n;
	uint64_t p0 = hws_wait_tls.polls, t0 = test_now_ns(), t1, t2;
	uint64_t sleeps = hws_wait_tls.sleeps;
	bool waited = false;

	/* relaxed: published by the release store of go. */
	atomic_store_explicit(&wk.step, s, memory_order_relaxed);
	atomic_store(&wk.go_ns, t0);
	/* release: pairs with the waker's acquire load of go. */
	atomic_store_explicit(&wk.go, i, memory_order_release);
	hws_wake32(&wk.go, HWS_WAKE_ALL);
	t1 = test_now_ns();
	/* acquire: pairs with the waker's release store of the word. */
	while (atomic_load_explicit(wk.word, memory_order_acquire) != i) {
		waited = true;
		hws_wait_while_eq32(wk.word, i - 1, &pol, HWS_FOREVER);
	}
	t2 = test_now_ns();
	p0 = hws_wait_tls.polls - p0;
	/* a long step whose wait did not last half of it or did not sleep (it
	 * saw the change in its spin: another thread had the CPU until then),
	 * a short one that lasted longer than the budget (it no longer counts as
	 * short: under load a few in a row left the word skipping), or a late wake
	 * whose waiter came too late to wait at all or, when it spun, whose
	 * waker stored late */
	if (((s == LONG_WAKE || s == ONE_CPU_LONG_WAKE) &&
	     (t2 - t1 < LONG_NS / 2 || hws_wait_tls.sleeps == sleeps)) ||
	    (s == PERIOD_WAKE && hws_wait_tls.sleeps == sleeps) ||
	    (s == SHORT_WAKE && t2 - t1 > SPIN_NS) ||
	    (s == LATE_WAKE && (!waited || (p0 && atomic_load(&wk.late)))))
		disturbed = true;
	/* acquire: pairs with the waker's release store of done. */
	while (atomic_load_explicit(&wk.done, memory_order_acquire) != i)
		hws_wait_while_eq32(&wk.done, i - 1, s == YIELD_WAKE ? &yield_pol : &futex_pol,
				    HWS_FOREVER);
	return p0;
}

/* Words on distinct learning slots (a collision would mix their learning). */
#define WORDS 512
#define CHOSEN 32
static _Atomic uint32_t words[WORDS], *chosen[CHOSEN];
static unsigned nchosen, next_word;

static _Atomic uint32_t *word_on_new_slot(void)
{
	CHECK(nchosen < CHOSEN);
	for (; next_word < WORDS; next_word++) {
		bool clash = false;
		for (unsigned j = 0; j < nchosen; j++)
			/* adaptive keys a word's slot by its second byte */
			clash |= hws_learn_slot((char *)&words[next_word] + 1) ==
				 hws_learn_slot((char *)chosen[j] + 1);
		if (!clash)
			return chosen[nchosen++] = &words[next_word++];
	}
	CHECK(!"no free learning slot among the words");
	return NULL;
}

/* Each part returns false when a step was disturbed (nothing checked). */

/* Long waits: learnt within four, then no polling except probes that back
 * off; then late wakes: only a polling wait sees them early, so only a probe
 * can bring spinning back. */
static bool long_then_probed(void)
{
	_Atomic uint32_t *w = word_on_new_slot();
	uint64_t polls[200];
	unsigned probe_at[200], nprobes = 0, n;

	CHECK_EQ(hws_wait_init(&pol, SPEC), 0);
	start_waker(w);
	for (unsigned k = 0; k < 200; k++) {
		polls[k] = step(LONG_WAKE);
		if (k >= 4 && polls[k])
			probe_at[nprobes++] = k;
	}
	if (disturbed) {
		stop_waker();
		return false;
	}
	printf("long waits: polls of the first six %llu %llu %llu %llu %llu %llu; probes at",
	       (unsigned long long)polls[0], (unsigned long long)polls[1],
	       (unsigned long long)polls[2], (unsigned long long)polls[3],
	       (unsigned long long)polls[4], (unsigned long long)polls[5]);
	for (unsigned k = 0; k < nprobes; k++)
		printf(" %u", probe_at[k]);
	printf("\n");
	/* nothing learned: the first waits spin, and four long ones suffice */
	for (unsigned k = 0; k < 4; k++)
		CHECK(polls[k] > 0);
	CHECK(hws_adaptive_skips(w));
	/* probes: a few (every 16th would be 12 in 196 waits; none would never
	 * notice a change), at intervals that double, also past 64 waits */
	CHECK(nprobes >= 3 && nprobes <= 7);
	for (unsigned k = 2; k < nprobes; k++)
		CHECK(2 * (probe_at[k] - probe_at[k - 1]) >= 3 * (probe_at[k - 1] - probe_at[k - 2]));
	/* after the first four, waits between probes did not poll */
	for (unsigned k = 4, p = 0; k < 200; k++)
		if (p < nprobes && probe_at[p] == k)
			p++;
		else
			CHECK_EQ(polls[k], 0);

	/* late wakes: the sleeping waits stay long; a probe sees the change
	 * within the probe interval (at most 1024) and spinning resumes */
	unsigned skipped = 0, spun_after = 0;
	uint64_t last = 0;
	for (n = 1; n <= 1100; n++) {
		last = step(LATE_WAKE);
		skipped += !last;
		if (!hws_adaptive_skips(w))
			break;
	}
	for (unsigned k = 0; k < 10; k++)
		spun_after += step(LATE_WAKE) > 0;
	stop_waker();
	if (disturbed)
		return false;
	printf("late wakes: spinning again after %u waits, %u of them slept at once\n", n, skipped);
	CHECK(n <= 1100);
	CHECK(last > 0);      /* a probe brought it back */
	CHECK(skipped >= 1);  /* sleeping waits alone did not */
	CHECK(spun_after >= 8);   /* one or two may meet a late wake-up */
	CHECK(!hws_adaptive_skips(w));
	return true;
}

/* One wait in three short (answered at once), two long: spinning pays on
 * the short ones and the word keeps spinning (it would stop only while
 * more than four waits in five were long): every long one spins first. */
static bool some_short(void)
{
	_Atomic uint32_t *w = word_on_new_slot();
	unsigned spun = 0;

	CHECK_EQ(hws_wait_init(&pol, SPEC), 0);
	start_waker(w);
	for (unsigned k = 0; k < 20; k++) {
		step(SHORT_WAKE);
		spun += step(LONG_WAKE) > 0;
		spun += step(LONG_WAKE) > 0;
	}
	stop_waker();
	if (disturbed)
		return false;
	printf("one in three short: %u of 40 long waits spun\n", spun);
	/* A word that learned to skip would spin on a handful at most; allow a
	 * few to a late wake-up on a loaded or emulated machine (where one
	 * slow "short" wait can also leave the word skipping at the very end,
	 * so the final state is not checked). */
	CHECK(spun >= 36);
	return true;
}

/* Twelve steps of one kind on word w, waited on with policy spec: the
 * polls of each in p; false when a step was disturbed. */
static bool twelve_steps(_Atomic uint32_t *w, const char *spec, enum step s, uint64_t p[12])
{
	CHECK_EQ(hws_wait_init(&pol, spec), 0);
	start_waker(w);
	for (unsigned k = 0; k < 12; k++)
		p[k] = step(s);
	stop_waker();
	return !disturbed;
}

/* The default budget (at most 100us, whatever was learned) learns the same. */
static bool default_budget(void)
{
	uint64_t p[12];

	/* spin=auto; PAUSE for all of it, as SPEC (the longest budget is 100us) */
	if (!twelve_steps(word_on_new_slot(), "adaptive:pause=100us", LONG_WAKE, p))
		return false;
	for (unsigned k = 0; k < 4; k++)
		CHECK(p[k] > 0);
	for (unsigned k = 4; k < 12; k++)
		CHECK_EQ(p[k], 0);
	return true;
}

/* Waits that sleep through a budget and a quarter and are woken by a timed
 * wake-up: what a spin would have needed is longer than the budget, so they
 * are long and the word soon sleeps at once.  Judged by their whole length,
 * the wake-ups included, they would sit between one and two budgets, the
 * band that keeps a word spinning. */
static bool period_waits(void)
{
	_Atomic uint32_t *w = word_on_new_slot();
	uint64_t p[12];

	if (!twelve_steps(w, SPEC, PERIOD_WAKE, p))
		return false;
	printf("waits of a budget and a quarter: polls %llu %llu %llu %llu %llu ... %llu\n",
	       (unsigned long long)p[0], (unsigned long long)p[1], (unsigned long long)p[2],
	       (unsigned long long)p[3], (unsigned long long)p[4], (unsigned long long)p[11]);
	CHECK(p[0] > 0);
	CHECK(hws_adaptive_skips(w));
	for (unsigned k = 8; k < 12; k++)   /* the first probe comes 16 waits on */
		CHECK_EQ(p[k], 0);
	return true;
}

/* A thread pinned to one CPU asks first: the count is still the process's
 * (its other threads may run elsewhere, and spinning can pay). */
static void *pinned_asks(void *arg)
{
	cpu_set_t one;
	CPU_ZERO(&one);
	CPU_SET(*(int *)arg, &one);
	CHECK_EQ(sched_setaffinity(0, sizeof one, &one), 0);
	*(int *)arg = (int)hws_usable_cpus_refresh();
	return NULL;
}

/* One usable CPU: a waiter whose partner is runnable on its CPU yields to it
 * at once instead of polling with PAUSE first (which would be at least the
 * first loop's 64 reads), and long waits are learnt as on two. */
static bool one_cpu_waits(void)
{
	uint64_t p[50];
	unsigned few = 0;
	_Atomic uint32_t *w = word_on_new_slot();

	CHECK_EQ(hws_wait_init(&pol, SPEC), 0);
	start_waker(w);                   /* inherits the one CPU */
	for (unsigned k = 0; k < 50; k++)
		few += step(YIELD_WAKE) < HWS_POLLS_PER_CLOCK;
	for (unsigned k = 0; k < 8; k++)
		p[k] = step(ONE_CPU_LONG_WAKE);
	stop_waker();
	if (disturbed)
		return false;
	printf("one CPU: %u of 50 waits for a runnable partner read the word fewer than %d "
	       "times\n", few, HWS_POLLS_PER_CLOCK);
	CHECK(few >= 25);
	for (unsigned k = 0; k < 4; k++)
		CHECK(p[k] > 0);
	for (unsigned k = 4; k < 8; k++)
		CHECK_EQ(p[k], 0);
	return true;
}

/* Run a part until it was not disturbed, a few times at most; a machine too
 * loaded to judge makes the test skip, saying so. */
static void run(bool (*part)(void), const char *name)
{
	for (int attempt = 0; attempt < 5; attempt++) {
		if (part())
			return;
		printf("%s: a step was disturbed by the machine's load; again on a fresh word\n",
		       name);
	}
	printf("skipped: %s: every attempt was disturbed by the machine's load\n", name);
	exit(HWS_TEST_SKIP);
}

static void pin_main(const cpu_set_t *set)
{
	CHECK_EQ(sched_setaffinity(0, sizeof *set, set), 0);
}

/* the cache directory goes however the test ends: a skip or a failed
 * CHECK exits from deep inside a step */
static char cache_dir[] = "/tmp/hws-wait-learn-XXXXXX";

static void remove_cache_dir(void)
{
	rmdir(cache_dir);
}

int main(void)
{
	cpu_set_t all, one;

	setvbuf(stdout, NULL, _IOLBF, 0);   /* in order with a failed CHECK */
	CHECK(mkdtemp(cache_dir));
	atexit(remove_cache_dir);
	setenv("HWSYNC_CACHE_DIR", cache_dir, 1);   /* no per-machine cache */
	CHECK_EQ(hws_wait_init(&yield_pol, "yield"), 0);
	CHECK_EQ(hws_wait_init(&futex_pol, "futex"), 0);

	CHECK_EQ(sched_getaffinity(0, sizeof all, &all), 0);
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &all) && main_cpu < 0)
			main_cpu = c;
		else if (CPU_ISSET(c, &all) && waker_cpu < 0)
			waker_cpu = c;
	CPU_ZERO(&one);
	CPU_SET(main_cpu, &one);
	if (waker_cpu >= 0) {
		/* the process's CPUs, even when a pinned thread asks first;
		 * counted now, before the main thread is pinned, and kept */
		pthread_t th;
		int arg = main_cpu;
		CHECK_EQ(pthread_create(&th, NULL, pinned_asks, &arg), 0);
		CHECK_EQ(pthread_join(th, NULL), 0);
		CHECK(arg > 1);
		CHECK(hws_usable_cpus_refresh() > 1);
		pin_main(&one);
	}
	run(period_waits, "waits of a budget and a quarter");
	run(long_then_probed, "long waits");
	run(some_short, "one in three short");
	run(default_budget, "default budget");

	/* one usable CPU: both threads on the main thread's */
	pin_main(&one);
	CHECK_EQ(hws_usable_cpus_refresh(), 1);
	waker_cpu = -1;
	run(one_cpu_waits, "one CPU");
	pin_main(&all);
	hws_usable_cpus_refresh();
	return 0;
}

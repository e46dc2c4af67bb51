/* The adaptive policy's per-object learning (lib/wait/adaptive.c): a word
 * whose waits outlast the spin budget many times over is soon waited on
 * without polling at all; probes, backed off while they fail, notice when
 * spinning pays again; a word whose waits are mostly short keeps spinning;
 * with one usable CPU the waiter yields instead of polling with PAUSE.
 *
 * Whether a wait polled is read from the waiting thread's poll counter: a
 * wait that sleeps at once reads the word in no polling loop (0 polls), one
 * that spins counts every read of its loops (at least one).  The waits are
 * made long (4 ms against a 200us budget: 10x the 400us from which a wait
 * counts as long) or short (answered at once) so that a loaded machine does
 * not blur them; what is checked is how waits were made, never how long
 * they took. */
#include "common/test.h"
#include <hwsync/wait.h>
#include "wait/internal.h"

#define LONG_NS 4000000ull      /* a long wait: 10x what counts as long */
#define SPEC "adaptive:spin=200us"

enum step { LONG_WAKE, SHORT_WAKE, LATE_WAKE, YIELD_WAKE };

/* A thread that changes the word once per step the main thread asks for
 * (go), in the way the step says, then reports it done. */
static struct {
	pthread_t th;
	hws_wait_t go_pol;
	_Atomic uint32_t *word;
	_Atomic uint32_t go, done;
	_Atomic int step;
	uint32_t n;             /* main thread: steps so far */
} wk;
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
	for (uint32_t i = 1;; i++) {
		/* acquire: pairs with the release store of go; step is read after. */
		while (atomic_load_explicit(&wk.go, memory_order_acquire) != i) {
			if (atomic_load_explicit(&wk.go, memory_order_acquire) == UINT32_MAX)
				return NULL;
			if (atomic_load_explicit(&wk.step, memory_order_relaxed) == YIELD_WAKE)
				sched_yield();   /* runnable all along, on the waiter's CPU */
			else
				hws_wait_while_eq32(&wk.go, i - 1, &wk.go_pol, HWS_FOREVER);
		}
		/* relaxed: written before go, whose acquire load ordered it. */
		switch (atomic_load_explicit(&wk.step, memory_order_relaxed)) {
		case LONG_WAKE:
			nap_ns(LONG_NS);
			change(i);
			hws_wake32(wk.word, HWS_WAKE_ALL);
			break;
		case SHORT_WAKE:
		case YIELD_WAKE:
			change(i);
			hws_wake32(wk.word, HWS_WAKE_ALL);
			break;
		case LATE_WAKE:
			/* The word changes 20us in, but a sleeper is woken only 4 ms
			 * later: short for a waiter that polls, long for one that
			 * went to sleep at once. */
			test_spin_ns(20000);
			change(i);
			nap_ns(LONG_NS);
			hws_wake32(wk.word, HWS_WAKE_ALL);
			break;
		}
		/* release: pairs with the main thread's acquire load of done. */
		atomic_store_explicit(&wk.done, i, memory_order_release);
		hws_wake32(&wk.done, HWS_WAKE_ALL);
	}
}

static void start_waker(_Atomic uint32_t *word, const char *go_spec)
{
	CHECK_EQ(hws_wait_init(&wk.go_pol, go_spec), 0);
	wk.word = word;
	atomic_store(word, 0);
	atomic_store(&wk.go, 0);
	atomic_store(&wk.done, 0);
	wk.n = 0;
	CHECK_EQ(pthread_create(&wk.th, NULL, waker, NULL), 0);
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
	uint64_t p0 = hws_wait_tls.polls;

	/* relaxed: published by the release store of go. */
	atomic_store_explicit(&wk.step, s, memory_order_relaxed);
	/* release: pairs with the waker's acquire load of go. */
	atomic_store_explicit(&wk.go, i, memory_order_release);
	hws_wake32(&wk.go, HWS_WAKE_ALL);
	/* acquire: pairs with the waker's release store of the word. */
	while (atomic_load_explicit(wk.word, memory_order_acquire) != i)
		hws_wait_while_eq32(wk.word, i - 1, &pol, HWS_FOREVER);
	p0 = hws_wait_tls.polls - p0;
	/* acquire: pairs with the waker's release store of done. */
	while (atomic_load_explicit(&wk.done, memory_order_acquire) != i)
		hws_wait_while_eq32(&wk.done, i - 1, s == YIELD_WAKE ? &yield_pol : &futex_pol,
				    HWS_FOREVER);
	return p0;
}

/* Words on distinct learning slots (a collision would mix their learning). */
static _Atomic uint32_t words[64], *chosen[8];
static unsigned nchosen, next_word;

static _Atomic uint32_t *word_on_new_slot(void)
{
	CHECK(nchosen < 8);
	for (; next_word < 64; next_word++) {
		bool clash = false;
		for (unsigned j = 0; j < nchosen; j++)
			clash |= hws_learn_slot(&words[next_word]) == hws_learn_slot(chosen[j]);
		if (!clash)
			return chosen[nchosen++] = &words[next_word++];
	}
	CHECK(!"no free learning slot among 64 words");
	return NULL;
}

/* Long waits: learnt within four, then no polling except probes that back
 * off; then late wakes: only a polling wait sees them early, so only a probe
 * can bring spinning back. */
static void long_then_probed(const char *go_spec)
{
	_Atomic uint32_t *w = word_on_new_slot();
	uint64_t polls[200];
	unsigned probe_at[200], nprobes = 0, n;

	CHECK_EQ(hws_wait_init(&pol, SPEC), 0);
	start_waker(w, go_spec);
	for (unsigned k = 0; k < 200; k++) {
		polls[k] = step(LONG_WAKE);
		if (k >= 4 && polls[k])
			probe_at[nprobes++] = k;
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
	 * notice a change), at growing intervals */
	CHECK(nprobes >= 3 && nprobes <= 7);
	CHECK(probe_at[nprobes - 1] - probe_at[nprobes - 2] > probe_at[1] - probe_at[0]);
	/* after the first four, waits between probes did not poll */
	for (unsigned k = 4, p = 0; k < 200; k++)
		if (p < nprobes && probe_at[p] == k)
			p++;
		else
			CHECK_EQ(polls[k], 0);

	/* late wakes: the sleeping waits stay long; a probe sees the change
	 * within the probe interval (64) and spinning resumes */
	unsigned skipped = 0;
	uint64_t last = 0;
	for (n = 1; n <= 100; n++) {
		last = step(LATE_WAKE);
		skipped += !last;
		if (!hws_adaptive_skips(w))
			break;
	}
	printf("late wakes: spinning again after %u waits, %u of them slept at once\n", n, skipped);
	CHECK(n <= 100);
	CHECK(last > 0);      /* a probe brought it back */
	CHECK(skipped >= 1);  /* sleeping waits alone did not */
	for (unsigned k = 0; k < 10; k++)
		CHECK(step(LATE_WAKE) > 0);
	CHECK(!hws_adaptive_skips(w));
	stop_waker();
}

/* Mostly short waits (three answered at once to one long): every long one
 * still spins first. */
static void mostly_short(const char *go_spec)
{
	_Atomic uint32_t *w = word_on_new_slot();
	unsigned spun = 0;

	CHECK_EQ(hws_wait_init(&pol, SPEC), 0);
	start_waker(w, go_spec);
	for (unsigned k = 0; k < 40; k++) {
		for (int j = 0; j < 3; j++)
			step(SHORT_WAKE);
		spun += step(LONG_WAKE) > 0;
	}
	printf("mostly short: %u of 40 long waits spun\n", spun);
	CHECK(spun >= 38);
	CHECK(!hws_adaptive_skips(w));
	stop_waker();
}

/* The default budget (at most 100us, whatever was learned) learns the same. */
static void default_budget(const char *go_spec)
{
	_Atomic uint32_t *w = word_on_new_slot();
	uint64_t p[12];

	CHECK_EQ(hws_wait_init(&pol, "adaptive"), 0);
	start_waker(w, go_spec);
	for (unsigned k = 0; k < 12; k++)
		p[k] = step(LONG_WAKE);
	stop_waker();
	for (unsigned k = 0; k < 4; k++)
		CHECK(p[k] > 0);
	for (unsigned k = 4; k < 12; k++)
		CHECK_EQ(p[k], 0);
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
static void one_cpu(void)
{
	cpu_set_t all, one;
	uint64_t p[50];
	int cpu = -1;

	CHECK_EQ(sched_getaffinity(0, sizeof all, &all), 0);
	for (int c = 0; c < CPU_SETSIZE && cpu < 0; c++)
		if (CPU_ISSET(c, &all))
			cpu = c;
	if (CPU_COUNT(&all) > 1) {
		pthread_t th;
		int arg = cpu;
		CHECK_EQ(pthread_create(&th, NULL, pinned_asks, &arg), 0);
		CHECK_EQ(pthread_join(th, NULL), 0);
		CHECK(arg > 1);
	}
	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	CHECK_EQ(sched_setaffinity(0, sizeof one, &one), 0);
	CHECK_EQ(hws_usable_cpus_refresh(), 1);

	_Atomic uint32_t *w = word_on_new_slot();
	CHECK_EQ(hws_wait_init(&pol, SPEC), 0);
	start_waker(w, "futex");          /* inherits the one CPU */
	for (unsigned k = 0; k < 50; k++)
		p[k] = step(YIELD_WAKE);
	unsigned few = 0;
	for (unsigned k = 0; k < 50; k++)
		few += p[k] < HWS_POLLS_PER_CLOCK;
	printf("one CPU: %u of 50 waits for a runnable partner read the word fewer than %d "
	       "times\n", few, HWS_POLLS_PER_CLOCK);
	CHECK(few >= 25);
	for (unsigned k = 0; k < 8; k++)
		p[k] = step(LONG_WAKE);
	stop_waker();
	for (unsigned k = 0; k < 4; k++)
		CHECK(p[k] > 0);
	for (unsigned k = 4; k < 8; k++)
		CHECK_EQ(p[k], 0);

	CHECK_EQ(sched_setaffinity(0, sizeof all, &all), 0);
	hws_usable_cpus_refresh();
}

int main(void)
{
	char dir[] = "/tmp/hws-wait-learn-XXXXXX";

	setvbuf(stdout, NULL, _IOLBF, 0);   /* in order with a failed CHECK */
	CHECK(mkdtemp(dir));
	setenv("HWSYNC_CACHE_DIR", dir, 1);   /* no per-machine cache */
	CHECK_EQ(hws_wait_init(&yield_pol, "yield"), 0);
	CHECK_EQ(hws_wait_init(&futex_pol, "futex"), 0);

	/* the waker answers a short step at once: it polls for it, or on one
	 * CPU yields (polling would hold the CPU the main thread needs) */
	const char *go_spec = hws_usable_cpus() > 1 ? "pause" : "yield";
	long_then_probed(go_spec);
	mostly_short(go_spec);
	default_budget(go_spec);
	one_cpu();
	rmdir(dir);
	return 0;
}

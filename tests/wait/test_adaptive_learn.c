/* The adaptive policy without any calibration: it starts from the default
 * (the longest budget the rule allows), works correctly on it, and learns the
 * futex hand-off from the process's own sleep/wake round trips: a first
 * estimate once 5 of them were timed, then one from every 16, none longer
 * than the round trips the test itself saw.  No cache is read (HWSYNC_CACHE_DIR points at an
 * empty directory) and no thread is started by the library. */
#include "common/test.h"
#include <dirent.h>
#include <hwsync/wait.h>

static _Atomic uint32_t ping, pong;
static hws_wait_t pol;
static int rounds;
static uint64_t longest;   /* longest round trip of any run */

static void nap_us(long us)
{
	struct timespec ts = { 0, us * 1000 };
	nanosleep(&ts, NULL);
}

/* Partner: wait for ping to change, answer on pong. */
static void *partner(void *arg)
{
	(void)arg;
	for (int i = 1; i <= rounds; i++) {
		/* acquire: pairs with the release store of ping. */
		while (atomic_load_explicit(&ping, memory_order_acquire) != (uint32_t)i)
			hws_wait_while_eq32(&ping, (uint32_t)i - 1, &pol, HWS_FOREVER);
		/* release: pairs with the acquire load of pong in round_trips. */
		atomic_store_explicit(&pong, (uint32_t)i, memory_order_release);
		hws_wake32(&pong, HWS_WAKE_ALL);
	}
	return NULL;
}

/* n round trips under policy spec.  The pause before each ping lets the
 * partner fall asleep, so the wakes are real ones. */
static void round_trips(const char *spec, int n, long pause_us)
{
	pthread_t th;

	CHECK_EQ(hws_wait_init(&pol, spec), 0);
	atomic_store(&ping, 0);
	atomic_store(&pong, 0);
	rounds = n;
	CHECK_EQ(pthread_create(&th, NULL, partner, NULL), 0);
	for (int i = 1; i <= n; i++) {
		nap_us(pause_us);
		uint64_t t0 = test_now_ns();
		/* release: pairs with the partner's acquire load. */
		atomic_store_explicit(&ping, (uint32_t)i, memory_order_release);
		hws_wake32(&ping, HWS_WAKE_ALL);
		/* acquire: pairs with the partner's release store. */
		while (atomic_load_explicit(&pong, memory_order_acquire) != (uint32_t)i)
			hws_wait_while_eq32(&pong, (uint32_t)i - 1, &pol, HWS_FOREVER);
		if (test_now_ns() - t0 > longest)
			longest = test_now_ns() - t0;
	}
	pthread_join(th, NULL);
}

int main(void)
{
	char dir[] = "/tmp/hws-learn-XXXXXX";
	struct hws_adaptive_calibration c;

	CHECK(mkdtemp(dir));
	setenv("HWSYNC_CACHE_DIR", dir, 1);

	/* Nothing known: the default, with its rule. */
	hws_adaptive_current(&c);
	CHECK_EQ(c.source, HWS_ADAPTIVE_DEFAULT);
	CHECK_EQ(c.spin_ns, 100000);
	CHECK(c.pause_ns > 0 && c.pause_ns <= c.spin_ns);
	CHECK_EQ(c.handoff_ns, 0);
	CHECK(strstr(c.rule, "until 5 futex wake-ups"));
	CHECK(!strncmp(hws_adaptive_cache_state(), "none at ", 8));

	/* Too few round trips to learn from (at most 4 wake-ups): still the
	 * default. */
	round_trips("futex", 2, 300);
	hws_adaptive_current(&c);
	CHECK_EQ(c.source, HWS_ADAPTIVE_DEFAULT);
	CHECK_EQ(c.samples, 0);

	/* One round trip at a time (at most 2 wake-ups): the first estimate
	 * is set at the fifth timed wake-up, not at the sixteenth.  A trip
	 * yields no sample when a sleeper was not yet asleep at its wake, or
	 * was still on its way back when the next stamp came, which a busy
	 * machine makes common: the bound is far above the 3-10 trips an idle
	 * one takes. */
	int trip = 0;
	for (; trip < 400 && c.source != HWS_ADAPTIVE_LEARNED; trip++) {
		round_trips("futex", 1, 300);
		hws_adaptive_current(&c);
	}
	fprintf(stderr, "learned after %d single round trips\n", trip);
	CHECK_EQ(c.source, HWS_ADAPTIVE_LEARNED);
	CHECK_EQ(c.samples, 5);
	CHECK(c.handoff_ns > 0 && c.handoff_ns <= longest);
	CHECK(strstr(c.rule, "median of the first 5 futex wake-ups"));

	/* The policy works from the default on: short waits (spinning) and long
	 * ones (past the spin budget into futex, which may complete the first
	 * window of samples meanwhile). */
	round_trips("adaptive", 200, 0);
	round_trips("adaptive", 5, 2000);

	/* Round trips until 16 wake-ups were timed (two per trip when both
	 * sides sleep); bounded. */
	for (int batch = 0; batch < 20; batch++) {
		round_trips("futex", 16, 300);
		hws_adaptive_current(&c);
		if (c.samples >= 16)
			break;
	}
	CHECK_EQ(c.source, HWS_ADAPTIVE_LEARNED);
	CHECK(c.samples >= 16);
	/* A hand-off is part of a round trip (wake the partner, it runs, it
	 * wakes us, we run): the median cannot exceed the longest trip of all. */
	CHECK(c.handoff_ns > 0);
	CHECK(c.handoff_ns <= longest);
	uint64_t want = 2 * c.handoff_ns < 1000 ? 1000 : 2 * c.handoff_ns > 100000 ? 100000
											: 2 * c.handoff_ns;
	CHECK_EQ(c.spin_ns, want);
	CHECK(c.pause_ns <= c.spin_ns);
	CHECK(strstr(c.rule, "median of the last 16 futex wake-ups"));
	printf("learned futex hand-off %llu ns from %llu wake-ups (longest round trip %llu ns); "
	       "spin %llu ns\n", (unsigned long long)c.handoff_ns, (unsigned long long)c.samples,
	       (unsigned long long)longest, (unsigned long long)c.spin_ns);

	/* The adaptive policy still works on the learned budget. */
	round_trips("adaptive", 200, 0);
	round_trips("adaptive", 5, 2000);

	/* Learning never wrote a cache. */
	DIR *d = opendir(dir);
	struct dirent *e;
	CHECK(d);
	while ((e = readdir(d)))
		CHECK(!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."));
	closedir(d);
	rmdir(dir);
	return 0;
}

/* For every wait policy available here: a two-thread ping-pong of 100000
 * round trips, a deadline that expires, a wake before the wait starts (no
 * lost wake-up), wake of n of m waiters, and a wake with nobody asleep that
 * makes no system call. */
#include "common/test.h"
#include <stdatomic.h>
#include <sys/syscall.h>
#include <hwsync/wait.h>
#include "wait/internal.h"

static hws_wait_t pol;

/* ---- ping-pong ---------------------------------------------------------- */
static _Atomic uint32_t ball HWS_ALIGNED_LINE;
static unsigned rounds;

/* Player p waits for ball == p (mod 2), then passes it on. */
static void *player(void *arg)
{
	uint32_t me = (uint32_t)(uintptr_t)arg;
	for (uint32_t i = 0; i < rounds; i++) {
		uint32_t want = 2 * i + me, v;
		/* acquire: pairs with the partner's release store. */
		while ((v = atomic_load_explicit(&ball, memory_order_acquire)) != want)
			CHECK_EQ(hws_wait_while_eq32(&ball, v, &pol, HWS_FOREVER), 0);
		/* release: hands over everything this thread wrote. */
		atomic_store_explicit(&ball, want + 1, memory_order_release);
		hws_wake32(&ball, 1);
	}
	return NULL;
}

static void pingpong(void)
{
	pthread_t a, b;
	atomic_store(&ball, 0);
	CHECK(pthread_create(&a, NULL, player, (void *)0) == 0);
	CHECK(pthread_create(&b, NULL, player, (void *)1) == 0);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	CHECK_EQ(atomic_load(&ball), 2 * rounds);
}

/* ---- deadline ----------------------------------------------------------- */
static void deadline_expires(void)
{
	_Atomic uint32_t word = 7;
	uint64_t t0 = hws_now_ns();
	int rc = hws_wait_while_eq32(&word, 7, &pol, t0 + 20000000ull);
	uint64_t took = hws_now_ns() - t0;
	CHECK_EQ(rc, ETIMEDOUT);
	CHECK_EQ(atomic_load(&hws_wait_bucket_of(&word)->n), 0);
	CHECK(took >= 20000000ull);
	/* Generous upper bound: hardware waits are bounded by max_ns slices. */
	CHECK(took < 2000000000ull);
	/* A deadline already past returns at once. */
	CHECK_EQ(hws_wait_while_eq32(&word, 7, &pol, 1), ETIMEDOUT);
}

/* ---- wake before wait --------------------------------------------------- */
static void wake_before_wait(void)
{
	_Atomic uint32_t word = 1;
	atomic_store(&word, 2);
	hws_wake32(&word, HWS_WAKE_ALL);
	/* The waiter arrives late with the stale value: must not block. */
	CHECK_EQ(hws_wait_while_eq32(&word, 1, &pol, hws_deadline_after_ns(5000000000ull)), 0);
}

/* ---- wake n of m -------------------------------------------------------- */
enum { M = 4, N = 2 };
static _Atomic uint32_t gate HWS_ALIGNED_LINE;
static _Atomic unsigned started, returned;
static _Atomic pid_t tids[M];

static void *gate_waiter(void *arg)
{
	unsigned i = (unsigned)(uintptr_t)arg;
	atomic_store(&tids[i], (pid_t)syscall(SYS_gettid));
	atomic_fetch_add(&started, 1);
	int rc;
	do
		rc = hws_wait_while_eq32(&gate, 0, &pol, hws_deadline_after_ns(20000000000ull));
	while (rc == 0 && atomic_load(&gate) == 0);
	CHECK_EQ(rc, 0);
	atomic_fetch_add(&returned, 1);
	return NULL;
}

/* Is thread tid blocked (state S) rather than running? */
static bool sleeping(pid_t tid)
{
	char path[64], buf[256];
	snprintf(path, sizeof path, "/proc/self/task/%d/stat", (int)tid);
	FILE *f = fopen(path, "r");
	if (!f)
		return false;
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = 0;
	char *p = strrchr(buf, ')');
	return p && p[1] == ' ' && p[2] == 'S';
}

static void wake_n_of_m(bool sleeps_in_kernel)
{
	pthread_t t[M];
	atomic_store(&gate, 0);
	atomic_store(&started, 0);
	atomic_store(&returned, 0);
	for (unsigned i = 0; i < M; i++)
		CHECK(pthread_create(&t[i], NULL, gate_waiter, (void *)(uintptr_t)i) == 0);
	while (atomic_load(&started) < M)
		usleep(1000);
	if (sleeps_in_kernel) {
		/* Wait until every waiter is asleep in the kernel. */
		uint64_t end = test_now_ns() + 10000000000ull;
		for (unsigned i = 0; i < M; i++)
			while (!sleeping(atomic_load(&tids[i]))) {
				CHECK(test_now_ns() < end);
				usleep(1000);
			}
	}
	atomic_store(&gate, 1);
	hws_wake32(&gate, N);
	if (sleeps_in_kernel) {
		/* The waker took the N it woke off the bucket's sleeper count
		 * (no other word of the test shares it), before they run. */
		CHECK_EQ(atomic_load(&hws_wait_bucket_of(&gate)->n), M - N);
		/* Exactly N return; the others stay asleep until woken. */
		uint64_t end = test_now_ns() + 10000000000ull;
		while (atomic_load(&returned) < N)
			CHECK(test_now_ns() < end);
		usleep(100000);
		CHECK_EQ(atomic_load(&returned), N);
		hws_wake32(&gate, HWS_WAKE_ALL);
	}
	for (unsigned i = 0; i < M; i++)
		pthread_join(t[i], NULL);
	CHECK_EQ(atomic_load(&returned), M);
	/* woken, timed out or never asleep: nobody is counted any more */
	CHECK_EQ(atomic_load(&hws_wait_bucket_of(&gate)->n), 0);
}

/* ---- a wake with nobody asleep costs no system call ---------------------- */
static void wake_without_sleepers(void)
{
	static _Atomic uint32_t lonely HWS_ALIGNED_LINE;
	uint64_t before = hws_wait_tls.syscalls;
	for (int i = 0; i < 1000; i++) {
		atomic_store(&lonely, (uint32_t)i);
		CHECK_EQ(hws_wake32(&lonely, 1), 0);
	}
	CHECK_EQ(hws_wait_tls.syscalls, before);
}

int main(void)
{
	unsigned tested = 0;
	rounds = test_scale(100000);
	wake_without_sleepers();
	for (int k = 0; k < HWS_WAIT_NKINDS; k++) {
		const char *name = hws_wait_kind_name((enum hws_wait_kind)k);
		const char *why;
		if (hws_wait_available((enum hws_wait_kind)k, &why)) {
			printf("%-11s skipped: %s\n", name, why);
			continue;
		}
		CHECK_EQ(hws_wait_init(&pol, name), 0);
		bool kernel = k == HWS_WAIT_FUTEX || k == HWS_WAIT_ADAPTIVE;
		uint64_t t0 = test_now_ns();
		/* delay-miss and yield are slow per round trip: fewer rounds. */
		unsigned saved = rounds;
		if (k == HWS_WAIT_DELAY_MISS || k == HWS_WAIT_YIELD)
			rounds = rounds / 4 ? rounds / 4 : 1;
		pingpong();
		uint64_t t1 = test_now_ns();
		double per_trip = (double)(t1 - t0) / rounds;
		rounds = saved;
		deadline_expires();
		wake_before_wait();
		wake_n_of_m(kernel);
		printf("%-11s ok (ping-pong %.0f ns/round trip)\n", name, per_trip);
		tested++;
	}
	CHECK(tested >= 9);
	return 0;
}

/* auto in the shapes of the `hwsync bench shim` patterns that its rules for
 * real-time waiters and busy machines target (bench/shim_patterns.c):
 *   yield8    8 locks, each held across sched_yield(), taken at random by 1,
 *             4 and 16 threads per usable CPU (mutex-yield8-N);
 *   yield1    one lock held across sched_yield() by 4 threads per usable CPU
 *             (mutex-yield);
 *   empty     one lock around the checked count alone, and a per-thread
 *             count outside it, one thread per usable CPU (mutex-empty);
 *   rt        threads that take one lock at a random SCHED_FIFO priority,
 *             drop to SCHED_OTHER, yield and release (mutex-rt); skipped
 *             where SCHED_FIFO is refused;
 *   consumer  a producer that sleeps 200 us between items, a consumer that
 *             waits for them on a condvar over the lock (cond-consumer).
 * Checked: exact counts under the lock (a plain counter read before the
 * yield and written after it, so a second holder loses an update, and
 * ThreadSanitizer sees the race), every item taken once, in order, and
 * progress: each part runs a fixed amount of work in a child process with a
 * watchdog, so a hang fails the test instead of holding the machine.  Every
 * part runs with the busy-machine verdict forced to no and to yes (auto's
 * two paths), under the default "adaptive" policy.  argv[1] names the part. */
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include "tests/locks/lock_test.h"
#include <hwsync/arch.h>
#include <hwsync/condvar.h>
#include <hwsync/lock_auto.h>

#define NLOCKS 8
#define MAX_THREADS 64
#define WATCHDOG_S 50   /* a child; a ctest test runs two within its 120 s */
#define RTTIME_US 500000

static hws_wait_t policy;
static _Atomic unsigned started;

/* Start together, so that the threads really contend. */
static void gate(unsigned n)
{
	atomic_fetch_add(&started, 1);
	while (atomic_load(&started) < n)
		sched_yield();
}

static uint32_t xorshift32(uint32_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 17;
	*s ^= *s << 5;
	return *s;
}

static struct {
	_Alignas(64) hws_auto_t l;
	int count;      /* under l */
} locks[NLOCKS];

struct worker {
	unsigned n, ops, id, nlocks;
	unsigned long taken[NLOCKS];   /* acquisitions of each lock */
};

/* yield8 and yield1: w->nlocks locks, one taken at random each time. */
static void *yield_in_lock(void *p)
{
	struct worker *w = p;
	uint32_t seed = 2463534242u + 977u * w->id;
	gate(w->n);
	for (unsigned i = 0; i < w->ops; i++) {
		unsigned k = xorshift32(&seed) % w->nlocks;
		CHECK_EQ(hws_auto_acquire(&locks[k].l), 0);
		int c = locks[k].count;
		sched_yield();
		locks[k].count = c + 1;
		CHECK_EQ(hws_auto_release(&locks[k].l), 0);
		w->taken[k]++;
	}
	return NULL;
}

static void *empty(void *p)
{
	struct worker *w = p;
	gate(w->n);
	for (unsigned i = 0; i < w->ops; i++) {
		CHECK_EQ(hws_auto_acquire(&locks[0].l), 0);
		locks[0].count++;
		CHECK_EQ(hws_auto_release(&locks[0].l), 0);
		w->taken[0]++;   /* the work outside the lock */
	}
	return NULL;
}

static void *rt(void *p)
{
	struct worker *w = p;
	uint32_t seed = 88675123u + 131u * w->id;
	struct sched_param other = { .sched_priority = 0 };
	gate(w->n);
	for (unsigned i = 0; i < w->ops; i++) {
		struct sched_param fifo = { .sched_priority = 1 + (int)(xorshift32(&seed) % 20) };
		CHECK_EQ(pthread_setschedparam(pthread_self(), SCHED_FIFO, &fifo), 0);
		CHECK_EQ(hws_auto_acquire(&locks[0].l), 0);
		int c = locks[0].count;
		CHECK_EQ(pthread_setschedparam(pthread_self(), SCHED_OTHER, &other), 0);
		sched_yield();
		locks[0].count = c + 1;
		CHECK_EQ(hws_auto_release(&locks[0].l), 0);
		w->taken[0]++;
	}
	return NULL;
}

/* n threads of fn on nlocks locks, ops acquisitions in all; each lock's
 * count must be the acquisitions of it. */
static void run_workers(void *(*fn)(void *), unsigned n, unsigned nlocks, unsigned ops)
{
	static struct worker w[MAX_THREADS];
	unsigned long want[NLOCKS] = { 0 };

	n = n < MAX_THREADS ? n : MAX_THREADS;
	atomic_store(&started, 0);
	for (unsigned k = 0; k < NLOCKS; k++) {
		hws_auto_init(&locks[k].l, &policy);
		locks[k].count = 0;
	}
	for (unsigned i = 0; i < n; i++)
		w[i] = (struct worker){ .n = n, .ops = ops / n ? ops / n : 1, .id = i,
					.nlocks = nlocks };
	test_run_threads(n, fn, w, sizeof w[0]);
	for (unsigned i = 0; i < n; i++)
		for (unsigned k = 0; k < NLOCKS; k++)
			want[k] += w[i].taken[k];
	unsigned long all = 0;
	for (unsigned k = 0; k < NLOCKS; k++) {
		CHECK_EQ(locks[k].count, want[k]);
		all += want[k];
	}
	CHECK_EQ(all, (unsigned long)n * w[0].ops);
	printf("  %u threads: %lu acquisitions, counts exact\n", n, all);
}

/* cond-consumer: items carry their number (xor a pattern, so that a slot
 * read before its write or twice shows); the consumer takes them one at a
 * time and must see each once, in order. */
#define ITEM_MAGIC 0x5a5a0000u

static struct {
	hws_auto_t l;
	hws_condvar_core_t cv;
	unsigned produced, consumed;   /* under l */
	bool done;                     /* under l */
	unsigned *slot;                /* [produced], under l */
} q;

static void *producer(void *p)
{
	unsigned n = *(unsigned *)p;
	const struct timespec nap = { 0, 200000 };
	gate(2);
	for (unsigned i = 0; i < n; i++) {
		while (nanosleep(&nap, NULL) && errno == EINTR)
			;
		CHECK_EQ(hws_auto_acquire(&q.l), 0);
		q.slot[q.produced] = q.produced ^ ITEM_MAGIC;
		q.produced++;
		q.done = i + 1 == n;
		hws_condvar_core_wake(&q.cv, 1);
		CHECK_EQ(hws_auto_release(&q.l), 0);
	}
	return NULL;
}

static void *consumer(void *p)
{
	unsigned n = *(unsigned *)p;
	gate(2);
	CHECK_EQ(hws_auto_acquire(&q.l), 0);
	for (;;) {
		while (q.consumed == q.produced && !q.done) {
			uint32_t seq = hws_condvar_core_enter(&q.cv);
			CHECK_EQ(hws_auto_release(&q.l), 0);
			CHECK_EQ(hws_condvar_core_block(&q.cv, seq, &policy, HWS_FOREVER), 0);
			hws_condvar_core_leave(&q.cv);
			CHECK_EQ(hws_auto_acquire(&q.l), 0);
		}
		if (q.consumed == q.produced)
			break;
		CHECK(q.consumed < n);
		CHECK_EQ(q.slot[q.consumed], q.consumed ^ ITEM_MAGIC);
		q.slot[q.consumed] = 0;   /* taken: a second take would fail above */
		q.consumed++;
	}
	CHECK_EQ(hws_auto_release(&q.l), 0);
	return NULL;
}

static void run_consumer(unsigned n)
{
	pthread_t th[2];
	hws_auto_init(&q.l, &policy);
	atomic_init(&q.cv.seq, 0);
	atomic_init(&q.cv.waiters, 0);
	q.produced = q.consumed = 0;
	q.done = false;
	CHECK(q.slot = calloc(n, sizeof *q.slot));
	atomic_store(&started, 0);
	CHECK_EQ(pthread_create(&th[0], NULL, consumer, &n), 0);
	CHECK_EQ(pthread_create(&th[1], NULL, producer, &n), 0);
	CHECK_EQ(pthread_join(th[0], NULL), 0);
	CHECK_EQ(pthread_join(th[1], NULL), 0);
	CHECK_EQ(q.produced, n);
	CHECK_EQ(q.consumed, n);
	CHECK(!hws_condvar_core_busy(&q.cv));
	free(q.slot);
	printf("  %u items produced, each consumed once, in order\n", n);
}

static void run_part(const char *part, int busy)
{
	unsigned cpus = hws_usable_cpus();

	hws_cpus_busy_force(busy);
	if (!strcmp(part, "yield8")) {
		static const unsigned per[] = { 1, 4, 16 };
		for (unsigned i = 0; i < 3; i++)
			run_workers(yield_in_lock, per[i] * cpus, NLOCKS, lock_test_scale(60000));
	} else if (!strcmp(part, "yield1")) {
		run_workers(yield_in_lock, 4 * cpus, 1, lock_test_scale(30000));
	} else if (!strcmp(part, "empty")) {
		run_workers(empty, cpus, 1, lock_test_scale(2000000));
	} else if (!strcmp(part, "rt")) {
		/* A real-time thread that runs RTTIME_US without sleeping gets
		 * SIGXCPU (and SIGKILL at twice that): a waiter that spins on the
		 * CPU of a holder it outranks ends the run, not the machine. */
		struct rlimit rl = { RTTIME_US, 2 * RTTIME_US };
		CHECK_EQ(setrlimit(RLIMIT_RTTIME, &rl), 0);
		run_workers(rt, 4 * cpus, 1, lock_test_scale(24000));
	} else {
		run_consumer(lock_test_scale(3000));
	}
}

/* One part in a child under a watchdog; 0 if it passed. */
static int fork_part(const char *part, int busy)
{
	int status;
	uint64_t t0 = test_now_ns();

	printf("%s, busy machine %s:\n", part, busy ? "yes" : "no");
	fflush(NULL);
	pid_t pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		alarm(WATCHDOG_S);
		run_part(part, busy);
		fflush(NULL);
		_exit(0);
	}
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
		printf("  passed in %.2f s\n", (test_now_ns() - t0) / 1e9);
		return 0;
	}
	if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM)
		fprintf(stderr, "%s: no progress: not done after %d s\n", part, WATCHDOG_S);
	else if (WIFSIGNALED(status) && (WTERMSIG(status) == SIGXCPU ||
					 WTERMSIG(status) == SIGKILL))
		fprintf(stderr, "%s: a real-time thread ran %d ms without sleeping (%s)\n", part,
			RTTIME_US / 1000, strsignal(WTERMSIG(status)));
	else if (WIFSIGNALED(status))
		fprintf(stderr, "%s: the child died of %s\n", part, strsignal(WTERMSIG(status)));
	else
		fprintf(stderr, "%s: the child failed (exit %d)\n", part, WEXITSTATUS(status));
	return 1;
}

int main(int argc, char **argv)
{
	const char *part = argc > 1 ? argv[1] : "";
	const char *why;

	if (strcmp(part, "yield8") && strcmp(part, "yield1") && strcmp(part, "empty") &&
	    strcmp(part, "rt") && strcmp(part, "consumer")) {
		fprintf(stderr, "usage: %s yield8|yield1|empty|rt|consumer\n", argv[0]);
		return 2;
	}
	if (!strcmp(part, "rt") && !hws_realtime_permitted(&why)) {
		printf("skipped: %s\n", why);
		return HWS_TEST_SKIP;
	}
	CHECK_EQ(hws_wait_init(&policy, "adaptive"), 0);
	printf("%u usable CPUs\n", hws_usable_cpus());
	int failed = fork_part(part, 0);
	failed |= fork_part(part, 1);
	return failed;
}

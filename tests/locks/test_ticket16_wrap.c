/* The 4-byte ticket core across the wrap of its 16-bit halves.
 *  - Count: from a zero word, three threads take it 65536 + 4096 times in
 *    all (acquire, try, timed; not scaled: the owner half must wrap), under
 *    futex and adaptive.  A plain counter must be exact, and the word must
 *    end with both halves equal to the count modulo 2^16.
 *  - FIFO: the word is set just below the wrap (a free lock: next == owner),
 *    the main thread holds it and starts waiters one at a time, each after
 *    its ticket is visibly taken; their tickets straddle the wrap of both
 *    halves (a carry out of the word is lost).  They must get the lock in
 *    ticket order, under pause, futex and adaptive. */
#include "tests/locks/core_test.h"

#define TOTAL (65536u + 4096u)
#define NTHREADS 3
#define NWAITERS 6

static hws_ticket16_core_t lk;
static const hws_wait_t *W;
static unsigned long counter;        /* under lk */

static _Atomic unsigned started, running;

struct arg { uint64_t seed; unsigned n; unsigned long giveups, contended; };

/* Someone holds a ticket behind the holder's. */
static int queued(void)
{
	uint32_t v = atomic_load(&lk.word);
	return (((v >> 16) - v) & 0xffffu) > 1;
}

static void *counting(void *p)
{
	struct arg *a = p;
	const struct core_kind *k = core_kind_find("ticket16");

	atomic_fetch_add(&started, 1);      /* start together, to contend */
	while (atomic_load(&started) < NTHREADS)
		sched_yield();
	for (unsigned i = 0; i < a->n; i++) {
		core_lock_any(k, &lk, W, test_rand(&a->seed), &a->giveups);
		counter++;
		/* Now and then, hold it until another thread has taken a ticket
		 * (bounded: it may be descheduled, or done). */
		uint64_t t0 = test_now_ns();
		while ((i & 15) == 0 && atomic_load(&running) > 1 && !queued() &&
		       test_now_ns() - t0 < 1000000)
			sched_yield();
		a->contended += queued();
		CHECK_EQ(hws_ticket16_core_release(&lk), 0);
	}
	atomic_fetch_sub(&running, 1);
	return NULL;
}

static void count(const char *policy)
{
	hws_wait_t w = core_policy(policy);
	struct arg args[NTHREADS];
	unsigned long giveups = 0, contended = 0;

	W = &w;
	atomic_store(&started, 0);
	atomic_store(&running, NTHREADS);
	atomic_store(&lk.word, 0);
	counter = 0;
	for (unsigned t = 0; t < NTHREADS; t++)
		args[t] = (struct arg){ .seed = 0x9e3779b97f4a7c15ull * (t + 1),
					.n = TOTAL / NTHREADS + (t < TOTAL % NTHREADS) };
	test_run_threads(NTHREADS, counting, args, sizeof args[0]);
	for (unsigned t = 0; t < NTHREADS; t++)
		giveups += args[t].giveups, contended += args[t].contended;
	CHECK_EQ(counter, TOTAL);
	CHECK(contended > 0);
	CHECK_EQ(atomic_load(&lk.word), (TOTAL & 0xffffu) << 16 | (TOTAL & 0xffffu));
	printf("count %-8s %u acquisitions by %u threads (%lu with a waiter queued), %lu give-ups,"
	       " word %#x\n", policy, TOTAL, NTHREADS, contended, giveups, atomic_load(&lk.word));
}

static int order[NWAITERS], norder;

static void *waiter(void *p)
{
	CHECK_EQ(hws_ticket16_core_acquire(&lk, W), 0);
	order[norder++] = *(int *)p;
	CHECK_EQ(hws_ticket16_core_release(&lk), 0);
	return NULL;
}

/* Waiters' tickets are start, start + 1, ... (mod 2^16) behind the holder's. */
static void fifo(const char *policy, uint32_t start)
{
	hws_wait_t w = core_policy(policy);
	pthread_t t[NWAITERS];
	int ids[NWAITERS];

	W = &w;
	atomic_store(&lk.word, (start - 1) << 16 | ((start - 1) & 0xffffu));   /* free */
	norder = 0;
	CHECK_EQ(hws_ticket16_core_acquire(&lk, W), 0);
	for (int i = 0; i < NWAITERS; i++) {
		uint32_t before = atomic_load(&lk.word);
		uint64_t give_up = test_now_ns() + 5000000000ull;
		ids[i] = i;
		CHECK(pthread_create(&t[i], NULL, waiter, &ids[i]) == 0);
		while (atomic_load(&lk.word) == before) {     /* its ticket is taken */
			CHECK(test_now_ns() < give_up);
			sched_yield();
		}
	}
	CHECK_EQ(hws_ticket16_core_release(&lk), 0);
	for (int i = 0; i < NWAITERS; i++)
		CHECK(pthread_join(t[i], NULL) == 0);
	CHECK_EQ(norder, NWAITERS);
	for (int i = 0; i < NWAITERS; i++)
		CHECK_EQ(order[i], i);
	uint32_t end = (start + NWAITERS) & 0xffffu;
	CHECK_EQ(atomic_load(&lk.word), end << 16 | end);
}

int main(void)
{
	static const uint32_t starts[] = { 0xfffcu, 0xfffeu, 0xffffu, 0x10000u };

	count("futex");
	count("adaptive");
	for (int p = 0; p < NCORE_POLICIES; p++) {
		for (size_t s = 0; s < sizeof starts / sizeof starts[0]; s++)
			fifo(core_policies[p], starts[s]);
		printf("fifo  %-8s in ticket order across the wrap\n", core_policies[p]);
	}
	return 0;
}

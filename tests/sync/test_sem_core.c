/* The in-place semaphore core, as a sem_t under the shim; under pause,
 * futex and adaptive.
 *  - A bounded buffer: two producers put numbered items into a ring of four
 *    slots, three consumers take them, with a semaphore of free slots and
 *    one of items (cores, in place) and a lock core for the ring.  Every item
 *    must be taken exactly once.  First everyone waits plainly (with a long
 *    deadline: consumers sleep on an empty ring under futex, and a lost
 *    wake-up fails that wait), then with try and short timed waits mixed in.
 *  - Overflow: four threads post twice each onto a value three below
 *    HWS_SEM_VALUE_MAX; exactly three posts succeed, the others get
 *    EOVERFLOW and the value stays at the maximum.
 * Afterwards both semaphores hold their initial value and no waiter is left
 * announced. */
#include "sync/sync_test.h"
#include "tests/locks/core_test.h"
#include <hwsync/sem.h>

#define LONG_NS 20000000000ull     /* a plain wait that times out lost a wake-up */

#define CAP 4
#define NPROD 2
#define NCONS 3

static hws_sem_core_t items, spaces;
static hws_mutex_core_t ring_lock;
static unsigned ring[CAP], head, tail;   /* under ring_lock */
static _Atomic unsigned char *seen;       /* per item: times taken */
static const hws_wait_t *W;
static unsigned nitems;
static int mixed;

struct arg { unsigned id; uint64_t seed; unsigned long giveups; };

/* One unit of s: a plain wait; or (mixed) a try, twice, or a short timed
 * wait, then a plain wait. */
static void sem_down(hws_sem_core_t *s, struct arg *a)
{
	uint32_t x = test_rand(&a->seed);

	if (mixed && x % 3 == 1) {
		for (int n = 0; n < 2; n++) {
			if (hws_sem_core_take(s))
				return;
			a->giveups++, sched_yield();
		}
	} else if (mixed && x % 3 == 2) {
		int rc = hws_sem_core_wait(s, W, test_now_ns() + (x >> 4) % 20000);
		if (rc == 0)
			return;
		CHECK_EQ(rc, ETIMEDOUT);
		a->giveups++;
	}
	if (hws_sem_core_wait(s, W, test_now_ns() + LONG_NS)) {
		fprintf(stderr, "no unit in %llu s: a lost wake-up\n", LONG_NS / 1000000000ull);
		exit(1);
	}
}

static void *producer(void *p)
{
	struct arg *a = p;

	for (unsigned i = a->id; i < nitems; i += NPROD) {
		sem_down(&spaces, a);
		CHECK_EQ(hws_mutex_core_acquire(&ring_lock, W), 0);
		ring[tail++ % CAP] = i;
		CHECK_EQ(hws_mutex_core_release(&ring_lock), 0);
		CHECK_EQ(hws_sem_core_post(&items), 0);
	}
	return NULL;
}

static void *consumer(void *p)
{
	struct arg *a = p;

	for (unsigned i = a->id; i < nitems; i += NCONS) {
		sem_down(&items, a);
		CHECK_EQ(hws_mutex_core_acquire(&ring_lock, W), 0);
		unsigned item = ring[head++ % CAP];
		CHECK_EQ(hws_mutex_core_release(&ring_lock), 0);
		CHECK_EQ(hws_sem_core_post(&spaces), 0);
		CHECK(item < nitems);
		CHECK_EQ(atomic_fetch_add(&seen[item], 1), 0);
	}
	return NULL;
}

static void *start(void *p)
{
	struct arg *a = p;
	return a->id < NPROD ? producer(a) : (a->id -= NPROD, consumer(a));
}

static void buffer(const char *policy, unsigned n, int mix)
{
	hws_wait_t w = core_policy(policy);
	struct arg args[NPROD + NCONS];
	unsigned long giveups = 0;

	W = &w, nitems = n, mixed = mix;
	memset(&items, 0, sizeof items);        /* value 0 */
	memset(&spaces, 0, sizeof spaces);
	atomic_store(&spaces.value, CAP);
	memset(&ring_lock, 0, sizeof ring_lock);
	head = tail = 0;
	CHECK(seen = calloc(n, 1));
	for (unsigned t = 0; t < NPROD + NCONS; t++)
		args[t] = (struct arg){ .id = t, .seed = 0x9e3779b97f4a7c15ull * (t + 1) + n };
	uint64_t t0 = test_now_ns();
	test_run_threads(NPROD + NCONS, start, args, sizeof args[0]);
	for (unsigned i = 0; i < n; i++)
		CHECK_EQ(seen[i], 1);
	for (unsigned t = 0; t < NPROD + NCONS; t++)
		giveups += args[t].giveups;
	CHECK_EQ(atomic_load(&items.value), 0);
	CHECK_EQ(atomic_load(&spaces.value), CAP);
	CHECK_EQ(atomic_load(&items.waiters), 0);
	CHECK_EQ(atomic_load(&spaces.waiters), 0);
	printf("%-8s %-5s %u items, each taken once, %lu give-ups (%.0f ms)\n", policy,
	       mix ? "mixed" : "plain", n, giveups, (test_now_ns() - t0) / 1e6);
	free(seen);
}

static hws_sem_core_t full;
static _Atomic unsigned posted, overflowed;

static void *poster(void *p)
{
	(void)p;
	for (int i = 0; i < 2; i++) {
		int rc = hws_sem_core_post(&full);
		CHECK(rc == 0 || rc == EOVERFLOW);
		atomic_fetch_add(rc ? &overflowed : &posted, 1);
	}
	return NULL;
}

static void overflow(void)
{
	char dummy[4];

	atomic_store(&full.value, HWS_SEM_VALUE_MAX - 3);
	test_run_threads(4, poster, dummy, 1);
	CHECK_EQ(atomic_load(&posted), 3);
	CHECK_EQ(atomic_load(&overflowed), 5);
	CHECK_EQ(atomic_load(&full.value), HWS_SEM_VALUE_MAX);
	CHECK_EQ(hws_sem_core_post(&full), EOVERFLOW);
	CHECK(hws_sem_core_take(&full));
	CHECK_EQ(atomic_load(&full.value), HWS_SEM_VALUE_MAX - 1);
	CHECK_EQ(hws_sem_core_post(&full), 0);
	CHECK_EQ(atomic_load(&full.waiters), 0);
	printf("overflow: 3 posts up to HWS_SEM_VALUE_MAX, 5 EOVERFLOW\n");
}

int main(void)
{
	unsigned n = lock_test_scale(30000);

	overflow();
	for (int p = 0; p < NCORE_POLICIES; p++) {
		/* polling waiters (5 threads) on a busy machine: fewer items */
		unsigned k = strcmp(core_policies[p], "pause") ? n : n / 100;
		buffer(core_policies[p], k, 0);
		buffer(core_policies[p], k, 1);
	}
	return 0;
}

/* auto's two cheaper release forms (include/hwsync/lock_auto.h), checked
 * word by word against what the read-first release does:
 *   hinted  the CAS starts from a hint instead of a read of the word: with a
 *           right hint, a stale one, one that carries waiter bits, and none;
 *           a stray release changes nothing whatever the hint; a lock with a
 *           claim goes to the claimant (LOCKED stays); a release that saw
 *           PARKED clears it (and wakes, nobody here); the hint left behind
 *           is the word as the next acquisition makes it;
 *   alone   the plain load-and-store forms a single-threaded process uses:
 *           they take only a free lock and release only a plain hold, and
 *           leave any other word to the atomic forms, unchanged;
 *   threads a counter under the hinted release by several threads, exact
 *           (mutual exclusion; the hints they leave are each other's). */
#include <pthread.h>
#include "tests/locks/lock_test.h"
#include <hwsync/lock_auto.h>

#define L HWS_AUTO_LOCKED
#define P HWS_AUTO_PARKED
#define S HWS_AUTO_STARVING
#define G HWS_AUTO_GEN_ONE

static hws_auto_core_t core;
static _Atomic uint32_t hint;

static uint32_t word(void) { return atomic_load(&core.state); }
static void set(uint32_t w, uint32_t h)
{
	atomic_store(&core.state, w);
	atomic_store(&hint, h);
}

static void hinted(void)
{
	/* a fresh lock, no hint yet */
	set(0, 0);
	CHECK(hws_auto_core_take(&core));
	CHECK_EQ(hws_auto_core_release_hinted(&core, &hint), 0);
	CHECK_EQ(word(), G);
	CHECK_EQ(atomic_load(&hint), G | L);
	/* the hint right: the next generation */
	CHECK(hws_auto_core_take(&core));
	CHECK_EQ(hws_auto_core_release_hinted(&core, &hint), 0);
	CHECK_EQ(word(), 2 * G);
	CHECK_EQ(atomic_load(&hint), 2 * G | L);
	/* stale (another release moved the word on), or with waiter bits */
	uint32_t stale[] = { 0, G | L, 7 * G | P | S | L, 0xffffffffu };
	for (unsigned i = 0; i < sizeof stale / sizeof *stale; i++) {
		set(40 * G | L, stale[i]);
		CHECK_EQ(hws_auto_core_release_hinted(&core, &hint), 0);
		CHECK_EQ(word(), 41 * G);
		CHECK_EQ(atomic_load(&hint), 41 * G | L);
	}
	/* spinners stay counted */
	set(9 * G | 2 * HWS_AUTO_SPIN_ONE | L, 9 * G | L);
	CHECK_EQ(hws_auto_core_release_hinted(&core, &hint), 0);
	CHECK_EQ(word(), 10 * G | 2 * HWS_AUTO_SPIN_ONE);
	/* stray: a free lock stays as it is, even when the hint names it held */
	set(5 * G, 5 * G | L);
	CHECK_EQ(hws_auto_core_release_hinted(&core, &hint), 0);
	CHECK_EQ(word(), 5 * G);
	set(5 * G | P, 5 * G | P | L);
	CHECK_EQ(hws_auto_core_release_hinted(&core, &hint), 0);
	CHECK_EQ(word(), 5 * G | P);
	/* a claim: handed over, LOCKED kept, STARVING gone, one generation */
	set(3 * G | S | L, 3 * G | L);
	CHECK_EQ(hws_auto_core_release_hinted(&core, &hint), 0);
	CHECK_EQ(word(), 4 * G | L);
	/* a sleeper's mark: released and cleared */
	set(6 * G | P | L, 6 * G | L);
	CHECK_EQ(hws_auto_core_release_hinted(&core, &hint), 0);
	CHECK_EQ(word(), 7 * G);
	/* the generation wraps like the read-first release's */
	set(0xffffff00u | L, 0xffffff00u | L);
	CHECK_EQ(hws_auto_core_release_hinted(&core, &hint), 0);
	CHECK_EQ(word(), 0);
	CHECK_EQ(atomic_load(&hint), L);
}

static void alone(void)
{
	set(8 * G, 0);
	CHECK(hws_auto_core_take_alone(&core));
	CHECK_EQ(word(), 8 * G | L);
	CHECK(!hws_auto_core_take_alone(&core));        /* held: left to the slow path */
	CHECK_EQ(word(), 8 * G | L);
	CHECK(hws_auto_core_release_alone(&core));
	CHECK_EQ(word(), 9 * G);
	CHECK(!hws_auto_core_release_alone(&core));     /* stray: the atomic form decides */
	CHECK_EQ(word(), 9 * G);
	uint32_t other[] = { 9 * G | P | L, 9 * G | S | L, 9 * G | P };
	for (unsigned i = 0; i < sizeof other / sizeof *other; i++) {
		set(other[i], 0);
		CHECK(!hws_auto_core_release_alone(&core));
		CHECK_EQ(word(), other[i]);
	}
	set(9 * G | P, 0);                               /* free with a sleeper's mark */
	CHECK(hws_auto_core_take_alone(&core));
	CHECK_EQ(word(), 9 * G | P | L);
}

#define THREADS 4
static hws_auto_t shared;
static unsigned long count;   /* under shared */
static unsigned rounds;

static void *adder(void *arg)
{
	(void)arg;
	for (unsigned i = 0; i < rounds; i++) {
		CHECK_EQ(hws_auto_acquire(&shared), 0);
		count++;
		CHECK_EQ(hws_auto_release(&shared), 0);
	}
	return NULL;
}

static void threads(void)
{
	hws_wait_t w;
	pthread_t t[THREADS];
	CHECK_EQ(hws_wait_init(&w, "adaptive"), 0);
	CHECK_EQ(hws_auto_init(&shared, &w), 0);
	rounds = lock_test_scale(200000);
	for (int i = 0; i < THREADS; i++)
		CHECK_EQ(pthread_create(&t[i], NULL, adder, NULL), 0);
	for (int i = 0; i < THREADS; i++)
		CHECK_EQ(pthread_join(t[i], NULL), 0);
	CHECK_EQ(count, (unsigned long)THREADS * rounds);
	CHECK_EQ(atomic_load(&shared.core.state) & (L | S | HWS_AUTO_SPIN_MASK), 0);
}

int main(void)
{
	hinted();
	alone();
	threads();
	printf("auto release forms: ok\n");
	return 0;
}

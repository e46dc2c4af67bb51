/* The auto lock's parks are marked sleeps (lib/wait/futex.c): the PARKED
 * bit in the lock word says who sleeps, so a parked waiter leaves the
 * futex layer's sleeper counter alone, and only one park in eight per
 * thread is timed for the adaptive policy's hand-off window.
 * A waiter takes the lock ROUNDS times, each time behind a hold that lasts
 * until it has parked (the test mode makes it park at once).  While it
 * sleeps, the counter of the word's bucket must read zero; of its woken
 * sleeps, some must have been timed, and at most one in eight of its
 * futex calls (a counted sleep would time every one). */
#include <unistd.h>
#include "tests/locks/lock_test.h"
#include <hwsync/lock_auto.h>
#include "prims/lock_auto_internal.h"
#include "wait/internal.h"

#define ROUNDS 48u
#define PARK_WAIT_NS 2000000000ull   /* the waiter parks well within this */

static hws_auto_t lock;
static _Atomic unsigned go, done;

struct counts {
	uint64_t sleeps, timed, syscalls;
};

static void *waiter(void *p)
{
	struct counts *c = p;
	uint64_t z0 = hws_wait_tls.sleeps, s0 = hws_wait_tls.syscalls;
	uint64_t t0 = hws_futex_woken.seq;
	for (unsigned r = 1; r <= ROUNDS; r++) {
		while (atomic_load(&go) < r)
			usleep(20);
		CHECK_EQ(hws_auto_acquire(&lock), 0);
		CHECK_EQ(hws_auto_release(&lock), 0);
		atomic_store(&done, r);
	}
	c->sleeps = hws_wait_tls.sleeps - z0;
	c->timed = hws_futex_woken.seq - t0;
	c->syscalls = hws_wait_tls.syscalls - s0;
	return NULL;
}

int main(void)
{
	hws_wait_t policy;
	struct counts c = { 0 };
	pthread_t th;
	CHECK_EQ(hws_wait_init(&policy, "futex"), 0);
	hws_auto_init(&lock, &policy);
	atomic_store(&hws_auto_test_mode, HWS_AUTO_FORCE_PARK);
	_Atomic uint32_t *n = &hws_wait_bucket_of(&lock.core.state)->n;
	unsigned parked_seen = 0, counted = 0;

	CHECK_EQ(hws_auto_acquire(&lock), 0);
	CHECK_EQ(pthread_create(&th, NULL, waiter, &c), 0);
	for (unsigned r = 1; r <= ROUNDS; r++) {
		atomic_store(&go, r);
		uint64_t until = test_now_ns() + PARK_WAIT_NS;
		while (!(atomic_load(&lock.core.state) & HWS_AUTO_PARKED) && test_now_ns() < until)
			usleep(20);
		if (atomic_load(&lock.core.state) & HWS_AUTO_PARKED) {
			parked_seen++;
			usleep(200);   /* well into its system call */
			counted += atomic_load(n) != 0;
		}
		CHECK_EQ(hws_auto_release(&lock), 0);
		while (atomic_load(&done) < r)
			usleep(20);
		CHECK_EQ(hws_auto_acquire(&lock), 0);
	}
	CHECK_EQ(hws_auto_release(&lock), 0);
	CHECK_EQ(pthread_join(th, NULL), 0);
	atomic_store(&hws_auto_test_mode, HWS_AUTO_ADAPT);

	printf("%u rounds: parked in %u, the bucket counted a sleeper in %u; the waiter slept "
	       "%llu times, %llu timed, %llu futex calls\n", ROUNDS, parked_seen, counted,
	       (unsigned long long)c.sleeps, (unsigned long long)c.timed,
	       (unsigned long long)c.syscalls);
	CHECK(parked_seen >= ROUNDS / 2);
	CHECK_EQ(counted, 0u);
	CHECK(c.sleeps >= ROUNDS / 2);
	CHECK(c.timed >= 1);
	CHECK(c.timed <= c.syscalls / 8 + 1);
	return 0;
}

/* Semaphore: test_sem unit|stress.
 *   unit:   bad arguments, initial value, try on zero (EAGAIN), timed wait
 *           expiring (ETIMEDOUT), overflow (EOVERFLOW), a post that wakes a
 *           waiter, exact value after posts and takes.
 *   stress: 2 producers post 100000 units in total (scaled) with random
 *           delays; 3 consumers take them with wait/try/timed; every unit is
 *           taken exactly once, the final value is 0, nobody is left waiting
 *           (a lost wake-up fails a long timed wait). */
#include "sync/sync_test.h"
#include "common/with_policy.h"
#include <hwsync/sem.h>

#define LONG_NS 10000000000ull

static const char *const policies[] = { "pause", "futex", "adaptive" };

static void unit(const char *policy)
{
	hws_sem_t *s;
	CHECK_EQ(hws_sem_create(NULL, 0, policy), EINVAL);
	CHECK_EQ(hws_sem_create(&s, HWS_SEM_VALUE_MAX + 1u, policy), EINVAL);
	CHECK(strstr(hws_last_error(), "HWS_SEM_VALUE_MAX"));
	CHECK_EQ(hws_sem_create(&s, 0, "nosuch"), EINVAL);
	CHECK(strstr(hws_last_error(), "semaphore:"));
	CHECK_EQ(hws_sem_wait(NULL), EINVAL);
	CHECK_EQ(hws_sem_post(NULL), EINVAL);

	CHECK_EQ(hws_sem_create(&s, 3, policy), 0);
	CHECK_EQ(hws_sem_value(s), 3);
	for (int i = 0; i < 3; i++)
		CHECK_EQ(hws_sem_try(s), 0);
	CHECK_EQ(hws_sem_try(s), EAGAIN);
	CHECK_EQ(hws_sem_value(s), 0);
	uint64_t t0 = test_now_ns();
	struct timespec dl = test_deadline_ts(20000000ull);
	CHECK_EQ(hws_sem_timed(s, &dl), ETIMEDOUT);
	CHECK(test_now_ns() - t0 >= 20000000ull);
	struct timespec bad = { -1, 0 };
	CHECK_EQ(hws_sem_timed(s, &bad), EINVAL);
	CHECK(strstr(hws_last_error(), "bad deadline"));
	for (int i = 0; i < 5; i++)
		CHECK_EQ(hws_sem_post(s), 0);
	CHECK_EQ(hws_sem_value(s), 5);
	dl = test_deadline_ts(LONG_NS);
	CHECK_EQ(hws_sem_timed(s, &dl), 0);
	CHECK_EQ(hws_sem_wait(s), 0);
	CHECK_EQ(hws_sem_value(s), 3);
	hws_sem_destroy(s);

	CHECK_EQ(hws_sem_create(&s, HWS_SEM_VALUE_MAX, policy), 0);
	CHECK_EQ(hws_sem_post(s), EOVERFLOW);
	CHECK_EQ(hws_sem_value(s), HWS_SEM_VALUE_MAX);
	hws_sem_destroy(s);
}

/* A waiter blocked on 0 is released by one post. */
static hws_sem_t *ws;
static _Atomic int woke;
static void *blocked_waiter(void *arg)
{
	(void)arg;
	struct timespec dl = test_deadline_ts(LONG_NS);
	CHECK_EQ(hws_sem_timed(ws, &dl), 0);
	atomic_store(&woke, 1);
	return NULL;
}

static void post_wakes(const char *policy)
{
	pthread_t t;
	CHECK_EQ(hws_sem_create(&ws, 0, policy), 0);
	atomic_store(&woke, 0);
	CHECK(pthread_create(&t, NULL, blocked_waiter, NULL) == 0);
	usleep(20000);
	CHECK_EQ(atomic_load(&woke), 0);
	CHECK_EQ(hws_sem_post(ws), 0);
	pthread_join(t, NULL);
	CHECK_EQ(atomic_load(&woke), 1);
	CHECK_EQ(hws_sem_value(ws), 0);
	hws_sem_destroy(ws);
}

/* ---- stress ------------------------------------------------------------- */
enum { PRODUCERS = 2, CONSUMERS = 3 };
static hws_sem_t *sem;
static unsigned per_producer;
static _Atomic unsigned taken_total;

static void *producer(void *arg)
{
	uint64_t seed = 1 + (uintptr_t)arg;
	for (unsigned i = 0; i < per_producer; i++) {
		CHECK_EQ(hws_sem_post(sem), 0);
		sync_random_delay(&seed);   /* keep consumers waiting often */
	}
	return NULL;
}

static void *consumer(void *arg)
{
	uintptr_t me = (uintptr_t)arg;
	unsigned quota = per_producer * PRODUCERS / CONSUMERS +
			 (me < per_producer * PRODUCERS % CONSUMERS);
	uint64_t seed = 100 + me;
	for (unsigned got = 0; got < quota;) {
		int rc;
		switch (test_rand(&seed) % 3) {
		case 0:
			rc = hws_sem_try(sem);
			if (rc == EAGAIN)
				continue;
			break;
		case 1: {
			struct timespec dl = test_deadline_ts(LONG_NS);
			rc = hws_sem_timed(sem, &dl);
			break;
		}
		default:
			rc = hws_sem_wait(sem);
		}
		if (rc) {
			fprintf(stderr, "consumer %u: rc %d after %u of %u\n", (unsigned)me, rc, got,
				quota);
			exit(1);
		}
		got++;
		atomic_fetch_add(&taken_total, 1);
		if ((test_rand(&seed) & 15) == 0)
			sync_random_delay(&seed);
	}
	return NULL;
}

static void stress(const char *policy)
{
	pthread_t p[PRODUCERS], c[CONSUMERS];
	uint64_t t0 = test_now_ns();
	CHECK_EQ(hws_sem_create(&sem, 0, policy), 0);
	per_producer = sync_scale(100000) / PRODUCERS + 1;
	atomic_store(&taken_total, 0);
	for (uintptr_t i = 0; i < CONSUMERS; i++)
		CHECK(pthread_create(&c[i], NULL, consumer, (void *)i) == 0);
	for (uintptr_t i = 0; i < PRODUCERS; i++)
		CHECK(pthread_create(&p[i], NULL, producer, (void *)i) == 0);
	for (int i = 0; i < PRODUCERS; i++)
		pthread_join(p[i], NULL);
	for (int i = 0; i < CONSUMERS; i++)
		pthread_join(c[i], NULL);
	CHECK_EQ(atomic_load(&taken_total), per_producer * PRODUCERS);
	CHECK_EQ(hws_sem_value(sem), 0);
	CHECK_EQ(hws_sem_try(sem), EAGAIN);
	hws_sem_destroy(sem);
	fprintf(stderr, "  sem %-8s %u units %.2f s\n", policy, per_producer * PRODUCERS,
		(double)(test_now_ns() - t0) / 1e9);
}

static int sem_make(void **obj, const hws_wait_t *w)
{
	return hws_sem_create_with((hws_sem_t **)obj, 0, w);
}
static int sem_expire(void *obj)
{
	struct timespec dl = test_deadline_ts(2000000ull);
	return hws_sem_timed(obj, &dl);
}
static void sem_destroy(void *obj) { hws_sem_destroy(obj); }

/* hws_sem_create_with: the errors, and the policy given is the one a wait
 * uses. */
static void create_with(void)
{
	static const struct test_with_ops ops = { sem_make, sem_expire, sem_destroy };
	hws_wait_t w = test_policy("pause");
	hws_sem_t *s;

	test_with_errors(&ops, "hws_sem_create_with");
	CHECK_EQ(hws_sem_create_with(NULL, 0, &w), EINVAL);
	CHECK_EQ(hws_sem_create_with(&s, HWS_SEM_VALUE_MAX + 1u, &w), EINVAL);
	CHECK(strstr(hws_last_error(), "HWS_SEM_VALUE_MAX"));
	CHECK_EQ(hws_sem_create_with(&s, 2, &w), 0);
	CHECK_EQ(hws_sem_value(s), 2);
	hws_sem_destroy(s);
	test_with_uses_policy(&ops);
}

int main(int argc, char **argv)
{
	if (argc != 2 || (strcmp(argv[1], "unit") && strcmp(argv[1], "stress"))) {
		fprintf(stderr, "usage: test_sem unit|stress\n");
		return 2;
	}
	for (unsigned i = 0; i < sizeof policies / sizeof policies[0]; i++) {
		if (!strcmp(argv[1], "unit")) {
			if (i == 0)
				create_with();
			unit(policies[i]);
			post_wakes(policies[i]);
		} else {
			stress(policies[i]);
		}
	}
	return 0;
}

/* Cross-thread release of an in-place core (argv[1] names the kind): every
 * lock taken by a worker is released by another thread, as a pthread mutex
 * under the shim may be (a semaphore-like use, or a lock passed on).  For a
 * queue kind the holder's node lives in the lock, so the releasing thread
 * must find it there and hand over to, or swing the tail past, the holder's
 * successor.  Three workers lock two cores (acquire, try, timed) and pass
 * each held core to a releaser thread, which releases it while the other
 * workers queue on it; under pause, futex and adaptive.  Checks: the
 * "inside" flag and per-core counters as in the in-place test, and every
 * core free with tail 0 at the end. */
#include "tests/locks/core_test.h"

#define NOBJ 2
#define NWORKERS 3

static const struct core_kind *K;
static const hws_wait_t *W;
static hws_wait_t harness;
static struct { unsigned char bytes[40]; } objs[NOBJ];
static unsigned long counts[NOBJ];          /* under the core's lock */
static _Atomic int inside[NOBJ];
static _Atomic uint32_t slot[NWORKERS];     /* 1 + core a worker hands over, 0 = none */
static _Atomic uint32_t handed;             /* bumped by each hand-over */
static _Atomic unsigned active;
static unsigned ops;

struct arg { unsigned id; uint64_t seed; unsigned long giveups; };

static void *worker(void *p)
{
	struct arg *a = p;

	for (unsigned i = 0; i < ops; i++) {
		uint32_t r = test_rand(&a->seed);
		unsigned o = r % NOBJ;

		core_lock_any(K, &objs[o], W, r >> 8, &a->giveups);
		CHECK_EQ(atomic_exchange(&inside[o], 1), 0);
		counts[o]++;
		/* seq_cst (default): publishes counts[o] to the releaser */
		atomic_store(&slot[a->id], o + 1);
		atomic_fetch_add(&handed, 1);
		hws_wake32(&handed, HWS_WAKE_ALL);
		while (atomic_load(&slot[a->id]))
			hws_wait_while_eq32(&slot[a->id], o + 1, &harness, HWS_FOREVER);
	}
	atomic_fetch_sub(&active, 1);
	atomic_fetch_add(&handed, 1);
	hws_wake32(&handed, HWS_WAKE_ALL);
	return NULL;
}

static void *releaser(void *p)
{
	unsigned long *released = p;

	for (;;) {
		uint32_t seen = atomic_load(&handed);
		int idle = 1;
		for (unsigned t = 0; t < NWORKERS; t++) {
			uint32_t s = atomic_load(&slot[t]);
			if (!s)
				continue;
			CHECK_EQ(atomic_exchange(&inside[s - 1], 0), 1);
			CHECK_EQ(K->release(&objs[s - 1], W), 0);
			(*released)++;
			atomic_store(&slot[t], 0);
			hws_wake32(&slot[t], HWS_WAKE_ALL);
			idle = 0;
		}
		if (idle && !atomic_load(&active))
			return NULL;
		if (idle)
			hws_wait_while_eq32(&handed, seen, &harness, HWS_FOREVER);
	}
}

int main(int argc, char **argv)
{
	struct arg args[NWORKERS];
	pthread_t rel;

	K = core_kind_find(argc > 1 ? argv[1] : "mcs");
	harness = core_policy("adaptive");
	ops = lock_test_scale(4000);
	for (int p = 0; p < NCORE_POLICIES; p++) {
		hws_wait_t w = core_policy(core_policies[p]);
		unsigned long released = 0, giveups = 0;

		W = &w;
		memset(objs, 0, sizeof objs);
		memset(counts, 0, sizeof counts);
		atomic_store(&active, NWORKERS);
		for (unsigned t = 0; t < NWORKERS; t++)
			args[t] = (struct arg){ .id = t, .seed = 0x9e3779b97f4a7c15ull * (t + 1) + p };
		CHECK(pthread_create(&rel, NULL, releaser, &released) == 0);
		test_run_threads(NWORKERS, worker, args, sizeof args[0]);
		CHECK(pthread_join(rel, NULL) == 0);
		for (unsigned t = 0; t < NWORKERS; t++)
			giveups += args[t].giveups;
		CHECK_EQ(counts[0] + counts[1], NWORKERS * ops);
		CHECK_EQ(released, NWORKERS * ops);
		for (unsigned o = 0; o < NOBJ; o++)
			core_check_free(K, &objs[o], &w);
		printf("%-8s %-8s %u locks released by another thread, %lu give-ups\n", K->name,
		       core_policies[p], NWORKERS * ops, giveups);
	}
	return 0;
}

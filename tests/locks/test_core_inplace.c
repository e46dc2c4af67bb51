/* In-place lock cores (argv[1] names the kind) used where they lie, as an
 * LD_PRELOAD shim uses them: zero-initialised cores in an array, either one
 * per 40-byte object (the size of a pthread_mutex_t) or packed at the core's
 * own size (many locks per cache line), and two packed cores that every
 * thread fights over.  More threads than CPUs lock random objects with
 * acquire, try and timed (short deadlines) under pause, futex and adaptive.
 * Checks: an "inside" flag per object is never found set on entry, a plain
 * counter per object adds up to the number of critical sections, the run
 * ends (no thread starves past the ctest timeout), and afterwards every core
 * is free and, for the queue kinds, references no node (tail 0). */
#include "tests/locks/core_test.h"

struct layout { const char *name; size_t stride; unsigned nobj; };

static const struct core_kind *K;
static const hws_wait_t *W;
static unsigned char *objs;                 /* nobj objects of `stride` bytes */
static size_t stride;
static unsigned nobj;
static unsigned long *counts;               /* per object, under its lock */
static _Atomic int *inside;                 /* per object */
static struct lock_run R;

struct arg { uint64_t seed; unsigned long done, giveups; };

static void *worker(void *p)
{
	struct arg *a = p;

	lock_run_start(&R);
	for (unsigned i = 0; lock_run_more(&R, i); i++) {
		uint32_t r = test_rand(&a->seed);
		unsigned o = r % nobj;
		void *c = objs + (size_t)o * stride;

		core_lock_any(K, c, W, r >> 12, &a->giveups);
		/* relaxed: the lock orders these; the flag only detects overlap */
		CHECK_EQ(atomic_exchange_explicit(&inside[o], 1, memory_order_relaxed), 0);
		unsigned long v = counts[o];
		if ((i & 31) == 0)
			sched_yield();     /* widen the window a broken lock would show */
		counts[o] = v + 1;
		CHECK_EQ(atomic_exchange_explicit(&inside[o], 0, memory_order_relaxed), 1);
		CHECK_EQ(K->release(c, W), 0);
		a->done++;
		test_spin_ns(test_rand(&a->seed) % 300);
	}
	return NULL;
}

static void run(const char *policy, const struct layout *l, unsigned nthreads,
		uint64_t run_ns)
{
	hws_wait_t w = core_policy(policy);
	struct arg args[8];
	unsigned long total = 0, giveups = 0, sum = 0;

	W = &w;
	stride = l->stride;
	nobj = l->nobj;
	CHECK(objs = calloc(nobj, stride));      /* all zero: free cores */
	CHECK(counts = calloc(nobj, sizeof *counts));
	CHECK(inside = calloc(nobj, sizeof *inside));
	lock_run_reset(&R, nthreads, run_ns);
	for (unsigned t = 0; t < nthreads; t++)
		args[t] = (struct arg){ .seed = 0x9e3779b97f4a7c15ull * (t + 1) + nobj };
	test_run_threads(nthreads, worker, args, sizeof args[0]);

	for (unsigned t = 0; t < nthreads; t++)
		total += args[t].done, giveups += args[t].giveups;
	for (unsigned o = 0; o < nobj; o++) {
		sum += counts[o];
		core_check_free(K, objs + (size_t)o * stride, &w);
	}
	CHECK_EQ(sum, total);
	printf("%-8s %-8s %-6s %3u objects, %u threads: %lu ok, %lu give-ups\n", K->name,
	       policy, l->name, nobj, nthreads, total, giveups);
	free(objs), free(counts), free(inside);
}

int main(int argc, char **argv)
{
	unsigned nthreads = test_ncpus() + 2;

	if (nthreads > 8)
		nthreads = 8;
	K = core_kind_find(argc > 1 ? argv[1] : "mcs");
	const struct layout layouts[] = {
		{ "obj40", 40, 256 },           /* one core per pthread_mutex_t-sized object */
		{ "packed", K->size, 256 },     /* cores side by side */
		{ "hot", K->size, 2 },          /* two neighbours, always contended */
	};
	for (int p = 0; p < NCORE_POLICIES; p++)
		for (int l = 0; l < 3; l++) {
			/* polling waiters convoy when oversubscribed: a smaller share */
			run(core_policies[p], &layouts[l], nthreads,
			    lock_test_scale(p == 0 ? 100 : 200) * 1000000ull);
		}
	return 0;
}

/* A core abandoned without destroy strands no queue node (argv[1] names the
 * kind).  100000 cores (scaled) are each created in freshly malloc'd memory,
 * used contended by two threads and freed with nothing else done.  They come
 * in batches of BATCH (one hand-shake per batch): the main thread takes
 * every core of the batch, the worker queues on each in turn and the main
 * thread releases each once the worker's node is in the tail; then both
 * lock random cores of the batch (acquire, try, timed) under pause, futex or
 * adaptive.  A queue kind that left a node referenced by a free lock would
 * lose that node with the memory, and the node pool would grow by a chunk
 * every ~1000 cores: the pool's chunk count must not change after a
 * warm-up, and every core must read tail 0 before it is freed.
 * The two threads run on two different CPUs where there are two: a `pause`
 * waiter never gives its CPU away, so on a shared CPU every hand-off of a
 * queue lock waited for the scheduler to switch threads, and beside a
 * busy process (ctest -j2) a run that takes 0.1 s took minutes.  Pinned,
 * a CPU shared with another process still slows it 40-fold, so the run
 * also ends after RUN_NS once well past the warm-up, with what it did. */
#include "tests/locks/core_test.h"
#include "prims/qnode.h"

#define BATCH 64
#define WARMUP 16u          /* batches before the pool is counted */
#define RUN_NS 20000000000ull   /* at most this long, after 4 * WARMUP batches */

static const struct core_kind *K;
static hws_wait_t policies[NCORE_POLICIES], harness;
static void *batch[BATCH];           /* written before round_ is posted */
static _Atomic uint32_t round_;      /* main: number of the batch that began */
static _Atomic uint32_t finished;    /* worker: batch it is done with */
static _Atomic int stop;

/* Pin the calling thread to the i-th CPU it may run on (no effect with fewer
 * than i + 1 of them). */
static void pin_to(unsigned i)
{
	cpu_set_t set, one;
	if (pthread_getaffinity_np(pthread_self(), sizeof set, &set))
		return;
	CPU_ZERO(&one);
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &set) && i-- == 0) {
			CPU_SET(c, &one);
			pthread_setaffinity_np(pthread_self(), sizeof one, &one);
			return;
		}
}

static unsigned pool_chunks(void)
{
	unsigned n = 0;
	for (unsigned i = 0; i < HWS_QN_MAX_CHUNKS; i++)
		n += atomic_load(&hws_qnode_chunks[i]) != NULL;
	return n;
}

static void wait_ne(_Atomic uint32_t *word, uint32_t old)
{
	while (atomic_load(word) == old)
		hws_wait_while_eq32(word, old, &harness, HWS_FOREVER);
}

static void post(_Atomic uint32_t *word, uint32_t v)
{
	atomic_store(word, v);
	hws_wake32(word, HWS_WAKE_ALL);
}

/* Acquisitions of random cores of the batch, in any mode. */
static void random_use(const hws_wait_t *w, uint64_t *seed, unsigned long *giveups)
{
	for (unsigned n = 0; n < BATCH; n++) {
		void *c = batch[test_rand(seed) % BATCH];
		core_lock_any(K, c, w, test_rand(seed), giveups);
		CHECK_EQ(K->release(c, w), 0);
	}
}

static void *worker(void *p)
{
	uint64_t seed = 0x2545f4914f6cdd1dull;
	unsigned long *giveups = p;     /* the worker's own count */
	pin_to(1);

	for (uint32_t r = 1;; r++) {
		wait_ne(&round_, r - 1);
		if (atomic_load(&stop))
			return NULL;
		const hws_wait_t *w = &policies[r % NCORE_POLICIES];
		for (unsigned j = 0; j < BATCH; j++) {
			CHECK_EQ(K->acquire(batch[j], w), 0);   /* behind the main thread */
			CHECK_EQ(K->release(batch[j], w), 0);
		}
		random_use(w, &seed, giveups);
		post(&finished, r);
	}
}

/* Until the worker's node entered c's tail (bounded: it may be descheduled). */
static int await_queued(void *c, uint32_t tail)
{
	uint64_t t0 = test_now_ns(), now = t0;

	while (K->tail(c) == tail && (now = test_now_ns()) - t0 < 2000000)
		if (now - t0 > 20000)
			sched_yield();
	return K->tail(c) != tail;
}

int main(int argc, char **argv)
{
	unsigned batches = lock_test_scale(100000) / BATCH + WARMUP, chunks = 0, queued = 0;
	uint64_t end = test_now_ns() + RUN_NS;
	unsigned long giveups = 0, worker_giveups = 0;
	uint64_t seed = 0x9e3779b97f4a7c15ull;
	size_t size;
	pthread_t t;

	K = core_kind_find(argc > 1 ? argv[1] : "clh");
	CHECK(K->queue);
	size = K->size > 40 ? K->size : 40;
	for (int p = 0; p < NCORE_POLICIES; p++)
		policies[p] = core_policy(core_policies[p]);
	harness = core_policy("adaptive");
	CHECK(pthread_create(&t, NULL, worker, &worker_giveups) == 0);
	pin_to(0);

	for (uint32_t r = 1; r <= batches; r++) {
		const hws_wait_t *w = &policies[r % NCORE_POLICIES];
		uint32_t tails[BATCH];

		for (unsigned j = 0; j < BATCH; j++) {
			CHECK(batch[j] = malloc(size));
			memset(batch[j], 0, size);          /* a fresh core */
			CHECK_EQ(K->acquire(batch[j], w), 0);
			tails[j] = K->tail(batch[j]);
		}
		post(&round_, r);
		for (unsigned j = 0; j < BATCH; j++) {
			queued += await_queued(batch[j], tails[j]);
			CHECK_EQ(K->release(batch[j], w), 0);
		}
		random_use(w, &seed, &giveups);
		wait_ne(&finished, r - 1);
		for (unsigned j = 0; j < BATCH; j++) {
			CHECK_EQ(K->tail(batch[j]), 0);
			free(batch[j]);     /* no destroy: the memory just goes away */
		}
		if (r == WARMUP)
			chunks = pool_chunks();
		if (r >= 4 * WARMUP && r < batches && test_now_ns() > end) {
			printf("%s: stopped after %u of %u batches, %.0f s\n", K->name, r, batches,
			       RUN_NS / 1e9);
			batches = r;
		}
	}
	atomic_store(&stop, 1);
	post(&round_, batches + 1);
	CHECK(pthread_join(t, NULL) == 0);
	printf("%s: %u cores (%u with a queued waiter), %lu give-ups, pool %u -> %u chunks\n",
	       K->name, batches * BATCH, queued, giveups + worker_giveups, chunks, pool_chunks());
	CHECK_EQ(pool_chunks(), chunks);
	CHECK(queued > batches * BATCH / 2);    /* the cores really were contended */
	return 0;
}

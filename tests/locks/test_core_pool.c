/* Threads that only release give their nodes back when they exit (argv[1]
 * names a queue kind).  Releasing a lock taken by another thread puts the
 * holder's node into the releasing thread's node cache; a thread that never
 * took a node itself must still return that cache to the pool at exit, or
 * every such short-lived thread strands up to a cache's worth of nodes.
 * 128 times: the main thread takes 32 fresh cores, a new thread releases
 * them all and exits.  After a warm-up the pool's chunk count must not
 * change (stranding 32 nodes a round would add a chunk every 32 rounds). */
#include "tests/locks/core_test.h"
#include "prims/qnode.h"

#define NCORES 32
#define ROUNDS 128
#define WARMUP 8

static const struct core_kind *K;
static hws_wait_t W;
static unsigned char cores[NCORES][40];

static unsigned pool_chunks(void)
{
	unsigned n = 0;
	for (unsigned i = 0; i < HWS_QN_MAX_CHUNKS; i++)
		n += atomic_load(&hws_qnode_chunks[i]) != NULL;
	return n;
}

static void *releaser(void *p)
{
	(void)p;
	for (unsigned j = 0; j < NCORES; j++)
		CHECK_EQ(K->release(cores[j], &W), 0);
	return NULL;
}

int main(int argc, char **argv)
{
	unsigned chunks = 0;

	K = core_kind_find(argc > 1 ? argv[1] : "clh");
	CHECK(K->queue);
	W = core_policy("futex");
	for (unsigned r = 1; r <= ROUNDS + WARMUP; r++) {
		pthread_t t;
		memset(cores, 0, sizeof cores);
		for (unsigned j = 0; j < NCORES; j++)
			CHECK_EQ(K->acquire(cores[j], &W), 0);
		CHECK(pthread_create(&t, NULL, releaser, NULL) == 0);
		CHECK(pthread_join(t, NULL) == 0);
		for (unsigned j = 0; j < NCORES; j++)
			core_check_free(K, cores[j], &W);
		if (r == WARMUP)
			chunks = pool_chunks();
	}
	printf("%s: %u threads released %u locks each and exited: pool %u -> %u chunks\n",
	       K->name, ROUNDS, NCORES, chunks, pool_chunks());
	CHECK_EQ(pool_chunks(), chunks);
	return 0;
}

/* fork while the queue-lock cores (mcs, clh, 1spinner) are in use.  Two
 * threads fight over one core of each kind and, to move nodes through the
 * pool's shared list all the time, each also takes and releases a chain of
 * private cores (more than a thread caches).  Meanwhile the main thread
 * forks 200 times (scaled); each child, under alarm(5), uses a new core of
 * each kind many times (its nodes come from the pool it inherited) and
 * exits.  A child that finds the pool locked by a thread that does not exist
 * in it hangs, and is killed by the alarm: every child must exit with 0. */
#include "tests/locks/core_test.h"
#include <sys/wait.h>

#define CHAIN 48            /* private cores held at once: more than a thread caches */

static const struct core_kind *Q[3];
static unsigned char shared[3][40];     /* the contended cores */
static unsigned long counts[3];         /* under the shared cores */
static hws_wait_t policies[NCORE_POLICIES];
static _Atomic int stop;

static void *user(void *p)
{
	uint64_t seed = *(uint64_t *)p;
	unsigned long giveups = 0;
	static _Thread_local unsigned char chain[3][CHAIN][40];   /* per kind */

	/* relaxed: stop only ends the loop; the join orders what follows */
	for (unsigned i = 0; !atomic_load_explicit(&stop, memory_order_relaxed); i++) {
		const hws_wait_t *w = &policies[i % NCORE_POLICIES];
		unsigned k = i % 3;

		core_lock_any(Q[k], shared[k], w, test_rand(&seed), &giveups);
		counts[k]++;
		CHECK_EQ(Q[k]->release(shared[k], w), 0);
		if (i % 16 == 0) {
			for (unsigned j = 0; j < CHAIN; j++)
				CHECK_EQ(Q[k]->acquire(chain[k][j], w), 0);
			for (unsigned j = 0; j < CHAIN; j++)
				CHECK_EQ(Q[k]->release(chain[k][j], w), 0);
		}
	}
	return NULL;
}

/* The child reports by its exit status (1 from a CHECK, 2 and 3 below). */
static void child(unsigned i)
{
	const hws_wait_t *w = &policies[i % NCORE_POLICIES];
	unsigned char fresh[3][40];

	alarm(5);
	memset(fresh, 0, sizeof fresh);
	for (unsigned k = 0; k < 3; k++) {
		for (unsigned n = 0; n < 1000; n++) {
			unsigned long giveups = 0;
			core_lock_any(Q[k], fresh[k], w, n * 2654435761u, &giveups);
			if (Q[k]->release(fresh[k], w))
				_exit(2);
		}
		if (Q[k]->tail(fresh[k]))
			_exit(3);
	}
	_exit(0);
}

int main(void)
{
	unsigned forks = lock_test_scale(200);
	uint64_t seeds[2] = { 0x9e3779b97f4a7c15ull, 0x2545f4914f6cdd1dull };
	pthread_t t[2];

	Q[0] = core_kind_find("mcs"), Q[1] = core_kind_find("clh"), Q[2] = core_kind_find("1spinner");
	for (int p = 0; p < NCORE_POLICIES; p++)
		policies[p] = core_policy(core_policies[p]);
	for (int i = 0; i < 2; i++)
		CHECK(pthread_create(&t[i], NULL, user, &seeds[i]) == 0);
	fflush(stdout);
	for (unsigned i = 0; i < forks; i++) {
		int status;
		pid_t pid = fork();
		CHECK(pid >= 0);
		if (pid == 0)
			child(i);
		CHECK_EQ(waitpid(pid, &status, 0), pid);
		if (!WIFEXITED(status) || WEXITSTATUS(status)) {
			fprintf(stderr, "child %u: %s %d\n", i,
				WIFSIGNALED(status) ? "killed by signal" : "exit status",
				WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
			return 1;
		}
	}
	atomic_store(&stop, 1);
	for (int i = 0; i < 2; i++)
		CHECK(pthread_join(t[i], NULL) == 0);
	for (unsigned k = 0; k < 3; k++)
		core_check_free(Q[k], shared[k], &policies[0]);
	printf("%u children forked while mcs/clh/1spinner were contended: all exited "
	       "(%lu/%lu/%lu acquisitions in the parent)\n", forks, counts[0], counts[1], counts[2]);
	return 0;
}

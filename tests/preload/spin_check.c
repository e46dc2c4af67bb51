/* Mutual exclusion and progress of pthread spin locks: THREADS threads each
 * take one spin lock ITERS times around a read-modify-write of a plain
 * counter with some work in between, so that an overlap of two holders loses
 * an increment.  test_shim_checks.sh runs it natively and under the shim,
 * with and without a CPU restriction (taskset), under a timeout: the counter
 * must come out exact and the run must end.
 *
 * The main thread holds the lock for the first 20 ms, so that threads start by
 * waiting (the waiting path runs, and waits long).
 *
 * usage: spin_check THREADS ITERS
 *        spin_check pshared ITERS
 *   pshared: the lock and the counter in shared memory, taken by this
 *   process (under the shim when preloaded) and by a child that re-executes
 *   this program without LD_PRELOAD, i.e. with glibc's spin lock: both must
 *   agree on the lock word.
 * Prints one line, "spin: ... counter N of N", and exits 0 when it is exact. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check_util.h"

struct shared {
	pthread_spinlock_t lock;
	long counter;           /* under lock */
};

static struct shared *sh;
static long iters;

static void work(int n)
{
	for (volatile int i = 0; i < n; i++)
		;
}

static void *hammer(void *arg)
{
	for (long i = 0; i < iters; i++) {
		pthread_spin_lock(&sh->lock);
		long v = sh->counter;
		work(20);       /* a window in which an overlapping holder loses */
		sh->counter = v + 1;
		pthread_spin_unlock(&sh->lock);
		work(20);
	}
	return arg;
}

static int report(const char *what, long got, long want)
{
	OUT("spin: %s: counter %ld of %ld\n", what, got, want);
	return got == want ? 0 : 1;
}

static int threads(int n)
{
	static struct shared s;
	pthread_t t[64];
	sh = &s;
	int rc = pthread_spin_init(&s.lock, PTHREAD_PROCESS_PRIVATE);
	if (rc) {
		OUT("pthread_spin_init: %s\n", en(rc));
		return 1;
	}
	/* held while the threads start, so that they begin by waiting */
	pthread_spin_lock(&s.lock);
	for (int i = 0; i < n; i++)
		if ((rc = pthread_create(&t[i], NULL, hammer, NULL))) {
			OUT("pthread_create: %s\n", en(rc));
			return 1;
		}
	nanosleep(&(struct timespec){ 0, 20000000 }, NULL);
	pthread_spin_unlock(&s.lock);
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	char what[64];
	snprintf(what, sizeof what, "%d threads x %ld", n, iters);
	return report(what, s.counter, n * iters);
}

/* The child of pshared: the shared memory is fd 3. */
static int pshared_child(void)
{
	sh = mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE, MAP_SHARED, 3, 0);
	if (sh == MAP_FAILED)
		return 1;
	hammer(NULL);
	return 0;
}

static int pshared(char *self)
{
	int fd = memfd_create("spin_check", 0);
	if (fd < 0 || ftruncate(fd, sizeof *sh) ||
	    (sh = mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)) == MAP_FAILED) {
		OUT("shared memory: %s\n", strerror(errno));
		return 1;
	}
	int rc = pthread_spin_init(&sh->lock, PTHREAD_PROCESS_SHARED);
	if (rc) {
		OUT("pthread_spin_init: %s\n", en(rc));
		return 1;
	}
	char n[32];
	snprintf(n, sizeof n, "%ld", iters);
	pid_t pid = fork();
	if (pid == 0) {
		unsetenv("LD_PRELOAD");
		if (dup2(fd, 3) < 0)
			_exit(1);
		execl("/proc/self/exe", self, "pshared-child", n, (char *)NULL);
		_exit(127);
	}
	if (pid < 0) {
		OUT("fork: %s\n", strerror(errno));
		return 1;
	}
	hammer(NULL);
	int st;
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st)) {
		OUT("the native child failed (status %d)\n", st);
		return 1;
	}
	return report("two processes, one native", sh->counter, 2 * iters);
}

int main(int argc, char **argv)
{
	if (argc != 3 || (iters = atol(argv[2])) <= 0) {
		fprintf(stderr, "usage: spin_check THREADS|pshared ITERS\n");
		return 2;
	}
	if (!strcmp(argv[1], "pshared"))
		return pshared(argv[0]);
	if (!strcmp(argv[1], "pshared-child"))
		return pshared_child();
	int n = atoi(argv[1]);
	if (n < 1 || n > 64) {
		fprintf(stderr, "spin_check: THREADS must be 1-64\n");
		return 2;
	}
	return threads(n);
}

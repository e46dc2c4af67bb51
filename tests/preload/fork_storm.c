/* fork while other threads are inside the synchronisation functions.
 *
 * Two workers loop on shared objects: each takes a chain of nested mutexes
 * (enough of them that queue locks go through their node pool), signals a
 * condvar, posts and takes a semaphore, takes a spin lock, reads and writes
 * a default and a writer-preferring rwlock (and OpenMP locks
 * in an OpenMP build).  Meanwhile the main thread forks FORKS times; every
 * child creates and uses NEW objects of each type under a 5 s alarm and
 * _exit(0)s.  Whatever the workers held at the moment of the fork (including
 * the shim's own internal locks) must not stop the child.  The parent counts
 * the children that did not exit 0; a hung child is killed by its alarm.  It
 * stops forking after MAX_LOST lost children, which keeps a failing run short.
 *
 * usage: fork_storm [FORKS]   (default 300)
 * Prints "forks N, children lost L" and, per lost child, how it ended;
 * exit status 1 when a child was lost. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#define CHAIN 40   /* more than a thread's cached queue nodes */
#define MAX_LOST 3

static pthread_mutex_t chain[CHAIN];
static pthread_mutex_t cm = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static sem_t sem;
static pthread_spinlock_t spin;
static pthread_rwlock_t rwd = PTHREAD_RWLOCK_INITIALIZER;
static pthread_rwlock_t rww = PTHREAD_RWLOCK_WRITER_NONRECURSIVE_INITIALIZER_NP;
#ifdef _OPENMP
static omp_lock_t olock;
static omp_nest_lock_t onest;
#endif
static atomic_int stop;
static long ops[2];

static void *worker(void *arg)
{
	long *n = arg;
	/* relaxed: a stop flag; joining orders everything else. */
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		for (int i = 0; i < CHAIN; i++)
			pthread_mutex_lock(&chain[i]);
		for (int i = CHAIN; i-- > 0;)
			pthread_mutex_unlock(&chain[i]);
		pthread_mutex_lock(&cm);
		pthread_cond_signal(&cv);
		pthread_mutex_unlock(&cm);
		sem_post(&sem);
		sem_wait(&sem);
		pthread_spin_lock(&spin);
		pthread_spin_unlock(&spin);
		pthread_rwlock_rdlock(&rwd);
		pthread_rwlock_rdlock(&rww);
		pthread_rwlock_unlock(&rww);
		pthread_rwlock_unlock(&rwd);
		pthread_rwlock_wrlock((*n & 1) ? &rwd : &rww);
		pthread_rwlock_unlock((*n & 1) ? &rwd : &rww);
#ifdef _OPENMP
		omp_set_lock(&olock);
		omp_unset_lock(&olock);
		omp_set_nest_lock(&onest);
		omp_set_nest_lock(&onest);
		omp_unset_nest_lock(&onest);
		omp_unset_nest_lock(&onest);
#endif
		(*n)++;
	}
	return NULL;
}

/* In the child: new objects of every type.  Returns the number of calls
 * that did not give the expected result (a hang is ended by the alarm). */
static int child_work(void)
{
	int bad = 0;
	pthread_mutex_t m, ms = PTHREAD_MUTEX_INITIALIZER;
	pthread_cond_t c;
	pthread_barrier_t b;
	pthread_spinlock_t s;
	sem_t se;
	struct timespec d;

	bad += pthread_mutex_init(&m, NULL) != 0;
	for (int i = 0; i < 3; i++) {
		bad += pthread_mutex_lock(&m) != 0;
		bad += pthread_mutex_lock(&ms) != 0;
		bad += pthread_mutex_unlock(&ms) != 0;
		bad += pthread_mutex_unlock(&m) != 0;
	}
	bad += pthread_cond_init(&c, NULL) != 0;
	bad += pthread_mutex_lock(&m) != 0;
	clock_gettime(CLOCK_REALTIME, &d);
	d.tv_nsec += 2000000;   /* 2 ms */
	if (d.tv_nsec >= 1000000000L)
		d.tv_sec++, d.tv_nsec -= 1000000000L;
	bad += pthread_cond_timedwait(&c, &m, &d) != ETIMEDOUT;
	bad += pthread_cond_signal(&c) != 0;
	bad += pthread_mutex_unlock(&m) != 0;
	bad += sem_init(&se, 0, 0) != 0;
	bad += sem_post(&se) != 0;
	bad += sem_wait(&se) != 0;
	bad += pthread_barrier_init(&b, NULL, 1) != 0;
	bad += pthread_barrier_wait(&b) != PTHREAD_BARRIER_SERIAL_THREAD;
	bad += pthread_spin_init(&s, PTHREAD_PROCESS_PRIVATE) != 0;
	bad += pthread_spin_lock(&s) != 0;
	bad += pthread_spin_unlock(&s) != 0;
	pthread_rwlock_t r1, r2 = PTHREAD_RWLOCK_WRITER_NONRECURSIVE_INITIALIZER_NP;
	bad += pthread_rwlock_init(&r1, NULL) != 0;
	for (int i = 0; i < 3; i++) {
		bad += pthread_rwlock_rdlock(&r1) != 0;
		bad += pthread_rwlock_rdlock(&r1) != 0;
		bad += pthread_rwlock_trywrlock(&r1) != EBUSY;
		bad += pthread_rwlock_unlock(&r1) != 0;
		bad += pthread_rwlock_unlock(&r1) != 0;
		bad += pthread_rwlock_wrlock(&r1) != 0;
		bad += pthread_rwlock_unlock(&r1) != 0;
		bad += pthread_rwlock_wrlock(&r2) != 0;
		bad += pthread_rwlock_rdlock(&r2) != EDEADLK;
		bad += pthread_rwlock_unlock(&r2) != 0;
		bad += pthread_rwlock_rdlock(&r2) != 0;
		bad += pthread_rwlock_unlock(&r2) != 0;
	}
	/* the parent's rwlocks too: whatever a worker held at the fork is
	 * gone with it, so only a try, which must not hang */
	if (pthread_rwlock_tryrdlock(&rwd) == 0)
		pthread_rwlock_unlock(&rwd);
#ifdef _OPENMP
	omp_lock_t ol;
	omp_nest_lock_t on;
	omp_init_lock(&ol);
	omp_set_lock(&ol);
	bad += omp_test_lock(&ol) != 0;
	omp_unset_lock(&ol);
	omp_init_nest_lock(&on);
	omp_set_nest_lock(&on);
	bad += omp_test_nest_lock(&on) != 2;
	omp_unset_nest_lock(&on);
	omp_unset_nest_lock(&on);
#endif
	return bad;
}

int main(int argc, char **argv)
{
	int forks = argc > 1 ? atoi(argv[1]) : 300, lost = 0;
	pthread_t t[2];

	for (int i = 0; i < CHAIN; i++)
		pthread_mutex_init(&chain[i], NULL);
	sem_init(&sem, 0, 0);
	pthread_spin_init(&spin, PTHREAD_PROCESS_PRIVATE);
#ifdef _OPENMP
	omp_init_lock(&olock);
	omp_init_nest_lock(&onest);
#endif
	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, worker, &ops[i]);
	int f;
	for (f = 0; f < forks && lost < MAX_LOST; f++) {
		pid_t p = fork();
		if (p < 0) {
			perror("fork_storm: fork");
			return 2;
		}
		if (p == 0) {
			alarm(5);
			_exit(child_work() ? 3 : 0);
		}
		int st;
		while (waitpid(p, &st, 0) < 0 && errno == EINTR)
			;
		if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
			lost++;
			if (WIFSIGNALED(st))
				printf("child %d: killed by %s%s\n", f, strsignal(WTERMSIG(st)),
				       WTERMSIG(st) == SIGALRM ? " (hung for 5 s)" : "");
			else
				printf("child %d: exit status %d%s\n", f, WEXITSTATUS(st),
				       WEXITSTATUS(st) == 3 ? " (unexpected results)" : "");
		}
	}
	atomic_store_explicit(&stop, 1, memory_order_relaxed);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	printf("forks %d, children lost %d%s (worker loops %ld, %ld)\n", f, lost,
	       lost >= MAX_LOST ? ", stopped" : "", ops[0], ops[1]);
	return lost ? 1 : 0;
}

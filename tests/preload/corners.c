/* Corners where a program can tell the shim from glibc.  Each check prints
 * its outcome (return values, errno, what happened); test_shim_checks.sh runs
 * it natively and under the shim and requires the same lines, so glibc is the
 * reference.  A check that hangs is ended by the script's timeout.
 *
 * usage: corners CHECK
 *   sem-eintr            sem_wait/sem_timedwait/sem_clockwait interrupted by a
 *                        signal handler installed with and without SA_RESTART
 *   xunlock              a default mutex locked by one thread, unlocked by
 *                        another, locked again by a third (also with the third
 *                        already blocked when the second unlocks)
 *   cancel-self          a thread blocked locking a mutex it holds is cancelled
 *                        asynchronously; its cleanup handler unlocks; the mutex
 *                        must then work
 *   cancel-self-xthread  the same, then another thread unlocks and relocks it
 *   rlimit               pthread_create under RLIMIT_AS just above the current
 *                        size, with a 32 MiB default stack
 *   startup              one uncontended mutex: the do-nothing program whose
 *                        clone calls are counted
 *   alone                a process without a second thread (glibc then locks
 *                        with plain loads and stores, and so does the shim):
 *                        lock, trylock, a stray unlock, then a mutex held
 *                        across the first pthread_create: nobody gets in until
 *                        it is released, and two threads then share it
 *   heap                 where the program's first heap block lands and how
 *                        many bytes are in use then: start-up must leave the
 *                        heap as it found it (a shifted heap moves the
 *                        program's and its libraries' blocks against cache
 *                        lines, which changed OpenMP fork/join speed)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <malloc.h>
#include <sys/resource.h>
#include <sys/single_threaded.h>
#include <time.h>
#include <unistd.h>

#include "check_util.h"

static void sleep_ms(long ms)
{
	struct timespec t = { ms / 1000, (ms % 1000) * 1000000L };
	while (nanosleep(&t, &t) && errno == EINTR)
		;
}

/* Wait until *flag is set, at most ms milliseconds; 1 if it was set. */
static int wait_flag(atomic_int *flag, long ms)
{
	for (long i = 0; i < ms; i++) {
		if (atomic_load(flag))
			return 1;
		sleep_ms(1);
	}
	return atomic_load(flag);
}

/* ---- sem-eintr ---- */
enum { SEM_WAIT, SEM_TIMEDWAIT, SEM_CLOCKWAIT };
static const char *const sem_call[] = { "sem_wait", "sem_timedwait", "sem_clockwait" };
static sem_t es;
static atomic_int handled;
static struct {
	int call, rc, err;
	atomic_int entered, done;
} sw;

static void on_signal(int sig)
{
	(void)sig;
	atomic_fetch_add(&handled, 1);
}

static void *sem_waiter(void *arg)
{
	struct timespec d;
	(void)arg;
	atomic_store(&sw.entered, 1);
	switch (sw.call) {
	case SEM_WAIT:
		sw.rc = sem_wait(&es);
		break;
	case SEM_TIMEDWAIT:   /* far enough: the signal comes long before */
		d = in_ms(CLOCK_REALTIME, 2000);
		sw.rc = sem_timedwait(&es, &d);
		break;
	default:
		d = in_ms(CLOCK_MONOTONIC, 2000);
		sw.rc = sem_clockwait(&es, CLOCK_MONOTONIC, &d);
		break;
	}
	sw.err = sw.rc ? errno : 0;
	atomic_store(&sw.done, 1);
	return NULL;
}

static void sem_eintr(void)
{
	for (int restart = 0; restart < 2; restart++)
		for (int call = SEM_WAIT; call <= SEM_CLOCKWAIT; call++) {
			struct sigaction sa;
			pthread_t t;
			memset(&sa, 0, sizeof sa);
			sa.sa_handler = on_signal;
			sa.sa_flags = restart ? SA_RESTART : 0;
			sigaction(SIGUSR1, &sa, NULL);
			sem_init(&es, 0, 0);
			sw.call = call;
			atomic_store(&sw.entered, 0);
			atomic_store(&sw.done, 0);
			atomic_store(&handled, 0);
			pthread_create(&t, NULL, sem_waiter, NULL);
			wait_flag(&sw.entered, 5000);
			sleep_ms(150);   /* surely asleep in the call by now */
			pthread_kill(t, SIGUSR1);
			int early = wait_flag(&sw.done, 500);
			if (!early)
				sem_post(&es);
			pthread_join(t, NULL);
			int v = -1;
			sem_getvalue(&es, &v);
			const char *how = restart ? "with SA_RESTART" : "without SA_RESTART";
			if (early)
				OUT("%s, handler %s: returned %d, errno %s; handler ran %d; value %d\n",
				    sem_call[call], how, sw.rc, en(sw.err), atomic_load(&handled), v);
			else
				OUT("%s, handler %s: still waiting 500 ms after the signal; after a "
				    "post: returned %d, errno %s; handler ran %d; value %d\n",
				    sem_call[call], how, sw.rc, en(sw.err), atomic_load(&handled), v);
			sem_destroy(&es);
		}
}

/* ---- xunlock ---- */
static pthread_mutex_t xm = PTHREAD_MUTEX_INITIALIZER;
static atomic_int x_about_to_lock;
static void *x_lock(void *arg) { return (void *)(long)pthread_mutex_lock(arg); }
static void *x_unlock(void *arg) { return (void *)(long)pthread_mutex_unlock(arg); }
static void *x_lock_unlock(void *arg)
{
	atomic_store(&x_about_to_lock, 1);
	int rc = pthread_mutex_lock(arg);
	return (void *)(long)(rc ? rc : pthread_mutex_unlock(arg));
}

/* Run fn(arg) on a new thread; its return value. */
static int on_thread(void *(*fn)(void *), void *arg)
{
	pthread_t t;
	void *r;
	if (pthread_create(&t, NULL, fn, arg))
		return -1;
	pthread_join(t, &r);
	return (int)(long)r;
}

static void xunlock_rounds(pthread_mutex_t *m, const char *what)
{
	int bad = 0, rounds = 200;
	for (int i = 0; i < rounds; i++) {
		bad += on_thread(x_lock, m) != 0;
		bad += on_thread(x_unlock, m) != 0;
		bad += on_thread(x_lock_unlock, m) != 0;
	}
	OUT("%s: lock on A, unlock on B, lock+unlock on C: %d rounds, %d errors\n", what,
	    rounds, bad);
	bad = 0;
	rounds = 50;
	for (int i = 0; i < rounds; i++) {
		pthread_t c;
		void *r;
		bad += on_thread(x_lock, m) != 0;
		atomic_store(&x_about_to_lock, 0);
		pthread_create(&c, NULL, x_lock_unlock, m);
		wait_flag(&x_about_to_lock, 5000);
		sleep_ms(2);   /* C is (most likely) blocked in the lock */
		bad += on_thread(x_unlock, m) != 0;
		pthread_join(c, &r);
		bad += r != NULL;
	}
	OUT("%s: same with C blocked when B unlocks: %d rounds, %d errors\n", what, rounds, bad);
	int a = pthread_mutex_trylock(m), b = pthread_mutex_unlock(m);
	OUT("%s: trylock, unlock after: %s %s\n", what, en(a), en(b));
}

static void xunlock(void)
{
	pthread_mutex_t dm;
	xunlock_rounds(&xm, "static mutex");
	pthread_mutex_init(&dm, NULL);
	xunlock_rounds(&dm, "initialised mutex");
	OUT("destroy %s\n", en(pthread_mutex_destroy(&dm)));
}

/* ---- cancel-self, cancel-self-xthread ---- */
static atomic_int cs_entered, cs_handler;
static void cs_unlock(void *arg)
{
	atomic_store(&cs_handler, 1);
	pthread_mutex_unlock(arg);
}

static void *self_deadlock(void *arg)
{
	pthread_mutex_t *m = arg;
	pthread_mutex_lock(m);
	pthread_cleanup_push(cs_unlock, m);
	pthread_setcanceltype(PTHREAD_CANCEL_ASYNCHRONOUS, NULL);
	atomic_store(&cs_entered, 1);
	pthread_mutex_lock(m);   /* a default mutex: blocks for ever */
	pthread_setcanceltype(PTHREAD_CANCEL_DEFERRED, NULL);
	pthread_cleanup_pop(0);
	return NULL;
}

static void *unlock_relock(void *arg)
{
	int a = pthread_mutex_unlock(arg), b = pthread_mutex_lock(arg);
	int c = pthread_mutex_unlock(arg);
	return (void *)(long)(a | b | c);
}

static void cancel_self(int xthread)
{
	static pthread_mutex_t sm = PTHREAD_MUTEX_INITIALIZER;
	pthread_mutex_t im;
	pthread_mutex_init(&im, NULL);
	pthread_mutex_t *mutexes[] = { &sm, &im };
	const char *names[] = { "static mutex", "initialised mutex" };
	for (int k = 0; k < 2; k++)
		for (int round = 0; round < 3; round++) {
			pthread_mutex_t *m = mutexes[k];
			pthread_t t;
			void *r;
			atomic_store(&cs_entered, 0);
			atomic_store(&cs_handler, 0);
			pthread_create(&t, NULL, self_deadlock, m);
			wait_flag(&cs_entered, 5000);
			sleep_ms(100);   /* blocked in the second lock by now */
			int c = pthread_cancel(t);
			pthread_join(t, &r);
			OUT("%s, round %d: cancel %s, thread %s, handler ran %d\n", names[k], round,
			    en(c), r == PTHREAD_CANCELED ? "cancelled" : "returned",
			    atomic_load(&cs_handler));
			int bad = 0;
			if (xthread) {
				bad += pthread_mutex_lock(m) != 0;
				bad += on_thread(unlock_relock, m) != 0;
			}
			for (int i = 0; i < 5; i++)
				bad += pthread_mutex_lock(m) != 0 || pthread_mutex_unlock(m) != 0;
			int tl = pthread_mutex_trylock(m), ul = pthread_mutex_unlock(m);
			OUT("%s, round %d: %slock/unlock x5 after: %d errors; trylock %s unlock %s\n",
			    names[k], round, xthread ? "lock, unlock+relock+unlock on another thread, " : "",
			    bad, en(tl), en(ul));
		}
	OUT("destroy %s\n", en(pthread_mutex_destroy(&im)));
}

/* ---- rlimit ---- */
#define BIG_STACK (32L << 20)   /* fits glibc's stack cache (40 MiB) */
#define HEADROOM (16L << 20)

static long vm_size_kib(void)
{
	char line[256];
	long kib = -1;
	FILE *f = fopen("/proc/self/status", "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof line, f))
		if (sscanf(line, "VmSize: %ld kB", &kib) == 1)
			break;
	fclose(f);
	return kib;
}

static int hold_fd;
static void *blocked(void *arg)
{
	char c;
	(void)arg;
	while (read(hold_fd, &c, 1) < 0 && errno == EINTR)
		;
	return NULL;
}

static void rlimit(char **argv)
{
	struct rlimit rs, as;
	size_t def = 0;
	pthread_attr_t a;
	/* The default stack size comes from RLIMIT_STACK at start-up, for every
	 * thread, including any the shim starts: raise it and start again. */
	getrlimit(RLIMIT_STACK, &rs);
	if (rs.rlim_cur != (rlim_t)BIG_STACK) {
		if (rs.rlim_max != RLIM_INFINITY && rs.rlim_max < (rlim_t)BIG_STACK) {
			OUT("rlimit: cannot raise RLIMIT_STACK to 32 MiB here (hard limit)\n");
			return;
		}
		rs.rlim_cur = BIG_STACK;
		if (setrlimit(RLIMIT_STACK, &rs) == 0)
			execv("/proc/self/exe", argv);
		OUT("rlimit: cannot raise RLIMIT_STACK and start again: %s\n", en(errno));
		return;
	}
	pthread_getattr_default_np(&a);
	pthread_attr_getstacksize(&a, &def);
	pthread_attr_destroy(&a);
	OUT("rlimit: default stack %ld MiB\n", (long)(def >> 20));

	int fds[2];
	pthread_t t[8];
	int n = 0, first = -1, err = 0;
	if (pipe(fds)) {
		OUT("rlimit: pipe failed\n");
		return;
	}
	hold_fd = fds[0];
	long kib = vm_size_kib();
	getrlimit(RLIMIT_AS, &as);
	struct rlimit lim = { (rlim_t)(kib * 1024L + HEADROOM), as.rlim_max };
	if (kib < 0 || setrlimit(RLIMIT_AS, &lim)) {
		OUT("rlimit: cannot set RLIMIT_AS\n");
		return;
	}
	while (n < 8) {
		int rc = pthread_create(&t[n], NULL, blocked, NULL);
		if (first < 0)
			first = rc;
		if (rc) {
			err = rc;
			break;
		}
		n++;
	}
	setrlimit(RLIMIT_AS, &as);
	close(fds[1]);   /* the blocked threads read EOF and end */
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	close(fds[0]);
	OUT("rlimit: address space limited to the current size + 16 MiB: first create %s, "
	    "%d created, first failure %s\n", en(first), n, err ? en(err) : "none (stopped at 8)");
}

/* ---- startup ---- */
static void startup(void)
{
	static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
	int a = pthread_mutex_lock(&m), b = pthread_mutex_unlock(&m);
	OUT("startup: lock %s unlock %s\n", en(a), en(b));
}

/* ---- alone ---- */
#define ALONE_ADDS 200000
static pthread_mutex_t am = PTHREAD_MUTEX_INITIALIZER;
static long alone_count;   /* under am */
static void *alone_adder(void *arg)
{
	(void)arg;
	for (int i = 0; i < ALONE_ADDS; i++) {
		pthread_mutex_lock(&am);
		alone_count++;
		pthread_mutex_unlock(&am);
	}
	return NULL;
}

static void alone(void)
{
	int single = __libc_single_threaded, bad = 0;
	for (int i = 0; i < 100000; i++)
		bad += pthread_mutex_lock(&am) != 0 || pthread_mutex_unlock(&am) != 0;
	int a = pthread_mutex_lock(&am), b = pthread_mutex_trylock(&am);
	int c = pthread_mutex_unlock(&am), d = pthread_mutex_unlock(&am);
	int e = pthread_mutex_trylock(&am), f = pthread_mutex_unlock(&am);
	OUT("alone: one thread: %d errors in 100000 pairs; lock %s, trylock %s, unlock %s, "
	    "unlock again %s, trylock %s, unlock %s\n", bad, en(a), en(b), en(c), en(d), en(e),
	    en(f));
	/* Held since the process had one thread: the adders wait for it. */
	pthread_mutex_lock(&am);
	pthread_t t[2];
	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, alone_adder, NULL);
	sleep_ms(20);
	long while_held = alone_count;
	pthread_mutex_unlock(&am);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	OUT("alone: one thread at first: %s; added while held across pthread_create: %ld; "
	    "then %ld of %d\n", single ? "yes" : "no", while_held, alone_count, 2 * ALONE_ADDS);
}

/* ---- heap ---- */
static void heap(void)
{
	/* Measured before this program's first output, which allocates stdout's
	 * buffer.  The main arena grows with brk from the heap's start, so the
	 * block's offset from it is the same in every run whatever the address
	 * randomization. */
	char *p = malloc(24);
	struct mallinfo2 mi = mallinfo2();
	char *top = sbrk(0);
	long at = p && mi.arena ? (long)(p - (top - mi.arena)) : -1;
	OUT("heap: first block at byte %ld of the heap, %zu bytes in use\n", at, mi.uordblks);
	free(p);
}

int main(int argc, char **argv)
{
	const char *check = argc > 1 ? argv[1] : "";
	if (!strcmp(check, "sem-eintr"))
		sem_eintr();
	else if (!strcmp(check, "xunlock"))
		xunlock();
	else if (!strcmp(check, "cancel-self"))
		cancel_self(0);
	else if (!strcmp(check, "cancel-self-xthread"))
		cancel_self(1);
	else if (!strcmp(check, "rlimit"))
		rlimit(argv);
	else if (!strcmp(check, "startup"))
		startup();
	else if (!strcmp(check, "heap"))
		heap();
	else if (!strcmp(check, "alone"))
		alone();
	else {
		fprintf(stderr, "usage: corners sem-eintr|xunlock|cancel-self|cancel-self-xthread|"
				"rlimit|startup|heap|alone\n");
		return 2;
	}
	return 0;
}

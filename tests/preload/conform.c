/* POSIX conformance of the interposed functions.  Prints one line per case
 * with return values and errno; test_preload.sh runs it without and with the
 * shim and requires identical output, so glibc is the reference. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check_util.h"

#define N 4

/* ---- before main ---- */
static pthread_mutex_t early = PTHREAD_MUTEX_INITIALIZER;
static int early_rc = -1;
__attribute__((constructor)) static void before_main(void)
{
	early_rc = pthread_mutex_lock(&early) | pthread_mutex_unlock(&early);
}

/* ---- mutex ---- */
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static long counter;
static _Atomic long errno_changed;   /* glibc's lock and unlock leave errno alone */
static void *count_up(void *arg)
{
	for (int i = 0; i < 20000; i++) {
		errno = 12345;
		pthread_mutex_lock(&m);
		counter++;
		errno_changed += errno != 12345;
		errno = 12345;
		pthread_mutex_unlock(&m);
		errno_changed += errno != 12345;
	}
	return arg;
}

static void *try_other(void *arg)
{
	return (void *)(long)pthread_mutex_trylock(arg);
}

static void mutexes(void)
{
	pthread_t t[N];
	void *r;
	OUT("before main: lock+unlock %d\n", early_rc);
	for (int i = 0; i < N; i++)
		pthread_create(&t[i], NULL, count_up, NULL);
	for (int i = 0; i < N; i++)
		pthread_join(t[i], NULL);
	OUT("mutex counter %ld, errno changed %ld times\n", counter, (long)errno_changed);

	pthread_mutex_t z;
	memset(&z, 0, sizeof z);   /* zeroed memory is a default mutex */
	OUT("zeroed mutex lock %s\n", en(pthread_mutex_lock(&z)));
	OUT("trylock held (same thread) %s\n", en(pthread_mutex_trylock(&z)));
	pthread_create(&t[0], NULL, try_other, &z);
	pthread_join(t[0], &r);
	OUT("trylock held (other thread) %s\n", en((int)(long)r));
	struct timespec d = in_ms(CLOCK_REALTIME, 50);
	OUT("timedlock held %s\n", en(pthread_mutex_timedlock(&z, &d)));
	d = in_ms(CLOCK_MONOTONIC, 30);
	OUT("clocklock monotonic held %s\n", en(pthread_mutex_clocklock(&z, CLOCK_MONOTONIC, &d)));
	d.tv_nsec = 2000000000L;
	OUT("timedlock bad timespec held %s\n", en(pthread_mutex_timedlock(&z, &d)));
	OUT("destroy held %s\n", en(pthread_mutex_destroy(&z)));
	OUT("unlock %s\n", en(pthread_mutex_unlock(&z)));
	OUT("timedlock free with bad timespec %s\n", en(pthread_mutex_timedlock(&z, &d)));
	OUT("unlock %s\n", en(pthread_mutex_unlock(&z)));
	OUT("destroy %s\n", en(pthread_mutex_destroy(&z)));
	OUT("init after destroy %s\n", en(pthread_mutex_init(&z, NULL)));
	int l1 = pthread_mutex_lock(&z), l2 = pthread_mutex_unlock(&z);
	OUT("lock/unlock %s %s\n", en(l1), en(l2));

	pthread_mutexattr_t a;
	pthread_mutex_t rec, ec;
	pthread_mutexattr_init(&a);
	pthread_mutexattr_settype(&a, PTHREAD_MUTEX_RECURSIVE);
	pthread_mutex_init(&rec, &a);
	int r1 = pthread_mutex_lock(&rec), r2 = pthread_mutex_lock(&rec);
	OUT("recursive lock twice %s %s\n", en(r1), en(r2));
	pthread_create(&t[0], NULL, try_other, &rec);
	pthread_join(t[0], &r);
	OUT("recursive trylock other %s\n", en((int)(long)r));
	r1 = pthread_mutex_unlock(&rec);
	r2 = pthread_mutex_unlock(&rec);
	OUT("recursive unlock twice %s %s\n", en(r1), en(r2));
	pthread_mutexattr_settype(&a, PTHREAD_MUTEX_ERRORCHECK);
	pthread_mutex_init(&ec, &a);
	OUT("errorcheck unlock unowned %s\n", en(pthread_mutex_unlock(&ec)));
	r1 = pthread_mutex_lock(&ec);
	r2 = pthread_mutex_lock(&ec);
	OUT("errorcheck lock, relock %s %s\n", en(r1), en(r2));
	pthread_mutex_unlock(&ec);
	pthread_mutex_destroy(&ec);
	pthread_mutex_destroy(&rec);
	pthread_mutexattr_destroy(&a);
}

/* ---- condition variables ---- */
static pthread_cond_t c = PTHREAD_COND_INITIALIZER;
static int go, woken;
static void *cond_waiter(void *arg)
{
	pthread_mutex_t *mx = arg;
	pthread_mutex_lock(mx);
	woken += 0;
	while (!go)
		pthread_cond_wait(&c, mx);
	woken++;
	pthread_mutex_unlock(mx);
	return NULL;
}

static void conds(pthread_mutex_t *mx, const char *what)
{
	pthread_t t[N];
	go = woken = 0;
	for (int i = 0; i < N; i++)
		pthread_create(&t[i], NULL, cond_waiter, mx);
	usleep(20000);
	pthread_mutex_lock(mx);
	go = 1;
	pthread_cond_broadcast(&c);
	pthread_mutex_unlock(mx);
	for (int i = 0; i < N; i++)
		pthread_join(t[i], NULL);
	OUT("%s: broadcast woke %d of %d\n", what, woken, N);

	pthread_mutex_lock(mx);
	struct timespec d = in_ms(CLOCK_REALTIME, 30);
	OUT("%s: timedwait expires %s\n", what, en(pthread_cond_timedwait(&c, mx, &d)));
	d = in_ms(CLOCK_MONOTONIC, 30);
	OUT("%s: clockwait monotonic expires %s\n", what,
	    en(pthread_cond_clockwait(&c, mx, CLOCK_MONOTONIC, &d)));
	OUT("%s: clockwait bad clock %s\n", what,
	    en(pthread_cond_clockwait(&c, mx, CLOCK_PROCESS_CPUTIME_ID, &d)));
	d.tv_nsec = -1;
	OUT("%s: timedwait bad timespec %s\n", what, en(pthread_cond_timedwait(&c, mx, &d)));
	OUT("%s: mutex still held after timeouts: trylock %s\n", what,
	    en(pthread_mutex_trylock(mx)));
	pthread_mutex_unlock(mx);
}

static void condvars(void)
{
	pthread_mutex_t rec;
	pthread_mutexattr_t a;
	conds(&m, "default mutex");
	pthread_mutexattr_init(&a);
	pthread_mutexattr_settype(&a, PTHREAD_MUTEX_RECURSIVE);
	pthread_mutex_init(&rec, &a);
	conds(&rec, "recursive mutex");
	pthread_mutexattr_destroy(&a);

	pthread_condattr_t ca;
	pthread_cond_t mc;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&mc, &ca);
	pthread_mutex_lock(&m);
	struct timespec d = in_ms(CLOCK_MONOTONIC, 30);
	OUT("monotonic cond: timedwait expires %s\n", en(pthread_cond_timedwait(&mc, &m, &d)));
	pthread_mutex_unlock(&m);
	int s1 = pthread_cond_signal(&mc), s2 = pthread_cond_broadcast(&mc);
	OUT("signal/broadcast without waiters %s %s\n", en(s1), en(s2));
	OUT("cond destroy %s\n", en(pthread_cond_destroy(&mc)));

	pthread_condattr_setpshared(&ca, PTHREAD_PROCESS_SHARED);
	pthread_cond_init(&mc, &ca);
	pthread_mutex_lock(&m);
	d = in_ms(CLOCK_MONOTONIC, 30);
	OUT("pshared cond + default mutex: timedwait expires %s\n",
	    en(pthread_cond_timedwait(&mc, &m, &d)));
	OUT("pshared cond: mutex held after: trylock %s\n", en(pthread_mutex_trylock(&m)));
	pthread_mutex_unlock(&m);
	pthread_cond_destroy(&mc);
	pthread_condattr_destroy(&ca);
}

/* ---- barriers ---- */
static pthread_barrier_t bar;
static atomic_int serial[8];
static void *bar_thread(void *arg)
{
	for (int r = 0; r < 8; r++)
		if (pthread_barrier_wait(&bar) == PTHREAD_BARRIER_SERIAL_THREAD)
			atomic_fetch_add(&serial[r], 1);
	return arg;
}

static void barriers(void)
{
	pthread_t t[N];
	OUT("barrier init count 0 %s\n", en(pthread_barrier_init(&bar, NULL, 0)));
	pthread_barrier_init(&bar, NULL, N);
	for (int i = 0; i < N; i++)
		pthread_create(&t[i], NULL, bar_thread, NULL);
	for (int i = 0; i < N; i++)
		pthread_join(t[i], NULL);
	int ok = 1;
	for (int r = 0; r < 8; r++)
		ok &= serial[r] == 1;
	OUT("barrier: one serial thread in each of 8 rounds: %s\n", ok ? "yes" : "no");
	OUT("barrier destroy %s\n", en(pthread_barrier_destroy(&bar)));
	pthread_barrier_init(&bar, NULL, 1);
	OUT("barrier of 1: %s\n", pthread_barrier_wait(&bar) == PTHREAD_BARRIER_SERIAL_THREAD ?
				      "serial" : "not serial");
	pthread_barrier_destroy(&bar);
}

/* ---- semaphores ---- */
static sem_t s;
static long consumed;
static void *consumer(void *arg)
{
	for (int i = 0; i < 1000; i++) {
		sem_wait(&s);
		__atomic_fetch_add(&consumed, 1, __ATOMIC_RELAXED);
	}
	return arg;
}

static int rcerr(int rc) { return rc == 0 ? 0 : errno; }

static void semaphores(void)
{
	int v;
	pthread_t t[2];
	OUT("sem_init 2: %s\n", en(rcerr(sem_init(&s, 0, 2))));
	int t1 = rcerr(sem_trywait(&s)), t2 = rcerr(sem_trywait(&s));
	int t3 = rcerr(sem_trywait(&s));
	OUT("trywait x3: %s %s %s\n", en(t1), en(t2), en(t3));
	sem_getvalue(&s, &v);
	OUT("value %d\n", v);
	struct timespec d = in_ms(CLOCK_REALTIME, 30);
	OUT("timedwait on 0 expires: %s\n", en(rcerr(sem_timedwait(&s, &d))));
	d = in_ms(CLOCK_MONOTONIC, 30);
	OUT("clockwait on 0 expires: %s\n", en(rcerr(sem_clockwait(&s, CLOCK_MONOTONIC, &d))));
	d.tv_nsec = 1000000000L;
	OUT("timedwait bad timespec: %s\n", en(rcerr(sem_timedwait(&s, &d))));
	sem_post(&s);
	OUT("timedwait bad timespec, token there: %s\n", en(rcerr(sem_timedwait(&s, &d))));
	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, consumer, NULL);
	for (int i = 0; i < 2000; i++)
		sem_post(&s);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	sem_getvalue(&s, &v);
	OUT("2000 posts, 2000 waits: consumed %ld, value %d\n", consumed, v);
	OUT("sem_destroy %s\n", en(rcerr(sem_destroy(&s))));
	OUT("sem_init too large: %s\n", en(rcerr(sem_init(&s, 0, (unsigned)-1))));

	sem_t ps;
	t1 = rcerr(sem_init(&ps, 1, 0));
	t2 = rcerr(sem_post(&ps));
	t3 = rcerr(sem_wait(&ps));
	OUT("pshared sem_init: %s post %s wait %s\n", en(t1), en(t2), en(t3));
	sem_destroy(&ps);

	char name[64];
	snprintf(name, sizeof name, "/hwsync-conform-%d", (int)getpid());
	sem_t *ns = sem_open(name, O_CREAT | O_EXCL, 0600, 1);
	if (ns == SEM_FAILED) {
		OUT("named: sem_open unavailable here\n");
		return;
	}
	sem_unlink(name);
	t1 = rcerr(sem_wait(ns));
	t2 = rcerr(sem_trywait(ns));
	t3 = rcerr(sem_post(ns));
	OUT("named: wait %s trywait %s post %s\n", en(t1), en(t2), en(t3));
	sem_getvalue(ns, &v);
	OUT("named: value %d\n", v);
	sem_close(ns);
}

/* ---- spin locks ---- */
static pthread_spinlock_t sl;
static long spun;
static void *spin_up(void *arg)
{
	for (int i = 0; i < 20000; i++) {
		pthread_spin_lock(&sl);
		spun++;
		pthread_spin_unlock(&sl);
	}
	return arg;
}

static void spins(void)
{
	pthread_t t[N];
	pthread_spin_init(&sl, PTHREAD_PROCESS_PRIVATE);
	for (int i = 0; i < N; i++)
		pthread_create(&t[i], NULL, spin_up, NULL);
	for (int i = 0; i < N; i++)
		pthread_join(t[i], NULL);
	OUT("spin counter %ld\n", spun);
	pthread_spin_lock(&sl);
	OUT("spin trylock held %s\n", en(pthread_spin_trylock(&sl)));
	pthread_spin_unlock(&sl);
	OUT("spin trylock free %s\n", en(pthread_spin_trylock(&sl)));
	pthread_spin_unlock(&sl);
	pthread_spin_destroy(&sl);
}

/* ---- sched_yield (the shim notes the call): held across a mutex ---- */
static pthread_mutex_t ym = PTHREAD_MUTEX_INITIALIZER;
static long yielded;
static _Atomic int yield_failed;
static void *yield_holding(void *arg)
{
	for (int i = 0; i < 2000; i++) {
		pthread_mutex_lock(&ym);
		errno = 0;
		if (sched_yield() != 0 || errno != 0)
			atomic_store(&yield_failed, 1);
		yielded++;
		pthread_mutex_unlock(&ym);
	}
	return arg;
}

static void yields(void)
{
	pthread_t t[N];
	for (int i = 0; i < N; i++)
		pthread_create(&t[i], NULL, yield_holding, NULL);
	for (int i = 0; i < N; i++)
		pthread_join(t[i], NULL);
	OUT("yield counter %ld, failed %d\n", yielded, atomic_load(&yield_failed));
	errno = 0;
	int rc = sched_yield();
	OUT("yield alone %d errno %s\n", rc, en(errno));
}

/* ---- signals: no EINTR out of calls that must not return it ---- */
static void on_usr1(int sig) { (void)sig; }
static int sig_go, bad_rc;
static pthread_barrier_t sbar;
static void *sig_waiter(void *arg)
{
	int rc;
	(void)arg;
	pthread_mutex_lock(&m);
	while (!sig_go)
		if ((rc = pthread_cond_wait(&c, &m)))
			bad_rc = rc;
	pthread_mutex_unlock(&m);
	if ((rc = pthread_mutex_lock(&m)))   /* blocks while main holds m */
		bad_rc = rc;
	pthread_mutex_unlock(&m);
	rc = pthread_barrier_wait(&sbar);
	if (rc && rc != PTHREAD_BARRIER_SERIAL_THREAD)
		bad_rc = rc;
	return NULL;
}

static void signals(void)
{
	struct sigaction sa;
	pthread_t t;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_usr1;   /* no SA_RESTART */
	sigaction(SIGUSR1, &sa, NULL);
	pthread_barrier_init(&sbar, NULL, 2);
	pthread_create(&t, NULL, sig_waiter, NULL);
	for (int i = 0; i < 20; i++) {
		usleep(2000);
		pthread_kill(t, SIGUSR1);
	}
	pthread_mutex_lock(&m);
	sig_go = 1;
	pthread_cond_broadcast(&c);
	for (int i = 0; i < 20; i++) {   /* the waiter now blocks in mutex_lock */
		usleep(2000);
		pthread_kill(t, SIGUSR1);
	}
	pthread_mutex_unlock(&m);
	for (int i = 0; i < 10; i++) {
		usleep(2000);
		pthread_kill(t, SIGUSR1);
	}
	pthread_barrier_wait(&sbar);
	pthread_join(t, NULL);
	pthread_barrier_destroy(&sbar);
	OUT("signals during cond wait, mutex lock, barrier: errors %s\n", en(bad_rc));
}

/* ---- fork ---- */
static void forks(void)
{
	pthread_mutex_t held = PTHREAD_MUTEX_INITIALIZER;
	pthread_mutex_lock(&m);
	pthread_mutex_unlock(&m);
	pthread_mutex_lock(&held);
	pid_t p = fork();
	if (p == 0) {
		int rc = pthread_mutex_unlock(&held) | pthread_mutex_lock(&held) |
			 pthread_mutex_unlock(&held) | pthread_mutex_lock(&m) |
			 pthread_mutex_unlock(&m);
		sem_t fs;
		rc |= sem_init(&fs, 0, 1) | sem_wait(&fs);
		_exit(rc ? 1 : 0);
	}
	int st = -1;
	waitpid(p, &st, 0);
	pthread_mutex_unlock(&held);
	OUT("fork: child locks what it inherited: exit %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
}

/* ---- cancellation ---- */
static pthread_mutex_t cm = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cc = PTHREAD_COND_INITIALIZER;
static int handler_saw = -1;
static void unlock_cm(void *arg)
{
	(void)arg;
	handler_saw = pthread_mutex_trylock(&cm);   /* EBUSY: we hold it again */
	pthread_mutex_unlock(&cm);
}

static void *cancel_cond(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&cm);
	pthread_cleanup_push(unlock_cm, NULL);
	for (;;)
		pthread_cond_wait(&cc, &cm);
	pthread_cleanup_pop(1);
	return NULL;
}

static sem_t cs;
static void *cancel_sem(void *arg)
{
	(void)arg;
	for (;;)
		sem_wait(&cs);
	return NULL;
}

static int lock_paths_ran;
static void *cancel_pending(void *arg)
{
	int old;
	(void)arg;
	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &old);
	while (!__atomic_load_n(&go, __ATOMIC_ACQUIRE))
		usleep(1000);
	pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, &old);
	pthread_mutex_lock(&cm);       /* not cancellation points */
	pthread_mutex_unlock(&cm);
	pthread_spin_lock(&sl);
	pthread_spin_unlock(&sl);
	lock_paths_ran = 1;
	sem_wait(&cs);                 /* a token is there: still cancelled */
	lock_paths_ran = 2;
	return NULL;
}

static void cancels(void)
{
	pthread_t t;
	void *r;
	int v;
	pthread_create(&t, NULL, cancel_cond, NULL);
	usleep(20000);
	pthread_cancel(t);
	pthread_join(t, &r);
	OUT("cancel cond waiter: %s, handler's trylock %s, mutex free after: %s\n",
	    r == PTHREAD_CANCELED ? "cancelled" : "not cancelled", en(handler_saw),
	    en(pthread_mutex_trylock(&cm)));
	pthread_mutex_unlock(&cm);

	sem_init(&cs, 0, 0);
	pthread_create(&t, NULL, cancel_sem, NULL);
	usleep(20000);
	pthread_cancel(t);
	pthread_join(t, &r);
	sem_getvalue(&cs, &v);
	OUT("cancel sem waiter: %s, value %d\n", r == PTHREAD_CANCELED ? "cancelled" : "not", v);

	go = 0;
	sem_post(&cs);
	pthread_spin_init(&sl, 0);
	pthread_create(&t, NULL, cancel_pending, NULL);
	pthread_cancel(t);
	__atomic_store_n(&go, 1, __ATOMIC_RELEASE);
	pthread_join(t, &r);
	sem_getvalue(&cs, &v);
	OUT("pending cancel: %s, lock paths ran %d, sem value %d\n",
	    r == PTHREAD_CANCELED ? "cancelled" : "not", lock_paths_ran, v);
	sem_destroy(&cs);
}

int main(void)
{
	mutexes();
	condvars();
	barriers();
	semaphores();
	spins();
	yields();
	signals();
	forks();
	cancels();
	return 0;
}

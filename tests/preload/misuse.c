/* What a program sees when it misuses a synchronization object: a table of
 * short sequences, each run in a forked child.  test_misuse.sh runs this
 * program natively and under the shim (every lock kind, futex and adaptive)
 * and compares the outputs sequence by sequence, so glibc is the reference.
 *
 * For each sequence the child prints the return value of every call (errno
 * names), then whether the object still works: the misusing thread and
 * another thread each lock, trylock and unlock it (post, trywait and wait
 * for a semaphore; wait, signal and a hand-off for a condvar; a round of
 * waits for a barrier), and another, new object of the same kind the same.
 * The parent prints how the child ended: "exit N", "signal N" or "timeout"
 * (killed after WATCHDOG_S seconds; a hang, since no sequence takes more
 * than a fraction of a second).
 *
 * usage: misuse [native|shim] [SEQUENCE...]
 *   shim: first check that pthread_mutex_lock is the shim's (exit 2 if not)
 *   no SEQUENCE: all of them, in table order; "list" prints their names
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
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
#ifdef HAVE_OMP
#include <omp.h>
#endif

#include "check_util.h"

#define WATCHDOG_S 3

static void sleep_ms(long ms)
{
	struct timespec t = { ms / 1000, (ms % 1000) * 1000000L };
	while (nanosleep(&t, &t) && errno == EINTR)
		;
}

/* Run fn(arg) on another thread and wait for it. */
static void on_thread(void *(*fn)(void *), void *arg)
{
	pthread_t t;
	int rc = pthread_create(&t, NULL, fn, arg);
	if (rc) {
		OUT("pthread_create: %s\n", en(rc));
		exit(3);
	}
	pthread_join(t, NULL);
}

/* ---- does it still work? ---- */

/* A lock-like object: lock, trylock, unlock returning 0 or an errno. */
struct lockish {
	const char *what, *who;
	void *obj;
	int (*lock)(void *);
	int (*trylock)(void *);
	int (*unlock)(void *);
};

static int m_lock(void *m) { return pthread_mutex_lock(m); }
static int m_trylock(void *m) { return pthread_mutex_trylock(m); }
static int m_unlock(void *m) { return pthread_mutex_unlock(m); }
static int s_lock(void *s) { return pthread_spin_lock(s); }
static int s_trylock(void *s) { return pthread_spin_trylock(s); }
static int s_unlock(void *s) { return pthread_spin_unlock(s); }

/* trylock (and unlock if it succeeded), lock, trylock (and unlock if it
 * succeeded: a recursive mutex), unlock, trylock, unlock: one line. */
static void *lockish_round(void *arg)
{
	const struct lockish *l = arg;
	char line[200];
	int n = 0, rc;

	rc = l->trylock(l->obj);
	n += snprintf(line + n, sizeof line - (size_t)n, " trylock %s", en(rc));
	if (rc == 0)
		n += snprintf(line + n, sizeof line - (size_t)n, ", unlock %s",
			      en(l->unlock(l->obj)));
	rc = l->lock(l->obj);
	n += snprintf(line + n, sizeof line - (size_t)n, ", lock %s", en(rc));
	if (rc)
		goto out;
	rc = l->trylock(l->obj);
	n += snprintf(line + n, sizeof line - (size_t)n, ", trylock %s", en(rc));
	if (rc == 0)
		n += snprintf(line + n, sizeof line - (size_t)n, ", unlock %s",
			      en(l->unlock(l->obj)));
	n += snprintf(line + n, sizeof line - (size_t)n, ", unlock %s", en(l->unlock(l->obj)));
	rc = l->trylock(l->obj);
	n += snprintf(line + n, sizeof line - (size_t)n, ", trylock %s", en(rc));
	if (rc == 0)
		n += snprintf(line + n, sizeof line - (size_t)n, ", unlock %s",
			      en(l->unlock(l->obj)));
out:
	OUT("  works? %s, %s:%s\n", l->what, l->who, line);
	return NULL;
}

/* The object on this thread and on another, then a new object of the kind. */
static void lockish_works(struct lockish l, void *fresh)
{
	struct lockish other = l;
	l.who = "this thread";
	other.who = "another thread";
	lockish_round(&l);
	on_thread(lockish_round, &other);
	l.obj = other.obj = fresh;
	l.what = other.what = "a new one";
	lockish_round(&l);
	on_thread(lockish_round, &other);
}

static void mutex_works(pthread_mutex_t *m, const pthread_mutexattr_t *attr, const char *what)
{
	static pthread_mutex_t fresh;
	pthread_mutex_init(&fresh, attr);
	lockish_works((struct lockish){ what, NULL, m, m_lock, m_trylock, m_unlock }, &fresh);
}

static void spin_works(pthread_spinlock_t *s)
{
	static pthread_spinlock_t fresh;
	pthread_spin_init(&fresh, PTHREAD_PROCESS_PRIVATE);
	lockish_works((struct lockish){ "the spin lock", NULL, (void *)s, s_lock, s_trylock,
					s_unlock }, (void *)&fresh);
}

#ifdef HAVE_OMP
static int o_lock(void *l) { omp_set_lock(l); return 0; }
static int o_trylock(void *l) { return omp_test_lock(l) ? 0 : EBUSY; }
static int o_unlock(void *l) { omp_unset_lock(l); return 0; }

static void omp_works(omp_lock_t *l)
{
	static omp_lock_t fresh;
	omp_init_lock(&fresh);
	lockish_works((struct lockish){ "the OpenMP lock", NULL, l, o_lock, o_trylock, o_unlock },
		      &fresh);
}
#endif

static const char *sem_errno(int rc)
{
	return rc ? en(errno) : "0";
}

static void *sem_round(void *arg)
{
	sem_t *s = arg;
	struct timespec t = in_ms(CLOCK_REALTIME, 10);
	const char *r[6];
	int v = -1;
	r[0] = sem_errno(sem_post(s));
	r[1] = sem_errno(sem_trywait(s));
	r[2] = sem_errno(sem_trywait(s));
	r[3] = sem_errno(sem_post(s));
	r[4] = sem_errno(sem_timedwait(s, &t));
	sem_getvalue(s, &v);
	OUT("  works? post %s, trywait %s, trywait %s, post %s, timedwait %s, value %d\n", r[0],
	    r[1], r[2], r[3], r[4], v);
	return NULL;
}

static void sem_works(sem_t *s)
{
	static sem_t fresh;
	sem_round(s);
	on_thread(sem_round, s);
	sem_init(&fresh, 0, 0);
	OUT("  a new one:\n");
	sem_round(&fresh);
	on_thread(sem_round, &fresh);
}

struct cv {
	pthread_cond_t *c;
	pthread_mutex_t *m;
	int pred, rc, unlock_rc;
};

static void *cond_waiter(void *arg)
{
	struct cv *x = arg;
	struct timespec t = in_ms(CLOCK_REALTIME, 1000);
	int rc = pthread_mutex_lock(x->m);
	while (!rc && !x->pred)
		rc = pthread_cond_timedwait(x->c, x->m, &t);
	x->rc = rc;
	x->unlock_rc = rc ? -1 : pthread_mutex_unlock(x->m);
	return NULL;
}

static void cond_round(pthread_cond_t *c, pthread_mutex_t *m)
{
	struct timespec t = in_ms(CLOCK_REALTIME, 10);
	const char *r[5] = { "-", "-", "-", "-", "-" };
	int rc = pthread_mutex_lock(m);
	r[0] = en(rc);
	if (!rc) {
		r[1] = en(pthread_cond_timedwait(c, m, &t));
		r[2] = en(pthread_mutex_unlock(m));
	}
	r[3] = en(pthread_cond_signal(c));
	r[4] = en(pthread_cond_broadcast(c));
	OUT("  works? lock %s, timedwait %s, unlock %s, signal %s, broadcast %s\n", r[0], r[1],
	    r[2], r[3], r[4]);
	/* a hand-off: another thread waits, this one signals (usually the
	 * waiter sleeps by then; either way it ends) */
	struct cv x = { c, m, 0, -1, -1 };
	pthread_t t1;
	if (pthread_create(&t1, NULL, cond_waiter, &x))
		return;
	sleep_ms(20);
	rc = pthread_mutex_lock(m);
	x.pred = 1;
	r[0] = en(rc);
	r[1] = en(rc ? -1 : pthread_cond_signal(c));
	r[2] = en(rc ? -1 : pthread_mutex_unlock(m));
	pthread_join(t1, NULL);
	OUT("  works? lock %s, signal %s, unlock %s; another thread waited: %s, unlock %s\n",
	    r[0], r[1], r[2], en(x.rc), en(x.unlock_rc));
}

static void cond_works(pthread_cond_t *c, pthread_mutex_t *m)
{
	static pthread_cond_t fresh;
	static pthread_mutex_t fm;
	cond_round(c, m);
	pthread_cond_init(&fresh, NULL);
	pthread_mutex_init(&fm, NULL);
	OUT("  a new one:\n");
	cond_round(&fresh, &fm);
}

static void *barrier_wait_one(void *arg)
{
	return (void *)(long)pthread_barrier_wait(arg);
}

static void barrier_works(pthread_barrier_t *b)
{
	pthread_t t;
	void *other;
	if (pthread_create(&t, NULL, barrier_wait_one, b))
		return;
	int mine = pthread_barrier_wait(b);
	pthread_join(t, &other);
	int serial = (mine == PTHREAD_BARRIER_SERIAL_THREAD) +
		     ((long)other == PTHREAD_BARRIER_SERIAL_THREAD);
	int rest = mine == PTHREAD_BARRIER_SERIAL_THREAD ? (int)(long)other : mine;
	OUT("  works? two waits: %d serial, the other %s\n", serial, en(rest));
}

/* ---- the sequences ---- */
static pthread_mutex_t m;
static pthread_cond_t c;

static void *lock_unlock_m(void *unused)
{
	(void)unused;
	int rc = pthread_mutex_lock(&m);
	OUT("another thread: lock %s", en(rc));
	OUT(", unlock %s\n", en(rc ? -1 : pthread_mutex_unlock(&m)));
	return NULL;
}

static void *unlock_m(void *unused)
{
	(void)unused;
	OUT("another thread: unlock %s\n", en(pthread_mutex_unlock(&m)));
	return NULL;
}

static void *trylock_m(void *unused)
{
	(void)unused;
	int rc = pthread_mutex_trylock(&m);
	OUT("another thread: trylock %s\n", en(rc));
	if (rc == 0)
		pthread_mutex_unlock(&m);
	return NULL;
}

static void seq_init_unlock(void)
{
	static pthread_mutex_t free_one = PTHREAD_MUTEX_INITIALIZER;
	OUT("init %s\n", en(pthread_mutex_init(&m, NULL)));
	OUT("unlock %s\n", en(pthread_mutex_unlock(&m)));
	int rc = pthread_mutex_trylock(&free_one);
	OUT("trylock of another, free mutex %s\n", en(rc));
	if (rc == 0)
		OUT("unlock %s\n", en(pthread_mutex_unlock(&free_one)));
	on_thread(lock_unlock_m, NULL);
	mutex_works(&m, NULL, "the mutex");
}

static void seq_unlock_twice_trylock(void)
{
	OUT("lock %s\n", en(pthread_mutex_lock(&m)));
	OUT("unlock %s\n", en(pthread_mutex_unlock(&m)));
	OUT("unlock %s\n", en(pthread_mutex_unlock(&m)));
	int rc = pthread_mutex_trylock(&m);
	OUT("trylock %s\n", en(rc));
	if (rc == 0)
		OUT("unlock %s\n", en(pthread_mutex_unlock(&m)));
	mutex_works(&m, NULL, "the mutex");
}

static void seq_cond_unheld(void)
{
	struct timespec t = in_ms(CLOCK_REALTIME, 200);
	OUT("cond_timedwait on a mutex not held: %s\n", en(pthread_cond_timedwait(&c, &m, &t)));
	on_thread(trylock_m, NULL);   /* natively the caller holds it now */
	OUT("unlock %s\n", en(pthread_mutex_unlock(&m)));
	mutex_works(&m, NULL, "the mutex");
	cond_works(&c, &m);
}

static void seq_double_unlock(void)
{
	OUT("init %s\n", en(pthread_mutex_init(&m, NULL)));
	OUT("lock %s\n", en(pthread_mutex_lock(&m)));
	OUT("unlock %s\n", en(pthread_mutex_unlock(&m)));
	OUT("unlock %s\n", en(pthread_mutex_unlock(&m)));
	on_thread(lock_unlock_m, NULL);
	mutex_works(&m, NULL, "the mutex");
	/* glibc counts users: the unmatched unlock leaves its count short */
	OUT("destroy %s\n", en(pthread_mutex_destroy(&m)));
}

static void seq_xthread_unlock(void)
{
	OUT("lock %s\n", en(pthread_mutex_lock(&m)));
	on_thread(unlock_m, NULL);
	on_thread(lock_unlock_m, NULL);
	mutex_works(&m, NULL, "the mutex");
}

static void seq_destroy_locked(void)
{
	OUT("init %s\n", en(pthread_mutex_init(&m, NULL)));
	OUT("lock %s\n", en(pthread_mutex_lock(&m)));
	OUT("destroy %s\n", en(pthread_mutex_destroy(&m)));
	OUT("unlock %s\n", en(pthread_mutex_unlock(&m)));
	mutex_works(&m, NULL, "the mutex");
}

static void seq_destroy_unlocked(void)
{
	OUT("init %s\n", en(pthread_mutex_init(&m, NULL)));
	OUT("lock %s\n", en(pthread_mutex_lock(&m)));
	OUT("unlock %s\n", en(pthread_mutex_unlock(&m)));
	OUT("destroy %s\n", en(pthread_mutex_destroy(&m)));
	OUT("init %s\n", en(pthread_mutex_init(&m, NULL)));
	mutex_works(&m, NULL, "the mutex");
}

static void seq_use_after_destroy(void)
{
	OUT("init %s\n", en(pthread_mutex_init(&m, NULL)));
	OUT("destroy %s\n", en(pthread_mutex_destroy(&m)));
	int rc = pthread_mutex_lock(&m);
	OUT("lock %s\n", en(rc));
	if (rc == 0)
		OUT("unlock %s\n", en(pthread_mutex_unlock(&m)));
	OUT("init %s\n", en(pthread_mutex_init(&m, NULL)));
	mutex_works(&m, NULL, "the mutex");
}

static void seq_reinit_locked(void)
{
	OUT("lock %s\n", en(pthread_mutex_lock(&m)));
	OUT("init %s\n", en(pthread_mutex_init(&m, NULL)));
	int rc = pthread_mutex_trylock(&m);
	OUT("trylock %s\n", en(rc));
	if (rc == 0)
		OUT("unlock %s\n", en(pthread_mutex_unlock(&m)));
	mutex_works(&m, NULL, "the mutex");
}

static void seq_memcpy_copy(void)
{
	static pthread_mutex_t copy;
	OUT("init %s\n", en(pthread_mutex_init(&m, NULL)));
	OUT("lock %s\n", en(pthread_mutex_lock(&m)));
	OUT("unlock %s\n", en(pthread_mutex_unlock(&m)));
	memcpy(&copy, &m, sizeof m);
	mutex_works(&copy, NULL, "the copy");
	mutex_works(&m, NULL, "the original");
}

static void seq_timedlock_invalid(void)
{
	struct timespec neg = { time(NULL) + 1, -1 }, big = { time(NULL) + 1, 1000000000L };
	int rc = pthread_mutex_timedlock(&m, &neg);
	OUT("free: timedlock tv_nsec -1: %s\n", en(rc));
	if (rc == 0)
		OUT("unlock %s\n", en(pthread_mutex_unlock(&m)));
	rc = pthread_mutex_timedlock(&m, &big);
	OUT("free: timedlock tv_nsec 1e9: %s\n", en(rc));
	if (rc == 0)
		OUT("unlock %s\n", en(pthread_mutex_unlock(&m)));
	OUT("lock %s\n", en(pthread_mutex_lock(&m)));
	OUT("held: timedlock tv_nsec -1: %s\n", en(pthread_mutex_timedlock(&m, &neg)));
	OUT("held: timedlock tv_nsec 1e9: %s\n", en(pthread_mutex_timedlock(&m, &big)));
	OUT("held: clocklock MONOTONIC tv_nsec -1: %s\n",
	    en(pthread_mutex_clocklock(&m, CLOCK_MONOTONIC, &neg)));
	OUT("unlock %s\n", en(pthread_mutex_unlock(&m)));
	mutex_works(&m, NULL, "the mutex");
}

static void seq_sem_post_max(void)
{
	static sem_t s;
	int v = -1;
	OUT("init at SEM_VALUE_MAX %s\n", sem_errno(sem_init(&s, 0, SEM_VALUE_MAX)));
	OUT("post %s\n", sem_errno(sem_post(&s)));
	sem_getvalue(&s, &v);
	OUT("value is SEM_VALUE_MAX: %s\n", v == SEM_VALUE_MAX ? "yes" : "no");
	OUT("trywait %s\n", sem_errno(sem_trywait(&s)));
	OUT("post %s\n", sem_errno(sem_post(&s)));
	OUT("post %s\n", sem_errno(sem_post(&s)));
	sem_getvalue(&s, &v);
	OUT("value is SEM_VALUE_MAX: %s\n", v == SEM_VALUE_MAX ? "yes" : "no");
	OUT("init 0 %s\n", sem_errno(sem_init(&s, 0, 0)));
	sem_works(&s);
}

static void seq_cond_after_destroy(void)
{
	static pthread_mutex_t cm = PTHREAD_MUTEX_INITIALIZER;
	OUT("init %s\n", en(pthread_cond_init(&c, NULL)));
	OUT("destroy %s\n", en(pthread_cond_destroy(&c)));
	OUT("signal %s\n", en(pthread_cond_signal(&c)));
	OUT("broadcast %s\n", en(pthread_cond_broadcast(&c)));
	OUT("init %s\n", en(pthread_cond_init(&c, NULL)));
	cond_works(&c, &cm);
}

static void seq_spin_unlock_free(void)
{
	static pthread_spinlock_t s;
	OUT("init %s\n", en(pthread_spin_init(&s, PTHREAD_PROCESS_PRIVATE)));
	OUT("unlock %s\n", en(pthread_spin_unlock(&s)));
	spin_works(&s);
}

static void seq_barrier_zero(void)
{
	static pthread_barrier_t b;
	OUT("init count 0: %s\n", en(pthread_barrier_init(&b, NULL, 0)));
	OUT("init count 2: %s\n", en(pthread_barrier_init(&b, NULL, 2)));
	barrier_works(&b);
	OUT("destroy %s\n", en(pthread_barrier_destroy(&b)));
}

static pthread_mutexattr_t attr;

static void nonowner_unlock(int type, const char *what)
{
	pthread_mutexattr_init(&attr);
	pthread_mutexattr_settype(&attr, type);
	OUT("init %s\n", en(pthread_mutex_init(&m, &attr)));
	OUT("lock %s\n", en(pthread_mutex_lock(&m)));
	on_thread(unlock_m, NULL);
	OUT("unlock %s\n", en(pthread_mutex_unlock(&m)));
	OUT("unlock %s\n", en(pthread_mutex_unlock(&m)));
	mutex_works(&m, &attr, what);
}

static void seq_errorcheck_nonowner(void)
{
	nonowner_unlock(PTHREAD_MUTEX_ERRORCHECK, "the error-checking mutex");
}

static void seq_recursive_nonowner(void)
{
	nonowner_unlock(PTHREAD_MUTEX_RECURSIVE, "the recursive mutex");
}

/* rwlocks (default, and writer-preferring as glibc's attribute makes it):
 * tryrdlock, trywrlock, rdlock, tryrdlock, trywrlock, unlocks, wrlock,
 * tryrdlock: one line */
static void *rw_round(void *arg)
{
	pthread_rwlock_t *rw = arg;
	const char *r[10];
	r[0] = en(pthread_rwlock_tryrdlock(rw));
	r[1] = en(pthread_rwlock_unlock(rw));
	r[2] = en(pthread_rwlock_trywrlock(rw));
	r[3] = en(pthread_rwlock_unlock(rw));
	r[4] = en(pthread_rwlock_rdlock(rw));
	r[5] = en(pthread_rwlock_trywrlock(rw));
	r[6] = en(pthread_rwlock_unlock(rw));
	r[7] = en(pthread_rwlock_wrlock(rw));
	r[8] = en(pthread_rwlock_tryrdlock(rw));
	r[9] = en(pthread_rwlock_unlock(rw));
	OUT("  works? tryrdlock %s, unlock %s, trywrlock %s, unlock %s, rdlock %s, trywrlock %s, "
	    "unlock %s, wrlock %s, tryrdlock %s, unlock %s\n", r[0], r[1], r[2], r[3], r[4], r[5],
	    r[6], r[7], r[8], r[9]);
	return NULL;
}

static void rw_init(pthread_rwlock_t *rw, int writer)
{
	pthread_rwlockattr_t a;
	pthread_rwlockattr_init(&a);
	if (writer)
		pthread_rwlockattr_setkind_np(&a, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
	OUT("init %s %s\n", writer ? "writer-preferring" : "default",
	    en(pthread_rwlock_init(rw, &a)));
	pthread_rwlockattr_destroy(&a);
}

static void seq_rwlock_self_deadlock(void)
{
	static pthread_rwlock_t rw;
	for (int writer = 0; writer < 2; writer++) {
		struct timespec t = in_ms(CLOCK_REALTIME, 200);
		const char *r[8];
		rw_init(&rw, writer);
		r[0] = en(pthread_rwlock_wrlock(&rw));
		r[1] = en(pthread_rwlock_trywrlock(&rw));
		r[2] = en(pthread_rwlock_tryrdlock(&rw));
		r[3] = en(pthread_rwlock_timedwrlock(&rw, &t));
		r[4] = en(pthread_rwlock_timedrdlock(&rw, &t));
		r[5] = en(pthread_rwlock_wrlock(&rw));
		r[6] = en(pthread_rwlock_rdlock(&rw));
		r[7] = en(pthread_rwlock_unlock(&rw));
		OUT("wrlock %s, then by the holder: trywrlock %s, tryrdlock %s, timedwrlock %s, "
		    "timedrdlock %s, wrlock %s, rdlock %s; unlock %s\n", r[0], r[1], r[2], r[3], r[4],
		    r[5], r[6], r[7]);
		rw_round(&rw);
		on_thread(rw_round, &rw);
		OUT("destroy %s\n", en(pthread_rwlock_destroy(&rw)));
	}
}

/* glibc's read unlock of a free rwlock leaves its reader count short: only
 * the try calls, which cannot hang, afterwards */
static void seq_rwlock_unlock_free(void)
{
	static pthread_rwlock_t rw;
	for (int writer = 0; writer < 2; writer++) {
		const char *r[5];
		rw_init(&rw, writer);
		r[0] = en(pthread_rwlock_unlock(&rw));
		r[1] = en(pthread_rwlock_trywrlock(&rw));
		r[2] = r[1][0] == '0' ? en(pthread_rwlock_unlock(&rw)) : "-";
		r[3] = en(pthread_rwlock_tryrdlock(&rw));
		r[4] = r[3][0] == '0' ? en(pthread_rwlock_unlock(&rw)) : "-";
		OUT("unlock %s, trywrlock %s, unlock %s, tryrdlock %s, unlock %s\n", r[0], r[1], r[2],
		    r[3], r[4]);
	}
}

#ifdef HAVE_OMP
static void seq_omp_unset_free(void)
{
	static omp_lock_t l;
	omp_init_lock(&l);
	omp_unset_lock(&l);
	OUT("init, unset: returned\n");
	omp_works(&l);
}
#endif

static const struct {
	const char *name;
	void (*run)(void);
} seqs[] = {
	{ "init-unlock", seq_init_unlock },
	{ "unlock-twice-trylock", seq_unlock_twice_trylock },
	{ "cond-timedwait-unheld", seq_cond_unheld },
	{ "double-unlock", seq_double_unlock },
	{ "xthread-unlock", seq_xthread_unlock },
	{ "destroy-locked", seq_destroy_locked },
	{ "destroy-unlocked", seq_destroy_unlocked },
	{ "use-after-destroy", seq_use_after_destroy },
	{ "reinit-locked", seq_reinit_locked },
	{ "memcpy-copy", seq_memcpy_copy },
	{ "timedlock-invalid", seq_timedlock_invalid },
	{ "sem-post-max", seq_sem_post_max },
	{ "cond-signal-after-destroy", seq_cond_after_destroy },
	{ "spin-unlock-free", seq_spin_unlock_free },
	{ "barrier-count-zero", seq_barrier_zero },
	{ "errorcheck-nonowner-unlock", seq_errorcheck_nonowner },
	{ "recursive-nonowner-unlock", seq_recursive_nonowner },
	{ "rwlock-self-deadlock", seq_rwlock_self_deadlock },
	{ "rwlock-unlock-free", seq_rwlock_unlock_free },
#ifdef HAVE_OMP
	{ "omp-unset-free", seq_omp_unset_free },
#endif
};
#define NSEQS (sizeof seqs / sizeof seqs[0])

/* Fork, run, watch: how the child ended. */
static void run_one(size_t i)
{
	OUT("== %s\n", seqs[i].name);
	pid_t pid = fork();
	if (pid < 0) {
		perror("fork");
		exit(3);
	}
	if (pid == 0) {
		seqs[i].run();
		exit(0);
	}
	int st;
	pid_t r = 0;
	for (int ms = 0; ms < WATCHDOG_S * 1000 && !(r = waitpid(pid, &st, WNOHANG)); ms += 5)
		sleep_ms(5);
	if (r == 0) {
		kill(pid, SIGKILL);
		waitpid(pid, &st, 0);
		OUT("end: timeout (killed after %d s)\n", WATCHDOG_S);
	} else if (WIFEXITED(st)) {
		OUT("end: exit %d\n", WEXITSTATUS(st));
	} else {
		OUT("end: signal %d (%s)\n", WTERMSIG(st), strsignal(WTERMSIG(st)));
	}
}

int main(int argc, char **argv)
{
	int first = 1;
	if (argc > 1 && !strcmp(argv[1], "list")) {
		for (size_t i = 0; i < NSEQS; i++)
			printf("%s\n", seqs[i].name);
		return 0;
	}
	if (argc > 1 && (!strcmp(argv[1], "shim") || !strcmp(argv[1], "native"))) {
		Dl_info info;
		int shim = dladdr((void *)pthread_mutex_lock, &info) && info.dli_fname &&
			   strstr(info.dli_fname, "hwsync-preload");
		if (shim != !strcmp(argv[1], "shim")) {
			fprintf(stderr, "pthread_mutex_lock is %sthe shim's (%s)\n", shim ? "" : "not ",
				info.dli_fname ? info.dli_fname : "?");
			return 2;
		}
		first = 2;
	}
	if (argc <= first) {
		for (size_t i = 0; i < NSEQS; i++)
			run_one(i);
		return 0;
	}
	for (int a = first; a < argc; a++) {
		size_t i = 0;
		while (i < NSEQS && strcmp(seqs[i].name, argv[a]))
			i++;
		if (i == NSEQS) {
			fprintf(stderr, "unknown sequence '%s' (misuse list)\n", argv[a]);
			return 2;
		}
		run_one(i);
	}
	return 0;
}

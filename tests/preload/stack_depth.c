/* How deep the interposed calls reach into a small stack.
 *
 * One thread runs on a stack of PTHREAD_STACK_MIN bytes that this program
 * maps itself (pthread_attr_setstack), with an inaccessible page below it so
 * that an overflow dies instead of writing into other memory.  That thread
 * calls every interposed entry point through its slow paths, a helper thread
 * on an ordinary stack providing the contention: locks held by another
 * thread, wake-ups of a sleeping waiter, waits that time out, the first use
 * of each object and, because this thread makes the first calls of the
 * process, the first use of everything the shim sets up lazily.  Before each
 * call the free part of the stack below the caller is painted with a
 * pattern; after it, the lowest word that no longer holds the pattern gives
 * how deep the call went.  The depth printed is that, less what the same
 * measurement gives for a call of an empty function (the measuring frames),
 * so it is what the interposed function and everything it called used,
 * libc included.  Run it with LD_BIND_NOW=1, so that resolving a symbol on
 * its first call (the dynamic linker's frames) is not charged to the call.
 *
 * usage: stack_depth LIMIT [shim|native [exit]]
 *   prints "NAME DEPTH" per call, then "deepest DEPTH NAME"; exit status 1
 *   when a call went deeper than LIMIT bytes or returned what it should not,
 *   2 when "shim" was asked for and pthread_mutex_lock is not the shim's.
 *   "exit": the small-stack thread ends the process with exit(), so that
 *   whatever runs at exit (the shim's stats and trace) runs on its stack;
 *   that is not measured, but an overflow kills the process.
 *   The helper waits a few milliseconds before it lets a waiter go, so that
 *   the waiter has gone to sleep; that only decides which path is measured,
 *   and nothing is judged by a time.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#ifdef HAVE_OMP
#include <omp.h>
#endif

#include "check_util.h"

#define PATTERN 0x5ca1ab1edeadc0deull
#define HOLD_MS 20   /* how long the helper keeps a waiter waiting */

static char *stack_lo;          /* the small stack's lowest byte */
static int failures;

static void sleep_ms(long ms)
{
	struct timespec t = { ms / 1000, (ms % 1000) * 1000000L };
	while (nanosleep(&t, &t) && errno == EINTR)
		;
}

/* ---- measuring ---- */

static inline char *stack_pointer(void)
{
	char *sp;
#if defined(__x86_64__)
	__asm__ __volatile__("mov %%rsp, %0" : "=r"(sp));
#elif defined(__aarch64__)
	__asm__ __volatile__("mov %0, sp" : "=r"(sp));
#else
	sp = (char *)__builtin_frame_address(0) - 512;   /* below this frame */
#endif
	return sp;
}

static __attribute__((noinline)) char *lowest_touched(void)
{
	uint64_t *p = (uint64_t *)(void *)stack_lo;
	while (*(volatile uint64_t *)p == PATTERN)
		p++;
	return (char *)p;
}

/* Bytes below this frame that fn touched: everything below the stack
 * pointer is painted (in this frame, without a call), then fn runs there. */
static __attribute__((noinline)) size_t measure(void (*fn)(void))
{
	char *sp = stack_pointer();
	for (uint64_t *p = (uint64_t *)(void *)stack_lo; (char *)(p + 1) <= sp - 8; p++)
		*(volatile uint64_t *)p = PATTERN;
	fn();
	return (size_t)(sp - lowest_touched());
}

static __attribute__((noinline)) void empty(void)
{
	__asm__ __volatile__("" ::: "memory");
}

static void empty_call(void)
{
	empty();
}

/* ---- the helper thread: one task at a time ---- */
static void (*_Atomic task)(void);
static atomic_int task_done, hflag, dflag, helper_quit;

static void *helper_main(void *unused)
{
	(void)unused;
	while (!atomic_load(&helper_quit)) {
		void (*t)(void) = atomic_load(&task);
		if (!t) {
			sleep_ms(1);
			continue;
		}
		t();
		atomic_store(&task, NULL);
		atomic_store(&task_done, 1);
	}
	return NULL;
}

static void await(atomic_int *flag)
{
	while (!atomic_load(flag))
		sleep_ms(1);
}

/* ---- the objects and the calls ---- */
static pthread_mutex_t m0, m1, m2, mc = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t c0, c1, c2 = PTHREAD_COND_INITIALIZER;
static sem_t s0, s1;
static pthread_barrier_t b0, b1;
static pthread_spinlock_t sl;
static int rc, pred;

static void check_rc(const char *name, int want)
{
	if (rc != want) {
		OUT("FAIL %s returned %s, expected %s\n", name, en(rc), en(want));
		failures++;
	}
}

static struct timespec in(clockid_t c, long ms)
{
	return in_ms(c, ms);
}

/* Most steps below are one call on one object, written as one line each.
 * CALL: a measured call that leaves what it returns in rc.  CALL_IN: the
 * same, t being a deadline ms milliseconds ahead on clock c.  STEP: a
 * step that is not measured. */
#define CALL(name, expr) static void name(void) { rc = (expr); }
#define CALL_IN(name, c, ms, expr) \
	static void name(void) { struct timespec t = in(c, ms); rc = (expr); }
#define STEP(name, stmt) static void name(void) { stmt; }

/* Helper tasks on one object, given how to take it and give it back.
 * HOLD: take it, say so (hflag), keep it HOLD_MS, so that a call waits.
 * HOLD_LONG: take it, say so, keep it until the small stack is done
 * (dflag), so that a try fails or a timed wait times out.
 * TAKE: once the small stack holds it (dflag), say so and wait for it, so
 * that the small stack's release wakes a waiter; the small stack's side is
 * HOLD_FOR_TAKER, a prep step that takes it, lets the helper go and gives
 * it HOLD_MS to fall asleep taking it. */
#define HOLD(name, take, give)				\
static void name(void)					\
{							\
	take;						\
	atomic_store(&hflag, 1);			\
	sleep_ms(HOLD_MS);				\
	give;						\
}
#define HOLD_LONG(name, take, give)			\
static void name(void)					\
{							\
	take;						\
	atomic_store(&hflag, 1);			\
	await(&dflag);					\
	give;						\
}
#define TAKE(name, take, give)				\
static void name(void)					\
{							\
	await(&dflag);					\
	atomic_store(&hflag, 1);			\
	take;						\
	give;						\
}
#define HOLD_FOR_TAKER(name, take)			\
static void name(void)					\
{							\
	take;						\
	atomic_store(&dflag, 1);			\
	await(&hflag);					\
	sleep_ms(HOLD_MS);				\
}

/* helper tasks */
HOLD(h_hold_m1, pthread_mutex_lock(&m1), pthread_mutex_unlock(&m1))
HOLD_LONG(h_hold_m1_long, pthread_mutex_lock(&m1), pthread_mutex_unlock(&m1))
TAKE(h_take_m1, pthread_mutex_lock(&m1), pthread_mutex_unlock(&m1))
static void h_signal_c0(void)
{
	await(&dflag);
	sleep_ms(HOLD_MS);
	pthread_mutex_lock(&mc);
	pred = 1;
	pthread_cond_signal(&c0);
	pthread_mutex_unlock(&mc);
}
static void h_wait_c1(void)
{
	pthread_mutex_lock(&mc);
	atomic_store(&hflag, 1);
	while (!pred)
		pthread_cond_wait(&c1, &mc);
	pthread_mutex_unlock(&mc);
}
static void h_post_s0(void)
{
	await(&dflag);
	sleep_ms(HOLD_MS);
	sem_post(&s0);
}
static void h_wait_s0(void)
{
	atomic_store(&hflag, 1);
	sem_wait(&s0);
}
static void h_barrier_b0_late(void)
{
	await(&dflag);
	sleep_ms(HOLD_MS);
	pthread_barrier_wait(&b0);
}
static void h_barrier_b0(void)
{
	atomic_store(&hflag, 1);
	pthread_barrier_wait(&b0);
}
HOLD(h_hold_spin, pthread_spin_lock(&sl), pthread_spin_unlock(&sl))

/* prep/post steps on the small stack, not measured */
static void p_await(void)
{
	await(&hflag);
}
static void p_go(void)
{
	atomic_store(&dflag, 1);
}
HOLD_FOR_TAKER(p_lock_m1_then_helper_waits, pthread_mutex_lock(&m1))
STEP(p_unlock_m1, pthread_mutex_unlock(&m1))
STEP(p_lock_m0, pthread_mutex_lock(&m0))
STEP(p_unlock_m0, pthread_mutex_unlock(&m0))
static void p_cond_waiter(void)
{
	await(&hflag);
	pthread_mutex_lock(&mc);   /* free again once the helper waits */
	pred = 1;
	pthread_mutex_unlock(&mc);
	sleep_ms(HOLD_MS);
}
static void p_lock_mc_go(void)
{
	pthread_mutex_lock(&mc);
	atomic_store(&dflag, 1);
}
STEP(p_unlock_mc, pthread_mutex_unlock(&mc))
static void p_await_sleep(void)
{
	await(&hflag);
	sleep_ms(HOLD_MS);
}

/* measured calls */
static void c_mutex_first(void)
{
	rc = pthread_mutex_lock(&m0);
	rc |= pthread_mutex_unlock(&m0);
}
CALL_IN(c_cond_timedwait_first, CLOCK_REALTIME, 10, pthread_cond_timedwait(&c2, &m0, &t))
CALL(c_mutex_lock_m1, pthread_mutex_lock(&m1))
CALL(c_mutex_unlock_m1, pthread_mutex_unlock(&m1))
CALL(c_mutex_trylock_m1, pthread_mutex_trylock(&m1))
CALL_IN(c_mutex_timedlock_expires, CLOCK_REALTIME, 10, pthread_mutex_timedlock(&m1, &t))
CALL_IN(c_mutex_timedlock, CLOCK_REALTIME, 10000, pthread_mutex_timedlock(&m1, &t))
CALL_IN(c_mutex_clocklock, CLOCK_MONOTONIC, 10000,
	pthread_mutex_clocklock(&m1, CLOCK_MONOTONIC, &t))
static void c_mutex_init_destroy(void)
{
	rc = pthread_mutex_init(&m2, NULL);
	rc |= pthread_mutex_destroy(&m2);
}
static void c_cond_wait(void)
{
	rc = 0;
	while (!pred && !rc)
		rc = pthread_cond_wait(&c0, &mc);
}
CALL(c_cond_signal, pthread_cond_signal(&c1))
CALL(c_cond_broadcast, pthread_cond_broadcast(&c1))
CALL_IN(c_cond_clockwait, CLOCK_MONOTONIC, 10,
	pthread_cond_clockwait(&c2, &m0, CLOCK_MONOTONIC, &t))
static void c_cond_init_destroy(void)
{
	rc = pthread_cond_init(&c0, NULL);
	rc |= pthread_cond_destroy(&c0);
	rc |= pthread_cond_init(&c0, NULL);
}
static void c_sem_init(void)
{
	rc = sem_init(&s0, 0, 0);
	rc |= sem_init(&s1, 0, 0);
}
CALL(c_sem_wait, sem_wait(&s0) ? errno : 0)
CALL(c_sem_post, sem_post(&s0) ? errno : 0)
CALL_IN(c_sem_timedwait, CLOCK_REALTIME, 10, sem_timedwait(&s1, &t) ? errno : 0)
CALL_IN(c_sem_clockwait, CLOCK_MONOTONIC, 10,
	sem_clockwait(&s1, CLOCK_MONOTONIC, &t) ? errno : 0)
static void c_sem_trywait(void)
{
	int v;
	rc = sem_trywait(&s1) ? errno : 0;
	sem_getvalue(&s1, &v);
}
static void c_sem_destroy(void)
{
	rc = sem_destroy(&s1);
	rc |= sem_init(&s1, 0, 0);
}
static void c_barrier_init(void)
{
	rc = pthread_barrier_init(&b0, NULL, 2);
	rc |= pthread_barrier_init(&b1, NULL, 1);
}
static void c_barrier_wait(void)
{
	rc = pthread_barrier_wait(&b0);
	if (rc == PTHREAD_BARRIER_SERIAL_THREAD)
		rc = 0;
}
static void c_barrier_alone(void)
{
	rc = pthread_barrier_wait(&b1) == PTHREAD_BARRIER_SERIAL_THREAD ? 0 : -1;
	rc |= pthread_barrier_destroy(&b1);
}
CALL(c_spin_init, pthread_spin_init(&sl, PTHREAD_PROCESS_PRIVATE))
CALL(c_spin_lock, pthread_spin_lock(&sl))
CALL(c_spin_unlock, pthread_spin_unlock(&sl))
static void c_spin_trylock(void)
{
	rc = pthread_spin_trylock(&sl);
	if (rc == 0)
		rc = pthread_spin_unlock(&sl);
}
/* passed to glibc (with HWSYNC_VERBOSE=1 the shim says so, once per kind) */
static pthread_mutex_t mr;
static pthread_cond_t cps;
static sem_t sps;
static void c_recursive(void)
{
	pthread_mutexattr_t a;
	pthread_mutexattr_init(&a);
	pthread_mutexattr_settype(&a, PTHREAD_MUTEX_RECURSIVE);
	rc = pthread_mutex_init(&mr, &a);
	rc |= pthread_mutex_lock(&mr);
	rc |= pthread_mutex_lock(&mr);
	rc |= pthread_mutex_unlock(&mr);
	rc |= pthread_mutex_unlock(&mr);
	rc |= pthread_mutex_destroy(&mr);
	pthread_mutexattr_destroy(&a);
}
static void c_cond_pshared(void)
{
	pthread_condattr_t a;
	pthread_condattr_init(&a);
	pthread_condattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
	rc = pthread_cond_init(&cps, &a);
	pthread_condattr_destroy(&a);
	if (rc)
		return;
	struct timespec t = in(CLOCK_REALTIME, 10);
	rc = pthread_cond_timedwait(&cps, &m0, &t);
}
static void c_sem_pshared(void)
{
	if (sem_init(&sps, 1, 0)) {
		rc = errno;
		return;
	}
	struct timespec t = in(CLOCK_REALTIME, 10);
	rc = sem_timedwait(&sps, &t) ? errno : 0;
}

static void c_canceltype(void)
{
	int old;
	rc = pthread_setcanceltype(PTHREAD_CANCEL_DEFERRED, &old);
}

/* rwlocks: a default one (reader-preferring, or BRAVO) and a writer-
 * preferring one */
static pthread_rwlock_t rw0, rw1, rww;

HOLD_LONG(h_rd_rw1_long, pthread_rwlock_rdlock(&rw1), pthread_rwlock_unlock(&rw1))
HOLD(h_rd_rw1, pthread_rwlock_rdlock(&rw1), pthread_rwlock_unlock(&rw1))
HOLD(h_wr_rw1, pthread_rwlock_wrlock(&rw1), pthread_rwlock_unlock(&rw1))
TAKE(h_take_wr_rw1, pthread_rwlock_wrlock(&rw1), pthread_rwlock_unlock(&rw1))
HOLD(h_wr_rww, pthread_rwlock_wrlock(&rww), pthread_rwlock_unlock(&rww))
HOLD_FOR_TAKER(p_rd_rw1_then_writer_waits, pthread_rwlock_rdlock(&rw1))
STEP(p_unlock_rw1, pthread_rwlock_unlock(&rw1))
STEP(p_unlock_rww, pthread_rwlock_unlock(&rww))
static void c_rw_first(void)
{
	rc = pthread_rwlock_rdlock(&rw0);
	rc |= pthread_rwlock_unlock(&rw0);
	rc |= pthread_rwlock_wrlock(&rw0);
	rc |= pthread_rwlock_unlock(&rw0);
}
static void c_rw_init(void)
{
	pthread_rwlockattr_t a;
	pthread_rwlockattr_init(&a);
	pthread_rwlockattr_setkind_np(&a, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
	rc = pthread_rwlock_init(&rw1, NULL);
	rc |= pthread_rwlock_init(&rww, &a);
	rc |= pthread_rwlock_destroy(&rw0);
	pthread_rwlockattr_destroy(&a);
}
CALL(c_rw_wrlock_rw1, pthread_rwlock_wrlock(&rw1))
CALL(c_rw_rdlock_rw1, pthread_rwlock_rdlock(&rw1))
CALL(c_rw_unlock_rw1, pthread_rwlock_unlock(&rw1))
CALL(c_rw_trywrlock_rw1, pthread_rwlock_trywrlock(&rw1))
CALL_IN(c_rw_timedwrlock_expires, CLOCK_REALTIME, 10, pthread_rwlock_timedwrlock(&rw1, &t))
CALL_IN(c_rw_clockrdlock, CLOCK_MONOTONIC, 10000,
	pthread_rwlock_clockrdlock(&rw1, CLOCK_MONOTONIC, &t))
CALL_IN(c_rw_timedrdlock, CLOCK_REALTIME, 10000, pthread_rwlock_timedrdlock(&rw1, &t))
CALL_IN(c_rw_clockwrlock_rww, CLOCK_MONOTONIC, 10000,
	pthread_rwlock_clockwrlock(&rww, CLOCK_MONOTONIC, &t))
static void c_rw_tryrdlock_rww(void)
{
	rc = pthread_rwlock_tryrdlock(&rww);
	if (rc == 0)
		rc = pthread_rwlock_unlock(&rww);
}

#ifdef HAVE_OMP
static omp_lock_t ol;
static omp_nest_lock_t onl;

HOLD(h_hold_ol, omp_set_lock(&ol), omp_unset_lock(&ol))
TAKE(h_take_ol, omp_set_lock(&ol), omp_unset_lock(&ol))
HOLD_LONG(h_hold_ol_long, omp_set_lock(&ol), omp_unset_lock(&ol))
HOLD(h_hold_onl, omp_set_nest_lock(&onl), omp_unset_nest_lock(&onl))
static void h_hold_critical(void)
{
#pragma omp critical
	{
		atomic_store(&hflag, 1);
		sleep_ms(HOLD_MS);
	}
}
static void h_hold_named(void)
{
#pragma omp critical(stack_depth_named)
	{
		atomic_store(&hflag, 1);
		sleep_ms(HOLD_MS);
	}
}
HOLD_FOR_TAKER(p_set_ol_then_helper_waits, omp_set_lock(&ol))
STEP(p_unset_ol, omp_unset_lock(&ol))
static void p_unset_onl(void)
{
	omp_unset_nest_lock(&onl);
	omp_unset_nest_lock(&onl);
}
static void c_omp_init(void)
{
	omp_init_lock(&ol);
	omp_init_nest_lock(&onl);
	rc = 0;
}
static void c_omp_set(void)
{
	omp_set_lock(&ol);
	rc = 0;
}
static void c_omp_unset(void)
{
	omp_unset_lock(&ol);
	rc = 0;
}
CALL(c_omp_test_busy, omp_test_lock(&ol))
static void c_omp_nest_set(void)
{
	omp_set_nest_lock(&onl);
	omp_set_nest_lock(&onl);
	rc = omp_test_nest_lock(&onl) == 3 ? 0 : -1;
	omp_unset_nest_lock(&onl);
}
static void c_omp_destroy(void)
{
	omp_destroy_lock(&ol);
	omp_destroy_nest_lock(&onl);
	rc = 0;
}
static void c_critical(void)
{
#pragma omp critical
	rc = 0;
}
static void c_named(void)
{
#pragma omp critical(stack_depth_named)
	rc = 0;
}
#endif

struct op {
	const char *name;
	void (*helper)(void);          /* on the helper thread, started first */
	void (*prep)(void);            /* on the small stack, not measured */
	void (*call)(void);            /* measured */
	void (*post)(void);            /* not measured */
	int want;                      /* what call leaves in rc */
};

/* In order: the first calls of the process come first. */
static const struct op ops[] = {
	{ "mutex lock+unlock, first use", NULL, NULL, c_mutex_first, NULL, 0 },
	{ "cond timedwait, first wait, times out", NULL, p_lock_m0, c_cond_timedwait_first,
	  p_unlock_m0, ETIMEDOUT },
	{ "mutex lock, contended", h_hold_m1, p_await, c_mutex_lock_m1, p_unlock_m1, 0 },
	{ "mutex unlock, waking a waiter", h_take_m1, p_lock_m1_then_helper_waits,
	  c_mutex_unlock_m1, NULL, 0 },
	{ "mutex trylock, busy", h_hold_m1_long, p_await, c_mutex_trylock_m1, p_go,
	  EBUSY },
	{ "mutex timedlock, times out", h_hold_m1_long, p_await, c_mutex_timedlock_expires,
	  p_go, ETIMEDOUT },
	{ "mutex timedlock, contended", h_hold_m1, p_await, c_mutex_timedlock, p_unlock_m1, 0 },
	{ "mutex clocklock, contended", h_hold_m1, p_await, c_mutex_clocklock, p_unlock_m1, 0 },
	{ "mutex init+destroy", NULL, NULL, c_mutex_init_destroy, NULL, 0 },
	{ "cond init+destroy", NULL, NULL, c_cond_init_destroy, NULL, 0 },
	{ "cond wait, signalled", h_signal_c0, p_lock_mc_go, c_cond_wait, p_unlock_mc, 0 },
	{ "cond signal, waking a waiter", h_wait_c1, p_cond_waiter, c_cond_signal, NULL, 0 },
	{ "cond broadcast, waking a waiter", h_wait_c1, p_cond_waiter, c_cond_broadcast, NULL, 0 },
	{ "cond clockwait, times out", NULL, p_lock_m0, c_cond_clockwait, p_unlock_m0,
	  ETIMEDOUT },
	{ "sem init", NULL, NULL, c_sem_init, NULL, 0 },
	{ "sem wait, blocking", h_post_s0, p_go, c_sem_wait, NULL, 0 },
	{ "sem post, waking a waiter", h_wait_s0, p_await_sleep, c_sem_post, NULL, 0 },
	{ "sem timedwait, times out", NULL, NULL, c_sem_timedwait, NULL, ETIMEDOUT },
	{ "sem clockwait, times out", NULL, NULL, c_sem_clockwait, NULL, ETIMEDOUT },
	{ "sem trywait, empty; getvalue", NULL, NULL, c_sem_trywait, NULL, EAGAIN },
	{ "sem destroy+init", NULL, NULL, c_sem_destroy, NULL, 0 },
	{ "barrier init", NULL, NULL, c_barrier_init, NULL, 0 },
	{ "barrier wait, first to arrive", h_barrier_b0_late, p_go, c_barrier_wait, NULL, 0 },
	{ "barrier wait, last to arrive", h_barrier_b0, p_await_sleep, c_barrier_wait, NULL, 0 },
	{ "barrier wait alone+destroy", NULL, NULL, c_barrier_alone, NULL, 0 },
	{ "spin init", NULL, NULL, c_spin_init, NULL, 0 },
	{ "spin lock, contended", h_hold_spin, p_await, c_spin_lock, NULL, 0 },
	{ "spin unlock", NULL, NULL, c_spin_unlock, NULL, 0 },
	{ "spin trylock+unlock", NULL, NULL, c_spin_trylock, NULL, 0 },
	{ "setcanceltype", NULL, NULL, c_canceltype, NULL, 0 },
	{ "rwlock rdlock+unlock, wrlock+unlock, first use", NULL, NULL, c_rw_first, NULL, 0 },
	{ "rwlock init x2 (writer-preferring), destroy", NULL, NULL, c_rw_init, NULL, 0 },
	{ "rwlock wrlock, readers inside", h_rd_rw1, p_await, c_rw_wrlock_rw1, p_unlock_rw1, 0 },
	{ "rwlock rdlock, a writer inside", h_wr_rw1, p_await, c_rw_rdlock_rw1, p_unlock_rw1, 0 },
	{ "rwlock unlock, waking a writer", h_take_wr_rw1, p_rd_rw1_then_writer_waits,
	  c_rw_unlock_rw1, NULL, 0 },
	{ "rwlock trywrlock, busy", h_rd_rw1_long, p_await, c_rw_trywrlock_rw1, p_go,
	  EBUSY },
	{ "rwlock timedwrlock, times out", h_rd_rw1_long, p_await, c_rw_timedwrlock_expires,
	  p_go, ETIMEDOUT },
	{ "rwlock timedrdlock, a writer inside", h_wr_rw1, p_await, c_rw_timedrdlock,
	  p_unlock_rw1, 0 },
	{ "rwlock clockrdlock, a writer inside", h_wr_rw1, p_await, c_rw_clockrdlock,
	  p_unlock_rw1, 0 },
	{ "rwlock (writer-pref.) clockwrlock, contended", h_wr_rww, p_await, c_rw_clockwrlock_rww,
	  p_unlock_rww, 0 },
	{ "rwlock (writer-pref.) tryrdlock", NULL, NULL, c_rw_tryrdlock_rww, NULL, 0 },
	{ "recursive mutex (glibc's)", NULL, NULL, c_recursive, NULL, 0 },
	{ "cond timedwait, process-shared, times out", NULL, p_lock_m0, c_cond_pshared,
	  p_unlock_m0, ETIMEDOUT },
	{ "sem process-shared, timedwait times out", NULL, NULL, c_sem_pshared, NULL, ETIMEDOUT },
#ifdef HAVE_OMP
	{ "omp init locks", NULL, NULL, c_omp_init, NULL, 0 },
	{ "omp set lock, contended", h_hold_ol, p_await, c_omp_set, p_unset_ol, 0 },
	{ "omp unset lock, waking a waiter", h_take_ol, p_set_ol_then_helper_waits, c_omp_unset,
	  NULL, 0 },
	{ "omp test lock, busy", h_hold_ol_long, p_await, c_omp_test_busy, p_go, 0 },
	{ "omp nest lock set x2, test, contended", h_hold_onl, p_await, c_omp_nest_set,
	  p_unset_onl, 0 },
	{ "omp critical, contended", h_hold_critical, p_await, c_critical, NULL, 0 },
	{ "omp named critical, contended", h_hold_named, p_await, c_named, NULL, 0 },
	{ "omp destroy locks", NULL, NULL, c_omp_destroy, NULL, 0 },
#endif
};

static size_t limit;
static int exit_here;

static void *small_main(void *unused)
{
	(void)unused;
	size_t base = measure(empty_call), deepest = 0;
	const char *deepest_name = "none";
	for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
		const struct op *o = &ops[i];
		atomic_store(&hflag, 0);
		atomic_store(&dflag, 0);
		atomic_store(&task_done, 0);
		pred = 0;
		if (o->helper)
			atomic_store(&task, o->helper);
		if (o->prep)
			o->prep();
		size_t d = measure(o->call);
		d = d > base ? d - base : 0;
		if (o->post)
			o->post();
		if (o->helper)
			await(&task_done);
		OUT("%-48s %5zu\n", o->name, d);
		check_rc(o->name, o->want);
		if (d > deepest)
			deepest = d, deepest_name = o->name;
		if (d > limit) {
			OUT("FAIL %s: %zu bytes of stack, more than %zu\n", o->name, d, limit);
			failures++;
		}
	}
	OUT("deepest %zu %s (measuring frames: %zu bytes, not counted)\n", deepest, deepest_name,
	    base);
	if (exit_here) {
		/* The shim's exit report (HWSYNC_STATS, HWSYNC_TRACE) then runs
		 * on this stack: it must not overflow it. */
		OUT("stack %zu bytes, limit %zu: %s; exit on the small stack\n",
		    (size_t)PTHREAD_STACK_MIN, limit, failures ? "FAIL" : "ok");
		exit(failures ? 1 : 0);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc < 2 || (argc > 2 && strcmp(argv[2], "shim") && strcmp(argv[2], "native")) ||
	    (argc > 3 && strcmp(argv[3], "exit"))) {
		fprintf(stderr, "usage: %s LIMIT [shim|native [exit]]\n", argv[0]);
		return 2;
	}
	limit = strtoul(argv[1], NULL, 0);
	exit_here = argc > 3;
	alarm(60);
	if (argc > 2 && !strcmp(argv[2], "shim")) {
		Dl_info info;
		if (!dladdr((void *)pthread_mutex_lock, &info) || !info.dli_fname ||
		    !strstr(info.dli_fname, "hwsync-preload")) {
			fprintf(stderr, "pthread_mutex_lock is not the shim's (%s)\n",
				info.dli_fname ? info.dli_fname : "?");
			return 2;
		}
	}
	long page = sysconf(_SC_PAGESIZE);
	size_t size = PTHREAD_STACK_MIN;
	char *map = mmap(NULL, size + (size_t)page, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
	if (map == MAP_FAILED || mprotect(map, (size_t)page, PROT_NONE)) {
		perror("mmap");
		return 1;
	}
	stack_lo = map + page;

	pthread_t helper, small;
	pthread_attr_t a;
	if (pthread_create(&helper, NULL, helper_main, NULL) || pthread_attr_init(&a) ||
	    pthread_attr_setstack(&a, stack_lo, size) ||
	    pthread_create(&small, &a, small_main, NULL)) {
		fprintf(stderr, "cannot start the threads\n");
		return 1;
	}
	pthread_join(small, NULL);
	atomic_store(&helper_quit, 1);
	pthread_join(helper, NULL);
	OUT("stack %zu bytes, limit %zu: %s\n", size, limit, failures ? "FAIL" : "ok");
	return failures ? 1 : 0;
}

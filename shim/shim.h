/* The LD_PRELOAD shim: shared state of the interposers (not installed).
 *
 * Ownership rule: every pthread/sem/omp object is owned entirely by the shim
 * or entirely by the native implementation (glibc, libgomp), decided once per
 * object (at init, or lazily for statically initialised mutexes and condvars)
 * and recorded in the object itself, or, for the objects too small to record
 * it (OpenMP locks and critical sections), decided once per process.  Every
 * shim-owned object keeps its whole state in place: nothing is allocated per
 * object, so objects abandoned without destroy leak nothing.  Native-owned objects
 * are passed to the native function unchanged; glibc's internal calls (for
 * example pthread_cond_wait re-locking its mutex) therefore only ever see
 * native-owned objects.  See docs/preload.md.
 *
 * Files, one job each: startup.c (READY or OFF, once; exit report),
 * natives.c (the native functions), config.c (the HWSYNC_* environment),
 * say.c (messages), passthrough.c (what went native), family.c (the
 * families' names), time.c (deadlines), then one
 * file per family of interposed functions, the lock paths (shim_lock.c),
 * the spin lock's waiter (spin_wait.c), stats.c and trace.c, and the
 * per-process output files (outfile.c).
 */
#ifndef HWS_PRELOAD_SHIM_H
#define HWS_PRELOAD_SHIM_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>
#include <hwsync/arch.h>
#include <hwsync/barrier.h>
#include <hwsync/lock.h>
#include <hwsync/wait.h>
#include "shim/lock_words.h"
#include "shim/profile.h"

#define HWS_EXPORT __attribute__((visibility("default")))
/* The hottest entry points (lock and unlock) start on a 64-byte boundary, so
 * that each fast path is one fetch block wherever other changes move the
 * code: their uncontended cost in `hwsync bench shim` moved by up to 10 %
 * with the placement alone. */
#define HWS_FETCH_ALIGNED __attribute__((aligned(64)))
/* Thread-local data the shim reads on a hot path: the shim is loaded at
 * start-up (LD_PRELOAD), so its thread-local block is static and reachable
 * without a __tls_get_addr call. */
#define HWS_STATIC_TLS __attribute__((tls_model("initial-exec")))
#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)

/* ---- native functions (resolved with dlvsym/dlsym RTLD_NEXT) ---- */
struct hws_native {
	int (*mutex_init)(pthread_mutex_t *, const pthread_mutexattr_t *);
	int (*mutex_destroy)(pthread_mutex_t *);
	int (*mutex_lock)(pthread_mutex_t *);
	int (*mutex_trylock)(pthread_mutex_t *);
	int (*mutex_timedlock)(pthread_mutex_t *, const struct timespec *);
	int (*mutex_clocklock)(pthread_mutex_t *, clockid_t, const struct timespec *);
	int (*mutex_unlock)(pthread_mutex_t *);
	int (*cond_init)(pthread_cond_t *, const pthread_condattr_t *);
	int (*cond_destroy)(pthread_cond_t *);
	int (*cond_wait)(pthread_cond_t *, pthread_mutex_t *);
	int (*cond_timedwait)(pthread_cond_t *, pthread_mutex_t *, const struct timespec *);
	int (*cond_clockwait)(pthread_cond_t *, pthread_mutex_t *, clockid_t,
			      const struct timespec *);
	int (*cond_signal)(pthread_cond_t *);
	int (*cond_broadcast)(pthread_cond_t *);
	int (*spin_init)(pthread_spinlock_t *, int);
	int (*spin_destroy)(pthread_spinlock_t *);
	int (*spin_lock)(pthread_spinlock_t *);
	int (*spin_trylock)(pthread_spinlock_t *);
	int (*spin_unlock)(pthread_spinlock_t *);
	int (*barrier_init)(pthread_barrier_t *, const pthread_barrierattr_t *, unsigned);
	int (*barrier_destroy)(pthread_barrier_t *);
	int (*barrier_wait)(pthread_barrier_t *);
	int (*sem_init)(sem_t *, int, unsigned);
	int (*sem_destroy)(sem_t *);
	int (*sem_wait)(sem_t *);
	int (*sem_trywait)(sem_t *);
	int (*sem_timedwait)(sem_t *, const struct timespec *);
	int (*sem_clockwait)(sem_t *, clockid_t, const struct timespec *);
	int (*sem_post)(sem_t *);
	int (*sem_getvalue)(sem_t *, int *);
	int (*rwlock_init)(pthread_rwlock_t *, const pthread_rwlockattr_t *);
	int (*rwlock_destroy)(pthread_rwlock_t *);
	int (*rwlock_rdlock)(pthread_rwlock_t *);
	int (*rwlock_tryrdlock)(pthread_rwlock_t *);
	int (*rwlock_timedrdlock)(pthread_rwlock_t *, const struct timespec *);
	int (*rwlock_clockrdlock)(pthread_rwlock_t *, clockid_t, const struct timespec *);
	int (*rwlock_wrlock)(pthread_rwlock_t *);
	int (*rwlock_trywrlock)(pthread_rwlock_t *);
	int (*rwlock_timedwrlock)(pthread_rwlock_t *, const struct timespec *);
	int (*rwlock_clockwrlock)(pthread_rwlock_t *, clockid_t, const struct timespec *);
	int (*rwlock_unlock)(pthread_rwlock_t *);
};
extern struct hws_native hws_native;

/* Fill hws_native (start-up thread only, before READY/OFF is published):
 * NULL, or the name of the first function that is missing (natives.c). */
const char *hws_shim_resolve_natives(void);

/* libgomp entry points, resolved on first use (libgomp may be dlopen'ed). */
void *hws_native_gomp(const char *name, const char *version);

/* ---- configuration ---- */
struct hws_shim_config {
	char lock_kind[32];      /* HWSYNC_LOCK, default "auto" */
	char lock_used[32];      /* the kind's name as the library spells it */
	char wait_spec[128];     /* HWSYNC_WAIT, default "adaptive" */
	char barrier_kind[32];   /* HWSYNC_BARRIER, default "auto" (gomp_barrier.c) */
	char rwlock_kind[32];    /* HWSYNC_RWLOCK, default "reader" */
	int rwlock_bravo;        /* default rwlocks run BRAVO, not the reader-preferring
				  * core (rwlock.c); `writer` is only for rwlocks that
				  * ask for it */
	hws_wait_t wait;         /* HWSYNC_WAIT, parsed once: every object waits with it */
	hws_wait_t spin_wait;    /* pthread_spin_*: HWSYNC_WAIT if it never sleeps, else
				  * pause (pause, spin: the spin lock's own backoff) */
	int stats, verbose, trace;
	char trace_file[1200];   /* the name HWSYNC_TRACE became (hws_open_output) */
	int profile;             /* HWSYNC_PROFILE: the per-object profile (profile.c) */
	int omp_ends;            /* HWSYNC_OMP_ENDS: loop and sections ends on the team's
				  * hwsync barrier (gomp_barrier.c) */
	int instrument;          /* HWS_INSTR_*: what the lock paths count or record */
	FILE *trace_out;         /* HWSYNC_TRACE's file (hws_open_output), or NULL */
	unsigned profile_slots;  /* HWSYNC_PROFILE_SLOTS: objects the profile can hold */
	unsigned profile_top;    /* HWSYNC_PROFILE_TOP: rows of the table at exit */
	FILE *profile_file;      /* the profile's JSON file (hws_open_output), or NULL */
	char profile_path[1200]; /* its name; "" for none */
	int pid;                 /* process that read the configuration */
	int err_fd;              /* stderr as it was at start-up (programs such as
				  * xz close stderr before exit) */
};
extern struct hws_shim_config hws_cfg;
/* What default rwlocks run, in the words of the messages. */
static inline const char *hws_cfg_default_rwlock(void)
{
	return hws_cfg.rwlock_bravo ? "bravo" : "reader";
}
/* hws_cfg.instrument: 0 on the plain paths; COUNT: stats or trace, which
 * read the clock on every acquisition; PROFILE: the profile, which reads it
 * only when a thread waits (and for sampled holds). */
enum { HWS_INSTR_COUNT = 1, HWS_INSTR_PROFILE = 2 };
/* Read and check the environment into hws_cfg, opening the output files it
 * names (config.c): 0 when the shim can run, else an errno value after one
 * line on stderr.  Starting what it asks for is startup.c's. */
int hws_shim_configure(void);

enum { HWS_SHIM_UNINIT, HWS_SHIM_BUSY, HWS_SHIM_READY, HWS_SHIM_OFF };
extern _Atomic int hws_shim_state;
int hws_shim_on_slow(void);

/* 1 when objects may be given to the shim now; 0 means native (shim off,
 * or a call made by the shim's own start-up on this thread). */
static inline int hws_shim_on(void)
{
	/* acquire: pairs with the release store that publishes the configuration. */
	int s = atomic_load_explicit(&hws_shim_state, memory_order_acquire);
	if (likely(s == HWS_SHIM_READY))
		return 1;
	if (s == HWS_SHIM_OFF)
		return 0;
	return hws_shim_on_slow();
}

/* 1 once the shim is on with the default set-up: every lock is auto and
 * nothing is counted (no stats, trace or profile).  The lock paths test this
 * one word and go straight to auto's fast path (OpenMP locks before anything
 * else, the 8-byte words in hws_shim_acquire8/release8); anything else
 * (start-up not done, another kind, counting) takes the general path.  Set
 * once at start-up, before the state says READY. */
extern _Atomic int hws_shim_plain_auto;
static inline int hws_shim_plain(void)
{
	/* acquire: pairs with the release store at start-up, after which the
	 * lock kind and the wait policy the fast path uses are set. */
	return atomic_load_explicit(&hws_shim_plain_auto, memory_order_acquire);
}

/* Open an output file of this process for writing (outfile.c): spec with %p
 * (pid), %h (host name) and %% expanded; when a live process holds that name,
 * NAME.<pid>, then NAME.<host>.<pid>.  The file stays locked (flock) until
 * the process ends.  The stream, with the name taken in used, or NULL with
 * errno set (and hws_last_error()). */
FILE *hws_open_output(const char *spec, char *used, size_t used_len);

/* One line on stderr, "hwsync: ..." (write(2), safe before main; say.c). */
void hws_shim_say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* ---- what was passed to the native implementation ---- */
enum hws_pass {
	HWS_PASS_MUTEX_RECURSIVE, HWS_PASS_MUTEX_ERRORCHECK, HWS_PASS_MUTEX_ROBUST,
	HWS_PASS_MUTEX_PI, HWS_PASS_MUTEX_PP, HWS_PASS_MUTEX_PSHARED, HWS_PASS_MUTEX_OTHER,
	HWS_PASS_COND_PSHARED, HWS_PASS_BARRIER_PSHARED,
	HWS_PASS_SEM_PSHARED, HWS_PASS_SEM_NAMED, HWS_PASS_STARTUP,
	HWS_PASS_GOMP_TEAM, HWS_PASS_GOMP_TASKS, HWS_PASS_BARRIER_UNFIT,
	HWS_PASS_RWLOCK_PSHARED, HWS_PASS_RWLOCK_OTHER,
	HWS_PASS_NKINDS
};
void hws_pass(enum hws_pass what);
/* For the stats summary: has `what` been passed through, and its words. */
int hws_pass_seen(enum hws_pass what);
const char *hws_pass_name(enum hws_pass what);

/* ---- the shim's locks: families, and the lock paths ---- */
enum hws_family {
	HWS_FAM_MUTEX, HWS_FAM_OMP_LOCK, HWS_FAM_OMP_NEST, HWS_FAM_OMP_CRITICAL, HWS_FAM_NLOCKS,
	/* families below keep their own counters */
	HWS_FAM_SPIN = HWS_FAM_NLOCKS, HWS_FAM_COND, HWS_FAM_SEM, HWS_FAM_BARRIER,
	HWS_FAM_OMP_BARRIER, HWS_FAM_RWLOCK_RD, HWS_FAM_RWLOCK_WR, HWS_FAM_N
};
extern const char *const hws_family_name[HWS_FAM_N];   /* family.c */

/* This thread asked for asynchronous cancellation (pthread_setcanceltype). */
extern _Thread_local int hws_async_cancel;

/* A cancellation point's check for a pending cancel: none can be pending
 * before any thread has been asked to cancel (shim_lock.c). */
extern _Atomic int hws_cancel_asked;
static inline void hws_testcancel(void)
{
	/* relaxed: see pthread_cancel in shim_lock.c. */
	if (unlikely(atomic_load_explicit(&hws_cancel_asked, memory_order_relaxed)))
		pthread_testcancel();
}

/* The lock paths.  An interposed call goes from its entry point (mutex.c,
 * omp_lock.c) to the inline functions below, which try the lock once in
 * place; a thread that must wait makes one out-of-line call into
 * shim_lock.c, which goes straight to the kind's waiting path
 * (hws_words8_wait, lock_words.h: the library core).  Instrumentation adds
 * no step when it is off (one predicted branch on hws_cfg.instrument).
 * With the profile alone, an acquisition that does not wait is counted
 * inline (profile.h) and reads no clock. */

/* Out of line: blocking acquire of a lock whose try failed, without
 * instrumentation (with asynchronous cancellation on, by a path that leaves
 * no trace in the lock if the thread is cancelled while waiting). */
int hws_shim_wait8(struct hws_words8 *w);

/* Out of line: the instrumented paths.  Exactly one of w8, w4 is given;
 * deadline_ns only for HWS_OP_TIMED.  hws_shim_wait_profiled: a wait after
 * a failed try, with the profile on (and neither stats nor trace);
 * hws_shim_lock_counted and hws_shim_unlock_counted: HWSYNC_STATS and
 * HWSYNC_TRACE, with the profile or without. */
enum hws_lock_op { HWS_OP_ACQUIRE, HWS_OP_TRY, HWS_OP_TIMED };
int hws_shim_wait_profiled(struct hws_words8 *w8, struct hws_words4 *w4, unsigned family,
			   const void *obj, uint64_t deadline_ns, unsigned prof_flags);
int hws_shim_lock_counted(struct hws_words8 *w8, struct hws_words4 *w4, enum hws_lock_op op,
			  unsigned family, const void *obj, uint64_t deadline_ns);
int hws_shim_unlock_counted(struct hws_words8 *w8, struct hws_words4 *w4, unsigned family,
			    const void *obj);

/* Instrumented acquisition: the profile alone counts without a further call,
 * stats and trace go to hws_shim_lock_counted.  Never inlined into the entry
 * points, so that their plain path stays as it is without instrumentation
 * (a tail call, no extra register to save). */
#define HWS_INSTR_PATH static __attribute__((noinline, unused))
HWS_INSTR_PATH int hws_shim_instr8(struct hws_words8 *w, enum hws_lock_op op, unsigned family,
				  const void *obj, uint64_t deadline_ns,
				  struct hws_prof_place *place)
{
	if (hws_cfg.instrument == HWS_INSTR_PROFILE) {
		int rc = hws_words8_try(w);
		if (rc != 0) {
			if (op == HWS_OP_TRY)
				return EBUSY;
			rc = hws_shim_wait_profiled(w, NULL, family, obj, deadline_ns,
						    place ? HWS_PROF_COUNTED : 0);
			if (rc != 0 || !place)
				return rc;
		} else if (!place) {
			hws_prof_acquired(obj, family);
			return 0;
		}
		hws_prof_place_count(obj, family, place);
		return 0;
	}
	return hws_shim_lock_counted(w, NULL, op, family, obj, deadline_ns);
}

HWS_INSTR_PATH int hws_shim_instr4(struct hws_words4 *w, enum hws_lock_op op, unsigned family,
				  const void *obj)
{
	if (hws_cfg.instrument == HWS_INSTR_PROFILE) {
		if (likely(hws_words4_try(w) == 0)) {
			hws_prof_acquired(obj, family);
			return 0;
		}
		if (op == HWS_OP_TRY)
			return EBUSY;
		return hws_shim_wait_profiled(NULL, w, family, obj, HWS_FOREVER, 0);
	}
	return hws_shim_lock_counted(NULL, w, op, family, obj, HWS_FOREVER);
}

/* place: the object's spare words for the profile's in-place count
 * (profile.h), or NULL (then each thread counts in its cache). */
static inline int hws_shim_acquire8(struct hws_words8 *w, unsigned family, const void *obj,
				    struct hws_prof_place *place)
{
	if (likely(hws_shim_plain())) {
		if (likely(hws_auto_core_try(&w->u.autow.core) == 0))
			return 0;
		return hws_shim_wait8(w);
	}
	if (likely(!hws_cfg.instrument)) {
		if (likely(hws_words8_try(w) == 0))
			return 0;
		return hws_shim_wait8(w);
	}
	return hws_shim_instr8(w, HWS_OP_ACQUIRE, family, obj, HWS_FOREVER, place);
}

static inline int hws_shim_try8(struct hws_words8 *w, unsigned family, const void *obj,
				struct hws_prof_place *place)
{
	if (likely(!hws_cfg.instrument))
		return hws_words8_try(w);
	return hws_shim_instr8(w, HWS_OP_TRY, family, obj, 0, place);
}

static inline int hws_shim_timed8(struct hws_words8 *w, unsigned family, const void *obj,
				  uint64_t deadline_ns, struct hws_prof_place *place)
{
	if (likely(!hws_cfg.instrument))
		return hws_words8_timed(w, deadline_ns);
	return hws_shim_instr8(w, HWS_OP_TIMED, family, obj, deadline_ns, place);
}

static inline int hws_shim_release8(struct hws_words8 *w, unsigned family, const void *obj,
				    struct hws_prof_place *place)
{
	if (likely(hws_shim_plain()))
		return hws_auto_core_release(&w->u.autow.core);
	if (likely(!hws_cfg.instrument))
		return hws_words8_release(w);
	if (hws_cfg.instrument == HWS_INSTR_PROFILE) {
		if (place)
			hws_prof_place_release(obj, place);
		else
			hws_prof_released(obj);
		return hws_words8_release(w);
	}
	return hws_shim_unlock_counted(w, NULL, family, obj);
}

static inline int hws_shim_acquire4(struct hws_words4 *w, unsigned family, const void *obj)
{
	if (likely(!hws_cfg.instrument))
		return hws_words4_acquire(w);
	return hws_shim_instr4(w, HWS_OP_ACQUIRE, family, obj);
}

static inline int hws_shim_try4(struct hws_words4 *w, unsigned family, const void *obj)
{
	if (likely(!hws_cfg.instrument))
		return hws_words4_try(w);
	return hws_shim_instr4(w, HWS_OP_TRY, family, obj);
}

static inline int hws_shim_release4(struct hws_words4 *w, unsigned family, const void *obj)
{
	if (likely(!hws_cfg.instrument))
		return hws_words4_release(w);
	if (hws_cfg.instrument == HWS_INSTR_PROFILE) {
		hws_prof_released(obj);
		return hws_words4_release(w);
	}
	return hws_shim_unlock_counted(NULL, w, family, obj);
}

/* ---- stats (per-thread counters, merged at exit) and trace ---- */
struct hws_lock_tally {   /* one lock family, as counted by the lock paths */
	_Atomic uint64_t acquisitions, first_try, after_spin, after_sleep, syscalls, max_spins,
		wait_ns, handoffs, max_wait_ns;
};
struct hws_fam_tally {    /* the other families */
	_Atomic uint64_t ops, contended, wait_ns, timeouts, signals, broadcasts, episodes;
};
struct hws_thread_stats {
	struct hws_lock_tally lock[HWS_FAM_NLOCKS];
	struct hws_fam_tally fam[HWS_FAM_N];
	struct hws_thread_stats *next;   /* registry of every block ever made */
	_Atomic int in_use;              /* a live thread owns it */
};
/* This thread's block (made or reused on first use); NULL if none could be. */
struct hws_thread_stats *hws_my_stats(void);
/* Add v to a counter of this thread's block (only its owner writes it). */
static inline void hws_tally(_Atomic uint64_t *c, uint64_t v)
{
	/* relaxed: one writer; the exit report reads a snapshot. */
	atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + v,
			      memory_order_relaxed);
}
/* Count one event of a family that keeps its own counters (field: ops, ...). */
#define HWS_COUNT(family, field, v)                                              \
	do {                                                                     \
		struct hws_thread_stats *ts_ = hws_my_stats();                   \
		if (ts_)                                                         \
			hws_tally(&ts_->fam[family].field, (v));                 \
	} while (0)
void hws_stats_count_barrier(unsigned family, int last, uint64_t wait_ns);
/* In a forked child (pthread_atfork, startup.c). */
void hws_stats_atfork_child(void);
/* The summary at exit: the process that started the shim, or a forked child
 * that counted something (its own counts only); once per process. */
void hws_stats_report(void);

/* Start recording into f, the file HWSYNC_TRACE names (startup.c). */
void hws_trace_start(FILE *f);
/* A complete event ("ph":"X") on this thread. */
void hws_trace_span(const char *name, const void *obj, uint64_t start_ns, uint64_t end_ns);
void hws_trace_write(void);

/* ---- time conversion ---- */
/* Absolute time on `clock` -> absolute CLOCK_MONOTONIC timespec.  EINVAL for
 * a malformed timespec or an unsupported clock. */
int hws_shim_to_mono(clockid_t clock, const struct timespec *abs, struct timespec *mono);
/* The same, as a wait-layer deadline in ns. */
int hws_shim_deadline_ns(clockid_t clock, const struct timespec *abs, uint64_t *ns);

/* The owner of a pthread_mutex_t, kept in glibc's __kind word (mutex.c). */
#define KIND_SHIM 0x0005A40C
#define KIND_NATIVE_NORMAL 512     /* glibc's PTHREAD_MUTEX_NO_ELISION_NP */
#define KIND_DESTROYED (-1)        /* what glibc's pthread_mutex_destroy leaves */

/* Native mutex calls that work even while the shim starts (bootstrap). */
int hws_shim_native_mutex_lock(pthread_mutex_t *m);
int hws_shim_native_mutex_unlock(pthread_mutex_t *m);
int hws_shim_native_mutex_trylock(pthread_mutex_t *m);

/* Interposed mutex functions, for the condvar (dispatch shim or native). */
int hws_shim_mutex_lock_any(pthread_mutex_t *m);
int hws_shim_mutex_unlock_any(pthread_mutex_t *m);

#endif

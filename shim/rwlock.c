/* pthread_rwlock_*: default and writer-preferring rwlocks run the library's
 * reader-writer cores in place (hwsync/rwlock_*.h); process-shared ones and
 * those glibc made while the shim was starting stay with glibc.
 *
 * The path is straight: the entry point reads the owner tag, then calls the
 * core the tag names, with the process-wide policy; HWSYNC_STATS and
 * HWSYNC_TRACE take the counted path at the end of this file instead.
 *
 * Where the state lives (glibc 2.36, [NPTL-RW]): bytes 0-23 of the 56 are
 * glibc's __readers ... __pad4 on both x86-64 and arm64; the core (at most
 * 24 bytes, BRAVO's) goes there.  glibc writes __flags (the kind) and
 * __shared only at init and reads them on every call; the owner tag goes in
 * __flags:
 *   0              PTHREAD_RWLOCK_INITIALIZER, zeroed memory: a default
 *                  rwlock not claimed yet; the first call claims it (CAS)
 *   2              PTHREAD_RWLOCK_WRITER_NONRECURSIVE_INITIALIZER_NP (glibc's
 *                  PREFER_WRITER_NONRECURSIVE): claimed the same way
 *   TAG_*          ours: the core the tag names, all zero when free
 *   1, other       glibc's (initialised by glibc while the shim was off)
 * and __shared != 0 (process-shared, or pinned to glibc during start-up:
 * glibc only picks shared futex calls from it, which work for a private
 * lock too) keeps a 0 or 2 with glibc.  The tags fit the one byte __flags
 * is on arm64.  Nothing is allocated per rwlock.
 *
 * Kinds: default rwlocks (glibc's PREFER_READER_NP and PREFER_WRITER_NP,
 * which glibc also lets read recursively) run the reader-preferring core,
 * or BRAVO over it with HWSYNC_RWLOCK=bravo; PREFER_WRITER_NONRECURSIVE
 * rwlocks always run the writer-preferring core, whatever HWSYNC_RWLOCK
 * says: writer preference is never applied to a default rwlock (its
 * recursive readers would deadlock), and never taken from one that asked.
 */
#include <errno.h>
#include <string.h>
#include <hwsync/rwlock.h>
#include <hwsync/rwlock_bravo.h>
#include <hwsync/rwlock_reader.h>
#include <hwsync/rwlock_writer.h>
#include "shim/common.h"
#include "shim/config.h"
#include "shim/family.h"
#include "shim/natives.h"
#include "shim/passthrough.h"
#include "shim/profile.h"
#include "shim/startup.h"
#include "shim/stats.h"
#include "shim/time.h"
#include "shim/trace.h"

typedef __typeof__(((pthread_rwlock_t *)0)->__data.__flags) flags_t;
typedef __typeof__(((pthread_rwlock_t *)0)->__data.__shared) shared_t;
#define FLAGS(rw) ((_Atomic flags_t *)&(rw)->__data.__flags)
#define SHARED(rw) ((_Atomic shared_t *)&(rw)->__data.__shared)

enum { TAG_READER = 0x51, TAG_BRAVO = 0x52, TAG_WRITER = 0x53 };
#define GLIBC_WRITER_NR 2   /* PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP */

union rw_core {
	hws_rw_reader_core_t reader;
	hws_rw_writer_core_t writer;
	hws_rw_bravo_core_t bravo;
};
#define CORE(rw) ((union rw_core *)(void *)(rw))

_Static_assert(sizeof(union rw_core) <= 24 &&
	       __builtin_offsetof(pthread_rwlock_t, __data.__flags) >= 24 &&
	       __builtin_offsetof(pthread_rwlock_t, __data.__shared) >= 24,
	       "the core sits before glibc's __flags and __shared");
_Static_assert(GLIBC_WRITER_NR == PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP, "glibc kinds");

/* The tag a default rwlock gets: the core HWSYNC_RWLOCK chose for them. */
static inline flags_t default_tag(void)
{
	return hws_cfg.rwlock_bravo ? TAG_BRAVO : TAG_READER;
}

static inline int is_tag(unsigned f)
{
	return f - TAG_READER <= TAG_WRITER - TAG_READER;
}

static void pin_native(pthread_rwlock_t *rw)
{
	/* relaxed: read by glibc and by claim_slow; the lock is not in use. */
	atomic_store_explicit(SHARED(rw), 1, memory_order_relaxed);
	hws_pass(HWS_PASS_STARTUP);
}

static unsigned claim_slow(pthread_rwlock_t *rw, unsigned f)
{
	for (;;) {
		if (is_tag(f))
			return f;
		/* relaxed: written at init (or by pin_native) only. */
		if ((f != 0 && f != GLIBC_WRITER_NR) ||
		    atomic_load_explicit(SHARED(rw), memory_order_relaxed))
			return 0;
		if (!hws_shim_on()) {
			/* acquire: pairs with the release publishing the state. */
			if (atomic_load_explicit(&hws_shim_state, memory_order_acquire) !=
			    HWS_SHIM_OFF)
				pin_native(rw);   /* first used by the shim's start-up */
			return 0;
		}
		flags_t want = f == GLIBC_WRITER_NR ? TAG_WRITER : default_tag(),
			old = (flags_t)f;
		/* relaxed: claiming publishes nothing (the core stays zero). */
		if (atomic_compare_exchange_strong_explicit(FLAGS(rw), &old, want,
							    memory_order_relaxed,
							    memory_order_relaxed))
			return want;
		f = old;
	}
}

/* The owner tag of rw, or 0 when glibc owns it. */
static inline unsigned tag_of(pthread_rwlock_t *rw)
{
	/* relaxed: the tag alone decides; a claimed core is zero or was written
	 * through the core's own acquire/release. */
	unsigned f = atomic_load_explicit(FLAGS(rw), memory_order_relaxed);
	if (likely(is_tag(f)))
		return f;
	return claim_slow(rw, f);
}

/* ---- the cores, by tag ---- */
/* Every lock call that succeeded begins a hold, and every unlock that let
 * go ends one, for the kernel's time-slice extension (arch.h,
 * hws_slice_held and hws_slice_let_go; one test where it is off). */

HWS_OUTLINE int core_rd_other(pthread_rwlock_t *rw, unsigned tag, uint64_t dl)
{
	const hws_wait_t *w = &hws_cfg.wait;
	if (tag == TAG_BRAVO)
		return hws_slice_held(hws_rw_bravo_core_rdlock(&CORE(rw)->bravo, w, dl));
	return hws_slice_held(hws_rw_writer_core_rdlock(&CORE(rw)->writer, w, dl));
}

/* As core_unlock: the default kind in place, the others a call away. */
static inline int core_rd(pthread_rwlock_t *rw, unsigned tag, uint64_t dl)
{
	if (likely(tag == TAG_READER))
		return hws_slice_held(hws_rw_reader_core_rdlock(&CORE(rw)->reader,
								&hws_cfg.wait, dl));
	return core_rd_other(rw, tag, dl);
}

static inline int core_tryrd(pthread_rwlock_t *rw, unsigned tag)
{
	if (tag == TAG_READER)
		return hws_slice_held(hws_rw_reader_core_tryrdlock(&CORE(rw)->reader));
	if (tag == TAG_BRAVO)
		return hws_slice_held(hws_rw_bravo_core_tryrdlock(&CORE(rw)->bravo));
	return hws_slice_held(hws_rw_writer_core_tryrdlock(&CORE(rw)->writer));
}

static inline int core_wr(pthread_rwlock_t *rw, unsigned tag, uint64_t dl)
{
	const hws_wait_t *w = &hws_cfg.wait;
	if (tag == TAG_READER)
		return hws_slice_held(hws_rw_reader_core_wrlock(&CORE(rw)->reader, w, dl));
	if (tag == TAG_BRAVO)
		return hws_slice_held(hws_rw_bravo_core_wrlock(&CORE(rw)->bravo, w, dl));
	return hws_slice_held(hws_rw_writer_core_wrlock(&CORE(rw)->writer, w, dl));
}

static inline int core_trywr(pthread_rwlock_t *rw, unsigned tag)
{
	if (tag == TAG_READER)
		return hws_slice_held(hws_rw_reader_core_trywrlock(&CORE(rw)->reader));
	if (tag == TAG_BRAVO)
		return hws_slice_held(hws_rw_bravo_core_trywrlock(&CORE(rw)->bravo));
	return hws_slice_held(hws_rw_writer_core_trywrlock(&CORE(rw)->writer));
}

HWS_OUTLINE int core_unlock_other(pthread_rwlock_t *rw, unsigned tag)
{
	if (tag == TAG_BRAVO)
		return hws_slice_let_go(hws_rw_bravo_core_unlock(&CORE(rw)->bravo));
	return hws_slice_let_go(hws_rw_writer_core_unlock(&CORE(rw)->writer));
}

/* The default kind's unlock in place, the others a call away: together
 * they made the unlock keep three registers on the stack. */
static inline int core_unlock(pthread_rwlock_t *rw, unsigned tag)
{
	if (likely(tag == TAG_READER))
		return hws_slice_let_go(hws_rw_reader_core_unlock(&CORE(rw)->reader));
	return core_unlock_other(rw, tag);
}

enum op { RD, TRYRD, WR, TRYWR };
/* Out of line: inlined, their frames made every entry point save and
 * restore six registers on the plain path too. */
HWS_OUTLINE int counted_rw(pthread_rwlock_t *rw, unsigned tag, enum op op, uint64_t dl);
HWS_OUTLINE int counted_unlock(pthread_rwlock_t *rw, unsigned tag);

/* ---- entry points ---- */
HWS_EXPORT int pthread_rwlock_init(pthread_rwlock_t *rw, const pthread_rwlockattr_t *a)
{
	int on = hws_shim_on(), kind = PTHREAD_RWLOCK_DEFAULT_NP, pshared = PTHREAD_PROCESS_PRIVATE;
	if (a) {
		pthread_rwlockattr_getkind_np(a, &kind);
		pthread_rwlockattr_getpshared(a, &pshared);
	}
	int mine = on && pshared == PTHREAD_PROCESS_PRIVATE &&
		   (kind == PTHREAD_RWLOCK_PREFER_READER_NP || kind == PTHREAD_RWLOCK_PREFER_WRITER_NP ||
		    kind == PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
	if (!mine) {
		if (on)
			hws_pass(pshared != PTHREAD_PROCESS_PRIVATE ? HWS_PASS_RWLOCK_PSHARED
								    : HWS_PASS_RWLOCK_OTHER);
		int rc = hws_native.rwlock_init ? hws_native.rwlock_init(rw, a) : ENOSYS;
		/* relaxed: init is not concurrent with use. */
		if (rc == 0 && !on && atomic_load_explicit(&hws_shim_state,
							   memory_order_relaxed) != HWS_SHIM_OFF)
			pin_native(rw);
		return rc;
	}
	if (unlikely(hws_cfg.profile))
		hws_prof_end(rw);   /* a new life, even at an address used before */
	memset(rw, 0, sizeof *rw);
	/* relaxed: init is not concurrent with use; the core is zero. */
	atomic_store_explicit(FLAGS(rw), kind == PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP ?
				      TAG_WRITER : default_tag(),
			      memory_order_relaxed);
	return 0;
}

HWS_EXPORT int pthread_rwlock_destroy(pthread_rwlock_t *rw)
{
	/* relaxed: destroy is not concurrent with use. */
	if (!is_tag(atomic_load_explicit(FLAGS(rw), memory_order_relaxed)))
		return hws_native.rwlock_destroy ? hws_native.rwlock_destroy(rw) : 0;
	/* As glibc: nothing to check.  Back to an initializer of its kind. */
	flags_t f = atomic_load_explicit(FLAGS(rw), memory_order_relaxed) == TAG_WRITER ?
			    GLIBC_WRITER_NR : 0;
	if (unlikely(hws_cfg.profile))
		hws_prof_end(rw);
	memset(rw, 0, sizeof *rw);
	atomic_store_explicit(FLAGS(rw), f, memory_order_relaxed);
	return 0;
}

HWS_EXPORT HWS_FETCH_ALIGNED int pthread_rwlock_rdlock(pthread_rwlock_t *rw)
{
	unsigned tag = tag_of(rw);
	if (likely(tag)) {
		if (likely(!hws_cfg.instrument))
			return core_rd(rw, tag, HWS_FOREVER);
		return counted_rw(rw, tag, RD, HWS_FOREVER);
	}
	return hws_native.rwlock_rdlock(rw);
}

HWS_EXPORT int pthread_rwlock_tryrdlock(pthread_rwlock_t *rw)
{
	unsigned tag = tag_of(rw);
	if (likely(tag)) {
		if (likely(!hws_cfg.instrument))
			return core_tryrd(rw, tag);
		return counted_rw(rw, tag, TRYRD, 0);
	}
	return hws_native.rwlock_tryrdlock(rw);
}

HWS_EXPORT HWS_FETCH_ALIGNED int pthread_rwlock_wrlock(pthread_rwlock_t *rw)
{
	unsigned tag = tag_of(rw);
	if (likely(tag)) {
		if (likely(!hws_cfg.instrument))
			return core_wr(rw, tag, HWS_FOREVER);
		return counted_rw(rw, tag, WR, HWS_FOREVER);
	}
	return hws_native.rwlock_wrlock(rw);
}

HWS_EXPORT int pthread_rwlock_trywrlock(pthread_rwlock_t *rw)
{
	unsigned tag = tag_of(rw);
	if (likely(tag)) {
		if (likely(!hws_cfg.instrument))
			return core_trywr(rw, tag);
		return counted_rw(rw, tag, TRYWR, 0);
	}
	return hws_native.rwlock_trywrlock(rw);
}

HWS_EXPORT HWS_FETCH_ALIGNED int pthread_rwlock_unlock(pthread_rwlock_t *rw)
{
	unsigned tag = tag_of(rw);
	if (likely(tag)) {
		if (likely(!hws_cfg.instrument))
			return core_unlock(rw, tag);
		return counted_unlock(rw, tag);
	}
	return hws_native.rwlock_unlock(rw);
}

/* glibc's timed rwlock calls check the clock and the timespec first, even
 * when the lock is free (EINVAL), then the write owner (EDEADLK); a time in
 * the past is no error: the lock is taken if it is free, else ETIMEDOUT. */
static int timed_lock(pthread_rwlock_t *rw, unsigned tag, int write, clockid_t clock,
		      const struct timespec *abs)
{
	uint64_t dl;
	int rc;
	if (!abs || abs->tv_nsec < 0 || abs->tv_nsec >= 1000000000L ||
	    (clock != CLOCK_REALTIME && clock != CLOCK_MONOTONIC))
		return EINVAL;
	if (abs->tv_sec < 0)
		dl = 0;
	else if ((rc = hws_shim_deadline_ns(clock, abs, &dl)))
		return rc;
	if (likely(!hws_cfg.instrument))
		return write ? core_wr(rw, tag, dl) : core_rd(rw, tag, dl);
	return counted_rw(rw, tag, write ? WR : RD, dl);
}

HWS_EXPORT int pthread_rwlock_timedrdlock(pthread_rwlock_t *rw, const struct timespec *abs)
{
	unsigned tag = tag_of(rw);
	if (tag)
		return timed_lock(rw, tag, 0, CLOCK_REALTIME, abs);
	return hws_native.rwlock_timedrdlock(rw, abs);
}

HWS_EXPORT int pthread_rwlock_timedwrlock(pthread_rwlock_t *rw, const struct timespec *abs)
{
	unsigned tag = tag_of(rw);
	if (tag)
		return timed_lock(rw, tag, 1, CLOCK_REALTIME, abs);
	return hws_native.rwlock_timedwrlock(rw, abs);
}

HWS_EXPORT int pthread_rwlock_clockrdlock(pthread_rwlock_t *rw, clockid_t clock,
					  const struct timespec *abs)
{
	unsigned tag = tag_of(rw);
	if (tag)
		return timed_lock(rw, tag, 0, clock, abs);
	return hws_native.rwlock_clockrdlock(rw, clock, abs);
}

HWS_EXPORT int pthread_rwlock_clockwrlock(pthread_rwlock_t *rw, clockid_t clock,
					  const struct timespec *abs)
{
	unsigned tag = tag_of(rw);
	if (tag)
		return timed_lock(rw, tag, 1, clock, abs);
	return hws_native.rwlock_clockwrlock(rw, clock, abs);
}

/* ---- HWSYNC_STATS, HWSYNC_TRACE and HWSYNC_PROFILE ----
 * Read and write acquisitions count into this thread's block (families
 * pthread_rwlock read / write): ops, contended (the first try failed),
 * wait_ns, timeouts.  The trace draws a span for each contended wait, and
 * one for each write lock held (a thread holds few write locks at once).
 * The profile (profile.h) keeps one entry per rwlock, reads and writes
 * together, and reads the clock only when a thread waits (stats and trace
 * read it on every acquisition). */
#define WHELD_MAX 8
static _Thread_local struct {
	const void *obj;
	uint64_t since;
} wheld[WHELD_MAX];
static _Thread_local unsigned nwheld;

HWS_OUTLINE int counted_rw(pthread_rwlock_t *rw, unsigned tag, enum op op, uint64_t dl)
{
	int write = op == WR || op == TRYWR;
	unsigned fam = write ? HWS_FAM_RWLOCK_WR : HWS_FAM_RWLOCK_RD;
	struct hws_thread_stats *ts = hws_cfg.stats ? hws_my_stats() : NULL;
	uint64_t t0 = hws_cfg.instrument & HWS_INSTR_COUNT ? hws_now_ns() : 0, t1 = t0;
	int rc = write ? core_trywr(rw, tag) : core_tryrd(rw, tag), waited = 0;

	if (rc == EBUSY && (op == RD || op == WR)) {
		waited = 1;
		uint64_t p0 = hws_cfg.profile ? hws_prof_wait_begin(rw, fam) : 0;
		if (!t0)
			t0 = p0;
		rc = write ? core_wr(rw, tag, dl) : core_rd(rw, tag, dl);
		if (hws_cfg.profile)
			hws_prof_wait_end(rw, fam, p0, rc, 0);
		t1 = hws_now_ns();
		if (hws_cfg.trace)
			hws_trace_span(write ? "rwlock write wait" : "rwlock read wait", rw, t0, t1);
	} else if (rc == 0 && hws_cfg.profile) {
		hws_prof_acquired(rw, fam);
	}
	if (ts) {
		if (rc == 0) {
			hws_tally(&ts->fam[fam].ops, 1);
			if (waited) {
				hws_tally(&ts->fam[fam].contended, 1);
				hws_tally(&ts->fam[fam].wait_ns, t1 - t0);
			}
		} else if (rc == ETIMEDOUT) {
			hws_tally(&ts->fam[fam].timeouts, 1);
		}
	}
	if (rc == 0 && write && hws_cfg.trace && nwheld < WHELD_MAX) {
		wheld[nwheld].obj = rw;
		wheld[nwheld++].since = t1;
	}
	return rc;
}

HWS_OUTLINE int counted_unlock(pthread_rwlock_t *rw, unsigned tag)
{
	if (hws_cfg.profile)
		hws_prof_released(rw);
	for (unsigned i = nwheld; i-- > 0;)
		if (wheld[i].obj == rw) {
			hws_trace_span("rwlock write held", rw, wheld[i].since, hws_now_ns());
			wheld[i] = wheld[--nwheld];
			break;
		}
	return core_unlock(rw, tag);
}

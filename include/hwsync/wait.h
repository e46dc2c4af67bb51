/* hwsync wait layer: wait until a 32-bit word changes, under a named policy.
 *
 *   hws_wait_t w;
 *   if (hws_wait_init(&w, "umwait:state=c0.1,max=100us") != 0)
 *           fprintf(stderr, "%s\n", hws_last_error());   // names what is missing
 *   ...
 *   while (atomic_load(&word) == old)
 *           hws_wait_while_eq32(&word, old, &w, HWS_FOREVER);
 *   ...
 *   atomic_store(&word, new);
 *   hws_wake32(&word, HWS_WAKE_ALL);
 *
 * Contract
 * - hws_wait_while_eq32() returns 0 once *addr != old was observed, ETIMEDOUT
 *   when the CLOCK_MONOTONIC deadline (ns) passed first, EINVAL for a policy
 *   that was not initialised.  It handles EINTR
 *   and spurious kernel wake-ups itself.  The load that saw the change is an
 *   acquire load, so data written before the change is visible.
 * - hws_wake32() must be called after the store that changes the word.  It
 *   wakes up to n threads sleeping in the kernel on addr.  When none sleeps it
 *   costs a fence and one load of a sleeper counter: no system call.
 *   hws_wake32_after_rmw() is the form for a word changed by a seq_cst
 *   read-modify-write, which needs no fence of its own.
 *   Spinning and hardware-wait policies need no wake at all; calling it is
 *   always correct and is required whenever a waiter may use futex or adaptive.
 *
 * Sleeper accounting: a waiter that goes to the kernel first increments a
 * counter in a small hash table keyed by the word's address (seq_cst), then
 * re-reads the word and sleeps only if it still equals old.  The waker stores
 * the word, issues a seq_cst fence and reads the counter.  By the store-buffer
 * ([DEKKER]) argument at least one side sees the other's write: either the waiter
 * sees the new value and does not sleep, or the waker sees a sleeper and calls
 * FUTEX_WAKE.  Hash collisions only cost an unneeded system call.  A sleeper
 * that FUTEX_WAKE woke is taken off the counter by its waker (the number the
 * call returns); one that timed out, was interrupted or never slept takes
 * itself off.  So a woken thread touches no counter on its way back, and the
 * count is too high only for a moment, which costs a wake call at most.
 */
#ifndef HWSYNC_WAIT_H
#define HWSYNC_WAIT_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <hwsync/arch.h>   /* HWS_FOREVER, hws_now_ns, hws_last_error */

#ifdef __cplusplus
extern "C" {
#endif

#define HWS_WAKE_ALL UINT32_MAX

enum hws_wait_kind {
	HWS_WAIT_SPIN,        /* plain re-read */
	HWS_WAIT_PAUSE,       /* re-read with PAUSE/YIELD */
	HWS_WAIT_BACKOFF,     /* exponential backoff in PAUSEs, capped */
	HWS_WAIT_DELAY_DIV,   /* integer division between reads ([T2SPIN]) */
	HWS_WAIT_DELAY_FDIV,  /* FP division between reads */
	HWS_WAIT_DELAY_CAS,   /* CAS on a private line between reads */
	HWS_WAIT_DELAY_MISS,  /* cache-missing load between reads */
	HWS_WAIT_YIELD,       /* sched_yield between reads */
	HWS_WAIT_FUTEX,       /* FUTEX_WAIT / FUTEX_WAKE, private */
	HWS_WAIT_UMWAIT,      /* UMONITOR/UMWAIT (Intel WAITPKG) */
	HWS_WAIT_TPAUSE,      /* TPAUSE timed pause (Intel WAITPKG) */
	HWS_WAIT_MWAITX,      /* MONITORX/MWAITX (AMD) */
	HWS_WAIT_WFE,         /* LDAXR + WFE/WFET (arm64) */
	HWS_WAIT_KMWAIT,      /* privileged MONITOR/MWAIT via the hwsync driver */
	HWS_WAIT_ADAPTIVE,    /* spin, then hardware wait, then futex */
	HWS_WAIT_NKINDS
};

/* A parsed and resolved policy.  Plain data: copy it freely. */
typedef struct hws_wait {
	enum hws_wait_kind kind;
	unsigned state;        /* umwait/tpause: 0 = C0.2, 1 = C0.1 */
	uint32_t backoff_min;  /* backoff: first pause count */
	uint32_t backoff_max;  /* backoff: cap */
	uint32_t ops;          /* delay-*: operations between two reads */
	uint64_t max_ns;       /* hardware waits: longest single wait */
	uint64_t spin_ns;      /* adaptive: spin budget before blocking; 0 = auto, the
				* process's budget at each wait (see below) */
	uint64_t pause_ns;     /* adaptive: PAUSE polling before yield polling;
				* UINT64_MAX = auto, likewise */
	enum hws_wait_kind hw; /* adaptive: hardware stage (or HWS_WAIT_NKINDS = none) */
	uint64_t hw_ns;        /* adaptive: time in the hardware stage before futex */
} hws_wait_t;

/* Parse SPEC ("name[:key=value,...]"; NULL or "" means "adaptive") and check
 * the machine supports it.  Returns 0, EINVAL (malformed: hws_last_error()
 * quotes the bad part) or ENOTSUP (this machine lacks it: hws_last_error()
 * names the missing CPUID bit, kernel setting or driver).  Never substitutes
 * another policy. */
int hws_wait_init(hws_wait_t *w, const char *spec);

/* Parse only (no availability check): for tools that describe policies. */
int hws_wait_parse(hws_wait_t *w, const char *spec);

/* Is this kind usable here?  0, or ENOTSUP with the reason in *why. */
int hws_wait_available(enum hws_wait_kind kind, const char **why);

const char *hws_wait_kind_name(enum hws_wait_kind kind);
/* NULL-terminated list of every policy name, in enum hws_wait_kind order
 * (entry k is hws_wait_kind_name(k)), whether available here or not. */
const char *const *hws_wait_kinds(void);
/* Canonical spec string for w (all parameters spelled out). */
int hws_wait_format(const hws_wait_t *w, char *buf, size_t len);

int hws_wait_while_eq32(const _Atomic uint32_t *addr, uint32_t old,
			const hws_wait_t *w, uint64_t deadline_ns);
/* The same, but a sleep in the kernel (futex, or adaptive's last stage)
 * interrupted by a signal handler ends the wait with EINTR, as sem_wait does.
 * Whether the kernel restarts the sleep instead follows its usual rules
 * (SA_RESTART resumes an untimed sleep); a polling stage cannot see signals. */
int hws_wait_while_eq32_intr(const _Atomic uint32_t *addr, uint32_t old,
			     const hws_wait_t *w, uint64_t deadline_ns);
/* Returns 1 when it made a system call (someone may be asleep), else 0. */
int hws_wake32(_Atomic uint32_t *addr, uint32_t n);

/* The sleeper counters (see "Sleeper accounting" above): one cache line
 * each, chosen by a hash of the address.  Public only for the inline test
 * of hws_wake32_after_rmw; `woke` belongs to the wait layer. */
#define HWS_WAIT_BUCKETS 256
struct hws_wait_bucket {
	_Atomic uint32_t n;        /* threads that may sleep on an address here */
	_Atomic uint64_t woke;     /* the wait layer's hand-off stamp */
} HWS_ALIGNED_LINE;
extern struct hws_wait_bucket hws_wait_buckets[HWS_WAIT_BUCKETS];

static inline uint64_t hws_wait_addr_hash(const void *addr)
{
	uint64_t x = (uintptr_t)addr >> 2;
	x ^= x >> 17;
	return x * 0x9e3779b97f4a7c15ull;
}

static inline struct hws_wait_bucket *hws_wait_bucket_of(const void *addr)
{
	return &hws_wait_buckets[(hws_wait_addr_hash(addr) >> 40) % HWS_WAIT_BUCKETS];
}

/* The system call of a wake (hws_wake32_after_rmw's slow path). */
int hws_wake32_call(_Atomic uint32_t *addr, uint32_t n);

/* hws_wake32 for a caller whose change of *addr was a seq_cst read-modify-
 * write (exchange, CAS, fetch-add): that operation already orders the change
 * before the read of the sleeper counter, so no fence is issued, and a wake
 * with nobody asleep is one inline load. */
static inline int hws_wake32_after_rmw(_Atomic uint32_t *addr, uint32_t n)
{
	/* seq_cst: with the caller's seq_cst read-modify-write of *addr and the
	 * sleeper's seq_cst increment and re-read, all four operations are in
	 * the single total order, so one side sees the other ([DEKKER]) as with
	 * the fence of hws_wake32. */
	if (__builtin_expect(atomic_load_explicit(&hws_wait_bucket_of(addr)->n,
						  memory_order_seq_cst) == 0, 1))
		return 0;
	return hws_wake32_call(addr, n);
}

/* The adaptive policy's numbers and where they came from.  Nothing is
 * measured when a program starts: the policy uses, best first, a measurement
 * made in this process by hws_adaptive_calibration(), the per-machine cache
 * (written by hws_adaptive_cache_write, i.e. hwsync info --calibrate), the
 * hand-off learned from the process's own futex wake-ups (after 5), or a
 * conservative default (docs/wait-policies.md). */
enum hws_adaptive_source {
	HWS_ADAPTIVE_DEFAULT,     /* nothing known yet */
	HWS_ADAPTIVE_LEARNED,     /* median of the first 5, then of the last 16,
				   * timed wake-ups of this process */
	HWS_ADAPTIVE_CACHE,       /* the per-machine cache */
	HWS_ADAPTIVE_MEASURED,    /* measured in this process with a helper thread */
};
struct hws_adaptive_calibration {
	uint64_t futex_wake_ns;   /* FUTEX_WAKE with no sleeper (0: not measured) */
	uint64_t futex_wait_ns;   /* FUTEX_WAIT that returns at once, EAGAIN (0: not measured) */
	uint64_t yield_ns;        /* sched_yield (0: not measured) */
	uint64_t handoff_ns;      /* FUTEX_WAKE until the sleeper runs (0: not known) */
	uint64_t spin_ns;         /* chosen spin budget */
	uint64_t pause_ns;        /* of which PAUSE polling, the rest yield polling */
	enum hws_wait_kind hw;    /* chosen hardware stage, NKINDS = none */
	char rule[256];           /* the rule in words, for hwsync info */
	enum hws_adaptive_source source;
	uint64_t samples;         /* wake-ups this process has timed so far */
};
/* Measure now, once per process, with a helper thread (~1 ms; the first call
 * in a process blocks for it), and use the result in this process from then
 * on.  For tools: a program that merely uses the adaptive policy never needs it. */
const struct hws_adaptive_calibration *hws_adaptive_calibration(void);
/* What the adaptive policy uses right now (measures nothing). */
void hws_adaptive_current(struct hws_adaptive_calibration *out);
const char *hws_adaptive_source_name(enum hws_adaptive_source s);
/* The per-machine cache file: $HWSYNC_CACHE_DIR, else $XDG_CACHE_HOME/hwsync,
 * else $HOME/.cache/hwsync, then adaptive-<hash of the machine key>.  0, or
 * ENOENT when none of the variables gives a directory (hws_last_error says). */
int hws_adaptive_cache_path(char *buf, size_t len);
/* Store c's measured fields (c->handoff_ns must be set) for this machine,
 * creating the directory; path (if not NULL) receives the file name.  0 or an
 * errno value with hws_last_error() naming the file and the reason. */
int hws_adaptive_cache_write(const struct hws_adaptive_calibration *c, char *path, size_t len);
/* What reading the cache in this process found, in words. */
const char *hws_adaptive_cache_state(void);

#ifdef __cplusplus
}
#endif
#endif

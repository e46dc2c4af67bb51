/* Internal interfaces of the wait layer (not installed). */
#ifndef HWS_WAIT_INTERNAL_H
#define HWS_WAIT_INTERNAL_H

#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>
#include <hwsync/arch.h>
#include <hwsync/wait.h>
#include "arch/internal.h"

/* adaptive's hardware stage before hws_wait_init resolves it ("hw=auto");
 * HWS_WAIT_NKINDS there means "none". */
#define HWS_WAIT_HW_AUTO ((enum hws_wait_kind)(HWS_WAIT_NKINDS + 1))

/* A policy handed to a create function: 0, or EINVAL with a message naming
 * `who` when it is NULL or not a policy (never made by hws_wait_init or
 * hws_wait_parse), ENOTSUP when it needs what this machine lacks.  Used as
 * given otherwise. */
int hws_wait_check(const hws_wait_t *w, const char *who);

/* One backend a file; each returns 0 once *a != old, or ETIMEDOUT. */
typedef int (*hws_wait_fn)(const _Atomic uint32_t *a, uint32_t old,
			   const hws_wait_t *w, uint64_t deadline_ns);
int hws_wait_spin(const _Atomic uint32_t *, uint32_t, const hws_wait_t *, uint64_t);
int hws_wait_pause(const _Atomic uint32_t *, uint32_t, const hws_wait_t *, uint64_t);
int hws_wait_backoff(const _Atomic uint32_t *, uint32_t, const hws_wait_t *, uint64_t);
int hws_wait_delay(const _Atomic uint32_t *, uint32_t, const hws_wait_t *, uint64_t);
int hws_wait_yield(const _Atomic uint32_t *, uint32_t, const hws_wait_t *, uint64_t);
int hws_wait_futex(const _Atomic uint32_t *, uint32_t, const hws_wait_t *, uint64_t);
int hws_wait_umwait(const _Atomic uint32_t *, uint32_t, const hws_wait_t *, uint64_t);
int hws_wait_tpause(const _Atomic uint32_t *, uint32_t, const hws_wait_t *, uint64_t);
int hws_wait_mwaitx(const _Atomic uint32_t *, uint32_t, const hws_wait_t *, uint64_t);
int hws_wait_wfe(const _Atomic uint32_t *, uint32_t, const hws_wait_t *, uint64_t);
int hws_wait_kmwait(const _Atomic uint32_t *, uint32_t, const hws_wait_t *, uint64_t);
int hws_wait_adaptive(const _Atomic uint32_t *, uint32_t, const hws_wait_t *, uint64_t);

/* Availability of the machine-dependent backends: 0 or ENOTSUP with *why. */
int hws_umwait_available(const char **why);
int hws_tpause_available(const char **why);
int hws_mwaitx_available(const char **why);
int hws_wfe_available(const char **why);
int hws_kmwait_available(const char **why);

/* Sleep in the kernel while *a == old (one FUTEX_WAIT, with sleeper
 * accounting).  Returns 0 (woken, changed, interrupted or spurious) or
 * ETIMEDOUT. */
int hws_futex_sleep(const _Atomic uint32_t *a, uint32_t old, uint64_t deadline_ns);
/* The same for a class of sleepers (FUTEX_WAIT_BITSET with `bits`) whose
 * caller marks them in the word itself: no sleeper accounting, and only one
 * such sleep in eight per thread timed for the hand-off (futex.c), none
 * where may_time is false. */
int hws_futex_sleep_bits(const _Atomic uint32_t *a, uint32_t old, uint64_t deadline_ns,
			 uint32_t bits, bool may_time);
/* Sleep in the kernel until deadline_ns (CLOCK_MONOTONIC) with nobody to
 * wake us earlier: a waiter that has decided to stay out of the way. */
void hws_nap_until(uint64_t deadline_ns);
/* Wake up to n sleepers of hws_futex_sleep_bits on addr whose bits
 * intersect `bits`, without the sleeper counters (the caller's mark in the
 * word said someone sleeps); the number woken. */
int hws_futex_wake_bits(_Atomic uint32_t *addr, uint32_t n, uint32_t bits);

/* ---- the policies' table (kinds.c) ---- */

/* The parameters a policy takes (hws_wait_kind_flags). */
enum {
	P_BACKOFF = 1 << 0,   /* min=, max= (pause counts) */
	P_OPS = 1 << 1,       /* ops= (delay loops) */
	P_STATE = 1 << 2,     /* state=c0.1|c0.2 */
	P_MAX = 1 << 3,       /* max= (longest single hardware wait) */
	P_ADAPTIVE = 1 << 4,  /* spin=, pause=, hw=, hwtime= */
	P_HWSTAGE = 1 << 5,   /* may be adaptive's hardware stage (hw=) */
};
unsigned hws_wait_kind_flags(enum hws_wait_kind k);
/* The names of the policies whose flags include `mask` (all for 0), joined
 * by ", " and by `last` before the last one, in buf. */
const char *hws_wait_kind_names(unsigned mask, const char *last, char *buf, size_t len);
/* The kind named by the len bytes at s: 0, or -1 when none is. */
int hws_wait_kind_by_name(const char *s, size_t len, enum hws_wait_kind *out);

/* ---- the adaptive policy's budget (adaptive_*.c) ---- */

/* Load the per-machine cache (once) and choose the hardware stage: what
 * hws_wait_init does for an adaptive policy.  Never measures, never starts a
 * thread, never prints. */
void hws_adaptive_prepare(void);
/* The first available of umwait, mwaitx, wfe, kmwait, or HWS_WAIT_NKINDS. */
enum hws_wait_kind hws_adaptive_hw(void);
/* The process's budget now, for spin=auto and pause=auto (pause <= spin is
 * not guaranteed when only one of them is auto). */
void hws_adaptive_budget(uint64_t *spin_ns, uint64_t *pause_ns);
/* Fill spin_ns, pause_ns, hw and rule of c from its measured fields and
 * source by the one rule. */
void hws_adaptive_rule(struct hws_adaptive_calibration *c);
/* A helper-thread measurement for this process (takes precedence). */
void hws_adaptive_use(const struct hws_adaptive_calibration *c);
/* 1 when waits on addr through adaptive now sleep without spinning (what
 * its learning slot says; the next one may still be a probe), else 0. */
int hws_adaptive_skips(const void *addr);
/* One hand-off timed on a real wake-up; a new median every 16. */
void hws_adaptive_learn(uint64_t handoff_ns);
void hws_adaptive_set_learned(uint64_t handoff_ns, uint64_t samples);
/* Read the per-machine cache: 0 when it exists, is well-formed and was
 * written for this machine (the measured fields of *out are filled), else
 * an errno value.  *state says what happened, in words, either way. */
#define HWS_CACHE_STATE_MAX 4352
int hws_adaptive_cache_read(struct hws_adaptive_calibration *out, char *state, size_t len);

/* A 32-bit learning slot for the object at addr, from a fixed-size table
 * hashed by address (learn.c): for objects with no room of their own.
 * Nothing is allocated and nothing is locked; starts at zero; objects whose
 * addresses collide share a slot, so an encoding must read any value as
 * some valid state.  Two users of one object key by different bytes of it:
 * the object's own code (a lock) by its address, the adaptive wait policy
 * by the waited word's second byte. */
_Atomic uint32_t *hws_learn_slot(const void *addr);

/* Per-thread counters the lock instrumentation reads around a wait. */
struct hws_wait_counters {
	uint64_t polls;     /* reads of the wait word in polling loops */
	uint64_t syscalls;  /* futex system calls (waits and wakes) */
	uint64_t sleeps;    /* FUTEX_WAITs that really slept */
	uint64_t handoffs;  /* acquisitions handed to a waiter past a lock's fairness bound */
	uint64_t spin_ns;   /* time in auto's spinning stage (after its first look) */
	uint64_t naps;      /* timed sleeps that no wake-up ends (hws_nap_until) */
	uint64_t yields;    /* auto's busy-machine yields before a park */
};
extern _Thread_local struct hws_wait_counters hws_wait_tls;
/* This thread's last futex sleep that a FUTEX_WAKE ended (futex.c): seq
 * counts such sleeps, `at` is when the thread ran again.  Its hand-off
 * sample (how long after its waker's FUTEX_WAKE call it ran again) is taken
 * later, off the woken thread's way back: hws_futex_woken_sample(seq) takes
 * it if sleep seq is still the last one and returns it (0: none, or another
 * sleep came since). */
struct hws_futex_woken {
	const void *addr;    /* the word, until the sample is taken */
	uint64_t slept, at;  /* CLOCK_MONOTONIC ns */
	uint64_t sample_ns;  /* once taken */
	uint64_t seq;        /* woken timed sleeps so far (see hws_futex_sleep_bits) */
};
extern _Thread_local struct hws_futex_woken hws_futex_woken;
uint64_t hws_futex_woken_sample(uint64_t seq);
/* Set by hws_wait_while_eq32_intr: a kernel sleep interrupted by a signal
 * handler ends the wait with EINTR instead of being resumed. */
extern _Thread_local int hws_wait_intr;

/* How many polls between two deadline checks in a polling loop. */
#define HWS_POLLS_PER_CLOCK 64

/* A polling loop: re-read *a, run `between` between reads, check the
 * deadline every HWS_POLLS_PER_CLOCK reads.  Inlined into each backend so
 * that `between` is a direct call. */
static inline __attribute__((always_inline)) int
hws_poll_loop(const _Atomic uint32_t *a, uint32_t old, const hws_wait_t *w,
	      uint64_t deadline_ns, void (*between)(const hws_wait_t *, uint32_t *state))
{
	uint32_t state = 0;
	uint64_t polls = 0;
	/* acquire: pairs with the release store (or stronger) that changed the
	 * word, so the waiter sees what was written before it. */
	while (atomic_load_explicit(a, memory_order_acquire) == old) {
		polls++;
		if (deadline_ns != HWS_FOREVER && polls % HWS_POLLS_PER_CLOCK == 0 &&
		    hws_now_ns() >= deadline_ns) {
			hws_wait_tls.polls += polls;
			return ETIMEDOUT;
		}
		between(w, &state);
	}
	hws_wait_tls.polls += polls;
	return 0;
}

#endif

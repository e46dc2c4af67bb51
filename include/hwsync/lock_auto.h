/* auto: the adaptive lock (docs/locks.md, "The auto lock").
 *
 * A barging lock with polite waiters, a fairness bound and per-lock learning:
 * - a running thread takes a free lock with one atomic bit set, even while
 *   others wait, so a thread that releases and comes straight back keeps the
 *   lock's line in its cache ([WEBKIT], [PLOT]);
 * - waiters spin read-only with a backoff that grows while the lock goes to
 *   others, for a budget each lock learns from its own waits ([NPTL-ADAPT],
 *   [GLK]); at most (usable CPUs - 1) spin at once, the others sleep
 *   ([MALTHUS]);
 * - a waiter that has waited longer than the fairness bound claims the next
 *   hand-off: the holder's release then passes the lock to it directly,
 *   LOCKED staying set ([GOSYNC], [PLOT]'s eventual fairness), so that a
 *   claim never stands on a free lock and the fast path need not look for
 *   one.
 *
 * State word:
 *   bit 0      LOCKED
 *   bit 1      PARKED    someone may sleep in the kernel on the word
 *   bit 2      STARVING  a claim on the next hand-off stands (only while LOCKED)
 *   bits 3-7   spinners  waiters in the spinning stage
 *   bits 8-31  generation, +1 per release (a waiter sees the lock move)
 * A zero word is a free lock, so zeroed memory needs no initialisation, and
 * a free lock owns nothing.  The lock's learning lives in a second 32-bit
 * word where the object has room (hws_auto_t), else in a table hashed by the
 * lock's address (pass NULL); where it has room for a third, the release
 * keeps a hint there (hws_auto_core_release_hinted).
 */
#ifndef HWSYNC_LOCK_AUTO_H
#define HWSYNC_LOCK_AUTO_H

#include <hwsync/lock_common.h>

#ifdef __cplusplus
extern "C" {
#endif

#define HWS_AUTO_LOCKED 1u
#define HWS_AUTO_PARKED 2u
#define HWS_AUTO_STARVING 4u
#define HWS_AUTO_SPIN_ONE 8u
#define HWS_AUTO_SPIN_MASK (31u * HWS_AUTO_SPIN_ONE)
#define HWS_AUTO_GEN_ONE 256u

/* The lock's state word alone (in-place form). */
typedef struct hws_auto_core {
	_Atomic uint32_t state;
} hws_auto_core_t;

/* The typed form: the word, its learning word, and the policy its sleepers
 * use (a sleeping policy - futex, adaptive - parks in the kernel; any other
 * waits through the policy and never sleeps). */
typedef struct hws_auto {
	hws_auto_core_t core;
	_Atomic uint32_t learn;
	_Atomic uint32_t hint;      /* the release's guess (hws_auto_core_release_hinted) */
	const hws_wait_t *wait;
} hws_auto_t;

/* The contended paths (lib/prims/lock_auto*.c).  learn: the lock's learning
 * word, or NULL for the hashed table.  hws_auto_core_release_slow wakes a
 * sleeper after a release that saw PARKED; hws_auto_core_hand_off is the
 * release of a lock with a claim on it. */
int hws_auto_core_lock_slow(hws_auto_core_t *c, _Atomic uint32_t *learn, const hws_wait_t *w,
			    uint64_t deadline_ns);
void hws_auto_core_release_slow(hws_auto_core_t *c);
int hws_auto_core_hand_off(hws_auto_core_t *c);

/* One atomic bit set (`lock bts` on x86), not a read and a CAS: the CAS
 * needs the word's value, and that read, waiting behind the previous atomic
 * operation, is on every uncontended acquisition's critical path.  A set bit
 * changes nothing (another thread holds it), and a free lock carries no
 * claim, so nothing needs to be read after it.  True: taken. */
static inline bool hws_auto_core_take(hws_auto_core_t *c)
{
	/* acquire: pairs with the release CAS of hws_auto_core_release. */
	return !(atomic_fetch_or_explicit(&c->state, HWS_AUTO_LOCKED, memory_order_acquire) &
		 HWS_AUTO_LOCKED);
}

static inline int hws_auto_core_try(hws_auto_core_t *c)
{
	return hws_auto_core_take(c) ? 0 : EBUSY;
}

static inline int hws_auto_core_timed_ns(hws_auto_core_t *c, _Atomic uint32_t *learn,
					 const hws_wait_t *w, uint64_t deadline_ns)
{
	if (__builtin_expect(hws_auto_core_take(c), 1))
		return 0;
	return hws_auto_core_lock_slow(c, learn, w, deadline_ns);
}

static inline int hws_auto_core_acquire(hws_auto_core_t *c, _Atomic uint32_t *learn,
					const hws_wait_t *w)
{
	return hws_auto_core_timed_ns(c, learn, w, HWS_FOREVER);
}

/* Clears LOCKED and counts the generation in one CAS, only while LOCKED is
 * set: a release of a free lock (a stray unlock, which glibc's default mutex
 * tolerates) changes nothing, and of two racing releases only one clears it.
 * A lock with a claim on it goes to the claimant instead (out of line).
 * v: the first guess of the word for the CAS, which decides (a failed CAS
 * returns the word); hint: where to leave the next guess, or NULL. */
static inline int hws_auto_core_release_from(hws_auto_core_t *c, uint32_t v,
					     _Atomic uint32_t *hint)
{
	uint32_t n;
	do {
		if (__builtin_expect(!(v & HWS_AUTO_LOCKED), 0))
			return 0;
		if (__builtin_expect(v & HWS_AUTO_STARVING, 0))
			return hws_auto_core_hand_off(c);
		n = v + HWS_AUTO_GEN_ONE - HWS_AUTO_LOCKED;
		/* release: pairs with the acquire CAS of the next holder. */
	} while (!atomic_compare_exchange_weak_explicit(&c->state, &v, n, memory_order_release,
							memory_order_relaxed));
	/* relaxed: advice for the next release (the word once taken again:
	 * taking sets LOCKED alone).  Written after the CAS: written before,
	 * it would have to leave the store buffer before the CAS could run. */
	if (hint)
		atomic_store_explicit(hint, n | HWS_AUTO_LOCKED, memory_order_relaxed);
	if (__builtin_expect(v & HWS_AUTO_PARKED, 0))
		hws_auto_core_release_slow(c);
	return 0;
}

/* The release, its guess read from the word. */
static inline int hws_auto_core_release(hws_auto_core_t *c)
{
	/* the CAS needs the line writable: ask before the read fetches it
	 * shared (docs/locks.md, "Asking for the lock's line writable") */
	hws_prefetch_write(&c->state);
	/* relaxed: only a guess for the CAS. */
	return hws_auto_core_release_from(c, atomic_load_explicit(&c->state, memory_order_relaxed),
					  NULL);
}

/* The release, its guess taken from a hint: a word of the object beside the
 * lock's, in which each such release leaves the value the word will have
 * once taken again.  A read of the lock's word right behind the locked
 * instruction that took it waits for that instruction on some processors,
 * a read of another word does not (docs/locks.md, "A release that does not
 * read its word"); a wrong hint costs one failed CAS. */
static inline int hws_auto_core_release_hinted(hws_auto_core_t *c, _Atomic uint32_t *hint)
{
	/* relaxed: advice; the CAS decides.  The guess is a plain hold. */
	uint32_t v = atomic_load_explicit(hint, memory_order_relaxed);
	return hws_auto_core_release_from(
		c, (v | HWS_AUTO_LOCKED) & ~(HWS_AUTO_PARKED | HWS_AUTO_STARVING), hint);
}

/* The same two steps for a caller that knows no other thread can touch the
 * word (a process that has only ever had one thread, as the shim learns from
 * glibc): a plain load and store each, no atomic operation.  False: nothing
 * was changed; use the atomic form (the lock is held, or a waiter's bit
 * is set, which only another thread, before this state, can have left). */
static inline bool hws_auto_core_take_alone(hws_auto_core_t *c)
{
	/* relaxed: no other thread exists to order against. */
	uint32_t v = atomic_load_explicit(&c->state, memory_order_relaxed);
	if (v & HWS_AUTO_LOCKED)
		return false;
	atomic_store_explicit(&c->state, v | HWS_AUTO_LOCKED, memory_order_relaxed);
	return true;
}

static inline bool hws_auto_core_release_alone(hws_auto_core_t *c)
{
	/* relaxed: as in hws_auto_core_take_alone. */
	uint32_t v = atomic_load_explicit(&c->state, memory_order_relaxed);
	if ((v & (HWS_AUTO_LOCKED | HWS_AUTO_PARKED | HWS_AUTO_STARVING)) != HWS_AUTO_LOCKED)
		return false;
	atomic_store_explicit(&c->state, v + HWS_AUTO_GEN_ONE - HWS_AUTO_LOCKED,
			      memory_order_relaxed);
	return true;
}

static inline int hws_auto_init(hws_auto_t *l, const hws_wait_t *w)
{
	atomic_init(&l->core.state, 0);
	atomic_init(&l->learn, 0);
	atomic_init(&l->hint, 0);
	l->wait = w;
	return 0;
}

static inline int hws_auto_try(hws_auto_t *l) { return hws_auto_core_try(&l->core); }
static inline int hws_auto_timed_ns(hws_auto_t *l, uint64_t deadline_ns)
{
	return hws_auto_core_timed_ns(&l->core, &l->learn, l->wait, deadline_ns);
}
static inline int hws_auto_acquire(hws_auto_t *l)
{
	return hws_auto_core_acquire(&l->core, &l->learn, l->wait);
}
static inline int hws_auto_release(hws_auto_t *l)
{
	return hws_auto_core_release_hinted(&l->core, &l->hint);
}

HWS_LOCK_TIMED_WRAPPER(auto)

#ifdef __cplusplus
}
#endif
#endif

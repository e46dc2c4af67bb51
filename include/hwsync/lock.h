/* hwsync locks, generic over the wait policy.
 *
 * Kinds: "tas", "ttas", "ticket", "mcs", "clh", "1spinner", "mutex", "auto".
 * The generic API picks the algorithm by name at run time; the per-algorithm
 * headers (lock_<kind>.h) give typed, inlinable forms for code that knows what
 * it wants.  Queue locks (mcs, clh, 1spinner) manage their per-thread nodes
 * themselves: callers never pass a node.
 *
 * Deadlines are absolute CLOCK_MONOTONIC times.  All functions return 0 or an
 * errno value (EBUSY from try, ETIMEDOUT from timed, EINVAL/ENOTSUP/ENOMEM from
 * create with the detail in hws_last_error()).
 */
#ifndef HWSYNC_LOCK_H
#define HWSYNC_LOCK_H

#include <stdint.h>
#include <time.h>
#include <hwsync/wait.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct hws_lock hws_lock_t;

int hws_lock_create(hws_lock_t **l, const char *kind, const char *wait_policy);
/* The same with a policy parsed once (hws_wait_init), used as given (for
 * "auto" too); the lock keeps a copy.  A NULL policy is EINVAL.
 * hws_lock_create parses its string (for "auto" without one, auto's own
 * default) and calls this. */
int hws_lock_create_with(hws_lock_t **l, const char *kind, const hws_wait_t *wait_policy);
int hws_lock_acquire(hws_lock_t *l);
int hws_lock_try(hws_lock_t *l);
int hws_lock_timed(hws_lock_t *l, const struct timespec *abs_deadline);
int hws_lock_release(hws_lock_t *l);
void hws_lock_destroy(hws_lock_t *l);
/* The lock's kind: its name in hws_lock_kinds() (a NULL or empty kind
 * at creation is "auto"). */
const char *hws_lock_kind(const hws_lock_t *l);

/* NULL-terminated list of the kinds hws_lock_create accepts. */
const char *const *hws_lock_kinds(void);

/* [RAINA]'s stages of a lock acquisition.  Counting costs nothing unless
 * enabled for that lock (hws_lock_stats_enable) or globally
 * (hws_lock_stats_enable(NULL, 1) before creating locks). */
struct hws_lock_stats {
	uint64_t acquisitions;
	uint64_t first_try;      /* acquired on the first atomic attempt */
	uint64_t after_spin;     /* acquired after spinning (no system call) */
	uint64_t after_sleep;    /* acquired after sleeping in the kernel */
	uint64_t syscalls;       /* futex system calls made by waiters and wakers */
	uint64_t max_spins;      /* longest spin (number of polls) */
	uint64_t wait_ns;        /* total time from entry to acquired, contended only */
	uint64_t handoffs;       /* auto: acquisitions handed to a waiter that had
				  * waited past the fairness bound */
};
int hws_lock_stats_enable(hws_lock_t *l, int on);
int hws_lock_stats_get(const hws_lock_t *l, struct hws_lock_stats *out);

#ifdef __cplusplus
}
#endif
#endif

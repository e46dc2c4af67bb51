/* hwsync barriers, generic over the wait policy.
 *
 * Kinds: "central" (sense-reversing counter), "pair" ([AK08] Listing 2,
 * exactly two threads), "hier" ([AKKAN13]: per-group counters from the hwloc
 * topology plus one global release word), "dissemination", "tree".
 * Reusable in a loop.  hws_barrier_wait returns HWS_BARRIER_LAST in exactly
 * one caller per episode, 0 in the others, or an errno value.
 *
 * create: NULL or "" kind means "central"; an unknown kind, nthreads == 0 (or
 * above 4096) and "pair" with nthreads != 2 give EINVAL with the reason in
 * hws_last_error().  dissemination, tree and hier give each thread a slot on
 * its first wait (callers pass nothing); at most nthreads distinct threads
 * may use one barrier, one more gets EINVAL.  See docs/primitives.md.
 */
#ifndef HWSYNC_BARRIER_H
#define HWSYNC_BARRIER_H

#include <stdint.h>
#include <hwsync/wait.h>

#ifdef __cplusplus
extern "C" {
#endif

#define HWS_BARRIER_LAST (-1)

typedef struct hws_barrier hws_barrier_t;

int hws_barrier_create(hws_barrier_t **b, const char *kind, unsigned nthreads,
		       const char *wait_policy);
/* The same with a policy parsed once (hws_wait_init); the barrier keeps a
 * copy.  A NULL policy is EINVAL. */
int hws_barrier_create_with(hws_barrier_t **b, const char *kind, unsigned nthreads,
			    const hws_wait_t *wait_policy);
int hws_barrier_wait(hws_barrier_t *b);
void hws_barrier_destroy(hws_barrier_t *b);
const char *hws_barrier_kind(const hws_barrier_t *b);
const char *const *hws_barrier_kinds(void);
/* In-place form of "central", the words alone, for objects that hold their
 * whole state (a pthread_barrier_t under the shim): an arrival counter and
 * the episode number waiters wait on.  Set n and zero the rest to start. */
typedef struct hws_barrier_central_core {
	_Atomic uint32_t count;     /* arrivals this episode */
	_Atomic uint32_t release;   /* episode number; the last arrival advances it */
	uint32_t n;                 /* threads per episode */
} hws_barrier_central_core_t;

/* HWS_BARRIER_LAST in one caller per episode, 0 in the others. */
int hws_barrier_central_core_wait(hws_barrier_central_core_t *c, const hws_wait_t *w);

/* Episodes completed so far (kept by the thread that completes each episode,
 * on a line it owns at that moment: free unless read). */
uint64_t hws_barrier_episodes(const hws_barrier_t *b);

#ifdef __cplusplus
}
#endif
#endif

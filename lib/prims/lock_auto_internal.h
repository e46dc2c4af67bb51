/* The auto lock's test switch (not installed): tests force one behaviour,
 * and change it while threads wait, to check every mode and every switch. */
#ifndef HWS_PRIMS_LOCK_AUTO_INTERNAL_H
#define HWS_PRIMS_LOCK_AUTO_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

enum hws_auto_mode {
	HWS_AUTO_ADAPT,          /* normal: learned spinning, fairness bound */
	HWS_AUTO_FORCE_PARK,     /* never spin, never nap: park at once */
	HWS_AUTO_FORCE_NAP,      /* never spin: nap (unless claiming) */
	HWS_AUTO_FORCE_SPIN,     /* always spin, no spinner limit, no learning of failure */
	HWS_AUTO_FORCE_HANDOFF,  /* fairness bound 0: every waiter claims the hand-off */
	HWS_AUTO_FORCE_BARGE,    /* no fairness bound */
	HWS_AUTO_NMODES
};
extern _Atomic int hws_auto_test_mode;

/* Waiters of all auto locks in their spinning stage now, and how many may
 * spin at once (usable CPUs - 1): for the tests of that limit. */
unsigned hws_auto_spinners(void);
unsigned hws_auto_max_spinners(void);

/* The busy-machine nap rule: a lock that changed hands `handoffs` times in
 * a wait of waited_ns changes hands at least once a microsecond. */
bool hws_auto_busy_nap_pays(uint32_t handoffs, uint64_t waited_ns);

/* A waiter on a busy machine gives its CPU away at most this many times in
 * a wait before it parks (lock_auto_sleep.c, busy_yield).  Measured: 4, 8,
 * 16 and 64 (docs/locks.md, "A few yields before the park"). */
#define HWS_AUTO_BUSY_YIELDS 4u

/* The releaser's grace (lock_auto_spin.c): whether a spinner that sees the
 * lock free at generation gen leaves it to its releaser a moment, given the
 * lock's learning word; and how a wait's kept and wasted graces move the
 * word's waste count (lock_auto_learn.c). */
bool hws_auto_grace_granted(uint32_t learn, uint32_t gen);
uint32_t hws_auto_waste_update(uint32_t waste, uint32_t kept, uint32_t wasted);

#endif

/* Helpers for the tests of the in-place lock cores: one table over every
 * core kind, so that a test names a kind and runs the same code on it.  A
 * core is used where it lies (in an array slot, in malloc'd memory); all
 * zero is a free lock, and the policy is passed to each call. */
#ifndef HWS_CORE_TEST_H
#define HWS_CORE_TEST_H

#include "tests/locks/lock_test.h"
#include <hwsync/lock_1spinner.h>
#include <hwsync/lock_auto.h>
#include <hwsync/lock_clh.h>
#include <hwsync/lock_mcs.h>
#include <hwsync/lock_mutex.h>
#include <hwsync/lock_tas.h>
#include <hwsync/lock_ticket.h>
#include <hwsync/lock_ttas.h>

struct core_kind {
	const char *name;
	size_t size;       /* bytes of the core */
	int queue;         /* takes nodes from the pool: its tail must be 0 when free */
	int (*acquire)(void *c, const hws_wait_t *w);
	int (*try_)(void *c);
	int (*timed)(void *c, const hws_wait_t *w, uint64_t deadline_ns);
	int (*release)(void *c, const hws_wait_t *w);
	uint32_t (*tail)(void *c);   /* queue kinds: the tail word; others: 0 */
};

/* Release with or without the policy argument, as the kind's API has it. */
#define CORE_REL_W(k) return hws_##k##_core_release(c, w);
#define CORE_REL(k) (void)w; return hws_##k##_core_release(c);
#define CORE_TAIL(k) return hws_##k##_core_tail(c);
#define CORE_NOTAIL(k) (void)c; return 0;

#define CORE_KIND(k, rel, tail_)                                                   \
	static int ck_##k##_acq(void *c, const hws_wait_t *w) { return hws_##k##_core_acquire(c, w); } \
	static int ck_##k##_try(void *c) { return hws_##k##_core_try(c); }           \
	static int ck_##k##_tim(void *c, const hws_wait_t *w, uint64_t d)             \
	{                                                                          \
		return hws_##k##_core_timed_ns(c, w, d);                           \
	}                                                                          \
	static int ck_##k##_rel(void *c, const hws_wait_t *w) { rel(k) }             \
	static uint32_t ck_##k##_tail(void *c) { tail_(k) }

CORE_KIND(tas, CORE_REL, CORE_NOTAIL)
CORE_KIND(ttas, CORE_REL, CORE_NOTAIL)
CORE_KIND(mutex, CORE_REL, CORE_NOTAIL)
CORE_KIND(ticket, CORE_REL, CORE_NOTAIL)
CORE_KIND(ticket16, CORE_REL, CORE_NOTAIL)
CORE_KIND(mcs, CORE_REL_W, CORE_TAIL)
CORE_KIND(clh, CORE_REL_W, CORE_TAIL)
CORE_KIND(1spinner, CORE_REL, CORE_TAIL)

/* auto's core in 4 bytes learns in the table hashed by address (NULL). */
static int ck_auto_acq(void *c, const hws_wait_t *w) { return hws_auto_core_acquire(c, NULL, w); }
static int ck_auto_try(void *c) { return hws_auto_core_try(c); }
static int ck_auto_tim(void *c, const hws_wait_t *w, uint64_t d)
{
	return hws_auto_core_timed_ns(c, NULL, w, d);
}
static int ck_auto_rel(void *c, const hws_wait_t *w) { CORE_REL(auto) }
static uint32_t ck_auto_tail(void *c) { CORE_NOTAIL(auto) }

#define CORE_ENTRY(k, q) { #k, sizeof(hws_##k##_core_t), q, ck_##k##_acq, ck_##k##_try, \
			   ck_##k##_tim, ck_##k##_rel, ck_##k##_tail }

static const struct core_kind core_kinds[] = {
	CORE_ENTRY(tas, 0), CORE_ENTRY(ttas, 0), CORE_ENTRY(mutex, 0),
	CORE_ENTRY(ticket, 0), CORE_ENTRY(ticket16, 0),
	CORE_ENTRY(mcs, 1), CORE_ENTRY(clh, 1), CORE_ENTRY(1spinner, 1),
	CORE_ENTRY(auto, 0),
};
#define NCORE_KINDS (sizeof core_kinds / sizeof core_kinds[0])

static inline const struct core_kind *core_kind_find(const char *name)
{
	for (size_t i = 0; i < NCORE_KINDS; i++)
		if (!strcmp(core_kinds[i].name, name))
			return &core_kinds[i];
	fprintf(stderr, "unknown core kind '%s'\n", name);
	exit(2);
}

/* The policies every core test runs under: polling, sleeping and both. */
static const char *const core_policies[] = { "pause", "futex", "adaptive" };
#define NCORE_POLICIES 3

static inline hws_wait_t core_policy(const char *spec)
{
	hws_wait_t w;
	CHECK_EQ(hws_wait_init(&w, spec), 0);
	return w;
}

/* One acquisition, chosen by r: acquire; or try, twice, then acquire; or
 * timed with a short deadline (0-20 us), then acquire.  Give-ups are counted
 * in *giveups.  (Retrying try or timed until it succeeds would starve: they
 * never queue, and a thread that releases and re-acquires wins every time.) */
static inline void core_lock_any(const struct core_kind *k, void *c, const hws_wait_t *w,
				 uint32_t r, unsigned long *giveups)
{
	int rc = EBUSY;

	switch (r % 8) {
	case 0:
		for (int n = 0; n < 2 && (rc = k->try_(c)) == EBUSY; n++)
			(*giveups)++, sched_yield();
		break;
	case 1:
		rc = k->timed(c, w, test_now_ns() + (r >> 8) % 20000);
		if (rc == ETIMEDOUT)
			(*giveups)++;
		break;
	}
	if (rc == EBUSY || rc == ETIMEDOUT)
		rc = k->acquire(c, w);
	CHECK_EQ(rc, 0);
}

/* A free core: a queue kind references no node, and a try succeeds. */
static inline void core_check_free(const struct core_kind *k, void *c, const hws_wait_t *w)
{
	CHECK_EQ(k->tail(c), 0);
	CHECK_EQ(k->try_(c), 0);
	CHECK_EQ(k->release(c, w), 0);
	CHECK_EQ(k->tail(c), 0);
}

#endif

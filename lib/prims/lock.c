/* Generic lock API: kind chosen by name at run time, dispatched through one
 * table per kind (prims/lock_ops.h), with optional per-lock counters.
 *
 * Counting costs one predictable branch on a per-lock flag when off.  When on,
 * an acquisition first makes one try (a success is "first_try"), then the
 * kind's blocking path; the wait layer's per-thread counters (hws_wait_tls)
 * read before and after tell a spin (polls, no FUTEX_WAIT that slept) from a
 * sleep and count system calls; release adds the FUTEX_WAKE it made.
 */
#include <stdlib.h>
#include <string.h>
#include "prims/lock_ops.h"
#include "wait/internal.h"
#include <hwsync/lock.h>
#include <hwsync/lock_1spinner.h>
#include <hwsync/lock_auto.h>
#include <hwsync/lock_clh.h>
#include <hwsync/lock_mcs.h>
#include <hwsync/lock_mutex.h>
#include <hwsync/lock_tas.h>
#include <hwsync/lock_ticket.h>
#include <hwsync/lock_ttas.h>

struct counters {
	_Atomic uint64_t acquisitions, first_try, after_spin, after_sleep, syscalls, max_spins,
		wait_ns, handoffs;
};

struct hws_lock {
	union {
		hws_tas_t tas;
		hws_ttas_t ttas;
		hws_ticket_t ticket;
		hws_mcs_t mcs;
		hws_clh_t clh;
		hws_1spinner_t onespinner;
		hws_mutex_t mutex;
		hws_auto_t autolock;
	} u HWS_ALIGNED_LINE;           /* the hot words, with what every call reads */
	const struct hws_lock_ops *ops;
	_Atomic int stats_on;
	hws_wait_t wait;
	struct counters st HWS_ALIGNED_LINE;
};

#define OPS_(k, K) [HWS_LK_##K] = &hws_lock_ops_##k,
static const struct hws_lock_ops *const kinds[HWS_LK_NKINDS] = { HWS_LOCK_KINDS(OPS_) };
#undef OPS_
#define NAME_(k, K) #k,
static const char *const kind_names[] = { HWS_LOCK_KINDS(NAME_) NULL };
#undef NAME_

static _Atomic int stats_default;

const char *const *hws_lock_kinds(void)
{
	return kind_names;
}

const struct hws_lock_ops *hws_lock_ops_find(const char *name, enum hws_lock_kind_id *id)
{
	if (!name || !*name)
		name = "auto";
	for (int i = 0; i < HWS_LK_NKINDS; i++)
		if (!strcmp(name, kinds[i]->name)) {
			if (id)
				*id = (enum hws_lock_kind_id)i;
			return kinds[i];
		}
	return NULL;
}

static int unknown_kind(const char *kind)
{
	return hws_fail(EINVAL, "unknown lock kind '%s' (known: " HWS_LOCK_KINDS_LIST ")", kind);
}

int hws_lock_create_with(hws_lock_t **out, const char *kind, const hws_wait_t *policy)
{
	const struct hws_lock_ops *ops;
	hws_lock_t *l;
	int rc;

	if (!out)
		return hws_fail(EINVAL, "hws_lock_create_with: NULL result pointer");
	*out = NULL;
	if ((rc = hws_wait_check(policy, "hws_lock_create_with")))
		return rc;
	if (!(ops = hws_lock_ops_find(kind, NULL)))
		return unknown_kind(kind);
	l = aligned_alloc(HWS_CACHELINE, sizeof *l);
	if (!l)
		return hws_fail(ENOMEM, "hws_lock_create: out of memory");
	memset(l, 0, sizeof *l);
	l->wait = *policy;
	l->ops = ops;
	/* relaxed: a plain flag; the lock is published by the caller. */
	atomic_store_explicit(&l->stats_on, atomic_load_explicit(&stats_default,
								  memory_order_relaxed),
			      memory_order_relaxed);
	rc = ops->init(&l->u, &l->wait);
	if (rc) {
		free(l);
		return rc;
	}
	*out = l;
	return 0;
}

int hws_lock_create(hws_lock_t **out, const char *kind, const char *policy)
{
	enum hws_lock_kind_id id;
	hws_wait_t w;
	int rc;

	if (!out)
		return hws_fail(EINVAL, "hws_lock_create: NULL result pointer");
	*out = NULL;
	if (!hws_lock_ops_find(kind, &id))
		return unknown_kind(kind);
	if ((!policy || !*policy) && id == HWS_LK_AUTO)
		policy = HWS_LOCK_AUTO_POLICY;
	if ((rc = hws_wait_init(&w, policy)))   /* its message names the bad policy */
		return rc;
	return hws_lock_create_with(out, kind, &w);
}

void hws_lock_destroy(hws_lock_t *l)
{
	if (!l)
		return;
	l->ops->destroy(&l->u);
	free(l);
}

const char *hws_lock_kind(const hws_lock_t *l)
{
	return l ? l->ops->name : "none";
}

enum mode { ACQUIRE, TRY, TIMED };

static void add(_Atomic uint64_t *c, uint64_t v)
{
	/* relaxed: statistics only; readers accept a torn snapshot. */
	atomic_fetch_add_explicit(c, v, memory_order_relaxed);
}

static int counted(hws_lock_t *l, enum mode mode, uint64_t deadline_ns)
{
	struct hws_wait_counters c0 = hws_wait_tls;
	uint64_t t0 = hws_now_ns();
	int rc = l->ops->try_(&l->u);

	if (rc == 0) {
		add(&l->st.acquisitions, 1);
		add(&l->st.first_try, 1);
		return 0;
	}
	if (rc != EBUSY || mode == TRY)
		return rc;
	rc = mode == TIMED ? l->ops->timed(&l->u, deadline_ns) : l->ops->acquire(&l->u);
	uint64_t sys = hws_wait_tls.syscalls - c0.syscalls;
	if (sys)
		add(&l->st.syscalls, sys);
	if (rc)
		return rc;
	uint64_t polls = hws_wait_tls.polls - c0.polls;
	add(&l->st.acquisitions, 1);
	add(hws_wait_tls.sleeps != c0.sleeps ? &l->st.after_sleep : &l->st.after_spin, 1);
	if (hws_wait_tls.handoffs != c0.handoffs)
		add(&l->st.handoffs, 1);
	add(&l->st.wait_ns, hws_now_ns() - t0);
	/* relaxed: we hold the lock, so no other thread updates max_spins now. */
	if (polls > atomic_load_explicit(&l->st.max_spins, memory_order_relaxed))
		atomic_store_explicit(&l->st.max_spins, polls, memory_order_relaxed);
	return 0;
}

/* relaxed: the flag only selects the counting path. */
#define STATS_ON(l) __builtin_expect(atomic_load_explicit(&(l)->stats_on, memory_order_relaxed), 0)

/* The default kind, auto, is tested first: a compare and its inlined fast
 * path, not an indirect call (the shim does the same). */
#define IS_AUTO(l) __builtin_expect((l)->ops == &hws_lock_ops_auto, 1)

int hws_lock_acquire(hws_lock_t *l)
{
	if (STATS_ON(l))
		return counted(l, ACQUIRE, HWS_FOREVER);
	if (IS_AUTO(l))
		return hws_auto_acquire(&l->u.autolock);
	return l->ops->acquire(&l->u);
}

int hws_lock_try(hws_lock_t *l)
{
	if (STATS_ON(l))
		return counted(l, TRY, 0);
	if (IS_AUTO(l))
		return hws_auto_try(&l->u.autolock);
	return l->ops->try_(&l->u);
}

int hws_lock_timed(hws_lock_t *l, const struct timespec *abs_deadline)
{
	uint64_t dl;

	if (hws_timespec_to_ns(abs_deadline, &dl))
		return hws_fail(EINVAL, "hws_lock_timed: invalid deadline timespec");
	if (STATS_ON(l))
		return counted(l, TIMED, dl);
	return l->ops->timed(&l->u, dl);
}

/* Out of line: inlined, its frame made every release save and restore two
 * registers, counted or not. */
static __attribute__((noinline)) int counted_release(hws_lock_t *l)
{
	uint64_t s0 = hws_wait_tls.syscalls;
	int rc = l->ops->release(&l->u);
	if (hws_wait_tls.syscalls != s0)
		add(&l->st.syscalls, hws_wait_tls.syscalls - s0);
	return rc;
}

int hws_lock_release(hws_lock_t *l)
{
	if (STATS_ON(l))
		return counted_release(l);
	if (IS_AUTO(l))
		return hws_auto_release(&l->u.autolock);
	return l->ops->release(&l->u);
}

int hws_lock_stats_enable(hws_lock_t *l, int on)
{
	/* relaxed: flags; see STATS_ON. */
	if (!l)
		atomic_store_explicit(&stats_default, !!on, memory_order_relaxed);
	else
		atomic_store_explicit(&l->stats_on, !!on, memory_order_relaxed);
	return 0;
}

int hws_lock_stats_get(const hws_lock_t *l, struct hws_lock_stats *out)
{
	if (!l || !out)
		return hws_fail(EINVAL, "hws_lock_stats_get: NULL argument");
	/* relaxed: a snapshot of independent counters. */
#define GET(f) out->f = atomic_load_explicit(&l->st.f, memory_order_relaxed)
	GET(acquisitions); GET(first_try); GET(after_spin); GET(after_sleep);
	GET(syscalls); GET(max_spins); GET(wait_ns); GET(handoffs);
#undef GET
	return 0;
}

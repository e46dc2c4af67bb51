/* hwsync's locks through their typed headers (hwsync/lock_<kind>.h): the
 * form a program uses when it knows the kind at compile time, with the fast
 * paths inlined into its loop.  The generic hws_lock_* API (lock_impls.c)
 * reaches the same code through one indirect call per operation; the
 * `uncontended` experiment shows what that costs. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <hwsync/hwsync.h>
#include <hwsync/lock_1spinner.h>
#include <hwsync/lock_auto.h>
#include <hwsync/lock_clh.h>
#include <hwsync/lock_mcs.h>
#include <hwsync/lock_mutex.h>
#include <hwsync/lock_tas.h>
#include <hwsync/lock_ticket.h>
#include <hwsync/lock_ttas.h>
#include "bench/harness.h"
#include "bench/peers.h"

/* The kinds with a typed header: this file's own table, since each needs its
 * code below (the hwsync-typed-<kind> names are made from it). */
enum tkind { T_TAS, T_TTAS, T_TICKET, T_MCS, T_CLH, T_1SPINNER, T_MUTEX, T_AUTO };
static const char *const tkind_names[] = { "tas", "ttas", "ticket", "mcs", "clh", "1spinner",
					   "mutex", "auto", NULL };
#define NTKINDS (sizeof tkind_names / sizeof tkind_names[0] - 1)

void bench_typed_impls(char *buf, size_t len)
{
	bench_impls_append(buf, len, NULL, "hwsync-typed-", tkind_names);
}

struct bench_typed {
	enum tkind kind;
	hws_wait_t wait;            /* must outlive the lock */
	union {
		hws_tas_t tas;
		hws_ttas_t ttas;
		hws_ticket_t ticket;
		hws_mcs_t mcs;
		hws_clh_t clh;
		hws_1spinner_t s1;
		hws_mutex_t mutex;
		hws_auto_t autolock;
	} u;
};

int bench_typed_new(struct bench_typed **out, const char *impl, const char *policy, char *why,
		    size_t whylen)
{
	const char *kind = strncmp(impl, "hwsync-typed-", 13) ? "" : impl + 13;
	unsigned k;
	int rc = 0;

	for (k = 0; k < NTKINDS; k++)
		if (!strcmp(kind, tkind_names[k]))
			break;
	if (k == NTKINDS) {
		snprintf(why, whylen, "unknown typed lock '%s'", impl);
		return EINVAL;
	}
	/* aligned: the lock word gets a cache line of its own */
	struct bench_typed *t = bench_zalloc_lines(sizeof **out);
	if (!t) {
		snprintf(why, whylen, "out of memory");
		return ENOMEM;
	}
	t->kind = (enum tkind)k;
	if (hws_wait_init(&t->wait, policy)) {
		snprintf(why, whylen, "%s", hws_last_error());
		free(t);
		return EINVAL;
	}
	switch (t->kind) {
	case T_TAS: rc = hws_tas_init(&t->u.tas, &t->wait); break;
	case T_TTAS: rc = hws_ttas_init(&t->u.ttas, &t->wait); break;
	case T_TICKET: rc = hws_ticket_init(&t->u.ticket, &t->wait); break;
	case T_MCS: rc = hws_mcs_init(&t->u.mcs, &t->wait); break;
	case T_CLH: rc = hws_clh_init(&t->u.clh, &t->wait); break;
	case T_1SPINNER: rc = hws_1spinner_init(&t->u.s1, &t->wait); break;
	case T_MUTEX: rc = hws_mutex_init(&t->u.mutex, &t->wait); break;
	case T_AUTO: rc = hws_auto_init(&t->u.autolock, &t->wait); break;
	}
	if (rc) {
		snprintf(why, whylen, "%s", hws_last_error());
		free(t);
		return rc;
	}
	*out = t;
	return 0;
}

/* The kind's inline calls in a loop of their own, as a program would write it. */
#define TYPED_LOOP(kind, lock)                             \
	do {                                               \
		t0 = hws_tsc();                            \
		for (uint64_t i = 0; i < pairs; i++) {     \
			hws_##kind##_acquire(lock);        \
			hws_##kind##_release(lock);        \
		}                                          \
		t1 = hws_tsc();                            \
	} while (0)

uint64_t bench_typed_pairs(struct bench_typed *t, uint64_t pairs)
{
	uint64_t t0 = 0, t1 = 0;
	switch (t->kind) {
	case T_TAS: TYPED_LOOP(tas, &t->u.tas); break;
	case T_TTAS: TYPED_LOOP(ttas, &t->u.ttas); break;
	case T_TICKET: TYPED_LOOP(ticket, &t->u.ticket); break;
	case T_MCS: TYPED_LOOP(mcs, &t->u.mcs); break;
	case T_CLH: TYPED_LOOP(clh, &t->u.clh); break;
	case T_1SPINNER: TYPED_LOOP(1spinner, &t->u.s1); break;
	case T_MUTEX: TYPED_LOOP(mutex, &t->u.mutex); break;
	case T_AUTO: TYPED_LOOP(auto, &t->u.autolock); break;
	}
	return t1 - t0;
}

void bench_typed_free(struct bench_typed *t)
{
	if (!t)
		return;
	switch (t->kind) {   /* the queue locks keep nodes */
	case T_MCS: hws_mcs_destroy(&t->u.mcs); break;
	case T_CLH: hws_clh_destroy(&t->u.clh); break;
	case T_1SPINNER: hws_1spinner_destroy(&t->u.s1); break;
	default: break;
	}
	free(t);
}

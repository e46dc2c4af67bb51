/* Lock implementations for the bench, hwsync and peers alike, behind one
 * acquire/release interface taking the caller's thread index (the queue locks
 * of Concurrency Kit need a node per thread).  omp-* locks run in an OpenMP
 * team (bench_lock_team), the others on plain pinned threads. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <hwsync/hwsync.h>
#include "bench/harness.h"
#include "bench/peers.h"
#if HWS_HAVE_CK
#include <ck_spinlock.h>
#endif
#if HWS_HAVE_OPENMP
#include <omp.h>
/* The entry points GCC emits for an unnamed `#pragma omp critical` (libgomp
 * ABI, GOMP_1.0): the construct split into acquire and release so that it is
 * timed like the other locks. */
void GOMP_critical_start(void);
void GOMP_critical_end(void);
#endif

enum lkind { L_MUTEX, L_SPIN, L_OMP_LOCK, L_OMP_CRITICAL, L_CK_FAS, L_CK_TICKET, L_CK_MCS,
	     L_CK_CLH, L_HWS };

#if HWS_HAVE_CK
struct ck_mcs_node {
	_Alignas(HWS_CACHELINE) ck_spinlock_mcs_context_t ctx;
};
struct ck_clh_node {
	_Alignas(HWS_CACHELINE) ck_spinlock_clh_t node;
};
struct ck_clh_mine {
	_Alignas(HWS_CACHELINE) ck_spinlock_clh_t *p;   /* the node this thread enqueues next */
};
#endif

struct bench_lock {
	enum lkind kind;
	unsigned n;
	_Alignas(HWS_CACHELINE) pthread_mutex_t mu;
	_Alignas(HWS_CACHELINE) pthread_spinlock_t spin;
#if HWS_HAVE_OPENMP
	_Alignas(HWS_CACHELINE) omp_lock_t omp;
#endif
#if HWS_HAVE_CK
	_Alignas(HWS_CACHELINE) ck_spinlock_fas_t fas;
	_Alignas(HWS_CACHELINE) ck_spinlock_ticket_t ticket;
	_Alignas(HWS_CACHELINE) ck_spinlock_mcs_t mcs;           /* tail pointer */
	_Alignas(HWS_CACHELINE) ck_spinlock_clh_t *clh;          /* tail pointer */
	struct ck_mcs_node *mcs_nodes;
	struct ck_clh_node *clh_nodes;                          /* n + 1: one starts unowned */
	struct ck_clh_mine *clh_mine;
#endif
	hws_lock_t *hws;
};

int bench_lock_new(struct bench_lock **out, const char *impl, const char *policy, unsigned n,
		   bool stats, char *why, size_t whylen)
{
	struct bench_lock *l = bench_zalloc_lines(sizeof *l);
	if (!l) {
		snprintf(why, whylen, "out of memory");
		return ENOMEM;
	}
	l->n = n;
	(void)stats;
	(void)policy;
	if (!strcmp(impl, "pthread-mutex")) {
		l->kind = L_MUTEX;
		pthread_mutex_init(&l->mu, NULL);
	} else if (!strcmp(impl, "pthread-spin")) {
		l->kind = L_SPIN;
		pthread_spin_init(&l->spin, PTHREAD_PROCESS_PRIVATE);
	} else if (!strncmp(impl, "omp-", 4)) {
#if HWS_HAVE_OPENMP
		if (!strcmp(impl, "omp-lock")) {
			l->kind = L_OMP_LOCK;
			omp_init_lock(&l->omp);
		} else if (!strcmp(impl, "omp-critical")) {
			l->kind = L_OMP_CRITICAL;
		} else {
			goto unknown;
		}
#else
		snprintf(why, whylen, "built without GNU OpenMP");
		goto unsupported;
#endif
	} else if (!strncmp(impl, "ck-", 3)) {
#if HWS_HAVE_CK
		if (!strcmp(impl, "ck-fas")) {
			l->kind = L_CK_FAS;
			ck_spinlock_fas_init(&l->fas);
		} else if (!strcmp(impl, "ck-ticket")) {
			l->kind = L_CK_TICKET;
			ck_spinlock_ticket_init(&l->ticket);
		} else if (!strcmp(impl, "ck-mcs")) {
			l->kind = L_CK_MCS;
			ck_spinlock_mcs_init(&l->mcs);
			if (!(l->mcs_nodes = bench_zalloc_lines(n * sizeof *l->mcs_nodes)))
				goto nomem;
		} else if (!strcmp(impl, "ck-clh")) {
			l->kind = L_CK_CLH;
			if (!(l->clh_nodes = bench_zalloc_lines((n + 1) * sizeof *l->clh_nodes)) ||
			    !(l->clh_mine = bench_zalloc_lines(n * sizeof *l->clh_mine)))
				goto nomem;
			ck_spinlock_clh_init(&l->clh, &l->clh_nodes[n].node);
			for (unsigned i = 0; i < n; i++)
				l->clh_mine[i].p = &l->clh_nodes[i].node;
		} else {
			goto unknown;
		}
#else
		snprintf(why, whylen, "built without Concurrency Kit (libck-dev)");
		goto unsupported;
#endif
	} else if (bench_lock_is_hwsync(impl)) {
		l->kind = L_HWS;
		int rc = hws_lock_create(&l->hws, impl + 7, policy);
		if (rc) {
			snprintf(why, whylen, "%s", hws_last_error());
			free(l);
			return rc;
		}
		hws_lock_stats_enable(l->hws, stats);
	} else {
		goto unknown;
	}
	*out = l;
	return 0;
unknown:
	snprintf(why, whylen, "unknown lock '%s'", impl);
	bench_lock_free(l);
	return EINVAL;
#if HWS_HAVE_CK
nomem:
	snprintf(why, whylen, "out of memory");
	bench_lock_free(l);
	return ENOMEM;
#endif
#if !HWS_HAVE_OPENMP || !HWS_HAVE_CK
unsupported:
	free(l);
	return ENOTSUP;
#endif
}

void bench_lock_acquire(struct bench_lock *l, unsigned tid)
{
	switch (l->kind) {
	case L_MUTEX:
		pthread_mutex_lock(&l->mu);
		break;
	case L_SPIN:
		pthread_spin_lock(&l->spin);
		break;
#if HWS_HAVE_OPENMP
	case L_OMP_LOCK:
		omp_set_lock(&l->omp);
		break;
	case L_OMP_CRITICAL:
		GOMP_critical_start();
		break;
#endif
#if HWS_HAVE_CK
	case L_CK_FAS:
		ck_spinlock_fas_lock(&l->fas);
		break;
	case L_CK_TICKET:
		ck_spinlock_ticket_lock(&l->ticket);
		break;
	case L_CK_MCS:
		ck_spinlock_mcs_lock(&l->mcs, &l->mcs_nodes[tid].ctx);
		break;
	case L_CK_CLH:
		ck_spinlock_clh_lock(&l->clh, l->clh_mine[tid].p);
		break;
#endif
	case L_HWS:
		hws_lock_acquire(l->hws);
		break;
	default:
		break;
	}
	(void)tid;
}

void bench_lock_release(struct bench_lock *l, unsigned tid)
{
	switch (l->kind) {
	case L_MUTEX:
		pthread_mutex_unlock(&l->mu);
		break;
	case L_SPIN:
		pthread_spin_unlock(&l->spin);
		break;
#if HWS_HAVE_OPENMP
	case L_OMP_LOCK:
		omp_unset_lock(&l->omp);
		break;
	case L_OMP_CRITICAL:
		GOMP_critical_end();
		break;
#endif
#if HWS_HAVE_CK
	case L_CK_FAS:
		ck_spinlock_fas_unlock(&l->fas);
		break;
	case L_CK_TICKET:
		ck_spinlock_ticket_unlock(&l->ticket);
		break;
	case L_CK_MCS:
		ck_spinlock_mcs_unlock(&l->mcs, &l->mcs_nodes[tid].ctx);
		break;
	case L_CK_CLH:
		/* CLH recycling: the thread takes over its predecessor's node */
		ck_spinlock_clh_unlock(&l->clh_mine[tid].p);
		break;
#endif
	case L_HWS:
		hws_lock_release(l->hws);
		break;
	default:
		break;
	}
	(void)tid;
}

/* PAIRS back-to-back acquire+release pairs of one implementation, timed as a
 * whole: the calls of each kind sit in a loop of their own, so no dispatch is
 * paid per pair (thread 0's node for the queue locks). */
#define PAIRS_LOOP(acq, rel)                              \
	do {                                              \
		t0 = hws_tsc();                           \
		for (uint64_t i = 0; i < pairs; i++) {    \
			acq;                              \
			rel;                              \
		}                                         \
		t1 = hws_tsc();                           \
	} while (0)

uint64_t bench_lock_pairs(struct bench_lock *l, uint64_t pairs)
{
	uint64_t t0 = 0, t1 = 0;
	switch (l->kind) {
	case L_MUTEX:
		PAIRS_LOOP(pthread_mutex_lock(&l->mu), pthread_mutex_unlock(&l->mu));
		break;
	case L_SPIN:
		PAIRS_LOOP(pthread_spin_lock(&l->spin), pthread_spin_unlock(&l->spin));
		break;
#if HWS_HAVE_OPENMP
	case L_OMP_LOCK:
		PAIRS_LOOP(omp_set_lock(&l->omp), omp_unset_lock(&l->omp));
		break;
	case L_OMP_CRITICAL:
		PAIRS_LOOP(GOMP_critical_start(), GOMP_critical_end());
		break;
#endif
#if HWS_HAVE_CK
	case L_CK_FAS:
		PAIRS_LOOP(ck_spinlock_fas_lock(&l->fas), ck_spinlock_fas_unlock(&l->fas));
		break;
	case L_CK_TICKET:
		PAIRS_LOOP(ck_spinlock_ticket_lock(&l->ticket), ck_spinlock_ticket_unlock(&l->ticket));
		break;
	case L_CK_MCS:
		PAIRS_LOOP(ck_spinlock_mcs_lock(&l->mcs, &l->mcs_nodes[0].ctx),
			   ck_spinlock_mcs_unlock(&l->mcs, &l->mcs_nodes[0].ctx));
		break;
	case L_CK_CLH:
		PAIRS_LOOP(ck_spinlock_clh_lock(&l->clh, l->clh_mine[0].p),
			   ck_spinlock_clh_unlock(&l->clh_mine[0].p));
		break;
#endif
	case L_HWS:
		PAIRS_LOOP(hws_lock_acquire(l->hws), hws_lock_release(l->hws));
		break;
	default:
		break;
	}
	return t1 - t0;
}

bool bench_lock_stats(struct bench_lock *l, struct hws_lock_stats *st)
{
	if (l->kind == L_HWS)
		return hws_lock_stats_get(l->hws, st) == 0;
	(void)l;
	(void)st;
	return false;
}

void bench_lock_free(struct bench_lock *l)
{
	if (!l)
		return;
	switch (l->kind) {
	case L_MUTEX:
		pthread_mutex_destroy(&l->mu);
		break;
	case L_SPIN:
		pthread_spin_destroy(&l->spin);
		break;
#if HWS_HAVE_OPENMP
	case L_OMP_LOCK:
		omp_destroy_lock(&l->omp);
		break;
#endif
	case L_HWS:
		hws_lock_destroy(l->hws);
		break;
	default:
		break;
	}
#if HWS_HAVE_CK
	free(l->mcs_nodes);
	free(l->clh_nodes);
	free(l->clh_mine);
#endif
	free(l);
}

int bench_lock_team(struct bench_lock *l, unsigned n, const int *cpus,
		    void (*fn)(void *arg, unsigned i), void *arg)
{
	if (l->kind == L_OMP_LOCK || l->kind == L_OMP_CRITICAL)
		return bench_omp_team(n, cpus, fn, arg);
	return bench_run_threads(n, cpus, fn, arg);
}

void bench_lock_impls(char *buf, size_t len)
{
	bench_impls_append(buf, len, BENCH_LOCK_PEERS, "hwsync-", hws_lock_kinds());
}

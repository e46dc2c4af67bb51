/* Barrier implementations for the bench, hwsync and peers alike.  Each is
 * created for n threads and waited on by thread tid; omp-barrier must run in
 * an OpenMP team (bench_barrier_team), the others on plain pinned threads. */
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
#include <ck_barrier.h>
#endif

enum bkind { B_PTHREAD, B_OMP, B_CXX, B_CK_CENTRAL, B_CK_DISS, B_CK_COMB, B_CK_TOUR, B_HWS };

#if HWS_HAVE_CK
/* A thread's own state for each ck barrier, one cache line per thread: every
 * thread flips its sense each episode, so packed states would be falsely shared. */
struct ck_thread {
	_Alignas(HWS_CACHELINE) ck_barrier_centralized_state_t cent;
	ck_barrier_dissemination_state_t diss;
	ck_barrier_combining_state_t comb;
	ck_barrier_tournament_state_t tour;
};
#endif

struct bench_barrier {
	enum bkind kind;
	unsigned n;
	pthread_barrier_t pb;
	struct cxx_barrier *cxx;
	hws_barrier_t *hws;
#if HWS_HAVE_CK
	_Alignas(HWS_CACHELINE) ck_barrier_centralized_t ckc;
	ck_barrier_dissemination_t *ckd;       /* one per thread, as ck wants */
	ck_barrier_dissemination_flag_t **ckd_flags;
	ck_barrier_combining_t ckb;
	ck_barrier_combining_group_t *ckb_groups;   /* [0] the root, then one per pair of threads */
	ck_barrier_tournament_t ckt;
	ck_barrier_tournament_round_t **ckt_rounds; /* a row of rounds per thread */
	struct ck_thread *ck;                       /* [n] */
#endif
};

#if HWS_HAVE_CK
/* ck's barriers that need more than a counter: 0 or ENOMEM. */
static int ck_barrier_setup(struct bench_barrier *b, unsigned n)
{
	if (!(b->ck = bench_zalloc_lines(n * sizeof *b->ck)))
		return ENOMEM;
	if (b->kind == B_CK_DISS) {
		unsigned size = ck_barrier_dissemination_size(n);
		if (!(b->ckd = calloc(n, sizeof *b->ckd)) ||
		    !(b->ckd_flags = calloc(n, sizeof *b->ckd_flags)))
			return ENOMEM;
		for (unsigned i = 0; i < n; i++)
			/* 2 x size: ck points flags[1] at flags[0] + size */
			if (!(b->ckd_flags[i] = calloc(2 * size, sizeof **b->ckd_flags)))
				return ENOMEM;
		ck_barrier_dissemination_init(b->ckd, b->ckd_flags, n);
		/* subscribe hands out thread ids in call order: do it here */
		for (unsigned i = 0; i < n; i++)
			ck_barrier_dissemination_subscribe(b->ckd, &b->ck[i].diss);
	} else if (b->kind == B_CK_COMB) {
		/* A combining tree of groups of two threads (the last may have one):
		 * the last of a group to arrive goes on to the parent group. */
		unsigned ngroups = (n + 1) / 2;
		if (!(b->ckb_groups = bench_zalloc_lines((ngroups + 1) * sizeof *b->ckb_groups)))
			return ENOMEM;
		ck_barrier_combining_init(&b->ckb, &b->ckb_groups[0]);
		for (unsigned g = 0; g < ngroups; g++)
			ck_barrier_combining_group_init(&b->ckb, &b->ckb_groups[1 + g],
							2 * g + 1 < n ? 2 : 1);
		for (unsigned i = 0; i < n; i++)
			b->ck[i].comb.sense = ~0u;   /* what CK_BARRIER_COMBINING_STATE_INITIALIZER says */
	} else if (b->kind == B_CK_TOUR) {
		unsigned size = ck_barrier_tournament_size(n);
		if (!(b->ckt_rounds = calloc(n, sizeof *b->ckt_rounds)))
			return ENOMEM;
		for (unsigned i = 0; i < n; i++)
			if (!(b->ckt_rounds[i] = bench_zalloc_lines(size * sizeof **b->ckt_rounds)))
				return ENOMEM;
		ck_barrier_tournament_init(&b->ckt, b->ckt_rounds, n);
		/* subscribe hands out thread ids in call order, as above */
		for (unsigned i = 0; i < n; i++)
			ck_barrier_tournament_subscribe(&b->ckt, &b->ck[i].tour);
	}
	return 0;
}
#endif

int bench_barrier_new(struct bench_barrier **out, const char *impl, const char *policy,
		      unsigned n, char *why, size_t whylen)
{
	struct bench_barrier *b = bench_zalloc_lines(sizeof *b);
	if (!b) {
		snprintf(why, whylen, "out of memory");
		return ENOMEM;
	}
	b->n = n;
	if (!strcmp(impl, "pthread-barrier")) {
		b->kind = B_PTHREAD;
		pthread_barrier_init(&b->pb, NULL, n);
	} else if (!strcmp(impl, "omp-barrier")) {
#if HWS_HAVE_OPENMP
		b->kind = B_OMP;
#else
		snprintf(why, whylen, "built without GNU OpenMP");
		goto unsupported;
#endif
	} else if (!strcmp(impl, "cxx-barrier")) {
		b->kind = B_CXX;
		if (!(b->cxx = cxx_barrier_new(n)))
			goto nomem;
	} else if (!strncmp(impl, "ck-", 3)) {
#if HWS_HAVE_CK
		if (!strcmp(impl, "ck-centralized"))
			b->kind = B_CK_CENTRAL;
		else if (!strcmp(impl, "ck-dissemination"))
			b->kind = B_CK_DISS;
		else if (!strcmp(impl, "ck-combining"))
			b->kind = B_CK_COMB;
		else if (!strcmp(impl, "ck-tournament"))
			b->kind = B_CK_TOUR;
		else
			goto unknown;
		if (ck_barrier_setup(b, n))
			goto nomem;
#else
		snprintf(why, whylen, "built without Concurrency Kit (libck-dev)");
		goto unsupported;
#endif
	} else if (bench_barrier_is_hwsync(impl)) {
		b->kind = B_HWS;
		int rc = hws_barrier_create(&b->hws, impl + 7, n, policy);
		if (rc) {
			snprintf(why, whylen, "%s", hws_last_error());
			free(b);
			return rc;
		}
	} else {
		goto unknown;
	}
	*out = b;
	return 0;
unknown:
	snprintf(why, whylen, "unknown barrier '%s'", impl);
	free(b);
	return EINVAL;
nomem:
	snprintf(why, whylen, "out of memory");
	bench_barrier_free(b);
	return ENOMEM;
#if !HWS_HAVE_OPENMP || !HWS_HAVE_CK
unsupported:
	free(b);
	return ENOTSUP;
#endif
}

int bench_barrier_of(struct bench_cell *c, unsigned n, struct bench_barrier **b)
{
	char why[200];
	int rc = bench_barrier_new(b, c->impl, bench_cell_policy(c), n, why, sizeof why);
	if (rc)
		snprintf(c->skip, sizeof c->skip, "%s", why);
	return rc;
}

void bench_barrier_wait(struct bench_barrier *b, unsigned tid)
{
	switch (b->kind) {
	case B_PTHREAD:
		pthread_barrier_wait(&b->pb);
		break;
	case B_OMP: {
#if HWS_HAVE_OPENMP
#pragma omp barrier
#endif
		break;
	}
	case B_CXX:
		cxx_barrier_wait(b->cxx);
		break;
#if HWS_HAVE_CK
	case B_CK_CENTRAL:
		ck_barrier_centralized(&b->ckc, &b->ck[tid].cent, b->n);
		break;
	case B_CK_DISS:
		ck_barrier_dissemination(b->ckd, &b->ck[tid].diss);
		break;
	case B_CK_COMB:
		ck_barrier_combining(&b->ckb, &b->ckb_groups[1 + tid / 2], &b->ck[tid].comb);
		break;
	case B_CK_TOUR:
		ck_barrier_tournament(&b->ckt, &b->ck[tid].tour);
		break;
#endif
	case B_HWS:
		hws_barrier_wait(b->hws);
		break;
	default:
		break;
	}
	(void)tid;
}

void bench_barrier_free(struct bench_barrier *b)
{
	if (!b)
		return;
	if (b->kind == B_PTHREAD)
		pthread_barrier_destroy(&b->pb);
	cxx_barrier_free(b->cxx);
	if (b->hws)
		hws_barrier_destroy(b->hws);
#if HWS_HAVE_CK
	if (b->ckd_flags) {
		for (unsigned i = 0; i < b->n; i++)
			free(b->ckd_flags[i]);
		free(b->ckd_flags);
	}
	free(b->ckd);
	if (b->ckt_rounds) {
		for (unsigned i = 0; i < b->n; i++)
			free(b->ckt_rounds[i]);
		free(b->ckt_rounds);
	}
	free(b->ckb_groups);
	free(b->ck);
#endif
	free(b);
}

int bench_barrier_team(struct bench_barrier *b, unsigned n, const int *cpus,
		       void (*fn)(void *arg, unsigned i), void *arg)
{
	if (b->kind == B_OMP)
		return bench_omp_team(n, cpus, fn, arg);
	return bench_run_threads(n, cpus, fn, arg);
}

int bench_for_each_barrier(struct bench_ctx *ctx, unsigned n,
			   int (*add)(struct bench_ctx *ctx, const char *impl, const char *policy,
				      void *arg), void *arg)
{
	char list[BENCH_IMPLS_LEN] = "", why[200];
	const char *pwhy;
	int rc;

	bench_barrier_impls(list, sizeof list);
	for (char *save, *impl = strtok_r(list, ",", &save); impl; impl = strtok_r(NULL, ",", &save)) {
		if (!bench_impl_on(ctx, impl))
			continue;
		bool hws = bench_barrier_is_hwsync(impl);
		unsigned npol = hws ? bench_policy_count(ctx) : 1;
		for (unsigned k = 0; k < npol; k++) {
			const char *pol = hws ? bench_policy(ctx, k, &pwhy) : NULL;
			struct bench_barrier *b;
			if (hws && pwhy) {
				/* the same reason for every kind: say it once */
				if (!strcmp(impl, "hwsync-central") || !bench_impl_on(ctx, "hwsync-central"))
					bench_skip(ctx, pwhy, "hwsync barriers policy %s", pol);
				continue;
			}
			if ((rc = bench_barrier_new(&b, impl, pol, n, why, sizeof why))) {
				/* not built in: one line for all its policies */
				bool all = !hws || rc == ENOTSUP;
				bench_skip(ctx, why, "%s%s%s", impl, all ? "" : " ", all ? "" : pol);
				if (all)
					break;
				continue;
			}
			bench_barrier_free(b);
			if ((rc = add(ctx, impl, pol, arg)))
				return rc;
		}
	}
	return 0;
}

void bench_barrier_impls(char *buf, size_t len)
{
	bench_impls_append(buf, len, BENCH_BARRIER_PEERS, "hwsync-", hws_barrier_kinds());
}

/* From the library's kinds, which are only known at run time. */
char bench_barrier_all[BENCH_IMPLS_LEN];
__attribute__((constructor)) static void bench_barrier_all_fill(void)
{
	bench_barrier_impls(bench_barrier_all, sizeof bench_barrier_all);
}

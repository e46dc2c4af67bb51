/* uncontended: what one acquire+release pair costs a thread that has the lock
 * to itself, the common case of a well-partitioned program.  Every lock of
 * the `locks` experiment, and hwsync's kinds twice: through the generic
 * hws_lock_* API and through their typed, inlinable headers.
 *
 * One pinned thread takes and drops the lock in batches of --batch pairs
 * timed by the TSC; a sample is a batch's mean per pair, so the cost of
 * reading the TSC is spread over the batch. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <hwsync/hwsync.h>
#include "bench/harness.h"
#include "bench/peers.h"

/* --impls: filled at start-up from the library's kinds (peers.h). */
static char unc_impls[BENCH_IMPLS_LEN] = "";

struct unc_cell {
	bool typed;
	uint64_t duration_ns, batch_pairs;
	size_t budget;
	struct bench_lock *l;
	struct bench_typed *t;
	uint64_t *batch;            /* cycles of each batch */
	size_t nbatch;
};

static void unc_thread(void *arg, unsigned i)
{
	struct unc_cell *k = arg;
	uint64_t end = hws_tsc() + hws_ns_to_tsc(k->duration_ns);
	(void)i;
	/* At least one batch, even when the thread was preempted past the
	 * end of a short window before its first batch. */
	do
		k->batch[k->nbatch++] = k->typed ? bench_typed_pairs(k->t, k->batch_pairs)
						 : bench_lock_pairs(k->l, k->batch_pairs);
	while (k->nbatch < k->budget && hws_tsc() < end);
}

static int unc_run(struct bench_ctx *ctx, struct bench_cell *c)
{
	struct unc_cell *k = c->priv;
	const char *pol = bench_cell_policy(c);
	char why[200];
	int rc;

	k->duration_ns = bench_opts(ctx)->duration_ns;
	k->budget = bench_sample_budget(ctx);
	k->nbatch = 0;
	if (!(k->batch = malloc(k->budget * sizeof *k->batch))) {
		snprintf(c->skip, sizeof c->skip, "out of memory");
		return ENOMEM;
	}
	rc = k->typed ? bench_typed_new(&k->t, c->impl, pol, why, sizeof why)
		      : bench_lock_new(&k->l, c->impl, pol, 1, false, why, sizeof why);
	if (rc) {
		snprintf(c->skip, sizeof c->skip, "%s", why);
	} else {
		/* omp-* locks run in a team of one, the others on a plain thread */
		rc = k->typed ? bench_run_threads(1, c->cpus, unc_thread, k)
			      : bench_lock_team(k->l, 1, c->cpus, unc_thread, k);
		if (rc)
			snprintf(c->skip, sizeof c->skip, "cannot run the thread: %s", strerror(rc));
	}
	for (size_t i = 0; !rc && i < k->nbatch; i++)
		bench_sample_cycles_per(c, "pair", k->batch[i], k->batch_pairs);
	bench_typed_free(k->t);
	bench_lock_free(k->l);
	k->t = NULL;
	k->l = NULL;
	free(k->batch);
	k->batch = NULL;
	return rc;
}

static void unc_cleanup(struct bench_cell *c)
{
	free(c->priv);
	c->priv = NULL;
}

/* Can IMPL be created here?  0, or the error with the reason recorded. */
static int unc_probe(struct bench_ctx *ctx, const char *impl, const char *pol, bool typed)
{
	char why[200];
	struct bench_lock *l;
	struct bench_typed *t;
	int rc = typed ? bench_typed_new(&t, impl, pol, why, sizeof why)
		       : bench_lock_new(&l, impl, pol, 1, false, why, sizeof why);
	if (rc) {
		bool all = !pol || rc == ENOTSUP;   /* not built in: once for all policies */
		bench_skip(ctx, why, "%s%s%s", impl, all ? "" : " ", all ? "" : pol);
		return rc;
	}
	if (typed)
		bench_typed_free(t);
	else
		bench_lock_free(l);
	return 0;
}

static int unc_setup(struct bench_ctx *ctx)
{
	const struct bench_list *pl = bench_placements(ctx);
	unsigned nth;
	const unsigned *threads = bench_threads(ctx, &nth);
	const char *why;
	unsigned batch, one;

	if (nth != 1 || threads[0] != 1)
		return bench_error("uncontended: one thread only (--threads 1)");
	if (bench_parse_ulist(bench_xopt(ctx, "batch"), &batch, 1, &one) || !batch ||
	    batch > 1000000)
		return bench_error("uncontended: --batch takes one number 1..1000000");
	/* unusable policies: said once for every hwsync row */
	for (unsigned p = 0; p < bench_policy_count(ctx); p++) {
		const char *pol = bench_policy(ctx, p, &why);
		if (why)
			bench_skip(ctx, why, "hwsync locks policy %s", pol);
	}
	for (unsigned pi = 0; pi < pl->n; pi++) {
		int cpus[BENCH_MAX_CPUS];
		if (bench_place(ctx, pl->v[pi], 1, cpus, &why)) {
			bench_skip(ctx, why, "all placement=%s", pl->v[pi]);
			continue;
		}
		char list[BENCH_IMPLS_LEN];
		snprintf(list, sizeof list, "%s", unc_impls);
		for (char *save, *impl = strtok_r(list, ",", &save); impl;
		     impl = strtok_r(NULL, ",", &save)) {
			if (!bench_impl_on(ctx, impl))
				continue;
			bool typed = !strncmp(impl, "hwsync-typed-", 13);
			bool per_policy = bench_lock_is_hwsync(impl) && strcmp(impl, "hwsync-auto");
			unsigned npol = per_policy ? bench_policy_count(ctx) : 1;
			for (unsigned p = 0; p < npol; p++) {
				const char *pol = per_policy ? bench_policy(ctx, p, &why) : NULL;
				if (pol && why)
					continue;
				int rc = unc_probe(ctx, impl, pol, typed);
				if (rc == ENOTSUP)
					break;
				if (rc)
					continue;
				struct bench_cell *c = bench_cell_new_priv(ctx, impl, pol,
									   sizeof(struct unc_cell));
				if (!c)
					return bench_error("out of memory");
				struct unc_cell *k = c->priv;
				k->typed = typed;
				k->batch_pairs = batch;
				c->nthreads = 1;
				c->cpus[0] = cpus[0];
				bench_param(c, "placement", "%s", pl->v[pi]);
			}
		}
	}
	return 0;
}

static const struct bench_xopt unc_xopts[] = {
	{ "batch", "1000", NULL,
	  "acquire+release pairs timed together: one sample is their mean" },
	{ NULL, NULL, NULL, NULL },
};


static const struct bench_exp uncontended_exp = {
	.name = "uncontended",
	.title = "uncontended lock: one acquire+release pair, generic and typed API",
	.reproduces = "docs/results/archive/lockbench.md (uncontended acquire+release)",
	.help =
"    One pinned thread takes and drops a lock nobody else uses, in batches of\n"
"    --batch pairs timed by the TSC, for --duration per repetition: the cost of a\n"
"    lock on the path every program pays, with no waiting at all.  Each\n"
"    implementation's calls sit in a loop of their own (no dispatch per pair).\n"
"    Rows: every lock of the `locks` experiment; hwsync's kinds once per wait\n"
"    policy (default spin, pause, futex, adaptive; --quick futex, adaptive),\n"
"    both through the generic API and through the typed header.\n"
"\n"
"    pthread-mutex     pthread_mutex_lock/unlock (glibc, default attributes)\n"
"    pthread-spin      pthread_spin_lock/unlock (glibc)\n"
"    omp-lock          omp_set_lock/omp_unset_lock (a GNU OpenMP team of one)\n"
"    omp-critical      an unnamed #pragma omp critical (GOMP_critical_start/end)\n"
"    ck-fas, ck-ticket, ck-mcs, ck-clh\n"
"                      Concurrency Kit spinlocks\n"
"    hwsync-KIND       hws_lock_acquire/release of hws_lock_create(KIND, policy):\n"
"                      the generic API, one indirect call per operation\n"
"    hwsync-auto       hws_lock_create(\"auto\", NULL)\n"
"    hwsync-typed-KIND hws_KIND_acquire/release of hwsync/lock_KIND.h: the typed\n"
"                      API, inlined into the loop\n"
"\n"
"METRICS\n"
"    pair     one acquire plus one release: the mean of a batch (--batch)\n",
	.impls = unc_impls,
	.uses_policies = true,
	.def_policies = "spin,pause,futex,adaptive",
	.quick_policies = "futex,adaptive",
	.def_threads = "1",
	.def_placements = "core",
	.xopts = unc_xopts,
	.rank = 75,
	.setup = unc_setup,
	.run = unc_run,
	.cleanup = unc_cleanup,
};
__attribute__((constructor)) static void unc_impls_fill(void)
{
	bench_lock_impls(unc_impls, sizeof unc_impls);
	bench_typed_impls(unc_impls, sizeof unc_impls);
}
BENCH_REGISTER(uncontended_exp)

/* asym: fine-grained barrier synchronization of two threads with unequal
 * work.  Reproduces [AK08] Fig. 4 (Fig. 3b): the heavy thread does 10
 * units of a 10x10 matrix multiply per iteration, the light one 0..10 units,
 * and they meet at a barrier every iteration; throughput per barrier. */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <hwsync/hwsync.h>
#include "bench/harness.h"
#include "bench/peers.h"

#define ASYM_HEAVY 10   /* units the heavy thread does ([AK08]) */
#define ASYM_N 10       /* a unit: one 10 x 10 matrix multiply */
#define ASYM_BATCH 64   /* iterations per sample */

struct asym_cell {
	unsigned light;
	uint64_t duration_ns;
	struct bench_barrier *b;
	_Atomic uint32_t stop_at;       /* the batch after which both leave */
	double *iter;          /* cycles per iteration, one per batch */
	size_t niter, budget;
};

static void asym_thread(void *arg, unsigned i)
{
	struct asym_cell *k = arg;
	unsigned units = i == 0 ? ASYM_HEAVY : k->light;
	uint64_t end = hws_tsc() + hws_ns_to_tsc(k->duration_ns);
	double sink = 0;
	for (uint32_t batch = 0;; batch++) {
		uint64_t t0 = hws_tsc();
		for (unsigned r = 0; r < ASYM_BATCH; r++) {
			sink += bench_matmul(ASYM_N, units);
			bench_barrier_wait(k->b, i);
		}
		if (i == 0) {
			uint64_t t1 = hws_tsc();
			if (k->niter < k->budget)
				k->iter[k->niter++] = (double)(t1 - t0) / ASYM_BATCH;
			if (t1 >= end || k->niter >= k->budget)
				/* relaxed: the next barrier orders it for the light thread */
				atomic_store_explicit(&k->stop_at, batch, memory_order_relaxed);
		}
		bench_barrier_wait(k->b, i);   /* both see the same stop_at */
		/* a batch number, not a flag: a late reader must not take the stop
		 * of the next batch for this one (barrier-pair says more) */
		if (atomic_load_explicit(&k->stop_at, memory_order_relaxed) == batch)
			break;
	}
	if (sink == 42.4242)
		fputc(' ', stderr);
}

static int asym_run(struct bench_ctx *ctx, struct bench_cell *c)
{
	struct asym_cell *k = c->priv;
	int rc = bench_barrier_of(c, 2, &k->b);
	if (rc)
		return rc;
	k->duration_ns = bench_opts(ctx)->duration_ns;
	k->niter = 0;
	atomic_store(&k->stop_at, UINT32_MAX);
	rc = bench_barrier_team(k->b, 2, c->cpus, asym_thread, k);
	bench_barrier_free(k->b);
	k->b = NULL;
	if (rc) {
		snprintf(c->skip, sizeof c->skip, "cannot pin threads: %s", strerror(rc));
		return rc;
	}
	for (size_t i = 0; i < k->niter; i++) {
		bench_sample_cycles(c, "iteration", (uint64_t)k->iter[i]);
		bench_sample_value(c, "throughput", "kbarriers/s",
				   (double)hws_cpu()->tsc_hz / k->iter[i] / 1e3);
	}
	return 0;
}

static void asym_cleanup(struct bench_cell *c)
{
	struct asym_cell *k = c->priv;
	if (k)
		free(k->iter);
	free(k);
	c->priv = NULL;
}

struct asym_add {
	const char *placement;
	const int *cpus;
	unsigned light;
};

static int asym_add(struct bench_ctx *ctx, const char *impl, const char *policy, void *arg)
{
	struct asym_add *a = arg;
	struct bench_cell *c = bench_cell_new_priv(ctx, impl, policy, sizeof(struct asym_cell));
	if (!c)
		return bench_error("out of memory");
	struct asym_cell *k = c->priv;
	k->light = a->light;
	k->budget = bench_sample_budget(ctx);
	if (!(k->iter = malloc(k->budget * sizeof(double))))
		return bench_error("out of memory");
	c->nthreads = 2;
	memcpy(c->cpus, a->cpus, 2 * sizeof *a->cpus);
	bench_param_num(c, "light", a->light);
	bench_param(c, "placement", "%s", a->placement);
	return 0;
}

static const struct bench_xopt asym_xopts[] = {
	{ "light", "0-10", "0,5,10", "units of work of the light thread (0..10; the heavy one "
	  "does 10)" },
	{ NULL, NULL, NULL, NULL },
};

static int asym_setup(struct bench_ctx *ctx)
{
	const struct bench_list *pl = bench_placements(ctx);
	unsigned light[BENCH_MAX_LIST], nlight;
	const char *why;
	if (bench_parse_ulist(bench_xopt(ctx, "light"), light, BENCH_MAX_LIST, &nlight))
		return bench_error("asym: bad --light '%s' (a list like 0,5,10 or 0-10)",
				   bench_xopt(ctx, "light"));
	for (unsigned i = 0; i < nlight; i++)
		if (light[i] > 100)
			return bench_error("asym: --light %u: at most 100 units", light[i]);
	for (unsigned p = 0; p < pl->n; p++) {
		int cpus[BENCH_MAX_CPUS];
		if (bench_place(ctx, pl->v[p], 2, cpus, &why)) {
			bench_skip(ctx, why, "all placement=%s", pl->v[p]);
			continue;
		}
		for (unsigned l = 0; l < nlight; l++) {
			struct asym_add a = { pl->v[p], cpus, light[l] };
			int rc = bench_for_each_barrier(ctx, 2, asym_add, &a);
			if (rc)
				return rc;
		}
	}
	return 0;
}

static const struct bench_exp asym = {
	.name = "asym",
	.title = "barrier throughput with asymmetric work",
	.reproduces = "[AK08] Fig. 4 (Fig. 3b)",
	.help =
"    Two threads loop, meeting at a barrier every iteration.  The heavy thread\n"
"    does 10 units of work per iteration, the light one --light units (a unit is\n"
"    one 10 x 10 floating-point matrix multiply).  With little light work the\n"
"    light thread waits most of the time and a waiting policy that steals less\n"
"    from its neighbour wins; with equal work the barrier's latency dominates.\n"
"    The iteration time is sampled over batches of 64 iterations for\n"
"    --duration per repetition.  Implementations as in barrier-pair.\n"
"\n"
"METRICS\n"
"    iteration   time per iteration (work + one barrier), ns and cycles\n"
"    throughput  barriers (iterations) per second, thousands\n",
	.impls = bench_barrier_all,
	.uses_policies = true,
	.quick_policies = "pause,futex,adaptive",
	.def_threads = "2",
	.def_placements = "smt,core",
	.xopts = asym_xopts,
	.rank = 40,
	.setup = asym_setup,
	.run = asym_run,
	.cleanup = asym_cleanup,
};
BENCH_REGISTER(asym)

/* barrier-pair: a heavy thread works, a light one waits at the barrier.
 * Reproduces [AK08] Table 2 (Fig. 3a): Twork, Twakeup, Tcall of a barrier.
 *
 * Each round the heavy thread does a fixed matrix multiply and enters the
 * barrier; the light thread is already waiting in it.  Twakeup runs from the
 * heavy thread's arrival to the light thread's departure, Tcall is the heavy
 * thread's time inside the barrier. */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <hwsync/hwsync.h>
#include "bench/harness.h"
#include "bench/peers.h"

struct pair_cell {
	unsigned n, nthreads;
	uint64_t duration_ns;
	size_t budget;
	struct bench_barrier *b;
	_Atomic uint64_t arrive[2];     /* heavy's arrival TSC, by round parity */
	_Atomic uint32_t stop_at;       /* the round after which both leave */
	double *twork, *tcall, *twakeup;
	size_t nwork, nwake;
};

static void pair_thread(void *arg, unsigned i)
{
	struct pair_cell *k = arg;
	double sink = 0;
	uint64_t end = hws_tsc() + hws_ns_to_tsc(k->duration_ns);
	for (unsigned r = 0;; r++) {
		if (i == 0) {   /* heavy */
			uint64_t t0 = hws_tsc();
			sink += bench_matmul(k->n, 1);
			uint64_t t1 = hws_tsc();
			if (t1 >= end || k->nwork + 1 >= k->budget)
				atomic_store_explicit(&k->stop_at, r, memory_order_relaxed);
			/* relaxed: the barrier orders these for the light thread */
			atomic_store_explicit(&k->arrive[r & 1], t1, memory_order_relaxed);
			bench_barrier_wait(k->b, 0);
			uint64_t t2 = hws_tsc();
			k->twork[k->nwork] = (double)(t1 - t0);
			k->tcall[k->nwork++] = (double)(t2 - t1);
		} else {        /* light: straight into the barrier */
			bench_barrier_wait(k->b, i);
			uint64_t td = hws_tsc();
			uint64_t ta = atomic_load_explicit(&k->arrive[r & 1], memory_order_relaxed);
			if (k->nwake < k->budget)
				k->twakeup[k->nwake++] = (double)(td > ta ? td - ta : 0);
		}
		/* relaxed: written before the barrier both just passed.  A round
		 * number, not a flag: a light thread that is slow to read it must
		 * not see a stop meant for the next round and leave its partner
		 * alone in the barrier. */
		if (atomic_load_explicit(&k->stop_at, memory_order_relaxed) == r)
			break;
	}
	if (sink == 42.4242)
		fputc(' ', stderr);
}

static int pair_run(struct bench_ctx *ctx, struct bench_cell *c)
{
	struct pair_cell *k = c->priv;
	int rc = bench_barrier_of(c, 2, &k->b);
	if (rc)
		return rc;
	k->duration_ns = bench_opts(ctx)->duration_ns;
	k->nwork = k->nwake = 0;
	atomic_store(&k->stop_at, UINT32_MAX);
	rc = bench_barrier_team(k->b, 2, c->cpus, pair_thread, k);
	bench_barrier_free(k->b);
	k->b = NULL;
	if (rc) {
		snprintf(c->skip, sizeof c->skip, "cannot pin threads: %s", strerror(rc));
		return rc;
	}
	for (size_t i = 0; i < k->nwork; i++) {
		bench_sample_cycles(c, "twork", (uint64_t)k->twork[i]);
		bench_sample_cycles(c, "tcall", (uint64_t)k->tcall[i]);
	}
	for (size_t i = 0; i < k->nwake; i++)
		bench_sample_cycles(c, "twakeup", (uint64_t)k->twakeup[i]);
	return 0;
}

static void pair_cleanup(struct bench_cell *c)
{
	struct pair_cell *k = c->priv;
	if (!k)
		return;
	free(k->twork);
	free(k->tcall);
	free(k->twakeup);
	free(k);
	c->priv = NULL;
}

struct pair_add {
	const char *placement;
	const int *cpus;
	unsigned n;
};

static int pair_add(struct bench_ctx *ctx, const char *impl, const char *policy, void *arg)
{
	struct pair_add *a = arg;
	struct bench_cell *c = bench_cell_new_priv(ctx, impl, policy, sizeof(struct pair_cell));
	if (!c)
		return bench_error("out of memory");
	struct pair_cell *k = c->priv;
	k->n = a->n;
	k->budget = bench_sample_budget(ctx);
	k->twork = malloc(k->budget * sizeof(double));
	k->tcall = malloc(k->budget * sizeof(double));
	k->twakeup = malloc(k->budget * sizeof(double));
	if (!k->twork || !k->tcall || !k->twakeup)
		return bench_error("out of memory");
	c->nthreads = 2;
	memcpy(c->cpus, a->cpus, 2 * sizeof *a->cpus);
	bench_param_num(c, "n", a->n);
	bench_param(c, "placement", "%s", a->placement);
	return 0;
}

static const struct bench_xopt pair_xopts[] = {
	{ "n", "160", "96", "matrix size of the heavy thread's job (n x n doubles; [AK08] "
	  "used 512)" },
	{ NULL, NULL, NULL, NULL },
};

static int pair_setup(struct bench_ctx *ctx)
{
	const struct bench_list *pl = bench_placements(ctx);
	unsigned n, one;
	const char *why;
	if (bench_parse_ulist(bench_xopt(ctx, "n"), &n, 1, &one) || !n)
		return bench_error("barrier-pair: --n takes one positive number");
	for (unsigned p = 0; p < pl->n; p++) {
		int cpus[BENCH_MAX_CPUS];
		if (bench_place(ctx, pl->v[p], 2, cpus, &why)) {
			bench_skip(ctx, why, "all placement=%s", pl->v[p]);
			continue;
		}
		struct pair_add a = { pl->v[p], cpus, n };
		int rc = bench_for_each_barrier(ctx, 2, pair_add, &a);
		if (rc)
			return rc;
	}
	if (bench_energy_available(&why))
		bench_skip(ctx, why, "energy (joules per barrier)");
	return 0;
}

static const struct bench_exp barrier_pair = {
	.name = "barrier-pair",
	.title = "two-thread barrier: Twork, Twakeup, Tcall",
	.reproduces = "[AK08] Table 2 (Fig. 3a)",
	.help =
"    Two threads meet at a barrier every round.  The heavy thread does a fixed\n"
"    floating-point job (an n x n matrix multiply) and then enters the barrier;\n"
"    the light thread does nothing and waits in the barrier the whole time.\n"
"    Rows: every barrier implementation; hwsync kinds once per wait policy.\n"
"\n"
BENCH_BARRIER_PEERS_HELP
"    hwsync-KIND       hws_barrier_create(KIND, 2, policy), every kind\n"
"                      (IMPLEMENTATIONS below)\n"
"\n"
"METRICS\n"
"    twork    the heavy thread's job: larger = the waiting thread interferes more\n"
"    twakeup  from the heavy thread's arrival to the light thread's departure\n"
"    tcall    the heavy (last-arriving) thread's time inside the barrier\n",
	.impls = bench_barrier_all,
	.uses_policies = true,
	.quick_policies = "pause,futex,adaptive",
	.def_threads = "2",
	.def_placements = "smt,core",
	.xopts = pair_xopts,
	.rank = 30,
	.setup = pair_setup,
	.run = pair_run,
	.cleanup = pair_cleanup,
};
BENCH_REGISTER(barrier_pair)

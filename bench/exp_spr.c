/* spr: speculative precomputation.  A helper thread runs ahead of the worker
 * and loads the data the worker's next phase will read; a barrier after every
 * phase keeps it exactly one phase ahead ([AK08] Sec. 4.4).  Speedup over
 * the serial computation, per barrier implementation, on LU decomposition,
 * transitive closure and sparse matrix-vector multiply (bench/spr_kernels.c).
 * Every result is compared with the serial one; a difference is an error. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <hwsync/hwsync.h>
#include "bench/harness.h"
#include "bench/peers.h"
#include "bench/spr_kernels.h"

#define DEFAULT_POLICIES "pause,futex,adaptive"

struct spr_shared {
	struct spr_kernel *k;
	unsigned refs;
	uint64_t serial_tsc;       /* the serial row's time in the current round */
};

struct spr_cell {
	bool serial;
	struct spr_shared *sh;
	struct bench_barrier *b;
	uint64_t t0, t1, sink;
};

static void serial_fn(void *arg, unsigned i)
{
	struct spr_cell *s = arg;
	struct spr_kernel *k = s->sh->k;
	(void)i;
	s->t0 = hws_tsc();
	for (size_t p = 0; p < k->nphases; p++)
		k->phase(k, p);
	s->t1 = hws_tsc();
}

static void spr_fn(void *arg, unsigned i)
{
	struct spr_cell *s = arg;
	struct spr_kernel *k = s->sh->k;
	size_t np = k->nphases;
	if (i == 0) {   /* the worker */
		s->t0 = hws_tsc();
		bench_barrier_wait(s->b, 0);
		for (size_t p = 0; p < np; p++) {
			k->phase(k, p);
			bench_barrier_wait(s->b, 0);
		}
		s->t1 = hws_tsc();
	} else {        /* the helper: one phase ahead */
		uint64_t sink = k->prefetch(k, 0);
		bench_barrier_wait(s->b, 1);
		for (size_t p = 0; p < np; p++) {
			if (p + 1 < np)
				sink += k->prefetch(k, p + 1);
			bench_barrier_wait(s->b, 1);
		}
		s->sink = sink;
	}
}

static int spr_run(struct bench_ctx *ctx, struct bench_cell *c)
{
	struct spr_cell *s = c->priv;
	struct spr_kernel *k = s->sh->k;
	int rc;

	(void)ctx;
	k->reset(k);
	if (s->serial) {
		rc = bench_run_threads(1, c->cpus, serial_fn, s);
	} else {
		if ((rc = bench_barrier_of(c, 2, &s->b)))
			return rc;
		rc = bench_barrier_team(s->b, 2, c->cpus, spr_fn, s);
		bench_barrier_free(s->b);
		s->b = NULL;
	}
	if (rc) {
		snprintf(c->skip, sizeof c->skip, "cannot run the threads: %s", strerror(rc));
		return rc;
	}
	if (k->check(k)) {
		snprintf(c->skip, sizeof c->skip, "error: the %s result differs from the serial "
			 "computation", k->name);
		return EDOM;
	}
	uint64_t t = s->t1 - s->t0;
	bench_sample_cycles(c, "time", t);
	if (s->serial)
		s->sh->serial_tsc = t;
	else if (s->sh->serial_tsc)
		bench_sample_value(c, "speedup", "x", (double)s->sh->serial_tsc / (double)t);
	return 0;
}

static void spr_cleanup(struct bench_cell *c)
{
	struct spr_cell *s = c->priv;
	if (!s)
		return;
	if (s->sh && !--s->sh->refs) {
		spr_kernel_free(s->sh->k);
		free(s->sh);
	}
	free(s);
	c->priv = NULL;
}

struct spr_add {
	struct spr_shared *sh;
	const char *placement;
	const int *cpus;
};

static int spr_add_cell(struct bench_ctx *ctx, struct spr_add *a, const char *impl,
			const char *policy, bool serial)
{
	struct bench_cell *c = bench_cell_new_priv(ctx, impl, policy, sizeof(struct spr_cell));
	if (!c)
		return bench_error("out of memory");
	struct spr_cell *s = c->priv;
	s->serial = serial;
	s->sh = a->sh;
	a->sh->refs++;
	c->nthreads = serial ? 1 : 2;
	memcpy(c->cpus, a->cpus, c->nthreads * sizeof *c->cpus);
	bench_param(c, "kernel", "%s", a->sh->k->name);
	bench_param(c, "size", "%s", a->sh->k->shape);
	bench_param_num(c, "MiB", (double)a->sh->k->bytes / (1 << 20));
	bench_param_num(c, "phases", (double)a->sh->k->nphases);
	bench_param(c, "placement", "%s", serial ? "-" : a->placement);
	return 0;
}

static int spr_add(struct bench_ctx *ctx, const char *impl, const char *policy, void *arg)
{
	const struct bench_opts *o = bench_opts(ctx);
	if (policy && !o->policies.n && !o->quick && !bench_in_list(DEFAULT_POLICIES, policy))
		return 0;
	return spr_add_cell(ctx, arg, impl, policy, false);
}

static int parse_one(struct bench_ctx *ctx, const char *opt, unsigned lo, unsigned hi,
		     unsigned *v)
{
	unsigned one;
	if (bench_parse_ulist(bench_xopt(ctx, opt), v, 1, &one) || *v < lo || *v > hi)
		return bench_error("spr: --%s takes one number %u..%u", opt, lo, hi);
	return 0;
}

static const struct bench_xopt spr_xopts[] = {
	{ "kernels", SPR_KERNELS, NULL, "which kernels: lu, closure, spmv" },
	{ "lu", "1024", "384", "LU: matrix order n (n x n doubles)" },
	{ "closure", "2048", "1152", "transitive closure: vertices n (n x n bytes)" },
	{ "spmv", "524288", "131072",
	  "SpMV: rows (8 nonzeros a row at random columns, 4 iterations)" },
	{ "chunk", "256", "512", "KiB of data per phase (one barrier episode)" },
	{ NULL, NULL, NULL, NULL },
};

static int spr_setup(struct bench_ctx *ctx)
{
	const struct bench_list *pl = bench_placements(ctx);
	unsigned nth, chunk, size[3];
	const unsigned *threads = bench_threads(ctx, &nth);
	const char *names[] = { "lu", "closure", "spmv" }, *kl = bench_xopt(ctx, "kernels"), *why;
	int rc;

	for (unsigned t = 0; t < nth; t++)
		if (threads[t] != 2)
			return bench_error("spr: runs a worker and one helper: --threads 2 only");
	for (const char *p = kl; *p;) {
		size_t n = strcspn(p, ",");
		char w[32];
		snprintf(w, sizeof w, "%.*s", (int)(n < 31 ? n : 31), p);
		if (!bench_in_list(SPR_KERNELS, w))
			return bench_error("spr: unknown kernel '%s' (known: " SPR_KERNELS ")", w);
		p += n + (p[n] == ',');
	}
	if ((rc = parse_one(ctx, "lu", 16, 16384, &size[0])) ||
	    (rc = parse_one(ctx, "closure", 64, 32768, &size[1])) ||
	    (rc = parse_one(ctx, "spmv", 1024, 1u << 26, &size[2])) ||
	    (rc = parse_one(ctx, "chunk", 1, 1u << 20, &chunk)))
		return rc;

	/* the CPUs of each placement for the worker and the helper */
	int cpus[BENCH_MAX_LIST][BENCH_MAX_CPUS];
	bool ok[BENCH_MAX_LIST];
	int first = -1;
	for (unsigned p = 0; p < pl->n; p++) {
		ok[p] = bench_place(ctx, pl->v[p], 2, cpus[p], &why) == 0;
		if (!ok[p])
			bench_skip(ctx, why, "all placement=%s", pl->v[p]);
		else if (first < 0)
			first = (int)p;
	}
	if (first < 0)
		return 0;
	for (unsigned i = 0; i < 3; i++) {
		if (!bench_in_list(kl, names[i]))
			continue;
		struct spr_shared *sh = calloc(1, sizeof *sh);
		if (!sh || !(sh->k = spr_kernel_new(names[i], size[i], (size_t)chunk << 10, &why)) ||
		    spr_kernel_reference(sh->k)) {
			if (sh)
				spr_kernel_free(sh->k);
			free(sh);
			return bench_error("spr: %s: out of memory", names[i]);
		}
		/* the serial row first: it runs before the others in every round */
		struct spr_add a = { sh, "-", cpus[first] };
		rc = spr_add_cell(ctx, &a, "serial", NULL, true);
		for (unsigned p = 0; p < pl->n && !rc; p++) {
			if (!ok[p])
				continue;
			a.placement = pl->v[p];
			a.cpus = cpus[p];
			rc = bench_for_each_barrier(ctx, 2, spr_add, &a);
		}
		if (rc)
			return rc;
	}
	if (bench_energy_available(&why))
		bench_skip(ctx, why, "energy");
	return 0;
}

/* --impls: filled at start-up from the library's kinds (peers.h). */
static char spr_impls[BENCH_IMPLS_LEN] = "serial";

static const struct bench_exp spr_exp = {
	.name = "spr",
	.title = "speculative precomputation: a prefetching helper throttled by barriers",
	.reproduces = "[AK08] Sec. 4.4",
	.help =
"    A worker computes a kernel phase by phase; a helper thread runs one phase\n"
"    ahead and loads what the worker's next phase will read (one word a cache\n"
"    line, and for SpMV the x entries the column indexes point at); the two meet\n"
"    at a barrier after every phase, which keeps the helper from running too far\n"
"    ahead and evicting what the worker still needs.  The data exceed the L2 so\n"
"    that there is something to prefetch.  The gain is largest when the helper\n"
"    shares the worker's caches (placement smt); on distinct cores it can only\n"
"    warm the shared last-level cache, and every barrier costs its latency.\n"
"\n"
"    serial    the same phases on one thread, no helper, no barrier (the\n"
"              reference: every other row's result must equal it bit for bit,\n"
"              or the row is reported as an error)\n"
"    lu        right-looking LU decomposition without pivoting of a diagonally\n"
"              dominant n x n matrix; a phase = a block of rows of one step\n"
"    closure   Warshall's transitive closure of a sparse random digraph on an\n"
"              n x n byte matrix; a phase = a block of rows of one step\n"
"    spmv      y = A x repeated 4 times (CSR, 8 random columns a row); a\n"
"              phase = a block of rows of one iteration\n"
"\n"
"    Barrier rows: every barrier implementation of barrier-pair; hwsync kinds\n"
"    once per wait policy (default pause, futex, adaptive; --quick adaptive;\n"
"    --policies for others).\n"
"\n"
"METRICS\n"
"    time      the worker's time for the whole kernel\n"
"    speedup   the serial row's time in the same round / this row's time\n",
	.impls = spr_impls,
	.uses_policies = true,
	.quick_policies = "adaptive",
	.def_threads = "2",
	.def_placements = "smt,core",
	.xopts = spr_xopts,
	.rank = 90,
	.setup = spr_setup,
	.run = spr_run,
	.cleanup = spr_cleanup,
};
__attribute__((constructor)) static void spr_impls_fill(void)
{
	bench_barrier_impls(spr_impls, sizeof spr_impls);
}
BENCH_REGISTER(spr_exp)

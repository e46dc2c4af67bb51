/* Running an experiment: resolve the options, let the experiment build its
 * cells, then run every cell once per repetition, round-robin (A B C A B C),
 * after the warmup rounds; let the experiment add its summary rows; print the
 * tables; keep the results for the JSON. */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>
#include <string.h>
#include <hwsync/hwsync.h>
#include "bench/internal.h"

/* Watchdog: a peer with a lost wake-up would hang the whole suite.  If one
 * repetition of one cell runs far past its budget, say which and exit. */
static struct {
	_Atomic uint64_t started_ns;    /* 0 = idle */
	_Atomic uint64_t limit_ns;
	char what[160];                 /* written before started_ns is set */
	pthread_once_t once;
} dog = { .once = PTHREAD_ONCE_INIT };

static void *dog_main(void *arg)
{
	(void)arg;
	for (;;) {
		sleep(1);
		uint64_t t = atomic_load(&dog.started_ns);
		if (t && hws_now_ns() - t > atomic_load(&dog.limit_ns)) {
			fprintf(stderr, "\nhwsync bench: %s did not finish one repetition in %.0f s "
				"(a lost wake-up or deadlock in that implementation?); aborting\n",
				dog.what, (double)atomic_load(&dog.limit_ns) / 1e9);
			_exit(3);
		}
	}
	return NULL;
}

static void dog_start(void)
{
	pthread_t t;
	if (pthread_create(&t, NULL, dog_main, NULL) == 0)
		pthread_detach(t);
}

struct bench_session *bench_session_new(int argc, char **argv)
{
	struct bench_session *s = calloc(1, sizeof *s);
	if (!s)
		return NULL;
	/* Read (and cache) the CPUs this process may use while this thread
	 * still has the process's mask: an OpenMP team pins its master, which is
	 * this thread, and a lock may first ask from a pinned thread. */
	(void)hws_usable_cpus();
	size_t len = 0;
	for (int i = 0; i < argc && len < sizeof s->cmdline; i++)
		len += (size_t)snprintf(s->cmdline + len, sizeof s->cmdline - len, "%s%s",
					i ? " " : "", argv[i]);
	return s;
}

void bench_ctx_free(struct bench_ctx *ctx)
{
	if (!ctx)
		return;
	for (unsigned i = 0; i < ctx->ncells; i++) {
		struct bench_cell *c = ctx->cells[i];
		if (ctx->exp->cleanup)
			ctx->exp->cleanup(c);
		bench_cell_free_samples(c);
		free(c);
	}
	for (unsigned i = 0; i < ctx->nsummary; i++) {
		bench_cell_free_samples(ctx->summary[i]);
		free(ctx->summary[i]);
	}
	free(ctx->summary);
	free(ctx->cells);
	free(ctx->skipped);
	free(ctx);
}

void bench_session_free(struct bench_session *s)
{
	if (!s)
		return;
	for (unsigned i = 0; i < s->nruns; i++)
		bench_ctx_free(s->runs[i]);
	free(s->runs);
	free(s);
}

/* Split a default list ("smt,core") into ctx storage. */
static void split_default(struct bench_list *l, const char *s, char *store, size_t size)
{
	snprintf(store, size, "%s", s ? s : "");
	l->n = 0;
	for (char *p = strtok(store, ","); p && l->n < BENCH_MAX_LIST; p = strtok(NULL, ","))
		l->v[l->n++] = p;
}

/* Options every experiment shares, checked before any setup. */
static int check_common(struct bench_ctx *ctx)
{
	const struct bench_opts *o = ctx->o;
	const struct bench_exp *e = ctx->exp;

	for (unsigned i = 0; i < o->impls.n; i++) {
		bool found = e->impls && bench_in_list(e->impls, o->impls.v[i]);
		/* in a suite, --impls names rows of some experiment, not of each */
		if (!found && !o->suite)
			return bench_error("%s: unknown implementation '%s' (known: %s)", e->name,
					   o->impls.v[i], e->impls);
	}
	if (o->policies.n && !e->uses_policies && !o->suite)
		return bench_error("%s: takes no --policies", e->name);
	for (unsigned i = 0; i < o->policies.n; i++) {
		hws_wait_t w;
		if (hws_wait_parse(&w, o->policies.v[i]))
			return bench_error("%s", hws_last_error());
	}
	if (o->policies.n)
		ctx->policies = o->policies;
	else if (o->quick && e->quick_policies)
		split_default(&ctx->policies, e->quick_policies, ctx->policy_store,
			      sizeof ctx->policy_store);
	else if (e->def_policies)
		split_default(&ctx->policies, e->def_policies, ctx->policy_store,
			      sizeof ctx->policy_store);
	if (o->threads.n) {
		ctx->nthreads = 0;
		for (unsigned i = 0; i < o->threads.n; i++) {
			unsigned v[BENCH_MAX_LIST], n;
			if (bench_parse_ulist(o->threads.v[i], v, BENCH_MAX_LIST, &n))
				return bench_error("bad --threads '%s' (a list like 1,2,4 or 1-4)",
						   o->threads.v[i]);
			for (unsigned k = 0; k < n && ctx->nthreads < BENCH_MAX_LIST; k++) {
				if (!v[k])
					return bench_error("--threads: zero threads");
				ctx->threads[ctx->nthreads++] = v[k];
			}
		}
	} else if (bench_parse_ulist(e->def_threads ? e->def_threads : "2", ctx->threads,
				     BENCH_MAX_LIST, &ctx->nthreads)) {
		return bench_error("%s: bad default thread list", e->name);
	}
	if (o->ncpus) {
		static char cpus[] = "cpus";
		ctx->placements.n = 1;
		ctx->placements.v[0] = cpus;
	} else if (o->placements.n) {
		ctx->placements = o->placements;
	} else {
		split_default(&ctx->placements, e->def_placements ? e->def_placements : "core",
			      ctx->placement_store, sizeof ctx->placement_store);
	}
	/* Unknown placement and "more threads than the placement allows" are
	 * errors when the user asked for them; what the machine cannot give
	 * at all is the experiment's to report as skipped. */
	for (unsigned p = 0; p < ctx->placements.n && !o->ncpus; p++) {
		int cpus[BENCH_MAX_CPUS];
		const char *why;
		for (unsigned t = 0; t < ctx->nthreads; t++) {
			int rc = bench_place(ctx, ctx->placements.v[p], ctx->threads[t], cpus, &why);
			if (rc == EINVAL || (rc == ERANGE && (o->threads.n || o->placements.n)))
				return bench_error("%s: %s", e->name, why);
		}
	}
	return 0;
}

int bench_session_run(struct bench_session *s, const struct bench_exp *e,
		      const struct bench_opts *o)
{
	struct bench_ctx *ctx = calloc(1, sizeof *ctx);
	void *p;
	int rc;

	if (!ctx)
		return bench_error("out of memory");
	ctx->exp = e;
	ctx->o = o;
	ctx->t_start_ns = hws_now_ns();
	if ((rc = check_common(ctx)) || (rc = e->setup(ctx))) {
		bench_ctx_free(ctx);
		return rc;
	}
	unsigned rounds = o->warmup + o->reps, live = ctx->ncells;
	pthread_once(&dog.once, dog_start);
	atomic_store(&dog.limit_ns, 30000000000ull + 50 * o->duration_ns);
	for (unsigned r = 0; r < rounds && live; r++) {
		for (unsigned i = 0; i < ctx->ncells; i++) {
			struct bench_cell *c = ctx->cells[i];
			if (c->skip[0])
				continue;
			c->measuring = r >= o->warmup;
			c->rep = c->measuring ? r - o->warmup : 0;
			bench_progress(ctx, "%s rep %u/%u: %s %s", r < o->warmup ? "warmup" : "run",
				       r < o->warmup ? r + 1 : r - o->warmup + 1,
				       r < o->warmup ? o->warmup : o->reps, c->impl, c->policy);
			snprintf(dog.what, sizeof dog.what, "%s %s %s", e->name, c->impl, c->policy);
			atomic_store(&dog.started_ns, hws_now_ns());
			size_t before[BENCH_MAX_METRICS];
			unsigned nbefore = c->nmetrics;
			for (unsigned k = 0; k < nbefore; k++)
				before[k] = c->m[k].n;
			if (e->run(ctx, c) && !c->skip[0])
				snprintf(c->skip, sizeof c->skip, "failed: %s", hws_last_error());
			atomic_store(&dog.started_ns, 0);
			if (c->measuring && !c->skip[0])
				bench_close_rep(c, before, nbefore);
			if (c->skip[0])
				live--;
		}
	}
	if (ctx->progress_shown)
		fputs("\r\033[K", stderr);
	/* Cells that could not run become skipped entries. */
	unsigned kept = 0;
	for (unsigned i = 0; i < ctx->ncells; i++) {
		struct bench_cell *c = ctx->cells[i];
		if (!c->skip[0]) {
			ctx->cells[kept++] = c;
			continue;
		}
		char what[160];
		size_t len = (size_t)snprintf(what, sizeof what, "%s%s%s", c->impl,
					      c->policy[0] ? " " : "", c->policy);
		for (unsigned k = 0; k < c->nparams && len < sizeof what; k++)
			len += (size_t)snprintf(what + len, sizeof what - len, " %s=%s",
						c->param[k].key, c->param[k].val);
		bench_skip(ctx, c->skip, "%s", what);
		if (e->cleanup)
			e->cleanup(c);
		bench_cell_free_samples(c);
		free(c);
	}
	ctx->ncells = kept;
	if (e->summarize)
		e->summarize(ctx);
	bench_print_table(ctx, stdout);
	p = realloc(s->runs, (s->nruns + 1) * sizeof *s->runs);
	if (!p) {
		bench_ctx_free(ctx);
		return bench_error("out of memory");
	}
	s->runs = p;
	s->runs[s->nruns++] = ctx;
	return 0;
}

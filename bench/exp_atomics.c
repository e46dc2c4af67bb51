/* atomics: latency of CAS, TAS (xchg), FAI, load and store on one shared
 * cache line vs thread count and placement.  Reproduces [RAINA] Sec. 4.1
 * (Figs. 3-8), in the manner of [CCBENCH]'s ccbench: every thread issues the same
 * operation on the same line back to back and times them with the TSC, a
 * batch of BATCH at a time: on a VM the TSC may tick in steps (26 cycles =
 * 10 ns here) as long as one operation, so one sample is a batch's time over
 * BATCH. */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <hwsync/hwsync.h>
#include "bench/harness.h"

enum op { OP_CAS, OP_TAS, OP_FAI, OP_LOAD, OP_STORE, OP_N };
static const char *const op_names[OP_N] = { "cas", "tas", "fai", "load", "store" };

struct atom_run {
	enum op op;
	unsigned nthreads;
	uint64_t duration_ns, overhead;
	size_t budget;                  /* samples kept per thread */
	_Atomic uint32_t go;            /* all threads start timing together */
	struct { double *s; size_t n; uint64_t ops; } thr[BENCH_MAX_CPUS];
};

enum { BATCH = 16 };

static struct { _Alignas(HWS_CACHELINE) _Atomic uint64_t word; } target;   /* the one line every thread operates on */

static inline void do_op(enum op op, uint64_t *sink)
{
	uint64_t v;
	switch (op) {
	case OP_CAS:
		/* relaxed: the line's coherence traffic is what is measured, no
		 * data is published through it */
		v = atomic_load_explicit(&target.word, memory_order_relaxed);
		atomic_compare_exchange_strong_explicit(&target.word, &v, v + 1,
							memory_order_seq_cst, memory_order_relaxed);
		break;
	case OP_TAS:
		v = atomic_exchange_explicit(&target.word, 1, memory_order_seq_cst);
		break;
	case OP_FAI:
		v = atomic_fetch_add_explicit(&target.word, 1, memory_order_seq_cst);
		break;
	case OP_LOAD:
		/* acquire: as a lock's read of its word would be; pairs with nothing
		 * here, the cost of the ordering is part of what is measured */
		v = atomic_load_explicit(&target.word, memory_order_acquire);
		break;
	default:
		/* release: as a lock release would store */
		atomic_store_explicit(&target.word, *sink, memory_order_release);
		v = 1;
		break;
	}
	*sink += v;
}

static void worker(void *arg, unsigned i)
{
	struct atom_run *r = arg;
	uint64_t sink = 0, ops = 0;
	/* Start line (seq_cst, off the measured path): the last to arrive opens it. */
	if (atomic_fetch_add(&r->go, 1) + 1 == r->nthreads)
		atomic_store(&r->go, UINT32_MAX);
	while (atomic_load(&r->go) != UINT32_MAX)
		hws_cpu_relax();
	uint64_t end = hws_tsc() + hws_ns_to_tsc(r->duration_ns);
	for (;;) {
		uint64_t t0 = hws_tsc();
		for (unsigned k = 0; k < BATCH; k++)
			do_op(r->op, &sink);
		uint64_t t1 = hws_tsc();
		if (r->thr[i].n < r->budget)
			r->thr[i].s[r->thr[i].n++] = (double)(t1 - t0 > r->overhead ?
							      t1 - t0 - r->overhead : 0) / BATCH;
		ops += BATCH;
		if (t1 >= end)
			break;
	}
	r->thr[i].ops = ops + (sink == 42);   /* keep sink alive */
}

static int atomics_run(struct bench_ctx *ctx, struct bench_cell *c)
{
	struct atom_run *r = c->priv;
	const struct bench_opts *o = bench_opts(ctx);
	size_t budget = bench_sample_budget(ctx) / c->nthreads;

	r->nthreads = c->nthreads;
	r->duration_ns = o->duration_ns;
	r->overhead = bench_tsc_overhead();
	r->budget = budget;
	for (unsigned i = 0; i < c->nthreads; i++) {
		r->thr[i].n = 0;
		if (!r->thr[i].s && !(r->thr[i].s = malloc(budget * sizeof(double))))
			return ENOMEM;
	}
	atomic_store(&r->go, 0);
	int rc = bench_run_threads(c->nthreads, c->cpus, worker, r);
	if (rc) {
		snprintf(c->skip, sizeof c->skip, "cannot pin threads: %s", strerror(rc));
		return rc;
	}
	uint64_t ops = 0;
	for (unsigned i = 0; i < c->nthreads; i++) {
		for (size_t k = 0; k < r->thr[i].n; k++)
			bench_sample_cycles(c, "latency", (uint64_t)r->thr[i].s[k]);
		ops += r->thr[i].ops;
	}
	bench_sample_value(c, "throughput", "Mops/s", (double)ops / ((double)o->duration_ns / 1e3));
	return 0;
}

static int atomics_setup(struct bench_ctx *ctx)
{
	unsigned nt;
	const unsigned *threads = bench_threads(ctx, &nt);
	const struct bench_list *pl = bench_placements(ctx);

	for (unsigned p = 0; p < pl->n; p++)
		for (unsigned t = 0; t < nt; t++) {
			int cpus[BENCH_MAX_CPUS];
			const char *why;
			if (bench_place(ctx, pl->v[p], threads[t], cpus, &why)) {
				bench_skip(ctx, why, "all ops threads=%u placement=%s", threads[t],
					   pl->v[p]);
				continue;
			}
			for (unsigned op = 0; op < OP_N; op++) {
				if (!bench_impl_on(ctx, op_names[op]))
					continue;
				struct bench_cell *c = bench_cell_new(ctx, op_names[op], NULL);
				if (!c || !(c->priv = calloc(1, sizeof(struct atom_run))))
					return bench_error("out of memory");
				((struct atom_run *)c->priv)->op = (enum op)op;
				c->nthreads = threads[t];
				memcpy(c->cpus, cpus, threads[t] * sizeof *cpus);
				bench_param(c, "placement", "%s", pl->v[p]);
			}
		}
	return 0;
}

static void atomics_cleanup(struct bench_cell *c)
{
	struct atom_run *r = c->priv;
	if (!r)
		return;
	for (unsigned i = 0; i < BENCH_MAX_CPUS; i++)
		free(r->thr[i].s);
	free(r);
	c->priv = NULL;
}

static const struct bench_exp atomics = {
	.name = "atomics",
	.title = "latency of atomic operations on one shared line",
	.reproduces = "[RAINA] Sec. 4.1, Figs. 3-8",
	.help =
"    Every thread runs the same operation on the same cache line, back to back,\n"
"    for --duration, and times each operation with the TSC (the cost of reading\n"
"    the TSC, measured at start, is subtracted).  One row per operation x thread\n"
"    count x placement.  With one thread the line stays in that core's cache;\n"
"    with more the line moves between the cores on every read-modify-write, and\n"
"    the latency grows with the number of threads and with their distance\n"
"    ([RAINA]: CAS across sockets ~2x within one).\n"
"\n"
"    cas    compare-and-swap of the value just read (lock cmpxchg)\n"
"    tas    test-and-set as an exchange (xchg)\n"
"    fai    fetch-and-increment (lock xadd)\n"
"    load   an acquire load (every thread only reads: the line is shared)\n"
"    store  a release store\n"
"\n"
"METRICS\n"
"    latency     one operation (a batch of 16 back-to-back operations timed\n"
"                together, over 16), ns and cycles (all threads' samples together)\n"
"    throughput  operations completed by all threads, Mops/s, per repetition\n",
	.impls = "cas,tas,fai,load,store",
	.def_threads = "1-N",
	.def_placements = "smt,core,socket,spread",
	.rank = 10,
	.setup = atomics_setup,
	.run = atomics_run,
	.cleanup = atomics_cleanup,
};
BENCH_REGISTER(atomics)

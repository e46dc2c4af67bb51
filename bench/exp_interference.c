/* interference: how much do waiting threads slow a thread that works beside
 * them, and how quickly do they notice the lock they wait for is free?
 * Reproduces [T2SPIN] (spin-lock loops beside active kernels; Figs. 4-9).
 *
 * One thread runs an active kernel; 1..N threads wait on a lock word that a
 * holder thread keeps held and releases every --period (store + wake; the
 * word is a generation counter, so the lock is at once "taken" again).  The
 * waiters use hws_wait_while_eq32 under each wait policy.  'alone' is the
 * kernel with the holder but no waiters. */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <hwsync/hwsync.h>
#include "bench/harness.h"
#include "bench/kernels.h"

#define KBATCH 16    /* kernel units per sample */

struct intf_cell {
	const struct bench_kernel *kernel;
	hws_wait_t w;
	bool alone;
	unsigned nspin;
	uint64_t duration_ns, period_ns;
	size_t budget;
	void *kstate;
	struct { _Alignas(HWS_CACHELINE) _Atomic uint32_t v; } word, stop;
	struct { _Alignas(HWS_CACHELINE) _Atomic uint64_t v; } released;
	double *unit, *resp;
	size_t nunit;
	_Atomic size_t nresp;
};

static void intf_thread(void *arg, unsigned i)
{
	struct intf_cell *k = arg;
	unsigned holder = k->nspin + 1;
	if (i == 0) {   /* the active kernel */
		uint64_t end = hws_tsc() + hws_ns_to_tsc(k->duration_ns), sink = 0;
		while (k->nunit < k->budget) {
			uint64_t t0 = hws_tsc();
			for (unsigned u = 0; u < KBATCH; u++)
				sink += k->kernel->fn(k->kstate);
			uint64_t t1 = hws_tsc();
			k->unit[k->nunit++] = (double)(t1 - t0) / KBATCH;
			if (t1 >= end)
				break;
		}
		/* seq_cst: stop is read by the holder and waiters after waking */
		atomic_store(&k->stop.v, 1 + (sink == 42));
		return;
	}
	if (i == holder) {   /* releases the lock every period */
		struct timespec ts = { 0, (long)k->period_ns };
		while (!atomic_load(&k->stop.v)) {
			nanosleep(&ts, NULL);
			/* relaxed: published by the release store of the word */
			atomic_store_explicit(&k->released.v, hws_tsc(), memory_order_relaxed);
			atomic_fetch_add_explicit(&k->word.v, 1, memory_order_release);
			hws_wake32(&k->word.v, HWS_WAKE_ALL);
		}
		atomic_fetch_add_explicit(&k->word.v, 1, memory_order_release);   /* last: let all go */
		hws_wake32(&k->word.v, HWS_WAKE_ALL);
		return;
	}
	/* a waiter */
	for (;;) {
		/* acquire: pairs with the holder's release increment */
		uint32_t g = atomic_load_explicit(&k->word.v, memory_order_acquire);
		if (atomic_load(&k->stop.v))
			return;
		hws_wait_while_eq32(&k->word.v, g, &k->w, HWS_FOREVER);
		uint64_t seen = hws_tsc();
		if (atomic_load(&k->stop.v))   /* the last release is not timed */
			return;
		uint64_t rel = atomic_load_explicit(&k->released.v, memory_order_relaxed);
		size_t slot = atomic_fetch_add_explicit(&k->nresp, 1, memory_order_relaxed);
		if (slot < k->budget)
			k->resp[slot] = (double)(seen > rel ? seen - rel : 0);
	}
}

static int intf_run(struct bench_ctx *ctx, struct bench_cell *c)
{
	struct intf_cell *k = c->priv;
	k->duration_ns = bench_opts(ctx)->duration_ns;
	k->nunit = 0;
	atomic_store(&k->nresp, 0);
	atomic_store(&k->stop.v, 0);
	int rc = bench_run_threads(c->nthreads, c->cpus, intf_thread, k);
	if (rc) {
		snprintf(c->skip, sizeof c->skip, "cannot pin threads: %s", strerror(rc));
		return rc;
	}
	for (size_t i = 0; i < k->nunit; i++)
		bench_sample_cycles(c, "unit", (uint64_t)k->unit[i]);
	size_t nr = atomic_load(&k->nresp);
	for (size_t i = 0; i < nr && i < k->budget; i++)
		bench_sample_cycles(c, "responsiveness", (uint64_t)k->resp[i]);
	return 0;
}

static void intf_cleanup(struct bench_cell *c)
{
	struct intf_cell *k = c->priv;
	if (!k)
		return;
	bench_kernel_state_free(k->kstate);
	free(k->unit);
	free(k->resp);
	free(k);
	c->priv = NULL;
}

static int add_cell(struct bench_ctx *ctx, const struct bench_kernel *kern, const char *policy,
		    unsigned nspin, const char *placement, const int *cpus, uint64_t period)
{
	struct bench_cell *c = bench_cell_new_priv(ctx, policy ? "hwsync-wait" : "alone", policy,
						   sizeof(struct intf_cell));
	if (!c)
		return bench_error("out of memory");
	struct intf_cell *k = c->priv;
	k->kernel = kern;
	k->alone = !policy;
	k->nspin = policy ? nspin : 0;
	k->period_ns = period;
	k->budget = bench_sample_budget(ctx);
	if (policy)
		hws_wait_init(&k->w, policy);   /* checked by the caller */
	k->kstate = bench_kernel_state_new();
	k->unit = malloc(k->budget * sizeof(double));
	k->resp = malloc(k->budget * sizeof(double));
	if (!k->kstate || !k->unit || !k->resp)
		return bench_error("out of memory");
	/* kernel on cpus[0], waiters on cpus[1..n], the holder on the kernel's
	 * CPU: it sleeps between releases, and beside a waiter it would have to
	 * preempt it to release (a context switch, not the policy, measured) */
	c->nthreads = k->nspin + 2;
	memcpy(c->cpus, cpus, (k->nspin + 1) * sizeof *cpus);
	c->cpus[k->nspin + 1] = cpus[0];
	bench_param(c, "kernel", "%s", kern->name);
	bench_param_num(c, "waiters", k->nspin);
	bench_param(c, "placement", "%s", placement);
	return 0;
}

static const struct bench_xopt intf_xopts[] = {
	{ "kernels", BENCH_KERNELS, NULL, "active kernels to run (" BENCH_KERNELS ")" },
	{ "period", "500", NULL, "the holder releases the lock every this many microseconds" },
	{ NULL, NULL, NULL, NULL },
};

static int intf_setup(struct bench_ctx *ctx)
{
	const struct bench_list *pl = bench_placements(ctx);
	const bool explicit_threads = bench_opts(ctx)->threads.n > 0;
	unsigned nt, period_us, one;
	const unsigned *threads = bench_threads(ctx, &nt);
	char kl[256];
	const char *why;

	if (bench_parse_ulist(bench_xopt(ctx, "period"), &period_us, 1, &one) || !period_us)
		return bench_error("interference: --period takes one positive number (us)");
	snprintf(kl, sizeof kl, "%s", bench_xopt(ctx, "kernels"));
	for (char *save, *kn = strtok_r(kl, ",", &save); kn; kn = strtok_r(NULL, ",", &save))
		if (!bench_kernel_find(kn))
			return bench_error("interference: unknown kernel '%s' (known: %s)", kn,
					   BENCH_KERNELS);
	for (unsigned p = 0; p < bench_policy_count(ctx); p++) {
		const char *pol = bench_policy(ctx, p, &why);
		if (why)
			bench_skip(ctx, why, "hwsync-wait policy %s", pol);
	}
	snprintf(kl, sizeof kl, "%s", bench_xopt(ctx, "kernels"));
	for (char *save, *kn = strtok_r(kl, ",", &save); kn; kn = strtok_r(NULL, ",", &save)) {
		const struct bench_kernel *kern = bench_kernel_find(kn);
		int cpus[BENCH_MAX_CPUS];
		/* the kernel alone, with its holder */
		if (bench_impl_on(ctx, "alone")) {
			if (bench_place(ctx, "core", 1, cpus, &why))
				cpus[0] = 0;
			if (add_cell(ctx, kern, NULL, 0, "-", cpus, period_us * 1000ull))
				return 2;
		}
		if (!bench_impl_on(ctx, "hwsync-wait"))
			continue;
		for (unsigned q = 0; q < pl->n; q++)
			for (unsigned t = 0; t < nt; t++) {
				int rc = bench_place(ctx, pl->v[q], threads[t] + 1, cpus, &why);
				if (rc == ERANGE && explicit_threads)
					return bench_error("interference: %u waiters + the kernel: %s",
							   threads[t], why);
				if (rc) {
					bench_skip(ctx, why, "waiters=%u placement=%s", threads[t],
						   pl->v[q]);
					continue;
				}
				for (unsigned p = 0; p < bench_policy_count(ctx); p++) {
					const char *pol = bench_policy(ctx, p, &why);
					if (!why && add_cell(ctx, kern, pol, threads[t], pl->v[q], cpus,
							     period_us * 1000ull))
						return 2;
				}
			}
	}
	return 0;
}

static const struct bench_exp interference = {
	.name = "interference",
	.title = "waiters' interference with an active thread, and their responsiveness",
	.reproduces = "[T2SPIN] Figs. 4-9",
	.help =
"    One thread runs an active kernel; beside it 1..N threads (--threads) wait\n"
"    for a lock held by a holder thread, which releases it every --period (the\n"
"    word is a generation counter: released and at once held again).  The\n"
"    waiters wait with hws_wait_while_eq32 under each wait policy: plain spin,\n"
"    pause, backoff, the long-latency delay loops of [T2SPIN] (delay-div,\n"
"    delay-fdiv, delay-cas, delay-miss), yield, futex, adaptive ...  'alone' is\n"
"    the kernel with the holder but no waiters: the reference for slowdown.\n"
"    Placement smt puts the waiters on the kernel's SMT siblings (the paper's\n"
"    same-core case, where waiting steals fetch bandwidth; skipped without\n"
"    SMT); core puts them on other cores.\n"
"\n"
"    Kernels: add, mulx (64-bit multiply), branch (unpredictable), l1hit,\n"
"    l2hit (pointer chases), matvec-int, matvec-fp, quicksort, hash.\n"
"\n"
"METRICS\n"
"    unit            time of one kernel unit (a few us), sampled over 16 units;\n"
"                    slowdown = unit / unit of 'alone' (computed by the report)\n"
"    responsiveness  from the holder's release to a waiter seeing it (the\n"
"                    paper bounds it by the interval between two reads of the\n"
"                    lock word; this measures it directly)\n",
	.impls = "alone,hwsync-wait",
	.uses_policies = true,
	.def_threads = "1",
	.def_placements = "smt,core",
	.xopts = intf_xopts,
	.rank = 60,
	.setup = intf_setup,
	.run = intf_run,
	.cleanup = intf_cleanup,
};
BENCH_REGISTER(interference)

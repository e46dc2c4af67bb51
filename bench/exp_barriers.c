/* barriers: the cost of a barrier episode when every thread works a fixed
 * time between barriers.  Reproduces [AKKAN13] Figs. 5-6 (barrier overhead
 * with 1 us and 250 us of work per thread).
 *
 * Every thread loops: work W (a compute loop timed by the TSC), barrier.
 * Thread 0 times each episode from its last departure to its next one; the
 * overhead of an episode is that time minus W: the barrier's own latency plus
 * whatever imbalance the waiting caused (a waiter slowed by a sibling, a late
 * wakeup). */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <hwsync/hwsync.h>
#include "bench/energy.h"
#include "bench/harness.h"
#include "bench/peers.h"

#define DEFAULT_POLICIES "spin,pause,futex,adaptive"

struct br_cell {
	unsigned n;
	uint64_t work_ns, episodes, duration_ns;
	struct bench_barrier *b;
	struct { _Alignas(HWS_CACHELINE) _Atomic uint64_t v; } stop_at;   /* last episode */
	uint64_t work_tsc, t_first, t_last, done;
	struct bench_reservoir ovh;   /* per-episode overheads (cycles) */
};

/* W of work: integer arithmetic until the TSC says W has passed. */
static uint64_t work_for(uint64_t ticks, uint64_t seed)
{
	uint64_t until = hws_tsc() + ticks, x = seed | 1;
	do {
		for (int i = 0; i < 16; i++)
			x = x * 6364136223846793005ull + 1442695040888963407ull;
	} while (hws_tsc() < until);
	return x;
}

static void br_thread(void *arg, unsigned i)
{
	struct br_cell *k = arg;
	uint64_t sink = 0, prev, end_tsc = 0;

	bench_barrier_wait(k->b, i);   /* start together; not counted */
	prev = hws_tsc();
	if (i == 0) {
		k->t_first = prev;
		end_tsc = prev + hws_ns_to_tsc(k->duration_ns);
	}
	for (uint64_t e = 0;; e++) {
		sink += work_for(k->work_tsc, e + i);
		if (i == 0 && (e + 1 >= k->episodes || hws_tsc() >= end_tsc))
			/* relaxed: the barrier below orders it before the others' loads */
			atomic_store_explicit(&k->stop_at.v, e, memory_order_relaxed);
		bench_barrier_wait(k->b, i);
		if (i == 0) {
			uint64_t now = hws_tsc(), d = now - prev;
			double o = d > k->work_tsc ? (double)(d - k->work_tsc) : 0;
			prev = now;
			bench_reservoir_add(&k->ovh, o);
		}
		/* relaxed: written once, before the barrier of episode stop_at; a thread
		 * that reads it earlier sees a value that is not its episode */
		if (atomic_load_explicit(&k->stop_at.v, memory_order_relaxed) == e) {
			if (i == 0) {
				k->t_last = prev;
				k->done = e + 1;
			}
			break;
		}
	}
	if (sink == 42)
		fputc(' ', stderr);
}

static int br_run(struct bench_ctx *ctx, struct bench_cell *c)
{
	struct br_cell *k = c->priv;
	struct bench_energy en;
	int rc = bench_barrier_of(c, k->n, &k->b);
	if (rc)
		return rc;
	k->duration_ns = bench_opts(ctx)->duration_ns;
	k->work_tsc = hws_ns_to_tsc(k->work_ns);
	k->ovh.n = 0;
	k->ovh.seen = 0;
	k->ovh.cap = bench_sample_budget(ctx);
	k->ovh.rng = 0x9E3779B97F4A7C15ull + c->rep;
	k->ovh.v = malloc(k->ovh.cap * sizeof *k->ovh.v);
	if (!k->ovh.v) {
		bench_barrier_free(k->b);
		snprintf(c->skip, sizeof c->skip, "out of memory");
		return ENOMEM;
	}
	atomic_store(&k->stop_at.v, UINT64_MAX);
	bool energy = bench_energy_start(&en) == 0;
	rc = bench_barrier_team(k->b, k->n, c->cpus, br_thread, k);
	double joules = energy ? bench_energy_joules(&en) : -1;
	bench_barrier_free(k->b);
	k->b = NULL;
	if (rc) {
		free(k->ovh.v);
		snprintf(c->skip, sizeof c->skip, "cannot run the threads: %s", strerror(rc));
		return rc;
	}
	for (size_t s = 0; s < k->ovh.n; s++)
		bench_sample_cycles(c, "overhead", (uint64_t)k->ovh.v[s]);
	free(k->ovh.v);
	k->ovh.v = NULL;
	double per = (double)(k->t_last - k->t_first) / (double)k->done;
	bench_sample_cycles(c, "mean_overhead", per > (double)k->work_tsc ?
				(uint64_t)(per - (double)k->work_tsc) : 0);
	bench_sample_cycles(c, "episode", (uint64_t)per);
	bench_sample_value(c, "episodes", "count", (double)k->done);
	if (joules >= 0)
		bench_sample_value(c, "energy", "uJ/episode", joules * 1e6 / (double)k->done);
	return 0;
}

static void br_cleanup(struct bench_cell *c)
{
	struct br_cell *k = c->priv;
	if (!k)
		return;
	free(k->ovh.v);
	free(k);
	c->priv = NULL;
}

struct br_add {
	const char *placement;
	const int *cpus;
	unsigned n, work_us, episodes;
};

static int br_add(struct bench_ctx *ctx, const char *impl, const char *policy, void *arg)
{
	const struct bench_opts *o = bench_opts(ctx);
	struct br_add *a = arg;
	if (policy && !o->policies.n && !o->quick && !bench_in_list(DEFAULT_POLICIES, policy))
		return 0;
	struct bench_cell *c = bench_cell_new_priv(ctx, impl, policy, sizeof(struct br_cell));
	if (!c)
		return bench_error("out of memory");
	struct br_cell *k = c->priv;
	k->n = a->n;
	k->work_ns = a->work_us * 1000ull;
	k->episodes = a->episodes;
	c->nthreads = a->n;
	memcpy(c->cpus, a->cpus, a->n * sizeof *a->cpus);
	bench_param_num(c, "work_us", a->work_us);
	bench_param(c, "placement", "%s", a->placement);
	return 0;
}

static const struct bench_xopt br_xopts[] = {
	{ "work", "1,250", NULL, "work per thread between barriers, in us (list)" },
	{ "episodes", "100000", "2000",
	  "barrier episodes per row and repetition (fewer when --duration runs out first)" },
	{ NULL, NULL, NULL, NULL },
};

static int br_setup(struct bench_ctx *ctx)
{
	const struct bench_list *pl = bench_placements(ctx);
	unsigned work[16], nwork, ep, one, nth;
	const unsigned *threads = bench_threads(ctx, &nth);
	const char *why;
	int rc;

	if (bench_parse_ulist(bench_xopt(ctx, "work"), work, 16, &nwork))
		return bench_error("barriers: --work takes a list of microseconds, e.g. 1,250");
	if (bench_parse_ulist(bench_xopt(ctx, "episodes"), &ep, 1, &one) || !ep)
		return bench_error("barriers: --episodes takes one positive number");
	for (unsigned p = 0; p < pl->n; p++) {
		for (unsigned t = 0; t < nth; t++) {
			int cpus[BENCH_MAX_CPUS];
			rc = bench_place(ctx, pl->v[p], threads[t], cpus, &why);
			if (rc == ENOTSUP) {
				bench_skip(ctx, why, "all placement=%s", pl->v[p]);
				break;
			}
			if (rc) {
				bench_skip(ctx, why, "threads=%u placement=%s", threads[t], pl->v[p]);
				continue;
			}
			for (unsigned w = 0; w < nwork; w++) {
				struct br_add a = { pl->v[p], cpus, threads[t], work[w], ep };
				if ((rc = bench_for_each_barrier(ctx, threads[t], br_add, &a)))
					return rc;
			}
		}
	}
	if (bench_energy_available(&why))
		bench_skip(ctx, why, "energy (joules per episode)");
	return 0;
}

static const struct bench_exp barriers_exp = {
	.name = "barriers",
	.title = "barrier overhead per episode with fixed work between barriers",
	.reproduces = "[AKKAN13] Figs. 5-6",
	.help =
"    T threads each work W (a compute loop timed by the TSC: --work) and then\n"
"    meet at a barrier, --episodes times per repetition or until --duration has\n"
"    passed, whichever comes first (the episodes column says how many ran; for\n"
"    the paper's 100000 episodes of 250 us give --duration 30s).  Thread 0 times\n"
"    every episode from one departure to the next; the overhead is that time\n"
"    minus W.  Rows: every barrier implementation; hwsync kinds once per wait\n"
"    policy (default spin, pause, futex, adaptive; --quick pause, futex,\n"
"    adaptive; --policies for others).\n"
"\n"
BENCH_BARRIER_PEERS_HELP
"    hwsync-KIND       hws_barrier_create(KIND, T, policy), every kind\n"
"                      (IMPLEMENTATIONS below; pair: two threads only)\n"
"\n"
"METRICS\n"
"    overhead       per episode: episode time minus W (a uniform sample of the\n"
"                   episodes; p5/p95/p99 in the JSON)\n"
"    mean_overhead  (time of all episodes) / episodes - W, per repetition\n"
"    episode        mean episode time, per repetition\n"
"    episodes       episodes run in the repetition\n"
"    energy         package energy per episode (uJ), where RAPL is readable\n",
	.impls = bench_barrier_all,
	.uses_policies = true,
	.quick_policies = "pause,futex,adaptive",
	.def_threads = "2,N",
	.def_placements = "smt,core",
	.xopts = br_xopts,
	.rank = 80,
	.setup = br_setup,
	.run = br_run,
	.cleanup = br_cleanup,
};
BENCH_REGISTER(barriers_exp)

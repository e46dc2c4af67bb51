/* locks: threads contend for one lock around a critical section of volatile
 * increments.  Reproduces [RAINA] Sec. 4.2 (Figs. 28-30: stages and
 * acquisition timelines) and [AKKAN13] Fig. 1 (throughput vs threads).
 *
 * Every thread loops: read the TSC (entry), acquire, read the TSC (acquired),
 * CS increments of a shared volatile counter, read the TSC, release, then
 * OUTSIDE increments of a counter of its own (the work between two
 * acquisitions, which sets how often the lock is wanted).  A row runs for
 * --duration; a thread stops entering once the window has closed, so a lock
 * that collapses (pure spinning with more threads than CPUs) costs at most
 * one more hand-over per thread: it shows as few acquisitions and a long
 * drain, never as a hang.  The counter doubles as a check of mutual
 * exclusion.  After the run, hwsync-auto is compared with every peer of the
 * same row parameters, repetition by repetition (lk_summarize). */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <hwsync/hwsync.h>
#include "bench/energy.h"
#include "bench/harness.h"
#include "bench/peers.h"
#include "bench/chrome_trace.h"

#define DEFAULT_POLICIES "spin,pause,futex,adaptive"

struct lk_thread {
	_Alignas(HWS_CACHELINE) uint64_t acqs;   /* acquired inside the window */
	uint64_t total, exit_tsc;
	uint64_t worst;                           /* longest entry to acquired, cycles */
	uint64_t cpu_ns;                          /* the thread's CPU time in the row */
	struct bench_reservoir lat;               /* acquire latencies */
	struct chrome_trace_ev *tr;                 /* first acquisitions, when tracing */
	size_t ntr, trcap;
};

/* What the auto-vs-peers summary compares, per measured repetition. */
enum { R_THROUGHPUT, R_WORST_WAIT, R_CPU_PER_ACQ, R_N };

struct lk_cell {
	char placement[32];
	unsigned n, cs, outside;
	double *per_rep;                 /* reps x R_N values (NAN: none) */
	unsigned reps;
	bool stats_warmup, stats_all;
	size_t trace_cap;                /* events a thread may record (0 = no trace) */
	struct bench_lock *l;
	struct { _Alignas(HWS_CACHELINE) volatile uint64_t v; } counter;
	struct { _Alignas(HWS_CACHELINE) _Atomic uint32_t ready; _Atomic uint64_t start, end; } gate;
	uint64_t duration_ns;
	struct lk_thread *th;
	struct hws_lock_stats warm;      /* stages counted during warmup */
	bool have_warm;
	char label[200];
};

static void lk_thread_fn(void *arg, unsigned i)
{
	struct lk_cell *k = arg;
	struct lk_thread *t = &k->th[i];
	uint64_t end, dur = hws_ns_to_tsc(k->duration_ns);

	/* Start together: the last to arrive opens the window. */
	/* relaxed: only counts arrivals; the release store of start publishes */
	if (atomic_fetch_add_explicit(&k->gate.ready, 1, memory_order_relaxed) + 1 == k->n) {
		uint64_t s = hws_tsc();
		/* relaxed: published by the release store of start */
		atomic_store_explicit(&k->gate.end, s + dur, memory_order_relaxed);
		atomic_store_explicit(&k->gate.start, s, memory_order_release);
	}
	/* acquire: pairs with the release store of start */
	while (!atomic_load_explicit(&k->gate.start, memory_order_acquire))
		sched_yield();   /* there may be more threads than CPUs */
	/* relaxed: ordered by the acquire load of start above */
	end = atomic_load_explicit(&k->gate.end, memory_order_relaxed);
	/* this thread's CPU time, not the process's: GNU OpenMP's idle team
	 * threads spin for a while after an omp-* row, into the next row */
	struct timespec c0, c1;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c0);
	volatile uint64_t mine = 0;     /* the work outside the lock */

	for (;;) {
		uint64_t t0 = hws_tsc();
		if (t0 >= end)
			break;
		bench_lock_acquire(k->l, i);
		uint64_t t1 = hws_tsc();
		for (unsigned c = 0; c < k->cs; c++)
			k->counter.v++;
		uint64_t t2 = hws_tsc();
		bench_lock_release(k->l, i);
		t->total++;
		t->acqs += t1 < end;
		t->worst = t1 - t0 > t->worst ? t1 - t0 : t->worst;
		if (t->ntr < t->trcap)
			t->tr[t->ntr++] = (struct chrome_trace_ev){ t0, t1, t2 };
		/* every acquisition equally likely to be in the sample */
		bench_reservoir_add(&t->lat, (double)(t1 - t0));
		for (unsigned o = 0; o < k->outside; o++)
			mine++;
	}
	t->exit_tsc = hws_tsc();
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c1);
	t->cpu_ns = (uint64_t)((c1.tv_sec - c0.tv_sec) * 1000000000ll + (c1.tv_nsec - c0.tv_nsec));
}

static void emit_stages(struct bench_cell *c, const struct hws_lock_stats *st)
{
	if (!st->acquisitions)
		return;
	double a = (double)st->acquisitions;
	bench_sample_value(c, "first_try", "%", 100.0 * (double)st->first_try / a);
	bench_sample_value(c, "after_spin", "%", 100.0 * (double)st->after_spin / a);
	bench_sample_value(c, "after_sleep", "%", 100.0 * (double)st->after_sleep / a);
	bench_sample_value(c, "syscalls", "per acq", (double)st->syscalls / a);
	bench_sample_value(c, "max_spins", "polls", (double)st->max_spins);
	bench_sample_value(c, "handoffs", "%", 100.0 * (double)st->handoffs / a);
}

static void add_stats(struct hws_lock_stats *sum, const struct hws_lock_stats *st)
{
	sum->acquisitions += st->acquisitions;
	sum->first_try += st->first_try;
	sum->after_spin += st->after_spin;
	sum->after_sleep += st->after_sleep;
	sum->syscalls += st->syscalls;
	sum->wait_ns += st->wait_ns;
	sum->handoffs += st->handoffs;
	if (st->max_spins > sum->max_spins)
		sum->max_spins = st->max_spins;
}

static void free_buffers(struct lk_cell *k)
{
	for (unsigned i = 0; k->th && i < k->n; i++) {
		free(k->th[i].lat.v);
		free(k->th[i].tr);
		k->th[i].lat.v = NULL;
		k->th[i].tr = NULL;
	}
}

/* The samples of one repetition; 0 or an errno value with c->skip set. */
static int lk_results(struct bench_cell *c, struct lk_cell *k, double joules)
{
	uint64_t start = atomic_load(&k->gate.start), end = atomic_load(&k->gate.end);
	uint64_t acqs = 0, total = 0, lo = UINT64_MAX, hi = 0, last_exit = end, worst = 0, cpu = 0;
	double sq = 0, ovh = (double)bench_tsc_overhead();

	for (unsigned i = 0; i < k->n; i++) {
		struct lk_thread *t = &k->th[i];
		acqs += t->acqs;
		total += t->total;
		cpu += t->cpu_ns;
		worst = t->worst > worst ? t->worst : worst;
		sq += (double)t->acqs * (double)t->acqs;
		lo = t->acqs < lo ? t->acqs : lo;
		hi = t->acqs > hi ? t->acqs : hi;
		last_exit = t->exit_tsc > last_exit ? t->exit_tsc : last_exit;
	}
	if (k->counter.v != total * k->cs) {
		snprintf(c->skip, sizeof c->skip, "error: mutual exclusion violated (counter %llu, "
			 "expected %llu)", (unsigned long long)k->counter.v,
			 (unsigned long long)(total * k->cs));
		return EPROTO;
	}
	double secs = (double)hws_tsc_to_ns(end - start) / 1e9, macq = (double)acqs / secs / 1e6;
	bench_sample_value(c, "throughput", "Macq/s", macq);
	bench_sample_value(c, "acqs", "count", (double)acqs);
	bench_sample_value(c, "jain", "index", sq > 0 ? (double)acqs * (double)acqs /
						 ((double)k->n * sq) : 0);
	bench_sample_value(c, "min_max", "ratio", hi ? (double)lo / (double)hi : 0);
	/* the exact maximum over every acquisition, not the sample's */
	double wait_us = (double)hws_tsc_to_ns(worst > ovh ? worst - (uint64_t)ovh : 0) / 1e3;
	bench_sample_value(c, "worst_wait", "us", wait_us);
	/* every acquisition the CPU time paid for, the drain's too */
	double cpu_acq = total ? (double)cpu / (double)total : NAN;
	if (total)
		bench_sample_value(c, "cpu_per_acq", "ns/acq", cpu_acq);
	if (c->measuring && c->rep < k->reps) {
		double *v = &k->per_rep[c->rep * R_N];
		v[R_THROUGHPUT] = macq;
		v[R_WORST_WAIT] = wait_us;
		v[R_CPU_PER_ACQ] = cpu_acq;
	}
	bench_sample_cycles(c, "drain", last_exit - end);
	for (unsigned i = 0; i < k->n; i++)
		for (size_t s = 0; s < k->th[i].lat.n; s++) {
			double v = k->th[i].lat.v[s] - ovh;
			bench_sample_cycles(c, "acquire", v > 0 ? (uint64_t)v : 0);
		}
	if (joules >= 0 && total)
		bench_sample_value(c, "energy", "uJ/acq", joules * 1e6 / (double)total);
	return 0;
}

static int lk_run(struct bench_ctx *ctx, struct bench_cell *c)
{
	struct lk_cell *k = c->priv;
	bool stats = k->stats_all || (k->stats_warmup && !c->measuring);
	bool trace = k->trace_cap && c->measuring && c->rep == 0;
	size_t cap = bench_sample_budget(ctx) / k->n;
	struct bench_energy en;
	char why[200];
	int rc;

	rc = bench_lock_new(&k->l, c->impl, bench_cell_policy(c), k->n, stats, why, sizeof why);
	if (rc) {
		snprintf(c->skip, sizeof c->skip, "%s", why);
		return rc;
	}
	k->duration_ns = bench_opts(ctx)->duration_ns;
	k->counter.v = 0;
	atomic_store(&k->gate.ready, 0);
	atomic_store(&k->gate.start, 0);
	for (unsigned i = 0; i < k->n; i++) {
		struct lk_thread *t = &k->th[i];
		memset(t, 0, sizeof *t);
		t->lat.rng = 0x9E3779B97F4A7C15ull * (i + 1) + c->rep;
		t->lat.cap = cap ? cap : 1;
		t->lat.v = malloc(t->lat.cap * sizeof *t->lat.v);
		t->trcap = trace ? k->trace_cap : 0;
		t->tr = trace ? malloc(t->trcap * sizeof *t->tr) : NULL;
		if (!t->lat.v || (trace && !t->tr)) {
			free_buffers(k);
			bench_lock_free(k->l);
			snprintf(c->skip, sizeof c->skip, "out of memory");
			return ENOMEM;
		}
	}
	bool energy = bench_energy_start(&en) == 0;
	rc = bench_lock_team(k->l, k->n, c->cpus, lk_thread_fn, k);
	double joules = energy ? bench_energy_joules(&en) : -1;
	struct hws_lock_stats st;
	bool have_st = stats && bench_lock_stats(k->l, &st);
	bench_lock_free(k->l);
	k->l = NULL;
	if (rc) {
		free_buffers(k);
		snprintf(c->skip, sizeof c->skip, "cannot run the threads: %s", strerror(rc));
		return rc;
	}
	rc = lk_results(c, k, joules);
	if (!rc && have_st) {
		if (k->stats_all) {
			emit_stages(c, &st);
		} else {
			add_stats(&k->warm, &st);
			k->have_warm = true;
		}
	}
	if (!rc && k->stats_warmup && c->measuring && c->rep == 0 && k->have_warm)
		emit_stages(c, &k->warm);
	if (!rc && trace) {
		struct chrome_trace_ev *ev[BENCH_MAX_CPUS];
		size_t nev[BENCH_MAX_CPUS];
		for (unsigned i = 0; i < k->n; i++) {
			ev[i] = k->th[i].tr;
			nev[i] = k->th[i].ntr;
		}
		if (chrome_trace_row(k->label, k->n, c->cpus, atomic_load(&k->gate.start), ev, nev))
			fprintf(stderr, "hwsync bench: locks: cannot write the trace: %s\n",
				strerror(errno ? errno : EIO));
	}
	free_buffers(k);
	return rc;
}

static void lk_cleanup(struct bench_cell *c)
{
	struct lk_cell *k = c->priv;
	if (!k)
		return;
	free_buffers(k);
	if (k->trace_cap)
		chrome_trace_put();
	free(k->th);
	free(k->per_rep);
	free(k);
	c->priv = NULL;
}

/* ---- setup ---------------------------------------------------------------- */
struct lk_setup {
	const char *placement;
	unsigned n, ncpu;
	const int *cpus;
	unsigned cs, outside;
	int stats;           /* 0 off, 1 warmup, 2 all */
	size_t trace_events;
};

static int lk_add(struct bench_ctx *ctx, const struct lk_setup *s, const char *impl,
		  const char *policy)
{
	struct bench_cell *c = bench_cell_new_priv(ctx, impl, policy, sizeof(struct lk_cell));
	if (!c)
		return bench_error("out of memory");
	struct lk_cell *k = c->priv;
	k->n = s->n;
	k->cs = s->cs;
	k->outside = s->outside;
	snprintf(k->placement, sizeof k->placement, "%s", s->placement);
	k->reps = bench_opts(ctx)->reps;
	if (!(k->per_rep = malloc((k->reps ? k->reps : 1) * R_N * sizeof *k->per_rep)))
		return bench_error("out of memory");
	for (unsigned i = 0; i < k->reps * R_N; i++)
		k->per_rep[i] = NAN;
	k->stats_warmup = s->stats == 1 && bench_lock_is_hwsync(impl);
	k->stats_all = s->stats == 2 && bench_lock_is_hwsync(impl);
	if (!(k->th = bench_zalloc_lines(s->n * sizeof *k->th)))
		return bench_error("out of memory");
	if (s->trace_events) {
		k->trace_cap = s->trace_events / 2 / s->n;
		k->trace_cap = k->trace_cap ? k->trace_cap : 1;
		chrome_trace_hold();
	}
	snprintf(k->label, sizeof k->label, "%s%s%s: %u threads on %u CPUs, cs %u, outside %u, %s",
		 impl, policy ? " " : "", policy ? policy : "", s->n, s->ncpu, s->cs, s->outside,
		 s->placement);
	c->nthreads = s->n;
	memcpy(c->cpus, s->cpus, s->n * sizeof *s->cpus);
	bench_param_num(c, "cs", s->cs);
	bench_param_num(c, "outside", s->outside);
	bench_param(c, "placement", "%s", s->placement);
	bench_param_num(c, "ncpu", s->ncpu);
	return 0;
}

/* Every implementation for one thread configuration and critical section. */
static int lk_add_all(struct bench_ctx *ctx, const struct lk_setup *s)
{
	const struct bench_opts *o = bench_opts(ctx);
	char list[BENCH_IMPLS_LEN] = "", why[200];
	int rc;

	bench_lock_impls(list, sizeof list);
	for (char *save, *impl = strtok_r(list, ",", &save); impl; impl = strtok_r(NULL, ",", &save)) {
		if (!bench_impl_on(ctx, impl))
			continue;
		bool hws = bench_lock_is_hwsync(impl), autok = hws && !strcmp(impl, "hwsync-auto");
		unsigned npol = hws && !autok ? bench_policy_count(ctx) : 1;
		for (unsigned p = 0; p < npol; p++) {
			const char *pwhy = NULL;
			const char *pol = hws && !autok ? bench_policy(ctx, p, &pwhy) : NULL;
			if (pol && !o->policies.n && !o->quick && !bench_in_list(DEFAULT_POLICIES, pol))
				continue;
			if (pwhy) {
				bench_skip(ctx, pwhy, "hwsync locks policy %s", pol);
				continue;
			}
			struct bench_lock *l;
			if ((rc = bench_lock_new(&l, impl, pol, s->n, false, why, sizeof why))) {
				bool all = !hws || rc == ENOTSUP;
				bench_skip(ctx, why, "%s%s%s", impl, all ? "" : " ", all ? "" : pol);
				if (all)
					break;
				continue;
			}
			bench_lock_free(l);
			if ((rc = lk_add(ctx, s, impl, pol)))
				return rc;
		}
	}
	return 0;
}

/* --cs and --outside: OUT_CS in out[] stands for "the row's cs". */
#define OUT_CS UINT_MAX
#define OUT_MAX 100000000u
struct lk_sizes {
	unsigned cs[16], ncs, out[16], nout;
};

/* "0,cs,500": numbers (and ranges) or the word cs; 0 or EINVAL. */
static int parse_outside(const char *arg, struct lk_sizes *z)
{
	z->nout = 0;
	for (const char *p = arg;;) {
		size_t len = strcspn(p, ",");
		unsigned v[16], n = 0;
		char tok[32];
		if (len >= sizeof tok)
			return EINVAL;
		memcpy(tok, p, len);
		tok[len] = '\0';
		if (!strcmp(tok, "cs"))
			v[n++] = OUT_CS;
		else if (bench_parse_ulist(tok, v, 16, &n))
			return EINVAL;
		for (unsigned i = 0; i < n; i++) {
			bool dup = false;
			for (unsigned j = 0; j < z->nout; j++)
				dup |= z->out[j] == v[i];
			if (v[i] != OUT_CS && v[i] > OUT_MAX)
				return EINVAL;
			if (!dup && z->nout == 16)
				return EINVAL;
			if (!dup)
				z->out[z->nout++] = v[i];
		}
		if (!p[len])
			return 0;
		p += len + 1;
	}
}

/* Every critical section x work outside for one thread configuration. */
static int lk_add_sizes(struct bench_ctx *ctx, struct lk_setup *s, const struct lk_sizes *z)
{
	int rc;
	for (unsigned i = 0; i < z->ncs; i++) {
		unsigned done[16], ndone = 0;
		s->cs = z->cs[i];
		for (unsigned j = 0; j < z->nout; j++) {
			bool dup = false;
			s->outside = z->out[j] == OUT_CS ? z->cs[i] : z->out[j];
			for (unsigned q = 0; q < ndone; q++)
				dup |= done[q] == s->outside;   /* 0,cs with cs 0 */
			if (dup)
				continue;
			done[ndone++] = s->outside;
			if ((rc = lk_add_all(ctx, s)))
				return rc;
		}
	}
	return 0;
}

static int lk_setup(struct bench_ctx *ctx)
{
	const struct bench_list *pl = bench_placements(ctx);
	unsigned ov, one, nth, tev;
	struct lk_sizes z;
	const unsigned *threads = bench_threads(ctx, &nth);
	const char *stages = bench_xopt(ctx, "stages"), *trace = bench_xopt(ctx, "trace"), *why;
	struct lk_setup s = { 0 };
	int rc;

	if (bench_parse_ulist(bench_xopt(ctx, "cs"), z.cs, 16, &z.ncs))
		return bench_error("locks: --cs takes a list of increment counts, e.g. 100,1000");
	if (parse_outside(bench_xopt(ctx, "outside"), &z))
		return bench_error("locks: --outside takes a list of increment counts up to %u "
				   "and the word cs (= the row's --cs), e.g. 0,cs", OUT_MAX);
	if (bench_parse_ulist(bench_xopt(ctx, "oversub"), &ov, 1, &one) || ov > 64)
		return bench_error("locks: --oversub takes one number 0..64 (0 = no such rows)");
	if (bench_parse_ulist(bench_xopt(ctx, "trace-events"), &tev, 1, &one) || !tev ||
	    tev > 1000000)
		return bench_error("locks: --trace-events takes one number 1..1000000");
	if (!strcmp(stages, "off"))
		s.stats = 0;
	else if (!strcmp(stages, "warmup"))
		s.stats = 1;
	else if (!strcmp(stages, "all"))
		s.stats = 2;
	else
		return bench_error("locks: --stages is off, warmup or all (not '%s')", stages);
	if (trace[0]) {
		if ((rc = chrome_trace_open(trace)))
			return bench_error("locks: cannot write --trace '%s': %s", trace, strerror(rc));
		s.trace_events = tev;
	}
	if (s.stats == 1 && !bench_opts(ctx)->warmup)
		bench_skip(ctx, "--stages warmup counts during warmup rounds and --warmup is 0",
			   "stage breakdown");
	for (unsigned p = 0; p < pl->n; p++) {
		int cpus[BENCH_MAX_CPUS];
		bool gone = false;
		s.placement = pl->v[p];
		for (unsigned t = 0; t < nth && !gone; t++) {
			rc = bench_place(ctx, pl->v[p], threads[t], cpus, &why);
			if (rc == ENOTSUP) {
				bench_skip(ctx, why, "all placement=%s", pl->v[p]);
				gone = true;
				break;
			}
			if (rc) {
				bench_skip(ctx, why, "threads=%u placement=%s (see --oversub)",
					   threads[t], pl->v[p]);
				continue;
			}
			s.n = threads[t];
			s.cpus = cpus;
			s.ncpu = bench_distinct_cpus(cpus, s.n);
			if ((rc = lk_add_sizes(ctx, &s, &z)))
				return rc;
		}
		s.n = gone ? 0 : bench_oversub_row(ctx, pl->v[p], ov, threads, nth, cpus);
		if (s.n) {
			s.cpus = cpus;
			s.ncpu = bench_distinct_cpus(cpus, s.n);
			if ((rc = lk_add_sizes(ctx, &s, &z)))
				return rc;
		}
	}
	if (bench_energy_available(&why))
		bench_skip(ctx, why, "energy (joules per acquisition)");
	return 0;
}

/* ---- hwsync-auto vs the peers ------------------------------------------------ */
static const char *const ratio_name[R_N] = { "throughput_ratio", "worst_wait_ratio",
					     "cpu_per_acq_ratio" };
static const bool higher_better[R_N] = { true, false, false };

/* Same threads on the same CPUs, placement, cs and outside. */
static bool same_group(const struct bench_cell *a, const struct bench_cell *b)
{
	const struct lk_cell *x = a->priv, *y = b->priv;
	return x->n == y->n && x->cs == y->cs && x->outside == y->outside &&
	       !strcmp(x->placement, y->placement) &&
	       !memcmp(a->cpus, b->cpus, x->n * sizeof *a->cpus);
}

/* Median of value m of a cell over its repetitions; NAN when it has none. */
static double rep_median(const struct lk_cell *k, int m)
{
	double *v = malloc((k->reps ? k->reps : 1) * sizeof *v);
	size_t n = 0;
	struct bench_summary sum;
	for (unsigned r = 0; v && r < k->reps; r++)
		if (isfinite(k->per_rep[r * R_N + m]))
			v[n++] = k->per_rep[r * R_N + m];
	bench_summarize(v, n, &sum);
	free(v);
	return n ? sum.median : NAN;
}

/* A summary row: per repetition, auto's value over that of peer[m] (NULL:
 * none) for each value m; the harness gives their median and CI. */
static void ratio_row(struct bench_ctx *ctx, const struct bench_cell *a,
		      const struct bench_cell *const peer[R_N], const char *vs, const char *best)
{
	const struct lk_cell *ka = a->priv;
	struct bench_cell *r = bench_summary_row(ctx, a->impl, NULL);
	if (!r)
		return;
	r->nthreads = a->nthreads;
	memcpy(r->cpus, a->cpus, a->nthreads * sizeof *a->cpus);
	for (unsigned i = 0; i < a->nparams; i++) {
		if (a->param[i].num)
			bench_param_num(r, a->param[i].key, strtod(a->param[i].val, NULL));
		else
			bench_param(r, a->param[i].key, "%s", a->param[i].val);
	}
	bench_param(r, "vs", "%s", vs);
	if (best)
		bench_param(r, "best", "%s", best);
	for (int m = 0; m < R_N; m++) {
		const struct lk_cell *kp = peer[m] ? peer[m]->priv : NULL;
		for (unsigned rep = 0; kp && rep < ka->reps && rep < kp->reps; rep++) {
			/* repetition rep of both ran in the same round */
			double x = ka->per_rep[rep * R_N + m], y = kp->per_rep[rep * R_N + m];
			if (isfinite(x) && isfinite(y) && y > 0)
				bench_sample_value(r, ratio_name[m], "auto/peer", x / y);
		}
	}
}

/* For every hwsync-auto row, a row per peer of its group and one against the
 * best peer of each value (the best median over the repetitions). */
static void lk_summarize(struct bench_ctx *ctx)
{
	unsigned n;
	struct bench_cell *const *cells = bench_cells(ctx, &n);

	for (unsigned i = 0; i < n; i++) {
		const struct bench_cell *a = cells[i], *best[R_N] = { NULL };
		double bestv[R_N] = { 0 };
		if (strcmp(a->impl, "hwsync-auto"))
			continue;
		for (unsigned j = 0; j < n; j++) {
			const struct bench_cell *p = cells[j];
			if (!bench_in_list(BENCH_LOCK_PEERS, p->impl) || !same_group(a, p))
				continue;
			const struct bench_cell *all[R_N] = { p, p, p };
			ratio_row(ctx, a, all, p->impl, NULL);
			for (int m = 0; m < R_N; m++) {
				double v = rep_median(p->priv, m);
				if (isnan(v) || (best[m] && (higher_better[m] ? v <= bestv[m]
									     : v >= bestv[m])))
					continue;
				best[m] = p;
				bestv[m] = v;
			}
		}
		if (!best[R_THROUGHPUT] && !best[R_WORST_WAIT] && !best[R_CPU_PER_ACQ])
			continue;   /* no peer in this group */
		char names[160];   /* peer names are short: fits a parameter (64) */
		const char *nm[R_N];
		for (int m = 0; m < R_N; m++)
			nm[m] = best[m] ? best[m]->impl : "-";
		if (!strcmp(nm[0], nm[1]) && !strcmp(nm[0], nm[2]))
			snprintf(names, sizeof names, "%s", nm[0]);
		else
			snprintf(names, sizeof names, "%s/%s/%s", nm[0], nm[1], nm[2]);
		ratio_row(ctx, a, best, "best", names);
	}
}

static const struct bench_xopt lk_xopts[] = {
	{ "cs", "0,100,1000,10000", "100",
	  "critical sections: a list of counts of volatile increments of a shared\n"
	  "        counter while holding the lock (0: acquire and release only)" },
	{ "outside", "0", NULL,
	  "work outside the lock: volatile increments of a counter of the thread's\n"
	  "        own between the release and the next acquire, in the units of --cs;\n"
	  "        a list of numbers and the word cs (as long as the row's critical\n"
	  "        section), e.g. 0,cs,1000" },
	{ "oversub", "4", NULL,
	  "also run OVERSUB threads per CPU of each placement, round-robin (e.g. 8\n"
	  "        threads on 2 CPUs); 0 = no oversubscribed rows" },
	{ "stages", "warmup", NULL,
	  "stage counters of the hwsync rows: off, warmup (counted in the warmup\n"
	  "        rounds so the measured rounds run uninstrumented), all (counted in\n"
	  "        every round)" },
	{ "trace", "", NULL,
	  "write the acquisition timeline of the first measured repetition of every\n"
	  "        row to this file as Chrome trace-event JSON (open it in\n"
	  "        https://ui.perfetto.dev); default: no trace" },
	{ "trace-events", "2000", NULL, "events per row in the --trace file (two per acquisition)" },
	{ NULL, NULL, NULL, NULL },
};

/* --impls: filled at start-up from the library's kinds (peers.h). */
static char lk_impls[BENCH_IMPLS_LEN] = "";

static const struct bench_exp locks_exp = {
	.name = "locks",
	.title = "lock acquisition latency, throughput, fairness, CPU cost, stages, timeline",
	.reproduces = "[RAINA] Sec. 4.2 and Figs. 28-30; [AKKAN13] Fig. 1",
	.help =
"    T threads contend for one lock.  Each thread loops: entry (TSC), acquire,\n"
"    acquired (TSC), a critical section of --cs volatile increments of a\n"
"    shared counter, release, then --outside volatile increments of a counter\n"
"    of its own (the work a program does between two acquisitions).  With\n"
"    --outside 0 the lock is always wanted; the more work outside, the more\n"
"    often a thread finds the lock free and the more often a waiter has\n"
"    nobody to wait for, which is where spinning and sleeping waiters part.\n"
"    --outside cs makes the work outside as long as the critical section.\n"
"\n"
"    A row runs for --duration.  Threads stop entering when the window closes,\n"
"    so a lock that collapses under oversubscription (a spinning waiter holds\n"
"    the CPU the holder or the next in line needs) shows as few acquisitions\n"
"    and a long drain instead of hanging the run.  The shared counter is\n"
"    checked against the acquisitions: a lost increment is reported as an\n"
"    error (with --cs 0 there is no increment to check).\n"
"\n"
"    Rows: placement x thread count x critical section x work outside x\n"
"    implementation.  The thread counts are --threads (default 1, 2 and N, the\n"
"    CPUs this process may use) and, per placement, --oversub threads per CPU\n"
"    the placement gives, placed round-robin (default 4: four times as many\n"
"    threads as CPUs, so most waiters have no CPU of their own).\n"
"\n"
"    pthread-mutex     pthread_mutex_lock/unlock (glibc, default attributes)\n"
"    pthread-spin      pthread_spin_lock/unlock (glibc)\n"
"    omp-lock          omp_set_lock/omp_unset_lock in a GNU OpenMP team\n"
"    omp-critical      an unnamed #pragma omp critical (GOMP_critical_start/end)\n"
"    ck-fas            Concurrency Kit ck_spinlock_fas (test-and-set)\n"
"    ck-ticket         Concurrency Kit ck_spinlock_ticket\n"
"    ck-mcs            Concurrency Kit ck_spinlock_mcs (a node per thread)\n"
"    ck-clh            Concurrency Kit ck_spinlock_clh (a node per thread)\n"
"    hwsync-KIND       hws_lock_create(KIND, policy), every kind but auto\n"
"                      (IMPLEMENTATIONS below); once per wait policy (default\n"
"                      spin, pause, futex, adaptive; --quick pause, futex,\n"
"                      adaptive)\n"
"    hwsync-auto       hws_lock_create(\"auto\", NULL): the adaptive lock, with its\n"
"                      own spinning and its default policy for sleeping (futex)\n"
"    The first eight are the peers that the auto-vs-peers table compares with.\n"
"\n"
"METRICS\n"
"    Per row and repetition; the table gives the median over the repetitions\n"
"    and its 95% confidence interval.\n"
"    throughput   acquisitions in the window per second (Macq/s)\n"
"    acqs         acquisitions in the window: tells a collapsed lock\n"
"    acquire      entry to acquired, per acquisition (a uniform sample of all of\n"
"                 them), minus the cost of reading the TSC: the latency\n"
"                 distribution (p5/p95/p99 in the JSON)\n"
"    worst_wait   the longest entry to acquired of any acquisition of any\n"
"                 thread (us): the exact maximum, not taken from the sample, of\n"
"                 every acquisition entered in the window (one that completes\n"
"                 in the drain too), so a thread kept waiting shows here\n"
"    cpu_per_acq  CPU time of the row's threads per acquisition (ns): each\n"
"                 thread's own CPU clock (CLOCK_THREAD_CPUTIME_ID) from the\n"
"                 opening of the window to its exit, summed, over all the\n"
"                 acquisitions; what spinning waiters burn and sleeping ones\n"
"                 do not.  Per thread rather than the process's clock: GNU\n"
"                 OpenMP's idle team threads spin for a while after an omp-*\n"
"                 row, and the process clock would bill that to the next row\n"
"    jain         Jain's fairness index of the per-thread acquisitions,\n"
"                 (sum x)^2 / (T sum x^2): 1 = even, 1/T = one thread had them all\n"
"    min_max      fewest / most acquisitions of any thread (0 = one starved)\n"
"    drain        from the end of the window until the last thread left\n"
"    first_try, after_spin, after_sleep\n"
"                 hwsync rows, [RAINA]'s stages: % of acquisitions that succeeded\n"
"                 on the first atomic, after spinning, after sleeping in the kernel\n"
"    syscalls     hwsync rows: futex calls (waiters and wakers) per acquisition\n"
"    max_spins    hwsync rows: longest spin of one acquisition, in polls\n"
"    handoffs     hwsync rows: % of acquisitions handed to a waiter that had\n"
"                 waited past the fairness bound (auto only)\n"
"    energy       package energy per acquisition (uJ), where RAPL is readable\n"
"\n"
"    The stage counters cost a little (one more atomic and two clock reads an\n"
"    acquisition), so by default they are taken in the warmup rounds only.\n"
"    --trace FILE writes the timeline of the first measured repetition of every\n"
"    row (\"wait\" slices from entry to acquired, \"hold\" slices while held;\n"
"    one process per row, one track per thread), [RAINA] Figs. 28-30.\n"
"\n"
"AUTO VS PEERS\n"
"    After the rows and the skipped list comes a second table: hwsync-auto\n"
"    against each peer that ran in the same group (the same threads on the\n"
"    same CPUs, placement, cs and outside).  The harness runs every row once\n"
"    per round, round-robin, so repetition r of hwsync-auto and repetition r of\n"
"    the peer ran in the same round, a few rows apart, and share the state of\n"
"    the machine.  Each line takes, repetition by repetition, hwsync-auto's\n"
"    value over the peer's, and gives the median of these ratios with its 95%\n"
"    confidence interval (order statistics; below 6 repetitions the interval\n"
"    is [min, max]):\n"
"    throughput_ratio    above 1: hwsync-auto acquired more often\n"
"    worst_wait_ratio    below 1: its longest wait was shorter\n"
"    cpu_per_acq_ratio   below 1: it burnt less CPU per acquisition\n"
"    vs names the peer; vs=best compares with the best peer of each ratio: the\n"
"    one with the highest median throughput, the lowest median worst_wait and\n"
"    the lowest median cpu_per_acq over the repetitions, named in column best\n"
"    in that order (once when one peer is best at all three).  The parameters\n"
"    of the hwsync-auto row come along.  A group\n"
"    without hwsync-auto or without a peer has no line; the JSON carries the\n"
"    table as the experiment's \"summary\" (docs/bench-schema.md).\n"
"\n"
"EXAMPLES\n"
"    hwsync bench locks --quick --outside 0,cs\n"
"        (the quick rows, each also with as much work outside as inside)\n"
"    hwsync bench locks --cs 0,1000 --outside 0,cs --impls hwsync-auto,ck-mcs\n"
"        (hwsync-auto against one peer)\n"
"    hwsync bench locks --cpus 0,1 --threads 8 --oversub 0\n"
"        (oversubscribed on explicit CPUs)\n",
	.impls = lk_impls,
	.uses_policies = true,
	.quick_policies = "pause,futex,adaptive",
	.def_threads = "1,2,N",
	.def_placements = "smt,core",
	.xopts = lk_xopts,
	.rank = 70,
	.setup = lk_setup,
	.run = lk_run,
	.cleanup = lk_cleanup,
	.summarize = lk_summarize,
	.summary_title = "hwsync-auto vs peers: auto / peer of the same repetition, median [95% CI]",
};
__attribute__((constructor)) static void lk_impls_fill(void)
{
	bench_lock_impls(lk_impls, sizeof lk_impls);
}
BENCH_REGISTER(locks_exp)

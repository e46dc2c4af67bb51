/* The harness behind `hwsync bench`: options, placement, pinned threads,
 * TSC timing, order statistics, round-robin repetitions, table and JSON.
 *
 * An experiment is one file that defines a `struct bench_exp` and registers it
 * with BENCH_REGISTER().  Its setup() turns the options into *cells* (one
 * implementation x policy x parameters each, with the CPUs its threads run on)
 * and records what cannot run here as skipped.  The harness then calls run()
 * once per cell per repetition, interleaving the cells round-robin
 * (A B C A B C ...: drift of a shared machine hits every cell alike), after
 * --warmup discarded rounds.  run() adds samples to named metrics of its
 * cell; the harness summarises them (median, p5, p95, p99, 95% CI of the
 * median), prints a table and writes JSON.
 * See bench/README.md for a walk-through of adding an experiment.
 */
#ifndef HWS_BENCH_HARNESS_H
#define HWS_BENCH_HARNESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define BENCH_MAX_LIST 64
/* Room for an experiment's list of implementations (bench_exp.impls). */
#define BENCH_IMPLS_LEN 1024
#define BENCH_MAX_CPUS 256
#define BENCH_MAX_PARAMS 8
#define BENCH_MAX_METRICS 16

struct bench_list {                 /* a parsed comma-separated list */
	unsigned n;
	char *v[BENCH_MAX_LIST];
};

/* An experiment-specific option: --NAME VALUE. */
struct bench_xopt {
	const char *name;
	const char *def;       /* default */
	const char *quick;     /* default under `suite --quick` (NULL = def) */
	const char *help;
};

struct bench_opts {
	struct bench_list threads, policies, impls, placements;
	int cpus[BENCH_MAX_CPUS];   /* --cpus, in order */
	unsigned ncpus;             /* 0 = use placements */
	unsigned reps, warmup;
	uint64_t duration_ns;       /* time budget of one cell in one repetition */
	bool raw, quick;
	bool suite;                 /* options apply to every experiment */
	const char *xval[16];       /* values of the experiment's xopts, by index */
};

struct bench_metric {
	char name[24];
	char unit[16];          /* "ns" for TSC-timed metrics, else a unit name */
	bool timed;             /* samples are TSC cycles */
	double *s;              /* samples (cycles when timed) */
	size_t n, cap;
	double *rep;            /* per repetition: the median of its samples */
	size_t nrep, caprep;
};

struct bench_cell {
	char impl[48];
	char policy[96];            /* "" for peers (JSON null) */
	struct { char key[24]; char val[64]; bool num; } param[BENCH_MAX_PARAMS];
	unsigned nparams;
	unsigned nthreads;
	int cpus[BENCH_MAX_CPUS];   /* where thread i runs */
	struct bench_metric m[BENCH_MAX_METRICS];
	unsigned nmetrics;
	char skip[200];             /* set by run(): the cell moves to skipped */
	void *priv;                 /* the experiment's per-cell state */
	bool measuring;             /* false during warmup: samples are dropped */
	unsigned rep;               /* current repetition (0-based, warmup excluded) */
};

struct bench_ctx;

struct bench_exp {
	const char *name;
	const char *title;          /* one line */
	const char *reproduces;     /* paper, table or figure */
	const char *help;           /* DESCRIPTION and METRICS for --help */
	const char *impls;          /* comma list of implementation names */
	bool uses_policies;         /* hwsync rows are per wait policy */
	const char *quick_policies; /* default --policies under --quick (NULL = def_policies) */
	const char *def_policies;   /* default --policies (NULL = every policy) */
	const char *def_threads;    /* default --threads */
	const char *def_placements; /* default --placement */
	const struct bench_xopt *xopts;   /* NULL-name terminated, may be NULL */
	int rank;                   /* order in `suite` and `list` */
	bool not_in_suite;          /* `suite` leaves it out (it says why in .help) */
	/* Add cells (bench_cell_new) and skipped entries.  Returns 0, or
	 * non-zero after bench_error() for a bad option. */
	int (*setup)(struct bench_ctx *ctx);
	/* One repetition of one cell. Returns 0 or non-zero after setting
	 * cell->skip (the cell is then reported as skipped). */
	int (*run)(struct bench_ctx *ctx, struct bench_cell *cell);
	void (*cleanup)(struct bench_cell *cell);   /* free cell->priv; may be NULL */
	/* After the last round, with the cells that ran (bench_cells): add
	 * summary rows (bench_summary_row) that compare cells, e.g. one cell's
	 * value over another's of the same repetition.  They are printed as a
	 * table of their own, headed by summary_title, and written to the JSON
	 * as the experiment's "summary".  NULL = no summary. */
	void (*summarize)(struct bench_ctx *ctx);
	const char *summary_title;
};

void bench_register(const struct bench_exp *e);
#define BENCH_REGISTER(var) \
	__attribute__((constructor)) static void bench_reg_##var(void) { bench_register(&var); }

const struct bench_exp *const *bench_experiments(unsigned *n);
const struct bench_exp *bench_find(const char *name);

/* SIZE bytes, zeroed, cache-line aligned and padded to whole lines, so that
 * state pinned threads write shares no line with anything else; NULL when
 * out of memory.  Freed with free(). */
void *bench_zalloc_lines(size_t size);

/* ---- used by setup() ---------------------------------------------------- */
const struct bench_opts *bench_opts(const struct bench_ctx *ctx);
const struct bench_exp *bench_exp_of(const struct bench_ctx *ctx);
/* Value of the experiment option NAME (default applied). */
const char *bench_xopt(const struct bench_ctx *ctx, const char *name);
/* Parse a comma list of unsigned numbers (also "a-b" ranges). 0 or EINVAL. */
int bench_parse_ulist(const char *s, unsigned *v, unsigned max, unsigned *n);
/* One-line error for a bad option; returns 2 (the exit code). */
int bench_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Is IMPL selected by --impls (all when none given)? */
bool bench_impl_on(const struct bench_ctx *ctx, const char *impl);
/* Is NAME one of the names of the comma list LIST? */
bool bench_in_list(const char *list, const char *name);
/* How many different CPUs cpus[0..n) name (oversubscribed threads share). */
unsigned bench_distinct_cpus(const int *cpus, unsigned n);
/* Append HEAD (may be NULL), then PREFIX<name> for every name of the
 * NULL-terminated NAMES (may be NULL), to the comma list in buf: lists of
 * implementations made from the library's kinds at start-up. */
void bench_impls_append(char *buf, size_t len, const char *head, const char *prefix,
			const char *const *names);
/* The thread counts: --threads or the experiment's default. */
const unsigned *bench_threads(const struct bench_ctx *ctx, unsigned *n);
/* The placements (names) to run: --placement or the default; "cpus" when
 * --cpus was given. */
const struct bench_list *bench_placements(const struct bench_ctx *ctx);
/* The wait policies for hwsync rows: --policies or every kind.  Each is
 * returned with its parse result: avail 0 or the reason it is not here. */
unsigned bench_policy_count(const struct bench_ctx *ctx);
const char *bench_policy(const struct bench_ctx *ctx, unsigned i, const char **why_not);

/* CPUs for n threads under PLACEMENT (or --cpus).  0; ENOTSUP with *why when
 * the machine cannot give it (-> skipped); EINVAL/ERANGE with *why for bad
 * input (-> bench_error). */
int bench_place(const struct bench_ctx *ctx, const char *placement, unsigned n, int *cpus,
		const char **why);

/* The oversubscribed row of PLACEMENT: ov threads per CPU of the most CPUs
 * it gives (--cpus: the CPUs listed), round-robin over them, at most
 * BENCH_MAX_CPUS threads.  Its thread count with cpus[] filled, or 0 when
 * there is no such row: ov is 0, the placement gives no CPU, the threads
 * would not outnumber the CPUs, or a --threads row (threads[0..nth)) is
 * the same row already. */
unsigned bench_oversub_row(const struct bench_ctx *ctx, const char *placement, unsigned ov,
			   const unsigned *threads, unsigned nth, int *cpus);

struct bench_cell *bench_cell_new(struct bench_ctx *ctx, const char *impl, const char *policy);
/* The policy the cell was made with: NULL for none (the peers), as the
 * implementations' constructors take it. */
static inline const char *bench_cell_policy(const struct bench_cell *c)
{
	return c->policy[0] ? c->policy : NULL;
}
/* bench_cell_new with a zeroed, cache-line-aligned private state of SIZE bytes
 * in c->priv (the experiment's cleanup frees it with free()); NULL when out of
 * memory. */
struct bench_cell *bench_cell_new_priv(struct bench_ctx *ctx, const char *impl,
				       const char *policy, size_t size);
void bench_param(struct bench_cell *c, const char *key, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void bench_param_num(struct bench_cell *c, const char *key, double v);
void bench_skip(struct bench_ctx *ctx, const char *reason, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* ---- used by run() ------------------------------------------------------ */
/* Add one sample: cycles of the TSC (reported in ns and cycles), or a value
 * in UNIT.  Dropped during warmup. */
void bench_sample_cycles(struct bench_cell *c, const char *metric, uint64_t cycles);
void bench_sample_value(struct bench_cell *c, const char *metric, const char *unit, double v);
/* A timed sample that is the mean of COUNT operations timed together:
 * cycles / count, kept with its fraction (a batch of short operations). */
void bench_sample_cycles_per(struct bench_cell *c, const char *metric, uint64_t cycles,
			     uint64_t count);
/* Samples a cell may keep per metric per repetition (memory bound). */
size_t bench_sample_budget(const struct bench_ctx *ctx);

/* xorshift64 (13, 7, 17): a cheap pseudo-random stream for an experiment's
 * own choices (which operation next, which sample to keep); *s not 0. */
static inline uint64_t bench_xorshift(uint64_t *s)
{
	uint64_t x = *s;
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return *s = x;
}

/* A uniform sample of at most cap of the values offered (Algorithm R):
 * every value is kept with the same probability however many come, so a
 * long run is not summarised by its first values alone. */
struct bench_reservoir {
	double *v;          /* room for cap values; the first n are kept */
	size_t n, cap;
	uint64_t seen;      /* values offered */
	uint64_t rng;       /* bench_xorshift state, not 0 */
};

static inline void bench_reservoir_add(struct bench_reservoir *r, double x)
{
	if (r->n < r->cap) {
		r->v[r->n++] = x;
	} else if (r->cap) {
		uint64_t i = bench_xorshift(&r->rng) % (r->seen + 1);
		if (i < r->cap)
			r->v[i] = x;
	}
	r->seen++;
}
/* Cost of one hws_tsc() pair, cycles (subtract from very short intervals). */
uint64_t bench_tsc_overhead(void);

/* ---- used by summarize() ------------------------------------------------ */
/* The cells that ran every round, in the order they ran in each round. */
struct bench_cell *const *bench_cells(const struct bench_ctx *ctx, unsigned *n);
/* A summary row: set nthreads, cpus and parameters as for a cell, and add
 * its samples with bench_sample_value (every sample counts; the harness
 * summarises them as it does a cell's: median and its 95% CI).  NULL when
 * out of memory. */
struct bench_cell *bench_summary_row(struct bench_ctx *ctx, const char *impl,
				     const char *policy);

/* Run fn(arg, i) on n threads pinned to cpus[i]; all start together (after a
 * start barrier) and the call returns when all are done.  0 or an errno value
 * (pinning failures are errors: the caller marks the cell skipped). */
int bench_run_threads(unsigned n, const int *cpus, void (*fn)(void *arg, unsigned i),
		      void *arg);
/* The same on a GNU OpenMP team of n threads, each pinning itself (peers
 * that only work inside a team: omp locks, omp barrier).  EAGAIN when the
 * runtime gives a smaller team (fn then runs nowhere), ENOTSUP when built
 * without OpenMP. */
int bench_omp_team(unsigned n, const int *cpus, void (*fn)(void *arg, unsigned i), void *arg);
int bench_pin_self(int cpu);

/* Small fixed floating-point job used by several experiments: C = A x B on
 * n x n doubles, `units` times.  Returns a checksum so it is not elided. */
double bench_matmul(unsigned n, unsigned units);

/* Progress on stderr (only when a run takes more than a few seconds). */
void bench_progress(struct bench_ctx *ctx, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Every barrier implementation x (for hwsync kinds) every usable policy, for
 * n threads: calls add(ctx, impl, policy_or_NULL, arg) for each that can be
 * created here and records the others as skipped once (bench/barrier_impls.c).
 * Returns the first non-zero add() result. */
int bench_for_each_barrier(struct bench_ctx *ctx, unsigned n,
			   int (*add)(struct bench_ctx *ctx, const char *impl, const char *policy,
				      void *arg), void *arg);

/* Energy: 0 when RAPL is readable, else ENOTSUP with the reason. */
int bench_energy_available(const char **why);

/* ---- sessions (run.c, output.c), driven by tool/bench.c ---------------- */
struct bench_session;
struct bench_session *bench_session_new(int argc, char **argv);
/* Run one experiment with opts; appends its results to the session. */
int bench_session_run(struct bench_session *s, const struct bench_exp *e,
		      const struct bench_opts *o);
int bench_session_write_json(struct bench_session *s, const char *path);
void bench_session_free(struct bench_session *s);

/* ---- statistics (stats.c) ----------------------------------------------- */
struct bench_summary {
	size_t n;
	double median, p5, p95, p99, mean, min, max;
	double ci_lo, ci_hi;   /* 95% CI of the median (order statistics) */
};
/* Sorts v in place. */
void bench_summarize(double *v, size_t n, struct bench_summary *out);
/* The rank j of that interval, [x_(j), x_(n-j+1)] (1-based): the largest j
 * whose coverage 1 - 2 P(B <= j-1), B ~ Binomial(n, 1/2), is at least 95%;
 * 1 when none is (n < 6). */
size_t bench_median_ci_rank(size_t n);

#endif

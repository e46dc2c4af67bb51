/* shim: what the LD_PRELOAD shim costs an unmodified program.  Each pattern
 * is a run of hwsync-shim-patterns (bench/shim_patterns.c: plain pthread,
 * semaphore and OpenMP calls), started as a child process natively and with
 * libhwsync-preload.so preloaded, one after the other in every round; the
 * shim rows carry the ratio to the native run of the same round, so drift of
 * a shared machine cancels out of the ratio.  CPU time comes from wait4()'s
 * rusage of the child; the child reports its peak RSS itself (VmHWM: Linux
 * carries our own resident set into ru_maxrss across the exec). */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <hwsync/hwsync.h>
#include "bench/child.h"
#include "bench/harness.h"

#ifndef HWS_LIBDIR
#define HWS_LIBDIR "/usr/local/lib"
#endif
#ifndef HWS_LIBEXECDIR
#define HWS_LIBEXECDIR "/usr/local/libexec"
#endif
#define PRELOAD_NAME "libhwsync-preload.so"
#define PATTERNS_NAME "hwsync-shim-patterns"
#define IMPL_PREFIX "hwsync-shim-"
#define PROFILE_KIND "profile"   /* hwsync-shim-profile: auto with HWSYNC_PROFILE */

enum pkind { K_RATE, K_START, K_CHURN };
enum pthreads {
	T_ONE,          /* one thread */
	T_TWO,          /* two threads, per placement */
	T_OPT,          /* each --threads count, per placement */
	T_OVERSUB,      /* per_cpu unpinned threads per usable CPU */
};
enum {
	F_LATENCY = 1,  /* the child reports a wake latency */
	F_FAIR = 2,     /* ... the fairness of its threads */
	F_P99 = 4,      /* ... the 99th percentile of its sampled lock waits */
	F_PAIRED = 8,   /* ... the native entry points' speed in the same process */
};

static const struct pattern {
	const char *name;
	enum pkind kind;
	enum pthreads th;
	unsigned flags;
	unsigned per_cpu;       /* T_OVERSUB: threads per usable CPU (0 = 4) */
} patterns[] = {
	{ "mutex", K_RATE, T_ONE, 0, 0 },
	{ "spin", K_RATE, T_ONE, 0, 0 },
	{ "sem", K_RATE, T_ONE, 0, 0 },
	{ "omp-lock", K_RATE, T_ONE, 0, 0 },
	{ "mutex-contended", K_RATE, T_OPT, F_FAIR | F_P99, 0 },
	{ "mutex-private", K_RATE, T_OPT, F_FAIR, 0 },
	{ "sem-pingpong", K_RATE, T_TWO, 0, 0 },
	{ "rwlock-read99", K_RATE, T_TWO, F_FAIR, 0 },
	{ "omp-lock-contended", K_RATE, T_OPT, F_P99, 0 },
	{ "omp-critical", K_RATE, T_OPT, F_P99, 0 },
	{ "omp-barrier", K_RATE, T_OPT, 0, 0 },
	{ "omp-parallel", K_RATE, T_OPT, 0, 0 },
	{ "omp-parallel-for", K_RATE, T_OPT, 0, 0 },
	{ "omp-for-dynamic", K_RATE, T_OPT, 0, 0 },
	{ "omp-sections", K_RATE, T_OPT, 0, 0 },
	{ "omp-ordered", K_RATE, T_OPT, 0, 0 },
	{ "mutex-yield", K_RATE, T_OVERSUB, F_FAIR | F_P99, 0 },
	{ "spin-contended", K_RATE, T_OPT, F_FAIR | F_P99, 0 },
	{ "spin-oversub", K_RATE, T_OVERSUB, F_FAIR | F_P99, 0 },
	{ "startup", K_START, T_ONE, 0, 0 },
	{ "churn", K_CHURN, T_ONE, 0, 0 },
	{ "cond-periodic", K_RATE, T_TWO, F_LATENCY, 0 },
	{ "cond-consumer", K_RATE, T_TWO, F_LATENCY, 0 },
	{ "mutex-empty", K_RATE, T_TWO, F_FAIR | F_P99, 0 },
	{ "mutex-empty-async", K_RATE, T_TWO, F_FAIR | F_P99, 0 },
	{ "mutex-yield8-1", K_RATE, T_OVERSUB, F_FAIR | F_P99, 1 },
	{ "mutex-yield8-4", K_RATE, T_OVERSUB, F_FAIR | F_P99, 4 },
	{ "mutex-yield8-16", K_RATE, T_OVERSUB, F_FAIR | F_P99, 16 },
	{ "mutex-rt", K_RATE, T_OVERSUB, F_FAIR | F_P99, 4 },
	{ "mutex-paired", K_RATE, T_ONE, F_PAIRED, 0 },
	{ "omp-lock-paired", K_RATE, T_ONE, F_PAIRED, 0 },
	{ "cond-periodic-paired", K_RATE, T_TWO, F_PAIRED | F_LATENCY, 0 },
	{ "cond-consumer-paired", K_RATE, T_TWO, F_PAIRED | F_LATENCY, 0 },
};

static unsigned per_cpu(const struct pattern *p)
{
	return p->per_cpu ? p->per_cpu : 4;
}
#define NPATTERNS (sizeof patterns / sizeof patterns[0])

/* The native row's result of its last round, for the shim rows of the same
 * pattern and threads: they run right after it in the same round. */
struct sh_pair {
	unsigned refs;
	unsigned round;
	bool have;
	double v[7];            /* throughput or time, cpu, cpu_window, rss, latency,
				 * fairness, p99 wait */
};

struct sh_cell {
	const struct pattern *p;
	bool shim;
	unsigned round;         /* runs so far, warmup included */
	unsigned starts;        /* startup: processes per round */
	struct sh_pair *pair;
	char *argv[5];
	char name[24], amount[24], cpus[BENCH_MAX_CPUS * 5];
	char **env;             /* NULL-terminated, each string malloc'ed */
};

/* What one run of a pattern did. */
struct result {
	struct bench_child ch;                  /* wall time, wait4's CPU time */
	/* what the child printed */
	unsigned long long ops, ns, cpu_ns, rss_kib, lat_ns, p99_ns, base_ops, base_ns;
	unsigned long long base_cpu_ns, base_lat_ns;
	double fair;
	char lib[256];
};

static char preload_path[PATH_MAX], patterns_path[PATH_MAX];

/* One run of the cell's pattern; checks that it printed its one line and
 * nothing else, and that the shim was preloaded exactly on shim rows. */
static int run_once(struct sh_cell *k, uint64_t timeout_ns, struct result *out, char *why,
		    size_t whylen)
{
	char text[1024], rest[8];
	int rc = bench_child_run(k->argv, k->env, timeout_ns, &out->ch, text, sizeof text, why,
				 whylen);
	if (rc)
		return rc;
	/* one line only: a shim that falls back to the native implementation
	 * says so on stderr, and the row would then measure the wrong thing */
	size_t first = strcspn(text, "\n");
	const char *more = text + first + strspn(text + first, "\n");
	if (*more) {
		const char *other = strncmp(text, "ops=", 4) ? text : more;
		snprintf(why, whylen, "error: %s printed more than its result: %.*s", k->name,
			 (int)(strcspn(other, "\n") < 120 ? strcspn(other, "\n") : 120), other);
		return EPROTO;
	}
	text[first] = 0;
	if (sscanf(text, "ops=%llu ns=%llu cpu_ns=%llu rss_kib=%llu threads=%*u lat_ns=%llu "
		   "fair=%lf p99_ns=%llu base_ops=%llu base_ns=%llu base_cpu_ns=%llu "
		   "base_lat_ns=%llu lib=%255s%7s", &out->ops, &out->ns, &out->cpu_ns,
		   &out->rss_kib, &out->lat_ns, &out->fair, &out->p99_ns, &out->base_ops,
		   &out->base_ns, &out->base_cpu_ns, &out->base_lat_ns, out->lib, rest) != 12 ||
	    !out->rss_kib ||
	    /* a latency, fairness, p99 and native side exactly where the pattern
	     * measures them */
	    !(k->p->flags & F_LATENCY) != !out->lat_ns ||
	    !(k->p->flags & F_FAIR) != !(out->fair > 0) || !(k->p->flags & F_P99) != !out->p99_ns ||
	    !(k->p->flags & F_PAIRED) != !(out->base_ops && out->base_ns) ||
	    !((k->p->flags & F_PAIRED) && (k->p->flags & F_LATENCY)) !=
		    !(out->base_cpu_ns && out->base_lat_ns)) {
		snprintf(why, whylen, "error: %s printed '%.120s'", k->name, text);
		return EPROTO;
	}
	bool in_shim = strstr(out->lib, "hwsync-preload") != NULL;
	if (in_shim != k->shim) {
		snprintf(why, whylen, "error: %s: pthread_mutex_lock comes from %.100s %s", k->name,
			 out->lib, k->shim ? "(the shim did not load)" : "(the shim is preloaded)");
		return EPROTO;
	}
	return 0;
}

/* ---- cells -------------------------------------------------------------- */
static void sample_all(struct bench_cell *c, const struct sh_cell *k, const double v[7])
{
	if (k->p->kind == K_RATE)
		bench_sample_value(c, "throughput", "Mops/s", v[0]);
	else
		bench_sample_cycles(c, "time", hws_ns_to_tsc((uint64_t)v[0]));
	bench_sample_value(c, "cpu", "s", v[1]);
	if (k->p->kind != K_START)
		bench_sample_value(c, "cpu_window", "s", v[2]);
	bench_sample_value(c, "rss", "MiB", v[3]);
	if (k->p->flags & F_LATENCY)
		bench_sample_value(c, "wake_latency", "us", v[4]);
	if (k->p->flags & F_FAIR)
		bench_sample_value(c, "fairness", "slowest/fastest", v[5]);
	if (k->p->flags & F_P99)
		bench_sample_value(c, "wait_p99", "us", v[6]);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static int sh_run(struct bench_ctx *ctx, struct bench_cell *c)
{
	struct sh_cell *k = c->priv;
	uint64_t dur = bench_opts(ctx)->duration_ns;
	unsigned round = k->round++;
	struct result ch;
	double v[7] = { 0 };
	int rc;

	if (k->p->kind == K_START) {
		/* many short processes: the per-process time is their median */
		uint64_t *wall = calloc(k->starts, sizeof *wall);
		double cpu = 0, *rss = calloc(k->starts, sizeof *rss);
		if (!wall || !rss) {
			free(wall);
			free(rss);
			snprintf(c->skip, sizeof c->skip, "error: out of memory");
			return ENOMEM;
		}
		rc = 0;
		for (unsigned i = 0; i < k->starts && !rc; i++) {
			rc = run_once(k, 10000000000ull, &ch, c->skip, sizeof c->skip);
			wall[i] = ch.ch.wall_ns;
			cpu += ch.ch.cpu_s;
			rss[i] = (double)ch.rss_kib / 1024.0;
		}
		if (!rc) {
			qsort(wall, k->starts, sizeof *wall, cmp_u64);
			struct bench_summary s;
			bench_summarize(rss, k->starts, &s);
			v[0] = (double)wall[k->starts / 2];
			v[1] = cpu / k->starts;
			v[2] = 0;
			v[3] = s.median;
		}
		free(wall);
		free(rss);
		if (rc)
			return rc;
	} else {
		if ((rc = run_once(k, 20000000000ull + 10 * dur, &ch, c->skip, sizeof c->skip)))
			return rc;
		if (!ch.ns || !ch.ops) {
			snprintf(c->skip, sizeof c->skip, "error: %s measured nothing", k->name);
			return EPROTO;
		}
		v[0] = k->p->kind == K_RATE ? (double)ch.ops / (double)ch.ns * 1e3 : (double)ch.ns;
		v[1] = ch.ch.cpu_s;
		v[2] = (double)ch.cpu_ns / 1e9;
		v[3] = (double)ch.rss_kib / 1024.0;
		v[4] = (double)ch.lat_ns / 1e3;
		v[5] = ch.fair;
		v[6] = (double)ch.p99_ns / 1e3;
	}
	sample_all(c, k, v);
	if (k->p->flags & F_PAIRED)
		/* the linked entry points over the native ones in this run: about
		 * 1 on a native row (the method's noise), the shim's on a shim row */
		bench_sample_value(c, "paired_ratio", "linked/native",
				   ((double)ch.ops / (double)ch.ns) /
					   ((double)ch.base_ops / (double)ch.base_ns));
	if ((k->p->flags & F_PAIRED) && (k->p->flags & F_LATENCY)) {
		/* the sleeping consumers: CPU time a second of turns, and the
		 * median latency, linked over native, from the same run */
		bench_sample_value(c, "paired_cpu_ratio", "linked/native",
				   ((double)ch.cpu_ns / (double)ch.ns) /
					   ((double)ch.base_cpu_ns / (double)ch.base_ns));
		bench_sample_value(c, "paired_latency_ratio", "linked/native",
				   (double)ch.lat_ns / (double)ch.base_lat_ns);
	}
	if (!k->shim) {
		k->pair->round = round;
		k->pair->have = true;
		memcpy(k->pair->v, v, sizeof v);
	} else if (k->pair->have && k->pair->round == round) {
		const double *nv = k->pair->v;
		bench_sample_value(c, k->p->kind == K_RATE ? "throughput_ratio" : "time_ratio",
				   "shim/native", v[0] / nv[0]);
		if (nv[1] > 0)
			bench_sample_value(c, "cpu_ratio", "shim/native", v[1] / nv[1]);
		if (nv[2] > 0)
			bench_sample_value(c, "cpu_window_ratio", "shim/native", v[2] / nv[2]);
		bench_sample_value(c, "rss_ratio", "shim/native", v[3] / nv[3]);
		if ((k->p->flags & F_LATENCY) && nv[4] > 0)
			bench_sample_value(c, "latency_ratio", "shim/native", v[4] / nv[4]);
		if (k->p->flags & F_FAIR)
			bench_sample_value(c, "fairness_delta", "shim-native", v[5] - nv[5]);
		if ((k->p->flags & F_P99) && nv[6] > 0)
			bench_sample_value(c, "p99_ratio", "shim/native", v[6] / nv[6]);
		if (k->p->kind == K_START)
			bench_sample_value(c, "added", "us", (v[0] - nv[0]) / 1e3);
	}
	return 0;
}

static void sh_cleanup(struct bench_cell *c)
{
	struct sh_cell *k = c->priv;
	if (!k)
		return;
	if (k->pair && !--k->pair->refs)
		free(k->pair);
	bench_env_free(k->env);
	free(k);
	c->priv = NULL;
}

struct sh_setup {
	const char *kinds[BENCH_MAX_LIST];
	unsigned nkinds;
	bool native;
	unsigned starts;
	unsigned long long churn;
};

static int add_cell(struct bench_ctx *ctx, const struct sh_setup *s, const struct pattern *p,
		    unsigned n, const int *cpus, const char *placement, struct sh_pair *pair,
		    const char *kind, const char *policy)
{
	char impl[64] = "native";
	if (kind)
		snprintf(impl, sizeof impl, IMPL_PREFIX "%s", kind);
	struct bench_cell *c = bench_cell_new_priv(ctx, impl, policy, sizeof(struct sh_cell));
	if (!c)
		return bench_error("out of memory");
	struct sh_cell *k = c->priv;
	c->nthreads = n;
	memcpy(c->cpus, cpus, n * sizeof *cpus);
	bench_param(c, "pattern", "%s", p->name);
	if (placement)
		bench_param(c, "placement", "%s", placement);
	k->p = p;
	k->shim = kind != NULL;
	k->pair = pair;
	pair->refs++;
	k->starts = s->starts;
	snprintf(k->name, sizeof k->name, "%s", p->name);
	if (p->kind == K_CHURN)
		snprintf(k->amount, sizeof k->amount, "%llu", s->churn);
	else
		snprintf(k->amount, sizeof k->amount, "%llu",
			 (unsigned long long)bench_opts(ctx)->duration_ns);
	/* the distinct CPUs for the T_OVERSUB patterns (per_cpu a CPU), else one a
	 * thread */
	size_t len = 0;
	unsigned ncpu = p->th == T_OVERSUB ? n / per_cpu(p) : n;
	for (unsigned i = 0; i < ncpu; i++)
		len += (size_t)snprintf(k->cpus + len, sizeof k->cpus - len, "%s%d", i ? "," : "",
					cpus[i]);
	k->argv[0] = patterns_path;
	k->argv[1] = k->name;
	k->argv[2] = k->amount;
	k->argv[3] = k->cpus;
	/* our environment without HWSYNC_* (the row says what runs); LD_PRELOAD:
	 * the shim first on shim rows, then the user's other preloads */
	char lock[80], wait[120];
	bool profile = kind && !strcmp(kind, PROFILE_KIND);
	snprintf(lock, sizeof lock, "HWSYNC_LOCK=%s", profile ? "auto" : kind ? kind : "");
	snprintf(wait, sizeof wait, "HWSYNC_WAIT=%s", policy ? policy : "");
	/* the profile row: the table nowhere (a row prints its result only) */
	const char *set[] = { lock, wait, profile ? "HWSYNC_PROFILE=/dev/null" : NULL,
			      "HWSYNC_PROFILE_TOP=0", NULL };
	k->env = bench_env_new("HWSYNC_", kind ? preload_path : NULL, PRELOAD_NAME,
			       kind ? set : NULL);
	if (!k->env)
		return bench_error("out of memory");
	return 0;
}

/* A native row and, after it, one shim row per lock kind x wait policy. */
static int add_group(struct bench_ctx *ctx, const struct sh_setup *s, const struct pattern *p,
		     unsigned n, const int *cpus, const char *placement)
{
	struct sh_pair *pair = calloc(1, sizeof *pair);
	int rc = 0;
	if (!pair)
		return bench_error("out of memory");
	pair->refs = 1;
	if (s->native)
		rc = add_cell(ctx, s, p, n, cpus, placement, pair, NULL, NULL);
	for (unsigned i = 0; i < s->nkinds && !rc; i++)
		for (unsigned j = 0; j < bench_policy_count(ctx) && !rc; j++) {
			const char *why, *pol = bench_policy(ctx, j, &why);
			if (!why)
				rc = add_cell(ctx, s, p, n, cpus, placement, pair, s->kinds[i], pol);
		}
	if (!--pair->refs)
		free(pair);
	return rc;
}

/* The CPUs this process may use (or --cpus), at most max: the first CPUs of
 * the affinity mask, as many as hws_usable_cpus counts (a cgroup's CPU
 * bandwidth caps them). */
static unsigned usable_cpus(struct bench_ctx *ctx, int *cpus, unsigned max)
{
	const struct bench_opts *o = bench_opts(ctx);
	unsigned n = 0;
	if (o->ncpus) {
		for (unsigned i = 0; i < o->ncpus && n < max; i++) {
			bool dup = false;
			for (unsigned j = 0; j < n; j++)
				dup |= cpus[j] == o->cpus[i];
			if (!dup)
				cpus[n++] = o->cpus[i];
		}
		return n;
	}
	cpu_set_t set;
	if (sched_getaffinity(0, sizeof set, &set))
		return 0;
	if (hws_usable_cpus() < max)
		max = hws_usable_cpus();
	for (int c = 0; c < CPU_SETSIZE && n < max; c++)
		if (CPU_ISSET(c, &set))
			cpus[n++] = c;
	return n;
}

static int add_pattern(struct bench_ctx *ctx, const struct sh_setup *s, const struct pattern *p)
{
	const struct bench_list *pl = bench_placements(ctx);
	int cpus[BENCH_MAX_CPUS];
	const char *why = NULL;
	unsigned nth, two = 2;
	const unsigned *th = bench_threads(ctx, &nth);

	if (p->th == T_OVERSUB) {
		int base[BENCH_MAX_CPUS];
		unsigned per = per_cpu(p), m = usable_cpus(ctx, base, BENCH_MAX_CPUS / per);
		if (!m) {
			bench_skip(ctx, "no usable CPU", "pattern=%s", p->name);
			return 0;
		}
		for (unsigned i = 0; i < per * m; i++)
			cpus[i] = base[i % m];
		return add_group(ctx, s, p, per * m, cpus, NULL);
	}
	if (p->th == T_ONE) {   /* where one thread goes does not depend on the placement */
		for (unsigned i = 0; i < pl->n; i++)
			if (!bench_place(ctx, pl->v[i], 1, cpus, &why))
				return add_group(ctx, s, p, 1, cpus, NULL);
		bench_skip(ctx, why ? why : "no placement", "pattern=%s", p->name);
		return 0;
	}
	if (p->th == T_TWO) {
		th = &two;
		nth = 1;
	}
	for (unsigned i = 0; i < pl->n; i++)
		for (unsigned t = 0; t < nth; t++) {
			int rc = bench_place(ctx, pl->v[i], th[t], cpus, &why);
			if (rc) {
				bench_skip(ctx, why, "pattern=%s threads=%u placement=%s", p->name,
					   th[t], pl->v[i]);
				continue;
			}
			if ((rc = add_group(ctx, s, p, th[t], cpus, pl->v[i])))
				return rc;
		}
	return 0;
}

static int sh_setup(struct bench_ctx *ctx)
{
	const struct bench_opts *o = bench_opts(ctx);
	struct sh_setup s = { .native = bench_impl_on(ctx, "native") };
	char avail[NPATTERNS][200] = { { 0 } }, why[200];
	bool want[NPATTERNS];
	char *end;

	/* options first: a bad one is an error even where nothing would run */
	unsigned long v = strtoul(bench_xopt(ctx, "starts"), &end, 10);
	if (*end || !v || v > 100000)
		return bench_error("shim: bad --starts '%s' (processes per round, 1-100000)",
				   bench_xopt(ctx, "starts"));
	s.starts = (unsigned)v;
	s.churn = strtoull(bench_xopt(ctx, "churn"), &end, 10);
	if (*end || !s.churn || s.churn > 100000000)
		return bench_error("shim: bad --churn '%s' (objects of each kind, 1-100000000)",
				   bench_xopt(ctx, "churn"));
	const char *pat = bench_xopt(ctx, "patterns");
	memset(want, !strcmp(pat, "all"), sizeof want);
	for (const char *q = pat; strcmp(pat, "all") && *q;) {
		size_t len = strcspn(q, ","), i;
		for (i = 0; i < NPATTERNS; i++)
			if (strlen(patterns[i].name) == len && !strncmp(patterns[i].name, q, len))
				break;
		if (i == NPATTERNS) {
			char known[300] = "";
			for (size_t j = 0; j < NPATTERNS; j++)
				snprintf(known + strlen(known), sizeof known - strlen(known), "%s%s",
					 j ? ", " : "", patterns[j].name);
			return bench_error("shim: unknown pattern '%.*s' in --patterns (known: %s)",
					   (int)len, q, known);
		}
		want[i] = true;
		q += len + (q[len] == ',');
	}
	/* shim rows: the kinds --impls names, else the shim's default kind */
	for (unsigned i = 0; i < o->impls.n && s.nkinds < BENCH_MAX_LIST; i++)
		if (!strncmp(o->impls.v[i], IMPL_PREFIX, strlen(IMPL_PREFIX)))
			s.kinds[s.nkinds++] = o->impls.v[i] + strlen(IMPL_PREFIX);
	if (!o->impls.n)
		s.kinds[s.nkinds++] = "auto";
	for (unsigned j = 0; j < bench_policy_count(ctx) && s.nkinds; j++) {
		const char *w, *pol = bench_policy(ctx, j, &w);
		if (w)
			bench_skip(ctx, w, IMPL_PREFIX "* %s", pol);
	}

	if (bench_find_beside(PRELOAD_NAME, HWS_LIBDIR, preload_path, sizeof preload_path)) {
		bench_skip(ctx, PRELOAD_NAME " not found next to hwsync nor in " HWS_LIBDIR,
			   "every pattern");
		return 0;
	}
	if (bench_find_beside(PATTERNS_NAME, HWS_LIBEXECDIR "/hwsync", patterns_path,
			sizeof patterns_path)) {
		bench_skip(ctx, PATTERNS_NAME " not found next to hwsync nor in " HWS_LIBEXECDIR
			   "/hwsync", "every pattern");
		return 0;
	}
	/* which patterns this build of the program has (OpenMP or not) */
	char *argv[] = { patterns_path, "list", NULL }, text[4096];
	char **env = bench_env_new("HWSYNC_", NULL, PRELOAD_NAME, NULL);
	struct bench_child ch;
	if (!env)
		return bench_error("out of memory");
	int rc = bench_child_run(argv, env, 10000000000ull, &ch, text, sizeof text, why,
				 sizeof why);
	bench_env_free(env);
	if (rc) {
		bench_skip(ctx, why, "every pattern");
		return 0;
	}
	for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
		char *sp = strchr(line, ' ');
		if (!sp)
			continue;
		*sp = 0;
		for (size_t i = 0; i < NPATTERNS; i++)
			if (!strcmp(patterns[i].name, line))
				snprintf(avail[i], sizeof avail[i], "%s", sp + 1);
	}
	for (size_t i = 0; i < NPATTERNS; i++) {
		if (!want[i])
			continue;
		if (strcmp(avail[i], "ok")) {
			bench_skip(ctx, !avail[i][0] ? "not in this " PATTERNS_NAME :
				   !strncmp(avail[i], "skipped: ", 9) ? avail[i] + 9 : avail[i],
				   "pattern=%s", patterns[i].name);
			continue;
		}
		const char *rt_why;
		if (!strcmp(patterns[i].name, "mutex-rt") && !hws_realtime_permitted(&rt_why)) {
			bench_skip(ctx, rt_why, "pattern=%s", patterns[i].name);
			continue;
		}
		if ((rc = add_pattern(ctx, &s, &patterns[i])))
			return rc;
	}
	return 0;
}

static const struct bench_xopt sh_xopts[] = {
	{ "patterns", "all", NULL,
	  "comma list of the patterns to run (see above), or all" },
	{ "starts", "200", "40", "startup: processes started per row and round" },
	{ "churn", "300000", "100000", "churn: mutexes, condition variables and semaphores, each" },
	{ NULL, NULL, NULL, NULL },
};

/* --impls: native and hwsync-shim-KIND for every lock kind of this build;
 * filled in at start-up from hws_lock_kinds(). */
static char sh_impls[BENCH_IMPLS_LEN] = "native";

static struct bench_exp shim_exp = {
	.name = "shim",
	.title = "the LD_PRELOAD shim vs native: throughput, CPU time, memory",
	.reproduces = "docs/results/archive/shim-script.md (shim / native ratios)",
	.help =
"    Standard synchronization patterns, each a run of the program\n"
"    hwsync-shim-patterns (plain pthread, semaphore and GNU OpenMP calls; it does\n"
"    not link hwsync), started as a child process natively and with\n"
"    libhwsync-preload.so in LD_PRELOAD, as `hwsync run` would.  In every round\n"
"    each pattern runs natively and then once per shim configuration (native,\n"
"    shim, native, shim, ...), so the shim rows carry the ratio to the native run\n"
"    of the same round and drift of a shared machine cancels out of it.  Both\n"
"    libraries are found next to hwsync, else in the installed directories;\n"
"    without the shim the whole experiment is skipped with the reason.\n"
"\n"
"    Children inherit the environment except HWSYNC_* (a shim row sets\n"
"    HWSYNC_LOCK to its kind and HWSYNC_WAIT to its policy) and LD_PRELOAD (the\n"
"    shim comes first on shim rows; other preloads are kept on all rows).  A\n"
"    child restricts itself to the row's CPUs and pins thread i to the i-th.\n"
"    Each child reports which object provides pthread_mutex_lock: a shim row\n"
"    where the shim did not load, a native row where it did, or any output\n"
"    besides the result (a shim that falls back to native says so on stderr)\n"
"    is an error, never a row.\n"
"\n"
"    Patterns (run for --duration unless said otherwise):\n"
"    mutex               one thread: pthread_mutex_lock + unlock\n"
"    spin                one thread: pthread_spin_lock + unlock\n"
"    sem                 one thread: sem_post + sem_wait\n"
"    omp-lock            one thread: omp_set_lock + omp_unset_lock\n"
"    mutex-contended     T threads (--threads) on one mutex, empty critical\n"
"                        section\n"
"    mutex-private       T threads, each its own mutex (one cache line each)\n"
"    sem-pingpong        two threads, two semaphores: post one, wait the other;\n"
"                        an operation is a round trip\n"
"    rwlock-read99       two threads on one default pthread rwlock: 99 read locks\n"
"                        (a load) for each write lock (an increment; the count\n"
"                        is checked); HWSYNC_RWLOCK's default, reader\n"
"    omp-lock-contended  T threads of an OpenMP team, one omp lock around one\n"
"                        increment (the count is checked)\n"
"    omp-critical        the same with an unnamed #pragma omp critical\n"
"    omp-barrier         T threads, back-to-back #pragma omp barrier; an\n"
"                        operation is a barrier episode\n"
"    omp-parallel        EPCC-style overheads [EPCC], T pinned threads, empty\n"
"                        bodies, an operation is one construct: #pragma omp\n"
"                        parallel (a fork and a join, libgomp's)\n"
"    omp-parallel-for    #pragma omp parallel for schedule(static), one\n"
"                        iteration a thread (fork and join only)\n"
"    omp-for-dynamic     in one region, #pragma omp for schedule(dynamic, 1),\n"
"                        four iterations a thread, and its end barrier\n"
"    omp-sections        in one region, four sections and their end barrier\n"
"    omp-ordered         in one region, #pragma omp for ordered\n"
"                        schedule(static, 1), one ordered iteration a thread,\n"
"                        and its end barrier\n"
"    mutex-yield         a mutex held across sched_yield() by four threads per\n"
"                        usable CPU (the CPU affinity mask capped by the cgroup's\n"
"                        CPU bandwidth, or --cpus), unpinned: a waiter that spins\n"
"                        takes the CPU the holder needs\n"
"    spin-contended      T threads on one pthread spin lock around one increment\n"
"                        (the count is checked)\n"
"    spin-oversub        the same with four threads per usable CPU, unpinned: a\n"
"                        holder may be preempted while waiters spin\n"
"    startup             --starts processes per round, one after the other, that\n"
"                        take one uncontended mutex and exit: from posix_spawn to\n"
"                        the end of wait4\n"
"    churn               --churn mutexes, condition variables and semaphores\n"
"                        initialised, used once (lock, signal, unlock, broadcast,\n"
"                        post, wait) and never destroyed; the memory is freed at\n"
"                        exit without a destroy\n"
"    cond-periodic       two threads: one changes a predicate and signals a\n"
"                        condition variable under its mutex every 200 us, the\n"
"                        other waits for it; an operation is a wake-up, about\n"
"                        5000 per second of --duration.  Each wait outlasts any\n"
"                        spin budget: the CPU ratios show what waiting costs\n"
"    cond-consumer       a sleeping consumer: the producer sleeps 200 us\n"
"                        (nanosleep, relative), then locks, adds an item,\n"
"                        signals and unlocks; the consumer loops `lock; while\n"
"                        (!items) cond_wait; take; unlock`.  The producer pays\n"
"                        for its lock and signal too, and cpu_window counts both\n"
"    mutex-empty         two pinned threads: lock, unlock, and a per-thread\n"
"                        count outside the lock\n"
"    mutex-empty-async   the same, with each worker in asynchronous cancellation\n"
"                        (PTHREAD_CANCEL_ASYNCHRONOUS) for the whole run\n"
"    mutex-yield8-N      eight mutexes; N unpinned threads per usable CPU (N = 1,\n"
"                        4, 16) each lock one at random, sched_yield(), unlock\n"
"                        (the shape of sysbench's threads test)\n"
"    mutex-rt            four unpinned threads per usable CPU, in each of two\n"
"                        processes at once: set a random SCHED_FIFO priority\n"
"                        (1-20), lock the process's one mutex, drop to\n"
"                        SCHED_OTHER, sched_yield(), unlock.  RLIMIT_RTTIME (1 s)\n"
"                        ends a thread that runs real-time that long without\n"
"                        sleeping; skipped where SCHED_FIFO is not permitted\n"
"                        (the shape of stress-ng's mutex stressor)\n"
"    mutex-paired,       one thread: the mutex and omp-lock patterns through the\n"
"    omp-lock-paired     entry points the program links (the shim's on shim\n"
"                        rows) and through the C library's or libgomp's own (found\n"
"                        with dlopen and dlsym), in alternated turns of 200000\n"
"                        pairs in one process: runs of separate processes differ\n"
"                        by 5-10% on a virtual machine, turns in one process\n"
"                        compare the two paths within about 1% (paired_ratio)\n"
"    cond-periodic-paired, cond-periodic and cond-consumer in alternated turns of\n"
"    cond-consumer-paired  25 periods (5 ms), each side with its own mutex and\n"
"                        condition variable: the linked entry points and the C\n"
"                        library's own.  A wake-up's latency on a virtual machine\n"
"                        is mostly the host waking an idle CPU, and it drifts by\n"
"                        10-30% between runs; turns in one process see the same\n"
"                        host (paired_latency_ratio, paired_cpu_ratio)"
"    The OpenMP patterns are skipped when hwsync-shim-patterns was built without\n"
"    OpenMP (GNU libgomp only: the shim serves libgomp's entry points).\n"
"\n"
"    Rows: pattern x threads x placement (multi-threaded pinned patterns only)\n"
"    x implementation; hwsync-shim-KIND rows once per wait policy.\n"
"\n"
"    native            the program as built: glibc and libgomp\n"
"    hwsync-shim-KIND  LD_PRELOAD=libhwsync-preload.so HWSYNC_LOCK=KIND\n"
"                      HWSYNC_WAIT=<policy>, for every lock kind of `hwsync\n"
"                      info` (IMPLEMENTATIONS below).  Default: hwsync-shim-auto\n"
"                      with policy adaptive (the shim's own defaults) beside\n"
"                      native; name kinds with --impls, policies with --policies\n"
"    hwsync-shim-profile the shim's defaults (auto) with the contention profile\n"
"                      on (HWSYNC_PROFILE to /dev/null, no table): beside\n"
"                      hwsync-shim-auto, what the profile costs\n"
"\n"
"    Common options: --duration is each child's run time (startup and churn\n"
"    take --starts and --churn instead); --threads the thread counts T above;\n"
"    --placement or --cpus where the pinned threads run.\n"
"\n"
"    Not part of `hwsync bench suite`: even --quick starts hundreds of\n"
"    processes, each paying the shim's start-up, which would lengthen the suite\n"
"    by far more than a few seconds; run it by name.  --quick takes well under\n"
"    a minute, the defaults a few minutes, most of it in startup and churn\n"
"    under the shim.\n"
"\n"
"METRICS\n"
"    throughput        operations per second over the child's measured window\n"
"                      (Mops/s); all but startup and churn\n"
"    time              startup: the median per-process time of a round;\n"
"                      churn: the time to create and use all objects\n"
"    cpu               user + system CPU seconds of the child, start-up and exit\n"
"                      included (wait4 rusage); for startup, the mean per process\n"
"    cpu_window        CPU seconds of the child's threads within the measured\n"
"                      window only (CLOCK_PROCESS_CPUTIME_ID): what spinning or\n"
"                      sleeping waiters burn, without the shim's start-up\n"
"    rss               peak resident set of the child (MiB), VmHWM as the child\n"
"                      reports it at exit; not wait4's ru_maxrss, which on Linux\n"
"                      includes the spawning process's resident set before exec\n"
"    throughput_ratio, time_ratio, cpu_ratio, cpu_window_ratio, rss_ratio\n"
"                      shim rows: shim / native of the same round, one sample per\n"
"                      round (throughput_ratio above 1 = the shim is faster,\n"
"                      time, cpu and rss ratios above 1 = it costs more); absent\n"
"                      when --impls leaves out native\n"
"    wake_latency      cond-periodic, cond-consumer: median time from the\n"
"                      signal to the consumer holding the mutex again (us)\n"
"    latency_ratio     cond-periodic, cond-consumer, shim rows: wake_latency\n"
"                      shim / native of the same round\n"
"    fairness          patterns whose threads all do the same work: the slowest\n"
"                      thread's operations over the fastest's (1 = even)\n"
"    fairness_delta    shim rows: fairness shim minus native of the same round\n"
"    wait_p99          patterns whose threads share one lock (the contended,\n"
"                      empty, yielding, real-time, spin and OpenMP lock and\n"
"                      critical patterns): 99th percentile of the sampled lock\n"
"                      waits (one acquisition in 64, or in 4 for the yielding\n"
"                      patterns, timed with two clock reads), us\n"
"    p99_ratio         shim rows: wait_p99 shim / native of the same round\n"
"    added             startup, shim rows: per-process time added by the shim\n"
"                      (us), shim minus native of the same round\n"
"    paired_ratio      *-paired: the linked entry points' throughput over the\n"
"                      native ones' in the same run (shim rows: the shim's over\n"
"                      glibc's or libgomp's; native rows: about 1, the method's\n"
"                      own noise)\n"
"    paired_cpu_ratio, paired_latency_ratio\n"
"                      cond-*-paired: the process's CPU time a second over the\n"
"                      linked side's turns, and the linked side's median wake\n"
"                      latency, over the native side's in the same run;\n"
"                      cpu_window and wake_latency are the linked side's\n",
	.impls = sh_impls,
	.uses_policies = true,
	.def_policies = "adaptive",
	.def_threads = "2",
	.def_placements = "core",
	.xopts = sh_xopts,
	.rank = 100,
	.not_in_suite = true,
	.setup = sh_setup,
	.run = sh_run,
	.cleanup = sh_cleanup,
};

__attribute__((constructor)) static void sh_list_impls(void)
{
	static const char *const profile[] = { PROFILE_KIND, NULL };
	bench_impls_append(sh_impls, sizeof sh_impls, NULL, IMPL_PREFIX, hws_lock_kinds());
	bench_impls_append(sh_impls, sizeof sh_impls, NULL, IMPL_PREFIX, profile);
}
BENCH_REGISTER(shim_exp)

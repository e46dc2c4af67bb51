/* Harness services for the experiments: registry, option access, placement,
 * cells and samples, pinned threads, the matrix-multiply job, progress. */
#define _GNU_SOURCE
#include <errno.h>
#include <glob.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <hwsync/hwsync.h>
#include "bench/internal.h"
#if HWS_HAVE_OPENMP
#include <omp.h>
#endif

/* ---- registry ----------------------------------------------------------- */
static const struct bench_exp *registry[32];
static unsigned nregistry;

void bench_register(const struct bench_exp *e)
{
	if (nregistry < sizeof registry / sizeof registry[0])
		registry[nregistry++] = e;
}

static int by_rank(const void *a, const void *b)
{
	const struct bench_exp *x = *(const struct bench_exp *const *)a;
	const struct bench_exp *y = *(const struct bench_exp *const *)b;
	return x->rank != y->rank ? (x->rank > y->rank) - (x->rank < y->rank)
				  : strcmp(x->name, y->name);
}

const struct bench_exp *const *bench_experiments(unsigned *n)
{
	qsort(registry, nregistry, sizeof registry[0], by_rank);
	*n = nregistry;
	return registry;
}

const struct bench_exp *bench_find(const char *name)
{
	for (unsigned i = 0; i < nregistry; i++)
		if (!strcmp(registry[i]->name, name))
			return registry[i];
	return NULL;
}

/* ---- options ------------------------------------------------------------ */
const struct bench_opts *bench_opts(const struct bench_ctx *ctx) { return ctx->o; }
const struct bench_exp *bench_exp_of(const struct bench_ctx *ctx) { return ctx->exp; }

const char *bench_xopt(const struct bench_ctx *ctx, const char *name)
{
	const struct bench_xopt *x = ctx->exp->xopts;
	for (unsigned i = 0; x && x[i].name; i++) {
		if (strcmp(x[i].name, name))
			continue;
		if (ctx->o->xval[i])
			return ctx->o->xval[i];
		return ctx->o->quick && x[i].quick ? x[i].quick : x[i].def;
	}
	return NULL;
}

int bench_error(const char *fmt, ...)
{
	va_list ap;
	fputs("hwsync bench: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return 2;
}

/* "1,2,4-6"; the letter N stands for the number of CPUs we may run on: the
 * affinity mask capped by the cgroups' CPU bandwidth (hws_usable_cpus), so
 * that N threads of a container given 2 CPUs of a large machine run at once. */
int bench_parse_ulist(const char *s, unsigned *v, unsigned max, unsigned *n)
{
	*n = 0;
	while (*s) {
		char *end;
		unsigned long a, b;
		if (*s == 'N') {
			a = hws_usable_cpus();
			end = (char *)s + 1;
		} else {
			if (*s < '0' || *s > '9')
				return EINVAL;
			a = strtoul(s, &end, 10);
		}
		b = a;
		if (*end == '-') {
			if (end[1] == 'N') {
				b = hws_usable_cpus();
				end += 2;
			} else if (end[1] >= '0' && end[1] <= '9') {
				b = strtoul(end + 1, &end, 10);
			} else {
				return EINVAL;
			}
		}
		if (b < a || b - a > 4096)
			return EINVAL;
		for (unsigned long x = a; x <= b; x++) {
			bool dup = false;
			for (unsigned i = 0; i < *n; i++)
				dup |= v[i] == x;
			if (dup)
				continue;
			if (*n >= max)
				return EINVAL;
			v[(*n)++] = (unsigned)x;
		}
		if (*end == ',')
			end++;
		else if (*end)
			return EINVAL;
		s = end;
	}
	return *n ? 0 : EINVAL;
}

bool bench_impl_on(const struct bench_ctx *ctx, const char *impl)
{
	const struct bench_list *l = &ctx->o->impls;
	if (!l->n)
		return true;
	for (unsigned i = 0; i < l->n; i++)
		if (!strcmp(l->v[i], impl))
			return true;
	return false;
}

bool bench_in_list(const char *list, const char *name)
{
	size_t len = strlen(name);
	for (const char *p = list; *p;) {
		size_t n = strcspn(p, ",");
		if (n == len && !strncmp(p, name, n))
			return true;
		p += n + (p[n] == ',');
	}
	return false;
}

unsigned bench_distinct_cpus(const int *cpus, unsigned n)
{
	unsigned d = 0;
	for (unsigned i = 0; i < n; i++) {
		unsigned j;
		for (j = 0; j < i && cpus[j] != cpus[i]; j++)
			;
		d += j == i;
	}
	return d;
}

static void append_one(char *buf, size_t len, const char *prefix, const char *name)
{
	size_t at = strlen(buf);
	if (at < len)
		snprintf(buf + at, len - at, "%s%s%s", at ? "," : "", prefix, name);
}

void bench_impls_append(char *buf, size_t len, const char *head, const char *prefix,
			const char *const *names)
{
	if (head)
		append_one(buf, len, "", head);
	for (; names && *names; names++)
		append_one(buf, len, prefix, *names);
}

const unsigned *bench_threads(const struct bench_ctx *ctx, unsigned *n)
{
	*n = ctx->nthreads;
	return ctx->threads;
}

const struct bench_list *bench_placements(const struct bench_ctx *ctx)
{
	return &ctx->placements;
}

unsigned bench_policy_count(const struct bench_ctx *ctx)
{
	return ctx->policies.n ? ctx->policies.n : HWS_WAIT_NKINDS;
}

/* The i-th policy spec; *why_not is NULL when it can run here. */
const char *bench_policy(const struct bench_ctx *ctx, unsigned i, const char **why_not)
{
	static __thread char why[200];
	const char *spec = ctx->policies.n ? ctx->policies.v[i]
					      : hws_wait_kind_name((enum hws_wait_kind)i);
	hws_wait_t w;
	*why_not = NULL;
	if (hws_wait_init(&w, spec)) {
		snprintf(why, sizeof why, "%s", hws_last_error());
		*why_not = why;
	}
	return spec;
}

/* ---- placement ---------------------------------------------------------- */
int bench_place(const struct bench_ctx *ctx, const char *placement, unsigned n, int *cpus,
		const char **why)
{
	*why = NULL;
	if (!n) {
		*why = "zero threads";
		return EINVAL;
	}
	if (n > BENCH_MAX_CPUS) {
		*why = "too many threads";
		return ERANGE;
	}
	if (ctx->o->ncpus) {   /* --cpus: thread i on the i-th CPU, round-robin */
		for (unsigned i = 0; i < n; i++)
			cpus[i] = ctx->o->cpus[i % ctx->o->ncpus];
		return 0;
	}
	int rc = hws_topo_place(hws_topo_this(), placement, n, cpus);
	if (rc) {
		static __thread char buf[200];
		snprintf(buf, sizeof buf, "%s", hws_last_error());
		*why = buf;
	}
	return rc;
}

/* How many CPUs PLACEMENT gives at most (0 when none), and which. */
static unsigned place_most(const struct bench_ctx *ctx, const char *placement, int *cpus)
{
	const char *why;
	if (ctx->o->ncpus) {
		unsigned n = ctx->o->ncpus;
		return bench_place(ctx, placement, n, cpus, &why) ? 0 : n;
	}
	for (unsigned n = BENCH_MAX_CPUS; n > 0; n--)
		if (bench_place(ctx, placement, n, cpus, &why) == 0)
			return n;
	return 0;
}

unsigned bench_oversub_row(const struct bench_ctx *ctx, const char *placement, unsigned ov,
			   const unsigned *threads, unsigned nth, int *cpus)
{
	int base[BENCH_MAX_CPUS];
	unsigned m = ov ? place_most(ctx, placement, base) : 0;
	if (!m)
		return 0;
	unsigned n = ov * m > BENCH_MAX_CPUS ? BENCH_MAX_CPUS : ov * m;
	for (unsigned i = 0; i < n; i++)
		cpus[i] = base[i % m];
	unsigned distinct = bench_distinct_cpus(cpus, n);
	for (unsigned t = 0; t < nth; t++)
		if (threads[t] == n && distinct == m)
			return 0;
	return n > distinct ? n : 0;
}

/* ---- cells, parameters, skipped ----------------------------------------- */
static struct bench_cell *cell_append(struct bench_cell ***v, unsigned *n, unsigned *cap,
				      const char *impl, const char *policy)
{
	if (*n == *cap) {
		unsigned c = *cap ? 2 * *cap : 16;
		void *p = realloc(*v, c * sizeof **v);
		if (!p)
			return NULL;
		*v = p;
		*cap = c;
	}
	struct bench_cell *c = calloc(1, sizeof *c);
	if (!c)
		return NULL;
	snprintf(c->impl, sizeof c->impl, "%s", impl);
	snprintf(c->policy, sizeof c->policy, "%s", policy ? policy : "");
	(*v)[(*n)++] = c;
	return c;
}

struct bench_cell *bench_cell_new(struct bench_ctx *ctx, const char *impl, const char *policy)
{
	return cell_append(&ctx->cells, &ctx->ncells, &ctx->capcells, impl, policy);
}

struct bench_cell *const *bench_cells(const struct bench_ctx *ctx, unsigned *n)
{
	*n = ctx->ncells;
	return ctx->cells;
}

struct bench_cell *bench_summary_row(struct bench_ctx *ctx, const char *impl, const char *policy)
{
	struct bench_cell *c = cell_append(&ctx->summary, &ctx->nsummary, &ctx->capsummary, impl,
					   policy);
	if (c)
		c->measuring = true;   /* its samples are the summary's own */
	return c;
}

void *bench_zalloc_lines(size_t size)
{
	size = (size + HWS_CACHELINE - 1) / HWS_CACHELINE * HWS_CACHELINE;
	void *p = aligned_alloc(HWS_CACHELINE, size);
	if (p)
		memset(p, 0, size);
	return p;
}

struct bench_cell *bench_cell_new_priv(struct bench_ctx *ctx, const char *impl,
				       const char *policy, size_t size)
{
	/* the state is shared by pinned threads */
	void *priv = bench_zalloc_lines(size);
	struct bench_cell *c = priv ? bench_cell_new(ctx, impl, policy) : NULL;
	if (!c) {
		free(priv);
		return NULL;
	}
	c->priv = priv;
	return c;
}

static void param_set(struct bench_cell *c, const char *key, const char *val, bool num)
{
	unsigned i;
	for (i = 0; i < c->nparams && strcmp(c->param[i].key, key); i++)
		;
	if (i == BENCH_MAX_PARAMS)
		return;
	if (i == c->nparams)
		c->nparams++;
	snprintf(c->param[i].key, sizeof c->param[i].key, "%s", key);
	snprintf(c->param[i].val, sizeof c->param[i].val, "%s", val);
	c->param[i].num = num;
}

void bench_param(struct bench_cell *c, const char *key, const char *fmt, ...)
{
	char v[64];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(v, sizeof v, fmt, ap);
	va_end(ap);
	param_set(c, key, v, false);
}

void bench_param_num(struct bench_cell *c, const char *key, double v)
{
	char s[64];
	snprintf(s, sizeof s, "%.10g", v);
	param_set(c, key, s, true);
}

void bench_skip(struct bench_ctx *ctx, const char *reason, const char *fmt, ...)
{
	char what[160];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(what, sizeof what, fmt, ap);
	va_end(ap);
	for (unsigned i = 0; i < ctx->nskipped; i++)   /* say each thing once */
		if (!strcmp(ctx->skipped[i].what, what) && !strcmp(ctx->skipped[i].reason, reason))
			return;
	if (ctx->nskipped == ctx->capskipped) {
		unsigned cap = ctx->capskipped ? 2 * ctx->capskipped : 8;
		void *p = realloc(ctx->skipped, cap * sizeof *ctx->skipped);
		if (!p)
			return;
		ctx->skipped = p;
		ctx->capskipped = cap;
	}
	struct bench_skipped *s = &ctx->skipped[ctx->nskipped++];
	snprintf(s->what, sizeof s->what, "%s", what);
	snprintf(s->reason, sizeof s->reason, "%s", reason);
}

/* ---- samples ------------------------------------------------------------ */
static struct bench_metric *metric(struct bench_cell *c, const char *name, const char *unit,
				   bool timed)
{
	unsigned i;
	for (i = 0; i < c->nmetrics && strcmp(c->m[i].name, name); i++)
		;
	if (i == c->nmetrics) {
		if (i == BENCH_MAX_METRICS)
			return NULL;
		c->nmetrics++;
		snprintf(c->m[i].name, sizeof c->m[i].name, "%s", name);
		snprintf(c->m[i].unit, sizeof c->m[i].unit, "%s", timed ? "ns" : unit);
		c->m[i].timed = timed;
	}
	struct bench_metric *m = &c->m[i];
	if (m->n == m->cap) {
		size_t cap = m->cap ? 2 * m->cap : 256;
		double *p = realloc(m->s, cap * sizeof *p);
		if (!p)
			return NULL;
		m->s = p;
		m->cap = cap;
	}
	return m;
}

void bench_close_rep(struct bench_cell *c, const size_t *before, unsigned nbefore)
{
	for (unsigned k = 0; k < c->nmetrics; k++) {
		struct bench_metric *m = &c->m[k];
		size_t from = k < nbefore ? before[k] : 0;
		if (m->n <= from)
			continue;   /* nothing this repetition: no value for it */
		if (m->nrep == m->caprep) {
			size_t cap = m->caprep ? 2 * m->caprep : 16;
			double *p = realloc(m->rep, cap * sizeof *p);
			if (!p)
				continue;
			m->rep = p;
			m->caprep = cap;
		}
		/* sorts the repetition's samples in place: their order within a
		 * metric carries no meaning (output.c sorts them all anyway) */
		struct bench_summary s;
		bench_summarize(m->s + from, m->n - from, &s);
		m->rep[m->nrep++] = s.median;
	}
}

void bench_cell_free_samples(struct bench_cell *c)
{
	for (unsigned k = 0; k < c->nmetrics; k++) {
		free(c->m[k].s);
		free(c->m[k].rep);
	}
}

void bench_sample_cycles(struct bench_cell *c, const char *name, uint64_t cycles)
{
	struct bench_metric *m;
	if (c->measuring && (m = metric(c, name, "ns", true)))
		m->s[m->n++] = (double)cycles;
}

void bench_sample_cycles_per(struct bench_cell *c, const char *name, uint64_t cycles,
			     uint64_t count)
{
	struct bench_metric *m;
	if (c->measuring && count && (m = metric(c, name, "ns", true)))
		m->s[m->n++] = (double)cycles / (double)count;
}

void bench_sample_value(struct bench_cell *c, const char *name, const char *unit, double v)
{
	struct bench_metric *m;
	if (c->measuring && (m = metric(c, name, unit, false)))
		m->s[m->n++] = v;
}

size_t bench_sample_budget(const struct bench_ctx *ctx)
{
	size_t per = 200000 / (ctx->o->reps ? ctx->o->reps : 1);
	return per < 100 ? 100 : per;
}

uint64_t bench_tsc_overhead(void)
{
	static uint64_t overhead;
	if (!overhead) {
		uint64_t best = UINT64_MAX;
		for (int i = 0; i < 2000; i++) {
			uint64_t a = hws_tsc(), b = hws_tsc();
			if (b - a < best)
				best = b - a;
		}
		overhead = best ? best : 1;
	}
	return overhead;
}

/* ---- threads ------------------------------------------------------------ */
int bench_pin_self(int cpu)
{
	return hws_topo_pin_self(cpu);
}

struct thr_group {
	void (*fn)(void *, unsigned);
	void *arg;
	const int *cpus;
	pthread_mutex_t mu;     /* start gate: threads wait until go is set */
	pthread_cond_t cv;
	unsigned pinned;        /* threads past pinning, under mu */
	bool go;
	int err;                /* under mu */
};

struct thr_arg {
	struct thr_group *g;
	unsigned i;
};

static void *thr_main(void *p)
{
	struct thr_arg *a = p;
	struct thr_group *g = a->g;
	int rc = bench_pin_self(g->cpus[a->i]);
	pthread_mutex_lock(&g->mu);
	if (rc)
		g->err = rc;
	g->pinned++;
	pthread_cond_broadcast(&g->cv);
	while (!g->go)
		pthread_cond_wait(&g->cv, &g->mu);
	rc = g->err;
	pthread_mutex_unlock(&g->mu);
	if (!rc)
		g->fn(g->arg, a->i);
	return NULL;
}

int bench_run_threads(unsigned n, const int *cpus, void (*fn)(void *arg, unsigned i), void *arg)
{
	struct thr_group g = { .fn = fn, .arg = arg, .cpus = cpus,
			       .mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER };
	pthread_t *t = calloc(n, sizeof *t);
	struct thr_arg *a = calloc(n, sizeof *a);
	unsigned started = 0;
	int rc = 0;

	if (!t || !a) {
		free(t);
		free(a);
		return ENOMEM;
	}
	for (; started < n; started++) {
		a[started] = (struct thr_arg){ &g, started };
		rc = pthread_create(&t[started], NULL, thr_main, &a[started]);
		if (rc)
			break;
	}
	/* Every thread pins itself before waiting at the gate, so a pinning
	 * failure is known before anyone runs fn. */
	pthread_mutex_lock(&g.mu);
	while (g.pinned < started)
		pthread_cond_wait(&g.cv, &g.mu);
	if (rc)
		g.err = rc;
	g.go = true;
	pthread_cond_broadcast(&g.cv);
	pthread_mutex_unlock(&g.mu);
	for (unsigned i = 0; i < started; i++)
		pthread_join(t[i], NULL);
	free(t);
	free(a);
	return g.err;
}

int bench_omp_team(unsigned n, const int *cpus, void (*fn)(void *arg, unsigned i), void *arg)
{
#if HWS_HAVE_OPENMP
	int err = 0;
	/* GNU OpenMP keeps its pool threads; each pins itself on entry. */
#pragma omp parallel num_threads(n) shared(err)
	{
		unsigned i = (unsigned)omp_get_thread_num();
		int rc = bench_pin_self(cpus[i]);
		if (!rc && (unsigned)omp_get_num_threads() != n)
			rc = EAGAIN;   /* a smaller team than asked for */
		if (rc) {
#pragma omp atomic write
			err = rc;
		}
#pragma omp barrier
		int e;
#pragma omp atomic read
		e = err;
		if (!e)
			fn(arg, i);
	}
	return err;
#else
	(void)n, (void)cpus, (void)fn, (void)arg;
	return ENOTSUP;
#endif
}

/* ---- the fixed floating-point job -------------------------------------- */
double bench_matmul(unsigned n, unsigned units)
{
	static __thread double *buf;
	static __thread unsigned have;
	if (n > have) {
		free(buf);
		buf = malloc(3 * (size_t)n * n * sizeof *buf);
		if (!buf) {
			have = 0;
			return 0;
		}
		have = n;
		for (size_t i = 0; i < 3 * (size_t)n * n; i++)
			buf[i] = (double)(i % 7) * 0.25 + 1.0;
	}
	double *A = buf, *B = buf + (size_t)n * n, *C = buf + 2 * (size_t)n * n, sum = 0;
	for (unsigned u = 0; u < units; u++) {
		for (unsigned i = 0; i < n; i++)
			for (unsigned j = 0; j < n; j++) {
				double s = 0;
				for (unsigned k = 0; k < n; k++)
					s += A[i * n + k] * B[k * n + j];
				C[i * n + j] = s;
			}
		sum += C[(u * 7) % ((size_t)n * n)];
		A[u % ((size_t)n * n)] += 1e-9;   /* next unit differs: not hoisted */
	}
	return sum;
}

/* ---- progress ----------------------------------------------------------- */
void bench_progress(struct bench_ctx *ctx, const char *fmt, ...)
{
	uint64_t now = hws_now_ns();
	bool tty = isatty(2);
	if (now - ctx->t_start_ns < 3000000000ull ||
	    now - ctx->last_progress_ns < (tty ? 250000000ull : 10000000000ull))
		return;
	ctx->last_progress_ns = now;
	char line[160];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	fflush(stdout);
	fprintf(stderr, tty ? "\r\033[K[%s %.0fs] %s" : "[%s %.0fs] %s\n", ctx->exp->name,
		(double)(now - ctx->t_start_ns) / 1e9, line);
	ctx->progress_shown = tty;
}

/* ---- energy -------------------------------------------------------------- */
int bench_energy_available(const char **why)
{
	glob_t g;
	int found = 0;
	if (glob("/sys/class/powercap/intel-rapl*/energy_uj", 0, NULL, &g) == 0) {
		for (size_t i = 0; i < g.gl_pathc && !found; i++)
			found = access(g.gl_pathv[i], R_OK) == 0;
		globfree(&g);
	}
	if (found)
		return 0;
	*why = "no RAPL (no readable /sys/class/powercap/intel-rapl*/energy_uj)";
	return ENOTSUP;
}

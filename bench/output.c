/* Output of the harness: the table on stdout and the hwsync-bench/2 JSON
 * (docs/bench-schema.md).  Timed metrics are summarised in TSC cycles and
 * reported in ns (cycles / tsc_hz) and in cycles. */
#define _GNU_SOURCE
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/utsname.h>
#include <hwsync/hwsync.h>
#include "bench/internal.h"

static double cycles_to_ns(double c)
{
	return c * 1e9 / (double)hws_cpu()->tsc_hz;
}

/* A metric's summary, in ns for timed metrics.  The samples are sorted in
 * place (the raw export does not need their order). */
static void summarize_metric(struct bench_metric *m, struct bench_summary *s, bool ns)
{
	bench_summarize(m->s, m->n, s);
	if (!ns || !m->timed)
		return;
	double *f[] = { &s->median, &s->p5, &s->p95, &s->p99, &s->mean, &s->min, &s->max,
			&s->ci_lo, &s->ci_hi };
	for (size_t i = 0; i < sizeof f / sizeof f[0]; i++)
		*f[i] = cycles_to_ns(*f[i]);
}

/* ---- table -------------------------------------------------------------- */
static const char *time_unit(double ns, double *div)
{
	if (ns < 1e4) { *div = 1; return "ns"; }
	if (ns < 1e7) { *div = 1e3; return "us"; }
	if (ns < 1e10) { *div = 1e6; return "ms"; }
	*div = 1e9;
	return "s";
}

static void fmt_metric(struct bench_metric *m, char *buf, size_t len)
{
	struct bench_summary s;
	summarize_metric(m, &s, true);
	if (m->timed) {
		double d;
		const char *u = time_unit(s.median, &d);
		int prec = s.median / d < 100 ? 2 : s.median / d < 1000 ? 1 : 0;
		snprintf(buf, len, "%.*f%s [%.*f-%.*f]", prec, s.median / d, u, prec, s.ci_lo / d,
			 prec, s.ci_hi / d);
	} else {
		snprintf(buf, len, "%.4g [%.4g-%.4g] %s", s.median, s.ci_lo, s.ci_hi, m->unit);
	}
}

#define COLS 24
/* One table: impl, policy (when any cell has one), threads, the parameters,
 * then the metrics, each column as wide as its widest entry. */
static void print_cells(struct bench_cell *const *cells, unsigned rows, FILE *f)
{
	const char *col[COLS];
	unsigned ncol = 0, nparam, w[COLS];
	bool policy_col = false;

	col[ncol++] = "impl";
	for (unsigned i = 0; i < rows; i++)
		policy_col |= cells[i]->policy[0] != 0;
	if (policy_col)
		col[ncol++] = "policy";
	col[ncol++] = "threads";
	for (unsigned i = 0; i < rows; i++)
		for (unsigned k = 0; k < cells[i]->nparams && ncol < COLS; k++) {
			const char *key = cells[i]->param[k].key;
			unsigned j;
			for (j = 0; j < ncol && strcmp(col[j], key); j++)
				;
			if (j == ncol)
				col[ncol++] = key;
		}
	nparam = ncol;
	for (unsigned i = 0; i < rows; i++)
		for (unsigned k = 0; k < cells[i]->nmetrics && ncol < COLS; k++) {
			const char *key = cells[i]->m[k].name;
			unsigned j;
			for (j = nparam; j < ncol && strcmp(col[j], key); j++)
				;
			if (j == ncol)
				col[ncol++] = key;
		}
	/* cell text, then widths */
	char (*txt)[COLS][64] = calloc(rows ? rows : 1, sizeof *txt);
	if (!txt)
		return;
	for (unsigned c = 0; c < ncol; c++)
		w[c] = (unsigned)strlen(col[c]);
	for (unsigned r = 0; r < rows; r++) {
		struct bench_cell *cell = cells[r];
		for (unsigned c = 0; c < ncol; c++) {
			char *t = txt[r][c];
			strcpy(t, "-");
			if (!strcmp(col[c], "impl"))
				snprintf(t, 64, "%s", cell->impl);
			else if (policy_col && c == 1)
				snprintf(t, 64, "%.60s", cell->policy[0] ? cell->policy : "-");
			else if (!strcmp(col[c], "threads"))
				snprintf(t, 64, "%u", cell->nthreads);
			for (unsigned k = 0; c < nparam && c > 0 && k < cell->nparams; k++)
				if (!strcmp(cell->param[k].key, col[c]))
					snprintf(t, 64, "%.60s", cell->param[k].val);
			for (unsigned k = 0; c >= nparam && k < cell->nmetrics; k++)
				if (!strcmp(cell->m[k].name, col[c]))
					fmt_metric(&cell->m[k], t, 64);
			if (strlen(t) > w[c])
				w[c] = (unsigned)strlen(t);
		}
	}
	for (unsigned c = 0; c < ncol; c++)
		fprintf(f, "%-*s%s", (int)w[c], col[c], c + 1 < ncol ? "  " : "\n");
	for (unsigned r = 0; r < rows; r++)
		for (unsigned c = 0; c < ncol; c++)
			fprintf(f, "%-*s%s", (int)w[c], txt[r][c], c + 1 < ncol ? "  " : "\n");
	free(txt);
}

void bench_print_table(const struct bench_ctx *ctx, FILE *f)
{
	const struct bench_exp *e = ctx->exp;

	fprintf(f, "\n== %s: %s (%s) ==\n", e->name, e->title, e->reproduces);
	print_cells(ctx->cells, ctx->ncells, f);
	if (ctx->ncells)
		fprintf(f, "(median [95%% CI of the median]; p5/p95/p99 and cycles in the JSON)\n");
	for (unsigned i = 0; i < ctx->nskipped; i++)
		fprintf(f, "skipped: %s: %s\n", ctx->skipped[i].what, ctx->skipped[i].reason);
	if (ctx->nsummary) {
		fprintf(f, "\n-- %s: %s --\n", e->name, e->summary_title ? e->summary_title : "summary");
		print_cells(ctx->summary, ctx->nsummary, f);
		fprintf(f, "(median [95%% CI of the median] over the repetitions)\n");
	}
}

/* ---- JSON --------------------------------------------------------------- */
void bench_write_machine(struct json *j)
{
	const struct hws_cpu_info *c = hws_cpu();
	struct hws_topo_summary t = { 0 };
	struct utsname u;
	char host[128] = "", date[32];
	time_t now = time(NULL);
	const char *why = NULL;

	hws_topo_summary(hws_topo_this(), &t);
	gethostname(host, sizeof host - 1);
	strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
	json_obj(j, "machine", false);
	json_str(j, "hwsync_version", HWS_VERSION);
	json_str(j, "date", date);
	json_str(j, "hostname", host);
	if (uname(&u) == 0) {
		json_str(j, "kernel", u.release);
	}
	json_str(j, "compiler", __VERSION__);
	json_obj(j, "cpu", false);
	json_str(j, "arch", c->arch);
	json_str(j, "vendor", c->vendor);
	json_str(j, "model", c->model);
	json_int(j, "family", c->family);
	json_int(j, "model_id", c->model_id);
	json_bool(j, "hypervisor", c->hypervisor);
	json_bool(j, "waitpkg", c->waitpkg);
	json_bool(j, "monitorx", c->monitorx);
	json_bool(j, "wfe", c->wfe);
	json_int(j, "online", sysconf(_SC_NPROCESSORS_ONLN));
	json_end_obj(j);
	json_obj(j, "tsc", true);
	json_int(j, "hz", (long long)c->tsc_hz);
	json_str(j, "source", c->tsc_source);
	json_int(j, "read_overhead_cycles", (long long)bench_tsc_overhead());
	json_end_obj(j);
	json_obj(j, "topology", true);
	json_str(j, "source", t.source);
	json_int(j, "packages", t.packages);
	json_int(j, "cores", t.cores);
	json_int(j, "pus", t.pus);
	json_bool(j, "smt", t.smt);
	json_int(j, "numa_nodes", t.numa_nodes);
	json_int(j, "l1d", (long long)t.l1d);
	json_int(j, "l2", (long long)t.l2);
	json_int(j, "l3", (long long)t.l3);
	json_end_obj(j);
	json_obj(j, "energy", true);
	bool rapl = bench_energy_available(&why) == 0;
	json_bool(j, "available", rapl);
	json_str(j, "reason", rapl ? NULL : why);
	json_end_obj(j);
	json_arr(j, "policies", false);
	for (int k = 0; k < HWS_WAIT_NKINDS; k++) {
		int rc = hws_wait_available((enum hws_wait_kind)k, &why);
		json_obj(j, NULL, true);
		json_str(j, "name", hws_wait_kind_name((enum hws_wait_kind)k));
		json_bool(j, "available", !rc);
		json_str(j, "reason", rc ? why : NULL);
		json_end_obj(j);
	}
	json_end_arr(j);
	json_end_obj(j);
}

static void write_list(struct json *j, const char *key, const struct bench_list *l)
{
	if (!l->n) {
		json_null(j, key);
		return;
	}
	json_arr(j, key, true);
	for (unsigned i = 0; i < l->n; i++)
		json_str(j, NULL, l->v[i]);
	json_end_arr(j);
}

static void write_stats(struct json *j, const struct bench_summary *s, bool full)
{
	json_num(j, "median", s->median);
	json_num(j, "p5", s->p5);
	json_num(j, "p95", s->p95);
	json_num(j, "p99", s->p99);
	json_arr(j, "ci95", true);
	json_num(j, NULL, s->ci_lo);
	json_num(j, NULL, s->ci_hi);
	json_end_arr(j);
	if (full) {
		json_num(j, "mean", s->mean);
		json_num(j, "min", s->min);
		json_num(j, "max", s->max);
	}
}

/* "reps": the value of each repetition in order (the median of its samples),
 * for comparing runs (docs/report.md); a summary row's samples are one per
 * repetition already. */
static void write_reps(struct json *j, struct bench_metric *m, bool summary)
{
	const double *v = summary ? m->s : m->rep;
	size_t n = summary ? m->n : m->nrep;
	json_arr(j, "reps", true);
	for (size_t i = 0; i < n; i++)
		json_num(j, NULL, m->timed ? cycles_to_ns(v[i]) : v[i]);
	json_end_arr(j);
}

static void write_metric(struct json *j, struct bench_metric *m, bool raw, bool summary)
{
	struct bench_summary cy, ns;
	json_obj(j, m->name, false);
	json_str(j, "unit", m->unit);
	summarize_metric(m, &cy, false);
	json_int(j, "n", (long long)m->n);
	if (m->timed) {
		ns = cy;
		double *f[] = { &ns.median, &ns.p5, &ns.p95, &ns.p99, &ns.mean, &ns.min, &ns.max,
				&ns.ci_lo, &ns.ci_hi };
		for (size_t i = 0; i < sizeof f / sizeof f[0]; i++)
			*f[i] = cycles_to_ns(*f[i]);
		write_stats(j, &ns, true);
		json_obj(j, "cycles", true);
		write_stats(j, &cy, false);
		json_end_obj(j);
	} else {
		write_stats(j, &cy, true);
	}
	write_reps(j, m, summary);
	if (raw) {
		/* sorted by the summary above; order within a metric carries no meaning */
		json_arr(j, m->timed ? "raw_cycles" : "raw", true);
		for (size_t i = 0; i < m->n; i++)
			json_num(j, NULL, m->s[i]);
		json_end_arr(j);
	}
	json_end_obj(j);
}

static void write_row(struct json *j, struct bench_cell *c, bool raw, bool summary)
{
	json_obj(j, NULL, false);
	json_str(j, "impl", c->impl);
	json_str(j, "policy", c->policy[0] ? c->policy : NULL);
	json_int(j, "threads", c->nthreads);
	json_arr(j, "cpus", true);
	for (unsigned i = 0; i < c->nthreads; i++)
		json_int(j, NULL, c->cpus[i]);
	json_end_arr(j);
	for (unsigned k = 0; k < c->nparams; k++) {
		if (c->param[k].num)
			json_num(j, c->param[k].key, strtod(c->param[k].val, NULL));
		else
			json_str(j, c->param[k].key, c->param[k].val);
	}
	for (unsigned k = 0; k < c->nmetrics; k++)
		write_metric(j, &c->m[k], raw, summary);
	json_end_obj(j);
}

static void write_run(struct json *j, struct bench_ctx *ctx)
{
	const struct bench_exp *e = ctx->exp;
	const struct bench_opts *o = ctx->o;
	json_obj(j, NULL, false);
	json_str(j, "name", e->name);
	json_str(j, "title", e->title);
	json_str(j, "reproduces", e->reproduces);
	json_obj(j, "params", false);
	json_int(j, "reps", o->reps);
	json_int(j, "warmup", o->warmup);
	json_int(j, "duration_ns", (long long)o->duration_ns);
	json_bool(j, "quick", o->quick);
	json_arr(j, "threads", true);
	for (unsigned i = 0; i < ctx->nthreads; i++)
		json_int(j, NULL, ctx->threads[i]);
	json_end_arr(j);
	write_list(j, "placements", &ctx->placements);
	write_list(j, "policies", &ctx->policies);
	write_list(j, "impls", &o->impls);
	for (unsigned i = 0; e->xopts && e->xopts[i].name; i++)
		json_str(j, e->xopts[i].name, bench_xopt(ctx, e->xopts[i].name));
	json_end_obj(j);
	json_arr(j, "rows", false);
	for (unsigned r = 0; r < ctx->ncells; r++)
		write_row(j, ctx->cells[r], o->raw, false);
	json_end_arr(j);
	if (e->summarize) {
		json_str(j, "summary_title", e->summary_title);
		json_arr(j, "summary", false);
		for (unsigned r = 0; r < ctx->nsummary; r++)
			write_row(j, ctx->summary[r], o->raw, true);
		json_end_arr(j);
	}
	json_arr(j, "skipped", false);
	for (unsigned i = 0; i < ctx->nskipped; i++) {
		json_obj(j, NULL, true);
		json_str(j, "what", ctx->skipped[i].what);
		json_str(j, "reason", ctx->skipped[i].reason);
		json_end_obj(j);
	}
	json_end_arr(j);
	json_end_obj(j);
}

int bench_session_write_json(struct bench_session *s, const char *path)
{
	FILE *f = !strcmp(path, "-") ? stdout : fopen(path, "w");
	struct json j;
	if (!f)
		return bench_error("cannot write '%s': %m", path);
	json_begin(&j, f);
	json_obj(&j, NULL, false);
	json_str(&j, "schema", "hwsync-bench/2");
	json_str(&j, "command", s->cmdline);
	bench_write_machine(&j);
	json_arr(&j, "experiments", false);
	for (unsigned i = 0; i < s->nruns; i++)
		write_run(&j, s->runs[i]);
	json_end_arr(&j);
	json_end_obj(&j);
	if (f != stdout && fclose(f))
		return bench_error("cannot write '%s': %m", path);
	return 0;
}

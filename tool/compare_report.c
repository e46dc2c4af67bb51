/* hwsync compare: the statistics, the table and verdict, and the JSON
 * (schema hwsync-compare/1, docs/compare.md).
 *
 * Ratios are paired within rounds: round r's value of a configuration over
 * the reference's (native's) value in round r, so that what drifts between
 * rounds (other jobs on a shared machine, the page cache, frequency) divides
 * out.  The ratio reported is the median of the per-round ratios, with the
 * order-statistic interval of the median that `hwsync bench` uses
 * (bench/stats.c): [x_(j), x_(n-j+1)] with the binomial rank j; its coverage
 * is 1 - 2 P(B <= j-1), B ~ Binomial(n, 1/2), which is below 95% when n < 6
 * ([min, max], 1 - 2^(1-n)); the JSON carries the coverage. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "bench/harness.h"
#include "bench/internal.h"
#include "bench/json.h"
#include "tool/compare.h"

enum metric { M_WALL, M_CPU, M_RSS, M_N };
static const char *const metric_key[M_N] = { "wall_s", "cpu_s", "rss_kib" };

struct stat_ {
	size_t n;
	double median, lo, hi, min, max, coverage;
};

static double value(const struct cmp_run *r, enum metric m)
{
	return m == M_WALL ? r->wall_s : m == M_CPU ? r->cpu_s : (double)r->rss_kib;
}

/* Coverage of [x_(j), x_(n-j+1)] as an interval of the median. */
static double coverage(size_t n, size_t j)
{
	double cum = 0;
	for (size_t i = 0; i < j; i++)
		cum += exp(lgamma((double)n + 1) - lgamma((double)i + 1) -
			   lgamma((double)(n - i) + 1) - (double)n * log(2.0));
	return 1 - 2 * cum;
}

static void summarize(double *v, size_t n, struct stat_ *s)
{
	struct bench_summary b;
	size_t k = 0;
	for (size_t i = 0; i < n; i++)   /* drop what could not be computed (x / 0) */
		if (isfinite(v[i]))
			v[k++] = v[i];
	bench_summarize(v, k, &b);
	size_t j = k ? bench_median_ci_rank(k) : 0;
	if (j > (k + 1) / 2)
		j = (k + 1) / 2;
	*s = (struct stat_){ .n = k, .median = k ? b.median : NAN, .lo = k ? b.ci_lo : NAN,
			     .hi = k ? b.ci_hi : NAN, .min = k ? b.min : NAN,
			     .max = k ? b.max : NAN, .coverage = k ? coverage(k, j) : NAN };
}

/* Configuration k's metric m over the rounds (ratio: over the reference's). */
static void stat_of(const struct cmp *c, unsigned k, enum metric m, bool ratio,
		    struct stat_ *s)
{
	double *v = malloc((c->done ? c->done : 1) * sizeof *v);
	if (!v) {
		*s = (struct stat_){ .median = NAN, .lo = NAN, .hi = NAN };
		return;
	}
	for (unsigned r = 0; r < c->done; r++) {
		double x = value(&c->runs[r * c->ncfg + k], m);
		double y = value(&c->runs[r * c->ncfg + c->ref], m);
		v[r] = ratio ? (y > 0 ? x / y : NAN) : x;
	}
	summarize(v, c->done, s);
	free(v);
}

size_t cmp_append_quoted(char *buf, size_t len, size_t n, const char *arg)
{
	bool plain = *arg != 0;
	for (const char *p = arg; *p; p++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
			    "-_./=:,+%@", *p))
			plain = false;
	if (n >= len)
		return n;
	n += (size_t)snprintf(buf + n, len - n, " %s", plain ? arg : "'");
	for (const char *p = arg; !plain && *p && n < len; p++)
		n += (size_t)snprintf(buf + n, len - n, *p == '\'' ? "'\\''" : "%c", *p);
	if (!plain && n < len)
		n += (size_t)snprintf(buf + n, len - n, "'");
	return n < len ? n : len - 1;
}

void cmp_run_line(const struct cmp *c, unsigned k, char *buf, size_t len)
{
	const struct cmp_config *g = &c->cfg[k];
	size_t n = 0;
	buf[0] = '\0';
	if (!g->native)
		n = (size_t)snprintf(buf, len, "hwsync run --lock %s", g->lock);
	if (g->wait[0]) {
		n += (size_t)snprintf(buf + n, len - n, " --wait");
		n = cmp_append_quoted(buf, len, n, g->wait);
	}
	if (!g->native)
		n += (size_t)snprintf(buf + n, len - n, " --");
	for (int i = 0; i < c->argc && n < len; i++)
		n = cmp_append_quoted(buf, len, n, c->argv[i]);
	if (g->native && buf[0] == ' ')
		memmove(buf, buf + 1, strlen(buf));
}

/* "0.41 [0.40, 0.43]", or "1" for the reference. */
static void fmt_ratio(const struct cmp *c, unsigned k, enum metric m, char *buf, size_t len)
{
	struct stat_ s;
	if (k == c->ref) {
		snprintf(buf, len, "1");
		return;
	}
	stat_of(c, k, m, true, &s);
	if (!s.n)
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "%.3f [%.3f, %.3f]", s.median, s.lo, s.hi);
}

/* The configuration with the lowest median wall-time ratio (the reference's
 * is 1); ties go to the earlier one. */
static unsigned best_config(const struct cmp *c)
{
	unsigned best = c->ref;
	double bv = 1;
	for (unsigned k = 0; k < c->ncfg; k++) {
		struct stat_ s;
		if (k == c->ref)
			continue;
		stat_of(c, k, M_WALL, true, &s);
		if (s.n && s.median < bv) {
			bv = s.median;
			best = k;
		}
	}
	return best;
}

/* The verdict, one line, into buf. */
static void verdict(const struct cmp *c, char *buf, size_t len, unsigned *bestp, int *beyond)
{
	unsigned best = best_config(c), near = c->ref;
	const char *ref = c->cfg[c->ref].name;
	struct stat_ s;

	*bestp = best;
	*beyond = 0;
	if (c->ncfg == 1) {
		snprintf(buf, len, "verdict: only %s ran; nothing to compare", ref);
		return;
	}
	if (best == c->ref) {
		double nv = INFINITY;
		for (unsigned k = 0; k < c->ncfg; k++) {
			if (k == c->ref)
				continue;
			stat_of(c, k, M_WALL, true, &s);
			if (s.n && s.median < nv) {
				nv = s.median;
				near = k;
			}
		}
		stat_of(c, near, M_WALL, true, &s);
		snprintf(buf, len, "verdict: %s is fastest; the closest, %s, takes %.3fx its wall "
			 "time [%.3f, %.3f]: %s (%u rounds)", ref, c->cfg[near].name, s.median,
			 s.lo, s.hi, s.lo > 1 ? "slower beyond noise" : "within noise", c->done);
		return;
	}
	stat_of(c, best, M_WALL, true, &s);
	*beyond = s.hi < 1;
	snprintf(buf, len, "verdict: %s is fastest, %.3fx %s's wall time [%.3f, %.3f]: %s "
		 "(%u rounds)", c->cfg[best].name, s.median, ref, s.lo, s.hi,
		 s.hi < 1 ? "faster beyond noise" : "not faster beyond noise", c->done);
}

/* The configurations whose CPU time differs from the reference's beyond
 * noise (the interval of the paired ratio excludes 1), into buf ("" if none).
 * On a busy machine wall time mostly says how long a program waited for a CPU;
 * the CPU it used is steadier and often the only difference that shows. */
static void cpu_note(const struct cmp *c, char *buf, size_t len)
{
	size_t n = 0;
	buf[0] = 0;
	for (unsigned k = 0; k < c->ncfg && n < len; k++) {
		struct stat_ s;
		if (k == c->ref)
			continue;
		stat_of(c, k, M_CPU, true, &s);
		if (s.n && (s.lo > 1 || s.hi < 1))
			n += (size_t)snprintf(buf + n, len - n, "%s %s %.3fx [%.3f, %.3f]",
					      n ? "," : "", c->cfg[k].name, s.median, s.lo, s.hi);
	}
}

void cmp_print_report(const struct cmp *c)
{
	char w[48], cp[48], rs[48], line[4096];
	unsigned flagged = 0, best;
	int beyond;

	printf("%-18s %4s %9s %-22s %9s %-22s %8s %s\n", "configuration", "exit", "wall s",
	       "x native [95%]", "CPU s", "x native [95%]", "RSS MiB", "x native [95%]");
	for (unsigned k = 0; k < c->ncfg; k++) {
		struct stat_ sw, sc, sr;
		stat_of(c, k, M_WALL, false, &sw);
		stat_of(c, k, M_CPU, false, &sc);
		stat_of(c, k, M_RSS, false, &sr);
		fmt_ratio(c, k, M_WALL, w, sizeof w);
		fmt_ratio(c, k, M_CPU, cp, sizeof cp);
		fmt_ratio(c, k, M_RSS, rs, sizeof rs);
		printf("%-18s %4d %9.3f %-22s %9.3f %-22s %8.1f %s\n", c->cfg[k].name,
		       c->runs[k].exit_status, sw.median, w, sc.median, cp, sr.median / 1024, rs);
	}
	if (strcmp(c->cfg[c->ref].name, "native"))
		printf("(no native configuration: ratios are to %s)\n", c->cfg[c->ref].name);
	printf("rounds: %u measured", c->done);
	if (c->warmup)
		printf(" after %u warm-up", c->warmup);
	if (c->budget_stop)
		printf("; --budget %g s: %u of %u rounds fitted", c->budget_s, c->done, c->rounds);
	printf("; %.0f s in all\n", c->elapsed_s);
	printf("other processes' CPU use per round (of all CPUs):");
	for (unsigned r = 0; r < c->done; r++) {
		if (c->round[r].other < 0)
			printf(" ?");
		else
			printf(" %.0f%%%s", 100 * c->round[r].other, c->round[r].flagged ? "*" : "");
		flagged += c->round[r].flagged;
	}
	if (flagged)
		printf("\n  * flagged: %u of %u rounds ran beside more than 10%% of the CPUs' worth of "
		       "other work", flagged, c->done);
	printf("\n");
	if (c->done < 6)
		printf("intervals: with %u rounds [min, max] of the per-round ratios (coverage "
		       "%.0f%%; 6 rounds reach 95%%)\n", c->done,
		       100 * (1 - pow(2, 1 - (double)c->done)));
	verdict(c, line, sizeof line, &best, &beyond);
	printf("%s\n", line);
	cmp_run_line(c, best, line, sizeof line);
	printf("  %s\n", line);
	cpu_note(c, line, sizeof line);
	if (line[0])
		printf("CPU time differs from %s's beyond noise:%s\n", c->cfg[c->ref].name, line);
}

static void json_stat(struct json *j, const char *key, const struct stat_ *s)
{
	json_obj(j, key, true);
	json_int(j, "n", (long long)s->n);
	json_num(j, "median", s->median);
	json_arr(j, "ci95", true);
	json_num(j, NULL, s->lo);
	json_num(j, NULL, s->hi);
	json_end_arr(j);
	json_num(j, "coverage", s->coverage);
	json_num(j, "min", s->min);
	json_num(j, "max", s->max);
	json_end_obj(j);
}

int cmp_write_json(const struct cmp *c)
{
	FILE *f = fopen(c->out, "w");
	struct json j;
	char buf[4096];
	unsigned best;
	int beyond;

	if (!f) {
		fprintf(stderr, "hwsync compare: cannot write '%s'\n", c->out);
		return 1;
	}
	json_begin(&j, f);
	json_obj(&j, NULL, false);
	json_str(&j, "schema", "hwsync-compare/1");
	json_str(&j, "command", c->cmdline);
	bench_write_machine(&j);
	json_arr(&j, "program", true);
	for (int i = 0; i < c->argc; i++)
		json_str(&j, NULL, c->argv[i]);
	json_end_arr(&j);
	json_str(&j, "setup", c->setup);
	json_obj(&j, "params", true);
	json_int(&j, "rounds", c->rounds);
	json_int(&j, "warmup", c->warmup);
	json_num(&j, "budget_s", c->budget_s > 0 ? c->budget_s : NAN);
	json_num(&j, "timeout_s", c->timeout_s > 0 ? c->timeout_s : NAN);
	json_int(&j, "expect_status", c->expect_status);
	json_bool(&j, "check_output", c->check_output);
	json_end_obj(&j);
	json_str(&j, "out_dir", c->out_dir);
	json_int(&j, "rounds_done", c->done);
	json_bool(&j, "budget_stop", c->budget_stop);
	json_num(&j, "elapsed_s", c->elapsed_s);
	json_str(&j, "reference", c->cfg[c->ref].name);
	json_arr(&j, "configs", false);
	for (unsigned k = 0; k < c->ncfg; k++) {
		const struct cmp_config *g = &c->cfg[k];
		struct stat_ s;
		json_obj(&j, NULL, false);
		json_str(&j, "name", g->name);
		json_bool(&j, "native", g->native);
		json_str(&j, "lock", g->native ? NULL : g->lock);
		json_str(&j, "wait", g->wait[0] ? g->wait : NULL);
		cmp_run_line(c, k, buf, sizeof buf);
		json_str(&j, "run", buf);
		json_int(&j, "exit_status", c->done ? c->runs[k].exit_status : 0);
		for (int m = 0; m < M_N; m++) {
			char key[32];
			stat_of(c, k, (enum metric)m, false, &s);
			json_stat(&j, metric_key[m], &s);
			snprintf(key, sizeof key, "%s_ratio", metric_key[m]);
			stat_of(c, k, (enum metric)m, true, &s);
			if (k == c->ref)
				json_null(&j, key);
			else
				json_stat(&j, key, &s);
		}
		json_end_obj(&j);
	}
	json_end_arr(&j);
	json_arr(&j, "rounds", false);
	for (unsigned r = 0; r < c->done; r++) {
		const struct cmp_round *ro = &c->round[r];
		json_obj(&j, NULL, false);
		json_int(&j, "round", r + 1);
		json_arr(&j, "order", true);
		for (unsigned i = 0; i < c->ncfg; i++)
			json_str(&j, NULL, c->cfg[(ro->first + i) % c->ncfg].name);
		json_end_arr(&j);
		json_num(&j, "wall_s", ro->wall_s);
		json_num(&j, "other_cpu", ro->other >= 0 ? ro->other : NAN);
		json_bool(&j, "flagged", ro->flagged);
		json_arr(&j, "runs", false);
		for (unsigned k = 0; k < c->ncfg; k++) {
			const struct cmp_run *ru = &c->runs[r * c->ncfg + k];
			char name[192];
			json_obj(&j, NULL, true);
			json_str(&j, "config", c->cfg[k].name);
			json_num(&j, "wall_s", ru->wall_s);
			json_num(&j, "cpu_s", ru->cpu_s);
			json_int(&j, "rss_kib", ru->rss_kib);
			json_int(&j, "exit_status", ru->exit_status);
			snprintf(name, sizeof name, "r%u-%s.out", r + 1, c->cfg[k].slug);
			json_str(&j, "stdout", name);
			snprintf(name, sizeof name, "r%u-%s.err", r + 1, c->cfg[k].slug);
			json_str(&j, "stderr", name);
			json_end_obj(&j);
		}
		json_end_arr(&j);
		json_end_obj(&j);
	}
	json_end_arr(&j);
	verdict(c, buf, sizeof buf, &best, &beyond);
	json_obj(&j, "verdict", false);
	json_str(&j, "best", c->cfg[best].name);
	json_bool(&j, "beyond_noise", beyond);
	json_str(&j, "text", buf);
	cmp_run_line(c, best, buf, sizeof buf);
	json_str(&j, "run", buf);
	json_end_obj(&j);
	json_end_obj(&j);
	if (fclose(f)) {
		fprintf(stderr, "hwsync compare: cannot write '%s'\n", c->out);
		return 1;
	}
	return 0;
}

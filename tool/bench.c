/* hwsync bench: option parsing and help; the harness and the experiments
 * live in bench/ (see bench/README.md). */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <hwsync/hwsync.h>
#include "bench/harness.h"
#include "tool/cli.h"

static const char help_head[] =
"NAME\n"
"    hwsync bench - measure what synchronization costs on this machine\n"
"\n"
"SYNOPSIS\n"
"    hwsync bench list\n"
"    hwsync bench suite [--quick] [options]\n"
"    hwsync bench EXPERIMENT [options] [experiment options]\n"
"    hwsync bench EXPERIMENT --help\n"
"\n"
"DESCRIPTION\n"
"    Runs the experiments of the papers hwsync is built from, with hwsync's\n"
"    primitives and wait policies side by side with the peers (glibc pthreads,\n"
"    GNU OpenMP, Concurrency Kit, C++20 std::atomic::wait and std::barrier) in\n"
"    the same run.  Every implementation is run once per repetition, round-robin\n"
"    (A B C A B C ...), so that drift of a shared machine hits every row alike.\n"
"    Threads are pinned.  Time is read from the calibrated TSC; every timed\n"
"    metric is reported in ns and in cycles as median, p5, p95, p99 and a 95%\n"
"    confidence interval of the median (order statistics).  What the machine\n"
"    cannot do (no SMT siblings, one socket, no RAPL, a missing wait\n"
"    instruction) is reported as 'skipped: <reason>', never run another way.\n"
"\n"
"    `suite` runs every experiment with its defaults, except those `list` marks\n"
"    'not in suite' (run them by name); --quick shrinks them to a few minutes in\n"
"    all.  `list` names the experiments and what they reproduce, citing the\n"
"    papers by short name ([AK08], [RAINA], ...; docs/references.md in the\n"
"    source tree lists them).\n"
"\n"
"OPTIONS\n"
"    --placement LIST  where threads run: smt (SMT siblings of one core: the\n"
"                      papers' 'same core'), core (distinct cores), llc (distinct\n"
"                      cores under one last-level cache), socket (one package:\n"
"                      'same socket'), numa (one NUMA node), spread (round-robin\n"
"                      over packages: 'across sockets').  Default per experiment.\n"
"    --cpus LIST       explicit CPUs (e.g. 0,2-3); thread i runs on the i-th,\n"
"                      round-robin when there are more threads than CPUs.\n"
"                      Replaces --placement.\n"
"    --threads LIST    thread counts, e.g. 1,2,4 or 1-4 (N = the CPUs this\n"
"                      process may use: its affinity mask, capped by its\n"
"                      cgroup's CPU bandwidth)\n"
"    --policies LIST   wait policies for the hwsync rows (wait-policy specs,\n"
"                      e.g. futex,pause,'backoff:max=4096'); default: every\n"
"                      policy, the unavailable ones listed as skipped\n"
"    --impls LIST      implementations to run (see EXPERIMENT --help)\n"
"    --reps N          measured repetitions per row (default 10, quick 5)\n"
"    --warmup N        discarded repetitions first (default 1)\n"
"    --duration TIME   time budget of one row in one repetition, e.g. 200ms,\n"
"                      50ms, 1s (default 100ms, quick 25ms)\n"
"    --quick           the shorter defaults of `suite --quick`\n"
"    --out FILE.json   write the results as JSON (schema hwsync-bench/2,\n"
"                      docs/bench-schema.md); '-' for stdout\n"
"    --raw             keep every raw sample in the JSON\n"
"    -h, --help        this text; `hwsync bench EXPERIMENT --help` for one\n"
"\n"
"OUTPUT\n"
"    A table per experiment on stdout (median [95% CI of the median]), the\n"
"    skipped rows with their reasons, a progress line on stderr when a run\n"
"    takes more than a few seconds.\n"
"\n"
"EXIT STATUS\n"
"    0 when the experiments ran (skipped rows included); 2 with one line on\n"
"    stderr for a bad option: unknown experiment, implementation, policy or\n"
"    placement, zero threads, more threads than a placement allows.\n"
"\n"
"EXAMPLES\n"
"    hwsync bench suite --quick --out results.json && hwsync report results.json -o report\n"
"    hwsync bench wake --policies futex,pause,adaptive --reps 20\n"
"    hwsync bench atomics --threads 1,2 --placement core --out atomics.json\n"
"    hwsync bench shim --quick --out shim.json   (the LD_PRELOAD shim vs native)\n"
"\n"
"EXPERIMENTS\n";

static void list_experiments(FILE *f)
{
	unsigned n;
	const struct bench_exp *const *e = bench_experiments(&n);
	for (unsigned i = 0; i < n; i++)
		fprintf(f, "    %-13s %s (%s)%s\n", e[i]->name, e[i]->title, e[i]->reproduces,
			e[i]->not_in_suite ? "; not in suite" : "");
}

static void print_help(FILE *f)
{
	fputs(help_head, f);
	list_experiments(f);
	fprintf(f, "\nWAIT POLICIES (--policies; each name takes the parameters of\n"
		"docs/wait-policies.md, e.g. backoff:max=4096)\n");
	hws_cli_print_list(f, "", 4, hws_wait_kinds(),
			   "(which of them this machine has: hwsync info)");
}

static void exp_help(const struct bench_exp *e)
{
	printf("NAME\n    hwsync bench %s - %s\n\nREPRODUCES\n    %s\n\n", e->name, e->title,
	       e->reproduces);
	printf("SYNOPSIS\n    hwsync bench %s [options]%s\n\nDESCRIPTION\n%s\n", e->name,
	       e->xopts ? " [experiment options]" : "", e->help);
	printf("IMPLEMENTATIONS (--impls)\n    %s\n\n", e->impls);
	printf("DEFAULTS\n    --threads %s  --placement %s", e->def_threads, e->def_placements);
	if (e->uses_policies)
		printf("  --policies %s", e->def_policies ? e->def_policies : "<every policy>");
	if (e->uses_policies && e->quick_policies)
		printf(" (--quick %s)", e->quick_policies);
	printf("\n\n");
	if (e->xopts) {
		printf("EXPERIMENT OPTIONS\n");
		for (unsigned i = 0; e->xopts[i].name; i++) {
			const struct bench_xopt *x = &e->xopts[i];
			printf("    --%s VALUE\n        %s\n", x->name, x->help);
			if (x->def[0])   /* an empty default says so in its help */
				printf("        default %s%s%s\n", x->def, x->quick ? ", quick " : "",
				       x->quick ? x->quick : "");
		}
		printf("\n");
	}
	printf("Common options: see `hwsync bench --help`.\n");
}

/* "100ms", "2s", "500us", "1000ns"; plain numbers are ms. */
static int parse_duration(const char *s, uint64_t *ns)
{
	char *end;
	double v = strtod(s, &end);
	double mul = 1e6;
	if (end == s || v <= 0)
		return EINVAL;
	if (!strcmp(end, "s")) mul = 1e9;
	else if (!strcmp(end, "ms") || !*end) mul = 1e6;
	else if (!strcmp(end, "us")) mul = 1e3;
	else if (!strcmp(end, "ns")) mul = 1;
	else return EINVAL;
	*ns = (uint64_t)(v * mul);
	return *ns ? 0 : EINVAL;
}

/* Split a copy (argv stays whole for the "command" of the JSON output); the
 * copy lives as long as the options. */
static int split(struct bench_list *l, const char *arg, const char *what)
{
	char *s = strdup(arg);
	if (!s)
		return bench_error("out of memory");
	for (char *p = strtok(s, ","); p; p = strtok(NULL, ",")) {
		if (l->n == BENCH_MAX_LIST)
			return bench_error("too many %s", what);
		l->v[l->n++] = p;
	}
	if (!l->n)
		return bench_error("empty %s list", what);
	return 0;
}

static int parse_uint(const char *s, unsigned *v, const char *what, unsigned min)
{
	char *end;
	unsigned long x = strtoul(s, &end, 10);
	if (end == s || *end || x < min || x > 1000000)
		return bench_error("bad %s '%s' (a number >= %u)", what, s, min);
	*v = (unsigned)x;
	return 0;
}

enum { O_PLACEMENT = 256, O_CPUS, O_THREADS, O_POLICIES, O_IMPLS, O_REPS, O_WARMUP,
       O_DURATION, O_QUICK, O_OUT, O_RAW, O_HELP, O_XOPT = 512 };

int hws_cmd_bench(int argc, char **argv)
{
	static const struct option common[] = {
		{ "placement", required_argument, NULL, O_PLACEMENT },
		{ "cpus", required_argument, NULL, O_CPUS },
		{ "threads", required_argument, NULL, O_THREADS },
		{ "policies", required_argument, NULL, O_POLICIES },
		{ "impls", required_argument, NULL, O_IMPLS },
		{ "reps", required_argument, NULL, O_REPS },
		{ "warmup", required_argument, NULL, O_WARMUP },
		{ "duration", required_argument, NULL, O_DURATION },
		{ "quick", no_argument, NULL, O_QUICK },
		{ "out", required_argument, NULL, O_OUT },
		{ "raw", no_argument, NULL, O_RAW },
		{ "help", no_argument, NULL, O_HELP },
	};
	const size_t ncommon = sizeof common / sizeof common[0];
	struct option opts[64];
	struct bench_opts o = { .reps = 0, .warmup = 1 };
	const struct bench_exp *exp = NULL;
	bool suite = false, reps_set = false, dur_set = false;
	const char *out = NULL;
	int c, rc;

	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		print_help(argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	if (!strcmp(argv[1], "list")) {
		list_experiments(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "suite")) {
		suite = o.suite = true;
	} else if (!(exp = bench_find(argv[1]))) {
		unsigned n;
		const struct bench_exp *const *all = bench_experiments(&n);
		char known[256] = "";
		for (unsigned i = 0; i < n; i++)
			snprintf(known + strlen(known), sizeof known - strlen(known), "%s%s",
				 i ? ", " : "", all[i]->name);
		return bench_error("unknown experiment '%s' (known: %s, suite, list)", argv[1],
				   known);
	}

	memcpy(opts, common, sizeof common);
	size_t nopts = ncommon;
	for (unsigned i = 0; exp && exp->xopts && exp->xopts[i].name && i < 16; i++)
		opts[nopts++] = (struct option){ exp->xopts[i].name, required_argument, NULL,
						 O_XOPT + (int)i };
	opts[nopts] = (struct option){ 0 };

	optind = 2;   /* argv[1] is the experiment */
	opterr = 0;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		char *arg = optarg;
		switch (c) {
		case O_PLACEMENT: rc = split(&o.placements, arg, "placement"); break;
		case O_CPUS:
			rc = hws_topo_parse_cpus(arg, o.cpus, BENCH_MAX_CPUS, &o.ncpus) ?
			     bench_error("--cpus: %s", hws_last_error()) : 0;
			break;
		case O_THREADS: rc = split(&o.threads, arg, "thread"); break;
		case O_POLICIES: rc = split(&o.policies, arg, "policy"); break;
		case O_IMPLS: rc = split(&o.impls, arg, "implementation"); break;
		case O_REPS: rc = parse_uint(arg, &o.reps, "--reps", 1); reps_set = true; break;
		case O_WARMUP: rc = parse_uint(arg, &o.warmup, "--warmup", 0); break;
		case O_DURATION:
			rc = parse_duration(arg, &o.duration_ns) ?
			     bench_error("bad --duration '%s' (e.g. 100ms, 2s, 500us)", arg) : 0;
			dur_set = true;
			break;
		case O_QUICK: o.quick = true; rc = 0; break;
		case O_OUT: out = arg; rc = 0; break;
		case O_RAW: o.raw = true; rc = 0; break;
		case 'h':
		case O_HELP:
			if (exp)
				exp_help(exp);
			else
				print_help(stdout);
			return 0;
		default:
			if (c >= O_XOPT) {
				o.xval[c - O_XOPT] = arg;
				rc = 0;
				break;
			}
			return bench_error("unknown or incomplete option '%s' (try: hwsync bench %s "
					   "--help)", argv[optind - 1], argv[1]);
		}
		if (rc)
			return rc;
	}
	if (optind < argc)
		return bench_error("unexpected argument '%s'", argv[optind]);
	if (!reps_set)
		o.reps = o.quick ? 5 : 10;
	if (!dur_set)
		o.duration_ns = o.quick ? 25000000ull : 100000000ull;

	/* adaptive rows wait with this machine's numbers measured now (helper
	 * thread), as before; a program that merely uses the policy starts from
	 * the cache or a default instead. */
	hws_adaptive_calibration();
	struct bench_session *s = bench_session_new(argc, argv);
	if (!s)
		return bench_error("out of memory");
	rc = 0;
	if (suite) {
		unsigned n;
		const struct bench_exp *const *all = bench_experiments(&n);
		for (unsigned i = 0; i < n && !rc; i++)
			if (!all[i]->not_in_suite)
				rc = bench_session_run(s, all[i], &o);
	} else {
		rc = bench_session_run(s, exp, &o);
	}
	if (!rc && out) {
		rc = bench_session_write_json(s, out);
		if (!rc && strcmp(out, "-"))
			fprintf(stderr, "hwsync bench: results in %s\n", out);
	}
	bench_session_free(s);
	return rc;
}

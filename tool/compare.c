/* hwsync compare: run a program natively and under several hwsync
 * configurations, interleaved round by round, and say which is fastest and
 * whether that is beyond the noise.  This file parses the options and runs
 * the rounds; compare_report.c prints the table and verdict and writes JSON.
 *
 * Why the rounds look the way they do: a shared machine drifts (2x within an
 * hour here), so a configuration measured in one block and another in the next
 * block compares two moments rather than two settings.  Every round runs every
 * configuration once, in an order rotated by one every round (each goes first
 * as often as any other), and each configuration is compared with native of the
 * same round.  The number of rounds is fixed before the first one: stopping
 * when the answer "looks settled" biases it.  The budget only stops new rounds
 * from starting, using their expected duration, never their results. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <hwsync/lock.h>
#include <hwsync/wait.h>
#include "bench/child.h"
#include "tool/cli.h"
#include "tool/compare.h"

#ifndef HWS_LIBDIR
#define HWS_LIBDIR "/usr/local/lib"
#endif
#define PRELOAD_NAME "libhwsync-preload.so"
#define CMP_BUSY_LIMIT 0.10

static const char usage[] =
"NAME\n"
"    hwsync compare - run a program natively and under hwsync configurations,\n"
"    interleaved, and say which is fastest beyond the noise\n"
"\n"
"SYNOPSIS\n"
"    hwsync compare [options] -- PROGRAM [ARGS...]\n"
"\n"
"DESCRIPTION\n"
"    Runs PROGRAM once per configuration per round: natively (`native`: no\n"
"    shim) and under the LD_PRELOAD shim with each lock kind and wait policy\n"
"    (the environment of `hwsync run --lock KIND --wait POLICY`).  Every round\n"
"    runs every configuration, in an order rotated by one place each round, so\n"
"    that each configuration goes first equally often and drift of a shared\n"
"    machine hits all of them alike.  The number of rounds is fixed before the\n"
"    run (-n); --budget only keeps new rounds from starting.\n"
"\n"
"    For each configuration it reports the median wall time, CPU time (user +\n"
"    system of the program and the children it waited for, from wait4) and\n"
"    peak RSS, and their ratios to native.  A ratio is paired: each round's\n"
"    value over native's of the same round; the table gives the median of the\n"
"    per-round ratios and its 95%% interval from order statistics (the binomial\n"
"    rank of `hwsync bench`).  Below 6 rounds no order statistic reaches 95%%:\n"
"    the interval is then [min, max] of the rounds (coverage 1 - 2^(1-n), 94%%\n"
"    for 5 rounds).  The verdict names the configuration with the lowest median\n"
"    wall-time ratio, says whether it beats native beyond noise (the whole\n"
"    interval below 1), and prints the `hwsync run` line that gives it.\n"
"\n"
"    The program's stdout and stderr go to files in --out-dir, one pair per\n"
"    run (rR-CONFIG.out, rR-CONFIG.err; warm-up rounds wW-...), never to the\n"
"    terminal; its stdin is /dev/null.  A run that exits with another status\n"
"    than --expect-status, is killed by a signal or outlives --timeout stops\n"
"    the comparison with one line.  A round during which other processes kept\n"
"    more than 10%% of the CPUs busy (/proc/stat's busy time less the CPU time\n"
"    of our own children) is flagged in the table and the JSON.\n"
"\n"
"OPTIONS\n"
"    --configs LIST    configurations, comma-separated: `native` or\n"
"                      KIND[:POLICY] (lock kind, optional wait-policy spec;\n"
"                      `auto` alone is hwsync's default, auto:adaptive).  A\n"
"                      policy's own parameters follow it after commas:\n"
"                      `native,mcs:backoff:min=4,max=4096,auto`.  Default:\n"
"                      native, auto, mcs:futex, auto:futex, and auto:HW when\n"
"                      this machine has a hardware wait (the first of umwait,\n"
"                      mwaitx, wfe, kmwait that `hwsync info` says it has).\n"
"    -n, --rounds N    measured rounds (default 5)\n"
"    --warmup N        rounds run first and discarded (default 0)\n"
"    --budget SECONDS  start no round that would end after SECONDS (judged\n"
"                      from the mean duration of the rounds so far); the first\n"
"                      measured round always runs.  Says how many fitted.\n"
"    --timeout SECONDS kill a run that takes longer (default: none); a killed\n"
"                      run stops the comparison\n"
"    --setup CMD       run `/bin/sh -c CMD` before every run of the program\n"
"                      (e.g. to restore an input the program consumes); its\n"
"                      output goes to OUT-DIR/setup.log; failing stops the run\n"
"    --expect-status N the exit status every run must have (default 0)\n"
"    --check-output    every run's stdout must equal that of the reference\n"
"                      configuration (native) in the same round\n"
"    --out FILE.json   write the results as JSON (schema hwsync-compare/1,\n"
"                      docs/compare.md)\n"
"    --out-dir DIR     where the programs' outputs go (created; default\n"
"                      hwsync-compare-YYYYMMDD-HHMMSS in the current directory)\n"
"    --preload LIB     the shim library (default: next to hwsync, then\n"
"                      %s)\n"
"    -q, --quiet       no progress lines on stderr\n"
"    -h, --help        this text\n"
"\n"
"OUTPUT\n"
"    stderr: a line per run as it starts (round, configuration, elapsed time,\n"
"    estimated time left).  stdout: a table, one row per configuration\n"
"    (median wall s, its ratio to native [95%% interval], the same for CPU s and\n"
"    peak RSS MiB, exit status), the flagged rounds, a one-line verdict and the\n"
"    `hwsync run` line of the best configuration.  --out: the same as JSON,\n"
"    every run included (schema hwsync-compare/1, docs/compare.md).\n"
"\n"
"EXIT STATUS\n"
"    0 when the rounds ran (all of them, or those --budget allowed), whatever\n"
"    the verdict; 1 when a run failed, outputs differed, or a file could not\n"
"    be written (one line on stderr); 2 with one line on stderr for a bad\n"
"    option (unknown lock kind, wait policy this machine lacks, ...).\n"
"\n"
"EXAMPLES\n"
"    hwsync compare -- pigz -k -f big.tar\n"
"    hwsync compare --configs native,auto,mcs:futex -n 7 --out xz.json \\\n"
"        --setup 'rm -f data.xz' -- xz -T2 -k data\n"
"    hwsync compare --budget 120 --check-output -- ./my-solver input.txt\n";

static void print_usage(void)
{
	printf(usage, HWS_LIBDIR);
	printf("\n");
	hws_cli_print_list(stdout, "lock kinds", 18, hws_lock_kinds(), NULL);
	hws_cli_print_list(stdout, "wait policies", 18, hws_wait_kinds(),
			   "(which of them this machine has: hwsync info)");
}

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* ---- configurations ------------------------------------------------------ */

/* One configuration from ITEM ("native", "mcs", "mcs:futex"); 0, or 2 with one
 * line on stderr. */
static int parse_config(struct cmp_config *k, const char *item)
{
	char buf[512];
	const char *colon = strchr(item, ':');
	size_t kl = colon ? (size_t)(colon - item) : strlen(item);

	memset(k, 0, sizeof *k);
	if (strlen(item) >= sizeof k->name || kl >= sizeof k->lock ||
	    (colon && strlen(colon + 1) >= sizeof k->wait)) {
		fprintf(stderr, "hwsync compare: --configs '%s': too long\n", item);
		return 2;
	}
	snprintf(k->name, sizeof k->name, "%s", item);
	for (size_t i = 0; item[i]; i++)
		k->slug[i] = (item[i] >= 'a' && item[i] <= 'z') || (item[i] >= 'A' && item[i] <= 'Z') ||
			     (item[i] >= '0' && item[i] <= '9') || item[i] == '-' || item[i] == '.' ?
			     item[i] : '_';
	if (!strcmp(item, "native")) {
		k->native = true;
		return 0;
	}
	memcpy(k->lock, item, kl);
	if (!hws_cli_known(hws_lock_kinds(), k->lock)) {
		hws_cli_join(hws_lock_kinds(), buf, sizeof buf);
		fprintf(stderr, "hwsync compare: --configs '%s': unknown lock kind '%s' (known: "
			"native, %s)\n", item, k->lock, buf);
		return 2;
	}
	if (colon) {
		hws_wait_t w;
		snprintf(k->wait, sizeof k->wait, "%s", colon + 1);
		if (hws_wait_init(&w, k->wait)) {
			fprintf(stderr, "hwsync compare: --configs '%s': %s\n", item,
				hws_last_error());
			return 2;
		}
	}
	return 0;
}

/* LIST split at commas; an item with '=' before any ':' continues the wait
 * spec of the item before it (`mcs:backoff:min=4,max=4096`). */
static int parse_configs(struct cmp *c, const char *list)
{
	char items[CMP_MAX_CONFIGS][256];
	unsigned n = 0;
	const char *p = list;

	while (*p) {
		size_t len = strcspn(p, ",");
		const char *eq = memchr(p, '=', len), *co = memchr(p, ':', len);
		bool cont = eq && (!co || co > eq) && n > 0;
		if (!len) {
			fprintf(stderr, "hwsync compare: --configs '%s': empty item\n", list);
			return 2;
		}
		if (!cont && n == CMP_MAX_CONFIGS) {
			fprintf(stderr, "hwsync compare: --configs: more than %d configurations\n",
				CMP_MAX_CONFIGS);
			return 2;
		}
		char *dst = cont ? items[n - 1] : items[n++];
		size_t have = cont ? strlen(dst) : 0;
		if (have + len + 2 > sizeof items[0]) {
			fprintf(stderr, "hwsync compare: --configs: item too long\n");
			return 2;
		}
		snprintf(dst + have, sizeof items[0] - have, "%s%.*s", cont ? "," : "", (int)len, p);
		p += len + (p[len] == ',');
	}
	if (!n) {
		fprintf(stderr, "hwsync compare: --configs: empty list\n");
		return 2;
	}
	for (unsigned i = 0; i < n; i++) {
		if (parse_config(&c->cfg[i], items[i]))
			return 2;
		for (unsigned j = 0; j < i; j++)
			if (!strcmp(c->cfg[j].name, c->cfg[i].name)) {
				fprintf(stderr, "hwsync compare: --configs: '%s' given twice\n",
					items[i]);
				return 2;
			}
	}
	c->ncfg = n;
	return 0;
}

/* native, the default, a sleeping queue lock, sleeping at once, and the
 * hardware wait when there is one: see docs/compare.md for why these. */
static void default_configs(char *buf, size_t len)
{
	static const enum hws_wait_kind hw[] = { HWS_WAIT_UMWAIT, HWS_WAIT_MWAITX, HWS_WAIT_WFE,
						 HWS_WAIT_KMWAIT };
	int n = snprintf(buf, len, "native,auto,mcs:futex,auto:futex");

	for (size_t i = 0; i < sizeof hw / sizeof hw[0]; i++) {
		const char *why;
		if (hws_wait_available(hw[i], &why) == 0) {
			snprintf(buf + n, len - (size_t)n, ",auto:%s", hws_wait_kind_name(hw[i]));
			break;
		}
	}
}

/* ---- running ------------------------------------------------------------- */

/* Children's and our own CPU seconds so far. */
static double own_cpu_s(void)
{
	struct rusage a, b;
	getrusage(RUSAGE_CHILDREN, &a);
	getrusage(RUSAGE_SELF, &b);
	return (double)(a.ru_utime.tv_sec + a.ru_stime.tv_sec + b.ru_utime.tv_sec +
			b.ru_stime.tv_sec) +
	       (double)(a.ru_utime.tv_usec + a.ru_stime.tv_usec + b.ru_utime.tv_usec +
			b.ru_stime.tv_usec) / 1e6;
}

/* Busy CPU seconds of the whole machine from /proc/stat's first line (user,
 * nice, system, irq, softirq; not idle, iowait, or steal, which is the host's
 * time, not another process's); < 0 when unreadable. */
static double machine_busy_s(void)
{
	unsigned long long v[8] = { 0 };
	FILE *f = fopen("/proc/stat", "r");
	int n = f ? fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2],
			   &v[3], &v[4], &v[5], &v[6], &v[7]) : 0;
	if (f)
		fclose(f);
	if (n < 7)
		return -1;
	return (double)(v[0] + v[1] + v[2] + v[5] + v[6]) / (double)sysconf(_SC_CLK_TCK);
}

static int open_out(const char *dir, const char *name, int flags)
{
	char path[PATH_MAX + 256];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	return open(path, O_WRONLY | O_CREAT | O_CLOEXEC | flags, 0644);
}

/* Wait for pid, killing it after timeout_s (0: never).  The wait status, or -1
 * with *timed_out set. */
static int wait_child(pid_t pid, double timeout_s, struct rusage *ru, bool *timed_out)
{
	int st, pfd = -1;

	*timed_out = false;
	if (timeout_s > 0)
		pfd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (pfd >= 0) {
		/* poll on the pidfd: wait4 afterwards adds no polling delay to the wall time */
		double end = now_s() + timeout_s;
		for (;;) {
			struct pollfd p = { .fd = pfd, .events = POLLIN };
			double left = end - now_s();
			if (left <= 0) {
				kill(pid, SIGKILL);
				*timed_out = true;
				break;
			}
			int r = poll(&p, 1, left > 1000 ? 1000000 : (int)(left * 1000) + 1);
			if (r > 0)
				break;
		}
		close(pfd);
	}
	while (wait4(pid, &st, 0, ru) < 0)
		if (errno != EINTR)
			return -1;
	return *timed_out ? -1 : st;
}

/* One line on stderr saying how a program or setup run ended, when it is not as
 * expected; 0 when it is. */
static int judge_status(const struct cmp *c, const char *where, const char *what, int st,
			bool timed_out, const char *outname)
{
	if (timed_out) {
		fprintf(stderr, "hwsync compare: %s: %s took longer than --timeout %g s (killed); "
			"output in %s/%s\n", where, what, c->timeout_s, c->out_dir, outname);
		return 1;
	}
	if (st < 0) {
		fprintf(stderr, "hwsync compare: %s: wait4: %s\n", where, strerror(errno));
		return 1;
	}
	if (WIFSIGNALED(st)) {
		fprintf(stderr, "hwsync compare: %s: %s killed by signal %d (%s); output in %s/%s\n",
			where, what, WTERMSIG(st), strsignal(WTERMSIG(st)), c->out_dir, outname);
		return 1;
	}
	return 0;
}

static int run_setup(const struct cmp *c, const char *where)
{
	char *argv[] = { "/bin/sh", "-c", (char *)c->setup, NULL };
	extern char **environ;
	posix_spawn_file_actions_t fa;
	struct rusage ru;
	bool to;
	pid_t pid;
	int fd = open_out(c->out_dir, "setup.log", O_APPEND), rc;

	if (fd < 0) {
		fprintf(stderr, "hwsync compare: %s/setup.log: %s\n", c->out_dir, strerror(errno));
		return 1;
	}
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, fd, 1);
	posix_spawn_file_actions_adddup2(&fa, fd, 2);
	rc = posix_spawn(&pid, argv[0], &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(fd);
	if (rc) {
		fprintf(stderr, "hwsync compare: --setup: cannot run /bin/sh: %s\n", strerror(rc));
		return 1;
	}
	int st = wait_child(pid, c->timeout_s, &ru, &to);
	if (judge_status(c, where, "--setup", st, to, "setup.log"))
		return 1;
	if (WEXITSTATUS(st)) {
		fprintf(stderr, "hwsync compare: %s: --setup '%s' exited with status %d; output in "
			"%s/setup.log\n", where, c->setup, WEXITSTATUS(st), c->out_dir);
		return 1;
	}
	return 0;
}

/* Run the program once under configuration k; files named PREFIX.out/.err. */
static int run_once(const struct cmp *c, unsigned k, const char *where, const char *prefix,
		    struct cmp_run *out)
{
	char name[256];
	posix_spawn_file_actions_t fa;
	struct rusage ru;
	bool to;
	pid_t pid;
	int fo, fe, rc;

	if (c->setup && run_setup(c, where))
		return 1;
	snprintf(name, sizeof name, "%s.out", prefix);
	fo = open_out(c->out_dir, name, O_TRUNC);
	snprintf(name, sizeof name, "%s.err", prefix);
	fe = open_out(c->out_dir, name, O_TRUNC);
	if (fo < 0 || fe < 0) {
		fprintf(stderr, "hwsync compare: %s/%s: %s\n", c->out_dir, name, strerror(errno));
		if (fo >= 0)
			close(fo);
		return 1;
	}
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, fo, 1);
	posix_spawn_file_actions_adddup2(&fa, fe, 2);
	double t0 = now_s();
	rc = posix_spawnp(&pid, c->argv[0], &fa, NULL, c->argv, c->cfg[k].env);
	posix_spawn_file_actions_destroy(&fa);
	close(fo);
	close(fe);
	if (rc) {
		fprintf(stderr, "hwsync compare: cannot run '%s': %s\n", c->argv[0], strerror(rc));
		return 1;
	}
	int st = wait_child(pid, c->timeout_s, &ru, &to);
	out->wall_s = now_s() - t0;
	snprintf(name, sizeof name, "%s.err", prefix);
	if (judge_status(c, where, c->argv[0], st, to, name))
		return 1;
	out->exit_status = WEXITSTATUS(st);
	if (out->exit_status != c->expect_status) {
		fprintf(stderr, "hwsync compare: %s: %s exited with status %d, not %d%s; output in "
			"%s/%s\n", where, c->argv[0], out->exit_status, c->expect_status,
			c->expect_status ? "" : " (--expect-status N accepts another)", c->out_dir,
			name);
		return 1;
	}
	out->cpu_s = (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
		     (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
	out->rss_kib = ru.ru_maxrss;
	return 0;
}

/* Do DIR/A and DIR/B hold the same bytes?  -1 when equal, else the offset of
 * the first difference. */
static long long first_difference(const char *dir, const char *a, const char *b)
{
	char pa[PATH_MAX], pb[PATH_MAX];
	snprintf(pa, sizeof pa, "%s/%s", dir, a);
	snprintf(pb, sizeof pb, "%s/%s", dir, b);
	FILE *fa = fopen(pa, "rb"), *fb = fopen(pb, "rb");
	long long off = fa && fb ? -1 : 0;

	for (long long i = 0; fa && fb; i++) {
		int x = getc(fa), y = getc(fb);
		if (x != y) {
			off = i;
			break;
		}
		if (x == EOF)
			break;
	}
	if (fa)
		fclose(fa);
	if (fb)
		fclose(fb);
	return off;
}

static void fmt_dur(double s, char *buf, size_t len)
{
	long t = s < 0 ? 0 : s > 1e7 ? 10000000 : lround(s);
	if (t >= 3600)
		snprintf(buf, len, "%ld:%02ld:%02ld", t / 3600, t / 60 % 60, t % 60);
	else
		snprintf(buf, len, "%ld:%02ld", t / 60, t % 60);
}

/* Every round: warm-up rounds first (discarded), then the measured ones. */
static int run_rounds(struct cmp *c)
{
	unsigned total = c->warmup + c->rounds, started_runs = 0;
	double t_start = now_s(), round_sum = 0;

	for (unsigned r = 0; r < total; r++) {
		bool warm = r < c->warmup;
		unsigned m = r - c->warmup;   /* measured round index */
		double el = now_s() - t_start;
		/* the first measured round always runs; later ones must fit */
		if (c->budget_s > 0 && !warm && m > 0 && el + round_sum / r > c->budget_s) {
			c->budget_stop = true;
			break;
		}
		double busy0 = machine_busy_s(), own0 = own_cpu_s(), r0 = now_s();
		unsigned first = r % c->ncfg;
		for (unsigned i = 0; i < c->ncfg; i++) {
			unsigned k = (first + i) % c->ncfg;
			char where[160], prefix[192], e1[32], e2[32];
			struct cmp_run run = { 0 };
			snprintf(where, sizeof where, "%s round %u, %s", warm ? "warm-up" : "",
				 warm ? r + 1 : m + 1, c->cfg[k].name);
			snprintf(prefix, sizeof prefix, "%c%u-%s", warm ? 'w' : 'r',
				 warm ? r + 1 : m + 1, c->cfg[k].slug);
			if (!c->quiet) {
				double now = now_s() - t_start, left;
				/* runs left times the mean run so far, at most the budget left */
				left = started_runs ? now / started_runs *
					(double)(total * c->ncfg - started_runs) : -1;
				if (c->budget_s > 0 && left > c->budget_s - now)
					left = c->budget_s - now;
				fmt_dur(now, e1, sizeof e1);
				fmt_dur(left, e2, sizeof e2);
				fprintf(stderr, "hwsync compare: %s %u/%u  %-20s elapsed %s  left %s%s\n",
					warm ? "warm-up" : "round", warm ? r + 1 : m + 1,
					warm ? c->warmup : c->rounds, c->cfg[k].name, e1,
					started_runs ? "~" : "?", started_runs ? e2 : "");
			}
			started_runs++;
			if (run_once(c, k, where[0] == ' ' ? where + 1 : where, prefix, &run))
				return 1;
			if (!warm)
				c->runs[m * c->ncfg + k] = run;
		}
		if (c->check_output && !warm) {
			char a[192], b[192];
			snprintf(a, sizeof a, "r%u-%s.out", m + 1, c->cfg[c->ref].slug);
			for (unsigned k = 0; k < c->ncfg; k++) {
				snprintf(b, sizeof b, "r%u-%s.out", m + 1, c->cfg[k].slug);
				long long off = k == c->ref ? -1 : first_difference(c->out_dir, a, b);
				if (off >= 0) {
					fprintf(stderr, "hwsync compare: --check-output: round %u: %s's "
						"output differs from %s's at byte %lld (%s/%s, %s)\n",
						m + 1, c->cfg[k].name, c->cfg[c->ref].name, off,
						c->out_dir, b, a);
					return 1;
				}
			}
		}
		double rw = now_s() - r0;
		round_sum += rw;
		if (warm)
			continue;
		struct cmp_round *ro = &c->round[m];
		double busy1 = machine_busy_s(), own = own_cpu_s() - own0;
		long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
		ro->first = first;
		ro->wall_s = rw;
		ro->other = busy0 >= 0 && busy1 >= 0 && ncpu > 0 && rw > 0 ?
			    fmax(0, (busy1 - busy0 - own) / (rw * (double)ncpu)) : -1;
		ro->flagged = ro->other > CMP_BUSY_LIMIT;
		c->done = m + 1;
	}
	c->elapsed_s = now_s() - t_start;
	return 0;
}

/* ---- options ------------------------------------------------------------- */

static int num_arg(const char *opt, const char *v, double lo, double *out)
{
	char *end;
	errno = 0;
	double x = strtod(v, &end);
	if (errno || end == v || *end || !isfinite(x) || x < lo) {
		fprintf(stderr, "hwsync compare: %s '%s': expected a number >= %g\n", opt, v, lo);
		return 2;
	}
	*out = x;
	return 0;
}

static int make_out_dir(struct cmp *c, char *buf, size_t len)
{
	if (!c->out_dir) {
		time_t t = time(NULL);
		struct tm tm;
		localtime_r(&t, &tm);
		strftime(buf, len, "hwsync-compare-%Y%m%d-%H%M%S", &tm);
		c->out_dir = buf;
	}
	if (mkdir(c->out_dir, 0755) && errno != EEXIST) {
		fprintf(stderr, "hwsync compare: --out-dir '%s': %s\n", c->out_dir, strerror(errno));
		return 2;
	}
	struct stat st;
	if (stat(c->out_dir, &st) || !S_ISDIR(st.st_mode)) {
		fprintf(stderr, "hwsync compare: --out-dir '%s': not a directory\n", c->out_dir);
		return 2;
	}
	int fd = open_out(c->out_dir, "setup.log", O_TRUNC);
	if (fd < 0) {
		fprintf(stderr, "hwsync compare: --out-dir '%s': %s\n", c->out_dir, strerror(errno));
		return 2;
	}
	close(fd);
	return 0;
}

/* Each configuration's environment: ours without HWSYNC_* and without any
 * earlier copy of the shim, plus the shim and the configuration's settings. */
static int make_envs(struct cmp *c, const char *lib)
{
	char path[PATH_MAX];

	if (hws_cli_preload_path("compare", lib, path, sizeof path))
		return 2;
	for (unsigned k = 0; k < c->ncfg; k++) {
		struct cmp_config *g = &c->cfg[k];
		char lock[64], wait[128];
		const char *set[3] = { NULL, NULL, NULL };
		snprintf(lock, sizeof lock, "HWSYNC_LOCK=%s", g->lock);
		snprintf(wait, sizeof wait, "HWSYNC_WAIT=%s", g->wait);
		if (!g->native) {
			set[0] = lock;
			set[1] = g->wait[0] ? wait : NULL;
		}
		g->env = bench_env_new("HWSYNC_", g->native ? NULL : path, PRELOAD_NAME, set);
		if (!g->env) {
			fprintf(stderr, "hwsync compare: out of memory\n");
			return 1;
		}
	}
	return 0;
}

int hws_cmd_compare(int argc, char **argv)
{
	static struct cmp c;
	const char *configs = NULL, *lib = NULL;
	char defaults[256], dirbuf[64];
	double rounds = 5, warmup = 0;
	int i, rc;

	c.expect_status = 0;
	for (i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		double x;
		bool takes = !strcmp(a, "--configs") || !strcmp(a, "-n") || !strcmp(a, "--rounds") ||
			     !strcmp(a, "--warmup") || !strcmp(a, "--budget") ||
			     !strcmp(a, "--timeout") || !strcmp(a, "--setup") ||
			     !strcmp(a, "--expect-status") || !strcmp(a, "--out") ||
			     !strcmp(a, "--out-dir") || !strcmp(a, "--preload");
		if (!strcmp(a, "--")) {
			i++;
			break;
		}
		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			print_usage();
			return 0;
		}
		if (takes && !v) {
			fprintf(stderr, "hwsync compare: %s needs a value\n", a);
			return 2;
		}
		if (!strcmp(a, "--check-output")) {
			c.check_output = true;
		} else if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) {
			c.quiet = true;
		} else if (!strcmp(a, "--configs")) {
			configs = v;
		} else if (!strcmp(a, "-n") || !strcmp(a, "--rounds")) {
			if (num_arg(a, v, 1, &rounds))
				return 2;
			if (rounds != floor(rounds) || rounds > 10000) {
				fprintf(stderr, "hwsync compare: %s '%s': expected a whole number "
					"from 1 to 10000\n", a, v);
				return 2;
			}
		} else if (!strcmp(a, "--warmup")) {
			if (num_arg(a, v, 0, &warmup))
				return 2;
			if (warmup != floor(warmup) || warmup > 100) {
				fprintf(stderr, "hwsync compare: --warmup '%s': expected a whole "
					"number from 0 to 100\n", v);
				return 2;
			}
		} else if (!strcmp(a, "--budget") || !strcmp(a, "--timeout")) {
			if (num_arg(a, v, 0, &x))
				return 2;
			if (x <= 0) {
				fprintf(stderr, "hwsync compare: %s '%s': expected seconds > 0\n", a, v);
				return 2;
			}
			*(a[2] == 'b' ? &c.budget_s : &c.timeout_s) = x;
		} else if (!strcmp(a, "--expect-status")) {
			if (num_arg(a, v, 0, &x))
				return 2;
			if (x != floor(x) || x > 255) {
				fprintf(stderr, "hwsync compare: --expect-status '%s': expected 0 to "
					"255\n", v);
				return 2;
			}
			c.expect_status = (int)x;
		} else if (!strcmp(a, "--setup")) {
			c.setup = v;
		} else if (!strcmp(a, "--out")) {
			c.out = v;
		} else if (!strcmp(a, "--out-dir")) {
			c.out_dir = v;
		} else if (!strcmp(a, "--preload")) {
			lib = v;
		} else if (a[0] == '-') {
			fprintf(stderr, "hwsync compare: unknown option '%s' (try: hwsync compare "
				"--help)\n", a);
			return 2;
		} else {
			break;   /* the program, without a "--" */
		}
		if (takes)
			i++;
	}
	if (i >= argc) {
		fprintf(stderr, "hwsync compare: no program given (usage: hwsync compare [options] "
			"-- PROGRAM [ARGS...])\n");
		return 2;
	}
	c.argv = argv + i;
	c.argc = argc - i;
	if (!configs) {
		default_configs(defaults, sizeof defaults);
		configs = defaults;
	}
	if ((rc = parse_configs(&c, configs)))
		return rc;
	c.ref = 0;
	for (unsigned k = 0; k < c.ncfg; k++)
		if (c.cfg[k].native) {
			c.ref = k;
			break;
		}
	if (c.out) {   /* can we write it?  Leave no empty file behind if the run fails */
		struct stat st;
		bool existed = stat(c.out, &st) == 0;
		FILE *f = fopen(c.out, "a");
		if (!f) {
			fprintf(stderr, "hwsync compare: --out '%s': %s\n", c.out, strerror(errno));
			return 2;
		}
		fclose(f);
		if (!existed)
			unlink(c.out);
	}
	c.rounds = (unsigned)rounds;
	c.warmup = (unsigned)warmup;
	size_t n = (size_t)snprintf(c.cmdline, sizeof c.cmdline, "hwsync");
	for (int k = 0; k < argc; k++)
		n = cmp_append_quoted(c.cmdline, sizeof c.cmdline, n, argv[k]);
	if ((rc = make_out_dir(&c, dirbuf, sizeof dirbuf)) || (rc = make_envs(&c, lib)))
		return rc;
	c.runs = calloc((size_t)c.rounds * c.ncfg, sizeof *c.runs);
	c.round = calloc(c.rounds, sizeof *c.round);
	if (!c.runs || !c.round) {
		fprintf(stderr, "hwsync compare: out of memory\n");
		return 1;
	}
	hws_cli_undo_omp_binding();
	if (run_rounds(&c))
		return 1;
	cmp_print_report(&c);
	return c.out && cmp_write_json(&c) ? 1 : 0;
}

/* hwsync report: runs tools/report/report.py (Python 3 + matplotlib) on a
 * bench results file.  The script is found next to the source tree the
 * executable was built in (build/hwsync -> tools/report/report.py) or in the
 * installed data directory; Python is $HWS_PYTHON, the repository's .venv
 * (scripts/venv.sh) or python3 on PATH, whichever has matplotlib. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>
#include "tool/cli.h"

static const char help[] =
"NAME\n"
"    hwsync report - plots and a readable report from bench results\n"
"\n"
"SYNOPSIS\n"
"    hwsync report RESULTS.json -o DIR\n"
"\n"
"DESCRIPTION\n"
"    Reads the JSON written by `hwsync bench ... --out RESULTS.json` (schema\n"
"    hwsync-bench/1, docs/bench-schema.md) and writes into DIR: PNG plots that\n"
"    mirror the papers' tables and figures (one bar chart per metric; [AK08]\n"
"    Fig. 4 for asym; [T2SPIN]'s slowdown per kernel for interference),\n"
"    DIR/report.md and DIR/report.html with the machine description, a table\n"
"    per experiment with each row's ratio to the best peer in the same run,\n"
"    and what was skipped and why.\n"
"\n"
"    Needs Python 3 with matplotlib: scripts/venv.sh creates .venv at the top\n"
"    of the source tree with it (make demo does so).  $HWS_PYTHON selects\n"
"    another interpreter.\n"
"\n"
"OPTIONS\n"
"    -o DIR       output directory (created)\n"
"    -h, --help   this text\n"
"\n"
"EXIT STATUS\n"
"    0 on success; 1 with one line on stderr when the results cannot be read\n"
"    or Python/matplotlib is missing; 2 for bad usage.\n";

static bool exists(const char *p, int mode)
{
	return access(p, mode) == 0;
}

/* Directory of the running executable. */
static int exe_dir(char *buf, size_t len)
{
	ssize_t n = readlink("/proc/self/exe", buf, len - 1);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	char *d = dirname(buf);
	memmove(buf, d, strlen(d) + 1);
	return 0;
}

static bool has_matplotlib(const char *python)
{
	int status;
	pid_t pid = fork();
	if (pid < 0)
		return false;
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);
		if (null >= 0) {
			dup2(null, 1);
			dup2(null, 2);
		}
		execlp(python, python, "-c", "import matplotlib", (char *)NULL);
		_exit(127);
	}
	return waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

int hws_cmd_report(int argc, char **argv)
{
	const char *in = NULL, *out = NULL;
	char dir[PATH_MAX], script[PATH_MAX + 64], venv[PATH_MAX + 64];
	const char *python = NULL;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			fputs(help, stdout);
			return 0;
		} else if (!strcmp(argv[i], "-o") || !strcmp(argv[i], "--out")) {
			if (++i == argc) {
				fprintf(stderr, "hwsync report: -o needs a directory\n");
				return 2;
			}
			out = argv[i];
		} else if (argv[i][0] == '-') {
			fprintf(stderr, "hwsync report: unknown option '%s' (try: hwsync report --help)\n",
				argv[i]);
			return 2;
		} else if (!in) {
			in = argv[i];
		} else {
			fprintf(stderr, "hwsync report: unexpected argument '%s'\n", argv[i]);
			return 2;
		}
	}
	if (!in || !out) {
		fprintf(stderr, "usage: hwsync report RESULTS.json -o DIR\n");
		return 2;
	}
	if (exe_dir(dir, sizeof dir)) {
		fprintf(stderr, "hwsync report: cannot find the executable's directory\n");
		return 1;
	}
	/* build tree: <src>/build/hwsync; install: <prefix>/bin/hwsync */
	snprintf(script, sizeof script, "%s/../tools/report/report.py", dir);
	snprintf(venv, sizeof venv, "%s/../.venv/bin/python3", dir);
	if (!exists(script, R_OK)) {
		snprintf(script, sizeof script, "%s/../share/hwsync/report.py", dir);
		if (!exists(script, R_OK)) {
			fprintf(stderr, "hwsync report: report.py not found (looked in %s/../tools/report "
				"and %s/../share/hwsync)\n", dir, dir);
			return 1;
		}
	}
	const char *env = getenv("HWS_PYTHON");
	if (env && *env)
		python = env;
	else if (exists(venv, X_OK) && has_matplotlib(venv))
		python = venv;
	else if (has_matplotlib("python3"))
		python = "python3";
	if (!python || (env && *env && !has_matplotlib(python))) {
		fprintf(stderr, "hwsync report: no Python 3 with matplotlib%s%s; create it with: "
			"scripts/venv.sh (in the source tree), or pip install matplotlib\n",
			env && *env ? " at $HWS_PYTHON=" : "", env && *env ? env : "");
		return 1;
	}
	fflush(stdout);
	execlp(python, python, script, in, "-o", out, (char *)NULL);
	fprintf(stderr, "hwsync report: cannot run %s: %s\n", python, strerror(errno));
	return 1;
}

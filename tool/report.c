/* hwsync report: runs tools/report/report.py (Python 3 + matplotlib) on a
 * bench results file.  The script is found next to the source tree the
 * executable was built from (named by the file source-dir in its build
 * directory, or the tree around build/hwsync) or in the installed data
 * directory; Python is $HWS_PYTHON, else /usr/bin/python3
 * (Debian's python3-matplotlib), else for a build in its source tree the
 * tree's .venv (scripts/venv.sh) or python3 on PATH, whichever has
 * matplotlib first. */
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
"    hwsync report A.json B.json [...] -o DIR\n"
"\n"
"DESCRIPTION\n"
"    Reads the JSON written by `hwsync bench ... --out RESULTS.json` (schema\n"
"    hwsync-bench/2 or /1, docs/bench-schema.md) and writes into DIR\n"
"    report.html (a summary first: the machine, what was skipped and why, the\n"
"    key numbers per experiment; then per experiment line plots shaped like\n"
"    the papers' figures, one panel per placement, and the full sortable\n"
"    table), report.md, the PNG figures and figures.json (what each figure\n"
"    plots, for tests and scripts).\n"
"\n"
"    With two or more files it compares the runs: rows matched by their\n"
"    identifying fields, per metric the ratio of each later run to the first\n"
"    with a 95% interval, rows found in one run only listed (docs/report.md).\n"
"    It also draws the JSON of `hwsync compare` and the contention profile\n"
"    of `hwsync run --profile` when given one.\n"
"\n"
"    Needs Python 3 with matplotlib.  It uses /usr/bin/python3 when that has\n"
"    matplotlib (Debian: apt-get install python3-matplotlib); a build run from\n"
"    its build directory (wherever that is) then tries its source tree's\n"
"    .venv (scripts/venv.sh) and python3 on PATH.  $HWS_PYTHON selects\n"
"    another interpreter.\n"
"\n"
"OPTIONS\n"
"    -o DIR       output directory (created)\n"
"    -h, --help   this text\n"
"\n"
"EXIT STATUS\n"
"    0 on success; 1 with one line on stderr when a file cannot be read or\n"
"    Python/matplotlib is missing; 2 for bad usage.\n";

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

/* The source tree of a build run from its build directory: the first line of
 * DIR/source-dir, which the build system writes there (a build directory
 * may be anywhere, and an installed hwsync has no such file beside it), else
 * DIR/.. for a build inside its tree.  The tree is the one that holds
 * tools/report/report.py; 0, or -1 when there is none. */
static int source_tree(const char *dir, char *tree, size_t len)
{
	char p[PATH_MAX + 64];
	FILE *f;

	snprintf(p, sizeof p, "%s/source-dir", dir);
	tree[0] = '\0';
	if ((f = fopen(p, "r"))) {
		if (!fgets(tree, (int)len, f))
			tree[0] = '\0';
		tree[strcspn(tree, "\n")] = '\0';
		fclose(f);
	}
	if (!tree[0] && (size_t)snprintf(tree, len, "%s/..", dir) >= len)
		return -1;
	snprintf(p, sizeof p, "%s/tools/report/report.py", tree);
	return exists(p, R_OK) ? 0 : -1;
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

#define SYSTEM_PYTHON "/usr/bin/python3"
#define MAX_INPUTS 16

int hws_cmd_report(int argc, char **argv)
{
	const char *in[MAX_INPUTS], *out = NULL;
	unsigned nin = 0;
	char dir[PATH_MAX], tree[PATH_MAX], script[PATH_MAX + 64], venv[PATH_MAX + 64];
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
		} else if (nin == MAX_INPUTS) {
			fprintf(stderr, "hwsync report: at most %d files\n", MAX_INPUTS);
			return 2;
		} else {
			in[nin++] = argv[i];
		}
	}
	if (!nin || !out) {
		fprintf(stderr, "usage: hwsync report RESULTS.json [MORE.json ...] -o DIR\n");
		return 2;
	}
	if (exe_dir(dir, sizeof dir)) {
		fprintf(stderr, "hwsync report: cannot find the executable's directory\n");
		return 1;
	}
	/* A build run from its build directory uses its source tree's
	 * report.py and may fall back on the tree's venv; an installed one
	 * (<prefix>/bin/hwsync) uses <prefix>/share/hwsync and only the system
	 * Python, never a venv of some source tree. */
	bool in_tree = !source_tree(dir, tree, sizeof tree);
	if (in_tree) {
		snprintf(script, sizeof script, "%s/tools/report/report.py", tree);
		snprintf(venv, sizeof venv, "%s/.venv/bin/python3", tree);
	} else {
		snprintf(script, sizeof script, "%s/../share/hwsync/report.py", dir);
		if (!exists(script, R_OK)) {
			fprintf(stderr, "hwsync report: report.py not found (neither a build directory "
				"with a source tree nor %s/../share/hwsync)\n", dir);
			return 1;
		}
	}
	const char *env = getenv("HWS_PYTHON");
	if (env && *env) {
		if (has_matplotlib(env))
			python = env;
	} else if (exists(SYSTEM_PYTHON, X_OK) && has_matplotlib(SYSTEM_PYTHON)) {
		python = SYSTEM_PYTHON;
	} else if (in_tree && exists(venv, X_OK) && has_matplotlib(venv)) {
		python = venv;
	} else if (in_tree && has_matplotlib("python3")) {
		python = "python3";
	}
	if (!python) {
		if (env && *env)
			fprintf(stderr, "hwsync report: no matplotlib for $HWS_PYTHON=%s\n", env);
		else
			fprintf(stderr, "hwsync report: no Python 3 with matplotlib; install it with: "
				"apt-get install python3-matplotlib%s\n",
				in_tree ? " (or run scripts/venv.sh in the source tree)" : "");
		return 1;
	}
	char *args[MAX_INPUTS + 5];
	unsigned n = 0;
	args[n++] = (char *)python;
	args[n++] = script;
	for (unsigned i = 0; i < nin; i++)
		args[n++] = (char *)in[i];
	args[n++] = "-o";
	args[n++] = (char *)out;
	args[n] = NULL;
	fflush(stdout);
	execvp(python, args);
	fprintf(stderr, "hwsync report: cannot run %s: %s\n", python, strerror(errno));
	return 1;
}

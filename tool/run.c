/* hwsync run: run a program with the LD_PRELOAD shim under its pthread and
 * OpenMP calls.  Options become HWSYNC_* environment variables (checked
 * here, so a typo is one line and exit 2 rather than a silent native run);
 * the shim library found next to this executable, or in the installed
 * libdir, is prepended to LD_PRELOAD; then the program replaces us, so its
 * exit status is the status of `hwsync run`. */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <hwsync/barrier.h>
#include <hwsync/lock.h>
#include <hwsync/rwlock.h>
#include <hwsync/wait.h>
#include "bench/child.h"
#include "tool/cli.h"
#if HWS_HAVE_OPENMP
#include <omp.h>

/* This tool links GNU libgomp (for the bench peers).  When OMP_PROC_BIND or
 * OMP_PLACES is set, libgomp's start-up binds our initial thread to the first
 * place, and the program we exec would inherit that one-place CPU mask (an
 * OpenMP program's threads would then all share one CPU).  Give it back the
 * union of the places, which libgomp built from the mask we started with. */
void hws_cli_undo_omp_binding(void)
{
	int nplaces = omp_get_num_places();
	cpu_set_t set;

	if (nplaces <= 0)
		return;
	CPU_ZERO(&set);
	for (int p = 0; p < nplaces; p++) {
		int n = omp_get_place_num_procs(p), ids[CPU_SETSIZE];
		if (n <= 0 || n > CPU_SETSIZE)
			continue;
		omp_get_place_proc_ids(p, ids);
		for (int k = 0; k < n; k++)
			if (ids[k] >= 0 && ids[k] < CPU_SETSIZE)
				CPU_SET(ids[k], &set);
	}
	if (CPU_COUNT(&set))
		sched_setaffinity(0, sizeof set, &set);
}
#else
void hws_cli_undo_omp_binding(void) {}
#endif

#ifndef HWS_LIBDIR
#define HWS_LIBDIR "/usr/local/lib"
#endif
#define PRELOAD_NAME "libhwsync-preload.so"

static const char usage[] =
"usage: hwsync run [--lock KIND] [--wait POLICY] [--barrier KIND] [--rwlock KIND]\n"
"                  [--stats] [--trace FILE] [--profile[=FILE]] [--verbose]\n"
"                  [--preload LIB]\n""                  -- PROGRAM [ARGS...]\n"
"\n"
"Runs PROGRAM with libhwsync-preload.so: its default pthread mutexes, condition\n"
"variables, spin locks, barriers, rwlocks and unnamed semaphores, and its GNU OpenMP\n"
"locks, critical sections and barriers use hwsync.  The exit status is PROGRAM's.\n"
"\n"
"  --lock KIND      lock kind (HWSYNC_LOCK; default auto)\n"
"  --wait POLICY    wait policy spec (HWSYNC_WAIT; default adaptive)\n"
"  --barrier KIND   barrier kind (HWSYNC_BARRIER) of OpenMP teams; default auto:\n"
"                   dissemination for a team of two threads, else central; the\n"
"                   barriers that end dynamic, guided and ordered\n"
"                   loops and sections join it only with HWSYNC_OMP_ENDS=1 (off\n"
"                   by default: slower than libgomp's own end on an idle machine)\n"
"  --rwlock KIND    rwlock algorithm (HWSYNC_RWLOCK; default reader), within glibc's\n"
"                   kinds: reader or bravo for default rwlocks (which read\n"
"                   recursively); rwlocks made with PREFER_WRITER_NONRECURSIVE_NP\n"
"                   always run writer; `writer` leaves default rwlocks on reader\n"
"  --stats          summary on stderr at exit (HWSYNC_STATS=1)\n"
"  --trace FILE     Chrome trace-event JSON of lock and barrier waits (HWSYNC_TRACE),\n"
"                   one file per process: %%p in FILE is the pid, %%h the host; else a\n"
"                   second live process writes FILE.<pid>\n"
"  --profile[=FILE] contention profile: per object, acquisitions, contended ones,\n"
"                   wait and hold times and where it was first contended from; the\n"
"                   top 10 on stderr at exit, every object as JSON in FILE (%%p: the\n"
"                   process id; read it with `hwsync profile FILE`) (HWSYNC_PROFILE)\n"
"  --verbose        say what is passed to the native implementation (HWSYNC_VERBOSE=1)\n"
"  --preload LIB    the shim library to use (default: next to hwsync, then %s)\n";

static void print_usage(void)
{
	printf(usage, HWS_LIBDIR);
	printf("\n");
	hws_cli_print_list(stdout, "lock kinds", 16, hws_lock_kinds(), NULL);
	hws_cli_print_list(stdout, "barrier kinds", 16, hws_barrier_kinds(),
			   "(and auto, the default)");
	hws_cli_print_list(stdout, "rwlock kinds", 16, hws_rwlock_kinds(), NULL);
	hws_cli_print_list(stdout, "wait policies", 16, hws_wait_kinds(),
			   "(which of them this machine has: hwsync info)");
}

/* An output file spec (docs/preload.md): only %p, %h and %% as % sequences,
 * and a writable folder.  Nothing is created or truncated here: under a
 * launcher, another rank may already be writing the file. */
static int check_output(const char *opt, const char *spec)
{
	char dir[PATH_MAX];
	const char *slash = strrchr(spec, '/');
	for (const char *s = spec; *s; s++)
		if (*s == '%' && !(s[1] == 'p' || s[1] == 'h' || s[1] == '%')) {
			fprintf(stderr, "hwsync run: %s '%s': unknown '%%%c' (known: %%p, "
				"%%h, %%%%)\n", opt, spec, s[1] ? s[1] : ' ');
			return -1;
		} else if (*s == '%') {
			s++;
		}
	if (!*spec || (slash && slash[1] == 0)) {
		fprintf(stderr, "hwsync run: %s '%s': not a file name\n", opt, spec);
		return -1;
	}
	snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - spec) + 1 : 1,
		 slash ? spec : ".");
	if (access(dir, W_OK | X_OK)) {
		fprintf(stderr, "hwsync run: %s '%s': %s: %s\n", opt, spec, dir, strerror(errno));
		return -1;
	}
	return 0;
}

int hws_cli_preload_path(const char *cmd, const char *lib, char *path, size_t len)
{
	if (lib) {
		if (access(lib, R_OK)) {
			fprintf(stderr, "hwsync %s: --preload '%s': %s\n", cmd, lib, strerror(errno));
			return 2;
		}
		snprintf(path, len, "%s", lib);
	} else if (bench_find_beside(PRELOAD_NAME, HWS_LIBDIR, path, len)) {
		fprintf(stderr, "hwsync %s: %s not found next to hwsync nor in %s\n", cmd,
			PRELOAD_NAME, HWS_LIBDIR);
		return 2;
	}
	return 0;
}

int hws_cmd_run(int argc, char **argv)
{
	const char *lock = NULL, *wait = NULL, *barrier = NULL, *trace = NULL, *lib = NULL;
	const char *profile = NULL, *rwlock = NULL;
	int stats = 0, verbose = 0, i;
	char buf[512];

	for (i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char **val = !strcmp(a, "--lock") ? &lock : !strcmp(a, "--wait") ? &wait :
				   !strcmp(a, "--barrier") ? &barrier :
				   !strcmp(a, "--rwlock") ? &rwlock :
				   !strcmp(a, "--trace") ? &trace :
				   !strcmp(a, "--preload") ? &lib : NULL;
		if (!strcmp(a, "--")) {
			i++;
			break;
		}
		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			print_usage();
			return 0;
		}
		if (!strcmp(a, "--stats")) {
			stats = 1;
		} else if (!strcmp(a, "--profile")) {
			profile = "1";
		} else if (!strncmp(a, "--profile=", 10)) {
			profile = a + 10;
			if (!*profile || !strcmp(profile, "0") || !strcmp(profile, "1")) {
				fprintf(stderr, "hwsync run: --profile=FILE: '%s' is not a file "
					"name\n", profile);
				return 2;
			}
		} else if (!strcmp(a, "--verbose")) {
			verbose = 1;
		} else if (val) {
			if (i + 1 >= argc) {
				fprintf(stderr, "hwsync run: %s needs a value\n", a);
				return 2;
			}
			*val = argv[++i];
		} else if (a[0] == '-') {
			fprintf(stderr, "hwsync run: unknown option '%s' (try: hwsync run "
				"--help)\n", a);
			return 2;
		} else {
			break;   /* the program, without a "--" */
		}
	}
	if (i >= argc) {
		fprintf(stderr, "hwsync run: no program given (usage: hwsync run [options] -- "
			"PROGRAM [ARGS...])\n");
		return 2;
	}
	if (lock && !hws_cli_known(hws_lock_kinds(), lock)) {
		hws_cli_join(hws_lock_kinds(), buf, sizeof buf);
		fprintf(stderr, "hwsync run: --lock '%s': unknown lock kind (known: %s)\n", lock,
			buf);
		return 2;
	}
	if (barrier && strcmp(barrier, "auto") && !hws_cli_known(hws_barrier_kinds(), barrier)) {
		hws_cli_join(hws_barrier_kinds(), buf, sizeof buf);
		fprintf(stderr, "hwsync run: --barrier '%s': unknown barrier kind (known: auto, %s)\n",
			barrier, buf);
		return 2;
	}
	if (rwlock && !hws_cli_known(hws_rwlock_kinds(), rwlock)) {
		hws_cli_join(hws_rwlock_kinds(), buf, sizeof buf);
		fprintf(stderr, "hwsync run: --rwlock '%s': unknown rwlock kind (known: %s)\n",
			rwlock, buf);
		return 2;
	}
	if (wait) {
		hws_wait_t w;
		if (hws_wait_init(&w, wait)) {
			fprintf(stderr, "hwsync run: --wait '%s': %s\n", wait, hws_last_error());
			return 2;
		}
	}
	if (trace && check_output("--trace", trace))
		return 2;
	if (profile && strcmp(profile, "1") && check_output("--profile", profile))
		return 2;
	char path[PATH_MAX];
	if (hws_cli_preload_path("run", lib, path, sizeof path))
		return 2;
	if ((lock && setenv("HWSYNC_LOCK", lock, 1)) || (wait && setenv("HWSYNC_WAIT", wait, 1)) ||
	    (barrier && setenv("HWSYNC_BARRIER", barrier, 1)) ||
	    (rwlock && setenv("HWSYNC_RWLOCK", rwlock, 1)) ||
	    (trace && setenv("HWSYNC_TRACE", trace, 1)) ||
	    (profile && setenv("HWSYNC_PROFILE", profile, 1)) ||
	    (stats && setenv("HWSYNC_STATS", "1", 1)) ||
	    (verbose && setenv("HWSYNC_VERBOSE", "1", 1))) {
		fprintf(stderr, "hwsync run: setenv: %s\n", strerror(errno));
		return 2;
	}
	const char *old = getenv("LD_PRELOAD");
	char *pre = malloc(strlen(path) + (old ? strlen(old) : 0) + 2);
	if (!pre) {
		fprintf(stderr, "hwsync run: out of memory\n");
		return 2;
	}
	sprintf(pre, "%s%s%s", path, old && *old ? ":" : "", old && *old ? old : "");
	setenv("LD_PRELOAD", pre, 1);
	hws_cli_undo_omp_binding();
	execvp(argv[i], argv + i);
	fprintf(stderr, "hwsync run: cannot run '%s': %s\n", argv[i], strerror(errno));
	return errno == ENOENT ? 127 : 126;
}

/* Child processes for experiments that measure whole programs (`shim`):
 * find a helper file, build a child's environment, run a program with a
 * time limit and collect its output, exit status, wall time and CPU time. */
#ifndef HWS_BENCH_CHILD_H
#define HWS_BENCH_CHILD_H

#include <stddef.h>
#include <stdint.h>

struct bench_child {
	uint64_t wall_ns;       /* from posix_spawn to the end of wait4 */
	double cpu_s;           /* user + system seconds, wait4's rusage */
};

/* NAME next to the running executable, else in DIR (as `hwsync run` finds the
 * shim): the path in out, 0 or ENOENT. */
int bench_find_beside(const char *name, const char *dir, char *out, size_t len);

/* A copy of our environment for a child, NULL-terminated (NULL when out of
 * memory): without the variables that start with DROP_PREFIX; LD_PRELOAD
 * rebuilt as PRELOAD (may be NULL) followed by our own preloads except those
 * whose path contains SKIP_PRELOAD; then SET ("NAME=value" strings,
 * NULL-terminated; may be NULL). */
char **bench_env_new(const char *drop_prefix, const char *preload, const char *skip_preload,
		     const char *const *set);
void bench_env_free(char **env);

/* Run argv[0] with env, its stdout and stderr into text (NUL-terminated, cut
 * at textlen), killed after timeout_ns.  0 when it exited with status 0;
 * else an errno value with why set to one line that starts with "error:". */
int bench_child_run(char *const argv[], char *const env[], uint64_t timeout_ns,
		    struct bench_child *out, char *text, size_t textlen, char *why, size_t whylen);

#endif

/* Child processes for the experiments that measure whole programs: see
 * child.h.  posix_spawn (a vfork underneath: no copy of our address space,
 * so the child starts as fast as the system allows), one pipe for stdout and
 * stderr, poll with a deadline, wait4 for the rusage. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <hwsync/hwsync.h>
#include "bench/child.h"

extern char **environ;

int bench_find_beside(const char *name, const char *dir, char *out, size_t len)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	if (n > 0) {
		exe[n] = 0;
		snprintf(out, len, "%s/%s", dirname(exe), name);
		if (access(out, R_OK) == 0)
			return 0;
	}
	snprintf(out, len, "%s/%s", dir, name);
	return access(out, R_OK) == 0 ? 0 : ENOENT;
}

void bench_env_free(char **env)
{
	for (size_t i = 0; env && env[i]; i++)
		free(env[i]);
	free(env);
}

/* env[(*k)++] = a copy of A followed by B; false when out of memory. */
static bool env_add(char **env, size_t *k, const char *a, const char *b)
{
	char *s;
	if (asprintf(&s, "%s%s", a, b) < 0)
		return false;
	env[(*k)++] = s;
	return true;
}

char **bench_env_new(const char *drop_prefix, const char *preload, const char *skip_preload,
		     const char *const *set)
{
	size_t n = 0, nset = 0, k = 0, drop = strlen(drop_prefix);
	while (environ[n])
		n++;
	while (set && set[nset])
		nset++;
	char **env = calloc(n + nset + 2, sizeof *env);   /* + LD_PRELOAD, NULL */
	const char *old = getenv("LD_PRELOAD");
	char *copy = old ? strdup(old) : NULL, *pre = strdup(preload ? preload : ""), *save;
	bool ok = env && pre && (!old || copy);

	for (size_t i = 0; i < n && ok; i++)
		if ((!drop || strncmp(environ[i], drop_prefix, drop)) &&
		    strncmp(environ[i], "LD_PRELOAD=", 11))
			ok = env_add(env, &k, environ[i], "");
	/* ld.so separates preloads by colons or spaces */
	for (char *t = ok && copy ? strtok_r(copy, ": ", &save) : NULL; t && ok;
	     t = strtok_r(NULL, ": ", &save)) {
		char *more;
		if (skip_preload && strstr(t, skip_preload))
			continue;
		ok = asprintf(&more, "%s%s%s", pre, *pre ? ":" : "", t) >= 0;
		if (ok) {
			free(pre);
			pre = more;
		}
	}
	if (ok && *pre)
		ok = env_add(env, &k, "LD_PRELOAD=", pre);
	for (size_t i = 0; i < nset && ok; i++)
		ok = env_add(env, &k, set[i], "");
	free(copy);
	free(pre);
	if (!ok) {
		bench_env_free(env);
		return NULL;
	}
	return env;
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');
	return s ? s + 1 : path;
}

int bench_child_run(char *const argv[], char *const env[], uint64_t timeout_ns,
		    struct bench_child *out, char *text, size_t textlen, char *why, size_t whylen)
{
	posix_spawn_file_actions_t fa;
	struct rusage ru;
	int fd[2], st, rc;
	pid_t pid;
	size_t n = 0;
	bool killed = false;

	if (pipe2(fd, O_CLOEXEC)) {
		rc = errno;
		snprintf(why, whylen, "error: pipe: %s", strerror(rc));
		return rc;
	}
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, fd[1], 1);
	posix_spawn_file_actions_adddup2(&fa, fd[1], 2);
	uint64_t t0 = hws_now_ns();
	rc = posix_spawn(&pid, argv[0], &fa, NULL, argv, env);
	posix_spawn_file_actions_destroy(&fa);
	close(fd[1]);
	if (rc) {
		close(fd[0]);
		snprintf(why, whylen, "error: cannot run %s: %s", argv[0], strerror(rc));
		return rc;
	}
	for (;;) {
		uint64_t el = hws_now_ns() - t0;
		if (el >= timeout_ns) {
			kill(pid, SIGKILL);
			killed = true;
			break;
		}
		struct pollfd p = { .fd = fd[0], .events = POLLIN };
		uint64_t left_ms = (timeout_ns - el) / 1000000 + 1;
		if (poll(&p, 1, left_ms > 1000 ? 1000 : (int)left_ms) <= 0)
			continue;
		char sink[256];
		bool full = n + 1 >= textlen;
		ssize_t r = read(fd[0], full ? sink : text + n, full ? sizeof sink : textlen - 1 - n);
		if (r == 0 || (r < 0 && errno != EINTR))
			break;
		if (r > 0 && !full)
			n += (size_t)r;
	}
	close(fd[0]);
	while (wait4(pid, &st, 0, &ru) < 0 && errno == EINTR)
		;
	out->wall_ns = hws_now_ns() - t0;
	text[n] = 0;
	if (killed) {
		snprintf(why, whylen, "error: %s %s did not finish in %.0f s (killed)",
			 base_name(argv[0]), argv[1], (double)timeout_ns / 1e9);
		return ETIMEDOUT;
	}
	if (!WIFEXITED(st) || WEXITSTATUS(st)) {
		snprintf(why, whylen, "error: %s %s %s %d: %.*s", base_name(argv[0]), argv[1],
			 WIFEXITED(st) ? "exited" : "killed by signal",
			 WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st),
			 (int)(strcspn(text, "\n") < 100 ? strcspn(text, "\n") : 100), text);
		return EPROTO;
	}
	out->cpu_s = (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
		     (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
	return 0;
}


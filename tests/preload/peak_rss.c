/* Run a program and record its peak resident set size, as the kernel
 * accounts it for that child alone (wait4's ru_maxrss).
 *
 * usage: peak_rss RESULT_FILE PROGRAM [ARGS...]
 * Writes "PEAK_KIB STATUS" to RESULT_FILE (STATUS is the exit status, or
 * 128 + the signal that ended it) and exits with STATUS. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: peak_rss RESULT_FILE PROGRAM [ARGS...]\n");
		return 2;
	}
	pid_t p = fork();
	if (p < 0) {
		perror("peak_rss: fork");
		return 2;
	}
	if (p == 0) {
		execvp(argv[2], argv + 2);
		perror("peak_rss: exec");
		_exit(127);
	}
	struct rusage ru;
	int st;
	while (wait4(p, &st, 0, &ru) < 0)
		if (errno != EINTR) {
			perror("peak_rss: wait4");
			return 2;
		}
	int status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	FILE *f = fopen(argv[1], "w");
	if (!f || fprintf(f, "%ld %d\n", ru.ru_maxrss, status) < 0 || fclose(f)) {
		perror("peak_rss: result file");
		return 2;
	}
	return status;
}

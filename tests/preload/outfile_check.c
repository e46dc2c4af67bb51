/* A traced program for the per-process output files (test_outfile.sh).
 *   outfile_check wait   lock a mutex, print "ready", wait for EOF on stdin
 *   outfile_check spawn  lock a mutex, fork and exec "outfile_check plain",
 *                        wait for that child, exit
 *   outfile_check plain  lock a mutex, exit
 * Each locks one mutex from two threads in turn, so its trace has spans. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static long counter;

static void *work(void *arg)
{
	(void)arg;
	for (int i = 0; i < 1000; i++) {
		pthread_mutex_lock(&m);
		counter++;
		pthread_mutex_unlock(&m);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "plain";
	pthread_t t;
	if (pthread_create(&t, NULL, work, NULL))
		return 2;
	work(NULL);
	pthread_join(t, NULL);
	if (counter != 2000)
		return 3;
	if (!strcmp(mode, "wait")) {
		char buf[64];
		printf("ready %d\n", (int)getpid());
		fflush(stdout);
		while (fread(buf, 1, sizeof buf, stdin) > 0)
			;
	} else if (!strcmp(mode, "spawn")) {
		int st;
		pid_t c = fork();
		if (c == 0) {
			execl(argv[0], argv[0], "plain", (char *)NULL);
			_exit(127);
		}
		if (c < 0 || waitpid(c, &st, 0) != c || !WIFEXITED(st) || WEXITSTATUS(st))
			return 4;
		printf("child %d\n", (int)c);
	}
	printf("pid %d\n", (int)getpid());
	return 0;
}

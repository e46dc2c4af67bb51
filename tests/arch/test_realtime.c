/* hws_realtime_permitted agrees with a direct attempt to make a thread
 * SCHED_FIFO, leaves the caller's policy and priority as they were (also
 * when the caller is real-time already), and, in a child that has given up
 * CAP_SYS_NICE and has RLIMIT_RTPRIO 0, says no and names the limit. */
#include <linux/capability.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include "common/test.h"
#include <hwsync/arch.h>

static void check_unchanged(int policy, int prio)
{
	struct sched_param p;
	int now;
	CHECK_EQ(pthread_getschedparam(pthread_self(), &now, &p), 0);
	CHECK_EQ(now, policy);
	CHECK_EQ(p.sched_priority, prio);
}

/* A direct attempt, undone: 0 or the error. */
static int try_fifo(void)
{
	struct sched_param fifo = { .sched_priority = sched_get_priority_min(SCHED_FIFO) }, other = { 0 };
	int rc = pthread_setschedparam(pthread_self(), SCHED_FIFO, &fifo);
	if (!rc)
		CHECK_EQ(pthread_setschedparam(pthread_self(), SCHED_OTHER, &other), 0);
	return rc;
}

static void drop_sys_nice(void)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2];
	CHECK_EQ(syscall(SYS_capget, &h, d), 0);
	d[CAP_SYS_NICE / 32].effective &= ~(1u << (CAP_SYS_NICE % 32));
	d[CAP_SYS_NICE / 32].permitted &= ~(1u << (CAP_SYS_NICE % 32));
	CHECK_EQ(syscall(SYS_capset, &h, d), 0);
}

int main(void)
{
	const char *why = NULL;
	bool ok = hws_realtime_permitted(&why);
	CHECK(why && *why);
	check_unchanged(SCHED_OTHER, 0);
	CHECK_EQ(ok, try_fifo() == 0);
	printf("here: %s\n", why);

	if (ok) {
		/* already real-time: the answer is yes, and the priority stays */
		int prio = sched_get_priority_min(SCHED_FIFO) + 1;
		struct sched_param fifo = { .sched_priority = prio }, other = { 0 };
		CHECK_EQ(pthread_setschedparam(pthread_self(), SCHED_FIFO, &fifo), 0);
		CHECK(hws_realtime_permitted(&why));
		check_unchanged(SCHED_FIFO, prio);
		CHECK_EQ(pthread_setschedparam(pthread_self(), SCHED_OTHER, &other), 0);
		printf("already real-time: %s\n", why);
	}

	/* refused: no CAP_SYS_NICE, RLIMIT_RTPRIO 0 */
	fflush(stdout);
	pid_t pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		struct rlimit none = { 0, 0 };
		CHECK_EQ(setrlimit(RLIMIT_RTPRIO, &none), 0);
		drop_sys_nice();
		CHECK_EQ(try_fifo(), EPERM);
		CHECK(!hws_realtime_permitted(&why));
		CHECK(strstr(why, "RLIMIT_RTPRIO is 0") != NULL);
		check_unchanged(SCHED_OTHER, 0);
		printf("without CAP_SYS_NICE and RLIMIT_RTPRIO: %s\n", why);
		fflush(stdout);
		_exit(0);
	}
	int st;
	CHECK_EQ(waitpid(pid, &st, 0), pid);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	return 0;
}

/* Whether this process may run threads under a real-time policy: asked the
 * only way that covers every reason it may not (no CAP_SYS_NICE with
 * RLIMIT_RTPRIO 0, a container's seccomp profile, a cgroup without real-time
 * runtime), by making the calling thread SCHED_FIFO at the lowest priority
 * and putting it back at once.  Used by `hwsync info`, by the benchmark
 * patterns and tests that need real-time threads, to say why they skip. */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <hwsync/arch.h>

bool hws_realtime_permitted(const char **why)
{
	static char msg[200];
	struct sched_param was, fifo = { .sched_priority = sched_get_priority_min(SCHED_FIFO) };
	int policy, rc = pthread_getschedparam(pthread_self(), &policy, &was);
	const char *w = "SCHED_FIFO permitted";

	if (!rc && (policy == SCHED_FIFO || policy == SCHED_RR)) {
		w = "this thread already runs under a real-time policy";
	} else if (!rc && !(rc = pthread_setschedparam(pthread_self(), SCHED_FIFO, &fifo))) {
		/* back to where it was: leaving a real-time policy is always allowed */
		pthread_setschedparam(pthread_self(), policy, &was);
	} else {
		struct rlimit rl;
		int n = snprintf(msg, sizeof msg, "SCHED_FIFO is not permitted here (%s", strerror(rc));
		if (rc == EPERM && !getrlimit(RLIMIT_RTPRIO, &rl) && rl.rlim_cur == 0)
			snprintf(msg + n, sizeof msg - (size_t)n,
				 ": no CAP_SYS_NICE and RLIMIT_RTPRIO is 0)");
		else
			snprintf(msg + n, sizeof msg - (size_t)n, ")");
		w = msg;   /* not thread-safe in its text only; the verdict is returned */
	}
	if (why)
		*why = w;
	return !rc;
}

/* Whether the kernel offers the rseq time-slice extension: a thread that
 * holds a lock may ask, through its rseq area, not to be preempted for a few
 * microseconds, and must then give the CPU back with rseq_slice_yield().
 * The per-process switch is prctl(PR_RSEQ_SLICE_EXTENSION); its GET call
 * fails with EINVAL on a kernel without the feature (before Linux 7.0, or
 * built without CONFIG_RSEQ_SLICE_EXTENSION).  Only detection: why hwsync
 * does not use it for lock holders is in docs/locks.md. */
#include <errno.h>
#include <string.h>
#include <sys/prctl.h>
#include <hwsync/arch.h>

#ifndef PR_RSEQ_SLICE_EXTENSION
#define PR_RSEQ_SLICE_EXTENSION 79
#define PR_RSEQ_SLICE_EXTENSION_GET 1
#endif

int hws_rseq_slice_state(const char **why)
{
	static char msg[160];
	int r = prctl(PR_RSEQ_SLICE_EXTENSION, PR_RSEQ_SLICE_EXTENSION_GET, 0, 0, 0);
	if (r >= 0) {
		if (why)
			*why = (r & 1) ? "enabled for this process" :
					 "available, not enabled for this process";
		return (r & 1) ? 2 : 1;   /* bit 0: PR_RSEQ_SLICE_EXT_ENABLE */
	}
	if (why) {
		int e = errno;
		if (e == EINVAL)
			*why = "this kernel has no rseq time-slice extension "
			       "(prctl PR_RSEQ_SLICE_EXTENSION: EINVAL; Linux 7.0 or later with "
			       "CONFIG_RSEQ_SLICE_EXTENSION)";
		else {
			/* not thread-safe in its text only; the state is returned */
			strcpy(msg, "prctl PR_RSEQ_SLICE_EXTENSION failed: ");
			strncat(msg, strerror(e), sizeof msg - strlen(msg) - 1);
			*why = msg;
		}
	}
	return 0;
}

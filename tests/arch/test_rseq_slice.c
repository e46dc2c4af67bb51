/* The rseq time-slice extension's detection agrees with the kernel's own
 * answer to the prctl GET call, on whatever kernel runs the test: offered
 * exactly when GET succeeds, enabled exactly when it reports the enable
 * bit, and a reason whenever it is not offered. */
#include <errno.h>
#include <sys/prctl.h>
#include "common/test.h"
#include <hwsync/arch.h>

int main(void)
{
	errno = 0;
	int r = prctl(79 /* PR_RSEQ_SLICE_EXTENSION */, 1 /* _GET */, 0, 0, 0);
	int e = errno;
	const char *why = NULL;
	int state = hws_rseq_slice_state(&why);

	CHECK(why && *why);
	if (r < 0) {
		CHECK_EQ(state, 0);
		if (e == EINVAL)
			CHECK(strstr(why, "EINVAL") != NULL);
	} else {
		CHECK_EQ(state, (r & 1) ? 2 : 1);   /* bit 0: PR_RSEQ_SLICE_EXT_ENABLE */
	}
	printf("rseq time-slice extension: prctl GET = %d (%s); hwsync: %d, %s\n", r,
	       r < 0 ? strerror(e) : "ok", state, why);
	return 0;
}

/* The rseq time-slice extension.  Its detection agrees with the kernel's
 * own answer to the prctl GET call, on whatever kernel runs the test:
 * offered exactly when GET succeeds, enabled exactly when it reports the
 * enable bit, and a reason whenever it is not offered.  A lock holder's
 * first hold switches it on for its thread exactly where the kernel offers
 * it.  And the holders' protocol, on a control word of the test's own (as
 * if the kernel offered it): only the outermost hold asks, its end clears
 * the request, and yields exactly when the kernel granted meanwhile. */
#include <errno.h>
#include <sys/prctl.h>
#include "common/test.h"
#include <hwsync/arch.h>

static int yields;
static int count_yield(void)
{
	yields++;
	return 0;
}

static void protocol(void)
{
	volatile uint8_t ctl[4] = { 0 };
	hws_slice_fake(ctl, count_yield);
	hws_slice_unhold();                  /* holds nothing: no change */
	CHECK_EQ(ctl[0], 0);
	hws_slice_hold();
	CHECK_EQ(ctl[0], 1);                 /* asked */
	hws_slice_hold();                    /* a second lock */
	hws_slice_unhold();
	CHECK_EQ(ctl[0], 1);                 /* the outer hold still asks */
	hws_slice_unhold();
	CHECK_EQ(ctl[0], 0);
	CHECK_EQ(yields, 0);                 /* not granted: no yield */
	hws_slice_hold();
	ctl[0] = 0;                          /* the kernel grants: request -> granted */
	ctl[1] = 1;
	hws_slice_unhold();
	CHECK_EQ(yields, 1);
	CHECK_EQ(ctl[0], 0);
	ctl[1] = 0;                          /* the yield ended the grant */
	hws_slice_unhold();                  /* a stray unlock */
	hws_slice_hold();
	CHECK_EQ(ctl[0], 1);
	hws_slice_unhold();
	CHECK_EQ(ctl[0], 0);
	CHECK_EQ(yields, 1);
}

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

	/* A hold decides for the process and this thread: on where offered
	 * (then GET reports it enabled for this thread), else off. */
	const char *off = getenv("HWSYNC_SLICE");
	hws_slice_hold();
	hws_slice_unhold();
	int mode = atomic_load(&hws_slice_mode);
	if (r < 0 || (off && !strcmp(off, "0"))) {
		CHECK_EQ(mode, 1);
	} else if (mode == 2) {
		CHECK_EQ(prctl(79, 1, 0, 0, 0) & 1, 1);
	}
	printf("after a lock hold: %s\n", mode == 2 ? "on" : "off");

	protocol();
	return 0;
}

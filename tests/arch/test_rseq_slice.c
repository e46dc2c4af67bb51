/* The rseq time-slice extension.  Its detection agrees with the kernel's
 * own answers, on whatever kernel runs the test: offered exactly when a
 * thread's prctl SET would succeed (a kernel that has the feature answers
 * GET also for a thread it would refuse: one whose rseq area glibc
 * registered at the original size), enabled exactly when GET reports the
 * enable bit, and a reason whenever it is not offered.  A lock holder's
 * first hold switches it on for the process exactly where a thread's SET
 * succeeds.  And the holders' protocol, on a control word of the test's own
 * (as if the kernel offered it): only the outermost hold asks, its end
 * clears the request, and yields exactly when the kernel granted meanwhile. */
#include <errno.h>
#include <pthread.h>
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

/* The kernel's verdicts and hwsync's, in a thread of their own: SET, the
 * oracle, switches the extension on for the thread that calls it. */
struct verdict {
	int get, get_errno, set, set_errno, state;
	const char *why;
};

static void *ask(void *arg)
{
	struct verdict *v = arg;
	errno = 0;
	v->get = prctl(79 /* PR_RSEQ_SLICE_EXTENSION */, 1 /* _GET */, 0, 0, 0);
	v->get_errno = errno;
	v->state = hws_rseq_slice_state(&v->why);
	errno = 0;
	v->set = prctl(79, 2 /* _SET */, 1 /* _ENABLE */, 0, 0);
	v->set_errno = errno;
	return NULL;
}

int main(void)
{
	struct verdict v;
	pthread_t t;
	CHECK_EQ(pthread_create(&t, NULL, ask, &v), 0);
	CHECK_EQ(pthread_join(t, NULL), 0);

	CHECK(v.why && *v.why);
	if (v.get < 0) {
		CHECK_EQ(v.state, 0);
		CHECK(v.set < 0);
		if (v.get_errno == EINVAL)
			CHECK(strstr(v.why, "EINVAL") != NULL);
		if (v.get_errno == 524 /* ENOTSUPP */)
			CHECK(strstr(v.why, "CONFIG_RSEQ_SLICE_EXTENSION") != NULL);
	} else if (v.set == 0) {
		CHECK_EQ(v.state, (v.get & 1) ? 2 : 1);   /* bit 0: PR_RSEQ_SLICE_EXT_ENABLE */
	} else {
		CHECK_EQ(v.state, 0);                      /* the kernel has it, not for us */
	}
	printf("rseq time-slice extension: prctl GET = %d (%s), SET = %d (%s); hwsync: %d, %s\n",
	       v.get, v.get < 0 ? strerror(v.get_errno) : "ok", v.set,
	       v.set < 0 ? strerror(v.set_errno) : "ok", v.state, v.why);

	/* A hold decides for the process and this thread: on exactly where a
	 * thread may switch it on (then GET reports it enabled here), else
	 * off, so that the locks keep their plain paths. */
	const char *off = getenv("HWSYNC_SLICE");
	hws_slice_hold();
	hws_slice_unhold();
	int mode = atomic_load(&hws_slice_mode);
	if (v.set < 0 || (off && !strcmp(off, "0"))) {
		CHECK_EQ(mode, 1);
	} else {
		CHECK_EQ(mode, 2);
		CHECK_EQ(prctl(79, 1, 0, 0, 0) & 1, 1);
	}
	printf("after a lock hold: %s\n", mode == 2 ? "on" : "off");

	protocol();
	return 0;
}

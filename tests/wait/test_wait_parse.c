/* Policy specs: good ones resolve to the expected parameters, every kind of
 * bad one fails with EINVAL and a message quoting the bad part, and policies
 * this machine lacks fail with ENOTSUP naming what is missing. */
#include "common/test.h"
#include <hwsync/wait.h>
#include <hwsync/arch.h>
#include <unistd.h>

static void good(const char *spec, enum hws_wait_kind kind)
{
	hws_wait_t w;
	CHECK_EQ(hws_wait_parse(&w, spec), 0);
	CHECK_EQ(w.kind, kind);
}

static void bad(const char *spec, const char *must_mention)
{
	hws_wait_t w;
	int rc = hws_wait_parse(&w, spec);
	if (rc != EINVAL || !strstr(hws_last_error(), must_mention)) {
		fprintf(stderr, "spec '%s': rc=%d msg='%s' (expected EINVAL mentioning '%s')\n",
			spec, rc, hws_last_error(), must_mention);
		exit(1);
	}
}

static void roundtrip(const char *spec, const char *canonical)
{
	hws_wait_t w, w2;
	char buf[160];
	CHECK_EQ(hws_wait_parse(&w, spec), 0);
	CHECK_EQ(hws_wait_format(&w, buf, sizeof buf), 0);
	if (strcmp(buf, canonical)) {
		fprintf(stderr, "'%s' formats as '%s', expected '%s'\n", spec, buf, canonical);
		exit(1);
	}
	CHECK_EQ(hws_wait_parse(&w2, buf), 0);
	CHECK(memcmp(&w, &w2, sizeof w) == 0);
}

static void unavailable(const char *spec, bool lacking, const char *must_mention)
{
	hws_wait_t w;
	int rc = hws_wait_init(&w, spec);
	if (!lacking) {
		CHECK_EQ(rc, 0);
		return;
	}
	if (rc != ENOTSUP || !strstr(hws_last_error(), must_mention)) {
		fprintf(stderr, "spec '%s': rc=%d msg='%s' (expected ENOTSUP mentioning '%s')\n",
			spec, rc, hws_last_error(), must_mention);
		exit(1);
	}
}

int main(void)
{
	const struct hws_cpu_info *c = hws_cpu();
	hws_wait_t w;

	good("spin", HWS_WAIT_SPIN);
	good("pause", HWS_WAIT_PAUSE);
	good("backoff:max=4096", HWS_WAIT_BACKOFF);
	good("delay-div", HWS_WAIT_DELAY_DIV);
	good("delay-fdiv:ops=3", HWS_WAIT_DELAY_FDIV);
	good("delay-cas", HWS_WAIT_DELAY_CAS);
	good("delay-miss", HWS_WAIT_DELAY_MISS);
	good("yield", HWS_WAIT_YIELD);
	good("futex", HWS_WAIT_FUTEX);
	good("umwait:state=c0.1,max=100us", HWS_WAIT_UMWAIT);
	good("umwait:state=c02", HWS_WAIT_UMWAIT);
	good("tpause:max=2ms", HWS_WAIT_TPAUSE);
	good("mwaitx:max=50us", HWS_WAIT_MWAITX);
	good("wfe", HWS_WAIT_WFE);
	good("kmwait", HWS_WAIT_KMWAIT);
	good("adaptive:spin=auto", HWS_WAIT_ADAPTIVE);
	good("adaptive:spin=20us,hw=none,hwtime=1ms", HWS_WAIT_ADAPTIVE);
	good("", HWS_WAIT_ADAPTIVE);
	good(NULL, HWS_WAIT_ADAPTIVE);

	CHECK_EQ(hws_wait_parse(&w, "backoff:min=2,max=64"), 0);
	CHECK_EQ(w.backoff_min, 2);
	CHECK_EQ(w.backoff_max, 64);
	CHECK_EQ(hws_wait_parse(&w, "umwait:state=c0.2,max=1ms"), 0);
	CHECK_EQ(w.state, 0);
	CHECK_EQ(w.max_ns, 1000000);
	CHECK_EQ(hws_wait_parse(&w, "adaptive:spin=3us"), 0);
	CHECK_EQ(w.spin_ns, 3000);

	roundtrip("backoff", "backoff:min=1,max=1024");
	roundtrip("delay-cas:ops=4", "delay-cas:ops=4");
	roundtrip("umwait:max=1ms", "umwait:state=c0.1,max=1000000ns");
	roundtrip("futex", "futex");
	roundtrip("adaptive", "adaptive:spin=auto,pause=auto,hw=auto,hwtime=auto");
	roundtrip("adaptive:spin=20us,pause=1us,hw=none,hwtime=1ms",
		  "adaptive:spin=20000ns,pause=1000ns,hw=none,hwtime=1000000ns");

	/* Resolution fills the hardware stage and its time; spin and pause stay
	 * auto: each wait reads the process's budget, which may be learned later. */
	struct hws_adaptive_calibration cur;
	char canon[160];
	CHECK_EQ(hws_wait_init(&w, "adaptive"), 0);
	CHECK_EQ(w.spin_ns, 0);
	CHECK_EQ(w.pause_ns, UINT64_MAX);
	CHECK_EQ(w.hw_ns, 200000);
	hws_adaptive_current(&cur);
	CHECK_EQ(w.hw, cur.hw);
	CHECK(cur.spin_ns >= 1000 && cur.spin_ns <= 100000);
	CHECK(cur.pause_ns <= cur.spin_ns);
	CHECK_EQ(hws_wait_format(&w, canon, sizeof canon), 0);
	CHECK(!strncmp(canon, "adaptive:spin=auto,pause=auto,hw=", 33));
	CHECK(strstr(canon, ",hwtime=200000ns"));
	CHECK_EQ(hws_wait_init(&w, "adaptive:spin=5us,pause=9us,hw=none"), 0);
	CHECK_EQ(w.spin_ns, 5000);
	CHECK_EQ(w.pause_ns, 9000);     /* longer than spin: PAUSE only */
	CHECK_EQ(w.hw, HWS_WAIT_NKINDS);

	bad("spinn", "unknown wait policy 'spinn'");
	bad("spinn", "(known: spin, pause, backoff, delay-div, delay-fdiv, delay-cas, "
	    "delay-miss, yield, futex, umwait, tpause, mwaitx, wfe, kmwait, adaptive)");
	bad("backof:max=3", "unknown wait policy 'backof'");
	bad("pause:", "empty parameter list");
	bad("backoff:max", "'max' is not key=value");
	bad("backoff:max=", "'max=' is not key=value");
	bad("backoff:=4", "'=4' is not key=value");
	bad("backoff:max=abc", "bad value in 'max=abc'");
	bad("backoff:max=0", "bad value in 'max=0'");
	bad("backoff:min=8,max=4", "min (8) is greater than max (4)");
	bad("backoff:color=red", "unknown parameter 'color=red'");
	bad("pause:max=4", "unknown parameter 'max=4'");
	bad("umwait:state=c3", "expected c0.1 or c0.2");
	bad("umwait:max=10parsecs", "bad value in 'max=10parsecs'");
	bad("umwait:max=-5us", "bad value in 'max=-5us'");
	bad("adaptive:hw=gpu", "expected auto, none, umwait, tpause, mwaitx, wfe or kmwait");
	bad("adaptive:hw=futex", "expected auto, none");
	bad("adaptive:spin=forever", "bad value in 'spin=forever'");
	bad("adaptive:pause=soon", "bad value in 'pause=soon'");
	bad("delay-div:ops=1,,", "empty parameter");
	bad("mwaitx:max=99999999999999999999999s", "bad value");

	/* A policy this machine lacks is an error naming what is missing,
	 * never a silent substitute. */
#if defined(__x86_64__)
	unavailable("umwait", !c->waitpkg, "WAITPKG");
	unavailable("tpause", !c->waitpkg, "WAITPKG");
	unavailable("mwaitx", !c->monitorx, "MONITORX");
	unavailable("wfe", true, "not arm64");
#elif defined(__aarch64__)
	unavailable("umwait", true, "not x86-64");
	unavailable("mwaitx", true, "not x86-64");
	unavailable("wfe", false, "");
#endif
	/* kmwait: unavailable unless the hwsync_mwait module is loaded and ours. */
	unavailable("kmwait", access("/dev/hwsync-mwait", R_OK | W_OK) != 0, "hwsync-mwait");
	unavailable("adaptive:hw=mwaitx", !c->monitorx, "hardware stage 'mwaitx'");

	/* The explicit availability query agrees and gives a reason. */
	for (int k = 0; k < HWS_WAIT_NKINDS; k++) {
		const char *why = NULL;
		int rc = hws_wait_available((enum hws_wait_kind)k, &why);
		CHECK(rc == 0 || rc == ENOTSUP);
		CHECK(why != NULL);
		if (rc)
			CHECK(strlen(why) > 10);
	}
	/* The list of names is the enum's, in order, each name parsing back. */
	const char *const *names = hws_wait_kinds();
	int n = 0;
	for (; names[n]; n++) {
		CHECK(!strcmp(names[n], hws_wait_kind_name((enum hws_wait_kind)n)));
		good(names[n], (enum hws_wait_kind)n);
	}
	CHECK_EQ(n, HWS_WAIT_NKINDS);
	CHECK(!strcmp(hws_wait_kind_name(HWS_WAIT_NKINDS), "none"));
	puts("wait_parse: ok");
	return 0;
}

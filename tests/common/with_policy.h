/* Checks shared by the tests of the create functions that take a parsed
 * policy (hws_<object>_create_with): the errors they all give, and that the
 * policy given is the one a wait uses, read from the wait layer's per-thread
 * counters (polls, futex system calls). */
#ifndef HWS_TEST_WITH_POLICY_H
#define HWS_TEST_WITH_POLICY_H

#include "common/test.h"
#include "wait/internal.h"

static inline hws_wait_t test_policy(const char *spec)
{
	hws_wait_t w;
	CHECK_EQ(hws_wait_init(&w, spec), 0);
	return w;
}

/* One object type: make creates it with w, expire makes this thread wait on
 * it until a deadline about 2 ms away passes (and returns what the wait
 * returned), destroy frees it. */
struct test_with_ops {
	int (*make)(void **obj, const hws_wait_t *w);
	int (*expire)(void *obj);
	void (*destroy)(void *obj);
};

/* fn is the create function's name, which every message must carry. */
static inline void test_with_errors(const struct test_with_ops *ops, const char *fn)
{
	hws_wait_t w = test_policy("pause");
	void *obj;

	CHECK_EQ(ops->make(&obj, NULL), EINVAL);
	CHECK(strstr(hws_last_error(), fn));
	CHECK(strstr(hws_last_error(), "NULL wait policy"));
	w.kind = HWS_WAIT_NKINDS;
	CHECK_EQ(ops->make(&obj, &w), EINVAL);
	CHECK(strstr(hws_last_error(), "not a wait policy"));
	if (hws_wait_available(HWS_WAIT_UMWAIT, NULL)) {
		/* parsed, never checked against this machine */
		CHECK_EQ(hws_wait_parse(&w, "umwait"), 0);
		CHECK_EQ(ops->make(&obj, &w), ENOTSUP);
		CHECK(strstr(hws_last_error(), "umwait"));
	}
}

/* With spin the expiring wait polls and makes no system call; with futex it
 * makes system calls and never polls.  Either differs from what a default
 * policy (adaptive: polls, then sleeps) would do.  The object keeps its own
 * copy of the policy: the caller's is spoiled right after create. */
static inline void test_with_uses_policy(const struct test_with_ops *ops)
{
	static const char *const specs[] = { "spin", "futex" };

	for (int i = 0; i < 2; i++) {
		hws_wait_t w = test_policy(specs[i]);
		void *obj;
		CHECK_EQ(ops->make(&obj, &w), 0);
		w.kind = HWS_WAIT_NKINDS;
		struct hws_wait_counters c0 = hws_wait_tls;
		CHECK_EQ(ops->expire(obj), ETIMEDOUT);
		if (i == 0) {
			CHECK_EQ(hws_wait_tls.syscalls, c0.syscalls);
			CHECK(hws_wait_tls.polls > c0.polls);
		} else {
			CHECK(hws_wait_tls.syscalls > c0.syscalls);
			CHECK_EQ(hws_wait_tls.polls, c0.polls);
		}
		ops->destroy(obj);
	}
}

#endif

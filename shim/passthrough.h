/* What was passed to the native implementation (passthrough.c): each kind
 * is named once with HWSYNC_VERBOSE and listed in the stats summary. */
#ifndef HWS_PRELOAD_PASSTHROUGH_H
#define HWS_PRELOAD_PASSTHROUGH_H

enum hws_pass {
	HWS_PASS_MUTEX_RECURSIVE, HWS_PASS_MUTEX_ERRORCHECK, HWS_PASS_MUTEX_ROBUST,
	HWS_PASS_MUTEX_PI, HWS_PASS_MUTEX_PP, HWS_PASS_MUTEX_PSHARED, HWS_PASS_MUTEX_OTHER,
	HWS_PASS_COND_PSHARED, HWS_PASS_BARRIER_PSHARED,
	HWS_PASS_SEM_PSHARED, HWS_PASS_SEM_NAMED, HWS_PASS_STARTUP,
	HWS_PASS_GOMP_TEAM, HWS_PASS_GOMP_TASKS, HWS_PASS_BARRIER_UNFIT,
	HWS_PASS_RWLOCK_PSHARED, HWS_PASS_RWLOCK_OTHER,
	HWS_PASS_NKINDS
};
void hws_pass(enum hws_pass what);
/* For the stats summary: has `what` been passed through, and its words. */
int hws_pass_seen(enum hws_pass what);
const char *hws_pass_name(enum hws_pass what);

#endif

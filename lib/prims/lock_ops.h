/* One table of operations per lock kind, for the generic hws_lock_* API. */
#ifndef HWS_PRIMS_LOCK_OPS_H
#define HWS_PRIMS_LOCK_OPS_H

#include <stdint.h>
#include <hwsync/wait.h>

struct hws_lock_ops {
	const char *name;
	int (*init)(void *l, const hws_wait_t *w);
	int (*acquire)(void *l);
	int (*try_)(void *l);
	int (*timed)(void *l, uint64_t deadline_ns);
	int (*release)(void *l);
	void (*destroy)(void *l);
};

extern const struct hws_lock_ops hws_lock_ops_tas, hws_lock_ops_ttas, hws_lock_ops_ticket,
	hws_lock_ops_mcs, hws_lock_ops_clh, hws_lock_ops_1spinner, hws_lock_ops_mutex;

/* What "auto" resolves to here: the kind's operations and the policy spec to
 * use when the caller gave none (NULL = the caller's / the default). */
const struct hws_lock_ops *hws_lock_auto_choice(const char **default_policy);

/* The inline typed locks get their table from this macro. */
#define HWS_LOCK_OPS_INLINE(k)                                                    \
	static int k##_init(void *l, const hws_wait_t *w) { return hws_##k##_init(l, w); } \
	static int k##_acquire(void *l) { return hws_##k##_acquire(l); }          \
	static int k##_try(void *l) { return hws_##k##_try(l); }                  \
	static int k##_timed(void *l, uint64_t dl) { return hws_##k##_timed_ns(l, dl); } \
	static int k##_release(void *l) { return hws_##k##_release(l); }          \
	static void k##_destroy(void *l) { (void)l; }                             \
	const struct hws_lock_ops hws_lock_ops_##k = {                            \
		#k, k##_init, k##_acquire, k##_try, k##_timed, k##_release, k##_destroy, \
	};

#endif

/* One table of operations per lock kind, for the generic hws_lock_* API, and
 * the list of kinds that every other list is made from. */
#ifndef HWS_PRIMS_LOCK_OPS_H
#define HWS_PRIMS_LOCK_OPS_H

#include <stdint.h>
#include <hwsync/wait.h>

/* The lock kinds, in the order hws_lock_kinds() names them.
 * X(name, ID): the generic API's table and names (lock.c) and the shim's
 * in-place kinds are made from this list, so a new kind is its file (ending
 * in HWS_LOCK_OPS_INLINE or HWS_LOCK_OPS_OUTLINE) and one entry here. */
#define HWS_LOCK_KINDS(X) HWS_LOCK_KINDS_BUT_AUTO(X) X(auto, AUTO)
#define HWS_LOCK_KINDS_BUT_AUTO(X)                                                \
	X(tas, TAS) X(ttas, TTAS) X(ticket, TICKET) X(mcs, MCS) X(clh, CLH)       \
	X(1spinner, 1SPINNER) X(mutex, MUTEX)

enum hws_lock_kind_id {
#define HWS_LK_ENUM_(k, K) HWS_LK_##K,
	HWS_LOCK_KINDS(HWS_LK_ENUM_)
#undef HWS_LK_ENUM_
	HWS_LK_NKINDS
};

struct hws_lock_ops {
	const char *name;
	int (*init)(void *l, const hws_wait_t *w);
	int (*acquire)(void *l);
	int (*try_)(void *l);
	int (*timed)(void *l, uint64_t deadline_ns);
	int (*release)(void *l);
	void (*destroy)(void *l);
};

#define HWS_LK_EXTERN_(k, K) extern const struct hws_lock_ops hws_lock_ops_##k;
HWS_LOCK_KINDS(HWS_LK_EXTERN_)
#undef HWS_LK_EXTERN_

/* The kind called `name` (NULL or "" is "auto"): its operations, and its id
 * when `id` is not NULL.  NULL when no kind has that name. */
const struct hws_lock_ops *hws_lock_ops_find(const char *name, enum hws_lock_kind_id *id);

/* The policy auto's sleepers use when the caller names none (it spins by its
 * own rules first); the other kinds default to "adaptive". */
#define HWS_LOCK_AUTO_POLICY "futex"

/* "tas, ttas, ..., mutex, auto": every name hws_lock_create accepts, for
 * messages. */
#define HWS_LK_LIST_(k, K) #k ", "
#define HWS_LOCK_KINDS_LIST HWS_LOCK_KINDS_BUT_AUTO(HWS_LK_LIST_) "auto"

/* A kind's table from its typed header (hwsync/lock_<k>.h): the generic
 * operations call the typed ones, which the compiler inlines here.
 * HWS_LOCK_OPS_INLINE for kinds whose free lock owns nothing (destroy does
 * nothing); HWS_LOCK_OPS_OUTLINE for kinds with a hws_<k>_destroy. */
#define HWS_LOCK_OPS_(k, destroy_body)                                            \
	static int ops_##k##_init(void *l, const hws_wait_t *w) { return hws_##k##_init(l, w); } \
	static int ops_##k##_acquire(void *l) { return hws_##k##_acquire(l); }   \
	static int ops_##k##_try(void *l) { return hws_##k##_try(l); }           \
	static int ops_##k##_timed(void *l, uint64_t dl) { return hws_##k##_timed_ns(l, dl); } \
	static int ops_##k##_release(void *l) { return hws_##k##_release(l); }   \
	static void ops_##k##_destroy(void *l) { destroy_body; }                 \
	const struct hws_lock_ops hws_lock_ops_##k = {                            \
		#k, ops_##k##_init, ops_##k##_acquire, ops_##k##_try, ops_##k##_timed, \
		ops_##k##_release, ops_##k##_destroy,                             \
	};

#define HWS_LOCK_OPS_INLINE(k) HWS_LOCK_OPS_(k, (void)l)
#define HWS_LOCK_OPS_OUTLINE(k) HWS_LOCK_OPS_(k, hws_##k##_destroy(l))

#endif

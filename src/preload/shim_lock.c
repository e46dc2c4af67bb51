/* The hwsync locks behind pthread mutexes, OpenMP locks and critical
 * sections: creation with the configured kind and policy, and the acquire and
 * release paths with the optional trace spans (wait: entry to acquired; hold:
 * acquired to release).  Stage counts come from hws_lock_stats. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "preload/shim.h"

static const char *const wait_name[HWS_FAM_NLOCKS] = {
	"mutex wait", "omp_lock wait", "omp_nest_lock wait", "critical wait",
};
static const char *const hold_name[HWS_FAM_NLOCKS] = {
	"mutex held", "omp_lock held", "omp_nest_lock held", "critical held",
};

struct hws_shim_lock *hws_shim_lock_new(unsigned family)
{
	struct hws_shim_lock *s = aligned_alloc(64, 64);
	if (!s)
		return NULL;
	memset(s, 0, sizeof *s);
	s->family = family;
	if (hws_lock_create(&s->lock, hws_cfg.lock_kind, hws_cfg.wait_spec)) {
		free(s);
		return NULL;
	}
	if (hws_cfg.stats) {
		hws_lock_stats_enable(s->lock, 1);
		hws_stats_register(s);
	}
	return s;
}

void hws_shim_lock_free(struct hws_shim_lock *s)
{
	if (hws_cfg.stats)
		hws_stats_unregister(s);
	hws_lock_destroy(s->lock);
	free(s);
}

int hws_shim_lock_acquire(struct hws_shim_lock *s, const void *obj)
{
	if (likely(!hws_cfg.trace))
		return hws_lock_acquire(s->lock);
	uint64_t t0 = hws_now_ns();
	int rc = hws_lock_acquire(s->lock);
	uint64_t t1 = hws_now_ns();
	hws_trace_span(wait_name[s->family], obj, t0, t1);
	s->acquired_ns = t1;
	return rc;
}

int hws_shim_lock_try(struct hws_shim_lock *s, const void *obj)
{
	int rc = hws_lock_try(s->lock);
	if (unlikely(hws_cfg.trace) && rc == 0) {
		s->acquired_ns = hws_now_ns();
		hws_trace_span(wait_name[s->family], obj, s->acquired_ns, s->acquired_ns);
	}
	return rc;
}

int hws_shim_lock_timed(struct hws_shim_lock *s, const void *obj, const struct timespec *mono)
{
	if (likely(!hws_cfg.trace))
		return hws_lock_timed(s->lock, mono);
	uint64_t t0 = hws_now_ns();
	int rc = hws_lock_timed(s->lock, mono);
	uint64_t t1 = hws_now_ns();
	hws_trace_span(wait_name[s->family], obj, t0, t1);
	if (rc == 0)
		s->acquired_ns = t1;
	return rc;
}

int hws_shim_lock_release(struct hws_shim_lock *s, const void *obj)
{
	if (unlikely(hws_cfg.trace))
		hws_trace_span(hold_name[s->family], obj, s->acquired_ns, hws_now_ns());
	return hws_lock_release(s->lock);
}

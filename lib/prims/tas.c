/* Test-and-set lock: the out-of-line retry loop (include/hwsync/lock_tas.h). */
#include "prims/lock_ops.h"
#include <hwsync/lock_tas.h>

int hws_tas_core_timed_ns(hws_tas_core_t *c, const hws_wait_t *w, uint64_t deadline_ns)
{
	uint64_t slice = HWS_TAS_RETRY_MIN_NS;

	while (hws_tas_core_try(c)) {
		uint64_t now = hws_now_ns(), until = now + slice;
		if (now >= deadline_ns)
			return ETIMEDOUT;
		/* Not "until free": exchange again after the slice, held or not. */
		hws_wait_while_eq32(&c->word, 1, w, until < deadline_ns ? until : deadline_ns);
		slice = slice * 2 > HWS_TAS_RETRY_MAX_NS ? HWS_TAS_RETRY_MAX_NS : slice * 2;
	}
	return 0;
}

HWS_LOCK_OPS_INLINE(tas)

/* hws_wait_while_eq32: dispatch to the policy's backend. */
#include "wait/internal.h"

static const hws_wait_fn backends[HWS_WAIT_NKINDS] = {
	[HWS_WAIT_SPIN] = hws_wait_spin,         [HWS_WAIT_PAUSE] = hws_wait_pause,
	[HWS_WAIT_BACKOFF] = hws_wait_backoff,   [HWS_WAIT_DELAY_DIV] = hws_wait_delay,
	[HWS_WAIT_DELAY_FDIV] = hws_wait_delay,  [HWS_WAIT_DELAY_CAS] = hws_wait_delay,
	[HWS_WAIT_DELAY_MISS] = hws_wait_delay,  [HWS_WAIT_YIELD] = hws_wait_yield,
	[HWS_WAIT_FUTEX] = hws_wait_futex,       [HWS_WAIT_UMWAIT] = hws_wait_umwait,
	[HWS_WAIT_TPAUSE] = hws_wait_tpause,     [HWS_WAIT_MWAITX] = hws_wait_mwaitx,
	[HWS_WAIT_WFE] = hws_wait_wfe,           [HWS_WAIT_KMWAIT] = hws_wait_kmwait,
	[HWS_WAIT_ADAPTIVE] = hws_wait_adaptive,
};

int hws_wait_while_eq32(const _Atomic uint32_t *addr, uint32_t old,
			const hws_wait_t *w, uint64_t deadline_ns)
{
	if (!w || w->kind >= HWS_WAIT_NKINDS)
		return EINVAL;
	return backends[w->kind](addr, old, w, deadline_ns);
}

int hws_wait_while_eq32_intr(const _Atomic uint32_t *addr, uint32_t old,
			     const hws_wait_t *w, uint64_t deadline_ns)
{
	int saved = hws_wait_intr, rc;
	hws_wait_intr = 1;
	rc = hws_wait_while_eq32(addr, old, w, deadline_ns);
	hws_wait_intr = saved;
	return rc;
}

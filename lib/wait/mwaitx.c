/* mwaitx policy: AMD MONITORX/MWAITX.  Arm the monitor, re-read the word
 * (closing the window between the first read and MONITORX), then MWAITX with
 * its timer enabled so each wait lasts at most max_ns; a store to the line,
 * an interrupt or the timer ends it. */
#include "wait/internal.h"

int hws_mwaitx_available(const char **why)
{
#if defined(__x86_64__)
	if (!hws_cpu_features()->monitorx) {
		*why = "CPUID.80000001H:ECX.MONITORX[bit 29] is 0: no MONITORX/MWAITX on this CPU"
		       " (or hidden by the hypervisor)";
		return ENOTSUP;
	}
	return 0;
#else
	*why = "mwaitx is an x86-64 instruction (AMD MONITORX); this is not x86-64";
	return ENOTSUP;
#endif
}

int hws_wait_mwaitx(const _Atomic uint32_t *a, uint32_t old, const hws_wait_t *w, uint64_t dl)
{
#if defined(__x86_64__)
	uint32_t slice = (uint32_t)(hws_ns_to_tsc(w->max_ns) > UINT32_MAX ? UINT32_MAX
					: hws_ns_to_tsc(w->max_ns));
	uint64_t n = 0;
	for (;;) {
		/* acquire: pairs with the store that changed the word. */
		if (atomic_load_explicit(a, memory_order_acquire) != old)
			return 0;
		if (dl != HWS_FOREVER && hws_now_ns() >= dl)
			return ETIMEDOUT;
		hws_monitorx(a);
		if (atomic_load_explicit(a, memory_order_acquire) != old)
			return 0;
		hws_mwaitx(slice);
		hws_wait_tls.polls++;
		n++;
	}
#else
	(void)a, (void)old, (void)w, (void)dl;
	return ENOTSUP;
#endif
}

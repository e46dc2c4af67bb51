/* wfe policy (arm64): LDAXR arms the exclusive monitor on the word's line and
 * reads it; if unchanged, WFE sleeps until the event register is set, which a
 * store by another CPU to the monitored line does (the monitor is cleared and
 * an event sent).  Linux's 10 kHz timer event stream also ends a WFE, so the
 * deadline is checked at least every ~100 us; with FEAT_WFxT, WFET sleeps with
 * the deadline itself. */
#include "wait/internal.h"

int hws_wfe_available(const char **why)
{
#if defined(__aarch64__)
	(void)why;
	return 0;
#else
	*why = "wfe is an arm64 instruction; this is not arm64";
	return ENOTSUP;
#endif
}

int hws_wait_wfe(const _Atomic uint32_t *a, uint32_t old, const hws_wait_t *w, uint64_t dl)
{
#if defined(__aarch64__)
	const bool wfet = hws_cpu_features()->wfet;
	(void)w;
	for (;;) {
		/* LDAXR has acquire semantics: pairs with the store that changed
		 * the word. */
		if (hws_ldaxr32((const volatile uint32_t *)a) != old) {
			hws_clrex();
			return 0;
		}
		uint64_t now = dl == HWS_FOREVER ? 0 : hws_now_ns();
		if (dl != HWS_FOREVER && now >= dl) {
			hws_clrex();
			return ETIMEDOUT;
		}
		if (wfet && dl != HWS_FOREVER)
			hws_wfet(hws_tsc() + hws_ns_to_tsc(dl - now));
		else
			hws_wfe();
		hws_wait_tls.polls++;
	}
#else
	(void)a, (void)old, (void)w, (void)dl;
	return ENOTSUP;
#endif
}

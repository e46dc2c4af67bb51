/* umwait and tpause policies: Intel WAITPKG user-mode waits.
 *
 * umwait: UMONITOR arms the monitor on the word's line, the word is re-read
 * (a store between the first read and UMONITOR would otherwise be missed),
 * then UMWAIT sleeps in C0.1 or C0.2 until the line is written, the TSC
 * deadline passes, an interrupt arrives, or the kernel's limit
 * (umwait_control/max_time) ends it.  Each UMWAIT is bounded by max_ns so the
 * deadline and a missed monitor event never cost more than that.
 * tpause: no monitor, a timed light-weight pause of at most max_ns between
 * reads. */
#include "wait/internal.h"

/* UMWAIT and TPAUSE come together with CPUID's WAITPKG bit. */
static int waitpkg_available(const char **why)
{
#if defined(__x86_64__)
	if (!hws_cpu_features()->waitpkg) {
		*why = "CPUID.(EAX=7,ECX=0):ECX.WAITPKG[bit 5] is 0: no UMONITOR/UMWAIT/TPAUSE on "
		       "this CPU (or hidden by the hypervisor)";
		return ENOTSUP;
	}
	return 0;
#else
	*why = "umwait and tpause are x86-64 instructions (Intel WAITPKG); this is not x86-64";
	return ENOTSUP;
#endif
}

int hws_umwait_available(const char **why)
{
	return waitpkg_available(why);
}

int hws_tpause_available(const char **why)
{
	return waitpkg_available(why);
}

#if defined(__x86_64__)
/* TSC value of the end of this wait slice: now + max, capped by the deadline. */
static uint64_t slice_end(uint64_t now_tsc, const hws_wait_t *w, uint64_t deadline_tsc)
{
	uint64_t end = now_tsc + hws_ns_to_tsc(w->max_ns);
	return end < deadline_tsc ? end : deadline_tsc;
}

static uint64_t deadline_to_tsc(uint64_t deadline_ns)
{
	uint64_t now = hws_now_ns();
	if (deadline_ns == HWS_FOREVER)
		return UINT64_MAX;
	return hws_tsc() + (deadline_ns > now ? hws_ns_to_tsc(deadline_ns - now) : 0);
}
#endif

#if defined(__x86_64__)
/* The loop both share: re-read the word, then one bounded slice; with
 * `monitor` the slice is UMONITOR + re-read + UMWAIT (ends early when the
 * line is written), else a TPAUSE.  Inlined into each backend. */
static inline __attribute__((always_inline)) int
waitpkg_loop(const _Atomic uint32_t *a, uint32_t old, const hws_wait_t *w, uint64_t dl,
	     int monitor)
{
	uint64_t dl_tsc = deadline_to_tsc(dl);
	for (;;) {
		/* acquire: pairs with the store that changed the word. */
		if (atomic_load_explicit(a, memory_order_acquire) != old)
			return 0;
		uint64_t now = hws_tsc();
		if (now >= dl_tsc)
			return ETIMEDOUT;
		if (monitor) {
			hws_umonitor(a);
			if (atomic_load_explicit(a, memory_order_acquire) != old)
				return 0;
			hws_umwait(w->state, slice_end(now, w, dl_tsc));
		} else {
			hws_tpause(w->state, slice_end(now, w, dl_tsc));
		}
		hws_wait_tls.polls++;
	}
}
#endif

int hws_wait_umwait(const _Atomic uint32_t *a, uint32_t old, const hws_wait_t *w, uint64_t dl)
{
#if defined(__x86_64__)
	return waitpkg_loop(a, old, w, dl, 1);
#else
	(void)a, (void)old, (void)w, (void)dl;
	return ENOTSUP;
#endif
}

int hws_wait_tpause(const _Atomic uint32_t *a, uint32_t old, const hws_wait_t *w, uint64_t dl)
{
#if defined(__x86_64__)
	return waitpkg_loop(a, old, w, dl, 0);
#else
	(void)a, (void)old, (void)w, (void)dl;
	return ENOTSUP;
#endif
}

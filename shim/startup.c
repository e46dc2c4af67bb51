/* Shim start-up: decide once whether objects go to hwsync (READY) or stay
 * native (OFF), and report at exit.
 *
 * Start-up is lazy (first interposed call) and also runs from a constructor.
 * A call that re-enters while this thread is starting the shim (dlsym may
 * call calloc, which a replacement allocator may implement with pthread
 * mutexes) is served natively; other threads wait for start-up to finish.
 * Any bad value turns the whole shim OFF with one line on stderr, so a
 * program never runs half on hwsync.
 */
#include <sched.h>
#include <unistd.h>
#include "shim/shim.h"

_Atomic int hws_shim_state = HWS_SHIM_UNINIT;
static _Thread_local int starting;

int hws_shim_on_slow(void)
{
	int s = HWS_SHIM_UNINIT;
	if (starting)
		return 0;   /* re-entered from our own start-up: native */
	if (atomic_compare_exchange_strong_explicit(&hws_shim_state, &s, HWS_SHIM_BUSY,
						    memory_order_acquire, memory_order_acquire)) {
		starting = 1;
		const char *missing = hws_shim_resolve_natives();
		int ok;
		if (missing) {
			hws_shim_say("native %s not found; running on the native implementation",
				     missing);
			ok = 0;
		} else {
			ok = hws_shim_configure() == 0;
		}
		starting = 0;
		/* release: publishes hws_native and hws_cfg to every reader. */
		atomic_store_explicit(&hws_shim_state, ok ? HWS_SHIM_READY : HWS_SHIM_OFF,
				      memory_order_release);
		return ok;
	}
	while (s == HWS_SHIM_BUSY) {
		sched_yield();
		/* acquire: pairs with the release store above. */
		s = atomic_load_explicit(&hws_shim_state, memory_order_acquire);
	}
	return s == HWS_SHIM_READY;
}

__attribute__((constructor(101))) static void shim_start(void)
{
	hws_shim_on();
}

__attribute__((destructor(101))) static void shim_stop(void)
{
	/* acquire: pairs with the release store publishing the configuration. */
	if (atomic_load_explicit(&hws_shim_state, memory_order_acquire) != HWS_SHIM_READY ||
	    hws_cfg.pid != (int)getpid())
		return;   /* a forked child does not report the parent's run */
	if (hws_cfg.trace)
		hws_trace_write();
	if (hws_cfg.stats)
		hws_stats_print();
	if (hws_cfg.profile)
		hws_prof_report();
}

/* Shim start-up: decide once whether objects go to hwsync (READY) or stay
 * native (OFF), start what the configuration turns on, and report at exit.
 *
 * Start-up is lazy (first interposed call) and also runs from a constructor.
 * A call that re-enters while this thread is starting the shim (dlsym may
 * call calloc, which a replacement allocator may implement with pthread
 * mutexes) is served natively; other threads wait for start-up to finish.
 * Any bad value turns the whole shim OFF with one line on stderr, so a
 * program never runs half on hwsync.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "shim/config.h"
#include "shim/lock_words.h"
#include "shim/natives.h"
#include "shim/profile.h"
#include "shim/say.h"
#include "shim/spin_wait.h"
#include "shim/startup.h"
#include "shim/stats.h"
#include "shim/trace.h"

_Atomic int hws_shim_state = HWS_SHIM_UNINIT;
_Atomic int hws_shim_plain_auto;
_Atomic int hws_shim_plain_spin;
static _Thread_local int starting;

static void atfork_child(void)
{
	hws_stats_atfork_child();
	hws_spin_wait_atfork_child();
}

/* What a good configuration turns on: 0, or an errno value after one line
 * on stderr. */
static int start_services(void)
{
	struct hws_shim_config *c = &hws_cfg;
	if (c->trace)
		hws_trace_start(c->trace_out);
	if (c->profile && hws_prof_init(c->profile_slots))
		return ENOMEM;
	if (pthread_atfork(NULL, NULL, atfork_child)) {
		hws_shim_say("pthread_atfork failed; running on the native implementation");
		return ENOMEM;
	}
	if (c->verbose)
		hws_shim_say("lock kind %s (%s), wait policy %s, barrier kind %s, rwlock %s (default "
			     "rwlocks: %s; writer-preferring: writer)%s%s%s%s", c->lock_kind,
			     c->lock_used, c->wait_spec, c->barrier_kind, c->rwlock_kind,
			     hws_cfg_default_rwlock(), c->stats ? ", stats" : "",
			     c->trace ? ", trace to " : "", c->trace ? c->trace_file : "",
			     c->profile ? ", profile" : "");
	return 0;
}

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
			ok = hws_shim_configure() == 0 && start_services() == 0;
		}
		/* Decided now, so that no lock path has to: where the kernel
		 * offers the extension, locks take the general paths, which
		 * ask for it; elsewhere they keep the plain ones. */
		hws_cfg.slice = ok && hws_slice_decide();
		starting = 0;
		/* Nothing counted and no time-slice extension to ask for. */
		int plain = ok && !hws_cfg.instrument && !hws_cfg.slice;
		/* release (both): publish the kind, the policy and the rest of
		 * the configuration to the fast paths' readers (hws_shim_plain,
		 * hws_shim_spin_plain). */
		atomic_store_explicit(&hws_shim_plain_spin, plain, memory_order_release);
		atomic_store_explicit(&hws_shim_plain_auto, plain && hws_lock_kind8 == HWS_LK_AUTO,
				      memory_order_release);
		/* release: publishes hws_native and hws_cfg to every reader. */
		atomic_store_explicit(&hws_shim_state, ok ? HWS_SHIM_READY : HWS_SHIM_OFF,
				      memory_order_release);
		return ok;
	}
	while (s == HWS_SHIM_BUSY) {
		hws_yield();
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
	int starter;
	/* acquire: pairs with the release store publishing the configuration. */
	if (atomic_load_explicit(&hws_shim_state, memory_order_acquire) != HWS_SHIM_READY)
		return;
	/* The trace and the profile are the starting process's: a forked child
	 * does not write over them.  Stats: see hws_stats_report. */
	starter = hws_cfg.pid == (int)getpid();
	if (hws_cfg.trace && starter)
		hws_trace_write();
	if (hws_cfg.stats)
		hws_stats_report();
	if (hws_cfg.profile && starter)
		hws_prof_report();
}

/* Worker processes forked by a program (stress-ng's stressors, pre-forked
 * servers) often end with _exit, which runs no destructor: with stats on,
 * report first.  Then what glibc's _exit does: exit_group, which does not
 * return. */
void _exit(int status)
{
	/* acquire: pairs with the release store publishing the configuration. */
	if (atomic_load_explicit(&hws_shim_state, memory_order_acquire) == HWS_SHIM_READY &&
	    hws_cfg.stats)
		hws_stats_report();
	for (;;)
		syscall(SYS_exit_group, status);
}

void _Exit(int status) __attribute__((alias("_exit")));

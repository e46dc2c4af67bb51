/* Shim start-up: resolve the native functions, read the environment, and
 * decide once whether objects go to hwsync (READY) or stay native (OFF).
 *
 * Start-up is lazy (first interposed call) and also runs from a constructor.
 * A call that re-enters while this thread is starting the shim (dlsym may
 * call calloc, which a replacement allocator may implement with pthread
 * mutexes) is served natively; other threads wait for start-up to finish.
 * Any bad value turns the whole shim OFF with one line on stderr, so a
 * program never runs half on hwsync.
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "shim/shim.h"
#include "prims/lock_ops.h"
#include "wait/internal.h"

struct hws_native hws_native;
struct hws_shim_config hws_cfg;
_Atomic int hws_shim_state = HWS_SHIM_UNINIT;
static _Thread_local int starting;

#if defined(__x86_64__)
#define GLIBC_BASE "GLIBC_2.2.5"
#elif defined(__aarch64__)
#define GLIBC_BASE "GLIBC_2.17"
#else
#define GLIBC_BASE NULL
#endif

/* Bootstrap for a mutex call that re-enters while dlsym runs: glibc's own
 * exported names of the implementation (not interposable by us). */
#if defined(__x86_64__) || defined(__aarch64__)
extern int hws_glibc_mutex_lock(pthread_mutex_t *);
extern int hws_glibc_mutex_unlock(pthread_mutex_t *);
extern int hws_glibc_mutex_trylock(pthread_mutex_t *);
__asm__(".symver hws_glibc_mutex_lock, __pthread_mutex_lock@" GLIBC_BASE);
__asm__(".symver hws_glibc_mutex_unlock, __pthread_mutex_unlock@" GLIBC_BASE);
__asm__(".symver hws_glibc_mutex_trylock, __pthread_mutex_trylock@" GLIBC_BASE);
#endif

/* Symbol versions to try, newest first; the default version (dlsym) last.
 * The condvar must never resolve to the pre-2.3.2 compatibility version. */
#define V_NEW "GLIBC_2.34"
#define V_COND "GLIBC_2.3.2"
#define V_CLOCK "GLIBC_2.30"
static const struct {
	const char *name;
	size_t off;
	const char *v1, *v2;
} natives[] = {
#define N(fn, field, a, b) { #fn, offsetof(struct hws_native, field), a, b }
	N(pthread_mutex_init, mutex_init, V_NEW, GLIBC_BASE),
	N(pthread_mutex_destroy, mutex_destroy, V_NEW, GLIBC_BASE),
	N(pthread_mutex_lock, mutex_lock, V_NEW, GLIBC_BASE),
	N(pthread_mutex_trylock, mutex_trylock, V_NEW, GLIBC_BASE),
	N(pthread_mutex_timedlock, mutex_timedlock, V_NEW, GLIBC_BASE),
	N(pthread_mutex_clocklock, mutex_clocklock, V_NEW, V_CLOCK),
	N(pthread_mutex_unlock, mutex_unlock, V_NEW, GLIBC_BASE),
	N(pthread_cond_init, cond_init, V_COND, NULL),
	N(pthread_cond_destroy, cond_destroy, V_COND, NULL),
	N(pthread_cond_wait, cond_wait, V_COND, NULL),
	N(pthread_cond_timedwait, cond_timedwait, V_COND, NULL),
	N(pthread_cond_clockwait, cond_clockwait, V_NEW, V_CLOCK),
	N(pthread_cond_signal, cond_signal, V_COND, NULL),
	N(pthread_cond_broadcast, cond_broadcast, V_COND, NULL),
	N(pthread_spin_init, spin_init, V_NEW, GLIBC_BASE),
	N(pthread_spin_destroy, spin_destroy, V_NEW, GLIBC_BASE),
	N(pthread_spin_lock, spin_lock, V_NEW, GLIBC_BASE),
	N(pthread_spin_trylock, spin_trylock, V_NEW, GLIBC_BASE),
	N(pthread_spin_unlock, spin_unlock, V_NEW, GLIBC_BASE),
	N(pthread_barrier_init, barrier_init, V_NEW, GLIBC_BASE),
	N(pthread_barrier_destroy, barrier_destroy, V_NEW, GLIBC_BASE),
	N(pthread_barrier_wait, barrier_wait, V_NEW, GLIBC_BASE),
	N(sem_init, sem_init, V_NEW, GLIBC_BASE),
	N(sem_destroy, sem_destroy, V_NEW, GLIBC_BASE),
	N(sem_wait, sem_wait, V_NEW, GLIBC_BASE),
	N(sem_trywait, sem_trywait, V_NEW, GLIBC_BASE),
	N(sem_timedwait, sem_timedwait, V_NEW, GLIBC_BASE),
	N(sem_clockwait, sem_clockwait, V_NEW, V_CLOCK),
	N(sem_post, sem_post, V_NEW, GLIBC_BASE),
	N(sem_getvalue, sem_getvalue, V_NEW, GLIBC_BASE),
#undef N
};

static void *resolve(const char *name, const char *v1, const char *v2)
{
	void *p = NULL;
	if (v1)
		p = dlvsym(RTLD_NEXT, name, v1);
	if (!p && v2)
		p = dlvsym(RTLD_NEXT, name, v2);
	if (!p)
		p = dlsym(RTLD_NEXT, name);
	return p;
}

void *hws_native_gomp(const char *name, const char *version)
{
	return resolve(name, version, NULL);
}

/* Resolve every native function; 0 or the name of the one that is missing.
 * Only the start-up thread writes the table, before publishing READY/OFF. */
static const char *resolve_natives(void)
{
	const char *missing = NULL;
	for (size_t i = 0; i < sizeof natives / sizeof natives[0]; i++) {
		void *p = resolve(natives[i].name, natives[i].v1, natives[i].v2);
		if (!p && !missing)
			missing = natives[i].name;
		memcpy((char *)&hws_native + natives[i].off, &p, sizeof p);
	}
	return missing;
}

void hws_shim_say(const char *fmt, ...)
{
	char buf[512];
	int n = snprintf(buf, sizeof buf, "hwsync: ");
	va_list ap;
	va_start(ap, fmt);
	n += vsnprintf(buf + n, sizeof buf - (size_t)n - 1, fmt, ap);
	va_end(ap);
	if (n > (int)sizeof buf - 2)
		n = (int)sizeof buf - 2;
	buf[n++] = '\n';
	ssize_t w = write(2, buf, (size_t)n);
	(void)w;
}

/* ---- passed-through kinds (HWSYNC_VERBOSE: once per kind) ---- */
static const char *const pass_name[HWS_PASS_NKINDS] = {
	[HWS_PASS_MUTEX_RECURSIVE] = "recursive pthread mutexes",
	[HWS_PASS_MUTEX_ERRORCHECK] = "error-checking pthread mutexes",
	[HWS_PASS_MUTEX_ROBUST] = "robust pthread mutexes",
	[HWS_PASS_MUTEX_PI] = "priority-inheritance pthread mutexes",
	[HWS_PASS_MUTEX_PP] = "priority-protect pthread mutexes",
	[HWS_PASS_MUTEX_PSHARED] = "process-shared pthread mutexes",
	[HWS_PASS_MUTEX_OTHER] = "pthread mutexes of other types",
	[HWS_PASS_COND_PSHARED] = "process-shared condition variables",
	[HWS_PASS_BARRIER_PSHARED] = "process-shared pthread barriers",
	[HWS_PASS_SEM_PSHARED] = "process-shared unnamed semaphores",
	[HWS_PASS_SEM_NAMED] = "named semaphores (sem_open)",
	[HWS_PASS_STARTUP] = "objects first used while the shim was starting",
	[HWS_PASS_GOMP_TEAM] = "GOMP_barrier in teams not started by GOMP_parallel",
	[HWS_PASS_GOMP_TASKS] = "GOMP_barrier after tasks were created (run by libgomp)",
	[HWS_PASS_BARRIER_UNFIT] = "OpenMP team barriers the HWSYNC_BARRIER kind cannot serve",
};
static _Atomic int pass_seen[HWS_PASS_NKINDS];

void hws_pass(enum hws_pass what)
{
	/* relaxed: a once-per-kind flag for a message; nothing else rides on it. */
	if (!atomic_load_explicit(&pass_seen[what], memory_order_relaxed) &&
	    !atomic_exchange_explicit(&pass_seen[what], 1, memory_order_relaxed) &&
	    hws_cfg.verbose)
		hws_shim_say("passing %s to the native implementation", pass_name[what]);
}

int hws_pass_seen(enum hws_pass what)
{
	/* relaxed: read once at exit. */
	return atomic_load_explicit(&pass_seen[what], memory_order_relaxed);
}

const char *hws_pass_name(enum hws_pass what)
{
	return pass_name[what];
}

/* ---- environment ---- */
static int env_flag(const char *name, int *out)
{
	const char *v = getenv(name);
	*out = 0;
	if (!v || !*v || !strcmp(v, "0"))
		return 0;
	if (!strcmp(v, "1")) {
		*out = 1;
		return 0;
	}
	hws_shim_say("%s='%s' is not 0 or 1; running on the native implementation", name, v);
	return EINVAL;
}

static int env_word(const char *name, const char *def, char *out, size_t len)
{
	const char *v = getenv(name);
	if (!v || !*v)
		v = def;
	if (strlen(v) >= len) {
		hws_shim_say("%s='%.40s...' is too long; running on the native implementation",
			     name, v);
		return EINVAL;
	}
	strcpy(out, v);
	return 0;
}

static int in_list(const char *const *list, const char *s)
{
	for (; list && *list; list++)
		if (!strcmp(*list, s))
			return 1;
	return 0;
}

static void list_str(const char *const *list, char *buf, size_t len)
{
	size_t n = 0;
	buf[0] = 0;
	for (; list && *list && n + 1 < len; list++)
		n += (size_t)snprintf(buf + n, len - n, "%s%s", n ? ", " : "", *list);
	if (!buf[0])
		snprintf(buf, len, "none in this build");
}

static void atfork_child(void) { hws_stats_atfork_child(); }

/* HWSYNC_LOCK -> the in-place kind; "auto" is whatever the library's "auto"
 * resolves to.  0, or EINVAL for a name the shim does not run in place. */
static int kind_of(const char *name, enum hws_shim_kind *k, const char **used)
{
	static const struct {
		const char *name;
		enum hws_shim_kind kind;
	} map[] = {
		{ "tas", HWS_SK_TAS }, { "ttas", HWS_SK_TTAS }, { "ticket", HWS_SK_TICKET },
		{ "mcs", HWS_SK_MCS }, { "clh", HWS_SK_CLH }, { "1spinner", HWS_SK_1SPINNER },
		{ "mutex", HWS_SK_MUTEX },
	};
	const char *dflt;
	if (!strcmp(name, "auto"))
		name = hws_lock_auto_choice(&dflt)->name;
	for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
		if (!strcmp(map[i].name, name)) {
			*k = map[i].kind;
			*used = map[i].name;
			return 0;
		}
	return EINVAL;
}

/* Read and check the environment; 0 when the shim can run. */
static int configure(void)
{
	struct hws_shim_config *c = &hws_cfg;
	char known[256];
	int rc = 0;

	c->pid = (int)getpid();
	c->err_fd = fcntl(2, F_DUPFD_CLOEXEC, 64);
	if (c->err_fd < 0)
		c->err_fd = 2;
	rc |= env_flag("HWSYNC_VERBOSE", &c->verbose);
	rc |= env_flag("HWSYNC_STATS", &c->stats);
	rc |= env_word("HWSYNC_LOCK", "auto", c->lock_kind, sizeof c->lock_kind);
	rc |= env_word("HWSYNC_WAIT", "adaptive", c->wait_spec, sizeof c->wait_spec);
	rc |= env_word("HWSYNC_BARRIER", "central", c->barrier_kind, sizeof c->barrier_kind);
	if (rc)
		return EINVAL;
	if (hws_wait_init(&c->wait, c->wait_spec)) {
		hws_shim_say("HWSYNC_WAIT='%s': %s; running on the native implementation",
			     c->wait_spec, hws_last_error());
		return EINVAL;
	}
	if (!in_list(hws_lock_kinds(), c->lock_kind)) {
		list_str(hws_lock_kinds(), known, sizeof known);
		hws_shim_say("HWSYNC_LOCK='%s' is not a lock kind (known: %s); running on the "
			     "native implementation", c->lock_kind, known);
		return EINVAL;
	}
	const char *used;
	if (kind_of(c->lock_kind, &hws_lock_kind8, &used)) {
		hws_shim_say("HWSYNC_LOCK='%s': this kind has no in-place form in the shim; "
			     "running on the native implementation", c->lock_kind);
		return EINVAL;
	}
	snprintf(c->lock_used, sizeof c->lock_used, "%s", used);
	if (!in_list(hws_barrier_kinds(), c->barrier_kind)) {
		list_str(hws_barrier_kinds(), known, sizeof known);
		hws_shim_say("HWSYNC_BARRIER='%s' is not a barrier kind (known: %s); running on "
			     "the native implementation", c->barrier_kind, known);
		return EINVAL;
	}
	/* Spin locks spin: a policy that may sleep is replaced by pause for them,
	 * which also keeps process-shared spin locks working (no private futex). */
	c->spin_wait = c->wait;
	if (c->wait.kind == HWS_WAIT_FUTEX || c->wait.kind == HWS_WAIT_ADAPTIVE ||
	    c->wait.kind == HWS_WAIT_KMWAIT)
		hws_wait_init(&c->spin_wait, "pause");
	const char *trace = getenv("HWSYNC_TRACE");
	if (trace && *trace) {
		int err = hws_trace_open(trace);
		if (err) {
			hws_shim_say("HWSYNC_TRACE='%s': cannot write: %s; running on the native "
				     "implementation", trace, strerror(err));
			return EINVAL;
		}
		c->trace = 1;
	}
	c->instrument = c->stats || c->trace;
	if (pthread_atfork(NULL, NULL, atfork_child)) {
		hws_shim_say("pthread_atfork failed; running on the native implementation");
		return ENOMEM;
	}
	if (c->verbose)
		hws_shim_say("lock kind %s (%s), wait policy %s, barrier kind %s%s%s", c->lock_kind,
			     c->lock_used, c->wait_spec, c->barrier_kind, c->stats ? ", stats" : "",
			     c->trace ? ", trace" : "");
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
		const char *missing = resolve_natives();
		int ok;
		if (missing) {
			hws_shim_say("native %s not found; running on the native implementation",
				     missing);
			ok = 0;
		} else {
			ok = configure() == 0;
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

/* A native function pointer, usable even during start-up re-entry. */
#define NATIVE_OR(field, boot) (hws_native.field ? hws_native.field : (boot))
int hws_shim_native_mutex_lock(pthread_mutex_t *m)
{
	return NATIVE_OR(mutex_lock, hws_glibc_mutex_lock)(m);
}
int hws_shim_native_mutex_unlock(pthread_mutex_t *m)
{
	return NATIVE_OR(mutex_unlock, hws_glibc_mutex_unlock)(m);
}
int hws_shim_native_mutex_trylock(pthread_mutex_t *m)
{
	return NATIVE_OR(mutex_trylock, hws_glibc_mutex_trylock)(m);
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
}

/* ---- time ---- */
int hws_shim_to_mono(clockid_t clock, const struct timespec *abs, struct timespec *mono)
{
	struct timespec now_c, now_m;
	if (!abs || abs->tv_nsec < 0 || abs->tv_nsec >= 1000000000L)
		return EINVAL;
	if (clock != CLOCK_REALTIME && clock != CLOCK_MONOTONIC)
		return EINVAL;
	if (clock == CLOCK_MONOTONIC) {
		*mono = *abs;
	} else {
		clock_gettime(CLOCK_REALTIME, &now_c);
		clock_gettime(CLOCK_MONOTONIC, &now_m);
		int64_t d = (int64_t)(abs->tv_sec - now_c.tv_sec) * 1000000000LL +
			    (abs->tv_nsec - now_c.tv_nsec);
		int64_t m = (int64_t)now_m.tv_sec * 1000000000LL + now_m.tv_nsec + d;
		if (m < 0)
			m = 0;
		mono->tv_sec = (time_t)(m / 1000000000LL);
		mono->tv_nsec = (long)(m % 1000000000LL);
	}
	if (mono->tv_sec < 0)
		mono->tv_sec = 0, mono->tv_nsec = 0;
	return 0;
}

int hws_shim_deadline_ns(clockid_t clock, const struct timespec *abs, uint64_t *ns)
{
	struct timespec m;
	int rc = hws_shim_to_mono(clock, abs, &m);
	if (rc)
		return rc;
	if ((uint64_t)m.tv_sec >= (HWS_FOREVER - 1000000000ull) / 1000000000ull)
		*ns = HWS_FOREVER;
	else
		*ns = (uint64_t)m.tv_sec * 1000000000ull + (uint64_t)m.tv_nsec;
	return 0;
}

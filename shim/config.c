/* The shim's configuration: read the HWSYNC_* environment once at start-up
 * and check it against the library's kinds and policies (hws_cfg).  The
 * output files it names are opened here, so that a name that cannot be
 * written is a bad setting like any other; what the configuration turns on
 * is started by startup.c. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <hwsync/arch.h>
#include <hwsync/barrier.h>
#include <hwsync/lock.h>
#include <hwsync/rwlock.h>
#include "shim/config.h"
#include "shim/lock_words.h"
#include "shim/outfile.h"
#include "shim/say.h"
#include "prims/lock_ops.h"

struct hws_shim_config hws_cfg;
/* The in-place lock words' kind and policy (lock_words.h): HWSYNC_LOCK and
 * HWSYNC_WAIT as configured here. */
enum hws_lock_kind_id hws_lock_kind8 = HWS_LK_AUTO;
const hws_wait_t *hws_lock_wait = &hws_cfg.wait;

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

/* A number in [lo, hi] from the environment, def when unset. */
static int env_uint(const char *name, unsigned def, unsigned lo, unsigned hi, unsigned *out)
{
	const char *v = getenv(name);
	char *end;
	*out = def;
	if (!v || !*v)
		return 0;
	errno = 0;
	unsigned long n = strtoul(v, &end, 10);
	if (errno || *end || v[0] == '-' || n < lo || n > hi) {
		hws_shim_say("%s='%s' is not a number from %u to %u; running on the native "
			     "implementation", name, v, lo, hi);
		return EINVAL;
	}
	*out = (unsigned)n;
	return 0;
}

/* HWSYNC_PROFILE: unset, empty or 0 off; 1 the table on stderr at exit;
 * anything else also the JSON file of that name.  HWSYNC_PROFILE_SLOTS:
 * the objects the table can hold; HWSYNC_PROFILE_TOP: rows of the table. */
static int configure_profile(struct hws_shim_config *c)
{
	const char *v = getenv("HWSYNC_PROFILE");
	unsigned slots;
	if (!v || !*v || !strcmp(v, "0"))
		return 0;
	if (env_uint("HWSYNC_PROFILE_SLOTS", 16384, 64, 1u << 26, &slots) ||
	    env_uint("HWSYNC_PROFILE_TOP", 10, 0, 1000000, &c->profile_top))
		return EINVAL;
	c->profile_slots = 1;
	while (c->profile_slots < slots)
		c->profile_slots <<= 1;
	if (strcmp(v, "1")) {
		/* one file per process (outfile.c), taken now: a name that cannot
		 * be written is a bad setting, not a lost profile at exit */
		c->profile_file = hws_open_output(v, c->profile_path, sizeof c->profile_path);
		if (!c->profile_file) {
			hws_shim_say("HWSYNC_PROFILE='%s': cannot write: %s; running on the native "
				     "implementation", v, hws_last_error());
			return EINVAL;
		}
	}
	c->profile = 1;
	return 0;
}

int hws_shim_configure(void)
{
	struct hws_shim_config *c = &hws_cfg;
	const struct hws_lock_ops *ops;
	char known[256];
	int rc = 0;

	c->pid = (int)getpid();
	c->err_fd = fcntl(2, F_DUPFD_CLOEXEC, 64);
	if (c->err_fd < 0)
		c->err_fd = 2;
	rc |= env_flag("HWSYNC_VERBOSE", &c->verbose);
	rc |= env_flag("HWSYNC_STATS", &c->stats);
	rc |= env_flag("HWSYNC_OMP_ENDS", &c->omp_ends);
	/* HWSYNC_SLICE=0 keeps lock holders from asking for the kernel's
	 * time-slice extension; the library reads it (lib/arch/rseq_slice.c),
	 * the shim checks it like its other switches. */
	int slice_switch;
	rc |= env_flag("HWSYNC_SLICE", &slice_switch);
	rc |= env_word("HWSYNC_LOCK", "auto", c->lock_kind, sizeof c->lock_kind);
	rc |= env_word("HWSYNC_WAIT", "adaptive", c->wait_spec, sizeof c->wait_spec);
	rc |= env_word("HWSYNC_BARRIER", "auto", c->barrier_kind, sizeof c->barrier_kind);
	rc |= env_word("HWSYNC_RWLOCK", "reader", c->rwlock_kind, sizeof c->rwlock_kind);
	if (rc)
		return EINVAL;
	if (hws_wait_init(&c->wait, c->wait_spec)) {
		hws_shim_say("HWSYNC_WAIT='%s': %s; running on the native implementation",
			     c->wait_spec, hws_last_error());
		return EINVAL;
	}
	/* The in-place kind is the library's. */
	if (!(ops = hws_lock_ops_find(c->lock_kind, &hws_lock_kind8))) {
		hws_shim_say("HWSYNC_LOCK='%s' is not a lock kind (known: " HWS_LOCK_KINDS_LIST
			     "); running on the native implementation", c->lock_kind);
		return EINVAL;
	}
	snprintf(c->lock_used, sizeof c->lock_used, "%s", ops->name);
	if (strcmp(c->barrier_kind, "auto") && !in_list(hws_barrier_kinds(), c->barrier_kind)) {
		list_str(hws_barrier_kinds(), known, sizeof known);
		hws_shim_say("HWSYNC_BARRIER='%s' is not a barrier kind (known: auto, %s); running "
			     "on the native implementation", c->barrier_kind, known);
		return EINVAL;
	}
	/* Writer preference is never given to a default rwlock (rwlock.c):
	 * `writer` leaves them on the reader-preferring core. */
	c->rwlock_bravo = !strcmp(c->rwlock_kind, "bravo");
	if (!c->rwlock_bravo && strcmp(c->rwlock_kind, "reader") &&
	    strcmp(c->rwlock_kind, "writer")) {
		list_str(hws_rwlock_kinds(), known, sizeof known);
		hws_shim_say("HWSYNC_RWLOCK='%s' is not an rwlock kind (known: %s); running on "
			     "the native implementation", c->rwlock_kind, known);
		return EINVAL;
	}
	/* Spin locks spin: a policy that may sleep is replaced by pause for them,
	 * which also keeps process-shared spin locks working (no private futex).
	 * pause and spin mean the spin lock's own backoff (spin.c). */
	c->spin_wait = c->wait;
	if (c->wait.kind == HWS_WAIT_FUTEX || c->wait.kind == HWS_WAIT_ADAPTIVE ||
	    c->wait.kind == HWS_WAIT_KMWAIT)
		hws_wait_init(&c->spin_wait, "pause");
	const char *trace = getenv("HWSYNC_TRACE");
	if (trace && *trace) {
		c->trace_out = hws_open_output(trace, c->trace_file, sizeof c->trace_file);
		if (!c->trace_out) {
			hws_shim_say("HWSYNC_TRACE='%s': cannot write: %s; running on the native "
				     "implementation", trace, hws_last_error());
			return EINVAL;
		}
		c->trace = 1;
	}
	if (configure_profile(c))
		return EINVAL;
	c->instrument = (c->stats || c->trace ? HWS_INSTR_COUNT : 0) |
			(c->profile ? HWS_INSTR_PROFILE : 0);
	return 0;
}

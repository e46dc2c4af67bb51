/* Wait-policy specs: "name[:key=value,...]".  Parsing, canonical formatting
 * and the availability check that turns a missing instruction or driver into
 * an error naming it (a policy is never silently replaced by another). */
#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "wait/internal.h"

static const char *const names[HWS_WAIT_NKINDS] = {
	[HWS_WAIT_SPIN] = "spin",             [HWS_WAIT_PAUSE] = "pause",
	[HWS_WAIT_BACKOFF] = "backoff",       [HWS_WAIT_DELAY_DIV] = "delay-div",
	[HWS_WAIT_DELAY_FDIV] = "delay-fdiv", [HWS_WAIT_DELAY_CAS] = "delay-cas",
	[HWS_WAIT_DELAY_MISS] = "delay-miss", [HWS_WAIT_YIELD] = "yield",
	[HWS_WAIT_FUTEX] = "futex",           [HWS_WAIT_UMWAIT] = "umwait",
	[HWS_WAIT_TPAUSE] = "tpause",         [HWS_WAIT_MWAITX] = "mwaitx",
	[HWS_WAIT_WFE] = "wfe",               [HWS_WAIT_KMWAIT] = "kmwait",
	[HWS_WAIT_ADAPTIVE] = "adaptive",
};

#define KNOWN_POLICIES "spin, pause, backoff, delay-div, delay-fdiv, delay-cas, " \
	"delay-miss, yield, futex, umwait, tpause, mwaitx, wfe, kmwait, adaptive"

const char *hws_wait_kind_name(enum hws_wait_kind kind)
{
	return kind < HWS_WAIT_NKINDS ? names[kind] : "none";
}

static int kind_by_name(const char *s, size_t len, enum hws_wait_kind *out)
{
	for (int k = 0; k < HWS_WAIT_NKINDS; k++)
		if (strlen(names[k]) == len && !strncmp(names[k], s, len)) {
			*out = (enum hws_wait_kind)k;
			return 0;
		}
	return -1;
}

/* "250", "250ns", "10us", "5ms", "1s" -> ns.  Plain numbers are ns. */
static int parse_duration(const char *v, uint64_t *ns)
{
	char *end;
	static const struct { const char *unit; uint64_t mult; } units[] = {
		{ "", 1 }, { "ns", 1 }, { "us", 1000 }, { "ms", 1000000 }, { "s", 1000000000 },
	};
	if (!isdigit((unsigned char)*v))
		return -1;
	errno = 0;
	unsigned long long x = strtoull(v, &end, 10);
	if (errno)
		return -1;
	for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
		if (!strcmp(end, units[i].unit)) {
			if (x > UINT64_MAX / units[i].mult)
				return -1;
			*ns = x * units[i].mult;
			return 0;
		}
	return -1;
}

static int parse_count(const char *v, uint32_t lo, uint32_t hi, uint32_t *out)
{
	char *end;
	if (!isdigit((unsigned char)*v))
		return -1;
	errno = 0;
	unsigned long x = strtoul(v, &end, 10);
	if (errno || *end || x < lo || x > hi)
		return -1;
	*out = (uint32_t)x;
	return 0;
}

static void set_defaults(hws_wait_t *w, enum hws_wait_kind kind)
{
	memset(w, 0, sizeof *w);
	w->kind = kind;
	w->state = 1;            /* C0.1: the faster wake-up */
	w->backoff_min = 1;
	w->backoff_max = 1024;
	w->ops = 1;
	w->max_ns = 100000;      /* 100 us per hardware wait */
	w->spin_ns = 0;          /* adaptive: 0 = calibrate (spin=auto) */
	w->pause_ns = UINT64_MAX; /* adaptive: UINT64_MAX = calibrate (pause=auto) */
	w->hw = HWS_WAIT_HW_AUTO; /* adaptive: resolved to the best available */
	w->hw_ns = 0;            /* adaptive: 0 = auto */
}

/* Apply one key=value to w; returns 0 or -1 with the reason in *why. */
static int apply_param(hws_wait_t *w, const char *key, const char *val, const char **why)
{
	enum hws_wait_kind k = w->kind;
	bool hwkind = k == HWS_WAIT_UMWAIT || k == HWS_WAIT_TPAUSE || k == HWS_WAIT_MWAITX ||
		      k == HWS_WAIT_KMWAIT;

	*why = "bad value";
	if (k == HWS_WAIT_BACKOFF && !strcmp(key, "min"))
		return parse_count(val, 1, 1u << 20, &w->backoff_min);
	if (k == HWS_WAIT_BACKOFF && !strcmp(key, "max"))
		return parse_count(val, 1, 1u << 20, &w->backoff_max);
	if (k >= HWS_WAIT_DELAY_DIV && k <= HWS_WAIT_DELAY_MISS && !strcmp(key, "ops"))
		return parse_count(val, 1, 100000, &w->ops);
	if ((k == HWS_WAIT_UMWAIT || k == HWS_WAIT_TPAUSE) && !strcmp(key, "state")) {
		if (!strcmp(val, "c0.1") || !strcmp(val, "c01"))
			w->state = 1;
		else if (!strcmp(val, "c0.2") || !strcmp(val, "c02"))
			w->state = 0;
		else {
			*why = "expected c0.1 or c0.2";
			return -1;
		}
		return 0;
	}
	if (hwkind && !strcmp(key, "max")) {
		*why = "expected a duration from 1us to 1s, e.g. 100us";
		return parse_duration(val, &w->max_ns) || w->max_ns < 1000 ||
		       w->max_ns > 1000000000 ? -1 : 0;
	}
	if (k == HWS_WAIT_ADAPTIVE && !strcmp(key, "spin")) {
		if (!strcmp(val, "auto")) {
			w->spin_ns = 0;
			return 0;
		}
		*why = "expected auto or a duration up to 1s, e.g. 20us";
		return parse_duration(val, &w->spin_ns) || w->spin_ns > 1000000000 ? -1 : 0;
	}
	if (k == HWS_WAIT_ADAPTIVE && !strcmp(key, "pause")) {
		if (!strcmp(val, "auto")) {
			w->pause_ns = UINT64_MAX;
			return 0;
		}
		*why = "expected auto or a duration up to 1s, e.g. 2us";
		return parse_duration(val, &w->pause_ns) || w->pause_ns > 1000000000 ? -1 : 0;
	}
	if (k == HWS_WAIT_ADAPTIVE && !strcmp(key, "hw")) {
		enum hws_wait_kind hk;
		if (!strcmp(val, "auto"))
			w->hw = HWS_WAIT_HW_AUTO;
		else if (!strcmp(val, "none"))
			w->hw = HWS_WAIT_NKINDS;
		else if (!kind_by_name(val, strlen(val), &hk) &&
			 (hk == HWS_WAIT_UMWAIT || hk == HWS_WAIT_TPAUSE || hk == HWS_WAIT_MWAITX ||
			  hk == HWS_WAIT_WFE || hk == HWS_WAIT_KMWAIT))
			w->hw = hk;
		else {
			*why = "expected auto, none, umwait, tpause, mwaitx, wfe or kmwait";
			return -1;
		}
		return 0;
	}
	if (k == HWS_WAIT_ADAPTIVE && !strcmp(key, "hwtime")) {
		if (!strcmp(val, "auto")) {
			w->hw_ns = 0;
			return 0;
		}
		*why = "expected a duration up to 1s, e.g. 200us";
		return parse_duration(val, &w->hw_ns) || w->hw_ns > 1000000000 ? -1 : 0;
	}
	*why = "unknown parameter";
	return -1;
}

int hws_wait_parse(hws_wait_t *w, const char *spec)
{
	char buf[256];
	const char *colon;
	enum hws_wait_kind kind;

	if (!spec || !*spec)
		spec = "adaptive";
	if (strlen(spec) >= sizeof buf)
		return hws_fail(EINVAL, "wait policy '%.40s...' is too long", spec);
	colon = strchr(spec, ':');
	size_t nlen = colon ? (size_t)(colon - spec) : strlen(spec);
	if (kind_by_name(spec, nlen, &kind))
		return hws_fail(EINVAL, "unknown wait policy '%.*s' in '%s' (known: " KNOWN_POLICIES ")",
				(int)nlen, spec, spec);
	set_defaults(w, kind);
	if (!colon)
		return 0;
	if (!colon[1])
		return hws_fail(EINVAL, "wait policy '%s': empty parameter list after ':'", spec);
	strcpy(buf, colon + 1);
	for (char *save = NULL, *kv = strtok_r(buf, ",", &save); kv; kv = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(kv, '=');
		const char *why;
		if (!eq || eq == kv || !eq[1])
			return hws_fail(EINVAL, "wait policy '%s': '%s' is not key=value", spec, kv);
		*eq = 0;
		if (apply_param(w, kv, eq + 1, &why))
			return hws_fail(EINVAL, "wait policy '%s': %s '%s=%s'%s%s", spec,
					strcmp(why, "unknown parameter") ? "bad value in" : "unknown parameter",
					kv, eq + 1,
					strcmp(why, "unknown parameter") && strcmp(why, "bad value") ? ": " : "",
					strcmp(why, "unknown parameter") && strcmp(why, "bad value") ? why : "");
	}
	if (strstr(colon + 1, ",,") || colon[strlen(colon) - 1] == ',')
		return hws_fail(EINVAL, "wait policy '%s': empty parameter", spec);
	if (kind == HWS_WAIT_BACKOFF && w->backoff_min > w->backoff_max)
		return hws_fail(EINVAL, "wait policy '%s': min (%u) is greater than max (%u)", spec,
				w->backoff_min, w->backoff_max);
	return 0;
}

int hws_wait_available(enum hws_wait_kind kind, const char **why)
{
	static const char *unused;
	if (!why)
		why = &unused;
	*why = "";
	switch (kind) {
	case HWS_WAIT_UMWAIT: return hws_umwait_available(why);
	case HWS_WAIT_TPAUSE: return hws_tpause_available(why);
	case HWS_WAIT_MWAITX: return hws_mwaitx_available(why);
	case HWS_WAIT_WFE:    return hws_wfe_available(why);
	case HWS_WAIT_KMWAIT: return hws_kmwait_available(why);
	case HWS_WAIT_DELAY_MISS:
		if (hws_delay_miss_prepare()) {
			*why = "cannot allocate the 64 MiB pointer-chase buffer";
			return ENOTSUP;
		}
		return 0;
	case HWS_WAIT_NKINDS:
		*why = "not a wait policy";
		return EINVAL;
	default:
		return 0;
	}
}

int hws_wait_init(hws_wait_t *w, const char *spec)
{
	const char *why;
	int rc = hws_wait_parse(w, spec);

	if (rc)
		return rc;
	if (!spec || !*spec)
		spec = "adaptive";
	if (hws_wait_available(w->kind, &why))
		return hws_fail(ENOTSUP, "wait policy '%s' is not available here: %s", spec, why);
	if (w->kind == HWS_WAIT_UMWAIT || w->kind == HWS_WAIT_TPAUSE) {
		const struct hws_cpu_info *c = hws_cpu_features();
		if (w->state == 0 && c->umwait_control_present && !c->umwait_c02_enabled)
			return hws_fail(ENOTSUP, "wait policy '%s': C0.2 is disabled by the kernel "
					"(/sys/devices/system/cpu/umwait_control/enable_c02 is 0)", spec);
	}
	/* These count their slices in TSC cycles: learn the counter frequency
	 * now (up to 20 ms where CPUID does not give it), not inside a wait. */
	if (w->kind == HWS_WAIT_UMWAIT || w->kind == HWS_WAIT_TPAUSE || w->kind == HWS_WAIT_MWAITX)
		hws_cpu();
	if (w->kind == HWS_WAIT_ADAPTIVE) {
		/* Nothing is measured here: spin=auto and pause=auto stay auto and
		 * each wait reads the process's budget (adaptive_budget.c). */
		hws_adaptive_prepare();
		if (w->hw == HWS_WAIT_HW_AUTO)
			w->hw = hws_adaptive_hw();
		else if (w->hw != HWS_WAIT_NKINDS && hws_wait_available(w->hw, &why))
			return hws_fail(ENOTSUP, "wait policy '%s': hardware stage '%s' is not "
					"available here: %s", spec, names[w->hw], why);
		if (w->hw_ns == 0)
			w->hw_ns = 200000;
	}
	return 0;
}

int hws_wait_format(const hws_wait_t *w, char *buf, size_t len)
{
	int n;
	switch (w->kind) {
	case HWS_WAIT_BACKOFF:
		n = snprintf(buf, len, "backoff:min=%u,max=%u", w->backoff_min, w->backoff_max);
		break;
	case HWS_WAIT_DELAY_DIV: case HWS_WAIT_DELAY_FDIV:
	case HWS_WAIT_DELAY_CAS: case HWS_WAIT_DELAY_MISS:
		n = snprintf(buf, len, "%s:ops=%u", names[w->kind], w->ops);
		break;
	case HWS_WAIT_UMWAIT: case HWS_WAIT_TPAUSE:
		n = snprintf(buf, len, "%s:state=%s,max=%" PRIu64 "ns", names[w->kind],
			     w->state ? "c0.1" : "c0.2", w->max_ns);
		break;
	case HWS_WAIT_MWAITX: case HWS_WAIT_KMWAIT:
		n = snprintf(buf, len, "%s:max=%" PRIu64 "ns", names[w->kind], w->max_ns);
		break;
	case HWS_WAIT_ADAPTIVE: {
		/* "auto" for what hws_wait_init has not resolved yet, and for spin
		 * and pause, which each wait takes from the process's budget. */
		char spin[24] = "auto", pause[24] = "auto", hwtime[24] = "auto";
		if (w->spin_ns)
			snprintf(spin, sizeof spin, "%" PRIu64 "ns", w->spin_ns);
		if (w->pause_ns != UINT64_MAX)
			snprintf(pause, sizeof pause, "%" PRIu64 "ns", w->pause_ns);
		if (w->hw_ns)
			snprintf(hwtime, sizeof hwtime, "%" PRIu64 "ns", w->hw_ns);
		n = snprintf(buf, len, "adaptive:spin=%s,pause=%s,hw=%s,hwtime=%s", spin, pause,
			     w->hw == HWS_WAIT_HW_AUTO ? "auto"
			     : w->hw < HWS_WAIT_NKINDS ? names[w->hw] : "none", hwtime);
		break;
	}
	default:
		n = snprintf(buf, len, "%s", hws_wait_kind_name(w->kind));
	}
	return n < 0 || (size_t)n >= len ? ENOSPC : 0;
}

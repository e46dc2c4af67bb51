/* Wait-policy specs: "name[:key=value,...]".  Parsing, canonical formatting
 * and the check that turns a missing instruction or driver into an error
 * naming it (a policy is never silently replaced by another); the policies'
 * table and what is available here are in kinds.c. */
#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "wait/internal.h"

int hws_wait_check(const hws_wait_t *w, const char *who)
{
	const char *why;

	if (!w)
		return hws_fail(EINVAL, "%s: NULL wait policy", who);
	if ((unsigned)w->kind >= HWS_WAIT_NKINDS)
		return hws_fail(EINVAL, "%s: not a wait policy (kind %d); make one with "
				"hws_wait_init", who, (int)w->kind);
	/* A policy only parsed (hws_wait_parse) may name an instruction this
	 * machine lacks: refuse it here rather than fault in a wait. */
	if (hws_wait_available(w->kind, &why))
		return hws_fail(ENOTSUP, "%s: wait policy %s is not available here: %s", who,
				hws_wait_kind_name(w->kind), why);
	if (w->kind == HWS_WAIT_ADAPTIVE && w->hw < HWS_WAIT_NKINDS &&
	    hws_wait_available(w->hw, &why))
		return hws_fail(ENOTSUP, "%s: adaptive's hardware stage %s is not available "
				"here: %s", who, hws_wait_kind_name(w->hw), why);
	return 0;
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

enum param_result { PARAM_OK, PARAM_UNKNOWN, PARAM_BAD };

static enum param_result bad_unless(int ok)
{
	return ok ? PARAM_OK : PARAM_BAD;
}

/* Apply one key=value to w.  PARAM_BAD may come with what was expected in
 * *hint (else NULL). */
static enum param_result apply_param(hws_wait_t *w, const char *key, const char *val,
				     const char **hint, char *buf, size_t len)
{
	unsigned f = hws_wait_kind_flags(w->kind);

	*hint = NULL;
	if ((f & P_BACKOFF) && !strcmp(key, "min"))
		return bad_unless(!parse_count(val, 1, 1u << 20, &w->backoff_min));
	if ((f & P_BACKOFF) && !strcmp(key, "max"))
		return bad_unless(!parse_count(val, 1, 1u << 20, &w->backoff_max));
	if ((f & P_OPS) && !strcmp(key, "ops"))
		return bad_unless(!parse_count(val, 1, 100000, &w->ops));
	if ((f & P_STATE) && !strcmp(key, "state")) {
		if (!strcmp(val, "c0.1") || !strcmp(val, "c01"))
			w->state = 1;
		else if (!strcmp(val, "c0.2") || !strcmp(val, "c02"))
			w->state = 0;
		else
			*hint = "expected c0.1 or c0.2";
		return *hint ? PARAM_BAD : PARAM_OK;
	}
	if ((f & P_MAX) && !strcmp(key, "max")) {
		*hint = "expected a duration from 1us to 1s, e.g. 100us";
		return bad_unless(!parse_duration(val, &w->max_ns) && w->max_ns >= 1000 &&
				  w->max_ns <= 1000000000);
	}
	if (!(f & P_ADAPTIVE))
		return PARAM_UNKNOWN;
	if (!strcmp(key, "spin")) {
		if (!strcmp(val, "auto")) {
			w->spin_ns = 0;
			return PARAM_OK;
		}
		*hint = "expected auto or a duration up to 1s, e.g. 20us";
		return bad_unless(!parse_duration(val, &w->spin_ns) && w->spin_ns <= 1000000000);
	}
	if (!strcmp(key, "pause")) {
		if (!strcmp(val, "auto")) {
			w->pause_ns = UINT64_MAX;
			return PARAM_OK;
		}
		*hint = "expected auto or a duration up to 1s, e.g. 2us";
		return bad_unless(!parse_duration(val, &w->pause_ns) && w->pause_ns <= 1000000000);
	}
	if (!strcmp(key, "hw")) {
		enum hws_wait_kind hk;
		if (!strcmp(val, "auto"))
			w->hw = HWS_WAIT_HW_AUTO;
		else if (!strcmp(val, "none"))
			w->hw = HWS_WAIT_NKINDS;
		else if (!hws_wait_kind_by_name(val, strlen(val), &hk) && (hws_wait_kind_flags(hk) & P_HWSTAGE))
			w->hw = hk;
		else {
			char stages[128];
			snprintf(buf, len, "expected auto, none, %s",
				 hws_wait_kind_names(P_HWSTAGE, " or ", stages, sizeof stages));
			*hint = buf;
			return PARAM_BAD;
		}
		return PARAM_OK;
	}
	if (!strcmp(key, "hwtime")) {
		if (!strcmp(val, "auto")) {
			w->hw_ns = 0;
			return PARAM_OK;
		}
		*hint = "expected a duration up to 1s, e.g. 200us";
		return bad_unless(!parse_duration(val, &w->hw_ns) && w->hw_ns <= 1000000000);
	}
	return PARAM_UNKNOWN;
}

int hws_wait_parse(hws_wait_t *w, const char *spec)
{
	char buf[256], hintbuf[160], known[256];
	const char *colon;
	enum hws_wait_kind kind;

	if (!spec || !*spec)
		spec = "adaptive";
	if (strlen(spec) >= sizeof buf)
		return hws_fail(EINVAL, "wait policy '%.40s...' is too long", spec);
	colon = strchr(spec, ':');
	size_t nlen = colon ? (size_t)(colon - spec) : strlen(spec);
	if (hws_wait_kind_by_name(spec, nlen, &kind))
		return hws_fail(EINVAL, "unknown wait policy '%.*s' in '%s' (known: %s)",
				(int)nlen, spec, spec, hws_wait_kind_names(0, ", ", known, sizeof known));
	set_defaults(w, kind);
	if (!colon)
		return 0;
	if (!colon[1])
		return hws_fail(EINVAL, "wait policy '%s': empty parameter list after ':'", spec);
	strcpy(buf, colon + 1);
	for (char *save = NULL, *kv = strtok_r(buf, ",", &save); kv; kv = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(kv, '=');
		const char *hint;
		if (!eq || eq == kv || !eq[1])
			return hws_fail(EINVAL, "wait policy '%s': '%s' is not key=value", spec, kv);
		*eq = 0;
		switch (apply_param(w, kv, eq + 1, &hint, hintbuf, sizeof hintbuf)) {
		case PARAM_OK:
			break;
		case PARAM_UNKNOWN:
			return hws_fail(EINVAL, "wait policy '%s': unknown parameter '%s=%s'", spec,
					kv, eq + 1);
		case PARAM_BAD:
			return hws_fail(EINVAL, "wait policy '%s': bad value in '%s=%s'%s%s", spec,
					kv, eq + 1, hint ? ": " : "", hint ? hint : "");
		}
	}
	if (strstr(colon + 1, ",,") || colon[strlen(colon) - 1] == ',')
		return hws_fail(EINVAL, "wait policy '%s': empty parameter", spec);
	if (kind == HWS_WAIT_BACKOFF && w->backoff_min > w->backoff_max)
		return hws_fail(EINVAL, "wait policy '%s': min (%u) is greater than max (%u)", spec,
				w->backoff_min, w->backoff_max);
	return 0;
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
					"available here: %s", spec, hws_wait_kind_name(w->hw), why);
		if (w->hw_ns == 0)
			w->hw_ns = 200000;
	}
	return 0;
}

int hws_wait_format(const hws_wait_t *w, char *buf, size_t len)
{
	const char *name = hws_wait_kind_name(w->kind);
	unsigned f = hws_wait_kind_flags(w->kind);
	int n;

	if (f & P_BACKOFF) {
		n = snprintf(buf, len, "%s:min=%u,max=%u", name, w->backoff_min, w->backoff_max);
	} else if (f & P_OPS) {
		n = snprintf(buf, len, "%s:ops=%u", name, w->ops);
	} else if (f & P_STATE) {
		n = snprintf(buf, len, "%s:state=%s,max=%" PRIu64 "ns", name,
			     w->state ? "c0.1" : "c0.2", w->max_ns);
	} else if (f & P_MAX) {
		n = snprintf(buf, len, "%s:max=%" PRIu64 "ns", name, w->max_ns);
	} else if (f & P_ADAPTIVE) {
		/* "auto" for what hws_wait_init has not resolved yet, and for spin
		 * and pause, which each wait takes from the process's budget. */
		char spin[24] = "auto", pause[24] = "auto", hwtime[24] = "auto";
		if (w->spin_ns)
			snprintf(spin, sizeof spin, "%" PRIu64 "ns", w->spin_ns);
		if (w->pause_ns != UINT64_MAX)
			snprintf(pause, sizeof pause, "%" PRIu64 "ns", w->pause_ns);
		if (w->hw_ns)
			snprintf(hwtime, sizeof hwtime, "%" PRIu64 "ns", w->hw_ns);
		n = snprintf(buf, len, "%s:spin=%s,pause=%s,hw=%s,hwtime=%s", name, spin, pause,
			     w->hw == HWS_WAIT_HW_AUTO ? "auto" : hws_wait_kind_name(w->hw), hwtime);
	} else {
		n = snprintf(buf, len, "%s", name);
	}
	return n < 0 || (size_t)n >= len ? ENOSPC : 0;
}

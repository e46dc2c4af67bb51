/* The wait policies: the table of their names and the parameters each
 * takes, lookups by name and kind, and whether one is available on this
 * machine.  Every list of policy names (hws_wait_kinds, the "known" lists of
 * messages, hwsync's help and info) is made from this table. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include "wait/internal.h"

static const struct {
	const char *name;
	unsigned flags;
} policies[] = {
	[HWS_WAIT_SPIN] = { "spin", 0 },
	[HWS_WAIT_PAUSE] = { "pause", 0 },
	[HWS_WAIT_BACKOFF] = { "backoff", P_BACKOFF },
	[HWS_WAIT_DELAY_DIV] = { "delay-div", P_OPS },
	[HWS_WAIT_DELAY_FDIV] = { "delay-fdiv", P_OPS },
	[HWS_WAIT_DELAY_CAS] = { "delay-cas", P_OPS },
	[HWS_WAIT_DELAY_MISS] = { "delay-miss", P_OPS },
	[HWS_WAIT_YIELD] = { "yield", 0 },
	[HWS_WAIT_FUTEX] = { "futex", 0 },
	[HWS_WAIT_UMWAIT] = { "umwait", P_STATE | P_MAX | P_HWSTAGE },
	[HWS_WAIT_TPAUSE] = { "tpause", P_STATE | P_MAX | P_HWSTAGE },
	[HWS_WAIT_MWAITX] = { "mwaitx", P_MAX | P_HWSTAGE },
	[HWS_WAIT_WFE] = { "wfe", P_HWSTAGE },
	[HWS_WAIT_KMWAIT] = { "kmwait", P_MAX | P_HWSTAGE },
	[HWS_WAIT_ADAPTIVE] = { "adaptive", P_ADAPTIVE },
};
_Static_assert(sizeof policies / sizeof policies[0] == HWS_WAIT_NKINDS,
	       "one entry per enum hws_wait_kind");

unsigned hws_wait_kind_flags(enum hws_wait_kind k)
{
	return k < HWS_WAIT_NKINDS ? policies[k].flags : 0;
}

const char *hws_wait_kind_name(enum hws_wait_kind kind)
{
	return kind < HWS_WAIT_NKINDS ? policies[kind].name : "none";
}

static const char *kind_list[HWS_WAIT_NKINDS + 1];
static pthread_once_t kind_list_once = PTHREAD_ONCE_INIT;

static void fill_kind_list(void)
{
	for (int k = 0; k < HWS_WAIT_NKINDS; k++)
		kind_list[k] = policies[k].name;
}

const char *const *hws_wait_kinds(void)
{
	hws_once(&kind_list_once, fill_kind_list);
	return kind_list;
}

const char *hws_wait_kind_names(unsigned mask, const char *last, char *buf, size_t len)
{
	int total = 0, i = 0;
	size_t at = 0;

	for (int k = 0; k < HWS_WAIT_NKINDS; k++)
		total += !mask || (policies[k].flags & mask);
	buf[0] = 0;
	for (int k = 0; k < HWS_WAIT_NKINDS && at < len; k++) {
		if (mask && !(policies[k].flags & mask))
			continue;
		at += (size_t)snprintf(buf + at, len - at, "%s%s",
				       !i ? "" : i == total - 1 ? last : ", ", policies[k].name);
		i++;
	}
	return buf;
}

int hws_wait_kind_by_name(const char *s, size_t len, enum hws_wait_kind *out)
{
	for (int k = 0; k < HWS_WAIT_NKINDS; k++)
		if (strlen(policies[k].name) == len && !strncmp(policies[k].name, s, len)) {
			*out = (enum hws_wait_kind)k;
			return 0;
		}
	return -1;
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

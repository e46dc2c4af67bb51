/* Groups for hierarchical barriers: threads that share the most expensive
 * boundary to cross.  The NUMA node when the machine has more than one,
 * else the last-level cache when there is more than one, else the package
 * (on a machine with one of each: one group, a flat barrier). */
#include <errno.h>
#include <hwsync/topo.h>
#include "topo/internal.h"
#include "arch/internal.h"

static unsigned group_id(const hws_topo_t *t, const struct hws_topo_pu *p)
{
	switch (t->group_level) {
	case HWS_TOPO_NUMA:
		return p->numa;
	case HWS_TOPO_LLC:
		return p->llc;
	default:
		return p->pkg;
	}
}

int hws_topo_group_of(const hws_topo_t *t, int cpu)
{
	if (!t)
		return hws_fail(EINVAL, "no topology"), -1;
	for (unsigned i = 0; i < t->npus; i++)
		if (t->pu[i].cpu == cpu)
			return (int)group_id(t, &t->pu[i]);
	return hws_fail(EINVAL, "cpu %d is not in the topology", cpu), -1;
}

unsigned hws_topo_ngroups(const hws_topo_t *t)
{
	if (!t)
		return 0;
	switch (t->group_level) {
	case HWS_TOPO_NUMA:
		return t->nnumas;
	case HWS_TOPO_LLC:
		return t->nllcs;
	default:
		return t->npkgs;
	}
}

const char *hws_topo_group_kind(const hws_topo_t *t)
{
	static const char *const names[] = { "numa", "llc", "package" };
	return t ? names[t->group_level] : "none";
}

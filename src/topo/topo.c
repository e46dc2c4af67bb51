/* Topology from hwloc: machine summary, placement plans, barrier groups.
 * Without hwloc (the arm64 cross build) a sysconf-based flat machine. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <pthread.h>
#include <hwsync/topo.h>
#include "wait/internal.h"
#if HWS_HAVE_HWLOC
#include <hwloc.h>
#endif

struct hws_topo {
#if HWS_HAVE_HWLOC
	hwloc_topology_t h;
#endif
	struct hws_topo_summary sum;
};

static hws_topo_t *this_topo;
static pthread_once_t this_once = PTHREAD_ONCE_INIT;

#if HWS_HAVE_HWLOC
static unsigned long long cache_size(hwloc_topology_t h, hwloc_obj_type_t type)
{
	hwloc_obj_t o = hwloc_get_obj_by_type(h, type, 0);
	return o && o->attr ? o->attr->cache.size : 0;
}

static void summarize(hws_topo_t *t)
{
	hwloc_topology_t h = t->h;
	struct hws_topo_summary *s = &t->sum;
	s->packages = (unsigned)hwloc_get_nbobjs_by_type(h, HWLOC_OBJ_PACKAGE);
	s->cores = (unsigned)hwloc_get_nbobjs_by_type(h, HWLOC_OBJ_CORE);
	s->pus = (unsigned)hwloc_get_nbobjs_by_type(h, HWLOC_OBJ_PU);
	s->numa_nodes = (unsigned)hwloc_get_nbobjs_by_type(h, HWLOC_OBJ_NUMANODE);
	s->smt = s->cores && s->pus > s->cores;
	s->l1d = cache_size(h, HWLOC_OBJ_L1CACHE);
	s->l2 = cache_size(h, HWLOC_OBJ_L2CACHE);
	s->l3 = cache_size(h, HWLOC_OBJ_L3CACHE);
	s->l3_count = (unsigned)hwloc_get_nbobjs_by_type(h, HWLOC_OBJ_L3CACHE);
}
#endif

static void load_this(void)
{
	hws_topo_t *t = calloc(1, sizeof *t);
	if (!t)
		return;
#if HWS_HAVE_HWLOC
	if (hwloc_topology_init(&t->h) == 0 && hwloc_topology_load(t->h) == 0) {
		summarize(t);
		strcpy(t->sum.source, "hwloc");
		this_topo = t;
		return;
	}
#endif
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	t->sum.packages = t->sum.numa_nodes = 1;
	t->sum.cores = t->sum.pus = n > 0 ? (unsigned)n : 1;
	strcpy(t->sum.source, "sysconf");
	this_topo = t;
}

const hws_topo_t *hws_topo_this(void)
{
	pthread_once(&this_once, load_this);
	return this_topo;
}

int hws_topo_load_xml(hws_topo_t **out, const char *path)
{
#if HWS_HAVE_HWLOC
	hws_topo_t *t = calloc(1, sizeof *t);
	if (!t)
		return ENOMEM;
	if (hwloc_topology_init(&t->h) || hwloc_topology_set_xml(t->h, path) ||
	    hwloc_topology_load(t->h)) {
		free(t);
		return hws_fail(EINVAL, "cannot load hwloc XML topology '%s'", path);
	}
	summarize(t);
	strcpy(t->sum.source, "hwloc-xml");
	*out = t;
	return 0;
#else
	(void)out;
	return hws_fail(ENOTSUP, "cannot load '%s': built without hwloc", path);
#endif
}

void hws_topo_free(hws_topo_t *t)
{
	if (!t || t == this_topo)
		return;
#if HWS_HAVE_HWLOC
	hwloc_topology_destroy(t->h);
#endif
	free(t);
}

int hws_topo_summary(const hws_topo_t *t, struct hws_topo_summary *out)
{
	if (!t)
		return EINVAL;
	*out = t->sum;
	return 0;
}

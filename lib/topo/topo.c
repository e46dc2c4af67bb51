/* Topology: load it (hwloc, an hwloc XML file, or a flat sysconf machine) and
 * reduce it to the PU/core table of internal.h.  hwloc's own topology is
 * dropped once the table is built, so nothing here holds hwloc state after
 * loading and every query is a plain read of the table.
 *
 * hwloc is called through a table of function pointers (hwloc_fns.h): the
 * library links it, the LD_PRELOAD shim loads it on first use. */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <pthread.h>
#include <stdio.h>
#include <hwsync/topo.h>
#include "topo/internal.h"
#include "arch/internal.h"
#if HWS_HAVE_HWLOC
#include "topo/hwloc_fns.h"
#endif

static hws_topo_t *this_topo;
static pthread_once_t this_once = PTHREAD_ONCE_INIT;

/* Renumber column `off` of the PU table densely in first-seen order; leaves
 * HWS_TOPO_NONE alone.  Returns the number of distinct ids or ~0u (ENOMEM). */
static unsigned densify(struct hws_topo_pu *pu, unsigned n, size_t off)
{
	unsigned *seen = malloc(n * sizeof *seen), k = 0;
	if (!seen)
		return ~0u;
	for (unsigned i = 0; i < n; i++) {
		unsigned *id = (unsigned *)((char *)&pu[i] + off), j;
		if (*id == HWS_TOPO_NONE)
			continue;
		for (j = 0; j < k && seen[j] != *id; j++)
			;
		if (j == k)
			seen[k++] = *id;
		*id = j;
	}
	free(seen);
	return k;
}

int hws_topo_build(struct hws_topo *t)
{
	unsigned counts[4];
	const size_t cols[4] = { offsetof(struct hws_topo_pu, core), offsetof(struct hws_topo_pu, llc),
				 offsetof(struct hws_topo_pu, pkg), offsetof(struct hws_topo_pu, numa) };
	for (int c = 0; c < 4; c++)
		if ((counts[c] = densify(t->pu, t->npus, cols[c])) == ~0u)
			return ENOMEM;
	t->ncores = counts[0], t->nllcs = counts[1], t->npkgs = counts[2], t->nnumas = counts[3];
	t->core = calloc(t->ncores ? t->ncores : 1, sizeof *t->core);
	if (!t->core)
		return ENOMEM;
	/* Dense core ids come in first-seen order, so core[id] is met at its first PU. */
	for (unsigned i = 0; i < t->npus; i++) {
		const struct hws_topo_pu *p = &t->pu[i];
		struct hws_topo_core *c = &t->core[p->core];
		if (!c->npus) {
			c->first_pu = i;
			c->llc = p->llc, c->pkg = p->pkg, c->numa = p->numa;
		}
		c->npus++;
	}
	if (t->nnumas > 1)
		t->group_level = HWS_TOPO_NUMA;
	else if (t->nllcs > 1)
		t->group_level = HWS_TOPO_LLC;
	else
		t->group_level = HWS_TOPO_PKG;
	return 0;
}

static void topo_free(hws_topo_t *t)
{
	if (t) {
		free(t->pu);
		free(t->core);
		free(t);
	}
}

#if HWS_HAVE_HWLOC
/* The table for the helpers below, set by load_hwloc in the thread that
 * uses it (per thread, so that loads in several threads do not race). */
static _Thread_local const struct hwloc_fns *hw;

/* What hwloc's inline helpers do, through the table. */
static int nb_by_type(hwloc_topology_t h, hwloc_obj_type_t type)
{
	int depth = hw->get_type_depth(h, type);
	if (depth == HWLOC_TYPE_DEPTH_UNKNOWN)
		return 0;
	if (depth == HWLOC_TYPE_DEPTH_MULTIPLE)
		return -1;
	return (int)hw->get_nbobjs_by_depth(h, depth);
}

static hwloc_obj_t obj_by_type(hwloc_topology_t h, hwloc_obj_type_t type, unsigned idx)
{
	int depth = hw->get_type_depth(h, type);
	if (depth == HWLOC_TYPE_DEPTH_UNKNOWN || depth == HWLOC_TYPE_DEPTH_MULTIPLE)
		return NULL;
	return hw->get_obj_by_depth(h, depth, idx);
}

static hwloc_obj_t ancestor_by_type(hwloc_obj_type_t type, hwloc_obj_t o)
{
	hwloc_obj_t a = o->parent;
	while (a && a->type != type)
		a = a->parent;
	return a;
}

static unsigned long long cache_size(hwloc_topology_t h, hwloc_obj_type_t type)
{
	hwloc_obj_t o = obj_by_type(h, type, 0);
	return o && o->attr ? o->attr->cache.size : 0;
}

static void summarize(hws_topo_t *t, hwloc_topology_t h)
{
	struct hws_topo_summary *s = &t->sum;
	s->packages = (unsigned)nb_by_type(h, HWLOC_OBJ_PACKAGE);
	s->cores = (unsigned)nb_by_type(h, HWLOC_OBJ_CORE);
	s->pus = (unsigned)nb_by_type(h, HWLOC_OBJ_PU);
	s->numa_nodes = (unsigned)nb_by_type(h, HWLOC_OBJ_NUMANODE);
	s->smt = s->cores && s->pus > s->cores;
	s->l1d = cache_size(h, HWLOC_OBJ_L1CACHE);
	s->l2 = cache_size(h, HWLOC_OBJ_L2CACHE);
	s->l3 = cache_size(h, HWLOC_OBJ_L3CACHE);
	s->l3_count = (unsigned)nb_by_type(h, HWLOC_OBJ_L3CACHE);
}

/* Raw ids for the table: hwloc logical indexes.  A PU without a core is its
 * own core, without a package in package 0, without an LLC above it behind a
 * private one (ids from 2^30 up cannot clash with logical indexes). */
static int from_hwloc(hws_topo_t *t, hwloc_topology_t h)
{
	static const hwloc_obj_type_t caches[] = { HWLOC_OBJ_L5CACHE, HWLOC_OBJ_L4CACHE,
		HWLOC_OBJ_L3CACHE, HWLOC_OBJ_L2CACHE, HWLOC_OBJ_L1CACHE };
	const unsigned own = 1u << 30;
	int llc = -1, n = nb_by_type(h, HWLOC_OBJ_PU);
	unsigned nnodes = (unsigned)nb_by_type(h, HWLOC_OBJ_NUMANODE);

	if (n <= 0)
		return hws_fail(EINVAL, "hwloc found no processing units");
	for (int i = 0; i < 5 && llc < 0; i++)
		if (nb_by_type(h, caches[i]) > 0)
			llc = i;
	if (llc >= 0)
		hw->obj_type_snprintf(t->llc_name, sizeof t->llc_name,
				      obj_by_type(h, caches[llc], 0), 0);
	else
		t->no_llc_why = "hwloc reports no caches on this machine";
	t->npus = (unsigned)n;
	t->pu = calloc(t->npus, sizeof *t->pu);
	if (!t->pu)
		return ENOMEM;
	for (unsigned i = 0; i < t->npus; i++) {
		hwloc_obj_t o = obj_by_type(h, HWLOC_OBJ_PU, i), a;
		struct hws_topo_pu *p = &t->pu[i];
		p->cpu = (int)o->os_index;
		a = ancestor_by_type(HWLOC_OBJ_CORE, o);
		p->core = a ? a->logical_index : own + i;
		a = ancestor_by_type(HWLOC_OBJ_PACKAGE, o);
		p->pkg = a ? a->logical_index : 0;
		p->llc = HWS_TOPO_NONE;
		if (llc >= 0) {
			a = ancestor_by_type(caches[llc], o);
			p->llc = a ? a->logical_index : own + p->core;
		}
		/* NUMA nodes hang beside the CPUs in hwloc 2: the first whose cpuset has it. */
		p->numa = 0;
		for (unsigned k = 0; k < nnodes; k++) {
			hwloc_obj_t node = obj_by_type(h, HWLOC_OBJ_NUMANODE, k);
			if (node && hw->bitmap_isset(node->cpuset, o->os_index)) {
				p->numa = node->logical_index;
				break;
			}
		}
	}
	summarize(t, h);
	return hws_topo_build(t);
}

/* Load with hwloc from XML (path) or from this machine (path NULL). */
static int load_hwloc(hws_topo_t **out, const char *path)
{
	hwloc_topology_t h;
	hws_topo_t *t;
	int rc;

	if (!(hw = hws_hwloc_fns()))
		return ENOTSUP;
	if (hw->topology_init(&h))
		return hws_fail(ENOMEM, "hwloc_topology_init failed");
	if ((path && hw->topology_set_xml(h, path)) || hw->topology_load(h)) {
		hw->topology_destroy(h);
		return path ? hws_fail(EINVAL, "cannot load hwloc XML topology '%s'", path)
			    : hws_fail(EIO, "hwloc cannot read this machine's topology");
	}
	t = calloc(1, sizeof *t);
	rc = t ? from_hwloc(t, h) : ENOMEM;
	hw->topology_destroy(h);
	if (rc) {
		topo_free(t);
		return rc;
	}
	strcpy(t->sum.source, path ? "hwloc-xml" : "hwloc");
	*out = t;
	return 0;
}
#endif

int hws_topo_new_flat(hws_topo_t **out, const int *cpus, unsigned n, const char *no_llc_why)
{
	hws_topo_t *t = calloc(1, sizeof *t);
	if (!t || !n || !(t->pu = calloc(n, sizeof *t->pu))) {
		topo_free(t);
		return n ? ENOMEM : EINVAL;
	}
	t->npus = n;
	for (unsigned i = 0; i < n; i++)
		t->pu[i] = (struct hws_topo_pu){ .cpu = cpus[i], .core = i, .llc = HWS_TOPO_NONE };
	t->no_llc_why = no_llc_why;
	if (hws_topo_build(t)) {
		topo_free(t);
		return ENOMEM;
	}
	t->sum.packages = t->sum.numa_nodes = 1;
	t->sum.cores = t->sum.pus = n;
	strcpy(t->sum.source, "sysconf");
	*out = t;
	return 0;
}

/* Without hwloc: the CPUs this process may run on (else all online ones),
 * one core each.  why says why there is no hwloc topology. */
static void load_flat(const char *why)
{
	static char no_llc[320];
	cpu_set_t set;
	int cpus[CPU_SETSIZE];
	unsigned n = 0;

	if (sched_getaffinity(0, sizeof set, &set) == 0) {
		for (int c = 0; c < CPU_SETSIZE; c++)
			if (CPU_ISSET(c, &set))
				cpus[n++] = c;
	}
	if (!n) {
		long online = sysconf(_SC_NPROCESSORS_ONLN);
		for (long c = 0; c < (online > 0 ? online : 1) && c < CPU_SETSIZE; c++)
			cpus[n++] = (int)c;
	}
	snprintf(no_llc, sizeof no_llc, "the last-level cache is unknown: topology from sysconf, %s",
		 why);
	hws_topo_new_flat(&this_topo, cpus, n, no_llc);
}

static void load_this(void)
{
#if HWS_HAVE_HWLOC
	if (load_hwloc(&this_topo, NULL) == 0)
		return;
	load_flat(hws_last_error());
#else
	load_flat("built without hwloc");
#endif
}

const hws_topo_t *hws_topo_this(void)
{
	hws_once(&this_once, load_this);
	return this_topo;
}

int hws_topo_load_xml(hws_topo_t **out, const char *path)
{
	if (!out || !path)
		return hws_fail(EINVAL, "hws_topo_load_xml needs a result pointer and a path");
#if HWS_HAVE_HWLOC
	return load_hwloc(out, path);
#else
	return hws_fail(ENOTSUP, "cannot load '%s': built without hwloc", path);
#endif
}

void hws_topo_free(hws_topo_t *t)
{
	if (t != this_topo)
		topo_free(t);
}

int hws_topo_summary(const hws_topo_t *t, struct hws_topo_summary *out)
{
	if (!t || !out)
		return EINVAL;
	*out = t->sum;
	return 0;
}

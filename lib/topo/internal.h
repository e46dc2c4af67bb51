/* Internal interfaces of the topo layer (not installed).
 *
 * Every topology, whether hwloc found it, an XML file described it or sysconf
 * guessed it, is reduced at load time to one table: the PUs (hardware threads)
 * in hwloc's logical order, each with dense ids of its core, last-level cache,
 * package and NUMA node, and the cores built from them.  Placements and groups
 * work on that table only, so they behave the same with and without hwloc. */
#ifndef HWS_TOPO_INTERNAL_H
#define HWS_TOPO_INTERNAL_H

#include <hwsync/topo.h>

#define HWS_TOPO_NONE (~0u)	/* "no id": e.g. LLC unknown */

struct hws_topo_pu {
	int cpu;		/* OS CPU number */
	unsigned core, llc, pkg, numa;	/* dense ids from 0; llc may be HWS_TOPO_NONE */
};

struct hws_topo_core {
	unsigned first_pu, npus;	/* its PUs: pu[first_pu], then more with the same core id */
	unsigned llc, pkg, numa;
};

enum hws_topo_level { HWS_TOPO_NUMA, HWS_TOPO_LLC, HWS_TOPO_PKG };

struct hws_topo {
	struct hws_topo_summary sum;
	unsigned npus, ncores, nllcs, npkgs, nnumas;	/* nllcs 0: LLC unknown */
	struct hws_topo_pu *pu;		/* npus, logical order */
	struct hws_topo_core *core;	/* ncores, logical order */
	char llc_name[8];		/* "L3", "L2", ... or "" */
	const char *no_llc_why;		/* why nllcs == 0 */
	enum hws_topo_level group_level;
};

/* Finish a topology whose t->pu[] and t->npus are filled with raw ids (any
 * unsigned values; equal means same object): make the ids dense, build the
 * cores, choose the group level.  0 or ENOMEM. */
int hws_topo_build(struct hws_topo *t);

/* A flat machine: one package, one NUMA node, one core per listed CPU, LLC
 * unknown.  What hws_topo_this() gives without hwloc; tests use it directly. */
int hws_topo_new_flat(hws_topo_t **t, const int *cpus, unsigned n, const char *no_llc_why);

/* hws_topo_parse_cpus() checking the CPUs against topology t. */
int hws_topo_parse_cpus_on(const hws_topo_t *t, const char *list, int *cpus, unsigned max,
			   unsigned *n);

#endif

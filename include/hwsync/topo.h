/* hwsync topology (hwloc): a summary of the machine, placement plans and
 * groups for hierarchical barriers.  Tests load synthetic XML topologies with
 * hws_topo_load_xml(). */
#ifndef HWSYNC_TOPO_H
#define HWSYNC_TOPO_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

struct hws_topo_summary {
	unsigned packages, cores, pus, numa_nodes;
	int smt;                     /* 1 when some core has >1 PU */
	unsigned long long l1d, l2, l3;  /* bytes, 0 when unknown */
	unsigned l3_count;           /* last-level caches */
	char source[32];             /* "hwloc", "hwloc-xml", "sysconf" */
};

typedef struct hws_topo hws_topo_t;

/* The machine we run on (cached) or a topology loaded from an XML file. */
const hws_topo_t *hws_topo_this(void);
int hws_topo_load_xml(hws_topo_t **t, const char *path);
void hws_topo_free(hws_topo_t *t);
int hws_topo_summary(const hws_topo_t *t, struct hws_topo_summary *out);

/* Placement plans: "smt", "core", "llc", "socket", "numa", "spread".
 * Fill cpus[0..n) with OS CPU numbers for n threads.  ENOTSUP with the reason
 * in hws_last_error() when the machine cannot give the placement (e.g. "smt"
 * without SMT siblings); EINVAL for an unknown name or n == 0; ERANGE when n
 * exceeds what the placement allows. */
int hws_topo_place(const hws_topo_t *t, const char *placement, unsigned n, int *cpus);

/* Group id (NUMA node, else LLC, else package) of an OS CPU, and the number of
 * groups: for hierarchical barriers. */
int hws_topo_group_of(const hws_topo_t *t, int cpu);
unsigned hws_topo_ngroups(const hws_topo_t *t);

#ifdef __cplusplus
}
#endif
#endif

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

/* The machine we run on (loaded once; NULL only when out of memory), or a
 * topology loaded from an hwloc XML file (ENOTSUP when built without hwloc).
 * Without hwloc the machine is flat: the CPUs this process may run on, one
 * core each, one package, one NUMA node, last-level cache unknown. */
const hws_topo_t *hws_topo_this(void);
int hws_topo_load_xml(hws_topo_t **t, const char *path);
void hws_topo_free(hws_topo_t *t);
int hws_topo_summary(const hws_topo_t *t, struct hws_topo_summary *out);

/* Placement plans for n threads: fill cpus[0..n) with OS CPU numbers.
 *   smt     SMT siblings of one core ("same core")
 *   core    one thread a core, compact: first LLC, rest of its package, next package
 *   llc     distinct cores under one last-level cache
 *   socket  distinct cores of one package ("same socket")
 *   numa    distinct cores of one NUMA node
 *   spread  distinct cores, round-robin over the packages ("across sockets")
 * No plan puts two threads on one hardware thread; only smt shares a core.
 * ENOTSUP when the machine cannot give the placement at all (smt without SMT
 * siblings, spread with one package, llc without cache information); ERANGE
 * when n exceeds what it allows (e.g. socket with more threads than a
 * package has cores); EINVAL for an unknown name or n == 0.  Every error has
 * its reason in hws_last_error(); cpus[] is then unspecified.  See
 * docs/topology.md. */
int hws_topo_place(const hws_topo_t *t, const char *placement, unsigned n, int *cpus);

/* NULL-terminated list of the placement names hws_topo_place accepts. */
const char *const *hws_topo_placements(void);

/* Groups for hierarchical barriers: the NUMA node when the topology has more
 * than one, else the last-level cache when there is more than one, else the
 * package.  Group ids are 0..hws_topo_ngroups()-1 in topology order;
 * hws_topo_group_of returns -1 (EINVAL in hws_last_error()) for a CPU not in
 * the topology.  hws_topo_group_kind names the level: "numa", "llc" or
 * "package". */
int hws_topo_group_of(const hws_topo_t *t, int cpu);
unsigned hws_topo_ngroups(const hws_topo_t *t);
const char *hws_topo_group_kind(const hws_topo_t *t);

/* Parse a CPU list such as "0,2-5" (the form of --cpus and of Linux's cpulist
 * files) into cpus[0..*n), in the order written; a CPU may repeat (threads
 * sharing it).  EINVAL for a malformed list or a CPU this machine does not
 * have (hws_topo_this()), ERANGE for more than max CPUs. */
int hws_topo_parse_cpus(const char *list, int *cpus, unsigned max, unsigned *n);

/* Pin the calling thread to one OS CPU (sched_setaffinity).  EINVAL for a
 * negative, absurd, offline or not-allowed CPU. */
int hws_topo_pin_self(int cpu);

#ifdef __cplusplus
}
#endif
#endif

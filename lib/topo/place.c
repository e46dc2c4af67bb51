/* Placement plans: which OS CPUs n threads run on.
 *
 *   smt     the SMT siblings of one core (the papers' "same core")
 *   core    one thread a core, compact: the cores of the first LLC, then the
 *           rest of its package, then the next package (no two threads on a core)
 *   llc     distinct cores under one last-level cache
 *   socket  distinct cores of one package (the papers' "same socket")
 *   numa    distinct cores of one NUMA node
 *   spread  distinct cores, round-robin over the packages (the papers'
 *           "across sockets")
 *
 * No plan puts two threads on one PU, and only smt puts two on one core.
 * What the machine cannot do at all is ENOTSUP (smt without SMT, spread with
 * one package, llc with no cache information); asking for more threads than
 * the plan has room for is ERANGE.  Both carry a reason for "skipped: ...". */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <hwsync/topo.h>
#include "topo/internal.h"
#include "arch/internal.h"

/* The first core with n PUs.  Without SMT even n == 1 is ENOTSUP: "smt"
 * names a property of the machine, and a run that asked for it must say it
 * did not get it. */
static int place_smt(const hws_topo_t *t, unsigned n, int *cpus)
{
	unsigned most = 0;
	for (unsigned c = 0; c < t->ncores; c++)
		if (t->core[c].npus > most)
			most = t->core[c].npus;
	if (most < 2)
		return hws_fail(ENOTSUP, "no SMT siblings on this machine");
	for (unsigned c = 0; c < t->ncores; c++) {
		const struct hws_topo_core *k = &t->core[c];
		if (k->npus < n)
			continue;
		for (unsigned p = k->first_pu, i = 0; i < n; p++)
			if (t->pu[p].core == c)
				cpus[i++] = t->pu[p].cpu;
		return 0;
	}
	return hws_fail(ERANGE, "%u threads on SMT siblings: a core has at most %u hardware threads",
			n, most);
}

static int place_core(const hws_topo_t *t, unsigned n, int *cpus)
{
	if (n > t->ncores)
		return hws_fail(ERANGE, "%u threads on distinct cores: this machine has %u cores", n,
				t->ncores);
	/* Logical order is topology order: LLC by LLC, package by package. */
	for (unsigned i = 0; i < n; i++)
		cpus[i] = t->pu[t->core[i].first_pu].cpu;
	return 0;
}

static unsigned domain_of(const struct hws_topo_core *c, enum hws_topo_level level)
{
	return level == HWS_TOPO_NUMA ? c->numa : level == HWS_TOPO_LLC ? c->llc : c->pkg;
}

/* n distinct cores of the first domain (LLC, package, node) that has n. */
static int place_within(const hws_topo_t *t, enum hws_topo_level level, unsigned ndomains,
			unsigned n, int *cpus)
{
	static const char *const what[] = { "one NUMA node: no node", "one last-level cache: no",
					    "one socket: no package" };
	unsigned most = 0;
	for (unsigned d = 0; d < ndomains; d++) {
		unsigned k = 0;
		for (unsigned c = 0; c < t->ncores; c++)
			if (domain_of(&t->core[c], level) == d && k++ < n)
				cpus[k - 1] = t->pu[t->core[c].first_pu].cpu;
		if (k >= n)
			return 0;
		if (k > most)
			most = k;
	}
	if (level == HWS_TOPO_LLC)
		return hws_fail(ERANGE, "%u threads on distinct cores of %s %s is shared by more "
				"than %u cores", n, what[level], t->llc_name, most);
	return hws_fail(ERANGE, "%u threads on distinct cores of %s has more than %u cores", n,
			what[level], most);
}

/* Round-robin over the packages, each package's cores in logical order: the
 * r-th core of package 0, of package 1, ..., then the (r+1)-th; a package
 * that has run out is skipped. */
static int place_spread(const hws_topo_t *t, unsigned n, int *cpus)
{
	unsigned out = 0;

	if (t->npkgs < 2)
		return hws_fail(ENOTSUP, "one socket: cannot place threads across sockets");
	if (n > t->ncores)
		return hws_fail(ERANGE, "%u threads on distinct cores across sockets: this machine "
				"has %u cores", n, t->ncores);
	for (unsigned r = 0; out < n; r++)
		for (unsigned p = 0; p < t->npkgs && out < n; p++)
			for (unsigned c = 0, k = 0; c < t->ncores; c++)
				if (t->core[c].pkg == p && k++ == r) {
					cpus[out++] = t->pu[t->core[c].first_pu].cpu;
					break;
				}
	return 0;
}

static int place_llc(const hws_topo_t *t, unsigned n, int *cpus)
{
	if (!t->nllcs)
		return hws_fail(ENOTSUP, "%s", t->no_llc_why ? t->no_llc_why
						: "the last-level cache is unknown");
	return place_within(t, HWS_TOPO_LLC, t->nllcs, n, cpus);
}

static int place_socket(const hws_topo_t *t, unsigned n, int *cpus)
{
	return place_within(t, HWS_TOPO_PKG, t->npkgs, n, cpus);
}

static int place_numa(const hws_topo_t *t, unsigned n, int *cpus)
{
	return place_within(t, HWS_TOPO_NUMA, t->nnumas, n, cpus);
}

static const char *const names[] = { "smt", "core", "llc", "socket", "numa", "spread", NULL };
static int (*const plans[])(const hws_topo_t *t, unsigned n, int *cpus) = {
	place_smt, place_core, place_llc, place_socket, place_numa, place_spread,
};

const char *const *hws_topo_placements(void)
{
	return names;
}

int hws_topo_place(const hws_topo_t *t, const char *placement, unsigned n, int *cpus)
{
	char known[64] = "";

	if (!t || !placement || !cpus)
		return hws_fail(EINVAL, "hws_topo_place needs a topology, a placement and a CPU array");
	for (size_t i = 0; names[i]; i++) {
		if (strcmp(placement, names[i]))
			continue;
		if (n == 0)
			return hws_fail(EINVAL, "placement '%s' for 0 threads", placement);
		return plans[i](t, n, cpus);
	}
	for (size_t i = 0; names[i]; i++)
		snprintf(known + strlen(known), sizeof known - strlen(known), "%s%s", i ? ", " : "",
			 names[i]);
	return hws_fail(EINVAL, "unknown placement '%s' (known: %s)", placement, known);
}

/* Placements, barrier groups and CPU lists on synthetic hwloc topologies
 * (tests/topo/data, see generate.sh there).  Skips (77) when built without
 * hwloc, as the arm64 cross build is. */
#include "topo/topo_check.h"

static const char *dir;

static hws_topo_t *load(const char *name)
{
	char path[512];
	hws_topo_t *t = NULL;
	snprintf(path, sizeof path, "%s/%s", dir, name);
	int rc = hws_topo_load_xml(&t, path);
	if (rc == ENOTSUP) {
		printf("skipped: %s\n", hws_last_error());
		exit(HWS_TEST_SKIP);
	}
	if (rc) {
		fprintf(stderr, "%s\n", hws_last_error());
		exit(1);
	}
	return t;
}

static void check_summary(const hws_topo_t *t, unsigned pkgs, unsigned cores, unsigned pus,
			  unsigned numa, int smt)
{
	struct hws_topo_summary s;
	CHECK_EQ(hws_topo_summary(t, &s), 0);
	CHECK(!strcmp(s.source, "hwloc-xml"));
	CHECK_EQ(s.packages, pkgs);
	CHECK_EQ(s.cores, cores);
	CHECK_EQ(s.pus, pus);
	CHECK_EQ(s.numa_nodes, numa);
	CHECK_EQ(s.smt, smt);
}

/* 2 packages x (NUMA node, L3, 4 cores x 2 PUs); core k = CPUs k and k+8. */
static void two_socket(void)
{
	hws_topo_t *t = load("two-socket.xml");
	check_plan_invariants(t);
	check_summary(t, 2, 8, 16, 2, 1);

	expect_cpus(t, "smt", 1, 0);
	expect_cpus(t, "smt", 2, 0, 8);
	expect_place_fail(t, "smt", 3, ERANGE,
			  "3 threads on SMT siblings: a core has at most 2 hardware threads");

	expect_cpus(t, "core", 1, 0);
	expect_cpus(t, "core", 4, 0, 1, 2, 3);
	expect_cpus(t, "core", 6, 0, 1, 2, 3, 4, 5);
	expect_cpus(t, "core", 8, 0, 1, 2, 3, 4, 5, 6, 7);
	expect_place_fail(t, "core", 9, ERANGE, "9 threads on distinct cores: this machine has 8 cores");

	expect_cpus(t, "llc", 4, 0, 1, 2, 3);
	expect_place_fail(t, "llc", 5, ERANGE, "of one last-level cache: no L3 is shared by more "
			  "than 4 cores");
	expect_cpus(t, "socket", 2, 0, 1);
	expect_cpus(t, "socket", 4, 0, 1, 2, 3);
	expect_place_fail(t, "socket", 5, ERANGE, "one socket: no package has more than 4 cores");
	expect_cpus(t, "numa", 3, 0, 1, 2);
	expect_place_fail(t, "numa", 5, ERANGE, "one NUMA node: no node has more than 4 cores");

	expect_cpus(t, "spread", 1, 0);
	expect_cpus(t, "spread", 2, 0, 4);
	expect_cpus(t, "spread", 3, 0, 4, 1);
	expect_cpus(t, "spread", 8, 0, 4, 1, 5, 2, 6, 3, 7);
	expect_place_fail(t, "spread", 9, ERANGE, "this machine has 8 cores");

	expect_place_fail(t, "sockets", 2, EINVAL,
			  "unknown placement 'sockets' (known: smt, core, llc, socket, numa, spread)");
	expect_place_fail(t, "", 2, EINVAL, "unknown placement ''");
	expect_place_fail(t, "core", 0, EINVAL, "placement 'core' for 0 threads");

	/* Groups: NUMA nodes. */
	CHECK_EQ(hws_topo_ngroups(t), 2);
	CHECK(!strcmp(hws_topo_group_kind(t), "numa"));
	for (int cpu = 0; cpu < 16; cpu++)
		CHECK_EQ(hws_topo_group_of(t, cpu), (cpu % 8) / 4);
	CHECK_EQ(hws_topo_group_of(t, 16), -1);
	CHECK(strstr(hws_last_error(), "cpu 16 is not in the topology"));
	CHECK_EQ(hws_topo_group_of(t, -1), -1);

	/* CPU lists are checked against the topology they are for. */
	int cpus[MAXN];
	unsigned n = 0;
	CHECK_EQ(hws_topo_parse_cpus_on(t, "0,8-10,15", cpus, MAXN, &n), 0);
	CHECK_EQ(n, 5);
	CHECK_EQ(cpus[0], 0); CHECK_EQ(cpus[1], 8); CHECK_EQ(cpus[3], 10); CHECK_EQ(cpus[4], 15);
	expect_fail(hws_topo_parse_cpus_on(t, "14-16", cpus, MAXN, &n), EINVAL,
		    "CPU 16 in '14-16' does not exist here (CPUs: 0-15)");
	hws_topo_free(t);
}

/* 1 package, 1 NUMA node, 1 L3, 4 cores, no SMT: CPUs 0-3. */
static void one_socket(void)
{
	hws_topo_t *t = load("one-socket.xml");
	check_plan_invariants(t);
	check_summary(t, 1, 4, 4, 1, 0);

	expect_place_fail(t, "smt", 1, ENOTSUP, "no SMT siblings on this machine");
	expect_place_fail(t, "smt", 2, ENOTSUP, "no SMT siblings on this machine");
	expect_cpus(t, "core", 4, 0, 1, 2, 3);
	expect_place_fail(t, "core", 5, ERANGE, "this machine has 4 cores");
	expect_cpus(t, "llc", 2, 0, 1);
	expect_cpus(t, "socket", 4, 0, 1, 2, 3);
	expect_place_fail(t, "socket", 5, ERANGE, "no package has more than 4 cores");
	expect_cpus(t, "numa", 3, 0, 1, 2);
	expect_place_fail(t, "spread", 1, ENOTSUP, "one socket: cannot place threads across sockets");
	expect_place_fail(t, "spread", 2, ENOTSUP, "one socket: cannot place threads across sockets");

	CHECK_EQ(hws_topo_ngroups(t), 1);
	CHECK(!strcmp(hws_topo_group_kind(t), "package"));
	for (int cpu = 0; cpu < 4; cpu++)
		CHECK_EQ(hws_topo_group_of(t, cpu), 0);
	CHECK_EQ(hws_topo_group_of(t, 4), -1);
	hws_topo_free(t);
}

/* 1 package, 1 NUMA node, L3 {0,1} and L3 {2,3}. */
static void split_llc(void)
{
	hws_topo_t *t = load("split-llc.xml");
	check_plan_invariants(t);
	check_summary(t, 1, 4, 4, 1, 0);

	expect_cpus(t, "llc", 2, 0, 1);
	expect_place_fail(t, "llc", 3, ERANGE, "no L3 is shared by more than 2 cores");
	expect_cpus(t, "core", 3, 0, 1, 2);
	expect_cpus(t, "socket", 4, 0, 1, 2, 3);
	expect_cpus(t, "numa", 4, 0, 1, 2, 3);

	CHECK_EQ(hws_topo_ngroups(t), 2);
	CHECK(!strcmp(hws_topo_group_kind(t), "llc"));
	CHECK_EQ(hws_topo_group_of(t, 0), 0);
	CHECK_EQ(hws_topo_group_of(t, 1), 0);
	CHECK_EQ(hws_topo_group_of(t, 2), 1);
	CHECK_EQ(hws_topo_group_of(t, 3), 1);
	hws_topo_free(t);
}

/* two-socket restricted to CPUs 0 (core 0 without its sibling 8) and 4-7,
 * 12-15 (package 1 whole): plans skip what is too small or used up. */
static void uneven(void)
{
	hws_topo_t *t = load("uneven.xml");
	check_plan_invariants(t);
	check_summary(t, 2, 5, 9, 2, 1);

	expect_cpus(t, "smt", 1, 0);
	expect_cpus(t, "smt", 2, 4, 12);	/* core 0 has one PU left */
	expect_cpus(t, "core", 3, 0, 4, 5);
	expect_cpus(t, "socket", 1, 0);
	expect_cpus(t, "socket", 2, 4, 5);	/* package 0 has one core */
	expect_cpus(t, "llc", 4, 4, 5, 6, 7);
	expect_cpus(t, "numa", 3, 4, 5, 6);
	expect_cpus(t, "spread", 2, 0, 4);
	expect_cpus(t, "spread", 5, 0, 4, 5, 6, 7);	/* package 0 ran out */
	expect_place_fail(t, "spread", 6, ERANGE, "this machine has 5 cores");

	CHECK_EQ(hws_topo_ngroups(t), 2);
	CHECK_EQ(hws_topo_group_of(t, 0), 0);
	CHECK_EQ(hws_topo_group_of(t, 12), 1);
	CHECK_EQ(hws_topo_group_of(t, 8), -1);
	unsigned n;
	int cpus[MAXN];
	expect_fail(hws_topo_parse_cpus_on(t, "8", cpus, MAXN, &n), EINVAL,
		    "CPU 8 in '8' does not exist here (CPUs: 0,4-7,12-15)");
	hws_topo_free(t);
}

int main(int argc, char **argv)
{
	hws_topo_t *t = NULL;

	CHECK(argc == 2);
	dir = argv[1];
	if (hws_topo_load_xml(&t, "/nonexistent/topology.xml") == ENOTSUP) {
		printf("skipped: %s\n", hws_last_error());
		return HWS_TEST_SKIP;
	}
	CHECK(strstr(hws_last_error(), "cannot load hwloc XML topology '/nonexistent/topology.xml'"));
	two_socket();
	one_socket();
	split_llc();
	uneven();
	printf("topo xml: ok\n");
	return 0;
}

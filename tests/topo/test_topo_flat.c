/* The flat machine (what hws_topo_this() is without hwloc), CPU lists,
 * pinning, and the plans' invariants on the machine we run on. */
#include "topo/topo_check.h"

static hws_topo_t *flat(const int *cpus, unsigned n)
{
	hws_topo_t *t = NULL;
	CHECK_EQ(hws_topo_new_flat(&t, cpus, n, "no cache information in this test"), 0);
	check_plan_invariants(t);
	return t;
}

static void flat_plans(void)
{
	const int four[] = { 0, 1, 2, 3 }, gaps[] = { 2, 5, 7 };
	hws_topo_t *t = flat(four, 4);
	struct hws_topo_summary s;

	CHECK_EQ(hws_topo_summary(t, &s), 0);
	CHECK_EQ(s.packages, 1); CHECK_EQ(s.cores, 4); CHECK_EQ(s.pus, 4); CHECK_EQ(s.smt, 0);
	CHECK(!strcmp(s.source, "sysconf"));
	expect_place_fail(t, "smt", 2, ENOTSUP, "no SMT siblings on this machine");
	expect_cpus(t, "core", 4, 0, 1, 2, 3);
	expect_place_fail(t, "core", 5, ERANGE, "this machine has 4 cores");
	expect_place_fail(t, "llc", 2, ENOTSUP, "no cache information in this test");
	expect_cpus(t, "socket", 3, 0, 1, 2);
	expect_place_fail(t, "socket", 5, ERANGE, "no package has more than 4 cores");
	expect_cpus(t, "numa", 4, 0, 1, 2, 3);
	expect_place_fail(t, "spread", 2, ENOTSUP, "one socket");
	expect_place_fail(t, "pairs", 2, EINVAL, "unknown placement 'pairs' (known: smt, core,");
	CHECK_EQ(hws_topo_ngroups(t), 1);
	CHECK(!strcmp(hws_topo_group_kind(t), "package"));
	CHECK_EQ(hws_topo_group_of(t, 3), 0);
	CHECK_EQ(hws_topo_group_of(t, 4), -1);
	hws_topo_free(t);

	t = flat(gaps, 3);
	expect_cpus(t, "core", 3, 2, 5, 7);
	expect_cpus(t, "socket", 2, 2, 5);
	CHECK_EQ(hws_topo_group_of(t, 7), 0);
	CHECK_EQ(hws_topo_group_of(t, 0), -1);
	hws_topo_free(t);

	CHECK_EQ(hws_topo_new_flat(&t, four, 0, NULL), EINVAL);
	expect_place_fail(NULL, "core", 1, EINVAL, "needs a topology");
	CHECK_EQ(hws_topo_ngroups(NULL), 0);
}

static void parse_lists(void)
{
	const int four[] = { 0, 1, 2, 3 }, gaps[] = { 2, 5, 7 };
	hws_topo_t *t = flat(four, 4), *g = flat(gaps, 3);
	int cpus[MAXN];
	unsigned n = 99;
	static const char *const bad[] = { ",", "0,", ",0", "1-", "-1", "a", "0 1", "1--2", "0,,1",
					   "+1", "0-1-2", "1,x", " 1", "0x1", "99999999", NULL };

	CHECK_EQ(hws_topo_parse_cpus_on(t, "3,0-1", cpus, MAXN, &n), 0);
	CHECK_EQ(n, 3); CHECK_EQ(cpus[0], 3); CHECK_EQ(cpus[1], 0); CHECK_EQ(cpus[2], 1);
	CHECK_EQ(hws_topo_parse_cpus_on(t, "2", cpus, MAXN, &n), 0);
	CHECK_EQ(n, 1); CHECK_EQ(cpus[0], 2);
	CHECK_EQ(hws_topo_parse_cpus_on(t, "1,1", cpus, MAXN, &n), 0);	/* sharing a CPU */
	CHECK_EQ(n, 2); CHECK_EQ(cpus[1], 1);
	CHECK_EQ(hws_topo_parse_cpus_on(t, "0-3", cpus, 4, &n), 0);
	CHECK_EQ(n, 4); CHECK_EQ(cpus[3], 3);
	CHECK_EQ(hws_topo_parse_cpus_on(t, "2-2", cpus, 1, &n), 0);
	CHECK_EQ(n, 1); CHECK_EQ(cpus[0], 2);

	n = 99;
	expect_fail(hws_topo_parse_cpus_on(t, "", cpus, MAXN, &n), EINVAL, "empty CPU list");
	for (int i = 0; bad[i]; i++) {
		char want[64];
		snprintf(want, sizeof want, "bad CPU list '%s' at '", bad[i]);
		expect_fail(hws_topo_parse_cpus_on(t, bad[i], cpus, MAXN, &n), EINVAL, want);
	}
	expect_fail(hws_topo_parse_cpus_on(t, "3-1", cpus, MAXN, &n), EINVAL,
		    "bad CPU list '3-1': range 3-1 runs backwards");
	expect_fail(hws_topo_parse_cpus_on(t, "0-4", cpus, MAXN, &n), EINVAL,
		    "CPU 4 in '0-4' does not exist here (CPUs: 0-3)");
	expect_fail(hws_topo_parse_cpus_on(t, "0-3", cpus, 3, &n), ERANGE,
		    "CPU list '0-3' names more than 3 CPUs");
	expect_fail(hws_topo_parse_cpus_on(g, "2,3", cpus, MAXN, &n), EINVAL,
		    "CPU 3 in '2,3' does not exist here (CPUs: 2,5,7)");
	CHECK_EQ(n, 99);	/* untouched by failures */
	CHECK_EQ(hws_topo_parse_cpus_on(g, "7,5", cpus, MAXN, &n), 0);
	CHECK_EQ(n, 2); CHECK_EQ(cpus[0], 7);
	hws_topo_free(t);
	hws_topo_free(g);
}

/* This machine, whatever it is: invariants, its CPU list, pinning. */
static void this_machine(void)
{
	const hws_topo_t *t = hws_topo_this();
	struct hws_topo_summary s;
	int all[MAXN], cpus[MAXN];
	char list[32];
	unsigned n, cores;

	CHECK(t);
	CHECK_EQ(hws_topo_summary(t, &s), 0);
	printf("this machine (%s): %u packages, %u cores, %u PUs, %u groups (%s)\n", s.source,
	       s.packages, s.cores, s.pus, hws_topo_ngroups(t), hws_topo_group_kind(t));
	check_plan_invariants(t);
	CHECK(hws_topo_ngroups(t) >= 1);
	if (!strcmp(s.source, "sysconf")) {
		expect_place_fail(t, "smt", 1, ENOTSUP, "no SMT siblings on this machine");
		expect_place_fail(t, "llc", 1, ENOTSUP, "built without hwloc");
		expect_place_fail(t, "spread", 1, ENOTSUP, "one socket");
		CHECK(!strcmp(hws_topo_group_kind(t), "package"));
	}

	cores = t->ncores < MAXN ? t->ncores : MAXN;
	CHECK_EQ(hws_topo_place(t, "core", cores, all), 0);
	snprintf(list, sizeof list, "%d", all[cores - 1]);
	CHECK_EQ(hws_topo_parse_cpus(list, cpus, MAXN, &n), 0);
	CHECK_EQ(n, 1); CHECK_EQ(cpus[0], all[cores - 1]);
	expect_fail(hws_topo_parse_cpus("65536", cpus, MAXN, &n), EINVAL,
		    "CPU 65536 in '65536' does not exist here");

	for (unsigned i = 0; i < cores && i < 8; i++) {
		CHECK_EQ(hws_topo_pin_self(all[i]), 0);
		int on = sched_getcpu();
		CHECK(on < 0 || on == all[i]);	/* -1: no getcpu (some emulators) */
		CHECK(hws_topo_group_of(t, all[i]) >= 0);
	}
	expect_fail(hws_topo_pin_self(-1), EINVAL, "cannot pin to CPU -1");
	expect_fail(hws_topo_pin_self(1 << 20), EINVAL, "no such CPU number");
	expect_fail(hws_topo_pin_self(65536), EINVAL, "not online or not allowed");
}

int main(void)
{
	flat_plans();
	parse_lists();
	this_machine();
	printf("topo flat: ok\n");
	return 0;
}

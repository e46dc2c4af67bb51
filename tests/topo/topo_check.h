/* Checks shared by the topo tests: a placement gives exactly these CPUs, or
 * fails with this error and a message containing this text. */
#ifndef HWS_TOPO_CHECK_H
#define HWS_TOPO_CHECK_H

#include "common/test.h"
#include <stdarg.h>
#include <hwsync/topo.h>
#include <hwsync/wait.h>
#include "topo/internal.h"

#define MAXN 64

/* The n CPUs that follow n, e.g. expect_cpus(t, "spread", 3, 0, 4, 1). */
static void expect_cpus_at(int line, const hws_topo_t *t, const char *plan, unsigned n, ...)
{
	int got[MAXN];
	va_list ap;
	int rc = hws_topo_place(t, plan, n, got);
	if (rc) {
		fprintf(stderr, "line %d: %s x%u failed (%d): %s\n", line, plan, n, rc,
			hws_last_error());
		exit(1);
	}
	va_start(ap, n);
	for (unsigned i = 0; i < n; i++) {
		int want = va_arg(ap, int);
		if (got[i] != want) {
			fprintf(stderr, "line %d: %s x%u: cpus[%u] = %d, want %d\n", line, plan, n, i,
				got[i], want);
			exit(1);
		}
	}
	va_end(ap);
}
#define expect_cpus(t, plan, n, ...) expect_cpus_at(__LINE__, t, plan, n, __VA_ARGS__)

static void expect_fail_at(int line, int rc, int want, const char *text)
{
	if (rc != want || !strstr(hws_last_error(), text)) {
		fprintf(stderr, "line %d: got %d (%s), want %d with \"%s\"\n", line, rc,
			rc ? hws_last_error() : "success", want, text);
		exit(1);
	}
}
#define expect_fail(rc, want, text) expect_fail_at(__LINE__, rc, want, text)

/* Placement plan failing with error `want` and `text` in the message. */
static void expect_place_fail_at(int line, const hws_topo_t *t, const char *plan, unsigned n,
				 int want, const char *text)
{
	int cpus[MAXN];
	expect_fail_at(line, hws_topo_place(t, plan, n, cpus), want, text);
}
#define expect_place_fail(t, plan, n, want, text) \
	expect_place_fail_at(__LINE__, t, plan, n, want, text)

/* What every successful plan must give on topology t (internal table):
 * CPUs of t, no PU twice, distinct cores except smt (one core), and one LLC,
 * package or node for llc, socket, numa. */
static void check_plan_invariants(const hws_topo_t *t)
{
	for (const char *const *plan = hws_topo_placements(); *plan; plan++) {
		for (unsigned n = 1; n <= t->npus + 1 && n <= MAXN; n++) {
			int cpus[MAXN];
			const struct hws_topo_pu *pu[MAXN];
			int rc = hws_topo_place(t, *plan, n, cpus);
			if (rc) {
				if (rc != ENOTSUP && rc != ERANGE) {
					fprintf(stderr, "%s x%u: %d %s\n", *plan, n, rc,
						hws_last_error());
					exit(1);
				}
				CHECK(hws_last_error()[0]);
				continue;
			}
			for (unsigned i = 0; i < n; i++) {
				pu[i] = NULL;
				for (unsigned j = 0; j < t->npus; j++)
					if (t->pu[j].cpu == cpus[i])
						pu[i] = &t->pu[j];
				CHECK(pu[i]);
				for (unsigned j = 0; j < i; j++) {
					CHECK(cpus[j] != cpus[i]);
					if (strcmp(*plan, "smt"))
						CHECK(pu[j]->core != pu[i]->core);
					else
						CHECK(pu[j]->core == pu[i]->core);
					if (!strcmp(*plan, "llc"))
						CHECK(pu[j]->llc == pu[i]->llc);
					if (!strcmp(*plan, "socket"))
						CHECK(pu[j]->pkg == pu[i]->pkg);
					if (!strcmp(*plan, "numa"))
						CHECK(pu[j]->numa == pu[i]->numa);
				}
			}
		}
		/* "core" and "spread" use every core before they give up. */
		if (!strcmp(*plan, "core")) {
			int cpus[MAXN];
			if (t->ncores <= MAXN)
				CHECK_EQ(hws_topo_place(t, *plan, t->ncores, cpus), 0);
			CHECK_EQ(hws_topo_place(t, *plan, t->ncores + 1, cpus), ERANGE);
		}
	}
}

#endif

/* CPU lists ("0,2-5", as in --cpus and Linux's cpulist files) and pinning the
 * calling thread. */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <hwsync/topo.h>
#include "topo/internal.h"
#include "arch/internal.h"

#define HWS_CPU_MAX 65536	/* larger numbers are typing errors, not CPUs */

static bool has_cpu(const hws_topo_t *t, int cpu)
{
	for (unsigned i = 0; i < t->npus; i++)
		if (t->pu[i].cpu == cpu)
			return true;
	return false;
}

static int cmp_int(const void *a, const void *b)
{
	return (*(const int *)a > *(const int *)b) - (*(const int *)a < *(const int *)b);
}

/* The topology's CPUs as a sorted list with ranges: "0-7,16-23". */
static void format_cpus(const hws_topo_t *t, char *buf, size_t size)
{
	int *c = malloc(t->npus * sizeof *c);
	size_t len = 0;

	buf[0] = '\0';
	if (!c)
		return;
	for (unsigned i = 0; i < t->npus; i++)
		c[i] = t->pu[i].cpu;
	qsort(c, t->npus, sizeof *c, cmp_int);
	for (unsigned i = 0, j; i < t->npus && len < size; i = j + 1) {
		for (j = i; j + 1 < t->npus && c[j + 1] == c[j] + 1; j++)
			;
		if (j > i)
			len += (size_t)snprintf(buf + len, size - len, "%s%d-%d", i ? "," : "", c[i], c[j]);
		else
			len += (size_t)snprintf(buf + len, size - len, "%s%d", i ? "," : "", c[i]);
	}
	free(c);
}

/* A CPU number at *p: digits only.  -1 when there is none or it is too big. */
static int number(const char **p)
{
	long v = 0;
	if (!isdigit((unsigned char)**p))
		return -1;
	while (isdigit((unsigned char)**p)) {
		v = v * 10 + (**p - '0');
		if (v > HWS_CPU_MAX)
			return -1;
		(*p)++;
	}
	return (int)v;
}

int hws_topo_parse_cpus_on(const hws_topo_t *t, const char *list, int *cpus, unsigned max,
			   unsigned *n)
{
	const char *p = list;
	unsigned k = 0;

	if (!t || !list || !n || (max && !cpus))
		return hws_fail(EINVAL, "hws_topo_parse_cpus needs a topology, a list and results");
	if (!*list)
		return hws_fail(EINVAL, "empty CPU list");
	for (;;) {
		const char *at = p;
		int lo = number(&p), hi = lo;
		if (lo >= 0 && *p == '-') {
			p++;
			hi = number(&p);
		}
		if (lo < 0 || hi < 0 || (*p && *p != ','))
			return hws_fail(EINVAL, "bad CPU list '%s' at '%s' (expected CPU numbers "
					"and ranges like 0,2-5)", list, at);
		if (hi < lo)
			return hws_fail(EINVAL, "bad CPU list '%s': range %d-%d runs backwards", list,
					lo, hi);
		for (int c = lo; c <= hi; c++) {
			if (!has_cpu(t, c)) {
				char have[128];
				format_cpus(t, have, sizeof have);
				return hws_fail(EINVAL, "CPU %d in '%s' does not exist here (CPUs: %s)",
						c, list, have);
			}
			if (k == max)
				return hws_fail(ERANGE, "CPU list '%s' names more than %u CPUs", list,
						max);
			cpus[k++] = c;
		}
		if (!*p)
			break;
		p++;	/* the comma; what follows must be another item */
	}
	*n = k;
	return 0;
}

int hws_topo_parse_cpus(const char *list, int *cpus, unsigned max, unsigned *n)
{
	const hws_topo_t *t = hws_topo_this();
	if (!t)
		return hws_fail(ENOMEM, "cannot load this machine's topology");
	return hws_topo_parse_cpus_on(t, list, cpus, max, n);
}

int hws_topo_pin_self(int cpu)
{
	cpu_set_t *set;
	size_t size;
	int rc = 0;

	if (cpu < 0 || cpu > HWS_CPU_MAX)
		return hws_fail(EINVAL, "cannot pin to CPU %d: no such CPU number", cpu);
	set = CPU_ALLOC((size_t)cpu + 1);
	if (!set)
		return hws_fail(ENOMEM, "cannot pin to CPU %d: out of memory", cpu);
	size = CPU_ALLOC_SIZE((size_t)cpu + 1);
	CPU_ZERO_S(size, set);
	CPU_SET_S((size_t)cpu, size, set);
	if (sched_setaffinity(0, size, set) != 0) {
		rc = errno;
		if (rc == EINVAL)
			hws_fail(rc, "cannot pin to CPU %d: not online or not allowed for this process",
				 cpu);
		else
			hws_fail(rc, "cannot pin to CPU %d: sched_setaffinity failed (errno %d)", cpu,
				 rc);
	}
	CPU_FREE(set);
	return rc;
}

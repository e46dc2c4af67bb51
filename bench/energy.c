/* RAPL package energy through powercap: the top-level domains
 * /sys/class/powercap/intel-rapl:N (one per package; AMD uses the same
 * names), summed.  The counters wrap at max_energy_range_uj. */
#include <errno.h>
#include <glob.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include "bench/energy.h"

static int read_u64(const char *dir, const char *file, uint64_t *v)
{
	char path[512];
	snprintf(path, sizeof path, "%s/%s", dir, file);
	FILE *f = fopen(path, "r");
	if (!f)
		return errno;
	int ok = fscanf(f, "%" SCNu64, v) == 1;
	fclose(f);
	return ok ? 0 : EIO;
}

/* The package domains (intel-rapl:N, not the subdomains intel-rapl:N:M), in
 * glob (sorted) order: their indexes in g->gl_pathv.  Returns how many; g
 * must be freed with globfree when glob_ok. */
static unsigned domains(glob_t *g, bool *glob_ok, unsigned *idx)
{
	unsigned n = 0;
	*glob_ok = glob("/sys/class/powercap/intel-rapl:[0-9]*", 0, NULL, g) == 0;
	for (size_t i = 0; *glob_ok && i < g->gl_pathc && n < BENCH_ENERGY_MAX_DOMAINS; i++)
		if (strchr(g->gl_pathv[i], ':') == strrchr(g->gl_pathv[i], ':'))
			idx[n++] = (unsigned)i;
	return n;
}

int bench_energy_start(struct bench_energy *e)
{
	glob_t g;
	bool ok;
	unsigned idx[BENCH_ENERGY_MAX_DOMAINS], n = domains(&g, &ok, idx);
	e->n = 0;
	for (unsigned i = 0; i < n; i++) {
		const char *dir = g.gl_pathv[idx[i]];
		if (read_u64(dir, "energy_uj", &e->uj[e->n]))
			continue;
		if (read_u64(dir, "max_energy_range_uj", &e->range[e->n]))
			e->range[e->n] = 0;
		e->n++;
	}
	if (ok)
		globfree(&g);
	return e->n ? 0 : ENOTSUP;
}

double bench_energy_joules(const struct bench_energy *e)
{
	glob_t g;
	bool ok;
	unsigned idx[BENCH_ENERGY_MAX_DOMAINS], n = domains(&g, &ok, idx), k = 0;
	double j = 0;
	for (unsigned i = 0; i < n && k < e->n; i++) {
		uint64_t now;
		if (read_u64(g.gl_pathv[idx[i]], "energy_uj", &now))
			continue;
		uint64_t d = now >= e->uj[k] ? now - e->uj[k]
					     : now + (e->range[k] ? e->range[k] : 0) - e->uj[k];
		j += (double)d * 1e-6;
		k++;
	}
	if (ok)
		globfree(&g);
	return k == e->n ? j : -1;
}

/* Package energy from RAPL (powercap), for joules per operation.  Where it is
 * not readable, bench_energy_available() (harness.h) gives the reason and the
 * experiments list energy as skipped. */
#ifndef HWS_BENCH_ENERGY_H
#define HWS_BENCH_ENERGY_H

#include <stdint.h>

#define BENCH_ENERGY_MAX_DOMAINS 16

struct bench_energy {
	unsigned n;
	uint64_t uj[BENCH_ENERGY_MAX_DOMAINS];       /* energy_uj at start */
	uint64_t range[BENCH_ENERGY_MAX_DOMAINS];    /* max_energy_range_uj (wrap) */
};

/* Read every package domain (intel-rapl:N).  0, or ENOTSUP. */
int bench_energy_start(struct bench_energy *e);
/* Joules since bench_energy_start (counter wrap handled); < 0 on a read error. */
double bench_energy_joules(const struct bench_energy *e);

#endif

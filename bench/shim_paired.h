/* hwsync-shim-patterns' paired patterns (shim_paired.c): the uncontended
 * lock and unlock pair through the entry points the program links (the
 * shim's under LD_PRELOAD) and through the native ones, in turns in one
 * process. */
#ifndef HWS_BENCH_SHIM_PAIRED_H
#define HWS_BENCH_SHIM_PAIRED_H

#include <stdint.h>

struct paired_result {
	uint64_t ops, ns;             /* the linked entry points' turns */
	uint64_t base_ops, base_ns;   /* the native ones' turns */
};

/* CLOCK_MONOTONIC in ns (shim_patterns.c, the program's one clock). */
uint64_t now_ns(void);

/* kind: "mutex" or "omp-lock"; runs for about run_ns on the calling
 * thread.  0, or an errno value with *why set (the native entry points
 * could not be found). */
int paired_run(const char *kind, uint64_t run_ns, struct paired_result *r, const char **why);

#endif

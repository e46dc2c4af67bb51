/* hwsync-shim-patterns' paired patterns: the uncontended lock and unlock
 * pair (shim_paired.c) and the sleeping consumers (shim_paired_cond.c)
 * through the entry points the program links (the shim's under LD_PRELOAD)
 * and through the native ones, in turns in one process. */
#ifndef HWS_BENCH_SHIM_PAIRED_H
#define HWS_BENCH_SHIM_PAIRED_H

#include <stdbool.h>
#include <stdint.h>

struct paired_result {
	uint64_t ops, ns;             /* the linked entry points' turns */
	uint64_t base_ops, base_ns;   /* the native ones' turns */
	/* the sleeping consumers only, else 0: the process's CPU time over
	 * each side's turns and each side's median wake latency */
	uint64_t cpu_ns, base_cpu_ns, lat_ns, base_lat_ns;
};

/* The native object's own definition of `name` (object: "libc.so.6" or
 * "libgomp.so.1", already loaded); NULL where it is not loaded or lacks it. */
void *paired_native_fn(const char *object, const char *name);

/* kind: "mutex" or "omp-lock"; runs for about run_ns on the calling
 * thread.  0, or an errno value with *why set (the native entry points
 * could not be found). */
int paired_run(const char *kind, uint64_t run_ns, struct paired_result *r, const char **why);

/* cond-periodic's (periodic) or cond-consumer's producer and consumer, the
 * producer on the calling thread; pin(i) puts the calling thread on the
 * i-th CPU (the consumer on 0, the producer on 1); the same returns. */
int paired_cond_run(bool periodic, void (*pin)(unsigned i), uint64_t run_ns,
		    struct paired_result *r, const char **why);

#endif

/* The kernels of the speculative-precomputation experiment (exp_spr.c),
 * each cut into phases: phase p is the worker's share between two barriers,
 * prefetch(p) touches what phase p will read (the helper's "p-slice").
 * Running the phases in order on one thread is the serial computation. */
#ifndef HWS_BENCH_SPR_KERNELS_H
#define HWS_BENCH_SPR_KERNELS_H

#include <stddef.h>
#include <stdint.h>

struct spr_kernel {
	const char *name;
	size_t nphases;
	size_t bytes;                      /* working set */
	char shape[64];                    /* e.g. "n=1024" */
	void (*reset)(struct spr_kernel *k);                 /* restore the input */
	void (*phase)(struct spr_kernel *k, size_t p);
	uint64_t (*prefetch)(struct spr_kernel *k, size_t p);   /* returns a sink */
	/* 0 when the result equals the reference (the first serial result). */
	int (*check)(const struct spr_kernel *k);
	void (*free)(struct spr_kernel *k);
	/* filled in by spr_kernel_reference() */
	void *ref;
	size_t ref_bytes;
	const void *out;                   /* the result of the last run */
};

/* Build a kernel of the given size with phases of about chunk bytes; NULL
 * and *why on failure.  "lu" (size = n), "closure" (n), "spmv" (rows). */
struct spr_kernel *spr_kernel_new(const char *name, size_t size, size_t chunk,
				  const char **why);
#define SPR_KERNELS "lu,closure,spmv"
/* Run it serially once and keep the result as the reference.  0 or ENOMEM. */
int spr_kernel_reference(struct spr_kernel *k);
void spr_kernel_free(struct spr_kernel *k);

#endif

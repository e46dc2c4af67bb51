/* The active kernels of [T2SPIN]: small compute loops whose speed shows how
 * much a waiting thread beside them takes from the core.  One call = one unit
 * of a few microseconds.  State is per thread (kernel_prepare first). */
#ifndef HWS_BENCH_KERNELS_H
#define HWS_BENCH_KERNELS_H

#include <stdint.h>

#define BENCH_KERNELS "add,mulx,branch,l1hit,l2hit,matvec-int,matvec-fp,quicksort,hash"

typedef uint64_t (*bench_kernel_fn)(void *state);
struct bench_kernel {
	const char *name;
	const char *what;
	bench_kernel_fn fn;
};
/* NULL for an unknown name. */
const struct bench_kernel *bench_kernel_find(const char *name);
/* Per-thread state for any kernel (buffers, permutations); NULL on ENOMEM. */
void *bench_kernel_state_new(void);
void bench_kernel_state_free(void *state);

#endif

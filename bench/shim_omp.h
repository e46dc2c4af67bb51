/* hwsync-shim-patterns' OpenMP patterns (shim_omp.c): each runs for
 * run_ns and gives its operations and window; see shim_patterns.c for what
 * an operation is. */
#ifndef HWS_BENCH_SHIM_OMP_H
#define HWS_BENCH_SHIM_OMP_H

#include <stdint.h>

enum omp_kind {
	OMP_LOCK, OMP_CRITICAL, OMP_BARRIER,
	OMP_PARALLEL, OMP_PARALLEL_FOR, OMP_FOR_DYNAMIC, OMP_SECTIONS, OMP_ORDERED
};

/* One thread: omp_set_lock + omp_unset_lock. */
void solo_omp_lock_run(uint64_t *ops, uint64_t *ns);
/* n pinned threads of one team, a one-increment section under an omp lock
 * (OMP_LOCK) or `omp critical` (OMP_CRITICAL); the count is checked, and the
 * sampled waits' 99th percentile goes to *p99_ns. */
void omp_team_run(enum omp_kind kind, unsigned n, uint64_t *ops, uint64_t *ns,
		  uint64_t *p99_ns);
/* n pinned threads, back-to-back constructs with empty bodies (the other
 * kinds). */
void omp_overhead_run(enum omp_kind kind, unsigned n, uint64_t *ops, uint64_t *ns);

#endif

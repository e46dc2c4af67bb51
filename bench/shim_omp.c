/* hwsync-shim-patterns' OpenMP patterns (shim_omp.h), built where the
 * compiler has OpenMP: GNU OpenMP's locks, critical sections and constructs,
 * which the shim takes over. */
#define _GNU_SOURCE
#include <errno.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include "shim_omp.h"
#include "shim_team.h"

/* libgomp may give a team fewer threads than asked (OMP_THREAD_LIMIT, or
 * OMP_DYNAMIC on a loaded machine); a gate would then wait for threads that
 * never come.  Dynamic teams are switched off, and a short team is an error
 * before any gate. */
static void team_size_checked(unsigned n, unsigned got)
{
	if (got != n) {
		fprintf(stderr, "hwsync-shim-patterns: OpenMP gave %u threads, asked %u\n", got, n);
		exit(1);
	}
}

void solo_omp_lock_run(uint64_t *ops, uint64_t *ns)
{
	omp_lock_t l;
	omp_init_lock(&l);
	SOLO_LOOP((omp_set_lock(&l), omp_unset_lock(&l)), *ops, *ns);
	omp_destroy_lock(&l);
}

/* n threads of one team, each pinned; a one-increment critical section under
 * an omp lock or `omp critical`. */
void omp_team_run(enum omp_kind kind, unsigned n, uint64_t *ops, uint64_t *ns,
		  uint64_t *p99_ns)
{
	struct team t = { .n = n };
	omp_lock_t l;
	long counter = 0;        /* under the lock or the critical section */
	_Atomic long total = 0;
	unsigned got = 0;
	struct wait_samples *samples = calloc(n, sizeof *samples);

	if (!samples)
		die("calloc", ENOMEM);
	omp_init_lock(&l);
	omp_set_dynamic(0);
#pragma omp parallel num_threads(n)
	{
		unsigned me = (unsigned)omp_get_thread_num();
		struct wait_samples *ws = &samples[me];   /* me < n: a team is never larger */
		pin_self(me);
		/* the end of single is a barrier: every thread reads got after it */
#pragma omp single
		got = (unsigned)omp_get_num_threads();
		uint64_t end = got == n ? team_gate(&t) : 0, k = 0;
		do {
			for (int b = 0; b < BATCH; b++) {
				if (kind == OMP_LOCK) {
					ACQUIRE_SAMPLED(omp_set_lock(&l), ws, (uint64_t)b, BATCH);
					counter++;
					omp_unset_lock(&l);
				} else if (b) {
#pragma omp critical
					counter++;
				} else {
					/* the sample is written inside the section,
					 * which it lengthens by one store */
					uint64_t t0 = now_ns();
#pragma omp critical
					{
						ws->ns[ws->n++ % WAIT_SAMPLES] = now_ns() - t0;
						counter++;
					}
				}
			}
			k += BATCH;
		} while (now_ns() < end);
		atomic_fetch_add(&total, (long)k);
	}
	team_size_checked(n, got);
	*ns = now_ns() - t.t0;
	cpu1 = cpu_ns();
	omp_destroy_lock(&l);
	*p99_ns = samples_p99(samples, n);
	free(samples);
	if (counter != atomic_load(&total)) {
		fprintf(stderr, "hwsync-shim-patterns: mutual exclusion violated (counter %ld, "
			"expected %ld)\n", counter, atomic_load(&total));
		exit(1);
	}
	*ops = (uint64_t)atomic_load(&total);
}

/* EPCC syncbench-style overheads [EPCC]: OpenMP constructs with empty bodies,
 * back to back, by n pinned threads.  An operation is one construct:
 *   OMP_BARRIER       inside one region: `barrier`
 *   OMP_PARALLEL      `parallel` (fork and join), started by the first thread
 *   OMP_PARALLEL_FOR  `parallel for schedule(static)`, one iteration a thread
 *   OMP_FOR_DYNAMIC   inside one region: `for schedule(dynamic, 1)`, four
 *                     iterations a thread, and the barrier at its end
 *   OMP_SECTIONS      inside one region: four `section`s and the barrier
 *   OMP_ORDERED       inside one region: `for ordered schedule(static, 1)`, one
 *                     iteration a thread, each in an `ordered` block, and the
 *                     barrier at its end */
static inline void omp_empty(void)
{
	__asm__ __volatile__("" ::: "memory");
}

void omp_overhead_run(enum omp_kind kind, unsigned n, uint64_t *ops, uint64_t *ns)
{
	struct team t = { .n = n };
	_Atomic long total = 0;
	_Atomic int stop = 0;
	unsigned got = 0;

	/* libgomp keeps its pool threads for the next team of the same size:
	 * pinned here, they stay pinned for every region below. */
	omp_set_dynamic(0);
#pragma omp parallel num_threads(n)
	{
		pin_self((unsigned)omp_get_thread_num());
#pragma omp master
		got = (unsigned)omp_get_num_threads();
	}
	team_size_checked(n, got);
	if (kind == OMP_PARALLEL || kind == OMP_PARALLEL_FOR) {
		t.n = 1;
		uint64_t end = team_gate(&t), k = 0;
		do {
			for (int b = 0; b < BATCH; b++) {
				if (kind == OMP_PARALLEL) {
#pragma omp parallel num_threads(n)
					omp_empty();
				} else {
#pragma omp parallel for num_threads(n) schedule(static)
					for (unsigned i = 0; i < n; i++)
						omp_empty();
				}
			}
			k += BATCH;
		} while (now_ns() < end);
		atomic_store(&total, (long)k);
	} else {
#pragma omp parallel num_threads(n)
		{
			unsigned me = (unsigned)omp_get_thread_num();
			uint64_t end = team_gate(&t), k = 0;
			for (;;) {
				for (int b = 0; b < BATCH; b++) {
					if (kind == OMP_BARRIER) {
#pragma omp barrier
					} else if (kind == OMP_FOR_DYNAMIC) {
#pragma omp for schedule(dynamic, 1)
						for (unsigned i = 0; i < 4 * n; i++)
							omp_empty();
					} else if (kind == OMP_SECTIONS) {
#pragma omp sections
						{
#pragma omp section
							omp_empty();
#pragma omp section
							omp_empty();
#pragma omp section
							omp_empty();
#pragma omp section
							omp_empty();
						}
					} else {
#pragma omp for ordered schedule(static, 1)
						for (unsigned i = 0; i < n; i++) {
#pragma omp ordered
							omp_empty();
						}
					}
				}
				k += BATCH;
				if (me == 0)
					atomic_store(&stop, now_ns() >= end);
				/* every thread reads stop after this barrier and before
				 * thread 0 can write it again (after BATCH constructs,
				 * each ending in a barrier) */
#pragma omp barrier
				k++;
				if (atomic_load(&stop))
					break;
			}
			if (me == 0)
				atomic_store(&total, (long)k);
		}
	}
	*ns = now_ns() - t.t0;
	cpu1 = cpu_ns();
	*ops = (uint64_t)atomic_load(&total);
}

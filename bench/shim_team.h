/* What hwsync-shim-patterns' pattern files share (shim_team.c): the CPUs
 * and the run time the command line gave, the CPU-time window, a team of
 * pthreads that start together, and the sampling of lock waits. */
#ifndef HWS_BENCH_SHIM_TEAM_H
#define HWS_BENCH_SHIM_TEAM_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include "shim_clock.h"

#define MAX_THREADS 256
#define BATCH 64        /* operations between two clock reads */

extern int cpus[MAX_THREADS];   /* thread i runs on cpus[i % ncpus] */
extern unsigned ncpus;
extern uint64_t run_ns;
extern uint64_t cpu0, cpu1;     /* CPU time of the process at the window's ends */

/* One line on stderr naming what failed, then exit 1. */
_Noreturn void die(const char *what, int err);
/* Pin the calling thread to the i-th CPU of the command line's. */
void pin_self(unsigned i);

/* Sampled lock waits of one thread: a ring of the latest WAIT_SAMPLES, so a
 * long run keeps its end.  Only the owning thread writes it; the main thread
 * reads it after the join. */
#define WAIT_SAMPLES 8192
struct wait_samples {
	uint64_t n;
	uint64_t ns[WAIT_SAMPLES];
};

/* Run `acquire`, timing its wait in one call of every `every` (k counts the
 * calls; every is a power of two): two clock reads a sample, so a loop of a
 * few nanoseconds is hardly disturbed, and the same for every
 * implementation. */
#define ACQUIRE_SAMPLED(acquire, ws, k, every)                                  \
	do {                                                                    \
		if ((k) & ((every) - 1)) {                                      \
			acquire;                                                \
		} else {                                                        \
			uint64_t t0_ = now_ns();                                \
			acquire;                                                \
			(ws)->ns[(ws)->n++ % WAIT_SAMPLES] = now_ns() - t0_;    \
		}                                                               \
	} while (0)

/* The 99th percentile of the threads' sampled waits, at least 1 ns (0 means
 * "not measured"); 0 without samples. */
uint64_t samples_p99(const struct wait_samples *s, unsigned threads);
/* qsort order of uint64_t, ascending. */
int cmp_u64(const void *a, const void *b);

/* Loop op in batches on the calling thread until the run time is over,
 * adding the operations to ops and the window to ns. */
#define SOLO_LOOP(op, ops, ns)                                          \
	do {                                                            \
		cpu0 = cpu_ns();                                        \
		uint64_t t0_ = now_ns(), end_ = t0_ + run_ns, t_;       \
		do {                                                    \
			for (int b_ = 0; b_ < BATCH; b_++) {            \
				op;                                     \
			}                                               \
			(ops) += BATCH;                                 \
		} while ((t_ = now_ns()) < end_);                       \
		(ns) = t_ - t0_;                                        \
		cpu1 = cpu_ns();                                        \
	} while (0)

/* ---- a team of pthreads that start together -------------------------------- */
struct team {
	unsigned n;
	_Atomic unsigned arrived;
	_Atomic uint64_t deadline;      /* 0 until the last thread arrives */
	uint64_t t0;                    /* written before deadline is published */
	_Atomic uint64_t ops;
	bool pin;
	bool fair;                      /* every thread does the same work */
	bool async_cancel;              /* mutex-empty-async */
	void (*body)(struct team *t, unsigned i);
	void *arg;
	uint64_t per[MAX_THREADS];      /* each thread's operations */
	struct wait_samples *samples;   /* one per thread where waits are sampled */
};

/* The last thread to arrive opens the window (cpu0, t->t0); the others wait
 * (yielding: there may be more threads than CPUs).  Returns the deadline. */
uint64_t team_gate(struct team *t);
/* A thread's last act in a team pattern: its count, for the total and the
 * fairness. */
void team_done(struct team *t, unsigned i, uint64_t n);
/* Run t->body on t->n threads, pinned if t->pin; returns the window from the
 * gate to the last join (and sets cpu1). */
uint64_t team_run(struct team *t);

#endif

/* `#pragma omp barrier` (GOMP_barrier, also emitted at the end of `single`)
 * on an hwsync barrier.
 *
 * GOMP_barrier names no team, so the shim wraps GOMP_parallel: the wrapper
 * the team runs records the team's shim state in thread-local storage, and
 * GOMP_barrier uses one hwsync barrier per team (created on the team's first
 * barrier with omp_get_num_threads() threads, destroyed when GOMP_parallel
 * returns).  Teams started another way (GOMP_parallel_start, combined
 * parallel-loop/sections entry points, teams) have no shim state: all their
 * threads pass GOMP_barrier to libgomp, so a team never splits (a nested
 * team's master, which still carries the outer team's state, is told apart
 * by omp_get_level()).
 *
 * A barrier is a task scheduling point: pending tasks must run before
 * threads leave it, and only libgomp can run them.  GOMP_task,
 * GOMP_taskloop and GOMP_taskloop_ull are wrapped to mark the team as having
 * created tasks.  At each barrier every thread first meets the others on the
 * hwsync barrier, contributing "tasks were created" to a per-episode flag;
 * after it, all threads read the same flag, and if set all of them also call
 * libgomp's GOMP_barrier, which runs the tasks to completion.  The flag for
 * episode k lives in slot k % 3; the thread that completes episode k clears
 * slot (k + 2) % 3, which everyone finished reading before arriving at k and
 * nobody writes before leaving k + 1.
 *
 * Not routed: implicit barriers at the end of worksharing constructs and of
 * the parallel region (libgomp-internal), GOMP_barrier_cancel, atomics.
 */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include "shim/gomp.h"

struct team {
	_Atomic(hws_barrier_t *) b;
	_Atomic int tasks;               /* sticky: this team created tasks */
	_Atomic uint32_t any_tasks[3];   /* per-episode OR of tasks, see above */
};
static char barrier_failed_marker;
#define BARRIER_FAILED ((hws_barrier_t *)(void *)&barrier_failed_marker)

struct in_team {
	struct team *team;
	uint64_t episode;
	int level;   /* omp_get_level() in the team: a nested team is another team */
};
static _Thread_local struct in_team cur;

struct region {
	void (*fn)(void *);
	void *data;
	struct team *team;
};

typedef void (*parallel_fn)(void (*)(void *), void *, unsigned, unsigned);
typedef void (*void_fn)(void);
typedef int (*int_fn)(void);
typedef void (*task_fn)(void (*)(void *), void *, void (*)(void *, void *), long, long, bool,
			unsigned, void **, int, void *);
typedef void (*taskloop_fn)(void (*)(void *), void *, void (*)(void *, void *), long, long,
			    unsigned, unsigned long, int, long, long, long);
typedef void (*taskloop_ull_fn)(void (*)(void *), void *, void (*)(void *, void *), long, long,
				unsigned, unsigned long, int, unsigned long long,
				unsigned long long, unsigned long long);

GOMP_FN(n_parallel, parallel_fn, "GOMP_parallel", "GOMP_4.0")
GOMP_FN(n_barrier, void_fn, "GOMP_barrier", "GOMP_1.0")
GOMP_FN(n_num_threads, int_fn, "omp_get_num_threads", "OMP_1.0")
GOMP_FN(n_level, int_fn, "omp_get_level", "OMP_3.0")
GOMP_FN(n_task, task_fn, "GOMP_task", "GOMP_2.0")
GOMP_FN(n_taskloop, taskloop_fn, "GOMP_taskloop", "GOMP_4.5")
GOMP_FN(n_taskloop_ull, taskloop_ull_fn, "GOMP_taskloop_ull", "GOMP_4.5")

static void run_region(void *arg)
{
	struct region *r = arg;
	struct in_team saved = cur;
	cur.team = r->team;
	cur.episode = 0;
	cur.level = n_level()();
	r->fn(r->data);
	cur = saved;
}

HWS_EXPORT void GOMP_parallel(void (*fn)(void *), void *data, unsigned num_threads,
			      unsigned flags)
{
	if (!hws_shim_on()) {
		n_parallel()(fn, data, num_threads, flags);
		return;
	}
	struct team t;
	memset(&t, 0, sizeof t);
	struct region r = { fn, data, &t };
	n_parallel()(run_region, &r, num_threads, flags);
	/* Every thread has left run_region: libgomp joined the team. */
	/* relaxed: the join ordered the team's stores before this load. */
	hws_barrier_t *b = atomic_load_explicit(&t.b, memory_order_relaxed);
	if (b && b != BARRIER_FAILED)
		hws_barrier_destroy(b);
}

static hws_barrier_t *team_barrier(struct team *t)
{
	/* acquire: pairs with the release CAS below. */
	hws_barrier_t *b = atomic_load_explicit(&t->b, memory_order_acquire);
	if (likely(b != NULL))
		return b;
	hws_barrier_t *n;
	int threads = n_num_threads()();
	if (threads < 2 ||
	    hws_barrier_create_with(&n, hws_cfg.barrier_kind, (unsigned)threads, &hws_cfg.wait))
		n = BARRIER_FAILED;
	/* release: publishes the barrier; acquire: sees the winner's. */
	if (atomic_compare_exchange_strong_explicit(&t->b, &b, n, memory_order_acq_rel,
						    memory_order_acquire))
		return n;
	if (n != BARRIER_FAILED)
		hws_barrier_destroy(n);
	return b;
}

HWS_EXPORT void GOMP_barrier(void)
{
	struct team *t = cur.team;
	/* A team started inside ours by another entry point (its master still
	 * has our state) is told apart by its nesting level. */
	if (!t || n_level()() != cur.level) {
		hws_pass(HWS_PASS_GOMP_TEAM);
		n_barrier()();
		return;
	}
	hws_barrier_t *b = team_barrier(t);
	if (b == BARRIER_FAILED) {
		if (n_num_threads()() > 1)
			hws_pass(HWS_PASS_BARRIER_UNFIT);
		n_barrier()();
		return;
	}
	uint64_t k = cur.episode++;
	uint64_t t0 = hws_cfg.stats || hws_cfg.trace ? hws_now_ns() : 0;
	/* relaxed: the barrier orders these flag stores before the loads after it. */
	if (atomic_load_explicit(&t->tasks, memory_order_relaxed))
		atomic_store_explicit(&t->any_tasks[k % 3], 1, memory_order_relaxed);
	int rc = hws_barrier_wait(b);
	if (rc == HWS_BARRIER_LAST)
		/* relaxed: see the comment at the top (ordered by barriers k, k+1). */
		atomic_store_explicit(&t->any_tasks[(k + 2) % 3], 0, memory_order_relaxed);
	if (hws_cfg.stats || hws_cfg.trace) {
		uint64_t t1 = hws_now_ns();
		if (hws_cfg.stats)
			hws_stats_count_barrier(HWS_FAM_OMP_BARRIER, rc == HWS_BARRIER_LAST,
						t1 - t0);
		if (hws_cfg.trace)
			hws_trace_span("omp barrier wait", t, t0, t1);
	}
	/* relaxed: ordered by the barrier, as above. */
	if (atomic_load_explicit(&t->any_tasks[k % 3], memory_order_relaxed)) {
		hws_pass(HWS_PASS_GOMP_TASKS);
		n_barrier()();
	}
}

static void mark_tasks(void)
{
	if (cur.team)
		/* relaxed: read by this thread at its next barrier (program order)
		 * and by others only through the per-episode flag. */
		atomic_store_explicit(&cur.team->tasks, 1, memory_order_relaxed);
}

HWS_EXPORT void GOMP_task(void (*fn)(void *), void *data, void (*cpyfn)(void *, void *),
			  long arg_size, long arg_align, bool if_clause, unsigned flags,
			  void **depend, int priority, void *detach)
{
	mark_tasks();
	n_task()(fn, data, cpyfn, arg_size, arg_align, if_clause, flags, depend, priority, detach);
}

HWS_EXPORT void GOMP_taskloop(void (*fn)(void *), void *data, void (*cpyfn)(void *, void *),
			      long arg_size, long arg_align, unsigned flags,
			      unsigned long num_tasks, int priority, long start, long end,
			      long step)
{
	mark_tasks();
	n_taskloop()(fn, data, cpyfn, arg_size, arg_align, flags, num_tasks, priority, start, end,
		     step);
}

HWS_EXPORT void GOMP_taskloop_ull(void (*fn)(void *), void *data,
				  void (*cpyfn)(void *, void *), long arg_size, long arg_align,
				  unsigned flags, unsigned long num_tasks, int priority,
				  unsigned long long start, unsigned long long end,
				  unsigned long long step)
{
	mark_tasks();
	n_taskloop_ull()(fn, data, cpyfn, arg_size, arg_align, flags, num_tasks, priority, start,
			 end, step);
}

/* OpenMP team barriers on an hwsync barrier: `#pragma omp barrier`
 * (GOMP_barrier, also emitted at the end of `single` and of statically
 * scheduled loops) and the barriers at the end of dynamic, guided, runtime
 * and ordered loops (GOMP_loop_end) and of `sections` (GOMP_sections_end).
 *
 * GOMP_barrier names no team, so the shim wraps every entry point that
 * starts a team and runs the program's function in it: GOMP_parallel, the
 * combined GOMP_parallel_loop_* and GOMP_parallel_sections, and
 * GOMP_parallel_reductions.  The wrapper each thread of the team runs
 * records the team's shim state in thread-local storage, and the barriers
 * use one hwsync barrier per team (created on the team's first barrier with
 * omp_get_num_threads() threads, destroyed when the team's entry point
 * returns).  Teams started another way (the legacy GOMP_parallel_start and
 * GOMP_parallel_*_start of GCC before 4.9, whose master runs the function
 * outside any wrapper) have no shim state: all their threads pass every
 * barrier to libgomp, so a team never splits (a nested team's master, which
 * still carries the outer team's state, is told apart by omp_get_level()).
 *
 * A region that never meets at a barrier gains nothing from the wrapper and
 * pays for it on every fork (`parallel for` with a static schedule has no
 * barrier inside: about 4% of an empty one's fork and join here).  So the shim
 * remembers, per region function, whether its team ever used a barrier or
 * created tasks; a function whose first QUIET_RUNS regions did neither is
 * started unwrapped from then on.  A barrier that such a region meets after
 * all is libgomp's, as for a team started the legacy way: every thread of
 * that team lacks its state alike, so the team still never splits.
 *
 * The end of a work-share: libgomp's GOMP_loop_end is its _nowait twin
 * plus a team barrier (work.c: gomp_work_share_end frees the previous work
 * share in the last thread to arrive at the barrier; gomp_work_share_end_nowait
 * frees it in the last thread to finish, counted in threads_completed).
 * Either way the bookkeeping is done once per work share by the last of the
 * team, so the shim calls the _nowait twin and then meets the team on the
 * hwsync barrier.  Loops and sections that may be cancelled end in the
 * _cancel forms, whose barrier is released by GOMP_cancel inside libgomp's
 * barrier state: they stay with libgomp (docs/preload.md).
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
 * Not routed: the join at the end of the parallel region (libgomp's team
 * management), GOMP_barrier_cancel and the _cancel work-share ends, atomics.
 */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <hwsync/barrier.h>
#include "shim/common.h"
#include "shim/config.h"
#include "shim/family.h"
#include "shim/gomp.h"
#include "shim/passthrough.h"
#include "shim/startup.h"
#include "shim/stats.h"
#include "shim/trace.h"

/* A team's shim state.  Its own cache line: written only when the team
 * meets at a barrier or creates tasks. */
struct team {
	_Atomic(hws_barrier_t *) b;
	_Atomic int tasks;               /* sticky: this team created tasks */
	_Atomic uint32_t any_tasks[3];   /* per-episode OR of tasks, see above */
} __attribute__((aligned(64)));
static char barrier_failed_marker;
#define BARRIER_FAILED ((hws_barrier_t *)(void *)&barrier_failed_marker)

struct in_team {
	struct team *team;
	uint64_t episode;
	int level;   /* omp_get_level() in the team: a nested team is another team */
};
static _Thread_local struct in_team cur HWS_STATIC_TLS;

/* What each thread of a new team reads first.  Its own cache line, so that
 * the master's stack writes do not pull it away from the threads reading it. */
struct region {
	/* GOMP_parallel_reductions reads the first word of its data argument
	 * (the reductions array): the region's copy of it. */
	void *first_word;
	void (*fn)(void *);
	void *data;
	struct team *team;
} __attribute__((aligned(64)));

/* The region and team of each fork, kept per master thread and nesting
 * depth and reused: a program that starts the same region again and again
 * writes neither line, so the team's threads find both still in their
 * caches (a fresh stack copy cost each of them a cache miss on the way to
 * the program's function, 5-10 % of an empty region's fork and join).
 * Deeper nests use the caller's spare on the stack. */
#define FORK_SLOTS 4
struct fork_slot {
	struct region r;
	struct team t;
};
static _Thread_local struct fork_slot fork_slots[FORK_SLOTS] HWS_STATIC_TLS;
static _Thread_local unsigned fork_depth HWS_STATIC_TLS;

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

typedef void (*ploop_fn)(void (*)(void *), void *, unsigned, long, long, long, long, unsigned);
typedef void (*ploop_rt_fn)(void (*)(void *), void *, unsigned, long, long, long, unsigned);
typedef void (*psections_fn)(void (*)(void *), void *, unsigned, unsigned, unsigned);
typedef unsigned (*preductions_fn)(void (*)(void *), void *, unsigned, unsigned);

GOMP_FN(n_parallel, parallel_fn, "GOMP_parallel", "GOMP_4.0")
GOMP_FN(n_ploop_static, ploop_fn, "GOMP_parallel_loop_static", "GOMP_4.0")
GOMP_FN(n_ploop_dynamic, ploop_fn, "GOMP_parallel_loop_dynamic", "GOMP_4.0")
GOMP_FN(n_ploop_guided, ploop_fn, "GOMP_parallel_loop_guided", "GOMP_4.0")
GOMP_FN(n_ploop_nm_dynamic, ploop_fn, "GOMP_parallel_loop_nonmonotonic_dynamic", "GOMP_4.5")
GOMP_FN(n_ploop_nm_guided, ploop_fn, "GOMP_parallel_loop_nonmonotonic_guided", "GOMP_4.5")
GOMP_FN(n_ploop_runtime, ploop_rt_fn, "GOMP_parallel_loop_runtime", "GOMP_4.0")
GOMP_FN(n_ploop_nm_runtime, ploop_rt_fn, "GOMP_parallel_loop_nonmonotonic_runtime", "GOMP_5.0")
GOMP_FN(n_ploop_mnm_runtime, ploop_rt_fn, "GOMP_parallel_loop_maybe_nonmonotonic_runtime",
	"GOMP_5.0")
GOMP_FN(n_psections, psections_fn, "GOMP_parallel_sections", "GOMP_4.0")
GOMP_FN(n_preductions, preductions_fn, "GOMP_parallel_reductions", "GOMP_5.0")
GOMP_FN(n_barrier, void_fn, "GOMP_barrier", "GOMP_1.0")
GOMP_FN(n_loop_end, void_fn, "GOMP_loop_end", "GOMP_1.0")
GOMP_FN(n_loop_end_nowait, void_fn, "GOMP_loop_end_nowait", "GOMP_1.0")
GOMP_FN(n_sections_end, void_fn, "GOMP_sections_end", "GOMP_1.0")
GOMP_FN(n_sections_end_nowait, void_fn, "GOMP_sections_end_nowait", "GOMP_1.0")
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

/* Per region function, a word: the function's address (its low 56 bits) << 8,
 * then QUIET_USED once one of its teams used a barrier or created tasks, and
 * in the low 7 bits how many of its regions ran before without (at most
 * QUIET_RUNS).  Direct-mapped: two functions that share a slot take it from
 * each other and count again, which only delays the skip.  Written only by a
 * master after its team joined and only when the word changes, so in the
 * steady state every slot's line stays shared. */
#define QUIET_SLOTS 64
#define QUIET_RUNS 16   /* the number passthrough.c's message names */
#define QUIET_USED 0x80u
static _Atomic uint64_t quiet[QUIET_SLOTS];

static _Atomic uint64_t *quiet_slot(void (*fn)(void *))
{
	uintptr_t a = (uintptr_t)fn;
	return &quiet[(a ^ (a >> 6) ^ (a >> 12)) % QUIET_SLOTS];
}

static uint64_t quiet_key(void (*fn)(void *))
{
	return ((uint64_t)(uintptr_t)fn & ((1ull << 56) - 1)) << 8;
}

static bool region_quiet(void (*fn)(void *))
{
	/* relaxed: a self-contained word; a stale one only wraps one more
	 * region, or skips one whose barrier libgomp then serves. */
	uint64_t v = atomic_load_explicit(quiet_slot(fn), memory_order_relaxed);
	return (v & ~0xffull) == quiet_key(fn) && !(v & QUIET_USED) && (v & 0x7f) >= QUIET_RUNS;
}

static void region_joined(void (*fn)(void *), bool used)
{
	_Atomic uint64_t *slot = quiet_slot(fn);
	/* relaxed: as in region_quiet; a racing master's update may be lost,
	 * which costs the same. */
	uint64_t v = atomic_load_explicit(slot, memory_order_relaxed), w = v;
	if ((w & ~0xffull) != quiet_key(fn))
		w = quiet_key(fn);
	if (used)
		w |= QUIET_USED;
	else if ((w & 0x7f) < QUIET_RUNS)
		w++;
	if (w != v)
		atomic_store_explicit(slot, w, memory_order_relaxed);
}

/* Stores v unless *p already holds it: a line nobody writes stays shared. */
#define SET_IF_CHANGED(p, v) \
	do { \
		if (*(p) != (v)) \
			*(p) = (v); \
	} while (0)

/* Before the team starts: this depth's region, set for fn and data.  The
 * team's threads read it after libgomp hands them the region (its fork
 * orders these stores before their loads) and not after the join. */
static struct region *fork_begin(struct fork_slot *spare, void *first_word, void (*fn)(void *),
				 void *data)
{
	unsigned d = fork_depth++;
	struct fork_slot *s = &fork_slots[d];
	if (d >= FORK_SLOTS) {
		s = spare;
		memset(s, 0, sizeof *s);
	}
	SET_IF_CHANGED(&s->r.first_word, first_word);
	SET_IF_CHANGED(&s->r.fn, fn);
	SET_IF_CHANGED(&s->r.data, data);
	SET_IF_CHANGED(&s->r.team, &s->t);
	return &s->r;
}

/* After the team's entry point returned: every thread has left run_region
 * (libgomp joined the team), so the team's barrier can go and its state is
 * reset for the next region at this depth. */
static void fork_end(struct region *r)
{
	struct team *t = r->team;
	/* relaxed: the join ordered the team's stores before these loads, and
	 * the next fork orders the stores below before the next team's loads. */
	hws_barrier_t *b = atomic_load_explicit(&t->b, memory_order_relaxed);
	if (b) {
		if (b != BARRIER_FAILED)
			hws_barrier_destroy(b);
		atomic_store_explicit(&t->b, NULL, memory_order_relaxed);
	}
	/* relaxed: as above. */
	bool tasks = atomic_load_explicit(&t->tasks, memory_order_relaxed);
	if (tasks) {
		atomic_store_explicit(&t->tasks, 0, memory_order_relaxed);
		for (int i = 0; i < 3; i++)
			atomic_store_explicit(&t->any_tasks[i], 0, memory_order_relaxed);
	}
	region_joined(r->fn, b || tasks);
	fork_depth--;
}

/* Whether fn's team is started as the program asked, without the wrapper:
 * the shim is off, or fn is quiet (see the top).  Each entry point below
 * then hands over with a tail call, so the program's stack is as without
 * the shim; the wrapped start is a function of its own, so that its frame
 * (the spare slot, aligned to a cache line) is set up only when used. */
static inline bool unwrapped(void (*fn)(void *))
{
	return !hws_shim_on() || region_quiet(fn);
}
#define WRAPPED HWS_OUTLINE

WRAPPED void parallel_wrapped(void (*fn)(void *), void *data, unsigned num_threads,
			      unsigned flags)
{
	struct fork_slot spare;
	struct region *r = fork_begin(&spare, NULL, fn, data);
	n_parallel()(run_region, r, num_threads, flags);
	fork_end(r);
}

HWS_EXPORT void GOMP_parallel(void (*fn)(void *), void *data, unsigned num_threads,
			      unsigned flags)
{
	if (unwrapped(fn))
		n_parallel()(fn, data, num_threads, flags);
	else
		parallel_wrapped(fn, data, num_threads, flags);
}

/* The combined parallel loops: libgomp sets up the loop's work share for the
 * team and runs fn, whose threads take iterations with GOMP_loop_*_next and
 * end with GOMP_loop_end_nowait before the join.  ARGS are the loop's
 * parameters between num_threads and flags, PARAMS their declarations. */
#define PARALLEL_LOOP_WITH(name, native, PARAMS, ARGS) \
	WRAPPED void name##_wrapped(void (*fn)(void *), void *data, unsigned num_threads, \
				    PARAMS, unsigned flags) \
	{ \
		struct fork_slot spare; \
		struct region *r = fork_begin(&spare, NULL, fn, data); \
		native()(run_region, r, num_threads, ARGS, flags); \
		fork_end(r); \
	} \
	HWS_EXPORT void name(void (*fn)(void *), void *data, unsigned num_threads, PARAMS, \
			     unsigned flags) \
	{ \
		if (unwrapped(fn)) \
			native()(fn, data, num_threads, ARGS, flags); \
		else \
			name##_wrapped(fn, data, num_threads, ARGS, flags); \
	}
#define LOOP_PARAMS long start, long end, long incr, long chunk
#define LOOP_ARGS start, end, incr, chunk
#define RUNTIME_PARAMS long start, long end, long incr
#define RUNTIME_ARGS start, end, incr
#define PARALLEL_LOOP(name, native) \
	PARALLEL_LOOP_WITH(name, native, LOOP_PARAMS, LOOP_ARGS)
#define PARALLEL_LOOP_RUNTIME(name, native) \
	PARALLEL_LOOP_WITH(name, native, RUNTIME_PARAMS, RUNTIME_ARGS)
PARALLEL_LOOP(GOMP_parallel_loop_static, n_ploop_static)
PARALLEL_LOOP(GOMP_parallel_loop_dynamic, n_ploop_dynamic)
PARALLEL_LOOP(GOMP_parallel_loop_guided, n_ploop_guided)
PARALLEL_LOOP(GOMP_parallel_loop_nonmonotonic_dynamic, n_ploop_nm_dynamic)
PARALLEL_LOOP(GOMP_parallel_loop_nonmonotonic_guided, n_ploop_nm_guided)
PARALLEL_LOOP_RUNTIME(GOMP_parallel_loop_runtime, n_ploop_runtime)
PARALLEL_LOOP_RUNTIME(GOMP_parallel_loop_nonmonotonic_runtime, n_ploop_nm_runtime)
PARALLEL_LOOP_RUNTIME(GOMP_parallel_loop_maybe_nonmonotonic_runtime, n_ploop_mnm_runtime)

WRAPPED void psections_wrapped(void (*fn)(void *), void *data, unsigned num_threads,
			       unsigned count, unsigned flags)
{
	struct fork_slot spare;
	struct region *r = fork_begin(&spare, NULL, fn, data);
	n_psections()(run_region, r, num_threads, count, flags);
	fork_end(r);
}

HWS_EXPORT void GOMP_parallel_sections(void (*fn)(void *), void *data, unsigned num_threads,
				       unsigned count, unsigned flags)
{
	if (unwrapped(fn))
		n_psections()(fn, data, num_threads, count, flags);
	else
		psections_wrapped(fn, data, num_threads, count, flags);
}

/* `parallel reduction(task, ...)`: libgomp reads the reductions array from
 * the first word of data before it starts the team, so the region carries a
 * copy of that word first; the threads get the program's data back. */
WRAPPED unsigned preductions_wrapped(void (*fn)(void *), void *data, unsigned num_threads,
				     unsigned flags)
{
	struct fork_slot spare;
	struct region *r = fork_begin(&spare, *(void **)data, fn, data);
	unsigned n = n_preductions()(run_region, r, num_threads, flags);
	fork_end(r);
	return n;
}

HWS_EXPORT unsigned GOMP_parallel_reductions(void (*fn)(void *), void *data,
					     unsigned num_threads, unsigned flags)
{
	if (unwrapped(fn))
		return n_preductions()(fn, data, num_threads, flags);
	return preductions_wrapped(fn, data, num_threads, flags);
}

/* HWSYNC_BARRIER=auto, the default: a team of two waits on a dissemination
 * barrier, one round in which each thread sets the other's flag and waits
 * for its own, so each wait is one cache-line transfer and the two run at
 * once; against the central barrier's two arrivals in turn on one counter
 * and its release, that made `#pragma omp barrier` 1.3-1.5x faster here
 * (docs/preload.md).  Larger teams keep the central barrier: a dissemination
 * barrier makes every thread wait log2(n) times. */
static const char *team_barrier_kind(int threads)
{
	if (strcmp(hws_cfg.barrier_kind, "auto"))
		return hws_cfg.barrier_kind;
	return threads == 2 ? "dissemination" : "central";
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
	    hws_barrier_create_with(&n, team_barrier_kind(threads), (unsigned)threads,
				    &hws_cfg.wait))
		n = BARRIER_FAILED;
	/* release: publishes the barrier; acquire: sees the winner's. */
	if (atomic_compare_exchange_strong_explicit(&t->b, &b, n, memory_order_acq_rel,
						    memory_order_acquire))
		return n;
	if (n != BARRIER_FAILED)
		hws_barrier_destroy(n);
	return b;
}

/* The team this thread's barrier belongs to, or NULL when libgomp must serve
 * it (a team the shim does not know, a barrier kind that cannot serve it);
 * the same answer in every thread of the team. */
static hws_barrier_t *my_barrier(struct team **tp)
{
	struct team *t = cur.team;
	/* A team started inside ours by another entry point (its master still
	 * has our state) is told apart by its nesting level. */
	if (!t || n_level()() != cur.level) {
		hws_pass(HWS_PASS_GOMP_TEAM);
		return NULL;
	}
	hws_barrier_t *b = team_barrier(t);
	if (b == BARRIER_FAILED) {
		if (n_num_threads()() > 1)
			hws_pass(HWS_PASS_BARRIER_UNFIT);
		return NULL;
	}
	*tp = t;
	return b;
}

/* One episode of the team's hwsync barrier; then, if any thread of the team
 * created tasks, libgomp's barrier too, which runs them. */
static void team_wait(struct team *t, hws_barrier_t *b)
{
	uint64_t k = cur.episode++;
	uint64_t t0 = hws_cfg.stats || hws_cfg.trace ? hws_now_ns() : 0;
	/* relaxed: the barrier orders these flag stores before the loads after it. */
	if (atomic_load_explicit(&t->tasks, memory_order_relaxed))
		atomic_store_explicit(&t->any_tasks[k % 3], 1, memory_order_relaxed);
#ifndef HWS_TEST_BROKEN_OMP_BARRIER
	int rc = hws_barrier_wait(b);
#else
	/* Test build only (tests/preload): a barrier that lets every thread
	 * through at once, to show that the OpenMP phase test catches it. */
	int rc = 0;
	(void)b;
#endif
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

HWS_EXPORT void GOMP_barrier(void)
{
	struct team *t;
	hws_barrier_t *b = my_barrier(&t);
	if (!b)
		n_barrier()();
	else
		team_wait(t, b);
}

/* The end of a loop (dynamic, guided, runtime, ordered, doacross) and of
 * sections, with HWSYNC_OMP_ENDS=1: libgomp's _nowait bookkeeping, then the
 * team's barrier (see the top).  Off by default: on an idle machine the
 * _nowait end and a separate barrier cost more than libgomp's own end, whose
 * barrier frees the work share for the next construct to reuse (measured in
 * docs/results/kvm-epyc-2vcpu/shim-omp.md).  The shim's state is only ever
 * set inside a team, so an orphaned construct outside any team goes to
 * libgomp whole. */
HWS_EXPORT void GOMP_loop_end(void)
{
	struct team *t;
	hws_barrier_t *b = hws_cfg.omp_ends ? my_barrier(&t) : NULL;
	if (!b) {
		n_loop_end()();
		return;
	}
	n_loop_end_nowait()();
	team_wait(t, b);
}

HWS_EXPORT void GOMP_sections_end(void)
{
	struct team *t;
	hws_barrier_t *b = hws_cfg.omp_ends ? my_barrier(&t) : NULL;
	if (!b) {
		n_sections_end()();
		return;
	}
	n_sections_end_nowait()();
	team_wait(t, b);
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

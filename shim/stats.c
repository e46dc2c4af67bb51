/* HWSYNC_STATS=1: per-thread counters and the summary printed at exit.
 *
 * Each thread counts into a block of its own (struct hws_thread_stats), so
 * counting is a load and a store on a line no other thread writes, and
 * nothing is kept per object.  Blocks are made once and never freed: they
 * sit on a registry list that only grows, pushed with a CAS.  A thread that
 * exits adds its block into the totals of the dead and gives the block back
 * for the next new thread, so the number of blocks follows the largest
 * number of threads alive at once, not the number ever created.  The report
 * at exit sums the totals and every block in use.  A thread that cannot get
 * a block (calloc fails) counts nothing until one can be had; its operations
 * go ahead, and the report says how many went uncounted.
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "shim/common.h"
#include "shim/config.h"
#include "shim/family.h"
#include "shim/passthrough.h"
#include "shim/stats.h"

static _Atomic(struct hws_thread_stats *) registry;
static struct hws_thread_stats dead;   /* blocks of exited threads, added up */
static _Atomic int dead_busy;          /* a flag lock for `dead` */
static _Thread_local struct hws_thread_stats *mine;
static pthread_key_t exit_key;
static pthread_once_t key_once = PTHREAD_ONCE_INIT;
static int forked_pid;                 /* set in a forked child (its own pid) */
static _Atomic int reported;           /* the summary is printed once */
static _Atomic uint64_t uncounted;     /* counting calls that found no block */

#define NFIELDS(type) (sizeof(type) / sizeof(_Atomic uint64_t))
#define LD(x) atomic_load_explicit(&(x), memory_order_relaxed)

/* to += from, counter by counter (max_spins, max_wait_ns: the larger). */
static void add_block(struct hws_thread_stats *to, struct hws_thread_stats *from)
{
	for (int f = 0; f < HWS_FAM_NLOCKS; f++) {
		_Atomic uint64_t *a = &to->lock[f].acquisitions, *b = &from->lock[f].acquisitions;
		for (size_t i = 0; i < NFIELDS(struct hws_lock_tally); i++)
			if (&a[i] == &to->lock[f].max_spins || &a[i] == &to->lock[f].max_wait_ns) {
				if (LD(b[i]) > LD(a[i]))
					atomic_store_explicit(&a[i], LD(b[i]), memory_order_relaxed);
			} else {
				hws_tally(&a[i], LD(b[i]));
			}
	}
	for (int f = 0; f < HWS_FAM_N; f++) {
		_Atomic uint64_t *a = &to->fam[f].ops, *b = &from->fam[f].ops;
		for (size_t i = 0; i < NFIELDS(struct hws_fam_tally); i++)
			hws_tally(&a[i], LD(b[i]));
	}
}

static void zero_block(struct hws_thread_stats *s)
{
	memset(s->lock, 0, sizeof s->lock);
	memset(s->fam, 0, sizeof s->fam);
}

static void dead_lock(void)
{
	/* acquire: pairs with the release in dead_unlock. */
	while (atomic_exchange_explicit(&dead_busy, 1, memory_order_acquire))
		hws_yield();
}

static void dead_unlock(void)
{
	/* release: publishes the totals to the next holder. */
	atomic_store_explicit(&dead_busy, 0, memory_order_release);
}

/* Fold a block into the totals and hand it back for reuse. */
static void retire(struct hws_thread_stats *s)
{
	dead_lock();
	add_block(&dead, s);
	zero_block(s);
	dead_unlock();
	/* release: the zeroed counters reach the block's next owner. */
	atomic_store_explicit(&s->in_use, 0, memory_order_release);
}

static void thread_exit(void *block)
{
	retire(block);
	mine = NULL;
}

static void make_key(void)
{
	pthread_key_create(&exit_key, thread_exit);
}

struct hws_thread_stats *hws_my_stats(void)
{
	struct hws_thread_stats *s = mine;
	if (likely(s != NULL))
		return s;
	pthread_once(&key_once, make_key);
	/* acquire: pairs with the release CAS that pushed each block. */
	for (s = atomic_load_explicit(&registry, memory_order_acquire); s; s = s->next) {
		int free_ = 0;
		/* acquire: pairs with the release in retire (zeroed counters). */
		if (atomic_compare_exchange_strong_explicit(&s->in_use, &free_, 1,
							    memory_order_acquire,
							    memory_order_relaxed))
			break;
	}
	if (!s) {
		s = calloc(1, sizeof *s);
		if (!s) {
			/* Out of memory: the operation goes ahead uncounted
			 * (the next call tries again) and the summary says so.
			 * relaxed: a statistic read at exit. */
			atomic_fetch_add_explicit(&uncounted, 1, memory_order_relaxed);
			return NULL;
		}
		atomic_init(&s->in_use, 1);
		s->next = atomic_load_explicit(&registry, memory_order_relaxed);
		/* release: publishes the block's initialised fields with it. */
		while (!atomic_compare_exchange_weak_explicit(&registry, &s->next, s,
							      memory_order_release,
							      memory_order_relaxed))
			;
	}
	mine = s;
	pthread_setspecific(exit_key, s);
	return s;
}

void hws_stats_count_barrier(unsigned family, int last, uint64_t wait_ns)
{
	struct hws_thread_stats *s = hws_my_stats();
	if (!s)
		return;
	hws_tally(&s->fam[family].ops, 1);
	hws_tally(&s->fam[family].wait_ns, wait_ns);
	if (last)
		hws_tally(&s->fam[family].episodes, 1);
}

/* fork: the child has only the forking thread; the other threads' blocks
 * belong to threads it does not have, so they are free again there.  What
 * every thread counted before the fork is the parent's to report, so the
 * child starts from zero (its own block and the totals of the dead too) and
 * reports only what it does itself (hws_stats_report). */
void hws_stats_atfork_child(void)
{
	atomic_store_explicit(&dead_busy, 0, memory_order_relaxed);
	zero_block(&dead);
	/* acquire: pairs with the release CAS that pushed each block. */
	for (struct hws_thread_stats *s = atomic_load_explicit(&registry, memory_order_acquire);
	     s; s = s->next) {
		zero_block(s);
		if (s != mine)
			/* relaxed: single-threaded here. */
			atomic_store_explicit(&s->in_use, 0, memory_order_relaxed);
	}
	forked_pid = (int)getpid();
	/* relaxed: single-threaded here. */
	atomic_store_explicit(&reported, 0, memory_order_relaxed);
	/* relaxed: as above. */
	atomic_store_explicit(&uncounted, 0, memory_order_relaxed);
}

/* Did this process count anything (a forked child that only execs or
 * exits at once stays silent)? */
static int counted_any(const struct hws_thread_stats *t)
{
	for (int f = 0; f < HWS_FAM_NLOCKS; f++)
		for (size_t i = 0; i < NFIELDS(struct hws_lock_tally); i++)
			if (LD((&t->lock[f].acquisitions)[i]))
				return 1;
	for (int f = 0; f < HWS_FAM_N; f++)
		for (size_t i = 0; i < NFIELDS(struct hws_fam_tally); i++)
			if (LD((&t->fam[f].ops)[i]))
				return 1;
	return 0;
}

/* At exit (the destructor, or the _exit interposer): the process that
 * started the shim prints its summary; a forked child prints one of its own,
 * under its own pid, if it counted anything.  Once per process. */
void hws_stats_report(void)
{
	struct hws_thread_stats tot;
	int pid = (int)getpid();
	if (pid != hws_cfg.pid && pid != forked_pid)
		return;   /* no fork handler ran: not ours to report */
	/* relaxed: only once; nothing else is published by the flag. */
	if (atomic_exchange_explicit(&reported, 1, memory_order_relaxed))
		return;
	memset(&tot, 0, sizeof tot);
	dead_lock();
	add_block(&tot, &dead);
	dead_unlock();
	/* acquire: pairs with the release CAS that pushed each block. */
	for (struct hws_thread_stats *s = atomic_load_explicit(&registry, memory_order_acquire);
	     s; s = s->next)
		/* acquire: a block in use belongs to a live thread (a snapshot). */
		if (atomic_load_explicit(&s->in_use, memory_order_acquire))
			add_block(&tot, s);
	/* relaxed: read at exit, a statistic. */
	uint64_t lost = atomic_load_explicit(&uncounted, memory_order_relaxed);
	if (pid == forked_pid && !counted_any(&tot) && !lost)
		return;

	int fd = hws_cfg.err_fd;
	dprintf(fd, "hwsync[%d]: stats: lock kind %s (%s), wait policy %s, barrier kind %s\n",
		pid, hws_cfg.lock_kind, hws_cfg.lock_used, hws_cfg.wait_spec, hws_cfg.barrier_kind);
	for (int f = 0; f < HWS_FAM_NLOCKS; f++) {
		const struct hws_lock_tally *t = &tot.lock[f];
		if (!LD(t->acquisitions))
			continue;
		dprintf(fd, "hwsync[%d]:   %-14s %" PRIu64 " acquisitions, %" PRIu64
			" contended (after spin %" PRIu64 ", after sleep %" PRIu64 "), first try %"
			PRIu64 ", %" PRIu64 " futex calls, %" PRIu64 " yields before a park, max "
			"spin %" PRIu64 " polls, %.3f ms waiting, longest wait %.3f ms, %" PRIu64
			" fairness hand-offs\n", pid, hws_family_name[f], LD(t->acquisitions),
			LD(t->acquisitions) - LD(t->first_try), LD(t->after_spin),
			LD(t->after_sleep), LD(t->first_try), LD(t->syscalls), LD(t->yields),
			LD(t->max_spins),
			(double)LD(t->wait_ns) / 1e6, (double)LD(t->max_wait_ns) / 1e6,
			LD(t->handoffs));
	}
	const struct hws_fam_tally *sp = &tot.fam[HWS_FAM_SPIN], *cv = &tot.fam[HWS_FAM_COND],
				   *se = &tot.fam[HWS_FAM_SEM];
	if (LD(sp->ops))
		dprintf(fd, "hwsync[%d]:   %-14s %" PRIu64 " acquisitions, %" PRIu64
			" contended\n", pid, hws_family_name[HWS_FAM_SPIN], LD(sp->ops),
			LD(sp->contended));
	if (LD(cv->ops) || LD(cv->signals) || LD(cv->broadcasts))
		dprintf(fd, "hwsync[%d]:   %-14s %" PRIu64 " waits (%" PRIu64 " timed out), %"
			PRIu64 " signals, %" PRIu64 " broadcasts, %.3f ms waiting\n", pid,
			hws_family_name[HWS_FAM_COND], LD(cv->ops), LD(cv->timeouts),
			LD(cv->signals), LD(cv->broadcasts), (double)LD(cv->wait_ns) / 1e6);
	if (LD(se->ops) || LD(se->signals))
		dprintf(fd, "hwsync[%d]:   %-14s %" PRIu64 " waits (%" PRIu64 " blocked, %"
			PRIu64 " timed out), %" PRIu64 " posts\n", pid,
			hws_family_name[HWS_FAM_SEM], LD(se->ops), LD(se->contended),
			LD(se->timeouts), LD(se->signals));
	for (int f = HWS_FAM_BARRIER; f <= HWS_FAM_OMP_BARRIER; f++)
		if (LD(tot.fam[f].ops))
			dprintf(fd, "hwsync[%d]:   %-14s %" PRIu64 " episodes (%s), %" PRIu64
				" waits, %.3f ms waiting\n", pid, hws_family_name[f],
				LD(tot.fam[f].episodes),
				f == HWS_FAM_BARRIER ? "central, in place" :
				!strcmp(hws_cfg.barrier_kind, "auto") ?
				"auto: dissemination for teams of two, else central" :
				hws_cfg.barrier_kind,
				LD(tot.fam[f].ops), (double)LD(tot.fam[f].wait_ns) / 1e6);
	const struct hws_fam_tally *rd = &tot.fam[HWS_FAM_RWLOCK_RD],
				   *wr = &tot.fam[HWS_FAM_RWLOCK_WR];
	if (LD(rd->ops) || LD(wr->ops) || LD(rd->timeouts) || LD(wr->timeouts))
		dprintf(fd, "hwsync[%d]:   %-14s %" PRIu64 " read locks (%" PRIu64 " contended, %"
			PRIu64 " timed out), %" PRIu64 " write locks (%" PRIu64 " contended, %"
			PRIu64 " timed out), %.3f ms waiting; default rwlocks %s, "
			"writer-preferring writer\n", pid, hws_family_name[HWS_FAM_RWLOCK_RD],
			LD(rd->ops), LD(rd->contended), LD(rd->timeouts), LD(wr->ops),
			LD(wr->contended), LD(wr->timeouts),
			(double)(LD(rd->wait_ns) + LD(wr->wait_ns)) / 1e6,
			hws_cfg_default_rwlock());
	if (lost)
		dprintf(fd, "hwsync[%d]:   incomplete: %" PRIu64 " operations not counted (no "
			"memory for a thread's counters)\n", pid, lost);
	for (int k = 0; k < HWS_PASS_NKINDS; k++)
		if (hws_pass_seen(k))
			dprintf(fd, "hwsync[%d]:   passed to the native implementation: %s\n",
				pid, hws_pass_name(k));
}

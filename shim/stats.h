/* HWSYNC_STATS (stats.c): per-thread counters, merged at exit. */
#ifndef HWS_PRELOAD_STATS_H
#define HWS_PRELOAD_STATS_H

#include <stdatomic.h>
#include <stdint.h>
#include "shim/family.h"

struct hws_lock_tally {   /* one lock family, as counted by the lock paths */
	_Atomic uint64_t acquisitions, first_try, after_spin, after_sleep, syscalls, max_spins,
		wait_ns, handoffs, max_wait_ns, yields;
};
struct hws_fam_tally {    /* the other families */
	_Atomic uint64_t ops, contended, wait_ns, timeouts, signals, broadcasts, episodes;
};
struct hws_thread_stats {
	struct hws_lock_tally lock[HWS_FAM_NLOCKS];
	struct hws_fam_tally fam[HWS_FAM_N];
	struct hws_thread_stats *next;   /* registry of every block ever made */
	_Atomic int in_use;              /* a live thread owns it */
};
/* This thread's block (made or reused on first use); NULL if none could be. */
struct hws_thread_stats *hws_my_stats(void);
/* Add v to a counter of this thread's block (only its owner writes it). */
static inline void hws_tally(_Atomic uint64_t *c, uint64_t v)
{
	/* relaxed: one writer; the exit report reads a snapshot. */
	atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + v,
			      memory_order_relaxed);
}
/* Count one event of a family that keeps its own counters (field: ops, ...). */
#define HWS_COUNT(family, field, v)                                              \
	do {                                                                     \
		struct hws_thread_stats *ts_ = hws_my_stats();                   \
		if (ts_)                                                         \
			hws_tally(&ts_->fam[family].field, (v));                 \
	} while (0)
void hws_stats_count_barrier(unsigned family, int last, uint64_t wait_ns);
/* In a forked child (pthread_atfork, startup.c). */
void hws_stats_atfork_child(void);
/* The summary at exit: the process that started the shim, or a forked child
 * that counted something (its own counts only); once per process. */
void hws_stats_report(void);

#endif

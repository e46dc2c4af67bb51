/* HWSYNC_STATS=1: counters and the summary printed at exit.
 *
 * Locks the shim creates are kept on a registry list (only with stats on) so
 * that the summary can read their hws_lock_stats; a destroyed lock adds its
 * counts to its family's totals.  The registry's own lock is a flag taken for
 * a few stores; the exit path only tries it for a bounded time, so a thread
 * cancelled (asynchronously) inside the registry cannot hang the exit.
 */
#include <errno.h>
#include <inttypes.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include "preload/shim.h"

const char *const hws_family_name[HWS_FAM_N] = {
	[HWS_FAM_MUTEX] = "pthread_mutex", [HWS_FAM_OMP_LOCK] = "omp_lock",
	[HWS_FAM_OMP_NEST] = "omp_nest_lock", [HWS_FAM_OMP_CRITICAL] = "omp critical",
	[HWS_FAM_SPIN] = "pthread_spin", [HWS_FAM_COND] = "pthread_cond",
	[HWS_FAM_SEM] = "sem", [HWS_FAM_BARRIER] = "pthread_barrier",
	[HWS_FAM_OMP_BARRIER] = "omp barrier",
};

struct hws_fam_counters hws_fam[HWS_FAM_N];

static _Atomic int reg_lock;
static struct hws_shim_lock *reg_head;
static struct hws_lock_stats dead[HWS_FAM_NLOCKS];   /* destroyed locks, under reg_lock */

static void reg_take(void)
{
	/* acquire: pairs with the release in reg_drop. */
	while (atomic_exchange_explicit(&reg_lock, 1, memory_order_acquire))
		sched_yield();
}

static int reg_try_for(unsigned tries)
{
	while (tries--) {
		/* acquire: pairs with the release in reg_drop. */
		if (!atomic_exchange_explicit(&reg_lock, 1, memory_order_acquire))
			return 1;
		sched_yield();
	}
	return 0;
}

static void reg_drop(void)
{
	/* release: publishes the list updates to the next taker. */
	atomic_store_explicit(&reg_lock, 0, memory_order_release);
}

static void add_stats(struct hws_lock_stats *to, const struct hws_lock_stats *s)
{
	to->acquisitions += s->acquisitions;
	to->first_try += s->first_try;
	to->after_spin += s->after_spin;
	to->after_sleep += s->after_sleep;
	to->syscalls += s->syscalls;
	to->wait_ns += s->wait_ns;
	if (s->max_spins > to->max_spins)
		to->max_spins = s->max_spins;
}

void hws_stats_register(struct hws_shim_lock *s)
{
	reg_take();
	s->prev = NULL;
	s->next = reg_head;
	if (reg_head)
		reg_head->prev = s;
	reg_head = s;
	reg_drop();
}

void hws_stats_unregister(struct hws_shim_lock *s)
{
	struct hws_lock_stats st;
	int have = hws_lock_stats_get(s->lock, &st) == 0;
	reg_take();
	if (have)
		add_stats(&dead[s->family], &st);
	if (s->prev)
		s->prev->next = s->next;
	else
		reg_head = s->next;
	if (s->next)
		s->next->prev = s->prev;
	reg_drop();
}

void hws_stats_count_barrier(unsigned family, int last, uint64_t wait_ns)
{
	/* relaxed: statistics counters, read once at exit. */
	atomic_fetch_add_explicit(&hws_fam[family].ops, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&hws_fam[family].wait_ns, wait_ns, memory_order_relaxed);
	if (last)
		atomic_fetch_add_explicit(&hws_fam[family].episodes, 1, memory_order_relaxed);
}

/* fork: the child must not inherit a registry lock held by another thread. */
void hws_stats_atfork_prepare(void)
{
	if (hws_cfg.stats)
		reg_take();
}

void hws_stats_atfork_parent(void)
{
	if (hws_cfg.stats)
		reg_drop();
}

void hws_stats_atfork_child(void)
{
	if (hws_cfg.stats)
		reg_drop();
}

#define LD(x) atomic_load_explicit(&(x), memory_order_relaxed)   /* relaxed: exit-time read */

void hws_stats_print(void)
{
	struct hws_lock_stats tot[HWS_FAM_NLOCKS];
	int complete = reg_try_for(1000);
	memcpy(tot, dead, sizeof tot);
	if (complete) {
		for (struct hws_shim_lock *s = reg_head; s; s = s->next) {
			struct hws_lock_stats st;
			if (hws_lock_stats_get(s->lock, &st) == 0)
				add_stats(&tot[s->family], &st);
		}
		reg_drop();
	}
	int pid = hws_cfg.pid, fd = hws_cfg.err_fd;
	dprintf(fd, "hwsync[%d]: stats: lock kind %s (%s), wait policy %s, barrier kind %s%s\n",
		pid, hws_cfg.lock_kind, hws_cfg.lock_used, hws_cfg.wait_spec, hws_cfg.barrier_kind,
		complete ? "" : " (live locks not counted: registry busy at exit)");
	for (int f = 0; f < HWS_FAM_NLOCKS; f++) {
		const struct hws_lock_stats *t = &tot[f];
		if (!t->acquisitions)
			continue;
		dprintf(fd, "hwsync[%d]:   %-14s %" PRIu64 " acquisitions, %" PRIu64
			" contended (after spin %" PRIu64 ", after sleep %" PRIu64 "), first try %"
			PRIu64 ", %" PRIu64 " futex calls, max spin %" PRIu64 " polls, %.3f ms "
			"waiting\n", pid, hws_family_name[f], t->acquisitions,
			t->acquisitions - t->first_try, t->after_spin, t->after_sleep, t->first_try,
			t->syscalls, t->max_spins, (double)t->wait_ns / 1e6);
	}
	if (LD(hws_fam[HWS_FAM_SPIN].ops))
		dprintf(fd, "hwsync[%d]:   %-14s %" PRIu64 " acquisitions, %" PRIu64
			" contended\n", pid, hws_family_name[HWS_FAM_SPIN],
			LD(hws_fam[HWS_FAM_SPIN].ops), LD(hws_fam[HWS_FAM_SPIN].contended));
	if (LD(hws_fam[HWS_FAM_COND].ops) || LD(hws_fam[HWS_FAM_COND].signals) ||
	    LD(hws_fam[HWS_FAM_COND].broadcasts))
		dprintf(fd, "hwsync[%d]:   %-14s %" PRIu64 " waits (%" PRIu64 " timed out), %"
			PRIu64 " signals, %" PRIu64 " broadcasts, %.3f ms waiting\n", pid,
			hws_family_name[HWS_FAM_COND], LD(hws_fam[HWS_FAM_COND].ops),
			LD(hws_fam[HWS_FAM_COND].timeouts), LD(hws_fam[HWS_FAM_COND].signals),
			LD(hws_fam[HWS_FAM_COND].broadcasts),
			(double)LD(hws_fam[HWS_FAM_COND].wait_ns) / 1e6);
	if (LD(hws_fam[HWS_FAM_SEM].ops) || LD(hws_fam[HWS_FAM_SEM].signals))
		dprintf(fd, "hwsync[%d]:   %-14s %" PRIu64 " waits (%" PRIu64 " blocked, %"
			PRIu64 " timed out), %" PRIu64 " posts\n", pid,
			hws_family_name[HWS_FAM_SEM], LD(hws_fam[HWS_FAM_SEM].ops),
			LD(hws_fam[HWS_FAM_SEM].contended), LD(hws_fam[HWS_FAM_SEM].timeouts),
			LD(hws_fam[HWS_FAM_SEM].signals));
	for (int f = HWS_FAM_BARRIER; f <= HWS_FAM_OMP_BARRIER; f++)
		if (LD(hws_fam[f].ops))
			dprintf(fd, "hwsync[%d]:   %-14s %" PRIu64 " episodes (%s), %" PRIu64
				" waits, %.3f ms waiting\n", pid, hws_family_name[f],
				LD(hws_fam[f].episodes), hws_cfg.barrier_kind, LD(hws_fam[f].ops),
				(double)LD(hws_fam[f].wait_ns) / 1e6);
	for (int k = 0; k < HWS_PASS_NKINDS; k++)
		if (hws_pass_seen(k))
			dprintf(fd, "hwsync[%d]:   passed to the native implementation: %s\n",
				pid, hws_pass_name(k));
}

/* hwsync-lockbench: hwsync locks against glibc and Concurrency Kit, in one run.
 * Not a test.  Three experiments, each interleaving its implementations
 * round-robin across repetitions (A B C A B C ...) so that the drift of a
 * shared VM hits every row alike; threads are pinned; each row reports the
 * median, the spread (min..max) and the ratio to glibc's pthread_mutex.
 *
 *   uncontended  one thread, acquire+release pairs: auto (generic API and its
 *                typed form) vs pthread_mutex
 *   handoff      two threads on two CPUs contending for one lock, critical
 *                section of 100 volatile increments: every hwsync kind under
 *                spin/pause/adaptive/futex vs pthread_mutex and CK spinlocks
 *   oversub      8 threads on 2 CPUs (4 per CPU), same critical section:
 *                auto vs pthread_mutex, and tas/ticket with pure spinning
 *                (expected to collapse; each trial is time-boxed)
 *
 * usage: hwsync-lockbench [reps (default 9)] [ms per trial (default 40)]
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <hwsync/arch.h>
#include <hwsync/lock.h>
#include <hwsync/lock_1spinner.h>
#include <hwsync/lock_clh.h>
#include <hwsync/lock_mcs.h>
#include <hwsync/lock_mutex.h>
#include <hwsync/lock_tas.h>
#include <hwsync/lock_ticket.h>
#include <hwsync/lock_ttas.h>
#if HWS_HAVE_CK
#include <ck_spinlock.h>
#endif

#define MAXREP 64
#define MAXTHR 16

enum impl_kind {
	I_TAS, I_TTAS, I_TICKET, I_MCS, I_CLH, I_1SPINNER, I_MUTEX, I_GENERIC, I_PTHREAD,
	I_CK_FAS, I_CK_TICKET, I_CK_MCS, I_CK_CLH,
};

struct row {
	char name[40];
	enum impl_kind kind;
	char policy[16];
	hws_wait_t wait;
	union {
		hws_tas_t tas; hws_ttas_t ttas; hws_ticket_t ticket; hws_mcs_t mcs; hws_clh_t clh;
		hws_1spinner_t s1; hws_mutex_t mutex; hws_lock_t *gen; pthread_mutex_t pm;
#if HWS_HAVE_CK
		ck_spinlock_fas_t fas; ck_spinlock_ticket_t ckt; struct ck_spinlock_mcs *ckmcs;
		ck_spinlock_clh_t *ckclh;
#endif
	} u HWS_ALIGNED_LINE;
	double v[MAXREP];      /* ns per acquisition, one per repetition */
	int nv;
	unsigned long capped;  /* trials that hit the time box */
	char skipped[80];
};

struct tctx {
#if HWS_HAVE_CK
	ck_spinlock_mcs_context_t mcs_node;
	ck_spinlock_clh_t *clh_node;
#endif
	int dummy;
};

static inline void lock_(struct row *r, struct tctx *t)
{
	(void)t;
	switch (r->kind) {
	case I_TAS: hws_tas_acquire(&r->u.tas); break;
	case I_TTAS: hws_ttas_acquire(&r->u.ttas); break;
	case I_TICKET: hws_ticket_acquire(&r->u.ticket); break;
	case I_MCS: hws_mcs_acquire(&r->u.mcs); break;
	case I_CLH: hws_clh_acquire(&r->u.clh); break;
	case I_1SPINNER: hws_1spinner_acquire(&r->u.s1); break;
	case I_MUTEX: hws_mutex_acquire(&r->u.mutex); break;
	case I_GENERIC: hws_lock_acquire(r->u.gen); break;
	case I_PTHREAD: pthread_mutex_lock(&r->u.pm); break;
#if HWS_HAVE_CK
	case I_CK_FAS: ck_spinlock_fas_lock(&r->u.fas); break;
	case I_CK_TICKET: ck_spinlock_ticket_lock(&r->u.ckt); break;
	case I_CK_MCS: ck_spinlock_mcs_lock(&r->u.ckmcs, &t->mcs_node); break;
	case I_CK_CLH: ck_spinlock_clh_lock(&r->u.ckclh, t->clh_node); break;
#endif
	default: break;
	}
}

static inline void unlock_(struct row *r, struct tctx *t)
{
	(void)t;
	switch (r->kind) {
	case I_TAS: hws_tas_release(&r->u.tas); break;
	case I_TTAS: hws_ttas_release(&r->u.ttas); break;
	case I_TICKET: hws_ticket_release(&r->u.ticket); break;
	case I_MCS: hws_mcs_release(&r->u.mcs); break;
	case I_CLH: hws_clh_release(&r->u.clh); break;
	case I_1SPINNER: hws_1spinner_release(&r->u.s1); break;
	case I_MUTEX: hws_mutex_release(&r->u.mutex); break;
	case I_GENERIC: hws_lock_release(r->u.gen); break;
	case I_PTHREAD: pthread_mutex_unlock(&r->u.pm); break;
#if HWS_HAVE_CK
	case I_CK_FAS: ck_spinlock_fas_unlock(&r->u.fas); break;
	case I_CK_TICKET: ck_spinlock_ticket_unlock(&r->u.ckt); break;
	case I_CK_MCS: ck_spinlock_mcs_unlock(&r->u.ckmcs, &t->mcs_node); break;
	case I_CK_CLH: ck_spinlock_clh_unlock(&t->clh_node); break;
#endif
	default: break;
	}
}

static const char *const kind_names[] = {
	[I_TAS] = "tas", [I_TTAS] = "ttas", [I_TICKET] = "ticket", [I_MCS] = "mcs",
	[I_CLH] = "clh", [I_1SPINNER] = "1spinner", [I_MUTEX] = "mutex",
};

/* Set up r for kind k under policy p (hwsync kinds) or as a peer. */
static void row_init(struct row *r, enum impl_kind k, const char *p, const char *label)
{
	memset(r, 0, sizeof *r);
	r->kind = k;
	snprintf(r->policy, sizeof r->policy, "%s", p ? p : "");
	snprintf(r->name, sizeof r->name, "%s", label);
	if (k <= I_MUTEX && hws_wait_init(&r->wait, p)) {
		snprintf(r->skipped, sizeof r->skipped, "skipped: %s", hws_last_error());
		return;
	}
}

static void row_setup(struct row *r)
{
	switch (r->kind) {
	case I_TAS: hws_tas_init(&r->u.tas, &r->wait); break;
	case I_TTAS: hws_ttas_init(&r->u.ttas, &r->wait); break;
	case I_TICKET: hws_ticket_init(&r->u.ticket, &r->wait); break;
	case I_MCS: hws_mcs_init(&r->u.mcs, &r->wait); break;
	case I_CLH: hws_clh_init(&r->u.clh, &r->wait); break;
	case I_1SPINNER: hws_1spinner_init(&r->u.s1, &r->wait); break;
	case I_MUTEX: hws_mutex_init(&r->u.mutex, &r->wait); break;
	case I_GENERIC:
		if (hws_lock_create(&r->u.gen, "auto", NULL))
			snprintf(r->skipped, sizeof r->skipped, "skipped: %s", hws_last_error());
		break;
	case I_PTHREAD: pthread_mutex_init(&r->u.pm, NULL); break;
#if HWS_HAVE_CK
	case I_CK_FAS: ck_spinlock_fas_init(&r->u.fas); break;
	case I_CK_TICKET: ck_spinlock_ticket_init(&r->u.ckt); break;
	case I_CK_MCS: ck_spinlock_mcs_init(&r->u.ckmcs); break;
	case I_CK_CLH: {
		static ck_spinlock_clh_t unowned[1];
		ck_spinlock_clh_t *n = malloc(sizeof *n);
		ck_spinlock_clh_init(&r->u.ckclh, n ? n : unowned);
		break;
	}
#endif
	default: break;
	}
}

static void row_teardown(struct row *r)
{
	if (r->kind == I_GENERIC && r->u.gen)
		hws_lock_destroy(r->u.gen);
	if (r->kind == I_CLH)
		hws_clh_destroy(&r->u.clh);
	if (r->kind == I_1SPINNER)
		hws_1spinner_destroy(&r->u.s1);
	/* CK clh: nodes rotate between threads; the few bytes are left to exit. */
}

/* ---- one trial: n threads, pinned, for `ms`, or single-thread pairs --------- */
static struct row *cur;
static _Atomic int go, stop, ready;
static _Atomic unsigned long total;
static unsigned cs_incs;
static long ncpu;

static void pin(int cpu)
{
	cpu_set_t s;
	CPU_ZERO(&s);
	CPU_SET(cpu % ncpu, &s);
	pthread_setaffinity_np(pthread_self(), sizeof s, &s);
}

static void *worker(void *arg)
{
	struct tctx t;
	unsigned long n = 0;
	volatile unsigned long work = 0;

	memset(&t, 0, sizeof t);
#if HWS_HAVE_CK
	if (cur->kind == I_CK_CLH && !(t.clh_node = malloc(sizeof *t.clh_node)))
		return NULL;
#endif
	pin((int)(intptr_t)arg);
	atomic_fetch_add(&ready, 1);
	while (!atomic_load_explicit(&go, memory_order_acquire))
		;
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		lock_(cur, &t);
		for (unsigned i = 0; i < cs_incs; i++)
			work++;
		unlock_(cur, &t);
		n++;
	}
	atomic_fetch_add(&total, n);
	return NULL;
}

/* ns per acquisition for `nthr` threads over `ms` milliseconds; *capped set
 * when draining after the stop took longer than the cap. */
static double run_threads(struct row *r, int nthr, unsigned ms, int *capped)
{
	pthread_t t[MAXTHR];
	uint64_t t0, t1, t2;

	cur = r;
	atomic_store(&go, 0), atomic_store(&stop, 0), atomic_store(&ready, 0);
	atomic_store(&total, 0);
	for (int i = 0; i < nthr; i++)
		pthread_create(&t[i], NULL, worker, (void *)(intptr_t)i);
	while (atomic_load(&ready) < nthr)
		sched_yield();
	t0 = hws_now_ns();
	atomic_store_explicit(&go, 1, memory_order_release);
	usleep(ms * 1000u);
	atomic_store(&stop, 1);
	t1 = hws_now_ns();
	for (int i = 0; i < nthr; i++)
		pthread_join(t[i], NULL);
	t2 = hws_now_ns();
	/* Time-box: acquisitions finished while draining count against the
	 * whole interval, so a collapse shows as a large ns/acquisition. */
	*capped = t2 - t1 > 1000000ull * ms;
	unsigned long n = atomic_load(&total);
	return n ? (double)(t2 - t0) / (double)n : 1e12;
}

static double run_uncontended(struct row *r, unsigned long pairs)
{
	struct tctx t;
	memset(&t, 0, sizeof t);
	pin(0);
	uint64_t t0 = hws_now_ns();
	for (unsigned long i = 0; i < pairs; i++) {
		lock_(r, &t);
		unlock_(r, &t);
	}
	return (double)(hws_now_ns() - t0) / (double)pairs;
}

static int cmpd(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double median(struct row *r)
{
	double s[MAXREP];
	memcpy(s, r->v, sizeof(double) * (size_t)r->nv);
	qsort(s, (size_t)r->nv, sizeof s[0], cmpd);
	return r->nv ? (r->nv % 2 ? s[r->nv / 2] : (s[r->nv / 2 - 1] + s[r->nv / 2]) / 2) : 0;
}

static void report(const char *title, struct row *rows, int n, const char *unit)
{
	double base = 0;
	for (int i = 0; i < n; i++)
		if (rows[i].kind == I_PTHREAD && rows[i].nv)
			base = median(&rows[i]);
	printf("\n== %s ==\n%-28s %12s %24s %10s\n", title, "implementation", unit,
	       "spread (min..max)", "vs glibc");
	for (int i = 0; i < n; i++) {
		struct row *r = &rows[i];
		if (r->skipped[0]) {
			printf("%-28s %s\n", r->name, r->skipped);
			continue;
		}
		double mn = 1e300, mx = 0, m = median(r);
		for (int k = 0; k < r->nv; k++)
			mn = r->v[k] < mn ? r->v[k] : mn, mx = r->v[k] > mx ? r->v[k] : mx;
		printf("%-28s %12.1f %11.1f..%-12.1f %9.2fx%s\n", r->name, m, mn, mx,
		       base ? m / base : 0, r->capped ? "  (time box hit)" : "");
	}
}

static void *nop(void *a)
{
	return a;
}

int main(int argc, char **argv)
{
	static const char *const pols[] = { "spin", "pause", "adaptive", "futex" };
	int reps = argc > 1 ? atoi(argv[1]) : 9;
	unsigned ms = argc > 2 ? (unsigned)atoi(argv[2]) : 40;
	static struct row hand[64], unc[4], over[12];
	int nh = 0, nu = 0, no = 0, capped;

	reps = reps < 1 ? 1 : reps > MAXREP ? MAXREP : reps;
	/* glibc skips atomics while a process has never had a second thread;
	 * locks matter in threaded processes, so make this one threaded first. */
	pthread_t dummy;
	pthread_create(&dummy, NULL, nop, NULL);
	pthread_join(dummy, NULL);
	ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	const struct hws_cpu_info *c = hws_cpu();
	hws_lock_t *probe;
	hws_lock_create(&probe, "auto", NULL);
	printf("hwsync-lockbench: %s, %ld CPUs, %s; reps %d, %u ms per trial; auto = %s\n",
	       c->model, ncpu, c->hypervisor ? "hypervisor" : "bare metal", reps, ms,
	       hws_lock_kind(probe));
	hws_lock_destroy(probe);

	/* uncontended */
	row_init(&unc[nu++], I_GENERIC, NULL, "hwsync auto (generic API)");
	row_init(&unc[nu++], I_MUTEX, "adaptive", "hwsync mutex (typed)");
	row_init(&unc[nu++], I_PTHREAD, NULL, "glibc pthread_mutex");
	for (int rep = 0; rep < reps; rep++)
		for (int i = 0; i < nu; i++) {
			if (unc[i].skipped[0])
				continue;
			row_setup(&unc[i]);
			if (!unc[i].skipped[0])
				unc[i].v[unc[i].nv++] = run_uncontended(&unc[i], 2000000);
			row_teardown(&unc[i]);
		}
	report("uncontended acquire+release, 1 thread", unc, nu, "ns/pair");

	/* two-thread handoff */
	cs_incs = 100;
	for (int k = I_TAS; k <= I_MUTEX; k++)
		for (int p = 0; p < 4; p++) {
			char label[40];
			snprintf(label, sizeof label, "%s:%s", kind_names[k], pols[p]);
			row_init(&hand[nh++], (enum impl_kind)k, pols[p], label);
		}
	row_init(&hand[nh++], I_GENERIC, NULL, "auto (generic API)");
	row_init(&hand[nh++], I_PTHREAD, NULL, "glibc pthread_mutex");
#if HWS_HAVE_CK
	row_init(&hand[nh++], I_CK_FAS, NULL, "ck_spinlock_fas");
	row_init(&hand[nh++], I_CK_TICKET, NULL, "ck_spinlock_ticket");
	row_init(&hand[nh++], I_CK_MCS, NULL, "ck_spinlock_mcs");
	row_init(&hand[nh++], I_CK_CLH, NULL, "ck_spinlock_clh");
#else
	row_init(&hand[nh], I_CK_FAS, NULL, "Concurrency Kit");
	snprintf(hand[nh++].skipped, sizeof hand[0].skipped, "skipped: built without libck");
#endif
	if (ncpu < 2) {
		printf("\nhandoff: skipped: needs 2 CPUs\n");
	} else {
		for (int rep = 0; rep < reps; rep++)
			for (int i = 0; i < nh; i++) {
				if (hand[i].skipped[0])
					continue;
				row_setup(&hand[i]);
				hand[i].v[hand[i].nv++] = run_threads(&hand[i], 2, ms, &capped);
				hand[i].capped += capped;
				row_teardown(&hand[i]);
			}
		report("handoff: 2 threads on 2 CPUs, critical section 100 volatile increments",
		       hand, nh, "ns/acq");
		/* best policy per kind */
		printf("\nbest policy per kind (median ns/acq):");
		for (int k = I_TAS; k <= I_MUTEX; k++) {
			int best = -1;
			for (int i = 0; i < nh; i++)
				if (hand[i].kind == (enum impl_kind)k && hand[i].nv &&
				    (best < 0 || median(&hand[i]) < median(&hand[best])))
					best = i;
			if (best >= 0)
				printf(" %s %.0f;", hand[best].name, median(&hand[best]));
		}
		printf("\n");
	}

	/* 8 threads on 2 CPUs */
	row_init(&over[no++], I_GENERIC, NULL, "auto (generic API)");
	row_init(&over[no++], I_PTHREAD, NULL, "glibc pthread_mutex");
	row_init(&over[no++], I_TAS, "spin", "tas:spin");
	row_init(&over[no++], I_TICKET, "spin", "ticket:spin");
	row_init(&over[no++], I_MUTEX, "futex", "mutex:futex");
	row_init(&over[no++], I_MUTEX, "adaptive", "mutex:adaptive");
	row_init(&over[no++], I_TTAS, "adaptive", "ttas:adaptive");
	row_init(&over[no++], I_MCS, "adaptive", "mcs:adaptive");
	for (int rep = 0; rep < reps; rep++)
		for (int i = 0; i < no; i++) {
			if (over[i].skipped[0])
				continue;
			row_setup(&over[i]);
			over[i].v[over[i].nv++] = run_threads(&over[i], 8, ms, &capped);
			over[i].capped += capped;
			row_teardown(&over[i]);
		}
	report("oversubscribed: 8 threads pinned on 2 CPUs, critical section 100 increments",
	       over, no, "ns/acq");
	return 0;
}

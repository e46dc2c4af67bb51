/* hwsync-syncbench: barrier overhead and event wake-up latency, hwsync
 * against its peers in the same run (a benchmark, not a test).
 *
 * Barrier: 2 threads pinned to two CPUs each do ~1 us of work (a clock-read
 * spin) and then wait at the barrier, `episodes` times.  Per-episode time
 * minus the median of a "work only" row (the same loop without a barrier) is
 * the barrier's overhead.  Rows: every hwsync kind under pause, adaptive and
 * futex; pthread_barrier_wait; GNU OpenMP `#pragma omp barrier`; Concurrency
 * Kit centralized, combining, dissemination and tournament barriers.
 * Event: one-way wake-up latency from a two-thread ping-pong (half a round
 * trip): hwsync event under pause, adaptive and futex vs a pthread mutex +
 * condition variable.
 * Every row is measured once per repetition, rows interleaved round-robin (A B
 * C A B C ...) so that drift of a shared VM hits every row alike; medians,
 * the 25-75 % spread and the ratio to the pthread row are printed as a
 * Markdown table.
 *
 *   hwsync-syncbench [--reps N] [--episodes N] [--rounds N] [--cpus A,B]
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <hwsync/barrier.h>
#include <hwsync/event.h>
#include <hwsync/arch.h>
#include <hwsync/wait.h>
#ifdef HWS_HAVE_CK
#include <ck_barrier.h>
#endif
#ifdef _OPENMP
#include <omp.h>
#endif

#define WORK_NS 1000

static unsigned episodes = 20000, rounds = 20000, reps = 11;
static int cpu[2] = { 0, 1 };

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void work(void)
{
	uint64_t end = now_ns() + WORK_NS;
	while (now_ns() < end)
		;
}

static void pin(int c)
{
	cpu_set_t s;
	CPU_ZERO(&s);
	CPU_SET(c, &s);
	sched_setaffinity(0, sizeof s, &s);
}

/* ---- barrier rows ---------------------------------------------------------- */
struct brow {
	const char *name;
	const char *skip;            /* reason, when the row cannot run here */
	int (*setup)(struct brow *);
	void (*wait)(struct brow *, unsigned tid, void *state);
	void *(*state)(struct brow *, unsigned tid);   /* per-thread state or NULL */
	void (*teardown)(struct brow *);
	const char *kind, *policy;   /* hwsync rows */
	void *obj;
	double *ns;                  /* [reps] overhead per episode */
};

static int hws_setup(struct brow *r)
{
	hws_barrier_t *b;
	int rc = hws_barrier_create(&b, r->kind, 2, r->policy);
	if (rc)
		return rc;
	r->obj = b;
	return 0;
}
static void hws_bwait(struct brow *r, unsigned tid, void *st)
{
	(void)tid, (void)st;
	hws_barrier_wait(r->obj);
}
static void hws_teardown(struct brow *r)
{
	hws_barrier_destroy(r->obj);
}

static int none_setup(struct brow *r)
{
	(void)r;
	return 0;
}
static void none_wait(struct brow *r, unsigned tid, void *st)
{
	(void)r, (void)tid, (void)st;
}
static void none_teardown(struct brow *r)
{
	(void)r;
}

static pthread_barrier_t pb;
static int pth_setup(struct brow *r)
{
	(void)r;
	return pthread_barrier_init(&pb, NULL, 2);
}
static void pth_wait(struct brow *r, unsigned tid, void *st)
{
	(void)r, (void)tid, (void)st;
	pthread_barrier_wait(&pb);
}
static void pth_teardown(struct brow *r)
{
	(void)r;
	pthread_barrier_destroy(&pb);
}

#ifdef HWS_HAVE_CK
static ck_barrier_centralized_t ck_cent = CK_BARRIER_CENTRALIZED_INITIALIZER;
static ck_barrier_centralized_state_t ck_cent_st[2];
static ck_barrier_combining_t ck_comb;
static ck_barrier_combining_group_t ck_comb_root, ck_comb_group;
static ck_barrier_combining_state_t ck_comb_st[2];
static ck_barrier_dissemination_t ck_diss[2];
static ck_barrier_dissemination_flag_t *ck_diss_flags[2];
static ck_barrier_dissemination_state_t ck_diss_st[2];
static ck_barrier_tournament_t ck_tour;
static ck_barrier_tournament_round_t *ck_tour_rounds[2];
static ck_barrier_tournament_state_t ck_tour_st[2];

static int ck_setup(struct brow *r)
{
	if (!strcmp(r->kind, "centralized")) {
		ck_barrier_centralized_t z = CK_BARRIER_CENTRALIZED_INITIALIZER;
		ck_cent = z;
		memset(ck_cent_st, 0, sizeof ck_cent_st);
	} else if (!strcmp(r->kind, "combining")) {
		ck_barrier_combining_state_t s = CK_BARRIER_COMBINING_STATE_INITIALIZER;
		ck_barrier_combining_init(&ck_comb, &ck_comb_root);
		ck_barrier_combining_group_init(&ck_comb, &ck_comb_group, 2);
		ck_comb_st[0] = ck_comb_st[1] = s;
	} else if (!strcmp(r->kind, "dissemination")) {
		unsigned size = ck_barrier_dissemination_size(2);
		for (int i = 0; i < 2; i++)
			ck_diss_flags[i] = calloc(size, sizeof(ck_barrier_dissemination_flag_t));
		ck_barrier_dissemination_init(ck_diss, ck_diss_flags, 2);
	} else {
		unsigned size = ck_barrier_tournament_size(2);
		for (int i = 0; i < 2; i++)
			ck_tour_rounds[i] = calloc(size, sizeof(ck_barrier_tournament_round_t));
		ck_barrier_tournament_init(&ck_tour, ck_tour_rounds, 2);
	}
	return 0;
}
static void *ck_state(struct brow *r, unsigned tid)
{
	if (!strcmp(r->kind, "dissemination")) {
		ck_barrier_dissemination_subscribe(ck_diss, &ck_diss_st[tid]);
		return &ck_diss_st[tid];
	}
	if (!strcmp(r->kind, "tournament")) {
		ck_barrier_tournament_subscribe(&ck_tour, &ck_tour_st[tid]);
		return &ck_tour_st[tid];
	}
	return NULL;
}
static void ck_wait(struct brow *r, unsigned tid, void *st)
{
	switch (r->kind[1]) {
	case 'e':   /* centralized */
		ck_barrier_centralized(&ck_cent, &ck_cent_st[tid], 2);
		break;
	case 'o':   /* combining */
		ck_barrier_combining(&ck_comb, &ck_comb_group, &ck_comb_st[tid]);
		break;
	case 'i':   /* dissemination */
		ck_barrier_dissemination(ck_diss, st);
		break;
	default:    /* tournament */
		ck_barrier_tournament(&ck_tour, st);
	}
}
static void ck_teardown(struct brow *r)
{
	if (!strcmp(r->kind, "dissemination"))
		for (int i = 0; i < 2; i++)
			free(ck_diss_flags[i]);
	if (!strcmp(r->kind, "tournament"))
		for (int i = 0; i < 2; i++)
			free(ck_tour_rounds[i]);
}
#endif

struct bthread {
	struct brow *row;
	unsigned tid;
	_Atomic unsigned *ready;
	double ns;
};

static void *bthread_main(void *arg)
{
	struct bthread *t = arg;
	struct brow *r = t->row;
	void *st = r->state ? r->state(r, t->tid) : NULL;
	pin(cpu[t->tid]);
	atomic_fetch_add(t->ready, 1);
	while (atomic_load(t->ready) < 2)
		;
	r->wait(r, t->tid, st);   /* line up */
	uint64_t t0 = now_ns();
	for (unsigned i = 0; i < episodes; i++) {
		work();
		r->wait(r, t->tid, st);
	}
	t->ns = (double)(now_ns() - t0) / episodes;
	return NULL;
}

/* One measurement of a row: ns per episode seen by thread 0. */
static double brow_once(struct brow *r)
{
	pthread_t th[2];
	_Atomic unsigned ready = 0;
	struct bthread t[2] = { { r, 0, &ready, 0 }, { r, 1, &ready, 0 } };
	if (r->setup(r))
		return -1;
	for (int i = 0; i < 2; i++)
		pthread_create(&th[i], NULL, bthread_main, &t[i]);
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	r->teardown(r);
	return t[0].ns;
}

#ifdef _OPENMP
static double omp_once(void)
{
	double ns = 0;
#pragma omp parallel num_threads(2)
	{
		int tid = omp_get_thread_num();
		pin(cpu[tid]);
#pragma omp barrier
		uint64_t t0 = now_ns();
		for (unsigned i = 0; i < episodes; i++) {
			work();
#pragma omp barrier
		}
		if (tid == 0)
			ns = (double)(now_ns() - t0) / episodes;
	}
	return ns;
}
#endif

/* ---- event rows ----------------------------------------------------------- */
struct erow {
	const char *name;
	const char *policy;        /* NULL: pthread mutex + cond */
	double *ns;
};

static _Atomic uint32_t ball;
static hws_event_t *ev[2];
static pthread_mutex_t mtx = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv[2] = { PTHREAD_COND_INITIALIZER, PTHREAD_COND_INITIALIZER };
static int use_pthread;

static void *eplayer(void *arg)
{
	unsigned me = (unsigned)(uintptr_t)arg;
	pin(cpu[me]);
	for (uint32_t i = 0; i < rounds; i++) {
		uint32_t want = 2 * i + me;
		if (use_pthread) {
			pthread_mutex_lock(&mtx);
			while (atomic_load_explicit(&ball, memory_order_relaxed) != want)
				pthread_cond_wait(&cv[me], &mtx);
			atomic_store_explicit(&ball, want + 1, memory_order_relaxed);
			pthread_cond_signal(&cv[!me]);
			pthread_mutex_unlock(&mtx);
		} else {
			for (;;) {
				uint32_t e = hws_event_epoch(ev[me]);
				if (atomic_load_explicit(&ball, memory_order_acquire) == want)
					break;
				hws_event_wait(ev[me], e);
			}
			atomic_store_explicit(&ball, want + 1, memory_order_release);
			hws_event_notify_one(ev[!me]);
		}
	}
	return NULL;
}

static double erow_once(struct erow *r)
{
	pthread_t a, b;
	use_pthread = r->policy == NULL;
	if (!use_pthread && (hws_event_create(&ev[0], r->policy) ||
			     hws_event_create(&ev[1], r->policy)))
		return -1;
	atomic_store(&ball, 0);
	uint64_t t0 = now_ns();
	pthread_create(&a, NULL, eplayer, (void *)0);
	pthread_create(&b, NULL, eplayer, (void *)1);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	double ns = (double)(now_ns() - t0) / (2.0 * rounds);
	if (!use_pthread) {
		hws_event_destroy(ev[0]);
		hws_event_destroy(ev[1]);
	}
	return ns;
}

/* ---- statistics ----------------------------------------------------------- */
static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double quantile(const double *v, unsigned n, double q)
{
	double *s = malloc(n * sizeof *s);
	memcpy(s, v, n * sizeof *s);
	qsort(s, n, sizeof *s, cmp_d);
	double r = s[(unsigned)(q * (n - 1) + 0.5)];
	free(s);
	return r;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "reps", required_argument, NULL, 'r' },
		{ "episodes", required_argument, NULL, 'e' },
		{ "rounds", required_argument, NULL, 'n' },
		{ "cpus", required_argument, NULL, 'c' },
		{ NULL, 0, NULL, 0 },
	};
	int o;
	while ((o = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (o) {
		case 'r': reps = (unsigned)atoi(optarg); break;
		case 'e': episodes = (unsigned)atoi(optarg); break;
		case 'n': rounds = (unsigned)atoi(optarg); break;
		case 'c':
			if (sscanf(optarg, "%d,%d", &cpu[0], &cpu[1]) != 2) {
				fprintf(stderr, "--cpus wants A,B\n");
				return 2;
			}
			break;
		default:
			fprintf(stderr, "usage: hwsync-syncbench [--reps N] [--episodes N] "
				"[--rounds N] [--cpus A,B]\n");
			return 2;
		}
	}
	if (!reps || !episodes || !rounds)
		return 2;
	hws_adaptive_calibration();   /* adaptive rows use this machine's measured budget */

	/* Barrier rows. */
	static const char *const kinds[] = { "central", "pair", "hier", "dissemination", "tree" };
	static const char *const pols[] = { "pause", "adaptive", "futex" };
	struct brow rows[64];
	unsigned nr = 0;
	rows[nr++] = (struct brow){ .name = "work only (no barrier)", .setup = none_setup,
				    .wait = none_wait, .teardown = none_teardown };
	for (unsigned k = 0; k < 5; k++)
		for (unsigned p = 0; p < 3; p++) {
			char *name;
			if (asprintf(&name, "hwsync %s / %s", kinds[k], pols[p]) < 0)
				return 1;
			rows[nr++] = (struct brow){ .name = name, .setup = hws_setup,
						    .wait = hws_bwait, .teardown = hws_teardown,
						    .kind = kinds[k], .policy = pols[p] };
		}
	unsigned pth_row = nr;
	rows[nr++] = (struct brow){ .name = "pthread_barrier_wait", .setup = pth_setup,
				    .wait = pth_wait, .teardown = pth_teardown };
	unsigned omp_row = nr;
	rows[nr++] = (struct brow){ .name = "GNU OpenMP #pragma omp barrier",
#ifndef _OPENMP
				    .skip = "built without -fopenmp",
#endif
				  };
	static const char *const ckk[] = { "centralized", "combining", "dissemination",
					   "tournament" };
	for (unsigned k = 0; k < 4; k++) {
		char *name;
		if (asprintf(&name, "ck_barrier_%s", ckk[k]) < 0)
			return 1;
		rows[nr] = (struct brow){ .name = name, .kind = ckk[k] };
#ifdef HWS_HAVE_CK
		rows[nr].setup = ck_setup, rows[nr].wait = ck_wait, rows[nr].state = ck_state;
		rows[nr].teardown = ck_teardown;
#else
		rows[nr].skip = "built without Concurrency Kit (libck-dev)";
#endif
		nr++;
	}
	struct erow erows[] = {
		{ "hwsync event / pause", "pause", NULL },
		{ "hwsync event / adaptive", "adaptive", NULL },
		{ "hwsync event / futex", "futex", NULL },
		{ "pthread_cond_signal + mutex", NULL, NULL },
	};
	unsigned ner = sizeof erows / sizeof erows[0];
	for (unsigned i = 0; i < nr; i++)
		rows[i].ns = calloc(reps, sizeof(double));
	for (unsigned i = 0; i < ner; i++)
		erows[i].ns = calloc(reps, sizeof(double));

	for (unsigned rep = 0; rep < reps; rep++) {
		for (unsigned i = 0; i < nr; i++) {
			if (rows[i].skip)
				continue;
#ifdef _OPENMP
			if (i == omp_row) {
				rows[i].ns[rep] = omp_once();
				continue;
			}
#endif
			rows[i].ns[rep] = brow_once(&rows[i]);
			if (rows[i].ns[rep] < 0) {
				fprintf(stderr, "%s: %s\n", rows[i].name, hws_last_error());
				rows[i].skip = "not available here";
			}
		}
		for (unsigned i = 0; i < ner; i++)
			erows[i].ns[rep] = erow_once(&erows[i]);
		fprintf(stderr, "repetition %u/%u done\n", rep + 1, reps);
	}

	const struct hws_cpu_info *ci = hws_cpu();
	const struct hws_adaptive_calibration *cal = hws_adaptive_calibration();
	printf("machine: %s (%s%s), %ld CPUs online; adaptive spin budget %llu ns\n\n", ci->model,
	       ci->arch, ci->hypervisor ? ", hypervisor" : "", sysconf(_SC_NPROCESSORS_ONLN),
	       (unsigned long long)cal->spin_ns);
	double work_med = quantile(rows[0].ns, reps, 0.5);
	double pth = quantile(rows[pth_row].ns, reps, 0.5) - work_med;
	printf("## Barrier overhead, 2 threads on CPUs %d,%d, ~1 us work, %u episodes x %u reps\n\n",
	       cpu[0], cpu[1], episodes, reps);
	printf("work only: median %.0f ns per episode (subtracted below)\n\n", work_med);
	printf("| barrier | overhead ns/episode (median) | p25..p75 | vs pthread |\n");
	printf("|---|---:|---:|---:|\n");
	for (unsigned i = 1; i < nr; i++) {
		if (rows[i].skip) {
			printf("| %s | skipped: %s | | |\n", rows[i].name, rows[i].skip);
			continue;
		}
		double m = quantile(rows[i].ns, reps, 0.5) - work_med;
		double lo = quantile(rows[i].ns, reps, 0.25) - work_med;
		double hi = quantile(rows[i].ns, reps, 0.75) - work_med;
		printf("| %s | %.0f | %.0f..%.0f | %.3f |\n", rows[i].name, m, lo, hi, m / pth);
	}
	double pc = quantile(erows[ner - 1].ns, reps, 0.5);
	printf("\n## Event wake-up latency (one-way, half a ping-pong round trip), %u rounds x %u "
	       "reps\n\n", rounds, reps);
	printf("| primitive | ns (median) | p25..p75 | vs pthread_cond |\n|---|---:|---:|---:|\n");
	for (unsigned i = 0; i < ner; i++) {
		double m = quantile(erows[i].ns, reps, 0.5);
		printf("| %s | %.0f | %.0f..%.0f | %.3f |\n", erows[i].name, m,
		       quantile(erows[i].ns, reps, 0.25), quantile(erows[i].ns, reps, 0.75), m / pc);
	}
	(void)omp_row;
	return 0;
}

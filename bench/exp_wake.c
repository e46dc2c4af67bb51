/* wake: condition wait / notify between a worker and a waiter.  Reproduces
 * [AK08] Table 1 (Twork, Twakeup, Tcall); with short waits as well, where
 * spinning can win.
 *
 * Each round: the waiter announces it is about to wait (armed = r) and
 * waits; the worker sees armed == r, does a fixed matrix multiply (Twork),
 * reads the TSC (tn), notifies (Tcall = until the notify call returns); the
 * waiter reads the TSC as soon as it runs again (Twakeup = that - tn).
 * wait=pingpong: the same primitives between two threads that take turns,
 * no work; half a round trip is the cost of one hand-off. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <hwsync/hwsync.h>
#include "bench/harness.h"
#include "bench/peers.h"

enum impl { W_ALONE, W_COND, W_SEM, W_CXX, W_HWS_WAIT, W_HWS_EVENT };
static const char *const impl_names[] = { "alone", "pthread-cond", "sem", "cxx-atomic-wait",
					  "hwsync-wait", "hwsync-event" };
#define NIMPL (sizeof impl_names / sizeof impl_names[0])

/* One direction of a hand-off: what a notify publishes and a wait waits for. */
struct wake_chan {
	struct { _Alignas(HWS_CACHELINE) _Atomic uint32_t v; } word;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	uint32_t gen;                   /* under mu */
	sem_t sem;
	struct cxx_word *cxx;
	hws_event_t *ev;
};

struct wake_cell {
	enum impl impl;
	bool pingpong;                  /* wait=pingpong: both threads take turns */
	hws_wait_t w;
	char policy[96];
	unsigned n;                     /* matmul size */
	uint64_t duration_ns;
	size_t budget;
	/* shared words, each on its own line */
	struct { _Alignas(HWS_CACHELINE) _Atomic uint32_t v; } armed, stop;
	struct { _Alignas(HWS_CACHELINE) _Atomic uint64_t v; } tn;
	struct wake_chan ch[2];         /* [0] to the waiter, [1] back (pingpong only) */
	double *twork, *tcall, *twakeup;
	size_t nwork, nwake;
};

/* Publish round r on ch and wake its waiter. */
static void notify(struct wake_cell *k, struct wake_chan *ch, uint32_t r)
{
	switch (k->impl) {
	case W_COND:
		pthread_mutex_lock(&ch->mu);
		ch->gen = r;
		pthread_cond_signal(&ch->cv);
		pthread_mutex_unlock(&ch->mu);
		break;
	case W_SEM:
		sem_post(&ch->sem);
		break;
	case W_CXX:
		cxx_word_store_notify_one(ch->cxx, r);
		break;
	case W_HWS_WAIT:
		/* release: the waiter's acquire load sees tn and the work */
		atomic_store_explicit(&ch->word.v, r, memory_order_release);
		hws_wake32(&ch->word.v, 1);
		break;
	case W_HWS_EVENT:
		/* release: the condition the waiter re-checks after each wake */
		atomic_store_explicit(&ch->word.v, r, memory_order_release);
		hws_event_notify_one(ch->ev);
		break;
	default:
		break;
	}
}

/* Wait for round r on ch; announce it in *armed first when armed is given. */
static void wait_round(struct wake_cell *k, struct wake_chan *ch, uint32_t r,
		       _Atomic uint32_t *armed)
{
	/* seq_cst stores of armed: the worker polls armed before it works; not timed */
	switch (k->impl) {
	case W_COND:
		pthread_mutex_lock(&ch->mu);
		if (armed)
			atomic_store(armed, r);
		while (ch->gen < r)
			pthread_cond_wait(&ch->cv, &ch->mu);
		pthread_mutex_unlock(&ch->mu);
		break;
	case W_SEM:
		if (armed)
			atomic_store(armed, r);
		while (sem_wait(&ch->sem) && errno == EINTR)
			;
		break;
	case W_CXX:
		if (armed)
			atomic_store(armed, r);
		cxx_word_wait_while(ch->cxx, r - 1);
		break;
	case W_HWS_WAIT:
		if (armed)
			atomic_store(armed, r);
		/* acquire: pairs with the release store in notify() */
		while (atomic_load_explicit(&ch->word.v, memory_order_acquire) == r - 1)
			hws_wait_while_eq32(&ch->word.v, r - 1, &k->w, HWS_FOREVER);
		break;
	case W_HWS_EVENT: {
		if (armed)
			atomic_store(armed, r);
		/* an event carries no state: re-check the condition after the epoch
		 * is read and after every return (a wake may be left from before) */
		for (;;) {
			uint32_t e = hws_event_epoch(ch->ev);
			/* acquire: pairs with the release store in notify() */
			if (atomic_load_explicit(&ch->word.v, memory_order_acquire) >= r)
				break;
			hws_event_wait(ch->ev, e);
		}
		break;
	}
	default:
		break;
	}
}

/* wait=pingpong: thread 0 notifies thread 1 and waits for its answer, round
 * after round, with no work in between; half a round trip is one hand-off.
 * Round trips are timed in batches: a spinning hand-off is a few TSC ticks of
 * a virtual machine, too coarse to time one by one. */
#define PINGPONG_BATCH 16
static void pingpong_thread(struct wake_cell *k, unsigned i)
{
	if (i == 1) {
		for (uint32_t r = 1;; r++) {
			wait_round(k, &k->ch[1], r, NULL);
			if (atomic_load(&k->stop.v))
				return;
			notify(k, &k->ch[0], r);
		}
	}
	uint64_t end = hws_tsc() + hws_ns_to_tsc(k->duration_ns), t0 = 0;
	for (uint32_t r = 1;; r++) {
		if ((r - 1) % PINGPONG_BATCH == 0) {
			uint64_t t1 = hws_tsc();
			if (r > 1)   /* PINGPONG_BATCH round trips */
				k->twakeup[k->nwake++] = (double)(t1 - t0);
			if (t1 >= end || k->nwake >= k->budget) {
				/* thread 1 sees stop after this wake and leaves without answering */
				atomic_store(&k->stop.v, 1);
				notify(k, &k->ch[1], r);
				return;
			}
			t0 = t1;
		}
		notify(k, &k->ch[1], r);
		wait_round(k, &k->ch[0], r, NULL);
	}
}

static void wake_thread(void *arg, unsigned i)
{
	struct wake_cell *k = arg;
	if (k->pingpong) {
		pingpong_thread(k, i);
		return;
	}
	if (i == 1) {   /* the waiter */
		for (uint32_t r = 1;; r++) {
			wait_round(k, &k->ch[0], r, &k->armed.v);
			uint64_t tw = hws_tsc();
			if (atomic_load(&k->stop.v))
				return;
			/* relaxed: ordered by the notify's release/acquire pair */
			uint64_t tn = atomic_load_explicit(&k->tn.v, memory_order_relaxed);
			if (k->nwake < k->budget)
				k->twakeup[k->nwake++] = (double)(tw > tn ? tw - tn : 0);
		}
	}
	/* the worker */
	uint64_t end = hws_tsc() + hws_ns_to_tsc(k->duration_ns);
	double sink = 0;
	for (uint32_t r = 1;; r++) {
		bool last = hws_tsc() >= end || k->nwork >= k->budget;
		if (k->impl != W_ALONE)
			while (atomic_load(&k->armed.v) != r)
				hws_cpu_relax();
		if (last) {
			atomic_store(&k->stop.v, 1);
			notify(k, &k->ch[0], r);
			break;
		}
		uint64_t t0 = hws_tsc();
		sink += bench_matmul(k->n, 1);
		uint64_t t1 = hws_tsc();
		/* relaxed: published by the release in notify() */
		atomic_store_explicit(&k->tn.v, hws_tsc(), memory_order_relaxed);
		uint64_t tn = atomic_load_explicit(&k->tn.v, memory_order_relaxed);
		notify(k, &k->ch[0], r);
		uint64_t t2 = hws_tsc();
		k->twork[k->nwork] = (double)(t1 - t0);
		k->tcall[k->nwork++] = (double)(t2 - tn);
	}
	if (sink == 42.4242)
		fputc(' ', stderr);
}

static int wake_run(struct bench_ctx *ctx, struct bench_cell *c)
{
	struct wake_cell *k = c->priv;
	k->duration_ns = bench_opts(ctx)->duration_ns;
	k->nwork = k->nwake = 0;
	atomic_store(&k->armed.v, 0);
	atomic_store(&k->stop.v, 0);
	for (unsigned d = 0; d < 2; d++) {
		atomic_store(&k->ch[d].word.v, 0);
		k->ch[d].gen = 0;
		if (k->impl == W_CXX)
			cxx_word_store_notify_one(k->ch[d].cxx, 0);
	}
	int rc = bench_run_threads(c->nthreads, c->cpus, wake_thread, k);
	if (rc) {
		snprintf(c->skip, sizeof c->skip, "cannot pin threads: %s", strerror(rc));
		return rc;
	}
	if (k->pingpong) {
		for (size_t i = 0; i < k->nwake; i++)   /* one hand-off: half a round trip */
			bench_sample_cycles_per(c, "oneway", (uint64_t)k->twakeup[i],
						2 * PINGPONG_BATCH);
		return 0;
	}
	for (size_t i = 0; i < k->nwork; i++) {
		bench_sample_cycles(c, "twork", (uint64_t)k->twork[i]);
		if (k->impl != W_ALONE)
			bench_sample_cycles(c, "tcall", (uint64_t)k->tcall[i]);
	}
	for (size_t i = 0; i < k->nwake; i++)
		bench_sample_cycles(c, "twakeup", (uint64_t)k->twakeup[i]);
	return 0;
}

static void wake_cleanup(struct bench_cell *c)
{
	struct wake_cell *k = c->priv;
	if (!k)
		return;
	free(k->twork);
	free(k->tcall);
	free(k->twakeup);
	for (unsigned d = 0; d < 2; d++) {
		struct wake_chan *ch = &k->ch[d];
		cxx_word_free(ch->cxx);
		if (k->impl == W_SEM)
			sem_destroy(&ch->sem);
		if (ch->ev)
			hws_event_destroy(ch->ev);
		pthread_cond_destroy(&ch->cv);
		pthread_mutex_destroy(&ch->mu);
	}
	free(k);
	c->priv = NULL;
}

static int add_cell(struct bench_ctx *ctx, enum impl impl, const char *policy, const char *wait,
		    unsigned n, const char *placement, const int *cpus)
{
	char why[200] = "";
	struct wake_cell *k = bench_zalloc_lines(sizeof *k);
	if (!k)
		return bench_error("out of memory");
	k->impl = impl;
	k->pingpong = !strcmp(wait, "pingpong");
	k->n = n;
	k->budget = bench_sample_budget(ctx);
	for (unsigned d = 0; d < 2; d++) {
		struct wake_chan *ch = &k->ch[d];
		pthread_mutex_init(&ch->mu, NULL);
		pthread_cond_init(&ch->cv, NULL);
		if (impl == W_SEM)
			sem_init(&ch->sem, 0, 0);
		if (impl == W_CXX && !(ch->cxx = cxx_word_new()))
			snprintf(why, sizeof why, "out of memory");
		if (impl == W_HWS_EVENT && hws_event_create(&ch->ev, policy))
			snprintf(why, sizeof why, "%s", hws_last_error());
	}
	if (impl == W_HWS_WAIT && hws_wait_init(&k->w, policy))
		snprintf(why, sizeof why, "%s", hws_last_error());
	k->twork = malloc(k->budget * sizeof(double));
	k->tcall = malloc(k->budget * sizeof(double));
	k->twakeup = malloc(k->budget * sizeof(double));
	if (!k->twork || !k->tcall || !k->twakeup)
		snprintf(why, sizeof why, "out of memory");
	struct bench_cell tmp = { .priv = k };
	if (why[0]) {
		bench_skip(ctx, why, "%s%s%s wait=%s placement=%s", impl_names[impl],
			   policy ? " " : "", policy ? policy : "", wait, placement);
		wake_cleanup(&tmp);
		return 0;
	}
	struct bench_cell *c = bench_cell_new(ctx, impl_names[impl], policy);
	if (!c) {
		wake_cleanup(&tmp);
		return bench_error("out of memory");
	}
	c->priv = k;
	c->nthreads = impl == W_ALONE ? 1 : 2;
	memcpy(c->cpus, cpus, 2 * sizeof *cpus);
	bench_param(c, "wait", "%s", wait);
	if (!k->pingpong)
		bench_param_num(c, "n", n);
	bench_param(c, "placement", "%s", placement);
	return 0;
}

static const struct bench_xopt wake_xopts[] = {
	{ "waits", "long,short,pingpong", NULL, "which waits to run: long (--long-n), short "
	  "(--short-n),\n        pingpong (no work: two threads take turns)" },
	{ "long-n", "160", "96", "matrix size n of the long wait's job (n x n doubles, one "
	  "multiply: ~n^3 multiply-adds; [AK08] used 512)" },
	{ "short-n", "12", NULL, "matrix size n of the short wait's job (microseconds)" },
	{ NULL, NULL, NULL, NULL },
};

static int wake_setup(struct bench_ctx *ctx)
{
	const struct bench_list *pl = bench_placements(ctx);
	const char *why;
	char waits[64];
	unsigned longn, shortn, one;

	if (bench_parse_ulist(bench_xopt(ctx, "long-n"), &longn, 1, &one) || !longn ||
	    bench_parse_ulist(bench_xopt(ctx, "short-n"), &shortn, 1, &one) || !shortn)
		return bench_error("wake: --long-n and --short-n take one positive number");
	/* What cannot run at all is listed once, not per wait and placement. */
	bool pol_ok[BENCH_MAX_LIST + HWS_WAIT_NKINDS] = { false };
	for (unsigned k = 0; k < bench_policy_count(ctx); k++) {
		const char *pol = bench_policy(ctx, k, &why);
		pol_ok[k] = !why;
		if (why && (bench_impl_on(ctx, "hwsync-wait") || bench_impl_on(ctx, "hwsync-event")))
			bench_skip(ctx, why, "hwsync-wait, hwsync-event policy %s", pol);
	}
	snprintf(waits, sizeof waits, "%s", bench_xopt(ctx, "waits"));
	for (char *wt = strtok(waits, ","); wt; wt = strtok(NULL, ",")) {
		if (strcmp(wt, "long") && strcmp(wt, "short") && strcmp(wt, "pingpong"))
			return bench_error("wake: unknown wait '%s' (known: long, short, pingpong)",
					   wt);
		bool pingpong = !strcmp(wt, "pingpong");
		unsigned n = pingpong ? 0 : !strcmp(wt, "long") ? longn : shortn;
		for (unsigned p = 0; p < pl->n; p++) {
			int cpus[BENCH_MAX_CPUS];
			if (bench_place(ctx, pl->v[p], 2, cpus, &why)) {
				bench_skip(ctx, why, "all wait=%s placement=%s", wt, pl->v[p]);
				continue;
			}
			for (unsigned i = 0; i < NIMPL; i++) {
				/* a ping-pong has no job, so no 'alone' reference */
				if (!bench_impl_on(ctx, impl_names[i]) || (pingpong && i == W_ALONE))
					continue;
				if (i < W_HWS_WAIT) {
					if (add_cell(ctx, (enum impl)i, NULL, wt, n, pl->v[p], cpus))
						return 2;
					continue;
				}
				for (unsigned k = 0; k < bench_policy_count(ctx); k++) {
					const char *pol = bench_policy(ctx, k, &why);
					if (pol_ok[k] &&
					    add_cell(ctx, (enum impl)i, pol, wt, n, pl->v[p], cpus))
						return 2;
				}
			}
		}
	}
	if (bench_energy_available(&why))
		bench_skip(ctx, why, "energy (joules per wake)");
	return 0;
}

static const struct bench_exp wake = {
	.name = "wake",
	.title = "condition wait/notify: Twork, Twakeup, Tcall",
	.reproduces = "[AK08] Table 1 (and short waits)",
	.help =
"    Two threads: a worker does a fixed floating-point job (an n x n matrix\n"
"    multiply) while a waiter waits to be notified of its end.  Each round the\n"
"    waiter announces it is about to wait, the worker does the job, reads the\n"
"    TSC and notifies; the waiter reads the TSC as soon as it runs.  Rounds\n"
"    repeat for --duration per repetition.  Rows: every primitive, and for\n"
"    hwsync every wait policy (--policies).  'alone' is the worker without a\n"
"    waiter: Twork's reference.  Long waits (milliseconds) show the waiter's\n"
"    interference and the cost of sleeping; short waits (microseconds) show\n"
"    where spinning wins.  The paper ran both threads on SMT siblings: that is\n"
"    placement smt, skipped where there are none; core runs them on two cores.\n"
"\n"
"    wait=pingpong has no job: thread 0 notifies thread 1 and waits for its\n"
"    answer, round after round, so each thread goes back to waiting right after\n"
"    it notified.  Half a round trip is one hand-off: wake-up latency plus the\n"
"    cost of the notify and of going to wait, on both sides (no 'alone' row).\n"
"\n"
"    pthread-cond     pthread_cond_wait / pthread_cond_signal (+ the mutex)\n"
"    sem              sem_wait / sem_post\n"
"    cxx-atomic-wait  C++20 std::atomic<uint32_t>::wait / notify_one\n"
"    hwsync-wait      hws_wait_while_eq32 / hws_wake32 under each policy\n"
"    hwsync-event     hws_event_wait / hws_event_notify_one under each policy\n"
"\n"
"METRICS\n"
"    twork    the worker's job time: larger = the waiter interferes more\n"
"    twakeup  from just before the notify call until the waiter runs\n"
"    tcall    time inside the notify call\n"
"    oneway   wait=pingpong: half of one round trip (notify, then wait for the\n"
"             answer), the mean of a batch of 16 round trips\n"
"    energy   joules per wake where RAPL is readable (else skipped)\n",
	.impls = "alone,pthread-cond,sem,cxx-atomic-wait,hwsync-wait,hwsync-event",
	.uses_policies = true,
	.def_threads = "2",
	.def_placements = "smt,core",
	.xopts = wake_xopts,
	.rank = 20,
	.setup = wake_setup,
	.run = wake_run,
	.cleanup = wake_cleanup,
};
BENCH_REGISTER(wake)

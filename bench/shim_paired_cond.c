/* The paired sleeping consumers (cond-periodic-paired, cond-consumer-paired):
 * cond-periodic's or cond-consumer's producer and consumer, in turns of
 * TURN_PERIODS periods through the mutex and condition variable entry points
 * the program links (the shim's under LD_PRELOAD) and through the C
 * library's own, each side with its own mutex and condition variable.
 *
 * A wake-up's latency on a virtual machine is mostly the host waking an idle
 * virtual CPU, and it drifts with the host: two processes measured one after
 * the other differ by 10-30%, while turns of a few milliseconds within one
 * process see the same host.  Each side's CPU time is the process's, counted
 * over its turns; a turn's window runs from the producer's first wake-up in
 * it to its first in the next, when the consumer's last wake-up of the turn
 * is over and it sleeps on the other side's condition variable. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "shim_clock.h"
#include "shim_paired.h"

#define PERIOD_NS 200000ull     /* as cond-periodic and cond-consumer */
#define TURN_PERIODS 25u        /* 5 ms a turn */

/* One side: its entry points, its objects and what was measured on it. */
struct side {
	/* a line pair of its own: the sides share nothing */
	_Alignas(128) int (*lock)(pthread_mutex_t *), (*unlock)(pthread_mutex_t *);
	int (*wait)(pthread_cond_t *, pthread_mutex_t *), (*signal)(pthread_cond_t *);
	pthread_mutex_t m;
	pthread_cond_t c;
	uint64_t produced, consumed;    /* under m */
	unsigned closed;                /* under m: the last turn the producer ended here */
	uint64_t signalled_ns;          /* under m: when the last signal was sent */
	uint64_t *lat, nlat, maxlat;    /* the consumer's latencies */
	uint64_t cpu_ns, ns, wakes;     /* over its measured turns */
};

struct pair {
	struct side side[2];            /* [0] linked, [1] native */
	bool periodic;                  /* absolute schedule, else relative sleeps */
	void (*pin)(unsigned i);        /* to the i-th CPU */
	_Atomic unsigned last_turn;     /* the last measured turn; 0 while running */
};

/* Turn k (from 1) runs on side k & 1: the native side first, so that the
 * untimed first turn of each side is turns 1 and 2. */
static struct side *side_of(struct pair *p, unsigned k)
{
	return &p->side[k & 1];
}

/* The consumer: turn after turn, wait for work on that turn's side until the
 * producer ends the turn there; record each wake-up's latency. */
static void *consumer(void *arg)
{
	struct pair *p = arg;
	p->pin(0);
	for (unsigned k = 1;; k++) {
		/* acquire: pairs with the producer's release store of the last
		 * turn, made before it ends that turn on its side */
		unsigned last = atomic_load_explicit(&p->last_turn, memory_order_acquire);
		if (last && k > last)
			return NULL;
		struct side *s = side_of(p, k);
		s->lock(&s->m);
		for (;;) {
			while (s->consumed == s->produced && s->closed < k)
				s->wait(&s->c, &s->m);
			if (s->consumed == s->produced)
				break;
			s->consumed = s->produced;
			if (k > 2 && s->nlat < s->maxlat)
				s->lat[s->nlat++] = now_ns() - s->signalled_ns;
			if (k > 2)
				s->wakes++;
		}
		s->unlock(&s->m);
	}
}

/* The producer's sleep to the next period: on cond-periodic's absolute
 * schedule (a missed period is skipped) or cond-consumer's relative one. */
static void sleep_period(const struct pair *p, uint64_t *next)
{
	if (p->periodic) {
		struct timespec ts = { (time_t)(*next / 1000000000ull),
				       (long)(*next % 1000000000ull) };
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
			;
		uint64_t now = now_ns();
		*next += PERIOD_NS;
		if (*next < now)
			*next = now + PERIOD_NS;
	} else {
		const struct timespec nap = { 0, (long)PERIOD_NS };
		while (nanosleep(&nap, NULL) && errno == EINTR)
			;
	}
}

static void produce(struct pair *p, uint64_t run_ns)
{
	uint64_t next = now_ns() + PERIOD_NS, end = 0, mark_ns = 0, mark_cpu = 0;
	for (unsigned k = 1;; k++) {
		struct side *s = side_of(p, k);
		for (unsigned j = 0; j < TURN_PERIODS; j++) {
			sleep_period(p, &next);
			if (j == 0) {
				/* the window of the turn before ends here */
				uint64_t t = now_ns(), c = cpu_ns();
				if (k > 3) {
					struct side *before = side_of(p, k - 1);
					before->ns += t - mark_ns;
					before->cpu_ns += c - mark_cpu;
				}
				mark_ns = t;
				mark_cpu = c;
				if (k == 3)
					end = t + run_ns;
				/* an even number of measured turns: each side as many */
				if (k > 3 && (k & 1) && t >= end) {
					/* release: pairs with the consumer's acquire load;
					 * the consumer also sees it through turn k's mutex */
					atomic_store_explicit(&p->last_turn, k - 1,
							      memory_order_release);
					/* the consumer may already wait on this turn's side */
					s->lock(&s->m);
					s->closed = k;
					s->signal(&s->c);
					s->unlock(&s->m);
					return;
				}
			}
			s->lock(&s->m);
			s->produced++;
			if (j == TURN_PERIODS - 1)
				s->closed = k;
			s->signalled_ns = now_ns();
			s->signal(&s->c);
			s->unlock(&s->m);
		}
	}
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static uint64_t median(struct side *s)
{
	qsort(s->lat, s->nlat, sizeof *s->lat, cmp_u64);
	return s->nlat ? s->lat[s->nlat / 2] : 0;
}

int paired_cond_run(bool periodic, void (*pin)(unsigned i), uint64_t run_ns,
		    struct paired_result *r, const char **why)
{
	static struct pair p;
	struct side *linked = &p.side[0], *native = &p.side[1];
	memset(r, 0, sizeof *r);
	p.periodic = periodic;
	p.pin = pin;
	linked->lock = pthread_mutex_lock;
	linked->unlock = pthread_mutex_unlock;
	linked->wait = pthread_cond_wait;
	linked->signal = pthread_cond_signal;
	*(void **)&native->lock = paired_native_fn("libc.so.6", "pthread_mutex_lock");
	*(void **)&native->unlock = paired_native_fn("libc.so.6", "pthread_mutex_unlock");
	*(void **)&native->wait = paired_native_fn("libc.so.6", "pthread_cond_wait");
	*(void **)&native->signal = paired_native_fn("libc.so.6", "pthread_cond_signal");
	if (!native->lock || !native->unlock || !native->wait || !native->signal) {
		*why = "the C library's pthread_cond_wait was not found";
		return ENOENT;
	}
	for (int i = 0; i < 2; i++) {
		struct side *s = &p.side[i];
		s->m = (pthread_mutex_t)PTHREAD_MUTEX_INITIALIZER;
		s->c = (pthread_cond_t)PTHREAD_COND_INITIALIZER;
		/* every period of half the run, and slack */
		s->maxlat = run_ns / PERIOD_NS / 2 + 4 * TURN_PERIODS;
		if (!(s->lat = malloc(s->maxlat * sizeof *s->lat))) {
			*why = "out of memory";
			return ENOMEM;
		}
	}
	pthread_t t;
	int rc = pthread_create(&t, NULL, consumer, &p);
	if (rc) {
		*why = "pthread_create failed";
		return rc;
	}
	pin(1);
	produce(&p, run_ns);
	pthread_join(t, NULL);
	r->ops = linked->wakes;
	r->ns = linked->ns;
	r->cpu_ns = linked->cpu_ns;
	r->lat_ns = median(linked);
	r->base_ops = native->wakes;
	r->base_ns = native->ns;
	r->base_cpu_ns = native->cpu_ns;
	r->base_lat_ns = median(native);
	for (int i = 0; i < 2; i++)
		free(p.side[i].lat);
	return 0;
}

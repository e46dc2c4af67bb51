/* hwsync-shim-patterns' shared harness (shim_team.h): pinning, teams of
 * pthreads that start together, and the percentile of sampled waits. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "shim_team.h"

int cpus[MAX_THREADS];
unsigned ncpus;
uint64_t run_ns;
uint64_t cpu0, cpu1;

void die(const char *what, int err)
{
	fprintf(stderr, "hwsync-shim-patterns: %s: %s\n", what, strerror(err));
	exit(1);
}

void pin_self(unsigned i)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpus[i % ncpus], &set);
	if (sched_setaffinity(0, sizeof set, &set))
		die("sched_setaffinity", errno);
}

int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

uint64_t samples_p99(const struct wait_samples *s, unsigned threads)
{
	uint64_t total = 0, k = 0;
	for (unsigned i = 0; i < threads; i++)
		total += s[i].n < WAIT_SAMPLES ? s[i].n : WAIT_SAMPLES;
	uint64_t *all = malloc((total ? total : 1) * sizeof *all);
	if (!all)
		die("malloc", ENOMEM);
	for (unsigned i = 0; i < threads; i++)
		for (uint64_t j = 0; j < s[i].n && j < WAIT_SAMPLES; j++)
			all[k++] = s[i].ns[j];
	qsort(all, k, sizeof *all, cmp_u64);
	uint64_t p99 = k ? all[k * 99 / 100] + 1 : 0;
	free(all);
	return p99;
}

void team_done(struct team *t, unsigned i, uint64_t n)
{
	t->per[i] = n;
	atomic_fetch_add(&t->ops, n);
}

uint64_t team_gate(struct team *t)
{
	if (atomic_fetch_add(&t->arrived, 1) + 1 == t->n) {
		cpu0 = cpu_ns();
		t->t0 = now_ns();
		atomic_store(&t->deadline, t->t0 + run_ns);
	}
	uint64_t d;
	while (!(d = atomic_load(&t->deadline)))
		sched_yield();
	return d;
}

struct team_arg {
	struct team *t;
	unsigned i;
};

static void *team_main(void *p)
{
	struct team_arg *a = p;
	if (a->t->pin)
		pin_self(a->i);
	a->t->body(a->t, a->i);
	return NULL;
}

uint64_t team_run(struct team *t)
{
	pthread_t th[MAX_THREADS];
	struct team_arg a[MAX_THREADS];
	for (unsigned i = 0; i < t->n; i++) {
		a[i] = (struct team_arg){ t, i };
		int rc = pthread_create(&th[i], NULL, team_main, &a[i]);
		if (rc)
			die("pthread_create", rc);
	}
	for (unsigned i = 0; i < t->n; i++)
		pthread_join(th[i], NULL);
	uint64_t ns = now_ns() - t->t0;
	cpu1 = cpu_ns();
	return ns;
}

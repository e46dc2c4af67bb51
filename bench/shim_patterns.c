/* hwsync-shim-patterns: the small programs `hwsync bench shim` runs natively
 * and under the LD_PRELOAD shim (bench/exp_shim.c).  It uses nothing but the
 * public pthread, semaphore and OpenMP interfaces and does not link hwsync:
 * it stands for an unmodified program.
 *
 *   hwsync-shim-patterns list
 *   hwsync-shim-patterns PATTERN AMOUNT CPUS
 *
 * AMOUNT is the run time in ns, or for `churn` the number of objects of each
 * kind.  CPUS (e.g. 0,1) are where thread i runs (the i-th, round-robin); the
 * process first restricts itself to them.  `mutex-yield`, `spin-oversub` and
 * `mutex-rt` instead start four unpinned threads per CPU they may use, and
 * `mutex-yield8-N` N per CPU.  On success it prints one line
 *     ops=N ns=T cpu_ns=C rss_kib=R threads=K lat_ns=L fair=F p99_ns=P
 *     base_ops=B base_ns=S base_cpu_ns=BC base_lat_ns=BL lib=FILE
 * (operations, the measured window, the process's CPU time in that window,
 * its peak resident set, threads, the median wake latency where the pattern
 * measures one (else 0), the fairness: the slowest thread's operations over
 * the fastest's where all threads do the same work (else 0), the 99th
 * percentile of the sampled lock waits where the pattern samples them (else
 * 0), for the paired patterns (shim_paired.c, shim_paired_cond.c) the
 * native entry points' operations and time in the same process, ops and ns
 * being the linked ones' (else 0 and 0), for the paired sleeping consumers
 * also the native side's CPU time and median latency, C and L being the
 * linked side's (else 0 and 0), and the object that provides pthread_mutex_lock:
 * the shim or the C library, for the caller to check) and exits 0; a failed
 * check prints one line on stderr and exits 1.
 *
 * This file has the driver and the patterns on pthread objects; shim_team.c
 * the harness they share, shim_omp.c the OpenMP patterns. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include "shim_clock.h"
#include "shim_omp.h"
#include "shim_paired.h"
#include "shim_team.h"

static uint64_t lat_ns;         /* median wake latency (cond-*), 0 = none */
static double fairness;         /* slowest thread's ops / fastest's, 0 = none */
static uint64_t p99_ns;         /* sampled lock waits' 99th percentile, 0 = none */

/* Peak resident set of this process image (VmHWM, KiB), 0 if unknown.  Not
 * the parent's ru_maxrss: Linux carries the spawning process's resident set
 * from before exec into it, which would hide a small program's own. */
static unsigned long peak_rss_kib(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[128];
	unsigned long kib = 0;
	while (f && fgets(line, sizeof line, f))
		if (sscanf(line, "VmHWM: %lu kB", &kib) == 1)
			break;
	if (f)
		fclose(f);
	return kib;
}

/* pthread_mutex_lock(m), its wait sampled (ACQUIRE_SAMPLED). */
static inline void lock_sampled(pthread_mutex_t *m, struct wait_samples *ws, uint64_t k,
				uint64_t every)
{
	ACQUIRE_SAMPLED(pthread_mutex_lock(m), ws, k, every);
}

/* ---- one thread ------------------------------------------------------------ */
static pthread_mutex_t solo_mutex = PTHREAD_MUTEX_INITIALIZER;

static void solo_mutex_run(uint64_t *ops, uint64_t *ns)
{
	SOLO_LOOP((pthread_mutex_lock(&solo_mutex), pthread_mutex_unlock(&solo_mutex)), *ops, *ns);
}

static void solo_spin_run(uint64_t *ops, uint64_t *ns)
{
	pthread_spinlock_t s;
	int rc = pthread_spin_init(&s, PTHREAD_PROCESS_PRIVATE);
	if (rc)
		die("pthread_spin_init", rc);
	SOLO_LOOP((pthread_spin_lock(&s), pthread_spin_unlock(&s)), *ops, *ns);
	pthread_spin_destroy(&s);
}

static void solo_sem_run(uint64_t *ops, uint64_t *ns)
{
	sem_t s;
	if (sem_init(&s, 0, 0))
		die("sem_init", errno);
	SOLO_LOOP((sem_post(&s), sem_wait(&s)), *ops, *ns);
	sem_destroy(&s);
}

/* ---- threads on pthread objects -------------------------------------------- */
static pthread_mutex_t shared_mutex = PTHREAD_MUTEX_INITIALIZER;

static void mutex_shared_body(struct team *t, unsigned i)
{
	struct wait_samples *ws = &t->samples[i];
	uint64_t end = team_gate(t), n = 0;
	do {
		for (int b = 0; b < BATCH; b++) {
			lock_sampled(&shared_mutex, ws, (uint64_t)b, BATCH);
			pthread_mutex_unlock(&shared_mutex);
		}
		n += BATCH;
	} while (now_ns() < end);
	team_done(t, i, n);
}

struct private_mutex {
	_Alignas(64) pthread_mutex_t m;   /* one line each: no false sharing */
};

static void mutex_private_body(struct team *t, unsigned i)
{
	struct private_mutex *pm = t->arg;
	pthread_mutex_t *m = &pm[i].m;
	uint64_t end = team_gate(t), n = 0;
	do {
		for (int b = 0; b < BATCH; b++) {
			pthread_mutex_lock(m);
			pthread_mutex_unlock(m);
		}
		n += BATCH;
	} while (now_ns() < end);
	team_done(t, i, n);
}

/* rwlock-read99: two threads on one default rwlock, 99 reads (a load of
 * the record under the read lock) for each write (an increment under the
 * write lock); the count is checked. */
struct rw_shared {
	pthread_rwlock_t rw;
	_Alignas(64) long counter;   /* under rw */
};
static struct rw_shared rw_shared = { .rw = PTHREAD_RWLOCK_INITIALIZER };
static _Atomic uint64_t rw_writes;

static void rwlock_body(struct team *t, unsigned i)
{
	struct rw_shared *s = t->arg;
	uint64_t end = team_gate(t), n = 0, w = 0;
	long sink = 0;
	do {
		for (int b = 0; b < BATCH; b++) {
			if ((n + (uint64_t)b) % 100 == 99) {
				pthread_rwlock_wrlock(&s->rw);
				s->counter++;
				pthread_rwlock_unlock(&s->rw);
				w++;
			} else {
				pthread_rwlock_rdlock(&s->rw);
				sink += s->counter;
				pthread_rwlock_unlock(&s->rw);
			}
		}
		n += BATCH;
	} while (now_ns() < end);
	if (sink < 0)
		die("rwlock-read99: negative count", EINVAL);
	atomic_fetch_add(&rw_writes, w);
	team_done(t, i, n);
}

struct pingpong {
	sem_t ping, pong;
	_Atomic int stop;
};

/* Thread 0 posts ping and waits for pong; thread 1 answers.  Thread 0 decides
 * when to stop and posts one last ping so that thread 1 sees it. */
static void sem_pingpong_body(struct team *t, unsigned i)
{
	struct pingpong *pp = t->arg;
	uint64_t end = team_gate(t), n = 0;
	if (i == 1) {
		for (;;) {
			while (sem_wait(&pp->ping) && errno == EINTR)
				;
			if (atomic_load(&pp->stop))
				return;
			sem_post(&pp->pong);
		}
	}
	do {
		for (int b = 0; b < BATCH; b++) {
			sem_post(&pp->ping);
			while (sem_wait(&pp->pong) && errno == EINTR)
				;
		}
		n += BATCH;
	} while (now_ns() < end);
	atomic_store(&pp->stop, 1);
	sem_post(&pp->ping);
	team_done(t, i, n);
}

/* A consumer woken through a condition variable at a steady period: thread 1
 * changes the predicate and signals under the mutex every PERIOD_NS (on an
 * absolute schedule; a missed period is skipped, not made up in a burst),
 * thread 0 waits for it.  Waits last about a period, far longer than any
 * spin: what a waiter burns while it waits shows in the CPU time.  An
 * operation is one wake-up that found new work; its latency runs from the
 * signal to the consumer holding the mutex again. */
#define PERIOD_NS 200000ull

struct periodic {
	pthread_mutex_t m;
	pthread_cond_t c;
	uint64_t produced, consumed;    /* under m */
	uint64_t signalled_ns;          /* under m: when the last signal was sent */
	bool done;                      /* under m */
	uint64_t *lat;                  /* consumer's samples */
	uint64_t nlat, maxlat;
};

/* The consumer of cond-periodic and cond-consumer: wait for work under the
 * mutex, take all of it (all) or one item, record the latency from the last
 * signal; returns the wake-ups that found work. */
static uint64_t consume(struct periodic *pc, bool all)
{
	uint64_t n = 0;
	pthread_mutex_lock(&pc->m);
	for (;;) {
		while (pc->consumed == pc->produced && !pc->done)
			pthread_cond_wait(&pc->c, &pc->m);
		if (pc->consumed == pc->produced)
			break;
		pc->consumed = all ? pc->produced : pc->consumed + 1;
		if (pc->nlat < pc->maxlat)
			pc->lat[pc->nlat++] = now_ns() - pc->signalled_ns;
		n++;
	}
	pthread_mutex_unlock(&pc->m);
	return n;
}

static void cond_periodic_body(struct team *t, unsigned i)
{
	struct periodic *pc = t->arg;
	uint64_t end = team_gate(t);
	if (i == 1) {
		uint64_t next = now_ns() + PERIOD_NS, now;
		do {
			struct timespec ts = { (time_t)(next / 1000000000ull),
					       (long)(next % 1000000000ull) };
			while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
				;
			now = now_ns();
			pthread_mutex_lock(&pc->m);
			pc->produced++;
			pc->done = now >= end;
			pc->signalled_ns = now_ns();
			pthread_cond_signal(&pc->c);
			pthread_mutex_unlock(&pc->m);
			next += PERIOD_NS;
			if (next < now)
				next = now + PERIOD_NS;
		} while (now < end);
		return;
	}
	team_done(t, i, consume(pc, true));
}

/* A lock held across sched_yield, four threads per CPU: a waiter that spins
 * takes the CPU the holder needs to get back to its unlock. */
static void mutex_yield_body(struct team *t, unsigned i)
{
	struct wait_samples *ws = &t->samples[i];
	uint64_t end = team_gate(t), n = 0;
	do {
		lock_sampled(&shared_mutex, ws, n, 4);
		sched_yield();
		pthread_mutex_unlock(&shared_mutex);
		n++;
	} while (now_ns() < end);
	team_done(t, i, n);
}

/* Threads hammering one pthread spin lock around one increment (the count is
 * checked at the end): pinned, one a CPU (spin-contended), or four unpinned a
 * CPU (spin-oversub), where a waiter that spins may hold the CPU a preempted
 * holder needs. */
struct spin_shared {
	pthread_spinlock_t l;
	long counter;           /* under l */
};

static void spin_body(struct team *t, unsigned i)
{
	struct spin_shared *s = t->arg;
	struct wait_samples *ws = &t->samples[i];
	uint64_t end = team_gate(t), n = 0;
	do {
		for (int b = 0; b < BATCH; b++) {
			ACQUIRE_SAMPLED(pthread_spin_lock(&s->l), ws, (uint64_t)b, BATCH);
			s->counter++;
			pthread_spin_unlock(&s->l);
		}
		n += BATCH;
	} while (now_ns() < end);
	team_done(t, i, n);
}

/* An empty critical section: lock, unlock, then a per-thread count outside
 * the lock, one pinned thread a CPU.  mutex-empty-async first enables
 * asynchronous cancellation in each worker, as some programs do for the whole
 * life of a thread (nothing ever cancels it here). */
static pthread_mutex_t empty_mutex = PTHREAD_MUTEX_INITIALIZER;

static void mutex_empty_body(struct team *t, unsigned i)
{
	struct wait_samples *ws = &t->samples[i];
	int oldtype;
	if (t->async_cancel)
		pthread_setcanceltype(PTHREAD_CANCEL_ASYNCHRONOUS, &oldtype);
	uint64_t end = team_gate(t), n = 0;
	do {
		for (int b = 0; b < BATCH; b++) {
			lock_sampled(&empty_mutex, ws, (uint64_t)b, BATCH);
			pthread_mutex_unlock(&empty_mutex);
			n++;
		}
	} while (now_ns() < end);
	if (t->async_cancel)
		pthread_setcanceltype(PTHREAD_CANCEL_DEFERRED, &oldtype);
	team_done(t, i, n);
}

/* Eight mutexes, each held across sched_yield(); N unpinned threads per CPU
 * (mutex-yield8-N) each lock one chosen at random.  A waiter that spins or
 * naps while the holder is off its CPU takes the time the holder needs. */
#define YIELD_MUTEXES 8
static struct {
	_Alignas(64) pthread_mutex_t m;
} yield_mutex[YIELD_MUTEXES];

static uint32_t xorshift32(uint32_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 17;
	*s ^= *s << 5;
	return *s;
}

static void mutex_yield8_body(struct team *t, unsigned i)
{
	struct wait_samples *ws = &t->samples[i];
	uint32_t seed = 2463534242u + 977u * i;
	uint64_t end = team_gate(t), n = 0;
	do {
		pthread_mutex_t *m = &yield_mutex[xorshift32(&seed) % YIELD_MUTEXES].m;
		lock_sampled(m, ws, n, 4);
		sched_yield();
		pthread_mutex_unlock(m);
		n++;
	} while (now_ns() < end);
	team_done(t, i, n);
}

/* Real-time threads: each operation sets a random SCHED_FIFO priority, locks
 * the process's one mutex, drops back to SCHED_OTHER, yields and unlocks.  A
 * real-time waiter that spins on the CPU of a holder it outranks keeps that
 * holder from its unlock until the waiter sleeps.  RLIMIT_RTTIME ends a
 * thread that runs real-time for a second without sleeping (SIGXCPU), so a
 * waiter that never sleeps fails the run instead of holding the machine. */
static pthread_mutex_t rt_mutex = PTHREAD_MUTEX_INITIALIZER;

static void mutex_rt_body(struct team *t, unsigned i)
{
	struct wait_samples *ws = &t->samples[i];
	uint32_t seed = 88675123u + 131u * i + (uint32_t)getpid();
	struct sched_param other = { .sched_priority = 0 };
	uint64_t end = team_gate(t), n = 0;
	do {
		struct sched_param fifo = { .sched_priority = 1 + (int)(xorshift32(&seed) % 20) };
		int rc = pthread_setschedparam(pthread_self(), SCHED_FIFO, &fifo);
		if (rc)
			die("pthread_setschedparam(SCHED_FIFO)", rc);
		lock_sampled(&rt_mutex, ws, n, 4);
		pthread_setschedparam(pthread_self(), SCHED_OTHER, &other);
		sched_yield();
		pthread_mutex_unlock(&rt_mutex);
		n++;
	} while (now_ns() < end);
	team_done(t, i, n);
}

/* A sleeping consumer: the producer (thread 1) sleeps 200 us, then locks,
 * adds an item, signals and unlocks; the consumer (thread 0) takes items as
 * `lock; while (!items) wait; take; unlock`.  Unlike cond-periodic the
 * producer's sleep is relative, so its own lock and signal lengthen the
 * period, and the CPU time includes what the producer pays for them. */
static void cond_consumer_body(struct team *t, unsigned i)
{
	struct periodic *pc = t->arg;
	uint64_t end = team_gate(t);
	if (i == 1) {
		const struct timespec nap = { 0, (long)PERIOD_NS };
		bool last;
		do {
			while (nanosleep(&nap, NULL) && errno == EINTR)
				;
			last = now_ns() >= end;
			pthread_mutex_lock(&pc->m);
			pc->produced++;
			pc->done = last;
			pc->signalled_ns = now_ns();
			pthread_cond_signal(&pc->c);
			pthread_mutex_unlock(&pc->m);
		} while (!last);
		return;
	}
	atomic_fetch_add(&t->ops, consume(pc, false));
}

/* ---- objects created, used and abandoned ----------------------------------- */
struct churn_obj {
	pthread_mutex_t m;
	pthread_cond_t c;
	sem_t s;
};

/* Each object is initialised, used once and never destroyed; the memory is
 * freed at the end without a destroy, as a program that leaks them would. */
static void churn_run(uint64_t n, uint64_t *ops, uint64_t *ns)
{
	struct churn_obj *o = malloc(n * sizeof *o);
	if (!o)
		die("malloc", ENOMEM);
	cpu0 = cpu_ns();
	uint64_t t0 = now_ns();
	for (uint64_t i = 0; i < n; i++) {
		int rc = pthread_mutex_init(&o[i].m, NULL);
		if (!rc)
			rc = pthread_cond_init(&o[i].c, NULL);
		if (rc || sem_init(&o[i].s, 0, 0))
			die("init", rc ? rc : errno);
		pthread_mutex_lock(&o[i].m);
		pthread_cond_signal(&o[i].c);
		pthread_mutex_unlock(&o[i].m);
		pthread_cond_broadcast(&o[i].c);
		sem_post(&o[i].s);
		sem_wait(&o[i].s);
	}
	*ns = now_ns() - t0;
	cpu1 = cpu_ns();
	*ops = n;
	free(o);
}

/* ---- driver ---------------------------------------------------------------- */
static const struct {
	const char *name;
	bool omp;
} patterns[] = {
	{ "mutex", false }, { "spin", false }, { "sem", false }, { "omp-lock", true },
	{ "mutex-contended", false }, { "mutex-private", false }, { "sem-pingpong", false },
	{ "omp-lock-contended", true }, { "omp-critical", true }, { "omp-barrier", true },
	{ "mutex-yield", false }, { "spin-contended", false }, { "spin-oversub", false },
	{ "startup", false }, { "churn", false },
	{ "cond-periodic", false },
	{ "mutex-empty", false }, { "mutex-empty-async", false },
	{ "mutex-yield8-1", false }, { "mutex-yield8-4", false }, { "mutex-yield8-16", false },
	{ "mutex-rt", false }, { "cond-consumer", false },
	{ "mutex-paired", false }, { "omp-lock-paired", true },
	{ "cond-periodic-paired", false }, { "cond-consumer-paired", false },
	{ "omp-parallel", true }, { "omp-parallel-for", true }, { "omp-for-dynamic", true },
	{ "omp-sections", true }, { "omp-ordered", true }, { "rwlock-read99", false },
};
#define NPATTERNS (sizeof patterns / sizeof patterns[0])

static int parse_cpus(const char *s)
{
	char *end;
	cpu_set_t set;
	CPU_ZERO(&set);
	while (*s && ncpus < MAX_THREADS) {
		long c = strtol(s, &end, 10);
		if (end == s || c < 0 || c >= CPU_SETSIZE || (*end && *end != ','))
			return -1;
		cpus[ncpus++] = (int)c;
		CPU_SET((int)c, &set);
		s = *end ? end + 1 : end;
	}
	if (!ncpus)
		return -1;
	return sched_setaffinity(0, sizeof set, &set) ? errno : 0;
}

static const char *mutex_provider(void)
{
	Dl_info info;
	void *f = (void *)&pthread_mutex_lock;
	return dladdr(f, &info) && info.dli_fname ? info.dli_fname : "unknown";
}

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "list")) {
		for (size_t i = 0; i < NPATTERNS; i++) {
			const char *why = NULL;
#ifndef HWS_PATTERNS_OPENMP
			if (patterns[i].omp)
				why = "hwsync-shim-patterns was built without OpenMP";
#endif
			printf("%s %s%s\n", patterns[i].name, why ? "skipped: " : "ok", why ? why : "");
		}
		return 0;
	}
	if (argc != 4) {
		fprintf(stderr, "usage: hwsync-shim-patterns list | PATTERN AMOUNT CPUS\n");
		return 2;
	}
	const char *p = argv[1];
	char *end;
	uint64_t amount = strtoull(argv[2], &end, 10);
	if (*end || !amount) {
		fprintf(stderr, "hwsync-shim-patterns: bad AMOUNT '%s'\n", argv[2]);
		return 2;
	}
	int rc = parse_cpus(argv[3]);
	if (rc < 0) {
		fprintf(stderr, "hwsync-shim-patterns: bad CPUS '%s'\n", argv[3]);
		return 2;
	}
	if (rc)
		die("sched_setaffinity", rc);
	run_ns = amount;

	uint64_t ops = 0, ns = 0, base_ops = 0, base_ns = 0, base_cpu_ns = 0, base_lat_ns = 0;
	unsigned threads = 1;
	struct team t = { .n = ncpus, .pin = true };
	static struct spin_shared spin;
	if (!strcmp(p, "mutex")) {
		pin_self(0);
		solo_mutex_run(&ops, &ns);
	} else if (!strcmp(p, "mutex-paired") || !strcmp(p, "omp-lock-paired") ||
		   !strcmp(p, "cond-periodic-paired") || !strcmp(p, "cond-consumer-paired")) {
		struct paired_result pr;
		const char *why = "";
		bool cond = !strncmp(p, "cond-", 5);
		if (cond && ncpus != 2) {
			fprintf(stderr, "hwsync-shim-patterns: %s takes 2 CPUs\n", p);
			return 2;
		}
		if (!cond)
			pin_self(0);
		cpu0 = cpu_ns();
		rc = cond ? paired_cond_run(p[5] == 'p', pin_self, run_ns, &pr, &why) :
			    paired_run(p[0] == 'm' ? "mutex" : "omp-lock", run_ns, &pr, &why);
		cpu1 = cpu_ns();
		if (rc) {
			fprintf(stderr, "hwsync-shim-patterns: %s: %s\n", p, why);
			return 1;
		}
		ops = pr.ops;
		ns = pr.ns;
		base_ops = pr.base_ops;
		base_ns = pr.base_ns;
		if (cond) {
			/* the linked side's turns: their CPU time and latency */
			cpu0 = 0;
			cpu1 = pr.cpu_ns;
			lat_ns = pr.lat_ns;
			threads = 2;
			base_cpu_ns = pr.base_cpu_ns;
			base_lat_ns = pr.base_lat_ns;
		}
	} else if (!strcmp(p, "spin")) {
		pin_self(0);
		solo_spin_run(&ops, &ns);
	} else if (!strcmp(p, "sem")) {
		pin_self(0);
		solo_sem_run(&ops, &ns);
	} else if (!strcmp(p, "mutex-contended")) {
		t.body = mutex_shared_body;
	} else if (!strcmp(p, "mutex-private")) {
		struct private_mutex *pm = aligned_alloc(64, ncpus * sizeof *pm);
		if (!pm)
			die("aligned_alloc", ENOMEM);
		for (unsigned i = 0; i < ncpus; i++)
			pthread_mutex_init(&pm[i].m, NULL);
		t.arg = pm;
		t.body = mutex_private_body;
	} else if (!strcmp(p, "rwlock-read99")) {
		t.arg = &rw_shared;
		t.body = rwlock_body;
	} else if (!strcmp(p, "sem-pingpong")) {
		static struct pingpong pp;
		if (ncpus != 2) {
			fprintf(stderr, "hwsync-shim-patterns: sem-pingpong takes 2 CPUs\n");
			return 2;
		}
		if (sem_init(&pp.ping, 0, 0) || sem_init(&pp.pong, 0, 0))
			die("sem_init", errno);
		t.arg = &pp;
		t.body = sem_pingpong_body;
	} else if (!strcmp(p, "cond-periodic") || !strcmp(p, "cond-consumer")) {
		static struct periodic pc = { .m = PTHREAD_MUTEX_INITIALIZER,
					      .c = PTHREAD_COND_INITIALIZER };
		if (ncpus != 2) {
			fprintf(stderr, "hwsync-shim-patterns: %s takes 2 CPUs\n", p);
			return 2;
		}
		pc.maxlat = amount / PERIOD_NS + 16;
		if (!(pc.lat = malloc(pc.maxlat * sizeof *pc.lat)))
			die("malloc", ENOMEM);
		t.arg = &pc;
		t.body = p[5] == 'p' ? cond_periodic_body : cond_consumer_body;
	} else if (!strcmp(p, "mutex-yield") || !strcmp(p, "spin-oversub")) {
		cpu_set_t set;
		if (sched_getaffinity(0, sizeof set, &set))
			die("sched_getaffinity", errno);
		t.n = 4 * (unsigned)CPU_COUNT(&set);
		if (t.n > MAX_THREADS)
			t.n = MAX_THREADS;
		t.pin = false;
		t.body = p[0] == 'm' ? mutex_yield_body : spin_body;
		t.arg = p[0] == 'm' ? NULL : &spin;
	} else if (!strcmp(p, "spin-contended")) {
		t.body = spin_body;
		t.arg = &spin;
	} else if (!strcmp(p, "mutex-empty") || !strcmp(p, "mutex-empty-async")) {
		t.body = mutex_empty_body;
		t.async_cancel = p[11] == '-';
	} else if (!strncmp(p, "mutex-yield8-", 13) || !strcmp(p, "mutex-rt")) {
		unsigned per = p[6] == 'r' ? 4 : (unsigned)strtoul(p + 13, &end, 10);
		if (p[6] != 'r' && (*end || !per || per > 64)) {
			fprintf(stderr, "hwsync-shim-patterns: bad pattern '%s'\n", p);
			return 2;
		}
		cpu_set_t set;
		if (sched_getaffinity(0, sizeof set, &set))
			die("sched_getaffinity", errno);
		t.n = per * (unsigned)CPU_COUNT(&set);
		if (t.n > MAX_THREADS)
			t.n = MAX_THREADS;
		t.pin = false;
		t.body = p[6] == 'r' ? mutex_rt_body : mutex_yield8_body;
		for (unsigned i = 0; i < YIELD_MUTEXES; i++)
			pthread_mutex_init(&yield_mutex[i].m, NULL);
	} else if (!strcmp(p, "startup")) {
		pthread_mutex_lock(&solo_mutex);
		pthread_mutex_unlock(&solo_mutex);
		ops = 1;
	} else if (!strcmp(p, "churn")) {
		pin_self(0);
		churn_run(amount, &ops, &ns);
#ifdef HWS_PATTERNS_OPENMP
	} else if (!strcmp(p, "omp-lock")) {
		pin_self(0);
		solo_omp_lock_run(&ops, &ns);
	} else if (!strcmp(p, "omp-lock-contended") || !strcmp(p, "omp-critical")) {
		threads = ncpus;
		omp_team_run(p[4] == 'l' ? OMP_LOCK : OMP_CRITICAL, ncpus, &ops, &ns, &p99_ns);
	} else if (!strcmp(p, "omp-barrier") || !strcmp(p, "omp-parallel") ||
		   !strcmp(p, "omp-parallel-for") ||
		   !strcmp(p, "omp-for-dynamic") || !strcmp(p, "omp-sections") ||
		   !strcmp(p, "omp-ordered")) {
		threads = ncpus;
		omp_overhead_run(!strcmp(p, "omp-barrier") ? OMP_BARRIER :
				 !strcmp(p, "omp-parallel") ? OMP_PARALLEL :
				 !strcmp(p, "omp-parallel-for") ? OMP_PARALLEL_FOR :
				 !strcmp(p, "omp-for-dynamic") ? OMP_FOR_DYNAMIC :
				 !strcmp(p, "omp-sections") ? OMP_SECTIONS : OMP_ORDERED,
				 ncpus, &ops, &ns);
#endif
	} else {
		fprintf(stderr, "hwsync-shim-patterns: unknown or unavailable pattern '%s' "
			"(see: hwsync-shim-patterns list)\n", p);
		return 2;
	}
	if (t.arg == &spin && (rc = pthread_spin_init(&spin.l, PTHREAD_PROCESS_PRIVATE)))
		die("pthread_spin_init", rc);
	t.fair = t.body == mutex_empty_body || t.body == mutex_yield8_body ||
		 t.body == mutex_rt_body || t.body == mutex_shared_body ||
		 t.body == mutex_private_body || t.body == rwlock_body ||
		 t.body == mutex_yield_body || t.body == spin_body;
	/* lock waits are sampled where threads share one lock */
	if (t.fair && t.body != rwlock_body && t.body != mutex_private_body &&
	    !(t.samples = calloc(t.n, sizeof *t.samples)))
		die("calloc", ENOMEM);
	pid_t twin = -1;
	int pipefd[2];
	if (t.body == mutex_rt_body) {
		/* a second process runs the same threads at the same time; a
		 * real-time thread that runs a second without sleeping dies */
		struct rlimit rt = { 1000000, 1000000 };
		if (setrlimit(RLIMIT_RTTIME, &rt))
			die("setrlimit(RLIMIT_RTTIME)", errno);
		if (pipe(pipefd))
			die("pipe", errno);
		fflush(NULL);
		if ((twin = fork()) < 0)
			die("fork", errno);
	}
	if (t.body) {
		ns = team_run(&t);
		ops = atomic_load(&t.ops);
		threads = t.n;
		if (t.arg == &rw_shared && (uint64_t)rw_shared.counter != atomic_load(&rw_writes)) {
			fprintf(stderr, "hwsync-shim-patterns: rwlock-read99 lost writes (counter "
				"%ld, expected %llu)\n", rw_shared.counter,
				(unsigned long long)atomic_load(&rw_writes));
			return 1;
		}
		if (t.arg == &spin && (uint64_t)spin.counter != ops) {
			fprintf(stderr, "hwsync-shim-patterns: mutual exclusion violated (counter "
				"%ld, expected %llu)\n", spin.counter, (unsigned long long)ops);
			return 1;
		}
		if (twin == 0) {        /* the second process: its count to the first */
			ssize_t w = write(pipefd[1], &ops, sizeof ops);
			_exit(w == (ssize_t)sizeof ops ? 0 : 1);
		}
		if (twin > 0) {
			uint64_t other = 0;
			int st;
			close(pipefd[1]);
			if (read(pipefd[0], &other, sizeof other) != (ssize_t)sizeof other ||
			    waitpid(twin, &st, 0) != twin || !WIFEXITED(st) || WEXITSTATUS(st)) {
				fprintf(stderr, "hwsync-shim-patterns: the second mutex-rt process "
					"failed\n");
				return 1;
			}
			ops += other;
		}
		if (t.fair) {
			uint64_t lo = UINT64_MAX, hi = 0;
			for (unsigned i = 0; i < t.n; i++) {
				lo = t.per[i] < lo ? t.per[i] : lo;
				hi = t.per[i] > hi ? t.per[i] : hi;
			}
			/* a thread that did nothing: fairness 0 would read as "not
			 * measured", so report the smallest nonzero value */
			fairness = hi ? (lo ? (double)lo / (double)hi : 1e-6) : 0;
		}
		if (t.samples)
			p99_ns = samples_p99(t.samples, t.n);
		if (t.body == cond_periodic_body || t.body == cond_consumer_body) {
			struct periodic *pc = t.arg;
			qsort(pc->lat, pc->nlat, sizeof *pc->lat, cmp_u64);
			lat_ns = pc->nlat ? pc->lat[pc->nlat / 2] : 0;
		}
	}
	printf("ops=%llu ns=%llu cpu_ns=%llu rss_kib=%lu threads=%u lat_ns=%llu fair=%.6f "
	       "p99_ns=%llu base_ops=%llu base_ns=%llu base_cpu_ns=%llu base_lat_ns=%llu lib=%s\n",
	       (unsigned long long)ops, (unsigned long long)ns, (unsigned long long)(cpu1 - cpu0),
	       peak_rss_kib(), threads, (unsigned long long)lat_ns, fairness,
	       (unsigned long long)p99_ns, (unsigned long long)base_ops, (unsigned long long)base_ns,
	       (unsigned long long)base_cpu_ns, (unsigned long long)base_lat_ns, mutex_provider());
	return 0;
}

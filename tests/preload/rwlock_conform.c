/* pthread_rwlock_* conformance, run natively and under the shim (every
 * HWSYNC_RWLOCK algorithm, adaptive and futex): the same output either way.
 *
 * Checks glibc's error codes (EDEADLK for rdlock/wrlock and their timed and
 * clock forms by the write holder, EBUSY from the try forms, EINVAL for a
 * bad timespec or clock even when the lock is free, a time in the past that
 * still takes a free lock), timed-out waits, readers holding the lock
 * together, recursive read locks of a default rwlock while a writer waits
 * (must not deadlock: a timed read with a long deadline fails the test
 * instead of hanging), writer preference where the kind promises it (the
 * attribute and the static initializer), misused unlocks (0; and under the
 * shim, RWLOCK_SHIM=1, the lock still usable: glibc's is not), a
 * process-shared rwlock, and a counter kept by writers while
 * readers check a two-word record, 4 threads (or more with an argument).
 * Every line it prints is deterministic.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static int fails;
#define EXPECT(what, got, want)                                                             \
	do {                                                                                \
		int g_ = (got), w_ = (want);                                                \
		if (g_ != w_) {                                                             \
			printf("FAIL %s: got %d (%s), want %d (%s)\n", what, g_, strerror(g_), \
			       w_, strerror(w_));                                           \
			fails++;                                                            \
		}                                                                           \
	} while (0)

static struct timespec after(clockid_t clock, long ms)
{
	struct timespec t;
	clock_gettime(clock, &t);
	t.tv_sec += ms / 1000;
	t.tv_nsec += (ms % 1000) * 1000000L;
	if (t.tv_nsec >= 1000000000L)
		t.tv_sec++, t.tv_nsec -= 1000000000L;
	return t;
}

static pthread_rwlock_t *cur;
static _Atomic int phase;

static void *hold(void *arg)
{
	int write = arg != NULL;
	EXPECT("holder lock", write ? pthread_rwlock_wrlock(cur) : pthread_rwlock_rdlock(cur), 0);
	atomic_store(&phase, 1);
	while (atomic_load(&phase) != 2)
		usleep(1000);
	EXPECT("holder unlock", pthread_rwlock_unlock(cur), 0);
	return NULL;
}

static void start(pthread_t *t, int write)
{
	atomic_store(&phase, 0);
	pthread_create(t, NULL, hold, write ? (void *)1 : NULL);
	while (atomic_load(&phase) != 1)
		usleep(1000);
}

static void finish(pthread_t t)
{
	atomic_store(&phase, 2);
	pthread_join(t, NULL);
}

static void errors(pthread_rwlock_t *rw, const char *name)
{
	char w[96];
	struct timespec bad = after(CLOCK_REALTIME, 10), past = { 0, 0 }, ok;
	bad.tv_nsec = 1000000000L;
	cur = rw;
#define E(what, got, want)                                               \
	do {                                                             \
		snprintf(w, sizeof w, "%s: %s", name, what);             \
		EXPECT(w, got, want);                                    \
	} while (0)
	E("timedrdlock bad timespec, free", pthread_rwlock_timedrdlock(rw, &bad), EINVAL);
	E("timedwrlock bad timespec, free", pthread_rwlock_timedwrlock(rw, &bad), EINVAL);
	E("clockrdlock bad timespec, free", pthread_rwlock_clockrdlock(rw, CLOCK_MONOTONIC, &bad),
	  EINVAL);
	E("clockwrlock bad clock, free", pthread_rwlock_clockwrlock(rw, 12345, &past), EINVAL);
	E("timedrdlock past, free", pthread_rwlock_timedrdlock(rw, &past), 0);
	E("unlock", pthread_rwlock_unlock(rw), 0);
	E("timedwrlock past, free", pthread_rwlock_timedwrlock(rw, &past), 0);
	E("unlock", pthread_rwlock_unlock(rw), 0);

	E("wrlock", pthread_rwlock_wrlock(rw), 0);
	E("rdlock by the writer", pthread_rwlock_rdlock(rw), EDEADLK);
	E("wrlock by the writer", pthread_rwlock_wrlock(rw), EDEADLK);
	ok = after(CLOCK_REALTIME, 10);
	E("timedrdlock by the writer", pthread_rwlock_timedrdlock(rw, &ok), EDEADLK);
	ok = after(CLOCK_MONOTONIC, 10);
	E("clockwrlock by the writer", pthread_rwlock_clockwrlock(rw, CLOCK_MONOTONIC, &ok),
	  EDEADLK);
	E("tryrdlock by the writer", pthread_rwlock_tryrdlock(rw), EBUSY);
	E("trywrlock by the writer", pthread_rwlock_trywrlock(rw), EBUSY);
	E("unlock", pthread_rwlock_unlock(rw), 0);

	pthread_t t;
	start(&t, 1);   /* another thread writes */
	ok = after(CLOCK_REALTIME, 20);
	E("timedrdlock vs writer", pthread_rwlock_timedrdlock(rw, &ok), ETIMEDOUT);
	ok = after(CLOCK_MONOTONIC, 20);
	E("clockwrlock vs writer", pthread_rwlock_clockwrlock(rw, CLOCK_MONOTONIC, &ok),
	  ETIMEDOUT);
	E("timedwrlock past vs writer", pthread_rwlock_timedwrlock(rw, &past), ETIMEDOUT);
	E("tryrdlock vs writer", pthread_rwlock_tryrdlock(rw), EBUSY);
	E("trywrlock vs writer", pthread_rwlock_trywrlock(rw), EBUSY);
	finish(t);

	start(&t, 0);   /* another thread reads */
	ok = after(CLOCK_REALTIME, 10000);
	E("timedrdlock with a reader (together)", pthread_rwlock_timedrdlock(rw, &ok), 0);
	E("unlock", pthread_rwlock_unlock(rw), 0);
	ok = after(CLOCK_REALTIME, 20);
	E("timedwrlock vs reader", pthread_rwlock_timedwrlock(rw, &ok), ETIMEDOUT);
	E("trywrlock vs reader", pthread_rwlock_trywrlock(rw), EBUSY);
	E("tryrdlock after a timed-out writer", pthread_rwlock_tryrdlock(rw), 0);
	E("unlock", pthread_rwlock_unlock(rw), 0);
	finish(t);
	E("trywrlock, free again", pthread_rwlock_trywrlock(rw), 0);
	E("unlock", pthread_rwlock_unlock(rw), 0);
	printf("%s: error codes checked\n", name);
#undef E
}

/* A writer blocks behind a reader; what may readers do now? */
static _Atomic int writer_done;
static void *writer(void *arg)
{
	(void)arg;
	struct timespec dl = after(CLOCK_REALTIME, 20000);
	EXPECT("waiting writer", pthread_rwlock_timedwrlock(cur, &dl), 0);
	atomic_store(&writer_done, 1);
	EXPECT("waiting writer unlock", pthread_rwlock_unlock(cur), 0);
	return NULL;
}

static void *try_reader(void *arg)
{
	*(int *)arg = pthread_rwlock_tryrdlock(cur);
	if (*(int *)arg == 0)
		pthread_rwlock_unlock(cur);
	return NULL;
}

static int other_tryrd(void)
{
	pthread_t t;
	int rc = -1;
	pthread_create(&t, NULL, try_reader, &rc);
	pthread_join(t, NULL);
	return rc;
}

static void preference(pthread_rwlock_t *rw, const char *name, int writer_preferred)
{
	pthread_t h, wt;
	char w[96];
	cur = rw;
	atomic_store(&writer_done, 0);
	start(&h, 0);
	pthread_create(&wt, NULL, writer, NULL);
	if (writer_preferred) {
		/* wait (bounded) until the writer shows, then readers stay out */
		int rc = 0;
		for (int i = 0; i < 5000 && (rc = other_tryrd()) == 0; i++)
			usleep(1000);
		snprintf(w, sizeof w, "%s: a new reader while a writer waits", name);
		EXPECT(w, rc, EBUSY);
	} else {
		usleep(50000);   /* let the writer block (no sign to wait for) */
		struct timespec dl = after(CLOCK_REALTIME, 10000);
		snprintf(w, sizeof w, "%s: a new reader while a writer waits", name);
		EXPECT(w, other_tryrd(), 0);
		/* recursive reads by a reader of this kind: never a deadlock */
		EXPECT(w, pthread_rwlock_rdlock(rw), 0);
		snprintf(w, sizeof w, "%s: recursive read while a writer waits", name);
		EXPECT(w, pthread_rwlock_timedrdlock(rw, &dl), 0);
		EXPECT(w, pthread_rwlock_tryrdlock(rw), 0);
		for (int i = 0; i < 3; i++)
			EXPECT(w, pthread_rwlock_unlock(rw), 0);
	}
	snprintf(w, sizeof w, "%s: the writer waited", name);
	EXPECT(w, atomic_load(&writer_done), 0);
	finish(h);
	pthread_join(wt, NULL);
	snprintf(w, sizeof w, "%s: the writer got in", name);
	EXPECT(w, atomic_load(&writer_done), 1);
	printf("%s: %s preference checked\n", name, writer_preferred ? "writer" : "reader");
}

/* Readers check a record that writers change as a whole. */
static struct {
	long a, b;
} record;
static long writes;
static void *worker(void *arg)
{
	unsigned seed = (unsigned)(uintptr_t)arg;
	for (int i = 0; i < 20000; i++) {
		if (rand_r(&seed) % 8 == 0) {
			pthread_rwlock_wrlock(cur);
			record.a++;
			record.b--;
			writes++;
			pthread_rwlock_unlock(cur);
		} else {
			pthread_rwlock_rdlock(cur);
			if (record.a != -record.b) {
				printf("FAIL torn record %ld %ld\n", record.a, record.b);
				fails++;
			}
			pthread_rwlock_unlock(cur);
		}
	}
	return NULL;
}

static void counter(pthread_rwlock_t *rw, const char *name, int n)
{
	pthread_t t[64];
	cur = rw;
	record.a = record.b = writes = 0;
	for (int i = 0; i < n; i++)
		pthread_create(&t[i], NULL, worker, (void *)(uintptr_t)(i + 1));
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	if (record.a != writes || record.b != -writes) {
		printf("FAIL %s: %ld writes, record %ld %ld\n", name, writes, record.a, record.b);
		fails++;
	}
	printf("%s: %d threads, record whole\n", name, n);
}

static pthread_rwlock_t s_default = PTHREAD_RWLOCK_INITIALIZER;
static pthread_rwlock_t s_writer = PTHREAD_RWLOCK_WRITER_NONRECURSIVE_INITIALIZER_NP;

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 4;
	pthread_rwlockattr_t a;
	pthread_rwlock_t d, pw, wnr, *ps;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (n < 1 || n > 64)
		n = 4;
	pthread_rwlock_init(&d, NULL);
	pthread_rwlockattr_init(&a);
	pthread_rwlockattr_setkind_np(&a, PTHREAD_RWLOCK_PREFER_WRITER_NP);
	pthread_rwlock_init(&pw, &a);
	pthread_rwlockattr_setkind_np(&a, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
	pthread_rwlock_init(&wnr, &a);
	ps = mmap(NULL, sizeof *ps, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	pthread_rwlockattr_init(&a);
	pthread_rwlockattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
	pthread_rwlock_init(ps, &a);

	struct {
		pthread_rwlock_t *rw;
		const char *name;
		int writer_preferred;
	} locks[] = {
		{ &d, "default (init)", 0 },
		{ &s_default, "default (initializer)", 0 },
		{ &pw, "PREFER_WRITER_NP", 0 },
		{ &wnr, "PREFER_WRITER_NONRECURSIVE_NP", 1 },
		{ &s_writer, "WRITER_NONRECURSIVE_INITIALIZER_NP", 1 },
		{ ps, "process-shared", 0 },
	};
	for (size_t i = 0; i < sizeof locks / sizeof locks[0]; i++) {
		errors(locks[i].rw, locks[i].name);
		preference(locks[i].rw, locks[i].name, locks[i].writer_preferred);
		counter(locks[i].rw, locks[i].name, n);
	}
	for (size_t i = 0; i < sizeof locks / sizeof locks[0]; i++)
		EXPECT("destroy", pthread_rwlock_destroy(locks[i].rw), 0);
	/* Misuse: unlocks of a free lock and of another thread's write lock
	 * return 0 (glibc too); the shim's lock stays usable. */
	pthread_rwlock_t m = PTHREAD_RWLOCK_INITIALIZER;
	pthread_t t;
	EXPECT("unlock of a free lock", pthread_rwlock_unlock(&m), 0);
	if (getenv("RWLOCK_SHIM")) {
		EXPECT("unlock of a free lock", pthread_rwlock_unlock(&m), 0);
		EXPECT("wrlock after misuse", pthread_rwlock_trywrlock(&m), 0);
		EXPECT("unlock", pthread_rwlock_unlock(&m), 0);
		cur = &m;
		start(&t, 1);
		EXPECT("unlock of another thread's write lock", pthread_rwlock_unlock(&m), 0);
		EXPECT("still held by it", pthread_rwlock_tryrdlock(&m), EBUSY);
		finish(t);
		EXPECT("rdlock after misuse", pthread_rwlock_tryrdlock(&m), 0);
		EXPECT("unlock", pthread_rwlock_unlock(&m), 0);
	}
	printf("misuse: unlock returned 0\n");
	/* a destroyed default rwlock can be initialised and used again */
	EXPECT("init again", pthread_rwlock_init(&d, NULL), 0);
	EXPECT("rdlock", pthread_rwlock_rdlock(&d), 0);
	EXPECT("unlock", pthread_rwlock_unlock(&d), 0);
	printf("%s\n", fails ? "FAILED" : "all passed");
	return fails != 0;
}

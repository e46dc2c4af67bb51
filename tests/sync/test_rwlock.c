/* Reader-writer locks: test_rwlock KIND unit|stress.
 *   unit:   bad arguments; the error codes of glibc (EDEADLK, EBUSY, EINVAL
 *           for a bad deadline even when the lock is free, EAGAIN at the
 *           reader limit, ETIMEDOUT); misused unlocks return 0 and leave the
 *           lock usable; readers hold the lock together; a reader-preferring
 *           kind lets readers (and a recursive read) in while a writer waits;
 *           the writer-preferring kind stops new readers once a writer waits
 *           and gives W back when that writer times out.  Under pause, futex
 *           and adaptive.
 *   stress: 8 threads on 2 CPUs, each mostly reading (read, try, timed, and
 *           recursive reads where the kind allows them) and sometimes
 *           writing, with random hold times; writers fill a record with one
 *           value and readers check it is whole and that no writer is
 *           inside; the number of writes found at the end is exact.  Runs
 *           for a bounded time (scaled down under TSan and qemu).
 */
#include "sync/sync_test.h"
#include <hwsync/rwlock.h>
#include <hwsync/rwlock_bravo.h>
#include <hwsync/rwlock_reader.h>
#include <hwsync/rwlock_writer.h>

#define LONG_NS 10000000000ull
#define SHORT_NS 20000000ull

static const char *const policies[] = { "pause", "futex", "adaptive" };
static const char *kind;
static int recursive;   /* reader-preferring: recursive reads allowed */

static hws_rwlock_t *rw;
static _Atomic int phase;

static struct timespec in(uint64_t ns)
{
	return test_deadline_ts(ns);
}

static void *hold_read(void *arg)
{
	(void)arg;
	CHECK_EQ(hws_rwlock_rdlock(rw), 0);
	atomic_store(&phase, 1);
	while (atomic_load(&phase) != 2)
		usleep(1000);
	CHECK_EQ(hws_rwlock_unlock(rw), 0);
	return NULL;
}

static void *hold_write(void *arg)
{
	(void)arg;
	CHECK_EQ(hws_rwlock_wrlock(rw), 0);
	atomic_store(&phase, 1);
	while (atomic_load(&phase) != 2)
		usleep(1000);
	CHECK_EQ(hws_rwlock_unlock(rw), 0);
	return NULL;
}

static _Atomic int writer_in;
static void *writer(void *arg)
{
	(void)arg;
	struct timespec dl = in(LONG_NS);
	CHECK_EQ(hws_rwlock_timedwrlock(rw, &dl), 0);
	atomic_store(&writer_in, 1);
	CHECK_EQ(hws_rwlock_unlock(rw), 0);
	return NULL;
}

static void *timed_read_ok(void *arg)
{
	(void)arg;
	struct timespec dl = in(LONG_NS);
	CHECK_EQ(hws_rwlock_timedrdlock(rw, &dl), 0);
	CHECK_EQ(hws_rwlock_unlock(rw), 0);
	return NULL;
}

static void *timeouts_vs_writer(void *arg)
{
	(void)arg;
	struct timespec dl = in(SHORT_NS);
	CHECK_EQ(hws_rwlock_timedrdlock(rw, &dl), ETIMEDOUT);
	dl = in(SHORT_NS);
	CHECK_EQ(hws_rwlock_timedwrlock(rw, &dl), ETIMEDOUT);
	CHECK_EQ(hws_rwlock_tryrdlock(rw), EBUSY);
	CHECK_EQ(hws_rwlock_trywrlock(rw), EBUSY);
	/* not ours: changes nothing */
	CHECK_EQ(hws_rwlock_unlock(rw), 0);
	CHECK_EQ(hws_rwlock_trywrlock(rw), EBUSY);
	return NULL;
}

static void *timeouts_vs_reader(void *arg)
{
	(void)arg;
	struct timespec dl = in(SHORT_NS);
	CHECK_EQ(hws_rwlock_timedwrlock(rw, &dl), ETIMEDOUT);
	CHECK_EQ(hws_rwlock_trywrlock(rw), EBUSY);
	/* The timed-out writer left no mark that keeps readers out. */
	CHECK_EQ(hws_rwlock_tryrdlock(rw), 0);
	CHECK_EQ(hws_rwlock_unlock(rw), 0);
	return NULL;
}

static void start(pthread_t *t, void *(*fn)(void *))
{
	atomic_store(&phase, 0);
	CHECK(pthread_create(t, NULL, fn, NULL) == 0);
	while (atomic_load(&phase) != 1)
		usleep(1000);
}

static void finish(pthread_t t)
{
	atomic_store(&phase, 2);
	CHECK(pthread_join(t, NULL) == 0);
}

/* Wait (bounded) until a writer blocked in wrlock shows: for the
 * writer-preferring kind tryrdlock starts failing; for the others there is
 * no sign, so give it time to block (the checks hold either way). */
static void let_writer_block(void)
{
	if (recursive) {
		usleep(30000);
		return;
	}
	uint64_t end = test_now_ns() + LONG_NS;
	while (test_now_ns() < end) {
		int rc = hws_rwlock_tryrdlock(rw);
		if (rc == EBUSY)
			return;
		CHECK_EQ(rc, 0);
		CHECK_EQ(hws_rwlock_unlock(rw), 0);
		usleep(1000);
	}
	CHECK(!"a waiting writer never stopped new readers");
}

static void errors(void)
{
	hws_rwlock_t *x;
	CHECK_EQ(hws_rwlock_create(NULL, kind, "pause"), EINVAL);
	CHECK_EQ(hws_rwlock_create(&x, "nosuch", "pause"), EINVAL);
	CHECK(strstr(hws_last_error(), "unknown rwlock kind 'nosuch'"));
	CHECK(strstr(hws_last_error(), "bravo"));
	CHECK_EQ(hws_rwlock_create(&x, kind, "nosuch"), EINVAL);
	CHECK(strstr(hws_last_error(), "rwlock:"));
	CHECK_EQ(hws_rwlock_create_with(&x, kind, NULL), EINVAL);
	CHECK_EQ(hws_rwlock_rdlock(NULL), EINVAL);
	CHECK_EQ(hws_rwlock_unlock(NULL), EINVAL);
	const char *const *k = hws_rwlock_kinds();
	CHECK(!strcmp(k[0], "reader") && !strcmp(k[1], "writer") && !strcmp(k[2], "bravo"));
	CHECK(!k[3]);
	CHECK_EQ(hws_rwlock_create(&x, NULL, NULL), 0);
	CHECK(!strcmp(hws_rwlock_kind(x), "reader"));
	hws_rwlock_destroy(x);
}

static void unit(const char *policy)
{
	pthread_t t, t2;
	struct timespec bad = { 0, 1000000000L }, neg = { -1, 0 }, dl;

	CHECK_EQ(hws_rwlock_create(&rw, kind, policy), 0);
	CHECK(!strcmp(hws_rwlock_kind(rw), kind));

	/* EINVAL for a bad deadline, checked first, even when free */
	CHECK_EQ(hws_rwlock_timedrdlock(rw, &bad), EINVAL);
	CHECK_EQ(hws_rwlock_timedwrlock(rw, &neg), EINVAL);
	CHECK_EQ(hws_rwlock_timedrdlock(rw, NULL), EINVAL);
	/* misused unlocks of a free lock */
	CHECK_EQ(hws_rwlock_unlock(rw), 0);
	CHECK_EQ(hws_rwlock_unlock(rw), 0);

	/* reads, and the write lock's EDEADLK/EBUSY */
	CHECK_EQ(hws_rwlock_rdlock(rw), 0);
	CHECK_EQ(hws_rwlock_tryrdlock(rw), 0);
	CHECK_EQ(hws_rwlock_trywrlock(rw), EBUSY);
	CHECK_EQ(hws_rwlock_unlock(rw), 0);
	CHECK_EQ(hws_rwlock_unlock(rw), 0);
	CHECK_EQ(hws_rwlock_wrlock(rw), 0);
	CHECK_EQ(hws_rwlock_rdlock(rw), EDEADLK);
	CHECK_EQ(hws_rwlock_wrlock(rw), EDEADLK);
	dl = in(SHORT_NS);
	CHECK_EQ(hws_rwlock_timedrdlock(rw, &dl), EDEADLK);
	dl = in(SHORT_NS);
	CHECK_EQ(hws_rwlock_timedwrlock(rw, &dl), EDEADLK);
	CHECK_EQ(hws_rwlock_tryrdlock(rw), EBUSY);
	CHECK_EQ(hws_rwlock_trywrlock(rw), EBUSY);
	CHECK_EQ(hws_rwlock_timedrdlock(rw, &bad), EINVAL);
	CHECK_EQ(hws_rwlock_unlock(rw), 0);
	CHECK_EQ(hws_rwlock_unlock(rw), 0);   /* misuse: nothing held */
	CHECK_EQ(hws_rwlock_trywrlock(rw), 0);
	CHECK_EQ(hws_rwlock_unlock(rw), 0);
	CHECK_EQ(hws_rwlock_tryrdlock(rw), 0);
	CHECK_EQ(hws_rwlock_unlock(rw), 0);

	/* timeouts against a writer held by another thread */
	start(&t, hold_write);
	CHECK(pthread_create(&t2, NULL, timeouts_vs_writer, NULL) == 0);
	CHECK(pthread_join(t2, NULL) == 0);
	finish(t);
	CHECK_EQ(hws_rwlock_trywrlock(rw), 0);   /* the other unlock did nothing */
	CHECK_EQ(hws_rwlock_unlock(rw), 0);

	/* readers hold together; a writer times out against them */
	start(&t, hold_read);
	CHECK(pthread_create(&t2, NULL, timed_read_ok, NULL) == 0);
	CHECK(pthread_join(t2, NULL) == 0);
	CHECK(pthread_create(&t2, NULL, timeouts_vs_reader, NULL) == 0);
	CHECK(pthread_join(t2, NULL) == 0);

	/* a writer waits behind the reader */
	atomic_store(&writer_in, 0);
	CHECK(pthread_create(&t2, NULL, writer, NULL) == 0);
	let_writer_block();
	CHECK_EQ(atomic_load(&writer_in), 0);
	if (recursive) {
		/* readers still enter, recursively too, without deadlock */
		CHECK_EQ(hws_rwlock_rdlock(rw), 0);
		CHECK_EQ(hws_rwlock_rdlock(rw), 0);
		CHECK_EQ(hws_rwlock_tryrdlock(rw), 0);
		CHECK_EQ(hws_rwlock_unlock(rw), 0);
		CHECK_EQ(hws_rwlock_unlock(rw), 0);
		CHECK_EQ(hws_rwlock_unlock(rw), 0);
	} else {
		/* writer preference: new readers wait */
		CHECK_EQ(hws_rwlock_tryrdlock(rw), EBUSY);
		dl = in(SHORT_NS);
		CHECK_EQ(hws_rwlock_timedrdlock(rw, &dl), ETIMEDOUT);
	}
	CHECK_EQ(atomic_load(&writer_in), 0);
	finish(t);
	CHECK(pthread_join(t2, NULL) == 0);
	CHECK_EQ(atomic_load(&writer_in), 1);
	CHECK_EQ(hws_rwlock_trywrlock(rw), 0);
	CHECK_EQ(hws_rwlock_unlock(rw), 0);
	hws_rwlock_destroy(rw);
}

/* A thread whose id takes the same bravo slot for a lock as another's
 * (ids equal modulo the table's lines) reads through the underlying lock,
 * nested too, and leaves the other's slot alone. */
static hws_rw_bravo_core_t coll;
static uint32_t coll_tid;

static void *bravo_collider(void *arg)
{
	hws_wait_t *w = arg;
	uint32_t lines = HWS_RW_BRAVO_SLOTS * sizeof(struct hws_rw_bravo_slot) / HWS_CACHELINE;
	struct hws_rw_bravo_slot *s = hws_rw_bravo_slot_of(&coll, coll_tid);

	hws_rw_tid = coll_tid + lines;
	CHECK(hws_rw_bravo_slot_of(&coll, hws_rw_tid) == s);
	CHECK_EQ(hws_rw_bravo_core_rdlock(&coll, w, HWS_FOREVER), 0);
	CHECK_EQ(hws_rw_bravo_core_rdlock(&coll, w, HWS_FOREVER), 0);
	CHECK_EQ(atomic_load(&coll.rw.state), 2);
	CHECK_EQ(hws_rw_bravo_core_unlock(&coll), 0);
	CHECK_EQ(hws_rw_bravo_core_unlock(&coll), 0);
	CHECK_EQ(atomic_load(&coll.rw.state), 0);
	CHECK(atomic_load(&s->lock) == (uintptr_t)&coll && atomic_load(&s->owner) == coll_tid);
	return NULL;
}

static void bravo_collision(hws_wait_t *w)
{
	pthread_t t;

	hws_rw_bravo_core_init(&coll);
	coll_tid = hws_rw_self();
	CHECK_EQ(hws_rw_bravo_core_rdlock(&coll, w, HWS_FOREVER), 0);   /* bias on */
	CHECK_EQ(hws_rw_bravo_core_unlock(&coll), 0);
	CHECK_EQ(hws_rw_bravo_core_rdlock(&coll, w, HWS_FOREVER), 0);   /* in the slot */
	CHECK_EQ(hws_rw_bravo_core_rdlock(&coll, w, HWS_FOREVER), 0);   /* nested */
	CHECK(pthread_create(&t, NULL, bravo_collider, w) == 0);
	CHECK(pthread_join(t, NULL) == 0);
	CHECK_EQ(hws_rw_bravo_core_unlock(&coll), 0);
	CHECK_EQ(hws_rw_bravo_core_unlock(&coll), 0);
	CHECK_EQ(atomic_load(&coll.rw.state), 0);
	CHECK_EQ(hws_rw_bravo_core_wrlock(&coll, w, HWS_FOREVER), 0);   /* no slot left */
	CHECK_EQ(hws_rw_bravo_core_unlock(&coll), 0);
}

/* EAGAIN at the reader limit, through the cores (2^29 readers otherwise). */
static void overflow(void)
{
	hws_wait_t w;
	CHECK_EQ(hws_wait_init(&w, "pause"), 0);
	hws_rw_reader_core_t r;
	hws_rw_reader_core_init(&r);
	atomic_store(&r.state, HWS_RW_MAX_READERS - 1);
	CHECK_EQ(hws_rw_reader_core_tryrdlock(&r), 0);
	CHECK_EQ(hws_rw_reader_core_tryrdlock(&r), EAGAIN);
	CHECK_EQ(hws_rw_reader_core_rdlock(&r, &w, HWS_FOREVER), EAGAIN);
	CHECK_EQ(atomic_load(&r.state), HWS_RW_MAX_READERS);
	CHECK_EQ(hws_rw_reader_core_unlock(&r), 0);
	CHECK_EQ(hws_rw_reader_core_rdlock(&r, &w, HWS_FOREVER), 0);

	hws_rw_writer_core_t wr;
	hws_rw_writer_core_init(&wr);
	atomic_store(&wr.state, HWS_RW_MAX_READERS);
	CHECK_EQ(hws_rw_writer_core_tryrdlock(&wr), EAGAIN);
	CHECK_EQ(hws_rw_writer_core_rdlock(&wr, &w, HWS_FOREVER), EAGAIN);
	CHECK_EQ(atomic_load(&wr.state), HWS_RW_MAX_READERS);

	hws_rw_bravo_core_t b;
	hws_rw_bravo_core_init(&b);
	atomic_store(&b.rw.state, HWS_RW_MAX_READERS);
	CHECK_EQ(hws_rw_bravo_core_tryrdlock(&b), EAGAIN);   /* bias off: underlying */
	atomic_store(&b.rw.state, 0);
	/* bias on: the first read enables it, then reads take the slots */
	CHECK_EQ(hws_rw_bravo_core_rdlock(&b, &w, HWS_FOREVER), 0);
	CHECK_EQ(atomic_load(&b.rbias), 1);
	CHECK_EQ(atomic_load(&b.rw.state), 1);
	CHECK_EQ(hws_rw_bravo_core_rdlock(&b, &w, HWS_FOREVER), 0);
	CHECK_EQ(atomic_load(&b.rw.state), 1);   /* in a slot */
	CHECK_EQ(hws_rw_bravo_core_rdlock(&b, &w, HWS_FOREVER), 0);   /* nested in it */
	CHECK_EQ(hws_rw_bravo_core_trywrlock(&b), EBUSY);
	for (int i = 0; i < 3; i++)
		CHECK_EQ(hws_rw_bravo_core_unlock(&b), 0);
	CHECK_EQ(atomic_load(&b.rw.state), 0);
	/* the writer revokes the bias (no slot names the lock any more) */
	CHECK_EQ(hws_rw_bravo_core_wrlock(&b, &w, HWS_FOREVER), 0);
	CHECK_EQ(atomic_load(&b.rbias), 0);
	CHECK_EQ(hws_rw_bravo_core_rdlock(&b, &w, HWS_FOREVER), EDEADLK);
	CHECK_EQ(hws_rw_bravo_core_unlock(&b), 0);
	CHECK_EQ(atomic_load(&b.rw.state), 0);
	bravo_collision(&w);
}

/* ---- stress ---- */
#define NREC 4
static struct {
	uint64_t v[NREC];   /* plain: the lock must order them (TSan checks) */
} rec;
static _Atomic int readers_in, writers_in;
static _Atomic uint64_t writes_done;
static uint64_t stress_end;

static void check_record(void)
{
	CHECK_EQ(atomic_load_explicit(&writers_in, memory_order_relaxed), 0);
	for (int i = 1; i < NREC; i++)
		CHECK_EQ(rec.v[i], rec.v[0]);
}

static void hold(uint64_t *seed)
{
	uint32_t r = test_rand(seed);
	if ((r & 7) == 0)
		sync_random_delay(seed);
}

static int rdlock_some(uint64_t *seed)
{
	struct timespec dl;
	switch (test_rand(seed) % 3) {
	case 0: return hws_rwlock_rdlock(rw);
	case 1:
		dl = in((test_rand(seed) % 200) * 1000ull);
		return hws_rwlock_timedrdlock(rw, &dl);
	default: return hws_rwlock_tryrdlock(rw);
	}
}

static int wrlock_some(uint64_t *seed)
{
	struct timespec dl;
	switch (test_rand(seed) % 3) {
	case 0: return hws_rwlock_wrlock(rw);
	case 1:
		dl = in((test_rand(seed) % 500) * 1000ull);
		return hws_rwlock_timedwrlock(rw, &dl);
	default: return hws_rwlock_trywrlock(rw);
	}
}

static void *stress_thread(void *arg)
{
	uint64_t seed = (uintptr_t)arg * 0x9e3779b97f4a7c15ull + 1, mine = 0;
	unsigned i;
	for (i = 0; test_now_ns() < stress_end || i < 100; i++) {
		if (test_rand(&seed) % 10) {
			int rc = rdlock_some(&seed);
			if (rc) {
				CHECK(rc == EBUSY || rc == ETIMEDOUT);
				continue;
			}
			atomic_fetch_add(&readers_in, 1);
			check_record();
			hold(&seed);
			if (recursive && (test_rand(&seed) & 3) == 0) {
				CHECK_EQ(hws_rwlock_rdlock(rw), 0);
				check_record();
				CHECK_EQ(hws_rwlock_unlock(rw), 0);
			}
			check_record();
			atomic_fetch_sub(&readers_in, 1);
			CHECK_EQ(hws_rwlock_unlock(rw), 0);
		} else {
			int rc = wrlock_some(&seed);
			if (rc) {
				CHECK(rc == EBUSY || rc == ETIMEDOUT);
				continue;
			}
			CHECK_EQ(atomic_fetch_add(&writers_in, 1), 0);
			CHECK_EQ(atomic_load(&readers_in), 0);
			uint64_t v = rec.v[0] + 1;
			for (int k = 0; k < NREC; k++) {
				rec.v[k] = v;
				if (k == 1)
					hold(&seed);
			}
			mine++;
			atomic_fetch_sub(&writers_in, 1);
			CHECK_EQ(hws_rwlock_unlock(rw), 0);
		}
	}
	atomic_fetch_add(&writes_done, mine);
	return NULL;
}

static void stress(const char *policy)
{
	enum { N = 8 };
	CHECK_EQ(hws_rwlock_create(&rw, kind, policy), 0);
	memset(&rec, 0, sizeof rec);
	atomic_store(&writes_done, 0);
	sync_pin_first(2);   /* 8 threads on 2 CPUs (threads inherit it) */
	stress_end = test_now_ns() + sync_scale(1000) * 1000000ull;
	pthread_t t[N];
	for (uintptr_t i = 0; i < N; i++)
		CHECK(pthread_create(&t[i], NULL, stress_thread, (void *)(i + 1)) == 0);
	for (int i = 0; i < N; i++)
		CHECK(pthread_join(t[i], NULL) == 0);
	CHECK_EQ(rec.v[0], atomic_load(&writes_done));
	CHECK_EQ(hws_rwlock_trywrlock(rw), 0);
	CHECK_EQ(hws_rwlock_unlock(rw), 0);
	hws_rwlock_destroy(rw);
	printf("%s/%s: %llu writes\n", kind, policy, (unsigned long long)rec.v[0]);
}

int main(int argc, char **argv)
{
	if (argc != 3 || (strcmp(argv[2], "unit") && strcmp(argv[2], "stress"))) {
		fprintf(stderr, "usage: test_rwlock KIND unit|stress\n");
		return 2;
	}
	kind = argv[1];
	recursive = strcmp(kind, "writer") != 0;
	if (!strcmp(argv[2], "unit")) {
		errors();
		overflow();
	}
	for (size_t p = 0; p < sizeof policies / sizeof policies[0]; p++) {
		if (!strcmp(argv[2], "unit"))
			unit(policies[p]);
		else
			stress(policies[p]);
	}
	printf("rwlock %s %s: ok\n", kind, argv[2]);
	return 0;
}

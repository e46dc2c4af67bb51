/* Writer-preferring reader-writer lock ("writer"), the semantics of glibc's
 * PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP: once a writer waits, new
 * readers wait too, so a stream of readers cannot keep writers out.  The
 * price is the one glibc states: a thread must not take the read lock
 * recursively, since its second request would wait behind a writer that
 * waits for its first.
 *
 * State: the word of rwlock_common.h (W, readers), the writer's id and the
 * number of writers waiting for W, 12 bytes, all zero when free.  A writer
 * sets W as soon as no other writer has it, even with readers inside (the
 * writer intent of the Linux rwsem and parking_lot), which stops new
 * readers; then it waits for the readers inside to leave, and the last one
 * wakes it.  Writers that wait for W count themselves in `wwait`, and a
 * reader that sees them waits on that word until they have W: so readers
 * cannot slip in between two writers.  Every decrement of `wwait` is
 * followed by a wake, so a reader asleep on it always wakes.
 */
#ifndef HWSYNC_RWLOCK_WRITER_H
#define HWSYNC_RWLOCK_WRITER_H

#include <hwsync/rwlock_common.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct hws_rw_writer_core {
	_Atomic uint32_t state;    /* W | readers (rwlock_common.h) */
	_Atomic uint32_t owner;    /* hws_rw_self() of the writer, 0 when none */
	_Atomic uint32_t wwait;    /* writers waiting to set W */
} hws_rw_writer_core_t;

int hws_rw_writer_core_rdlock_slow(hws_rw_writer_core_t *c, const hws_wait_t *w,
				   uint64_t deadline_ns);
int hws_rw_writer_core_wrlock_slow(hws_rw_writer_core_t *c, const hws_wait_t *w,
				   uint64_t deadline_ns);

static inline void hws_rw_writer_core_init(hws_rw_writer_core_t *c)
{
	atomic_init(&c->state, 0);
	atomic_init(&c->owner, 0);
	atomic_init(&c->wwait, 0);
}

/* 0, EBUSY (a writer holds or waits) or EAGAIN (too many readers). */
static inline int hws_rw_writer_core_tryrdlock(hws_rw_writer_core_t *c)
{
	/* relaxed: only a preference; the state word decides exclusion. */
	if (atomic_load_explicit(&c->wwait, memory_order_relaxed))
		return EBUSY;
	return hws_rw_reader_enter(&c->state);
}

/* 0, EDEADLK (this thread holds the write lock), EAGAIN, or ETIMEDOUT. */
static inline int hws_rw_writer_core_rdlock(hws_rw_writer_core_t *c, const hws_wait_t *w,
					    uint64_t deadline_ns)
{
	int rc = hws_rw_writer_core_tryrdlock(c);
	if (__builtin_expect(rc != EBUSY, 1))
		return rc;
	return hws_rw_writer_core_rdlock_slow(c, w, deadline_ns);
}

/* 0 or EBUSY: only a free lock; a try never waits for readers to leave. */
static inline int hws_rw_writer_core_trywrlock(hws_rw_writer_core_t *c)
{
	uint32_t v = 0;
	/* acquire: pairs with the release of the last reader or writer. */
	if (!atomic_compare_exchange_strong_explicit(&c->state, &v, HWS_RW_W,
						     memory_order_acquire, memory_order_relaxed))
		return EBUSY;
	/* relaxed: read back only by this thread, or compared by others with
	 * their own, different, id. */
	atomic_store_explicit(&c->owner, hws_rw_self(), memory_order_relaxed);
	return 0;
}

/* 0, EDEADLK (this thread holds the write lock) or ETIMEDOUT. */
static inline int hws_rw_writer_core_wrlock(hws_rw_writer_core_t *c, const hws_wait_t *w,
					    uint64_t deadline_ns)
{
	if (__builtin_expect(hws_rw_writer_core_trywrlock(c) == 0, 1))
		return 0;
	return hws_rw_writer_core_wrlock_slow(c, w, deadline_ns);
}

static inline void hws_rw_writer_core_wrunlock(hws_rw_writer_core_t *c)
{
	/* relaxed: only the holder writes owner; the release below orders it. */
	atomic_store_explicit(&c->owner, 0, memory_order_relaxed);
	/* release: pairs with the acquire entries of the next readers and
	 * writer; an RMW because readers may be undoing entries. */
	atomic_fetch_and_explicit(&c->state, ~HWS_RW_W, memory_order_release);
	hws_wake32(&c->state, HWS_WAKE_ALL);
}

/* As hws_rw_reader_core_unlock: the write lock if this thread is the
 * writer, else one read lock (W may be set by a writer waiting for them);
 * always 0, and a misused unlock changes nothing. */
static inline int hws_rw_writer_core_unlock(hws_rw_writer_core_t *c)
{
	/* relaxed: W with our own id in owner can only be our own writes. */
	uint32_t v = atomic_load_explicit(&c->state, memory_order_relaxed);
	if ((v & HWS_RW_W) &&
	    atomic_load_explicit(&c->owner, memory_order_relaxed) == hws_rw_self()) {
		hws_rw_writer_core_wrunlock(c);
		return 0;
	}
	if (v & HWS_RW_COUNT)
		hws_rw_reader_leave(&c->state);
	return 0;
}

HWS_RW_TYPED(writer)

#ifdef __cplusplus
}
#endif
#endif

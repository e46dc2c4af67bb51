/* Reader-preferring reader-writer lock ("reader"), the semantics of glibc's
 * default rwlock: a reader enters whenever no writer holds the lock, even
 * while writers wait, so a thread may take the read lock recursively.  A
 * steady stream of readers can keep writers out (as with glibc).
 *
 * State: the word of rwlock_common.h (W, WB, readers) and the writer's id,
 * 8 bytes, all zero when free.  Readers wait while W is set; writers wait
 * until the word has neither W nor readers.  A writer that waits on readers
 * first sets WB, so only the last reader out of such a lock calls the wake;
 * the writer's unlock clears W and WB and wakes everyone (readers and
 * writers race for the lock again; writers that lose set WB again).
 * Waits go through hws_wait_while_eq32 on the state word only.
 */
#ifndef HWSYNC_RWLOCK_READER_H
#define HWSYNC_RWLOCK_READER_H

#include <hwsync/rwlock_common.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct hws_rw_reader_core {
	_Atomic uint32_t state;    /* W | WB | readers (rwlock_common.h) */
	_Atomic uint32_t owner;    /* hws_rw_self() of the writer, 0 when none */
} hws_rw_reader_core_t;

/* Out of line (lib/prims/rwlock_reader.c): the waiting paths; the first
 * takes a read lock whose entry saw v and did not stand. */
int hws_rw_reader_core_rdlock_refused(hws_rw_reader_core_t *c, uint32_t v,
				      const hws_wait_t *w, uint64_t deadline_ns);
int hws_rw_reader_core_rdlock_slow(hws_rw_reader_core_t *c, const hws_wait_t *w,
				   uint64_t deadline_ns);
int hws_rw_reader_core_wrlock_slow(hws_rw_reader_core_t *c, const hws_wait_t *w,
				   uint64_t deadline_ns);

static inline void hws_rw_reader_core_init(hws_rw_reader_core_t *c)
{
	atomic_init(&c->state, 0);
	atomic_init(&c->owner, 0);
}

/* 0, EBUSY (a writer holds it) or EAGAIN (too many readers). */
static inline int hws_rw_reader_core_tryrdlock(hws_rw_reader_core_t *c)
{
	return hws_rw_reader_enter(&c->state);
}

/* 0, EDEADLK (this thread holds the write lock), EAGAIN, or ETIMEDOUT. */
static inline int hws_rw_reader_core_rdlock(hws_rw_reader_core_t *c, const hws_wait_t *w,
					    uint64_t deadline_ns)
{
	/* acquire: as in hws_rw_reader_enter.  The undo and the wait are out
	 * of line, so that the entry itself needs no stack frame. */
	uint32_t v = atomic_fetch_add_explicit(&c->state, 1, memory_order_acquire);
	if (__builtin_expect(hws_rw_reader_entered(v), 1))
		return 0;
	return hws_rw_reader_core_rdlock_refused(c, v, w, deadline_ns);
}

/* 0 or EBUSY. */
static inline int hws_rw_reader_core_trywrlock(hws_rw_reader_core_t *c)
{
	/* relaxed: a guess for the CAS, which decides. */
	uint32_t v = atomic_load_explicit(&c->state, memory_order_relaxed);
	if (v & (HWS_RW_W | HWS_RW_COUNT))
		return EBUSY;
	/* acquire: pairs with the release of the last reader or writer. */
	if (!atomic_compare_exchange_strong_explicit(&c->state, &v, HWS_RW_W,
						     memory_order_acquire, memory_order_relaxed))
		return EBUSY;
	/* relaxed: read back only by this thread (EDEADLK, unlock), or by
	 * others who compare it with their own, different, id. */
	atomic_store_explicit(&c->owner, hws_rw_self(), memory_order_relaxed);
	return 0;
}

/* 0, EDEADLK (this thread holds the write lock) or ETIMEDOUT. */
static inline int hws_rw_reader_core_wrlock(hws_rw_reader_core_t *c, const hws_wait_t *w,
					    uint64_t deadline_ns)
{
	uint32_t v = 0;
	/* acquire: pairs with the release of the last reader or writer. */
	if (__builtin_expect(atomic_compare_exchange_strong_explicit(&c->state, &v, HWS_RW_W,
								     memory_order_acquire,
								     memory_order_relaxed), 1)) {
		/* relaxed: see trywrlock. */
		atomic_store_explicit(&c->owner, hws_rw_self(), memory_order_relaxed);
		return 0;
	}
	return hws_rw_reader_core_wrlock_slow(c, w, deadline_ns);
}

static inline void hws_rw_reader_core_wrunlock(hws_rw_reader_core_t *c)
{
	/* relaxed: only the holder writes owner; the release below orders it. */
	atomic_store_explicit(&c->owner, 0, memory_order_relaxed);
	/* release: pairs with the acquire entries of the next readers and
	 * writer.  An RMW, not a store: readers that found W are undoing their
	 * entries in the same word. */
	atomic_fetch_and_explicit(&c->state, ~(HWS_RW_W | HWS_RW_WB), memory_order_release);
	hws_wake32(&c->state, HWS_WAKE_ALL);
}

/* Unlock whatever this thread holds: the write lock if it is the writer,
 * else one read lock.  Always 0, as glibc: an unlock of a free lock, or of
 * another thread's write lock, changes nothing. */
static inline int hws_rw_reader_core_unlock(hws_rw_reader_core_t *c)
{
	/* relaxed: W and our own id in owner can only be our own writes. */
	uint32_t v = atomic_load_explicit(&c->state, memory_order_relaxed);
	if (v & HWS_RW_W) {
		if (atomic_load_explicit(&c->owner, memory_order_relaxed) == hws_rw_self())
			hws_rw_reader_core_wrunlock(c);
		return 0;
	}
	if (v & HWS_RW_COUNT)
		hws_rw_reader_leave(&c->state);
	return 0;
}

HWS_RW_TYPED(reader)

#ifdef __cplusplus
}
#endif
#endif

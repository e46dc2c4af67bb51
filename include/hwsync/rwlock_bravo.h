/* BRAVO ([BRAVO]) over the reader-preferring lock ("bravo"): readers that
 * do not write a shared line.
 *
 * While the lock is read-biased (`rbias`), a reader publishes itself in one
 * slot of a process-wide table (HWS_RW_BRAVO_SLOTS slots), the slot chosen
 * by a hash of the lock's address and the thread, and takes nothing in the
 * lock itself: readers of one lock on different CPUs write different lines.
 * A writer takes the underlying lock, and if the lock is read-biased revokes
 * the bias and waits until no slot names the lock; the time that took,
 * times HWS_RW_BRAVO_INHIBIT, is how long the bias stays off, so that
 * write-heavy locks pay for revocation rarely.  A reader that took the
 * underlying lock re-enables the bias once that time has passed.
 *
 * The reader publishes (CAS of its slot) and then reads `rbias`; the writer
 * clears `rbias` and then reads the slots.  Both sides are seq_cst, so at
 * least one sees the other: the reader finds the bias gone and withdraws
 * into the underlying lock, or the writer finds the reader's slot and waits
 * for it ([DEKKER]).
 *
 * Recursion: a default rwlock must allow a thread to read-lock again while
 * a writer waits.  A reader that finds its own slot holding this lock counts
 * the nesting in the slot (`depth`), never asking the underlying lock, so
 * it cannot queue behind a writer that waits for its slot.  The slot keeps
 * the reader's id, so that a thread whose slot for this lock another thread
 * took (a collision of the hash) does not mistake that reader for itself.
 *
 * A reader leaves its slot with a release store and nothing else: no
 * fence, no wake (they were a quarter of an empty read section).  A writer
 * waiting for a slot therefore polls it, as [BRAVO]'s does: pausing, then,
 * under a policy that sleeps, in timed naps that nobody ends early.
 * State in the lock: 24 bytes, all zero when free (bias off until the
 * first reader turns it on).
 */
#ifndef HWSYNC_RWLOCK_BRAVO_H
#define HWSYNC_RWLOCK_BRAVO_H

#include <stddef.h>
#include <hwsync/rwlock_reader.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A power of two.  A writer that revokes the bias reads the whole table,
 * so it is small: 1024 slots of 16 bytes (the paper's 4096 of 8 bytes are
 * 32 KiB); two threads of one lock share a slot only when their ids are
 * equal modulo the table's lines (256 of 64 bytes), and the second then
 * reads through the underlying lock. */
#define HWS_RW_BRAVO_SLOTS 1024u
#define HWS_RW_BRAVO_INHIBIT 9u    /* [BRAVO]'s N */

typedef struct hws_rw_bravo_core {
	hws_rw_reader_core_t rw;          /* the underlying lock */
	_Atomic uint32_t rbias;           /* readers may use the slots */
	uint32_t pad;
	_Atomic uint64_t inhibit_until;   /* hws_tsc(): no bias before this */
} hws_rw_bravo_core_t;

struct hws_rw_bravo_slot {
	_Atomic(uintptr_t) lock;   /* the lock read through this slot, or 0 */
	_Atomic uint32_t owner;    /* its reader's hws_rw_self(), 0 while free */
	uint32_t depth;            /* read locks nested in the first; the owner's
				    * only, 0 when it frees the slot (the next
				    * owner's CAS acquires that) */
};
extern struct hws_rw_bravo_slot hws_rw_bravo_slots[HWS_RW_BRAVO_SLOTS];

int hws_rw_bravo_core_rdlock_slow(hws_rw_bravo_core_t *c, const hws_wait_t *w,
				  uint64_t deadline_ns, int try_only);
int hws_rw_bravo_core_wrlock(hws_rw_bravo_core_t *c, const hws_wait_t *w, uint64_t deadline_ns);
int hws_rw_bravo_core_trywrlock(hws_rw_bravo_core_t *c);

static inline void hws_rw_bravo_core_init(hws_rw_bravo_core_t *c)
{
	hws_rw_reader_core_init(&c->rw);
	atomic_init(&c->rbias, 0);
	c->pad = 0;
	atomic_init(&c->inhibit_until, 0);
}

/* The lock's hash picks a slot and the thread's id moves it by whole
 * lines, so that the readers of one lock write different lines (up to
 * 256 threads, with 64-byte lines).  The multiply needs the lock only,
 * so it does not wait for the id's load. */
static inline struct hws_rw_bravo_slot *hws_rw_bravo_slot_of(const void *lock, uint32_t self)
{
	const uint32_t per_line = HWS_CACHELINE / sizeof(struct hws_rw_bravo_slot);
	uint32_t h = (uint32_t)((uint64_t)(uintptr_t)lock * 0x9e3779b97f4a7c15ull >> 40);
	return &hws_rw_bravo_slots[(h ^ self * per_line) & (HWS_RW_BRAVO_SLOTS - 1)];
}

/* Empty a slot this thread filled.  No wake: a waiting writer polls. */
static inline void hws_rw_bravo_slot_free(struct hws_rw_bravo_slot *s)
{
	/* relaxed: the release store of lock below publishes. */
	atomic_store_explicit(&s->owner, 0, memory_order_relaxed);
	/* release: pairs with the writer's loads of the slot in drain (seq_cst
	 * and acquire), so the read section happens before the write section. */
	atomic_store_explicit(&s->lock, 0, memory_order_release);
}

/* Whether s holds the lock me for this thread (self).  relaxed: a slot
 * holding this lock with our id is our own doing. */
static inline int hws_rw_bravo_mine(const struct hws_rw_bravo_slot *s, uintptr_t me,
				    uint32_t self)
{
	uintptr_t lock = atomic_load_explicit(&s->lock, memory_order_relaxed);
	uint32_t owner = atomic_load_explicit(&s->owner, memory_order_relaxed);
	return (lock == me) & (owner == self);   /* one branch, not two */
}

/* The fast path: 1 if the read lock was taken through the slot table. */
static inline int hws_rw_bravo_core_rdfast(hws_rw_bravo_core_t *c)
{
	uint32_t self = hws_rw_self();
	struct hws_rw_bravo_slot *s = hws_rw_bravo_slot_of(c, self);
	uintptr_t me = (uintptr_t)c, z = 0;

	if (__builtin_expect(hws_rw_bravo_mine(s, me, self), 0)) {   /* nested */
		if (s->depth == HWS_RW_MAX_READERS - 1)
			return 0;
		s->depth++;
		return 1;
	}
	/* relaxed: a hint; the seq_cst load after publishing decides. */
	if (!atomic_load_explicit(&c->rbias, memory_order_relaxed))
		return 0;
	/* seq_cst: the reader's half of the publish/revoke handshake (top). */
	if (!atomic_compare_exchange_strong_explicit(&s->lock, &z, me, memory_order_seq_cst,
						     memory_order_relaxed))
		return 0;
	/* relaxed: read only by threads that hash to this slot, each comparing
	 * it with its own id, which only that thread ever stores. */
	atomic_store_explicit(&s->owner, self, memory_order_relaxed);
	/* seq_cst: see top.  Reading 1 also acquires from the reader that set
	 * the bias after the last writer left. */
	if (atomic_load_explicit(&c->rbias, memory_order_seq_cst))
		return 1;
	hws_rw_bravo_slot_free(s);   /* revoked meanwhile: withdraw */
	return 0;
}

static inline int hws_rw_bravo_core_rdlock(hws_rw_bravo_core_t *c, const hws_wait_t *w,
					   uint64_t deadline_ns)
{
	if (__builtin_expect(hws_rw_bravo_core_rdfast(c), 1))
		return 0;
	return hws_rw_bravo_core_rdlock_slow(c, w, deadline_ns, 0);
}

static inline int hws_rw_bravo_core_tryrdlock(hws_rw_bravo_core_t *c)
{
	if (hws_rw_bravo_core_rdfast(c))
		return 0;
	return hws_rw_bravo_core_rdlock_slow(c, NULL, 0, 1);
}

int hws_rw_bravo_core_unlock_slow(hws_rw_bravo_core_t *c);

static inline int hws_rw_bravo_core_unlock(hws_rw_bravo_core_t *c)
{
	uint32_t self = hws_rw_self();
	struct hws_rw_bravo_slot *s = hws_rw_bravo_slot_of(c, self);

	if (__builtin_expect(!hws_rw_bravo_mine(s, (uintptr_t)c, self), 0))
		return hws_rw_bravo_core_unlock_slow(c);
	if (s->depth == 0)
		hws_rw_bravo_slot_free(s);
	else
		s->depth--;
	return 0;
}

HWS_RW_TYPED(bravo)

#ifdef __cplusplus
}
#endif
#endif

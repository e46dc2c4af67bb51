/* Helpers shared by the reader-writer lock cores (rwlock_<kind>.h).
 *
 * The reader-preferring and writer-preferring cores keep their state in one
 * 32-bit word that every waiter waits on:
 *
 *   bit 31      HWS_RW_W: a writer holds the lock (writer-preferring: or has
 *               claimed it and waits for the readers inside to leave)
 *   bit 30      HWS_RW_WB: a writer sleeps until the readers leave
 *               (reader-preferring only), so the last reader out wakes it
 *   bits 0-29   the readers inside, HWS_RW_MAX_READERS at most (then EAGAIN);
 *               the bits above that limit absorb the entries of threads that
 *               find the limit reached and undo, so they never carry into WB
 *
 * Readers enter with one fetch-and-add, as glibc's rwlock does, and undo it
 * when they find the writer bit; an undo is a read unlock.  The writer's
 * thread id sits in a word of its own (`owner`), so that a thread that asks
 * for a lock it holds for writing gets EDEADLK, as from glibc.  The id is a
 * number this library gives each thread (hws_rw_self), not the kernel's tid,
 * so it stays right in the child of a fork.
 */
#ifndef HWSYNC_RWLOCK_COMMON_H
#define HWSYNC_RWLOCK_COMMON_H

#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>
#include <hwsync/wait.h>

#ifdef __cplusplus
extern "C" {
#endif

#define HWS_RW_W 0x80000000u
#define HWS_RW_WB 0x40000000u
#define HWS_RW_COUNT 0x3fffffffu         /* the readers' bits */
#define HWS_RW_MAX_READERS 0x1fffffffu   /* as glibc's limit, 2^29 - 1 */

/* This thread's id for the rwlocks (never 0). */
extern _Thread_local uint32_t hws_rw_tid;
uint32_t hws_rw_self_slow(void);
static inline uint32_t hws_rw_self(void)
{
	uint32_t t = hws_rw_tid;
	return t ? t : hws_rw_self_slow();
}

/* Leave as a reader (also the undo of an entry that found a writer): wake
 * the waiters when this was the last reader and a writer waits for that. */
static inline void hws_rw_reader_leave(_Atomic uint32_t *state)
{
	/* release: pairs with the writer's acquire loads of the state that see
	 * the count reach 0, so the read section happens before the write. */
	uint32_t v = atomic_fetch_sub_explicit(state, 1, memory_order_release) - 1;
	if ((v & HWS_RW_COUNT) == 0 && (v & (HWS_RW_W | HWS_RW_WB)))
		hws_wake32(state, HWS_WAKE_ALL);
}

/* A reader's entry by fetch-and-add stands when the state it added to, v,
 * had no writer and room for one more reader. */
static inline int hws_rw_reader_entered(uint32_t v)
{
	return !(v & HWS_RW_W) && (v & HWS_RW_COUNT) < HWS_RW_MAX_READERS;
}

/* An entry that saw v and did not stand: undo it; EBUSY (a writer holds or
 * claimed the lock) or EAGAIN (too many readers). */
static inline int hws_rw_reader_refused(_Atomic uint32_t *state, uint32_t v)
{
	hws_rw_reader_leave(state);
	return (v & HWS_RW_W) ? EBUSY : EAGAIN;
}

/* One reader entry by fetch-and-add: 0, EBUSY (the entry was undone) or
 * EAGAIN. */
static inline int hws_rw_reader_enter(_Atomic uint32_t *state)
{
	/* acquire: pairs with the writer's release of the W bit, so the last
	 * write section happens before this read section. */
	uint32_t v = atomic_fetch_add_explicit(state, 1, memory_order_acquire);
	if (__builtin_expect(hws_rw_reader_entered(v), 1))
		return 0;
	return hws_rw_reader_refused(state, v);
}

/* The typed form of a core: the words and the policy they wait with, and
 * its calls (deadlines in ns of CLOCK_MONOTONIC, or HWS_FOREVER). */
#define HWS_RW_TYPED(k)                                                              \
	typedef struct hws_rw_##k {                                                  \
		hws_rw_##k##_core_t core;                                            \
		const hws_wait_t *wait;                                              \
	} hws_rw_##k##_t;                                                            \
	static inline void hws_rw_##k##_init(hws_rw_##k##_t *l, const hws_wait_t *w) \
	{                                                                            \
		hws_rw_##k##_core_init(&l->core);                                    \
		l->wait = w;                                                         \
	}                                                                            \
	static inline int hws_rw_##k##_rdlock(hws_rw_##k##_t *l)                     \
	{                                                                            \
		return hws_rw_##k##_core_rdlock(&l->core, l->wait, HWS_FOREVER);     \
	}                                                                            \
	static inline int hws_rw_##k##_timedrdlock_ns(hws_rw_##k##_t *l, uint64_t dl) \
	{                                                                            \
		return hws_rw_##k##_core_rdlock(&l->core, l->wait, dl);              \
	}                                                                            \
	static inline int hws_rw_##k##_tryrdlock(hws_rw_##k##_t *l)                  \
	{                                                                            \
		return hws_rw_##k##_core_tryrdlock(&l->core);                        \
	}                                                                            \
	static inline int hws_rw_##k##_wrlock(hws_rw_##k##_t *l)                     \
	{                                                                            \
		return hws_rw_##k##_core_wrlock(&l->core, l->wait, HWS_FOREVER);     \
	}                                                                            \
	static inline int hws_rw_##k##_timedwrlock_ns(hws_rw_##k##_t *l, uint64_t dl) \
	{                                                                            \
		return hws_rw_##k##_core_wrlock(&l->core, l->wait, dl);              \
	}                                                                            \
	static inline int hws_rw_##k##_trywrlock(hws_rw_##k##_t *l)                  \
	{                                                                            \
		return hws_rw_##k##_core_trywrlock(&l->core);                        \
	}                                                                            \
	static inline int hws_rw_##k##_unlock(hws_rw_##k##_t *l)                     \
	{                                                                            \
		return hws_rw_##k##_core_unlock(&l->core);                           \
	}

#ifdef __cplusplus
}
#endif
#endif

/* hwsync event: condition wait / notify ([AK08]), generalised to any number
 * of events per process and any number of waiters.
 *
 *   uint32_t e = hws_event_epoch(ev);     // before checking the condition
 *   if (!condition) hws_event_wait(ev, e); // returns once notified after e
 *   ...
 *   make condition true; hws_event_notify_all(ev);
 *
 * The epoch makes a notify that lands between reading the epoch and waiting
 * impossible to lose: every notify advances the epoch, and a wait returns at
 * once when the epoch is no longer the one passed in.
 *
 * notify_all wakes every thread waiting at the time of the call.  notify_one
 * wakes one of them (exactly one when all of them were already waiting; a
 * waiter whose epoch read races with the notify may also return, which the
 * epoch contract allows).  With nobody waiting a notify costs one atomic
 * increment and one load of the waiter count: no system call, no lock.
 *
 * Two forms:
 *  - hws_event_t: opaque, created by name of policy (hws_event_create).
 *  - struct hws_event_s: the same object for embedding, initialised with a
 *    resolved hws_wait_t; epoch and the notify fast paths are inline.
 * Deadlines are absolute CLOCK_MONOTONIC times; timed waits return ETIMEDOUT.
 */
#ifndef HWSYNC_EVENT_H
#define HWSYNC_EVENT_H

#include <stdint.h>
#include <time.h>
#include <hwsync/arch.h>
#include <hwsync/wait.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct hws_event hws_event_t;

int hws_event_create(hws_event_t **ev, const char *wait_policy);
/* The same with a policy parsed once (hws_wait_init); the event keeps a
 * copy.  A NULL policy is EINVAL. */
int hws_event_create_with(hws_event_t **ev, const hws_wait_t *wait_policy);
uint32_t hws_event_epoch(const hws_event_t *ev);
int hws_event_wait(hws_event_t *ev, uint32_t epoch);
int hws_event_timed(hws_event_t *ev, uint32_t epoch, const struct timespec *abs_deadline);
int hws_event_notify_one(hws_event_t *ev);
int hws_event_notify_all(hws_event_t *ev);
void hws_event_destroy(hws_event_t *ev);

/* ---- typed, embeddable form -------------------------------------------
 * seq is the word waiters wait on; waiters counts the threads registered in
 * a wait.  The slow-path state (tokens handed out by notify_one/all, guarded
 * by a tiny lock) lives on a second line so that registering does not
 * disturb the line polled by waiters more than once. */
#ifndef __cplusplus
struct hws_event_s {
	_Atomic uint32_t seq HWS_ALIGNED_LINE;  /* epoch: advanced by every notify */
	_Atomic uint32_t waiters;               /* threads registered in a wait */
	_Atomic uint32_t lock HWS_ALIGNED_LINE; /* guards tokens, slow paths only */
	uint32_t tokens;                        /* wake-ups owed to registered waiters */
	hws_wait_t wait;
};

/* Slow paths (library). */
int hws_event_s_wait(struct hws_event_s *ev, uint32_t epoch, uint64_t deadline_ns);
void hws_event_s_grant(struct hws_event_s *ev, int all);

static inline void hws_event_s_init(struct hws_event_s *ev, const hws_wait_t *w)
{
	atomic_init(&ev->seq, 0);
	atomic_init(&ev->waiters, 0);
	atomic_init(&ev->lock, 0);
	ev->tokens = 0;
	ev->wait = *w;
}

static inline uint32_t hws_event_s_epoch(const struct hws_event_s *ev)
{
	/* acquire: pairs with the increment in notify, so a condition written
	 * before a notify that we already see here is visible too; a condition
	 * check that misses it therefore holds an epoch from before the notify. */
	return atomic_load_explicit(&ev->seq, memory_order_acquire);
}

/* Advance the epoch; seq_cst on both so that with the waiter's seq_cst
 * register-then-recheck one side always sees the other ([DEKKER]): either the
 * waiter sees the new epoch, or we see it registered and hand it a token. */
static inline void hws_event_s_notify(struct hws_event_s *ev, int all)
{
	atomic_fetch_add_explicit(&ev->seq, 1, memory_order_seq_cst);
	if (atomic_load_explicit(&ev->waiters, memory_order_seq_cst) != 0)
		hws_event_s_grant(ev, all);
}

static inline void hws_event_s_notify_one(struct hws_event_s *ev)
{
	hws_event_s_notify(ev, 0);
}

static inline void hws_event_s_notify_all(struct hws_event_s *ev)
{
	hws_event_s_notify(ev, 1);
}
#endif

#ifdef __cplusplus
}
#endif
#endif

/* 1spinner lock (paper 004, Alg. 2): only one waiter polls the lock word.
 *
 * The lock is a head word (free/held) and a tail (last arrival).  A waiter
 * swaps its node into the tail, waits on its predecessor's node until the
 * predecessor has *acquired* the lock, and only then waits on `head` for the
 * release.  So at most one thread ever waits on the lock word, the others
 * each on a different node; release is a single store to `head`, and the
 * holder never needs to know its successor.
 *
 * Departure from the paper: it names the predecessor by (cpu id, 8-bit
 * generation of a per-cpu word).  A generation that small can wrap while a
 * successor is descheduled, and the successor then waits on the wrong event.
 * Here a thread's "monitor" is a pool node handed over CLH-style: the
 * successor adopts its predecessor's node once it has moved past it, so a
 * node is never reused while anyone may read it and no generation is needed.
 * try and timed abandon a queue position as in CLH-try (see lock_clh.h).
 * State: two 32-bit words (8 bytes).  The policy must outlive the lock.
 */
#ifndef HWSYNC_LOCK_1SPINNER_H
#define HWSYNC_LOCK_1SPINNER_H

#include <hwsync/lock_common.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct hws_1spinner {
	_Atomic uint32_t head;     /* 0 free, 1 held */
	_Atomic uint32_t tail;     /* node index of the last arrival, 0 = never used */
	const hws_wait_t *wait;
} hws_1spinner_t;

int hws_1spinner_init(hws_1spinner_t *l, const hws_wait_t *w);
int hws_1spinner_acquire(hws_1spinner_t *l);
int hws_1spinner_try(hws_1spinner_t *l);
int hws_1spinner_timed_ns(hws_1spinner_t *l, uint64_t deadline_ns);
int hws_1spinner_release(hws_1spinner_t *l);
void hws_1spinner_destroy(hws_1spinner_t *l);
HWS_LOCK_TIMED_WRAPPER(1spinner)

#ifdef __cplusplus
}
#endif
#endif

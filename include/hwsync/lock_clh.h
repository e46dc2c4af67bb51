/* CLH queue lock (Craig; Landin & Hagersten) with abandonable nodes.
 *
 * A waiter swaps its node into the tail and waits on its predecessor's node
 * until that one is released; release is one store to the holder's own node.
 * The node passed over becomes the acquirer's spare (CLH node recycling), so
 * no node is ever reused while someone may read it.
 *
 * try and timed use the abandonment of Scott's CLH-try: a waiter that gives
 * up either swings the tail back to its predecessor (nobody queued behind
 * it) or marks its node "abandoned, predecessor = P" so that its successor
 * skips it and waits on P instead.  Giving up is therefore bounded in time
 * and the queue stays FIFO for those who stay.  Nodes come from the library's
 * node pool; callers never pass one.  The policy must outlive the lock.
 */
#ifndef HWSYNC_LOCK_CLH_H
#define HWSYNC_LOCK_CLH_H

#include <hwsync/lock_common.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct hws_clh {
	_Atomic uint32_t tail;     /* node index of the last arrival, 0 = never used */
	uint32_t holder;           /* node of the holder (written by it only) */
	const hws_wait_t *wait;
} hws_clh_t;

int hws_clh_init(hws_clh_t *l, const hws_wait_t *w);
int hws_clh_acquire(hws_clh_t *l);
int hws_clh_try(hws_clh_t *l);
int hws_clh_timed_ns(hws_clh_t *l, uint64_t deadline_ns);
int hws_clh_release(hws_clh_t *l);
void hws_clh_destroy(hws_clh_t *l);
HWS_LOCK_TIMED_WRAPPER(clh)

#ifdef __cplusplus
}
#endif
#endif

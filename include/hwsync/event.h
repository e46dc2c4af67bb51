/* hwsync event: condition wait / notify (paper 000), generalised to any number
 * of events per process and any number of waiters.
 *
 *   uint32_t e = hws_event_epoch(ev);     // before checking the condition
 *   if (!condition) hws_event_wait(ev, e); // returns once notified after e
 *   ...
 *   make condition true; hws_event_notify_all(ev);
 *
 * The epoch makes a notify that lands between reading the epoch and waiting
 * impossible to lose.
 */
#ifndef HWSYNC_EVENT_H
#define HWSYNC_EVENT_H

#include <stdint.h>
#include <time.h>
#include <hwsync/wait.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct hws_event hws_event_t;

int hws_event_create(hws_event_t **ev, const char *wait_policy);
uint32_t hws_event_epoch(const hws_event_t *ev);
int hws_event_wait(hws_event_t *ev, uint32_t epoch);
int hws_event_timed(hws_event_t *ev, uint32_t epoch, const struct timespec *abs_deadline);
int hws_event_notify_one(hws_event_t *ev);
int hws_event_notify_all(hws_event_t *ev);
void hws_event_destroy(hws_event_t *ev);

#ifdef __cplusplus
}
#endif
#endif

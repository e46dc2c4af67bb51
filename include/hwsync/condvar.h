/* hwsync condition variable: works with any hwsync lock. Deadlines are
 * absolute CLOCK_MONOTONIC. Spurious wake-ups are allowed, as with POSIX. */
#ifndef HWSYNC_CONDVAR_H
#define HWSYNC_CONDVAR_H

#include <time.h>
#include <hwsync/lock.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct hws_condvar hws_condvar_t;

int hws_condvar_create(hws_condvar_t **cv, const char *wait_policy);
int hws_condvar_wait(hws_condvar_t *cv, hws_lock_t *l);
int hws_condvar_timed(hws_condvar_t *cv, hws_lock_t *l, const struct timespec *abs_deadline);
int hws_condvar_signal(hws_condvar_t *cv);
int hws_condvar_broadcast(hws_condvar_t *cv);
void hws_condvar_destroy(hws_condvar_t *cv);

#ifdef __cplusplus
}
#endif
#endif

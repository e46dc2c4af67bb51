/* hwsync counting semaphore, generic over the wait policy.  Deadlines are
 * absolute CLOCK_MONOTONIC.  hws_sem_try returns EAGAIN when the count is zero
 * (as sem_trywait); timed returns ETIMEDOUT; post returns EOVERFLOW at
 * HWS_SEM_VALUE_MAX; create returns EINVAL for an initial value above it. */
#ifndef HWSYNC_SEM_H
#define HWSYNC_SEM_H

#include <time.h>
#include <hwsync/wait.h>

#ifdef __cplusplus
extern "C" {
#endif

#define HWS_SEM_VALUE_MAX 0x7fffffffu

typedef struct hws_sem hws_sem_t;

int hws_sem_create(hws_sem_t **s, unsigned initial, const char *wait_policy);
int hws_sem_wait(hws_sem_t *s);
int hws_sem_try(hws_sem_t *s);
int hws_sem_timed(hws_sem_t *s, const struct timespec *abs_deadline);
int hws_sem_post(hws_sem_t *s);
unsigned hws_sem_value(const hws_sem_t *s);
void hws_sem_destroy(hws_sem_t *s);

#ifdef __cplusplus
}
#endif
#endif

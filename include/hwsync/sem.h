/* hwsync counting semaphore. Deadlines are absolute CLOCK_MONOTONIC. */
#ifndef HWSYNC_SEM_H
#define HWSYNC_SEM_H

#include <time.h>
#include <hwsync/wait.h>

#ifdef __cplusplus
extern "C" {
#endif

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

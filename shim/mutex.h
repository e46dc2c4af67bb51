/* What the condition variable needs of the shim's mutexes (mutex.c). */
#ifndef HWS_PRELOAD_MUTEX_H
#define HWS_PRELOAD_MUTEX_H

#include <pthread.h>

/* The owner of a pthread_mutex_t, kept in glibc's __kind word (mutex.c). */
#define KIND_SHIM 0x0005A40C
#define KIND_NATIVE_NORMAL 512     /* glibc's PTHREAD_MUTEX_NO_ELISION_NP */
#define KIND_DESTROYED (-1)        /* what glibc's pthread_mutex_destroy leaves */

/* Interposed mutex functions, for the condvar (dispatch shim or native). */
int hws_shim_mutex_lock_any(pthread_mutex_t *m);
int hws_shim_mutex_unlock_any(pthread_mutex_t *m);

#endif

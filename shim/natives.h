/* The native functions the shim stands in front of (natives.c): glibc's
 * pthread and semaphore functions, resolved with dlvsym/dlsym RTLD_NEXT at
 * start-up, and libgomp's, resolved on first use. */
#ifndef HWS_PRELOAD_NATIVES_H
#define HWS_PRELOAD_NATIVES_H

#include <pthread.h>
#include <semaphore.h>
#include <time.h>

struct hws_native {
	int (*mutex_init)(pthread_mutex_t *, const pthread_mutexattr_t *);
	int (*mutex_destroy)(pthread_mutex_t *);
	int (*mutex_lock)(pthread_mutex_t *);
	int (*mutex_trylock)(pthread_mutex_t *);
	int (*mutex_timedlock)(pthread_mutex_t *, const struct timespec *);
	int (*mutex_clocklock)(pthread_mutex_t *, clockid_t, const struct timespec *);
	int (*mutex_unlock)(pthread_mutex_t *);
	int (*cond_init)(pthread_cond_t *, const pthread_condattr_t *);
	int (*cond_destroy)(pthread_cond_t *);
	int (*cond_wait)(pthread_cond_t *, pthread_mutex_t *);
	int (*cond_timedwait)(pthread_cond_t *, pthread_mutex_t *, const struct timespec *);
	int (*cond_clockwait)(pthread_cond_t *, pthread_mutex_t *, clockid_t,
			      const struct timespec *);
	int (*cond_signal)(pthread_cond_t *);
	int (*cond_broadcast)(pthread_cond_t *);
	int (*spin_init)(pthread_spinlock_t *, int);
	int (*spin_destroy)(pthread_spinlock_t *);
	int (*spin_lock)(pthread_spinlock_t *);
	int (*spin_trylock)(pthread_spinlock_t *);
	int (*spin_unlock)(pthread_spinlock_t *);
	int (*barrier_init)(pthread_barrier_t *, const pthread_barrierattr_t *, unsigned);
	int (*barrier_destroy)(pthread_barrier_t *);
	int (*barrier_wait)(pthread_barrier_t *);
	int (*sem_init)(sem_t *, int, unsigned);
	int (*sem_destroy)(sem_t *);
	int (*sem_wait)(sem_t *);
	int (*sem_trywait)(sem_t *);
	int (*sem_timedwait)(sem_t *, const struct timespec *);
	int (*sem_clockwait)(sem_t *, clockid_t, const struct timespec *);
	int (*sem_post)(sem_t *);
	int (*sem_getvalue)(sem_t *, int *);
	int (*rwlock_init)(pthread_rwlock_t *, const pthread_rwlockattr_t *);
	int (*rwlock_destroy)(pthread_rwlock_t *);
	int (*rwlock_rdlock)(pthread_rwlock_t *);
	int (*rwlock_tryrdlock)(pthread_rwlock_t *);
	int (*rwlock_timedrdlock)(pthread_rwlock_t *, const struct timespec *);
	int (*rwlock_clockrdlock)(pthread_rwlock_t *, clockid_t, const struct timespec *);
	int (*rwlock_wrlock)(pthread_rwlock_t *);
	int (*rwlock_trywrlock)(pthread_rwlock_t *);
	int (*rwlock_timedwrlock)(pthread_rwlock_t *, const struct timespec *);
	int (*rwlock_clockwrlock)(pthread_rwlock_t *, clockid_t, const struct timespec *);
	int (*rwlock_unlock)(pthread_rwlock_t *);
};
extern struct hws_native hws_native;

/* Fill hws_native (start-up thread only, before READY/OFF is published):
 * NULL, or the name of the first function that is missing (natives.c). */
const char *hws_shim_resolve_natives(void);

/* libgomp entry points, resolved on first use (libgomp may be dlopen'ed). */
void *hws_native_gomp(const char *name, const char *version);

/* Native mutex calls that work even while the shim starts (bootstrap). */
int hws_shim_native_mutex_lock(pthread_mutex_t *m);
int hws_shim_native_mutex_unlock(pthread_mutex_t *m);
int hws_shim_native_mutex_trylock(pthread_mutex_t *m);

#endif

/* Force-included into the hwsync library objects built for the shim (see
 * src/CMakeLists.txt): the library's own pthread and semaphore calls go to
 * the native implementation (native_calls.c), never to the shim's
 * interposers. */
#ifndef HWS_PRELOAD_LIB_REDIRECT_H
#define HWS_PRELOAD_LIB_REDIRECT_H
#define pthread_mutex_init hws_nat_mutex_init
#define pthread_mutex_destroy hws_nat_mutex_destroy
#define pthread_mutex_lock hws_nat_mutex_lock
#define pthread_mutex_trylock hws_nat_mutex_trylock
#define pthread_mutex_timedlock hws_nat_mutex_timedlock
#define pthread_mutex_unlock hws_nat_mutex_unlock
#define pthread_cond_init hws_nat_cond_init
#define pthread_cond_destroy hws_nat_cond_destroy
#define pthread_cond_wait hws_nat_cond_wait
#define pthread_cond_timedwait hws_nat_cond_timedwait
#define pthread_cond_signal hws_nat_cond_signal
#define pthread_cond_broadcast hws_nat_cond_broadcast
#define pthread_spin_lock hws_nat_spin_lock
#define pthread_spin_unlock hws_nat_spin_unlock
#define pthread_barrier_wait hws_nat_barrier_wait
#define sem_wait hws_nat_sem_wait
#define sem_post hws_nat_sem_post
#endif

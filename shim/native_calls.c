/* The native pthread/sem entry points the hwsync library inside the shim
 * calls instead of the interposed names (lib_redirect.h).  They work during
 * the shim's start-up too: mutex calls fall back to glibc's own exported
 * implementation, the others resolve on demand. */
#include <errno.h>
#include "shim/shim.h"

#define ENSURE(field) \
	do { \
		if (unlikely(!hws_native.field)) \
			hws_shim_on(); \
	} while (0)

int hws_nat_mutex_lock(pthread_mutex_t *m) { return hws_shim_native_mutex_lock(m); }
int hws_nat_mutex_unlock(pthread_mutex_t *m) { return hws_shim_native_mutex_unlock(m); }
int hws_nat_mutex_trylock(pthread_mutex_t *m) { return hws_shim_native_mutex_trylock(m); }

int hws_nat_mutex_init(pthread_mutex_t *m, const pthread_mutexattr_t *a)
{
	ENSURE(mutex_init);
	return hws_native.mutex_init ? hws_native.mutex_init(m, a) : ENOSYS;
}

int hws_nat_mutex_destroy(pthread_mutex_t *m)
{
	ENSURE(mutex_destroy);
	return hws_native.mutex_destroy ? hws_native.mutex_destroy(m) : 0;
}

int hws_nat_mutex_timedlock(pthread_mutex_t *m, const struct timespec *t)
{
	ENSURE(mutex_timedlock);
	return hws_native.mutex_timedlock ? hws_native.mutex_timedlock(m, t) : ENOSYS;
}

int hws_nat_cond_init(pthread_cond_t *c, const pthread_condattr_t *a)
{
	ENSURE(cond_init);
	return hws_native.cond_init ? hws_native.cond_init(c, a) : ENOSYS;
}

int hws_nat_cond_destroy(pthread_cond_t *c)
{
	ENSURE(cond_destroy);
	return hws_native.cond_destroy ? hws_native.cond_destroy(c) : 0;
}

int hws_nat_cond_wait(pthread_cond_t *c, pthread_mutex_t *m)
{
	ENSURE(cond_wait);
	return hws_native.cond_wait ? hws_native.cond_wait(c, m) : ENOSYS;
}

int hws_nat_cond_timedwait(pthread_cond_t *c, pthread_mutex_t *m, const struct timespec *t)
{
	ENSURE(cond_timedwait);
	return hws_native.cond_timedwait ? hws_native.cond_timedwait(c, m, t) : ENOSYS;
}

int hws_nat_cond_signal(pthread_cond_t *c)
{
	ENSURE(cond_signal);
	return hws_native.cond_signal ? hws_native.cond_signal(c) : ENOSYS;
}

int hws_nat_cond_broadcast(pthread_cond_t *c)
{
	ENSURE(cond_broadcast);
	return hws_native.cond_broadcast ? hws_native.cond_broadcast(c) : ENOSYS;
}

int hws_nat_spin_lock(pthread_spinlock_t *l)
{
	ENSURE(spin_lock);
	return hws_native.spin_lock ? hws_native.spin_lock(l) : ENOSYS;
}

int hws_nat_spin_unlock(pthread_spinlock_t *l)
{
	ENSURE(spin_unlock);
	return hws_native.spin_unlock ? hws_native.spin_unlock(l) : ENOSYS;
}

int hws_nat_barrier_wait(pthread_barrier_t *b)
{
	ENSURE(barrier_wait);
	return hws_native.barrier_wait ? hws_native.barrier_wait(b) : ENOSYS;
}

int hws_nat_sem_wait(sem_t *s)
{
	ENSURE(sem_wait);
	return hws_native.sem_wait ? hws_native.sem_wait(s) : -1;
}

int hws_nat_sem_post(sem_t *s)
{
	ENSURE(sem_post);
	return hws_native.sem_post ? hws_native.sem_post(s) : -1;
}

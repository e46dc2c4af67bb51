/* Resolving the native functions: the pthread/sem table (hws_native), the
 * libgomp entry points on demand, and the bootstrap mutex calls that work
 * while the table is still being filled. */
#include <dlfcn.h>
#include <stddef.h>
#include <string.h>
#include "shim/natives.h"

struct hws_native hws_native;

#if defined(__x86_64__)
#define GLIBC_BASE "GLIBC_2.2.5"
#elif defined(__aarch64__)
#define GLIBC_BASE "GLIBC_2.17"
#else
#define GLIBC_BASE NULL
#endif

/* Bootstrap for a mutex call that re-enters while dlsym runs: glibc's own
 * exported names of the implementation (not interposable by us). */
#if defined(__x86_64__) || defined(__aarch64__)
extern int hws_glibc_mutex_lock(pthread_mutex_t *);
extern int hws_glibc_mutex_unlock(pthread_mutex_t *);
extern int hws_glibc_mutex_trylock(pthread_mutex_t *);
__asm__(".symver hws_glibc_mutex_lock, __pthread_mutex_lock@" GLIBC_BASE);
__asm__(".symver hws_glibc_mutex_unlock, __pthread_mutex_unlock@" GLIBC_BASE);
__asm__(".symver hws_glibc_mutex_trylock, __pthread_mutex_trylock@" GLIBC_BASE);
#endif

/* Symbol versions to try, newest first; the default version (dlsym) last.
 * The condvar must never resolve to the pre-2.3.2 compatibility version. */
#define V_NEW "GLIBC_2.34"
#define V_COND "GLIBC_2.3.2"
#define V_CLOCK "GLIBC_2.30"
static const struct {
	const char *name;
	size_t off;
	const char *v1, *v2;
} natives[] = {
#define N(fn, field, a, b) { #fn, offsetof(struct hws_native, field), a, b }
	N(pthread_mutex_init, mutex_init, V_NEW, GLIBC_BASE),
	N(pthread_mutex_destroy, mutex_destroy, V_NEW, GLIBC_BASE),
	N(pthread_mutex_lock, mutex_lock, V_NEW, GLIBC_BASE),
	N(pthread_mutex_trylock, mutex_trylock, V_NEW, GLIBC_BASE),
	N(pthread_mutex_timedlock, mutex_timedlock, V_NEW, GLIBC_BASE),
	N(pthread_mutex_clocklock, mutex_clocklock, V_NEW, V_CLOCK),
	N(pthread_mutex_unlock, mutex_unlock, V_NEW, GLIBC_BASE),
	N(pthread_cond_init, cond_init, V_COND, NULL),
	N(pthread_cond_destroy, cond_destroy, V_COND, NULL),
	N(pthread_cond_wait, cond_wait, V_COND, NULL),
	N(pthread_cond_timedwait, cond_timedwait, V_COND, NULL),
	N(pthread_cond_clockwait, cond_clockwait, V_NEW, V_CLOCK),
	N(pthread_cond_signal, cond_signal, V_COND, NULL),
	N(pthread_cond_broadcast, cond_broadcast, V_COND, NULL),
	N(pthread_spin_init, spin_init, V_NEW, GLIBC_BASE),
	N(pthread_spin_destroy, spin_destroy, V_NEW, GLIBC_BASE),
	N(pthread_spin_lock, spin_lock, V_NEW, GLIBC_BASE),
	N(pthread_spin_trylock, spin_trylock, V_NEW, GLIBC_BASE),
	N(pthread_spin_unlock, spin_unlock, V_NEW, GLIBC_BASE),
	N(pthread_barrier_init, barrier_init, V_NEW, GLIBC_BASE),
	N(pthread_barrier_destroy, barrier_destroy, V_NEW, GLIBC_BASE),
	N(pthread_barrier_wait, barrier_wait, V_NEW, GLIBC_BASE),
	N(sem_init, sem_init, V_NEW, GLIBC_BASE),
	N(sem_destroy, sem_destroy, V_NEW, GLIBC_BASE),
	N(sem_wait, sem_wait, V_NEW, GLIBC_BASE),
	N(sem_trywait, sem_trywait, V_NEW, GLIBC_BASE),
	N(sem_timedwait, sem_timedwait, V_NEW, GLIBC_BASE),
	N(sem_clockwait, sem_clockwait, V_NEW, V_CLOCK),
	N(sem_post, sem_post, V_NEW, GLIBC_BASE),
	N(sem_getvalue, sem_getvalue, V_NEW, GLIBC_BASE),
	N(pthread_rwlock_init, rwlock_init, V_NEW, GLIBC_BASE),
	N(pthread_rwlock_destroy, rwlock_destroy, V_NEW, GLIBC_BASE),
	N(pthread_rwlock_rdlock, rwlock_rdlock, V_NEW, GLIBC_BASE),
	N(pthread_rwlock_tryrdlock, rwlock_tryrdlock, V_NEW, GLIBC_BASE),
	N(pthread_rwlock_timedrdlock, rwlock_timedrdlock, V_NEW, GLIBC_BASE),
	N(pthread_rwlock_clockrdlock, rwlock_clockrdlock, V_NEW, V_CLOCK),
	N(pthread_rwlock_wrlock, rwlock_wrlock, V_NEW, GLIBC_BASE),
	N(pthread_rwlock_trywrlock, rwlock_trywrlock, V_NEW, GLIBC_BASE),
	N(pthread_rwlock_timedwrlock, rwlock_timedwrlock, V_NEW, GLIBC_BASE),
	N(pthread_rwlock_clockwrlock, rwlock_clockwrlock, V_NEW, V_CLOCK),
	N(pthread_rwlock_unlock, rwlock_unlock, V_NEW, GLIBC_BASE),
#undef N
};

static void *resolve(const char *name, const char *v1, const char *v2)
{
	void *p = NULL;
	if (v1)
		p = dlvsym(RTLD_NEXT, name, v1);
	if (!p && v2)
		p = dlvsym(RTLD_NEXT, name, v2);
	if (!p)
		p = dlsym(RTLD_NEXT, name);
	return p;
}

/* libgomp loaded by dlopen with RTLD_LOCAL, as a dependency of a module (a
 * Python extension's OpenBLAS) is not in the global scope that RTLD_NEXT
 * searches, yet that module's calls bind to our exports: find it by its
 * soname among the loaded objects (RTLD_NOLOAD loads nothing).  The handle is
 * kept: the functions must stay valid, and libgomp is never unloaded once a
 * team has run (it leaves its threads behind). */
void *hws_native_gomp(const char *name, const char *version)
{
	void *p = resolve(name, version, NULL), *h;
	if (!p && (h = dlopen("libgomp.so.1", RTLD_LAZY | RTLD_NOLOAD))) {
		if (version)
			p = dlvsym(h, name, version);
		if (!p)
			p = dlsym(h, name);
	}
	return p;
}

const char *hws_shim_resolve_natives(void)
{
	const char *missing = NULL;
	for (size_t i = 0; i < sizeof natives / sizeof natives[0]; i++) {
		void *p = resolve(natives[i].name, natives[i].v1, natives[i].v2);
		if (!p && !missing)
			missing = natives[i].name;
		memcpy((char *)&hws_native + natives[i].off, &p, sizeof p);
	}
	return missing;
}

/* A native function pointer, usable even during start-up re-entry. */
#define NATIVE_OR(field, boot) (hws_native.field ? hws_native.field : (boot))
int hws_shim_native_mutex_lock(pthread_mutex_t *m)
{
	return NATIVE_OR(mutex_lock, hws_glibc_mutex_lock)(m);
}
int hws_shim_native_mutex_unlock(pthread_mutex_t *m)
{
	return NATIVE_OR(mutex_unlock, hws_glibc_mutex_unlock)(m);
}
int hws_shim_native_mutex_trylock(pthread_mutex_t *m)
{
	return NATIVE_OR(mutex_trylock, hws_glibc_mutex_trylock)(m);
}

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

/* Each native is the version a program linked today binds to: dlsym's
 * default.  Only the condvar names its version, because glibc keeps a
 * pre-2.3.2 compatibility condvar of another layout beside it; where that
 * version does not exist (arm64 starts at 2.17) the default is the new one.
 *
 * No lookup may fail on a current glibc: a failed dlsym or dlvsym builds its
 * error message on the program's heap and keeps a per-thread error record
 * there, so every later block of the program lands elsewhere than without
 * the shim.  Moved so, GNU libgomp's thread pool made an empty OpenMP
 * region's fork and join 17-28% slower (docs/preload.md, "The program's
 * heap"). */
#if defined(__x86_64__)
#define V_COND "GLIBC_2.3.2"
#else
#define V_COND NULL
#endif
static const struct {
	const char *name;
	size_t off;
	const char *version;   /* NULL: the default */
} natives[] = {
#define N(fn, field) { #fn, offsetof(struct hws_native, field), NULL }
#define C(fn, field) { #fn, offsetof(struct hws_native, field), V_COND }
	N(pthread_mutex_init, mutex_init),
	N(pthread_mutex_destroy, mutex_destroy),
	N(pthread_mutex_lock, mutex_lock),
	N(pthread_mutex_trylock, mutex_trylock),
	N(pthread_mutex_timedlock, mutex_timedlock),
	N(pthread_mutex_clocklock, mutex_clocklock),
	N(pthread_mutex_unlock, mutex_unlock),
	C(pthread_cond_init, cond_init),
	C(pthread_cond_destroy, cond_destroy),
	C(pthread_cond_wait, cond_wait),
	C(pthread_cond_timedwait, cond_timedwait),
	N(pthread_cond_clockwait, cond_clockwait),
	C(pthread_cond_signal, cond_signal),
	C(pthread_cond_broadcast, cond_broadcast),
	N(pthread_spin_init, spin_init),
	N(pthread_spin_destroy, spin_destroy),
	N(pthread_spin_lock, spin_lock),
	N(pthread_spin_trylock, spin_trylock),
	N(pthread_spin_unlock, spin_unlock),
	N(pthread_barrier_init, barrier_init),
	N(pthread_barrier_destroy, barrier_destroy),
	N(pthread_barrier_wait, barrier_wait),
	N(sem_init, sem_init),
	N(sem_destroy, sem_destroy),
	N(sem_wait, sem_wait),
	N(sem_trywait, sem_trywait),
	N(sem_timedwait, sem_timedwait),
	N(sem_clockwait, sem_clockwait),
	N(sem_post, sem_post),
	N(sem_getvalue, sem_getvalue),
	N(pthread_rwlock_init, rwlock_init),
	N(pthread_rwlock_destroy, rwlock_destroy),
	N(pthread_rwlock_rdlock, rwlock_rdlock),
	N(pthread_rwlock_tryrdlock, rwlock_tryrdlock),
	N(pthread_rwlock_timedrdlock, rwlock_timedrdlock),
	N(pthread_rwlock_clockrdlock, rwlock_clockrdlock),
	N(pthread_rwlock_wrlock, rwlock_wrlock),
	N(pthread_rwlock_trywrlock, rwlock_trywrlock),
	N(pthread_rwlock_timedwrlock, rwlock_timedwrlock),
	N(pthread_rwlock_clockwrlock, rwlock_clockwrlock),
	N(pthread_rwlock_unlock, rwlock_unlock),
#undef N
#undef C
};

/* name at version, else its default version. */
static void *resolve(const char *name, const char *version)
{
	void *p = version ? dlvsym(RTLD_NEXT, name, version) : NULL;
	return p ? p : dlsym(RTLD_NEXT, name);
}

/* libgomp loaded by dlopen with RTLD_LOCAL, as a dependency of a module (a
 * Python extension's OpenBLAS) is not in the global scope that RTLD_NEXT
 * searches, yet that module's calls bind to our exports: find it by its
 * soname among the loaded objects (RTLD_NOLOAD loads nothing).  The handle is
 * kept: the functions must stay valid, and libgomp is never unloaded once a
 * team has run (it leaves its threads behind). */
void *hws_native_gomp(const char *name, const char *version)
{
	void *p = resolve(name, version), *h;
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
		void *p = resolve(natives[i].name, natives[i].version);
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

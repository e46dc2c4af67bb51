/* Paired patterns: one thread takes and drops an uncontended lock through
 * the entry points the program links, which LD_PRELOAD puts in the shim,
 * and through the native ones, found in the C library or libgomp itself
 * with dlopen (RTLD_NOLOAD: the object the program already uses) and dlsym
 * on its handle, in alternated turns of TURN_PAIRS pairs.  Both are called
 * through function pointers of the entry points' own types.  Between two
 * processes the same run differs by 5-10% on a virtual machine; turns
 * within one process compare the two within about 1%, which is what an
 * uncontended path's few nanoseconds need.  Without the shim both sides are
 * the native functions: the ratio is then the method's own noise. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <string.h>
#ifdef HWS_PATTERNS_OPENMP
#include <omp.h>
#endif
#include "shim_clock.h"
#include "shim_paired.h"

#define TURN_PAIRS 200000u

/* One side: its lock and unlock, typed as the kind's entry points. */
struct side {
	int (*mutex_lock)(pthread_mutex_t *), (*mutex_unlock)(pthread_mutex_t *);
	pthread_mutex_t *mutex;
#ifdef HWS_PATTERNS_OPENMP
	void (*omp_set)(omp_lock_t *), (*omp_unset)(omp_lock_t *);
	omp_lock_t *omp;
#endif
};

/* One turn; its time in ns. */
static uint64_t turn(const struct side *s)
{
	uint64_t t0 = now_ns();
	if (s->mutex) {
		for (unsigned i = 0; i < TURN_PAIRS; i++) {
			s->mutex_lock(s->mutex);
			s->mutex_unlock(s->mutex);
		}
	}
#ifdef HWS_PATTERNS_OPENMP
	else {
		for (unsigned i = 0; i < TURN_PAIRS; i++) {
			s->omp_set(s->omp);
			s->omp_unset(s->omp);
		}
	}
#endif
	return now_ns() - t0;
}

/* dlsym on the object's handle looks in that object first. */
void *paired_native_fn(const char *object, const char *name)
{
	void *h = dlopen(object, RTLD_NOW | RTLD_NOLOAD), *f = NULL;
	if (h) {
		f = dlsym(h, name);
		dlclose(h);
	}
	return f;
}

static pthread_mutex_t linked_mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t native_mutex = PTHREAD_MUTEX_INITIALIZER;
#ifdef HWS_PATTERNS_OPENMP
static omp_lock_t linked_omp, native_omp;
#endif

int paired_run(const char *kind, uint64_t run_ns, struct paired_result *r, const char **why)
{
	struct side linked = { 0 }, native = { 0 };
	memset(r, 0, sizeof *r);
	if (!strcmp(kind, "mutex")) {
		linked.mutex_lock = pthread_mutex_lock;
		linked.mutex_unlock = pthread_mutex_unlock;
		linked.mutex = &linked_mutex;
		*(void **)&native.mutex_lock = paired_native_fn("libc.so.6", "pthread_mutex_lock");
		*(void **)&native.mutex_unlock = paired_native_fn("libc.so.6", "pthread_mutex_unlock");
		native.mutex = &native_mutex;
		if (!native.mutex_lock || !native.mutex_unlock) {
			*why = "the C library's pthread_mutex_lock was not found";
			return ENOENT;
		}
#ifdef HWS_PATTERNS_OPENMP
	} else if (!strcmp(kind, "omp-lock")) {
		void (*init)(omp_lock_t *);
		*(void **)&init = paired_native_fn("libgomp.so.1", "omp_init_lock");
		*(void **)&native.omp_set = paired_native_fn("libgomp.so.1", "omp_set_lock");
		*(void **)&native.omp_unset = paired_native_fn("libgomp.so.1", "omp_unset_lock");
		if (!init || !native.omp_set || !native.omp_unset) {
			*why = "libgomp's omp_set_lock was not found";
			return ENOENT;
		}
		omp_init_lock(&linked_omp);
		init(&native_omp);
		linked.omp_set = omp_set_lock;
		linked.omp_unset = omp_unset_lock;
		linked.omp = &linked_omp;
		native.omp = &native_omp;
#endif
	} else {
		*why = "no such paired pattern";
		return EINVAL;
	}
	/* one turn of each first, untimed: first use claims the objects */
	turn(&linked);
	turn(&native);
	uint64_t end = now_ns() + run_ns;
	for (unsigned i = 0; now_ns() < end || !r->ops; i++) {
		/* alternate which side goes first in a pair of turns */
		const struct side *a = i & 1 ? &native : &linked, *b = i & 1 ? &linked : &native;
		uint64_t ta = turn(a), tb = turn(b);
		r->ns += a == &linked ? ta : tb;
		r->base_ns += a == &linked ? tb : ta;
		r->ops += TURN_PAIRS;
		r->base_ops += TURN_PAIRS;
	}
	return 0;
}

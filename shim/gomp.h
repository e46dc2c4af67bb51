/* The shim's access to GNU libgomp (not installed): its entry points are
 * resolved on first use, since libgomp may be loaded after the shim starts
 * (dlopen) or not at all. */
#ifndef HWS_PRELOAD_GOMP_H
#define HWS_PRELOAD_GOMP_H

#include <stdatomic.h>
#include "shim/natives.h"

/* Defines `static type var(void)`: libgomp's `name` at symbol version `ver`
 * (NULL while libgomp is not loaded), looked up once and then cached. */
#define GOMP_FN(var, type, name, ver) \
	static type var(void) \
	{ \
		static _Atomic(type) fn; \
		/* relaxed: idempotent cache of a dlsym result. */ \
		type f = atomic_load_explicit(&fn, memory_order_relaxed); \
		if (!f) { \
			f = (type)hws_native_gomp(name, ver); \
			atomic_store_explicit(&fn, f, memory_order_relaxed); \
		} \
		return f; \
	}

#endif

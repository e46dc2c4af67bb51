/* An allocator that fails on request, preloaded beside the shim for the
 * memory-exhaustion check (tests/preload/nomem.c).  It interposes malloc,
 * calloc, realloc, aligned_alloc, posix_memalign and memalign; until the
 * program calls hws_failalloc_after(n) (found with dlsym) they pass to
 * glibc, then n more calls succeed and every later one fails with ENOMEM.
 * glibc's own entry points (__libc_malloc, ...) serve the calls, so no dlsym
 * is needed here (dlsym itself allocates).  free is glibc's. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdatomic.h>
#include <stddef.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);

static _Atomic int armed;
static _Atomic long left;
static _Atomic long refused;

void hws_failalloc_after(long n)
{
	atomic_store(&left, n);
	atomic_store(&armed, 1);
}

long hws_failalloc_refused(void)
{
	return atomic_load(&refused);
}

static int refuse(void)
{
	if (!atomic_load_explicit(&armed, memory_order_relaxed) || atomic_fetch_sub(&left, 1) > 0)
		return 0;
	atomic_fetch_add(&refused, 1);
	errno = ENOMEM;
	return 1;
}

void *malloc(size_t n)
{
	return refuse() ? NULL : __libc_malloc(n);
}

void *calloc(size_t k, size_t n)
{
	return refuse() ? NULL : __libc_calloc(k, n);
}

void *realloc(void *p, size_t n)
{
	return refuse() ? NULL : __libc_realloc(p, n);
}

void *memalign(size_t a, size_t n)
{
	return refuse() ? NULL : __libc_memalign(a, n);
}

void *aligned_alloc(size_t a, size_t n)
{
	return refuse() ? NULL : __libc_memalign(a, n);
}

int posix_memalign(void **p, size_t a, size_t n)
{
	if (refuse())
		return ENOMEM;
	void *q = __libc_memalign(a, n);
	if (!q)
		return ENOMEM;
	*p = q;
	return 0;
}

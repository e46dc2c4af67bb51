/* Internal interfaces of the arch layer (not installed). */
#ifndef HWS_ARCH_INTERNAL_H
#define HWS_ARCH_INTERNAL_H

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <hwsync/arch.h>

/* Record the detail of a failure for hws_last_error(); returns err.  Every
 * layer reports its errors this way (error.c). */
int hws_fail(int err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* hws_cpu() without the counter frequency: never measures, so it costs
 * microseconds.  tsc_hz and tsc_source must be read through hws_cpu(). */
const struct hws_cpu_info *hws_cpu_features(void);

/* The counter frequency if it is known without waiting (CPUID, CNTFRQ, or 20 ms
 * have passed since the first feature query and it is measured now), else 0. */
uint64_t hws_counter_hz_ready(void);

/* pthread_once for the library's lazy set-ups, leaving errno as it was.
 * They run inside whatever call first needs them, under the shim inside
 * the program's pthread_mutex_lock, and look for files and devices that
 * may well be absent; glibc's lock never changes errno, so neither may
 * the set-up that a first contended wait runs. */
static inline void hws_once(pthread_once_t *once, void (*fn)(void))
{
	int saved = errno;
	pthread_once(once, fn);
	errno = saved;
}

/* One system call by its own instruction rather than through glibc's
 * syscall(): a thread that slept in it comes back to a return stack the
 * kernel refilled at the task switch, and every return between the system
 * call and the code that waited then mispredicts; one function fewer is one
 * return fewer (docs/locks.md, "Coming back from a sleep").  Returns the
 * kernel's result, a negative errno on failure; errno is left alone. */
#if defined(__x86_64__)
static inline long hws_syscall6(long nr, long a1, long a2, long a3, long a4, long a5, long a6)
{
	register long r10 __asm__("r10") = a4, r8 __asm__("r8") = a5, r9 __asm__("r9") = a6;
	long ret;
	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "0"(nr), "D"(a1), "S"(a2), "d"(a3), "r"(r10), "r"(r8), "r"(r9)
			 : "rcx", "r11", "memory");
	return ret;
}
#elif defined(__aarch64__)
static inline long hws_syscall6(long nr, long a1, long a2, long a3, long a4, long a5, long a6)
{
	register long x8 __asm__("x8") = nr, x0 __asm__("x0") = a1, x1 __asm__("x1") = a2,
		     x2 __asm__("x2") = a3, x3 __asm__("x3") = a4, x4 __asm__("x4") = a5,
		     x5 __asm__("x5") = a6;
	__asm__ volatile("svc #0"
			 : "+r"(x0)
			 : "r"(x8), "r"(x1), "r"(x2), "r"(x3), "r"(x4), "r"(x5)
			 : "memory");
	return x0;
}
#else
#include <unistd.h>
static inline long hws_syscall6(long nr, long a1, long a2, long a3, long a4, long a5, long a6)
{
	long r = syscall(nr, a1, a2, a3, a4, a5, a6);
	return r == -1 ? -errno : r;
}
#endif

#endif

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

#endif

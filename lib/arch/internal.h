/* Internal interfaces of the arch layer (not installed). */
#ifndef HWS_ARCH_INTERNAL_H
#define HWS_ARCH_INTERNAL_H

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

#endif

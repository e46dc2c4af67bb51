/* Deadline conversion (time.c). */
#ifndef HWS_PRELOAD_TIME_H
#define HWS_PRELOAD_TIME_H

#include <stdint.h>
#include <time.h>

/* Absolute time on `clock` -> absolute CLOCK_MONOTONIC timespec.  EINVAL for
 * a malformed timespec or an unsupported clock. */
int hws_shim_to_mono(clockid_t clock, const struct timespec *abs, struct timespec *mono);
/* The same, as a wait-layer deadline in ns. */
int hws_shim_deadline_ns(clockid_t clock, const struct timespec *abs, uint64_t *ns);

#endif

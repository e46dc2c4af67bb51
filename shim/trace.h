/* HWSYNC_TRACE (trace.c): lock and barrier spans, written at exit. */
#ifndef HWS_PRELOAD_TRACE_H
#define HWS_PRELOAD_TRACE_H

#include <stdint.h>
#include <stdio.h>

/* Start recording into f, the file HWSYNC_TRACE names (startup.c). */
void hws_trace_start(FILE *f);
/* A complete event ("ph":"X") on this thread. */
void hws_trace_span(const char *name, const void *obj, uint64_t start_ns, uint64_t end_ns);
void hws_trace_write(void);

#endif

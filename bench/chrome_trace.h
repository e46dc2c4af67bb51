/* Acquisition timelines as Chrome trace-event JSON (chrome://tracing,
 * https://ui.perfetto.dev): one process per row, one track per thread, a
 * "wait" slice from entry to acquired and a "hold" slice from acquired to
 * release.  [RAINA] Figs. 28-30 are such timelines. */
#ifndef HWS_BENCH_CHROME_TRACE_H
#define HWS_BENCH_CHROME_TRACE_H

#include <stddef.h>
#include <stdint.h>

struct chrome_trace_ev {
	uint64_t entry, acquired, released;   /* TSC */
};

/* Start the file (truncating it; a valid empty trace until rows come).
 * 0 or an errno value. */
int chrome_trace_open(const char *path);
/* Keep the file open for one more row; chrome_trace_put() closes the JSON
 * document when the last holder lets go. */
void chrome_trace_hold(void);
void chrome_trace_put(void);
/* Append a row: ev[i][0..nev[i]) of thread i (on cpus[i]); times relative to
 * t0.  Returns 0 or an errno value (then tracing stops). */
int chrome_trace_row(const char *label, unsigned nthreads, const int *cpus, uint64_t t0,
		     struct chrome_trace_ev *const *ev, const size_t *nev);

#endif

/* Chrome trace-event JSON writer for the lock timelines (chrome_trace.h).
 * The file is written as rows arrive; the closing brackets go out when the
 * last row holding the file is done, so an interrupted run leaves a file that
 * Perfetto still mostly reads. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <hwsync/hwsync.h>
#include "bench/chrome_trace.h"

static struct {
	char path[512];
	FILE *f;
	unsigned holders, rows;
	int err;
} tr;

int chrome_trace_open(const char *path)
{
	FILE *f = fopen(path, "w");
	if (!f)
		return errno;
	/* valid as it stands, in case no row is ever traced */
	fputs("{\"traceEvents\":[]}\n", f);
	if (fclose(f))
		return errno;
	snprintf(tr.path, sizeof tr.path, "%s", path);
	tr.f = NULL;
	tr.holders = tr.rows = 0;
	tr.err = 0;
	return 0;
}

void chrome_trace_hold(void)
{
	tr.holders++;
}

void chrome_trace_put(void)
{
	if (!tr.holders || --tr.holders)
		return;
	if (tr.f) {
		fputs("\n],\"displayTimeUnit\":\"ns\"}\n", tr.f);
		fclose(tr.f);
		tr.f = NULL;
	}
}

static void json_escaped(FILE *f, const char *s)
{
	for (; *s; s++)
		if (*s == '"' || *s == '\\')
			fprintf(f, "\\%c", *s);
		else if ((unsigned char)*s >= 0x20)
			fputc(*s, f);
}

int chrome_trace_row(const char *label, unsigned nthreads, const int *cpus, uint64_t t0,
		     struct chrome_trace_ev *const *ev, const size_t *nev)
{
	if (tr.err || !tr.path[0])
		return tr.err ? tr.err : EINVAL;
	if (!tr.f) {
		if (!(tr.f = fopen(tr.path, "w")))
			return tr.err = errno;
		fputs("{\"traceEvents\":[\n", tr.f);
	}
	FILE *f = tr.f;
	unsigned pid = ++tr.rows;
	double us_per_tick = 1e6 / (double)hws_cpu()->tsc_hz;
	fprintf(f, "%s{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%u,\"args\":{\"name\":\"",
		pid > 1 ? ",\n" : "", pid);
	json_escaped(f, label);
	fprintf(f, "\"}},\n{\"name\":\"process_sort_index\",\"ph\":\"M\",\"pid\":%u,"
		"\"args\":{\"sort_index\":%u}}", pid, pid);
	for (unsigned i = 0; i < nthreads; i++) {
		fprintf(f, ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%u,\"tid\":%u,"
			"\"args\":{\"name\":\"thread %u (cpu %d)\"}}", pid, i, i, cpus[i]);
		for (size_t k = 0; k < nev[i]; k++) {
			const struct chrome_trace_ev *e = &ev[i][k];
			double a = (double)(e->entry - t0) * us_per_tick;
			double b = (double)(e->acquired - t0) * us_per_tick;
			double c = (double)(e->released - t0) * us_per_tick;
			fprintf(f, ",\n{\"name\":\"wait\",\"ph\":\"X\",\"pid\":%u,\"tid\":%u,"
				"\"ts\":%.3f,\"dur\":%.3f}", pid, i, a, b - a);
			fprintf(f, ",\n{\"name\":\"hold\",\"ph\":\"X\",\"pid\":%u,\"tid\":%u,"
				"\"ts\":%.3f,\"dur\":%.3f}", pid, i, b, c - b);
		}
	}
	if (ferror(f))
		return tr.err = EIO;
	return 0;
}

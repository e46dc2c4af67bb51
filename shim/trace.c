/* HWSYNC_TRACE=FILE: lock and barrier spans as Chrome trace-event JSON
 * (chrome://tracing, Perfetto).  Each thread appends complete events ("X") to
 * its own buffer, so recording takes no lock; buffers are pushed on a
 * lock-free list and written at exit.  A full buffer drops events, and so
 * does a thread that got no buffer (calloc failed: it does not try again);
 * the number dropped is written as metadata, and a summary line names the
 * events lost for want of memory. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "shim/common.h"
#include "shim/config.h"
#include "shim/trace.h"

#define TRACE_CAP (1u << 16)   /* events a thread */

struct trace_ev {
	const char *name;
	const void *obj;
	uint64_t start_ns, end_ns;
};

struct trace_buf {
	struct trace_buf *next;
	int tid;
	_Atomic uint32_t n;       /* committed events */
	uint64_t dropped;
	struct trace_ev ev[TRACE_CAP];
};

static FILE *trace_file;
static uint64_t trace_t0;
static _Atomic(struct trace_buf *) bufs;
static _Thread_local struct trace_buf *mine;
static _Thread_local int no_buf;
static _Atomic uint64_t unbuffered;   /* events of threads without a buffer */

void hws_trace_start(FILE *f)
{
	trace_file = f;
	trace_t0 = hws_now_ns();
}

void hws_trace_span(const char *name, const void *obj, uint64_t start_ns, uint64_t end_ns)
{
	struct trace_buf *b = mine;
	if (unlikely(!b)) {
		if (no_buf)
			goto lost;
		no_buf = 1;   /* calloc may lock: no recursion into here */
		b = calloc(1, sizeof *b);
		if (!b)
			goto lost;
		b->tid = (int)syscall(SYS_gettid);
		b->next = atomic_load_explicit(&bufs, memory_order_relaxed);
		/* release: the writer at exit sees an initialised buffer. */
		while (!atomic_compare_exchange_weak_explicit(&bufs, &b->next, b,
							      memory_order_release,
							      memory_order_relaxed))
			;
		mine = b;
	}
	/* relaxed: only this thread writes n; the release below publishes. */
	uint32_t n = atomic_load_explicit(&b->n, memory_order_relaxed);
	if (n >= TRACE_CAP) {
		b->dropped++;
		return;
	}
	b->ev[n] = (struct trace_ev){ name, obj, start_ns, end_ns };
	/* release: pairs with the acquire in hws_trace_write (event complete). */
	atomic_store_explicit(&b->n, n + 1, memory_order_release);
	return;
lost:
	/* relaxed: a count read at exit. */
	atomic_fetch_add_explicit(&unbuffered, 1, memory_order_relaxed);
}

void hws_trace_write(void)
{
	FILE *f = trace_file;
	int pid = hws_cfg.pid, first = 1;
	uint64_t dropped = 0;
	if (!f)
		return;
	fprintf(f, "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n");
	/* acquire: pairs with the release push in hws_trace_span. */
	for (struct trace_buf *b = atomic_load_explicit(&bufs, memory_order_acquire); b;
	     b = b->next) {
		/* acquire: pairs with the release store of n. */
		uint32_t n = atomic_load_explicit(&b->n, memory_order_acquire);
		dropped += b->dropped;
		for (uint32_t i = 0; i < n; i++) {
			const struct trace_ev *e = &b->ev[i];
			uint64_t s = e->start_ns > trace_t0 ? e->start_ns - trace_t0 : 0;
			uint64_t d = e->end_ns > e->start_ns ? e->end_ns - e->start_ns : 0;
			fprintf(f, "%s{\"name\":\"%s\",\"cat\":\"hwsync\",\"ph\":\"X\",\"ts\":%"
				PRIu64 ".%03u,\"dur\":%" PRIu64 ".%03u,\"pid\":%d,\"tid\":%d,"
				"\"args\":{\"object\":\"%p\"}}", first ? "" : ",\n", e->name,
				s / 1000, (unsigned)(s % 1000), d / 1000, (unsigned)(d % 1000), pid,
				b->tid, e->obj);
			first = 0;
		}
	}
	/* relaxed: the threads' last events are as complete as their buffers. */
	uint64_t nomem = atomic_load_explicit(&unbuffered, memory_order_relaxed);
	dropped += nomem;
	if (nomem)
		dprintf(hws_cfg.err_fd, "hwsync[%d]: trace: %" PRIu64 " events dropped (no memory "
			"for a thread's buffer)\n", pid, nomem);
	fprintf(f, "%s{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":0,"
		"\"args\":{\"name\":\"hwsync %s/%s, %" PRIu64 " events dropped\"}}\n]}\n",
		first ? "" : ",\n", pid, hws_cfg.lock_kind, hws_cfg.wait_spec, dropped);
	fclose(f);
	trace_file = NULL;
}

/* The kernel's rseq time-slice extension (Linux 7.0): a thread that holds a
 * lock asks, through its rseq area, not to be preempted for a few
 * microseconds; if the kernel granted that, the thread gives the CPU back
 * with rseq_slice_yield() once it has let go.  Each thread switches it on
 * for itself with prctl(PR_RSEQ_SLICE_EXTENSION, SET).
 *
 * Where it can be had (read in the 7.2 sources: kernel/rseq.c): a kernel
 * built with CONFIG_RSEQ_SLICE_EXTENSION and not told otherwise on its
 * command line, and only for a thread whose rseq area was registered longer
 * than the original 32 bytes (the kernel's "v2" registration).  The kernel
 * marks such an area at registration (RSEQ_CS_FLAG_SLICE_EXT_AVAILABLE in
 * its flags word), and that mark decides here, with no system call: prctl
 * GET answers on any kernel built with the feature, also for a thread that
 * SET would refuse (ENOTSUPP) because glibc registered the original size,
 * as glibc 2.36 does.  A kernel without the feature answers GET with EINVAL
 * (before 7.0) or ENOTSUPP (built without it).
 *
 * The control word follows the four words of the original rseq area (byte
 * 28): its byte 0 is the request, which user space sets and either side
 * clears, its byte 1 the grant, which only the kernel writes.  Both change
 * only on the thread's own CPU, so plain byte accesses ordered against the
 * lock's own by compiler fences suffice.  A system call made while granted
 * ends the grant (the kernel reschedules there), so the program's own code
 * in a critical section may do anything (docs/locks.md). */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <hwsync/arch.h>

#ifndef PR_RSEQ_SLICE_EXTENSION
#define PR_RSEQ_SLICE_EXTENSION 79
#define PR_RSEQ_SLICE_EXTENSION_GET 1
#define PR_RSEQ_SLICE_EXTENSION_SET 2
#define PR_RSEQ_SLICE_EXT_ENABLE 0x01
#endif
#define NR_RSEQ_SLICE_YIELD 471
#define RSEQ_FLAGS_OFFSET 16   /* in struct rseq: the flags word */
#define SLICE_CTRL_OFFSET 28   /* in struct rseq: after cpu_id_start .. mm_cid */
#define RSEQ_AREA_MIN 32       /* an area that reaches the control word's end */
#define SLICE_AVAILABLE (1u << 4)   /* RSEQ_CS_FLAG_SLICE_EXT_AVAILABLE */
#ifndef ENOTSUPP
#define ENOTSUPP 524           /* the kernel's own "not supported" errno */
#endif

enum { UNDECIDED, OFF, ON };

/* glibc's registered rseq area (2.35 and later; absent before). */
extern const ptrdiff_t __rseq_offset __attribute__((weak));
extern const unsigned int __rseq_size __attribute__((weak));

_Atomic int hws_slice_mode;

/* Every hold and release of a thread that asks reads and writes this, so it
 * is reached at a fixed offset from the thread pointer (initial-exec): the
 * default model in a shared library, the shim's case, calls __tls_get_addr
 * for each access.  16 bytes, which the static TLS that glibc keeps spare
 * for libraries opened later holds too. */
static _Thread_local struct {
	volatile uint8_t *ctl;   /* [0] request, [1] granted */
	uint32_t depth;          /* locks held that asked */
	uint8_t state;           /* this thread's switch: UNDECIDED, OFF, ON */
} me __attribute__((tls_model("initial-exec")));

static int real_yield(void)
{
	return (int)syscall(NR_RSEQ_SLICE_YIELD);
}

#ifdef HWS_TEST_SLICE_SIM
/* Test build only (tests/preload/test_slice_sim.sh): every thread asks on a
 * control word of its own, as if the kernel offered the extension, and
 * every 7th hold is granted (as a preemption in it would be).  At exit the
 * counts go to stderr: a shim whose lock paths pair their holds with their
 * ends shows as many ends as holds, and a yield for every grant. */
#include <stdio.h>
static _Thread_local uint8_t sim_ctl[4];
static _Atomic unsigned long sim_holds, sim_ends, sim_grants, sim_yields;
static int sim_yield(void)
{
	sim_ctl[1] = 0;   /* the kernel ends the grant */
	/* relaxed: counters, read at exit. */
	atomic_fetch_add_explicit(&sim_yields, 1, memory_order_relaxed);
	return 0;
}
static int (*yield_fn)(void) = sim_yield;
__attribute__((destructor)) static void sim_report(void)
{
	fprintf(stderr, "slice simulation: %lu holds, %lu ended, %lu granted, %lu yielded\n",
		atomic_load(&sim_holds), atomic_load(&sim_ends), atomic_load(&sim_grants),
		atomic_load(&sim_yields));
}
#else
static int (*yield_fn)(void) = real_yield;
#endif

static char *thread_pointer(void)
{
	void *tp;
#if defined(__x86_64__)
	__asm__("mov %%fs:0, %0" : "=r"(tp));
#elif defined(__aarch64__)
	__asm__("mrs %0, tpidr_el0" : "=r"(tp));
#else
	tp = NULL;
#endif
	return tp;
}

/* This thread's rseq area as glibc registered it, or NULL: glibc before
 * 2.35, its registration switched off (glibc.pthread.rseq=0 leaves the size
 * 0), or an area too short for the control word. */
static char *rseq_area(void)
{
	char *tp = thread_pointer();
	if (!&__rseq_size || __rseq_size < RSEQ_AREA_MIN || !tp)
		return NULL;
	return tp + __rseq_offset;
}

/* The kernel will extend this thread's slices once the thread asks: it
 * marked the area so when glibc registered it. */
static bool area_offers(void)
{
	char *area = rseq_area();
	return area && (*(volatile uint32_t *)(area + RSEQ_FLAGS_OFFSET) & SLICE_AVAILABLE);
}

int hws_rseq_slice_state(const char **why)
{
	static char msg[160];
	const char *w;
	errno = 0;
	int r = prctl(PR_RSEQ_SLICE_EXTENSION, PR_RSEQ_SLICE_EXTENSION_GET, 0, 0, 0), e = errno;
	bool offers = area_offers();

	if (r >= 0 && offers)
		w = (r & PR_RSEQ_SLICE_EXT_ENABLE) ? "enabled for this thread" :
			"offered, not enabled for this thread";
	else if (r >= 0)
		w = "the kernel has it, but not for this thread's rseq area: glibc "
		    "registered the original 32-byte area (the kernel extends only "
		    "longer ones), or none, or the kernel's command line switched it off";
	else if (e == EINVAL)
		w = "this kernel has no rseq time-slice extension (prctl "
		    "PR_RSEQ_SLICE_EXTENSION: EINVAL; Linux 7.0 or later with "
		    "CONFIG_RSEQ_SLICE_EXTENSION)";
	else if (e == ENOTSUPP)
		w = "this kernel was built without CONFIG_RSEQ_SLICE_EXTENSION (prctl "
		    "PR_RSEQ_SLICE_EXTENSION: error 524, ENOTSUPP)";
	else {
		/* not thread-safe in its text only; the state is returned */
		strcpy(msg, "prctl PR_RSEQ_SLICE_EXTENSION failed: ");
		strncat(msg, strerror(e), sizeof msg - strlen(msg) - 1);
		w = msg;
	}
	if (why)
		*why = w;
	if (r < 0 || !offers)
		return 0;
	return (r & PR_RSEQ_SLICE_EXT_ENABLE) ? 2 : 1;
}

static int decide_process(void)
{
	const char *e = getenv("HWSYNC_SLICE");
	if (e && !strcmp(e, "0"))
		return OFF;
#ifdef HWS_TEST_SLICE_SIM
	return ON;
#else
	/* glibc registers every thread's area alike, so the deciding
	 * thread's speaks for all. */
	return area_offers() ? ON : OFF;
#endif
}

static uint8_t decide_thread(void)
{
#ifdef HWS_TEST_SLICE_SIM
	me.ctl = sim_ctl;
	return ON;
#else
	char *area = rseq_area();
	if (!area || prctl(PR_RSEQ_SLICE_EXTENSION, PR_RSEQ_SLICE_EXTENSION_SET,
			   PR_RSEQ_SLICE_EXT_ENABLE, 0, 0))
		return OFF;
	me.ctl = (volatile uint8_t *)(area + SLICE_CTRL_OFFSET);
	return ON;
#endif
}

bool hws_slice_decide(void)
{
	/* relaxed: see hws_slice_hold; racing deciders store the same. */
	int mode = atomic_load_explicit(&hws_slice_mode, memory_order_relaxed);
	if (mode == UNDECIDED) {
		mode = decide_process();
		atomic_store_explicit(&hws_slice_mode, mode, memory_order_relaxed);
	}
	return mode == ON;
}

void hws_slice_hold_slow(void)
{
	/* A thread is on only once the process is: then it asks at once. */
	if (me.state != ON) {
		if (me.state == OFF || !hws_slice_decide())
			return;
		if ((me.state = decide_thread()) != ON)
			return;
	}
	if (me.depth++)
		return;
	/* The request follows the acquisition in program order. */
	atomic_signal_fence(memory_order_seq_cst);
	me.ctl[0] = 1;
#ifdef HWS_TEST_SLICE_SIM
	/* relaxed: counters, read at exit. */
	if (atomic_fetch_add_explicit(&sim_holds, 1, memory_order_relaxed) % 7 == 6) {
		me.ctl[0] = 0;   /* granted: the request becomes the grant */
		me.ctl[1] = 1;
		atomic_fetch_add_explicit(&sim_grants, 1, memory_order_relaxed);
	}
#endif
}

void hws_slice_unhold_slow(void)
{
	/* An unlock in a thread that holds nothing here (the first call of the
	 * thread, or an unlock of a lock another thread took, which glibc
	 * allows) changes nothing. */
	if (me.state != ON || !me.depth || --me.depth)
		return;
	/* After the release in program order: the request, then the grant,
	 * which the kernel may have set up to the clearing. */
	atomic_signal_fence(memory_order_seq_cst);
	me.ctl[0] = 0;
	atomic_signal_fence(memory_order_seq_cst);
#ifdef HWS_TEST_SLICE_SIM
	/* relaxed: counters, read at exit. */
	atomic_fetch_add_explicit(&sim_ends, 1, memory_order_relaxed);
#endif
	if (me.ctl[1])
		yield_fn();
}

void hws_slice_fake(volatile uint8_t *ctl, int (*fn)(void))
{
	me.ctl = ctl;
	me.depth = 0;
	me.state = ON;
	yield_fn = fn ? fn : real_yield;
	/* relaxed: a test switch, set before the calls it concerns. */
	atomic_store_explicit(&hws_slice_mode, ON, memory_order_relaxed);
}

/* slice_vmtest: the kernel's rseq time-slice extension, checked from user
 * space inside a VM whose kernel has it (tests/slice_vm/slice_vm_test.sh).
 * Static; run with GLIBC_TUNABLES=glibc.pthread.rseq=0 so that glibc leaves
 * every thread unregistered and each thread here registers an area of its
 * own.  One line per check, then "SLICE-VM-RESULT PASS" or "... FAIL".
 *
 *   v2:     a 64-byte area: the kernel marks the extension available in the
 *           area's flags; the prctl switch reads 0, turns on, reads 1, and
 *           the area's flags show it enabled;
 *   v1:     a 32-byte area (the original size): not available, and the
 *           switch refuses with ENOTSUPP;
 *   grants: two CPU-bound threads on CPU 0, one of them asking for an
 *           extension around short spins; the kernel must grant some, and
 *           every rseq_slice_yield() after a grant must return 0 or 1.
 *           The counts are reported; no count is required (an emulated
 *           CPU's timing says nothing about a real one's). */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define PRCTL_SLICE 79
#define PRCTL_SLICE_GET 1
#define PRCTL_SLICE_SET 2
#define PRCTL_SLICE_ENABLE 1
#define NR_SLICE_YIELD 471
#define FLAG_AVAILABLE (1u << 4)
#define FLAG_ENABLED (1u << 5)
#define ERRNO_ENOTSUPP 524   /* the kernel's own, not user space's ENOTSUP */
#define SIG 0x48575331u      /* any constant: no critical sections here */
#ifndef AT_RSEQ_FEATURE_SIZE
#define AT_RSEQ_FEATURE_SIZE 27
#define AT_RSEQ_ALIGN 28
#endif

/* The area as the kernel sees it: the original 32 bytes, of which the
 * last word is now the extension's control (request, granted). */
struct area {
	uint32_t cpu_id_start;
	uint32_t cpu_id;
	uint64_t cs;
	uint32_t flags;
	uint32_t node_id;
	uint32_t mm_cid;
	volatile uint8_t request;
	volatile uint8_t granted;
	uint8_t ctl_pad[2];
	uint8_t tail[32];
};
_Static_assert(sizeof(struct area) == 64, "area size");
_Static_assert(__builtin_offsetof(struct area, request) == 28, "control word offset");

static _Thread_local struct area my_area __attribute__((aligned(64)));
static int failed;

static void check(int ok, const char *name, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void check(int ok, const char *name, const char *fmt, ...)
{
	va_list ap;
	printf("CHECK %-4s %-22s ", ok ? "ok" : "FAIL", name);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
	if (!ok)
		failed = 1;
}

static long reg(struct area *a, unsigned len)
{
	return syscall(SYS_rseq, a, len, 0, SIG);
}

static long slice_get(void)
{
	return prctl(PRCTL_SLICE, PRCTL_SLICE_GET, 0, 0, 0);
}

static long slice_set(unsigned long on)
{
	return prctl(PRCTL_SLICE, PRCTL_SLICE_SET, on, 0, 0);
}

static void *v2_thread(void *arg)
{
	(void)arg;
	long r = reg(&my_area, sizeof my_area);
	check(r == 0, "v2-register", "rseq(64 bytes) = %ld (%s), cpu_id %u", r,
	      r ? strerror(errno) : "ok", my_area.cpu_id);
	if (r)
		return NULL;
	check(my_area.flags & FLAG_AVAILABLE, "v2-available", "flags 0x%x", my_area.flags);
	r = slice_get();
	check(r == 0, "v2-get-before", "GET = %ld%s%s", r, r < 0 ? " " : "",
	      r < 0 ? strerror(errno) : "");
	r = slice_set(PRCTL_SLICE_ENABLE);
	check(r == 0, "v2-set-enable", "SET(enable) = %ld%s%s", r, r < 0 ? " " : "",
	      r < 0 ? strerror(errno) : "");
	r = slice_get();
	check(r == 1, "v2-get-after", "GET = %ld", r);
	check(my_area.flags & FLAG_ENABLED, "v2-enabled-flag", "flags 0x%x", my_area.flags);
	r = syscall(NR_SLICE_YIELD);
	check(r == 0, "v2-yield-ungranted", "rseq_slice_yield() without a grant = %ld", r);
	return NULL;
}

static void *v1_thread(void *arg)
{
	(void)arg;
	long r = reg(&my_area, 32);
	check(r == 0, "v1-register", "rseq(32 bytes) = %ld (%s)", r, r ? strerror(errno) : "ok");
	if (r)
		return NULL;
	check(!(my_area.flags & FLAG_AVAILABLE), "v1-not-available", "flags 0x%x", my_area.flags);
	errno = 0;
	r = slice_set(PRCTL_SLICE_ENABLE);
	check(r == -1 && errno == ERRNO_ENOTSUPP, "v1-set-refused", "SET(enable) = %ld errno %d",
	      r, errno);
	return NULL;
}

/* The grants test. */
static atomic_int stop, hog_running;
static unsigned long spin_iters;
static struct {
	unsigned long windows, taken, granted, y1, y0, yerr, not_cpu0;
	int last_errno;
} g;

static void pin0(void)
{
	cpu_set_t s;
	CPU_ZERO(&s);
	CPU_SET(0, &s);
	if (sched_setaffinity(0, sizeof s, &s))
		perror("sched_setaffinity");
}

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec * 1e-9;
}

static __attribute__((noinline)) void spin(unsigned long n)
{
	for (volatile unsigned long i = 0; i < n; i = i + 1)
		;
}

static void *hog_thread(void *arg)
{
	(void)arg;
	pin0();
	atomic_store(&hog_running, 1);
	/* relaxed: a stop flag that publishes nothing; the join orders the rest. */
	while (!atomic_load_explicit(&stop, memory_order_relaxed))
		spin(1000);
	return NULL;
}

static void *holder_thread(void *arg)
{
	double secs = *(double *)arg;
	pin0();
	if (reg(&my_area, sizeof my_area) || slice_set(PRCTL_SLICE_ENABLE)) {
		check(0, "grants-setup", "register/enable: %s", strerror(errno));
		return NULL;
	}
	while (!atomic_load(&hog_running))
		sched_yield();
	double end = now() + secs;
	while (now() < end) {
		for (int k = 0; k < 100; k++) {
			g.windows++;
			my_area.request = 1;
			atomic_signal_fence(memory_order_seq_cst);
			spin(spin_iters);
			atomic_signal_fence(memory_order_seq_cst);
			/* The kernel clears the request when it grants; if the
			 * grant then ended (timer, another interrupt), it has
			 * cleared the grant too. */
			int req = my_area.request;
			my_area.request = 0;
			atomic_signal_fence(memory_order_seq_cst);
			if (!req)
				g.taken++;
			if (my_area.granted) {
				g.granted++;
				errno = 0;
				long r = syscall(NR_SLICE_YIELD);
				if (r == 1)
					g.y1++;
				else if (r == 0)
					g.y0++;
				else {
					g.yerr++;
					g.last_errno = errno;
				}
			}
		}
		if (my_area.cpu_id != 0)
			g.not_cpu0++;
	}
	atomic_store(&stop, 1);
	return NULL;
}

static void run(void *(*fn)(void *), void *arg)
{
	pthread_t t;
	if (pthread_create(&t, NULL, fn, arg)) {
		check(0, "pthread_create", "failed");
		return;
	}
	pthread_join(t, NULL);
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 1.5;
	double win_us = argc > 2 ? atof(argv[2]) : 20;
	printf("slice_vmtest: AT_RSEQ_FEATURE_SIZE %lu, AT_RSEQ_ALIGN %lu, %ld CPUs\n",
	       getauxval(AT_RSEQ_FEATURE_SIZE), getauxval(AT_RSEQ_ALIGN),
	       sysconf(_SC_NPROCESSORS_ONLN));
	/* glibc must not have registered this thread: a second registration
	 * of another area fails with EBUSY. */
	{
		long r = reg(&my_area, sizeof my_area);
		int e = errno;
		check(r == 0, "main-unregistered", "rseq(64 bytes) in main = %ld%s%s", r,
		      r ? " " : "", r ? strerror(e) : " (glibc did not register: tunable honoured)");
		if (r)
			goto out;
	}
	run(v2_thread, NULL);
	run(v1_thread, NULL);

	/* Calibrate the window's spin outside any request. */
	unsigned long n = 1000000;
	double t0 = now();
	spin(n);
	double dt = now() - t0;
	spin_iters = (unsigned long)(n * (win_us * 1e-6) / (dt > 0 ? dt : 1e-3));
	if (spin_iters < 100)
		spin_iters = 100;
	printf("slice_vmtest: window %.0f us = %lu iterations, %.1f s\n", win_us, spin_iters, secs);
	pthread_t hog, holder;
	if (pthread_create(&hog, NULL, hog_thread, NULL) ||
	    pthread_create(&holder, NULL, holder_thread, &secs)) {
		check(0, "pthread_create", "failed");
		goto out;
	}
	pthread_join(holder, NULL);
	atomic_store(&stop, 1);
	pthread_join(hog, NULL);
	printf("GRANTS windows %lu taken %lu granted-at-end %lu yield1 %lu yield0 %lu yielderr %lu "
	       "off-cpu0 %lu\n", g.windows, g.taken, g.granted, g.y1, g.y0, g.yerr, g.not_cpu0);
	check(g.taken > 0, "grants-seen", "%lu windows, the kernel took the request in %lu "
	      "(granted), %lu still granted at the window's end", g.windows, g.taken, g.granted);
	check(g.yerr == 0 && g.y0 + g.y1 == g.granted, "grants-yield",
	      "%lu yields: %lu returned 1, %lu returned 0, %lu failed (last errno %d)",
	      g.granted, g.y1, g.y0, g.yerr, g.last_errno);
out:
	printf("SLICE-VM-RESULT %s\n", failed ? "FAIL" : "PASS");
	return failed;
}

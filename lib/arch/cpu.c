/* CPU feature detection: CPUID on x86-64, hwcaps and system registers on
 * arm64, the kernel's umwait control in sysfs, and the counter frequency.
 *
 * Features are cheap (a few CPUID leaves, two sysfs reads).  The counter
 * frequency may not be: where neither CPUID nor CNTFRQ gives it, it is
 * measured against CLOCK_MONOTONIC over 20 ms.  So the two are detected
 * separately: the wait layer asks for features only (hws_cpu_features) and
 * never makes a process pay the 20 ms at start-up; hws_cpu() gives both.
 * The measurement's interval starts at the first feature query, so a process
 * that needs the frequency 20 ms or more after that gets it without waiting
 * (hws_counter_hz_ready). */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <hwsync/arch.h>
#include "arch/internal.h"
#if defined(__x86_64__)
#include <cpuid.h>
#endif
#if defined(__aarch64__)
#include <sys/auxv.h>
#ifndef HWCAP2_WFXT
#define HWCAP2_WFXT (1UL << 31)
#endif
#endif

static struct hws_cpu_info cpu;
static pthread_once_t cpu_once = PTHREAD_ONCE_INIT;	/* features */
static pthread_once_t rate_once = PTHREAD_ONCE_INIT;	/* cpu.tsc_hz, cpu.tsc_source */

/* The counter frequency once known, 0 before: one value per process.  Set by
 * detect() when CPUID or CNTFRQ gives it, else by the first measurement. */
static _Atomic uint64_t rate_hz;
/* Start of the measurement interval: the end of feature detection. */
static uint64_t anchor_ns, anchor_tsc;
#define RATE_INTERVAL_NS 20000000ull	/* measure the counter over >= 20 ms */

/* A number from a sysfs file, with a small buffer and no stdio: detection
 * may run on the first wait of a thread with a PTHREAD_STACK_MIN stack. */
static __attribute__((unused)) int read_u64_file(const char *path, uint64_t *out)
{
	char buf[32], *end;
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	do
		n = read(fd, buf, sizeof buf - 1);
	while (n < 0 && errno == EINTR);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	errno = 0;
	unsigned long long v = strtoull(buf, &end, 10);
	if (end == buf || errno)
		return -1;
	*out = v;
	return 0;
}

#if defined(__x86_64__)
static void detect_x86(void)
{
	unsigned a, b, c, d, max, maxext;

	strcpy(cpu.arch, "x86_64");
	__cpuid(0, max, b, c, d);
	memcpy(cpu.vendor, &b, 4);
	memcpy(cpu.vendor + 4, &d, 4);
	memcpy(cpu.vendor + 8, &c, 4);
	cpu.vendor[12] = 0;
	__cpuid(1, a, b, c, d);
	cpu.stepping = a & 0xf;
	cpu.family = (a >> 8) & 0xf;
	cpu.model_id = (a >> 4) & 0xf;
	if (cpu.family == 0xf)
		cpu.family += (a >> 20) & 0xff;
	if (cpu.family >= 6)
		cpu.model_id |= ((a >> 16) & 0xf) << 4;
	cpu.monitor_mwait = c & (1u << 3);
	cpu.hypervisor = c & (1u << 31);
	if (cpu.hypervisor) {
		/* The hypervisor's signature: "KVMKVMKVM", "Microsoft Hv", ... */
		__cpuid(0x40000000, a, b, c, d);
		memcpy(cpu.hypervisor_vendor, &b, 4);
		memcpy(cpu.hypervisor_vendor + 4, &c, 4);
		memcpy(cpu.hypervisor_vendor + 8, &d, 4);
		cpu.hypervisor_vendor[12] = 0;
	}
	if (max >= 5) {
		__cpuid(5, a, b, c, d);
		cpu.mwait_line_min = a & 0xffff;
		cpu.mwait_line_max = b & 0xffff;
	}
	if (max >= 7) {
		__cpuid_count(7, 0, a, b, c, d);
		cpu.waitpkg = c & (1u << 5);
	}
	__cpuid(0x80000000, maxext, b, c, d);
	if (maxext >= 0x80000001) {
		__cpuid(0x80000001, a, b, c, d);
		cpu.monitorx = c & (1u << 29);
	}
	if (maxext >= 0x80000004) {
		unsigned *p = (unsigned *)cpu.model;
		for (unsigned leaf = 0x80000002; leaf <= 0x80000004; leaf++, p += 4)
			__cpuid(leaf, p[0], p[1], p[2], p[3]);
		cpu.model[48] = 0;
		/* trim the leading blanks some brand strings carry */
		char *s = cpu.model;
		while (*s == ' ')
			s++;
		memmove(cpu.model, s, strlen(s) + 1);
	}
	if (maxext >= 0x80000007) {
		__cpuid(0x80000007, a, b, c, d);
		cpu.invariant_tsc = d & (1u << 8);
	}
	/* TSC frequency: leaf 0x15 (crystal ratio) when complete, else 0x16's
	 * base MHz (Intel), else measure. */
	if (max >= 0x15) {
		__cpuid(0x15, a, b, c, d);
		if (a && b && c) {
			cpu.tsc_hz = (uint64_t)c * b / a;
			strcpy(cpu.tsc_source, "cpuid-0x15");
		}
	}
	if (!cpu.tsc_hz && max >= 0x16 && !strcmp(cpu.vendor, "GenuineIntel")) {
		__cpuid(0x16, a, b, c, d);
		if (a & 0xffff) {
			cpu.tsc_hz = (uint64_t)(a & 0xffff) * 1000000ull;
			strcpy(cpu.tsc_source, "cpuid-0x16");
		}
	}
	uint64_t v;
	if (read_u64_file("/sys/devices/system/cpu/umwait_control/max_time", &v) == 0) {
		cpu.umwait_control_present = true;
		cpu.umwait_max_time = (uint32_t)v;
		if (read_u64_file("/sys/devices/system/cpu/umwait_control/enable_c02", &v) == 0)
			cpu.umwait_c02_enabled = v != 0;
	}
}
#endif

#if defined(__aarch64__)
static void detect_arm64(void)
{
	uint64_t midr = 0, frq;
	strcpy(cpu.arch, "aarch64");
	strcpy(cpu.vendor, "arm");
	cpu.wfe = true;
	cpu.wfet = (getauxval(AT_HWCAP2) & HWCAP2_WFXT) != 0;
	/* MIDR_EL1 is trapped and emulated by Linux for user space (HWCAP_CPUID). */
	if (getauxval(AT_HWCAP) & (1UL << 11))
		__asm__ __volatile__("mrs %0, midr_el1" : "=r"(midr));
	cpu.family = (midr >> 24) & 0xff;     /* implementer */
	cpu.model_id = (midr >> 4) & 0xfff;   /* part number */
	cpu.stepping = midr & 0xf;
	snprintf(cpu.model, sizeof cpu.model, "implementer 0x%02x part 0x%03x",
		 cpu.family, cpu.model_id);
	__asm__ __volatile__("mrs %0, cntfrq_el0" : "=r"(frq));
	if (frq) {
		cpu.tsc_hz = frq;
		strcpy(cpu.tsc_source, "cntfrq");
	}
}
#endif

static void detect(void)
{
#if defined(__x86_64__)
	detect_x86();
#elif defined(__aarch64__)
	detect_arm64();
#else
	strcpy(cpu.arch, "unknown");
#endif
	/* relaxed: a self-contained value; pthread_once orders the rest. */
	if (cpu.tsc_hz)
		atomic_store_explicit(&rate_hz, cpu.tsc_hz, memory_order_relaxed);
	anchor_ns = hws_now_ns();
	anchor_tsc = hws_tsc();
}

uint64_t hws_counter_hz_ready(void)
{
	uint64_t hz, now, tsc, expected = 0;

	hws_once(&cpu_once, detect);
	/* relaxed: the value carries no other data (pairs with nothing). */
	hz = atomic_load_explicit(&rate_hz, memory_order_relaxed);
	if (hz)
		return hz;
	now = hws_now_ns();
	if (now - anchor_ns < RATE_INTERVAL_NS)
		return 0;
	tsc = hws_tsc();
	hz = (uint64_t)((double)(tsc - anchor_tsc) * 1e9 / (double)(now - anchor_ns));
	/* The first measurement wins, so every caller converts with one value. */
	if (!atomic_compare_exchange_strong_explicit(&rate_hz, &expected, hz,
						     memory_order_relaxed, memory_order_relaxed))
		hz = expected;
	return hz;
}

static void measure_rate(void)
{
	uint64_t hz;

	if (cpu.tsc_hz)
		return;   /* CPUID or CNTFRQ gave it */
	/* Busy until the interval since the anchor is long enough (at once
	 * when the process has run that long); bounded for a counter that does
	 * not tick. */
	while (!(hz = hws_counter_hz_ready()) && hws_now_ns() - anchor_ns < 2 * RATE_INTERVAL_NS)
		hws_cpu_relax();
	cpu.tsc_hz = hz;
	strcpy(cpu.tsc_source, "calibrated");
}

const struct hws_cpu_info *hws_cpu_features(void)
{
	hws_once(&cpu_once, detect);
	return &cpu;
}

const struct hws_cpu_info *hws_cpu(void)
{
	hws_once(&cpu_once, detect);
	hws_once(&rate_once, measure_rate);
	return &cpu;
}

uint64_t hws_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t hws_tsc_to_ns(uint64_t ticks)
{
	return (uint64_t)((double)ticks * 1e9 / (double)hws_cpu()->tsc_hz);
}

uint64_t hws_ns_to_tsc(uint64_t ns)
{
	return (uint64_t)((double)ns * (double)hws_cpu()->tsc_hz / 1e9);
}

/* hwsync arch layer: per-ISA instructions and CPU feature detection.
 *
 * Everything here is either an inline wrapper around one instruction or a
 * query of what the CPU and kernel offer.  The instructions that a CPU may lack
 * (UMONITOR/UMWAIT/TPAUSE, MONITORX/MWAITX, WFET) must only be executed after
 * hws_cpu() says they are present; the wait layer enforces that.
 */
#ifndef HWSYNC_ARCH_H
#define HWSYNC_ARCH_H

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Cache line used to pad shared hot words: 64 bytes; 128 on arm64, where
 * the prefetcher pulls lines in pairs, so two hot words 64 bytes apart
 * would still share a transfer. */
#if defined(__aarch64__)
#define HWS_CACHELINE 128
#else
#define HWS_CACHELINE 64
#endif
#define HWS_ALIGNED_LINE __attribute__((aligned(HWS_CACHELINE)))

/* What the CPU and kernel offer.  Filled once by hws_cpu(). */
struct hws_cpu_info {
	char arch[16];          /* "x86_64" or "aarch64" */
	char vendor[16];        /* "GenuineIntel", "AuthenticAMD", "arm" ... */
	char model[64];         /* brand string or MIDR description */
	unsigned family, model_id, stepping;
	bool hypervisor;        /* CPUID.1:ECX[31] */
	/* x86 */
	bool monitor_mwait;     /* CPUID.1:ECX[3]  (privileged MONITOR/MWAIT) */
	bool waitpkg;           /* CPUID.7.0:ECX[5] (UMONITOR/UMWAIT/TPAUSE) */
	bool monitorx;          /* CPUID.80000001:ECX[29] (MONITORX/MWAITX) */
	bool invariant_tsc;     /* CPUID.80000007:EDX[8] */
	unsigned mwait_line_min, mwait_line_max; /* CPUID.5 monitor line sizes */
	/* kernel's umwait control (sysfs); valid when umwait_control_present */
	bool umwait_control_present;
	uint32_t umwait_max_time;  /* TSC cycles, 0 = no limit */
	bool umwait_c02_enabled;
	/* arm64 */
	bool wfe;               /* always on arm64 */
	bool wfet;              /* HWCAP2_WFXT */
	/* TSC / counter */
	uint64_t tsc_hz;        /* counter frequency */
	char tsc_source[48];    /* "cpuid-0x15", "cpuid-0x16", "cntfrq", "calibrated" */
	char hypervisor_vendor[16]; /* CPUID.40000000H signature ("KVMKVMKVM"), or "" */
};

/* Detect once (thread-safe) and return the cached description.  Where the
 * counter frequency must be measured, the first call takes ~20 ms. */
const struct hws_cpu_info *hws_cpu(void);

/* ---- instructions ------------------------------------------------------ */

/* Spin-loop hint: PAUSE on x86, YIELD on arm64. */
static inline void hws_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__asm__ __volatile__("pause" ::: "memory");
#elif defined(__aarch64__)
	__asm__ __volatile__("yield" ::: "memory");
#else
	__asm__ __volatile__("" ::: "memory");
#endif
}

/* Ask for a line in a state that can be written, ahead of an atomic
 * read-modify-write on it: PREFETCHW on x86 (a no-op on Intel processors
 * before Broadwell, which decode it as a NOP), PRFM PSTL1KEEP on arm64. */
static inline void hws_prefetch_write(const volatile void *p)
{
#if defined(__x86_64__) || defined(__i386__)
	__asm__ __volatile__("prefetchw %0" :: "m"(*(const volatile char *)p));
#elif defined(__aarch64__)
	__asm__ __volatile__("prfm pstl1keep, %0" :: "Q"(*(const volatile char *)p));
#else
	(void)p;
#endif
}

/* Read the time-stamp counter (x86 TSC / arm64 CNTVCT_EL0).  The fences keep
 * the read from drifting across the code being timed: LFENCE before orders it
 * after earlier loads (AMD and Intel both document LFENCE as dispatch-serializing
 * when the kernel enables it), ISB does the same for CNTVCT. */
static inline uint64_t hws_tsc(void)
{
#if defined(__x86_64__)
	uint32_t lo, hi;
	__asm__ __volatile__("lfence\n\trdtsc" : "=a"(lo), "=d"(hi) :: "memory");
	return ((uint64_t)hi << 32) | lo;
#elif defined(__aarch64__)
	uint64_t v;
	__asm__ __volatile__("isb\n\tmrs %0, cntvct_el0" : "=r"(v) :: "memory");
	return v;
#else
	return 0;
#endif
}

#if defined(__x86_64__)
/* UMONITOR: arm the address monitor on the line holding addr (WAITPKG). */
static inline void hws_umonitor(const volatile void *addr)
{
	__asm__ __volatile__("umonitor %0" :: "r"(addr) : "memory");
}
/* UMWAIT until the monitored line is written or the TSC reaches deadline.
 * state 0 = C0.2 (deeper, slower wake), 1 = C0.1.  Returns CF: 1 when the
 * OS time limit (IA32_UMWAIT_CONTROL) cut the wait short. */
static inline int hws_umwait(unsigned state, uint64_t tsc_deadline)
{
	uint8_t cf;
	__asm__ __volatile__("umwait %3\n\tsetc %0" : "=r"(cf)
			     : "a"((uint32_t)tsc_deadline), "d"((uint32_t)(tsc_deadline >> 32)), "r"(state)
			     : "memory", "cc");
	return cf;
}
/* TPAUSE: light-weight wait until the TSC deadline, no monitor. */
static inline int hws_tpause(unsigned state, uint64_t tsc_deadline)
{
	uint8_t cf;
	__asm__ __volatile__("tpause %3\n\tsetc %0" : "=r"(cf)
			     : "a"((uint32_t)tsc_deadline), "d"((uint32_t)(tsc_deadline >> 32)), "r"(state)
			     : "memory", "cc");
	return cf;
}
/* MONITORX: arm the monitor (AMD).  rax = address, ecx = ext, edx = hints. */
static inline void hws_monitorx(const volatile void *addr)
{
	__asm__ __volatile__("monitorx" :: "a"(addr), "c"(0), "d"(0) : "memory");
}
/* MWAITX with the timer enabled (ECX[1]): wait at most `cycles` TSC-rate
 * cycles for a write to the monitored line.  eax hints 0xf0 = C1 (no deeper). */
static inline void hws_mwaitx(uint32_t cycles)
{
	__asm__ __volatile__("mwaitx" :: "a"(0xf0), "b"(cycles), "c"(2) : "memory");
}
#endif

#if defined(__aarch64__)
/* Load-acquire exclusive: arms the exclusive monitor so that a store by
 * another CPU to this line sets the event register and ends a WFE. */
static inline uint32_t hws_ldaxr32(const volatile uint32_t *addr)
{
	uint32_t v;
	__asm__ __volatile__("ldaxr %w0, [%1]" : "=&r"(v) : "r"(addr) : "memory");
	return v;
}
static inline void hws_wfe(void)
{
	__asm__ __volatile__("wfe" ::: "memory");
}
/* WFET (FEAT_WFxT): WFE with a CNTVCT deadline.  Encoded by hand so that older
 * assemblers accept it: WFET x<n> = 0xd5031000 | n. Uses x0 fixed. */
static inline void hws_wfet(uint64_t cntvct_deadline)
{
	register uint64_t x0 __asm__("x0") = cntvct_deadline;
	__asm__ __volatile__(".inst 0xd5031000" :: "r"(x0) : "memory");
}
/* Clear the exclusive monitor after a LDAXR we did not pair with a STXR. */
static inline void hws_clrex(void)
{
	__asm__ __volatile__("clrex" ::: "memory");
}
#endif

/* ---- long-latency delay operations ([T2SPIN]) --------------------------
 * Each performs one operation whose latency is long but which occupies few
 * issue slots, so that a co-running thread keeps the core's fetch bandwidth.
 * They return a value so that the compiler cannot drop them. */
uint64_t hws_delay_div(uint64_t x);   /* one 64-bit integer division */
double hws_delay_fdiv(double x);      /* one double-precision division */
uint64_t hws_delay_cas(void);         /* a CAS on a thread-private line */
uint64_t hws_delay_miss(void);        /* a load that misses the LLC (pointer chase) */
int hws_delay_miss_prepare(void);     /* build its 64 MiB buffer: 0 or ENOMEM */

/* ---- clock and errors, for every layer above ---------------------------- */
#define HWS_FOREVER UINT64_MAX   /* no deadline */

/* CLOCK_MONOTONIC in ns, and a deadline that far ahead. */
uint64_t hws_now_ns(void);
static inline uint64_t hws_deadline_after_ns(uint64_t ns)
{
	uint64_t now = hws_now_ns();
	return ns >= HWS_FOREVER - now ? HWS_FOREVER : now + ns;
}

/* TSC <-> ns using hws_cpu()->tsc_hz. */
uint64_t hws_tsc_to_ns(uint64_t ticks);
uint64_t hws_ns_to_tsc(uint64_t ns);

/* The CPUs this process can run on: the calling thread's and the main
 * thread's affinity masks together, capped by its cgroups' CPU bandwidth
 * (cpu.max).  Read once; _refresh re-reads (after a change of affinity).  At
 * least 1. */
unsigned hws_usable_cpus(void);
unsigned hws_usable_cpus_refresh(void);
/* The cgroup part alone: the smallest ceil(quota / period) of the cgroups
 * named in SELF_CGROUP (a /proc/PID/cgroup file) and their ancestors up to
 * the root of the mount, under the cgroup file system mounted at MOUNT
 * (v2: MOUNT/PATH/cpu.max; v1: MOUNT/CONTROLLERS/PATH/cpu.cfs_quota_us and
 * cpu.cfs_period_us, else MOUNT/cpu/PATH/...); 0 = no limit found. */
unsigned hws_cgroup_cpu_limit(const char *mount, const char *self_cgroup);

/* Whether the machine has more runnable threads than online CPUs (a thread
 * that spins then keeps another off a CPU): the kernel's count, sampled at
 * most once a millisecond by the caller that finds the sample stale (now_ns:
 * the caller's hws_now_ns()).  False where the count cannot be read.
 * hws_cpus_busy_force(0 or 1) fixes the verdict for tests, -1 measures
 * again.  hws_loadavg_runnable parses the RUNNABLE of /proc/loadavg's
 * "RUNNABLE/TOTAL" field (0 if malformed). */
bool hws_cpus_busy(uint64_t now_ns);
void hws_cpus_busy_force(int verdict);
unsigned hws_loadavg_runnable(const char *loadavg);

/* Giving the CPU away (lib/arch/yield.c).  hws_yield() is sched_yield for
 * the library's own polling.  hws_yield_noted() is the same, and notes the
 * call: a thread of this process gave its CPU away by its own choice (an
 * interposed sched_yield, for the program's calls).  hws_program_yielded()
 * says whether that happened within the last 4-8 ms (now_ns: the caller's
 * hws_now_ns(); the callers' reads turn the note over every 4 ms). */
int hws_yield(void);
int hws_yield_noted(void);
bool hws_program_yielded(uint64_t now_ns);

/* The kernel's rseq time-slice extension for the calling thread: 0 = not
 * offered (why says what is missing), 1 = offered but not enabled, 2 =
 * enabled (docs/locks.md, "The kernel's time-slice extension"). */
int hws_rseq_slice_state(const char **why);

#ifndef __cplusplus
#include <stdatomic.h>
/* Lock holders and the time-slice extension (lib/arch/rseq_slice.c): a lock
 * calls hws_slice_hold() once it holds, hws_slice_unhold() once it has let
 * go.  Where the kernel offers the extension, a thread's outermost hold asks
 * not to be preempted and its end gives the CPU back if the kernel granted
 * the extension meanwhile; elsewhere, and with HWSYNC_SLICE=0, each call is
 * one load of a process-wide word and a predicted branch.  The word:
 * 0 undecided (the first call decides), 1 off, 2 on. */
extern _Atomic int hws_slice_mode;
/* Decides for the process now (else the first hold does): true = on. */
bool hws_slice_decide(void);
void hws_slice_hold_slow(void);
void hws_slice_unhold_slow(void);
static inline void hws_slice_hold(void)
{
	/* relaxed: a self-contained verdict, the same from every decider. */
	if (__builtin_expect(atomic_load_explicit(&hws_slice_mode, memory_order_relaxed) != 1, 0))
		hws_slice_hold_slow();
}
/* rc: a lock call's result, passed through; 0 begins a hold. */
static inline int hws_slice_held(int rc)
{
	if (rc == 0)
		hws_slice_hold();
	return rc;
}
static inline void hws_slice_unhold(void)
{
	/* relaxed: as in hws_slice_hold. */
	if (__builtin_expect(atomic_load_explicit(&hws_slice_mode, memory_order_relaxed) != 1, 0))
		hws_slice_unhold_slow();
}
/* rc: an unlock's result, passed through; 0 ends a hold, a refused unlock
 * (EPERM: nothing was let go) ends nothing. */
static inline int hws_slice_let_go(int rc)
{
	if (rc == 0)
		hws_slice_unhold();
	return rc;
}
/* Tests: the calling thread's request and granted bytes become ctl[0] and
 * ctl[1] and its yield calls yield_fn, as if the kernel offered the
 * extension; the process-wide word is set on. */
void hws_slice_fake(volatile uint8_t *ctl, int (*yield_fn)(void));
#endif

/* Whether this process may make its threads SCHED_FIFO (it tries, on the
 * calling thread, and puts the thread's policy back); why: the verdict in
 * words, with the reason when refused.  For whatever needs real-time threads
 * to say why it skips. */
bool hws_realtime_permitted(const char **why);

/* Detail of the last error in this thread, for any hws_ call that failed. */
const char *hws_last_error(void);

#ifdef __cplusplus
}
#endif
#endif

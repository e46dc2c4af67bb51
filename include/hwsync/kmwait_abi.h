/* SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT */
/*
 * hwsync-mwait: user-space interface of the privileged MONITOR/MWAIT driver
 * (kmod/hwsync_mwait.c).  Shared by the driver, the kmwait wait policy of
 * libhwsync (lib/wait/kmwait.c) and the tests; see kmod/README.md.
 *
 * Two ways to name the word a thread waits on:
 *
 * 1. Monitored lines (the design of [AK08], Sec. 3).  mmap() the device
 *    MAP_SHARED, offset 0, a whole number of pages: the driver allocates that
 *    many zeroed pages for this open file and maps them.  The region is an
 *    array of lines, each HWS_MWAIT_INFO.line_size bytes (the largest monitor
 *    line CPUID leaf 5 reports, at least 64, a power of two); the wait word of
 *    line i is the first 32-bit word at offset i * line_size.  Store to it
 *    directly; leave the rest of the line alone (a store there is a false
 *    wake-up).  HWS_MWAIT_IOC_WAIT waits on a line by index.
 *
 * 2. Any aligned 32-bit word in writable user memory:
 *    HWS_MWAIT_IOC_WAIT_ADDR pins the page for the duration of the call and
 *    monitors it through the kernel's mapping of the same physical line, so a
 *    plain user-space store wakes the waiter.  This is what the kmwait policy
 *    uses for hws_wait_while_eq32().
 *
 * A wait returns 0 when the word no longer equals `expected` (at once when it
 * already differs), -ETIMEDOUT when timeout_ns passed, and is interrupted by a
 * pending signal: it then stores the time left in timeout_ns and restarts
 * (SA_RESTART) or fails with EINTR.  Only the calling thread's CPU waits; a
 * wait gives the CPU back whenever the scheduler asks.
 *
 * Exit statistics (a debug aid, off unless the module is loaded with
 * exit_stats=1): HWS_MWAIT_IOC_WAIT_STATS runs the same wait as WAIT or
 * WAIT_ADDR and reports how many MWAITs it took and how each one ended:
 * with an interrupt taken, or with none (the monitor saw a store to the
 * line, or on hardware a spurious wake).  The tests use it to prove that a
 * store, not the next timer tick, ends the MWAIT.
 */
#ifndef HWSYNC_MWAIT_UAPI_H
#define HWSYNC_MWAIT_UAPI_H

#include <linux/ioctl.h>
#include <linux/types.h>

#define HWS_MWAIT_DEVICE	"/dev/hwsync-mwait"
#define HWS_MWAIT_MODULE	"hwsync_mwait"
#define HWS_MWAIT_ABI_VERSION	2

/* timeout_ns value meaning "no timeout" */
#define HWS_MWAIT_FOREVER	(~(__u64)0)

/* hws_mwait_info.features */
#define HWS_MWAIT_F_HALT	(1u << 0)	/* HWS_MWAIT_IOC_HALT / _KICK */
#define HWS_MWAIT_F_EXIT_STATS	(1u << 1)	/* HWS_MWAIT_IOC_WAIT_STATS */
#define HWS_MWAIT_F_MISARM	(1u << 2)	/* test hook: MONITOR arms the line next door */

struct hws_mwait_info {
	__u32 abi_version;	/* HWS_MWAIT_ABI_VERSION */
	__u32 line_size;	/* bytes between two lines of the mmap region */
	__u32 max_lines;	/* most lines one open file may map */
	__u32 monitor_min;	/* CPUID.05H:EAX smallest monitor line (0: not reported) */
	__u32 monitor_max;	/* CPUID.05H:EBX largest monitor line (0: not reported) */
	__u32 mwait_hint;	/* EAX hint given to MWAIT (0 = C1) */
	__u32 features;		/* HWS_MWAIT_F_* */
	__u32 reserved;		/* 0 */
};

struct hws_mwait_wait {
	__u64 addr;		/* WAIT_ADDR: user address of the word, 4-byte aligned */
	__u32 index;		/* WAIT, HALT: line index in the mmap region */
	__u32 expected;		/* wait while the word equals this */
	__u64 timeout_ns;	/* relative; HWS_MWAIT_FOREVER; time left after a signal */
	__u32 flags;		/* 0 (others are rejected with EINVAL) */
	__u32 reserved;		/* 0 */
};

/* hws_mwait_stats.last_exit: how the MWAIT before the final check ended */
#define HWS_MWAIT_EXIT_NONE	0	/* no MWAIT since the check before (the word
					   changed before the monitor was armed) */
#define HWS_MWAIT_EXIT_QUIET	1	/* no interrupt was taken: the monitor ended it */
#define HWS_MWAIT_EXIT_IRQ	2	/* an interrupt arrived while it slept */

struct hws_mwait_stats {
	struct hws_mwait_wait wait;	/* as for WAIT (by_addr 0) or WAIT_ADDR (1) */
	__u32 by_addr;		/* in: 0 waits on line wait.index, 1 on wait.addr */
	__u32 mwaits;		/* out: MWAIT executions */
	__u32 quiet_exits;	/* out: of those, ended without an interrupt */
	__u32 irq_exits;	/* out: ended with an interrupt */
	__u64 irq_mask;		/* out: bit i set when MWAIT i (< 64) ended with an interrupt */
	__u32 last_exit;	/* out: HWS_MWAIT_EXIT_* */
	__u32 reserved;		/* in: 0 */
};

#define HWS_MWAIT_IOC_MAGIC	0xB7
/* Version and geometry: also the "is the module answering" probe. */
#define HWS_MWAIT_IOC_INFO	_IOR(HWS_MWAIT_IOC_MAGIC, 0x00, struct hws_mwait_info)
/* MONITOR/MWAIT on line `index` of this file's mmap region. */
#define HWS_MWAIT_IOC_WAIT	_IOWR(HWS_MWAIT_IOC_MAGIC, 0x01, struct hws_mwait_wait)
/* MONITOR/MWAIT on the user word at `addr`. */
#define HWS_MWAIT_IOC_WAIT_ADDR	_IOWR(HWS_MWAIT_IOC_MAGIC, 0x02, struct hws_mwait_wait)
/*
 * The "spin-loops-halt" baseline of [AK08]: HLT (woken by interrupts only)
 * while line `index` holds `expected`; one halted waiter a line (EBUSY).
 */
#define HWS_MWAIT_IOC_HALT	_IOWR(HWS_MWAIT_IOC_MAGIC, 0x03, struct hws_mwait_wait)
/*
 * Send an IPI to the CPU where a waiter of this file halts on line *arg
 * (a __u32 index).  Returns 1 when an IPI was sent, 0 when nobody halts.
 */
#define HWS_MWAIT_IOC_KICK	_IOW(HWS_MWAIT_IOC_MAGIC, 0x04, __u32)
/*
 * WAIT or WAIT_ADDR with exit statistics.  EOPNOTSUPP unless INFO reports
 * HWS_MWAIT_F_EXIT_STATS.  The statistics are written back whatever the
 * result; the wait's own fields as for WAIT.
 */
#define HWS_MWAIT_IOC_WAIT_STATS _IOWR(HWS_MWAIT_IOC_MAGIC, 0x05, struct hws_mwait_stats)

#endif
